/*
 * Remote memory, the importing and issuing side: descriptors, and the
 * issuing half of WRITE, READ, compare-and-swap and fetch-and-add.  The
 * receive half is serve.c, the exporting side segments.c; requests and
 * answers go through the fabric's request/answer facility
 * (net/call/call.h).  See rmem.h.
 *
 * Choices where the paper leaves one (DESIGN.md: "where the paper leaves a
 * choice, DESIGN choices and their reasons go in the module's header"):
 *  - Rights and generations are per importing node, so revoking one node
 *    leaves the others' descriptors working.
 *  - A refused non-SYNC WRITE is reported back asynchronously to the
 *    descriptor's sink and kept there until rmem_sync(); a SYNC WRITE
 *    waits for the target's verdict.  The issuer also checks bounds and
 *    rights locally, as the paper's co-processor "verifies the rights of
 *    the sender", but only the target's check protects the target.
 *  - READ answers are matched to an outstanding call by (node, tag); the
 *    destination comes from the issuer's record, so a peer cannot make
 *    this node write anywhere by sending answers it never asked for.
 *  - Atomic operations act on naturally aligned 8-byte words (the address,
 *    not just the offset, so a segment may start anywhere).
 *  - Write inhibit refuses atomics as well as WRITEs: it protects an RPC
 *    server's stack (paper 3.1.1) from any change.
 */
#include <errno.h>
#include <string.h>

#include "kernel/builtins.h"	/* memcpy_upto; the kernel build has it already */

#include "kernel/node.h"
#include "kernel/thread.h"
#include "kernel/trace.h"
#include "kernel/trap.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"
#include "net/call/call.h"
#include "net/call/names.h"
#include "net/fabric/fabric.h"
#include "net/net.h"
#include "net/rmem/internal.h"
#include "net/rmem/proto.h"

_Static_assert(sizeof(struct read_dest) <= sizeof(((struct call *)0)->priv), "a READ's record fits its call");
_Static_assert(sizeof(struct write_train) <= sizeof(((struct call *)0)->priv), "a train's record fits its call");

struct desc {
	int used;
	int node;
	uint16_t seg;
	uint32_t gen;
	uint64_t size;
	int rights;
	int sink;			/* where refusals of asynchronous WRITEs land */
};

static struct desc descs[RMEM_MAX_DESC];

/* rmem_max_xfer for d (valid): the pair's message less the header, in whole KiB. */
static uint32_t xfer_max(const struct desc *d)
{
	size_t n = fabric_mtu(d->node) - RMEM_HDR_LEN;

	if (n <= RMEM_MAX_XFER)
		return RMEM_MAX_XFER;
	n &= ~(size_t)1023;
	return n > RMEM_XFER_LIMIT ? RMEM_XFER_LIMIT : n < RMEM_MAX_XFER ? RMEM_MAX_XFER : (uint32_t)n;
}

static struct desc *desc_get(int rd)
{
	if (rd < 0 || rd >= RMEM_MAX_DESC || !descs[rd].used)
		return NULL;
	return &descs[rd];
}

/* --- descriptors ------------------------------------------------------------- */

uint32_t rmem_max_xfer(int rd)
{
	const struct desc *d = desc_get(rd);

	return d ? xfer_max(d) : RMEM_MAX_XFER;
}

/* A new descriptor; -ENOSPC if the table or the sinks are full. */
static int desc_new(int node, int seg, uint32_t gen, uint64_t size, int rights)
{
	int sink = call_sink_new(RMEM_PROTO, node);

	if (sink < 0)
		return sink;
	irqflags_t f = irq_save();
	for (int i = 0; i < RMEM_MAX_DESC; i++) {
		struct desc *d = &descs[i];
		if (d->used)
			continue;
		d->used = 1;
		d->node = node;
		d->seg = (uint16_t)seg;
		d->gen = gen;
		d->size = size;
		d->rights = rights;
		d->sink = sink;
		irq_restore(f);
		return i;
	}
	irq_restore(f);
	call_sink_free(sink);
	return -ENOSPC;
}

