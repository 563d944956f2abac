/*
 * The host stand-in of tests/lib/mpi/host_mpi.h.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/sync.h"
#include "kernel/thread.h"
#include "tests/lib/mpi/host_mpi.h"

__thread int host_errs, host_last_class;

/* --- errors and argument checks ------------------------------------------------------------ */

static void say(const char *fn, const char *fmt, va_list ap)
{
	if (!getenv("HOST_MPI_VERBOSE"))
		return;
	fprintf(stderr, "%s: ", fn);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

int mpii_err(struct mpi_comm *c, int cls, const char *fn, const char *fmt, ...)
{
	va_list ap;

	(void)c;
	va_start(ap, fmt);
	say(fn, fmt, ap);
	va_end(ap);
	host_errs++;
	host_last_class = cls;
	return cls;
}

int mpii_errcode(int cls, const char *fn, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	say(fn, fmt, ap);
	va_end(ap);
	return cls;
}

int mpii_err_raise(struct mpi_comm *c, int code)
{
	(void)c;
	host_errs++;
	host_last_class = code;
	return code;
}

int mpii_check_count(struct mpi_comm *c, int count, const char *fn)
{
	return count < 0 ? mpii_err(c, MPI_ERR_COUNT, fn, "count %d", count) : MPI_SUCCESS;
}

int mpii_check_type(struct mpi_comm *c, MPI_Datatype dt, const char *fn)
{
	return mpii_type_valid(dt) ? MPI_SUCCESS : mpii_err(c, MPI_ERR_TYPE, fn, "datatype %#x", (unsigned)dt);
}

int mpii_check_buf(struct mpi_comm *c, const void *buf, int count, MPI_Datatype dt, const char *fn)
{
	if (!buf && count > 0 && mpii_type_size(dt) > 0)
		return mpii_err(c, MPI_ERR_BUFFER, fn, "NULL buffer");
	return MPI_SUCCESS;
}

int mpii_check_root(struct mpi_comm *c, int root, const char *fn)
{
	if (c->rgroup && (root == MPI_ROOT || root == MPI_PROC_NULL))
		return MPI_SUCCESS;
	if (root < 0 || root >= mpii_comm_peers(c))
		return mpii_err(c, MPI_ERR_ROOT, fn, "root %d", root);
	return MPI_SUCCESS;
}

int mpii_check_op(struct mpi_comm *c, MPI_Op op, const char *fn)
{
	return mpii_op_valid(op) ? MPI_SUCCESS : mpii_err(c, MPI_ERR_OP, fn, "op %#x", (unsigned)op);
}

void mpii_abort(int code, const char *why)
{
	fprintf(stderr, "mpii_abort(%d): %s\n", code, why);
	abort();
}

/* --- the lock ------------------------------------------------------------------------------------- */

static pthread_mutex_t big = PTHREAD_MUTEX_INITIALIZER;

void mpii_lock(void)
{
	pthread_mutex_lock(&big);
}

void mpii_unlock(void)
{
	pthread_mutex_unlock(&big);
}

/* --- datatypes ------------------------------------------------------------------------------------ */

/* Size and extent of the predefined types (x86-64, gfortran's defaults). */
static const struct {
	unsigned char size, extent;
} predef[NOW_MPI_NPREDEF_TYPES] = {
	[1] = { 1, 1 }, [2] = { 1, 1 }, [3] = { 1, 1 }, [4] = { 1, 1 }, [5] = { 4, 4 },
	[6] = { 2, 2 }, [7] = { 2, 2 }, [8] = { 4, 4 }, [9] = { 4, 4 }, [10] = { 8, 8 },
	[11] = { 8, 8 }, [12] = { 8, 8 }, [13] = { 8, 8 }, [14] = { 4, 4 }, [15] = { 8, 8 },
	[16] = { 16, 16 }, [17] = { 1, 1 }, [18] = { 1, 1 }, [19] = { 2, 2 }, [20] = { 4, 4 },
	[21] = { 8, 8 }, [22] = { 1, 1 }, [23] = { 2, 2 }, [24] = { 4, 4 }, [25] = { 8, 8 },
	[26] = { 8, 8 }, [27] = { 8, 8 }, [28] = { 8, 8 }, [29] = { 8, 8 }, [30] = { 16, 16 },
	[31] = { 32, 32 }, [32] = { 1, 1 }, [33] = { 0, 0 }, [34] = { 0, 0 },
	[35] = { 8, 8 },		/* FLOAT_INT */
	[36] = { 12, 16 },		/* DOUBLE_INT */
	[37] = { 12, 16 },		/* LONG_INT */
	[38] = { 6, 8 },		/* SHORT_INT */
	[39] = { 8, 8 },		/* 2INT */
	[40] = { 20, 32 },		/* LONG_DOUBLE_INT */
	[41] = { 1, 1 }, [42] = { 4, 4 }, [43] = { 4, 4 }, [44] = { 4, 4 }, [45] = { 8, 8 },
	[46] = { 8, 8 }, [47] = { 16, 16 }, [48] = { 8, 8 }, [49] = { 8, 8 }, [50] = { 16, 16 },
	[51] = { 1, 1 }, [52] = { 2, 2 }, [53] = { 4, 4 }, [54] = { 8, 8 }, [55] = { 4, 4 },
	[56] = { 8, 8 }, [57] = { 8, 8 }, [58] = { 16, 16 }, [59] = { 1, 1 }, [60] = { 8, 8 },
	[61] = { 16, 16 }, [62] = { 32, 32 },
};

/* Where the index of a padded pair type lies (its value is at 0). */
static int pair_index_off(unsigned i, size_t *vsize)
{
	switch (i) {
	case 36: *vsize = 8; return 8;
	case 37: *vsize = 8; return 8;
	case 38: *vsize = 2; return 4;
	case 40: *vsize = 16; return 16;
	}
	return -1;
}

#define NDERIVED 64
#define DERIVED_BASE 100

static struct derived {
	MPI_Datatype basic;
	int count, blocklen, stride;
	MPI_Aint disp;
	int refs;
	int mixed;		/* says it is made of several predefined types */
} derived[NDERIVED];
static int nderived;

static struct derived *der(MPI_Datatype dt)
{
	unsigned i = MPII_INDEX(dt);

	if (MPII_KIND(dt) != NOW_MPI_KTYPE || i < DERIVED_BASE || i >= DERIVED_BASE + (unsigned)nderived)
		return NULL;
	return &derived[i - DERIVED_BASE];
}

static int is_predef(MPI_Datatype dt)
{
	return MPII_KIND(dt) == NOW_MPI_KTYPE && MPII_INDEX(dt) > 0 && MPII_INDEX(dt) < NOW_MPI_NPREDEF_TYPES;
}

/* datatype.c's queries take valid handles only (it dereferences them): so do these. */
static void must_be_valid(MPI_Datatype dt)
{
	if (!is_predef(dt) && !der(dt)) {
		fprintf(stderr, "host_mpi: a datatype query on the invalid handle %#x\n", (unsigned)dt);
		abort();
	}
}

MPI_Datatype host_type_vector(int count, int blocklen, int stride, MPI_Datatype basic, MPI_Aint disp)
{
	struct derived *d = &derived[nderived];

	d->basic = basic;
	d->count = count;
	d->blocklen = blocklen;
	d->stride = stride;
	d->disp = disp;
	return NOW_MPI_H(NOW_MPI_KTYPE, DERIVED_BASE + nderived++);
}

void host_type_mixed(MPI_Datatype dt)
{
	der(dt)->mixed = 1;
}

int host_type_refs(void)
{
	int n = 0;

	for (int i = 0; i < nderived; i++)
		n += derived[i].refs;
	return n;
}

int mpii_type_valid(MPI_Datatype dt)
{
	return is_predef(dt) || der(dt);
}

int mpii_type_committed(MPI_Datatype dt)
{
	return mpii_type_valid(dt);
}

size_t mpii_type_size(MPI_Datatype dt)
{
	struct derived *d = der(dt);

	must_be_valid(dt);
	if (d)
		return (size_t)d->count * d->blocklen * mpii_type_size(d->basic);
	return is_predef(dt) ? predef[MPII_INDEX(dt)].size : 0;
}

MPI_Aint mpii_type_extent(MPI_Datatype dt)
{
	struct derived *d = der(dt);

	must_be_valid(dt);
	if (d)
		return d->count ? ((MPI_Aint)(d->count - 1) * d->stride + d->blocklen) * mpii_type_extent(d->basic) : 0;
	return is_predef(dt) ? predef[MPII_INDEX(dt)].extent : 0;
}

MPI_Aint mpii_type_lb(MPI_Datatype dt)
{
	struct derived *d = der(dt);

	must_be_valid(dt);
	return d ? d->disp : 0;
}

MPI_Aint mpii_type_true_lb(MPI_Datatype dt)
{
	return mpii_type_lb(dt);
}

MPI_Aint mpii_type_true_extent(MPI_Datatype dt)
{
	return mpii_type_extent(dt);
}

MPI_Datatype mpii_type_basic(MPI_Datatype dt)
{
	struct derived *d = der(dt);

	must_be_valid(dt);
	return d ? (d->mixed ? MPI_DATATYPE_NULL : d->basic) : dt;
}

const char *mpii_type_name(MPI_Datatype dt)
{
	return der(dt) ? "(derived)" : "(predefined)";
}

void mpii_type_ref(MPI_Datatype dt)
{
	struct derived *d = der(dt);

	if (d)
		__atomic_add_fetch(&d->refs, 1, __ATOMIC_RELAXED);
}

void mpii_type_unref(MPI_Datatype dt)
{
	struct derived *d = der(dt);

	if (d)
		__atomic_sub_fetch(&d->refs, 1, __ATOMIC_RELAXED);
}

int mpii_type_contig(const void *buf, int count, MPI_Datatype dt, const void **start)
{
	struct derived *d = der(dt);

	must_be_valid(dt);
	(void)count;
	if (d) {
		MPI_Datatype b = d->basic;
		if (mpii_type_size(b) != (size_t)mpii_type_extent(b) || (d->count > 1 && d->stride != d->blocklen))
			return 0;
		*start = (const char *)buf + d->disp;
		return 1;
	}
	if (mpii_type_size(dt) != (size_t)mpii_type_extent(dt))
		return 0;
	*start = buf;
	return 1;
}

/* One element of a predefined type, packed or unpacked. */
static void move_basic(MPI_Datatype b, char *mem, char *packed, int pack)
{
	size_t size = mpii_type_size(b), vsize;
	int ioff = pair_index_off(MPII_INDEX(b), &vsize);

	if (ioff < 0) {
		if (pack)
			memcpy(packed, mem, size);
		else
			memcpy(mem, packed, size);
		return;
	}
	if (pack) {
		memcpy(packed, mem, vsize);
		memcpy(packed + vsize, mem + ioff, sizeof(int));
	} else {
		memcpy(mem, packed, vsize);
		memcpy(mem + ioff, packed + vsize, sizeof(int));
	}
}

/* Walk count elements of dt at buf, moving at most n packed bytes. */
static size_t walk(char *buf, int count, MPI_Datatype dt, char *packed, size_t n, int pack)
{
	struct derived *d = der(dt);
	size_t done = 0;
	MPI_Aint ext = mpii_type_extent(dt);

	for (int i = 0; i < count && done < n; i++) {
		char *e = buf + i * ext;
		if (!d) {
			move_basic(dt, e, packed + done, pack);
			done += mpii_type_size(dt);
			continue;
		}
		MPI_Aint bext = mpii_type_extent(d->basic);
		for (int j = 0; j < d->count && done < n; j++)
			for (int k = 0; k < d->blocklen && done < n; k++) {
				move_basic(d->basic, e + d->disp + ((MPI_Aint)j * d->stride + k) * bext, packed + done,
					   pack);
				done += mpii_type_size(d->basic);
			}
	}
	return done;
}

void mpii_pack(const void *buf, int count, MPI_Datatype dt, void *out)
{
	walk((char *)buf, count, dt, out, (size_t)-1, 1);
}

void mpii_unpack(const void *in, size_t n, void *buf, int count, MPI_Datatype dt)
{
	walk(buf, count, dt, (char *)in, n, 0);
}

/* --- communicators and ranks ------------------------------------------------------------------------ */

#define NCOMMS 32

static __thread struct mpi_comm *comms[NCOMMS];
static __thread int ncomms, my_world;

/* Each thread is a rank with communicators of its own: no process-wide MPI_COMM_WORLD to cache. */
struct mpi_comm *mpii_comm_world_obj;

struct mpi_comm *mpii_comm_lookup(MPI_Comm h)
{
	unsigned i = MPII_INDEX(h);

	if (MPII_KIND(h) != NOW_MPI_KCOMM || i == 0 || i >= NCOMMS)
		return NULL;
	return comms[i];
}

int mpii_check_comm(MPI_Comm h, const char *fn, struct mpi_comm **out)
{
	if (!(*out = mpii_comm_get(h)))
		return mpii_err(NULL, MPI_ERR_COMM, fn, "communicator %#x", (unsigned)h);
	return MPI_SUCCESS;
}

void mpii_comm_ref(struct mpi_comm *c)
{
	__atomic_add_fetch(&c->refs, 1, __ATOMIC_RELAXED);
}

void mpii_comm_unref(struct mpi_comm *c)
{
	__atomic_sub_fetch(&c->refs, 1, __ATOMIC_RELAXED);
}

static struct mpi_group *group_new(int n, const int *world)
{
	struct mpi_group *g = calloc(1, sizeof *g);

	g->refs = 1;
	g->size = n;
	g->rank = MPI_UNDEFINED;
	g->world = malloc((size_t)(n ? n : 1) * sizeof *g->world);
	for (int i = 0; i < n; i++) {
		g->world[i] = world[i];
		if (world[i] == my_world)
			g->rank = i;
	}
	return g;
}

MPI_Comm host_comm(int n, const int *world, int rn, const int *rworld, uint32_t ctx)
{
	struct mpi_comm *c = calloc(1, sizeof *c);

	if (ncomms == 0)
		ncomms = 1;
	c->refs = 1;
	c->ctx = ctx;
	c->group = group_new(n, world);
	c->rgroup = rworld ? group_new(rn, rworld) : NULL;
	c->rank = c->group->rank;
	c->size = n;
	c->handle = NOW_MPI_H(NOW_MPI_KCOMM, ncomms);
	comms[ncomms++] = c;
	return c->handle;
}

/* At a rank's end: each communicator once the last reference (a worker's) is gone. */
static void comm_free_all(void)
{
	for (int i = 1; i < ncomms; i++) {
		struct mpi_comm *c = comms[i];
		while (__atomic_load_n(&c->refs, __ATOMIC_ACQUIRE) > 1)
			sched_yield();
		free(c->group->world);
		free(c->group);
		if (c->rgroup) {
			free(c->rgroup->world);
			free(c->rgroup);
		}
		free(c);
		comms[i] = NULL;
	}
	ncomms = 0;
}

struct rank_arg {
	int rank, size;
	void (*fn)(int, int, void *);
	void *arg;
};

static void *rank_main(void *p)
{
	struct rank_arg *a = p;
	int *world = malloc((size_t)a->size * sizeof *world);

	my_world = a->rank;
	for (int i = 0; i < a->size; i++)
		world[i] = i;
	host_comm(a->size, world, 0, NULL, 0);		/* MPI_COMM_WORLD */
	host_comm(1, &a->rank, 0, NULL, 0x100000);	/* MPI_COMM_SELF */
	free(world);
	a->fn(a->rank, a->size, a->arg);
	comm_free_all();
	return NULL;
}

void host_run(int n, void (*fn)(int rank, int size, void *arg), void *arg)
{
	pthread_t *t = malloc((size_t)n * sizeof *t);
	struct rank_arg *a = malloc((size_t)n * sizeof *a);

	for (int i = 0; i < n; i++) {
		a[i] = (struct rank_arg){ i, n, fn, arg };
		if (pthread_create(&t[i], NULL, rank_main, &a[i]))
			abort();
	}
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	free(t);
	free(a);
}

/* --- point to point --------------------------------------------------------------------------------- */

enum { R_SEND, R_RECV, R_GENERIC };

struct mpi_req {
	int kind, done, err;
	MPI_Status st;
	uint32_t ctx;
	int src, dst, tag;		/* world ranks */
	const void *sbuf;
	void *rbuf;
	int count;
	MPI_Datatype dt;
	struct mpi_comm *c;
	struct mpi_req *next;
	MPI_Request handle;
	pthread_cond_t cv;		/* its waiter's */
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct mpi_req *posted, *unexpected;	/* FIFO: the order of MPI's matching */

static int matches(const struct mpi_req *s, const struct mpi_req *r)
{
	return s->ctx == r->ctx && s->src == r->src && s->dst == r->dst && s->tag == r->tag;
}

/* Take the first of *list that matches q. */
static struct mpi_req *take(struct mpi_req **list, const struct mpi_req *q, int q_is_send)
{
	for (struct mpi_req **p = list; *p; p = &(*p)->next)
		if (q_is_send ? matches(q, *p) : matches(*p, q)) {
			struct mpi_req *r = *p;
			*p = r->next;
			return r;
		}
	return NULL;
}

static void append(struct mpi_req **list, struct mpi_req *r)
{
	struct mpi_req **p = list;

	while (*p)
		p = &(*p)->next;
	r->next = NULL;
	*p = r;
}

/* The rank of world rank w among c's peers. */
static int peer_of(struct mpi_comm *c, int w)
{
	struct mpi_group *g = c->rgroup ? c->rgroup : c->group;

	for (int i = 0; i < g->size; i++)
		if (g->world[i] == w)
			return i;
	return -1;
}

/* The data moves when a receive takes a send, from the sender's buffer. */
static void deliver(struct mpi_req *s, struct mpi_req *r)
{
	size_t bytes = (size_t)s->count * mpii_type_size(s->dt), cap = (size_t)r->count * mpii_type_size(r->dt);
	size_t n = bytes < cap ? bytes : cap;

	if (n) {
		char *tmp = malloc(bytes);
		mpii_pack(s->sbuf, s->count, s->dt, tmp);
		mpii_unpack(tmp, n, r->rbuf, r->count, r->dt);
		free(tmp);
	}
	memset(&r->st, 0, sizeof r->st);
	r->st.MPI_SOURCE = peer_of(r->c, s->src);
	r->st.MPI_TAG = s->tag;
	r->st.MPI_ERROR = bytes > cap ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
	mpii_status_set_bytes(&r->st, (MPI_Count)n);
	s->done = r->done = 1;
	pthread_cond_signal(&s->cv);
	pthread_cond_signal(&r->cv);
}

static struct mpi_req *req_new(int kind, struct mpi_comm *c, int peer, int tag, int ctxoff)
{
	struct mpi_req *r = calloc(1, sizeof *r);
	int me = c->group->world[c->rank];

	pthread_cond_init(&r->cv, NULL);
	r->kind = kind;
	r->c = c;
	r->ctx = c->ctx + (uint32_t)ctxoff;
	r->tag = tag;
	if (peer == MPI_PROC_NULL) {
		r->done = 1;
		r->st.MPI_SOURCE = MPI_PROC_NULL;
		r->st.MPI_TAG = MPI_ANY_TAG;
		return r;
	}
	r->src = kind == R_SEND ? me : mpii_comm_world(c, peer);
	r->dst = kind == R_SEND ? mpii_comm_world(c, peer) : me;
	return r;
}

/*
 * A new send (is_send) or receive q matched, under the lock: delivered with
 * the first receive posted or send unexpected that it matches, else queued
 * as unexpected or posted.
 */
static void match(struct mpi_req *q, int is_send)
{
	pthread_mutex_lock(&mu);
	struct mpi_req *m = take(is_send ? &posted : &unexpected, q, is_send);
	if (m)
		deliver(is_send ? q : m, is_send ? m : q);
	else
		append(is_send ? &unexpected : &posted, q);
	pthread_mutex_unlock(&mu);
}

int mpii_isend(const void *buf, int count, MPI_Datatype dt, int peer, int tag, struct mpi_comm *c, int ctxoff,
	       enum mpii_send_mode mode, struct mpi_req **out)
{
	struct mpi_req *s = req_new(R_SEND, c, peer, tag, ctxoff);

	(void)mode;
	s->sbuf = buf;
	s->count = count;
	s->dt = dt;
	*out = s;
	if (!s->done)
		match(s, 1);
	sched_yield();
	return MPI_SUCCESS;
}

int mpii_irecv(void *buf, int count, MPI_Datatype dt, int peer, int tag, struct mpi_comm *c, int ctxoff,
	       struct mpi_req **out)
{
	struct mpi_req *r = req_new(R_RECV, c, peer, tag, ctxoff);

	r->rbuf = buf;
	r->count = count;
	r->dt = dt;
	*out = r;
	if (!r->done)
		match(r, 0);
	return MPI_SUCCESS;
}

/* Wait for r under mu; a wait longer than HOST_DEADLOCK_S ends the test. */
static void wait_done(struct mpi_req *r)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_sec += HOST_DEADLOCK_S;
	while (!r->done)
		if (pthread_cond_timedwait(&r->cv, &mu, &t) == ETIMEDOUT && !r->done) {
			fprintf(stderr, "host_mpi: deadlock: world rank %d waits for %s ctx %u src %d dst %d tag %#x\n",
				my_world, r->kind == R_SEND ? "a send" : r->kind == R_RECV ? "a receive" : "a request",
				r->ctx, r->src, r->dst, (unsigned)r->tag);
			abort();
		}
}

int mpii_req_wait(struct mpi_req *r, MPI_Status *status)
{
	pthread_mutex_lock(&mu);
	wait_done(r);
	pthread_mutex_unlock(&mu);
	int err = r->kind == R_RECV ? r->st.MPI_ERROR : r->err;
	if (status && status != MPI_STATUS_IGNORE)
		*status = r->st;
	pthread_cond_destroy(&r->cv);
	free(r);
	return err;
}


int mpii_send(const void *buf, int count, MPI_Datatype dt, int peer, int tag, struct mpi_comm *c, int ctxoff)
{
	struct mpi_req *r;

	mpii_isend(buf, count, dt, peer, tag, c, ctxoff, MPII_SEND_STD, &r);
	return mpii_req_wait(r, NULL);
}

int mpii_recv(void *buf, int count, MPI_Datatype dt, int peer, int tag, struct mpi_comm *c, int ctxoff,
	      MPI_Status *status)
{
	struct mpi_req *r;

	mpii_irecv(buf, count, dt, peer, tag, c, ctxoff, &r);
	return mpii_req_wait(r, status);
}

int mpii_sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf, int rcount,
		  MPI_Datatype rtype, int src, int rtag, struct mpi_comm *c, int ctxoff, MPI_Status *status)
{
	struct mpi_req *s, *r;

	mpii_irecv(rbuf, rcount, rtype, src, rtag, c, ctxoff, &r);
	mpii_isend(sbuf, scount, stype, dest, stag, c, ctxoff, MPII_SEND_STD, &s);
	int es = mpii_req_wait(s, NULL);
	int er = mpii_req_wait(r, status);
	return es ? es : er;
}

