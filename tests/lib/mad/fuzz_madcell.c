/*
 * libFuzzer target: the chunk stream of Madeleine's cell driver
 * (lib/mad_cell.c, built here whole, under lib/mad.c): chunk headers,
 * padding, the Madeleine header inside the first chunk, credit, from two
 * peers at once, one of which may turn hostile.
 *
 * This process is node 0 of three.  Deposits are looped back: what the
 * driver sends to node k (its chunks, through the real cell_send_post)
 * lands in the buffer where node 0 receives from node k, with the DART
 * event a block write raises, and the credit node 0 returns to k is the
 * credit its sends to k see.  So the real sender feeds the real receiver.
 * A hostile node writes any bytes anywhere in its endpoint and raises any
 * event for them.  A send may break: one of its deposits raises an
 * exception instead of landing (the handler the driver registered is
 * called at once, as the kernel's exception thread would call it, with
 * the connection blocked until it is re-enabled): its control cell, or an
 * AAL5 cell of its block after some of the block landed.
 *
 * Input: operations, each one byte (bits 0-1, bit 2: which node, bit 3:
 * a send breaks) and operands:
 *   0 node k sends a message: if it breaks, which of its deposits (2
 *     bits), control or AAL5 cell (1 bit), how many AAL5 cells land first
 *     (13 bits); then up to 4 packs, each a mode and a length;
 *   1 node k writes: offset (16 bits, within the endpoint), length (8
 *     bits), bytes, and raises an event at an offset with a length;
 *   2, 3 node 0 receives one message.
 * At the end node 0 receives until nothing is left, then sends to each
 * node until every loss was reported, and once more, and receives that.
 *
 * Checked, __builtin_trap() on a broken promise:
 *  - every message of a node that never wrote by hand arrives, whole, in
 *    order, pack for pack, whatever the other node wrote, but those a
 *    break hit: one whose first chunk was lost never comes; one that lost
 *    a later chunk comes and its receive fails (-EIO), at its unpacks or
 *    receive_data; a lost padding cell loses nothing;
 *  - the sender is told of each lost message once: a later send to that
 *    node returns -EIO and deposits no chunk; every other send returns 0;
 *  - the handler re-enables the connection (skipping the cell) every time;
 *  - nothing is read or written outside the endpoints or the messages'
 *    buffers (AddressSanitizer), nothing waits for ever (the waits are
 *    counted), and a receive from a hostile node ends in a message, a
 *    refusal or -EHOSTDOWN.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/mad_cell.c"
#include "net/call/barrier.h"
#include "tests/host/input.h"
#include "tests/host/quiet.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)
#define NODES 3
#define MAXQ 64
#define WAITS_MAX 100000

/* --- what the driver and lib/mad.c need from the kernel ------------------------------ */

#include "tests/lib/mad/mad_stream_host.h"	/* waits, hostile[], fabric_peer_dead(), stream_run() */

/* No link to poll: nothing is taken between a long message's chunks. */
int net_busy_begin(void) { return 0; }
void net_busy_look_now(void) {}
void net_busy_stop(void) {}

int node_id = 0, num_nodes = NODES;
const char *const dart_exc_names[DEX_N];

/* lib/mad_stream.c's segment pairs, which the cell driver does not use. */
int seg_export_for(const char *name, void *base, size_t size, int node, int rights)
{
	(void)name, (void)base, (void)size, (void)node, (void)rights;
	abort();
}
int seg_unexport(int seg) { (void)seg; abort(); }
int rmem_import_wait(int node, const char *name, uint64_t timeout_ns)
{
	(void)node, (void)name, (void)timeout_ns;
	abort();
}
int rmem_release(int rd) { (void)rd; abort(); }
int cluster_barrier(uint64_t timeout_ns)
{
	(void)timeout_ns;
	return 0;
}

/* --- the deposit layer, looped back -------------------------------------------------- */

static struct dart_sendregs sregs[NODES];
static dep_intr_fn intr_fn[NODES];
static void *intr_arg[NODES];

