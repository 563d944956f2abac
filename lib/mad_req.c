/*
 * Madeleine's message-queue driver: the remote message queues of the
 * madeleine paper's SCI implementation (section 3.4, Figure 14), with the
 * remote enqueue (net/req/req.h) as the arrival notification that the paper
 * left for later ("Remote interrupts could have been used to signal the
 * data transfer completions").
 *
 * For each ordered pair of nodes a circular FIFO buffer of RING bytes
 * lives on the receiver ("mad.q.<sender>"), which only the sender may
 * write.  The sender keeps the write pointer; it deposits a chunk of the
 * message stream (header vector, then body vectors, a chunk at a time)
 * at the write pointer with remote WRITEs and then REQs one word, its
 * node and the chunk's length, into the receiver's notification queue
 * for that sender ("mad.n.<sender>"), one queue per sender.  The
 * receiver keeps the read pointer; it dequeues the words, copies the
 * bytes out of the ring into the unpack destinations (the one extra copy
 * of section 3.4; chunks pipeline), and writes its read pointer back into
 * the sender's control word ("mad.p.<receiver>" on the sender) every
 * quarter ring.  Each side avoids overflow and underflow by comparing
 * its own pointer with the other's, as section 3.4 says.  The fabric keeps
 * order per pair, so a word never arrives before its chunk.
 *
 * The queue a word arrives on names its sender: a word is counted against
 * that sender's ring only.  A word whose node field is not the queue's
 * sender is refused and counted, and so is one announcing more than the
 * ring can hold; the receiver checks every header it reads.
 *
 * A chunk the receiver refuses (its ring revoked or write-inhibited: the
 * WRITE is refused, and with it the chunk's word, req.h) leaves the two
 * pointers apart.  Words carry a chunk number, so the receiver sees the
 * gap at the next word and takes no word after it (their bytes lie where
 * it would misread them).  The sender hears of the refusal (req and rmem
 * report it) while it sends the message or at its next post: that send
 * fails (the message in flight is reported failed), and the sender
 * enqueues a resynchronising word (length 0, its number a generation;
 * twice where a chunk's WRITEs went without their word, resync_send) and
 * sends nothing more to that node until it answers.  The receiver reads
 * what came whole before the gap, fails the message it then cannot
 * finish, starts both pointers again at 0, and answers in the control
 * word; the next message goes whole from the ring's start.
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
#include "net/fabric/fabric.h"
#include "net/net.h"
#include "net/req/req.h"
#include "net/rmem/rmem.h"

/*
 * The ring: 1 MiB where the cluster is small, so that a pair keeps a
 * megabyte in flight (on the shared-memory link, 2 nodes, mad-bw-req-4m
 * went 842-870 MB/s with 256 KiB and 956-1092 with 1 MiB, alternate runs of
 * one hour; 2 MiB gave no more; 64 KiB held it to 340, waiting on read
 * pointers).  Every node keeps one ring per peer, so a larger cluster
 * gets less each: at most RING_BUDGET in all, never under RING_MIN (the
 * size it always had).  Both ends compute it from the node count alone.
 * (fuzz_madreq sets a budget of RING_MIN: rings its inputs wrap.)
 * A chunk: 8 KiB ("chunks of 8 kB or so", section 3.4), or the pair's
 * largest WRITE where that is more (one frame of the shared-memory link,
 * 63 KiB), so that each chunk is one frame and one word.
 */
#define RING_MAX (1024 * 1024)
#define RING_MIN (256 * 1024)
#ifndef RING_BUDGET
#define RING_BUDGET (4 * 1024 * 1024)
#endif
#define CHUNK (8 * 1024)
#define CHUNK_MAX RMEM_XFER_LIMIT	/* the most a word may announce */
_Static_assert(CHUNK <= CHUNK_MAX && CHUNK_MAX < RING_MIN / 4, "chunks and ring");
static uint32_t ring_size = RING_MIN;	/* a power of two: every pair's ring in this cluster */
#define RING ring_size
#define RING_POS(x) ((uint32_t)(x) & (ring_size - 1))	/* a stream offset's place in the ring (no divide) */
#define REPORT (RING / 4)
#define QBYTES 4096			/* the notification queue's first buffer */

