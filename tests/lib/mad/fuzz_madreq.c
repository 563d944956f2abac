/*
 * libFuzzer target: the byte stream of Madeleine's req driver
 * (lib/mad_req.c, built here whole, under lib/mad.c): words announcing
 * bytes on a notification queue per peer, the bytes in a ring the peer
 * writes, the Madeleine header at the stream's front, credit, from two
 * peers at once, one of which may turn hostile.
 *
 * This process is node 0 of three.  Remote memory and queues are looped
 * back: what the driver writes into node k's ring and enqueues on node k's
 * queue (through the real req_send_post) lands in the ring and the queue
 * where node 0 receives from node k, and the read pointer node 0 returns
 * to k is the one its sends to k see.  So the real sender feeds the real
 * receiver.  A hostile node writes any bytes into its ring and enqueues
 * any words (naming any node, of any length) on its queue.
 *
 * Input: operations, each one byte (bits 0-1, bit 2: which node) and
 * operands:
 *   0 node k sends a message: up to 4 packs, each a mode and a length;
 *   1 node k writes: offset (16 bits), length (8 bits), bytes, then a
 *     word (32 bits) it enqueues;
 *   2, 3 node 0 receives one message.
 * At the end node 0 receives until nothing is left.
 *
 * An input of even length runs with long frames (rmem_max_xfer 7 KiB),
 * one of odd length with Ethernet's.
 *
 * Checked, __builtin_trap() on a broken promise:
 *  - every message of a node that never wrote by hand arrives, whole, in
 *    order, pack for pack, whatever the other node wrote or enqueued;
 *  - nothing is read or written outside the rings or the messages'
 *    buffers (AddressSanitizer), nothing waits for ever (the waits are
 *    counted), and a receive from a hostile node ends in a message, a
 *    refusal or -EHOSTDOWN.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Rings of the least size, which the inputs' messages wrap (the driver's own budget: ring_check). */
#define RING_BUDGET RING_MIN
#include "lib/mad_req.c"
#include "tests/host/input.h"
#include "tests/host/quiet.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)
#define NODES 3
#define MAXQ 64
#define WAITS_MAX 100000
#define QWORDS 1024			/* a queue's words */

/* --- what the driver and lib/mad.c need from the kernel ------------------------------ */

#include "tests/lib/mad/mad_stream_host.h"	/* waits, hostile[], fabric_peer_dead(), stream_run() */

int node_id = 0, num_nodes = NODES;

int mutex_trylock(struct mutex *m) { m->depth++; return 0; }
struct thread *curthread;
void thread_sleep_ns(uint64_t ns) { (void)ns; }
/* No link to poll: nothing is taken between the copies. */
int net_busy_begin(void) { return 0; }
void net_busy_look_now(void) {}
void net_busy_stop(void) {}

/* --- remote memory and queues, looped back ------------------------------------------- */

/* Segments: "mad.q.<k>" (node 0's ring from k) and "mad.p.<k>" (k's read pointer word). */
static struct {
	uint8_t *base;
	size_t size;
	int node;
	char name[16];
	seg_notify_fn fn;
	void *arg;
} segs[2 * NODES];
static int nsegs;

int seg_export_for(const char *name, void *base, size_t size, int node, int rights)
{
	(void)rights;
	CHECK(nsegs < 2 * NODES);
	segs[nsegs].base = base;
	segs[nsegs].size = size;
	segs[nsegs].node = node;
	snprintf(segs[nsegs].name, sizeof segs[nsegs].name, "%s", name);
	segs[nsegs].fn = NULL;
	return nsegs++;
}
int seg_unexport(int seg)
{
	(void)seg;
	return 0;
}
int seg_notify(int seg, int on, seg_notify_fn fn, void *arg)
{
	(void)on;
	segs[seg].fn = fn;
	segs[seg].arg = arg;
	return 0;
}

/*
 * Node 0 imports k's "mad.q.0" (its ring for node 0's bytes): looped back,
 * that is node 0's own "mad.q.<k>", where it receives from k.
 */
static int loop_seg(int node, const char *name)
{
	char want[16];

	snprintf(want, sizeof want, "%.6s%d", name, node);
	for (int s = 0; s < nsegs; s++)
		if (strcmp(segs[s].name, want) == 0 && segs[s].node == node)
			return s;
	return -ENOENT;
}
int rmem_import_wait(int node, const char *name, uint64_t timeout_ns)
{
	(void)timeout_ns;
	return loop_seg(node, name);
}
int rmem_release(int rd)
{
	(void)rd;
	return 0;
}

