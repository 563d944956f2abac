/*
 * libFuzzer target: the RPC server's receive side (lib/rpc_server.c) as
 * the kernel runs it: WRITEs into an argument stack handed to the
 * kernel's rmem_receive as any of three client nodes' (the stack's
 * notifications are the receive path), and the stack thread's steps
 * (rpc_stack_step), over the fake fabric of tests/unit/host_fabric.c.
 *
 * This process is node 0, the server, with one stack; nodes 1..3 are
 * clients, each with a reply segment of its own (exported here, writable
 * by that node only: frames the server sends to node k come back to this
 * node's receive code as node k's, so its replies land there).
 *
 * Input: a series of operations, each one byte (bits 0-2 what, bits 3-4
 * which client, bit 7: no step after it) and operands:
 *   0 bind (flags: unreliable, a wrong node field, another node's reply
 *     segment, no owner word first), 1 unbind,
 *   2 a call (the call number: the client's next, its last, or any; the
 *     length; flags: raw frames, a CRC, a wrong CRC, a wrong frame count,
 *     any procedure, a frame left out, the header frame first),
 *   3, 5..7 a step of the stack's thread (bit 3: a timeout),
 *   4 a WRITE of any bytes anywhere (offset, length, data, raw).
 *
 * Checked, __builtin_trap() on a broken promise:
 *  - the procedure runs only for the stack's bound owner, on a header
 *    frame that node wrote, and on every argument frame of the call;
 *  - at most once per call number: the calls of a binding (of unknown
 *    procedures too) run numbered 1, 2, 3, ... in turn;
 *  - the procedure sees exactly the header's length of arguments, inside
 *    the stack; nothing is written outside the stack or a reply segment
 *    (AddressSanitizer, both are allocated to size);
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
#include "tests/fuzz/input.h"
#include "tests/unit/host_fabric.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)
#define SELF 0
#define NODES 4
#define TAG_MINE 0x7e000000u

static struct rpc_server srv;
static uint8_t *reply_seg[NODES];
static int seg = -1;
static uint8_t *stack;

/* The model: who last wrote the header, what each client sends next. */
static int hdr_writer = -1;
static uint64_t seen_binds, calls_at_bind, calls_before_step;
static uint32_t prev_seq;		/* the last call of this binding that ran (0: none) */
static uint32_t next_seq[NODES];
static uint32_t tag_no;
static int verdict;			/* of the last WRITE: RMS_*, or -1 for none */
static uint32_t verdict_tag;
static uint32_t last_run_seq;
static uint64_t last_run_result;
static int ran_now;

/* The only node with rights on the stack once it is bound, or -1. */
static int owner_by_rights(void)
{
	const struct segslot *s = &rmem_segtab.slot[seg];
	int owner = -1, n = 0;

	for (int k = 1; k < NODES; k++)
		if (s->rights[k]) {
			owner = k;
			n++;
		}
	return n == 1 ? owner : -1;
}

/*
 * A binding during the step that began with calls_before_step calls run:
 * the calls of the new binding are counted from there (a step binds before
 * it runs a call, and runs at most one).
 */
static void note_binds(const struct rpc_server_stats *st)
{
	if (st->binds != seen_binds) {
		seen_binds = st->binds;
		calls_at_bind = calls_before_step;
		prev_seq = 0;
	}
}

static int proc(const void *argp, size_t len, uint64_t *result)
{
	struct call_hdr h;
	struct rpc_server_stats st;
	const uint8_t *args = argp;
	uint64_t sum = 0;

	memcpy(&h, stack + HDR_OFF, sizeof h);
	rpc_server_stats(&srv, &st);
	note_binds(&st);
	int owner = owner_by_rights();
	CHECK(owner > 0 && hdr_writer == owner);
	/* In turn (calls of unknown procedures count too), and never a number twice. */
	CHECK(h.seq == st.calls - calls_at_bind + 1);
	CHECK(h.seq > prev_seq);
	prev_seq = h.seq;
	CHECK(args == stack + ARGS_OFF && len == h.len && len <= RPC_ARGS_MAX);
	for (size_t i = 0; i < len; i++)
		sum += args[i] * (i + 1);
	*result = sum;
	last_run_seq = h.seq;
	last_run_result = sum;
	ran_now = 1;
#ifdef FZ_DEBUG
	fprintf(stderr, "run seq %u len %zu owner %d\n", h.seq, len, owner);
#endif
	return (int)(h.proc & 7);
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
	}
}

