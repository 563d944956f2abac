/*
 * MPI's point to point over Madeleine (lib/mad.h), as MPICH once ran over
 * it: every MPI message is one Madeleine message whose header travels
 * RECV_EXPRESS (the envelope: context, source rank, tag, length) and whose
 * body travels RECV_CHEAPER, so that the receiver reads the envelope first
 * and then says where the body goes: straight into the program's buffer
 * when a receive was posted for it (on the rmem driver the sender's remote
 * WRITEs land there, no copy on either side, but for the first quarter of
 * a large body, up to 64 KiB, which goes early and is copied once: see
 * lib/mad_rmem.c), into a buffer of its own
 * when none was (an unexpected message, copied once when the receive
 * comes).  This is the paper's own use of the two receive modes
 * (madeleine paper 2.1.2, and 2.1.4's RPC: "the header is extracted in
 * EXPRESS mode, then the body can be extracted directly into its final
 * location").
 *
 * Small messages are eager (the body goes with the envelope).  Messages of
 * more than MPII_EAGER_MAX bytes go by rendezvous: an RTS (the envelope
 * alone) is matched like any message; once matched, the receiver answers
 * CTS with its request's id, and the sender's DATA (the body, named by that
 * id) lands in the posted buffer: a large message is never held in a
 * buffer of the receiver's own.  A synchronous send of an eager message
 * asks the receiver for an acknowledgement (SACK) once matched.
 *
 * Threads.  "mpi-rx" receives every Madeleine message and matches it; it
 * never sends, so no pair of nodes can wait on each other's sends (every
 * node always consumes what arrives, so every send's credit comes back).
 * "mpi-tx" sends what the receive side decided (CTS, SACK) and the DATA
 * of a rendezvous once its CTS came; the program's own thread sends eager
 * messages and RTS itself, at once.  So a program needs no thread of its
 * own for progress: a rendezvous completes while the program computes.
 *
 * Order.  Madeleine's channel keeps order per pair of nodes, and matching
 * happens in arrival order under one lock, so messages of one sender,
 * communicator and tag match in the order sent (MPI's non-overtaking
 * rule), eager and rendezvous alike.
 *
 * A rank that dies.  The fabric declares a peer gone when what was sent to
 * it goes unacknowledged for its peer timeout; a rank that only waits for
 * a message sends nothing, so while a request waits on a peer, mpi-tx
 * sends that peer a PING (an envelope the receiver counts and drops) at
 * most once a second: if the peer's node stopped, the fabric declares it
 * dead and the request fails with MPI_ERR_PROC_FAILED instead of waiting
 * for ever.
 *
 * Cancelling a send (MPI-3.1 3.8.4: its Wait must then return whatever
 * the other side does).  An eager send is complete when MPI_Cancel comes;
 * one still waiting to be matched (a rendezvous's RTS, a synchronous
 * eager message) asks its receiver with CANCEL: the receiver takes the
 * message out of its unexpected queue if no receive matched it yet, and
 * answers CANCELLED with yes or no; yes completes the send as cancelled,
 * no leaves it to complete as matched.
 *
 * Frames from the network are untrusted: an envelope that names no known
 * request, a kind we do not send or a length beyond what we accept is
 * counted (mpii_counters.proto_errors), reported once, and its body
 * drained; nothing is written outside a buffer the program gave.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/init.h"
#include "kernel/node.h"
#include "kernel/sync.h"
#include "kernel/thread.h"
#include "kernel/timer.h"
#include "kernel/tsc.h"
#include "lib/mad.h"
#include "lib/mpi/coll.h"
#include "lib/mpi/pt2pt.h"
#include "net/fabric/fabric.h"

#define CHUNK (8u << 20)		/* a Madeleine pack is at most 16 MiB - 1 */
#define MAX_MSG ((uint64_t)CHUNK * (MAD_MAX_PACKS - 2))	/* the envelope takes two packs */

enum wire_kind { W_EAGER = 1, W_RTS, W_CTS, W_DATA, W_SACK, W_PING, W_CANCEL, W_CANCELLED };
enum { F_SYNC = 1, F_LEN = 2 };	/* F_LEN: on the wire only (a 4-byte length pack follows) */

/*
 * An envelope, as the code holds it.  On the wire it is a head of 8
 * bytes, one EXPRESS pack (struct wire_head: kind and flags, the sender's
 * rank, the context, the tag); then, for the kinds that name a request
 * (RTS, CTS, DATA, SACK, synchronous eager), a second pack of 24 (struct
 * wire_tail: the length and both request ids), or else, when the message
 * has a body, a 4-byte pack of its length.  A plain eager message of 0
 * bytes carries 8: on the cell driver its chunk is one WRITE cell, as
 * Madeleine's null message is.
 */
struct wire {
	uint8_t kind;
	uint8_t flags;			/* F_SYNC */
	uint32_t ctx;			/* below 65536 (MPII_CTX_LIMIT) */
	int32_t src;			/* sender's rank in the communicator, below MAX_NODES */
	int32_t tag;
	uint32_t len;			/* at most MAX_MSG */
	uint64_t sreq;			/* sender's request id (RTS, CTS, SACK, eager SYNC) */
	uint64_t rreq;			/* receiver's request id (CTS, DATA) */
};

struct wire_head {
	uint8_t kind_flags;		/* kind in the low four bits, flags in the high four */
	uint8_t src;
	uint16_t ctx;
	int32_t tag;
};

struct wire_tail {
	uint32_t len;
	uint32_t pad;
	uint64_t sreq, rreq;
};
_Static_assert(sizeof(struct wire_head) == 8 && sizeof(struct wire_tail) == 24, "envelope sizes");
_Static_assert(MAX_NODES <= 256 && MPII_CTX_LIMIT <= 65536, "a rank and a context fit the head");

static int has_ids(uint8_t kind, uint8_t flags)
{
	return kind != W_PING && (kind != W_EAGER || (flags & F_SYNC));
}

/* Request states. */
enum {
	S_NEW,
	S_WAIT_SACK,			/* eager synchronous: sent, waiting to be matched */
	S_WAIT_CTS,			/* rendezvous: RTS sent */
	S_DATA_READY,			/* CTS came: mpi-tx sends the body */
	S_SELF,				/* to this rank: waiting in the unexpected queue */
	R_POSTED,
	R_WAIT_DATA,			/* rendezvous matched: CTS going or gone */
	R_CLAIMED,			/* matched an eager message still arriving */
	R_RECEIVING,			/* mpi-rx is writing its body */
	X_DONE,
};

/* A message that came before its receive (or the envelope of one, RTS). */
struct unexp {
	struct unexp *next;
	uint32_t ctx;
	int src, tag, node;		/* rank in the communicator, tag, world rank */
	int kind;			/* W_EAGER or W_RTS, or 0: a send to self */
	int sync;			/* the sender waits for SACK */
	int arriving;			/* the body is still coming (mpi-rx) */
	int error;			/* MPI error class if the body was lost */
	uint64_t len, sreq;
	struct mpi_req *claim;		/* the receive that took it while arriving */
	struct mpi_req *self;		/* kind 0: the send to self */
	uint8_t *data;
};

/* A control message for mpi-tx to send. */
struct ctl {
	struct ctl *next;
	int node;
	struct wire w;
};

struct mpii_counters mpii_counters;
#define COUNTER_TYPE struct mpii_counters
static const struct counter_row mpii_rows[] = { MPII_COUNTERS(COUNTER_ROW) };
#undef COUNTER_TYPE
static struct mutex big = MUTEX_INIT;
static struct waitq wake_wq = WAITQ_INIT, tx_wq = WAITQ_INIT;
static volatile uint64_t wake_seq;
static struct mpi_req *posted, **posted_tail = &posted;
static struct unexp *unexp, **unexp_tail = &unexp;
static struct mpi_req *waiting;		/* sends and receives a rendezvous or SACK names */
static struct mpi_req *txq, **txq_tail = &txq;
static struct ctl *ctlq, **ctlq_tail = &ctlq;
static uint64_t next_id = 1;
/*
 * The channels: normally one, the driver mpi= names.  The bench opens one
 * per driver (mpii_use_driver) to measure each in one run: each channel
 * has its receive thread, and sends go on the current one.
 */
