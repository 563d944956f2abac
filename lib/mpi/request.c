/*
 * MPI's point-to-point calls (MPI-3.1 chapter 3) on the engine of
 * pt2pt.c: argument checks, the send modes, buffered sends, persistent
 * and generalized requests, and the completion calls (Wait, Test and
 * their any/all/some forms).
 */
#include <stdlib.h>
#include <string.h>

#include "lib/mpi/coll.h"
#include "lib/mpi/pt2pt.h"

/* --- checks ------------------------------------------------------------------------------------ */

/* The checks every send or receive makes; *c set.  MPI_SUCCESS or the reported error. */
static int check_xfer(MPI_Comm comm, const void *buf, int count, MPI_Datatype dt, int peer, int tag, int recv,
		      const char *fn, struct mpi_comm **c)
{
	int e;

	/* The common case: a plain predefined type (valid, committed) and arguments in range. */
	if (mpii_plain_size(dt) && (*c = mpii_comm_get(comm)) && count >= 0 && (buf || !count) &&
	    ((unsigned)peer < (unsigned)mpii_comm_peers(*c) || peer == MPI_PROC_NULL ||
	     (recv && peer == MPI_ANY_SOURCE)) &&
	    ((unsigned)tag <= MPII_TAG_UB || (recv && tag == MPI_ANY_TAG)))
		return MPI_SUCCESS;
	if ((e = mpii_check_comm(comm, fn, c)) != MPI_SUCCESS || (e = mpii_check_count(*c, count, fn)) != MPI_SUCCESS ||
	    (e = mpii_check_type(*c, dt, fn)) != MPI_SUCCESS ||
	    (e = mpii_check_buf(*c, buf, count, dt, fn)) != MPI_SUCCESS ||
	    (e = mpii_check_rank(*c, peer, recv, fn)) != MPI_SUCCESS ||
	    (e = mpii_check_tag(*c, tag, recv, fn)) != MPI_SUCCESS)
		return e;
	return MPI_SUCCESS;
}

static int fail(struct mpi_comm *c, int e)
{
	return e == MPI_SUCCESS ? e : mpii_err_raise(c, e);
}

/* --- buffered sends ------------------------------------------------------------------------ */

/*
 * The buffer MPI_Buffer_attach gave: each buffered send takes a region of
 * it (first fit, in address order) for its packed copy plus
 * MPI_BSEND_OVERHEAD, and gives it back once its internal send is done.
 */
struct bsend_slot {
	struct bsend_slot *next;
	size_t off, len;
	struct mpi_req *req;
};

static uint8_t *bbuf;
static size_t bsize;
static struct bsend_slot *bslots;

/* Give back the regions whose sends are done. */
static void bsend_reap(void)
{
	for (struct bsend_slot **p = &bslots; *p;) {
		struct bsend_slot *s = *p;
		if (s->req && s->req->done) {
			*p = s->next;
			mpii_req_release(s->req);
			free(s);
		} else {
			p = &s->next;
		}
	}
}

int mpii_bsend_pending(void)
{
	bsend_reap();
	return bslots != NULL;
}

static int bsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, struct mpi_comm *c,
		 const char *fn)
{
	size_t len = (size_t)count * mpii_type_size(dt), need = len + MPI_BSEND_OVERHEAD, off = 0;
	struct bsend_slot **p, *s;

	if (dest == MPI_PROC_NULL)
		return MPI_SUCCESS;
	bsend_reap();
	if (!bbuf)
		return mpii_err(c, MPI_ERR_BUFFER, fn, "no buffer attached (MPI_Buffer_attach)");
	for (p = &bslots; *p; p = &(*p)->next) {
		if ((*p)->off - off >= need)
			break;
		off = (*p)->off + (*p)->len;
	}
	if (off + need > bsize)
		return mpii_err(c, MPI_ERR_BUFFER, fn, "Insufficient space in Bsend buffer; requested %zu bytes of "
				"%zu attached", need, bsize);
	if (!(s = calloc(1, sizeof *s)))
		return mpii_err(c, MPI_ERR_NO_MEM, fn, "no memory");
	s->off = off;
	s->len = need;
	s->next = *p;
	*p = s;
	mpii_pack(buf, count, dt, bbuf + off + MPI_BSEND_OVERHEAD);
	/* The packed copy goes as bytes: on the wire a message is its packed bytes whatever its type. */
	int e = mpii_isend(bbuf + off + MPI_BSEND_OVERHEAD, (int)len, MPI_BYTE, dest, tag, c, 0, MPII_SEND_STD,
			   &s->req);
	if (!s->req) {
		*p = s->next;
		free(s);
	}
	return fail(c, e);
}

