/*
 * ising: the Ising optimizer of the remote-memory paper, section 3.2.1,
 * on protected remote memory (net/rmem/rmem.h).
 *
 * The n x n grid is split by rows: node i holds rows [i*n/P, (i+1)*n/P)
 * (two or more) and, on the torus, has two nearest neighbours, the nodes
 * holding the rows above its first and below its last.  Each keeps ghost
 * copies of the two rows on each side.  A sweep is the red half on its
 * rows and on the nearer ghost rows (the neighbour computes the same for
 * them, from the same spins), then the black half on its rows
 * (ising_core.h).  At the end of each sweep a node writes the spins it
 * changed in its two first and two last rows to its neighbours with
 * remote WRITEs, and synchronizes with each neighbour by compare-and-swap
 * on the neighbour's sweep word (old sweep to new, notifying it), both in
 * flight at once; it goes on once both its own sweep words have reached
 * the new sweep, and copies what came into its ghost rows.  The channel
 * keeps order per node pair, so a neighbour that sees the new sweep has
 * the spins written before it.
 *
 * The spins land in an inbox per side (a segment only that neighbour may
 * write), not in the ghost rows: a neighbour may finish its next sweep
 * while this node still reads its ghosts for the current one.  The inbox
 * has two slots, by the parity of the sweep; a neighbour writes slot s%2
 * only after the compare-and-swap of sweep s-1 from this node, which
 * comes after this node emptied that slot for sweep s-2.
 *
 * At the end every node writes its rows' energies into node 0's result
 * segment and adds one to its count (fetch-and-add), then its spins, and
 * adds one to a second count.  Node 0
 * sums the row energies in row order, and then checks the result against
 * the same optimizer run on the whole grid alone, with local memory and no
 * synchronization: the energy must agree bit for bit and so must every
 * spin.  It prints
 *	RESULT ising nodes=P grid=n sweeps=S energy=E flips=F ms=T seq_ms=Q ok=1
 * where ms is the parallel run measured on node 0 with the TSC (from the
 * moment all nodes are ready to the last node's energies and flips in;
 * the spins, which only the check needs, come after), seq_ms the check
 * run's time on node 0 alone, and compute_ms, cas_ms and wait_ms node 0's
 * time in the half-sweeps, in its compare-and-swaps, and waiting for its
 * neighbours.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/app.h"
#include "apps/ising.h"
#include "apps/ising_core.h"
#include "kernel/thread.h"
#include "kernel/tsc.h"
#include "net/call/barrier.h"
#include "net/fabric/fabric.h"
#include "net/rmem/rmem.h"

#define WAIT_NS 60000000000ULL
#define SYNC_UP 0			/* sweep word the node above moves */
#define SYNC_DOWN 8			/* sweep word the node below moves */
#define RES_DONE 0			/* node 0: parts reported */
#define RES_FLIPS 8			/* node 0: flips of the other nodes */
#define RES_SPINS 16			/* node 0: parts whose spins are in (the check's) */
#define RES_E 64			/* node 0: the row energies, then the spins */
#define INBOX_SLOT(n) (16 + 2 * (size_t)(n))

/* An inbox slot: the sweep, the columns [lo, hi) of two rows that changed, then those bytes. */
struct inbox_hdr {
	uint32_t sweep, lo, hi, pad;
};

struct ctx {
	int n, p, me, up, down;
	struct ising_part part;
	volatile uint64_t *sync;	/* 16 bytes, exported "ising.sync" */
	uint8_t *res;			/* node 0: exported "ising.res" */
	int segs[6], nsegs;
	uint8_t *inbox[2];		/* from above, from below: 2 slots of INBOX_SLOT(n) */
	uint8_t *stage;			/* what goes out, header first */
	int up_ghost_rd, down_ghost_rd;	/* the neighbours' inboxes for my rows */
	int up_sync_rd, down_sync_rd, res_rd;
	int sync_seg;
	uint64_t writes;
	uint64_t t_comp, t_cas, t_wait;	/* node 0's time in each part of a sweep */
};

static size_t res_size(int n)
{
	return RES_E + sizeof(double) * (size_t)n + (size_t)n * (size_t)n;
}

