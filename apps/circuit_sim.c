/*
 * The sequential reference simulator and the logical process of the
 * conservative simulation (remote-memory-atm paper, section 3.2.2).
 * Contract and the shared semantics in circuit_sim.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "apps/circuit_sim.h"

/* Per-gate state bits. */
enum { ST_PIN0 = 1, ST_PIN1 = 2, ST_OUT = 4, ST_DIRTY = 8 };

static inline unsigned st_pin(uint8_t s, unsigned pin) { return (s >> pin) & 1; }
static inline unsigned st_out(uint8_t s) { return (s >> 2) & 1; }

static inline uint8_t st_set(uint8_t s, uint8_t bit, unsigned v)
{
	return v ? (uint8_t)(s | bit) : (uint8_t)(s & ~bit);
}

/* The state every gate settles to with all inputs 0 (gates are in topological order). */
static void settle_zero(const struct netlist *n, uint8_t *st)
{
	for (uint32_t g = 0; g < n->ngates; g++) {
		const struct gate *x = &n->g[g];
		uint8_t s = 0;
		if (x->type != G_INPUT)
			for (unsigned p = 0; p < x->nin; p++)
				s = st_set(s, (uint8_t)(ST_PIN0 << p), st_out(st[x->in[p]]));
		st[g] = st_set(s, ST_OUT, gate_eval(x->type, st_pin(s, 0), st_pin(s, 1)));
	}
}

static int plog_add(struct plog *l, uint32_t t, uint32_t probe, unsigned v)
{
	if (l->n == l->cap) {
		uint32_t cap = l->cap ? l->cap * 2 : 1024;
		struct probe_rec *r = realloc(l->r, cap * sizeof *r);
		if (!r)
			return -ENOMEM;
		l->r = r;
		l->cap = cap;
	}
	l->r[l->n++] = (struct probe_rec){ t, (uint16_t)probe, (uint16_t)v };
	return 0;
}

void plog_free(struct plog *l)
{
	free(l->r);
	memset(l, 0, sizeof *l);
}

static int rec_cmp(const void *a, const void *b)
{
	const struct probe_rec *x = a, *y = b;

	if (x->probe != y->probe)
		return x->probe < y->probe ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return (int)x->value - (int)y->value;
}

void plog_sort(struct probe_rec *r, uint32_t n)
{
	qsort(r, n, sizeof *r, rec_cmp);
}

/* --- the sequential reference: a timing wheel ---------------------------- */

#define WHEEL 8		/* slots; more than the largest gate delay */

struct slot {
	struct sim_ev *e;
	uint32_t n, cap;
};

static int slot_push(struct slot *s, uint32_t t, uint32_t code)
{
	if (s->n == s->cap) {
		uint32_t cap = s->cap ? s->cap * 2 : 64;
		struct sim_ev *e = realloc(s->e, cap * sizeof *e);
		if (!e)
			return -ENOMEM;
		s->e = e;
		s->cap = cap;
	}
	s->e[s->n++] = (struct sim_ev){ t, code };
	return 0;
}

