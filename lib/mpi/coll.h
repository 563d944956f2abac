/*
 * What coll.c offers icoll.c: the argument checks of every collective and
 * the algorithms behind them, so that a nonblocking collective checks and
 * computes exactly what its blocking twin does.
 *
 * Every instance of a collective on a communicator takes the next number
 * of its sequence (mpii_coll_seq) when it starts, after its arguments
 * passed the checks; its messages carry tags made from that number, so
 * instances running at once (nonblocking ones beside a blocking one)
 * never take each other's messages.  Every rank starts the collectives
 * of a communicator in the same order (MPI-3.1 §5.12), so the numbers
 * agree.
 *
 * The checks: MPI_SUCCESS, or the error, already reported through
 * mpii_err on c (fn names the call).  The algorithms: no checks, no error
 * handler; MPI_SUCCESS or an error code.  Arrays (counts, displacements,
 * types) have one entry per peer: the remote group's size on an
 * intercommunicator.
 */
#ifndef LIB_MPI_COLL_H
#define LIB_MPI_COLL_H

#include <stdint.h>

#include "lib/mpi/mpiimpl.h"

uint32_t mpii_coll_seq(struct mpi_comm *c);

/* A persistent collective's job (its request's, REQ_PCOLL): start an instance; let go of it. */
void mpii_pcoll_start(void *job);
void mpii_pcoll_free(void *job);
/* Is this rank the root of a rooted collective (MPI_ROOT on an intercommunicator)? */
int mpii_coll_is_root(struct mpi_comm *c, int root);

int mpii_coll_check_bcast(struct mpi_comm *c, void *buf, int count, MPI_Datatype dt, int root, const char *fn);
int mpii_coll_check_gather(struct mpi_comm *c, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
			   int rcount, MPI_Datatype rtype, int root, const char *fn);
int mpii_coll_check_gatherv(struct mpi_comm *c, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
			    const int *rcounts, const int *displs, MPI_Datatype rtype, int root, const char *fn);
int mpii_coll_check_scatter(struct mpi_comm *c, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
			    int rcount, MPI_Datatype rtype, int root, const char *fn);
int mpii_coll_check_scatterv(struct mpi_comm *c, const void *sbuf, const int *scounts, const int *displs,
			     MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root, const char *fn);
int mpii_coll_check_allgather(struct mpi_comm *c, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
			      int rcount, MPI_Datatype rtype, const char *fn);
int mpii_coll_check_allgatherv(struct mpi_comm *c, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
			       const int *rcounts, const int *displs, MPI_Datatype rtype, const char *fn);
int mpii_coll_check_alltoall(struct mpi_comm *c, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
			     int rcount, MPI_Datatype rtype, const char *fn);
int mpii_coll_check_alltoallv(struct mpi_comm *c, const void *sbuf, const int *scounts, const int *sdispls,
			      MPI_Datatype stype, void *rbuf, const int *rcounts, const int *rdispls,
			      MPI_Datatype rtype, const char *fn);
int mpii_coll_check_alltoallw(struct mpi_comm *c, const void *sbuf, const int *scounts, const int *sdispls,
			      const MPI_Datatype *stypes, void *rbuf, const int *rcounts, const int *rdispls,
			      const MPI_Datatype *rtypes, const char *fn);
int mpii_coll_check_reduce(struct mpi_comm *c, const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
			   int root, const char *fn);
int mpii_coll_check_allreduce(struct mpi_comm *c, const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
			      MPI_Op op, const char *fn);
int mpii_coll_check_reduce_scatter(struct mpi_comm *c, const void *sbuf, void *rbuf, const int *rcounts,
				   MPI_Datatype dt, MPI_Op op, const char *fn);
int mpii_coll_check_reduce_scatter_block(struct mpi_comm *c, const void *sbuf, void *rbuf, int rcount,
					 MPI_Datatype dt, MPI_Op op, const char *fn);
/* Scan and Exscan (intracommunicators only). */
int mpii_coll_check_scan(struct mpi_comm *c, const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
			 const char *fn);

int mpii_coll_barrier(struct mpi_comm *c, uint32_t seq);
int mpii_coll_bcast(void *buf, int count, MPI_Datatype dt, int root, struct mpi_comm *c, uint32_t seq);
int mpii_coll_gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
		     int root, struct mpi_comm *c, uint32_t seq);
int mpii_coll_gatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int *rcounts,
		      const int *displs, MPI_Datatype rtype, int root, struct mpi_comm *c, uint32_t seq);
int mpii_coll_scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
		      int root, struct mpi_comm *c, uint32_t seq);
int mpii_coll_scatterv(const void *sbuf, const int *scounts, const int *displs, MPI_Datatype stype, void *rbuf,
		       int rcount, MPI_Datatype rtype, int root, struct mpi_comm *c, uint32_t seq);
int mpii_coll_allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
			MPI_Datatype rtype, struct mpi_comm *c, uint32_t seq);
int mpii_coll_allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int *rcounts,
			 const int *displs, MPI_Datatype rtype, struct mpi_comm *c, uint32_t seq);
int mpii_coll_alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
		       struct mpi_comm *c, uint32_t seq);
int mpii_coll_alltoallv(const void *sbuf, const int *scounts, const int *sdispls, MPI_Datatype stype, void *rbuf,
			const int *rcounts, const int *rdispls, MPI_Datatype rtype, struct mpi_comm *c, uint32_t seq);
int mpii_coll_alltoallw(const void *sbuf, const int *scounts, const int *sdispls, const MPI_Datatype *stypes,
			void *rbuf, const int *rcounts, const int *rdispls, const MPI_Datatype *rtypes,
			struct mpi_comm *c, uint32_t seq);
int mpii_coll_reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
		     struct mpi_comm *c, uint32_t seq);
int mpii_coll_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, struct mpi_comm *c,
			uint32_t seq);
int mpii_coll_reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts, MPI_Datatype dt, MPI_Op op,
			     struct mpi_comm *c, uint32_t seq);
int mpii_coll_reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype dt, MPI_Op op,
				   struct mpi_comm *c, uint32_t seq);
int mpii_coll_scan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, struct mpi_comm *c,
		   uint32_t seq);
int mpii_coll_exscan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, struct mpi_comm *c,
		     uint32_t seq);

#endif
