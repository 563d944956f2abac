/*
 * Cancelling sends (MPI-3.1 3.8.4): once MPI_Cancel marked a send, its
 * MPI_Wait returns whatever the receiver does.  Rank 0 sends rank 1 a
 * rendezvous message and a synchronous eager one on tags rank 1 never
 * receives, and a message to itself, cancels all three: each Wait returns
 * and each is cancelled.  Then one that rank 1 has matched already (its
 * receive posted, a barrier between): cancelling it comes too late, and
 * the data arrives whole.  Rank 1's unexpected queue is left empty: a
 * receive of any tag from rank 0 after the cancellations would block, so
 * rank 1 probes for them and finds none.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BIG (256 * 1024)

static int check_cancelled(MPI_Request *r, int want, const char *what)
{
	MPI_Status st;
	int flag;

	MPI_Wait(r, &st);
	MPI_Test_cancelled(&st, &flag);
	printf("rank 0: %s %s\n", what, flag ? "cancelled" : "not cancelled");
	return flag != want;
}

int main(int argc, char **argv)
{
	int rank, errs = 0, flag;
	char *big = malloc(BIG), *got = malloc(BIG);
	MPI_Request r, rr;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (int i = 0; i < BIG; i++)
		big[i] = (char)(i * 7 + 3);
	if (rank == 0) {
		MPI_Isend(big, BIG, MPI_CHAR, 1, 40, MPI_COMM_WORLD, &r);
		MPI_Cancel(&r);
		errs += check_cancelled(&r, 1, "a rendezvous send nobody receives");
		MPI_Issend(big, 16, MPI_CHAR, 1, 41, MPI_COMM_WORLD, &r);
		MPI_Cancel(&r);
		errs += check_cancelled(&r, 1, "a synchronous send nobody receives");
		MPI_Issend(big, 16, MPI_CHAR, 0, 42, MPI_COMM_WORLD, &r);
		MPI_Cancel(&r);
		errs += check_cancelled(&r, 1, "a synchronous send to itself");
		MPI_Iprobe(0, 42, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
		if (flag) {
			printf("rank 0: the cancelled send to itself is still there\n");
			errs++;
		}
		MPI_Barrier(MPI_COMM_WORLD);		/* rank 1 has posted its receive of tag 43 */
		MPI_Isend(big, BIG, MPI_CHAR, 1, 43, MPI_COMM_WORLD, &r);
		MPI_Barrier(MPI_COMM_WORLD);		/* and received it */
		MPI_Cancel(&r);
		errs += check_cancelled(&r, 0, "a send already received");
	} else if (rank == 1) {
		MPI_Irecv(got, BIG, MPI_CHAR, 0, 43, MPI_COMM_WORLD, &rr);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Wait(&rr, MPI_STATUS_IGNORE);
		MPI_Barrier(MPI_COMM_WORLD);
		if (memcmp(got, big, BIG) != 0) {
			printf("rank 1: the message not cancelled arrived wrong\n");
			errs++;
		}
		MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
		if (flag) {
			printf("rank 1: a cancelled message is still waiting to be received\n");
			errs++;
		}
	} else {
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Barrier(MPI_COMM_WORLD);
	}
	MPI_Allreduce(MPI_IN_PLACE, &errs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0 && errs == 0)
		printf(" No Errors\n");
	MPI_Finalize();
	return errs ? 1 : 0;
}
