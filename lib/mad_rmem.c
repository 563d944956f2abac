/*
 * Madeleine's remote-memory driver: the protocol of Figure 7 (madeleine
 * paper 2.2) on protected remote memory (net/rmem/rmem.h), as the paper builds
 * it on the zero-copy protocols BIP and VIA (sections 3.2, 3.3).
 *
 * Headers.  Every node exports, for each peer, a ring of HDR_SLOTS slots
 * of one frame each that only that peer may write ("mad.r.<peer>").  The
 * sender owns a slot per message; it writes the slot header and the
 * Madeleine header in one remote WRITE with the notify flag, which wakes
 * the receiver.  Credit-based flow control as sections 3.2 and 3.3 add
 * it: the sender starts with HDR_SLOTS credits, one per slot; the receiver
 * gives them back in batches, writing the count of slots it has consumed
 * into the sender's control segment ("mad.c.<peer>" on the sender), so no
 * acknowledgement travels for most messages.
 *
 * Small messages.  If the header and the body fit in one slot, both go in
 * that one WRITE, and the receiver copies the body out of the slot at
 * recv_body_post: BIP's "sufficiently small" path (section 3.2), which
 * trades one copy of at most a frame for a round trip.
 *
 * Bodies.  Otherwise Figure 7 runs as drawn: the receiver's handler says
 * where the body goes (recv_body_post); the driver exports each of those
 * vectors as a segment that only the sender may write, and writes a READY
 * record (step 4) into the sender's control segment: segment numbers,
 * generations and lengths.  The sender deposits the body straight into
 * them with remote WRITEs (step 5, 6: no copy on either side beyond the
 * network's own), the last one with the notify flag; the receiver then
 * withdraws the segments, so nothing can be written there afterwards.  A
 * body posted in several parts gets one READY per part.
 *
 * The body's first part, early.  Figure 7 leaves the link idle for a
 * round trip per message: the sender waits for READY once the header is
 * out, and the receiver sends it only once the message before is whole
 * (one message at a time).  Section 3.2 keeps Madeleine "much freedom to
 * implement its communication scheme" and uses it to send a small body
 * with its header into a buffer the receiver set aside; here the same is
 * done with the first quarter of a large body, up to EAGER_MAX.  Right
 * after the header the sender WRITEs it into one of two halves of an
 * eager area that follows the header ring, then an 8-byte tag (the
 * message's number plus one) with the notify flag.  The receiver sends
 * READY for the rest at once, so the round trip passes while the prefix
 * is on the wire, and copies the prefix out of the area once its tag is
 * there: the copy out of a buffer set aside that small bodies make too,
 * here over a quarter of the body at most.  A half is written again only
 * once a READY came for a later message than the half's last: the
 * receiver sends one only after it finished every message before (its
 * prefix read), so a prefix is never overwritten while it is read.
 * Where neither half is known free, the whole body goes by READY.
 *
 * A sender that gives up on a body (no READY within MAD_PEER_TIMEOUT_NS,
 * or a READY it cannot use) says so: it writes, into the receiver's
 * control segment, that no message before the next one's number will get
 * more of its body ("abandoned"), with the notify flag.  A receiver
 * waiting for a part of such a message, or about to ask for one, fails
 * that message (-ECONNABORTED) and frees its slot, where it would wait
 * for ever; a READY that comes to the sender after it gave up is passed
 * over, not taken for the next message's.
 *
 * The fabric's channel keeps order per node pair, so a notification never
 * overtakes the data it announces.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/init.h"
#include "kernel/node.h"
#include "kernel/sync.h"
#include "kernel/thread.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"
#include "lib/mad.h"
#include "lib/mad_drv.h"
#include "net/fabric/fabric.h"
#include "net/net.h"
#include "net/rmem/rmem.h"

#define HDR_SLOTS 32
#define SLOT RMEM_MAX_XFER		/* one frame */
#define CREDIT_BATCH (HDR_SLOTS / 2)
/* The eager area after the header slots: two halves, then a tag for each. */
#define EAGER_MAX (64 * 1024)
#define EAGER_OFF (HDR_SLOTS * SLOT)
#define TAG_OFF (EAGER_OFF + 2 * EAGER_MAX)
#define RING_BYTES (TAG_OFF + 64)