/* A word: the sender's node, the chunk's number on the pair (modulo 128), its length. */
#define WORD(src, seq, len) ((uint32_t)(src) << 24 | ((uint32_t)(seq) & 0x7f) << 17 | (uint32_t)(len))
#define WORD_SRC(w) ((int)((w) >> 24))
#define WORD_SEQ(w) ((uint8_t)((w) >> 17 & 0x7f))
#define WORD_LEN(w) ((w) & 0x1ffff)
_Static_assert(CHUNK_MAX < 0x20000, "a chunk's length fits its word");
/* The answer to a resynchronising word of generation g, in the control word's second half. */
#define RESYNC_ACK(g) (0x100u | (g))

struct peer {
	/* receiving from the peer */
	uint8_t *ring;
	struct mad_segpair seg;		/* our ring and read pointer for the peer; its for us */
	uint64_t rp, reported;		/* bytes consumed; last told to the peer */
	uint64_t avail;			/* announced by words, not yet consumed */
	uint64_t skip;			/* bytes of a bad message still to throw away */
	uint64_t words;			/* words taken from the peer's queue */
	uint8_t rx_seq;			/* the next chunk's number */
	uint8_t broken;			/* a chunk is missing: no word taken until the resync */
	uint8_t reset_pending;		/* the resynchronising word came: reset once the prefix is read */
	uint8_t reset_gen;		/* its generation, answered at the reset */
	uint8_t answered;		/* the generation last answered (0xff: none) */
	uint8_t ack_due;		/* the answer could not go yet */
	uint64_t announced;		/* stream bytes words announced, ever (the test hook's count) */
	long break_after;		/* test hook: inhibit the ring once announced passes it (0: off) */
	int break_on;			/* test hook: the ring inhibited until the reset */
	/* sending to the peer */
	volatile uint64_t *peer_rp;	/* the peer's read pointer, written by it */
	int rq;
	int nq;				/* our notification queue for the peer's words */
	uint64_t wp;
	uint8_t tx_seq;			/* the next chunk's number */
	uint8_t gen;			/* the last resynchronisation's generation */
	uint8_t resync_wait;		/* waiting for the receiver's answer to it */
	uint8_t resync_sent;		/* its words went: RESYNC_BODY, RESYNC_PLAIN */
	uint8_t tx_orphan;		/* WRITEs went without their word since the last resync: a verdict may be held */
	uint64_t resync_since;
	struct mutex lock;		/* held from send_post until its send_poll ends */
	struct iovcur txc;		/* the message being sent: what is left of it */
	size_t tx_left;
	uint64_t tx_since;		/* when the ring last had room for it */
	int tx_nospace;			/* the last chunk found no room among the frames queued to go */
	uint8_t stage[RMEM_MAX_XFER] __attribute__((aligned(16)));
};

static struct peer *peers[MAX_NODES];
#ifdef NOW_TEST_HOOKS
static int test_partial;		/* mad_req_test_partial: 1 on; 3 the chunk just cut, whole next */
#endif
static int nnodes, me, rr;
static struct waitq tx_wq = WAITQ_INIT;
static struct waitq turn_wq = WAITQ_INIT;	/* woken when a peer's message ends: the next may post */
static uint64_t posts_deferred;		/* send_posts that found another message under way: -EAGAIN */
static struct mad_rxwait rxw = MAD_RXWAIT_INIT;	/* kicked by every word that arrives */
static volatile int tx_kick;		/* set when a receiver frees room in our ring to it */
static volatile uint64_t arrivals;	/* words enqueued into our queues, ever */
static uint64_t arrivals_taken;		/* arrivals when take_words last began */
static uint64_t proto_errors;

/* The message being received. */
static struct mad_rxbody rx;

static void ctl_note(void *arg, int seg, uint32_t off, uint32_t count)
{
	(void)arg, (void)seg, (void)off, (void)count;
	tx_kick = 1;
	waitq_wake_all(&tx_wq);
}

/* A word arrived on one of our queues (receive path: short). */
static void word_note(void *arg, int q, uint32_t word)
{
	(void)arg, (void)q, (void)word;
	arrivals++;
	mad_rxwait_kick(&rxw);
}

