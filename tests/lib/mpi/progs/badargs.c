/*
 * Bad arguments give the error class MPICH gives, through the
 * communicator's error handler, with a message naming the call.  With
 * MPI_ERRORS_RETURN each call returns its code; then, with the default
 * MPI_ERRORS_ARE_FATAL, rank 1 sends to a rank that does not exist and the
 * job ends with a message naming MPI_Send (tests/lib/mpi/cases.py).
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int errs;

static void expect(const char *what, int code, int cls)
{
	int got = -1, len;
	char msg[MPI_MAX_ERROR_STRING];

	MPI_Error_class(code, &got);
	MPI_Error_string(code, msg, &len);
	if (got != cls) {
		printf("%s: error class %d, want %d (%s)\n", what, got, cls, msg);
		errs++;
	} else {
		printf("%s: %s\n", what, msg);
	}
}

int main(int argc, char **argv)
{
	int rank, size, buf[4] = { 0 };
	char name[MPI_MAX_ERROR_STRING];
	int len;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	if (rank == 0) {
		expect("rank", MPI_Send(buf, 1, MPI_INT, size, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
		expect("tag", MPI_Send(buf, 1, MPI_INT, 0, -5, MPI_COMM_WORLD), MPI_ERR_TAG);
		expect("count", MPI_Send(buf, -1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
		expect("datatype", MPI_Send(buf, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
		expect("communicator", MPI_Send(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM);
		expect("buffer", MPI_Send(NULL, 1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
		expect("root", MPI_Bcast(buf, 1, MPI_INT, size + 3, MPI_COMM_WORLD), MPI_ERR_ROOT);
		expect("op", MPI_Reduce(buf, buf + 1, 1, MPI_INT, MPI_OP_NULL, 0, MPI_COMM_WORLD), MPI_ERR_OP);
		int code = MPI_Send(buf, 1, MPI_INT, size, 0, MPI_COMM_WORLD);
		MPI_Error_string(code, name, &len);
		if (!strstr(name, "MPI_Send")) {
			printf("the message does not name the call: %s\n", name);
			errs++;
		}
		printf(errs ? " Found %d errors\n" : " No Errors\n", errs);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (argc > 1 && strcmp(argv[1], "fatal") == 0) {
		MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
		if (rank == 1)
			MPI_Send(buf, 1, MPI_INT, size + 1, 0, MPI_COMM_WORLD);
		MPI_Barrier(MPI_COMM_WORLD);
	}
	MPI_Finalize();
	return errs;
}
