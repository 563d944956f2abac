/*
 * Event rings written remotely, with in-band null messages and a written-
 * back consumption index (remote-memory-atm paper, section 3.2.2 over the
 * WRITE of section 2.1).  Design and contract in circuit_ring.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "apps/circuit_ring.h"
#include "apps/circuit_sim.h"

int cring_layout(struct cring_layout *L, int nodes, uint32_t cap, uint32_t user)
{
	uint64_t size;

	if (nodes < 1 || nodes > CKT_MAX_NODES || cap < 4 || (cap & (cap - 1)) || cap > (1u << 20))
		return -EINVAL;
	L->nodes = (uint32_t)nodes;
	L->cap = cap;
	L->ack_off = (user + 7) & ~7u;
	L->ring_off = (L->ack_off + 4 * (uint32_t)nodes + 15) & ~15u;
	size = L->ring_off + (uint64_t)nodes * cap * sizeof(struct cring_rec);
	if (size > 0x7fffffff)
		return -EINVAL;
	L->size = (uint32_t)size;
	return 0;
}

int64_t cring_room(uint32_t written, uint32_t acked, uint32_t cap)
{
	uint32_t used = written - acked;	/* modulo 2^32: indexes run free */

	if (used > cap)
		return -1;
	return (int64_t)(cap - used);
}

static volatile uint32_t *ack_slot(struct cring *c, int peer)
{
	return (volatile uint32_t *)(c->seg + c->L.ack_off + 4 * (uint32_t)peer);
}

static volatile struct cring_rec *ring_slot(struct cring *c, int writer, uint32_t idx)
{
	return (volatile struct cring_rec *)(c->seg + cring_ring_off(&c->L, writer)) + (idx & (c->L.cap - 1));
}

int cring_init(struct cring *c, const struct cring_layout *L, int self, void *seg, uint32_t max_write,
	      cring_write_fn write, void *ctx)
{
	memset(c, 0, sizeof *c);
	if (self < 0 || (uint32_t)self >= L->nodes || max_write < sizeof(struct cring_rec) || !write)
		return -EINVAL;
	c->L = *L;
	c->self = self;
	c->seg = seg;
	c->write = write;
	c->ctx = ctx;
	c->max_recs = max_write / sizeof(struct cring_rec);
	if (c->max_recs > L->cap / 2)
		c->max_recs = L->cap / 2;
	c->stage = malloc(c->max_recs * sizeof *c->stage);
	if (!c->stage)
		return -ENOMEM;
	for (uint32_t j = 0; j < L->nodes; j++) {
		*ack_slot(c, (int)j) = 0;
		/* Every slot holds the previous lap's index: empty for the reader. */
		for (uint32_t i = 0; i < L->cap; i++)
			ring_slot(c, (int)j, i)->seq = i - L->cap;
		c->rx[j].promise = SIM_INF;
	}
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return 0;
}

void cring_free(struct cring *c)
{
	for (int j = 0; j < CKT_MAX_NODES; j++)
		free(c->tx[j].q);
	free(c->stage);
	c->stage = NULL;
}

void cring_open(struct cring *c, int peer, int tx, int rx)
{
	if (peer == c->self || peer < 0 || (uint32_t)peer >= c->L.nodes)
		return;
	c->tx[peer].active = tx;
	c->tx[peer].promised = 0;
	c->rx[peer].active = rx;
	c->rx[peer].promise = rx ? 0 : SIM_INF;
}

static int queue(struct cring_tx *t, uint32_t time, uint32_t code)
{
	if (t->qn == t->qcap) {
		uint32_t cap = t->qcap ? t->qcap * 2 : 256;
		struct cring_rec *q = malloc(cap * sizeof *q);
		if (!q)
			return -ENOMEM;
		for (uint32_t i = 0; i < t->qn; i++)
			q[i] = t->q[(t->qh + i) % t->qcap];
		free(t->q);
		t->q = q;
		t->qh = 0;
		t->qcap = cap;
	}
	t->q[(t->qh + t->qn++) % t->qcap] = (struct cring_rec){ 0, time, code };
	return 0;
}

