/*
 * Host unit tests of the circuit simulator's pure parts (apps/circuit_*.c):
 * the bundled netlists against arithmetic through the sequential reference,
 * gate logic and delays, placement, the event rings' no-overwrite and
 * ordering rules, and the whole Chandy-Misra protocol: P nodes in one
 * process over rings whose writes are delivered late, in per-pair order, at
 * random moments, which must reproduce the reference event for event.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/host/unit.h"

#include "apps/circuit_ring.h"
#include "apps/circuit_cmb.h"
#include "apps/circuit_net.h"
#include "apps/circuit_sim.h"

/* Output word of a log at time t (records sorted by time). */
static uint64_t outputs_at(const struct netlist *n, const struct plog *l, uint32_t t)
{
	uint64_t w = 0;

	/* Before vector 0 every output is 0 (all inputs 0: sums and products are 0). */
	for (uint32_t i = 0; i < l->n && l->r[i].time <= t; i++) {
		uint64_t bit = 1ULL << l->r[i].probe;
		w = l->r[i].value ? w | bit : w & ~bit;
	}
	(void)n;
	return w;
}

/* Run the reference and check every vector's settled outputs against arithmetic. */
static void check_arith(const char *name, uint32_t nvec, uint64_t seed)
{
	struct netlist n;
	struct plog log;
	uint64_t events;

	assert_int_equal(ckt_build(&n, name), 0);
	struct ckt_vec *v = calloc(nvec, sizeof *v);
	assert_non_null(v);
	ckt_vectors(&n, seed, v, nvec);
	assert_int_equal(ref_simulate(&n, v, nvec, &log, &events), 0);
	assert_true(events > nvec);
	uint32_t T = ckt_period(&n), i = 0;
	uint64_t w = 0, mask = n.noutputs >= 64 ? ~0ULL : (1ULL << n.noutputs) - 1;
	for (uint32_t k = 0; k < nvec; k++) {
		/* Apply the changes of vector k's window, then compare. */
		for (; i < log.n && log.r[i].time < (k + 1) * T; i++) {
			assert_true(log.r[i].time >= k * T);
			assert_true(log.r[i].time - k * T <= n.crit);
			uint64_t bit = 1ULL << log.r[i].probe;
			w = log.r[i].value ? w | bit : w & ~bit;
		}
		uint64_t want = ckt_expected(&n, &v[k]) & mask;
		if (w != want)
			fail_msg("%s vector %u: a=%#lx b=%#lx cin=%u: outputs %#lx, expected %#lx", name, k,
				 (unsigned long)v[k].a, (unsigned long)v[k].b, v[k].cin, (unsigned long)w,
				 (unsigned long)want);
	}
	assert_int_equal(i, log.n);
	plog_free(&log);
	free(v);
	ckt_free(&n);
}

static void gates_logic_and_delays(void **state)
{
	(void)state;
	for (unsigned a = 0; a < 2; a++)
		for (unsigned b = 0; b < 2; b++) {
			assert_int_equal(gate_eval(G_AND, a, b), a & b);
			assert_int_equal(gate_eval(G_OR, a, b), a | b);
			assert_int_equal(gate_eval(G_XOR, a, b), a ^ b);
			assert_int_equal(gate_eval(G_NOT, a, b), !a);
			assert_int_equal(gate_eval(G_BUF, a, b), a);
			assert_int_equal(gate_eval(G_INPUT, a, b), a);
			assert_int_equal(gate_eval(G_PROBE, a, b), a);
		}
	/* Every type that drives a gate has a delay: the lookahead. */
	for (unsigned t = 0; t < G_NTYPES; t++)
		if (t != G_PROBE)
			assert_true(gate_delay(t) >= 1);
	assert_int_equal(gate_delay(G_PROBE), 0);
	assert_int_equal(ckt_build(&(struct netlist){ 0 }, "nosuch"), -ENOENT);
}

/* The netlist named, built and sound, of that many gates. */
static void build_checked(struct netlist *n, const char *name, int gates)
{
	assert_int_equal(ckt_build(n, name), 0);
	assert_int_equal(ckt_check(n), 0);
	assert_int_equal(ckt_gates(n), gates);
}

