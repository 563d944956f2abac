/*
 * circuit: the distributed gate-level circuit simulator of the
 * remote-memory-atm paper, section 3.2.2 (Table 6): conservative
 * (Chandy-Misra) simulation with null messages, gates placed linearly or
 * randomly over the nodes, each node's remote-fed gate inputs in an
 * exported segment that the driving nodes import and fill with remote
 * WRITEs (section 2.1).
 *
 * The pure parts, shared with the host tests: the netlists and placement
 * (circuit_net.h), the sequential reference and the per-node simulation
 * (circuit_sim.h), the event rings (circuit_ring.h), the node step
 * (circuit_cmb.h).  This file runs them over net/rmem/rmem.h:
 *
 *   1. every node builds the same netlist, vectors and placement;
 *   2. each exports segment "circuit" (its rings, the acknowledgement words
 *      of its own rings, and on node 0 the finish records), imports every
 *      other node's, and the nodes meet at a barrier;
 *   3. each steps its logical process until done, sleeping in seg_wait()
 *      whenever a step moved nothing (every ring write carries RMEM_INTR);
 *   4. each writes a finish record to node 0, whose clock stops at the
 *      last one: ms= is that wall time (TSC) from the barrier;
 *   5. node 0 READs every node's probe log, runs the sequential reference
 *      simulation of the same netlist, and compares every output change
 *      (time and value), the event count, and each vector's settled
 *      outputs against the arithmetic (a+b+cin, a*b).
 *
 * On one node the same loop runs with no channel at all: the paper's
 * "otherwise identical single-node solution that uses local memory and no
 * synchronization", the base of the speedup.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/app.h"
#include "apps/circuit_cmb.h"
#include "apps/circuit_net.h"
#include "apps/circuit_sim.h"
#include "kernel/tsc.h"
#include "net/call/barrier.h"
#include "net/fabric/fabric.h"
#include "net/rmem/rmem.h"

#define BARRIER_NS 120000000000ULL
#define STUCK_NS 60000000000ULL		/* no progress for this long: give up */
#define DONE_MAGIC 0x43495243u		/* "CIRC" */
#define SHOW_VECTORS 4

/* A node's finish record, written into node 0's segment (user area). */
struct done_rec {
	uint32_t magic;
	int32_t status;			/* 0, or the node's -errno */
	uint32_t nlog;			/* probe records in its "circuit-log" */
	uint32_t gates;
	uint64_t events, sent, nulls, writes, steps, busy_ns;
};
_Static_assert(sizeof(struct done_rec) == 64, "finish records are written remotely");

/* Everything one run holds, so that every way out can let go of it. */
struct run {
	struct netlist n;
	const char *place;
	uint32_t nvec;
	struct ckt_vec *v;
	uint8_t *owner;
	uint32_t mine, cut;		/* gates on this node, edges between nodes */
	struct cring_layout L;
	uint8_t *mem;			/* exported "circuit": finish records, acks, rings */
	struct cmb *c;
	int seg, logseg, gseg;		/* exported segments (-1: none) */
	int rd[CKT_MAX_NODES];		/* each peer's "circuit" (-1: none) */
	struct probe_rec *all;		/* node 0: every node's output changes */
	uint64_t waits, wait_cycles;
};

static int rm_write(void *ctx, int node, uint32_t off, const void *src, uint32_t len, int notify)
{
	struct run *R = ctx;

	return rmem_write(R->rd[node], off, src, len, notify ? RMEM_INTR : 0);
}

static const struct argspec circuit_args[] = {
	{ "circuit", ARG_STR, 0, 0, "adder32 (default, 225 gates), mul16 (1440) or mul32 (5952)" },
	{ "place", ARG_STR, 0, 0, "linear (default: first N/P gates on node 0, ...) or random" },
	{ "vectors", ARG_INT, 1, 4096, "input vectors applied one period apart (default 100)" },
	{ "seed", ARG_INT, 0, 0x7fffffff, "seed of the vectors and of random placement (default 1)" },
	{ "ring", ARG_INT, 8, 65536, "records per event ring, a power of two (default 1024)" },
	{ "batch", ARG_INT, 0, 1000000, "events a node simulates between writes (default 256, 0: no limit)" },
	{ "flip", ARG_INT, 0, 0x7fffffff, "test the checker: node 0 inverts output change number flip first" },
	{ NULL, 0, 0, 0, NULL },
};