struct slot_hdr {
	uint32_t seq;			/* message number on this pair */
	uint16_t hdr_len;		/* Madeleine header bytes that follow */
	uint16_t flags;
	uint32_t body_len;
	uint32_t eager;			/* the body's first bytes, in the eager area */
};
_Static_assert(sizeof(struct slot_hdr) == 16, "slot header");

enum {
	SLOT_INLINE = 1,		/* the body follows the header in the slot */
	SLOT_HALF1 = 2,			/* the eager bytes are in the area's second half */
};

#define INLINE_MAX (SLOT - sizeof(struct slot_hdr))

/* Step 4 of Figure 7: where the next part of the body goes. */
struct ready {
	uint32_t seq;			/* READY number on this pair, from 1 */
	int32_t status;			/* 0, or the receiver refused the message */
	uint32_t msg;			/* the message it belongs to */
	uint32_t nvec;
	struct {
		uint32_t seg, gen, len;
	} v[MAD_MAX_PACKS];
};

/* The control segment a node exports to each peer: credits, then READY. */
struct ctl {
	volatile uint64_t consumed;	/* slots the peer has finished with */
	volatile uint32_t abandoned;	/* the peer's messages below this get no more body */
	uint8_t pad[52];
	struct ready ready;
};
#define CTL_ABANDONED_OFF 8
#define CTL_READY_OFF 64
_Static_assert(__builtin_offsetof(struct ctl, ready) == CTL_READY_OFF, "ctl layout");
_Static_assert(__builtin_offsetof(struct ctl, abandoned) == CTL_ABANDONED_OFF, "ctl layout");
_Static_assert(sizeof(struct ready) <= RMEM_MAX_XFER, "READY is one frame");

/* What this node keeps about one peer. */
struct peer {
	/* receiving from the peer */
	uint8_t *ring;			/* HDR_SLOTS * SLOT, written by the peer */
	struct mad_segpair seg;		/* our ring and ctl for the peer; its ring and ctl for us */
	volatile uint64_t arrived;	/* notified slot WRITEs */
	uint64_t consumed, returned;
	uint32_t ready_seq;
	/* sending to the peer */
	struct ctl *ctl;		/* exported to the peer */
	uint64_t sent;
	uint32_t ready_seen;
	uint32_t ready_max;		/* the latest message a READY came for (if ready_any) */
	uint32_t half_seq[2];		/* the last message whose eager bytes went in each half */
	uint8_t half_used, ready_any, next_half;
	struct mutex lock;
	uint8_t slot[SLOT] __attribute__((aligned(16)));	/* staging for one slot */
};

/* The message being received (one at a time, paper 2.2). */
struct rxmsg {
	int open, src;
	struct slot_hdr sh;
	const uint8_t *inline_body;
	size_t body_got;
	/* posted part of a deposited body */
	int nseg, segs[MAD_MAX_PACKS];
	volatile int part_done;
	size_t part_len;
	/* its bytes that came early, copied from the eager area once their tag is there (0: none left) */
	int eiov_n;
	size_t eager_from, eager_n;
	struct mad_iovec eiov[MAD_MAX_PACKS];
};

static struct peer *peers[MAX_NODES];
static int nnodes, me, rr;
static struct rxmsg rx;
static struct waitq tx_wq = WAITQ_INIT;
static struct mad_rxwait rxw = MAD_RXWAIT_INIT;	/* kicked by every receive notification */
static uint32_t seg_names;
static uint64_t proto_errors;
static uint64_t sent_early, sent_by_ready;	/* bodies (mad_rmem_counts) */
#ifdef NOW_TEST_HOOKS
static int test_bad_eager;		/* mad_rmem_test_bad_eager */
static uint64_t test_export_gap_ns;	/* mad_rmem_test_export_gap */
static uint64_t test_ready_wait_ns;	/* mad_rmem_test_ready_wait */
#endif