int ref_simulate(const struct netlist *n, const struct ckt_vec *v, uint32_t nvec, struct plog *log,
		 uint64_t *events)
{
	struct slot wheel[WHEEL] = { 0 };
	uint8_t *st = malloc(n->ngates), *stim = calloc(n->ninputs ? n->ninputs : 1, 1);
	uint32_t *dirty = malloc(n->ngates * sizeof *dirty), period = ckt_period(n);
	uint64_t pending = 0, applied = 0;
	int r = -ENOMEM;

	memset(log, 0, sizeof *log);
	if (!st || !stim || !dirty)
		goto out;
	for (unsigned ty = 0; ty < G_NTYPES; ty++)
		if (gate_delay(ty) >= WHEEL) {
			r = -EINVAL;
			goto out;
		}
	settle_zero(n, st);
	for (uint64_t t = 0;; t++) {
		struct slot *s = &wheel[t % WHEEL];
		if (t % period == 0 && t / period < nvec) {
			const struct ckt_vec *vk = &v[t / period];
			for (uint32_t i = 0; i < n->ninputs; i++) {
				unsigned b = ckt_input_bit(n, vk, i);
				if (b == stim[i])
					continue;
				stim[i] = (uint8_t)b;
				if (slot_push(s, (uint32_t)t, ev_code(n->input[i], 0, b)) < 0)
					goto out;
				pending++;
			}
		}
		if (pending == 0 && t / period + 1 >= nvec)
			break;
		/* Apply every event at t, then evaluate each touched gate once. */
		uint32_t ndirty = 0;
		for (uint32_t i = 0; i < s->n; i++) {
			uint32_t g = ev_gate(s->e[i].code);
			st[g] = st_set(st[g], (uint8_t)(ST_PIN0 << ev_pin(s->e[i].code)), ev_val(s->e[i].code));
			if (!(st[g] & ST_DIRTY)) {
				st[g] |= ST_DIRTY;
				dirty[ndirty++] = g;
			}
		}
		pending -= s->n;
		applied += s->n;
		s->n = 0;
		for (uint32_t i = 0; i < ndirty; i++) {
			uint32_t g = dirty[i];
			const struct gate *x = &n->g[g];
			unsigned out = gate_eval(x->type, st_pin(st[g], 0), st_pin(st[g], 1));
			st[g] &= (uint8_t)~ST_DIRTY;
			if (out == st_out(st[g]))
				continue;
			st[g] = st_set(st[g], ST_OUT, out);
			if (x->type == G_PROBE) {
				if (plog_add(log, (uint32_t)t, g - n->nplaced, out) < 0)
					goto out;
				continue;
			}
			uint64_t at = t + gate_delay(x->type);
			for (uint32_t f = 0; f < x->nfo; f++) {
				const struct fanout *fo = &n->fanout[x->fo + f];
				if (slot_push(&wheel[at % WHEEL], (uint32_t)at, ev_code(fo->gate, fo->pin, out)) < 0)
					goto out;
				pending++;
			}
		}
	}
	*events = applied;
	r = 0;
out:
	for (int i = 0; i < WHEEL; i++)
		free(wheel[i].e);
	free(st);
	free(stim);
	free(dirty);
	if (r < 0)
		plog_free(log);
	return r;
}

/* --- the logical process: a heap of this node's events -------------------- */

static int heap_push(struct lp *lp, uint32_t t, uint32_t code)
{
	if (lp->nheap == lp->capheap) {
		uint32_t cap = lp->capheap ? lp->capheap * 2 : 256;
		struct sim_ev *h = realloc(lp->heap, cap * sizeof *h);
		if (!h)
			return -ENOMEM;
		lp->heap = h;
		lp->capheap = cap;
	}
	uint32_t i = lp->nheap++;
	while (i > 0) {
		uint32_t p = (i - 1) / 2;
		if (lp->heap[p].time <= t)
			break;
		lp->heap[i] = lp->heap[p];
		i = p;
	}
	lp->heap[i] = (struct sim_ev){ t, code };
	return 0;
}

static struct sim_ev heap_pop(struct lp *lp)
{
	struct sim_ev top = lp->heap[0], last = lp->heap[--lp->nheap];
	uint32_t i = 0, n = lp->nheap;

	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && lp->heap[c + 1].time < lp->heap[c].time)
			c++;
		if (lp->heap[c].time >= last.time)
			break;
		lp->heap[i] = lp->heap[c];
		i = c;
	}
	if (n)
		lp->heap[i] = last;
	return top;
}

static uint32_t stim_time(const struct lp *lp)
{
	if (!lp->nlocal_inputs || lp->next_vec >= lp->nvec)
		return SIM_INF;
	return lp->next_vec * lp->period;
}

uint32_t lp_next(const struct lp *lp)
{
	uint32_t s = stim_time(lp);

	if (lp->nheap && lp->heap[0].time < s)
		return lp->heap[0].time;
	return s;
}

static uint32_t sat_add(uint32_t a, uint32_t b)
{
	return a >= SIM_INF - b ? SIM_INF : a + b;
}

/*
 * The lookahead tables (circuit_sim.h): for each destination d, the
 * shortest delay from an event at the input of each of our gates to an
 * event sent to d, through our own gates (a reverse topological sweep).
 */
