/*
 * MPI's one-sided communication (MPI-3.1 chapter 11) on the remote memory
 * paper's operations (net/rmem): a window is exported as segments of the
 * node's memory, granted to the window's members only; MPI_Put is a remote
 * WRITE, MPI_Get a READ, and the atomics (Accumulate, Get_accumulate,
 * Fetch_and_op, Compare_and_swap) are the paper's compare-and-swap and
 * fetch-and-add on the 8-byte word that holds each element.  The target's
 * CPU takes no part: its kernel serves the operations (paper §2.1), its
 * program may be computing or blocked anywhere.
 *
 * Each member exports, per window:
 *  - data: [base, base + size), READ and WRITE;
 *  - words: the same memory widened to whole aligned 8-byte words, for
 *    compare-and-swap and fetch-and-add, and READ (a batch of atomics
 *    reads its words first): an element of 1, 2 or 4 bytes is changed by
 *    a compare-and-swap of its word that keeps the other bytes as they
 *    are;
 *  - lock: one 8-byte word, the passive target lock (MPI_Win_lock):
 *    fetch-and-add of 1 a shared hold, compare-and-swap 0 -> EXCL the
 *    exclusive one; and the accumulate mutex (ACC_MUTEX), which an
 *    accumulate of more than one word, or of elements wider than one,
 *    holds while it runs;
 *  - bounce: where its own READs land before they are copied to the
 *    origin buffer (a READ deposits into a local segment); granted to no
 *    one.
 * The descriptors for the others' segments come from their tickets
 * (seg_ticket), exchanged when the window is made: no name service.
 *
 * Synchronization: Win_fence waits until every operation of this member
 * reached its target (rmem_sync), then a barrier; Win_lock takes the
 * target's lock word, Win_unlock and Win_flush wait for the operations;
 * post/start/complete/wait are messages on the window's own communicator
 * (a dup of the one it was made on).  An operation outside the target's
 * window is refused (MPI_ERR_RMA_RANGE), checked at the origin against the
 * size the target announced, and at the target by its segment's bounds.
 *
 * A target datatype that is not one contiguous run is flattened to its
 * runs, a WRITE or READ each.
 *
 * Dynamic windows (MPI_Win_create_dynamic): a region attached is exported
 * as a data and a words segment, like a window's memory, and entered in a
 * table of the member's regions, one table for each other member (its
 * entries carry the generations that member's descriptors need), which
 * that member alone may READ.  An origin looks a target address up in the
 * regions it knows of that target; one it does not know it finds by
 * READing the target's table for it afresh (one READ), and attaches the
 * segments from the tickets there.  The target's CPU takes no part in the
 * lookup either.  The table changes with interrupts held, so that a READ
 * (served in the kernel's receive path) sees it whole.
 *
 * Shared windows (MPI_Win_allocate_shared): every rank runs alone on its
 * node, so only a communicator of one process shares memory (one from
 * MPI_Comm_split_type with MPI_COMM_TYPE_SHARED); its window is an
 * allocated window that MPI_Win_shared_query answers for.  On more
 * processes the call fails with MPI_ERR_RMA_SHARED.
 *
 * An accumulate of elements wider than a word, or across one, runs under
 * a mutex in the target's lock word (atomic_locked).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/thread.h"
#include "kernel/x86.h"
#include "lib/mpi/mpiimpl.h"
#include "net/rmem/rmem.h"

#define EXCL (1ull << 40)		/* the exclusive hold in a lock word; shared holds count below */
#define BOUNCE (128 * 1024)		/* a window's READ landing area (made at its first READ) */
#define READS_MAX 64			/* READs in flight at once, per call */
#define WAIT_NS 10000000000ull
#define T_POST 1			/* post/start/complete/wait on the window's communicator */
#define T_DONE 2

struct target {
	int rd, ard, lrd;		/* data, words, lock descriptors (-1: none yet) */
	int node;			/* the member's node, and the tickets its descriptors are made from */
	int32_t seg, aseg, lseg;	/* (-1: none; a dynamic window's regions are attached at once) */
	uint32_t gen, agen, lgen;
	uint64_t size;			/* its window's bytes */
	int disp_unit;
	uint32_t skew;			/* its base's offset in its words segment */
	int held;			/* MPI_LOCK_SHARED or MPI_LOCK_EXCLUSIVE while this member holds it */
	int wrote;			/* WRITEs sent to it since the last flush (the others wait for their answer) */
	uint64_t lockseen;		/* its lock word as last seen (acc_mutex's first guess) */
};

#define REGIONS 1024			/* a dynamic window's attached regions, per member */

struct region_entry {			/* a table's entry: one attached region, as one peer addresses it */
	uint64_t base, size;
	int32_t seg, aseg;
	uint32_t gen, agen;
};

struct region_table {			/* a member's regions, READ by one peer */
	uint64_t n;
	struct region_entry e[REGIONS];
};

struct region {				/* an attached region: this member's own, or one a peer told of */
	uint64_t base, size;
	int seg, aseg;			/* its segments (own) or the target's numbers (a peer's) */
	uint32_t gen, agen;
	struct target t;		/* its descriptors (a peer's), size and skew */
};

struct dyn {				/* a dynamic window's regions */
	struct region *mine;		/* REGIONS of them */
	int nmine;
	struct region_table **tables;	/* by rank: the table that rank reads (NULL: this member) */
	int *tseg;			/* by rank: its table's segment (-1: none) */
	int *trd;			/* by rank: a descriptor for its table of this member's (-1: none) */
	struct region **known;		/* by rank: the regions it told of, as last read (NULL: none yet) */
	int *nknown;
	int nranks;
	struct dyn *next;		/* in dyns */
};

struct mpi_win {
	MPI_Win handle;
	MPI_Comm comm;			/* a dup of the creator's: PSCW's messages, fence's barrier */
	struct mpi_comm *c;
	void *base;
	size_t size;
	int disp_unit, flavor;
	void *alloc;			/* Win_allocate's memory */
	int seg, aseg, lseg, bseg;	/* this member's segments (-1: none) */
	uint64_t *lockword;
	uint8_t *bounce;
	struct target *t;		/* by rank in comm */
	MPI_Group access, exposure;	/* start's and post's groups */
	char name[MPI_MAX_OBJECT_NAME];
	struct mpi_attr *attrs;		/* of keyvals of the program's (attr.c) */
	struct dyn *dyn;		/* MPI_WIN_FLAVOR_DYNAMIC only */
	char hint[6][32];		/* the info hints (HINTS), as last set */
};

/*
 * The info hints a window keeps (MPI-3.1 11.2.1), with their defaults; a
 * key not among them is ignored (MPI_Win_get_info does not return it).
 * None changes what the window does: each is only a promise the program
 * makes, and the window keeps every guarantee without it.
 */
static const char *const HINTS[6][2] = {
	{ "no_locks", "false" },
	{ "accumulate_ordering", "rar,raw,war,waw" },
	{ "accumulate_ops", "same_op_no_op" },
	{ "same_size", "false" },
	{ "same_disp_unit", "false" },
	{ "alloc_shared_noncontig", "false" },
};

static void hints_set(struct mpi_win *w, MPI_Info info, int defaults)
{
	char v[MPI_MAX_INFO_VAL + 1];
	int flag;

	for (int k = 0; k < 6; k++) {
		if (defaults)
			snprintf(w->hint[k], sizeof w->hint[k], "%s", HINTS[k][1]);
		if (info != MPI_INFO_NULL && MPI_Info_get(info, HINTS[k][0], MPI_MAX_INFO_VAL, v, &flag) == MPI_SUCCESS &&
		    flag && strlen(v) < sizeof w->hint[k])
			strcpy(w->hint[k], v);
	}
}

struct ticket {				/* what a member tells each other member of its window */
	int32_t seg, aseg, lseg, disp_unit;
	uint32_t gen, agen, lgen, skew;
	uint64_t size;
	int32_t tseg;			/* dynamic: the table of regions for the receiver */
	uint32_t tgen;
};

static unsigned win_seq;		/* names this node's segments: mpiw.<seq>.<kind> */

static struct mpi_win *win_get(MPI_Win h)
{
	return mpii_obj_get(NOW_MPI_KWIN, h);
}

/* An error of window w's call fn, raised on its communicator's handler (the window's). */
static int werr(struct mpi_win *w, int cls, const char *fn, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return mpii_err(w ? w->c : NULL, cls, fn, "%s", msg);
}

static int bad_win(MPI_Win h, const char *fn)
{
	return mpii_err_win(h, MPI_ERR_WIN, fn, "Invalid window %#x", h);
}

#define WIN_OR_FAIL(win, fn)                          \
	struct mpi_win *w = win_get(win);             \
	if (!w)                                       \
		return bad_win(win, fn)

static int export(void *base, size_t size, int rights, const char *kind, struct mpi_comm *c)
{
	char name[RMEM_NAME_MAX];

	snprintf(name, sizeof name, "mpiw.%u.%s", win_seq, kind);
	int s = seg_export(name, base, size, 0);
	for (int i = 0; s >= 0 && i < c->size; i++) {
		int node = c->group->world[i];
		if (i != c->rank && seg_grant(s, node, rights) < 0) {
			seg_unexport(s);
			return -ENOSPC;
		}
	}
	return s;
}

static void unexport(int *s)
{
	if (*s >= 0)
		seg_unexport(*s);
	*s = -1;
}

static void release_target(struct target *t)
{
	if (t->rd >= 0)
		rmem_release(t->rd);
	if (t->ard >= 0)
		rmem_release(t->ard);
	t->rd = t->ard = -1;
}

static struct dyn *dyns;		/* every dynamic window's regions (their descriptors can be let go) */

/*
 * The node's descriptors ran out (a node holds RMEM_MAX_DESC, and an
 * asynchronous error sink each, CALL_MAX_SINKS): let go of those of the
 * dynamic windows' regions other than keep, each made again at its next
 * use; WRITEs still unanswered are waited for first.  How many went.
 */
static int dyn_evict(const struct target *keep)
{
	int n = 0;

	for (struct dyn *d = dyns; d; d = d->next)
		for (int i = 0; d->known && i < d->nranks; i++)
			for (int k = 0; d->known[i] && k < d->nknown[i]; k++) {
				struct target *t = &d->known[i][k].t;
				if (t == keep || (t->rd < 0 && t->ard < 0))
					continue;
				if (t->rd >= 0 && t->wrote)
					rmem_sync(t->rd, WAIT_NS);
				t->wrote = 0;
				release_target(t);
				n++;
			}
	return n;
}

static int attach_or_evict(const struct target *t, int seg, uint32_t gen, uint64_t size, int rights)
{
	int rd = rmem_attach(t->node, seg, gen, size, rights);

	if (rd == -ENOSPC && dyn_evict(t) > 0)
		rd = rmem_attach(t->node, seg, gen, size, rights);
	return rd;
}

/* A member's descriptors, made at first use from the tickets it sent; -errno if none can be made. */
static int d_rd(struct target *t)
{
	if (t->rd < 0 && t->seg >= 0)
		t->rd = attach_or_evict(t, t->seg, t->gen, t->size, RMEM_RW);
	return t->rd;
}

static int d_ard(struct target *t)
{
	if (t->ard < 0 && t->aseg >= 0)
		t->ard = attach_or_evict(t, t->aseg, t->agen, (t->skew + t->size + 7) & ~7ull, RMEM_R | RMEM_A);
	return t->ard;
}

static int d_lrd(struct target *t)
{
	if (t->lrd < 0 && t->lseg >= 0)
		t->lrd = rmem_attach(t->node, t->lseg, t->lgen, 8, RMEM_A);
	return t->lrd;
}

/* Where this member's READs land, made at the first: a window that never reads has none. */
static int bounce_ready(struct mpi_win *w)
{
	if (w->bseg >= 0)
		return 0;
	if (!w->bounce && !(w->bounce = malloc(BOUNCE)))
		return -ENOMEM;
	win_seq++;
	w->bseg = export(w->bounce, BOUNCE, 0, "b", w->c);
	return w->bseg < 0 ? w->bseg : 0;
}

static void dyn_destroy(struct mpi_win *w)
{
	struct dyn *d = w->dyn;

	if (!d)
		return;
	for (struct dyn **p = &dyns; *p; p = &(*p)->next)
		if (*p == d) {
			*p = d->next;
			break;
		}
	for (int k = 0; k < d->nmine; k++) {
		unexport(&d->mine[k].seg);
		unexport(&d->mine[k].aseg);
	}
	for (int i = 0; w->c && i < w->c->size; i++) {
		if (d->tseg)
			unexport(&d->tseg[i]);
		if (d->trd && d->trd[i] >= 0)
			rmem_release(d->trd[i]);
		if (d->tables)
			free(d->tables[i]);
		for (int k = 0; d->known && k < d->nknown[i]; k++)
			release_target(&d->known[i][k].t);
		if (d->known)
			free(d->known[i]);
	}
	free(d->mine);
	free(d->tables);
	free(d->tseg);
	free(d->trd);
	free(d->known);
	free(d->nknown);
	free(d);
	w->dyn = NULL;
}