#define MAX_CHANNELS 4
static struct mad_channel *chans[MAX_CHANNELS];
static const char *chan_names[MAX_CHANNELS];
static int nchans;
static struct mad_channel *ch;
static volatile int running;
static struct thread *tx_thread;

void mpii_lock(void)
{
	mutex_lock(&big);
}

void mpii_unlock(void)
{
	mutex_unlock(&big);
}

/*
 * Who receives.  A thread of the program's that waits receives itself, so
 * that a message it waits for completes in its own thread, polling the
 * link as Madeleine's own receivers do, with no hand-over from mpi-rx (a
 * wake-up and two switches on every message, which under QEMU's TCG cost
 * more than the message).  The role stays with the thread after its wait
 * (receiver, with receiver_waiting clear), so a program that alternates
 * sends and waits keeps it; another thread that waits takes it over, and
 * mpi-rx takes it back once its holder has not waited for RX_TAKE_NS, so
 * that messages are received while the program computes: the program
 * needs no thread of its own for progress.  mpi-rx runs at the program's
 * priority and is kicked out of Madeleine (mad_recv_kick) only when it is
 * in a receive (rx_receiving); every driver has a kick (tcp's ends lwIP's
 * select).  On one without, mpi-rx would keep the role: a hand-over would
 * wait for its wait to end.
 */
static struct thread *volatile receiver;	/* NULL: mpi-rx */
static volatile int receiver_waiting;		/* the holder is in mpii_wait_until */
static uint64_t receiver_left;			/* when it left it (timer ticks: no TSC read per wait) */
static volatile int rx_receiving;
static struct waitq rx_wq = WAITQ_INIT;
#define RX_TAKE_NS 20000000ULL
#define RX_TAKE_TICKS (RX_TAKE_NS * TICK_HZ / 1000000000ULL + 1)

void mpii_wake(void)
{
	wake_seq++;
	if (wake_wq.head)
		waitq_wake_all(&wake_wq);
	/* A thread receiving in Madeleine waits on the link, not on wake_wq. */
	if (receiver && receiver_waiting && receiver != thread_current())
		mad_recv_kick(ch);
}

int mpii_rank_dead(int w)
{
	return w != mpii_world_rank && fabric_peer_dead(w);
}

static void proto_error(int node, const char *what)
{
	if (mpii_counters.proto_errors++ < 8)
		printf("mpi: node %d sent %s: dropped\n", node, what);
}

static int on_message(int node);

/* --- requests ------------------------------------------------------------------------------ */

struct mpi_req *mpii_req_new(enum req_kind kind, struct mpi_comm *c)
{
	struct mpi_req *r = calloc(1, sizeof *r);

	if (!r)
		return NULL;
	r->kind = kind;
	r->comm = c;
	r->dt = MPI_DATATYPE_NULL;
	if (c)
		mpii_comm_ref(c);
	return r;
}

void mpii_status_empty(MPI_Status *st)
{
	if (st == MPI_STATUS_IGNORE || !st)
		return;
	st->MPI_SOURCE = MPI_ANY_SOURCE;
	st->MPI_TAG = MPI_ANY_TAG;
	st->count_lo = 0;		/* MPI_ERROR as it was, as MPICH leaves it (mpii_req_status) */
	st->count_hi_and_cancelled = 0;
}

/*
 * The status of a finished request, for the program: all of it but
 * MPI_ERROR, which the single-completion calls leave as it was (MPI-3.1
 * §3.2.5); the calls that complete several set it themselves.
 */
void mpii_req_status(struct mpi_req *r, MPI_Status *st)
{
	if (st != MPI_STATUS_IGNORE && st) {
		int e = st->MPI_ERROR;
		*st = r->status;
		st->MPI_ERROR = e;
	}
}

static void complete_parent_or_freed(struct mpi_req *r);

/* The request is finished: wake its waiters.  Lock held. */
static inline void complete(struct mpi_req *r, int err)
{
	if (err != MPI_SUCCESS && r->status.MPI_ERROR == MPI_SUCCESS)
		r->status.MPI_ERROR = err;
	r->state = X_DONE;
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
	if (r->parent || r->freed)
		complete_parent_or_freed(r);
	else
		mpii_wake();
}

/* complete's less common end: a part of a request, or one freed while active. */
static __attribute__((noinline)) void complete_parent_or_freed(struct mpi_req *r)
{
	if (r->parent) {
		struct mpi_req *p = r->parent;
		if (r->status.MPI_ERROR != MPI_SUCCESS && p->status.MPI_ERROR == MPI_SUCCESS)
			p->status.MPI_ERROR = r->status.MPI_ERROR;
		if (r->kind == REQ_RECV) {
			int e = p->status.MPI_ERROR;
			p->status = r->status;
			if (e != MPI_SUCCESS)
				p->status.MPI_ERROR = e;
		}
		if (--p->pending == 0)
			complete(p, MPI_SUCCESS);
		return;
	}
	if (r->freed && !r->persistent) {
		/* Request_free'd while active: nobody waits for it. */
		mpii_unlock();
		mpii_req_release(r);
		mpii_lock();
	}
	mpii_wake();
}

void mpii_req_release(struct mpi_req *r)
{
	if (!r)
		return;
	if (r->handle)
		mpii_obj_free(NOW_MPI_KREQ, r->handle);
	if (r->kind == REQ_GREQ && r->free_fn)
		r->free_fn(r->extra);
	if (r->kind == REQ_PCOLL && r->extra)
		mpii_pcoll_free(r->extra);
	for (int i = 0; i < 2; i++)
		mpii_req_release(r->sub[i]);
	if (r->dt != MPI_DATATYPE_NULL)
		mpii_type_unref(r->dt);
	if (r->comm)
		mpii_comm_unref(r->comm);
	free(r->tmp);
	free(r);
}

MPI_Request mpii_req_handle(struct mpi_req *r)
{
	if (!r)
		return MPI_REQUEST_NULL;
	if (!r->handle) {
		int h = mpii_obj_new(NOW_MPI_KREQ, r);
		if (h < 0)
			return MPI_REQUEST_NULL;
		r->handle = h;
	}
	return r->handle;
}

struct mpi_req *mpii_req_get(MPI_Request h)
{
	return mpii_obj_get(NOW_MPI_KREQ, h);
}

struct mpi_req *mpii_req_pcoll(struct mpi_comm *c, void *job)
{
	struct mpi_req *r = mpii_req_new(REQ_PCOLL, c);

	if (!r)
		return NULL;
	r->persistent = 1;
	r->done = 1;
	if (mpii_req_handle(r) == MPI_REQUEST_NULL) {
		mpii_req_release(r);	/* r->extra not set yet: the job stays the caller's */
		return NULL;
	}
	r->extra = job;
	return r;
}

struct mpi_req *mpii_req_generic(struct mpi_comm *c)
{
	struct mpi_req *r = mpii_req_new(REQ_GENERIC, c);

	if (r)
		r->active = 1;
	return r;
}

void mpii_req_complete(struct mpi_req *r, int err)
{
	mpii_lock();
	complete(r, err);
	mpii_unlock();
}

/* --- waiting --------------------------------------------------------------------------------- */

static int done_flag(void *arg);

/* The role is this thread's, or free, or held by one not waiting: take it.  Lock held.  1: taken. */
static int claim_role(int *kick)
{
	struct thread *me = thread_current();

	if (!mad_recv_kickable(ch) || (receiver != me && receiver && receiver_waiting))
		return 0;
	*kick = !receiver && rx_receiving;
	receiver = me;
	receiver_waiting = 1;
	return 1;
}

/*
 * Wait until done(arg); mine: this thread took the receiver role (under
 * the lock, with kick: mpi-rx to be kicked out of its receive) and goes
 * straight to receiving.
 */