static void complain(const char *what, int src)
{
	if (proto_errors++ < 8)
		printf("mad-req: %s from node %d: dropped\n", what, src);
}

/* --- setup ------------------------------------------------------------------------ */

static void req_exit_drv(void);

/* The peer's queue, once it has made it. */
static int req_import_wait(int node, const char *name)
{
	uint64_t end = cycles() + ns_to_cycles(MAD_PEER_TIMEOUT_NS);
	int r;

	while ((r = req_import(node, name)) == -ENOENT && cycles() < end)
		thread_sleep_ns(10000000);
	return r;
}

static void drop_peer(struct peer *p)
{
	mad_segpair_release(&p->seg);
	if (p->nq >= 0) {
		req_notify(p->nq, NULL, NULL);
		req_destroy(p->nq);
	}
	free(p->ring);
	free((void *)p->peer_rp);
	free(p);
}

static void req_exit_drv(void)
{
	MAD_PEERS_STOP(peers, drop_peer);
}

/* Node i's end here: the ring it deposits into, its pointer, its notification queue. */
static int make_peer(int i)
{
	char name[RMEM_NAME_MAX];
	struct peer *p = calloc(1, sizeof *p);
	int r;

	if (!p)
		return -ENOMEM;
	peers[i] = p;
	mutex_init(&p->lock, 0);
	mad_segpair_init(&p->seg);
	p->rq = p->nq = -1;
	p->answered = 0xff;
	p->ring = aligned_alloc(64, RING);
	p->peer_rp = aligned_alloc(64, 64);
	if (!p->ring || !p->peer_rp)
		return -ENOMEM;
	p->peer_rp[0] = p->peer_rp[1] = 0;
	/* The peer's read pointer, and its answer to our last resynchronisation. */
	if ((r = mad_segpair_export(&p->seg, "mad.q.%d", "mad.p.%d", i, p->ring, RING, (void *)p->peer_rp, 16)) < 0)
		return r;
	seg_notify(p->seg.ctl_seg, 1, ctl_note, p);
	if ((p->nq = req_create(QBYTES)) < 0)
		return p->nq;
	snprintf(name, sizeof name, "mad.n.%d", i);
	/* Node i's queue, granted to node i alone: the queue names the sender. */
	if ((r = req_export_for(p->nq, name, i)) < 0 || (r = req_notify(p->nq, word_note, p)) < 0)
		return r;
	return 0;
}

/* Node i's ring, pointer and queue for us. */
static int join_peer(int i)
{
	char name[RMEM_NAME_MAX];
	struct peer *p = peers[i];
	int r;

	snprintf(name, sizeof name, "mad.n.%d", me);
	if ((r = mad_segpair_import(&p->seg, "mad.q.%d", "mad.p.%d", i, me)) == 0)
		r = p->rq = req_import_wait(i, name);
	if (r < 0)
		printf("mad-req: cannot reach node %d's queue (%d)\n", i, r);
	return r < 0 ? r : 0;
}

/* The ring for a cluster of nodes, within budget bytes over all peers: the same on every node. */
static uint32_t ring_for(int nodes, uint64_t budget)
{
	uint32_t r = RING_MAX;

	while (r > RING_MIN && (uint64_t)r * (uint64_t)(nodes > 1 ? nodes - 1 : 1) > budget)
		r /= 2;
	return r;
}

static int req_init_drv(int nodes, int self)
{
	nnodes = nodes;
	ring_size = ring_for(nodes, RING_BUDGET);
	me = self;
	memset(&rx, 0, sizeof rx);
	return mad_peers_start(nodes, self, make_peer, join_peer, req_exit_drv);
}

/* --- sending ------------------------------------------------------------------------ */

/*
 * Deposit the next n bytes of the stream at the write pointer: one WRITE
 * per frame of the pair (rmem_max_xfer: 1408 bytes on Ethernet, 7-8 KiB
 * with long frames, the whole chunk on the shared-memory link), straight
 * from the caller's memory where a vector covers it, gathered through a
 * small stage (one Ethernet frame's worth) where short vectors meet.
 */