int rmem_import(int node, const char *name)
{
	struct rmem_seg_answer a;
	size_t n = strlen(name);
	int r;

	if (!rmem_ready)
		return -ENODEV;
	if (n == 0 || n >= RMEM_NAME_LEN || node < 0 || node >= num_nodes || node == node_id)
		return -EINVAL;
	r = names_lookup(node, NAME_SEGMENT, name, &a, sizeof a, CALL_WAIT_NS);
	if (r < 0)
		return r;
	if (a.seg >= RMEM_MAX_SEGS || !a.rights || (a.rights & ~RMEM_ALL) ||
	    a.size == 0 || a.size > 0xffffffffULL)
		return -EPROTO;
	return desc_new(node, a.seg, a.gen, a.size, a.rights);
}

int rmem_import_wait(int node, const char *name, uint64_t timeout_ns)
{
	uint64_t end = cycles() + ns_to_cycles(timeout_ns);
	int r;

	while (((r = rmem_import(node, name)) == -ENOENT || r == -EACCES) && cycles() < end)
		thread_sleep_ns(10000000);
	return r;
}

int rmem_attach(int node, int seg, uint32_t gen, size_t size, int rights)
{
	if (node < 0 || node >= num_nodes || node == node_id || seg < 0 || seg >= RMEM_MAX_SEGS ||
	    size == 0 || size > 0xffffffffULL || (rights & ~RMEM_ALL))
		return -EINVAL;
	return desc_new(node, seg, gen, size, rights);
}

int rmem_release(int rd)
{
	irqflags_t f = irq_save();
	struct desc *d = desc_get(rd);
	if (d) {
		d->used = 0;
		call_sink_free(d->sink);
	}
	irq_restore(f);
	return d ? 0 : -EBADF;
}

int rmem_desc_info(int rd, int *node, size_t *size, int *rights)
{
	struct desc *d = desc_get(rd);

	if (!d)
		return -EBADF;
	if (node)
		*node = d->node;
	if (size)
		*size = d->size;
	if (rights)
		*rights = d->rights;
	return 0;
}

int rmem_desc_expect(int rd, int rights)
{
	struct desc *d = desc_get(rd);

	if (!d)
		return -EBADF;
	if (rights & ~RMEM_ALL)
		return -EINVAL;
	d->rights |= rights;
	return 0;
}

#ifdef NOW_TEST_HOOKS
int rmem_test_forge(int rd, int seg, int64_t gen, int64_t size, int rights)
{
	struct desc *d = desc_get(rd);

	if (!d)
		return -EBADF;
	if (seg >= 0)
		d->seg = (uint16_t)seg;
	if (gen >= 0)
		d->gen = (uint32_t)gen;
	if (size >= 0)
		d->size = (uint64_t)size;
	if (rights >= 0)
		d->rights = rights;
	return 0;
}
#endif

/* --- the issuing half -------------------------------------------------------- */

/*
 * An answer from src to one of this node's calls (or a refusal for a
 * sink), handed over by the receive half (serve.c): a READ's data into
 * its local segment, an atomic's old value, a write's verdict.
 */