int dep_endpoint_create(void *base, size_t size, int prot)
{
	(void)base, (void)size, (void)prot;
	return 1;
}
int dep_endpoint_destroy(int ep)
{
	(void)ep;
	return 0;
}
int dep_conn_open(int vci, const struct dep_conn_cfg *cfg)
{
	CHECK(vci == VCI_BASE + cfg->peer);
	return 0;
}
int dep_conn_close(int vci)
{
	(void)vci;
	return 0;
}
struct dart_sendregs *dep_sendregs(int vci)
{
	return &sregs[vci - VCI_BASE];
}
int dep_on_intr(int vci, dep_intr_fn fn, void *arg)
{
	intr_fn[vci - VCI_BASE] = fn;
	intr_arg[vci - VCI_BASE] = arg;
	return 0;
}
static dep_exc_fn exc_fn[NODES];
static void *exc_arg[NODES];
static unsigned resumed;

int dep_on_exception(int vci, dep_exc_fn fn, void *arg)
{
	exc_fn[vci - VCI_BASE] = fn;
	exc_arg[vci - VCI_BASE] = arg;
	return 0;
}
int dep_conn_resume(int vci, int how)
{
	CHECK(vci > VCI_BASE && vci < VCI_BASE + NODES && how == DART_SKIP);
	resumed++;
	return 0;
}

static void raise_event(int k, uint32_t effaddr, uint32_t len)
{
	struct dart_event ev = { (uint16_t)(VCI_BASE + k), 0, effaddr, effaddr, len };

	intr_fn[k](intr_arg[k], &ev);
}

/* The break of the send under way (op_send), and what it did. */
enum { BRK_NONE, BRK_PAD, BRK_BODY, BRK_WHOLE };
static struct {
	int on, k;
	unsigned dep;			/* the deposit (into the buffer) that faults, from 0 */
	int aal5;			/* an AAL5 cell of its block faults, after cells of it landed */
	unsigned cells;
	unsigned chunks;		/* chunks (not padding) the send deposited */
	int what;			/* BRK_*: what the fault hit */
} brk;

/* The deposit of len bytes from value to dst faults: the exception, as DART raises it (6.4). */
static void fault(int k, struct peer *p, uint32_t value, uint32_t dst, uint32_t len)
{
	struct dart_exc e = { .cls = 5, .vci = (uint16_t)(VCI_BASE + k), .detail = dst };
	uint32_t whole = len > CELL_DATA ? (len - CELL_DATA) / CELL_PAYLOAD : 0;

	if (brk.aal5 && whole) {
		/* The control cell and cells of the block landed; the next AAL5 cell faults. */
		uint32_t m = brk.cells % whole;
		memmove(p->mem + dst, p->mem + value, CELL_DATA + m * CELL_PAYLOAD);
		e.data_cell = 1;
		e.skip_block = 1;
	} else {
		struct cell *c = (struct cell *)e.cell;
		cell_put16(c->ctl + CTL_OPCODE, CELL_OP(len > CELL_DATA ? CK_BLOCK : CK_WRITE, CA_DIRECT) |
						     CELL_POS(CP_LAST) | CO_INTR);
		cell_put32(c->ctl + CTL_OPERAND, dst);
		memcpy(c->data, p->mem + value, CELL_DATA);
		e.skip_block = len > CELL_DATA;
	}
	resumed = 0;
	CHECK(exc_fn[k]);
	exc_fn[k](exc_arg[k], &e);
	CHECK(resumed == 1);		/* re-enabled, the cell skipped: nothing waits for ever */
}

/* A block write of size*16 bytes from the endpoint's src to the peer's operand, interrupting. */
int dep_go(struct dart_sendregs *sr, uint32_t value)
{
	int k = (int)(sr - sregs);
	struct peer *p = peers[k];
	uint32_t len = sr->size * 16, dst = sr->operand;

	CHECK(k > 0 && k < NODES && p);
	CHECK(value + len <= EP_SIZE && dst + len <= EP_SIZE);	/* the driver stays in its endpoint */
	if (k == brk.k && dst < RING) {
		/* A deposit of the send under way into the buffer: padding or a chunk (its header's flags). */
		int pad = p->mem[value + 3] & CH_PAD;
		if (brk.on && brk.dep-- == 0) {
			brk.what = pad ? BRK_PAD : brk.chunks ? BRK_BODY : BRK_WHOLE;
			brk.on = 0;
			fault(k, p, value, dst, len);
			return 0;
		}
		brk.chunks += !pad;
	}
	memmove(p->mem + dst, p->mem + value, len);
	raise_event(k, dst, len);
	return 0;
}

