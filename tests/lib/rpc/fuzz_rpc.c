/*
 * libFuzzer target: the RPC server's receive side (lib/rpc_server.c) as
 * the kernel runs it: WRITEs into its argument stacks handed to the
 * kernel's rmem_receive as any of three client nodes' (the stacks'
 * notifications are the receive path), and the stack threads' steps
 * (rpc_stack_step), over the fake fabric of tests/host/host_fabric.c.
 *
 * This process is node 0, the server, with two stacks shared by every
 * binding; nodes 1..3 are clients, each with a reply segment of its own
 * (exported here, writable by that node only: frames the server sends to
 * node k come back to this node's receive code as node k's, so its
 * replies land there).
 *
 * Input: a series of operations, each one byte (bits 0-2 what, bits 3-4
 * which client, bit 6 which stack, bit 7: no step after it) and operands:
 *   0 bind (flags: unreliable, a wrong node field, another node's reply
 *     segment, no owner word first), 1 unbind (flags: the wrong secret,
 *     any binding),
 *   2 a call (the call number: the binding's next, its last, or any; any
 *     binding; no claim first; the length; flags: raw frames, a CRC, a
 *     wrong CRC, a wrong frame count, any procedure, a frame left out, the
 *     header frame first, the wrong secret),
 *   3, 7 a step of a stack's thread (bit 3: a timeout),
 *   4 a WRITE of any bytes anywhere (offset, length, data, raw),
 *   5 a claim of the stack (its compare-and-swap), 6 its release.
 * Bind and unbind claim the stack first unless their flags' bit 3 says not.
 *
 * Checked, __builtin_trap() on a broken promise:
 *  - the procedure runs only on a header carrying a live binding and its
 *    secret, written by that binding's node, and on every argument frame
 *    of the call, on a stack whose owner word is that node's claim named
 *    in the header; only a stack's claimer writes it (which the model's
 *    writer check relies on: no other node can patch a header);
 *  - at most once: a binding's call number runs once, whichever stack it
 *    comes to;
 *  - the procedure sees exactly the header's length of arguments, inside
 *    its stack; nothing is written outside the stacks or a reply segment
 *    (AddressSanitizer, all are allocated to size);
 *  - every reply lands in the segment of the node it is for, and a result
 *    answers a call that ran with what it returned.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/init.h"
#include "lib/rpc.h"
#include "lib/rpc_wire.h"
#include "net/rmem/internal.h"
#include "net/rmem/proto.h"
#include "net/rmem/rmem.h"
#include "tests/host/input.h"
#include "tests/host/host_fabric.h"
#include "tests/host/quiet.h"

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "fuzz_rpc: line %d: %s\n", __LINE__, #c); __builtin_trap(); } } while (0)
#define SELF 0
#define NODES 4
#define STACKS 2
#define TAG_MINE 0x7e000000u
#define SEQS 65536			/* call numbers the model remembers (larger ones: any) */

static struct rpc_server srv;
static uint8_t *reply_seg[NODES];
static int seg[STACKS] = { -1, -1 };
static uint8_t *stack[STACKS];

/* The model: the live bindings, who last wrote each header, each client's binding and next number. */
static struct {
	int live;
	int node;
	uint64_t secret;
	uint8_t ran[SEQS / 8];
} mb[RPC_MAX_BINDINGS];
static int hdr_writer[STACKS];
static int node_bind[NODES];		/* the binding each client made last, -1 none */
static uint32_t next_seq[NODES];
static uint32_t tag_no;
static int verdict;			/* of the last WRITE: RMS_*, or -1 for none */
static uint32_t verdict_tag;
static int ran_now, ran_node;
static int stepping = -1;		/* the stack whose thread is stepping, -1 none */
static int rseg[NODES];			/* the reply segments' numbers */
static uint32_t last_run_seq;
static uint64_t last_run_result;

static int proc(const void *argp, size_t len, uint64_t *result)
{
	struct call_hdr h;
	const uint8_t *args = argp;
	uint64_t sum = 0;
	int k = -1;

	for (int i = 0; i < STACKS; i++)
		if (args == stack[i] + ARGS_OFF)
			k = i;
	CHECK(k >= 0);
	memcpy(&h, stack[k] + HDR_OFF, sizeof h);
	/* A live binding, its secret, written by its node. */
	CHECK(h.bind < RPC_MAX_BINDINGS && mb[h.bind].live && mb[h.bind].secret == h.secret);
	CHECK(hdr_writer[k] == mb[h.bind].node);
	/* On a stack its caller's claim holds. */
	uint64_t owner;
	memcpy(&owner, stack[k] + CTL_OFF, 8);
	CHECK(owner == ((uint64_t)(mb[h.bind].node + 1) << 32 | h.claim));
	/* Never a number twice. */
	if (h.seq < SEQS) {
		CHECK(!(mb[h.bind].ran[h.seq / 8] >> (h.seq % 8) & 1));
		mb[h.bind].ran[h.seq / 8] |= (uint8_t)(1 << (h.seq % 8));
	}
	CHECK(len == h.len && len <= RPC_ARGS_MAX);
	for (size_t i = 0; i < len; i++)
		sum += args[i] * (i + 1);
	*result = sum;
	last_run_seq = h.seq;
	last_run_result = sum;
	ran_now = 1;
	ran_node = mb[h.bind].node;
#ifdef FZ_DEBUG
	fprintf(stderr, "run seq %u len %zu binding %u\n", h.seq, len, h.bind);
#endif
	return (int)(h.proc & 7);
}

