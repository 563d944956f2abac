/*
 * A job that never ends: rank 1 waits in MPI_Recv for a message rank 0
 * never sends, while rank 0 waits for it in MPI_Finalize's barrier.
 * boot/mpirun's --timeout stops it, and names where each rank was (the
 * NMI dump boot/cluster asks for before it kills a node; tests/lib/mpi/cases.py).
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int rank, x;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	printf("rank %d: waiting\n", rank);
	if (rank == 1)
		MPI_Recv(&x, 1, MPI_INT, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Finalize();
	return 0;
}
