/*
 * One rank (the last) calls exit(3) after MPI_Init; the others wait in a
 * barrier it never joins.  boot/mpirun must exit with status 3 and name
 * the rank (tests/lib/mpi/cases.py).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int rank, size;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (rank == size - 1) {
		printf("rank %d: exit(3)\n", rank);
		exit(3);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
