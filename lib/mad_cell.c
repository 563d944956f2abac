/*
 * Madeleine's hybrid-deposit driver: the remote message queues of the
 * madeleine paper's SCI implementation (section 3.4, Figure 14) built of
 * hybrid-deposit cells (net/deposit/deposit.h), with the conditional interrupt of
 * hybrid deposit 3.4 as the arrival notification.
 *
 * Every pair of nodes shares one duplex connection, VCI 128 + a + b
 * (distinct among a node's peers, the same at both ends).  Each end's
 * endpoint holds
 *	[0, RING)			the circular buffer its peer deposits into
 *	[CTL_IN, +32)			the peer's read pointer (its credit to us)
 *	[CTL_OUT, +32)			our read pointer, as it goes out
 *	[STAGE, +STAGE_LEN)		the chunk being sent
 * The sender copies a chunk of the message stream (header vector, then
 * body vectors; at most CHUNK bytes) into its stage behind a 4-byte
 * chunk header (its length), and deposits it at its write pointer in the
 * receiver's buffer: one WRITE cell, or an AAL5 block behind its control
 * cell, with the conditional "always" raising an interrupt once the whole
 * chunk is in.  The receiver learns from the interrupt how much arrived,
 * copies it out of the buffer into the unpack destinations (the extra
 * copy of section 3.4), and deposits its read pointer back into the
 * sender's CTL_IN every REPORT bytes, with an interrupt that wakes a
 * sender waiting for room.  Chunks start on 32-byte boundaries and never
 * wrap: each side avoids overflow by comparing its pointers (3.4).
 *
 * Recovery.  A chunk whose deposit raises an exception at the receiver
 * (hybrid deposit 6.4: the connection is blocked, the cell kept, until
 * the host re-enables it) is lost, and the stream resynchronises at the
 * next message boundary; the first chunk of every message says so
 * (CH_FIRST).  The exception handler writes a hole header (CH_HOLE) in
 * the chunk's place, with its length and number, counts its bytes as
 * arrived, so that the receiver's pointers stay in step with the
 * sender's, and re-enables the connection without the cell and the rest
 * of its block (DART_SKIP).  The reader steps over the hole: the message
 * it falls in fails (its body post and poll return -EIO), and so does a
 * message whose first chunk it is; the chunks that continue a message
 * not being received are skipped, up to the next chunk that starts one.
 * The receiver counts the messages it lost and deposits the count, with
 * the stream position of the last loss, beside its read pointer into
 * the sender's CTL_IN, at once.  The sender checks that count before each
 * chunk: a loss at or past the start of the message it is sending fails
 * that message (send_post returns -EIO and sends no more of it); a loss
 * of a message sent before fails the next send_post, which then sends
 * nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/node.h"
#include "kernel/sync.h"
#include "kernel/thread.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"
#include "lib/mad.h"
#include "lib/mad_drv.h"
#include "net/call/barrier.h"
#include "net/deposit/deposit.h"
#include "net/fabric/fabric.h"
#include "net/net.h"

/*
 * The buffer: 256 KiB, 8 chunks of 32 KiB.  A sender stops when it is
 * full by the credit it last heard, and the credit comes back through
 * both nodes' receive paths and the receiver's thread: with a 64 KiB
 * buffer the sender waited for room a third of the time while the
 * receiver, its work done, waited for cells (shm, 2 nodes); 256 KiB gave
 * mad-bw-cell-4m 112-150 MB/s against 110-132, alternate runs of the same
 * hour.  A chunk is one deposit, one frame of cells on the shared-memory
 * link (683 cells in 36 KiB), one interrupt at the receiver: 32 KiB
 * chunks gave 326-352 MB/s where 8 KiB ones gave 271-315 (shm, cells
 * built in the ring's slot; 60 KiB: 306-360).  (Its frames in flight to
 * three peers outnumbered a node's large packet buffers until the fabric
 * left half of them to receiving: fabric_pb_get, net/fabric/fabric.h.)
 */