static int deposit(struct peer *p, struct iovcur *c, size_t n)
{
	/* A chunk that one Ethernet-sized WRITE carries asks nothing (a null message's cost). */
	size_t most = n > RMEM_MAX_XFER ? rmem_max_xfer(p->seg.ring_rd) : RMEM_MAX_XFER;
	int r = 0;
#ifdef NOW_TEST_HOOKS
	size_t n0 = n;
#endif

	while (n && r == 0) {
		uint32_t pos = RING_POS(p->wp);
		size_t k = n < most ? n : most;
		uint8_t *src;
		if (k > RING - pos)
			k = RING - pos;
		size_t m = iovcur_peek(c, &src, k);
		if (m == k || m >= sizeof p->stage) {
			iovcur_skip(c, k = m);
		} else {
			if (k > sizeof p->stage)
				k = sizeof p->stage;
			iovcur_gather(c, src = p->stage, k);
		}
		/* The chunk is a body: its word is refused if any of its WRITEs was (req.h). */
		/* Never waits (madeleine paper 2.2: post "returns without blocking"). */
		if ((r = rmem_write(p->seg.ring_rd, pos, src, (uint32_t)k, RMEM_MARKED | RMEM_NOWAIT)) < 0)
			break;
		p->wp += k;
		n -= k;
#ifdef NOW_TEST_HOOKS
		if (n && test_partial && n + k == n0 && (test_partial ^= 2) & 2)
			r = -EAGAIN;	/* as if the frames queued to go had no room for the rest */
#endif
	}
	return r;
}

/*
 * Deposit chunks of the message while the ring has room, without waiting:
 * 1 when all of it went, 0 when the ring is full, or a negative error.
 */
static int tx_push(struct peer *p)
{
	int r = 0;

	while (p->tx_left && r == 0) {
		size_t room = RING - (p->wp - *p->peer_rp);
		if (room == 0)
			return 0;
		size_t n = p->tx_left;
		if (n > CHUNK) {
			/* Only a long message asks the pair's largest WRITE (a null one stays at its cost). */
			size_t chunk = rmem_max_xfer(p->seg.ring_rd);
			if (chunk < CHUNK)
				chunk = CHUNK;
			if (n > chunk)
				n = chunk;
		}
		if (n > room)
			n = room;
		/*
		 * A chunk and its word go together (no other body to that node
		 * between them), and only whole: a WRITE that fails here puts
		 * the write pointer and the message back where the chunk began
		 * and announces nothing, so the stream stays in step.
		 */
		uint64_t wp0 = p->wp;
		struct iovcur c0 = p->txc;
		if ((r = reqmsg_begin(p->rq)) < 0)
			break;
		if ((r = deposit(p, &p->txc, n)) == 0)
			r = req_enqueue_body(p->rq, WORD(me, p->tx_seq, n));
		reqmsg_end(p->rq);
		if (r < 0) {
			/* WRITEs went without their word: the receiver may hold their verdict (resync_send). */
			if (p->wp != wp0)
				p->tx_orphan = 1;
			p->wp = wp0;
			p->txc = c0;
			if (r == -EAGAIN) {
				/* The frames queued to go have no room: the chunk again later. */
				p->tx_nospace = 1;
				return 0;
			}
			break;
		}
		p->tx_seq = (p->tx_seq + 1) & 0x7f;
		p->tx_left -= n;
		p->tx_since = cycles();
	}
	return r < 0 ? r : 1;
}

/*
 * The resynchronising word of generation p->gen: 0 (sent, or to try again
 * at the next post), or an error.  Where a chunk's WRITEs went without its
 * word (tx_push cut it short and the message failed before it went again),
 * the receiver still holds their verdict, and would refuse the next word
 * that announces a body with it, the new stream's first (req.h: the
 * notification takes its body's verdict).  So the word goes twice: first
 * as a body's, which takes that verdict (refused if it was a refusal), then
 * plain; the receiver answers a generation once.
 */