/* A dynamic window's tables, one for each other member, exported to it alone (READ).  0 or -errno. */
static int dyn_make(struct mpi_win *w)
{
	int n = w->c->size;
	struct dyn *d = w->dyn = calloc(1, sizeof *d);

	if (!d || !(d->mine = malloc(REGIONS * sizeof *d->mine)) || !(d->tables = calloc((size_t)n, sizeof *d->tables)) || !(d->tseg = malloc((size_t)n * sizeof(int))) ||
	    !(d->trd = malloc((size_t)n * sizeof(int))) || !(d->known = calloc((size_t)n, sizeof *d->known)) ||
	    !(d->nknown = calloc((size_t)n, sizeof(int))))
		return -ENOMEM;
	for (int i = 0; i < n; i++)
		d->tseg[i] = d->trd[i] = -1;
	d->nranks = n;
	d->next = dyns;
	dyns = d;
	for (int i = 0; i < n; i++) {
		char name[RMEM_NAME_MAX];
		if (i == w->c->rank)
			continue;
		if (!(d->tables[i] = calloc(1, sizeof *d->tables[i])))
			return -ENOMEM;
		snprintf(name, sizeof name, "mpiw.%u.t%d", win_seq, i);
		if ((d->tseg[i] = seg_export_for(name, d->tables[i], sizeof *d->tables[i], w->c->group->world[i],
						 RMEM_R)) < 0)
			return d->tseg[i];
	}
	return 0;
}

static void win_destroy(struct mpi_win *w)
{
	dyn_destroy(w);
	if (w->t)
		for (int i = 0; i < w->c->size; i++) {
			if (w->t[i].rd >= 0)
				rmem_release(w->t[i].rd);
			if (w->t[i].ard >= 0)
				rmem_release(w->t[i].ard);
			if (w->t[i].lrd >= 0)
				rmem_release(w->t[i].lrd);
		}
	unexport(&w->seg);
	unexport(&w->aseg);
	unexport(&w->lseg);
	unexport(&w->bseg);
	free(w->t);
	free(w->lockword);
	free(w->bounce);
	free(w->alloc);
	if (w->access != MPI_GROUP_NULL)
		MPI_Group_free(&w->access);
	if (w->exposure != MPI_GROUP_NULL)
		MPI_Group_free(&w->exposure);
	if (w->comm != MPI_COMM_NULL)
		MPI_Comm_free(&w->comm);
	free(w);
}

static int win_make(void *base, MPI_Aint size, int disp_unit, MPI_Comm comm, int flavor, void *alloc,
		    MPI_Win *win, const char *fn)
{
	struct mpi_comm *pc = mpii_comm_get(comm);

	if (!pc || mpii_comm_inter(pc))
		return mpii_err(pc, MPI_ERR_COMM, fn, "Invalid communicator %#x%s", comm,
				pc ? " (an intercommunicator)" : "");
	if (!win)
		return mpii_err(pc, MPI_ERR_ARG, fn, "Null pointer in parameter win");
	if (size < 0)
		return mpii_err(pc, MPI_ERR_SIZE, fn, "Invalid size argument in RMA call (value is %ld)", (long)size);
	if (disp_unit <= 0)
		return mpii_err(pc, MPI_ERR_DISP, fn, "Invalid displacement unit %d", disp_unit);
	if (size > 0 && !base)
		return mpii_err(pc, MPI_ERR_ARG, fn, "Null base with a size of %ld", (long)size);
	if ((uint64_t)size >= (1ull << 31))
		return mpii_err(pc, MPI_ERR_SIZE, fn, "a window of %ld bytes: a node's windows are below 2 GiB",
				(long)size);

	struct mpi_win *w = calloc(1, sizeof *w);
	int e = MPI_SUCCESS;
	if (!w)
		return mpii_err(pc, MPI_ERR_NO_MEM, fn, "no memory for a window");
	w->seg = w->aseg = w->lseg = w->bseg = -1;
	w->access = w->exposure = MPI_GROUP_NULL;
	w->comm = MPI_COMM_NULL;
	w->base = base;
	w->size = (size_t)size;
	w->disp_unit = disp_unit;
	w->flavor = flavor;
	w->alloc = alloc;
	if ((e = MPI_Comm_dup(comm, &w->comm)) != MPI_SUCCESS) {
		win_destroy(w);
		return e;
	}
	w->c = mpii_comm_get(w->comm);
	MPI_Comm_set_errhandler(w->comm, MPI_ERRORS_ARE_FATAL);
	int n = w->c->size, me = w->c->rank;
	w->t = calloc((size_t)n, sizeof *w->t);
	w->lockword = aligned_alloc(8, 8);
	struct ticket *out = calloc((size_t)n, sizeof *out), *in = calloc((size_t)n, sizeof *in);
	int ok = w->t && w->lockword && out && in;
	for (int i = 0; w->t && i < n; i++) {
		struct target *t = &w->t[i];
		t->rd = t->ard = t->lrd = t->seg = t->aseg = t->lseg = -1;	/* none attached yet */
	}
	if (ok) {
		*w->lockword = 0;
		win_seq++;
		uintptr_t b = (uintptr_t)base, wb = b & ~(uintptr_t)7, we = (b + (uintptr_t)size + 7) & ~(uintptr_t)7;
		if (size > 0) {
			w->seg = export(base, (size_t)size, RMEM_RW, "d", w->c);
			/* READ too: a batch of atomics reads its words first (no byte the atomics do not show) */
			w->aseg = export((void *)wb, we - wb, RMEM_R | RMEM_A, "a", w->c);
		}
		w->lseg = export(w->lockword, 8, RMEM_A, "l", w->c);
		ok = (size == 0 || (w->seg >= 0 && w->aseg >= 0)) && w->lseg >= 0;
		if (ok && flavor == MPI_WIN_FLAVOR_DYNAMIC && dyn_make(w) < 0)
			ok = 0;
		for (int i = 0; ok && i < n; i++) {
			int node = w->c->group->world[i];
			struct ticket *t = &out[i];
			t->seg = w->seg;
			t->aseg = w->aseg;
			t->lseg = w->lseg;
			t->disp_unit = disp_unit;
			t->size = (uint64_t)size;
			t->skew = (uint32_t)(b - wb);
			t->tseg = w->dyn ? w->dyn->tseg[i] : -1;
			if (i != me && t->tseg >= 0 && seg_ticket(t->tseg, node, &t->tgen) < 0)
				ok = 0;
			if (i != me && ((w->seg >= 0 && seg_ticket(w->seg, node, &t->gen) < 0) ||
					(w->aseg >= 0 && seg_ticket(w->aseg, node, &t->agen) < 0) ||
					seg_ticket(w->lseg, node, &t->lgen) < 0))
				ok = 0;
		}
	}
	/* Everyone learns whether everyone could make its part, then the tickets. */
	int all_ok = 0;
	e = MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, w->comm);
	if (e == MPI_SUCCESS && all_ok)
		e = MPI_Alltoall(out, sizeof *out, MPI_BYTE, in, sizeof *in, MPI_BYTE, w->comm);
	for (int i = 0; e == MPI_SUCCESS && all_ok && i < n; i++) {
		struct target *t = &w->t[i];
		int node = w->c->group->world[i];
		t->size = in[i].size;
		t->disp_unit = in[i].disp_unit;
		t->skew = in[i].skew;
		if (i == me)
			continue;
		/* The descriptors are made at their first use (d_rd, d_ard, d_lrd): a window never used costs none. */
		t->node = node;
		t->seg = in[i].seg;
		t->gen = in[i].gen;
		t->aseg = in[i].aseg;
		t->agen = in[i].agen;
		t->lseg = in[i].lseg;
		t->lgen = in[i].lgen;
		if (w->dyn && (in[i].tseg < 0 ||
			       (w->dyn->trd[i] = rmem_attach(node, in[i].tseg, in[i].tgen, sizeof(struct region_table),
							     RMEM_R)) < 0))
			all_ok = 0;
	}
	free(out);
	free(in);
	if (e != MPI_SUCCESS || !all_ok) {
		win_destroy(w);
		return e != MPI_SUCCESS ? e : mpii_err(pc, MPI_ERR_NO_MEM, fn, "a member could not export or "
						       "attach its window's segments (no memory or no segment left)");
	}
	int h = mpii_obj_new(NOW_MPI_KWIN, w);
	if (h < 0) {
		win_destroy(w);
		return mpii_err(pc, MPI_ERR_NO_MEM, fn, "no handle for a window");
	}
	w->handle = h;
	w->c->win = h;			/* its errors name the window (errors.c) */
	snprintf(w->name, sizeof w->name, "window %#x", h);
	*win = h;
	/* Every member's segments are ready before any member uses them. */
	return MPI_Barrier(w->comm);
}

/* A window just made: its hints from the creator's info. */
static int with_hints(int e, MPI_Win *win, MPI_Info info)
{
	struct mpi_win *w = e == MPI_SUCCESS ? win_get(*win) : NULL;

	if (w)
		hints_set(w, info, 1);
	return e;
}

int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
	return with_hints(win_make(base, size, disp_unit, comm, MPI_WIN_FLAVOR_CREATE, NULL, win, "MPI_Win_create"),
			  win, info);
}

int MPI_Win_set_info(MPI_Win win, MPI_Info info)
{
	WIN_OR_FAIL(win, "MPI_Win_set_info");
	hints_set(w, info, 0);
	return MPI_SUCCESS;
}

int MPI_Win_get_info(MPI_Win win, MPI_Info *info_used)
{
	static const char fn[] = "MPI_Win_get_info";
	WIN_OR_FAIL(win, fn);

	if (!info_used)
		return werr(w, MPI_ERR_ARG, fn, "Null pointer in parameter info_used");
	int e = MPI_Info_create(info_used);
	for (int k = 0; k < 6 && e == MPI_SUCCESS; k++)
		if (k != 5 || w->flavor == MPI_WIN_FLAVOR_SHARED)
			e = MPI_Info_set(*info_used, HINTS[k][0], w->hint[k]);
	return e;
}

static int win_alloc(MPI_Aint size, int disp_unit, MPI_Comm comm, void *baseptr, MPI_Win *win, int flavor,
		     const char *fn)
{
	void *p = NULL;

	if (!baseptr)
		return mpii_err(mpii_comm_get(comm), MPI_ERR_ARG, fn, "Null pointer in parameter baseptr");
	if (size > 0 && size < (1l << 31) && !(p = aligned_alloc(16, ((size_t)size + 15) & ~(size_t)15)))
		return mpii_err(mpii_comm_get(comm), MPI_ERR_NO_MEM, fn, "no memory for %ld bytes", (long)size);
	int e = win_make(p, size, disp_unit, comm, flavor, p, win, fn);
	if (e != MPI_SUCCESS) {
		free(p);
		return e;
	}
	*(void **)baseptr = p;
	return MPI_SUCCESS;
}

int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
	return with_hints(win_alloc(size, disp_unit, comm, baseptr, win, MPI_WIN_FLAVOR_ALLOCATE, "MPI_Win_allocate"),
			  win, info);
}

int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
			    MPI_Win *win)
{
	static const char fn[] = "MPI_Win_allocate_shared";
	struct mpi_comm *c = mpii_comm_get(comm);

	if (c && !mpii_comm_inter(c) && c->size > 1)
		return mpii_err(c, MPI_ERR_RMA_SHARED, fn, "the communicator's %d processes share no memory: every "
				"rank runs alone on its node (MPI_Comm_split_type with MPI_COMM_TYPE_SHARED gives "
				"each a communicator of its own)", c->size);
	return with_hints(win_alloc(size, disp_unit, comm, baseptr, win, MPI_WIN_FLAVOR_SHARED, fn), win, info);
}

int MPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr)
{
	static const char fn[] = "MPI_Win_shared_query";
	WIN_OR_FAIL(win, fn);

	if (w->flavor != MPI_WIN_FLAVOR_SHARED)
		return werr(w, MPI_ERR_RMA_FLAVOR, fn, "window %#x was not made by MPI_Win_allocate_shared", win);
	if (rank != MPI_PROC_NULL && (rank < 0 || rank >= w->c->size))
		return werr(w, MPI_ERR_RANK, fn, "Invalid rank %d", rank);
	if (!size || !disp_unit || !baseptr)
		return werr(w, MPI_ERR_ARG, fn, "Null pointer in parameter size, disp_unit or baseptr");
	/* One member: MPI_PROC_NULL names the lowest rank with memory, which is it or none. */
	*size = (MPI_Aint)w->size;
	*disp_unit = w->disp_unit;
	*(void **)baseptr = w->size || rank != MPI_PROC_NULL ? w->base : NULL;
	return MPI_SUCCESS;
}

int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
	return with_hints(win_make(NULL, 0, 1, comm, MPI_WIN_FLAVOR_DYNAMIC, NULL, win, "MPI_Win_create_dynamic"),
			  win, info);
}

/*
 * Region k (if it is one still) and the count into every peer's table,
 * with interrupts held: a READ (served in the receive path) sees the
 * table before or after, never halfway.
 */