struct mpi_req *mpii_req_generic(struct mpi_comm *c)
{
	struct mpi_req *r = calloc(1, sizeof *r);

	pthread_cond_init(&r->cv, NULL);
	r->kind = R_GENERIC;
	r->c = c;
	pthread_mutex_lock(&mu);
	r->handle = mpii_obj_new(NOW_MPI_KREQ, r);
	pthread_mutex_unlock(&mu);
	return r;
}

/* The host tests start no persistent collective: the request alone, done. */
struct mpi_req *mpii_req_pcoll(struct mpi_comm *c, void *job)
{
	struct mpi_req *r = mpii_req_generic(c);

	(void)job;
	r->done = 1;
	return r;
}

MPI_Request mpii_req_handle(struct mpi_req *r)
{
	return r->handle;
}

void mpii_req_complete(struct mpi_req *r, int err)
{
	pthread_mutex_lock(&mu);
	r->err = err;
	r->done = 1;
	pthread_cond_signal(&r->cv);
	pthread_mutex_unlock(&mu);
}

int host_wait(MPI_Request h)
{
	pthread_mutex_lock(&mu);
	struct mpi_req *r = mpii_obj_get(NOW_MPI_KREQ, h);
	if (!r) {
		pthread_mutex_unlock(&mu);
		return MPI_ERR_REQUEST;
	}
	wait_done(r);
	mpii_obj_free(NOW_MPI_KREQ, h);
	pthread_mutex_unlock(&mu);
	int err = r->err;
	pthread_cond_destroy(&r->cv);
	free(r);
	return err;
}