static void adder_netlist_has_225_gates(void **state)
{
	struct netlist n;

	(void)state;
	build_checked(&n, "adder32", 225);
	assert_int_equal(n.count[G_INPUT], 65);
	assert_int_equal(n.count[G_XOR], 64);
	assert_int_equal(n.count[G_AND], 64);
	assert_int_equal(n.count[G_OR], 32);
	assert_int_equal(n.count[G_PROBE], 33);
	assert_int_equal(n.noutputs, 33);
	assert_int_equal(n.ninputs, 65);
	/* cin at 1, carry i+1 at 4(i+1)+4 ... carry out at 4 * 32 + 4. */
	assert_int_equal(n.crit, 132);
	ckt_free(&n);
}

static void multipliers_netlists(void **state)
{
	struct netlist n;

	(void)state;
	build_checked(&n, "mul16", 1440);
	assert_int_equal(n.count[G_INPUT], 32);
	assert_int_equal(n.count[G_AND], 256 + 30 + 14 * 31);
	assert_int_equal(n.noutputs, 32);
	ckt_free(&n);
	build_checked(&n, "mul32", 5952);
	assert_int_equal(n.noutputs, 64);
	ckt_free(&n);
}

static void adder_against_arithmetic(void **state)
{
	(void)state;
	check_arith("adder32", 3000, 1);
	check_arith("adder32", 500, 0xdeadbeef);
}

static void multipliers_against_arithmetic(void **state)
{
	(void)state;
	check_arith("mul16", 300, 7);
	check_arith("mul32", 30, 7);
}

/* Vector 1 of the adder ripples a carry from a_0 through all 32 bits: it settles at the critical path. */
static void adder_worst_case_settles_at_the_critical_path(void **state)
{
	struct netlist n;
	struct plog log;
	uint64_t events;
	struct ckt_vec v[2];

	(void)state;
	assert_int_equal(ckt_build(&n, "adder32"), 0);
	ckt_vectors(&n, 1, v, 2);
	assert_true(v[0].a == 0xfffffffeu && v[1].a == 0xffffffffu && v[0].b == 0 && v[0].cin == 1 && v[1].cin == 1);
	assert_int_equal(ref_simulate(&n, v, 2, &log, &events), 0);
	uint32_t T = ckt_period(&n), last = 0;
	for (uint32_t i = 0; i < log.n; i++)
		if (log.r[i].time >= T)
			last = log.r[i].time - T;
	assert_int_equal(last, n.crit);
	assert_int_equal(outputs_at(&n, &log, 2 * T - 1), 1ULL << 32);
	plog_free(&log);
	ckt_free(&n);
}

static void placement(void **state)
{
	struct netlist n;
	uint8_t *o, *o2;

	(void)state;
	assert_int_equal(ckt_build(&n, "adder32"), 0);
	o = malloc(n.ngates);
	o2 = malloc(n.ngates);
	for (int P = 1; P <= 8; P++) {
		uint32_t cnt[8] = { 0 };
		ckt_place(&n, P, PLACE_LINEAR, 0, o);
		for (uint32_t g = 0; g < n.nplaced; g++) {
			assert_true(o[g] < P);
			if (g)
				assert_true(o[g] == o[g - 1] || o[g] == o[g - 1] + 1);
			cnt[o[g]]++;
		}
		/* The first N/P gates on node 0, the next on node 1, ... */
		for (int j = 0; j < P; j++)
			assert_true(cnt[j] == n.nplaced / P || cnt[j] == n.nplaced / P + 1);
		ckt_place(&n, P, PLACE_RANDOM, 42, o);
		ckt_place(&n, P, PLACE_RANDOM, 42, o2);
		assert_memory_equal(o, o2, n.ngates);
		memset(cnt, 0, sizeof cnt);
		for (uint32_t g = 0; g < n.nplaced; g++)
			cnt[o[g]]++;
		for (int j = 0; j < P; j++)
			assert_true(cnt[j] > n.nplaced / P / 3);
		for (uint32_t g = n.nplaced; g < n.ngates; g++)
			assert_int_equal(o[g], o[n.g[g].in[0]]);
	}
	ckt_place(&n, 4, PLACE_RANDOM, 43, o2);
	assert_true(memcmp(o, o2, n.nplaced) != 0);
	free(o);
	free(o2);
	ckt_free(&n);
}