/* A WRITE from node src into the stack (RMEM_INTR, acknowledged); its verdict. */
static int stack_write(int src, uint32_t off, const void *data, uint32_t len, int raw)
{
	static uint8_t b[RMEM_HDR_LEN + RMEM_MAX_XFER];
	struct rmem_msg m = { 0 };
	uint32_t gen = 0;

	if (len > RMEM_MAX_XFER)
		len = RMEM_MAX_XFER;
	(void)seg_ticket(seg, src, &gen);	/* the strongest writer knows the generation */
	m.op = RM_WRITE;
	m.flags = RM_F_INTR | RM_F_ACK | (raw ? RM_F_RAW : 0);
	m.seg = (uint16_t)seg;
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
	fprintf(stderr, "write from %d off %u len %u raw %d: verdict %d\n", src, off, len, raw, verdict);
#endif
	if (verdict == RMS_OK && off < ARGS_OFF && off + len > HDR_OFF)
		hdr_writer = src;
	return verdict;
}

static void step(int timed_out)
{
	struct reply before[NODES];

	for (int k = 1; k < NODES; k++)
		memcpy(&before[k], reply_seg[k], sizeof before[k]);
	struct rpc_server_stats st;

	ran_now = 0;
	rpc_server_stats(&srv, &st);
	calls_before_step = st.calls;
	CHECK(rpc_stack_step(&srv, 0, timed_out) == 0);
	rpc_server_stats(&srv, &st);
	note_binds(&st);
	pump();
	for (int k = 1; k < NODES; k++) {
		struct reply r;
		memcpy(&r, reply_seg[k], sizeof r);
		if (memcmp(&r, &before[k], sizeof r) == 0)
			continue;
		CHECK(r.kind >= R_BOUND && r.kind <= R_MASK);
		if (r.kind == R_RESULT && ran_now) {
			CHECK(k == owner_by_rights());
			CHECK(r.seq == last_run_seq && r.result == last_run_result);
		}
	}
}

/* --- the input ------------------------------------------------------------------ */

/* in, in_left and take(): tests/fuzz/input.h */

static void op_bind(int src, unsigned fl)
{
	struct ctl c = { 0 };

	c.owner = (uint64_t)(src + 1) << 32 | 0x99;
	if (!(fl & 8))
		stack_write(src, CTL_OFF, &c.owner, 8, 0);
	c.op = CTL_BIND;
	c.node = (uint32_t)((fl & 2) ? src % 3 + 1 : src);
	snprintf(c.reply, sizeof c.reply, "rpc-r%d", (fl & 4) ? src % 3 + 1 : src);
	c.flags = (fl & 1) ? RPC_UNRELIABLE : 0;
	stack_write(src, REQ_OFF, (uint8_t *)&c + REQ_OFF, (uint32_t)(offsetof(struct ctl, pad) - REQ_OFF), 0);
	next_seq[src] = 1;
}

static void op_unbind(int src)
{
	struct ctl c = { 0 };

	c.op = CTL_UNBIND;
	c.node = (uint32_t)src;
	stack_write(src, REQ_OFF, (uint8_t *)&c + REQ_OFF, (uint32_t)(offsetof(struct ctl, pad) - REQ_OFF), 0);
}