static int wait_loop(int (*done)(void *arg), void *arg, int mine, int kick)
{
	int looked = mine;		/* post_recv just looked under the lock */

	for (;;) {
		if (kick) {
			mad_recv_kick(ch);	/* mpi-rx leaves its receive and waits for the role */
			kick = 0;
		}
		/*
		 * The wait that just ended completed it (the common case): done
		 * without the lock, the role's holder no longer waiting.  done
		 * is published with release (complete).
		 */
		if (mine && done == done_flag && __atomic_load_n(&((struct mpi_req *)arg)->done, __ATOMIC_ACQUIRE)) {
			receiver_waiting = 0;
			receiver_left = ticks;
			return MPI_SUCCESS;
		}
		if (looked) {
			looked = 0;
		} else {
			mpii_lock();
			if (done(arg)) {
				if (mine) {
					receiver_waiting = 0;
					receiver_left = ticks;
				}
				mpii_unlock();
				return MPI_SUCCESS;
			}
			/* The role is this thread's, or free, or held by one not waiting: it receives itself. */
			if (!mine)
				mine = claim_role(&kick);
			uint64_t seq = wake_seq;
			mpii_unlock();
			if (kick)
				continue;
			if (!mine) {
				irqflags_t f = irq_save();
				/* The timeout: a rank's death is noticed by looking (mpii_req_check_dead). */
				if (wake_seq == seq)
					waitq_wait_timeout(&wake_wq, 100000000);
				irq_restore(f);
				continue;
			}
		}
		/* -EINTR (a completion elsewhere kicked us), -ETIMEDOUT: look again. */
		mad_recvbuf_receive_on(ch, on_message, 100000000);
	}
}

int mpii_wait_until(int (*done)(void *arg), void *arg)
{
	return wait_loop(done, arg, 0, 0);
}

void mpii_poke(void)
{
	/* mpi-rx and mpi-tx run on their own; give them the CPU if they have work. */
	thread_yield();
}

static void queue_ctl(int node, const struct wire *w);

static int no_pings;			/* mpii_pings_off: the bench's run */
static volatile int tx_pinging;		/* mpi-tx took a PING off its queue and sends it (lock) */

/* A request waits on world rank w: make sure its death would be noticed.  Lock held. */
static void ping(int w)
{
	static uint64_t last[MAX_NODES];
	uint64_t now = cycles();

	if (no_pings || w == mpii_world_rank || w < 0 || w >= MAX_NODES || (last[w] && now - last[w] < tsc_hz))
		return;
	last[w] = now;
	struct wire p = { .kind = W_PING };
	queue_ctl(w, &p);
}

void mpii_req_check_dead(struct mpi_req *r)
{
	for (int i = 0; i < 2; i++)
		if (r->sub[i] && !r->done)
			mpii_req_check_dead(r->sub[i]);
	if (r->done || !r->comm)
		return;
	int dead = 0;
	if (r->kind == REQ_RECV && r->state == R_POSTED && r->peer == MPI_ANY_SOURCE) {
		for (int i = 0; i < mpii_comm_peers(r->comm) && !dead; i++) {
			ping(mpii_comm_world(r->comm, i));
			dead = mpii_rank_dead(mpii_comm_world(r->comm, i));
		}
	} else if ((r->kind == REQ_SEND || r->kind == REQ_RECV) && r->peer >= 0) {
		ping(r->node);
		dead = mpii_rank_dead(r->node);
	}
	if (!dead)
		return;
	if (r->kind == REQ_RECV && r->state == R_POSTED) {
		for (struct mpi_req **p = &posted; *p; p = &(*p)->next)
			if (*p == r) {
				*p = r->next;
				if (!*p)
					posted_tail = p;
				break;
			}
	} else if (r->state == S_WAIT_CTS || r->state == S_WAIT_SACK || r->state == R_WAIT_DATA) {
		for (struct mpi_req **p = &waiting; *p; p = &(*p)->next)
			if (*p == r) {
				*p = r->next;
				break;
			}
	} else {
		return;		/* mpi-rx or mpi-tx has it; the driver's error will come */
	}
	complete(r, mpii_errcode(MPI_ERR_PROC_FAILED, "MPI", "rank %d (node %d) is gone: its node stopped "
				 "answering", r->peer == MPI_ANY_SOURCE ? -1 : r->peer, r->node));
}

/* --- Madeleine ------------------------------------------------------------------------------ */

static int mad_error(int r, int node, const char *what)
{
	mpii_counters.send_errors++;
	if (r == -EHOSTDOWN || r == -ETIMEDOUT || r == -ECONNRESET || mpii_rank_dead(node))
		return mpii_errcode(MPI_ERR_PROC_FAILED, what, "node %d is gone (%d)", node, r);
	return mpii_errcode(MPI_ERR_OTHER, what, "Madeleine could not send to node %d (error %d)", node, r);
}

/*
 * Send the envelope h, tlen bytes of its tail at t (0: none), and len bytes
 * at body (may be NULL for none) to node.  MPI_SUCCESS or a code.  The
 * EXPRESS packs are read when the message goes: h and t live until then.
 */
static int mad_put_raw(int node, const struct wire_head *h, const void *t, size_t tlen, const void *body,
		       uint64_t len)
{
	int r = mad_sendbuf_init_on(ch, node);

	if (r == 0)
		r = mad_sendbuf_pack_byte(MAD_SND_CHEAPER | MAD_RECV_EXPRESS, h, sizeof *h);
	if (r == 0 && tlen)
		r = mad_sendbuf_pack_byte(MAD_SND_CHEAPER | MAD_RECV_EXPRESS, t, tlen);
	for (uint64_t off = 0; r == 0 && off < len; off += CHUNK)
		r = mad_sendbuf_pack_byte(MAD_SND_CHEAPER | MAD_RECV_CHEAPER, (const uint8_t *)body + off,
					  len - off < CHUNK ? len - off : CHUNK);
	if (r == 0)
		return mad_sendbuf_send() == 0 ? MPI_SUCCESS : mad_error(-EIO, node, "MPI_Send");
	/* A pack failed (nothing of it went): end the message without sending it. */
	mad_sendbuf_send();
	return mad_error(r, node, "MPI_Send");
}

/* Send w and len bytes at body (may be NULL for none) to node.  MPI_SUCCESS or a code. */
static int mad_put(int node, const struct wire *w, const void *body, uint64_t len)
{
	int ids = has_ids(w->kind, w->flags);
	struct wire_head h = { (uint8_t)(w->kind | (w->flags | (w->len && !ids ? F_LEN : 0)) << 4),
			       (uint8_t)w->src, (uint16_t)w->ctx, w->tag };
	struct wire_tail t = { w->len, 0, w->sreq, w->rreq };

	return mad_put_raw(node, &h, &t, ids ? sizeof t : w->len ? sizeof t.len : 0, body, len);
}

/* The receiver's side of mad_put's envelope: 0, or -1 if it is not MPI's. */
static int get_envelope(struct wire *w)
{
	struct wire_head h;
	struct wire_tail t = { 0 };

	if (mad_recvbuf_unpack_byte(MAD_SND_CHEAPER | MAD_RECV_EXPRESS, &h, sizeof h) < 0)
		return -1;
	w->kind = h.kind_flags & 15;
	w->flags = (uint8_t)(h.kind_flags >> 4);
	w->src = h.src;
	w->ctx = h.ctx;
	w->tag = h.tag;
	int ids = has_ids(w->kind, w->flags);
	if ((ids || (w->flags & F_LEN)) &&
	    mad_recvbuf_unpack_byte(MAD_SND_CHEAPER | MAD_RECV_EXPRESS, &t, ids ? sizeof t : sizeof t.len) < 0)
		return -1;
	w->flags &= (uint8_t)~F_LEN;
	w->len = t.len;
	w->sreq = t.sreq;
	w->rreq = t.rreq;
	return 0;
}

/* Unpack a body of len bytes into dst (the receiver's side of mad_put). */
static int mad_get(void *dst, uint64_t len)
{
	int r = 0;

	for (uint64_t off = 0; r == 0 && off < len; off += CHUNK)
		r = mad_recvbuf_unpack_byte(MAD_SND_CHEAPER | MAD_RECV_CHEAPER, (uint8_t *)dst + off,
					    len - off < CHUNK ? len - off : CHUNK);
	return r;
}

/* Throw a body away (a message no one may take). */
static void mad_drain(uint64_t len)
{
	static uint8_t sink[4096];

	for (uint64_t off = 0; off < len; off += sizeof sink)
		mad_recvbuf_unpack_byte(MAD_SND_CHEAPER | MAD_RECV_CHEAPER, sink,
					len - off < sizeof sink ? len - off : sizeof sink);
}