int host_test(MPI_Request h)
{
	pthread_mutex_lock(&mu);
	struct mpi_req *r = mpii_obj_get(NOW_MPI_KREQ, h);
	int done = r && r->done;
	pthread_mutex_unlock(&mu);
	return done;
}

/* --- kernel threads and semaphores ------------------------------------------------------------------ */

static struct thread a_thread;

struct thread *thread_create(const char *name, void *(*fn)(void *), void *arg, int prio, size_t stack_size)
{
	pthread_t t;
	pthread_attr_t at;

	(void)name;
	(void)prio;
	(void)stack_size;
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	int e = pthread_create(&t, &at, fn, arg);
	pthread_attr_destroy(&at);
	return e ? NULL : &a_thread;
}

/* A condition variable per semaphore, found by its address. */
static pthread_mutex_t semmu = PTHREAD_MUTEX_INITIALIZER;
static struct semcv {
	struct sem *s;
	pthread_cond_t cv;
	struct semcv *next;
} *semcvs;

static pthread_cond_t *sem_cv(struct sem *s)
{
	struct semcv *p;

	for (p = semcvs; p && p->s != s; p = p->next)
		;
	if (!p) {
		p = calloc(1, sizeof *p);
		p->s = s;
		pthread_cond_init(&p->cv, NULL);
		p->next = semcvs;
		semcvs = p;
	}
	return &p->cv;
}

void sem_init(struct sem *s, int64_t count)
{
	s->count = count;
}

void sem_wait(struct sem *s)
{
	pthread_mutex_lock(&semmu);
	while (s->count <= 0)
		pthread_cond_wait(sem_cv(s), &semmu);
	s->count--;
	pthread_mutex_unlock(&semmu);
}

void sem_post(struct sem *s)
{
	pthread_mutex_lock(&semmu);
	s->count++;
	pthread_cond_signal(sem_cv(s));
	pthread_mutex_unlock(&semmu);
}