static void dyn_publish(struct mpi_win *w, int k)
{
	struct dyn *d = w->dyn;
	irqflags_t f = irq_save();

	for (int i = 0; i < w->c->size; i++) {
		struct region_table *t = d->tables[i];
		int node = w->c->group->world[i];
		if (!t)
			continue;
		if (k < d->nmine) {
			struct region *r = &d->mine[k];
			struct region_entry *e = &t->e[k];
			e->base = r->base;
			e->size = r->size;
			e->seg = r->seg;
			e->aseg = r->aseg;
			seg_ticket(r->seg, node, &e->gen);
			seg_ticket(r->aseg, node, &e->agen);
		}
		t->n = (uint64_t)d->nmine;
	}
	irq_restore(f);
}

int MPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
	static const char fn[] = "MPI_Win_attach";
	WIN_OR_FAIL(win, fn);
	struct dyn *d = w->dyn;

	if (!d)
		return werr(w, MPI_ERR_RMA_FLAVOR, fn, "window %#x was not made by MPI_Win_create_dynamic", win);
	if (size < 0)
		return werr(w, MPI_ERR_SIZE, fn, "Invalid size argument in RMA call (value is %ld)", (long)size);
	if (size == 0)
		return MPI_SUCCESS;	/* nothing any access could reach */
	if (!base)
		return werr(w, MPI_ERR_ARG, fn, "Null base with a size of %ld", (long)size);
	if ((uint64_t)size >= (1ull << 31))
		return werr(w, MPI_ERR_SIZE, fn, "a region of %ld bytes: regions are below 2 GiB", (long)size);
	uint64_t b = (uintptr_t)base, e = b + (uint64_t)size;
	for (int k = 0; k < d->nmine; k++)
		if (b < d->mine[k].base + d->mine[k].size && d->mine[k].base < e)
			return werr(w, MPI_ERR_RMA_ATTACH, fn, "%#lx to %#lx overlaps the region attached at %#lx",
				    (unsigned long)b, (unsigned long)e, (unsigned long)d->mine[k].base);
	if (d->nmine == REGIONS)
		return werr(w, MPI_ERR_RMA_ATTACH, fn, "%d regions are attached already: the most a window holds",
			    REGIONS);
	struct region *r = &d->mine[d->nmine];
	uint64_t wb = b & ~7ull, we = (e + 7) & ~7ull;
	memset(r, 0, sizeof *r);
	r->base = b;
	r->size = (uint64_t)size;
	r->t.rd = r->t.ard = r->t.lrd = r->t.seg = r->t.aseg = r->t.lseg = -1;
	r->t.size = r->size;
	r->t.skew = (uint32_t)(b - wb);
	win_seq++;
	r->seg = export(base, (size_t)size, RMEM_RW, "d", w->c);
	r->aseg = export((void *)(uintptr_t)wb, we - wb, RMEM_R | RMEM_A, "a", w->c);
	if (r->seg < 0 || r->aseg < 0) {
		unexport(&r->seg);
		unexport(&r->aseg);
		return werr(w, MPI_ERR_RMA_ATTACH, fn, "no segment left to export the region");
	}
	d->nmine++;
	dyn_publish(w, d->nmine - 1);
	return MPI_SUCCESS;
}

int MPI_Win_detach(MPI_Win win, const void *base)
{
	static const char fn[] = "MPI_Win_detach";
	WIN_OR_FAIL(win, fn);
	struct dyn *d = w->dyn;

	if (!d)
		return werr(w, MPI_ERR_RMA_FLAVOR, fn, "window %#x was not made by MPI_Win_create_dynamic", win);
	for (int k = 0; k < d->nmine; k++) {
		if (d->mine[k].base != (uintptr_t)base)
			continue;
		struct region gone = d->mine[k];
		d->mine[k] = d->mine[--d->nmine];
		dyn_publish(w, k);
		/* Out of the tables first: then no peer finds it, and its segments go. */
		unexport(&gone.seg);
		unexport(&gone.aseg);
		return MPI_SUCCESS;
	}
	return werr(w, MPI_ERR_RMA_ATTACH, fn, "no region of window %#x is attached at %p", win, base);
}

static int read_pieces(struct mpi_win *w, int rd, const struct mpii_run *pc, size_t n, uint8_t *dst, int rank,
		       const char *fn);

/* A peer's regions read afresh from its table for this member; descriptors kept for those still there. */
static int dyn_refresh(struct mpi_win *w, int rank, const char *fn)
{
	struct dyn *d = w->dyn;
	struct region_table *tab = malloc(sizeof *tab);
	struct region *fresh = malloc(REGIONS * sizeof *fresh);
	struct mpii_run head = { 0, sizeof tab->n }, all = { 0, 0 };
	int node = w->c->group->world[rank], n, e;

	if (!tab || !fresh || (!d->known[rank] && !(d->known[rank] = malloc(REGIONS * sizeof *fresh)))) {
		free(tab);
		free(fresh);
		return werr(w, MPI_ERR_NO_MEM, fn, "no memory to read rank %d's regions", rank);
	}
	/* How many, then those: the table is read whole in the second READ (its count again with it). */
	uint64_t n0 = 0;
	if ((e = read_pieces(w, d->trd[rank], &head, 1, (uint8_t *)tab, rank, fn)) == MPI_SUCCESS) {
		n0 = tab->n <= REGIONS ? tab->n : 0;
		all.len = sizeof tab->n + n0 * sizeof tab->e[0];
		e = read_pieces(w, d->trd[rank], &all, 1, (uint8_t *)tab, rank, fn);
	}
	if (e != MPI_SUCCESS) {
		free(tab);
		free(fresh);
		return e;
	}
	/* Each READ sees the table whole; entries past the first READ's count were not read. */
	n = (int)(tab->n < n0 ? tab->n : n0);
	for (int k = 0; k < n; k++) {
		struct region_entry *x = &tab->e[k];
		struct region *r = &fresh[k];
		memset(r, 0, sizeof *r);
		r->base = x->base;
		r->size = x->size;
		r->seg = x->seg;
		r->aseg = x->aseg;
		r->gen = x->gen;
		r->agen = x->agen;
		r->t.rd = r->t.ard = r->t.lrd = r->t.seg = r->t.aseg = r->t.lseg = -1;
		r->t.size = x->size;
		r->t.skew = (uint32_t)(x->base & 7);
		r->t.disp_unit = 1;
		/* Descriptors at first use (d_rd, d_ard), from these tickets; those of a region still there kept. */
		r->t.node = node;
		r->t.seg = x->seg;
		r->t.gen = x->gen;
		r->t.aseg = x->aseg;
		r->t.agen = x->agen;
		for (int j = 0; j < d->nknown[rank]; j++) {
			struct region *o = &d->known[rank][j];
			if (o->seg == r->seg && o->gen == r->gen && o->aseg == r->aseg && o->agen == r->agen &&
			    o->base == r->base && o->size == r->size) {
				r->t = o->t;
				o->t.rd = o->t.ard = -1;	/* moved */
				break;
			}
		}
	}
	/* Those gone: their WRITEs are waited for now (a fence on the node), then they go. */
	for (int j = 0; j < d->nknown[rank]; j++) {
		struct target *t = &d->known[rank][j].t;
		if (t->rd >= 0 && t->wrote)
			rmem_sync(t->rd, WAIT_NS);
		release_target(t);
	}
	memcpy(d->known[rank], fresh, (size_t)n * sizeof fresh[0]);
	d->nknown[rank] = n;
	free(tab);
	free(fresh);
	return MPI_SUCCESS;
}

/* The region of rank's (this member's own for self) that holds [lo, hi), or NULL. */
static struct region *dyn_find(struct mpi_win *w, int rank, uint64_t lo, uint64_t hi)
{
	struct dyn *d = w->dyn;
	struct region *rs = rank == w->c->rank ? d->mine : d->known[rank];
	int n = rank == w->c->rank ? d->nmine : d->nknown[rank];

	for (int k = 0; k < n; k++)
		if (lo >= rs[k].base && hi <= rs[k].base + rs[k].size)
			return &rs[k];
	return NULL;
}

/*
 * Wait until every operation this member issued to rank r reached it; the
 * first refusal, as an MPI code.  READs and atomics are done when they
 * return (their answers came); only WRITEs go unanswered, and one fence
 * to the node (rmem_sync: a round trip behind them on the same channel)
 * covers them all.  No WRITE since the last flush: no message.
 */
static int flush_target(struct mpi_win *w, struct target *t, int r, const char *fn);

static int flush_one(struct mpi_win *w, int r, const char *fn)
{
	if (w->dyn && r != w->c->rank) {
		int e = MPI_SUCCESS;
		for (int k = 0; k < w->dyn->nknown[r]; k++) {
			int x = flush_target(w, &w->dyn->known[r][k].t, r, fn);
			if (e == MPI_SUCCESS)
				e = x;
		}
		return e;
	}
	return flush_target(w, &w->t[r], r, fn);
}

static int flush_target(struct mpi_win *w, struct target *t, int r, const char *fn)
{
	int e = 0, x;

	if (t->rd >= 0) {
		e = t->wrote ? rmem_sync(t->rd, WAIT_NS) : rmem_take_error(t->rd);
		t->wrote = 0;
	}
	if (t->ard >= 0 && (x = rmem_take_error(t->ard)) < 0 && !e)
		e = x;
	if (!e)
		return MPI_SUCCESS;
	return werr(w, e == -ERANGE ? MPI_ERR_RMA_RANGE : MPI_ERR_OTHER, fn,
		    "rank %d refused or did not take an operation (%d)", r, e);
}

static int flush_all(struct mpi_win *w, const char *fn)
{
	int err = MPI_SUCCESS;

	for (int r = 0; r < w->c->size; r++) {
		int e = flush_one(w, r, fn);
		if (e != MPI_SUCCESS && err == MPI_SUCCESS)
			err = e;
	}
	return err;
}

int MPI_Win_free(MPI_Win *win)
{
	static const char fn[] = "MPI_Win_free";
	struct mpi_win *w = win ? win_get(*win) : NULL;

	if (!w)
		return bad_win(win ? *win : MPI_WIN_NULL, fn);
	int e = flush_all(w, fn);
	/* No member goes before every member's operations on it are done. */
	int b = MPI_Barrier(w->comm);
	/* The attributes' delete callbacks first, while the window is still one (MPI-3.1 §6.7.4). */
	int a = mpii_attr_free_all(&w->attrs, NOW_MPI_KWIN, w->handle);
	if (a != MPI_SUCCESS)
		return mpii_err_raise(w->c, a);
	mpii_obj_free(NOW_MPI_KWIN, w->handle);
	win_destroy(w);
	*win = MPI_WIN_NULL;
	return e != MPI_SUCCESS ? e : b;
}

/* --- where an operation goes ----------------------------------------------------------------- */

struct where {
	struct mpi_win *w;
	struct target *t;
	uint8_t *lbase;		/* self: where offset 0 is in this member's memory */
	int rank, self;
	size_t len;		/* bytes at the target, all runs */
	struct mpii_run one;	/* a contiguous target: its one run */
	struct mpii_run *runs;	/* the target's runs in the window, in the packed stream's order */
	size_t nruns;
	MPI_Datatype basic;	/* the target type's one predefined type (atomics) */
	size_t esize;
	struct part *parts;	/* a dynamic window's access over adjacent regions: one part each (else NULL) */
	size_t nparts;
};

struct part {			/* the runs of an access that lie in one region */
	struct target *t;
	uint8_t *lbase;
	size_t first, n;	/* its runs in the where's */
	size_t len;		/* their bytes */
};

static void where_done(struct where *o)
{
	if (o->runs != &o->one)
		free(o->runs);
	o->runs = &o->one;
	free(o->parts);
	o->parts = NULL;
	o->nparts = 0;
}

/* Part k of o as a where of its own: the same call, one region's runs. */
static struct where part_where(const struct where *o, size_t k)
{
	struct where s = *o;
	struct part *p = &o->parts[k];

	s.t = p->t;
	s.lbase = p->lbase;
	s.runs = &o->runs[p->first];
	s.nruns = p->n;
	s.len = p->len;
	s.parts = NULL;
	s.nparts = 0;
	return s;
}

/*
 * Check an operation's target side: rank, displacement, count and type;
 * every run of the target data must lie inside the target's window.  A
 * contiguous type is one run; any other is flattened to its runs
 * (mpii_type_runs), each a WRITE or READ of its own.  where_done after.
 */
/*
 * An access to a dynamic window that no one region holds: its runs cut
 * where one attached region ends and the next begins (MPI-3.1 11.2.4: a
 * target buffer may lie across regions attached side by side), each piece
 * then a WRITE or READ of its own region's, the pieces in one region a
 * part.  Every byte must lie in a region, read afresh once if some is not.
 */
