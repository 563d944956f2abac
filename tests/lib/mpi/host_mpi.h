/*
 * A host stand-in for the parts of lib/mpi/ that op.c, coll.c and
 * icoll.c use but do not own (tests/lib/mpi/host_mpi.c): the ranks of a
 * job as threads of one process, each with its own communicators; a
 * point to point that matches on (context, source, destination, tag)
 * and completes a send only when a receive takes it (every send is a
 * rendezvous, so an algorithm that would deadlock on long messages
 * deadlocks here too, and is reported); datatypes (the predefined ones
 * and vectors of them); the argument checks and error reports; kernel
 * threads and semaphores on pthreads.
 */
#ifndef TESTS_LIB_MPI_HOST_MPI_H
#define TESTS_LIB_MPI_HOST_MPI_H

#include "lib/mpi/mpiimpl.h"

/*
 * Run fn(rank, size, arg) on n ranks, one thread each, with its own
 * MPI_COMM_WORLD and MPI_COMM_SELF; return when every one returned.
 */
void host_run(int n, void (*fn)(int rank, int size, void *arg), void *arg);

/*
 * A communicator of the calling rank: the group of world ranks
 * world[0..n-1] (this rank among them), with the remote group
 * rworld[0..rn-1] for an intercommunicator (rworld NULL: an
 * intracommunicator); point to point context ctx, collectives ctx + 1.
 * Every member calls it with the same arguments.
 */
MPI_Comm host_comm(int n, const int *world, int rn, const int *rworld, uint32_t ctx);

/*
 * A derived type: count blocks of blocklen elements of the predefined
 * type basic, stride elements apart, the first disp bytes into the
 * element.  Make them before host_run.
 */
MPI_Datatype host_type_vector(int count, int blocklen, int stride, MPI_Datatype basic, MPI_Aint disp);

/* Make a derived type say it mixes predefined types (mpii_type_basic: MPI_DATATYPE_NULL). */
void host_type_mixed(MPI_Datatype dt);

/* References taken on derived types (mpii_type_ref) and not yet dropped. */
int host_type_refs(void);

/* Wait for the request behind a handle (mpii_req_generic's), free it: its error. */
int host_wait(MPI_Request h);
/* Has it completed (without waiting)? */
int host_test(MPI_Request h);

/* Errors the calling rank reported (mpii_err, mpii_err_raise) and the class of the last one. */
extern __thread int host_errs, host_last_class;

/* Seconds a rank may wait for a message before the test is declared deadlocked. */
#define HOST_DEADLOCK_S 20

#endif