#define RESYNC_BODY 1
#define RESYNC_PLAIN 2
static int resync_send(struct peer *p)
{
	int r = 0;

	if (!(p->resync_sent & RESYNC_BODY) && (r = reqmsg_begin(p->rq)) == 0) {
		r = req_enqueue_body(p->rq, WORD(me, p->gen, 0));
		reqmsg_end(p->rq);
		if (r == 0) {
			p->resync_sent |= RESYNC_BODY;
			p->tx_orphan = 0;
		}
	}
	if (r == 0 && !(p->resync_sent & RESYNC_PLAIN) && (r = req_enqueue(p->rq, WORD(me, p->gen, 0), 0)) == 0)
		p->resync_sent |= RESYNC_PLAIN;
	return r == 0 || r == -EAGAIN || r == -ENOBUFS ? 0 : r;
}

/*
 * A chunk to dest was refused (err, from req or rmem): the message under
 * way, or the one before, did not arrive whole.  Start the stream again:
 * the resynchronising word goes after every chunk sent so far; nothing
 * more goes to dest until it answers.  Returns err, the send's failure.
 */
static __attribute__((cold, noinline)) int tx_broken(int dest, struct peer *p, int err)
{
	static unsigned said;

	p->gen = (p->gen + 1) & 0x7f;
	p->resync_wait = 1;
	p->resync_sent = p->tx_orphan ? 0 : RESYNC_BODY;
	p->resync_since = cycles();
	p->tx_left = 0;
	resync_send(p);
	if (said++ < 8)
		printf("mad-req: node %d refused a chunk of the stream to it (%d): that message failed; "
		       "the stream starts again\n", dest, err);
	return err;
}

/*
 * Has the receiver answered the resynchronisation?  0 (the stream starts
 * again at 0), -EAGAIN (not yet: post again after send_wait), or an error.
 */
static __attribute__((cold, noinline)) int resync_done(int dest, struct peer *p)
{
	int r;

	if (p->resync_sent != (RESYNC_BODY | RESYNC_PLAIN) && (r = resync_send(p)) < 0)
		return r;
	if (p->peer_rp[1] == RESYNC_ACK(p->gen)) {
		/*
		 * Answered after every chunk sent before the word: their
		 * refusals came back before it, and belong to the old stream.
		 */
		req_take_error(p->rq);
		rmem_take_error(p->seg.ring_rd);
		p->wp = 0;
		p->tx_seq = 0;
		p->resync_wait = 0;
		return 0;
	}
	if (fabric_peer_dead(dest))
		return -EHOSTDOWN;
	if (cycles() - p->resync_since >= ns_to_cycles(MAD_PEER_TIMEOUT_NS))
		return -ETIMEDOUT;
	return -EAGAIN;
}

/*
 * Asynchronous (paper 2.2: send_post "returns without blocking"): post
 * deposits what the ring has room for and returns; send_poll deposits
 * more as the receiver frees room, 1 once the last chunk is with the
 * fabric.  The vectors stay the caller's until then; the peer's lock is
 * held from post to the end of poll, so messages to a peer do not mix.
 * A post that finds another thread's message to the peer under way does
 * not wait for its lock either: it returns -EAGAIN, and the caller posts
 * again after send_wait, which sleeps until that message ends.
 */
/* The peer's message ends (sent or failed): the next thread's post may go. */
static void turn_end(struct peer *p)
{
	mutex_unlock(&p->lock);
	waitq_wake_all(&turn_wq);
}

static int req_send_post(int dest, const struct mad_iovec *iov, int count)
{
	struct peer *p = dest >= 0 && dest < MAX_NODES ? peers[dest] : NULL;
	int r;

	if (!p)
		return -EINVAL;
	if (mutex_trylock(&p->lock) < 0) {
		__atomic_fetch_add(&posts_deferred, 1, __ATOMIC_RELAXED);
		return -EAGAIN;
	}
	if (p->resync_wait && (r = resync_done(dest, p)) < 0) {
		turn_end(p);
		return r;
	}
	/*
	 * A chunk of an earlier message refused by the receiver (its ring
	 * revoked, its node rebooted): the chunk's word was refused with it,
	 * so nothing false was announced; the sender hears of it here, and
	 * this send reports it.
	 */
	if ((r = req_take_error(p->rq)) < 0 || (r = rmem_take_error(p->seg.ring_rd)) < 0) {
		r = tx_broken(dest, p, r);
		turn_end(p);
		return r;
	}
	iovcur_init(&p->txc, iov, count);
	p->tx_left = iov_total(iov, count);
	p->tx_since = cycles();
	if ((r = tx_push(p)) < 0) {
		p->tx_left = 0;
		turn_end(p);
		return r;
	}
	return 0;
}

