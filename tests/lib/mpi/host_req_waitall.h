/*
 * mpii_req_waitall as lib/mpi/pt2pt.c has it, over the including fake's
 * own mpii_req_wait (host_mpi.c, host_mpi_comm.c): each request waited
 * for and its slot cleared; the first error, or MPI_SUCCESS.  Included
 * once per program, after mpii_req_wait.
 */
#ifndef TESTS_LIB_MPI_HOST_REQ_WAITALL_H
#define TESTS_LIB_MPI_HOST_REQ_WAITALL_H

#include "lib/mpi/mpiimpl.h"

int mpii_req_waitall(int n, struct mpi_req **r)
{
	int err = MPI_SUCCESS;

	for (int i = 0; i < n; i++)
		if (r[i]) {
			int e = mpii_req_wait(r[i], MPI_STATUS_IGNORE);
			r[i] = NULL;
			if (!err)
				err = e;
		}
	return err;
}

#endif