static void teardown(struct ctx *x)
{
	for (int i = 0; i < x->nsegs; i++)
		seg_unexport(x->segs[i]);
	for (int *rd = &x->up_ghost_rd; rd <= &x->res_rd; rd++)
		if (*rd >= 0)
			rmem_release(*rd);
	ising_part_free(&x->part);
	free(x->inbox[0]);
	free(x->inbox[1]);
	free(x->stage);
	free((void *)x->sync);
	free(x->res);
}

/* Export my ghosts and phase words, import my neighbours'. */
static int setup(struct ctx *x)
{
	int s;

	x->sync = aligned_alloc(64, 64);
	if (!x->sync)
		return -ENOMEM;
	memset((void *)x->sync, 0, 64);
	if (x->p > 1) {
		/* The inbox from above only the upper neighbour writes, the one from below the lower one. */
		for (int i = 0; i < 2; i++) {
			x->inbox[i] = aligned_alloc(64, 2 * INBOX_SLOT(x->n));
			if (!x->inbox[i])
				return -ENOMEM;
			memset(x->inbox[i], 0xff, 2 * INBOX_SLOT(x->n));	/* no sweep yet */
			s = seg_export_for(i ? "ising.ib" : "ising.ia", x->inbox[i], 2 * INBOX_SLOT(x->n),
					   i ? x->down : x->up, RMEM_W);
			if (s < 0)
				return s;
			x->segs[x->nsegs++] = s;
		}
		if (!(x->stage = malloc(INBOX_SLOT(x->n))))
			return -ENOMEM;
		if ((s = seg_export_for("ising.sync", (void *)x->sync, 16, x->up, RMEM_A)) < 0)
			return s;
		x->segs[x->nsegs++] = x->sync_seg = s;
		seg_grant(s, x->down, RMEM_A);
		seg_notify(s, 1, NULL, NULL);
	}
	if (x->me == 0) {
		x->res = aligned_alloc(64, res_size(x->n));
		if (!x->res)
			return -ENOMEM;
		memset(x->res, 0, res_size(x->n));
		if (x->p > 1) {
			if ((s = seg_export("ising.res", x->res, res_size(x->n), RMEM_W | RMEM_A)) < 0)
				return s;
			x->segs[x->nsegs++] = s;
			seg_notify(s, 1, NULL, NULL);
		}
	}
	if (x->p == 1)
		return 0;
	/* My first rows go into the upper neighbour's inbox from below, my last ones the other way. */
	x->up_ghost_rd = rmem_import_wait(x->up, "ising.ib", WAIT_NS);
	x->down_ghost_rd = rmem_import_wait(x->down, "ising.ia", WAIT_NS);
	x->up_sync_rd = rmem_import_wait(x->up, "ising.sync", WAIT_NS);
	x->down_sync_rd = rmem_import_wait(x->down, "ising.sync", WAIT_NS);
	if (x->me != 0)
		x->res_rd = rmem_import_wait(0, "ising.res", WAIT_NS);
	for (int *rd = &x->up_ghost_rd; rd <= &x->res_rd; rd++)
		if (*rd < 0 && !(rd == &x->res_rd && x->me == 0))
			return *rd;
	return 0;
}

/* Write what changed in rows row, row+1 (spans a, b) into slot k%2 of a neighbour's inbox. */
static int send_rows(struct ctx *x, int rd, uint64_t k, int row, const struct ising_span *a,
		     const struct ising_span *b)
{
	struct inbox_hdr h = { (uint32_t)k, 0, 0, 0 };
	int n = x->n;

	if (a->lo >= a->hi && b->lo >= b->hi)
		return 0;		/* the slot keeps an old sweep number: nothing changed */
	/* From the first change to the last: the two rows are contiguous. */
	h.lo = (uint32_t)(a->lo < a->hi ? a->lo : n + b->lo);
	h.hi = (uint32_t)(b->lo < b->hi ? n + b->hi : a->hi);
	memcpy(x->stage, &h, sizeof h);
	memcpy(x->stage + sizeof h, ising_row(&x->part, row) + h.lo, h.hi - h.lo);
	x->writes++;
	return rmem_write_block(rd, (uint32_t)((k % 2) * INBOX_SLOT(n)), x->stage, sizeof h + h.hi - h.lo, 0);
}