int MPI_Buffer_attach(void *buffer, int size)
{
	static const char fn[] = "MPI_Buffer_attach";

	if (size < 0)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Invalid size %d", size);
	if (!buffer && size > 0)
		return mpii_err(NULL, MPI_ERR_BUFFER, fn, "Null buffer pointer");
	if (bbuf)
		return mpii_err(NULL, MPI_ERR_BUFFER, fn, "a buffer is already attached");
	bbuf = buffer;
	bsize = (size_t)size;
	return MPI_SUCCESS;
}

static int no_bsends(void *arg)
{
	(void)arg;
	for (struct bsend_slot *s = bslots; s; s = s->next)
		if (s->req && !s->req->done)
			return 0;
	return 1;
}

int MPI_Buffer_detach(void *buffer_addr, int *size)
{
	/* Every message still in the buffer goes first (MPI-3.1 3.6.1). */
	mpii_wait_until(no_bsends, NULL);
	bsend_reap();
	if (buffer_addr)
		*(void **)buffer_addr = bbuf;
	if (size)
		*size = (int)bsize;
	bbuf = NULL;
	bsize = 0;
	return MPI_SUCCESS;
}

/* --- sends and receives --------------------------------------------------------------------- */

static int send_mode(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
		     enum mpii_send_mode mode, const char *fn)
{
	struct mpi_comm *c;
	int e = check_xfer(comm, buf, count, dt, dest, tag, 0, fn, &c);

	if (e != MPI_SUCCESS)
		return e;
	if (mode == MPII_SEND_BUF)
		return bsend(buf, count, dt, dest, tag, c, fn);
	return fail(c, mpii_send_mode(buf, count, dt, dest, tag, c, 0, mode));
}

int MPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
	struct mpi_comm *c = mpii_comm_get(comm);
	size_t psz = mpii_plain_size(dt);

	/*
	 * The common case, checked as check_xfer's first test does: a plain
	 * type, arguments in range, a message that goes eager to another node.
	 */
	if (psz && c && count >= 0 && (buf || !count) && (unsigned)dest < (unsigned)mpii_comm_peers(c) &&
	    (unsigned)tag <= MPII_TAG_UB && (size_t)count * psz <= MPII_EAGER_MAX) {
		int node = mpii_comm_world(c, dest);
		if (node != mpii_world_rank)
			return fail(c, mpii_send_eager(node, c, 0, tag, buf, (size_t)count * psz));
	}
	return send_mode(buf, count, dt, dest, tag, comm, MPII_SEND_STD, "MPI_Send");
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
	return send_mode(buf, count, dt, dest, tag, comm, MPII_SEND_SYNC, "MPI_Ssend");
}

int MPI_Rsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
	/* A ready send may be a standard one (MPI-3.1 3.4): its receive is posted, so it matches at once. */
	return send_mode(buf, count, dt, dest, tag, comm, MPII_SEND_READY, "MPI_Rsend");
}

int MPI_Bsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
	return send_mode(buf, count, dt, dest, tag, comm, MPII_SEND_BUF, "MPI_Bsend");
}

int MPI_Recv(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Status *status)
{
	static const char fn[] = "MPI_Recv";
	struct mpi_comm *c;
	int e = check_xfer(comm, buf, count, dt, source, tag, 1, fn, &c);

	if (e != MPI_SUCCESS)
		return e;
	return fail(c, mpii_recv(buf, count, dt, source, tag, c, 0, status));
}

static int isend_mode(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
		      enum mpii_send_mode mode, MPI_Request *request, const char *fn)
{
	struct mpi_comm *c;
	struct mpi_req *s;
	int e;

	if (!request)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Null pointer in parameter request");
	if ((e = check_xfer(comm, buf, count, dt, dest, tag, 0, fn, &c)) != MPI_SUCCESS)
		return e;
	if (mode == MPII_SEND_BUF) {
		/* Complete once copied into the attached buffer, which is now. */
		if ((e = bsend(buf, count, dt, dest, tag, c, fn)) != MPI_SUCCESS)
			return e;
		s = mpii_req_generic(c);
		if (!s)
			return mpii_err(c, MPI_ERR_NO_MEM, fn, "no memory for a request");
		s->kind = REQ_SEND;
		mpii_req_complete(s, MPI_SUCCESS);
	} else {
		e = mpii_isend(buf, count, dt, dest, tag, c, 0, mode, &s);
		if (!s)
			return fail(c, e);
	}
	*request = mpii_req_handle(s);
	if (*request == MPI_REQUEST_NULL)
		return mpii_err(c, MPI_ERR_NO_MEM, fn, "no memory for a request handle");
	/* An error of the send shows at its completion, as MPI has it. */
	return MPI_SUCCESS;
}

