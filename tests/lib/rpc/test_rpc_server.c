/*
 * Host unit tests of the RPC server's receive side as the kernel runs it
 * (remote-memory paper 3.1): lib/rpc_server.c's stack notifications (the
 * receive path) and what the stack's thread does when it wakes
 * (rpc_stack_step), over the kernel's remote memory and request/answer
 * code on the fake fabric of host_fabric.c.
 *
 * This process is node 0, the server.  Node 1, the client, is played by
 * the test: its WRITEs into an argument stack are handed to the kernel's
 * rmem_receive as node 1's.  Frames the server sends to node 1 (the name
 * lookup of the client's reply segment, the replies) come back to this
 * node's own receive code as node 1's, so the client's reply segment is
 * exported here, writable by node 1: the replies land in it.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kernel/init.h"
#include "lib/rpc.h"
#include "lib/rpc_wire.h"
#include "net/rmem/internal.h"
#include "net/rmem/proto.h"
#include "net/rmem/rmem.h"
#include "tests/host/host_fabric.h"
#include "tests/host/rmem_fixture.h"

#define SELF 0
#define CLIENT 1
#define THIRD 2
#define TOKEN ((uint64_t)(CLIENT + 1) << 32 | 0x99)

static struct rpc_server srv;
static _Alignas(8) uint8_t reply_mem[REPLY_SEG];
static int ran;				/* procedure runs */
static uint8_t seen_args[RPC_ARGS_MAX];
static size_t seen_len;
static int stack_no;			/* the stack client_write_only writes */
static uint32_t hdr_claim = 0x99;	/* the claim a call's header names */
static uint32_t bind_id;		/* the last binding made, and its secret */
static uint64_t bind_secret;

/*
 * The server's stacks live as long as the node (there is no rpc_unserve);
 * each case here starts a server of its own: no leak report for them.
 */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "detect_leaks=0";
}

/* Procedure 1: the sum of the argument bytes. */
static int sum_proc(const void *argp, size_t len, uint64_t *result)
{
	const uint8_t *args = argp;
	uint64_t s = 0;

	ran++;
	seen_len = len;
	memcpy(seen_args, args, len < sizeof seen_args ? len : sizeof seen_args);
	for (size_t i = 0; i < len; i++)
		s += args[i];
	*result = s;
	return 0;
}

/*
 * Procedure 2, by reference: the arguments are a reference; read its 8
 * bytes, write them back reversed at offset 8, the sum as the result.
 */
static int ref_proc(const void *argp, size_t len, uint64_t *result)
{
	struct rpc_ref ref;
	const uint8_t *d;
	uint8_t back[8];

	ran++;
	if (len != sizeof ref)
		return -EINVAL;
	memcpy(&ref, argp, sizeof ref);
	int r = rpc_ref_read(&ref, 0, 8, (const void **)&d);
	if (r < 0)
		return r;
	*result = 0;
	for (int i = 0; i < 8; i++) {
		*result += d[i];
		back[i] = d[7 - i];
	}
	return rpc_ref_write(&ref, 8, back, 8);
}

/* Every frame to node 1 goes to this node's receive code as node 1's. */
static void pump(void)
{
	struct host_frame f;

	while (host_frame_take(&f) == 0) {
		fabric_handler_t h = host_handler(f.proto, f.raw);
		assert_non_null(h);
		h(CLIENT, f.data, f.len, NULL);
	}
}