/* --- notifications (receive path, interrupts off) ----------------------------- */

static void ring_note(void *arg, int seg, uint32_t off, uint32_t count)
{
	struct peer *p = arg;

	(void)seg, (void)count;
	if (off < EAGER_OFF)
		p->arrived++;		/* a header; past the slots, an eager prefix's tag */
	mad_rxwait_kick(&rxw);
}

static void ctl_note(void *arg, int seg, uint32_t off, uint32_t count)
{
	(void)arg, (void)seg, (void)count;
	waitq_wake_all(&tx_wq);
	if (off == CTL_ABANDONED_OFF)
		mad_rxwait_kick(&rxw);		/* a body being waited for may not come */
}

static void body_note(void *arg, int seg, uint32_t off, uint32_t count)
{
	(void)arg, (void)seg, (void)off, (void)count;
	rx.part_done = 1;
	mad_rxwait_kick(&rxw);
}

/* --- setup ------------------------------------------------------------------------ */

static void rmem_exit_drv(void);

static void drop_peer(struct peer *p)
{
	mad_segpair_release(&p->seg);
	free(p->ring);
	free(p->ctl);
	free(p);
}

static void rmem_exit_drv(void)
{
	MAD_PEERS_STOP(peers, drop_peer);
}

/* Node i's end here: the header ring and the control block it writes. */
static int make_peer(int i)
{
	struct peer *p = calloc(1, sizeof *p);

	if (!p)
		return -ENOMEM;
	peers[i] = p;
	mutex_init(&p->lock, 0);
	mad_segpair_init(&p->seg);
	if (!(p->ring = aligned_alloc(64, RING_BYTES)) || !(p->ctl = aligned_alloc(64, sizeof(struct ctl))))
		return -ENOMEM;
	memset(p->ring, 0, RING_BYTES);
	memset(p->ctl, 0, sizeof *p->ctl);
	/*
	 * Exported and their notifications set in one stretch with interrupts
	 * off: the peer's name lookups and WRITEs are served in the receive
	 * path, so none comes between.  A ring WRITE taken before ring_note
	 * was set counted no arrival, and its message was never seen: the
	 * peer's first message, a body waiting for our READY, went unanswered
	 * until the peer gave up.
	 */
	irqflags_t f = irq_save();
	int r = mad_segpair_export(&p->seg, "mad.r.%d", "mad.c.%d", i, p->ring, RING_BYTES, p->ctl,
				   sizeof(struct ctl));
	if (r == 0) {
		seg_notify(p->seg.ring_seg, 1, ring_note, p);
		seg_notify(p->seg.ctl_seg, 1, ctl_note, p);
	}
	irq_restore(f);
#ifdef NOW_TEST_HOOKS
	if (r == 0 && test_export_gap_ns)
		thread_sleep_ns(test_export_gap_ns);	/* the peer reaches the segments meanwhile */
#endif
	return r;
}

/* Node i's ring and control for us. */
static int join_peer(int i)
{
	int r = mad_segpair_import(&peers[i]->seg, "mad.r.%d", "mad.c.%d", i, me);

	if (r < 0)
		printf("mad-rmem: cannot reach node %d's segments (%d)\n", i, r);
	return r;
}

static int rmem_init_drv(int nodes, int self)
{
	nnodes = nodes;
	me = self;
	memset(&rx, 0, sizeof rx);
	return mad_peers_start(nodes, self, make_peer, join_peer, rmem_exit_drv);
}

/* --- sending ------------------------------------------------------------------------ */

static int have_credit(struct peer *p);
static int have_ready(struct peer *p);