int MPI_Isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
	return isend_mode(buf, count, dt, dest, tag, comm, MPII_SEND_STD, request, "MPI_Isend");
}

int MPI_Issend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
	return isend_mode(buf, count, dt, dest, tag, comm, MPII_SEND_SYNC, request, "MPI_Issend");
}

int MPI_Irsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
	return isend_mode(buf, count, dt, dest, tag, comm, MPII_SEND_READY, request, "MPI_Irsend");
}

int MPI_Ibsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
	return isend_mode(buf, count, dt, dest, tag, comm, MPII_SEND_BUF, request, "MPI_Ibsend");
}

int MPI_Irecv(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Request *request)
{
	static const char fn[] = "MPI_Irecv";
	struct mpi_comm *c;
	struct mpi_req *r;
	int e;

	if (!request)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Null pointer in parameter request");
	if ((e = check_xfer(comm, buf, count, dt, source, tag, 1, fn, &c)) != MPI_SUCCESS)
		return e;
	e = mpii_irecv(buf, count, dt, source, tag, c, 0, &r);
	if (!r)
		return fail(c, e);
	*request = mpii_req_handle(r);
	if (*request == MPI_REQUEST_NULL)
		return mpii_err(c, MPI_ERR_NO_MEM, fn, "no memory for a request handle");
	return MPI_SUCCESS;
}

/*
 * The request of a send and a receive together (Isendrecv): done when both
 * are, with the receive's status.  tmp (may be NULL) is freed with it.
 */
static int pair(struct mpi_comm *c, const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag,
		void *rbuf, int rcount, MPI_Datatype rtype, int src, int rtag, void *tmp, struct mpi_req **out)
{
	struct mpi_req *p = mpii_req_generic(c), *r = NULL, *s = NULL;
	int er, es;

	*out = p;
	if (!p) {
		free(tmp);
		return mpii_errcode(MPI_ERR_NO_MEM, "MPI_Isendrecv", "no memory for a request");
	}
	p->tmp = tmp;
	p->pending = 2;
	/* A part done before it knew its parent is counted here; after, by its completion. */
	er = mpii_irecv(rbuf, rcount, rtype, src, rtag, c, 0, &r);
	if (r) {
		p->sub[0] = r;
		mpii_lock();
		r->parent = p;
		if (r->done) {
			/* Done before it had a parent: count it now. */
			p->status = r->status;
			p->pending--;
		}
		mpii_unlock();
	}
	es = mpii_isend(sbuf, scount, stype, dest, stag, c, 0, MPII_SEND_STD, &s);
	if (s) {
		p->sub[1] = s;
		mpii_lock();
		s->parent = p;
		if (s->done) {
			if (s->status.MPI_ERROR != MPI_SUCCESS && p->status.MPI_ERROR == MPI_SUCCESS)
				p->status.MPI_ERROR = s->status.MPI_ERROR;
			p->pending--;
		}
		mpii_unlock();
	}
	if (!r || !s) {
		mpii_lock();
		p->pending -= !r + !s;
		mpii_unlock();
	}
	mpii_lock();
	int fin = p->pending == 0 && !p->done;
	mpii_unlock();
	if (fin)
		mpii_req_complete(p, er != MPI_SUCCESS ? er : es);
	return er != MPI_SUCCESS ? er : es;
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
		 int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
	static const char fn[] = "MPI_Sendrecv";
	struct mpi_comm *c;
	int e;

	if ((e = check_xfer(comm, sendbuf, sendcount, sendtype, dest, sendtag, 0, fn, &c)) != MPI_SUCCESS ||
	    (e = check_xfer(comm, recvbuf, recvcount, recvtype, source, recvtag, 1, fn, &c)) != MPI_SUCCESS)
		return e;
	e = mpii_sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
			  c, 0, status);
	return fail(c, e);
}

/* The send half of a replace: a packed copy of buf, sent as bytes. */
static void *replace_copy(const void *buf, int count, MPI_Datatype dt, size_t *len)
{
	void *tmp;

	*len = (size_t)count * mpii_type_size(dt);
	tmp = malloc(*len ? *len : 1);
	if (tmp)
		mpii_pack(buf, count, dt, tmp);
	return tmp;
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype dt, int dest, int sendtag, int source, int recvtag,
			 MPI_Comm comm, MPI_Status *status)
{
	static const char fn[] = "MPI_Sendrecv_replace";
	struct mpi_comm *c;
	size_t len;
	int e;

	if ((e = check_xfer(comm, buf, count, dt, dest, sendtag, 0, fn, &c)) != MPI_SUCCESS ||
	    (e = check_xfer(comm, buf, count, dt, source, recvtag, 1, fn, &c)) != MPI_SUCCESS)
		return e;
	void *tmp = replace_copy(buf, count, dt, &len);
	if (!tmp)
		return mpii_err(c, MPI_ERR_NO_MEM, fn, "no memory for a copy of %zu bytes", len);
	e = mpii_sendrecv(tmp, (int)len, MPI_BYTE, dest, sendtag, buf, count, dt, source, recvtag, c, 0, status);
	free(tmp);
	return fail(c, e);
}