static int req_send_poll(int dest)
{
	struct peer *p = dest >= 0 && dest < MAX_NODES ? peers[dest] : NULL;
	int r;

	if (!p)
		return -EINVAL;
	/* A message still going: a chunk of it refused fails it (and starts the stream again). */
	if (p->tx_left && ((r = req_take_error(p->rq)) < 0 || (r = rmem_take_error(p->seg.ring_rd)) < 0)) {
		r = tx_broken(dest, p, r);
		turn_end(p);
		return r;
	}
	r = tx_push(p);
	if (r == 0 && fabric_peer_dead(dest))
		r = -EHOSTDOWN;
	else if (r == 0 && cycles() - p->tx_since >= ns_to_cycles(MAD_PEER_TIMEOUT_NS))
		r = -ETIMEDOUT;
	if (r != 0) {
		p->tx_left = 0;
		turn_end(p);
	}
	return r;
}

/*
 * Between send_polls: wait until the receiver frees room in its ring (its
 * read pointer's WRITE notifies ctl_note), polling the link first where
 * the node polls anyway; a while at most, as send_poll also watches for
 * a dead peer and the timeout.
 */
static void req_send_wait(int dest)
{
	struct peer *p = dest >= 0 && dest < MAX_NODES ? peers[dest] : NULL;

	if (p && p->lock.owner && p->lock.owner != thread_current()) {
		/* A post deferred behind another thread's message: until that one ends, 10 ms at most. */
		irqflags_t f = irq_save();
		if (p->lock.owner)
			waitq_wait_timeout(&turn_wq, 10000000);
		irq_restore(f);
		return;
	}
	if (p && p->resync_wait) {
		/* Until the receiver answers the resynchronisation (ctl_note): 10 ms at most. */
		irqflags_t f = irq_save();
		if (p->peer_rp[1] != RESYNC_ACK(p->gen))
			waitq_wait_timeout(&tx_wq, 10000000);
		irq_restore(f);
		return;
	}
	if (p && p->tx_nospace) {
		/* Until acknowledgements free room to queue frames: 10 ms at most. */
		p->tx_nospace = 0;
#ifdef NOW_TEST_HOOKS
		if (test_partial & 2)
			thread_sleep_ns(2000000);	/* the cut chunk's room, 2 ms away */
#endif
		for (int i = 0; i < 100 && !fabric_can_send(dest); i++)
			thread_sleep_ns(100000);
		return;
	}
	irqflags_t f = irq_save();
	tx_kick = 0;
	if (p && p->wp - *p->peer_rp >= RING && !net_poll_wait(&tx_kick) &&
	    p->wp - *p->peer_rp >= RING)
		waitq_wait_timeout(&tx_wq, 10000000);
	irq_restore(f);
}

/* --- for tests ------------------------------------------------------------------------ */

#ifdef NOW_TEST_HOOKS
int mad_req_test_inhibit(int node, int on)
{
	struct peer *p = node >= 0 && node < MAX_NODES ? peers[node] : NULL;

	return p && p->seg.ring_seg >= 0 ? seg_inhibit(p->seg.ring_seg, on) : -EINVAL;
}

long mad_req_test_words(int node)
{
	struct peer *p = node >= 0 && node < MAX_NODES ? peers[node] : NULL;

	return p ? (long)p->words : -EINVAL;
}

int mad_req_test_break(int node, long after)
{
	struct peer *p = node >= 0 && node < MAX_NODES ? peers[node] : NULL;

	if (!p || p->seg.ring_seg < 0 || after <= 0)
		return -EINVAL;
	p->break_after = (long)p->announced + after;
	return 0;
}

int mad_req_test_partial(int on)
{
	test_partial = on ? 1 : 0;
	return 0;
}
#endif