/* --- the ring rules ------------------------------------------------------- */

static void room_rule(void **state)
{
	(void)state;
	assert_int_equal(cring_room(0, 0, 8), 8);
	assert_int_equal(cring_room(8, 0, 8), 0);
	assert_int_equal(cring_room(10, 4, 8), 2);
	assert_int_equal(cring_room(10, 11, 8), -1);	/* ack ahead of the writer */
	assert_int_equal(cring_room(20, 4, 8), -1);	/* would be an overrun */
	/* Free-running indexes wrap at 2^32. */
	assert_int_equal(cring_room(3, 0xfffffffeu, 8), 3);
	struct cring_layout L;
	assert_int_equal(cring_layout(&L, 4, 6, 0), -EINVAL);
	assert_int_equal(cring_layout(&L, 4, 16, 40), 0);
	assert_true(L.ack_off >= 40 && L.ring_off >= L.ack_off + 16 && L.ring_off % 4 == 0);
	assert_int_equal(L.size, L.ring_off + 4 * 16 * 12);
}

/*
 * A fabric for P nodes in one process: each write is copied and queued per
 * (writer, target) pair, and delivered later in that pair's order, as the
 * reliable channel does.  Delivery checks that no ring write lands on a
 * slot its reader has not consumed.
 */
#define MAXP 8

struct pwrite {
	struct pwrite *next;
	uint32_t off, len;
	int notify;
	uint8_t data[];
};

struct fab {
	int P;
	struct cring_layout L;
	uint8_t *seg[MAXP];
	struct cring *ch[MAXP];			/* the reader state, for the overwrite check */
	struct pwrite *head[MAXP][MAXP], *tail[MAXP][MAXP];
	uint64_t queued, delivered, overwrites, notifies;
	int immediate;
};

struct wctx {
	struct fab *f;
	int self;
};

static void apply(struct fab *f, int src, int dst, uint32_t off, const uint8_t *data, uint32_t len)
{
	uint32_t roff = cring_ring_off(&f->L, src), rlen = f->L.cap * (uint32_t)sizeof(struct cring_rec);

	if (off >= roff && off < roff + rlen && f->ch[dst]) {
		/* Every slot overwritten must hold a record the reader consumed. */
		uint32_t r = f->ch[dst]->rx[src].r;
		for (uint32_t o = off; o < off + len; o += sizeof(struct cring_rec)) {
			struct cring_rec old;
			memcpy(&old, f->seg[dst] + o, sizeof old);
			if ((int32_t)(old.seq - r) >= 0)
				f->overwrites++;
		}
	}
	memcpy(f->seg[dst] + off, data, len);
	f->delivered++;
}

static int fab_write(void *ctx, int node, uint32_t off, const void *src, uint32_t len, int notify)
{
	struct wctx *w = ctx;
	struct fab *f = w->f;

	if (node < 0 || node >= f->P || node == w->self || off + len > f->L.size)
		return -EINVAL;
	f->notifies += notify != 0;
	if (f->immediate) {
		apply(f, w->self, node, off, src, len);
		return 0;
	}
	struct pwrite *p = malloc(sizeof *p + len);
	if (!p)
		return -ENOMEM;
	p->next = NULL;
	p->off = off;
	p->len = len;
	p->notify = notify;
	memcpy(p->data, src, len);
	if (f->tail[w->self][node])
		f->tail[w->self][node]->next = p;
	else
		f->head[w->self][node] = p;
	f->tail[w->self][node] = p;
	f->queued++;
	return 0;
}

/* Deliver the oldest write of pair (s, d); 0 if none. */
static int fab_deliver(struct fab *f, int s, int d)
{
	struct pwrite *p = f->head[s][d];

	if (!p)
		return 0;
	f->head[s][d] = p->next;
	if (!p->next)
		f->tail[s][d] = NULL;
	apply(f, s, d, p->off, p->data, p->len);
	free(p);
	return 1;
}

static int fab_pending(struct fab *f)
{
	for (int s = 0; s < f->P; s++)
		for (int d = 0; d < f->P; d++)
			if (f->head[s][d])
				return 1;
	return 0;
}