/*
 * Sleep on tx_wq until cond(p) holds; -EHOSTDOWN if the peer died, or
 * -ETIMEDOUT after MAD_PEER_TIMEOUT_NS without progress.
 */
static int tx_wait(int dest, int (*cond)(struct peer *), struct peer *p)
{
	uint64_t wait_ns = MAD_PEER_TIMEOUT_NS;
#ifdef NOW_TEST_HOOKS
	if (cond == have_ready && test_ready_wait_ns)
		wait_ns = test_ready_wait_ns;
#endif
	uint64_t end = cycles() + ns_to_cycles(wait_ns);
	irqflags_t f = irq_save();
	int r = 0;

	while (!cond(p)) {
		if (fabric_peer_dead(dest)) {
			r = -EHOSTDOWN;
			break;
		}
		uint64_t now = cycles();
		if (now >= end) {
			r = -ETIMEDOUT;
			printf("mad-rmem: node %d does not answer: %s (sent %lu, it consumed %lu, "
			       "READY %u seen %u)\n", dest, cond == have_credit ? "no header credit" : "no READY",
			       (unsigned long)p->sent, (unsigned long)p->ctl->consumed, p->ctl->ready.seq,
			       p->ready_seen);
			fabric_print_stats();
			rmem_print_stats();
			break;
		}
		waitq_wait_timeout(&tx_wq, cycles_to_ns(end - now) < 100000000 ? cycles_to_ns(end - now)
										  : 100000000);
	}
	irq_restore(f);
	return r;
}

static int have_credit(struct peer *p)
{
	return p->sent - p->ctl->consumed < HDR_SLOTS;
}

static int have_ready(struct peer *p)
{
	return *(volatile uint32_t *)&p->ctl->ready.seq != p->ready_seen;
}

/* Deposit the next len bytes of the message body into the READY's segments. */
static int deposit(int dest, struct iovcur *c, const struct ready *rd)
{
	int r = 0;

	for (uint32_t k = 0; k < rd->nvec && r == 0; k++) {
		int d = rmem_attach(dest, (int)rd->v[k].seg, rd->v[k].gen, rd->v[k].len, RMEM_W);
		if (d < 0)
			return d;
		uint32_t off = 0;
		while (off < rd->v[k].len && r == 0) {
			uint8_t *p;
			size_t n = iovcur_peek(c, &p, rd->v[k].len - off);
			if (n == 0) {
				r = -EPROTO;	/* the receiver asked for more than the message has */
				break;
			}
			iovcur_skip(c, n);
			/* The very last piece of this part notifies the receiver. */
			int last = k + 1 == rd->nvec && off + n == rd->v[k].len;
			r = rmem_write_block(d, off, p, n, last ? RMEM_INTR : 0);
			off += (uint32_t)n;
		}
		rmem_release(d);
	}
	return r;
}

/*
 * How much of a body of blen bytes (4 or more) goes early, and into which
 * half: a quarter, up to EAGER_MAX, into a half whose last message is
 * known finished (a READY came for a later one); 0 where neither is.
 */
static size_t eager_plan(const struct peer *p, size_t blen, int *half)
{
	for (int k = 0; k < 2; k++) {
		int h = p->next_half ^ k;
		if (!(p->half_used >> h & 1) || (p->ready_any && (int32_t)(p->ready_max - p->half_seq[h]) > 0)) {
			*half = h;
			return blen / 4 < EAGER_MAX ? blen / 4 : EAGER_MAX;
		}
	}
	return 0;
}