/* A reply the server wrote into node n's slot sl, as it landed. */
static void reply_seen(int n, int sl, const struct rpc_reply *rp)
{
	struct rpc_reply r;

	memcpy(&r, rp, sizeof r);
#ifdef FZ_DEBUG
	fprintf(stderr, "step %d: node %d slot %d: kind %u status %d seq %u result %lu\n", stepping, n, sl, r.kind,
		r.status, r.seq, (unsigned long)r.result);
#endif
	/* Only a stack's thread answers, and on its own stack's slot. */
	CHECK(stepping >= 0 && sl == stepping);
	CHECK(r.kind >= R_BOUND && r.kind <= R_MASK);
	if (r.kind == R_RESULT && ran_now) {
		CHECK(n == ran_node);
		CHECK(r.seq == last_run_seq && r.result == last_run_result);
	}
	if (r.kind == R_BOUND && r.status == 0) {
		CHECK(r.result < RPC_MAX_BINDINGS && !mb[r.result].live);
		mb[r.result].live = 1;
		mb[r.result].node = n;
		mb[r.result].secret = r.mask;
		memset(mb[r.result].ran, 0, sizeof mb[r.result].ran);
		node_bind[n] = (int)r.result;
		next_seq[n] = 1;
	}
	if (r.kind == R_UNBOUND && r.status == 0) {
		/* The request the stepping thread read, still in its stack: it named the binding. */
		struct rpc_ctl c;
		memcpy(&c, stack[stepping] + CTL_OFF, sizeof c);
		CHECK(c.bind < RPC_MAX_BINDINGS && mb[c.bind].live && mb[c.bind].node == n &&
		      mb[c.bind].secret == c.secret);
		mb[c.bind].live = 0;
		if (node_bind[n] == (int)c.bind)
			node_bind[n] = -1;
	}
}

/* Frames go to their node's receive code here, as that node's; our own WRITEs' verdicts are noted. */
static void pump(void)
{
	struct host_frame f;

	while (host_frame_take(&f) == 0) {
		struct rmem_msg m;
		CHECK(f.dst > 0 && f.dst < NODES);
		if (f.proto == RMEM_PROTO && f.len >= sizeof m) {
			memcpy(&m, f.data, sizeof m);
			if (m.op == RM_STATUS && (m.tag & 0xff000000u) == TAG_MINE) {
				if (m.tag == verdict_tag)
					verdict = m.status;
				continue;
			}
		}
		fabric_handler_t h = host_handler(f.proto, f.raw);
		if (h)
			h(f.dst, f.data, f.len, NULL);
		/* A reply WRITE into node f.dst's reply segment: landed now, if it was let in. */
		if (f.proto == RMEM_PROTO && f.len >= sizeof m + sizeof(struct rpc_reply)) {
			memcpy(&m, f.data, sizeof m);
			if (m.op == RM_WRITE && m.seg == rseg[f.dst] && m.count == sizeof(struct rpc_reply) &&
			    m.off % REPLY_SLOT == 0 && m.off < REPLY_SEG &&
			    memcmp(reply_seg[f.dst] + m.off, f.data + sizeof m, sizeof(struct rpc_reply)) == 0)
				reply_seen(f.dst, (int)(m.off / REPLY_SLOT), (const struct rpc_reply *)(f.data + sizeof m));
		}
	}
}