/* Output j's name: s<j> and cout for the adder, p<j> for a product. */
static const char *out_name(const struct netlist *n, uint32_t j, char *buf, size_t len)
{
	if (n->kind == CKT_ADDER && j == n->width)
		snprintf(buf, len, "cout");
	else
		snprintf(buf, len, "%c%u", n->kind == CKT_ADDER ? 's' : 'p', j);
	return buf;
}

/* --- node 0: collecting and checking -------------------------------------- */

/* READ node's probe log (nrec records) into local segment lseg at offset off. */
static int fetch_log(int node, uint32_t nrec, int lseg, uint32_t off)
{
	int rs = rmem_import(node, "circuit-log"), r = 0;
	uint32_t bytes = nrec * (uint32_t)sizeof(struct probe_rec), done = 0;

	if (rs < 0)
		return rs;
	while (done < bytes && r == 0) {
		uint32_t n = bytes - done > RMEM_MAX_XFER ? RMEM_MAX_XFER : bytes - done;
		int h = rmem_read(rs, done, n, lseg, off + done, 0);
		r = h < 0 ? h : rmem_read_wait(h, 10000000000ULL);
		done += n;
	}
	rmem_release(rs);
	return r;
}

static int check(const struct netlist *n, const struct ckt_vec *v, uint32_t nvec, struct probe_rec *got,
		 uint32_t ngot, uint64_t events)
{
	struct plog ref;
	uint64_t ref_events;
	uint32_t T = ckt_period(n), bad = 0;
	char name[16];
	int r;

	if ((r = ref_simulate(n, v, nvec, &ref, &ref_events)) < 0) {
		printf("circuit: FAILED: sequential reference simulation: %d\n", r);
		return 0;
	}
	printf("circuit: sequential reference: %lu events, %u output changes\n", ref_events, ref.n);
	plog_sort(got, ngot);
	plog_sort(ref.r, ref.n);
	if (events != ref_events) {
		printf("circuit: FAILED: %lu events simulated, the sequential simulation has %lu\n", events,
		       ref_events);
		bad++;
	}
	for (uint32_t i = 0; i < ngot || i < ref.n; i++) {
		if (i < ngot && i < ref.n && memcmp(&got[i], &ref.r[i], sizeof got[i]) == 0)
			continue;
		if (i < ref.n)
			printf("circuit: FAILED: output change %u: expected %s=%u at %u, ", i,
			       out_name(n, ref.r[i].probe, name, sizeof name), ref.r[i].value, ref.r[i].time);
		else
			printf("circuit: FAILED: output change %u: expected none, ", i);
		if (i < ngot)
			printf("got %s=%u at %u\n", out_name(n, got[i].probe, name, sizeof name), got[i].value,
			       got[i].time);
		else
			printf("got none\n");
		bad++;
		break;
	}
	if (ngot != ref.n) {
		printf("circuit: FAILED: %u output changes, the sequential simulation has %u\n", ngot, ref.n);
		bad++;
	}

	/* Each vector's outputs once settled, against the arithmetic. */
	uint64_t *word = calloc(nvec, sizeof *word);
	uint32_t *settle = calloc(nvec, sizeof *settle), maxsettle = 0;
	if (!word || !settle) {
		printf("circuit: FAILED: no memory to check\n");
		free(word);
		free(settle);
		plog_free(&ref);
		return 0;
	}
	for (uint32_t i = 0, p = 0; p < n->noutputs; p++) {
		unsigned val = 0;
		for (uint32_t k = 0; k < nvec; k++) {
			for (; i < ngot && got[i].probe == p && got[i].time < (k + 1) * T; i++) {
				val = got[i].value;
				if (got[i].time >= k * T && got[i].time - k * T > settle[k])
					settle[k] = got[i].time - k * T;
			}
			if (val)
				word[k] |= 1ULL << p;
		}
		while (i < ngot && got[i].probe == p)
			i++;
	}
	uint64_t mask = n->noutputs >= 64 ? ~0ULL : (1ULL << n->noutputs) - 1;
	for (uint32_t k = 0; k < nvec; k++) {
		uint64_t want = ckt_expected(n, &v[k]) & mask;
		if (settle[k] > maxsettle)
			maxsettle = settle[k];
		if (k < SHOW_VECTORS || word[k] != want) {
			if (n->kind == CKT_ADDER)
				printf("circuit: vector %u: %#lx + %#lx + %u = %#lx, settled at +%u ticks\n", k,
				       v[k].a, v[k].b, v[k].cin, word[k], settle[k]);
			else
				printf("circuit: vector %u: %#lx * %#lx = %#lx, settled at +%u ticks\n", k, v[k].a,
				       v[k].b, word[k], settle[k]);
		}
		if (word[k] != want) {
			printf("circuit: FAILED: vector %u: outputs %#lx, expected %#lx\n", k, word[k], want);
			bad++;
		}
		if (settle[k] > n->crit) {
			printf("circuit: FAILED: vector %u settled at +%u, after the critical path %u\n", k,
			       settle[k], n->crit);
			bad++;
		}
	}
	if (!bad)
		printf("circuit: %u vectors: every output change equal to the sequential simulation, "
		       "every result equal to the arithmetic; latest settle +%u ticks (critical path %u)\n",
		       nvec, maxsettle, n->crit);
	free(word);
	free(settle);
	plog_free(&ref);
	return bad == 0;
}