/* The body's first n bytes into the eager area's half, then the tag that says they came. */
static int send_eager(struct peer *p, struct iovcur *c, size_t n, int half)
{
	uint32_t off = EAGER_OFF + (uint32_t)half * EAGER_MAX;
	uint64_t tag = p->sent;		/* the message's number plus one: sent counts it already */
	int r = 0;

	while (n && r == 0) {
		uint8_t *src;
		size_t k = iovcur_peek(c, &src, n);
		if (k == 0)
			return -EPROTO;		/* cannot be: n is a quarter of the body at most */
		iovcur_skip(c, k);
		r = rmem_write_block(p->seg.ring_rd, off, src, k, 0);
		off += (uint32_t)k;
		n -= k;
	}
	if (r == 0)
		r = rmem_write(p->seg.ring_rd, TAG_OFF + 8 * (uint32_t)half, &tag, sizeof tag, RMEM_INTR);
	return r;
}

/*
 * The body of message seq will not come whole: the receiver may be
 * waiting for a part of it, or ask for one later.  Every message before
 * it has its body already (sends are one at a time), so one number says
 * it for all of them.
 */
static __attribute__((cold, noinline)) void abandon(struct peer *p, uint32_t seq)
{
	uint32_t below = seq + 1;

	rmem_write(p->seg.ctl_rd, CTL_ABANDONED_OFF, &below, sizeof below, RMEM_INTR);
}

static int rmem_send_post(int dest, const struct mad_iovec *iov, int count)
{
	struct peer *p = dest >= 0 && dest < MAX_NODES ? peers[dest] : NULL;
	struct slot_hdr sh = { 0 };
	struct iovcur c;
	size_t hlen = iov[0].len, blen = iov_total(iov + 1, count - 1), len, eager = 0;
	int r, half = 0;

	if (!p)
		return -EINVAL;
	if (hlen > INLINE_MAX || blen > 0xffffffffu)
		return -EMSGSIZE;
	mutex_lock(&p->lock);
	if ((r = tx_wait(dest, have_credit, p)) < 0)
		goto out;
	sh.seq = (uint32_t)p->sent;
	sh.hdr_len = (uint16_t)hlen;
	sh.body_len = (uint32_t)blen;
	sh.flags = hlen + blen <= INLINE_MAX ? SLOT_INLINE : 0;
	if (!(sh.flags & SLOT_INLINE) && blen >= 4 && (eager = eager_plan(p, blen, &half)) > 0) {
		sh.eager = (uint32_t)eager;
		sh.flags |= half ? SLOT_HALF1 : 0;
		sent_early++;
#ifdef NOW_TEST_HOOKS
		if (test_bad_eager) {
			test_bad_eager = 0;
			sh.eager = EAGER_MAX + 1;
		}
#endif
	} else if (!(sh.flags & SLOT_INLINE) && blen >= 4) {
		sent_by_ready++;
	}
	memcpy(p->slot, &sh, sizeof sh);
	iovcur_init(&c, iov, count);
	len = sizeof sh + iovcur_gather(&c, p->slot + sizeof sh, sh.flags & SLOT_INLINE ? hlen + blen : hlen);
	r = rmem_write(p->seg.ring_rd, (uint32_t)(p->sent % HDR_SLOTS) * SLOT, p->slot, (uint32_t)len, RMEM_INTR);
	if (r < 0)
		goto out;
	p->sent++;
	if (eager) {
		p->half_used |= (uint8_t)(1u << half);
		p->half_seq[half] = sh.seq;
		p->next_half = (uint8_t)!half;
		r = send_eager(p, &c, eager, half);
	}
	/* A deposited body: one part per READY until all of it went. */
	while (r == 0 && !(sh.flags & SLOT_INLINE) && c.i < c.count) {
		struct ready rd;
		if ((r = tx_wait(dest, have_ready, p)) < 0)
			break;
		memcpy(&rd, (const void *)&p->ctl->ready, sizeof rd);
		p->ready_seen = rd.seq;
		/* The receiver finished every message before rd.msg (eager_plan). */
		if (!p->ready_any || (int32_t)(rd.msg - p->ready_max) > 0)
			p->ready_max = rd.msg;
		p->ready_any = 1;
		if ((int32_t)(rd.msg - sh.seq) < 0)
			continue;	/* for a message given up before: it went without */
		if (rd.msg != sh.seq || rd.status != 0 || rd.nvec > MAD_MAX_PACKS) {
			r = rd.status ? rd.status : -EPROTO;
			break;
		}
		if ((r = deposit(dest, &c, &rd)) < 0)
			break;
	}
	if (r < 0 && r != -EHOSTDOWN && !(sh.flags & SLOT_INLINE))
		abandon(p, sh.seq);
out:
	mutex_unlock(&p->lock);
	return r;
}

