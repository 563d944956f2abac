/*
 * What lib/mpi's errors.c, group.c, comm.c, attr.c, info.c and topo.c need
 * from the rest of the library and the kernel, on the host: locks and
 * threads on pthreads, predefined datatypes and operations only, and a
 * point to point between processes.
 *
 * host_mpi_run(n, fn) forks n processes, rank i of a world of n each, joined
 * by socket pairs; a thread in each reads every message into one queue,
 * which receives match by context, source and tag in arrival order (MPI's
 * non-overtaking rule holds per pair, as on the nodes).  With n = 1 no
 * message ever goes.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernel/sync.h"
#include "kernel/thread.h"
#include "lib/mpi/mpiimpl.h"
#include "tests/lib/mpi/host_mpi_comm.h"

int mpii_world_rank, mpii_world_size;
int mpii_initialized, mpii_finalized;

/* --- the kernel's locks and threads -------------------------------------------------- */

void mutex_init(struct mutex *m, int recursive)
{
	memset(m, 0, sizeof *m);
	m->recursive = recursive;
}

void mutex_lock(struct mutex *m)
{
	while (__atomic_exchange_n(&m->depth, 1, __ATOMIC_ACQUIRE))
		sched_yield();
}

void mutex_unlock(struct mutex *m)
{
	__atomic_store_n(&m->depth, 0, __ATOMIC_RELEASE);
}

/* Windows (win.c) need the nodes' remote memory: none on the host. */
struct mpi_comm *mpii_win_comm(MPI_Win win)
{
	(void)win;
	return NULL;
}

int mpii_win_attr(MPI_Win win, int key, void *val, int *flag)
{
	(void)win, (void)key, (void)val, (void)flag;
	return -1;
}

struct mpi_attr **mpii_win_attrs(MPI_Win win)
{
	(void)win;
	return NULL;
}

static pthread_mutex_t big = PTHREAD_MUTEX_INITIALIZER;

void mpii_lock(void)
{
	pthread_mutex_lock(&big);
}

void mpii_unlock(void)
{
	pthread_mutex_unlock(&big);
}

struct thread *thread_create(const char *name, void *(*fn)(void *), void *arg, int prio, size_t stack_size)
{
	pthread_t *t = malloc(sizeof *t);

	(void)name, (void)prio, (void)stack_size;
	if (!t || pthread_create(t, NULL, fn, arg) != 0) {
		free(t);
		return NULL;
	}
	return (struct thread *)t;
}

void thread_detach(struct thread *t)
{
	pthread_detach(*(pthread_t *)t);
	free(t);
}

/* --- MPI_Abort ------------------------------------------------------------------------ */

jmp_buf *host_abort_jmp;
int host_abort_code;

void mpii_abort(int code, const char *why)
{
	(void)why;
	host_abort_code = code;
	if (host_abort_jmp)
		longjmp(*host_abort_jmp, 1);
	fprintf(stderr, "host: mpii_abort(%d, %s)\n", code, why);
	exit(code ? code : 1);
}

/* --- datatypes and operations: the predefined ones ------------------------------------ */

/* Attribute lists of the first predefined types, for the attribute tests. */
static struct mpi_attr *type_attrs[NOW_MPI_NPREDEF_TYPES];

int mpii_type_valid(MPI_Datatype dt)
{
	return MPII_KIND(dt) == NOW_MPI_KTYPE && MPII_INDEX(dt) >= 1 && MPII_INDEX(dt) < NOW_MPI_NPREDEF_TYPES;
}

int mpii_type_committed(MPI_Datatype dt)
{
	return mpii_type_valid(dt);
}

size_t mpii_type_size(MPI_Datatype dt)
{
	return dt == MPI_BYTE || dt == MPI_CHAR ? 1 : dt == MPI_LB || dt == MPI_UB ? 0 : 4;
}

MPI_Aint mpii_type_true_lb(MPI_Datatype dt)
{
	(void)dt;
	return 0;
}

struct mpi_attr **mpii_type_attrs(MPI_Datatype dt)
{
	return mpii_type_valid(dt) ? &type_attrs[MPII_INDEX(dt)] : NULL;
}

int mpii_op_valid(MPI_Op op)
{
	return MPII_KIND(op) == NOW_MPI_KOP && MPII_INDEX(op) >= 1 && MPII_INDEX(op) < NOW_MPI_NPREDEF_OPS;
}

/* --- generic requests -------------------------------------------------------------------- */

/* A generic request (mpii_req_generic), or a receive to make when waited for (mpii_irecv). */
struct mpi_req {
	MPI_Request handle;
	int done, err;
	int recv;
	void *buf;
	int count, peer, tag, ctxoff;
	MPI_Datatype dt;
	struct mpi_comm *c;
};

static pthread_cond_t req_cv = PTHREAD_COND_INITIALIZER;