static int setup(void **state)
{
	(void)state;
	host_rmem_reset(SELF, 4);
	host_threads = 1;
	host_pump = pump;
	memset(reply_mem, 0, sizeof reply_mem);
	ran = 0;
	stack_no = 0;
	hdr_claim = 0x99;
	assert_true(seg_export_for("rpc-r0", reply_mem, sizeof reply_mem, CLIENT, RMEM_W) >= 0);
	assert_int_equal(rpc_server_init(&srv, "svc"), 0);
	assert_int_equal(rpc_register(&srv, 1, sum_proc), 0);
	assert_int_equal(rpc_register(&srv, 2, ref_proc), 0);
	assert_int_equal(rpc_serve(&srv, 2), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	host_pump = NULL;
	return 0;
}

/* The segment of the current stack (-1: none). */
static int stack_seg(void)
{
	char name[RMEM_NAME_MAX];

	snprintf(name, sizeof name, "rpc.svc.%d", stack_no);
	return segtab_find(&rmem_segtab, name);
}

/* The segment of the current stack, which exists, and node src's ticket to it in *gen. */
static uint16_t stack_ticket(int src, uint32_t *gen)
{
	int seg = stack_seg();

	assert_true(seg >= 0);
	assert_int_equal(seg_ticket(seg, src, gen), 0);
	return (uint16_t)seg;
}

/*
 * A WRITE from node src into the stack, as rmem would carry it (with
 * RMEM_INTR, as the client's are).  Return the verdict: RMS_OK or the
 * refusal the server answered.
 */
static int client_write_only(int src, uint32_t off, const void *data, uint32_t len)
{
	static uint8_t b[RMEM_HDR_LEN + RMEM_MAX_XFER];
	struct host_frame f;
	uint32_t gen;
	uint16_t seg = stack_ticket(src, &gen);
	struct rmem_msg m = rmem_msg_of(RM_WRITE, RM_F_INTR | RM_F_ACK, seg, gen, off, len, 0x55, 0);

	memcpy(b, &m, sizeof m);
	memcpy(b + sizeof m, data, len);
	assert_int_equal(rmem_receive(src, b, sizeof m + len, 0), 0);
	/* The WRITE's own verdict, to src (a frame to node 1 is not a reply to it). */
	assert_int_equal(host_frame_take(&f), 0);
	assert_int_equal(f.dst, src);
	memcpy(&m, f.data, sizeof m);
	assert_int_equal(m.op, RM_STATUS);
	return m.status;
}

/*
 * The claim of the current stack by node src (its compare-and-swap of the
 * owner word from 0, with RMEM_INTR as the client's are); the old value,
 * or -1 if refused.
 */
static int64_t claim(int src)
{
	static uint8_t b[RMEM_HDR_LEN + 16];
	struct host_frame f;
	uint64_t cmp[2] = { 0, (uint64_t)(src + 1) << 32 | 0x99 }, old;
	uint32_t gen;
	uint16_t seg = stack_ticket(src, &gen);
	struct rmem_msg m = rmem_msg_of(RM_CAS, RM_F_INTR, seg, gen, 0, 8, 0x66, 0);

	memcpy(b, &m, sizeof m);
	memcpy(b + sizeof m, cmp, 16);
	assert_int_equal(rmem_receive(src, b, sizeof b, 0), 0);
	assert_int_equal(host_frame_take(&f), 0);
	memcpy(&m, f.data, sizeof m);
	if (m.op != RM_ATOMIC_RESP)
		return -1;
	memcpy(&old, f.data + sizeof m, 8);
	return (int64_t)old;
}

/* The WRITE, then the stack's thread runs once. */
static int client_write(int src, uint32_t off, const void *data, uint32_t len)
{
	int st = client_write_only(src, off, data, len);

	assert_int_equal(rpc_stack_step(&srv, stack_no, 0), 0);
	pump();
	return st;
}

static uint64_t owner_word(void)
{
	uint64_t w;

	memcpy(&w, rmem_segtab.slot[stack_seg()].base + CTL_OFF, 8);
	return w;
}

/* Node src gives the current stack back: its owner word to 0 (RMEM_INTR). */
static int release(int src)
{
	static const uint64_t zero;

	return client_write(src, CTL_OFF, &zero, 8);
}

static struct rpc_reply last_reply(void)
{
	struct rpc_reply r;

	memcpy(&r, reply_mem + stack_no * REPLY_SLOT, sizeof r);
	return r;
}

/* A binding request from node src on the current stack: the owner word (its CAS, done here as a WRITE), then the request. */
static struct rpc_reply ctl(int src, uint32_t op, uint32_t id, uint64_t secret)
{
	struct rpc_ctl c = { 0 };

	int64_t o = claim(src);
	assert_true(o == 0 || o == (int64_t)((uint64_t)(src + 1) << 32 | 0x99));	/* free, or src's already */
	c.op = op;
	c.node = (uint32_t)src;
	c.bind = id;
	c.secret = secret;
	strcpy(c.reply, "rpc-r0");
	assert_int_equal(client_write(src, REQ_OFF, (uint8_t *)&c + REQ_OFF, CTL_LEN), RMS_OK);
	/* The server gave the stack back: free, and src may no longer write it. */
	assert_int_equal(owner_word(), 0);
	assert_int_equal(release(src), RMS_RIGHTS);
	return last_reply();
}

static void bind(void)
{
	struct rpc_reply r = ctl(CLIENT, CTL_BIND, 0, 0);

	assert_int_equal(r.kind, R_BOUND);
	assert_int_equal(r.status, 0);
	bind_id = (uint32_t)r.result;
	bind_secret = r.mask;
}

/* One call of len argument bytes, numbered seq, in one header frame, on the current stack. */
static int call_as(int src, uint32_t proc, uint32_t seq, uint64_t secret, const uint8_t *args, uint32_t len,
		   uint16_t nframes)
{
	uint8_t frame[sizeof(struct call_hdr) + RPC_ARGS_MAX];
	/* claim: the nonce of claim()'s token, unless a test says otherwise. */
	struct call_hdr h = { .seq = seq, .proc = proc, .len = len, .nframes = nframes,
			      .bind = bind_id, .secret = (uint32_t)secret, .claim = hdr_claim };
	claim(src);		/* the stack may be src's already */
	memcpy(frame, &h, sizeof h);
	memcpy(frame + sizeof h, args, len);
	return client_write(src, HDR_OFF, frame, (uint32_t)(sizeof h + len));
}

static int call(int src, uint32_t seq, const uint8_t *args, uint32_t len, uint16_t nframes)
{
	return call_as(src, 1, seq, bind_secret, args, len, nframes);
}

/* The arguments of the calls that only need some: the procedure's result is their sum, 10. */
static const uint8_t args4[4] = { 1, 2, 3, 4 };

/* Call seq from CLIENT with args4 on the current stack: its header goes in. */
static void call4(uint32_t seq)
{
	assert_int_equal(call(CLIENT, seq, args4, 4, 1), RMS_OK);
}

/*
 * Call 1 again with args4, its reply slot wiped first: answered from the
 * kept result, with no run (ran stays want_ran), counted a repeat.  The
 * server's counters in *st.
 */
static void assert_repeat_answered(int want_ran, struct rpc_server_stats *st)
{
	memset(reply_mem, 0, sizeof reply_mem);
	call4(1);
	assert_int_equal(ran, want_ran);
	struct rpc_reply r = last_reply();
	assert_int_equal(r.kind, R_RESULT);
	assert_int_equal(r.seq, 1);
	assert_int_equal(r.result, 10);
	rpc_server_stats(&srv, st);
	assert_int_equal(st->repeats, 1);
}

/* Bind, then a call: the procedure sees the arguments, the result lands in the stack's reply slot. */
static void bind_and_call(void **state)
{
	uint8_t args[16];

	(void)state;
	bind();
	for (int i = 0; i < 16; i++)
		args[i] = (uint8_t)(i + 1);
	stack_no = 1;
	assert_int_equal(call(CLIENT, 1, args, 16, 1), RMS_OK);
	assert_int_equal(ran, 1);
	assert_int_equal(seen_len, 16);
	assert_memory_equal(seen_args, args, 16);
	struct rpc_reply r = last_reply();
	assert_int_equal(r.kind, R_RESULT);
	assert_int_equal(r.seq, 1);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.result, 136);
}

