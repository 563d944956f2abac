/*
 * Hybrid deposit's shared state, for its own files only: deposit.c (the
 * receive handler and the exception thread), conn.c (the kernel calls) and
 * send.c (the send registers).  Touched with interrupts off.
 */
#ifndef NET_DEPOSIT_INTERNAL_H
#define NET_DEPOSIT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "kernel/sync.h"
#include "net/deposit/deposit.h"

#define DEP_PROTO 6			/* fabric protocol number of cells */
#define DEP_FLOW_PROTO 7		/* ... of flow control per connection: struct dep_flow_msg */

/* "Stop sending on vci" (stop 1) or "go on" (stop 0), from a connection's receiving end to its sender. */
struct dep_flow_msg {
	uint16_t vci;
	uint8_t stop;
	uint8_t zero;
};

#define DEP_NAME_MAX 32			/* a connection's name, with the NUL */

struct conn_note {
	dep_intr_fn intr_fn;
	void *intr_arg;
	volatile uint64_t intrs;
	volatile int kick;		/* set by each interrupt: what dep_intr_wait polls the NIC for */
	struct waitq wq;
	dep_exc_fn exc_fn;
	void *exc_arg;
	uint8_t exc_pending;		/* an exception the thread has not reported yet */
	uint8_t status_pending;		/* a send-side DEX_STATUS to report */
	uint8_t tx_busy;		/* a block is being sent */
	uint8_t flow_sent;		/* receiving end: flow_peer was told to stop sending on this VCI */
	uint16_t tx_singles;		/* single cells between their check and the fabric */
	uint8_t flow_peer;
	struct dart_exc status_exc;
	char name[DEP_NAME_MAX];	/* exported under this name ("" if not) */
	/* flow control per connection (6.4): flow_sent and flow_peer above, in the holes; the sending end's in dep_flow */
};

/* The sending end of a connection under flow control (6.4). */
struct dep_flow {
	volatile uint64_t stopped_by;	/* the nodes that told it to stop sending */
	struct waitq wq;		/* senders waiting for them to let it go on */
};

/* How long a send waits for the go after a stop (dep_stop_timeout, dep_stop_ms=). */
extern uint64_t dep_stop_ns;

extern struct dart dep_dart;
extern struct conn_note dep_notes[DART_MAX_CONN];
extern struct dep_flow dep_flow[DART_MAX_CONN];
extern struct dart_sendregs dep_sendregs_tab[DART_MAX_CONN];
extern dep_exc_fn dep_default_exc_fn;
extern void *dep_default_exc_arg;
extern const struct dart_sink dep_sink;
extern struct dep_counters dep_stats;	/* the kernel's counters (its .dart unused) */
extern volatile int dep_replay_waiting;
extern int dep_ready;

/*
 * A connection was re-enabled or closed: if a frame waits because a hold
 * queue was full, offer it again.  (interrupts off)
 */
void dep_hold_freed(void);

/*
 * Tell vci's sender to stop or to go on, as its receiving end now wants
 * (dart_conn.flow_stop; closed: go on); the worker retries what could
 * not go now.  (interrupts off)
 */
void dep_flow_sync(int vci);

/*
 * node lets vci's sending end go on: it said go, died or rebooted (-1:
 * every node, the connection closed).  Its waiting senders wake once no
 * node holds it.  (interrupts off)
 */
void dep_flow_release(int vci, int node);

/* Wake the exception thread: an exception to report or a replay to retry. */
void dep_wake_worker(void);


#endif