struct mpi_req *mpii_req_generic(struct mpi_comm *c)
{
	(void)c;
	return calloc(1, sizeof(struct mpi_req));
}

MPI_Request mpii_req_handle(struct mpi_req *r)
{
	if (!r->handle)
		r->handle = mpii_obj_new(NOW_MPI_KREQ, r);
	return r->handle;
}

void mpii_req_complete(struct mpi_req *r, int err)
{
	pthread_mutex_lock(&big);
	r->err = err;
	r->done = 1;
	pthread_cond_broadcast(&req_cv);
	pthread_mutex_unlock(&big);
}

int host_req_wait(MPI_Request *h)
{
	struct mpi_req *r = mpii_obj_get(NOW_MPI_KREQ, *h);

	if (!r)
		return MPI_ERR_REQUEST;
	pthread_mutex_lock(&big);
	while (!r->done)
		pthread_cond_wait(&req_cv, &big);
	pthread_mutex_unlock(&big);
	int err = r->err;
	mpii_obj_free(NOW_MPI_KREQ, *h);
	free(r);
	*h = MPI_REQUEST_NULL;
	return err;
}

/* --- point to point between the forked processes ----------------------------------------- */

struct hdr {
	uint32_t ctx;
	int32_t src, tag;
	uint32_t len;
};

struct msg {
	struct msg *next;
	struct hdr h;
	char data[];
};

static int *fds;			/* fds[w]: the socket to world rank w */
static pthread_mutex_t *send_locks;
static struct msg *queue, **queue_tail = &queue;
static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t qcv = PTHREAD_COND_INITIALIZER;

static void enqueue(struct msg *m)
{
	pthread_mutex_lock(&qlock);
	m->next = NULL;
	*queue_tail = m;
	queue_tail = &m->next;
	pthread_cond_broadcast(&qcv);
	pthread_mutex_unlock(&qlock);
}