static void fab_free(struct fab *f)
{
	for (int s = 0; s < f->P; s++)
		free(f->seg[s]);
	for (int s = 0; s < f->P; s++)
		for (int d = 0; d < f->P; d++)
			while (f->head[s][d]) {
				struct pwrite *p = f->head[s][d];
				f->head[s][d] = p->next;
				free(p);
			}
}

struct dist_result {
	uint64_t events, nulls, sent, steps, writes;
};

/*
 * The distributed simulation of circuit name on P nodes, scheduled by a
 * seeded generator; its merged probe log must equal the reference's.
 */
static struct dist_result run_distributed(const char *name, int P, enum ckt_place how, uint32_t cap,
					  uint64_t budget, uint32_t nvec, uint64_t seed, int immediate)
{
	struct netlist n;
	struct fab f = { 0 };
	struct cmb *node = calloc(P, sizeof *node);
	struct wctx wc[MAXP];
	struct dist_result res = { 0 };
	uint64_t rng = seed * 7919 + 1, ref_events;
	struct plog ref;

	assert_non_null(node);
	assert_int_equal(ckt_build(&n, name), 0);
	struct ckt_vec *v = calloc(nvec, sizeof *v);
	uint8_t *owner = malloc(n.ngates);
	ckt_vectors(&n, seed, v, nvec);
	ckt_place(&n, P, how, seed, owner);
	assert_int_equal(ref_simulate(&n, v, nvec, &ref, &ref_events), 0);

	f.P = P;
	f.immediate = immediate;
	assert_int_equal(cring_layout(&f.L, P, cap, 24), 0);
	for (int i = 0; i < P; i++) {
		f.seg[i] = calloc(1, f.L.size);
		wc[i] = (struct wctx){ &f, i };
		/* Small writes too: 5 records at most, to split batches. */
		uint32_t maxw = (seed & 1) ? 5 * sizeof(struct cring_rec) : 1408;
		assert_int_equal(cmb_init(&node[i], &n, owner, i, P, v, nvec, &f.L, f.seg[i], maxw, fab_write,
					  &wc[i], budget),
				 0);
		f.ch[i] = &node[i].ch;
	}

	int done = 0;
	uint64_t idle = 0;
	for (uint64_t it = 0; !done; it++) {
		if (it > 2000000) {
			for (int i = 0; i < P; i++) {
				fprintf(stderr, "node %d: safe %u next %u heap %u done %d idle %d\n", i, cring_safe(&node[i].ch), lp_next(&node[i].lp), node[i].lp.nheap, cmb_done(&node[i]), lp_idle(&node[i].lp));
				for (int j = 0; j < P; j++)
					fprintf(stderr, "  %d: tx act %d w %u promised %u qn %u | rx act %d r %u promise %u\n", j, node[i].ch.tx[j].active, node[i].ch.tx[j].w, node[i].ch.tx[j].promised, node[i].ch.tx[j].qn, node[i].ch.rx[j].active, node[i].ch.rx[j].r, node[i].ch.rx[j].promise);
			}
		}
		if (it > 2000000)
			fail_msg("no end after %lu iterations", (unsigned long)it);
		uint64_t x = ckt_rand(&rng);
		int moved = 0;
		if (x % 3 == 0 && fab_pending(&f)) {
			/* Deliver a burst on one random pair. */
			int s = (int)((x >> 8) % P), d = (int)((x >> 16) % P), k = 1 + (int)((x >> 24) % 4);
			for (int i = 0; i < k; i++)
				moved |= fab_deliver(&f, s, d);
		} else {
			int i = (int)((x >> 8) % P);
			int r = cmb_step(&node[i]);
			if (r < 0)
				fail_msg("node %d step: %d", i, r);
			moved = r;
		}
		idle = moved ? 0 : idle + 1;
		if (idle > 2000) {
			/* Nothing moved for a while: flush every pair, step everyone. */
			int any = 0;
			for (int s = 0; s < P; s++)
				for (int d = 0; d < P; d++)
					while (fab_deliver(&f, s, d))
						any = 1;
			for (int i = 0; i < P; i++) {
				int r = cmb_step(&node[i]);
				if (r < 0)
					fail_msg("node %d step: %d", i, r);
				any |= r;
			}
			done = 1;
			for (int i = 0; i < P; i++)
				done &= cmb_done(&node[i]);
			if (!any && !done && !fab_pending(&f))
				fail_msg("deadlock: no node can move and not all are done");
			idle = 0;
		}
	}
	assert_int_equal(f.overwrites, 0);

	/* Merge the logs and compare with the reference, probe by probe. */
	uint32_t total = 0;
	for (int i = 0; i < P; i++)
		total += node[i].lp.log.n;
	assert_int_equal(total, ref.n);
	struct probe_rec *all = malloc((total ? total : 1) * sizeof *all);
	uint32_t k = 0;
	for (int i = 0; i < P; i++) {
		memcpy(all + k, node[i].lp.log.r, node[i].lp.log.n * sizeof *all);
		k += node[i].lp.log.n;
		res.events += node[i].lp.events;
		uint64_t s, nl, w;
		cmb_totals(&node[i], &s, &nl, &w);
		res.sent += s;
		res.nulls += nl;
		res.writes += w;
		res.steps += node[i].steps;
	}
	plog_sort(all, total);
	plog_sort(ref.r, ref.n);
	assert_memory_equal(all, ref.r, total * sizeof *all);
	assert_int_equal(res.events, ref_events);

	free(all);
	plog_free(&ref);
	for (int i = 0; i < P; i++)
		cmb_free(&node[i]);
	fab_free(&f);
	free(node);
	free(owner);
	free(v);
	ckt_free(&n);
	return res;
}

