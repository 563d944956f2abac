/*
 * Dynamic and shared windows (MPI-3.1 11.2.3, 11.2.4).
 *
 * Dynamic: each rank attaches a region and tells the others its address
 * (MPI_Get_address, an Allgather); each then Puts into the next rank's
 * region, Gets it back, adds to it with Accumulate and Fetch_and_op and
 * swaps a word with Compare_and_swap, at absolute target addresses.  Then
 * every rank attaches a second region after the first accesses, so that
 * an origin must find a region it has not seen; an access to an address
 * no region holds fails with MPI_ERR_RMA_RANGE; attaching over an attached
 * region fails with MPI_ERR_RMA_ATTACH.  Each rank checks its own regions
 * at the end: what the others wrote is there.
 *
 * Shared: MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) gives each rank a
 * communicator of its own (every rank is alone on its node); a shared
 * window on it is its memory (MPI_Win_shared_query); on MPI_COMM_WORLD
 * of more than one process the call fails with MPI_ERR_RMA_SHARED.
 *
 * Wide elements: every rank adds to rank 0's MPI_LONG_DOUBLE at once
 * (Accumulate, Fetch_and_op) and takes the MPI_MAXLOC of an MPI_DOUBLE_INT
 * (16 bytes each, beyond a word's compare-and-swap): none is lost.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define N 64

static int errs;

static void check(int ok, int rank, const char *what)
{
	if (!ok) {
		errs++;
		printf("rank %d: %s\n", rank, what);
	}
}

int main(int argc, char **argv)
{
	static long a[N], b[N], c[N];
	long got[N], v;
	MPI_Aint mine[3], addr[64][3];
	int rank, size, cls;
	MPI_Win win;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size > 64)
		MPI_Abort(MPI_COMM_WORLD, 1);
	int next = (rank + 1) % size, prev = (rank + size - 1) % size;

	MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
	MPI_Win_attach(win, a, sizeof a);
	MPI_Get_address(a, &mine[0]);
	MPI_Get_address(b, &mine[1]);
	MPI_Get_address(c, &mine[2]);
	MPI_Allgather(mine, 3, MPI_AINT, addr, 3, MPI_AINT, MPI_COMM_WORLD);

	/* Put, Get, Accumulate, Fetch_and_op, Compare_and_swap in the next rank's first region. */
	long put[N];
	for (int i = 0; i < N; i++)
		put[i] = rank * 1000 + i;
	MPI_Win_lock(MPI_LOCK_EXCLUSIVE, next, 0, win);
	check(MPI_Put(put, N, MPI_LONG, next, addr[next][0], N, MPI_LONG, win) == MPI_SUCCESS, rank, "Put failed");
	MPI_Win_flush(next, win);
	check(MPI_Get(got, N, MPI_LONG, next, addr[next][0], N, MPI_LONG, win) == MPI_SUCCESS, rank, "Get failed");
	MPI_Win_flush(next, win);
	check(memcmp(got, put, sizeof got) == 0, rank, "Get did not return what Put wrote");
	long one = 1;
	MPI_Accumulate(&one, 1, MPI_LONG, next, addr[next][0] + 8 * sizeof(long), 1, MPI_LONG, MPI_SUM, win);
	MPI_Fetch_and_op(&one, &v, MPI_LONG, next, addr[next][0] + 9 * sizeof(long), MPI_SUM, win);
	MPI_Win_flush(next, win);
	check(v == rank * 1000 + 9, rank, "Fetch_and_op returned the wrong old value");
	long cmp = rank * 1000 + 10, swap = -7;
	MPI_Compare_and_swap(&swap, &cmp, &v, MPI_LONG, next, addr[next][0] + 10 * sizeof(long), win);
	MPI_Win_unlock(next, win);
	check(v == rank * 1000 + 10, rank, "Compare_and_swap returned the wrong old value");

	/* A region attached after the first accesses: found by looking again. */
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_attach(win, b, sizeof b);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_lock(MPI_LOCK_SHARED, next, 0, win);
	check(MPI_Put(put, N, MPI_LONG, next, addr[next][1], N, MPI_LONG, win) == MPI_SUCCESS, rank,
	      "Put into a region attached later failed");
	/* An address in no region (c is never attached): refused. */
	int e = MPI_Put(put, 1, MPI_LONG, next, addr[next][2], 1, MPI_LONG, win);
	MPI_Error_class(e, &cls);
	check(cls == MPI_ERR_RMA_RANGE, rank, "a Put past every region was not refused with MPI_ERR_RMA_RANGE");
	MPI_Win_unlock(next, win);
	e = MPI_Win_attach(win, a + 1, sizeof(long));
	MPI_Error_class(e, &cls);
	check(cls == MPI_ERR_RMA_ATTACH, rank, "attaching over an attached region did not fail with MPI_ERR_RMA_ATTACH");
	MPI_Barrier(MPI_COMM_WORLD);

	/* What the previous rank wrote into this rank's regions. */
	for (int i = 0; i < N; i++) {
		long want = prev * 1000 + i + (i == 8 || i == 9);
		if (i == 10)
			want = -7;
		if (a[i] != want || b[i] != prev * 1000 + i) {
			printf("rank %d: a[%d] = %ld, b[%d] = %ld; wanted %ld and %ld\n", rank, i, a[i], i, b[i], want,
			       (long)(prev * 1000 + i));
			errs++;
			break;
		}
	}
	MPI_Win_detach(win, a);
	MPI_Win_detach(win, b);
	MPI_Win_free(&win);

	/* Shared windows: a communicator of one per node. */
	MPI_Comm shm;
	int ssize, du;
	int *base, *qbase;
	MPI_Aint qsize;
	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shm);
	MPI_Comm_size(shm, &ssize);
	check(ssize == 1, rank, "a shared-memory communicator of more than one rank");
	MPI_Win_allocate_shared(16 * sizeof(int), sizeof(int), MPI_INFO_NULL, shm, &base, &win);
	MPI_Win_shared_query(win, MPI_PROC_NULL, &qsize, &du, &qbase);
	check(qbase == base && qsize == 16 * sizeof(int) && du == sizeof(int), rank, "Win_shared_query disagrees");
	MPI_Win_lock_all(0, win);
	base[3] = rank;
	MPI_Win_sync(win);
	int r3;
	MPI_Get(&r3, 1, MPI_INT, 0, 3, 1, MPI_INT, win);
	MPI_Win_unlock_all(win);
	check(r3 == rank, rank, "a Get from the shared window missed a store");
	MPI_Win_free(&win);
	MPI_Comm_free(&shm);
	if (size > 1) {
		MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
		e = MPI_Win_allocate_shared(16, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
		MPI_Error_class(e, &cls);
		check(cls == MPI_ERR_RMA_SHARED, rank, "a shared window across nodes did not fail with MPI_ERR_RMA_SHARED");
	}

	/* Wide elements, from every rank at once. */
	struct {
		long double sum;
		struct { double v; int i; } loc;
	} *wide;
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
	MPI_Win_allocate(sizeof *wide, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &wide, &win);
	wide->sum = 0;
	wide->loc.v = -1;
	wide->loc.i = -1;
	MPI_Barrier(MPI_COMM_WORLD);
	long double add = 1.5L, before;
	struct { double v; int i; } mine_loc = { (double)(rank % 2 ? rank : 100 + rank), rank };
	MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
	for (int k = 0; k < 20; k++) {
		MPI_Accumulate(&add, 1, MPI_LONG_DOUBLE, 0, 0, 1, MPI_LONG_DOUBLE, MPI_SUM, win);
		MPI_Fetch_and_op(&add, &before, MPI_LONG_DOUBLE, 0, 0, MPI_SUM, win);
	}
	MPI_Accumulate(&mine_loc, 1, MPI_DOUBLE_INT, 0, (MPI_Aint)((char *)&wide->loc - (char *)wide), 1,
		       MPI_DOUBLE_INT, MPI_MAXLOC, win);
	MPI_Win_unlock(0, win);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		int top = size % 2 ? size - 1 : size - 2;	/* the largest even rank: 100 + rank */
		check(wide->sum == 1.5L * 40 * size, rank, "a wide accumulate was lost");
		check(wide->loc.v == 100 + top && wide->loc.i == top, rank, "MPI_MAXLOC of MPI_DOUBLE_INT is wrong");
	}
	MPI_Win_free(&win);

	int all;
	MPI_Reduce(&errs, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0) {
		if (all)
			printf(" Found %d errors\n", all);
		else
			printf(" No Errors\n");
	}
	MPI_Finalize();
	return 0;
}