void rmem_complete(int src, const struct rmem_msg *m, const uint8_t *data)
{
	struct call *c;
	int st = m->status;

	if (m->op == RM_STATUS && call_tag_is_sink(m->tag)) {
		/* A refused asynchronous WRITE: kept in its descriptor's sink until rmem_sync. */
		if (st != RMS_OK &&
		    call_sink_error(RMEM_PROTO, src, m->tag, rmem_status_errno(st)) == 0)
			rmem_ctr.errors_reported++;
		else
			rmem_ctr.responses_unmatched++;
		return;
	}
	if (!(c = call_find(RMEM_PROTO, src, m->tag))) {
		rmem_ctr.responses_unmatched++;
		return;
	}
	switch (m->op) {
	case RM_READ_RESP: {
		struct read_dest *d = (struct read_dest *)c->priv;
		if (c->kind != RK_READ) {
			rmem_ctr.responses_unmatched++;
			return;
		}
		if (st == RMS_OK) {
			struct segslot *s = rmem_seg(d->lseg);
			if (m->count != d->count) {
				rmem_ctr.responses_unmatched++;
				st = RMS_MALFORMED;
			} else if (!s || s->epoch != d->epoch ||
				   (uint64_t)d->doff + d->count > s->size) {
				/* The local segment went (its slot may hold another now). */
				rmem_ctr.responses_unmatched++;
				st = RMS_STALE;
			} else {
				memcpy_upto(s->base + d->doff, data, d->count, RMEM_MAX_XFER);
				trace_point(TS_MECH_DONE);
				if (d->flags & RMEM_INTR)
					rmem_arrived(d->lseg, d->doff, d->count);
			}
		}
		break;
	}
	case RM_ATOMIC_RESP:
		if (c->kind != RK_ATOMIC) {
			rmem_ctr.responses_unmatched++;
			return;
		}
		memcpy(&c->value, data, 8);
		trace_point(TS_MECH_DONE);
		break;
	case RM_STATUS:
		if (c->kind == RK_STATUS) {
			/*
			 * A SYNC write's pieces each answer, once: a piece is known by
			 * its offset, and a second answer to it (a raw frame the network
			 * doubled) counts for nothing.  The first refusal is the verdict.
			 */
			struct write_train *w = (struct write_train *)c->priv;
			uint32_t at = m->off - w->off0, i = at / w->piece;
			if (m->off < w->off0 || at % w->piece || i >= w->pieces) {
				rmem_ctr.responses_unmatched++;
				return;
			}
			if (w->seen[i / 64] & (1ULL << (i % 64))) {
				rmem_ctr.answers_duplicate++;
				return;
			}
			w->seen[i / 64] |= 1ULL << (i % 64);
			if (st != RMS_OK) {
				rmem_ctr.errors_reported++;
				if (w->first == RMS_OK)
					w->first = st;
			}
			if (w->pending > 1) {
				w->pending--;
				return;
			}
			call_done(c, rmem_status_errno(w->first));
			return;
		}
		/* A READ or an atomic refused. */
		if (st == RMS_OK) {
			rmem_ctr.responses_unmatched++;
			return;
		}
		break;
	}
	if (m->status != RMS_OK)
		rmem_ctr.errors_reported++;
	call_done(c, rmem_status_errno(st));
}


/*
 * The issuer's own check (paper 2.1: the co-processor verifies the
 * sender's rights).  The descriptor's incarnation is left to where the
 * request is queued (send_msg: -ECONNRESET); local_check asks first, for
 * the requests that go through the call facility.
 */
static inline int desc_check(const struct desc *d, uint32_t off, uint64_t count, int right)
{
	if (!d)
		return -EBADF;
	if (!(d->rights & right))
		return -EACCES;
	if (count == 0 || (uint64_t)off + count > d->size)
		return -EINVAL;
	return 0;
}

static int local_check(struct desc *d, uint32_t off, uint64_t count, int right)
{
	if (d && call_sink_stale(d->sink))
		return -ECONNRESET;	/* imported from an incarnation that is gone */
	return desc_check(d, off, count, right);
}

/* A message on d's segment, with the channel flags rmem's flags choose. */
static void msg_init(struct rmem_msg *m, const struct desc *d, uint8_t op, uint32_t off,
		     uint32_t count, int flags)
{
	*m = (struct rmem_msg){
		.op = op,
		.flags = (uint8_t)(((flags & RMEM_INTR) ? RM_F_INTR : 0) |
				   ((flags & RMEM_UNRELIABLE) ? RM_F_RAW : 0) |
				   ((flags & RMEM_MARKED) && op == RM_WRITE ? RM_F_MARKED : 0)),
		.seg = d->seg,
		.gen = d->gen,
		.off = off,
		.count = count,
	};
}