static int read_all(int fd, void *buf, size_t n)
{
	char *p = buf;

	while (n) {
		ssize_t r = read(fd, p, n);
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

static void *reader(void *arg)
{
	int n = mpii_world_size;
	struct pollfd *p = calloc((size_t)n, sizeof *p);

	(void)arg;
	for (int i = 0; i < n; i++) {
		p[i].fd = i == mpii_world_rank ? -1 : fds[i];
		p[i].events = POLLIN;
	}
	for (;;) {
		if (poll(p, (nfds_t)n, -1) < 0)
			continue;
		for (int i = 0; i < n; i++) {
			if (!(p[i].revents & (POLLIN | POLLHUP)))
				continue;
			struct hdr h;
			if (read_all(p[i].fd, &h, sizeof h) < 0) {
				p[i].fd = -1;
				continue;
			}
			struct msg *m = malloc(sizeof *m + h.len);
			m->h = h;
			if (h.len && read_all(p[i].fd, m->data, h.len) < 0) {
				free(m);
				p[i].fd = -1;
				continue;
			}
			enqueue(m);
		}
	}
	return NULL;
}

int mpii_send(const void *buf, int count, MPI_Datatype dt, int peer, int tag, struct mpi_comm *c, int ctxoff)
{
	if (peer == MPI_PROC_NULL)
		return MPI_SUCCESS;
	/* The nodes' receive thread drops an envelope with a negative tag (pt2pt.c's wire_ok). */
	if (tag < 0)
		return MPI_ERR_TAG;
	size_t len = (size_t)count * mpii_type_size(dt);
	int w = mpii_comm_world(c, peer);
	struct hdr h = { c->ctx + (uint32_t)ctxoff, c->rank, tag, (uint32_t)len };
	if (w == mpii_world_rank) {
		struct msg *m = malloc(sizeof *m + len);
		m->h = h;
		memcpy(m->data, buf, len);
		enqueue(m);
		return MPI_SUCCESS;
	}
	pthread_mutex_lock(&send_locks[w]);
	int ok = write(fds[w], &h, sizeof h) == (ssize_t)sizeof h && (len == 0 || write(fds[w], buf, len) == (ssize_t)len);
	pthread_mutex_unlock(&send_locks[w]);
	return ok ? MPI_SUCCESS : MPI_ERR_OTHER;
}

int mpii_recv(void *buf, int count, MPI_Datatype dt, int peer, int tag, struct mpi_comm *c, int ctxoff,
	      MPI_Status *status)
{
	uint32_t ctx = c->ctx + (uint32_t)ctxoff;
	size_t room = (size_t)count * mpii_type_size(dt);
	struct msg *m = NULL;

	if (peer == MPI_PROC_NULL)
		return MPI_SUCCESS;
	pthread_mutex_lock(&qlock);
	for (;;) {
		struct msg **pp;
		for (pp = &queue; *pp; pp = &(*pp)->next) {
			struct hdr *h = &(*pp)->h;
			if (h->ctx == ctx && (peer == MPI_ANY_SOURCE || h->src == peer) &&
			    (tag == MPI_ANY_TAG || h->tag == tag))
				break;
		}
		if (*pp) {
			m = *pp;
			*pp = m->next;
			if (!*pp)
				queue_tail = pp;
			break;
		}
		pthread_cond_wait(&qcv, &qlock);
	}
	pthread_mutex_unlock(&qlock);
	size_t n = m->h.len < room ? m->h.len : room;
	memcpy(buf, m->data, n);
	if (status && status != MPI_STATUS_IGNORE) {
		status->MPI_SOURCE = m->h.src;
		status->MPI_TAG = m->h.tag;
		status->MPI_ERROR = MPI_SUCCESS;
		status->count_hi_and_cancelled = 0;
		mpii_status_set_bytes(status, (MPI_Count)n);
	}
	int trunc = m->h.len > room;
	free(m);
	return trunc ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
}

int mpii_sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf, int rcount,
		  MPI_Datatype rtype, int src, int rtag, struct mpi_comm *c, int ctxoff, MPI_Status *status)
{
	/* Sends never wait here: the peer's reader thread takes everything. */
	int err = mpii_send(sbuf, scount, stype, dest, stag, c, ctxoff);

	return err ? err : mpii_recv(rbuf, rcount, rtype, src, rtag, c, ctxoff, status);
}

/* Sends go at once; a receive happens when waited for, in the order waited, as matching would. */
int mpii_isend(const void *buf, int count, MPI_Datatype dt, int peer, int tag, struct mpi_comm *c, int ctxoff,
	       enum mpii_send_mode mode, struct mpi_req **out)
{
	(void)mode;
	*out = NULL;
	return mpii_send(buf, count, dt, peer, tag, c, ctxoff);
}

int mpii_irecv(void *buf, int count, MPI_Datatype dt, int peer, int tag, struct mpi_comm *c, int ctxoff,
	       struct mpi_req **out)
{
	struct mpi_req *r = calloc(1, sizeof *r);

	*out = r;
	r->recv = 1;
	r->buf = buf;
	r->count = count;
	r->dt = dt;
	r->peer = peer;
	r->tag = tag;
	r->c = c;
	r->ctxoff = ctxoff;
	return MPI_SUCCESS;
}

int mpii_req_wait(struct mpi_req *r, MPI_Status *status)
{
	int err = mpii_recv(r->buf, r->count, r->dt, r->peer, r->tag, r->c, r->ctxoff, status);

	free(r);
	return err;
}


/* --- running ranks ------------------------------------------------------------------------- */

int host_mpi_init(int rank, int size)
{
	mpii_world_rank = rank;
	mpii_world_size = size;
	int err = mpii_err_init();
	if (err == MPI_SUCCESS)
		err = mpii_comm_init();
	mpii_initialized = err == MPI_SUCCESS;
	return err;
}

int host_mpi_run(int n, int (*fn)(void))
{
	int (*pairs)[2] = calloc((size_t)n * (size_t)n, sizeof *pairs);
	pid_t *pid = calloc((size_t)n, sizeof *pid);
	int failed = 0;

	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			if (socketpair(AF_UNIX, SOCK_STREAM, 0, pairs[i * n + j]) < 0)
				return -1;
	fflush(NULL);
	for (int i = 0; i < n; i++) {
		if ((pid[i] = fork()) != 0)
			continue;
		/* A rank that crashes dies, rather than run the parent's test harness's handlers. */
		for (int sig = 1; sig < 32; sig++)
			signal(sig, SIG_DFL);
		/* Ranks that disagree wait for each other forever: end them. */
		alarm(60);
		fds = calloc((size_t)n, sizeof *fds);
		send_locks = calloc((size_t)n, sizeof *send_locks);
		for (int j = 0; j < n; j++) {
			pthread_mutex_init(&send_locks[j], NULL);
			if (j != i)
				fds[j] = i < j ? pairs[i * n + j][0] : pairs[j * n + i][1];
		}
		if (host_mpi_init(i, n) != MPI_SUCCESS)
			_exit(100);
		pthread_t t;
		pthread_create(&t, NULL, reader, NULL);
		int r = fn();
		fflush(NULL);
		_exit(r > 100 ? 100 : r);
	}
	for (int i = 0; i < n * n; i++)
		if (pairs[i][0]) {
			close(pairs[i][0]);
			close(pairs[i][1]);
		}
	for (int i = 0; i < n; i++) {
		int st;
		if (waitpid(pid[i], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "host: rank %d of %d failed (status %#x)\n", i, n, st);
			failed++;
		}
	}
	free(pairs);
	free(pid);
	return failed;
}