static void op_call(int src)
{
	static uint8_t frame[sizeof(struct call_hdr) + RPC_ARGS_MAX];
	unsigned mode = take(1), len = take(2) % (RPC_ARGS_MAX + 1), fl = take(1), drop = take(1);
	struct call_hdr h = { 0 };
	uint8_t *args = frame + sizeof h;
	int raw = fl & 1;

	h.seq = mode % 3 == 0 ? next_seq[src] : mode % 3 == 1 ? next_seq[src] - 1 : take(4);
	if (mode % 3 == 0)
		next_seq[src]++;
	h.proc = (fl & 16) ? take(1) : 1;
	h.len = len;
	h.nframes = (uint16_t)((fl & 8) ? take(2) : frames_for(len));
	h.flags = (fl & 2) ? HF_CRC : 0;
	for (unsigned i = 0; i < len; i++)
		args[i] = (uint8_t)(i * 3 + h.seq);
	if (fl & 2)
		h.crc = call_crc(&h, args) ^ ((fl & 4) ? 1 : 0);
	memcpy(frame, &h, sizeof h);
	unsigned n = frames_for(len);
	uint32_t first = len < FIRST ? len : (uint32_t)FIRST;
	if (fl & 64)
		stack_write(src, HDR_OFF, frame, (uint32_t)sizeof h + first, raw);
	for (unsigned i = 1; i < n; i++) {
		uint32_t at = (uint32_t)FIRST + (i - 1) * FRAME, k = len - at < FRAME ? len - at : FRAME;
		if ((fl & 32) && drop % n == i)
			continue;
		stack_write(src, ARGS_OFF + at, args + at, k, raw);
	}
	if (!(fl & 64) && !((fl & 32) && drop % n == 0))
		stack_write(src, HDR_OFF, frame, (uint32_t)sizeof h + first, raw);
}

static void op_write(int src, int raw)
{
	static uint8_t data[RMEM_MAX_XFER];
	uint32_t off = take(2) % (RPC_STACK_SIZE + 64), len = take(2) % (RMEM_MAX_XFER + 1);

	for (uint32_t i = 0; i < len; i++)
		data[i] = (uint8_t)take(1);
	stack_write(src, off, data, len, raw);
}

/* --- the target ------------------------------------------------------------------- */

static void reset(void)
{
	if (srv.stacks) {
		free(rmem_segtab.slot[seg].base);
		free(srv.stacks);
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
	for (int k = 1; k < NODES; k++) {
		char name[16];
		snprintf(name, sizeof name, "rpc-r%d", k);
		memset(reply_seg[k], 0, REPLY_SEG);
		CHECK(seg_export_for(name, reply_seg[k], REPLY_SEG, k, RMEM_W) >= 0);
	}
	CHECK(rpc_server_init(&srv, "svc") == 0);
	CHECK(rpc_register(&srv, 1, proc) == 0);
	CHECK(rpc_register(&srv, 9, proc) == 0);	/* any other procedure: -ENOSYS */
	CHECK(rpc_serve(&srv, 1) == 0);
	seg = segtab_find(&rmem_segtab, "rpc.svc.0");
	CHECK(seg >= 0);
	stack = rmem_segtab.slot[seg].base;
	hdr_writer = -1;
	seen_binds = calls_at_bind = calls_before_step = 0;
	prev_seq = 0;
	for (int k = 0; k < NODES; k++)
		next_seq[k] = 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int once;

	if (!once) {
		once = 1;
		host_fabric_reset(SELF, NODES);
		CHECK(host_run_init_hooks(INIT_PROTO) == 0);
		for (int k = 1; k < NODES; k++)
			reply_seg[k] = malloc(REPLY_SEG);
	}
	reset();
	in = data;
	in_left = size;
	for (int n = 0; in_left && n < 64; n++) {
		unsigned op = take(1);
		int src = 1 + (int)((op >> 3) & 3) % 3;
		switch (op & 7) {
		case 0:
			op_bind(src, take(1));
			break;
		case 1:
			op_unbind(src);
			break;
		case 2:
			op_call(src);
			break;
		case 4:
			op_write(src, (op >> 5) & 1);
			break;
		default:
			step((op >> 3) & 1);
			continue;
		}
		if (!(op & 0x80))
			step(0);
	}
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