/* A header without the binding's secret, from any node, runs nothing; the right one runs. */
static void wrong_secret_runs_nothing(void **state)
{
	uint8_t args[8] = { 9, 9, 9, 9, 9, 9, 9, 9 };
	struct rpc_server_stats st;

	(void)state;
	bind();
	assert_int_equal(call_as(THIRD, 1, 1, bind_secret ^ 1, args, 8, 1), RMS_OK);
	assert_int_equal(release(THIRD), RMS_OK);
	assert_int_equal(call_as(CLIENT, 1, 1, bind_secret + 1, args, 8, 1), RMS_OK);
	assert_int_equal(ran, 0);
	rpc_server_stats(&srv, &st);
	assert_int_equal(st.forged, 2);
	assert_int_equal(call(CLIENT, 1, args, 8, 1), RMS_OK);
	assert_int_equal(ran, 1);
}

/*
 * A stack's rights follow its owner word: free, nobody may write it; once
 * claimed, its claimer's node alone; given back, nobody again.  Every
 * node may try a claim.
 */
static void stack_rights_follow_the_claim(void **state)
{
	uint8_t args[8] = { 1 };

	(void)state;
	bind();
	assert_int_equal(client_write(THIRD, ARGS_OFF, args, 8), RMS_RIGHTS);
	assert_true(claim(CLIENT) == 0);
	assert_int_equal(client_write(CLIENT, ARGS_OFF, args, 8), RMS_OK);
	assert_int_equal(client_write(THIRD, ARGS_OFF, args, 8), RMS_RIGHTS);
	assert_true(claim(THIRD) == ((uint64_t)(CLIENT + 1) << 32 | 0x99));	/* taken: the CAS fails */
	assert_int_equal(client_write(THIRD, ARGS_OFF, args, 8), RMS_RIGHTS);
	assert_int_equal(release(CLIENT), RMS_OK);
	assert_int_equal(client_write(CLIENT, ARGS_OFF, args, 8), RMS_RIGHTS);
	assert_true(claim(THIRD) == 0);
	assert_int_equal(client_write(THIRD, ARGS_OFF, args, 8), RMS_OK);
}