/* A WRITE from node src into stack k (RMEM_INTR, acknowledged); its verdict. */
static int stack_write(int k, int src, uint32_t off, const void *data, uint32_t len, int raw)
{
	static uint8_t b[RMEM_HDR_LEN + RMEM_MAX_XFER];
	struct rmem_msg m = { 0 };
	uint32_t gen = 0;

	if (len > RMEM_MAX_XFER)
		len = RMEM_MAX_XFER;
	(void)seg_ticket(seg[k], src, &gen);	/* the strongest writer knows the generation */
	m.op = RM_WRITE;
	m.flags = RM_F_INTR | RM_F_ACK | (raw ? RM_F_RAW : 0);
	m.seg = (uint16_t)seg[k];
	m.gen = gen;
	m.off = off;
	m.count = len;
	m.tag = verdict_tag = TAG_MINE | (++tag_no & 0xffffff);
	memcpy(b, &m, sizeof m);
	memcpy(b + sizeof m, data, len);
	verdict = -1;
	(void)rmem_receive(src, b, sizeof m + len, raw);
	pump();
#ifdef FZ_DEBUG
	fprintf(stderr, "write to %d from %d off %u len %u raw %d: verdict %d\n", k, src, off, len, raw, verdict);
#endif
	if (verdict == RMS_OK && off < ARGS_OFF && off + len > HDR_OFF)
		hdr_writer[k] = src;
	return verdict;
}

/* Node src's claim of stack k: a compare-and-swap of the owner word from 0 to its token (RMEM_INTR). */
static void stack_claim(int k, int src)
{
	static uint8_t b[RMEM_HDR_LEN + 16];
	struct rmem_msg m = { 0 };
	uint64_t cmp[2] = { 0, (uint64_t)(src + 1) << 32 | 0x99 };
	uint32_t gen = 0;

	(void)seg_ticket(seg[k], src, &gen);
	m.op = RM_CAS;
	m.flags = RM_F_INTR;
	m.seg = (uint16_t)seg[k];
	m.gen = gen;
	m.count = 8;
	m.tag = TAG_MINE | (++tag_no & 0xffffff);
	memcpy(b, &m, sizeof m);
	memcpy(b + sizeof m, cmp, 16);
	(void)rmem_receive(src, b, sizeof b, 0);
	pump();
}

static void stack_release(int k, int src)
{
	static const uint64_t zero;

	stack_write(k, src, CTL_OFF, &zero, 8, 0);
}

static void step(int k, int timed_out)
{
	ran_now = 0;
	stepping = k;
	CHECK(rpc_stack_step(&srv, k, timed_out) == 0);
	pump();
	stepping = -1;
}

/* --- the input ------------------------------------------------------------------ */

/* in, in_left and take(): tests/host/input.h */

static void op_bind(int k, int src, unsigned fl)
{
	struct rpc_ctl c = { 0 };

	if (!(fl & 8))
		stack_claim(k, src);
	c.op = CTL_BIND;
	c.node = (uint32_t)((fl & 2) ? src % 3 + 1 : src);
	snprintf(c.reply, sizeof c.reply, "rpc-r%d", (fl & 4) ? src % 3 + 1 : src);
	c.flags = (fl & 1) ? RPC_UNRELIABLE : 0;
	stack_write(k, src, REQ_OFF, (uint8_t *)&c + REQ_OFF, CTL_LEN, 0);
}

static void op_unbind(int k, int src, unsigned fl)
{
	struct rpc_ctl c = { 0 };
	int id = (fl & 2) ? (int)(take(1) % RPC_MAX_BINDINGS) : node_bind[src];

	if (!(fl & 8))
		stack_claim(k, src);
	c.op = CTL_UNBIND;
	c.node = (uint32_t)src;
	c.bind = id < 0 ? 0 : (uint32_t)id;
	c.secret = id < 0 ? 0 : mb[id].secret ^ (fl & 1);
	stack_write(k, src, REQ_OFF, (uint8_t *)&c + REQ_OFF, CTL_LEN, 0);
}