/* --- matching ------------------------------------------------------------------------------- */

/*
 * Does a message (ctx, src, tag) match a receive (rctx, rsrc, rtag)?  Tags
 * below MPI_ANY_TAG are the library's own (comm.c's agreement on a new
 * context runs on its parent's): MPI_ANY_TAG never matches them.
 */
static int matches(uint32_t ctx, int src, int tag, uint32_t rctx, int rsrc, int rtag)
{
	return ctx == rctx && (rsrc == MPI_ANY_SOURCE || rsrc == src) && (rtag == tag || (rtag == MPI_ANY_TAG && tag >= 0));
}

static struct mpi_req *take_posted(uint32_t ctx, int src, int tag)
{
	for (struct mpi_req **p = &posted; *p; p = &(*p)->next) {
		struct mpi_req *r = *p;
		if (matches(ctx, src, tag, r->ctx, r->peer, r->tag)) {
			*p = r->next;
			if (!*p)
				posted_tail = p;
			r->next = NULL;
			return r;
		}
	}
	return NULL;
}

static struct unexp *find_unexp(uint32_t ctx, int src, int tag, int take)
{
	for (struct unexp **p = &unexp; *p; p = &(*p)->next) {
		struct unexp *u = *p;
		if (matches(u->ctx, u->src, u->tag, ctx, src, tag)) {
			if (take) {
				*p = u->next;
				if (!*p)
					unexp_tail = p;
				u->next = NULL;
			}
			return u;
		}
	}
	return NULL;
}

static void add_unexp(struct unexp *u)
{
	u->next = NULL;
	*unexp_tail = u;
	unexp_tail = &u->next;
	mpii_counters.unexpected++;
}

static struct mpi_req *take_waiting(uint64_t id, enum req_kind kind)
{
	for (struct mpi_req **p = &waiting; *p; p = &(*p)->next) {
		struct mpi_req *r = *p;
		if (r->id == id && r->kind == kind) {
			*p = r->next;
			r->next = NULL;
			return r;
		}
	}
	return NULL;
}

static void add_waiting(struct mpi_req *r)
{
	r->id = next_id++;
	r->next = waiting;
	waiting = r;
}

static void queue_ctl(int node, const struct wire *w)
{
	struct ctl *c = malloc(sizeof *c);

	if (!c) {
		printf("mpi: no memory for a control message to node %d: the peer's request will fail\n", node);
		return;
	}
	c->next = NULL;
	c->node = node;
	c->w = *w;
	*ctlq_tail = c;
	ctlq_tail = &c->next;
	waitq_wake_all(&tx_wq);
}

static void queue_data(struct mpi_req *s)
{
	s->state = S_DATA_READY;
	s->next = NULL;
	*txq_tail = s;
	txq_tail = &s->next;
	waitq_wake_all(&tx_wq);
}

/* Record the envelope of the message a receive matched. */
static void set_envelope(struct mpi_req *r, int src, int tag, uint64_t len)
{
	r->status.MPI_SOURCE = src;
	r->status.MPI_TAG = tag;
	mpii_status_set_bytes(&r->status, len > r->len ? r->len : len);
	if (len > r->len)
		r->status.MPI_ERROR = mpii_errcode(MPI_ERR_TRUNCATE, "MPI_Recv", "Message truncated; %lu bytes "
						   "received but buffer size is %lu", (unsigned long)len,
						   (unsigned long)r->len);
}

/* Deliver n bytes at data (the packed message) into receive r's buffer. */
static void deliver(struct mpi_req *r, const void *data, uint64_t n)
{
	if (n > r->len)
		n = r->len;
	if (n)
		mpii_unpack(data, n, r->buf, r->count, r->dt);
}

/* Where a matched receive's body goes: its buffer when contiguous and large enough, else staging. */
static void *body_dest(struct mpi_req *r, uint64_t len)
{
	const void *start;

	if (len <= r->len && mpii_type_contig(r->buf, r->count, r->dt, &start))
		return (void *)start;
	free(r->tmp);
	r->tmp = malloc(len ? len : 1);
	return r->tmp;
}

/* The body landed at dst (body_dest's answer): unpack from staging if it was that. */
static void body_done(struct mpi_req *r, void *dst, uint64_t len)
{
	if (dst == r->tmp && r->tmp) {
		deliver(r, r->tmp, len);
		free(r->tmp);
		r->tmp = NULL;
	}
}

static void send_sack(int node, uint64_t sreq)
{
	struct wire w = { .kind = W_SACK, .sreq = sreq };

	queue_ctl(node, &w);
}

static void send_cts(struct mpi_req *r)
{
	struct wire w = { .kind = W_CTS, .sreq = r->peer_id };

	add_waiting(r);
	w.rreq = r->id;
	r->state = R_WAIT_DATA;
	queue_ctl(r->node, &w);
}

/*
 * A receive r takes the unexpected message u (lock held; u off the queue).
 * Returns 1 if r is complete.
 */
static int take_unexp(struct mpi_req *r, struct unexp *u)
{
	r->node = u->node;
	set_envelope(r, u->src, u->tag, u->len);
	switch (u->kind) {
	case W_EAGER:
		if (u->arriving) {
			r->state = R_CLAIMED;
			u->claim = r;
			return 0;
		}
		if (u->error)
			r->status.MPI_ERROR = mpii_errcode(u->error, "MPI_Recv", "the message from rank %d was lost "
							   "on the way", u->src);
		else
			deliver(r, u->data, u->len);
		if (u->sync)
			send_sack(u->node, u->sreq);
		free(u->data);
		free(u);
		complete(r, MPI_SUCCESS);
		return 1;
	case W_RTS:
		r->peer_id = u->sreq;
		free(u);
		send_cts(r);
		return 0;
	default: {
		/* A send to this rank: copy straight from the sender's buffer. */
		struct mpi_req *s = u->self;
		if (u->data)
			deliver(r, u->data, u->len);
		else if (u->len) {
			void *tmp = malloc(u->len);
			if (tmp) {
				mpii_pack(s->buf, s->count, s->dt, tmp);
				deliver(r, tmp, u->len);
				free(tmp);
			}
		}
		free(u->data);
		free(u);
		if (s)
			complete(s, MPI_SUCCESS);
		complete(r, MPI_SUCCESS);
		return 1;
	}
	}
}

/* --- receiving (mpi-rx) --------------------------------------------------------------------- */

static int wire_ok(int node, const struct wire *w)
{
	if (w->kind < W_EAGER || w->kind > W_CANCELLED) {
		proto_error(node, "a message of an unknown kind");
		return 0;
	}
	if ((w->kind == W_EAGER && w->len > MPII_EAGER_MAX) || w->len > MAX_MSG || w->tag == MPI_ANY_TAG) {
		proto_error(node, "an envelope out of range");
		return 0;
	}
	return 1;
}