int MPI_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
		  int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Request *request)
{
	static const char fn[] = "MPI_Isendrecv";
	struct mpi_comm *c;
	struct mpi_req *p;
	int e;

	if (!request)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Null pointer in parameter request");
	if ((e = check_xfer(comm, sendbuf, sendcount, sendtype, dest, sendtag, 0, fn, &c)) != MPI_SUCCESS ||
	    (e = check_xfer(comm, recvbuf, recvcount, recvtype, source, recvtag, 1, fn, &c)) != MPI_SUCCESS)
		return e;
	e = pair(c, sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, NULL, &p);
	if (!p)
		return fail(c, e);
	*request = mpii_req_handle(p);
	return MPI_SUCCESS;
}

int MPI_Isendrecv_replace(void *buf, int count, MPI_Datatype dt, int dest, int sendtag, int source, int recvtag,
			  MPI_Comm comm, MPI_Request *request)
{
	static const char fn[] = "MPI_Isendrecv_replace";
	struct mpi_comm *c;
	struct mpi_req *p;
	size_t len;
	int e;

	if (!request)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Null pointer in parameter request");
	if ((e = check_xfer(comm, buf, count, dt, dest, sendtag, 0, fn, &c)) != MPI_SUCCESS ||
	    (e = check_xfer(comm, buf, count, dt, source, recvtag, 1, fn, &c)) != MPI_SUCCESS)
		return e;
	void *tmp = replace_copy(buf, count, dt, &len);
	if (!tmp)
		return mpii_err(c, MPI_ERR_NO_MEM, fn, "no memory for a copy of %zu bytes", len);
	e = pair(c, tmp, (int)len, MPI_BYTE, dest, sendtag, buf, count, dt, source, recvtag, tmp, &p);
	if (!p)
		return fail(c, e);
	*request = mpii_req_handle(p);
	return MPI_SUCCESS;
}

/* --- persistent requests --------------------------------------------------------------------- */

static int init_req(enum req_kind kind, const void *buf, int count, MPI_Datatype dt, int peer, int tag,
		    MPI_Comm comm, enum mpii_send_mode mode, MPI_Request *request, const char *fn)
{
	struct mpi_comm *c;
	struct mpi_req *r;
	int e;

	if (!request)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Null pointer in parameter request");
	if ((e = check_xfer(comm, buf, count, dt, peer, tag, kind == REQ_RECV, fn, &c)) != MPI_SUCCESS)
		return e;
	r = mpii_req_persistent(kind, buf, count, dt, peer, tag, c, mode);
	if (!r || (*request = mpii_req_handle(r)) == MPI_REQUEST_NULL) {
		mpii_req_release(r);
		return mpii_err(c, MPI_ERR_NO_MEM, fn, "no memory for a request");
	}
	return MPI_SUCCESS;
}

int MPI_Send_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
	return init_req(REQ_SEND, buf, count, dt, dest, tag, comm, MPII_SEND_STD, request, "MPI_Send_init");
}

int MPI_Ssend_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
	return init_req(REQ_SEND, buf, count, dt, dest, tag, comm, MPII_SEND_SYNC, request, "MPI_Ssend_init");
}

int MPI_Rsend_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
	return init_req(REQ_SEND, buf, count, dt, dest, tag, comm, MPII_SEND_READY, request, "MPI_Rsend_init");
}

int MPI_Bsend_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm, MPI_Request *request)
{
	return init_req(REQ_SEND, buf, count, dt, dest, tag, comm, MPII_SEND_BUF, request, "MPI_Bsend_init");
}

int MPI_Recv_init(void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm, MPI_Request *request)
{
	return init_req(REQ_RECV, buf, count, dt, source, tag, comm, MPII_SEND_STD, request, "MPI_Recv_init");
}