static int lookahead(struct lp *lp)
{
	const struct netlist *n = lp->n;
	uint32_t *dist = malloc(n->ngates * sizeof *dist);
	int P = lp->nodes;

	lp->la_in = malloc((size_t)P * P * sizeof *lp->la_in);
	if (!dist || !lp->la_in) {
		free(dist);
		return -ENOMEM;
	}
	for (int i = 0; i < P * P; i++)
		lp->la_in[i] = SIM_INF;
	for (int d = 0; d < P; d++) {
		lp->la_gate[d] = lp->la_stim[d] = SIM_INF;
		if (d == lp->self || !lp->drives[d])
			continue;
		for (uint32_t g = n->ngates; g-- > 0;) {
			const struct gate *x = &n->g[g];
			uint32_t best = SIM_INF, dl = gate_delay(x->type);
			dist[g] = SIM_INF;
			if (lp->owner[g] != lp->self || x->type == G_PROBE)
				continue;
			for (uint32_t f = 0; f < x->nfo; f++) {
				uint32_t h = n->fanout[x->fo + f].gate, to = lp->owner[h], c = SIM_INF;
				if (to == (uint32_t)d)
					c = dl;
				else if (to == (uint32_t)lp->self)
					c = sat_add(dl, dist[h]);
				if (c < best)
					best = c;
			}
			dist[g] = best;
			if (x->type == G_INPUT) {
				if (best < lp->la_stim[d])
					lp->la_stim[d] = best;
				continue;
			}
			if (best < lp->la_gate[d])
				lp->la_gate[d] = best;
			/* Which nodes feed this gate? */
			for (unsigned p = 0; p < x->nin; p++) {
				uint32_t from = lp->owner[x->in[p]];
				if (from != (uint32_t)lp->self && best < lp->la_in[from * P + d])
					lp->la_in[from * P + d] = best;
			}
		}
	}
	free(dist);
	return 0;
}

int lp_init(struct lp *lp, const struct netlist *n, const uint8_t *owner, int self, int nodes,
	    const struct ckt_vec *v, uint32_t nvec, lp_emit_fn emit, void *ctx)
{
	memset(lp, 0, sizeof *lp);
	if (nodes < 1 || nodes > CKT_MAX_NODES || self < 0 || self >= nodes)
		return -EINVAL;
	if ((uint64_t)nvec * ckt_period(n) + n->crit >= SIM_INF)
		return -EINVAL;
	for (uint32_t g = 0; g < n->ngates; g++)
		if (owner[g] >= nodes)
			return -EINVAL;
	lp->n = n;
	lp->owner = owner;
	lp->self = self;
	lp->nodes = nodes;
	lp->v = v;
	lp->nvec = nvec;
	lp->period = ckt_period(n);
	lp->end = nvec * lp->period;
	lp->emit = emit;
	lp->ctx = ctx;
	lp->st = malloc(n->ngates);
	lp->stim = calloc(n->ninputs ? n->ninputs : 1, 1);
	lp->dirty = malloc(n->ngates * sizeof *lp->dirty);
	if (!lp->st || !lp->stim || !lp->dirty) {
		lp_free(lp);
		return -ENOMEM;
	}
	settle_zero(n, lp->st);
	for (uint32_t i = 0; i < n->ninputs; i++)
		if (owner[n->input[i]] == self)
			lp->nlocal_inputs++;
	for (uint32_t g = 0; g < n->ngates; g++) {
		const struct gate *x = &n->g[g];
		for (uint32_t f = 0; f < x->nfo; f++) {
			uint32_t to = owner[n->fanout[x->fo + f].gate];
			if (to == owner[g])
				continue;
			if (owner[g] == self)
				lp->drives[to] = 1;
			if (to == (uint32_t)self)
				lp->feeds[owner[g]] = 1;
		}
	}
	if (lookahead(lp) < 0) {
		lp_free(lp);
		return -ENOMEM;
	}
	return 0;
}

void lp_free(struct lp *lp)
{
	free(lp->st);
	free(lp->stim);
	free(lp->dirty);
	free(lp->heap);
	free(lp->la_in);
	plog_free(&lp->log);
	lp->la_in = NULL;
	lp->st = lp->stim = NULL;
	lp->dirty = NULL;
	lp->heap = NULL;
	lp->nheap = lp->capheap = 0;
}

