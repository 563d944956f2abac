/*
 * A rank that dies makes the others' calls to it fail, never hang: rank 1
 * stops (its node exits) while rank 0 waits in MPI_Recv from it; the
 * fabric declares node 1 gone after its peer timeout and the receive
 * returns MPI_ERR_PROC_FAILED (tests/lib/mpi/cases.py).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int rank, buf, cls;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 1) {
		printf("rank 1: leaving without a word\n");
		exit(0);
	}
	double t0 = MPI_Wtime();
	int e = MPI_Recv(&buf, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Error_class(e, &cls);
	printf("rank 0: MPI_Recv from rank 1 returned class %d after %.1f s\n", cls, MPI_Wtime() - t0);
	if (cls != MPI_ERR_PROC_FAILED && cls != MPI_ERR_OTHER)
		return 1;
	printf(" No Errors\n");
	return 0;
}