#define RING (256 * 1024)
#define CHUNK (32 * 1024)
#define CTL_IN RING
#define CTL_OUT (RING + 32)
#define STAGE (RING + 64)
#define STAGE_LEN (CHUNK + 32)
#define EP_SIZE (STAGE + STAGE_LEN)
#define REPORT (RING / 16)		/* credit every 16 KiB read, as with the smaller buffer */
#define VCI_BASE 128
#define BUSY_CHUNKS 8		/* chunks sent or read between two points the thread may be preempted */

/*
 * What starts every chunk in the buffer: four bytes, so that a chunk of
 * one WRITE cell (32 bytes) carries Madeleine's header and 12 bytes of
 * the message (MPI's 0-byte message: its 8-byte envelope and the pack's
 * descriptor).
 */
struct chunk_hdr {
	uint16_t len;			/* stream bytes that follow (at most CHUNK) */
	uint8_t seq;			/* chunk number on this pair, from 0, modulo 256 */
	uint8_t flags;
};
_Static_assert(sizeof(struct chunk_hdr) == 4 && CHUNK <= 0xffff, "the chunk header is 4 bytes");

/* chunk_hdr.flags */
#define CH_PAD 1		/* padding to the end of the buffer: a message's header vector never wraps */
#define CH_FIRST 2		/* the chunk starts a message (its header vector is in it) */
#define CH_HOLE 4		/* written by the receiver in place of a chunk whose deposit failed */
#define CHUNK_HDR sizeof(struct chunk_hdr)
#define ROUND32(n) (((n) + 31) & ~(size_t)31)

/*
 * What each end deposits into its peer's CTL_IN (from its CTL_OUT): its
 * read pointer, the credit (section 3.4), and the messages of the
 * peer's stream it lost.
 */
struct ctl {
	uint64_t rp;			/* stream bytes read */
	uint32_t fails;			/* messages lost, since the start */
	uint32_t unused;
	uint64_t fail_pos;		/* the stream position of the last loss */
	uint64_t unused2;
};
_Static_assert(sizeof(struct ctl) == 32, "the control deposit is one cell's data");

struct peer {
	int vci, ep;
	uint8_t *mem;			/* the endpoint */
	struct dart_sendregs *sr;
	struct mutex msg_lock;		/* one message at a time to this peer */
	struct mutex sr_lock;		/* the send registers */
	/* sending */
	uint64_t wp;			/* bytes deposited into the peer's buffer */
	uint8_t tx_seq;
	uint32_t fails_told;		/* the peer's losses our callers were told of (-EIO) */
	uint64_t tx_start;		/* where the message being sent starts in the stream */
	/* receiving */
	volatile uint64_t arrived;	/* bytes the interrupts (and holes) announced */
	uint64_t rp, reported;		/* bytes consumed; last told to the peer */
	uint8_t rx_seq;
	uint8_t resync;			/* out of step: take the next well-formed chunk's number */
	uint32_t chunk_left;		/* stream bytes left in the chunk at rp */
	uint64_t chunk_end;		/* where that chunk ends */
	uint32_t fails;			/* messages of the peer's we lost (struct ctl) */
	uint64_t fail_pos;
#ifdef NOW_TEST_HOOKS
	volatile uint8_t brk;		/* mad_cell_test_break: BRK_* */
	uint64_t brk_at;
#endif
};

static struct peer *peers[MAX_NODES];
static int nnodes, me, rr;
static struct waitq tx_wq = WAITQ_INIT;
static struct mad_rxwait rxw = MAD_RXWAIT_INIT;	/* kicked by every receive notification */
static uint64_t proto_errors;

static struct mad_rxbody rx;
static int rx_err;			/* the message being received failed: its body's posts and polls return it */

#ifdef NOW_TEST_HOOKS
enum { BRK_OFF, BRK_ARMED, BRK_ON };
static void test_break_lift(int src, struct peer *p);
#endif

static void complain(const char *what, int src)
{
	if (proto_errors++ < 8)
		printf("mad-cell: %s from node %d\n", what, src);
}

/* A conditional interrupt (receive path): data in the buffer, or a credit. */
static void on_intr(void *arg, const struct dart_event *ev)
{
	struct peer *p = arg;

	if (ev->effaddr < RING) {
		struct chunk_hdr h;
		memcpy(&h, p->mem + ev->effaddr, sizeof h);
		/* A pad stands for the rest of the buffer, though one cell of it came. */
		p->arrived += h.flags == CH_PAD ? RING - ev->effaddr : ev->len;
		mad_rxwait_kick(&rxw);
	} else {
		waitq_wake_all(&tx_wq);
	}
}