int cring_queue_event(struct cring *c, int dst, uint32_t time, uint32_t code)
{
	return queue(&c->tx[dst], time, code);
}

int cring_queue_promise(struct cring *c, int dst, uint32_t time)
{
	struct cring_tx *t = &c->tx[dst];

	if (time <= t->promised)
		return 0;
	t->promised = time;
	/* A promise not yet written is superseded by a later one. */
	if (t->qn) {
		struct cring_rec *last = &t->q[(t->qh + t->qn - 1) % t->qcap];
		if (last->code == CRING_PROMISE) {
			last->time = time;
			return 0;
		}
	}
	return queue(t, time, CRING_PROMISE);
}

int cring_flush(struct cring *c, int dst)
{
	struct cring_tx *t = &c->tx[dst];
	uint32_t cap = c->L.cap, sent = 0;
	int64_t room = cring_room(t->w, __atomic_load_n(ack_slot(c, dst), __ATOMIC_ACQUIRE), cap);

	if (room < 0)
		return -EPROTO;
	while (t->qn && room > 0) {
		/* One write: contiguous in the ring, at most max_recs, no more than the room. */
		uint32_t slot = t->w & (cap - 1), n = t->qn;
		if (n > cap - slot)
			n = cap - slot;
		if (n > c->max_recs)
			n = c->max_recs;
		if (n > room)
			n = (uint32_t)room;
		for (uint32_t i = 0; i < n; i++) {
			struct cring_rec *r = &c->stage[i];
			*r = t->q[(t->qh + i) % t->qcap];
			r->seq = t->w + i;
			if (r->code == CRING_PROMISE)
				t->nulls++;
			else
				t->events++;
		}
		int last = n == t->qn || n == room;
		int e = c->write(c->ctx, dst, cring_ring_off(&c->L, c->self) + slot * (uint32_t)sizeof(struct cring_rec),
				 c->stage, n * (uint32_t)sizeof(struct cring_rec), last);
		if (e < 0)
			return e;
		t->writes++;
		t->w += n;
		t->qh = (t->qh + n) % t->qcap;
		t->qn -= n;
		room -= n;
		sent += n;
	}
	return (int)sent;
}

int cring_drain(struct cring *c, int src, cring_deliver_fn deliver, void *ctx)
{
	struct cring_rx *x = &c->rx[src];
	uint32_t cap = c->L.cap, got = 0;
	int e;

	for (;;) {
		volatile struct cring_rec *s = ring_slot(c, src, x->r);
		uint32_t seq = s->seq;
		if (seq == x->r - cap)
			break;			/* not written yet */
		if (seq != x->r)
			return (int32_t)(seq - x->r) > 0 && (seq - x->r) % cap == 0 ? -EOVERFLOW : -EPROTO;
		__atomic_signal_fence(__ATOMIC_ACQUIRE);
		uint32_t time = s->time, code = s->code;
		if (time < x->promise)
			return -EPROTO;		/* earlier than promised, or a promise going back */
		if (code == CRING_PROMISE) {
			x->promise = time;
			x->nulls++;
		} else {
			if ((e = deliver(ctx, time, code)) < 0)
				return e;
			x->events++;
		}
		x->r++;
		got++;
	}
	/* Hand the slots back once a quarter of the ring is free to reuse. */
	if (x->r - x->acked >= (cap / 4 ? cap / 4 : 1)) {
		uint32_t r = x->r;
		if ((e = c->write(c->ctx, src, c->L.ack_off + 4 * (uint32_t)c->self, &r, 4, 1)) < 0)
			return e;
		x->acked = r;
		c->acks++;
	}
	return (int)got;
}

uint32_t cring_safe(const struct cring *c)
{
	uint32_t s = SIM_INF;

	for (uint32_t j = 0; j < c->L.nodes; j++)
		if (c->rx[j].active && c->rx[j].promise < s)
			s = c->rx[j].promise;
	return s;
}

int cring_tx_done(const struct cring *c)
{
	for (uint32_t j = 0; j < c->L.nodes; j++)
		if (c->tx[j].active && (c->tx[j].qn || c->tx[j].promised != SIM_INF))
			return 0;
	return 1;
}