static int dyn_split(struct mpi_win *w, int rank, int64_t base, struct where *o, const char *fn)
{
	for (int fresh = rank == w->c->rank;; fresh = 1) {
		size_t cap = o->nruns + 8, n = 0, np = 0;
		struct mpii_run *pc = malloc(cap * sizeof *pc);
		struct part *parts = malloc(cap * sizeof *parts);
		struct region *last = NULL;
		uint64_t miss = UINT64_MAX;
		if (!pc || !parts) {
			free(pc);
			free(parts);
			return werr(w, MPI_ERR_NO_MEM, fn, "no memory for an access across regions");
		}
		for (size_t i = 0; i < o->nruns && miss == UINT64_MAX; i++) {
			uint64_t at = (uint64_t)(base + o->runs[i].off), end = at + o->runs[i].len;
			while (at < end) {
				struct region *g = dyn_find(w, rank, at, at + 1);
				if (!g) {
					miss = at;
					break;
				}
				uint64_t stop = g->base + g->size < end ? g->base + g->size : end;
				if (n == cap || np == cap) {
					cap *= 2;
					struct mpii_run *a = realloc(pc, cap * sizeof *pc);
					struct part *b = a ? realloc(parts, cap * sizeof *parts) : NULL;
					pc = a ? a : pc;
					parts = b ? b : parts;
					if (!a || !b) {
						free(pc);
						free(parts);
						return werr(w, MPI_ERR_NO_MEM, fn, "no memory for an access across regions");
					}
				}
				if (g != last) {
					parts[np++] = (struct part){ &g->t, (uint8_t *)(uintptr_t)g->base, n, 0, 0 };
					last = g;
				}
				pc[n++] = (struct mpii_run){ (MPI_Aint)(at - g->base), (size_t)(stop - at) };
				parts[np - 1].n++;
				parts[np - 1].len += stop - at;
				at = stop;
			}
		}
		if (miss == UINT64_MAX) {
			if (o->runs != &o->one)
				free(o->runs);
			o->runs = pc;
			o->nruns = n;
			o->parts = parts;
			o->nparts = np;
			return MPI_SUCCESS;
		}
		free(pc);
		free(parts);
		if (fresh)
			return werr(w, MPI_ERR_RMA_RANGE, fn, "address %#lx is in no region rank %d attached",
				    (unsigned long)miss, rank);
		int e = dyn_refresh(w, rank, fn);
		if (e != MPI_SUCCESS)
			return e;
	}
}

/* A dynamic window before a region is found. */
static struct target dyn_none = { .rd = -1, .ard = -1, .lrd = -1, .seg = -1, .aseg = -1, .lseg = -1, .disp_unit = 1 };

static int target_of(struct mpi_win *w, int rank, MPI_Aint disp, int count, MPI_Datatype dt, struct where *o,
		     const char *fn)
{
	o->runs = &o->one;
	o->nruns = 0;
	o->parts = NULL;
	o->nparts = 0;
	if (rank == MPI_PROC_NULL) {
		o->t = NULL;
		return MPI_SUCCESS;
	}
	if (rank < 0 || rank >= w->c->size)
		return werr(w, MPI_ERR_RANK, fn, "Invalid rank has value %d but must be nonnegative and less than %d",
			    rank, w->c->size);
	if (count < 0)
		return werr(w, MPI_ERR_COUNT, fn, "Negative count, value is %d", count);
	if (!mpii_type_valid(dt) || !mpii_type_committed(dt))
		return werr(w, MPI_ERR_TYPE, fn, "Invalid datatype");
	if (disp < 0)
		return werr(w, MPI_ERR_DISP, fn, "Invalid displacement %ld", (long)disp);
	struct target *t = w->dyn ? &dyn_none : &w->t[rank];
	size_t size = mpii_type_size(dt);
	int64_t base;
	if (__builtin_mul_overflow((int64_t)disp, (int64_t)t->disp_unit, &base))
		return werr(w, MPI_ERR_RMA_RANGE, fn, "displacement %ld is outside rank %d's window", (long)disp, rank);
	const void *start;
	if (count > 0 && size > 0) {
		if (mpii_type_contig((void *)(uintptr_t)4096, count, dt, &start)) {
			o->one = (struct mpii_run){ (MPI_Aint)((uintptr_t)start - 4096), (size_t)count * size };
			o->nruns = 1;
		} else if (mpii_type_runs(count, dt, &o->runs, &o->nruns) < 0) {
			o->runs = &o->one;
			return werr(w, MPI_ERR_NO_MEM, fn, "no memory for the target datatype's runs");
		}
	}
	o->lbase = w->base;
	if (w->dyn && o->nruns) {
		/* The target's address: the region that holds every run of it, known or read afresh. */
		uint64_t lo = UINT64_MAX, hi = 0;
		for (size_t i = 0; i < o->nruns; i++) {
			int64_t at = base + o->runs[i].off;
			if (at < 0) {
				where_done(o);
				return werr(w, MPI_ERR_RMA_RANGE, fn, "address %ld is in no region of rank %d's",
					    (long)at, rank);
			}
			lo = (uint64_t)at < lo ? (uint64_t)at : lo;
			hi = (uint64_t)at + o->runs[i].len > hi ? (uint64_t)at + o->runs[i].len : hi;
		}
		struct region *g = dyn_find(w, rank, lo, hi);
		int e;
		if (!g && rank != w->c->rank) {
			if ((e = dyn_refresh(w, rank, fn)) != MPI_SUCCESS) {
				where_done(o);
				return e;
			}
			g = dyn_find(w, rank, lo, hi);
		}
		if (!g) {
			/* Across regions attached side by side: a part in each. */
			if ((e = dyn_split(w, rank, base, o, fn)) != MPI_SUCCESS) {
				where_done(o);
				return e;
			}
			t = o->parts[0].t;
			goto found;
		}
		t = &g->t;
		base -= (int64_t)g->base;
		o->lbase = (uint8_t *)(uintptr_t)g->base;
	}
	for (size_t i = 0; i < o->nruns; i++) {
		struct mpii_run *r = &o->runs[i];
		int64_t at = base + r->off;
		if (at < 0 || (uint64_t)at + r->len > t->size) {
			where_done(o);
			return werr(w, MPI_ERR_RMA_RANGE, fn, "bytes %ld to %lu of rank %d's window of %lu", (long)at,
				    (unsigned long)(at + (int64_t)r->len), rank, (unsigned long)t->size);
		}
		r->off = at;
	}
found:
	o->w = w;
	o->t = t;
	o->rank = rank;
	o->self = rank == w->c->rank;
	o->len = (size_t)count * size;
	o->basic = mpii_type_basic(dt);
	o->esize = o->basic != MPI_DATATYPE_NULL ? mpii_type_size(o->basic) : 0;
	return MPI_SUCCESS;
}

static int rmem_class(int r)
{
	return r == -ERANGE ? MPI_ERR_RMA_RANGE : r == -EACCES ? MPI_ERR_RMA_SYNC : MPI_ERR_OTHER;
}

/* Bytes from src (packed) to the target's runs: a WRITE each (the rmem block transfer when long). */
static int put_bytes(struct where *o, const void *src, const char *fn)
{
	const uint8_t *p = src;

	if (o->parts) {
		int e = MPI_SUCCESS;
		for (size_t k = 0; k < o->nparts && e == MPI_SUCCESS; p += o->parts[k].len, k++) {
			struct where s = part_where(o, k);
			e = put_bytes(&s, p, fn);
		}
		return e;
	}

	for (size_t i = 0; i < o->nruns; p += o->runs[i].len, i++) {
		if (o->self) {
			memmove(o->lbase + o->runs[i].off, p, o->runs[i].len);
			continue;
		}
		o->t->wrote = 1;
		int r = rmem_write_block(d_rd(o->t), (uint32_t)o->runs[i].off, p, o->runs[i].len, 0);
		if (r < 0)
			return werr(o->w, rmem_class(r), fn, "a WRITE to rank %d failed (%d)", o->rank, r);
	}
	return MPI_SUCCESS;
}

/*
 * Read the pieces of [off, off + len) of segment descriptor rd, n of them
 * (o's runs, or one span), into dst packed: READs of at most RMEM_MAX_XFER
 * bytes, as many at once as the bounce segment holds, copied out each
 * time it is full.
 */
static int read_pieces(struct mpi_win *w, int rd, const struct mpii_run *pc, size_t n, uint8_t *dst, int rank,
		       const char *fn)
{
	size_t i = 0, in = 0;		/* the piece, and bytes of it already read */
	int r = bounce_ready(w);
	uint32_t xfer = rmem_max_xfer(rd);	/* a READ as long as the pair's frames carry */

	while (i < n && !r) {
		int h[READS_MAX], k = 0;
		uint32_t pos = 0;
		while (i < n && k < (int)(sizeof h / sizeof h[0])) {
			size_t left = pc[i].len - in;
			uint32_t c = left < xfer ? (uint32_t)left : xfer;
			if (pos + c > BOUNCE)
				break;
			if ((h[k] = rmem_read(rd, (uint32_t)(pc[i].off + in), c, w->bseg, pos, 0)) < 0) {
				r = h[k];
				break;
			}
			k++;
			pos += c;
			if ((in += c) == pc[i].len) {
				i++;
				in = 0;
			}
		}
		for (int j = 0; j < k; j++) {
			int x = rmem_read_wait(h[j], WAIT_NS);
			if (x < 0 && !r)
				r = x;
		}
		if (!r) {
			memcpy(dst, w->bounce, pos);
			dst += pos;
		}
	}
	return r < 0 ? werr(w, rmem_class(r), fn, "a READ from rank %d failed (%d)", rank, r) : MPI_SUCCESS;
}

/* The target's runs' bytes into dst, packed. */
static int get_bytes(struct where *o, void *dst, const char *fn)
{
	if (o->parts) {
		int e = MPI_SUCCESS;
		uint8_t *p = dst;
		for (size_t k = 0; k < o->nparts && e == MPI_SUCCESS; p += o->parts[k].len, k++) {
			struct where s = part_where(o, k);
			e = get_bytes(&s, p, fn);
		}
		return e;
	}
	if (!o->self)
		return read_pieces(o->w, d_rd(o->t), o->runs, o->nruns, dst, o->rank, fn);
	uint8_t *p = dst;
	for (size_t i = 0; i < o->nruns; p += o->runs[i].len, i++)
		memmove(p, o->lbase + o->runs[i].off, o->runs[i].len);
	return MPI_SUCCESS;
}

/*
 * Atomics.  Each element of the target (at most 8 bytes, inside one
 * aligned 8-byte word) is changed by a compare-and-swap of its word that
 * keeps the word's other bytes: the target's kernel's operation (paper
 * §2.3), or this CPU's on this member's own window (the same word).
 * The element op: f(elem) computes the new element in place.
 */
typedef int (*elem_fn)(void *elem, void *arg);

struct apply {
	MPI_Op op;
	const void *in;			/* one origin element (NULL for MPI_NO_OP) */
	MPI_Datatype basic;
};

static int apply_op(void *elem, void *arg)
{
	struct apply *a = arg;

	return mpii_op_apply(a->op, a->in, elem, 1, a->basic);
}

struct cas {
	const void *compare, *value;
	size_t n;
};

static int apply_cas(void *elem, void *arg)
{
	struct cas *c = arg;

	if (memcmp(elem, c->compare, c->n) == 0)
		memcpy(elem, c->value, c->n);
	return MPI_SUCCESS;
}

/* Where the element at window offset off sits: its word's offset in the words segment, and its byte in it. */
static int elem_word(struct where *o, uint64_t off, uint64_t *word, unsigned *in, const char *fn)
{
	uint64_t at = o->t->skew + off;

	*word = at & ~7ull;
	*in = (unsigned)(at - *word);
	if (*in + o->esize > 8 || o->esize == 0)
		return werr(o->w, MPI_ERR_UNSUPPORTED_OPERATION, fn, "an atomic on an element of %zu bytes at byte "
			    "%u of a word: elements of at most 8 bytes within one aligned word only, yet", o->esize, *in);
	return MPI_SUCCESS;
}

/* The new word: the element at byte in of cur changed by f; its old bytes to old (may be NULL). */
static int elem_apply(uint64_t cur, unsigned in, size_t esize, elem_fn f, void *arg, void *old, uint64_t *next)
{
	uint8_t elem[8];

	memcpy(elem, (uint8_t *)&cur + in, esize);
	if (old)
		memcpy(old, elem, esize);
	int e = f(elem, arg);
	*next = cur;
	memcpy((uint8_t *)next + in, elem, esize);
	return e;
}