/*
 * Where a chunk starting at buffer offset pos with header h ends, in
 * bytes from pos; 0 if h is no chunk our peer's driver sends there.
 */
static uint32_t chunk_span(const struct chunk_hdr *h, uint32_t pos)
{
	if (h->flags == CH_PAD && h->len == 0)
		return RING - pos;
	if (h->len == 0 || h->len > CHUNK || (h->flags & ~CH_FIRST) || ROUND32(CHUNK_HDR + h->len) > RING - pos)
		return 0;
	return (uint32_t)ROUND32(CHUNK_HDR + h->len);
}

/*
 * An exception on the connection (kernel's exception thread; DART 6.4:
 * the faulting cell is kept and the connection's later cells held until
 * the host re-enables it).  A chunk's deposit (its control cell, or an
 * AAL5 cell of its block): the chunk is lost.  Every chunk before it
 * raised its interrupt, so it starts at arrived; its header (the control
 * cell's data, or what that cell put in the buffer) gives its length.  A
 * hole header takes its place and its bytes count as arrived (a lost
 * padding cell is written as it was: it carried nothing); the reader
 * deals with the hole in turn.  Then the connection goes on without the
 * cell and the rest of its block (DART_SKIP).  A cell that is no chunk
 * (a credit: a later one supersedes it) is skipped alone.
 */
static __attribute__((cold, noinline)) void on_exception(void *arg, const struct dart_exc *e)
{
	struct peer *p = arg;
	int src = (int)e->vci - VCI_BASE - me, r;
	const struct cell *c = (const struct cell *)e->cell;
	uint32_t pos, span = 0;
	struct chunk_hdr h;

#ifdef NOW_TEST_HOOKS
	if (p->brk == BRK_ON)
		test_break_lift(src, p);	/* before the hole header goes into the buffer */
#endif
	pos = (uint32_t)(p->arrived % RING);
	if (e->cls == DEX_STATUS) {
		complain("a send refused while the connection was blocked", src);
		return;		/* the send side's: the connection is not blocked */
	}
	if (e->data_cell) {
		/* Its block's control cell committed: the chunk's header is in place. */
		memcpy(&h, p->mem + pos, sizeof h);
		if (h.flags != CH_PAD)
			span = chunk_span(&h, pos);
	} else if (e->cls != DEX_CHECK && !(cell_get16(c->ctl + CTL_OPCODE) & CELL_IP) &&
		   cell_get32(c->ctl + CTL_OPERAND) == pos) {
		memcpy(&h, c->data, sizeof h);
		span = chunk_span(&h, pos);
		if (span && h.flags != CH_PAD && (span > CELL_DATA) != !!e->skip_block)
			span = 0;	/* a block's length is not its chunk's */
	}
	if (span) {
		if (h.flags != CH_PAD)
			h.flags |= CH_HOLE;
		irqflags_t f = irq_save();
		memcpy(p->mem + pos, &h, sizeof h);
		__atomic_thread_fence(__ATOMIC_RELEASE);
		p->arrived += span;
		irq_restore(f);
		mad_rxwait_kick(&rxw);
	} else {
		complain(e->cls < DEX_N && dart_exc_names[e->cls] ? dart_exc_names[e->cls] : "an exception", src);
	}
	r = dep_conn_resume(p->vci, DART_SKIP);
	if (r < 0 && r != -EAGAIN)
		complain("cannot re-enable the connection", src);
}

/* --- setup ------------------------------------------------------------------------ */