static void one_node_equals_reference(void **state)
{
	(void)state;
	struct dist_result r = run_distributed("adder32", 1, PLACE_LINEAR, 64, 0, 200, 3, 1);
	assert_int_equal(r.sent, 0);
	assert_int_equal(r.nulls, 0);
	run_distributed("mul16", 1, PLACE_LINEAR, 64, 100, 20, 4, 1);
}

static void distributed_adder_equals_reference(void **state)
{
	static const int Ps[] = { 2, 3, 4, 8 };
	/* Ring sizes with events per step: the smallest ring, a small one, the default. */
	static const struct {
		uint32_t cap;
		uint64_t budget;
	} rb[] = { { 4, 1 }, { 16, 37 }, { 1024, 0 }, { 8, 0 } };

	(void)state;
	for (unsigned p = 0; p < 4; p++)
		for (int how = 0; how < 2; how++)
			for (unsigned c = 0; c < 4; c++) {
				uint64_t seed = p * 100 + how * 10 + c;
				struct dist_result r = run_distributed("adder32", Ps[p], how, rb[c].cap, rb[c].budget,
								       40, seed, 0);
				assert_true(r.sent > 0 && r.nulls > 0);
			}
}

static void distributed_multiplier_equals_reference(void **state)
{
	(void)state;
	run_distributed("mul16", 4, PLACE_LINEAR, 64, 50, 8, 11, 0);
	run_distributed("mul16", 4, PLACE_RANDOM, 16, 50, 8, 12, 0);
	run_distributed("mul16", 3, PLACE_RANDOM, 1024, 0, 8, 13, 1);
}

/* Writes delivered at once (the fabric with no delay) work too. */
static void immediate_delivery_equals_reference(void **state)
{
	(void)state;
	for (int P = 2; P <= 8; P *= 2) {
		run_distributed("adder32", P, PLACE_RANDOM, 8, 5, 30, (uint64_t)P, 1);
		run_distributed("adder32", P, PLACE_LINEAR, 8, 0, 30, (uint64_t)P + 1, 1);
	}
}

/* --- one ring, writer and reader alone -------------------------------------- */

struct order {
	uint32_t next;		/* next event number expected */
	int bad;
};

static int in_order(void *ctx, uint32_t time, uint32_t code)
{
	struct order *o = ctx;

	if (code != o->next || time != o->next / 3)
		o->bad++;
	o->next++;
	return 0;
}

/*
 * Thousands of events through a ring of 8, with writes delivered late and
 * drains at random moments: every event arrives once, in order, and no
 * write ever lands on an unread slot; the writer stays within its room.
 */
