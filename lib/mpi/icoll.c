/*
 * The nonblocking collectives (MPI-3.1 §5.12).
 *
 * A call checks its arguments as its blocking twin does, takes the
 * instance's sequence number (coll.h: its tags), and queues a job; a
 * worker thread runs the blocking algorithm and completes the job's
 * request, which the program waits for like any other.  So a collective
 * progresses whatever the program does meanwhile (point to point, other
 * collectives, in any order on each rank), as MPI-3.1 §5.12 asks.
 *
 * The job holds what the program may reuse or free once the call
 * returns: copies of the count, displacement and type arrays, and
 * references to the communicator, the datatypes and the operation.  The
 * buffers stay the program's, untouchable until the request completes.
 *
 * Workers: started when a job finds none idle, at most MAX_WORKERS of
 * them (64 KiB of stack each), kept afterwards.  Jobs start in the order
 * they were queued, so while every rank starts its collectives in one
 * order (the usual program, MPICH's nonblocking3) the oldest unfinished
 * collective always runs on every rank, and all finish.  A program with
 * more than MAX_WORKERS collectives pending at once, started in a
 * different order on different ranks (allowed across communicators),
 * could wait for a worker forever; no program of MPICH's suite comes
 * near that.
 */
#include <stdlib.h>
#include <string.h>

#include "kernel/sync.h"
#include "kernel/thread.h"
#include "lib/mpi/coll.h"

#define MAX_WORKERS 32
#define WORKER_STACK (64 * 1024)

enum kind {
	J_BARRIER,
	J_BCAST,
	J_GATHER,
	J_GATHERV,
	J_SCATTER,
	J_SCATTERV,
	J_ALLGATHER,
	J_ALLGATHERV,
	J_ALLTOALL,
	J_ALLTOALLV,
	J_ALLTOALLW,
	J_REDUCE,
	J_ALLREDUCE,
	J_REDUCE_SCATTER,
	J_REDUCE_SCATTER_BLOCK,
	J_SCAN,
	J_EXSCAN,
};

struct job {
	struct job *next;
	enum kind kind;
	struct mpi_req *req;
	struct mpi_comm *c;
	uint32_t seq;
	const void *sbuf;
	void *rbuf;
	int scount, rcount, root;
	MPI_Datatype stype, rtype;
	MPI_Op op;
	/* In tail: the copied arrays (NULL where the call gave none that counts here). */
	int *scounts, *sdispls, *rcounts, *rdispls;
	MPI_Datatype *stypes, *rtypes;
	MPI_Datatype *held;		/* the datatypes referenced, to let go of */
	int nheld, used;
	int keep;			/* a persistent collective's: run again at each start */
	int tail[];			/* ints and MPI_Datatypes (both int) */
};

/* The queue and the workers of a node: under mpii_lock. */
struct pool {
	struct job *head, **tail;
	int nworkers, nidle;
	struct sem wake;		/* posted for each idle worker woken */
};

#ifndef HOST_TEST
static struct pool node_pool = { NULL, &node_pool.head, 0, 0, { 0, WAITQ_INIT } };

static struct pool *pool_here(void)
{
	return &node_pool;
}
#else
/* The host tests run the ranks as threads of one process: a pool each, as each node has. */
static __thread struct pool *rank_pool;

static struct pool *pool_here(void)
{
	if (!rank_pool && (rank_pool = calloc(1, sizeof *rank_pool)))
		rank_pool->tail = &rank_pool->head;
	return rank_pool;
}
#endif

/* Set while MPI_<coll>_init builds its job through the nonblocking call (make_persistent). */
static __thread const char *init_fn;

/* --- jobs ------------------------------------------------------------------------------------- */

/* A job for c with room for nints ints of arrays and ntypes datatype references. */
static struct job *job_new(struct mpi_comm *c, enum kind kind, int nints, int ntypes)
{
	struct job *j = calloc(1, sizeof *j + (size_t)(nints + ntypes) * sizeof(int));

	if (!j)
		return NULL;
	j->kind = kind;
	j->c = c;
	j->op = MPI_OP_NULL;
	j->held = j->tail;
	j->used = ntypes;
	mpii_comm_ref(c);
	return j;
}