/* Copy what a neighbour sent for sweep k into two ghost rows from row. */
static void take_rows(struct ctx *x, const uint8_t *inbox, uint64_t k, int row)
{
	const uint8_t *slot = inbox + (k % 2) * INBOX_SLOT(x->n);
	struct inbox_hdr h;

	memcpy(&h, slot, sizeof h);
	if (h.sweep == (uint32_t)k && h.lo < h.hi && h.hi <= 2 * (uint32_t)x->n)
		memcpy(ising_row(&x->part, row) + h.lo, slot + sizeof h, h.hi - h.lo);
}

/* Send what changed in my two first and two last rows, then move both neighbours to sweep k. */
static int exchange(struct ctx *x, uint64_t k, const struct ising_span ch[4])
{
	uint64_t old;
	int r;

	if ((r = send_rows(x, x->up_ghost_rd, k, x->part.r0, &ch[0], &ch[1])) < 0 ||
	    (r = send_rows(x, x->down_ghost_rd, k, x->part.r1 - 2, &ch[2], &ch[3])) < 0)
		return r;
	uint64_t c0 = cycles();
	/*
	 * I am my upper neighbour's lower neighbour, and the other way round:
	 * both compare-and-swaps in flight at once, then both answers.
	 */
	int h1 = rmem_cas_start(x->up_sync_rd, SYNC_DOWN, k - 1, k, RMEM_INTR);
	int h2 = rmem_cas_start(x->down_sync_rd, SYNC_UP, k - 1, k, RMEM_INTR);
	if (h1 < 0 || h2 < 0)
		return h1 < 0 ? h1 : h2;
	if ((r = rmem_atomic_wait(h1, &old, WAIT_NS)) < 0)
		return r;
	if (old != k - 1)
		return -EPROTO;
	if ((r = rmem_atomic_wait(h2, &old, WAIT_NS)) < 0)
		return r;
	if (old != k - 1)
		return -EPROTO;
	uint64_t seen = 0, c1 = cycles();
	x->t_cas += c1 - c0;
	while (x->sync[SYNC_UP / 8] < k || x->sync[SYNC_DOWN / 8] < k)
		if (seg_wait(x->sync_seg, &seen, WAIT_NS) < 0)
			return -ETIMEDOUT;
	x->t_wait += cycles() - c1;
	/* From above: its last two rows, my upper ghosts; from below: my lower ghosts. */
	take_rows(x, x->inbox[0], k, x->part.r0 - 2);
	take_rows(x, x->inbox[1], k, x->part.r1);
	return 0;
}

/*
 * The optimizer alone on the whole grid: the check, and the one-node run.
 * *ns: its sweeps and the energy, timed as the parallel run is (from the
 * first sweep to the energy known; the grid and couplings made before).
 */
static int sequential(int n, int sweeps, uint32_t inst, double *energy, long *flips, int8_t *grid,
		      uint64_t *ns)
{
	struct ising_part p;

	if (ising_part_init(&p, n, inst, 0, n) < 0)
		return -ENOMEM;
	uint64_t t0 = cycles();
	*flips = 0;
	for (int s = 0; s < sweeps; s++)
		for (int color = 0; color < 2; color++) {
			*flips += ising_half_sweep(&p, color);
			ising_wrap(&p);
		}
	double e = 0;
	for (int r = 0; r < n; r++)
		e += ising_row_energy(&p, r);
	*energy = e;
	*ns = cycles_to_ns(cycles() - t0);
	if (grid)
		memcpy(grid, ising_row(&p, 0), (size_t)n * (size_t)n);
	ising_part_free(&p);
	return 0;
}

/* Node 0: wait until every other node added one to the count at off of the result segment. */
static int wait_count(struct ctx *x, uint32_t off, uint64_t *seen, const char *what)
{
	volatile uint64_t *count = (volatile uint64_t *)(x->res + off);

	while (*count < (uint64_t)x->p - 1)
		if (seg_wait(x->segs[x->nsegs - 1], seen, WAIT_NS) < 0) {
			printf("ising: only %lu of %d nodes %s\n", (unsigned long)*count, x->p - 1, what);
			return -ETIMEDOUT;
		}
	return 0;
}