/* The test hook's break: the ring refuses the chunks that come from now until the reset. */
static void test_break(struct peer *p)
{
#ifdef NOW_TEST_HOOKS
	if (p->break_after && p->announced >= (uint64_t)p->break_after) {
		p->break_after = 0;
		p->break_on = seg_inhibit(p->seg.ring_seg, 1) == 0;
	}
#else
	(void)p;
#endif
}

/* --- receiving ------------------------------------------------------------------------ */

/*
 * Take the words that arrived into the per-peer byte counts.  A word
 * counts for the sender whose queue it came on, and only if it names that
 * sender and fits its ring; any other is refused and counted.
 */
/* A word that does not follow the last one taken: the stream is out of step until the resync. */
static __attribute__((cold, noinline)) void word_gap(int i, struct peer *p, uint32_t w)
{
	p->broken = 1;
	if (proto_errors++ < 8)
		printf("mad-req: chunk %u from node %d came where %u was due: one was refused here; "
		       "its stream waits to start again\n", WORD_SEQ(w), i, p->rx_seq);
}

/* The sender's resynchronising word: reset once what came whole before the gap is read. */
static __attribute__((cold, noinline)) void resync_word(int i, struct peer *p, uint32_t w)
{
	(void)i;
	if (WORD_SEQ(w) == p->answered && !p->reset_pending)
		return;		/* the same generation's second word (resync_send): answered already */
	p->reset_pending = 1;
	p->reset_gen = WORD_SEQ(w);
}

/* The answer to the resynchronisation: the read pointer 0 and the generation, in one WRITE. */
static void ack_send(struct peer *p)
{
	uint64_t v[2] = { 0, RESYNC_ACK(p->reset_gen) };

	if (rmem_write(p->seg.ctl_rd, 0, v, sizeof v, RMEM_INTR) == 0)
		p->ack_due = 0;
}

/*
 * Start node i's stream again: what it sent before its resynchronising
 * word is read or thrown away; both pointers restart at 0.
 */
static __attribute__((cold, noinline)) void stream_reset(int i, struct peer *p)
{
	p->rp = p->reported = 0;
	p->avail = p->skip = 0;
	p->rx_seq = 0;
	p->broken = p->reset_pending = 0;
	p->answered = p->reset_gen;
#ifdef NOW_TEST_HOOKS
	/* The test's break ends with the stream it broke: before the answer lets the sender go on. */
	if (p->break_on) {
		seg_inhibit(p->seg.ring_seg, 0);
		p->break_on = 0;
	}
#endif
	p->ack_due = 1;
	ack_send(p);
	printf("mad-req: node %d's stream starts again\n", i);
}

/*
 * Take the words that arrived into the per-peer byte counts.  A word
 * counts for the sender whose queue it came on, and only if it names that
 * sender, follows the last one taken and fits its ring; any other is
 * refused and counted.
 */
static void take_words(void)
{
	uint32_t w[64];
	int n;

	arrivals_taken = arrivals;
	for (int i = 0; i < nnodes; i++) {
		struct peer *p = peers[i];
		if (!p)
			continue;
		while ((n = req_dequeue_many(p->nq, w, 64, NULL)) > 0) {
			for (int k = 0; k < n; k++) {
				uint32_t len = WORD_LEN(w[k]);
				if (WORD_SRC(w[k]) != i) {
					if (proto_errors++ < 8)
						printf("mad-req: a word naming node %d on node %d's queue: refused\n",
						       WORD_SRC(w[k]), i);
					continue;
				}
				if (len == 0) {
					resync_word(i, p, w[k]);
					continue;
				}
				if (p->broken || p->reset_pending)
					continue;	/* after a gap: its bytes are not where they would be read */
				if (WORD_SEQ(w[k]) != p->rx_seq) {
					word_gap(i, p, w[k]);
					continue;
				}
				if (len > CHUNK_MAX || p->avail + len > RING - (p->rp - p->reported)) {
					complain("a word that does not fit its ring", i);
					p->broken = 1;
					continue;
				}
				p->rx_seq = (p->rx_seq + 1) & 0x7f;
				p->avail += len;
				p->announced += len;
				p->words++;
				test_break(p);
			}
		}
	}
}

