/*
 * Event rings of the circuit simulator: gate inputs as queues written
 * remotely (remote-memory-atm paper, section 3.2.2: "Gates whose inputs are
 * fed by remote gates are located in an exported segment that is imported
 * by the remote node.  New signal values are simply written by using a
 * remote write").  Pure logic over a write hook, so that the host tests
 * run it over memcpy and the app over rmem_write (section 2.1 WRITE).
 *
 * DESIGN: one ring per ordered node pair rather than per gate input.  The
 * events for every remote-fed input of node i's gates that node j drives
 * go through ring j->i, which lives in node i's exported segment and has
 * exactly one writer (j).  A record is 12 bytes: a sequence number, a
 * time and an event code (circuit_sim.h), or the code CRING_PROMISE for a
 * null message, which carries only the Chandy-Misra time promise: no event
 * from j will ever be earlier.  Null messages travel in the same ring as
 * events, after them, so a promise covers every event written before it.
 * The sequence number in each slot is how the reader knows a slot is
 * filled (seq == the next index it expects), so one WRITE carries a batch
 * of events and its promise, with no separate index to update; it is
 * correct because the fabric's reliable channel applies a node pair's
 * writes whole and in order (net/rmem/rmem.h).
 *
 * No loss: the writer never overwrites an unread slot.  The reader writes
 * its consumption index back into the writer's segment (ack[reader]), once
 * at least a quarter of the ring has been consumed since the last time; the
 * writer writes at most cap - (written - ack) records.  A writer short of
 * room keeps its records queued locally and never blocks; it is never
 * stuck, because a full ring means the reader has a quarter of a ring to
 * acknowledge as soon as it drains.
 *
 * Segment layout of each node (cring_layout): user bytes (the app's), then
 * ack[nodes] (u32, written by the readers of this node's rings), then
 * ring[j] for each node j (cap records), written by node j.
 */
#ifndef APPS_CIRCUIT_RING_H
#define APPS_CIRCUIT_RING_H

#include <stddef.h>
#include <stdint.h>

#include "apps/circuit_net.h"

#define CRING_PROMISE 0xffffffffu	/* record code of a null message */

struct cring_rec {
	uint32_t seq;			/* writer's index of this record */
	uint32_t time;
	uint32_t code;
};
_Static_assert(sizeof(struct cring_rec) == 12, "ring records are written remotely");

struct cring_layout {
	uint32_t nodes, cap;		/* cap: records per ring, a power of two */
	uint32_t ack_off, ring_off, size;
};

/* Offsets for nodes nodes, rings of cap records, user bytes first.  0 or -EINVAL. */
int cring_layout(struct cring_layout *L, int nodes, uint32_t cap, uint32_t user);

static inline uint32_t cring_ring_off(const struct cring_layout *L, int writer)
{
	return L->ring_off + (uint32_t)writer * L->cap * (uint32_t)sizeof(struct cring_rec);
}

/*
 * Write len bytes from src at offset off of node's segment, in one piece
 * and in order with every earlier write to that node; notify: wake it.
 * 0 or -errno.
 */
typedef int (*cring_write_fn)(void *ctx, int node, uint32_t off, const void *src, uint32_t len,
			     int notify);

/* An event read from a ring, to the simulator.  0 or -errno (fatal). */
typedef int (*cring_deliver_fn)(void *ctx, uint32_t time, uint32_t code);

struct cring_tx {			/* this node's ring in a peer's segment */
	int active;
	uint32_t w;			/* records written */
	uint32_t promised;		/* latest promise queued */
	struct cring_rec *q;		/* records queued, not yet written */
	uint32_t qh, qn, qcap;
	uint64_t writes, events, nulls;
};

struct cring_rx {			/* a peer's ring in this node's segment */
	int active;
	uint32_t r;			/* records consumed */
	uint32_t acked;			/* consumption index last written back */
	uint32_t promise;		/* the channel clock */
	uint64_t events, nulls;
};

struct cring {
	struct cring_layout L;
	int self;
	uint8_t *seg;			/* this node's segment, L.size bytes */
	uint32_t max_recs;		/* records per write */
	cring_write_fn write;
	void *ctx;
	struct cring_rec *stage;
	struct cring_tx tx[CKT_MAX_NODES];
	struct cring_rx rx[CKT_MAX_NODES];
	uint64_t acks;			/* consumption indexes written back */
};

/*
 * Set up this node's side over its segment seg (L->size bytes, which this
 * formats: every peer must wait until each node has done so before
 * writing).  max_write: the largest write in bytes.  0, -EINVAL, -ENOMEM.
 */
int cring_init(struct cring *c, const struct cring_layout *L, int self, void *seg, uint32_t max_write,
	      cring_write_fn write, void *ctx);
void cring_free(struct cring *c);

/* Will we write to peer, will peer write to us?  (A closed input is at SIM_INF.) */
void cring_open(struct cring *c, int peer, int tx, int rx);

/* Queue an event for dst.  0 or -ENOMEM. */
int cring_queue_event(struct cring *c, int dst, uint32_t time, uint32_t code);

/* Queue a promise for dst if it is later than the last one.  0 or -ENOMEM. */
int cring_queue_promise(struct cring *c, int dst, uint32_t time);

/*
 * Write as many queued records to dst as its ring has room for.  Return
 * the number written, or -EPROTO (the acknowledged index is impossible)
 * or the write hook's error.
 */
int cring_flush(struct cring *c, int dst);

/*
 * Consume every record src has written: events go to deliver, promises
 * move the channel clock; then acknowledge if due.  Return the records
 * consumed, or -EPROTO (a promise going back, an event before the
 * promise, a malformed slot), -EOVERFLOW (an unread slot was overwritten),
 * or deliver's or the write hook's error.
 */
int cring_drain(struct cring *c, int src, cring_deliver_fn deliver, void *ctx);

/* The least clock of the open inputs: nothing will arrive earlier. */
uint32_t cring_safe(const struct cring *c);

/* Records queued for dst and not yet written. */
static inline uint32_t cring_backlog(const struct cring *c, int dst) { return c->tx[dst].qn; }

/* Every open output has everything written, up to an infinite promise. */
int cring_tx_done(const struct cring *c);

/*
 * The writer's rule on its own: room in a ring of cap records after
 * `written` records of which the reader acknowledged `acked`, or -1 if the
 * acknowledgement is impossible (ahead of what was written, or a ring
 * overrun).
 */
int64_t cring_room(uint32_t written, uint32_t acked, uint32_t cap);

#endif