static int rmem_send_poll(int dest)
{
	(void)dest;
	return 1;		/* send_post returned once every WRITE was with the fabric */
}

/* --- receiving ------------------------------------------------------------------------ */

static void credit_back(int src, struct peer *p, int force)
{
	uint64_t v = p->consumed;

	if (!force && v - p->returned < CREDIT_BATCH)
		return;
	if (rmem_write(p->seg.ctl_rd, 0, &v, sizeof v, RMEM_INTR) == 0)
		p->returned = v;
	(void)src;
}

/* The message is finished with: its slot is free again. */
static void release_slot(void)
{
	struct peer *p = peers[rx.src];

	rx.open = 0;
	p->consumed++;
	credit_back(rx.src, p, 0);
}

/* Tell the sender its message will not be taken (it is waiting for a READY). */
static void refuse(int src, struct peer *p, uint32_t msg)
{
	struct ready rd = { 0 };

	rd.seq = ++p->ready_seq;
	rd.status = -EPROTO;
	rd.msg = msg;
	rmem_write(p->seg.ctl_rd, CTL_READY_OFF, &rd, 16, RMEM_INTR);
	(void)src;
}

static int rmem_recv_header_post(void)
{
	return rx.open ? -EBUSY : 0;
}

static int rmem_recv_header_poll(int *src, void *hdr, size_t hdr_max, size_t *hdr_len)
{
	if (rx.open)
		return -EBUSY;
	for (int k = 0; k < nnodes; k++) {
		int i = (rr + k) % nnodes;
		struct peer *p = peers[i];
		if (!p || p->arrived == p->consumed)
			continue;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		const uint8_t *s = p->ring + (p->consumed % HDR_SLOTS) * SLOT;
		struct slot_hdr sh;
		memcpy(&sh, s, sizeof sh);
		int inl = sh.flags & SLOT_INLINE;
		struct mad_wire_hdr mh;
		if (sh.seq != (uint32_t)p->consumed || (sh.flags & ~(SLOT_INLINE | SLOT_HALF1)) ||
		    sh.hdr_len > hdr_max || sh.hdr_len > INLINE_MAX ||
		    (inl && sh.hdr_len + (uint64_t)sh.body_len > INLINE_MAX) || (inl && sh.eager) ||
		    sh.eager > EAGER_MAX || sh.eager > sh.body_len || (!sh.eager && (sh.flags & SLOT_HALF1)) ||
		    mad_hdr_check(s + sizeof sh, sh.hdr_len) < 0 ||
		    (memcpy(&mh, s + sizeof sh, sizeof mh), mh.body_len != sh.body_len)) {
			/* Not a message our peer's driver writes: drop it, count it. */
			if (proto_errors++ < 8)
				printf("mad-rmem: malformed header slot %lu from node %d: dropped\n",
				       (unsigned long)p->consumed, i);
			if (!inl)
				refuse(i, p, (uint32_t)p->consumed);
			p->consumed++;
			credit_back(i, p, 0);
			continue;
		}
		memcpy(hdr, s + sizeof sh, sh.hdr_len);
		*hdr_len = sh.hdr_len;
		*src = i;
		rr = (i + 1) % nnodes;
		rx.open = 1;
		rx.src = i;
		rx.sh = sh;
		rx.inline_body = s + sizeof sh + sh.hdr_len;
		rx.body_got = 0;
		rx.eager_n = 0;
		if (sh.body_len == 0)
			release_slot();
		return 1;
	}
	return 0;
}