/* Keep a copy of n ints (NULL stays NULL). */
static int *keep_ints(struct job *j, const int *a, int n)
{
	if (!a)
		return NULL;
	int *p = j->tail + j->used;
	memcpy(p, a, (size_t)n * sizeof *p);
	j->used += n;
	return p;
}

/* Hold a datatype the job will use (MPI_DATATYPE_NULL and the like stay unheld). */
static MPI_Datatype hold(struct job *j, MPI_Datatype dt)
{
	if (mpii_type_valid(dt)) {
		mpii_type_ref(dt);
		j->held[j->nheld++] = dt;
	}
	return dt;
}

static MPI_Datatype *hold_types(struct job *j, const MPI_Datatype *a, int n)
{
	MPI_Datatype *p = keep_ints(j, a, n);

	for (int i = 0; p && i < n; i++)
		hold(j, p[i]);
	return p;
}

static MPI_Op hold_op(struct job *j, MPI_Op op)
{
	mpii_op_ref(op);
	return j->op = op;
}

static void job_free(struct job *j)
{
	for (int i = 0; i < j->nheld; i++)
		mpii_type_unref(j->held[i]);
	if (j->op != MPI_OP_NULL)
		mpii_op_unref(j->op);
	mpii_comm_unref(j->c);
	free(j);
}

static int run(struct job *j)
{
	struct mpi_comm *c = j->c;

	switch (j->kind) {
	case J_BARRIER:
		return mpii_coll_barrier(c, j->seq);
	case J_BCAST:
		return mpii_coll_bcast(j->rbuf, j->rcount, j->rtype, j->root, c, j->seq);
	case J_GATHER:
		return mpii_coll_gather(j->sbuf, j->scount, j->stype, j->rbuf, j->rcount, j->rtype, j->root, c,
					j->seq);
	case J_GATHERV:
		return mpii_coll_gatherv(j->sbuf, j->scount, j->stype, j->rbuf, j->rcounts, j->rdispls, j->rtype,
					 j->root, c, j->seq);
	case J_SCATTER:
		return mpii_coll_scatter(j->sbuf, j->scount, j->stype, j->rbuf, j->rcount, j->rtype, j->root, c,
					 j->seq);
	case J_SCATTERV:
		return mpii_coll_scatterv(j->sbuf, j->scounts, j->sdispls, j->stype, j->rbuf, j->rcount, j->rtype,
					  j->root, c, j->seq);
	case J_ALLGATHER:
		return mpii_coll_allgather(j->sbuf, j->scount, j->stype, j->rbuf, j->rcount, j->rtype, c, j->seq);
	case J_ALLGATHERV:
		return mpii_coll_allgatherv(j->sbuf, j->scount, j->stype, j->rbuf, j->rcounts, j->rdispls, j->rtype, c,
					    j->seq);
	case J_ALLTOALL:
		return mpii_coll_alltoall(j->sbuf, j->scount, j->stype, j->rbuf, j->rcount, j->rtype, c, j->seq);
	case J_ALLTOALLV:
		return mpii_coll_alltoallv(j->sbuf, j->scounts, j->sdispls, j->stype, j->rbuf, j->rcounts, j->rdispls,
					   j->rtype, c, j->seq);
	case J_ALLTOALLW:
		return mpii_coll_alltoallw(j->sbuf, j->scounts, j->sdispls, j->stypes, j->rbuf, j->rcounts,
					   j->rdispls, j->rtypes, c, j->seq);
	case J_REDUCE:
		return mpii_coll_reduce(j->sbuf, j->rbuf, j->rcount, j->rtype, j->op, j->root, c, j->seq);
	case J_ALLREDUCE:
		return mpii_coll_allreduce(j->sbuf, j->rbuf, j->rcount, j->rtype, j->op, c, j->seq);
	case J_REDUCE_SCATTER:
		return mpii_coll_reduce_scatter(j->sbuf, j->rbuf, j->rcounts, j->rtype, j->op, c, j->seq);
	case J_REDUCE_SCATTER_BLOCK:
		return mpii_coll_reduce_scatter_block(j->sbuf, j->rbuf, j->rcount, j->rtype, j->op, c, j->seq);
	case J_SCAN:
		return mpii_coll_scan(j->sbuf, j->rbuf, j->rcount, j->rtype, j->op, c, j->seq);
	case J_EXSCAN:
		return mpii_coll_exscan(j->sbuf, j->rbuf, j->rcount, j->rtype, j->op, c, j->seq);
	}
	return MPI_ERR_INTERN;
}