/* --- the run ------------------------------------------------------------------ */

static int meet(const char *where)
{
	int r = num_nodes > 1 ? cluster_barrier(BARRIER_NS) : 0;

	if (r < 0)
		printf("circuit: FAILED: barrier %s: %d\n", where, r);
	return r;
}

/* Node 0 says what runs: the circuit, its gates, the cut, the timing. */
static void describe(const struct run *R, uint32_t ring, uint64_t seed, uint64_t batch)
{
	const struct netlist *n = &R->n;
	char counts[128] = "";

	for (unsigned t = 0; t < G_NTYPES; t++)
		if (t != G_PROBE && n->count[t])
			snprintf(counts + strlen(counts), sizeof counts - strlen(counts), "%s%u %s",
				 counts[0] ? ", " : "", n->count[t], gate_name(t));
	printf("circuit: %s on %d node%s (%s): %u gates (%s), %u outputs, %u edges between nodes; "
	       "critical path %u ticks, a vector every %u; %u vectors, seed %lu, ring %u, batch %lu\n",
	       n->name, num_nodes, num_nodes > 1 ? "s" : "", R->place, ckt_gates(n), counts, n->noutputs,
	       R->cut, n->crit, ckt_period(n), R->nvec, seed, ring, batch);
}

/*
 * Export this node's rings, format them, meet, import every other node's,
 * meet: after that any node may write to any other.  0 or -1 (said why).
 */
static int setup(struct run *R, uint64_t batch)
{
	int r;

	if (num_nodes > 1) {
		if (!fabric_ready() || fabric_wait_peers(60000000000ULL) < 0) {
			printf("circuit: FAILED: no network\n");
			return -1;
		}
		if ((R->seg = seg_export("circuit", R->mem, R->L.size, RMEM_W)) < 0 ||
		    seg_notify(R->seg, 1, NULL, NULL) < 0) {
			printf("circuit: FAILED: cannot export the rings: %d\n", R->seg);
			return -1;
		}
	}
	if ((r = cmb_init(R->c, &R->n, R->owner, node_id, num_nodes, R->v, R->nvec, &R->L, R->mem,
			  RMEM_MAX_XFER, rm_write, R, batch)) < 0) {
		printf("circuit: FAILED: node %d: setting up: %d\n", node_id, r);
		return -1;
	}
	if (meet("after export") < 0)
		return -1;
	for (int j = 0; j < num_nodes; j++) {
		if (j != node_id && (R->rd[j] = rmem_import(j, "circuit")) < 0) {
			printf("circuit: FAILED: node %d: import of node %d's rings: %d\n", node_id, j, R->rd[j]);
			return -1;
		}
	}
	return meet("before the run");
}

/* Step until done; 0, or a negative error. */
static int simulate(struct run *R)
{
	uint64_t seen = 0, last = cycles();

	for (;;) {
		int r = cmb_step(R->c);
		if (r < 0)
			return r;
		if (cmb_done(R->c))
			return 0;
		if (r > 0) {
			last = cycles();
			continue;
		}
		if (R->seg < 0)
			return -EDEADLK;	/* alone, every step moves */
		if (cycles_to_ns(cycles() - last) > STUCK_NS)
			return -ETIMEDOUT;
		uint64_t w0 = cycles();
		seg_wait(R->seg, &seen, 1000000000ULL);
		R->waits++;
		R->wait_cycles += cycles() - w0;
	}
}

/*
 * Hand node 0 this node's finish record (and, from the others, offer the
 * probe log for READ).  Node 0 then waits for every record: the end of
 * the timed part.  0, or -1 if a node never finished.
 */