static void withdraw_part(void)
{
	rx.eager_n = 0;
	for (int k = 0; k < rx.nseg; k++)
		seg_unexport(rx.segs[k]);
	rx.nseg = 0;
}

/* The message being received was given up by its sender (abandon): it fails, its slot is free. */
static int body_abandoned(void)
{
	const struct peer *p = peers[rx.src];

	return (int32_t)(p->ctl->abandoned - (rx.sh.seq + 1)) >= 0;
}

static __attribute__((cold, noinline)) int fail_abandoned(void)
{
	printf("mad-rmem: node %d gave up sending message %u (no READY in time, or its deposit failed): "
	       "its body will not come, the message fails\n", rx.src, rx.sh.seq);
	withdraw_part();
	release_slot();
	return -ECONNABORTED;
}

/* The half of the eager area the message being received uses. */
static int rx_half(void)
{
	return rx.sh.flags & SLOT_HALF1 ? 1 : 0;
}

/* The eager bytes of the message being received are in the area: their tag came. */
static int eager_here(void)
{
	const struct peer *p = peers[rx.src];
	uint64_t tag = *(const volatile uint64_t *)(p->ring + TAG_OFF + 8 * rx_half());

	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return tag == p->consumed + 1;
}

/* The part's early bytes, from the eager area into its vectors. */
static void take_eager(void)
{
	const struct peer *p = peers[rx.src];
	struct iovcur c;

	iovcur_init(&c, rx.eiov, rx.eiov_n);
	iovcur_scatter(&c, p->ring + EAGER_OFF + (size_t)rx_half() * EAGER_MAX + rx.eager_from, rx.eager_n);
	rx.eager_n = 0;
}

static int rmem_recv_body_post(int src, const struct mad_iovec *iov, int count)
{
	struct peer *p = src >= 0 && src < MAX_NODES ? peers[src] : NULL;
	size_t len = iov_total(iov, count);
	struct ready rd = { 0 };
	char name[RMEM_NAME_MAX];

	if (!rx.open || !p || src != rx.src || count > MAD_MAX_PACKS ||
	    rx.body_got + len > rx.sh.body_len)
		return -EINVAL;
	if (rx.sh.flags & SLOT_INLINE) {
		struct iovcur c;
		iovcur_init(&c, iov, count);
		iovcur_scatter(&c, rx.inline_body + rx.body_got, len);
		rx.body_got += len;
		rx.part_len = 0;
		rx.part_done = 1;
		if (rx.body_got == rx.sh.body_len)
			release_slot();
		return 0;
	}
	rx.nseg = 0;
	if (body_abandoned())
		return fail_abandoned();
	/* The part's bytes that the sender sent early: copied at body_poll, once there. */
	size_t early = rx.body_got < rx.sh.eager ? rx.sh.eager - rx.body_got : 0;
	struct iovcur c;
	if (early > len)
		early = len;
	if (early) {
		memcpy(rx.eiov, iov, (size_t)count * sizeof *iov);
		rx.eiov_n = count;
		rx.eager_from = rx.body_got;
		rx.eager_n = early;
	}
	iovcur_init(&c, iov, count);
	iovcur_skip(&c, early);
	/* Step 4: export each vector (less what came early) to the sender alone, for this part only. */
	for (int k = c.i; k < count; k++) {
		size_t skip = k == c.i ? c.off : 0;
		if (iov[k].len == skip)
			continue;
		snprintf(name, sizeof name, "~mad%u", seg_names++);
		int s = seg_export_for(name, (uint8_t *)iov[k].base + skip, iov[k].len - skip, src, RMEM_W);
		if (s < 0) {
			withdraw_part();
			return s;
		}
		rx.segs[rx.nseg] = s;
		rd.v[rx.nseg].seg = (uint32_t)s;
		seg_ticket(s, src, &rd.v[rx.nseg].gen);
		rd.v[rx.nseg].len = (uint32_t)(iov[k].len - skip);
		rx.nseg++;
	}
	rx.part_len = len;
	rx.part_done = 0;
	if (rx.nseg == 0) {
		rx.part_done = 1;
		return 0;
	}
	seg_notify(rx.segs[rx.nseg - 1], 1, body_note, NULL);
	rd.seq = ++p->ready_seq;
	rd.msg = rx.sh.seq;
	rd.nvec = (uint32_t)rx.nseg;
	int r = rmem_write(p->seg.ctl_rd, CTL_READY_OFF, &rd,
			   (uint32_t)__builtin_offsetof(struct ready, v[rx.nseg]), RMEM_INTR);
	if (r < 0)
		withdraw_part();
	return r;
}