/* A pair's frames: Ethernet's, or long ones (7 KiB with 7872-byte frames), by the input's length. */
static uint32_t max_xfer = RMEM_MAX_XFER;

uint32_t rmem_max_xfer(int rd)
{
	(void)rd;
	return max_xfer;
}

int rmem_write(int rd, uint32_t off, const void *data, uint32_t len, int flags)
{
	CHECK(len <= max_xfer);	/* one WRITE, one frame of the pair */
	(void)flags;
	CHECK(rd >= 0 && rd < nsegs);
	CHECK((size_t)off + len <= segs[rd].size);	/* the driver stays in the segment */
	memcpy(segs[rd].base + off, data, len);
	if (segs[rd].fn)
		segs[rd].fn(segs[rd].arg, rd, off, len);
	return 0;
}

static struct {
	int used;
	uint32_t w[QWORDS];
	unsigned head, tail;
	void (*fn)(void *, int, uint32_t);
	void *arg;
	int node;
} qs[NODES];

int req_create(size_t bytes)
{
	(void)bytes;
	for (int q = 0; q < NODES; q++)
		if (!qs[q].used) {
			memset(&qs[q], 0, sizeof qs[q]);
			qs[q].used = 1;
			return q;
		}
	return -ENOSPC;
}
int req_destroy(int q)
{
	qs[q].used = 0;
	return 0;
}
int req_export_for(int q, const char *name, int node)
{
	(void)name;
	qs[q].node = node;
	return 0;
}
int req_notify(int q, void (*fn)(void *arg, int qid, uint32_t word), void *arg)
{
	qs[q].fn = fn;
	qs[q].arg = arg;
	return 0;
}
/* Node k's queue for node 0's words, looped back: node 0's queue for k's. */
int req_import(int node, const char *name)
{
	(void)name;
	for (int q = 0; q < NODES; q++)
		if (qs[q].used && qs[q].node == node)
			return q;
	return -ENOENT;
}
/* A word onto queue q as it arrives (any word: a hostile node's too). */
static int push_word(int q, uint32_t word)
{
	CHECK(q >= 0 && q < NODES && qs[q].used);
	if (qs[q].tail - qs[q].head == QWORDS)
		return -EAGAIN;
	qs[q].w[qs[q].tail++ % QWORDS] = word;
	if (qs[q].fn)
		qs[q].fn(qs[q].arg, q, word);
	return 0;
}

/* Node 0's word to node k, looped back: as node k would send it, naming k. */
int req_enqueue(int q, uint32_t word, int sync)
{
	(void)sync;
	CHECK(WORD_SRC(word) == node_id);
	return push_word(q, WORD(qs[q].node, WORD_SEQ(word), WORD_LEN(word)));
}

int req_enqueue_body(int q, uint32_t word)
{
	return req_enqueue(q, word, 0);
}
int reqmsg_begin(int q)
{
	(void)q;
	return 0;
}
void reqmsg_end(int q) { (void)q; }
int fabric_can_send(int dst)
{
	(void)dst;
	return 1;
}
int seg_inhibit(int seg, int on)
{
	(void)seg, (void)on;
	return 0;
}
int req_take_error(int q)
{
	(void)q;
	return 0;
}
int rmem_take_error(int rd)
{
	(void)rd;
	return 0;
}

int req_dequeue_many(int q, uint32_t *words, int max, uint64_t *first_ticket)
{
	int n = 0;

	(void)first_ticket;
	while (n < max && qs[q].head != qs[q].tail)
		words[n++] = qs[q].w[qs[q].head++ % QWORDS];
	return n;
}

/* --- messages and the model ------------------------------------------------------------ */

struct msg {
	int n;
	int mode[4];
	uint32_t len[4];
	unsigned id;
};

static struct msg q[NODES][MAXQ];
static unsigned qh[NODES], qt[NODES], msg_ids;
static struct mad_channel *ch;

static uint8_t *bufs[4];

static int handler(int src)
{
	CHECK(src > 0 && src < NODES);
	if (hostile[src] || qh[src] == qt[src])
		return mad_recvbuf_receive_data();	/* what it is is unknown: throw it away */
	const struct msg *m = &q[src][qh[src] % MAXQ];
	for (int i = 0; i < m->n; i++) {
		bufs[i] = malloc(m->len[i] ? m->len[i] : 1);
		CHECK(bufs[i]);
		CHECK(mad_recvbuf_unpack_byte(m->mode[i], bufs[i], m->len[i]) == 0);
	}
	CHECK(mad_recvbuf_receive_data() == 0);
	for (int i = 0; i < m->n; i++) {
		for (uint32_t j = 0; j < m->len[i]; j++)
			CHECK(bufs[i][j] == pack_byte(m->id, i, j));
		free(bufs[i]);
	}
	qh[src]++;
	return 0;
}