static int gather_finish_records(struct run *R, struct done_rec *me)
{
	struct done_rec *done = (struct done_rec *)R->mem;
	uint64_t seen = 0, t = cycles();
	int r;

	if (node_id != 0) {
		if (me->nlog && (R->logseg = seg_export_for("circuit-log", R->c->lp.log.r,
							    me->nlog * sizeof(struct probe_rec), 0, RMEM_R)) < 0)
			me->status = R->logseg;
		if ((r = rmem_write(R->rd[0], (uint32_t)(node_id * sizeof *me), me, sizeof *me, RMEM_INTR)) < 0)
			printf("circuit: FAILED: node %d: finish record: %d\n", node_id, r);
		return 0;
	}
	done[0] = *me;
	for (;;) {
		int all = 1;
		for (int j = 1; j < num_nodes; j++)
			all &= __atomic_load_n(&done[j].magic, __ATOMIC_ACQUIRE) == DONE_MAGIC;
		if (all)
			return 0;
		if (cycles_to_ns(cycles() - t) > STUCK_NS) {
			printf("circuit: FAILED: a node never finished\n");
			return -1;
		}
		seg_wait(R->seg, &seen, 1000000000ULL);
	}
}

/* Node 0: every node's probe log into R->all (total records).  0 or -1. */
static int collect(struct run *R, uint32_t total)
{
	const struct done_rec *done = (const struct done_rec *)R->mem;
	uint32_t off = done[0].nlog;
	int r;

	R->all = malloc((total ? total : 1) * sizeof *R->all);
	if (R->all && num_nodes > 1)
		R->gseg = seg_export("circuit-gather", R->all, (total ? total : 1) * sizeof *R->all, 0);
	if (!R->all || (num_nodes > 1 && R->gseg < 0)) {
		printf("circuit: FAILED: no memory to collect %u output changes\n", total);
		return -1;
	}
	memcpy(R->all, R->c->lp.log.r, done[0].nlog * sizeof *R->all);
	for (int j = 1; j < num_nodes; j++) {
		if (done[j].nlog &&
		    (r = fetch_log(j, done[j].nlog, R->gseg, off * (uint32_t)sizeof *R->all)) < 0) {
			printf("circuit: FAILED: READ of node %d's output changes: %d\n", j, r);
			return -1;
		}
		off += done[j].nlog;
	}
	return 0;
}

/*
 * Let go of everything.  Segments are withdrawn before their memory is
 * freed: a write still in flight is then refused, never applied.
 */
static void teardown(struct run *R)
{
	int segs[3] = { R->seg, R->logseg, R->gseg };

	for (int i = 0; i < 3; i++)
		if (segs[i] >= 0)
			seg_unexport(segs[i]);
	for (int j = 0; j < num_nodes && j < CKT_MAX_NODES; j++)
		if (R->rd[j] >= 0)
			rmem_release(R->rd[j]);
	if (R->c)
		cmb_free(R->c);
	free(R->c);
	free(R->all);
	free(R->mem);
	free(R->owner);
	free(R->v);
	ckt_free(&R->n);
}