/*
 * A header whose claim is not the one holding the stack (frames of a
 * claim that was lost, let in by its node's right to write once another
 * call of that node holds the stack) does not run.
 */
static void call_on_a_stack_not_claimed_for_it_does_not_run(void **state)
{
	uint8_t args[4] = { 1, 1, 1, 1 };
	struct rpc_server_stats st;

	(void)state;
	bind();
	hdr_claim = 0x98;				/* another claim of this node's */
	assert_int_equal(call(CLIENT, 1, args, 4, 1), RMS_OK);
	hdr_claim = 0x99;
	assert_int_equal(ran, 0);
	rpc_server_stats(&srv, &st);
	assert_int_equal(st.unclaimed, 1);
	assert_int_equal(call(CLIENT, 1, args, 4, 1), RMS_OK);
	assert_int_equal(ran, 1);
}

/* A repeated call number on its stack is answered from the kept result: at most once. */
static void repeated_call_runs_once(void **state)
{
	struct rpc_server_stats st;

	(void)state;
	bind();
	call4(1);
	assert_repeat_answered(1, &st);
	assert_int_equal(st.calls, 1);
}

/*
 * The stacks are shared, at most once is not per stack: a number that ran
 * on stack 0 never runs on stack 1, and a number older than the window
 * does not run at all.
 */
static void call_number_runs_once_across_stacks(void **state)
{
	struct rpc_server_stats st;

	(void)state;
	bind();
	call4(1);
	stack_no = 1;
	call4(1);
	assert_int_equal(ran, 1);
	call4(3);		/* out of order is fine */
	call4(2);
	assert_int_equal(ran, 3);
	call4(4 + SEEN_WINDOW);
	call4(4);		/* fell out of the window */
	assert_int_equal(ran, 4);
	rpc_server_stats(&srv, &st);
	assert_int_equal(st.stale, 1);
	assert_int_equal(st.repeats, 0);
}

/*
 * A raw client's header again, after its answer was lost, while the
 * binding's other calls moved the window far past it: its stack's last
 * call is still it, so the kept result answers it, and it does not run.
 */
static void repeat_answered_past_the_window(void **state)
{
	struct rpc_server_stats st;

	(void)state;
	bind();
	call4(1);		/* stack 0 */
	stack_no = 1;
	for (uint32_t s = 2; s < 2 + SEEN_WINDOW + 10; s++)
		call4(s);
	assert_int_equal(ran, SEEN_WINDOW + 11);
	stack_no = 0;
	assert_repeat_answered(SEEN_WINDOW + 11, &st);
	assert_int_equal(st.stale, 0);
}

