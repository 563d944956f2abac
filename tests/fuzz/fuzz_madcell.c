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
 * event for them.
 *
 * Input: operations, each one byte (bits 0-1, bit 2: which node) and
 * operands:
 *   0 node k sends a message: up to 4 packs, each a mode and a length;
 *   1 node k writes: offset (16 bits, within the endpoint), length (8
 *     bits), bytes, and raises an event at an offset with a length;
 *   2, 3 node 0 receives one message.
 * At the end node 0 receives until nothing is left.
 *
 * Checked, __builtin_trap() on a broken promise:
 *  - every message of a node that never wrote by hand arrives, whole, in
 *    order, pack for pack, whatever the other node wrote;
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
#include "tests/fuzz/input.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)
#define NODES 3
#define MAXQ 64
#define WAITS_MAX 100000

/* --- what the driver and lib/mad.c need from the kernel ------------------------------ */

int node_id = 0, num_nodes = NODES;
const char *const dart_exc_names[DEX_N];
static unsigned waits;

void mutex_init(struct mutex *m, int recursive)
{
	memset(m, 0, sizeof *m);
	m->recursive = recursive;
}
void mutex_lock(struct mutex *m) { m->depth++; }
void mutex_unlock(struct mutex *m) { m->depth--; }
void thread_yield(void) {}
uint64_t cycles_to_ns(uint64_t c) { return c; }
uint64_t ns_to_cycles(uint64_t ns) { return ns; }
int waitq_wait_timeout(struct waitq *wq, uint64_t ns)
{
	(void)wq, (void)ns;
	CHECK(++waits < WAITS_MAX);		/* single-threaded: a wait that loops never ends */
	return 0;
}
int waitq_wake_all(struct waitq *wq)
{
	(void)wq;
	return 0;
}
int net_poll_wait(volatile int *flag) { return *flag; }
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

static int hostile[NODES];

/* What a node that wrote by hand did not send will never come: it counts as gone. */
int fabric_peer_dead(int dst)
{
	return dst > 0 && dst < NODES && hostile[dst];
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
int dep_on_exception(int vci, dep_exc_fn fn, void *arg)
{
	(void)vci, (void)fn, (void)arg;
	return 0;
}

static void raise_event(int k, uint32_t effaddr, uint32_t len)
{
	struct dart_event ev = { (uint16_t)(VCI_BASE + k), 0, effaddr, effaddr, len };

	intr_fn[k](intr_arg[k], &ev);
}

/* A block write of size*16 bytes from the endpoint's src to the peer's operand, interrupting. */
int dep_go(struct dart_sendregs *sr, uint32_t value)
{
	int k = (int)(sr - sregs);
	struct peer *p = peers[k];
	uint32_t len = sr->size * 16, dst = sr->operand;

	CHECK(k > 0 && k < NODES && p);
	CHECK(value + len <= EP_SIZE && dst + len <= EP_SIZE);	/* the driver stays in its endpoint */
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
};

static struct msg q[NODES][MAXQ];
static unsigned qh[NODES], qt[NODES], msg_ids;
static struct mad_channel *ch;

static uint8_t pack_byte(unsigned id, int i, uint32_t j)
{
	return (uint8_t)(id * 11 + (unsigned)i * 5 + j + (j >> 8));
}

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

/* in, in_left and take(): tests/fuzz/input.h */

static void op_send(int k)
{
	static const int modes[] = { MAD_SND_CHEAPER | MAD_RECV_CHEAPER, MAD_SND_SAFER | MAD_RECV_EXPRESS,
				     MAD_SND_LATER | MAD_RECV_CHEAPER, MAD_SND_CHEAPER | MAD_RECV_EXPRESS };
	struct msg m = { 0 };
	static uint8_t data[4][4096];
	size_t total = 0;
	struct peer *p = peers[k];

	m.n = 1 + (int)take(1) % 4;
	m.id = msg_ids++;
	for (int i = 0; i < m.n; i++) {
		unsigned v = take(2);
		m.mode[i] = modes[v & 3];
		m.len[i] = (v >> 2) % 4097;
		total += m.len[i];
		for (uint32_t j = 0; j < m.len[i]; j++)
			data[i][j] = pack_byte(m.id, i, j);
	}
	/* Room for it in node k's buffer as far as the credit goes (else the send would wait). */
	uint64_t credit;
	memcpy(&credit, p->mem + CTL_IN, sizeof credit);
	size_t pos0 = p->wp % RING, pad = RING - pos0 < CHUNK_HDR + MAD_HDR_MAX + 32 ? RING - pos0 : 0;
	size_t need = total + MAD_HDR_MAX + 32 * (total / (CHUNK - 32) + 4) + pad;
	if (qt[k] - qh[k] == MAXQ || hostile[k] || RING - (p->wp - credit) < need)
		return;
	CHECK(mad_sendbuf_init_on(ch, k) == 0);
	for (int i = 0; i < m.n; i++)
		CHECK(mad_sendbuf_pack_byte(m.mode[i], data[i], m.len[i]) == 0);
	CHECK(mad_sendbuf_send() == 0);
	q[k][qt[k]++ % MAXQ] = m;
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
	in = data;
	in_left = size;
	for (int n = 0; in_left && n < 128; n++) {
		unsigned op = take(1);
		int k = 1 + (int)((op >> 2) & 1);
		switch (op & 3) {
		case 0:
			op_send(k);
			break;
		case 1:
			op_write(k);
			break;
		default:
			receive_one();
			break;
		}
	}
	for (int n = 0; n < 4 * MAXQ + 16 && receive_one(); n++)
		;
	for (int k = 1; k < NODES; k++)
		CHECK(hostile[k] || qh[k] == qt[k]);
#ifdef FZ_DEBUG
	fprintf(stderr, "sent %u/%u received %u/%u hostile %d/%d errors %lu\n", qt[1], qt[2], qh[1], qh[2],
		hostile[1], hostile[2], (unsigned long)proto_errors);
#endif
	mad_exit();
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (!getenv("FUZZ_VERBOSE"))
		(void)!freopen("/dev/null", "w", stdout);
	return 0;
}
