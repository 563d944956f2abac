/*
 * A job of one rank: it sends to itself and runs nonblocking collectives
 * on its own, each completed by MPI_Wait.  Nothing crosses the network,
 * so every completion reaches the waiting thread as a kick of the
 * Madeleine driver's wait (mad_recv_kick): over the tcp driver, with no
 * connection at all, a wait that only slept out its timeout made each of
 * these take up to a second.
 */
#include <mpi.h>
#include <stdio.h>

#define ROUNDS 1000

int main(int argc, char **argv)
{
	int rank, size, errs = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (int i = 0; i < ROUNDS; i++) {
		int out = i * 3 + 1, in = -1, sum = -1;
		MPI_Request r[2];
		MPI_Irecv(&in, 1, MPI_INT, rank, i, MPI_COMM_WORLD, &r[0]);
		MPI_Isend(&out, 1, MPI_INT, rank, i, MPI_COMM_WORLD, &r[1]);
		MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
		if (in != out && errs++ < 5)
			printf("rank %d: message %d to itself: got %d, sent %d\n", rank, i, in, out);
		MPI_Iallreduce(&out, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[0]);
		MPI_Wait(&r[0], MPI_STATUS_IGNORE);
		if (sum != out * size && errs++ < 5)
			printf("rank %d: allreduce %d: got %d, want %d\n", rank, i, sum, out * size);
	}
	if (rank == 0) {
		printf("rank 0: %d messages to itself and %d nonblocking allreduces on %d rank%s, every value checked\n",
		       ROUNDS, ROUNDS, size, size == 1 ? "" : "s");
		if (!errs)
			printf(" No Errors\n");
	}
	MPI_Finalize();
	return errs != 0;
}