/* A header whose frame count does not match its length, or too long: no call. */
static void malformed_header_runs_nothing(void **state)
{
	uint8_t args[8] = { 0 };
	struct rpc_server_stats st;

	(void)state;
	bind();
	assert_int_equal(call(CLIENT, 1, args, 8, 3), RMS_OK);		/* 8 bytes are one frame */
	assert_int_equal(ran, 0);
	rpc_server_stats(&srv, &st);
	assert_int_equal(st.bad_frames, 1);
	assert_int_equal(call(CLIENT, 1, args, 8, 1), RMS_OK);		/* the good one runs */
	assert_int_equal(ran, 1);
}

/* A call before any binding, or on one unbound, runs nothing. */
static void unbound_runs_nothing(void **state)
{
	uint8_t args[8] = { 0 };

	(void)state;
	bind_id = 0;
	assert_int_equal(call_as(CLIENT, 1, 1, 0, args, 8, 1), RMS_OK);
	assert_int_equal(ran, 0);
	bind();
	assert_int_equal(call(CLIENT, 1, args, 8, 1), RMS_OK);
	assert_int_equal(ran, 1);
	/* An unbinding with the wrong secret is refused; with the right one the calls stop. */
	struct rpc_reply r = ctl(CLIENT, CTL_UNBIND, bind_id, bind_secret ^ 4);
	assert_int_equal(r.kind, R_RESULT);	/* no answer: the last reply stays */
	r = ctl(CLIENT, CTL_UNBIND, bind_id, bind_secret);
	assert_int_equal(r.kind, R_UNBOUND);
	assert_int_equal(r.status, 0);
	assert_int_equal(call(CLIENT, 2, args, 8, 1), RMS_OK);
	assert_int_equal(ran, 1);
}

/*
 * Bindings hold no stack: RPC_MAX_BINDINGS of them over two stacks, each
 * served; one more is refused with -EBUSY, and once one unbinds it fits.
 */
static void bindings_outnumber_stacks(void **state)
{
	uint8_t args[4] = { 1, 1, 1, 1 };
	uint32_t first = 0;
	uint64_t first_secret = 0;

	(void)state;
	for (int i = 0; i < RPC_MAX_BINDINGS; i++) {
		stack_no = i % 2;
		bind();
		if (i == 0) {
			first = bind_id;
			first_secret = bind_secret;
		}
		assert_int_equal(call(CLIENT, 1, args, 4, 1), RMS_OK);
		assert_int_equal(ran, i + 1);
		assert_int_equal(last_reply().result, 4);
	}
	struct rpc_reply r = ctl(CLIENT, CTL_BIND, 0, 0);
	assert_int_equal(r.kind, R_BOUND);
	assert_int_equal(r.status, -EBUSY);
	r = ctl(CLIENT, CTL_UNBIND, first, first_secret);
	assert_int_equal(r.kind, R_UNBOUND);
	bind();
	assert_int_equal(bind_id, first);
	assert_true(bind_secret != first_secret);
}

/*
 * Call-by-reference (3.1.1): the procedure reads the caller's memory
 * through the reference and writes its answer there; the caller's node
 * enforces what it exported, whatever the reference claims.
 */
static void call_by_reference(void **state)
{
	static _Alignas(8) uint8_t mem[16] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct rpc_ref ref = { 0 };
	uint32_t gen;
	const void *d;

	(void)state;
	assert_int_equal(rpc_ref_read(&ref, 0, 8, &d), -EPERM);	/* outside a procedure */
	bind();
	/* This node plays the client too: the READs come back to it as node 1's. */
	ref.seg = seg_export_for("rpc-a0", mem, sizeof mem, CLIENT, RMEM_RW);
	assert_true(ref.seg >= 0);
	assert_int_equal(seg_ticket(ref.seg, CLIENT, &gen), 0);
	ref.gen = gen;
	ref.len = sizeof mem;
	ref.rights = RMEM_RW;
	assert_int_equal(call_as(CLIENT, 2, 1, bind_secret, (const uint8_t *)&ref, sizeof ref, 1), RMS_OK);
	struct rpc_reply r = last_reply();
	assert_int_equal(r.kind, R_RESULT);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.result, 36);
	static const uint8_t back[8] = { 8, 7, 6, 5, 4, 3, 2, 1 };
	assert_memory_equal(mem + 8, back, 8);
	/* Exported for reading only: the WRITE is refused there, the memory stays. */
	assert_int_equal(seg_grant(ref.seg, CLIENT, RMEM_R), 0);
	memset(mem + 8, 0, 8);
	assert_int_equal(call_as(CLIENT, 2, 2, bind_secret, (const uint8_t *)&ref, sizeof ref, 1), RMS_OK);
	r = last_reply();
	assert_int_equal(r.status, -EACCES);
	assert_int_equal(mem[8], 0);
	/* Beyond its length: refused before anything is asked. */
	ref.len = 4;
	assert_int_equal(call_as(CLIENT, 2, 3, bind_secret, (const uint8_t *)&ref, sizeof ref, 1), RMS_OK);
	assert_int_equal(last_reply().status, -ERANGE);
	seg_unexport(ref.seg);
}