/* --- messages and the model ------------------------------------------------------------ */

struct msg {
	int n;
	int mode[4];
	uint32_t len[4];
	unsigned id;
	int broken;			/* BRK_BODY: its receive fails; BRK_WHOLE: it never comes */
};

static struct msg q[NODES][MAXQ];
static unsigned qh[NODES], qt[NODES], msg_ids;
static unsigned nbroken[NODES], ntold[NODES];	/* messages a break lost; sends that said so */
static int rx_fails, rx_hostile;	/* the handler's message: its receive is to fail; from a hostile node */
static struct mad_channel *ch;

/* Messages whose first chunk was lost never come: past them. */
static void past_lost(int k)
{
	while (qh[k] != qt[k] && q[k][qh[k] % MAXQ].broken == BRK_WHOLE)
		qh[k]++;
}

static uint8_t *bufs[4];

static int handler(int src)
{
	CHECK(src > 0 && src < NODES);
	if (hostile[src]) {
		rx_hostile = 1;
		return mad_recvbuf_receive_data();	/* what it is is unknown: throw it away */
	}
	past_lost(src);
	CHECK(qh[src] != qt[src]);		/* an honest node's message the model did not send */
	const struct msg *m = &q[src][qh[src] % MAXQ];
	int failing = m->broken == BRK_BODY, r;
	for (int i = 0; i < m->n; i++) {
		bufs[i] = malloc(m->len[i] ? m->len[i] : 1);
		CHECK(bufs[i]);
		r = mad_recvbuf_unpack_byte(m->mode[i], bufs[i], m->len[i]);
		CHECK(r == 0 || (failing && r == -EIO));
	}
	r = mad_recvbuf_receive_data();
	CHECK(failing ? r == -EIO : r == 0);
	for (int i = 0; i < m->n; i++) {
		for (uint32_t j = 0; j < m->len[i] && !failing; j++)
			CHECK(bufs[i][j] == pack_byte(m->id, i, j));
		free(bufs[i]);
	}
	rx_fails = failing;
	qh[src]++;
	return 0;
}

/* Receive one message; 0 if none was there. */
static int receive_one(void)
{
	waits = 0;
	rx_fails = rx_hostile = 0;
	int r = mad_recvbuf_receive_on(ch, handler, 0);
	if (r == -ETIMEDOUT) {
		for (int k = 1; k < NODES; k++) {
			past_lost(k);
			CHECK(hostile[k] || qh[k] == qt[k]);	/* nothing of an honest node is lost */
		}
		return 0;
	}
	if (rx_fails)
		CHECK(r == -EIO);
	else
		CHECK(r == 0 || r == -EPROTO || r == -EHOSTDOWN || (rx_hostile && r == -EIO));
	return 1;
}

/* --- the input ------------------------------------------------------------------------------ */

/* in, in_left and take(): tests/host/input.h */

/*
 * Node 0 sends m to node k, breaking it as brk says if brk.on: the send
 * returns 0 and the message goes (or breaks), or -EIO, telling of a
 * message a break lost, and no chunk went.
 */
static void send_msg(int k, struct msg *m, uint8_t data[4][4096])
{
	brk.k = k;
	brk.chunks = 0;
	brk.what = BRK_NONE;
	CHECK(mad_sendbuf_init_on(ch, k) == 0);
	for (int i = 0; i < m->n; i++)
		CHECK(mad_sendbuf_pack_byte(m->mode[i], data[i], m->len[i]) == 0);
	int r = mad_sendbuf_send();
	brk.on = 0;
	brk.k = 0;
	if (r == -EIO) {
		CHECK(ntold[k] < nbroken[k] && brk.chunks == 0 && brk.what != BRK_BODY && brk.what != BRK_WHOLE);
		ntold[k]++;
		return;
	}
	CHECK(r == 0);
	m->broken = brk.what == BRK_BODY || brk.what == BRK_WHOLE ? brk.what : BRK_NONE;
	nbroken[k] += m->broken != BRK_NONE;
	q[k][qt[k]++ % MAXQ] = *m;
}

