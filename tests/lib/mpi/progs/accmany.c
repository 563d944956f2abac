/*
 * Accumulates of many elements (MPI-3.1 11.3.4, 11.7.1), the way a
 * program that sums arrays into another rank's window makes them.
 *
 * Every rank adds an array of N ints to rank 0's window at once, ROUNDS
 * times, under a shared lock, while each also adds 1 to a few of the same
 * ints with MPI_Fetch_and_op: accumulates to one place are atomic per
 * element, so none of the additions is lost, and the ints outside the
 * array are not touched.  Then every rank XORs a pattern into bytes that
 * start 3 bytes into a word and end within one (a fence epoch), sums
 * doubles under an exclusive lock, and takes the old values back with
 * MPI_Get_accumulate; rank 0 accumulates into its own window meanwhile.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 20000			/* ints in one accumulate: many stretches' worth of blocks */
#define ROUNDS 4
#define NB 10001		/* bytes XORed, from byte 3 */
#define ND 3000			/* doubles */

static int errs;

static void check(int ok, int rank, const char *what, long at)
{
	if (!ok && errs++ < 10)
		printf("rank %d: %s (at %ld)\n", rank, what, at);
}

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Win win;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);

	/* The window: N + 16 ints, then NB + 8 bytes, then ND doubles. */
	size_t ints = (N + 16) * sizeof(int), bytes = NB + 8, len = ints + bytes + 8 + ND * sizeof(double);
	unsigned char *base;
	MPI_Alloc_mem((MPI_Aint)len, MPI_INFO_NULL, &base);
	memset(base, 0, len);
	int *iw = (int *)base;
	unsigned char *bw = base + ints;
	double *dw = (double *)(base + ((ints + bytes + 7) & ~(size_t)7));
	MPI_Aint boff = (MPI_Aint)ints, doff = (MPI_Aint)((unsigned char *)dw - base);
	MPI_Win_create(base, (MPI_Aint)len, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);

	int *ones = malloc(N * sizeof(int));
	unsigned char *pat = malloc(NB);
	double *dv = malloc(ND * sizeof(double)), *dold = malloc(ND * sizeof(double));
	for (int i = 0; i < N; i++)
		ones[i] = 1;
	for (int i = 0; i < NB; i++)
		pat[i] = (unsigned char)(rank + 1 + i);
	for (int i = 0; i < ND; i++)
		dv[i] = rank + 0.5;

	/* Shared lock: every rank's array at once, and Fetch_and_op on a few of its ints. */
	MPI_Barrier(MPI_COMM_WORLD);
	for (int r = 0; r < ROUNDS; r++) {
		int one = 1, got;
		MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
		MPI_Accumulate(ones, N, MPI_INT, 0, 8 * sizeof(int), N, MPI_INT, MPI_SUM, win);
		for (int k = 0; k < 3; k++)
			MPI_Fetch_and_op(&one, &got, MPI_INT, 0, (MPI_Aint)((8 + 100 * k + r) * sizeof(int)), MPI_SUM,
					 win);
		MPI_Win_unlock(0, win);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		int before = errs;
		MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);	/* the window's memory as the others left it */
		for (int i = 0; i < N + 16; i++) {
			int want = 0;
			if (i >= 8 && i < 8 + N) {
				int j = i - 8;
				want = size * ROUNDS + ((j % 100) < ROUNDS && j / 100 < 3 ? size : 0);
			}
			check(iw[i] == want, rank, "an int of the shared-lock sums", i);
		}
		MPI_Win_unlock(0, win);
		if (errs == before)
			printf("ints: %d from %d ranks, %d rounds, with Fetch_and_op among them: none lost\n", N, size,
		       ROUNDS);
	}

	/* A fence epoch: bytes from 3 into a word to 4 into another, XORed by every rank. */
	MPI_Win_fence(0, win);
	MPI_Accumulate(pat, NB, MPI_BYTE, 0, boff + 3, NB, MPI_BYTE, MPI_BXOR, win);
	MPI_Win_fence(0, win);
	if (rank == 0) {
		int before = errs;
		for (int i = 0; i < NB + 8; i++) {
			unsigned char want = 0;
			if (i >= 3 && i < 3 + NB)
				for (int q = 0; q < size; q++)
					want ^= (unsigned char)(q + 1 + (i - 3));
			check(bw[i] == want, rank, "a byte of the fence epoch's XOR", i);
		}
		if (errs == before)
			printf("bytes: %d XORed by %d ranks from byte 3 of a word\n", NB, size);
	}

	/* Exclusive lock, one rank after another: doubles summed, the old ones taken back. */
	MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
	MPI_Get_accumulate(dv, ND, MPI_DOUBLE, dold, ND, MPI_DOUBLE, 0, doff, ND, MPI_DOUBLE, MPI_SUM, win);
	MPI_Win_unlock(0, win);
	for (int i = 1; i < ND; i++)
		check(dold[i] == dold[0], rank, "the old doubles Get_accumulate gave differ", i);
	/* The old values are a sum of some ranks' (q + 0.5): their fractional part counts them. */
	double seen = dold[0];
	check(seen >= 0 && seen <= size * size, rank, "an old double out of range", 0);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		int before = errs;
		double want = 0;
		for (int q = 0; q < size; q++)
			want += q + 0.5;
		for (int i = 0; i < ND; i++)
			check(dw[i] == want, rank, "a double of the exclusive-lock sums", i);
		if (errs == before)
			printf("doubles: %d summed by %d ranks under the exclusive lock\n", ND, size);
	}

	MPI_Win_free(&win);
	MPI_Free_mem(base);
	free(ones);
	free(pat);
	free(dv);
	free(dold);
	int all;
	MPI_Reduce(&errs, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0 && all == 0)
		printf(" No Errors\n");
	MPI_Finalize();
	return 0;
}
