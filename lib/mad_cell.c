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
 * sender's CTL_IN every quarter buffer, with an interrupt that wakes a
 * sender waiting for room.  Chunks start on 32-byte boundaries and never
 * wrap: each side avoids overflow by comparing its pointers (3.4).
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

#define RING (64 * 1024)
#define CHUNK (8 * 1024)
#define CTL_IN RING
#define CTL_OUT (RING + 32)
#define STAGE (RING + 64)
#define STAGE_LEN (CHUNK + 32)
#define EP_SIZE (STAGE + STAGE_LEN)
#define REPORT (RING / 4)
#define VCI_BASE 128

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

/* Padding to the end of the buffer: a message's header vector never wraps. */
#define CH_PAD 1
#define CHUNK_HDR sizeof(struct chunk_hdr)
#define ROUND32(n) (((n) + 31) & ~(size_t)31)

struct peer {
	int vci, ep;
	uint8_t *mem;			/* the endpoint */
	struct dart_sendregs *sr;
	struct mutex msg_lock;		/* one message at a time to this peer */
	struct mutex sr_lock;		/* the send registers */
	/* sending */
	uint64_t wp;			/* bytes deposited into the peer's buffer */
	uint8_t tx_seq;
	/* receiving */
	volatile uint64_t arrived;	/* bytes the interrupts announced */
	uint64_t rp, reported;		/* bytes consumed; last told to the peer */
	uint8_t rx_seq;
	uint32_t chunk_left;		/* stream bytes left in the chunk at rp */
	uint64_t chunk_end;		/* where that chunk ends */
};

static struct peer *peers[MAX_NODES];
static int nnodes, me, rr;
static struct waitq tx_wq = WAITQ_INIT;
static struct mad_rxwait rxw = MAD_RXWAIT_INIT;	/* kicked by every receive notification */
static uint64_t proto_errors;

static struct mad_rxbody rx;

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

static void on_exception(void *arg, const struct dart_exc *e)
{
	struct peer *p = arg;

	(void)p;
	/* Our peer's driver never sends a faulting cell: the connection stays blocked. */
	complain(e->cls < DEX_N ? dart_exc_names[e->cls] : "an exception", (int)e->vci - VCI_BASE - me);
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

/* Room for a chunk of total bytes at the write pointer; the peer alive. */
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
	/* The header vector goes whole in the first chunk: skip the buffer's end if need be. */
	uint32_t pos0 = (uint32_t)(p->wp % RING);
	if (RING - pos0 < CHUNK_HDR + iov[0].len) {
		struct chunk_hdr h = { 0, p->tx_seq++, CH_PAD };
		if ((r = wait_room(dest, p, RING - pos0)) == 0) {
			memcpy(p->mem + STAGE, &h, sizeof h);
			memset(p->mem + STAGE + sizeof h, 0, 32 - sizeof h);
			r = deposit(p, STAGE, pos0, 32);
		}
		if (r == 0)
			p->wp += RING - pos0;
	}
	while (left && r == 0) {
		uint32_t pos = (uint32_t)(p->wp % RING);
		size_t to_end = RING - pos;
		size_t n = left < CHUNK ? left : CHUNK;
		if (n > to_end - CHUNK_HDR)
			n = to_end - CHUNK_HDR;		/* a chunk never wraps */
		size_t total = ROUND32(CHUNK_HDR + n);
		if ((r = wait_room(dest, p, total)) < 0)
			break;
		struct chunk_hdr h = { (uint16_t)n, p->tx_seq++, 0 };
		memcpy(p->mem + STAGE, &h, sizeof h);
		iovcur_gather(&c, p->mem + STAGE + CHUNK_HDR, n);
		memset(p->mem + STAGE + CHUNK_HDR + n, 0, total - CHUNK_HDR - n);
		if ((r = deposit(p, STAGE, pos, total)) < 0)
			break;
		p->wp += total;
		left -= n;
	}
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
int mad_cell_test_break(int node, long after)
{
	(void)node, (void)after;
	return -EINVAL;		/* not yet: the stream does not recover */
}
#endif

/* --- receiving ------------------------------------------------------------------------ */

/* Tell the peer how far we read, every quarter buffer. */
static void report(int src, struct peer *p)
{
	if (p->rp - p->reported < REPORT)
		return;
	uint64_t v = p->rp;
	memcpy(p->mem + CTL_OUT, &v, sizeof v);
	if (deposit(p, CTL_OUT, CTL_IN, 32) == 0)
		p->reported = v;
	else
		complain("cannot return credit", src);
}

/*
 * Stream bytes readable now: those of the chunk at rp, and of the chunks
 * behind it that arrived whole.  Enters the next chunk when the current
 * one is used up, checking its header.
 */
static size_t readable(int src, struct peer *p)
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
		if (h.flags == CH_PAD && h.len == 0 && h.seq == p->rx_seq) {
			/* Only its first cell was deposited; the rest of the buffer's end is skipped. */
			p->rx_seq++;
			p->chunk_end = p->rp + (RING - p->rp % RING);
			continue;
		}
		if (h.seq != p->rx_seq || h.flags || h.len == 0 || h.len > CHUNK || total > RING - p->rp % RING ||
		    total > p->arrived - p->rp) {
			complain("a chunk out of step: dropped what arrived", src);
			p->rp = p->chunk_end = p->arrived;
			p->chunk_left = 0;
			return 0;
		}
		p->rx_seq++;
		p->chunk_end = p->rp + total;
		p->rp += CHUNK_HDR;
		p->chunk_left = h.len;
	}
}

/* Copy (and consume, if take) up to n stream bytes into dst; how many. */
static size_t stream_read(int src, struct peer *p, uint8_t *dst, size_t n)
{
	size_t done = 0, k;

	while (done < n && (k = readable(src, p)) > 0) {
		if (k > n - done)
			k = n - done;
		memcpy(dst + done, p->mem + p->rp % RING, k);
		p->rp += k;
		p->chunk_left -= (uint32_t)k;
		done += k;
	}
	return done;
}

static void pull(void)
{
	struct peer *p = peers[rx.src];

	while (rx.part_left) {
		uint8_t *dst = NULL;
		size_t n = iovcur_peek(&rx.cur, &dst, rx.part_left);
		if (n == 0 || (n = stream_read(rx.src, p, dst, n)) == 0)
			break;
		rxbody_took(&rx, n);
	}
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
		if (!p || readable(i, p) == 0)
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
		return rxbody_taken(&rx, i, h.body_len, full, src, hdr_len);
	}
	return 0;
}

MAD_STREAM_BODY(cell, rx, pull)

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