/* The endpoint node i deposits into, and our connection with it. */
static int make_peer(int i)
{
	struct peer *p = calloc(1, sizeof *p);
	int r;

	if (!p)
		return -ENOMEM;
	peers[i] = p;
	p->vci = p->ep = -1;
	mutex_init(&p->msg_lock, 0);
	mutex_init(&p->sr_lock, 0);
	p->mem = aligned_alloc(4096, (EP_SIZE + 4095) & ~(size_t)4095);
	if (!p->mem)
		return -ENOMEM;
	memset(p->mem, 0, EP_SIZE);
	if ((p->ep = dep_endpoint_create(p->mem, ROUND32(EP_SIZE), DART_EP_READ | DART_EP_WRITE)) < 0)
		return p->ep;
	struct dep_conn_cfg cfg = { .peer = i, .ep = p->ep, .flags = DART_RX | DART_TX, .reply = -1 };
	if ((r = dep_conn_open(VCI_BASE + me + i, &cfg)) < 0)
		return r;
	p->vci = VCI_BASE + me + i;
	p->sr = dep_sendregs(p->vci);
	dep_on_intr(p->vci, on_intr, p);
	dep_on_exception(p->vci, on_exception, p);
	return 0;
}

static void drop_peer(struct peer *p)
{
	if (p->vci >= 0)
		dep_conn_close(p->vci);
	if (p->ep >= 0)
		dep_endpoint_destroy(p->ep);
	free(p->mem);
	free(p);
}

static void cell_exit_drv(void)
{
	MAD_PEERS_STOP(peers, drop_peer);
}

static int cell_init_drv(int nodes, int self)
{
	int r;

	nnodes = nodes;
	me = self;
	memset(&rx, 0, sizeof rx);
	rx_err = 0;
	if ((r = mad_peers_start(nodes, self, make_peer, NULL, cell_exit_drv)) < 0)
		return r;
	/* Both ends open before any cell goes: a cell for a VCI not open is refused. */
	if ((r = cluster_barrier(60000000000ULL)) < 0) {
		printf("mad-cell: not every node opened its connections (%d)\n", r);
		cell_exit_drv();
	}
	return r;
}

/* --- sending ------------------------------------------------------------------------ */

/* Deposit len bytes at the endpoint's offset src into the peer's offset dst, interrupting. */
static int deposit(struct peer *p, uint32_t src, uint32_t dst, size_t len)
{
	int r;

	mutex_lock(&p->sr_lock);
	p->sr->opcode = DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT) | CELL_POS(CP_LAST) | CO_INTR, 0, 0,
				 CELL_COND(CMP_ALWAYS, 0, 0));
	p->sr->operand = dst;
	p->sr->index = DART_IDX(0, 0, 0, 0xff);
	p->sr->size = (uint32_t)(len / 16);
	p->sr->mode = 0;
	r = dep_go(p->sr, src);
	mutex_unlock(&p->sr_lock);
	return r;
}

static uint64_t peer_rp(struct peer *p)
{
	uint64_t v;

	memcpy(&v, p->mem + CTL_IN, sizeof v);
	return v;
}

/* The receiver's count of our messages it lost. */
static inline uint32_t peer_fails(struct peer *p)
{
	return *(volatile uint32_t *)(p->mem + CTL_IN + __builtin_offsetof(struct ctl, fails));
}

/*
 * The receiver lost a message we did not tell our caller of, while we
 * send the one that starts at stream position tx_start.  -EIO if that is
 * the message, and some of it went (the rest is not sent), or if it is
 * one that went before and none of this one went yet (this one is then
 * not sent: the error reports the earlier loss); 0 to go on (an earlier
 * loss, told by the next send).  Each loss is told once.
 */
static __attribute__((cold, noinline)) int learn_failure(int dest, struct peer *p)
{
	static unsigned said;
	uint64_t start = p->tx_start;
	struct ctl c;

	irqflags_t f = irq_save();
	memcpy(&c, p->mem + CTL_IN, sizeof c);
	irq_restore(f);
	if (p->wp > start && c.fail_pos < start)
		return 0;
	p->fails_told++;
	if (said++ < 8)
		printf("mad-cell: node %d lost a message of ours (%s): it failed\n", dest,
		       p->wp > start ? "this one" : "the one before");
	return -EIO;
}

/*
 * Room for a chunk of total bytes at the write pointer; the peer alive;
 * the message under way not lost (learn_failure).  0 or negative errno.
 */
