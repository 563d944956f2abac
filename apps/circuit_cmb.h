/*
 * One node of the conservative (Chandy-Misra) distributed circuit
 * simulation, with null messages (remote-memory-atm paper, section 3.2.2:
 * "Each node performs a simple simulation loop.  For each gate on the node
 * whose inputs are ready, it calculates the output signal value ... The
 * output signal values are then fed to the appropriate input gates, some of
 * which might be on a remote node").  Pure logic: it ties a logical
 * process (circuit_sim.h) to its event channels (circuit_ring.h); the app
 * runs it over remote memory, the host tests over memcpy.
 *
 * A step never blocks:
 *   1. drain every input channel: events into the process, promises into
 *      the channel clocks;
 *   2. safe = the least channel clock: no event will ever arrive earlier;
 *   3. process whole time steps below safe (at most `budget` events, so
 *      that events reach the other nodes while this one works on; none at
 *      all while an output channel has more than `backlog` records queued);
 *   4. to every node this one drives, queue the promise (the null
 *      message): the earliest time any pending event, stimulus or input
 *      could make this node send it something (lp_promise), and write
 *      what the ring has room for.
 * Every gate that drives another node has a delay >= 1, so promises grow
 * around every cycle of nodes and the simulation cannot deadlock; the
 * caller waits for a write to its segment whenever a step made no
 * progress.
 */
#ifndef APPS_CIRCUIT_CMB_H
#define APPS_CIRCUIT_CMB_H

#include <stdint.h>

#include "apps/circuit_ring.h"
#include "apps/circuit_sim.h"

struct cmb {
	struct lp lp;
	struct cring ch;
	int self, nodes;
	uint64_t budget;		/* events per step (0: no limit) */
	uint32_t backlog;		/* records queued per output before processing pauses */
	uint64_t steps;
};

/*
 * Set up node self of nodes over segment seg laid out by L (which this
 * formats).  0, -EINVAL, -ENOMEM.
 */
int cmb_init(struct cmb *c, const struct netlist *n, const uint8_t *owner, int self, int nodes,
	     const struct ckt_vec *v, uint32_t nvec, const struct cring_layout *L, void *seg,
	     uint32_t max_write, cring_write_fn write, void *wctx, uint64_t budget);
void cmb_free(struct cmb *c);

/* One step.  1 if anything moved, 0 if not (wait for a write), or -errno. */
int cmb_step(struct cmb *c);

/* Finished: every input closed at SIM_INF, nothing pending, every output written. */
int cmb_done(const struct cmb *c);

/* Totals over the channels: events sent, null messages sent, writes issued. */
void cmb_totals(const struct cmb *c, uint64_t *events_sent, uint64_t *nulls, uint64_t *writes);

#endif