static int send_flags(int flags)
{
	return flags & RMEM_UNRELIABLE ? CALL_RAW : 0;
}

/*
 * Request m and dlen bytes of data to node, for its incarnation epoch
 * (the descriptor's: -ECONNRESET if the node was bound again since), on
 * the reliable channel, written where it goes (fabric_tx_begin: on the
 * shared-memory link the NIC's slot).
 */
static inline int send_msg(int node, uint32_t epoch, const struct rmem_msg *m, const void *data, size_t dlen,
			   int nowait)
{
	struct fabric_tx tx;
	int r;

	r = fabric_tx_begin(&tx, node, epoch, RMEM_PROTO, sizeof *m + dlen,
			    in_irq || nowait ? FABRIC_NOWAIT : 0);
	if (r < 0)
		return r;
	memcpy(tx.payload, m, sizeof *m);
	if (dlen)
		memcpy(tx.payload + sizeof *m, data, dlen);
	return fabric_tx_end(&tx);
}

/* Request m for call c: send_msg, or a raw frame through the call facility. */
static int post(struct call *c, uint32_t epoch, const struct rmem_msg *m, const void *data, size_t dlen,
		int raw)
{
	if (raw) {
		c->epoch = epoch;
		return call_post(c, m, sizeof *m, data, dlen, CALL_RAW);
	}
	return send_msg(c->node, epoch, m, data, dlen, 0);
}

int rmem_write(int rd, uint32_t off, const void *src, uint32_t count, int flags)
{
	struct desc *d = desc_get(rd);
	struct rmem_msg m;
	struct call *c;
	int r;

	if ((flags & RMEM_NOWAIT) && (flags & RMEM_SYNC))
		return -EINVAL;
	/* A SYNC write's call is for the node's current incarnation: ask of the descriptor's first. */
	r = flags & RMEM_SYNC ? local_check(d, off, count, RMEM_W) : desc_check(d, off, count, RMEM_W);
	if (r < 0)
		return r;
	if (count > RMEM_MAX_XFER && count > xfer_max(d))
		return -EINVAL;
	msg_init(&m, d, RM_WRITE, off, count, flags);
	trace_point(TS_MECH_SEND);
	if (!(flags & RMEM_SYNC)) {
		/* A refusal comes back to the descriptor's sink. */
		m.tag = call_sink_tag(d->sink);
		if (flags & RMEM_UNRELIABLE)
			return call_sink_send(d->sink, RMEM_PROTO, &m, sizeof m, src, count, CALL_RAW);
		if (!(flags & RMEM_NOWAIT))
			return send_msg(d->node, call_sink_epoch(d->sink), &m, src, count, 0);
		/* Paper 2.1: the FIFO overflowed; the issuer hears of it at once. */
		if ((r = send_msg(d->node, call_sink_epoch(d->sink), &m, src, count, 1)) == -ENOBUFS ||
		    r == -EAGAIN) {
			rmem_ctr.fifo_overflows++;
			r = -EAGAIN;
		}
		return r;
	}
	if (!(c = call_new(RMEM_PROTO, RK_STATUS, d->node)))
		return -EAGAIN;
	struct write_train *w = (struct write_train *)c->priv;
	w->pending = w->pieces = 1;
	w->piece = count;
	w->off0 = off;
	m.tag = c->tag;
	m.flags |= RM_F_ACK;
	return call_run(c, &m, sizeof m, src, count, send_flags(flags), CALL_WAIT_NS);
}

/*
 * One SYNC call for up to RMEM_TRAIN_MAX pieces of a block: all sent, then
 * every answer awaited.  0 with *refusal the first piece's refusal (0 if
 * none), or the call's own error (sending, a timeout, the peer gone).
 */