/* --- the workers ------------------------------------------------------------------------------ */

/* The oldest job, waiting for one if none is queued. */
static struct job *next_job(struct pool *p)
{
	struct job *j;

	mpii_lock();
	while (!(j = p->head)) {
		p->nidle++;
		mpii_unlock();
		sem_wait(&p->wake);
		mpii_lock();
	}
	p->head = j->next;
	if (!p->head)
		p->tail = &p->head;
	mpii_unlock();
	return j;
}

static void *worker(void *arg)
{
	for (;;) {
		struct job *j = next_job(arg);
		/* Read first: a persistent request, and its job, may be released at its completion. */
		int keep = j->keep;
		mpii_req_complete(j->req, run(j));
		/* After the completion: the request may still name the communicator. */
		if (!keep)
			job_free(j);
	}
	return NULL;
}

static int no_mem(struct mpi_comm *c, const char *fn)
{
	return mpii_err(c, MPI_ERR_NO_MEM, fn, "no memory for a nonblocking collective");
}

/*
 * Queue j and hand the program its request: an idle worker is woken,
 * else a new one started.  Only when no worker exists and none can be
 * started does the call fail.
 */
static void enqueue(struct job *j);
static int make_persistent(struct job *j, MPI_Request *request, const char *fn);

static int start(struct job *j, MPI_Request *request, const char *fn)
{
	struct mpi_comm *c = j->c;

	if (init_fn)
		return make_persistent(j, request, fn);
	if (!(j->req = mpii_req_generic(c))) {
		job_free(j);
		return no_mem(c, fn);
	}
	if ((*request = mpii_req_handle(j->req)) == MPI_REQUEST_NULL) {
		/* Without a handle nothing will wait for it: it stays, done (a few bytes, on no memory). */
		mpii_req_complete(j->req, MPI_ERR_NO_MEM);
		job_free(j);
		return no_mem(c, fn);
	}
	enqueue(j);
	return MPI_SUCCESS;
}

/*
 * j's instance of its collective begins: its sequence number (a
 * persistent one's is its init's), and a worker to run it.
 */
static void enqueue(struct job *j)
{
	struct pool *p = pool_here();
	int spawn = 0, wakeup = 0;

	if (!j->keep)
		j->seq = mpii_coll_seq(j->c);
	mpii_lock();
	*p->tail = j;
	p->tail = &j->next;
	if (p->nidle > 0) {
		p->nidle--;
		wakeup = 1;
	} else if (p->nworkers < MAX_WORKERS) {
		p->nworkers++;
		spawn = 1;
	}
	mpii_unlock();
	if (wakeup)
		sem_post(&p->wake);
	if (spawn && !thread_create("mpi-coll", worker, p, PRIO_NORMAL, WORKER_STACK)) {
		mpii_lock();
		p->nworkers--;
		/* The workers there are will run it; with none, nothing would. */
		int stuck = p->nworkers == 0;
		mpii_unlock();
		if (stuck)
			mpii_abort(1, "MPI: cannot start a thread for a nonblocking collective");
	}
}

/*
 * Persistent collectives (MPI-4.0 §6.13).  MPI_<coll>_init checks its
 * arguments and builds its job as the nonblocking call does (init_fn set:
 * start() comes here instead of queueing it) and keeps the job in an
 * inactive persistent request.  Its sequence number (its tags) is taken
 * at the init, in the order every rank calls the inits (§6.13: they
 * match in that order, whatever order the starts come in), and serves
 * each instance: one instance at a time, and the point to point under it
 * keeps each pair's messages in order.
 */