/* One element, alone: its word read (a compare-and-swap that changes nothing), changed, swapped until no one raced. */
static int atomic_elem(struct where *o, uint64_t off, elem_fn f, void *arg, void *old, const char *fn)
{
	struct mpi_win *w = o->w;
	uint64_t word_off, cur = 0, seen, next;
	unsigned in;
	int e = elem_word(o, off, &word_off, &in, fn);

	if (e != MPI_SUCCESS)
		return e;
	uint64_t *local = o->self ? (uint64_t *)(((uintptr_t)o->lbase & ~(uintptr_t)7) + word_off) : NULL;
	if (local)
		cur = __atomic_load_n(local, __ATOMIC_SEQ_CST);
	else {
		int r = rmem_cas(d_ard(o->t), (uint32_t)word_off, 0, 0, &cur);
		if (r < 0)
			return werr(w, rmem_class(r), fn, "an atomic on rank %d failed (%d)", o->rank, r);
	}
	for (;;) {
		if ((e = elem_apply(cur, in, o->esize, f, arg, old, &next)) != MPI_SUCCESS)
			return werr(w, e, fn, "the operation does not apply to the window's type");
		if (next == cur)
			return MPI_SUCCESS;
		if (local) {
			seen = cur;
			if (__atomic_compare_exchange_n(local, &seen, next, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
				return MPI_SUCCESS;
		} else {
			int r = rmem_cas(d_ard(o->t), (uint32_t)word_off, cur, next, &seen);
			if (r < 0)
				return werr(w, rmem_class(r), fn, "an atomic on rank %d failed (%d)", o->rank, r);
			if (seen == cur)
				return MPI_SUCCESS;
		}
		cur = seen;
	}
}

/* An 8-byte integer type: MPI_SUM on it is the paper's fetch-and-add. */
static int int64_type(MPI_Datatype t)
{
	return t == MPI_LONG || t == MPI_UNSIGNED_LONG || t == MPI_LONG_LONG_INT || t == MPI_UNSIGNED_LONG_LONG ||
	       t == MPI_INT64_T || t == MPI_UINT64_T || t == MPI_AINT || t == MPI_OFFSET || t == MPI_COUNT;
}

#define BATCH 64			/* atomics in flight at once, per call */

struct group {				/* the elements of one word, in a batch */
	uint64_t word;			/* in the words segment */
	size_t first, n;		/* elements first.. of the operation */
	uint64_t cur, next;
	int h;				/* its compare-and-swap or fetch-and-add (-1: none needed) */
};

/* A group's elements applied to its word's value cur: the new word in *next, their old bytes to old. */
static int group_apply(struct where *o, const struct group *gr, MPI_Op op, const uint8_t *in, uint8_t *old,
		       const uint64_t *offs, size_t done, uint64_t cur, uint64_t *next, const char *fn)
{
	uint64_t v = cur, wd;
	unsigned at;

	for (size_t j = 0; j < gr->n; j++) {
		size_t x = gr->first + j;
		struct apply a = { op, in ? in + x * o->esize : NULL, o->basic };
		elem_word(o, offs[x - done], &wd, &at, fn);
		int r = elem_apply(v, at, o->esize, apply_op, &a, old ? old + x * o->esize : NULL, &v);
		if (r != MPI_SUCCESS)
			return werr(o->w, r, fn, "the operation does not apply to the window's type");
	}
	*next = v;
	return MPI_SUCCESS;
}

/*
 * Accumulate's element loop at a remote target, pipelined: a batch of
 * elements is read in one go (the span of their words, READs on the words
 * segment), each word's new value computed, and every word's
 * compare-and-swap sent before the first answer is awaited; a word that
 * someone changed between the read and the swap is done again alone
 * (atomic_elem).  An MPI_SUM on 8-byte integers is the target's
 * fetch-and-add: no read, no retry.  in: the packed origin elements (NULL
 * for MPI_NO_OP); old: the old elements, packed (may be NULL).
 */
static int atomic_batches(struct where *o, MPI_Op op, const uint8_t *in, uint8_t *old, const char *fn)
{
	struct mpi_win *w = o->w;
	size_t n = o->len / o->esize, ri = 0, rj = 0;	/* elements; the run and element in it next */
	int fadd = op == MPI_SUM && o->esize == 8 && int64_type(o->basic);
	struct group g[BATCH];
	uint64_t offs[BATCH * 8];	/* the batch's elements' window offsets (1-byte elements: 8 a word) */
	int e = MPI_SUCCESS;

	for (size_t done = 0; done < n && e == MPI_SUCCESS;) {
		/* The batch: whole words, ascending, at most BATCH of them. */
		int ng = 0;
		size_t k = 0;
		unsigned at;
		while (done + k < n && k < BATCH * 8) {
			uint64_t off = (uint64_t)o->runs[ri].off + rj * o->esize, word;
			if ((e = elem_word(o, off, &word, &at, fn)) != MPI_SUCCESS)
				break;
			if (!ng || word != g[ng - 1].word || fadd) {	/* a fetch-and-add is one element's */
				if (ng == BATCH || (ng && word < g[ng - 1].word))
					break;
				g[ng++] = (struct group){ word, done + k, 0, 0, 0, -1 };
			}
			g[ng - 1].n++;
			offs[k++] = off;
			if (++rj == o->runs[ri].len / o->esize) {
				ri++;
				rj = 0;
			}
		}
		if (e != MPI_SUCCESS)
			break;
		if (!fadd) {
			/* The batch's words, adjacent ones in one READ: group i's word at words[i]. */
			struct mpii_run pc[BATCH];
			uint64_t words[BATCH];
			size_t np = 0;
			for (int i = 0; i < ng; i++) {
				if (np && pc[np - 1].off + (MPI_Aint)pc[np - 1].len == (MPI_Aint)g[i].word)
					pc[np - 1].len += 8;
				else
					pc[np++] = (struct mpii_run){ (MPI_Aint)g[i].word, 8 };
			}
			if ((e = read_pieces(w, d_ard(o->t), pc, np, (uint8_t *)words, o->rank, fn)) != MPI_SUCCESS)
				break;
			for (int i = 0; i < ng; i++)
				g[i].cur = words[i];
		}
		/* Every word's operation out, then the answers. */
		for (int i = 0; i < ng && e == MPI_SUCCESS; i++) {
			struct group *gr = &g[i];
			if (fadd) {
				uint64_t add;
				memcpy(&add, in + gr->first * 8, 8);
				gr->h = rmem_fadd_start(d_ard(o->t), (uint32_t)gr->word, add, 0);
			} else {
				uint64_t v = gr->cur;
				e = group_apply(o, gr, op, in, old, offs, done, gr->cur, &v, fn);
				gr->next = v;
				if (e == MPI_SUCCESS && v != gr->cur)
					gr->h = rmem_cas_start(d_ard(o->t), (uint32_t)gr->word, gr->cur, v, 0);
			}
			if (e == MPI_SUCCESS && gr->h < -1)
				e = werr(w, rmem_class(gr->h), fn, "an atomic on rank %d failed (%d)", o->rank, gr->h);
		}
		for (int i = 0; i < ng; i++) {
			struct group *gr = &g[i];
			uint64_t seen;
			if (gr->h < 0)
				continue;
			int r = rmem_atomic_wait(gr->h, &seen, WAIT_NS);
			if (r < 0) {
				if (e == MPI_SUCCESS)
					e = werr(w, rmem_class(r), fn, "an atomic on rank %d failed (%d)", o->rank, r);
				continue;
			}
			if (fadd) {
				if (old)
					memcpy(old + gr->first * 8, &seen, 8);
			} else if (seen != gr->cur && e == MPI_SUCCESS) {
				/*
				 * Raced: the word's elements again, all at once, on what
				 * the target holds, until no one races: a reader never
				 * sees some of one call's elements in a word changed and
				 * others not (a pointer of MPI_BYTEs stays whole).
				 */
				for (uint64_t cur = seen;;) {
					uint64_t next;
					if ((e = group_apply(o, gr, op, in, old, offs, done, cur, &next, fn)) != MPI_SUCCESS ||
					    next == cur)
						break;
					int r = rmem_cas(d_ard(o->t), (uint32_t)gr->word, cur, next, &seen);
					if (r < 0) {
						e = werr(w, rmem_class(r), fn, "an atomic on rank %d failed (%d)", o->rank, r);
						break;
					}
					if (seen == cur)
						break;
					cur = seen;
				}
			}
		}
		done += k;
	}
	return e;
}

/* Origin data as one packed run: *run (a copy in *tmp when the type is not contiguous). */
static int origin_run(const void *buf, int count, MPI_Datatype dt, const void **run, void **tmp, size_t *len,
		      struct mpi_win *w, const char *fn)
{
	*tmp = NULL;
	if (count < 0)
		return werr(w, MPI_ERR_COUNT, fn, "Negative count, value is %d", count);
	if (!mpii_type_valid(dt) || !mpii_type_committed(dt))
		return werr(w, MPI_ERR_TYPE, fn, "Invalid datatype");
	*len = (size_t)count * mpii_type_size(dt);
	/* MPI_BOTTOM (NULL) with a type of absolute addresses is a buffer; with one from 0 it is none. */
	if (*len && !buf && mpii_type_true_lb(dt) == 0)
		return werr(w, MPI_ERR_BUFFER, fn, "Null buffer pointer");
	if (!*len || mpii_type_contig(buf, count, dt, run))
		return MPI_SUCCESS;
	if (!(*tmp = malloc(*len)))
		return werr(w, MPI_ERR_NO_MEM, fn, "no memory for %zu bytes", *len);
	mpii_pack(buf, count, dt, *tmp);
	*run = *tmp;
	return MPI_SUCCESS;
}

/* A lock's, unlock's or flush's rank: MPI_PROC_NULL has nothing to do, one outside the window fails. */
#define RANK_OR_DONE(w, rank, fn)                                                        \
	do {                                                                             \
		if ((rank) == MPI_PROC_NULL)                                             \
			return MPI_SUCCESS;                                              \
		if ((rank) < 0 || (rank) >= (w)->c->size)                                \
			return werr(w, MPI_ERR_RANK, fn, "Invalid rank %d", rank);       \
	} while (0)

/* Put's and Get's checks: the target, the origin as one packed run, the two the same size. */
static int transfer(struct mpi_win *w, const void *origin, int ocount, MPI_Datatype otype, int rank, MPI_Aint disp,
		    int tcount, MPI_Datatype ttype, struct where *o, const void **run, void **tmp, const char *fn)
{
	size_t len;
	int e = target_of(w, rank, disp, tcount, ttype, o, fn);

	*tmp = NULL;
	if (e != MPI_SUCCESS || !o->t)
		return e;
	if ((e = origin_run(origin, ocount, otype, run, tmp, &len, w, fn)) == MPI_SUCCESS && len != o->len)
		e = werr(w, MPI_ERR_TYPE, fn, "origin %zu bytes, target %zu bytes", len, o->len);
	if (e != MPI_SUCCESS) {
		free(*tmp);
		where_done(o);
	}
	return e;
}

int MPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
	    MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
	static const char fn[] = "MPI_Put";
	WIN_OR_FAIL(win, fn);
	/*
	 * The common case in one step: the same plain type on both sides, to
	 * another member, inside its window, one frame: one WRITE.
	 */
	size_t es = mpii_plain_size(origin_datatype);
	if (es && target_datatype == origin_datatype && origin_count == target_count && origin_count > 0 &&
	    (uint64_t)origin_count * es <= RMEM_MAX_XFER && origin_addr && target_disp >= 0 &&
	    (unsigned)target_rank < (unsigned)w->c->size && target_rank != w->c->rank) {
		struct target *t = &w->t[target_rank];
		uint64_t off = (uint64_t)target_disp * (uint64_t)t->disp_unit, len = (uint64_t)origin_count * es;
		if (target_disp < (1l << 31) && off + len <= t->size) {
			t->wrote = 1;
			int r = rmem_write(d_rd(t), (uint32_t)off, origin_addr, (uint32_t)len, 0);
			return r < 0 ? werr(w, rmem_class(r), fn, "a WRITE to rank %d failed (%d)", target_rank, r)
				     : MPI_SUCCESS;
		}
	}
	struct where o;
	const void *run;
	void *tmp;
	int e = transfer(w, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
			 target_datatype, &o, &run, &tmp, fn);

	if (e != MPI_SUCCESS || !o.t)
		return e;
	e = put_bytes(&o, run, fn);
	free(tmp);
	where_done(&o);
	return e;
}

int MPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
	    MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
	static const char fn[] = "MPI_Get";
	WIN_OR_FAIL(win, fn);
	struct where o;
	const void *run;
	void *tmp;
	int e = transfer(w, origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
			 target_datatype, &o, &run, &tmp, fn);

	if (e != MPI_SUCCESS || !o.t)
		return e;
	if (!tmp)
		e = get_bytes(&o, (void *)run, fn);
	else if ((e = get_bytes(&o, tmp, fn)) == MPI_SUCCESS)
		mpii_unpack(tmp, o.len, origin_addr, origin_count, origin_datatype);
	free(tmp);
	where_done(&o);
	return e;
}

#define ACC_MUTEX (1ull << 48)		/* in a lock word: an accumulate of wide elements under way */

static int lock_fadd(struct mpi_win *w, int r, uint64_t add, uint64_t *old);
static int lock_cas(struct mpi_win *w, int r, uint64_t expect, uint64_t desired, uint64_t *old);

/*
 * Take (take 1) or give back rank's accumulate mutex.  Taken by a
 * compare-and-swap from the lock word as this member last saw it: one
 * round trip where nobody else changed it since.
 */
static int acc_mutex(struct mpi_win *w, int rank, int take, const char *fn)
{
	uint64_t *seen = &w->t[rank].lockseen, cur;
	int x;

	if (!take) {
		if ((x = lock_fadd(w, rank, (uint64_t)-ACC_MUTEX, &cur)) == 0)
			*seen = cur - ACC_MUTEX;
	} else {
		for (unsigned tries = 0;; tries++) {
			uint64_t guess = *seen & ~ACC_MUTEX;
			if ((x = lock_cas(w, rank, guess, guess | ACC_MUTEX, &cur)) < 0)
				break;
			*seen = cur;
			if (cur == guess) {
				*seen = guess | ACC_MUTEX;
				break;
			}
			if (!(cur & ACC_MUTEX) && tries < 8)
				continue;	/* the word moved (a lock's holds): again from what it holds */
			mpii_poke();
			if (tries > 8)
				thread_sleep_ns(tries < 100 ? 10000 : 100000);
		}
	}
	return x < 0 ? werr(w, MPI_ERR_OTHER, fn, "rank %d's lock word could not be reached (%d)", rank, x)
		     : MPI_SUCCESS;
}