static int write_train(struct desc *d, uint32_t off, const uint8_t *p, size_t count, int flags,
		       int last, int *refusal)
{
	struct call *c;
	struct rmem_msg m;
	int r;

	if (!(c = call_new(RMEM_PROTO, RK_STATUS, d->node)))
		return -EAGAIN;
	struct write_train *w = (struct write_train *)c->priv;
	uint32_t piece = xfer_max(d);
	w->pending = w->pieces = (uint32_t)((count + piece - 1) / piece);
	w->piece = piece;
	w->off0 = off;
	while (count) {
		uint32_t n = count > piece ? piece : (uint32_t)count;
		/* Only the block's last piece notifies: it arrives last (in order). */
		int fl = count > n || !last ? (flags & (RMEM_UNRELIABLE | RMEM_SYNC)) : flags;
		msg_init(&m, d, RM_WRITE, off, n, fl);
		m.tag = c->tag;
		m.flags |= RM_F_ACK;
		if ((r = call_post(c, &m, sizeof m, p, n, send_flags(fl))) < 0) {
			call_free(c);
			return r;
		}
		off += n;
		p += n;
		count -= n;
	}
	trace_point(TS_MECH_SEND);
	if ((r = call_wait(c, CALL_WAIT_NS)) == 0)
		*refusal = c->status;
	call_free(c);
	return r;
}

#define BUSY_PIECES 16	/* pieces of a block between two points it may be preempted (1 MiB on the shared ring) */

int rmem_write_block(int rd, uint32_t off, const void *src, size_t count, int flags)
{
	struct desc *d = desc_get(rd);
	const uint8_t *p = src;
	int r, verdict = 0;

	if ((r = local_check(d, off, count, RMEM_W)) < 0)
		return r;
	if (flags & RMEM_SYNC) {
		/*
		 * Trains of RMEM_TRAIN_MAX pieces, one call each: every piece
		 * answers, any refusal is the verdict, and the rest still goes
		 * (as the asynchronous block does).  An error of the call itself
		 * (a timeout, the peer gone) ends the block.
		 */
		const size_t train = (size_t)RMEM_TRAIN_MAX * xfer_max(d);
		while (count) {
			size_t n = count > train ? train : count;
			int refusal = 0;
			if ((r = write_train(d, off, p, n, flags, n == count, &refusal)) < 0)
				return r;
			if (refusal < 0 && !verdict)
				verdict = refusal;
			off += (uint32_t)n;
			p += n;
			count -= n;
		}
		return verdict;
	}
	uint32_t piece = xfer_max(d);
	/*
	 * The node takes what came between the pieces of a block longer than
	 * an Ethernet frame (net_busy_begin): the peer's answers to it
	 * (credits, READY, acknowledgements) ring no doorbell.  Every
	 * BUSY_PIECES pieces, the thread may be preempted.  A short one costs
	 * as rmem_write does (make cost).
	 */
	int busy = count > RMEM_MAX_XFER ? net_busy_begin() : 0;
	unsigned k = 0;
	while (count) {
		uint32_t n = count > piece ? piece : (uint32_t)count;
		/*
		 * Only the last piece notifies: it arrives last (in order).  Every
		 * piece keeps the rest: NOWAIT (the train stops at the first piece
		 * that finds no room, never blocks) and MARKED (a refused piece
		 * anywhere in the block is remembered).
		 */
		int fl = count > n ? (flags & ~RMEM_INTR) : flags;
		if ((r = rmem_write(rd, off, p, n, fl)) < 0)
			break;
		off += n;
		p += n;
		count -= n;
		if (count)
			busy = net_busy_next(busy, &k, BUSY_PIECES);
	}
	net_busy_end(busy);
	return r;
}

