/*
 * A Chandy-Misra node step over remote-written event rings
 * (remote-memory-atm paper, section 3.2.2).  Contract in circuit_cmb.h.
 */
#include <errno.h>
#include <string.h>

#include "apps/circuit_cmb.h"

static int emit(void *ctx, int node, uint32_t time, uint32_t code)
{
	return cring_queue_event(ctx, node, time, code);
}

static int deliver(void *ctx, uint32_t time, uint32_t code)
{
	return lp_deliver(ctx, time, code);
}

int cmb_init(struct cmb *c, const struct netlist *n, const uint8_t *owner, int self, int nodes,
	     const struct ckt_vec *v, uint32_t nvec, const struct cring_layout *L, void *seg,
	     uint32_t max_write, cring_write_fn write, void *wctx, uint64_t budget)
{
	int r;

	memset(c, 0, sizeof *c);
	if ((uint32_t)nodes != L->nodes)
		return -EINVAL;
	c->self = self;
	c->nodes = nodes;
	c->budget = budget;
	c->backlog = 4 * L->cap;
	if ((r = lp_init(&c->lp, n, owner, self, nodes, v, nvec, emit, &c->ch)) < 0)
		return r;
	if ((r = cring_init(&c->ch, L, self, seg, max_write, write, wctx)) < 0) {
		lp_free(&c->lp);
		return r;
	}
	for (int j = 0; j < nodes; j++)
		cring_open(&c->ch, j, c->lp.drives[j], c->lp.feeds[j]);
	return 0;
}

void cmb_free(struct cmb *c)
{
	lp_free(&c->lp);
	cring_free(&c->ch);
}

int cmb_step(struct cmb *c)
{
	int progress = 0, r, paused = 0;
	uint32_t clock[CKT_MAX_NODES];

	c->steps++;
	for (int j = 0; j < c->nodes; j++) {
		if (!c->ch.rx[j].active)
			continue;
		if ((r = cring_drain(&c->ch, j, deliver, &c->lp)) < 0)
			return r;
		progress |= r > 0;
	}
	uint32_t safe = cring_safe(&c->ch);
	for (int j = 0; j < c->nodes; j++)
		if (cring_backlog(&c->ch, j) > c->backlog)
			paused = 1;
	if (!paused && lp_advance(&c->lp, safe, c->budget))
		progress = 1;
	if (c->lp.error)
		return c->lp.error;
	for (int j = 0; j < c->nodes; j++)
		clock[j] = c->ch.rx[j].promise;
	for (int j = 0; j < c->nodes; j++) {
		if (!c->ch.tx[j].active)
			continue;
		if ((r = cring_queue_promise(&c->ch, j, lp_promise(&c->lp, clock, j))) < 0)
			return r;
		if ((r = cring_flush(&c->ch, j)) < 0)
			return r;
		progress |= r > 0;
	}
	return progress;
}

int cmb_done(const struct cmb *c)
{
	return lp_idle(&c->lp) && cring_safe(&c->ch) == SIM_INF && cring_tx_done(&c->ch);
}

void cmb_totals(const struct cmb *c, uint64_t *events_sent, uint64_t *nulls, uint64_t *writes)
{
	*events_sent = *nulls = *writes = 0;
	for (int j = 0; j < c->nodes; j++) {
		*events_sent += c->ch.tx[j].events;
		*nulls += c->ch.tx[j].nulls;
		*writes += c->ch.tx[j].writes;
	}
	*writes += c->ch.acks;
}