static int wait_room(int dest, struct peer *p, size_t total)
{
	uint64_t end = cycles() + ns_to_cycles(MAD_PEER_TIMEOUT_NS);
	irqflags_t f = irq_save();
	int r = 0;

	while (RING - (p->wp - *(volatile uint64_t *)(p->mem + CTL_IN)) < total) {
		if (fabric_peer_dead(dest)) {
			r = -EHOSTDOWN;
			break;
		}
		if (cycles() >= end) {
			r = -ETIMEDOUT;
			printf("mad-cell: node %d does not free its buffer (written %lu, it read %lu)\n", dest,
			       (unsigned long)p->wp, (unsigned long)peer_rp(p));
			break;
		}
		waitq_wait_timeout(&tx_wq, 100000000);
	}
	irq_restore(f);
	if (__builtin_expect(peer_fails(p) != p->fails_told, 0) && r == 0)
		r = learn_failure(dest, p);
	return r;
}

static int cell_send_post(int dest, const struct mad_iovec *iov, int count)
{
	struct peer *p = dest >= 0 && dest < MAX_NODES ? peers[dest] : NULL;
	size_t left = iov_total(iov, count);
	struct iovcur c;
	int r = 0;

	if (!p)
		return -EINVAL;
	iovcur_init(&c, iov, count);
	mutex_lock(&p->msg_lock);
	/*
	 * A message of more than one chunk: the node takes what came between
	 * its chunks itself (net_busy_begin), so that the receiver's credits
	 * ring no doorbell here (an exit into QEMU, 16-90 us, for the node
	 * that rings).  Every BUSY_CHUNKS chunks the thread may be preempted.
	 */
	int busy = left > CHUNK ? net_busy_begin() : 0;
	unsigned k = 0;
	/* The header vector goes whole in the first chunk: skip the buffer's end if need be. */
	uint32_t pos0 = (uint32_t)(p->wp % RING);
	if (RING - pos0 < CHUNK_HDR + iov[0].len) {
		struct chunk_hdr h = { 0, p->tx_seq, CH_PAD };
		p->tx_start = p->wp;		/* nothing of this message went: see learn_failure */
		if ((r = wait_room(dest, p, RING - pos0)) == 0) {
			memcpy(p->mem + STAGE, &h, sizeof h);
			memset(p->mem + STAGE + sizeof h, 0, 32 - sizeof h);
			r = deposit(p, STAGE, pos0, 32);
		}
		if (r == 0) {
			/* A chunk's number goes with it: one that did not go leaves the stream in step. */
			p->wp += RING - pos0;
			p->tx_seq++;
		}
	}
	p->tx_start = p->wp;
	while (left && r == 0) {
		uint32_t pos = (uint32_t)(p->wp % RING);
		size_t to_end = RING - pos;
		size_t n = left < CHUNK ? left : CHUNK;
		if (n > to_end - CHUNK_HDR)
			n = to_end - CHUNK_HDR;		/* a chunk never wraps */
		size_t total = ROUND32(CHUNK_HDR + n);
		if ((r = wait_room(dest, p, total)) < 0)
			break;
		struct chunk_hdr h = { (uint16_t)n, p->tx_seq, (uint8_t)(p->wp == p->tx_start ? CH_FIRST : 0) };
		memcpy(p->mem + STAGE, &h, sizeof h);
		iovcur_gather(&c, p->mem + STAGE + CHUNK_HDR, n);
		memset(p->mem + STAGE + CHUNK_HDR + n, 0, total - CHUNK_HDR - n);
		if ((r = deposit(p, STAGE, pos, total)) < 0)
			break;
		p->wp += total;
		p->tx_seq++;
		left -= n;
		if (left)
			busy = net_busy_next(busy, &k, BUSY_CHUNKS);
	}
	net_busy_end(busy);
	mutex_unlock(&p->msg_lock);
	return r;
}

static int cell_send_poll(int dest)
{
	(void)dest;
	return 1;
}

/* --- for tests ------------------------------------------------------------------------ */

#ifdef NOW_TEST_HOOKS
/*
 * The break is armed here and set once the receiver sees after bytes
 * arrived (at its next credit report, every REPORT bytes): the buffer
 * is protected against deposits (hybrid deposit 3.2's page protection
 * inside an endpoint), so that the next chunk's deposit raises an
 * exception.  The exception handler lifts it before it writes the hole
 * header there (the host's own writes may obey that protection too):
 * the chunks held behind the exception, and those after, land again.
 */