/*
 * A request whose answer is count bytes that land in local segment lseg at
 * doff (a READ's data, a block's words found): its call records where,
 * then the request goes, with dlen bytes of data.  The handle, or a
 * negative error.
 */
static inline __attribute__((always_inline)) int post_landing(struct desc *d, uint8_t op, uint32_t off,
							      uint32_t count, int lseg, uint32_t doff, int flags,
							      const void *data, size_t dlen)
{
	struct rmem_msg m;
	struct read_dest *dst;
	struct segslot *s;
	struct call *c;
	int r;

	irqflags_t f = irq_save();
	s = rmem_seg(lseg);
	if (!s || (uint64_t)doff + count > s->size) {
		irq_restore(f);
		return -EINVAL;
	}
	c = call_new(RMEM_PROTO, RK_READ, d->node);
	if (c) {
		dst = (struct read_dest *)c->priv;
		dst->lseg = lseg;
		dst->epoch = s->epoch;
		dst->doff = doff;
		dst->count = count;
		dst->flags = flags;
	}
	irq_restore(f);
	if (!c)
		return -EAGAIN;
	msg_init(&m, d, op, off, count, flags & RMEM_UNRELIABLE);
	m.tag = c->tag;
	trace_point(TS_MECH_SEND);
	r = post(c, call_sink_epoch(d->sink), &m, data, dlen, flags & RMEM_UNRELIABLE);
	if (r < 0) {
		call_free(c);
		return r;
	}
	return (int)c->tag;
}

int rmem_read(int rs, uint32_t soff, uint32_t count, int lseg, uint32_t doff, int flags)
{
	struct desc *d = desc_get(rs);
	int r;

	if ((r = desc_check(d, soff, count, RMEM_R)) < 0)
		return r;
	if (count > RMEM_MAX_XFER && count > xfer_max(d))
		return -EINVAL;
	return post_landing(d, RM_READ_REQ, soff, count, lseg, doff, flags, NULL, 0);
}

int rmem_cas_block_start(int rd, uint32_t off, const uint64_t *pairs, uint32_t words, int lseg, uint32_t doff)
{
	struct desc *d = desc_get(rd);
	uint32_t count = words * 8;
	int r;

	if (words == 0 || words > rmem_cas_block_max(rd))
		return d ? -EINVAL : -EBADF;
	if ((r = desc_check(d, off, count, RMEM_A)) < 0)
		return r;
	/*
	 * The words found come back as a READ's data does: the same record,
	 * the same wait.  Always on the reliable channel (paper 2.3: the CAS
	 * is reliable).
	 */
	return post_landing(d, RM_CAS_BLOCK, off, count, lseg, doff, 0, pairs, 2 * (size_t)count);
}

uint32_t rmem_cas_block_max(int rd)
{
	struct desc *d = desc_get(rd);

	return d ? xfer_max(d) / 16 : 0;
}

int rmem_read_poll(int h)
{
	struct call *c = call_get(RMEM_PROTO, RK_READ, h);

	return c ? c->done : -EBADF;
}

/* Wait for handle h of kind k and free it (not after -ETIMEDOUT); *value gets its value. */
static int wait_and_free(int h, int kind, uint64_t *value, uint64_t timeout_ns)
{
	struct call *c = call_get(RMEM_PROTO, (uint8_t)kind, h);
	int r;

	if (!c)
		return -EBADF;
	r = call_wait(c, timeout_ns);
	if (r == -ETIMEDOUT)
		return r;
	if (r == 0) {
		r = c->status;
		if (r == 0 && value)
			*value = c->value;
	}
	call_free(c);
	return r;
}

int rmem_read_wait(int h, uint64_t timeout_ns)
{
	return wait_and_free(h, RK_READ, NULL, timeout_ns);
}