static int on_eager(int node, const struct wire *w)
{
	mpii_lock();
	struct mpi_req *r = take_posted(w->ctx, w->src, w->tag);
	struct unexp *u = NULL;
	if (r) {
		r->node = node;
		r->state = R_RECEIVING;
		set_envelope(r, w->src, w->tag, w->len);
		if (!w->len) {
			/* Nothing to unpack: taken, received and completed under one hold of the lock. */
			int rd = mad_recvbuf_receive_data();
			if (rd < 0)
				r->status.MPI_ERROR = mpii_errcode(MPI_ERR_OTHER, "MPI_Recv", "the message from rank %d "
								   "could not be received (%d)", w->src, rd);
			if (w->flags & F_SYNC)
				send_sack(node, w->sreq);
			complete(r, MPI_SUCCESS);
			mpii_unlock();
			return 0;
		}
	} else {
		u = calloc(1, sizeof *u);
		if (u) {
			u->ctx = w->ctx;
			u->src = w->src;
			u->tag = w->tag;
			u->node = node;
			u->kind = W_EAGER;
			u->sync = w->flags & F_SYNC;
			u->sreq = w->sreq;
			u->len = w->len;
			u->arriving = 1;
			add_unexp(u);	/* on the queue before the lock goes: a receive posted now finds it */
		}
	}
	mpii_unlock();
	if (r) {
		void *dst = body_dest(r, w->len);
		int e = dst || !w->len ? mad_get(dst, w->len) : -ENOMEM;
		if (!dst && w->len)
			mad_drain(w->len);
		int rd = mad_recvbuf_receive_data();
		mpii_lock();
		if (e < 0 || rd < 0)
			r->status.MPI_ERROR = mpii_errcode(MPI_ERR_OTHER, "MPI_Recv", "the message from rank %d "
							   "could not be received (%d)", w->src, e < 0 ? e : rd);
		else
			body_done(r, dst, w->len);
		if (w->flags & F_SYNC)
			send_sack(node, w->sreq);
		complete(r, MPI_SUCCESS);
		mpii_unlock();
		return 0;
	}
	uint8_t *data = u ? malloc(w->len ? w->len : 1) : NULL;
	int e = data ? mad_get(data, w->len) : -ENOMEM;
	if (!data)
		mad_drain(w->len);
	int rd = mad_recvbuf_receive_data();
	if (!u) {
		printf("mpi: no memory for a message of %lu bytes from node %d: dropped\n", (unsigned long)w->len,
		       node);
		return 0;
	}
	mpii_lock();
	u->data = data;
	u->arriving = 0;
	if (e < 0 || rd < 0)
		u->error = e == -ENOMEM ? MPI_ERR_NO_MEM : MPI_ERR_OTHER;
	if (u->claim) {
		/* A receive took it while it arrived. */
		struct mpi_req *c = u->claim;
		if (u->error)
			c->status.MPI_ERROR = mpii_errcode(u->error, "MPI_Recv", "the message from rank %d was lost "
							   "on the way", u->src);
		else
			deliver(c, u->data, u->len);
		if (u->sync)
			send_sack(node, u->sreq);
		free(u->data);
		free(u);
		complete(c, MPI_SUCCESS);
	}
	mpii_wake();		/* a probe may wait for it */
	mpii_unlock();
	return 0;
}

static int on_rts(int node, const struct wire *w)
{
	int rd = mad_recvbuf_receive_data();

	if (rd < 0)
		return 0;
	mpii_lock();
	struct mpi_req *r = take_posted(w->ctx, w->src, w->tag);
	if (r) {
		r->node = node;
		r->peer_id = w->sreq;
		set_envelope(r, w->src, w->tag, w->len);
		send_cts(r);
	} else {
		struct unexp *u = calloc(1, sizeof *u);
		if (u) {
			u->ctx = w->ctx;
			u->src = w->src;
			u->tag = w->tag;
			u->node = node;
			u->kind = W_RTS;
			u->sreq = w->sreq;
			u->len = w->len;
			add_unexp(u);
			mpii_wake();
		} else {
			printf("mpi: no memory to keep an envelope from node %d: its send will not complete\n", node);
		}
	}
	mpii_unlock();
	return 0;
}

static int on_data(int node, const struct wire *w)
{
	mpii_lock();
	struct mpi_req *r = take_waiting(w->rreq, REQ_RECV);
	if (r && (r->node != node || r->state != R_WAIT_DATA)) {
		/* Not what we asked that node for: put it back, drop the message. */
		r->next = waiting;
		waiting = r;
		r = NULL;
	}
	if (r)
		r->state = R_RECEIVING;
	mpii_unlock();
	if (!r) {
		proto_error(node, "DATA for no receive of ours");
		mad_drain(w->len);
		mad_recvbuf_receive_data();
		return 0;
	}
	uint64_t len = w->len;
	void *dst = body_dest(r, len);
	int e = dst || !len ? mad_get(dst, len) : -ENOMEM;
	if (!dst && len)
		mad_drain(len);
	int rd = mad_recvbuf_receive_data();
	mpii_lock();
	if (e < 0 || rd < 0)
		r->status.MPI_ERROR = mpii_errcode(MPI_ERR_OTHER, "MPI_Recv", "the body from rank %d could not be "
						   "received (%d)", r->status.MPI_SOURCE, e < 0 ? e : rd);
	else
		body_done(r, dst, len);
	complete(r, MPI_SUCCESS);
	mpii_unlock();
	return 0;
}

/*
 * The sender of node's message sreq asks to cancel it: taken out of the
 * unexpected queue if no receive matched it (an RTS, or a synchronous
 * eager message whose body is all here), and the answer queued.
 */
static void on_cancel(int node, uint64_t sreq)
{
	struct wire a = { .kind = W_CANCELLED, .sreq = sreq };

	mpii_lock();
	for (struct unexp **p = &unexp; *p; p = &(*p)->next) {
		struct unexp *u = *p;
		if (u->node != node || u->sreq != sreq || u->arriving || u->claim ||
		    !(u->kind == W_RTS || (u->kind == W_EAGER && u->sync)))
			continue;
		*p = u->next;
		if (!*p)
			unexp_tail = p;
		free(u->data);
		free(u);
		a.rreq = 1;
		break;
	}
	queue_ctl(node, &a);
	mpii_unlock();
}

static int on_message(int node)
{
	struct wire w;

	if (get_envelope(&w) < 0) {
		proto_error(node, "a message that is not MPI's");
		mad_recvbuf_receive_data();
		return 0;
	}
	if (!wire_ok(node, &w) || (w.kind != W_EAGER && w.kind != W_RTS && w.kind != W_DATA && w.len)) {
		if (w.kind >= W_EAGER && w.kind <= W_DATA && (w.kind == W_EAGER || w.kind == W_DATA) &&
		    w.len <= MAX_MSG)
			mad_drain(w.len);
		mad_recvbuf_receive_data();
		return 0;
	}
	switch (w.kind) {
	case W_EAGER:
		return on_eager(node, &w);
	case W_RTS:
		return on_rts(node, &w);
	case W_DATA:
		return on_data(node, &w);
	case W_CTS: {
		mad_recvbuf_receive_data();
		mpii_lock();
		struct mpi_req *s = take_waiting(w.sreq, REQ_SEND);
		if (s && s->node == node && s->state == S_WAIT_CTS) {
			s->peer_id = w.rreq;
			queue_data(s);
		} else {
			if (s) {
				s->next = waiting;
				waiting = s;
			}
			proto_error(node, "a CTS for no send of ours");
		}
		mpii_unlock();
		return 0;
	}
	case W_PING:
		mad_recvbuf_receive_data();
		mpii_counters.pings_heard++;
		return 0;
	case W_CANCEL:
		mad_recvbuf_receive_data();
		on_cancel(node, w.sreq);
		return 0;
	case W_CANCELLED: {
		mad_recvbuf_receive_data();
		mpii_lock();
		struct mpi_req *s = take_waiting(w.sreq, REQ_SEND);
		if (s && s->node == node && (s->state == S_WAIT_CTS || s->state == S_WAIT_SACK) && w.rreq == 1) {
			s->status.count_hi_and_cancelled |= 1;
			complete(s, MPI_SUCCESS);
		} else if (s) {
			/* Too late: matched; its CTS or SACK comes (or came) and completes it. */
			s->next = waiting;
			waiting = s;
		} else if (w.rreq == 1) {
			proto_error(node, "a cancellation for no send of ours");
		}
		mpii_unlock();
		return 0;
	}
	case W_SACK: {
		mad_recvbuf_receive_data();
		mpii_lock();
		struct mpi_req *s = take_waiting(w.sreq, REQ_SEND);
		if (s && s->node == node && s->state == S_WAIT_SACK) {
			complete(s, MPI_SUCCESS);
		} else {
			if (s) {
				s->next = waiting;
				waiting = s;
			}
			proto_error(node, "an acknowledgement for no send of ours");
		}
		mpii_unlock();
		return 0;
	}
	}
	return 0;
}

/* mpii_pause: the receive threads stopped, and how many of them are. */
static volatile int paused;
static int npaused;
static struct waitq pause_wq = WAITQ_INIT;