static void ring_copy(struct peer *p, uint64_t at, void *dst, size_t n)
{
	uint32_t pos = RING_POS(at);
	size_t k = n < RING - pos ? n : RING - pos;

	memcpy(dst, p->ring + pos, k);
	memcpy((uint8_t *)dst + k, p->ring, n - k);
}

static void consumed(int src, struct peer *p, size_t n)
{
	p->rp += n;
	p->avail -= n;
	if (p->rp - p->reported >= REPORT) {
		uint64_t v = p->rp;
		if (rmem_write(p->seg.ctl_rd, 0, &v, sizeof v, RMEM_INTR) == 0)
			p->reported = v;
	}
	(void)src;
}

static int req_recv_header_poll(int *src, void *hdr, size_t hdr_max, size_t *hdr_len)
{
	if (rx.open)
		return -EBUSY;
	take_words();
	for (int k = 0; k < nnodes; k++) {
		int i = (rr + k) % nnodes;
		struct peer *p = peers[i];
		struct mad_wire_hdr h;
		if (!p)
			continue;
		if (p->ack_due)
			ack_send(p);
		if (p->skip && p->avail) {
			size_t n = p->skip < p->avail ? p->skip : p->avail;
			consumed(i, p, n);
			p->skip -= n;
		}
		/* The resync: whole messages before the gap are still read; a part of one is not. */
		if (p->reset_pending && (p->skip || p->avail < sizeof h)) {
			stream_reset(i, p);
			continue;
		}
		if (p->skip || p->avail < sizeof h)
			continue;
		ring_copy(p, p->rp, &h, sizeof h);
		size_t full = sizeof h + 4u * h.npacks + h.express_len;
		if (h.magic != MAD_MAGIC || h.npacks > MAD_MAX_PACKS || h.express_len > MAD_EXPRESS_MAX ||
		    full > hdr_max) {
			/* The stream is out of step: nothing in it can be trusted now. */
			complain("a stream out of step", i);
			consumed(i, p, p->avail);
			continue;
		}
		if (p->avail < full) {
			if (p->reset_pending)
				stream_reset(i, p);	/* the rest of this header never comes */
			continue;		/* the rest of the header is on its way */
		}
		ring_copy(p, p->rp, hdr, full);
		consumed(i, p, full);
		if (mad_hdr_check(hdr, full) < 0) {
			/* Framed but not consistent: skip its body, stay in step. */
			complain("a malformed header", i);
			p->skip = h.body_len;
			continue;
		}
		rr = (i + 1) % nnodes;
		return rxbody_taken(&rx, i, h.body_len, full, src, hdr_len);
	}
	return 0;
}

/* Copy whatever of the posted part has arrived. */
static void pull(void)
{
	struct peer *p = peers[rx.src];

	take_words();
	while (rx.part_left && p->avail) {
		uint8_t *dst = NULL;
		size_t n = iovcur_peek(&rx.cur, &dst, rx.part_left < p->avail ? rx.part_left : p->avail);
		if (n == 0)
			break;
		uint32_t pos = RING_POS(p->rp);
		if (n > RING - pos)
			n = RING - pos;
		memcpy(dst, p->ring + pos, n);
		consumed(rx.src, p, n);
		rxbody_took(&rx, n);
	}
	rxbody_settle(&rx);
	if (rx.part_left && p->reset_pending && !p->avail) {
		/* The rest of this message was refused here: it fails, and the stream starts again. */
		rxbody_fail(&rx, -ECONNRESET);
		stream_reset(rx.src, p);
	}
}

MAD_STREAM_BODY(req, rx, pull)

/* Everything this driver waits for is announced by a word on one of its queues. */
static int words_came(void)
{
	return arrivals != arrivals_taken;
}

static void req_wait_drv(uint64_t timeout_ns)
{
	mad_rxwait_sleep(&rxw, words_came, timeout_ns);
}

static void req_kick(void)
{
	mad_rxwait_abort(&rxw);
}

MAD_DRIVER_DEFINE(req, .init = req_init_drv, .exit = req_exit_drv, .send_wait = req_send_wait, .wait = req_wait_drv, .kick = req_kick);