static int start_one(MPI_Request *request, const char *fn)
{
	struct mpi_req *r = request ? mpii_req_get(*request) : NULL;

	if (!r || !r->persistent)
		return mpii_err(NULL, MPI_ERR_REQUEST, fn, "Invalid MPI_Request (not a persistent request)");
	if (r->active && !r->done)
		return mpii_err(r->comm, MPI_ERR_REQUEST, fn, "the request is already active");
	if (r->kind == REQ_SEND && r->mode == MPII_SEND_BUF) {
		int e = bsend(r->buf, r->count, r->dt, r->peer, r->tag, r->comm, fn);
		r->active = 1;
		r->status = (MPI_Status){ 0 };
		r->done = 1;
		return e;
	}
	if (r->kind == REQ_PCOLL) {
		r->status = (MPI_Status){ 0 };
		r->done = 0;
		r->active = 1;
		mpii_pcoll_start(r->extra);
		return MPI_SUCCESS;
	}
	return fail(r->comm, mpii_req_start(r));
}

int MPI_Start(MPI_Request *request)
{
	return start_one(request, "MPI_Start");
}

int MPI_Startall(int count, MPI_Request array_of_requests[])
{
	if (count < 0)
		return mpii_err(NULL, MPI_ERR_COUNT, "MPI_Startall", "Negative count, value is %d", count);
	for (int i = 0; i < count; i++) {
		int e = start_one(&array_of_requests[i], "MPI_Startall");
		if (e != MPI_SUCCESS)
			return e;
	}
	return MPI_SUCCESS;
}

/* --- completion ----------------------------------------------------------------------------- */

/* The request behind a handle, NULL for MPI_REQUEST_NULL and inactive persistent requests; *bad on a bad handle. */
static struct mpi_req *active_req(MPI_Request h, int *bad)
{
	struct mpi_req *r;

	*bad = 0;
	if (h == MPI_REQUEST_NULL)
		return NULL;
	r = mpii_req_get(h);
	if (!r) {
		*bad = 1;
		return NULL;
	}
	if (r->persistent && !r->active)
		return NULL;
	return r;
}

/*
 * r is done: its status to st, then released (or made inactive); *h
 * updated.  A generalized request's status is its query function's.
 * Returns its MPI_ERROR.
 */
static int complete_request(struct mpi_req *r, MPI_Request *h, MPI_Status *st)
{
	int e;

	if (r->kind == REQ_GREQ && r->query_fn) {
		MPI_Status q = r->status;
		int qe = r->query_fn(r->extra, &q);
		if (qe != MPI_SUCCESS)
			q.MPI_ERROR = qe;
		r->status = q;
	}
	mpii_req_status(r, st);
	e = r->status.MPI_ERROR;
	if (r->persistent) {
		r->active = 0;
	} else {
		mpii_req_release(r);
		*h = MPI_REQUEST_NULL;
	}
	return e;
}

struct waitset {
	int n;
	MPI_Request *h;
	int need;		/* how many to wait for: 1 (any, some) or n (all) */
};

static int some_done(void *arg)
{
	struct waitset *w = arg;
	int k = 0, live = 0, bad;

	for (int i = 0; i < w->n; i++) {
		struct mpi_req *r = active_req(w->h[i], &bad);
		if (!r)
			continue;
		live++;
		if (!r->done)
			mpii_req_check_dead(r);
		if (r->done)
			k++;
	}
	return live == 0 || k >= (w->need == 1 ? 1 : live);
}

static void wait_set(int n, MPI_Request *h, int need)
{
	struct waitset w = { n, h, need };

	mpii_wait_until(some_done, &w);
}

/* Bad handles in h: reported once (on COMM_WORLD's handler). */
static int check_handles(int n, const MPI_Request *h, const char *fn)
{
	int bad;

	if (n < 0)
		return mpii_err(NULL, MPI_ERR_COUNT, fn, "Negative count, value is %d", n);
	if (n > 0 && !h)
		return mpii_err(NULL, MPI_ERR_REQUEST, fn, "Null pointer in parameter array_of_requests");
	for (int i = 0; i < n; i++) {
		active_req(h[i], &bad);
		if (bad)
			return mpii_err(NULL, MPI_ERR_REQUEST, fn, "Invalid MPI_Request in position %d", i);
	}
	return MPI_SUCCESS;
}

static struct mpi_comm *req_comm(struct mpi_req *r)
{
	return r && r->comm ? r->comm : NULL;
}

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
	static const char fn[] = "MPI_Wait";
	int e;

	if (!request)
		return mpii_err(NULL, MPI_ERR_REQUEST, fn, "Null pointer in parameter request");
	if ((e = check_handles(1, request, fn)) != MPI_SUCCESS)
		return e;
	int bad;
	struct mpi_req *r = active_req(*request, &bad);
	if (!r) {
		mpii_status_empty(status);
		return MPI_SUCCESS;
	}
	wait_set(1, request, 1);
	struct mpi_comm *c = req_comm(r);
	if (c)
		mpii_comm_ref(c);
	e = complete_request(r, request, status);
	e = fail(c, e);
	if (c)
		mpii_comm_unref(c);
	return e;
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
	static const char fn[] = "MPI_Test";
	int e, bad;

	if (!request || !flag)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Null pointer in parameter %s", request ? "flag" : "request");
	if ((e = check_handles(1, request, fn)) != MPI_SUCCESS)
		return e;
	struct mpi_req *r = active_req(*request, &bad);
	if (!r) {
		*flag = 1;
		mpii_status_empty(status);
		return MPI_SUCCESS;
	}
	if (!r->done)
		mpii_poke();
	mpii_lock();
	if (!r->done)
		mpii_req_check_dead(r);
	mpii_unlock();
	*flag = r->done;
	if (!r->done)
		return MPI_SUCCESS;
	struct mpi_comm *c = req_comm(r);
	if (c)
		mpii_comm_ref(c);
	e = fail(c, complete_request(r, request, status));
	if (c)
		mpii_comm_unref(c);
	return e;
}