static void *rx_main(void *arg)
{
	struct mad_channel *mine = arg;

	while (running) {
		if (paused) {
			mpii_lock();
			npaused++;
			mpii_unlock();
			irqflags_t f = irq_save();
			while (paused)
				waitq_wait_timeout(&pause_wq, 10000000);
			irq_restore(f);
			mpii_lock();
			npaused--;
			mpii_unlock();
			continue;
		}
		mpii_lock();
		if (mine == ch && receiver) {
			/* A holder that has not waited for a while gives the role back. */
			if (!receiver_waiting && ticks - receiver_left >= RX_TAKE_TICKS) {
				receiver = NULL;
			} else {
				mpii_unlock();
				irqflags_t f = irq_save();
				waitq_wait_timeout(&rx_wq, RX_TAKE_NS);
				irq_restore(f);
				continue;
			}
		}
		if (mine == ch)
			rx_receiving = 1;
		mpii_unlock();
		int r = mad_recvbuf_receive_on(mine, on_message, 100000000);
		rx_receiving = 0;
		if (r < 0 && r != -ETIMEDOUT && r != -EPROTO && r != -EINTR)
			thread_sleep_ns(1000000);
		if (r == -ETIMEDOUT) {
			/* Quiet: a good moment to look for ranks that died. */
			mpii_lock();
			mpii_wake();
			mpii_unlock();
		}
	}
	return NULL;
}

/* --- sending (mpi-tx) ---------------------------------------------------------------------- */

static const void *send_body(struct mpi_req *s)
{
	const void *start;

	if (s->tmp || s->len == 0)
		return s->tmp;
	if (mpii_type_contig(s->buf, s->count, s->dt, &start))
		return start;
	s->tmp = malloc(s->len);
	if (s->tmp)
		mpii_pack(s->buf, s->count, s->dt, s->tmp);
	return s->tmp;
}

static void *tx_main(void *arg)
{
	(void)arg;
	while (running) {
		mpii_lock();
		struct ctl *c = ctlq;
		struct mpi_req *s = NULL;
		if (c) {
			ctlq = c->next;
			if (!ctlq)
				ctlq_tail = &ctlq;
			if (c->w.kind == W_PING && no_pings) {
				/* Queued before mpii_pings_off: not sent. */
				mpii_unlock();
				free(c);
				continue;
			}
			tx_pinging = c->w.kind == W_PING;
		} else if ((s = txq)) {
			txq = s->next;
			if (!txq)
				txq_tail = &txq;
		}
		mpii_unlock();
		if (c) {
			mad_put(c->node, &c->w, NULL, 0);
			free(c);
			if (tx_pinging) {
				mpii_lock();
				tx_pinging = 0;
				mpii_unlock();
			}
			continue;
		}
		if (s) {
			struct wire w = { .kind = W_DATA, .ctx = s->ctx, .src = s->comm->rank, .tag = s->tag,
					  .len = (uint32_t)s->len, .sreq = s->id, .rreq = s->peer_id };
			const void *body = send_body(s);
			int e = body || !s->len ? mad_put(s->node, &w, body, s->len)
						: mpii_errcode(MPI_ERR_NO_MEM, "MPI_Send", "no memory to pack %lu bytes",
							       (unsigned long)s->len);
			mpii_lock();
			complete(s, e);
			mpii_unlock();
			continue;
		}
		irqflags_t f = irq_save();
		if (!ctlq && !txq && running)
			waitq_wait_timeout(&tx_wq, 100000000);
		irq_restore(f);
	}
	return NULL;
}

/* --- the internal point to point ----------------------------------------------------------- */

static int done_flag(void *arg)
{
	struct mpi_req *r = arg;

	if (!r->done)
		mpii_req_check_dead(r);
	return r->done;
}

/* Start send s (its fields set).  MPI_SUCCESS or an error code (then s is complete with it). */
static int start_send(struct mpi_req *s)
{
	struct mpi_comm *c = s->comm;

	s->done = 0;
	s->status = (MPI_Status){ 0 };
	s->state = S_NEW;
	s->len = (size_t)s->count * mpii_type_size(s->dt);
	if (s->peer == MPI_PROC_NULL) {
		mpii_lock();
		complete(s, MPI_SUCCESS);
		mpii_unlock();
		return MPI_SUCCESS;
	}
	s->node = mpii_comm_world(c, s->peer);
	if (s->node == mpii_world_rank) {
		/* To this rank: match here, under the lock, as a message from the network would be. */
		mpii_counters.self_sent++;
		mpii_lock();
		struct mpi_req *r = take_posted(s->ctx, c->rank, s->tag);
		if (r) {
			r->node = s->node;
			set_envelope(r, c->rank, s->tag, s->len);
			if (s->len) {
				const void *src;
				if (mpii_type_contig(s->buf, s->count, s->dt, &src)) {
					deliver(r, src, s->len);
				} else {
					void *tmp = malloc(s->len);
					if (tmp) {
						mpii_pack(s->buf, s->count, s->dt, tmp);
						deliver(r, tmp, s->len);
						free(tmp);
					}
				}
			}
			complete(r, MPI_SUCCESS);
			complete(s, MPI_SUCCESS);
			mpii_unlock();
			return MPI_SUCCESS;
		}
		struct unexp *u = calloc(1, sizeof *u);
		if (!u) {
			mpii_unlock();
			return mpii_errcode(MPI_ERR_NO_MEM, "MPI_Send", "no memory for a message to self");
		}
		u->ctx = s->ctx;
		u->src = c->rank;
		u->tag = s->tag;
		u->node = s->node;
		u->len = s->len;
		/* A small standard send completes now, from a copy; the rest wait to be matched. */
		if (s->mode != MPII_SEND_SYNC && s->len <= MPII_EAGER_MAX && (u->data = malloc(s->len ? s->len : 1))) {
			mpii_pack(s->buf, s->count, s->dt, u->data);
			add_unexp(u);
			complete(s, MPI_SUCCESS);
		} else {
			u->self = s;
			s->state = S_SELF;
			add_unexp(u);
		}
		mpii_wake();
		mpii_unlock();
		return MPI_SUCCESS;
	}
	if (s->len > MAX_MSG) {
		int e = mpii_errcode(MPI_ERR_COUNT, "MPI_Send", "a message of %lu bytes; at most %lu go in one",
				     (unsigned long)s->len, (unsigned long)MAX_MSG);
		mpii_req_complete(s, e);
		return e;
	}
	struct wire w = { .ctx = s->ctx, .src = c->rank, .tag = s->tag, .len = (uint32_t)s->len };
	if (s->len <= MPII_EAGER_MAX) {
		const void *body = send_body(s);
		int e;
		if (!body && s->len)
			e = mpii_errcode(MPI_ERR_NO_MEM, "MPI_Send", "no memory to pack %lu bytes", (unsigned long)s->len);
		else {
			w.kind = W_EAGER;
			if (s->mode == MPII_SEND_SYNC) {
				/* Registered before the message goes: its SACK may come back at once. */
				w.flags = F_SYNC;
				mpii_lock();
				add_waiting(s);
				s->state = S_WAIT_SACK;
				w.sreq = s->id;
				mpii_unlock();
			}
			mpii_counters.eager_sent++;
			e = mad_put(s->node, &w, body, s->len);
		}
		free(s->tmp);
		s->tmp = NULL;
		mpii_lock();
		if (e != MPI_SUCCESS || s->mode != MPII_SEND_SYNC) {
			if (s->state == S_WAIT_SACK)
				take_waiting(s->id, REQ_SEND);
			complete(s, e);
		}
		mpii_unlock();
		return e;
	}
	/* Rendezvous: the envelope now, the body once the receiver is ready for it. */
	mpii_counters.rndv_sent++;
	w.kind = W_RTS;
	mpii_lock();
	add_waiting(s);
	s->state = S_WAIT_CTS;
	w.sreq = s->id;
	mpii_unlock();
	int e = mad_put(s->node, &w, NULL, 0);
	if (e != MPI_SUCCESS) {
		mpii_lock();
		if (take_waiting(s->id, REQ_SEND))
			complete(s, e);
		mpii_unlock();
	}
	return e;
}