/* Whether the operation's elements lie in more than one word of the target. */
static int multi_word(const struct where *o)
{
	uint64_t lo = UINT64_MAX, hi = 0;

	if (o->parts)
		return 1;		/* in two regions at least */

	for (size_t i = 0; i < o->nruns; i++) {
		uint64_t a = o->t->skew + (uint64_t)o->runs[i].off, b = a + o->runs[i].len - 1;
		lo = a >> 3 < lo ? a >> 3 : lo;
		hi = b >> 3 > hi ? b >> 3 : hi;
	}
	return o->nruns && hi > lo;
}

/* Whether each element is at most 8 bytes and inside one aligned word: the paper's atomics reach it. */
static int word_sized(const struct where *o)
{
	if (o->esize > 8 || (o->esize & (o->esize - 1)))
		return 0;
	for (size_t k = 0; k < o->nparts; k++) {
		struct where s = part_where(o, k);
		if (!word_sized(&s))
			return 0;
	}
	if (o->parts)
		return 1;
	for (size_t i = 0; i < o->nruns; i++)
		if ((o->t->skew + (uint64_t)o->runs[i].off) % o->esize)
			return 0;
	return 1;
}

/*
 * Whether an accumulate's elements may be worked on as arrays of their
 * type (apply_run): packed as they lie in memory (no pair type with
 * padding, like MPI_SHORT_INT), and the origin's elements aligned as the
 * type is.  Else element by element, each unpacked.
 */
static int native_run(const struct where *o, const void *in)
{
	size_t es = o->esize;

	return (MPI_Aint)es == mpii_type_extent(o->basic) && es <= 16 && !(es & (es - 1)) &&
	       (uintptr_t)in % es == 0;
}

/* n elements of in (NULL: MPI_NO_OP) applied to those at inout, all at once. */
static int apply_run(struct mpi_win *w, MPI_Op op, const void *in, void *inout, size_t n, MPI_Datatype basic,
		     const char *fn)
{
	if (op == MPI_NO_OP || !n)
		return MPI_SUCCESS;
	for (size_t done = 0; done < n;) {
		int k = n - done > INT32_MAX ? INT32_MAX : (int)(n - done);
		size_t es = (size_t)mpii_type_extent(basic);
		if (mpii_op_apply(op, (const uint8_t *)in + done * es, (uint8_t *)inout + done * es, k, basic) !=
		    MPI_SUCCESS)
			return werr(w, MPI_ERR_OP, fn, "the operation does not apply to the window's type");
		done += (size_t)k;
	}
	return MPI_SUCCESS;
}

/*
 * A word of a stretch whose swap raced (another member changed it
 * between the read and the swap): its elements again, on what the target
 * held, until no one races.  Its elements are nbytes at byte lo of the
 * word, in and old (may be NULL) theirs, packed.
 */
static int word_again(struct where *o, MPI_Op op, const uint8_t *in, uint8_t *old, uint64_t word, unsigned lo,
		      size_t nbytes, uint64_t seen, const char *fn)
{
	for (uint64_t cur = seen;;) {
		uint64_t next = cur;
		int e, r;
		if (old)
			memcpy(old, (uint8_t *)&cur + lo, nbytes);
		if ((e = apply_run(o->w, op, in, (uint8_t *)&next + lo, nbytes / o->esize, o->basic, fn)) !=
		    MPI_SUCCESS || next == cur)
			return e;
		if ((r = rmem_cas(d_ard(o->t), (uint32_t)word, cur, next, &seen)) < 0)
			return werr(o->w, rmem_class(r), fn, "an atomic on rank %d failed (%d)", o->rank, r);
		if (seen == cur)
			return MPI_SUCCESS;
		cur = seen;
	}
}

#define STRETCH_WORDS 4096		/* words an accumulate of many elements reads and swaps at once */
#define STRETCH_BYTES (STRETCH_WORDS * 8)
/* The bounce area: the next stretch's READ, then the words found by each of three stretches' blocks. */
_Static_assert(4 * STRETCH_BYTES <= BOUNCE, "a stretch's READ and three stretches' answers fit the bounce area");

struct stretch {
	uint64_t w0, a, b;		/* its first word, and its bytes [a, b), in the words segment */
	size_t nw, at, len;		/* its words; its first element's packed offset; its bytes */
	uint32_t answers;		/* where its blocks' words found land in the bounce area */
	int nr, rh[READS_MAX];		/* its READs in flight */
	int nb, *bh;			/* its blocks in flight: handle, first word, end each */
	uint64_t *cur, *next, *pairs;	/* its words as read, as they should become; the blocks' pairs */
};

struct stretch_iter {
	size_t ri;			/* the run */
	uint64_t a;			/* its next byte in the words segment */
	size_t at;			/* the packed offset of that byte's element */
};

/* The next stretch of o into st: whole elements of one run, at most STRETCH_WORDS words.  0: none left. */
static int stretch_next(const struct where *o, struct stretch_iter *it, struct stretch *st)
{
	uint64_t end;

	for (;;) {
		if (it->ri >= o->nruns)
			return 0;
		end = o->t->skew + (uint64_t)o->runs[it->ri].off + o->runs[it->ri].len;
		if (it->a < end)
			break;
		if (++it->ri < o->nruns)
			it->a = o->t->skew + (uint64_t)o->runs[it->ri].off;
	}
	st->a = it->a;
	st->w0 = st->a & ~7ull;
	st->b = end < st->w0 + STRETCH_BYTES ? end : st->w0 + STRETCH_BYTES;
	st->nw = (size_t)(((st->b + 7) & ~7ull) - st->w0) / 8;
	st->len = (size_t)(st->b - st->a);
	st->at = it->at;
	it->at += st->len;
	it->a = st->b;
	return 1;
}

/* The stretch's words READ into the bounce area's first part, as long as the pair's frames carry. */
static int stretch_read(struct mpi_win *w, int rd, struct stretch *st)
{
	uint32_t xfer = rmem_max_xfer(rd), pos = 0, left = (uint32_t)(st->nw * 8);

	while (left) {
		uint32_t c = left < xfer ? left : xfer;
		int h = rmem_read(rd, (uint32_t)st->w0 + pos, c, w->bseg, pos, 0);
		if (h < 0)
			return h;
		st->rh[st->nr++] = h;
		pos += c;
		left -= c;
	}
	return 0;
}

/* The stretch's READs awaited, its words copied out of the bounce area (if all came). */
static int stretch_read_wait(struct mpi_win *w, struct stretch *st)
{
	int r = 0;

	for (int i = 0; i < st->nr; i++) {
		int x = rmem_read_wait(st->rh[i], WAIT_NS);
		if (x < 0 && !r)
			r = x;
	}
	st->nr = 0;
	if (!r)
		memcpy(st->cur, w->bounce, st->nw * 8);
	return r;
}

/* Every changed word's compare-and-swap out, adjacent ones in one block each. */
static int stretch_swap(struct mpi_win *w, int rd, struct stretch *st)
{
	int max = (int)rmem_cas_block_max(rd);

	for (size_t x = 0, y; x < st->nw; x = y) {
		y = x + 1;
		if (st->next[x] == st->cur[x])
			continue;
		while (y < st->nw && (int)(y - x) < max && st->next[y] != st->cur[y])
			y++;
		for (size_t z = x; z < y; z++) {
			st->pairs[2 * z] = st->cur[z];
			st->pairs[2 * z + 1] = st->next[z];
		}
		int h = rmem_cas_block_start(rd, (uint32_t)(st->w0 + 8 * x), st->pairs + 2 * x, (uint32_t)(y - x),
					     w->bseg, st->answers + (uint32_t)(8 * x));
		if (h < 0)
			return h;
		st->bh[3 * st->nb] = h;
		st->bh[3 * st->nb + 1] = (int)x;
		st->bh[3 * st->nb + 2] = (int)y;
		st->nb++;
	}
	return 0;
}

/* The stretch's blocks answered: a word someone changed between its read and its swap, again alone. */
static int stretch_swap_wait(struct where *o, MPI_Op op, const uint8_t *in, uint8_t *old, struct stretch *st,
			     const char *fn)
{
	struct mpi_win *w = o->w;
	int e = MPI_SUCCESS;

	for (int k = 0; k < st->nb; k++) {
		int r = rmem_read_wait(st->bh[3 * k], WAIT_NS);
		if (r < 0) {
			if (e == MPI_SUCCESS)
				e = werr(w, rmem_class(r), fn, "an atomic on rank %d failed (%d)", o->rank, r);
			continue;
		}
		for (size_t z = (size_t)st->bh[3 * k + 1]; z < (size_t)st->bh[3 * k + 2] && e == MPI_SUCCESS; z++) {
			uint64_t seen;
			memcpy(&seen, w->bounce + st->answers + 8 * z, 8);
			if (seen == st->cur[z])
				continue;
			/* The word's elements of the stretch: bytes [lo, hi) of it. */
			uint64_t wa = st->w0 + 8 * z, lo = wa > st->a ? wa : st->a, hi = wa + 8 < st->b ? wa + 8 : st->b;
			size_t px = st->at + (size_t)(lo - st->a);
			e = word_again(o, op, in ? in + px : NULL, old ? old + px : NULL, wa, (unsigned)(lo - wa),
				       (size_t)(hi - lo), seen, fn);
		}
	}
	st->nb = 0;
	return e;
}

/*
 * An accumulate of many elements of a native type (native_run) at a
 * remote target, without the exclusive lock: each run in stretches of
 * STRETCH_WORDS words.  A stretch's words are read (READs as long as the
 * frames carry), the operation applied to them here as an array, and
 * every word that changes is swapped by the paper's compare-and-swap,
 * adjacent ones in blocks of one message each (rmem_cas_block_start):
 * each element stays atomic against any other accumulate, as with a
 * compare-and-swap an element (atomic_batches), at a frame's worth of
 * words a message.  A word someone changed between the read and its swap
 * is done again alone (word_again).
 *
 * Three stretches at once, so that both nodes work at the same time: the
 * next one's READ goes out before this one is worked on, and the one
 * before's blocks are awaited only once this one's are out.
 */
static int atomic_words(struct where *o, MPI_Op op, const uint8_t *in, uint8_t *old, const char *fn)
{
	struct mpi_win *w = o->w;
	struct stretch st[3];
	struct stretch_iter it = { 0, o->nruns ? o->t->skew + (uint64_t)o->runs[0].off : 0, 0 };
	int rd = d_ard(o->t), e = MPI_SUCCESS, r;
	size_t words = 0;

	for (size_t i = 0; i < o->nruns; i++)
		words += o->runs[i].len / 8 + 2;
	words = words < STRETCH_WORDS ? words : STRETCH_WORDS;
	memset(st, 0, sizeof st);
	for (int k = 0; k < 3; k++) {
		st[k].answers = (uint32_t)(k + 1) * STRETCH_BYTES;
		st[k].cur = malloc(words * 8);
		st[k].next = malloc(words * 8);
		st[k].pairs = malloc(words * 16);
		st[k].bh = malloc(words * 3 * sizeof(int));
		if (!st[k].cur || !st[k].next || !st[k].pairs || !st[k].bh)
			e = werr(w, MPI_ERR_NO_MEM, fn, "no memory for a stretch of %zu words", words);
	}
	if (e == MPI_SUCCESS && rd < 0)
		e = werr(w, MPI_ERR_OTHER, fn, "rank %d's window could not be reached (%d)", o->rank, rd);
	if (e == MPI_SUCCESS && bounce_ready(w) < 0)
		e = werr(w, MPI_ERR_NO_MEM, fn, "no landing area for the words found");

	struct stretch *prev = NULL, *cur = NULL;
	if (e == MPI_SUCCESS && stretch_next(o, &it, &st[0])) {
		cur = &st[0];
		if ((r = stretch_read(w, rd, cur)) < 0)
			e = werr(w, rmem_class(r), fn, "a READ from rank %d failed (%d)", o->rank, r);
	}
	for (int k = 0; cur && e == MPI_SUCCESS; k = (k + 1) % 3) {
		struct stretch *nxt = &st[(k + 1) % 3];
		if ((r = stretch_read_wait(w, cur)) < 0) {
			e = werr(w, rmem_class(r), fn, "a READ from rank %d failed (%d)", o->rank, r);
			break;
		}
		if (!stretch_next(o, &it, nxt))
			nxt = NULL;
		else if ((r = stretch_read(w, rd, nxt)) < 0) {
			e = werr(w, rmem_class(r), fn, "a READ from rank %d failed (%d)", o->rank, r);
			break;
		}
		size_t lead = (size_t)(cur->a - cur->w0);
		memcpy(cur->next, cur->cur, cur->nw * 8);
		if (old)
			memcpy(old + cur->at, (uint8_t *)cur->cur + lead, cur->len);
		if ((e = apply_run(w, op, in ? in + cur->at : NULL, (uint8_t *)cur->next + lead, cur->len / o->esize,
				   o->basic, fn)) != MPI_SUCCESS)
			break;
		if ((r = stretch_swap(w, rd, cur)) < 0) {
			e = werr(w, rmem_class(r), fn, "an atomic on rank %d failed (%d)", o->rank, r);
			break;
		}
		if (prev && (e = stretch_swap_wait(o, op, in, old, prev, fn)) != MPI_SUCCESS)
			break;
		prev = cur;
		cur = nxt;
	}
	if (e == MPI_SUCCESS && prev)
		e = stretch_swap_wait(o, op, in, old, prev, fn);
	/* After a failure, what is still in flight is awaited: its answers land in the bounce area. */
	for (int k = 0; k < 3; k++) {
		for (int i = 0; i < st[k].nr; i++)
			rmem_read_wait(st[k].rh[i], WAIT_NS);
		for (int i = 0; i < st[k].nb; i++)
			rmem_read_wait(st[k].bh[3 * i], WAIT_NS);
		free(st[k].cur);
		free(st[k].next);
		free(st[k].pairs);
		free(st[k].bh);
	}
	return e;
}

