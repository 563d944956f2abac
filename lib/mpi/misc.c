/*
 * What the nodes cannot do, said plainly (MPI-3.1 §10.3): a job is the
 * nodes boot/mpirun booted, one rank each, and no node starts a process.
 */
#include "lib/mpi/mpiimpl.h"

int MPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root, MPI_Comm comm,
		   MPI_Comm *intercomm, int array_of_errcodes[])
{
	static const char fn[] = "MPI_Comm_spawn";
	struct mpi_comm *c;
	int err;

	(void)command, (void)argv, (void)info, (void)root;
	if ((err = mpii_check_comm(comm, fn, &c)))
		return err;
	if (intercomm)
		*intercomm = MPI_COMM_NULL;
	int code = mpii_errcode(MPI_ERR_UNSUPPORTED_OPERATION, fn,
				"nodes cannot start processes; a job is the nodes booted by mpirun");
	if (array_of_errcodes != MPI_ERRCODES_IGNORE)
		for (int i = 0; i < maxprocs; i++)
			array_of_errcodes[i] = code;
	return mpii_err_raise(c, code);
}

/* No process was spawned: there is no parent, which is no error (MPI-3.1 §10.3.2). */
int MPI_Comm_get_parent(MPI_Comm *parent)
{
	if (!parent)
		return mpii_err(NULL, MPI_ERR_ARG, "MPI_Comm_get_parent", "Null pointer in parameter parent");
	*parent = MPI_COMM_NULL;
	return MPI_SUCCESS;
}