/* Post receive r (its fields set); with claim (a blocking receive), take the receiver role in the same hold of the lock. */
static int post_recv(struct mpi_req *r, int *claim, int *kick)
{
	struct mpi_comm *c = r->comm;
	size_t psz = mpii_plain_size(r->dt);

	r->done = 0;
	r->status = (MPI_Status){ 0 };
	r->len = (size_t)r->count * (psz ? psz : mpii_type_size(r->dt));
	if (r->peer == MPI_PROC_NULL) {
		mpii_lock();
		r->status.MPI_SOURCE = MPI_PROC_NULL;
		r->status.MPI_TAG = MPI_ANY_TAG;
		complete(r, MPI_SUCCESS);
		mpii_unlock();
		return MPI_SUCCESS;
	}
	if (r->peer != MPI_ANY_SOURCE)
		r->node = mpii_comm_world(c, r->peer);
	mpii_lock();
	struct unexp *u = find_unexp(r->ctx, r->peer, r->tag, 1);
	if (u) {
		take_unexp(r, u);
	} else {
		r->state = R_POSTED;
		r->next = NULL;
		*posted_tail = r;
		posted_tail = &r->next;
		if (claim)
			*claim = claim_role(kick);
	}
	mpii_unlock();
	return MPI_SUCCESS;
}

static int start_recv(struct mpi_req *r)
{
	return post_recv(r, NULL, NULL);
}

static struct mpi_req *fill(struct mpi_req *r, void *buf, int count, MPI_Datatype dt, int peer, int tag,
			    struct mpi_comm *c, int ctxoff, enum mpii_send_mode mode)
{
	r->buf = buf;
	r->count = count;
	r->dt = dt;
	mpii_type_ref(dt);
	r->peer = peer;
	r->tag = tag;
	r->ctx = c->ctx + (uint32_t)ctxoff;
	r->mode = mode;
	r->active = 1;
	return r;
}

int mpii_isend(const void *buf, int count, MPI_Datatype dt, int peer, int tag, struct mpi_comm *c, int ctxoff,
	       enum mpii_send_mode mode, struct mpi_req **out)
{
	struct mpi_req *s = mpii_req_new(REQ_SEND, c);

	*out = s;
	if (!s)
		return mpii_errcode(MPI_ERR_NO_MEM, "MPI_Isend", "no memory for a request");
	fill(s, (void *)buf, count, dt, peer, tag, c, ctxoff, mode);
	return start_send(s);
}

int mpii_irecv(void *buf, int count, MPI_Datatype dt, int peer, int tag, struct mpi_comm *c, int ctxoff,
	       struct mpi_req **out)
{
	struct mpi_req *r = mpii_req_new(REQ_RECV, c);

	*out = r;
	if (!r)
		return mpii_errcode(MPI_ERR_NO_MEM, "MPI_Irecv", "no memory for a request");
	fill(r, buf, count, dt, peer, tag, c, ctxoff, MPII_SEND_STD);
	return start_recv(r);
}

struct mpi_req *mpii_req_persistent(enum req_kind kind, const void *buf, int count, MPI_Datatype dt, int peer,
				    int tag, struct mpi_comm *c, enum mpii_send_mode mode)
{
	struct mpi_req *r = mpii_req_new(kind, c);

	if (!r)
		return NULL;
	fill(r, (void *)buf, count, dt, peer, tag, c, 0, mode);
	r->persistent = 1;
	r->active = 0;
	r->done = 1;
	return r;
}

int mpii_req_start(struct mpi_req *r)
{
	r->active = 1;
	r->state = S_NEW;
	return r->kind == REQ_SEND ? start_send(r) : start_recv(r);
}

void mpii_req_cancel(struct mpi_req *r)
{
	mpii_lock();
	if (r->kind == REQ_RECV && r->state == R_POSTED && !r->done) {
		for (struct mpi_req **p = &posted; *p; p = &(*p)->next)
			if (*p == r) {
				*p = r->next;
				if (!*p)
					posted_tail = p;
				r->status.count_hi_and_cancelled |= 1;
				r->status.MPI_SOURCE = MPI_ANY_SOURCE;
				r->status.MPI_TAG = MPI_ANY_TAG;
				complete(r, MPI_SUCCESS);
				break;
			}
	} else if (r->kind == REQ_SEND && r->state == S_SELF && !r->done) {
		/* To this rank, not matched yet: out of the queue, cancelled. */
		for (struct unexp **p = &unexp; *p; p = &(*p)->next)
			if ((*p)->self == r) {
				struct unexp *u = *p;
				*p = u->next;
				if (!*p)
					unexp_tail = p;
				free(u->data);
				free(u);
				r->status.count_hi_and_cancelled |= 1;
				complete(r, MPI_SUCCESS);
				break;
			}
	} else if (r->kind == REQ_SEND && (r->state == S_WAIT_CTS || r->state == S_WAIT_SACK) && !r->done &&
		   !r->cancel_asked) {
		/* Waiting to be matched: its receiver takes it back if no receive has. */
		struct wire w = { .kind = W_CANCEL, .sreq = r->id };
		r->cancel_asked = 1;
		queue_ctl(r->node, &w);
	} else if (r->kind == REQ_GREQ && r->cancel_fn) {
		int d = r->done;
		mpii_unlock();
		r->cancel_fn(r->extra, d);
		return;
	}
	mpii_unlock();
}

int mpii_req_wait(struct mpi_req *r, MPI_Status *status)
{
	int e;

	if (!r) {
		mpii_status_empty(status);
		return MPI_SUCCESS;
	}
	if (!r->done)
		mpii_wait_until(done_flag, r);
	mpii_req_status(r, status);
	e = r->status.MPI_ERROR;
	mpii_req_release(r);
	return e;
}

/*
 * A request that lives on the stack of a blocking call, which waits for it
 * before returning (nothing refers to it after it is done): no allocation,
 * and no reference taken on what the call's own arguments hold.
 */
static void stack_req(struct mpi_req *r, enum req_kind kind, const void *buf, int count, MPI_Datatype dt, int peer,
		      int tag, struct mpi_comm *c, int ctxoff, enum mpii_send_mode mode)
{
	memset(r, 0, sizeof *r);
	r->kind = kind;
	r->comm = c;
	r->buf = (void *)buf;
	r->count = count;
	r->dt = dt;
	r->peer = peer;
	r->tag = tag;
	r->ctx = c->ctx + (uint32_t)ctxoff;
	r->mode = mode;
	r->active = 1;
}

int mpii_send_eager(int node, struct mpi_comm *c, int ctxoff, int tag, const void *start, size_t len)
{
	/* mad_put's envelope of an eager message that names no request. */
	struct wire_head h = { (uint8_t)(W_EAGER | (len ? F_LEN : 0) << 4), (uint8_t)c->rank,
			       (uint16_t)(c->ctx + (uint32_t)ctxoff), tag };
	uint32_t l = (uint32_t)len;

	mpii_counters.eager_sent++;
	return mad_put_raw(node, &h, &l, len ? sizeof l : 0, start, len);
}

int mpii_send_mode(const void *buf, int count, MPI_Datatype dt, int peer, int tag, struct mpi_comm *c, int ctxoff,
		   enum mpii_send_mode mode)
{
	struct mpi_req s;

	/* The common case, an eager message to another node: sent, and done, with no request. */
	if (peer != MPI_PROC_NULL && mode != MPII_SEND_SYNC) {
		int node = mpii_comm_world(c, peer);
		size_t psz = mpii_plain_size(dt);
		size_t len = (size_t)count * (psz ? psz : mpii_type_size(dt));
		const void *start = buf;
		if (node != mpii_world_rank && len <= MPII_EAGER_MAX &&
		    (len == 0 || psz || mpii_type_contig(buf, count, dt, &start))) {
			return mpii_send_eager(node, c, ctxoff, tag, start, len);
		}
	}
	stack_req(&s, REQ_SEND, buf, count, dt, peer, tag, c, ctxoff, mode);
	start_send(&s);
	if (!s.done)
		mpii_wait_until(done_flag, &s);
	free(s.tmp);
	return s.status.MPI_ERROR;
}

int mpii_send(const void *buf, int count, MPI_Datatype dt, int peer, int tag, struct mpi_comm *c, int ctxoff)
{
	return mpii_send_mode(buf, count, dt, peer, tag, c, ctxoff, MPII_SEND_STD);
}

