/*
 * Event-driven gate simulation for the circuit simulator (remote-memory-atm
 * paper, section 3.2.2).  Pure logic, no kernel headers.
 *
 * Two simulators of the same semantics:
 *
 * - ref_simulate(): the sequential reference, a timing wheel over the whole
 *   netlist on one node.  The distributed run is checked against it.
 * - struct lp: one logical process of the conservative (Chandy-Misra)
 *   simulation: the gates one node owns, a time-ordered event heap, and an
 *   emit hook for events whose destination gate lives on another node.  It
 *   only processes events below a safe time the caller gives it (the least
 *   of its input channels' promises, circuit_cmb.h).
 *
 * Semantics shared by both (so that their output histories must match
 * event for event): vector k is applied at k * period: each primary input
 * whose bit changes gets a stimulus event then.  At each time t, every
 * event at t is applied to its gate's input pin first; then each gate that
 * received one is evaluated once, and if its output differs from the last
 * value it scheduled, the new value is scheduled at t + delay on every
 * fanout pin (transport delay, circuit_net.h).  A probe records (t, value)
 * when its input changes.  Before vector 0 every input is 0 and every gate
 * holds the value that implies.
 */
#ifndef APPS_CIRCUIT_SIM_H
#define APPS_CIRCUIT_SIM_H

#include <stdint.h>

#include "apps/circuit_net.h"

#define SIM_INF 0xffffffffu	/* "never": no event, no bound */

/*
 * An event on a gate input: time, and code = gate << 2 | pin << 1 | value.
 * The same 8 bytes travel between nodes (circuit_ring.h).
 */
struct sim_ev {
	uint32_t time;
	uint32_t code;
};

static inline uint32_t ev_code(uint32_t gate, unsigned pin, unsigned val)
{
	return gate << 2 | (pin & 1) << 1 | (val & 1);
}
static inline uint32_t ev_gate(uint32_t code) { return code >> 2; }
static inline unsigned ev_pin(uint32_t code) { return (code >> 1) & 1; }
static inline unsigned ev_val(uint32_t code) { return code & 1; }

/* One change seen by a probe: output number (index into netlist.output). */
struct probe_rec {
	uint32_t time;
	uint16_t probe;
	uint16_t value;
};
_Static_assert(sizeof(struct probe_rec) == 8, "probe records travel between nodes");

struct plog {
	struct probe_rec *r;
	uint32_t n, cap;
};

void plog_free(struct plog *l);

/* Sort records by (probe, time): the order in which two logs compare. */
void plog_sort(struct probe_rec *r, uint32_t n);

/*
 * Run the whole netlist sequentially over nvec vectors.  Fill *log with
 * every probe change (in time order) and *events with the number of
 * events applied.  0, or -ENOMEM.
 */
int ref_simulate(const struct netlist *n, const struct ckt_vec *v, uint32_t nvec, struct plog *log,
		 uint64_t *events);

/* --- one logical process ------------------------------------------------ */

/* Hand an event for a gate on node `node` to the transport.  0 or -errno. */
typedef int (*lp_emit_fn)(void *ctx, int node, uint32_t time, uint32_t code);

struct lp {
	const struct netlist *n;
	const uint8_t *owner;
	int self, nodes;
	const struct ckt_vec *v;
	uint32_t nvec, period;
	uint32_t end;			/* nvec * period: every event comes earlier */
	uint8_t *st;			/* per gate: pin 0, pin 1, output, dirty bits */
	uint8_t *stim;			/* last stimulus of each primary input */
	uint32_t nlocal_inputs;
	uint32_t next_vec;		/* first vector not yet injected */
	struct sim_ev *heap;		/* gate events (stimulus is applied apart) */
	uint32_t nheap, capheap;
	uint32_t *dirty;
	uint32_t ndirty;
	uint8_t drives[CKT_MAX_NODES];	/* one of our gates drives one of node j's */
	uint8_t feeds[CKT_MAX_NODES];	/* node j owns a gate that drives one of ours */
	/*
	 * Lookahead to node d (SIM_INF: no path), from the shortest path
	 * delay, through our own gates, from an event at a gate's input to an
	 * event sent to d: la_gate[d] over every gate but the inputs (events
	 * in the heap), la_stim[d] over the primary inputs (stimulus),
	 * la_in[j * nodes + d] over the gates node j feeds.
	 */
	uint32_t la_gate[CKT_MAX_NODES], la_stim[CKT_MAX_NODES];
	uint32_t *la_in;
	uint32_t last_t;		/* time of the last step processed */
	int started;
	uint64_t events;		/* events applied */
	struct plog log;
	lp_emit_fn emit;
	void *ctx;
	int error;			/* first error (-errno), sticky */
};

/*
 * Set up node `self`'s process of n placed by owner, over vectors v.
 * 0, -EINVAL (bad node numbers), -ENOMEM.
 */
int lp_init(struct lp *lp, const struct netlist *n, const uint8_t *owner, int self, int nodes,
	    const struct ckt_vec *v, uint32_t nvec, lp_emit_fn emit, void *ctx);
void lp_free(struct lp *lp);

/*
 * An event from another node.  It must name an input pin of a gate this
 * node owns and lie strictly after the last step processed and before the
 * end.  0, -EINVAL (not ours, bad pin), -ERANGE (in the past: causality
 * broken; or past the end), -ENOMEM.
 */
int lp_deliver(struct lp *lp, uint32_t time, uint32_t code);

/*
 * Process whole time steps t < safe, in time order, until at least budget
 * events have been applied (0: no limit).  Return the events applied;
 * lp->error is set if emitting or allocating failed.
 */
uint64_t lp_advance(struct lp *lp, uint32_t safe, uint64_t budget);

/* Time of the earliest pending event or stimulus (SIM_INF if none). */
uint32_t lp_next(const struct lp *lp);

/*
 * The promise to node dst: no event this process sends dst from now on is
 * earlier, given that nothing will arrive from node j earlier than
 * clock[j] (SIM_INF for a node that feeds none of ours): the least of
 *   earliest pending event + la_gate[dst],
 *   next stimulus + la_stim[dst],
 *   clock[j] + la_in[j][dst] for every j.
 * SIM_INF if nothing ever will: no
 * edge to dst, or a bound at or past the end of the run (vector k's
 * events all lie in [k * period, k * period + crit], so none reaches
 * nvec * period).  Without that last rule two nodes that drive each other
 * would trade ever larger finite promises once the run is over, and never
 * learn that it is (the termination problem of null messages).
 */
uint32_t lp_promise(const struct lp *lp, const uint32_t *clock, int dst);

/* Nothing is left to do once no input can bring more (safe == SIM_INF). */
static inline int lp_idle(const struct lp *lp) { return lp_next(lp) == SIM_INF; }

#endif