static int any(int count, MPI_Request h[], int *index, int *flag, MPI_Status *status, int block, const char *fn)
{
	int e, bad;

	if (!index)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Null pointer in parameter index");
	if ((e = check_handles(count, h, fn)) != MPI_SUCCESS)
		return e;
	if (block)
		wait_set(count, h, 1);
	else
		mpii_poke();
	int live = 0;
	for (int i = 0; i < count; i++) {
		struct mpi_req *r = active_req(h[i], &bad);
		if (!r)
			continue;
		live++;
		if (r->done) {
			struct mpi_comm *c = req_comm(r);
			if (c)
				mpii_comm_ref(c);
			*index = i;
			if (flag)
				*flag = 1;
			e = fail(c, complete_request(r, &h[i], status));
			if (c)
				mpii_comm_unref(c);
			return e;
		}
	}
	*index = MPI_UNDEFINED;
	if (flag)
		*flag = live == 0;
	if (live == 0)
		mpii_status_empty(status);
	return MPI_SUCCESS;
}

int MPI_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status)
{
	return any(count, array_of_requests, index, NULL, status, 1, "MPI_Waitany");
}

int MPI_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag, MPI_Status *status)
{
	if (!flag)
		return mpii_err(NULL, MPI_ERR_ARG, "MPI_Testany", "Null pointer in parameter flag");
	return any(count, array_of_requests, index, flag, status, 0, "MPI_Testany");
}

/*
 * Finish every done request of h (all of them for Waitall): statuses
 * filled (MPI_ERR_PENDING for those not done when one failed), the
 * indices of the done ones in idx.  MPI_ERR_IN_STATUS if one failed.
 */
static int finish_set(int count, MPI_Request h[], MPI_Status st[], int *idx, int *outcount, const char *fn)
{
	int failed = 0, k = 0, bad;
	struct mpi_comm *c = NULL;

	for (int i = 0; i < count; i++) {
		struct mpi_req *r = active_req(h[i], &bad);
		MPI_Status *s = st == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &st[idx ? k : i];
		if (!r) {
			if (!idx && s != MPI_STATUS_IGNORE) {
				mpii_status_empty(s);
				s->MPI_ERROR = MPI_SUCCESS;
			}
			continue;
		}
		if (!r->done) {
			if (!idx && s != MPI_STATUS_IGNORE)
				s->MPI_ERROR = MPI_ERR_PENDING;
			continue;
		}
		if (!c && r->comm) {
			c = r->comm;
			mpii_comm_ref(c);
		}
		int e = complete_request(r, &h[i], s);
		if (s != MPI_STATUS_IGNORE)
			s->MPI_ERROR = e;
		if (e != MPI_SUCCESS)
			failed = 1;
		if (idx)
			idx[k] = i;
		k++;
	}
	if (outcount)
		*outcount = k;
	int e = failed ? mpii_err(c, MPI_ERR_IN_STATUS, fn, "a request failed: see its status's MPI_ERROR")
		       : MPI_SUCCESS;
	if (c)
		mpii_comm_unref(c);
	return e;
}

int MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[])
{
	int e = check_handles(count, array_of_requests, "MPI_Waitall");

	if (e != MPI_SUCCESS)
		return e;
	wait_set(count, array_of_requests, count);
	return finish_set(count, array_of_requests, array_of_statuses, NULL, NULL, "MPI_Waitall");
}

int MPI_Testall(int count, MPI_Request array_of_requests[], int *flag, MPI_Status array_of_statuses[])
{
	int e = check_handles(count, array_of_requests, "MPI_Testall"), bad;

	if (e != MPI_SUCCESS)
		return e;
	if (!flag)
		return mpii_err(NULL, MPI_ERR_ARG, "MPI_Testall", "Null pointer in parameter flag");
	mpii_poke();
	for (int i = 0; i < count; i++) {
		struct mpi_req *r = active_req(array_of_requests[i], &bad);
		if (r && !r->done) {
			*flag = 0;
			return MPI_SUCCESS;
		}
	}
	*flag = 1;
	return finish_set(count, array_of_requests, array_of_statuses, NULL, NULL, "MPI_Testall");
}