int mpii_recv(void *buf, int count, MPI_Datatype dt, int peer, int tag, struct mpi_comm *c, int ctxoff,
	      MPI_Status *status)
{
	struct mpi_req r;
	int mine = 0, kick = 0;

	stack_req(&r, REQ_RECV, buf, count, dt, peer, tag, c, ctxoff, MPII_SEND_STD);
	post_recv(&r, &mine, &kick);
	if (!r.done || mine)
		wait_loop(done_flag, &r, mine, kick);
	if (r.tmp)
		free(r.tmp);
	mpii_req_status(&r, status);
	return r.status.MPI_ERROR;
}

int mpii_sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf, int rcount,
		  MPI_Datatype rtype, int src, int rtag, struct mpi_comm *c, int ctxoff, MPI_Status *status)
{
	struct mpi_req *r, *s;
	int er = mpii_irecv(rbuf, rcount, rtype, src, rtag, c, ctxoff, &r);
	int es = mpii_isend(sbuf, scount, stype, dest, stag, c, ctxoff, MPII_SEND_STD, &s);
	int ws = s ? mpii_req_wait(s, MPI_STATUS_IGNORE) : es;
	int wr = r ? mpii_req_wait(r, status) : er;

	if (er != MPI_SUCCESS)
		return er;
	if (es != MPI_SUCCESS)
		return es;
	return ws != MPI_SUCCESS ? ws : wr;
}

/* --- probing ----------------------------------------------------------------------------------- */

/* Fill st from an unexpected message's envelope. */
static void unexp_status(const struct unexp *u, MPI_Status *st)
{
	if (st == MPI_STATUS_IGNORE || !st)
		return;
	st->MPI_SOURCE = u->src;
	st->MPI_TAG = u->tag;
	st->count_hi_and_cancelled = 0;		/* MPI_ERROR as it was (mpii_req_status) */
	mpii_status_set_bytes(st, u->len);
}

struct probe {
	uint32_t ctx;
	int src, tag, take;
	struct unexp *found;
	struct mpi_comm *c;
	int dead;
};

static int probe_done(void *arg)
{
	struct probe *p = arg;

	p->found = find_unexp(p->ctx, p->src, p->tag, p->take);
	if (p->found)
		return 1;
	/* A probe for a rank that died would wait forever. */
	if (p->src >= 0 && mpii_rank_dead(mpii_comm_world(p->c, p->src)))
		p->dead = 1;
	return p->dead;
}

int mpii_probe(struct mpi_comm *c, int src, int tag, int block, int take, int *flag, MPI_Status *st,
	       MPI_Message *msg)
{
	struct probe p = { .ctx = c->ctx, .src = src, .tag = tag, .take = take, .c = c };

	if (src == MPI_PROC_NULL) {
		*flag = 1;
		mpii_status_empty(st);
		if (st != MPI_STATUS_IGNORE)
			st->MPI_SOURCE = MPI_PROC_NULL;
		if (msg)
			*msg = MPI_MESSAGE_NO_PROC;
		return MPI_SUCCESS;
	}
	if (block) {
		mpii_wait_until(probe_done, &p);
	} else {
		mpii_poke();
		mpii_lock();
		probe_done(&p);
		mpii_unlock();
	}
	if (p.dead && !p.found)
		return mpii_errcode(MPI_ERR_PROC_FAILED, "MPI_Probe", "rank %d is gone", src);
	*flag = p.found != NULL;
	if (p.found) {
		unexp_status(p.found, st);
		if (msg) {
			int h = mpii_obj_new(NOW_MPI_KMSG, p.found);
			if (h < 0) {
				/* No handle: put it back first in the queue, where it was. */
				mpii_lock();
				p.found->next = unexp;
				unexp = p.found;
				if (unexp_tail == &unexp)
					unexp_tail = &p.found->next;
				mpii_unlock();
				return mpii_errcode(MPI_ERR_NO_MEM, "MPI_Mprobe", "no memory for a message handle");
			}
			*msg = h;
		}
	}
	return MPI_SUCCESS;
}

/* Receive the message msg (from Mprobe) into r. */
int mpii_mrecv_start(struct mpi_req *r, MPI_Message msg)
{
	struct unexp *u = mpii_obj_get(NOW_MPI_KMSG, msg);

	if (!u)
		return MPI_ERR_REQUEST;
	mpii_obj_free(NOW_MPI_KMSG, msg);
	r->done = 0;
	r->status = (MPI_Status){ 0 };
	r->len = (size_t)r->count * mpii_type_size(r->dt);
	mpii_lock();
	take_unexp(r, u);
	mpii_unlock();
	return MPI_SUCCESS;
}

/* --- start and stop --------------------------------------------------------------------------- */

int mpii_use_driver(const char *driver)
{
	for (int i = 0; i < nchans; i++)
		if (strcmp(chan_names[i], driver) == 0) {
			ch = chans[i];
			return 0;
		}
	if (nchans == MAX_CHANNELS)
		return -ENOSPC;
	struct mad_channel *c = mad_open(driver);
	if (!c)
		return -ENODEV;
	char name[THREAD_NAME_MAX];
	snprintf(name, sizeof name, "mpi-rx-%s", driver);
	if (!thread_create(name, rx_main, c, PRIO_NORMAL, 64 * 1024))
		return -ENOMEM;
	chans[nchans] = c;
	chan_names[nchans++] = driver;
	ch = c;
	return 0;
}

/*
 * No PING is queued from now on, none still queued is sent, and one mpi-tx
 * is sending goes before this returns: every PING of this node's went
 * before the caller's next message, and is received before it.
 */
void mpii_pings_off(void)
{
	mpii_lock();
	no_pings = 1;
	mpii_unlock();
	for (;;) {
		mpii_lock();
		int sending = tx_pinging;
		mpii_unlock();
		if (!sending)
			return;
		thread_sleep_ns(100000);
	}
}

void mpii_pause(int on)
{
	if (!on) {
		irqflags_t f = irq_save();
		paused = 0;
		waitq_wake_all(&pause_wq);
		irq_restore(f);
		return;
	}
	paused = 1;
	for (;;) {
		mpii_lock();
		int all = npaused == nchans;
		mpii_unlock();
		if (all)
			return;
		for (int i = 0; i < nchans; i++)
			mad_recv_kick(chans[i]);
		thread_sleep_ns(100000);
	}
}

int mpii_pt2pt_start(const char *driver)
{
	running = 1;
	int r = mpii_use_driver(driver);
	if (r < 0)
		return r;
	tx_thread = thread_create("mpi-tx", tx_main, NULL, PRIO_NORMAL, 64 * 1024);
	return tx_thread ? 0 : -ENOMEM;
}

void mpii_pt2pt_stop(void)
{
	/* The threads stay: a peer may still be sending control (credits) to this node. */
}

/*
 * An NMI's dump (kernel/init.h, DUMP_HOOK): who receives, the posted
 * receives, the unexpected messages, the sends and receives a rendezvous
 * or SACK names, and the counters, read as they are (at most 8 of each).
 */
static void mpi_dump(void)
{
	int n;

	if (!running)
		return;
	printf("mpi: rank %d, receiver %s%s, rx_receiving %d, mpi-tx queue %s%s\n", mpii_world_rank,
	       receiver ? receiver->name : "mpi-rx", receiver_waiting ? " (waiting)" : "", rx_receiving,
	       ctlq ? "control " : "", txq ? "data" : "");
	n = 0;
	for (struct mpi_req *r = posted; r && n < 8; r = r->next, n++)
		printf("mpi: posted receive ctx %u src %d tag %d len %lu\n", r->ctx, r->peer, r->tag,
		       (unsigned long)r->len);
	n = 0;
	for (struct unexp *u = unexp; u && n < 8; u = u->next, n++)
		printf("mpi: unexpected ctx %u src %d (node %d) tag %d kind %d len %lu%s%s\n", u->ctx, u->src,
		       u->node, u->tag, u->kind, (unsigned long)u->len, u->arriving ? " arriving" : "",
		       u->claim ? " claimed" : "");
	n = 0;
	for (struct mpi_req *r = waiting; r && n < 8; r = r->next, n++)
		printf("mpi: waiting %s node %d id %lu state %d\n", r->kind == REQ_SEND ? "send" : "receive",
		       r->node, (unsigned long)r->id, r->state);
	counters_print("mpi", mpii_rows, COUNTER_ROWS(mpii_rows), &mpii_counters);
}
DUMP_HOOK(mpi, mpi_dump);