/* Receive one message; 0 if none was there. */
static int receive_one(void)
{
	waits = 0;
	int r = mad_recvbuf_receive_on(ch, handler, 0);
	if (r == -ETIMEDOUT) {
		for (int k = 1; k < NODES; k++)
			CHECK(hostile[k] || qh[k] == qt[k]);	/* nothing of an honest node is lost */
		return 0;
	}
	CHECK(r == 0 || r == -EPROTO || r == -EHOSTDOWN);
	return 1;
}

/* --- the input ------------------------------------------------------------------------------ */

/* in, in_left and take(): tests/host/input.h */

static void op_send(int k, unsigned op)
{
	(void)op;
	struct msg m = { 0 };
	static uint8_t data[4][4096];
	struct peer *p = peers[k];

	m.id = msg_ids++;
	size_t total = stream_draw(m.id, &m.n, m.mode, m.len, data);
	/* Room for it in node k's ring and queue as far as they know (else the send would wait). */
	size_t need = total + MAD_HDR_MAX;
	if (qt[k] - qh[k] == MAXQ || hostile[k] || RING - (p->wp - *p->peer_rp) < need ||
	    QWORDS - (qs[p->rq].tail - qs[p->rq].head) < need / CHUNK + 2)
		return;
	CHECK(mad_sendbuf_init_on(ch, k) == 0);
	for (int i = 0; i < m.n; i++)
		CHECK(mad_sendbuf_pack_byte(m.mode[i], data[i], m.len[i]) == 0);
	CHECK(mad_sendbuf_send() == 0);
	q[k][qt[k]++ % MAXQ] = m;
}

static void op_write(int k)
{
	struct peer *p = peers[k];
	uint32_t off = take(2) % RING, len = take(1);

	hostile[k] = 1;
	for (uint32_t i = 0; i < len; i++)
		p->ring[(off + i) % RING] = (uint8_t)take(1);
	(void)push_word(p->nq, take(4));
}

/*
 * The ring for each cluster size, by the driver's own budget (4 MiB over
 * all peers): 1 MiB up to 5 nodes, halved until the budget holds, never
 * under 256 KiB; always a power of two.
 */
static void ring_check(void)
{
	static int done;
	const uint64_t budget = 4u << 20;

	if (done++)
		return;
	CHECK(ring_for(2, budget) == 1u << 20 && ring_for(5, budget) == 1u << 20);
	CHECK(ring_for(6, budget) == 512u << 10 && ring_for(9, budget) == 512u << 10);
	CHECK(ring_for(10, budget) == 256u << 10 && ring_for(MAX_NODES, budget) == 256u << 10);
	for (int n = 1; n <= MAX_NODES; n++) {
		uint32_t r = ring_for(n, budget);
		CHECK(r >= RING_MIN && r <= RING_MAX && (r & (r - 1)) == 0);
		CHECK(r == RING_MIN || (uint64_t)r * (uint64_t)(n > 1 ? n - 1 : 1) <= budget);
		CHECK(r == RING_MAX || (uint64_t)r * 2 * (uint64_t)(n > 1 ? n - 1 : 1) > budget);
	}
	CHECK(ring_for(NODES, RING_BUDGET) == RING_MIN);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ring_check();
	rr = 0;
	proto_errors = 0;
	nsegs = 0;
	memset(qs, 0, sizeof qs);
	ch = mad_open("req");
	CHECK(ch);
	memset(hostile, 0, sizeof hostile);
	memset(qh, 0, sizeof qh);
	memset(qt, 0, sizeof qt);
	in = data;
	in_left = size;
	max_xfer = size & 1 ? RMEM_MAX_XFER : 7 * 1024;
	stream_run();
	for (int k = 1; k < NODES; k++)
		CHECK(hostile[k] || qh[k] == qt[k]);
#ifdef FZ_DEBUG
	fprintf(stderr, "req sent %u/%u received %u/%u hostile %d/%d errors %lu\n", qt[1], qt[2], qh[1], qh[2],
		hostile[1], hostile[2], (unsigned long)proto_errors);
#endif
	mad_exit();
	return 0;
}