/* The window of call numbers run. */
static void seen_window(void **state)
{
	struct rpc_seen w = { 0 };

	(void)state;
	assert_int_equal(rpc_seen_check(&w, 0), SEEN_OLD);
	assert_int_equal(rpc_seen_check(&w, 1), SEEN_NEW);
	rpc_seen_mark(&w, 2);
	assert_int_equal(rpc_seen_check(&w, 1), SEEN_NEW);
	assert_int_equal(rpc_seen_check(&w, 2), SEEN_DONE);
	rpc_seen_mark(&w, 1);
	assert_int_equal(rpc_seen_check(&w, 1), SEEN_DONE);
	rpc_seen_mark(&w, 2 + SEEN_WINDOW - 1);
	assert_int_equal(rpc_seen_check(&w, 2), SEEN_DONE);
	assert_int_equal(rpc_seen_check(&w, 1), SEEN_OLD);
	assert_int_equal(rpc_seen_check(&w, 3), SEEN_NEW);	/* skipped numbers stay open */
	rpc_seen_mark(&w, 2 + SEEN_WINDOW + 5);		/* the bits it passes are cleared */
	for (uint32_t s = 2 + SEEN_WINDOW; s < 2 + SEEN_WINDOW + 5; s++)
		assert_int_equal(rpc_seen_check(&w, s), SEEN_NEW);
	/* Too far ahead: refused, so that no number comes round again. */
	assert_int_equal(rpc_seen_check(&w, 2 + SEEN_WINDOW + 5 + SEEN_AHEAD + 1), SEEN_OLD);
	assert_int_equal(rpc_seen_check(&w, 0x7ffffff0u), SEEN_OLD);
	assert_int_equal(rpc_seen_check(&w, 0xfffffff0u), SEEN_OLD);
	/* Counted on past 2^32: the 32-bit numbers wrap, the window does not. */
	w.top = 0xffffffe0ULL;
	memset(w.bits, 0, sizeof w.bits);
	rpc_seen_mark(&w, 0xfffffff0u);
	rpc_seen_mark(&w, 5);				/* 2^32 + 5 */
	assert_true(w.top == 0x100000005ULL);
	assert_int_equal(rpc_seen_check(&w, 5), SEEN_DONE);
	assert_int_equal(rpc_seen_check(&w, 0xfffffff0u), SEEN_DONE);
	assert_int_equal(rpc_seen_check(&w, 0xfffffff1u), SEEN_NEW);
	assert_int_equal(rpc_seen_check(&w, 6), SEEN_NEW);
}

/* A test of the server's, between setup and teardown. */
#define SERVER_TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	host_fabric_reset(SELF, 4);
	if (host_run_init_hooks(INIT_SUBSYS_4) < 0)
		return 1;
	const struct CMUnitTest tests[] = {
		SERVER_TEST(bind_and_call),
		SERVER_TEST(wrong_secret_runs_nothing),
		SERVER_TEST(stack_rights_follow_the_claim),
		SERVER_TEST(call_on_a_stack_not_claimed_for_it_does_not_run),
		SERVER_TEST(repeated_call_runs_once),
		SERVER_TEST(call_number_runs_once_across_stacks),
		SERVER_TEST(repeat_answered_past_the_window),
		SERVER_TEST(malformed_header_runs_nothing),
		SERVER_TEST(unbound_runs_nothing),
		SERVER_TEST(bindings_outnumber_stacks),
		SERVER_TEST(call_by_reference),
		cmocka_unit_test(seen_window),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