int mad_cell_test_break(int node, long after)
{
	struct peer *p = node >= 0 && node < MAX_NODES && node != me ? peers[node] : NULL;

	if (!p || after < 0)
		return -EINVAL;
	p->brk_at = (uint64_t)after;
	p->brk = BRK_ARMED;
	return 0;
}

static __attribute__((cold, noinline)) void test_break_set(int src, struct peer *p)
{
	/* On first: an exception that comes once the protection holds must see it on. */
	__atomic_store_n(&p->brk, BRK_ON, __ATOMIC_SEQ_CST);
	if (dep_endpoint_protect(p->ep, 0, RING, DART_EP_READ) < 0) {
		complain("the test break: cannot protect the buffer", src);
		p->brk = BRK_OFF;
	}
}

static __attribute__((cold, noinline)) void test_break_lift(int src, struct peer *p)
{
	if (dep_endpoint_protect(p->ep, 0, RING, DART_EP_READ | DART_EP_WRITE) < 0)
		complain("the test break: cannot lift the protection", src);
	p->brk = BRK_OFF;
}
#endif

/* --- receiving ------------------------------------------------------------------------ */

/* Deposit our read pointer and our losses into the peer's CTL_IN, interrupting. */
static __attribute__((noinline)) void report_now(int src, struct peer *p)
{
	struct ctl c = { .rp = p->rp, .fails = p->fails, .fail_pos = p->fail_pos };

#ifdef NOW_TEST_HOOKS
	if (p->brk == BRK_ARMED && p->arrived >= p->brk_at)
		test_break_set(src, p);
#endif
	memcpy(p->mem + CTL_OUT, &c, sizeof c);
	if (deposit(p, CTL_OUT, CTL_IN, 32) == 0)
		p->reported = c.rp;
	else
		complain("cannot return credit", src);
}

/* Tell the peer how far we read, every REPORT bytes (or sooner: see lost()). */
static inline void report(int src, struct peer *p)
{
	if (p->rp - p->reported >= REPORT)
		report_now(src, p);
}

/* The message being received can never be whole: its body's posts and polls fail. */
static __attribute__((cold, noinline)) void rx_fail(void)
{
	rx_err = -EIO;
	rx.open = 0;
	rx.part_left = 0;
}

/*
 * n messages of the peer's lost, the last at stream position at: the
 * peer is told at once (the report is due again until it goes).
 */
static __attribute__((cold, noinline)) void lost(int src, struct peer *p, unsigned n, uint64_t at)
{
	static unsigned said;

	p->fails += n;
	p->fail_pos = at;
	if (said++ < 8)
		printf("mad-cell: %u message%s from node %d lost (a chunk at %lu): the stream goes on at "
		       "the next message\n", n, n == 1 ? "" : "s", src, (unsigned long)at);
	p->reported = p->rp - REPORT;
	report(src, p);
}

/*
 * The hole at rp (on_exception wrote its header h; its chunk was total
 * bytes), met by the reader of a message's start (first) or of the
 * message being received from src.  A message it starts is lost; the
 * one being received fails; a hole that only continues a message not
 * being received is part of one that failed already.
 */
static __attribute__((cold, noinline)) void stream_hole(int src, struct peer *p, const struct chunk_hdr *h,
							int first, size_t total)
{
	unsigned n = (h->flags & CH_FIRST) != 0;

	if (!first) {
		/* Continued by the hole, or cut short by its sender before another message began. */
		rx_fail();
		n += !(h->flags & CH_FIRST);
	}
	p->rx_seq = (uint8_t)(h->seq + 1);
	p->chunk_end = p->rp + total;
	if (n)
		lost(src, p, n, p->rp);
}

/*
 * The chunk at rp (header h) is not the one readable() expects (first: a
 * message's first chunk; else the next of the message being received
 * from src): padding, a hole, the rest of a message not being received,
 * a message cut short by its sender, or a stream out of step.  1: read
 * it as the chunk expected after all; 0: look again at rp; -1: nothing
 * readable now.
 */