/* Room for a message of total bytes in node k's buffer as far as the credit goes (else the send would wait). */
static int room(int k, size_t total)
{
	struct peer *p = peers[k];
	uint64_t credit;

	memcpy(&credit, p->mem + CTL_IN, sizeof credit);
	size_t pos0 = p->wp % RING, pad = RING - pos0 < CHUNK_HDR + MAD_HDR_MAX + 32 ? RING - pos0 : 0;
	size_t need = total + MAD_HDR_MAX + 32 * (total / (CHUNK - 32) + 4) + pad;
	return RING - (p->wp - credit) >= need;
}

static void op_send(int k, unsigned op)
{
	struct msg m = { 0 };
	static uint8_t data[4][4096];

	if (op & 8) {
		unsigned b = take(2);
		brk.on = 1;
		brk.dep = b & 3;
		brk.aal5 = (b >> 2) & 1;
		brk.cells = b >> 3;
	}
	m.id = msg_ids++;
	size_t total = stream_draw(m.id, &m.n, m.mode, m.len, data);
	if (qt[k] - qh[k] == MAXQ || hostile[k] || !room(k, total)) {
		brk.on = 0;
		return;
	}
	send_msg(k, &m, data);
}

/* At the end: node 0 sends to each honest node until it was told of every loss, then once more. */
static void probe(void)
{
	static uint8_t data[4][4096];
	struct msg m = { .n = 1, .mode = { MAD_SND_CHEAPER | MAD_RECV_CHEAPER }, .len = { 16 } };

	for (uint32_t j = 0; j < 16; j++)
		data[0][j] = pack_byte(msg_ids, 0, j);
	for (int k = 1; k < NODES; k++) {
		if (hostile[k])
			continue;
		unsigned sent = qt[k];
		while (qt[k] == sent) {
			CHECK(room(k, 16) && qt[k] - qh[k] < MAXQ);
			m.id = msg_ids++;
			for (uint32_t j = 0; j < 16; j++)
				data[0][j] = pack_byte(m.id, 0, j);
			send_msg(k, &m, data);
		}
		CHECK(ntold[k] == nbroken[k]);		/* each loss told once, all of them by now */
	}
}

static void op_write(int k)
{
	uint8_t *mem = peers[k]->mem;
	uint32_t off = take(2) % EP_SIZE, len = take(1);

	hostile[k] = 1;
	for (uint32_t i = 0; i < len && off + i < EP_SIZE; i++)
		mem[off + i] = (uint8_t)take(1);
	/* DART events: the deposit's offset (within the endpoint) and its length. */
	uint32_t ea = take(2) % EP_SIZE, el = take(2);
	raise_event(k, ea, el);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rr = 0;
	proto_errors = 0;
	ch = mad_open("cell");
	CHECK(ch);
	memset(hostile, 0, sizeof hostile);
	memset(qh, 0, sizeof qh);
	memset(qt, 0, sizeof qt);
	memset(nbroken, 0, sizeof nbroken);
	memset(ntold, 0, sizeof ntold);
	memset(&brk, 0, sizeof brk);
	in = data;
	in_left = size;
	stream_run();
	probe();
	stream_drain();
	for (int k = 1; k < NODES; k++) {
		past_lost(k);
		CHECK(hostile[k] || qh[k] == qt[k]);
	}
#ifdef FZ_DEBUG
	fprintf(stderr, "sent %u/%u received %u/%u hostile %d/%d errors %lu lost %u/%u told %u/%u\n", qt[1], qt[2],
		qh[1], qh[2], hostile[1], hostile[2], (unsigned long)proto_errors, nbroken[1], nbroken[2], ntold[1],
		ntold[2]);
#endif
	mad_exit();
	return 0;
}