static void ring_no_overwrite_and_order(void **state)
{
	struct fab f = { 0 };
	struct cring c[2];
	struct wctx wc[2] = { { &f, 0 }, { &f, 1 } };
	struct order o = { 0, 0 };
	uint64_t rng = 99;
	const uint32_t N = 20000;

	(void)state;
	f.P = 2;
	assert_int_equal(cring_layout(&f.L, 2, 8, 0), 0);
	for (int i = 0; i < 2; i++) {
		f.seg[i] = calloc(1, f.L.size);
		assert_int_equal(cring_init(&c[i], &f.L, i, f.seg[i], 1408, fab_write, &wc[i]), 0);
		f.ch[i] = &c[i];
	}
	cring_open(&c[0], 1, 1, 0);
	cring_open(&c[1], 0, 0, 1);
	uint32_t queued = 0;
	while (o.next < N) {
		uint64_t x = ckt_rand(&rng);
		switch (x % 4) {
		case 0:
			for (int k = 0; k < (int)(x >> 8) % 5 && queued < N; k++, queued++)
				assert_int_equal(cring_queue_event(&c[0], 1, queued / 3, queued), 0);
			if (queued % 7 == 0)
				cring_queue_promise(&c[0], 1, queued / 3);
			break;
		case 1: {
			int r = cring_flush(&c[0], 1);
			assert_true(r >= 0);
			/* Never more in flight or unread than the ring holds. */
			assert_true(c[0].tx[1].w - c[1].rx[0].r <= 8);
			break;
		}
		case 2:
			fab_deliver(&f, (int)((x >> 8) & 1), (int)(~(x >> 8) & 1));
			break;
		case 3:
			assert_true(cring_drain(&c[1], 0, in_order, &o) >= 0);
			break;
		}
	}
	assert_int_equal(o.bad, 0);
	assert_int_equal(f.overwrites, 0);
	assert_true(c[1].acks > N / 8);
	cring_free(&c[0]);
	cring_free(&c[1]);
	fab_free(&f);
}

static int accept(void *ctx, uint32_t time, uint32_t code)
{
	(void)ctx;
	(void)time;
	(void)code;
	return 0;
}

/* A reader refuses what a correct writer never writes. */
static void ring_detects_broken_writers(void **state)
{
	struct cring_layout L;
	struct cring c;
	uint8_t *seg;
	struct cring_rec *ring;

	(void)state;
	assert_int_equal(cring_layout(&L, 2, 8, 0), 0);
	seg = calloc(1, L.size);
	struct fab f = { 0 };
	struct wctx wc = { &f, 1 };
	f.P = 2;
	f.L = L;
	f.seg[0] = calloc(1, L.size);
	f.seg[1] = seg;
	f.immediate = 1;
	assert_int_equal(cring_init(&c, &L, 1, seg, 1408, fab_write, &wc), 0);
	cring_open(&c, 0, 0, 1);
	ring = (struct cring_rec *)(seg + cring_ring_off(&L, 0));

	/* A promise, then an event before it. */
	ring[0] = (struct cring_rec){ 0, 50, CRING_PROMISE };
	ring[1] = (struct cring_rec){ 1, 49, 4 };
	assert_int_equal(cring_drain(&c, 0, accept, NULL), -EPROTO);
	assert_int_equal(c.rx[0].promise, 50);
	/* A promise going back. */
	ring[1] = (struct cring_rec){ 1, 40, CRING_PROMISE };
	assert_int_equal(cring_drain(&c, 0, accept, NULL), -EPROTO);
	/* A slot from a lap ahead: the writer overran the reader. */
	ring[1] = (struct cring_rec){ 1 + 8, 60, 4 };
	assert_int_equal(cring_drain(&c, 0, accept, NULL), -EOVERFLOW);
	/* Garbage sequence number. */
	ring[1] = (struct cring_rec){ 12346, 60, 4 };
	assert_int_equal(cring_drain(&c, 0, accept, NULL), -EPROTO);
	/* And a good one goes through. */
	ring[1] = (struct cring_rec){ 1, 60, 4 };
	assert_int_equal(cring_drain(&c, 0, accept, NULL), 1);
	assert_int_equal(c.rx[0].r, 2);
	assert_int_equal(cring_safe(&c), 50);

	/* A writer refuses an impossible acknowledgement. */
	cring_open(&c, 0, 1, 1);
	*(uint32_t *)(seg + L.ack_off) = 100;
	cring_queue_event(&c, 0, 1, 4);
	assert_int_equal(cring_flush(&c, 0), -EPROTO);
	cring_free(&c);
	free(f.seg[0]);
	free(seg);
}