static __attribute__((cold, noinline)) int chunk_unusual(int src, struct peer *p, const struct chunk_hdr *h,
							 int first)
{
	uint32_t pos = (uint32_t)(p->rp % RING);
	size_t total = ROUND32(CHUNK_HDR + h->len);
	int pad = h->flags == CH_PAD && h->len == 0;
	int formed = pad || (h->len && h->len <= CHUNK && total <= RING - pos && total <= p->arrived - p->rp &&
			     !(h->flags & ~(CH_FIRST | CH_HOLE)));

	if (formed && p->resync) {
		/* Out of step before: the stream goes on from this chunk, whatever its number. */
		p->rx_seq = h->seq;
		p->resync = 0;
	}
	if (!formed || h->seq != p->rx_seq) {
		complain("a chunk out of step: dropped what arrived", src);
		p->rp = p->chunk_end = p->arrived;
		p->chunk_left = 0;
		p->resync = 1;
		if (!first)
			rx_fail();
		return -1;
	}
	if (pad) {
		/* Only its first cell was deposited; the rest of the buffer's end is skipped. */
		p->rx_seq++;
		p->chunk_end = p->rp + (RING - pos);
		return 0;
	}
	if (h->flags & CH_HOLE) {
		stream_hole(src, p, h, first, total);
		return first ? 0 : -1;
	}
	if (h->flags == (first ? CH_FIRST : 0))
		return 1;
	if (first) {
		/* The rest of a message that failed (or whose header was dropped): skipped. */
		p->rx_seq++;
		p->chunk_end = p->rp + total;
		return 0;
	}
	/* Another message begins: the sender gave this one up (it knows). */
	complain("a message cut short by its sender", src);
	rx_fail();
	return -1;
}

/*
 * Stream bytes readable now: those of the chunk at rp, and of the chunks
 * behind it that arrived whole.  Enters the next chunk when the current
 * one is used up, checking its header: first, one that starts a message
 * (recv_header_poll); else one that continues the message being
 * received from src.
 */
static size_t readable(int src, struct peer *p, int first)
{
	for (;;) {
		if (p->chunk_left)
			return p->chunk_left;
		if (p->chunk_end > p->rp)		/* the rest of a finished chunk: padding */
			p->rp = p->chunk_end;
		/*
		 * Every finished chunk counts toward the credit, padded or not
		 * (a chunk of a null message, 4 bytes of header and 16 of
		 * Madeleine's, is padded to its cell's 32).
		 */
		report(src, p);
		if (p->arrived - p->rp < 32)
			return 0;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		struct chunk_hdr h;
		memcpy(&h, p->mem + p->rp % RING, sizeof h);
		size_t total = ROUND32(CHUNK_HDR + h.len);
		if (__builtin_expect(h.seq != p->rx_seq || h.flags != (first ? CH_FIRST : 0) || h.len == 0 ||
				     h.len > CHUNK || total > RING - p->rp % RING || total > p->arrived - p->rp, 0)) {
			int v = chunk_unusual(src, p, &h, first);
			if (v < 0)
				return 0;
			if (v == 0)
				continue;
		}
		p->rx_seq++;
		p->chunk_end = p->rp + total;
		p->rp += CHUNK_HDR;
		p->chunk_left = h.len;
	}
}

/* Copy (and consume) up to n stream bytes of the message being received into dst; how many. */
static size_t stream_read(int src, struct peer *p, uint8_t *dst, size_t n)
{
	size_t done = 0, k;

	while (done < n && (k = readable(src, p, 0)) > 0) {
		if (k > n - done)
			k = n - done;
		memcpy(dst + done, p->mem + p->rp % RING, k);
		p->rp += k;
		p->chunk_left -= (uint32_t)k;
		done += k;
	}
	return done;
}

/*
 * Copy out what arrived of the body being received.  While a chunk is
 * copied, the node takes what comes meanwhile itself before it copies the
 * next (net_busy_begin): the sender's chunks ring no doorbell here.
 */
