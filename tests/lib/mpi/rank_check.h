/*
 * Checks made inside a rank's process (host_mpi_run, host_mpi_comm.h):
 * a failed CHECK counts in errs and is told on stderr with the rank, the
 * file and the line, and the rank goes on.
 */
#ifndef TESTS_LIB_MPI_RANK_CHECK_H
#define TESTS_LIB_MPI_RANK_CHECK_H

#include <stdio.h>

#include "lib/mpi/mpiimpl.h"

static int errs;

#define CHECK(cond)                                                                                   \
	do {                                                                                          \
		if (!(cond)) {                                                                        \
			errs++;                                                                       \
			fprintf(stderr, "rank %d: %s:%d: %s\n", mpii_world_rank, __FILE__, __LINE__, #cond); \
		}                                                                                     \
	} while (0)

#endif