/*
 * An accumulate whose elements no compare-and-swap of one word reaches
 * (wider than 8 bytes, like MPI_LONG_DOUBLE and MPI_DOUBLE_INT, or across
 * a word): under the target's accumulate mutex, a bit of its lock word
 * taken by compare-and-swap, its bytes are read, changed here and
 * written back, and the mutex is given back behind the WRITEs on the same
 * channel: none sees it free before they landed.  Every such accumulate
 * on the target takes the same mutex: they are atomic with respect to one
 * another, as MPI asks of accumulates of one type to one place (MPI-3.1
 * 11.7.1).  The mutex leaves Win_lock's holds as they are.
 *
 * Without the mutex (mutex 0) where this member holds the target's
 * exclusive lock (MPI_Win_lock): no other member's operation can reach
 * the window until it is given back, so an accumulate of any size is the
 * READs of its bytes, the operation here, and their WRITEs (the rmem
 * block transfer), not a compare-and-swap an element; a READ behind those
 * WRITEs on the same channel sees them.
 */
static int atomic_locked(struct where *o, MPI_Op op, const void *in, uint8_t *old, int mutex, const char *fn)
{
	struct mpi_win *w = o->w;
	int x, e;

	if (op == MPI_NO_OP && !old)
		return MPI_SUCCESS;	/* nothing to change, nothing asked for */
	if (op == MPI_REPLACE && !old) {
		/* Nothing of the target's to read: the origin's bytes are the new ones. */
		if (mutex && (e = acc_mutex(w, o->rank, 1, fn)) != MPI_SUCCESS)
			return e;
		e = put_bytes(o, in, fn);
		if (mutex && (x = acc_mutex(w, o->rank, 0, fn)) != MPI_SUCCESS && e == MPI_SUCCESS)
			e = x;
		return e;
	}
	uint8_t *buf = malloc(o->len);
	if (!buf)
		return werr(w, MPI_ERR_NO_MEM, fn, "no memory for %zu bytes", o->len);
	if (mutex && (e = acc_mutex(w, o->rank, 1, fn)) != MPI_SUCCESS) {
		free(buf);
		return e;
	}
	e = get_bytes(o, buf, fn);
	if (e == MPI_SUCCESS && old)
		memcpy(old, buf, o->len);
	if (e == MPI_SUCCESS && op != MPI_NO_OP) {
		/*
		 * As arrays where the packed elements lie as in memory; else
		 * element by element, each unpacked to the type's own layout (a
		 * pair type's packed bytes leave out its padding: MPI_SHORT_INT
		 * is 6 of them, its int at 2, not 4), the operation applied there.
		 */
		uint8_t a[64] __attribute__((aligned(16))), b[64] __attribute__((aligned(16)));
		size_t es = o->esize, n = o->len / es;
		if (native_run(o, in)) {
			e = apply_run(w, op, in, buf, n, o->basic, fn);
			n = 0;
		} else if (mpii_type_extent(o->basic) > (MPI_Aint)sizeof a) {
			e = werr(w, MPI_ERR_UNSUPPORTED_OPERATION, fn, "an element of more than %zu bytes", sizeof a);
		}
		for (size_t x = 0; e == MPI_SUCCESS && x < n; x++) {
			mpii_unpack((const uint8_t *)in + x * es, es, a, 1, o->basic);
			mpii_unpack(buf + x * es, es, b, 1, o->basic);
			if (mpii_op_apply(op, a, b, 1, o->basic) != MPI_SUCCESS)
				e = werr(w, MPI_ERR_OP, fn, "the operation does not apply to the window's type");
			mpii_pack(b, 1, o->basic, buf + x * es);
		}
		/*
		 * No fence before the mutex goes: its fetch-and-add follows the
		 * WRITEs on the same channel, which keeps order, so the next
		 * holder's READ sees them; a refused WRITE is reported at the
		 * next flush, as any WRITE's.
		 */
		if (e == MPI_SUCCESS)
			e = put_bytes(o, buf, fn);
	}
	if (mutex && (x = acc_mutex(w, o->rank, 0, fn)) != MPI_SUCCESS && e == MPI_SUCCESS)
		e = x;
	free(buf);
	return e;
}

/*
 * An accumulate on this member's own window: interrupts held, so that no
 * operation from another member (served in the receive path) sees the
 * call's elements half done.
 */
static int atomic_self(struct where *o, MPI_Op op, const void *in, uint8_t *old, const char *fn)
{
	size_t x = 0;
	int e = MPI_SUCCESS;
	irqflags_t f = irq_save();

	if (native_run(o, in)) {
		/* Each run at once, in place: nothing else runs on this node meanwhile. */
		for (size_t i = 0, at = 0; i < o->nruns && e == MPI_SUCCESS; at += o->runs[i].len, i++) {
			uint8_t *p = o->lbase + o->runs[i].off;
			if (old)
				memcpy(old + at, p, o->runs[i].len);
			e = apply_run(o->w, op, in ? (const uint8_t *)in + at : NULL, p, o->runs[i].len / o->esize,
				      o->basic, fn);
		}
		irq_restore(f);
		return e;
	}
	for (size_t i = 0; i < o->nruns && e == MPI_SUCCESS; i++)
		for (size_t j = 0; j < o->runs[i].len / o->esize && e == MPI_SUCCESS; j++, x++) {
			struct apply a = { op, in ? (const uint8_t *)in + x * o->esize : NULL, o->basic };
			e = atomic_elem(o, (uint64_t)o->runs[i].off + j * o->esize, apply_op, &a,
					old ? old + x * o->esize : NULL, fn);
		}
	irq_restore(f);
	return e;
}

enum { ACC_LOCKED, ACC_WIDE, ACC_WORDS };	/* under the exclusive lock; under the mutex; a word each */

/* An accumulate's elements, each part of o with its share of in and old (may be NULL). */
static int acc_parts(struct where *o, int how, MPI_Op op, const void *in, uint8_t *old, const char *fn)
{
	if (o->parts) {
		int e = MPI_SUCCESS;
		size_t at = 0;
		for (size_t k = 0; k < o->nparts && e == MPI_SUCCESS; at += o->parts[k].len, k++) {
			struct where s = part_where(o, k);
			e = acc_parts(&s, how, op, in ? (const uint8_t *)in + at : NULL, old ? old + at : NULL, fn);
		}
		return e;
	}
	if (how != ACC_WORDS)
		return atomic_locked(o, op, in, old, how == ACC_WIDE, fn);
	if (o->self)
		return atomic_self(o, op, in, old, fn);
	if (o->len / o->esize > BATCH && native_run(o, in))
		return atomic_words(o, op, in, old, fn);
	return atomic_batches(o, op, in, old, fn);
}

/* Accumulate's and Get_accumulate's element loop; result (may be NULL) gets the old elements packed. */
static int accumulate(const void *origin, int ocount, MPI_Datatype otype, void *result, int rcount,
		      MPI_Datatype rtype, int rank, MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Op op,
		      struct mpi_win *w, const char *fn)
{
	struct where o;
	const void *run = NULL;
	void *tmp = NULL, *old = NULL;
	size_t len = 0;
	int e = target_of(w, rank, disp, tcount, ttype, &o, fn);

	if (e != MPI_SUCCESS || !o.t)
		return e;
	if (!mpii_op_valid(op))
		e = werr(w, MPI_ERR_OP, fn, "Invalid MPI_Op");
	else if (op != MPI_NO_OP && (e = origin_run(origin, ocount, otype, &run, &tmp, &len, w, fn)) != MPI_SUCCESS)
		;
	else if (op != MPI_NO_OP && len != o.len)
		e = werr(w, MPI_ERR_TYPE, fn, "origin %zu bytes, target %zu bytes", len, o.len);
	else if (!o.len)
		;		/* nothing to change or to read, whatever the types */
	else if (o.basic == MPI_DATATYPE_NULL || !o.esize)
		e = werr(w, MPI_ERR_TYPE, fn, "a target type of more than one predefined type");
	else if (result && !(old = malloc(o.len ? o.len : 1)))
		e = werr(w, MPI_ERR_NO_MEM, fn, "no memory for %zu bytes", o.len);
	for (size_t i = 0; e == MPI_SUCCESS && o.parts && i < o.nruns; i++)
		if (o.runs[i].len % o.esize)
			e = werr(w, MPI_ERR_RMA_RANGE, fn, "an element of rank %d's lies across two regions", rank);
	int held = o.self ? 0 : w->t[rank].held;
	if (e == MPI_SUCCESS && o.len) {
		if (held == MPI_LOCK_EXCLUSIVE || held == -MPI_LOCK_EXCLUSIVE) {
			e = acc_parts(&o, ACC_LOCKED, op, run, old, fn);
		} else if (!word_sized(&o)) {
			e = acc_parts(&o, ACC_WIDE, op, run, old, fn);
		} else if (multi_word(&o)) {
			/*
			 * Elements in more than one word: each word by compare-and-
			 * swap as ever (element-wise atomic against any other
			 * accumulate), and the whole call under the accumulate
			 * mutex, so that no other such call sees it half done (a
			 * list's next pointer of MPI_BYTEs, read by Get_accumulate
			 * while another rank's Accumulate replaces it, is old or new).
			 */
			if ((e = acc_mutex(w, rank, 1, fn)) == MPI_SUCCESS) {
				e = acc_parts(&o, ACC_WORDS, op, run, old, fn);
				int x = acc_mutex(w, rank, 0, fn);
				if (e == MPI_SUCCESS)
					e = x;
			}
		} else {
			e = acc_parts(&o, ACC_WORDS, op, run, old, fn);
		}
	}
	if (e == MPI_SUCCESS && result)
		mpii_unpack(old, o.len, result, rcount, rtype);
	free(old);
	free(tmp);
	where_done(&o);
	return e;
}

int MPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
		   MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
	static const char fn[] = "MPI_Accumulate";
	WIN_OR_FAIL(win, fn);

	return accumulate(origin_addr, origin_count, origin_datatype, NULL, 0, MPI_DATATYPE_NULL, target_rank,
			  target_disp, target_count, target_datatype, op, w, fn);
}

int MPI_Get_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr,
		       int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
		       int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
	static const char fn[] = "MPI_Get_accumulate";
	WIN_OR_FAIL(win, fn);

	if (result_count > 0 && !result_addr && mpii_type_valid(result_datatype) && mpii_type_size(result_datatype))
		return werr(w, MPI_ERR_BUFFER, fn, "Null buffer pointer");
	return accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype,
			  target_rank, target_disp, target_count, target_datatype, op, w, fn);
}

int MPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype, int target_rank,
		     MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
	static const char fn[] = "MPI_Fetch_and_op";
	WIN_OR_FAIL(win, fn);

	return accumulate(origin_addr, 1, datatype, result_addr, 1, datatype, target_rank, target_disp, 1,
			  datatype, op, w, fn);
}

int MPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
			 MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win)
{
	static const char fn[] = "MPI_Compare_and_swap";
	WIN_OR_FAIL(win, fn);
	struct where o;
	int e = target_of(w, target_rank, target_disp, 1, datatype, &o, fn);

	if (e != MPI_SUCCESS || !o.t)
		return e;
	if (!origin_addr || !compare_addr || !result_addr)
		e = werr(w, MPI_ERR_BUFFER, fn, "Null buffer pointer");
	else if (o.parts)
		e = werr(w, MPI_ERR_RMA_RANGE, fn, "an element of rank %d's lies across two regions", target_rank);
	else if (o.nruns) {
		struct cas c = { compare_addr, origin_addr, o.esize };
		e = atomic_elem(&o, (uint64_t)o.runs[0].off, apply_cas, &c, result_addr, fn);
	}
	where_done(&o);
	return e;
}

/* --- request-based operations: done when they return ----------------------------------------------- */

static int done_request(struct mpi_win *w, int e, MPI_Request *request)
{
	struct mpi_req *r = mpii_req_generic(w->c);

	if (!r)
		return werr(w, MPI_ERR_NO_MEM, "MPI_Rput", "no memory for a request");
	*request = mpii_req_handle(r);
	mpii_req_complete(r, e);
	return e;
}

int MPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
	     MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
	WIN_OR_FAIL(win, "MPI_Rput");
	int e = MPI_Put(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
			target_datatype, win);

	return done_request(w, e, request);
}

int MPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
	     MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
	WIN_OR_FAIL(win, "MPI_Rget");
	int e = MPI_Get(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
			target_datatype, win);

	return done_request(w, e, request);
}

int MPI_Raccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
		    MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
		    MPI_Request *request)
{
	WIN_OR_FAIL(win, "MPI_Raccumulate");
	int e = MPI_Accumulate(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
			       target_datatype, op, win);

	return done_request(w, e, request);
}

int MPI_Rget_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, void *result_addr,
			int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
			int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
	WIN_OR_FAIL(win, "MPI_Rget_accumulate");
	int e = MPI_Get_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count,
				   result_datatype, target_rank, target_disp, target_count, target_datatype, op, win);

	return done_request(w, e, request);
}

/* --- synchronization -------------------------------------------------------------------------- */

int MPI_Win_fence(int assert, MPI_Win win)
{
	static const char fn[] = "MPI_Win_fence";
	WIN_OR_FAIL(win, fn);
	int e = flush_all(w, fn);

	(void)assert;
	int b = MPI_Barrier(w->comm);
	return e != MPI_SUCCESS ? e : b;
}

/* The lock word of rank r: fetch-and-add (local or remote); *old the value before. */
static int lock_fadd(struct mpi_win *w, int r, uint64_t add, uint64_t *old)
{
	if (r == w->c->rank) {
		*old = __atomic_fetch_add(w->lockword, add, __ATOMIC_SEQ_CST);
		return 0;
	}
	return rmem_fadd(d_lrd(&w->t[r]), 0, add, old);
}

static int lock_cas(struct mpi_win *w, int r, uint64_t expect, uint64_t desired, uint64_t *old)
{
	if (r == w->c->rank) {
		*old = expect;
		__atomic_compare_exchange_n(w->lockword, old, desired, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
		return 0;
	}
	return rmem_cas(d_lrd(&w->t[r]), 0, expect, desired, old);
}

static int take_lock(struct mpi_win *w, int type, int r, const char *fn)
{
	uint64_t old;
	int x;

	for (unsigned tries = 0;; tries++) {
		if (type == MPI_LOCK_EXCLUSIVE) {
			if ((x = lock_cas(w, r, 0, EXCL, &old)) < 0)
				break;
			if (old == 0)
				return MPI_SUCCESS;
		} else {
			if ((x = lock_fadd(w, r, 1, &old)) < 0)
				break;
			if (!(old & EXCL))
				return MPI_SUCCESS;
			if ((x = lock_fadd(w, r, (uint64_t)-1, &old)) < 0)
				break;
		}
		/* Held by another: let this node's other work run, then ask again. */
		mpii_poke();
		if (tries > 8)
			thread_sleep_ns(tries < 100 ? 10000 : 100000);
	}
	return werr(w, MPI_ERR_OTHER, fn, "rank %d's lock could not be reached (%d)", r, x);
}

static int drop_lock(struct mpi_win *w, int type, int r, const char *fn)
{
	uint64_t old;
	int x = lock_fadd(w, r, type == MPI_LOCK_EXCLUSIVE ? (uint64_t)-EXCL : (uint64_t)-1, &old);

	return x < 0 ? werr(w, MPI_ERR_OTHER, fn, "rank %d's lock could not be reached (%d)", r, x) : MPI_SUCCESS;
}

int MPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
	static const char fn[] = "MPI_Win_lock";
	WIN_OR_FAIL(win, fn);

	if (lock_type != MPI_LOCK_SHARED && lock_type != MPI_LOCK_EXCLUSIVE)
		return werr(w, MPI_ERR_LOCKTYPE, fn, "Invalid lock type %d", lock_type);
	RANK_OR_DONE(w, rank, fn);
	if (w->t[rank].held)
		return werr(w, MPI_ERR_RMA_SYNC, fn, "rank %d's window is already locked by this process", rank);
	if (!(assert & MPI_MODE_NOCHECK)) {
		int e = take_lock(w, lock_type, rank, fn);
		if (e != MPI_SUCCESS)
			return e;
	}
	w->t[rank].held = (assert & MPI_MODE_NOCHECK) ? -lock_type : lock_type;
	return MPI_SUCCESS;
}

int MPI_Win_unlock(int rank, MPI_Win win)
{
	static const char fn[] = "MPI_Win_unlock";
	WIN_OR_FAIL(win, fn);

	RANK_OR_DONE(w, rank, fn);
	int held = w->t[rank].held;
	if (!held)
		return werr(w, MPI_ERR_RMA_SYNC, fn, "rank %d's window is not locked by this process", rank);
	int e = flush_one(w, rank, fn);
	w->t[rank].held = 0;
	int d = held > 0 ? drop_lock(w, held, rank, fn) : MPI_SUCCESS;
	return e != MPI_SUCCESS ? e : d;
}

int MPI_Win_lock_all(int assert, MPI_Win win)
{
	static const char fn[] = "MPI_Win_lock_all";
	WIN_OR_FAIL(win, fn);

	for (int r = 0; r < w->c->size; r++) {
		int e = MPI_Win_lock(MPI_LOCK_SHARED, r, assert, win);
		if (e != MPI_SUCCESS)
			return e;
	}
	return MPI_SUCCESS;
}

int MPI_Win_unlock_all(MPI_Win win)
{
	static const char fn[] = "MPI_Win_unlock_all";
	WIN_OR_FAIL(win, fn);
	int err = MPI_SUCCESS;

	for (int r = 0; r < w->c->size; r++) {
		int e = MPI_Win_unlock(r, win);
		if (e != MPI_SUCCESS && err == MPI_SUCCESS)
			err = e;
	}
	return err;
}

int MPI_Win_flush(int rank, MPI_Win win)
{
	static const char fn[] = "MPI_Win_flush";
	WIN_OR_FAIL(win, fn);

	RANK_OR_DONE(w, rank, fn);
	return flush_one(w, rank, fn);
}

int MPI_Win_flush_all(MPI_Win win)
{
	WIN_OR_FAIL(win, "MPI_Win_flush_all");

	return flush_all(w, "MPI_Win_flush_all");
}

int MPI_Win_flush_local(int rank, MPI_Win win)
{
	/* An operation's origin buffer is free once it is issued (WRITE copies it out): flush does more. */
	return MPI_Win_flush(rank, win);
}

int MPI_Win_flush_local_all(MPI_Win win)
{
	return MPI_Win_flush_all(win);
}

int MPI_Win_sync(MPI_Win win)
{
	WIN_OR_FAIL(win, "MPI_Win_sync");

	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return MPI_SUCCESS;
}

/* The ranks in the window's communicator of group g's members; NULL: none or no memory. */
static int *ranks_of(struct mpi_win *w, MPI_Group g, int *n, const char *fn, int *e)
{
	MPI_Group wg;

	*e = MPI_Group_size(g, n);
	if (*e != MPI_SUCCESS)
		return NULL;
	int *in = malloc(sizeof(int) * (size_t)(*n + 1)), *out = malloc(sizeof(int) * (size_t)(*n + 1));
	if (!in || !out) {
		free(in);
		free(out);
		*e = werr(w, MPI_ERR_NO_MEM, fn, "no memory for a group of %d", *n);
		return NULL;
	}
	for (int i = 0; i < *n; i++)
		in[i] = i;
	MPI_Comm_group(w->comm, &wg);
	*e = MPI_Group_translate_ranks(g, *n, in, wg, out);
	MPI_Group_free(&wg);
	free(in);
	for (int i = 0; *e == MPI_SUCCESS && i < *n; i++)
		if (out[i] == MPI_UNDEFINED)
			*e = werr(w, MPI_ERR_GROUP, fn, "a member of the group is not in the window");
	if (*e != MPI_SUCCESS) {
		free(out);
		return NULL;
	}
	return out;
}

/* Send a 0-byte tag message to, or receive one from, each member of g. */
static int each(struct mpi_win *w, MPI_Group g, int tag, int send, const char *fn)
{
	int n, e;
	int *r = ranks_of(w, g, &n, fn, &e);

	for (int i = 0; r && e == MPI_SUCCESS && i < n; i++)
		e = send ? MPI_Send(NULL, 0, MPI_BYTE, r[i], tag, w->comm)
			 : MPI_Recv(NULL, 0, MPI_BYTE, r[i], tag, w->comm, MPI_STATUS_IGNORE);
	free(r);
	return e;
}

int MPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
	static const char fn[] = "MPI_Win_post";
	WIN_OR_FAIL(win, fn);

	(void)assert;
	if (w->exposure != MPI_GROUP_NULL)
		return werr(w, MPI_ERR_RMA_SYNC, fn, "an exposure epoch is already open");
	MPI_Group_excl(group, 0, NULL, &w->exposure);	/* a copy of the caller's group */
	return each(w, w->exposure, T_POST, 1, fn);
}

int MPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
	static const char fn[] = "MPI_Win_start";
	WIN_OR_FAIL(win, fn);

	(void)assert;
	if (w->access != MPI_GROUP_NULL)
		return werr(w, MPI_ERR_RMA_SYNC, fn, "an access epoch is already open");
	MPI_Group_excl(group, 0, NULL, &w->access);
	return each(w, w->access, T_POST, 0, fn);
}

int MPI_Win_complete(MPI_Win win)
{
	static const char fn[] = "MPI_Win_complete";
	WIN_OR_FAIL(win, fn);

	if (w->access == MPI_GROUP_NULL)
		return werr(w, MPI_ERR_RMA_SYNC, fn, "no access epoch is open (MPI_Win_start)");
	int n, e, f = MPI_SUCCESS;
	int *r = ranks_of(w, w->access, &n, fn, &e);
	for (int i = 0; r && i < n; i++) {
		int x = flush_one(w, r[i], fn);
		if (x != MPI_SUCCESS && f == MPI_SUCCESS)
			f = x;
	}
	free(r);
	e = each(w, w->access, T_DONE, 1, fn);
	MPI_Group_free(&w->access);
	return f != MPI_SUCCESS ? f : e;
}

int MPI_Win_wait(MPI_Win win)
{
	static const char fn[] = "MPI_Win_wait";
	WIN_OR_FAIL(win, fn);

	if (w->exposure == MPI_GROUP_NULL)
		return werr(w, MPI_ERR_RMA_SYNC, fn, "no exposure epoch is open (MPI_Win_post)");
	int e = each(w, w->exposure, T_DONE, 0, fn);
	MPI_Group_free(&w->exposure);
	return e;
}

int MPI_Win_test(MPI_Win win, int *flag)
{
	/* Every origin's completion is a message: waiting for them is the test's answer, true. */
	int e = MPI_Win_wait(win);

	if (flag)
		*flag = 1;
	return e;
}

/* --- queries ------------------------------------------------------------------------------------ */

int MPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
	WIN_OR_FAIL(win, "MPI_Win_get_group");

	return MPI_Comm_group(w->comm, group);
}

int MPI_Win_set_name(MPI_Win win, const char *name)
{
	WIN_OR_FAIL(win, "MPI_Win_set_name");

	if (!name)
		return werr(w, MPI_ERR_ARG, "MPI_Win_set_name", "Null pointer in parameter name");
	snprintf(w->name, sizeof w->name, "%s", name);
	return MPI_SUCCESS;
}

int MPI_Win_get_name(MPI_Win win, char *name, int *len)
{
	WIN_OR_FAIL(win, "MPI_Win_get_name");

	if (!name || !len)
		return werr(w, MPI_ERR_ARG, "MPI_Win_get_name", "Null pointer in parameter name or resultlen");
	strcpy(name, w->name);
	*len = (int)strlen(name);
	return MPI_SUCCESS;
}

/* MPI_Win_get_attr's predefined attributes (attr.c asks): 1 and *val set, or 0 if key is not one. */
int mpii_win_attr(MPI_Win win, int key, void *val, int *flag)
{
	static int flavor, model = MPI_WIN_UNIFIED;
	static MPI_Aint size;
	static int disp;
	struct mpi_win *w = win_get(win);

	if (!w)
		return -1;
	*flag = 1;
	switch (key) {
	case MPI_WIN_BASE:
		*(void **)val = w->base;
		return 1;
	case MPI_WIN_SIZE:
		size = (MPI_Aint)w->size;
		*(MPI_Aint **)val = &size;
		return 1;
	case MPI_WIN_DISP_UNIT:
		disp = w->disp_unit;
		*(int **)val = &disp;
		return 1;
	case MPI_WIN_CREATE_FLAVOR:
		flavor = w->flavor;
		*(int **)val = &flavor;
		return 1;
	case MPI_WIN_MODEL:
		*(int **)val = &model;
		return 1;
	}
	*flag = 0;
	return 0;
}

struct mpi_attr **mpii_win_attrs(MPI_Win win)
{
	struct mpi_win *w = win_get(win);

	return w ? &w->attrs : NULL;
}

struct mpi_comm *mpii_win_comm(MPI_Win win)
{
	struct mpi_win *w = win_get(win);

	return w ? w->c : NULL;
}