static int make_persistent(struct job *j, MPI_Request *request, const char *fn)
{
	struct mpi_comm *c = j->c;
	struct mpi_req *r = mpii_req_pcoll(c, j);

	if (!r) {
		job_free(j);
		return no_mem(c, fn);
	}
	j->req = r;
	j->keep = 1;
	j->seq = mpii_coll_seq(c);
	*request = mpii_req_handle(r);
	return MPI_SUCCESS;
}

void mpii_pcoll_start(void *job)
{
	enqueue(job);
}

void mpii_pcoll_free(void *job)
{
	job_free(job);
}

/* --- the calls ---------------------------------------------------------------------------------- */

static int need_request(struct mpi_comm *c, MPI_Request *request, const char *fn)
{
	return request ? MPI_SUCCESS : mpii_err(c, MPI_ERR_ARG, fn, "request is NULL");
}

int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
	const char *fn = init_fn ? init_fn : "MPI_Ibarrier";
	struct mpi_comm *c;
	struct job *j;
	int err;

	if ((err = mpii_check_comm(comm, fn, &c)) || (err = need_request(c, request, fn)))
		return err;
	if (!(j = job_new(c, J_BARRIER, 0, 0)))
		return no_mem(c, fn);
	return start(j, request, fn);
}

int MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request *request)
{
	const char *fn = init_fn ? init_fn : "MPI_Ibcast";
	struct mpi_comm *c;
	struct job *j;
	int err;

	if ((err = mpii_check_comm(comm, fn, &c)) || (err = mpii_coll_check_bcast(c, buffer, count, datatype, root, fn)) ||
	    (err = need_request(c, request, fn)))
		return err;
	if (!(j = job_new(c, J_BCAST, 0, 1)))
		return no_mem(c, fn);
	j->rbuf = buffer;
	j->rcount = count;
	j->rtype = hold(j, datatype);
	j->root = root;
	return start(j, request, fn);
}

/* The common part of the rooted and the all-to-all calls: buffers, counts, types. */
static void set_sides(struct job *j, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
		      MPI_Datatype rtype)
{
	j->sbuf = sbuf;
	j->scount = scount;
	j->stype = hold(j, stype);
	j->rbuf = rbuf;
	j->rcount = rcount;
	j->rtype = hold(j, rtype);
}

int MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
		MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
	const char *fn = init_fn ? init_fn : "MPI_Igather";
	struct mpi_comm *c;
	struct job *j;
	int err;

	if ((err = mpii_check_comm(comm, fn, &c)) ||
	    (err = mpii_coll_check_gather(c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, fn)) ||
	    (err = need_request(c, request, fn)))
		return err;
	if (!(j = job_new(c, J_GATHER, 0, 2)))
		return no_mem(c, fn);
	set_sides(j, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
	j->root = root;
	return start(j, request, fn);
}

int MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
		 const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
	const char *fn = init_fn ? init_fn : "MPI_Igatherv";
	struct mpi_comm *c;
	struct job *j;
	int err;

	if ((err = mpii_check_comm(comm, fn, &c)) ||
	    (err = mpii_coll_check_gatherv(c, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
					   root, fn)) ||
	    (err = need_request(c, request, fn)))
		return err;
	int m = mpii_comm_peers(c), here = mpii_coll_is_root(c, root);
	if (!(j = job_new(c, J_GATHERV, here ? 2 * m : 0, 2)))
		return no_mem(c, fn);
	set_sides(j, sendbuf, sendcount, sendtype, recvbuf, 0, recvtype);
	if (here) {
		j->rcounts = keep_ints(j, recvcounts, m);
		j->rdispls = keep_ints(j, displs, m);
	}
	j->root = root;
	return start(j, request, fn);
}

int MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
		 MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
	const char *fn = init_fn ? init_fn : "MPI_Iscatter";
	struct mpi_comm *c;
	struct job *j;
	int err;

	if ((err = mpii_check_comm(comm, fn, &c)) ||
	    (err = mpii_coll_check_scatter(c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, fn)) ||
	    (err = need_request(c, request, fn)))
		return err;
	if (!(j = job_new(c, J_SCATTER, 0, 2)))
		return no_mem(c, fn);
	set_sides(j, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
	j->root = root;
	return start(j, request, fn);
}

int MPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
		  void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
	const char *fn = init_fn ? init_fn : "MPI_Iscatterv";
	struct mpi_comm *c;
	struct job *j;
	int err;

	if ((err = mpii_check_comm(comm, fn, &c)) ||
	    (err = mpii_coll_check_scatterv(c, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
					    root, fn)) ||
	    (err = need_request(c, request, fn)))
		return err;
	int m = mpii_comm_peers(c), here = mpii_coll_is_root(c, root);
	if (!(j = job_new(c, J_SCATTERV, here ? 2 * m : 0, 2)))
		return no_mem(c, fn);
	set_sides(j, sendbuf, 0, sendtype, recvbuf, recvcount, recvtype);
	if (here) {
		j->scounts = keep_ints(j, sendcounts, m);
		j->sdispls = keep_ints(j, displs, m);
	}
	j->root = root;
	return start(j, request, fn);
}

int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
		   MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	const char *fn = init_fn ? init_fn : "MPI_Iallgather";
	struct mpi_comm *c;
	struct job *j;
	int err;

	if ((err = mpii_check_comm(comm, fn, &c)) ||
	    (err = mpii_coll_check_allgather(c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, fn)) ||
	    (err = need_request(c, request, fn)))
		return err;
	if (!(j = job_new(c, J_ALLGATHER, 0, 2)))
		return no_mem(c, fn);
	set_sides(j, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
	return start(j, request, fn);
}

int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		    const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
		    MPI_Request *request)
{
	const char *fn = init_fn ? init_fn : "MPI_Iallgatherv";
	struct mpi_comm *c;
	struct job *j;
	int err;

	if ((err = mpii_check_comm(comm, fn, &c)) ||
	    (err = mpii_coll_check_allgatherv(c, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
					      fn)) ||
	    (err = need_request(c, request, fn)))
		return err;
	int m = mpii_comm_peers(c);
	if (!(j = job_new(c, J_ALLGATHERV, 2 * m, 2)))
		return no_mem(c, fn);
	set_sides(j, sendbuf, sendcount, sendtype, recvbuf, 0, recvtype);
	j->rcounts = keep_ints(j, recvcounts, m);
	j->rdispls = keep_ints(j, displs, m);
	return start(j, request, fn);
}

int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
		  MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	const char *fn = init_fn ? init_fn : "MPI_Ialltoall";
	struct mpi_comm *c;
	struct job *j;
	int err;

	if ((err = mpii_check_comm(comm, fn, &c)) ||
	    (err = mpii_coll_check_alltoall(c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, fn)) ||
	    (err = need_request(c, request, fn)))
		return err;
	if (!(j = job_new(c, J_ALLTOALL, 0, 2)))
		return no_mem(c, fn);
	set_sides(j, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
	return start(j, request, fn);
}

int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
		   void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
		   MPI_Request *request)
{
	const char *fn = init_fn ? init_fn : "MPI_Ialltoallv";
	struct mpi_comm *c;
	struct job *j;
	int err;

	if ((err = mpii_check_comm(comm, fn, &c)) ||
	    (err = mpii_coll_check_alltoallv(c, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
					     recvtype, fn)) ||
	    (err = need_request(c, request, fn)))
		return err;
	int m = mpii_comm_peers(c), in_place = sendbuf == MPI_IN_PLACE;
	if (!(j = job_new(c, J_ALLTOALLV, (in_place ? 2 : 4) * m, 2)))
		return no_mem(c, fn);
	set_sides(j, sendbuf, 0, sendtype, recvbuf, 0, recvtype);
	if (!in_place) {
		j->scounts = keep_ints(j, sendcounts, m);
		j->sdispls = keep_ints(j, sdispls, m);
	}
	j->rcounts = keep_ints(j, recvcounts, m);
	j->rdispls = keep_ints(j, rdispls, m);
	return start(j, request, fn);
}

int MPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
		   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[],
		   const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request)
{
	const char *fn = init_fn ? init_fn : "MPI_Ialltoallw";
	struct mpi_comm *c;
	struct job *j;
	int err;

	if ((err = mpii_check_comm(comm, fn, &c)) ||
	    (err = mpii_coll_check_alltoallw(c, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
					     recvtypes, fn)) ||
	    (err = need_request(c, request, fn)))
		return err;
	int m = mpii_comm_peers(c), sides = sendbuf == MPI_IN_PLACE ? 1 : 2;
	if (!(j = job_new(c, J_ALLTOALLW, 3 * sides * m, sides * m)))
		return no_mem(c, fn);
	j->sbuf = sendbuf;
	j->rbuf = recvbuf;
	if (sides == 2) {
		j->scounts = keep_ints(j, sendcounts, m);
		j->sdispls = keep_ints(j, sdispls, m);
		j->stypes = hold_types(j, sendtypes, m);
	}
	j->rcounts = keep_ints(j, recvcounts, m);
	j->rdispls = keep_ints(j, rdispls, m);
	j->rtypes = hold_types(j, recvtypes, m);
	return start(j, request, fn);
}

/* The reductions: one buffer pair, one count, one type, one op. */
static struct job *reduction(struct mpi_comm *c, enum kind kind, const void *sbuf, void *rbuf, int count,
			     MPI_Datatype dt, MPI_Op op, int nints)
{
	struct job *j = job_new(c, kind, nints, 1);

	if (!j)
		return NULL;
	j->sbuf = sbuf;
	j->rbuf = rbuf;
	j->rcount = count;
	j->rtype = hold(j, dt);
	hold_op(j, op);
	return j;
}

int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
		MPI_Comm comm, MPI_Request *request)
{
	const char *fn = init_fn ? init_fn : "MPI_Ireduce";
	struct mpi_comm *c;
	struct job *j;
	int err;

	if ((err = mpii_check_comm(comm, fn, &c)) ||
	    (err = mpii_coll_check_reduce(c, sendbuf, recvbuf, count, datatype, op, root, fn)) ||
	    (err = need_request(c, request, fn)))
		return err;
	/* An intercommunicator's MPI_PROC_NULL ranks have no op to hold. */
	if (mpii_comm_inter(c) && root == MPI_PROC_NULL)
		op = MPI_OP_NULL;
	if (!(j = reduction(c, J_REDUCE, sendbuf, recvbuf, count, datatype, op, 0)))
		return no_mem(c, fn);
	j->root = root;
	return start(j, request, fn);
}

int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
		   MPI_Request *request)
{
	const char *fn = init_fn ? init_fn : "MPI_Iallreduce";
	struct mpi_comm *c;
	struct job *j;
	int err;

	if ((err = mpii_check_comm(comm, fn, &c)) ||
	    (err = mpii_coll_check_allreduce(c, sendbuf, recvbuf, count, datatype, op, fn)) ||
	    (err = need_request(c, request, fn)))
		return err;
	if (!(j = reduction(c, J_ALLREDUCE, sendbuf, recvbuf, count, datatype, op, 0)))
		return no_mem(c, fn);
	return start(j, request, fn);
}

int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
			MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
	const char *fn = init_fn ? init_fn : "MPI_Ireduce_scatter";
	struct mpi_comm *c;
	struct job *j;
	int err;

	if ((err = mpii_check_comm(comm, fn, &c)) ||
	    (err = mpii_coll_check_reduce_scatter(c, sendbuf, recvbuf, recvcounts, datatype, op, fn)) ||
	    (err = need_request(c, request, fn)))
		return err;
	if (!(j = reduction(c, J_REDUCE_SCATTER, sendbuf, recvbuf, 0, datatype, op, c->size)))
		return no_mem(c, fn);
	j->rcounts = keep_ints(j, recvcounts, c->size);
	return start(j, request, fn);
}

int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
			      MPI_Comm comm, MPI_Request *request)
{
	const char *fn = init_fn ? init_fn : "MPI_Ireduce_scatter_block";
	struct mpi_comm *c;
	struct job *j;
	int err;

	if ((err = mpii_check_comm(comm, fn, &c)) ||
	    (err = mpii_coll_check_reduce_scatter_block(c, sendbuf, recvbuf, recvcount, datatype, op, fn)) ||
	    (err = need_request(c, request, fn)))
		return err;
	if (!(j = reduction(c, J_REDUCE_SCATTER_BLOCK, sendbuf, recvbuf, recvcount, datatype, op, 0)))
		return no_mem(c, fn);
	return start(j, request, fn);
}