/* The process refuses events that are not its own or that come too late. */
static void lp_refuses_bad_events(void **state)
{
	struct netlist n;
	struct lp lp;
	struct ckt_vec v[4];
	uint8_t *owner;

	(void)state;
	assert_int_equal(ckt_build(&n, "adder32"), 0);
	owner = malloc(n.ngates);
	ckt_place(&n, 2, PLACE_LINEAR, 0, owner);
	ckt_vectors(&n, 1, v, 4);
	assert_int_equal(lp_init(&lp, &n, owner, 1, 2, v, 4, NULL, NULL), 0);
	uint32_t mine = n.nplaced - 1, theirs = 5, input = n.input[n.width - 1];
	assert_int_equal(owner[mine], 1);
	assert_int_equal(owner[theirs], 0);
	assert_int_equal(lp_deliver(&lp, 10, ev_code(theirs, 0, 1)), -EINVAL);
	assert_int_equal(lp_deliver(&lp, 10, ev_code(n.ngates + 3, 0, 1)), -EINVAL);
	assert_int_equal(owner[input], 1);
	assert_int_equal(lp_deliver(&lp, 10, ev_code(input, 0, 1)), -EINVAL);
	assert_int_equal(lp_deliver(&lp, SIM_INF, ev_code(mine, 0, 1)), -ERANGE);
	/* Process up to 200 (nothing arrives from node 0), then an event at 150 is in the past. */
	assert_true(lp.feeds[0]);
	lp_advance(&lp, 200, 0);
	assert_true(lp.started && lp.last_t < 200 && lp.last_t >= 133);
	assert_int_equal(lp_deliver(&lp, lp.last_t, ev_code(mine, 0, 1)), -ERANGE);
	assert_int_equal(lp_deliver(&lp, lp.last_t + 1, ev_code(mine, 0, 1)), 0);
	/* Node 1 drives nothing on node 0 (linear adder): its promise is infinite. */
	uint32_t clock[2] = { 0, SIM_INF };
	assert_false(lp.drives[0]);
	assert_int_equal(lp_promise(&lp, clock, 0), SIM_INF);
	lp_free(&lp);

	/*
	 * Node 0 drives node 1 through carry c16 (gate 112, an OR): from the
	 * stimulus, a_15 -> AND -> OR is the shortest path (1 + 2 + 2).
	 */
	uint32_t clock0[2] = { SIM_INF, SIM_INF };
	assert_int_equal(lp_init(&lp, &n, owner, 0, 2, v, 4, NULL, NULL), 0);
	assert_true(lp.drives[1] && !lp.feeds[1]);
	assert_int_equal(lp.la_stim[1], 5);
	assert_int_equal(lp.la_gate[1], 2);
	assert_int_equal(lp_promise(&lp, clock0, 1), 5);
	lp_free(&lp);
	free(owner);
	ckt_free(&n);
}

UNIT_MAIN("circuit", NULL, NULL,
	  cmocka_unit_test(gates_logic_and_delays),
	  cmocka_unit_test(adder_netlist_has_225_gates),
	  cmocka_unit_test(multipliers_netlists),
	  cmocka_unit_test(adder_against_arithmetic),
	  cmocka_unit_test(multipliers_against_arithmetic),
	  cmocka_unit_test(adder_worst_case_settles_at_the_critical_path),
	  cmocka_unit_test(placement),
	  cmocka_unit_test(room_rule),
	  cmocka_unit_test(ring_no_overwrite_and_order),
	  cmocka_unit_test(ring_detects_broken_writers),
	  cmocka_unit_test(lp_refuses_bad_events),
	  cmocka_unit_test(one_node_equals_reference),
	  cmocka_unit_test(distributed_adder_equals_reference),
	  cmocka_unit_test(distributed_multiplier_equals_reference),
	  cmocka_unit_test(immediate_delivery_equals_reference))