int ising_run(int n, int sweeps, uint32_t inst, struct ising_result *out)
{
	struct ctx x = { .n = n, .p = num_nodes, .me = node_id };
	long flips = 0;
	int r;

	memset(out, 0, sizeof *out);
	x.up = (node_id + num_nodes - 1) % num_nodes;
	x.down = (node_id + 1) % num_nodes;
	x.up_ghost_rd = x.down_ghost_rd = x.up_sync_rd = x.down_sync_rd = x.res_rd = -1;
	x.sync_seg = -1;
	if (n < 4 || n % 2 || (num_nodes > 1 && 2 * num_nodes > n)) {
		printf("ising: the grid must be even, at least 4, with two rows per node (grid=%d, %d nodes)\n", n,
		       num_nodes);
		return -EINVAL;
	}
	if (ising_part_init(&x.part, n, inst, node_id * n / num_nodes, (node_id + 1) * n / num_nodes) < 0) {
		printf("ising: node %d: no memory for its %d rows of a %dx%d grid (17 bytes a spin)\n", node_id,
		       (node_id + 1) * n / num_nodes - node_id * n / num_nodes, n, n);
		return -ENOMEM;
	}
	if ((r = setup(&x)) < 0) {
		printf("ising: node %d: setting up the segments failed (%d)\n", node_id, r);
		goto out;
	}
	if (num_nodes > 1 && (r = cluster_barrier(WAIT_NS)) < 0)
		goto out;

	uint64_t t0 = cycles();
	struct ising_span ch[4];
	for (int s = 0; s < sweeps && r == 0; s++) {
		uint64_t c0 = cycles();
		if (num_nodes == 1) {
			for (int color = 0; color < 2; color++) {
				flips += ising_half_sweep(&x.part, color);
				ising_wrap(&x.part);
			}
			x.t_comp += cycles() - c0;
			continue;
		}
		flips += ising_sweep_part(&x.part, ch);
		x.t_comp += cycles() - c0;
		r = exchange(&x, (uint64_t)s + 1, ch);
	}
	if (r < 0) {
		printf("ising: node %d: exchange with a neighbour failed (%d)\n", node_id, r);
		goto out;
	}
	/* My rows' energies and spins into node 0's result segment, then count me in. */
	int rows = x.part.r1 - x.part.r0;
	double *e = malloc(sizeof(double) * (size_t)rows);
	if (!e) {
		r = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < rows; i++)
		e[i] = ising_row_energy(&x.part, x.part.r0 + i);
	uint32_t eoff = RES_E + (uint32_t)(sizeof(double) * (size_t)x.part.r0);
	uint32_t goff = RES_E + (uint32_t)(sizeof(double) * (size_t)n) + (uint32_t)(x.part.r0 * n);
	if (node_id == 0) {
		memcpy(x.res + eoff, e, sizeof(double) * (size_t)rows);
		memcpy(x.res + goff, ising_row(&x.part, x.part.r0), (size_t)rows * (size_t)n);
	} else {
		uint64_t old;
		/* The result first (node 0's clock stops on it), then the spins for the check. */
		r = rmem_write_block(x.res_rd, eoff, e, sizeof(double) * (size_t)rows, 0);
		if (r == 0)
			r = rmem_fadd(x.res_rd, RES_FLIPS, (uint64_t)flips, &old);
		if (r == 0)
			r = rmem_fadd_flags(x.res_rd, RES_DONE, 1, &old, RMEM_INTR);
		if (r == 0)
			r = rmem_write_block(x.res_rd, goff, ising_row(&x.part, x.part.r0), (size_t)rows * (size_t)n, 0);
		if (r == 0)
			r = rmem_fadd_flags(x.res_rd, RES_SPINS, 1, &old, RMEM_INTR);
	}
	free(e);
	if (r < 0)
		goto out;
	out->flips = flips;
	if (node_id == 0) {
		uint64_t seen = 0;
		if ((r = wait_count(&x, RES_DONE, &seen, "reported")) < 0)
			goto out;
		out->ns = cycles_to_ns(cycles() - t0);
		if ((r = wait_count(&x, RES_SPINS, &seen, "sent their spins")) < 0)
			goto out;
		out->flips += (long)*(volatile uint64_t *)(x.res + RES_FLIPS);
		double sum = 0;
		for (int i = 0; i < n; i++) {
			double v;
			memcpy(&v, x.res + RES_E + sizeof(double) * (size_t)i, sizeof v);
			sum += v;
		}
		out->energy = sum;
		/* The check: the same optimizer, one node, local memory, no synchronization. */
		int8_t *grid = malloc((size_t)n * (size_t)n);
		long seq_flips;
		double seq_e;
		if (!grid || sequential(n, sweeps, inst, &seq_e, &seq_flips, grid, &out->seq_ns) < 0) {
			printf("ising: node 0: no memory for the one-node check of a %dx%d grid (17 bytes a spin)\n",
			       n, n);
			free(grid);
			r = -ENOMEM;
			goto out;
		}
		out->seq_energy = seq_e;
		out->energy_match = memcmp(&seq_e, &sum, sizeof sum) == 0 && seq_flips == out->flips;
		out->grid_match = memcmp(grid, x.res + RES_E + sizeof(double) * (size_t)n, (size_t)n * (size_t)n) == 0;
		out->seq_flips = seq_flips;
		free(grid);
	}
	out->writes = x.writes;
	out->comp_ns = cycles_to_ns(x.t_comp);
	out->cas_ns = cycles_to_ns(x.t_cas);
	out->wait_ns = cycles_to_ns(x.t_wait);
	/* Nobody withdraws a segment a neighbour may still be writing into. */
	if (num_nodes > 1 && cluster_barrier(WAIT_NS) < 0)
		r = -ETIMEDOUT;
out:
	teardown(&x);
	return r;
}