static int some(int incount, MPI_Request h[], int *outcount, int idx[], MPI_Status st[], int block, const char *fn)
{
	int e = check_handles(incount, h, fn), bad, live = 0;

	if (e != MPI_SUCCESS)
		return e;
	if (!outcount || (incount > 0 && !idx))
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Null pointer in parameter %s", outcount ? "array_of_indices" : "outcount");
	for (int i = 0; i < incount; i++)
		live += active_req(h[i], &bad) != NULL;
	if (live == 0) {
		*outcount = MPI_UNDEFINED;
		return MPI_SUCCESS;
	}
	if (block)
		wait_set(incount, h, 1);
	else
		mpii_poke();
	return finish_set(incount, h, st, idx, outcount, fn);
}

int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
		 MPI_Status array_of_statuses[])
{
	return some(incount, array_of_requests, outcount, array_of_indices, array_of_statuses, 1, "MPI_Waitsome");
}

int MPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
		 MPI_Status array_of_statuses[])
{
	return some(incount, array_of_requests, outcount, array_of_indices, array_of_statuses, 0, "MPI_Testsome");
}

int MPI_Request_free(MPI_Request *request)
{
	static const char fn[] = "MPI_Request_free";
	struct mpi_req *r = request ? mpii_req_get(*request) : NULL;

	if (!r)
		return mpii_err(NULL, MPI_ERR_REQUEST, fn, "Invalid MPI_Request");
	mpii_lock();
	int now = r->done || (r->persistent && !r->active);
	if (!now) {
		/* Released when it completes, which cannot happen before the lock goes. */
		if (r->handle)
			mpii_obj_free(NOW_MPI_KREQ, r->handle);
		r->handle = 0;
		r->freed = 1;
		r->persistent = 0;
	}
	mpii_unlock();
	if (now)
		mpii_req_release(r);
	*request = MPI_REQUEST_NULL;
	return MPI_SUCCESS;
}

int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
	int bad;
	struct mpi_req *r = active_req(request, &bad);

	if (bad)
		return mpii_err(NULL, MPI_ERR_REQUEST, "MPI_Request_get_status", "Invalid MPI_Request");
	if (!flag)
		return mpii_err(NULL, MPI_ERR_ARG, "MPI_Request_get_status", "Null pointer in parameter flag");
	if (!r) {
		/* The empty status (MPI-3.1 §3.7.3), its error MPI_SUCCESS, as MPICH gives it here. */
		*flag = 1;
		mpii_status_empty(status);
		if (status != MPI_STATUS_IGNORE && status)
			status->MPI_ERROR = MPI_SUCCESS;
		return MPI_SUCCESS;
	}
	if (!r->done)
		mpii_poke();
	*flag = r->done;
	if (r->done) {
		if (r->kind == REQ_GREQ && r->query_fn) {
			MPI_Status q = r->status;
			r->query_fn(r->extra, &q);
			if (status != MPI_STATUS_IGNORE && status)
				*status = q;
		} else {
			mpii_req_status(r, status);
		}
	}
	return MPI_SUCCESS;
}

int MPI_Cancel(MPI_Request *request)
{
	struct mpi_req *r = request ? mpii_req_get(*request) : NULL;

	if (!r)
		return mpii_err(NULL, MPI_ERR_REQUEST, "MPI_Cancel", "Invalid MPI_Request");
	mpii_req_cancel(r);
	return MPI_SUCCESS;
}

int MPI_Test_cancelled(const MPI_Status *status, int *flag)
{
	if (!status || status == MPI_STATUS_IGNORE || !flag)
		return mpii_err(NULL, MPI_ERR_ARG, "MPI_Test_cancelled", "Null pointer in parameter %s",
				flag ? "status" : "flag");
	*flag = status->count_hi_and_cancelled & 1;
	return MPI_SUCCESS;
}

int MPI_Status_set_cancelled(MPI_Status *status, int flag)
{
	if (!status || status == MPI_STATUS_IGNORE)
		return mpii_err(NULL, MPI_ERR_ARG, "MPI_Status_set_cancelled", "Null pointer in parameter status");
	status->count_hi_and_cancelled = (status->count_hi_and_cancelled & ~1) | (flag != 0);
	return MPI_SUCCESS;
}