/* Send an atomic; return its handle (>= 0) or a negative error. */
static int atomic_start(int rd, uint8_t op, uint32_t off, const void *data, size_t dlen, int flags)
{
	struct desc *d = desc_get(rd);
	struct rmem_msg m;
	struct call *c;
	int r;

	/*
	 * No alignment test here: the word must be aligned at the target, and
	 * only the target knows where its segment starts (proto.c refuses a
	 * misaligned address with RMS_ALIGN, -EINVAL here).
	 */
	if ((r = desc_check(d, off, 8, RMEM_A)) < 0)
		return r;
	if (!(c = call_new(RMEM_PROTO, RK_ATOMIC, d->node)))
		return -EAGAIN;
	msg_init(&m, d, op, off, 8, flags & RMEM_INTR);
	m.tag = c->tag;
	/* Always on the reliable channel (paper 2.3: the CAS is reliable). */
	trace_point(TS_MECH_SEND);
	r = post(c, call_sink_epoch(d->sink), &m, data, dlen, 0);
	if (r < 0) {
		call_free(c);
		return r;
	}
	return (int)c->tag;
}

int rmem_atomic_wait(int h, uint64_t *old, uint64_t timeout_ns)
{
	return wait_and_free(h, RK_ATOMIC, old, timeout_ns);
}

static int atomic_op(int rd, uint8_t op, uint32_t off, const void *data, size_t dlen, uint64_t *old,
		     int flags)
{
	int h = atomic_start(rd, op, off, data, dlen, flags), r;
	struct call *c;

	if (h < 0)
		return h;
	if ((r = rmem_atomic_wait(h, old, CALL_WAIT_NS)) == -ETIMEDOUT &&
	    (c = call_get(RMEM_PROTO, RK_ATOMIC, h)) != NULL)
		call_free(c);		/* nobody will wait for it again */
	return r;
}

int rmem_cas_start(int rd, uint32_t off, uint64_t expect, uint64_t desired, int flags)
{
	uint64_t v[2] = { expect, desired };

	return atomic_start(rd, RM_CAS, off, v, sizeof v, flags & RMEM_INTR);
}

int rmem_fadd_start(int rd, uint32_t off, uint64_t add, int flags)
{
	return atomic_start(rd, RM_FADD, off, &add, sizeof add, flags & RMEM_INTR);
}

int rmem_cas_flags(int rd, uint32_t off, uint64_t expect, uint64_t desired, uint64_t *old, int flags)
{
	uint64_t v[2] = { expect, desired };

	return atomic_op(rd, RM_CAS, off, v, sizeof v, old, flags & RMEM_INTR);
}

int rmem_cas(int rd, uint32_t off, uint64_t expect, uint64_t desired, uint64_t *old)
{
	return rmem_cas_flags(rd, off, expect, desired, old, 0);
}

int rmem_cas_settled(int rd, uint32_t off, uint64_t expect, uint64_t desired, uint64_t *old,
		     int tries, int flags)
{
	int r = rmem_cas_flags(rd, off, expect, desired, old, flags);

	/* The channel serves requests in order: the second is served after the first. */
	while (r == -ETIMEDOUT && --tries > 0) {
		r = rmem_cas_flags(rd, off, desired, desired, old, flags);
		if (r == 0 && *old == desired)
			*old = expect;		/* the first one landed */
	}
	return r;
}

int rmem_fadd_flags(int rd, uint32_t off, uint64_t add, uint64_t *old, int flags)
{
	return atomic_op(rd, RM_FADD, off, &add, sizeof add, old, flags & RMEM_INTR);
}

int rmem_fadd(int rd, uint32_t off, uint64_t add, uint64_t *old)
{
	return rmem_fadd_flags(rd, off, add, old, 0);
}

int rmem_take_error(int rd)
{
	struct desc *d = desc_get(rd);

	return d ? call_sink_take(d->sink) : -EBADF;
}

int rmem_sync(int rd, uint64_t timeout_ns)
{
	struct desc *d = desc_get(rd);

	if (!d)
		return -EBADF;
	return call_sync(d->sink, timeout_ns);
}