static int rmem_recv_body_poll(int src)
{
	(void)src;
	if (rx.eager_n && eager_here())
		take_eager();
	if (!rx.part_done || rx.eager_n) {
		if (fabric_peer_dead(rx.src)) {
			withdraw_part();
			rx.open = 0;
			return -EHOSTDOWN;
		}
		return body_abandoned() ? fail_abandoned() : 0;
	}
	if (rx.nseg || rx.part_len) {
		withdraw_part();
		rx.body_got += rx.part_len;
		if (rx.body_got == rx.sh.body_len)
			release_slot();
	}
	return 1;
}

static int ready_to_poll(void)
{
	if (rx.open)
		return rx.eager_n ? eager_here() : rx.part_done;
	for (int i = 0; i < nnodes; i++)
		if (peers[i] && peers[i]->arrived != peers[i]->consumed)
			return 1;
	return 0;
}

static void rmem_wait(uint64_t timeout_ns)
{
	mad_rxwait_sleep(&rxw, ready_to_poll, timeout_ns);
}

static void rmem_kick(void)
{
	mad_rxwait_abort(&rxw);
}

#ifdef NOW_TEST_HOOKS
int mad_rmem_test_export_gap(uint64_t ns)
{
	test_export_gap_ns = ns;
	return 0;
}

int mad_rmem_test_ready_wait(uint64_t ns)
{
	test_ready_wait_ns = ns;
	return 0;
}

int mad_rmem_test_bad_eager(void)
{
	test_bad_eager = 1;
	return 0;
}
#endif

void mad_rmem_counts(struct mad_rmem_counts *out)
{
	out->early = sent_early;
	out->by_ready = sent_by_ready;
	out->bad_slots = proto_errors;
}

MAD_DRIVER_DEFINE(rmem, .init = rmem_init_drv, .exit = rmem_exit_drv, .wait = rmem_wait, .kick = rmem_kick);

/* An NMI's dump (kernel/init.h): each peer's ring and credit counts, the message open. */
static void rmem_drv_dump(void)
{
	for (int i = 0; i < nnodes; i++) {
		struct peer *p = peers[i];
		if (!p || i == me)
			continue;
		printf("mad-rmem: node %d: from it arrived %lu consumed %lu returned %lu, READY sent %u; "
		       "to it sent %lu, it consumed %lu, READY %u seen %u\n", i, (unsigned long)p->arrived,
		       (unsigned long)p->consumed, (unsigned long)p->returned, p->ready_seq,
		       (unsigned long)p->sent, p->ctl ? (unsigned long)p->ctl->consumed : 0UL,
		       p->ctl ? p->ctl->ready.seq : 0, p->ready_seen);
	}
	if (nnodes)
		printf("mad-rmem: receiving %s from node %d, protocol errors %lu; bodies sent with an early part "
		       "%lu, all by READY %lu\n", rx.open ? "a message" : "none", rx.src, (unsigned long)proto_errors,
		       (unsigned long)sent_early, (unsigned long)sent_by_ready);
}
DUMP_HOOK(mad_rmem, rmem_drv_dump);