static void op_call(int k, int src)
{
	static uint8_t frame[sizeof(struct call_hdr) + RPC_ARGS_MAX];
	unsigned mode = take(1), len = take(2) % (RPC_ARGS_MAX + 1), fl = take(1), drop = take(1);
	struct call_hdr h = { 0 };
	uint8_t *args = frame + sizeof h;
	int raw = fl & 1;
	int id = (mode & 4) ? (int)(take(1) % RPC_MAX_BINDINGS) : node_bind[src];

	h.seq = mode % 3 == 0 ? next_seq[src] : mode % 3 == 1 ? next_seq[src] - 1 : take(4);
	if (mode % 3 == 0)
		next_seq[src]++;
	h.bind = id < 0 ? 0 : (uint32_t)id;
	/* The right secret only for the client's own binding. */
	h.secret = id >= 0 && id == node_bind[src] && !(fl & 128) ? (uint32_t)mb[id].secret : 0x5eedu + mode;
	h.claim = (mode & 16) ? take(4) : 0x99;	/* stack_claim's nonce, or any */
	h.proc = (fl & 16) ? take(1) : 1;
	h.len = len;
	h.nframes = (uint16_t)((fl & 8) ? take(2) : frames_for(len));
	h.flags = (fl & 2) ? HF_CRC : 0;
	for (unsigned i = 0; i < len; i++)
		args[i] = (uint8_t)(i * 3 + h.seq);
	if (fl & 2)
		h.crc = call_crc(&h, args) ^ ((fl & 4) ? 1 : 0);
	if (!(mode & 8))
		stack_claim(k, src);
	memcpy(frame, &h, sizeof h);
	unsigned n = frames_for(len);
	uint32_t first = len < RPC_FIRST ? len : (uint32_t)RPC_FIRST;
	if (fl & 64)
		stack_write(k, src, HDR_OFF, frame, (uint32_t)sizeof h + first, raw);
	for (unsigned i = 1; i < n; i++) {
		uint32_t at = (uint32_t)RPC_FIRST + (i - 1) * RPC_FRAME, cnt = len - at < RPC_FRAME ? len - at : RPC_FRAME;
		if ((fl & 32) && drop % n == i)
			continue;
		stack_write(k, src, ARGS_OFF + at, args + at, cnt, raw);
	}
	if (!(fl & 64) && !((fl & 32) && drop % n == 0))
		stack_write(k, src, HDR_OFF, frame, (uint32_t)sizeof h + first, raw);
}

static void op_write(int k, int src, int raw)
{
	static uint8_t data[RMEM_MAX_XFER];
	uint32_t off = take(2) % (RPC_STACK_SIZE + 64), len = take(2) % (RMEM_MAX_XFER + 1);

	for (uint32_t i = 0; i < len; i++)
		data[i] = (uint8_t)take(1);
	stack_write(k, src, off, data, len, raw);
}

/* --- the target ------------------------------------------------------------------- */

static void reset(void)
{
	if (srv.stacks) {
		for (int k = 0; k < STACKS; k++)
			free(rmem_segtab.slot[seg[k]].base);
		free(srv.stacks);
		free(srv.bound);
		srv.stacks = NULL;
	}
	for (int rd = 0; rd < RMEM_MAX_DESC; rd++)
		rmem_release(rd);
	host_fabric_reset(SELF, NODES);
	host_threads = 1;
	host_pump = pump;
	segtab_init(&rmem_segtab, SELF);
	memset(rmem_notes, 0, sizeof rmem_notes);
	memset(&rmem_ctr, 0, sizeof rmem_ctr);
	rmem_ready = 1;
	for (int n = 1; n < NODES; n++) {
		char name[16];
		snprintf(name, sizeof name, "rpc-r%d", n);
		memset(reply_seg[n], 0, REPLY_SEG);
		rseg[n] = seg_export_for(name, reply_seg[n], REPLY_SEG, n, RMEM_W);
		CHECK(rseg[n] >= 0);
	}
	CHECK(rpc_server_init(&srv, "svc") == 0);
	CHECK(rpc_register(&srv, 1, proc) == 0);
	CHECK(rpc_register(&srv, 9, proc) == 0);	/* any other procedure: -ENOSYS */
	CHECK(rpc_serve(&srv, STACKS) == 0);
	for (int k = 0; k < STACKS; k++) {
		char name[16];
		snprintf(name, sizeof name, "rpc.svc.%d", k);
		seg[k] = segtab_find(&rmem_segtab, name);
		CHECK(seg[k] >= 0);
		stack[k] = rmem_segtab.slot[seg[k]].base;
		hdr_writer[k] = -1;
	}
	memset(mb, 0, sizeof mb);
	for (int n = 0; n < NODES; n++) {
		node_bind[n] = -1;
		next_seq[n] = 1;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int once;

	if (!once) {
		once = 1;
		host_fabric_reset(SELF, NODES);
		CHECK(host_run_init_hooks(INIT_SUBSYS_4) == 0);
		for (int n = 1; n < NODES; n++)
			reply_seg[n] = malloc(REPLY_SEG);
	}
	reset();
	in = data;
	in_left = size;
	for (int n = 0; in_left && n < 64; n++) {
		unsigned op = take(1);
		int src = 1 + (int)((op >> 3) & 3) % 3, k = (op >> 6) & 1;
		switch (op & 7) {
		case 0:
			op_bind(k, src, take(1));
			break;
		case 1:
			op_unbind(k, src, take(1));
			break;
		case 2:
			op_call(k, src);
			break;
		case 4:
			op_write(k, src, (op >> 5) & 1);
			break;
		case 5:
			stack_claim(k, src);
			break;
		case 6:
			stack_release(k, src);
			break;
		default:
			step(k, (op >> 3) & 1);
			continue;
		}
		if (!(op & 0x80))
			step(k, 0);
	}
	return 0;
}