static int circuit_main(void)
{
	const char *cname = arg_str("circuit", "adder32");
	uint32_t ring = (uint32_t)arg_int("ring", 1024);
	uint64_t seed = (uint64_t)arg_int("seed", 1), batch = (uint64_t)arg_int("batch", 256);
	struct run R = { .place = arg_str("place", "linear"), .nvec = (uint32_t)arg_int("vectors", 100),
			 .seg = -1, .logseg = -1, .gseg = -1 };
	enum ckt_place how;
	int r, status = 1;

	for (int j = 0; j < CKT_MAX_NODES; j++)
		R.rd[j] = -1;
	if (strcmp(R.place, "linear") == 0) {
		how = PLACE_LINEAR;
	} else if (strcmp(R.place, "random") == 0) {
		how = PLACE_RANDOM;
	} else {
		printf("circuit: FAILED: place=%s: linear or random\n", R.place);
		return 1;
	}
	if (ring & (ring - 1)) {
		printf("circuit: FAILED: ring=%u is not a power of two\n", ring);
		return 1;
	}
	if ((r = ckt_build(&R.n, cname)) < 0) {
		printf("circuit: FAILED: circuit=%s: %s\n", cname,
		       r == -ENOENT ? "not adder32, mul16 or mul32" : "no memory");
		return 1;
	}
	if (num_nodes > CKT_MAX_NODES ||
	    cring_layout(&R.L, num_nodes, ring, (uint32_t)(num_nodes * sizeof(struct done_rec))) < 0) {
		printf("circuit: FAILED: cannot lay out rings for %d nodes\n", num_nodes);
		goto out;
	}
	R.owner = malloc(R.n.ngates);
	R.v = malloc(R.nvec * sizeof *R.v);
	R.mem = calloc(1, R.L.size);
	R.c = calloc(1, sizeof *R.c);
	if (!R.owner || !R.v || !R.mem || !R.c) {
		printf("circuit: FAILED: no memory\n");
		goto out;
	}
	ckt_vectors(&R.n, seed, R.v, R.nvec);
	ckt_place(&R.n, num_nodes, how, seed, R.owner);
	for (uint32_t g = 0; g < R.n.ngates; g++) {
		R.mine += R.owner[g] == node_id && g < R.n.nplaced;
		for (uint32_t f = 0; f < R.n.g[g].nfo; f++)
			R.cut += R.owner[R.n.fanout[R.n.g[g].fo + f].gate] != R.owner[g];
	}
	if (node_id == 0)
		describe(&R, ring, seed, batch);
	if (setup(&R, batch) < 0)
		goto out;

	/* The timed part: from the barrier to the last node's finish record. */
	uint64_t t0 = cycles();
	r = simulate(&R);
	uint64_t busy = cycles_to_ns(cycles() - t0);
	struct done_rec me = { DONE_MAGIC, r, R.c->lp.log.n, R.mine, R.c->lp.events, 0, 0, 0, R.c->steps, busy };
	cmb_totals(R.c, &me.sent, &me.nulls, &me.writes);
	if (r < 0)
		printf("circuit: FAILED: node %d: %s: %d\n", node_id,
		       r == -ETIMEDOUT ? "no progress for 60 s"
		       : r == -ERANGE  ? "an event in the past (causality broken)"
				       : "protocol error",
		       r);
	if (gather_finish_records(&R, &me) < 0)
		goto out;
	uint64_t ns = cycles_to_ns(cycles() - t0), wns = cycles_to_ns(R.wait_cycles);
	printf("circuit: node %d: %u gates, %lu events, sent %lu events and %lu null messages in %lu writes, "
	       "%lu steps, %lu.%03lu ms (%lu.%03lu ms of it waiting, %lu waits)\n",
	       node_id, R.mine, me.events, me.sent, me.nulls, me.writes, me.steps, busy / 1000000,
	       busy / 1000 % 1000, wns / 1000000, wns / 1000 % 1000, R.waits);

	status = me.status < 0;
	if (node_id == 0) {
		const struct done_rec *done = (const struct done_rec *)R.mem;
		uint64_t events = 0, nulls = 0;
		uint32_t total = 0;
		int failed = 0;
		for (int j = 0; j < num_nodes; j++) {
			events += done[j].events;
			nulls += done[j].nulls;
			total += done[j].nlog;
			if (done[j].status < 0) {
				printf("circuit: FAILED: node %d reported %d\n", j, done[j].status);
				failed = 1;
			}
		}
		long flip = arg_int("flip", -1);
		if (!failed && collect(&R, total) < 0)
			failed = 1;
		if (!failed && flip >= 0 && flip < total) {
			printf("circuit: flip=%ld: inverting output change %ld on purpose\n", flip, flip);
			R.all[flip].value ^= 1;
		}
		int ok = !failed && check(&R.n, R.v, R.nvec, R.all, total, events);
		/* Inside another app (the tour), say which part this is. */
		result("%snodes=%d place=%s circuit=%s gates=%u vectors=%u events=%lu null_messages=%lu "
		       "ms=%lu.%03lu ok=%d",
		       current_app && strcmp(current_app->name, "circuit") ? "part=circuit " : "", num_nodes,
		       R.place, R.n.name, ckt_gates(&R.n), R.nvec, events, nulls, ns / 1000000, ns / 1000 % 1000,
		       ok);
		status = !ok;
	}
	/* Every write of ours has landed; node 0 has read every log: let go. */
	for (int j = 0; j < num_nodes; j++)
		if (R.rd[j] >= 0 && (r = rmem_sync(R.rd[j], 10000000000ULL)) < 0) {
			printf("circuit: FAILED: node %d: writes to node %d: %d\n", node_id, j, r);
			status = 1;
		}
	if (meet("at the end") < 0)
		status = 1;
out:
	teardown(&R);
	return status;
}

APP(circuit, "circuit",
    "distributed gate-level circuit simulator (paper 3.2.2): Chandy-Misra with null messages " "over remote memory, checked against a sequential simulation",
    circuit_main, circuit_args, 0);
