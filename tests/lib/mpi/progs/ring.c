/*
 * A user's MPI program, as it would build with Debian's mpicc: a ring of
 * MPI_Sendrecv, an MPI_Allreduce of doubles and an MPI_Alltoallv with
 * uneven counts, each result checked against what it must be.  make test
 * builds it with boot/mpicc from a folder outside the checkout and runs it
 * with boot/mpirun -np 4 (tests/lib/mpi/cases.py).  Prints one line per part
 * and " No Errors" on rank 0; exits 1 on the first wrong value.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int fail(int rank, const char *what, long got, long want)
{
	fprintf(stderr, "rank %d: %s: got %ld, want %ld\n", rank, what, got, want);
	return 1;
}

int main(int argc, char **argv)
{
	int rank, size, errs = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);

	/* The ring: every rank's value goes once around, each rank adding up what passes. */
	int right = (rank + 1) % size, left = (rank + size - 1) % size;
	long mine = rank * 7 + 1, cur = mine, got, sum = 0;
	for (int step = 0; step < size; step++) {
		MPI_Status st;
		MPI_Sendrecv(&cur, 1, MPI_LONG, right, step, &got, 1, MPI_LONG, left, step, MPI_COMM_WORLD, &st);
		if (st.MPI_SOURCE != left || st.MPI_TAG != step)
			errs += fail(rank, "ring status source", st.MPI_SOURCE, left);
		cur = got;
		sum += got;
	}
	long want = 7L * size * (size - 1) / 2 + size;
	if (cur != mine)
		errs += fail(rank, "ring: own value back", cur, mine);
	if (sum != want)
		errs += fail(rank, "ring: sum", sum, want);
	if (rank == 0)
		printf("ring: %d hops, every value came back, sum %ld\n", size, sum);

	/* Allreduce: the sum of rank + 0.5 over every rank, in every element. */
	double in[100], out[100];
	for (int i = 0; i < 100; i++)
		in[i] = rank + 0.5 + i;
	MPI_Allreduce(in, out, 100, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	for (int i = 0; i < 100; i++) {
		double want = (double)size * (size - 1) / 2 + 0.5 * size + (double)i * size;
		if (out[i] != want) {
			errs += fail(rank, "allreduce", (long)out[i], (long)want);
			break;
		}
	}
	if (rank == 0)
		printf("allreduce: %g on every rank\n", out[0]);

	/* Alltoallv: rank r sends r + j + 1 ints to rank j, each naming (r, j, k). */
	int *scount = malloc(size * sizeof(int)), *sdisp = malloc(size * sizeof(int));
	int *rcount = malloc(size * sizeof(int)), *rdisp = malloc(size * sizeof(int));
	int stotal = 0, rtotal = 0;
	for (int j = 0; j < size; j++) {
		scount[j] = rank + j + 1;
		sdisp[j] = stotal;
		stotal += scount[j];
		rcount[j] = j + rank + 1;
		rdisp[j] = rtotal;
		rtotal += rcount[j];
	}
	int *sbuf = malloc(stotal * sizeof(int)), *rbuf = malloc(rtotal * sizeof(int));
	for (int j = 0; j < size; j++)
		for (int k = 0; k < scount[j]; k++)
			sbuf[sdisp[j] + k] = rank * 10000 + j * 100 + k;
	MPI_Alltoallv(sbuf, scount, sdisp, MPI_INT, rbuf, rcount, rdisp, MPI_INT, MPI_COMM_WORLD);
	for (int j = 0; j < size && !errs; j++)
		for (int k = 0; k < rcount[j]; k++)
			if (rbuf[rdisp[j] + k] != j * 10000 + rank * 100 + k) {
				errs += fail(rank, "alltoallv", rbuf[rdisp[j] + k], j * 10000 + rank * 100 + k);
				break;
			}
	printf("alltoallv: %d ints from %d ranks, every one checked\n", rtotal, size);

	int all;
	MPI_Reduce(&errs, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0 && all == 0)
		printf(" No Errors\n");
	MPI_Finalize();
	return errs ? 1 : 0;
}
