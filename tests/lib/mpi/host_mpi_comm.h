/*
 * The host's stand-in for the rest of lib/mpi and the kernel under the
 * communicator, group, error, attribute, info and topology files
 * (host_mpi_comm.c).
 */
#ifndef TESTS_LIB_MPI_HOST_MPI_COMM_H
#define TESTS_LIB_MPI_HOST_MPI_COMM_H

#include <setjmp.h>

#include "lib/mpi/mpi.h"

/* Make this process rank of a world of size and set the library up: MPI_SUCCESS or a class. */
int host_mpi_init(int rank, int size);
/* Run fn as every rank of a world of n forked processes; how many failed (fn returned nonzero). */
int host_mpi_run(int n, int (*fn)(void));
/* Wait for a request of mpii_req_generic's; its error. */
int host_req_wait(MPI_Request *h);
/* mpii_abort jumps here when set (code in host_abort_code), else the process exits. */
extern jmp_buf *host_abort_jmp;
extern int host_abort_code;

#endif