int MPI_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
		       MPI_Grequest_cancel_function *cancel_fn, void *extra_state, MPI_Request *request)
{
	static const char fn[] = "MPI_Grequest_start";
	struct mpi_req *r;

	if (!request)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Null pointer in parameter request");
	r = mpii_req_new(REQ_GREQ, NULL);
	if (!r)
		return mpii_err(NULL, MPI_ERR_NO_MEM, fn, "no memory for a request");
	r->active = 1;
	r->query_fn = query_fn;
	r->free_fn = free_fn;
	r->cancel_fn = cancel_fn;
	r->extra = extra_state;
	*request = mpii_req_handle(r);
	return MPI_SUCCESS;
}

int MPI_Grequest_complete(MPI_Request request)
{
	struct mpi_req *r = mpii_req_get(request);

	if (!r || r->kind != REQ_GREQ)
		return mpii_err(NULL, MPI_ERR_REQUEST, "MPI_Grequest_complete", "Invalid generalized request");
	mpii_req_complete(r, MPI_SUCCESS);
	return MPI_SUCCESS;
}

/* --- probing -------------------------------------------------------------------------------------- */

static int probe(int source, int tag, MPI_Comm comm, int block, int take, int *flag, MPI_Message *msg,
		 MPI_Status *status, const char *fn)
{
	struct mpi_comm *c;
	int e, f;

	if ((e = mpii_check_comm(comm, fn, &c)) != MPI_SUCCESS || (e = mpii_check_rank(c, source, 1, fn)) != MPI_SUCCESS ||
	    (e = mpii_check_tag(c, tag, 1, fn)) != MPI_SUCCESS)
		return e;
	if (!block && !flag)
		return mpii_err(c, MPI_ERR_ARG, fn, "Null pointer in parameter flag");
	if (take && !msg)
		return mpii_err(c, MPI_ERR_ARG, fn, "Null pointer in parameter message");
	e = mpii_probe(c, source, tag, block, take, flag ? flag : &f, status, msg);
	if (take && msg && !(flag ? *flag : f))
		*msg = MPI_MESSAGE_NULL;
	return fail(c, e);
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
	return probe(source, tag, comm, 1, 0, NULL, NULL, status, "MPI_Probe");
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
	return probe(source, tag, comm, 0, 0, flag, NULL, status, "MPI_Iprobe");
}

int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
	return probe(source, tag, comm, 1, 1, NULL, message, status, "MPI_Mprobe");
}

int MPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status)
{
	return probe(source, tag, comm, 0, 1, flag, message, status, "MPI_Improbe");
}

static int mrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *message, struct mpi_req **out, const char *fn)
{
	struct mpi_req *r;
	int e;

	*out = NULL;
	if (!message)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Null pointer in parameter message");
	if ((e = mpii_check_count(NULL, count, fn)) != MPI_SUCCESS || (e = mpii_check_type(NULL, dt, fn)) != MPI_SUCCESS)
		return e;
	if (*message == MPI_MESSAGE_NO_PROC) {
		r = mpii_req_generic(NULL);
		if (!r)
			return mpii_err(NULL, MPI_ERR_NO_MEM, fn, "no memory for a request");
		r->kind = REQ_RECV;
		r->status.MPI_SOURCE = MPI_PROC_NULL;
		r->status.MPI_TAG = MPI_ANY_TAG;
		mpii_req_complete(r, MPI_SUCCESS);
		*message = MPI_MESSAGE_NULL;
		*out = r;
		return MPI_SUCCESS;
	}
	r = mpii_req_new(REQ_RECV, NULL);
	if (!r)
		return mpii_err(NULL, MPI_ERR_NO_MEM, fn, "no memory for a request");
	r->buf = buf;
	r->count = count;
	r->dt = dt;
	mpii_type_ref(dt);
	r->active = 1;
	if (mpii_mrecv_start(r, *message) != MPI_SUCCESS) {
		mpii_req_release(r);
		return mpii_err(NULL, MPI_ERR_REQUEST, fn, "Invalid MPI_Message");
	}
	*message = MPI_MESSAGE_NULL;
	*out = r;
	return MPI_SUCCESS;
}

int MPI_Mrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *message, MPI_Status *status)
{
	struct mpi_req *r;
	int e = mrecv(buf, count, dt, message, &r, "MPI_Mrecv");

	if (!r)
		return e;
	return fail(NULL, mpii_req_wait(r, status));
}

int MPI_Imrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *message, MPI_Request *request)
{
	struct mpi_req *r;
	int e;

	if (!request)
		return mpii_err(NULL, MPI_ERR_ARG, "MPI_Imrecv", "Null pointer in parameter request");
	e = mrecv(buf, count, dt, message, &r, "MPI_Imrecv");
	if (!r)
		return e;
	*request = mpii_req_handle(r);
	return MPI_SUCCESS;
}