static void pull(void)
{
	struct peer *p = peers[rx.src];
	int busy = rx.part_left > CHUNK ? net_busy_begin() : 0;
	unsigned k = 0;

	while (rx.part_left) {
		uint8_t *dst = NULL;
		size_t n = iovcur_peek(&rx.cur, &dst, rx.part_left);
		if (n == 0)
			break;
		n = stream_read(rx.src, p, dst, n);
		if (__builtin_expect(rx_err != 0, 0))
			break;		/* the message failed (rx_fail) */
		if (n == 0)
			break;
		rxbody_took(&rx, n);
		busy = net_busy_next(busy, &k, BUSY_CHUNKS);
	}
	net_busy_end(busy);
	if (__builtin_expect(rx_err != 0, 0))
		return;
	rxbody_settle(&rx);
}

static int cell_recv_header_poll(int *src, void *hdr, size_t hdr_max, size_t *hdr_len)
{
	if (rx.open)
		return -EBUSY;
	/* Round robin from rr: every node with something comes in turn. */
	for (int k = 0, i = rr % nnodes; k < nnodes; k++, i = (i + 1) % nnodes) {
		struct peer *p = peers[i];
		struct mad_wire_hdr h;
		/*
		 * Only the chunk at rp counts: a header starts a message, and a
		 * message starts a chunk, so it is all in this one.  (Looking at
		 * arrived again here, after readable() did, would see a chunk an
		 * interrupt announced in between as bytes behind an empty one.)
		 */
		if (!p || readable(i, p, 1) == 0)
			continue;
		if (p->chunk_left < sizeof h) {
			complain("a header split across chunks", i);
			p->rp = p->chunk_end;
			p->chunk_left = 0;
			continue;
		}
		memcpy(&h, p->mem + p->rp % RING, sizeof h);
		size_t full = sizeof h + 4u * h.npacks + h.express_len;
		if (h.magic != MAD_MAGIC || h.npacks > MAD_MAX_PACKS || h.express_len > MAD_EXPRESS_MAX ||
		    full > hdr_max || full > p->chunk_left) {
			complain("a malformed header: its chunk dropped", i);
			p->rp = p->chunk_end;
			p->chunk_left = 0;
			continue;
		}
		stream_read(i, p, hdr, full);
		if (mad_hdr_check(hdr, full) < 0) {
			complain("an inconsistent header: its chunk dropped", i);
			p->rp = p->chunk_end;
			p->chunk_left = 0;
			continue;
		}
		rr = (i + 1) % nnodes;
		rx_err = 0;
		return rxbody_taken(&rx, i, h.body_len, full, src, hdr_len);
	}
	return 0;
}

/*
 * recv_header_post, recv_body_post and recv_body_poll: the stream
 * driver's (lib/mad_drv.h's MAD_STREAM_BODY), but a message that failed
 * (rx_err) fails every post and poll of its body.
 */
static int cell_recv_header_post(void)
{
	return rx.open ? -EBUSY : 0;
}

static int cell_recv_body_post(int src, const struct mad_iovec *iov, int count)
{
	if (__builtin_expect(rx_err != 0, 0))
		return rx_err;
	int r = rxbody_post(&rx, src, iov, count);
	if (r == 0) {
		pull();
		if (__builtin_expect(rx_err != 0, 0))
			return rx_err;
	}
	return r;
}

static int cell_recv_body_poll(int src)
{
	(void)src;
	if (__builtin_expect(rx_err != 0, 0))
		return rx_err;
	int r = rxbody_poll(&rx, pull, fabric_peer_dead);
	return __builtin_expect(rx_err != 0, 0) ? rx_err : r;
}

static int ready_to_poll(void)
{
	for (int i = 0; i < nnodes; i++) {
		struct peer *p = peers[i];
		if (!p || (rx.open && i != rx.src))
			continue;
		/* Something arrived that is not read yet. */
		if (p->chunk_left || p->arrived > (p->chunk_end > p->rp ? p->chunk_end : p->rp))
			return 1;
	}
	return 0;
}

static void cell_wait(uint64_t timeout_ns)
{
	mad_rxwait_sleep(&rxw, ready_to_poll, timeout_ns);
}

static void cell_kick(void)
{
	mad_rxwait_abort(&rxw);
}

MAD_DRIVER_DEFINE(cell, .init = cell_init_drv, .exit = cell_exit_drv, .wait = cell_wait, .kick = cell_kick);