static const struct argspec ising_args[] = {
	{ "grid", ARG_INT, 4, 2048, "grid side, even (default 80)" },
	{ "sweeps", ARG_INT, 1, 100000, "red/black sweeps (default 40)" },
	{ "instance", ARG_INT, 0, 0x7fffffff, "seed of the coefficients and starting spins (default 1)" },
	{ NULL, 0, 0, 0, NULL },
};

static int ising_main(void)
{
	int n = (int)arg_int("grid", 80), sweeps = (int)arg_int("sweeps", 40);
	uint32_t inst = (uint32_t)arg_int("instance", 1);
	struct ising_result res;
	int r;

	if (num_nodes > 1 && fabric_wait_peers(60000000000ULL) < 0)
		return 1;
	r = ising_run(n, sweeps, inst, &res);
	if (r < 0)
		return 1;
	if (node_id != 0)
		return 0;
	int ok = res.energy_match && res.grid_match;
	printf("ising: %dx%d grid on %d node%s, %d sweeps: energy %.17g after %ld flips (%lu boundary writes here); "
	       "alone on one node: %.17g after %ld flips\n",
	       n, n, num_nodes, num_nodes > 1 ? "s" : "", sweeps, res.energy, res.flips,
	       (unsigned long)res.writes, res.seq_energy, res.seq_flips);
	if (!ok)
		printf("ising: FAILED: the parallel result differs from the one-node run (%s%s)\n",
		       res.energy_match ? "" : "energy ", res.grid_match ? "" : "spins");
	result("nodes=%d grid=%d sweeps=%d energy=%.17g ms=%lu.%03lu seq_ms=%lu.%03lu compute_ms=%lu cas_ms=%lu "
	       "wait_ms=%lu ok=%d",
	       num_nodes, n, sweeps, res.energy, res.ns / 1000000, res.ns / 1000 % 1000, res.seq_ns / 1000000,
	       res.seq_ns / 1000 % 1000, res.comp_ns / 1000000, res.cas_ns / 1000000, res.wait_ns / 1000000, ok);
	return ok ? 0 : 1;
}

APP(ising_app, "ising",
    "Ising optimizer (remote-memory paper 3.2.1): rows split over nodes, checked against one node",
    ising_main, ising_args, 0);