int lp_deliver(struct lp *lp, uint32_t time, uint32_t code)
{
	uint32_t g = ev_gate(code);
	const struct netlist *n = lp->n;

	if (g >= n->ngates || lp->owner[g] != lp->self || n->g[g].type == G_INPUT ||
	    ev_pin(code) >= n->g[g].nin)
		return -EINVAL;
	if (time >= lp->end || (lp->started && time <= lp->last_t))
		return -ERANGE;
	return heap_push(lp, time, code);
}

/* Mark gate g as touched in this time step. */
static inline void touch(struct lp *lp, uint32_t g)
{
	if (!(lp->st[g] & ST_DIRTY)) {
		lp->st[g] |= ST_DIRTY;
		lp->dirty[lp->ndirty++] = g;
	}
}

/* Apply vector next_vec to this node's inputs (its time is now); return the events. */
static uint64_t inject(struct lp *lp)
{
	const struct netlist *n = lp->n;
	const struct ckt_vec *vk = &lp->v[lp->next_vec];
	uint64_t applied = 0;

	for (uint32_t i = 0; i < n->ninputs; i++) {
		uint32_t g = n->input[i];
		unsigned b;
		if (lp->owner[g] != lp->self || (b = ckt_input_bit(n, vk, i)) == lp->stim[i])
			continue;
		lp->stim[i] = (uint8_t)b;
		lp->st[g] = st_set(lp->st[g], ST_PIN0, b);
		touch(lp, g);
		applied++;
	}
	lp->next_vec++;
	return applied;
}

/* Evaluate a gate that received events at t; schedule or send its change. */
static int evaluate(struct lp *lp, uint32_t g, uint32_t t)
{
	const struct netlist *n = lp->n;
	const struct gate *x = &n->g[g];
	uint8_t s = lp->st[g];
	unsigned out = gate_eval(x->type, st_pin(s, 0), st_pin(s, 1));

	s &= (uint8_t)~ST_DIRTY;
	lp->st[g] = s;
	if (out == st_out(s))
		return 0;
	lp->st[g] = st_set(s, ST_OUT, out);
	if (x->type == G_PROBE)
		return plog_add(&lp->log, t, g - n->nplaced, out);
	uint32_t at = t + gate_delay(x->type);
	for (uint32_t f = 0; f < x->nfo; f++) {
		const struct fanout *fo = &n->fanout[x->fo + f];
		uint32_t code = ev_code(fo->gate, fo->pin, out);
		int to = lp->owner[fo->gate], r;
		r = to == lp->self ? heap_push(lp, at, code) : lp->emit(lp->ctx, to, at, code);
		if (r < 0)
			return r;
	}
	return 0;
}

uint64_t lp_advance(struct lp *lp, uint32_t safe, uint64_t budget)
{
	uint64_t done = 0;

	while (!lp->error) {
		uint32_t t = lp_next(lp);
		if (t == SIM_INF || t >= safe || (budget && done >= budget))
			break;
		lp->ndirty = 0;
		if (stim_time(lp) == t)
			done += inject(lp);
		while (lp->nheap && lp->heap[0].time == t) {
			struct sim_ev e = heap_pop(lp);
			uint32_t g = ev_gate(e.code);
			lp->st[g] = st_set(lp->st[g], (uint8_t)(ST_PIN0 << ev_pin(e.code)), ev_val(e.code));
			touch(lp, g);
			done++;
		}
		for (uint32_t i = 0; i < lp->ndirty && !lp->error; i++)
			lp->error = evaluate(lp, lp->dirty[i], t);
		lp->last_t = t;
		lp->started = 1;
	}
	lp->events += done;
	return done;
}

uint32_t lp_promise(const struct lp *lp, const uint32_t *clock, int dst)
{
	uint32_t b = SIM_INF;

	if (dst < 0 || dst >= lp->nodes || !lp->drives[dst])
		return SIM_INF;
	if (lp->nheap)
		b = sat_add(lp->heap[0].time, lp->la_gate[dst]);
	uint32_t s = sat_add(stim_time(lp), lp->la_stim[dst]);
	if (s < b)
		b = s;
	for (int j = 0; j < lp->nodes; j++) {
		uint32_t c = sat_add(clock[j], lp->la_in[j * lp->nodes + dst]);
		if (c < b)
			b = c;
	}
	return b >= lp->end ? SIM_INF : b;
}