/* MPI_Iscan and MPI_Iexscan: the same checks, the same job, another kind. */
static int scan_job(enum kind kind, const char *name, const void *sendbuf, void *recvbuf, int count,
		    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
	const char *fn = init_fn ? init_fn : name;
	struct mpi_comm *c;
	struct job *j;
	int err;

	if ((err = mpii_check_comm(comm, fn, &c)) ||
	    (err = mpii_coll_check_scan(c, sendbuf, recvbuf, count, datatype, op, fn)) ||
	    (err = need_request(c, request, fn)))
		return err;
	if (!(j = reduction(c, kind, sendbuf, recvbuf, count, datatype, op, 0)))
		return no_mem(c, fn);
	return start(j, request, fn);
}

int MPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
	      MPI_Request *request)
{
	return scan_job(J_SCAN, "MPI_Iscan", sendbuf, recvbuf, count, datatype, op, comm, request);
}

int MPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
		MPI_Request *request)
{
	return scan_job(J_EXSCAN, "MPI_Iexscan", sendbuf, recvbuf, count, datatype, op, comm, request);
}

/* --- the persistent calls: each the nonblocking call, made with init_fn set ----------------------- */

static int init_done(int e)
{
	init_fn = NULL;
	return e;
}

#define PERSISTENT(name, params, call)                                                      \
	int MPI_##name##_init params                                                          \
	{                                                                                     \
		(void)info;	/* no hint changes what this library does */                      \
		init_fn = "MPI_" #name "_init";                                                 \
		return init_done(call);                                                         \
	}

PERSISTENT(Barrier, (MPI_Comm comm, MPI_Info info, MPI_Request *request), MPI_Ibarrier(comm, request))
PERSISTENT(Bcast, (void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Info info,
	MPI_Request *request), MPI_Ibcast(buffer, count, datatype, root, comm, request))
PERSISTENT(Gather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
	MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request),
	MPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request))
PERSISTENT(Gatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int
	recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
	MPI_Request *request), MPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
	recvtype, root, comm, request))
PERSISTENT(Scatter, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
	MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request),
	MPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request))
PERSISTENT(Scatterv, (const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
	void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
	MPI_Request *request), MPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
	recvtype, root, comm, request))
PERSISTENT(Allgather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int
	recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request),
	MPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request))
PERSISTENT(Allgatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int
	recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request
	*request), MPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
	request))
PERSISTENT(Alltoall, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
	MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request), MPI_Ialltoall(sendbuf,
	sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request))
PERSISTENT(Alltoallv, (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype
	sendtype, void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm
	comm, MPI_Info info, MPI_Request *request), MPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype,
	recvbuf, recvcounts, rdispls, recvtype, comm, request))
PERSISTENT(Alltoallw, (const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype
	sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype
	recvtypes[], MPI_Comm comm, MPI_Info info, MPI_Request *request), MPI_Ialltoallw(sendbuf, sendcounts,
	sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, request))
PERSISTENT(Reduce, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
	MPI_Comm comm, MPI_Info info, MPI_Request *request), MPI_Ireduce(sendbuf, recvbuf, count, datatype,
	op, root, comm, request))
PERSISTENT(Allreduce, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
	MPI_Comm comm, MPI_Info info, MPI_Request *request), MPI_Iallreduce(sendbuf, recvbuf, count, datatype,
	op, comm, request))
PERSISTENT(Reduce_scatter, (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
	MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request), MPI_Ireduce_scatter(sendbuf, recvbuf,
	recvcounts, datatype, op, comm, request))
PERSISTENT(Reduce_scatter_block, (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype,
	MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request), MPI_Ireduce_scatter_block(sendbuf,
	recvbuf, recvcount, datatype, op, comm, request))
PERSISTENT(Scan, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm
	comm, MPI_Info info, MPI_Request *request), MPI_Iscan(sendbuf, recvbuf, count, datatype, op, comm,
	request))
PERSISTENT(Exscan, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm
	comm, MPI_Info info, MPI_Request *request), MPI_Iexscan(sendbuf, recvbuf, count, datatype, op, comm,
	request))
