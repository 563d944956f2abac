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
#include <string.h>

#include <cmocka.h>

#include "kernel/init.h"
#include "lib/rpc.h"
#include "lib/rpc_wire.h"
#include "net/rmem/internal.h"
#include "net/rmem/proto.h"
#include "net/rmem/rmem.h"
#include "tests/unit/host_fabric.h"

#define SELF 0
#define CLIENT 1
#define THIRD 2
#define TOKEN ((uint64_t)(CLIENT + 1) << 32 | 0x99)

static struct rpc_server srv;
static _Alignas(8) uint8_t reply_mem[256];
static int ran;				/* procedure runs */
static uint8_t seen_args[RPC_ARGS_MAX];
static size_t seen_len;

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
	assert_true(seg_export_for("rpc-r0", reply_mem, sizeof reply_mem, CLIENT, RMEM_W) >= 0);
	assert_int_equal(rpc_server_init(&srv, "svc"), 0);
	assert_int_equal(rpc_register(&srv, 1, sum_proc), 0);
	assert_int_equal(rpc_serve(&srv, 1), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	host_pump = NULL;
	return 0;
}

/*
 * A WRITE from node src into the stack, as rmem would carry it (with
 * RMEM_INTR, as the client's are).  Return the verdict: RMS_OK or the
 * refusal the server answered.
 */
static int client_write_only(int src, uint32_t off, const void *data, uint32_t len)
{
	static uint8_t b[RMEM_HDR_LEN + RMEM_MAX_XFER];
	int seg = segtab_find(&rmem_segtab, "rpc.svc.0");
	struct rmem_msg m = { 0 };
	struct host_frame f;
	uint32_t gen;

	assert_true(seg >= 0);
	assert_int_equal(seg_ticket(seg, src, &gen), 0);
	m.op = RM_WRITE;
	m.flags = RM_F_INTR | RM_F_ACK;
	m.seg = (uint16_t)seg;
	m.gen = gen;
	m.off = off;
	m.count = len;
	m.tag = 0x55;
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

/* The WRITE, then the stack's thread runs once. */
static int client_write(int src, uint32_t off, const void *data, uint32_t len)
{
	int st = client_write_only(src, off, data, len);

	assert_int_equal(rpc_stack_step(&srv, 0, 0), 0);
	pump();
	return st;
}

static struct reply last_reply(void)
{
	struct reply r;

	memcpy(&r, reply_mem, sizeof r);
	return r;
}

/* The client's bind: the owner word (its CAS, done here as a WRITE), then the request. */
static void bind(void)
{
	struct ctl c = { 0 };

	c.owner = TOKEN;
	assert_int_equal(client_write(CLIENT, CTL_OFF, &c.owner, 8), RMS_OK);
	c.op = CTL_BIND;
	c.node = CLIENT;
	strcpy(c.reply, "rpc-r0");
	assert_int_equal(client_write(CLIENT, REQ_OFF, (uint8_t *)&c + REQ_OFF,
				      (uint32_t)(offsetof(struct ctl, pad) - REQ_OFF)),
			 RMS_OK);
	struct reply r = last_reply();
	assert_int_equal(r.kind, R_BOUND);
}

/* One call of len argument bytes, numbered seq, in one header frame. */
static int call(int src, uint32_t seq, const uint8_t *args, uint32_t len, uint16_t nframes)
{
	uint8_t frame[sizeof(struct call_hdr) + RPC_ARGS_MAX];
	struct call_hdr h = { 0 };

	h.seq = seq;
	h.proc = 1;
	h.len = len;
	h.nframes = nframes;
	memcpy(frame, &h, sizeof h);
	memcpy(frame + sizeof h, args, len);
	return client_write(src, HDR_OFF, frame, (uint32_t)(sizeof h + len));
}

/* Bind, then a call: the procedure sees the arguments, the result lands in the reply. */
static void bind_and_call(void **state)
{
	uint8_t args[16];

	(void)state;
	bind();
	for (int i = 0; i < 16; i++)
		args[i] = (uint8_t)(i + 1);
	assert_int_equal(call(CLIENT, 1, args, 16, 1), RMS_OK);
	assert_int_equal(ran, 1);
	assert_int_equal(seen_len, 16);
	assert_memory_equal(seen_args, args, 16);
	struct reply r = last_reply();
	assert_int_equal(r.kind, R_RESULT);
	assert_int_equal(r.seq, 1);
	assert_int_equal(r.status, 0);
	assert_int_equal(r.result, 136);
}

/* After binding only the owner may write the stack: a third node is refused, nothing runs. */
static void bound_stack_refuses_others(void **state)
{
	uint8_t args[8] = { 9, 9, 9, 9, 9, 9, 9, 9 };

	(void)state;
	bind();
	assert_int_not_equal(call(THIRD, 1, args, 8, 1), RMS_OK);
	assert_int_equal(ran, 0);
	assert_int_equal(call(CLIENT, 1, args, 8, 1), RMS_OK);
	assert_int_equal(ran, 1);
}

/* A repeated call number is answered from the kept result: at most once. */
static void repeated_call_runs_once(void **state)
{
	uint8_t args[4] = { 1, 2, 3, 4 };
	struct rpc_server_stats st;

	(void)state;
	bind();
	assert_int_equal(call(CLIENT, 1, args, 4, 1), RMS_OK);
	memset(reply_mem, 0, sizeof reply_mem);
	assert_int_equal(call(CLIENT, 1, args, 4, 1), RMS_OK);
	assert_int_equal(ran, 1);
	struct reply r = last_reply();
	assert_int_equal(r.kind, R_RESULT);
	assert_int_equal(r.seq, 1);
	assert_int_equal(r.result, 10);
	rpc_server_stats(&srv, &st);
	assert_int_equal(st.repeats, 1);
	assert_int_equal(st.calls, 1);
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

/* A call before any binding, or a call number out of turn, runs nothing. */
static void unbound_or_out_of_turn_runs_nothing(void **state)
{
	uint8_t args[8] = { 0 };

	(void)state;
	assert_int_equal(call(CLIENT, 1, args, 8, 1), RMS_OK);
	assert_int_equal(ran, 0);
	bind();
	assert_int_equal(call(CLIENT, 5, args, 8, 1), RMS_OK);
	assert_int_equal(ran, 0);
	assert_int_equal(call(CLIENT, 1, args, 8, 1), RMS_OK);
	assert_int_equal(ran, 1);
}

/*
 * A call another node wrote into the free stack, still unseen when the
 * client's binding request arrives (the thread wakes once for both), is
 * not the owner's: it does not run.  The owner's own call 1 does.
 */
static void call_before_binding_is_not_the_owners(void **state)
{
	uint8_t frame[sizeof(struct call_hdr) + 8];
	uint8_t mine[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };
	struct call_hdr h = { 0 };
	struct ctl c = { 0 };

	(void)state;
	h.seq = 1;
	h.proc = 1;
	h.len = 8;
	h.nframes = 1;
	memcpy(frame, &h, sizeof h);
	memset(frame + sizeof h, 9, 8);
	assert_int_equal(client_write_only(THIRD, HDR_OFF, frame, sizeof frame), RMS_OK);
	c.owner = TOKEN;
	assert_int_equal(client_write_only(CLIENT, CTL_OFF, &c.owner, 8), RMS_OK);
	c.op = CTL_BIND;
	c.node = CLIENT;
	strcpy(c.reply, "rpc-r0");
	assert_int_equal(client_write_only(CLIENT, REQ_OFF, (uint8_t *)&c + REQ_OFF,
					   (uint32_t)(offsetof(struct ctl, pad) - REQ_OFF)),
			 RMS_OK);
	assert_int_equal(rpc_stack_step(&srv, 0, 0), 0);
	pump();
	assert_int_equal(last_reply().kind, R_BOUND);
	assert_int_equal(ran, 0);
	assert_int_equal(call(CLIENT, 1, mine, 8, 1), RMS_OK);
	assert_int_equal(ran, 1);
	assert_memory_equal(seen_args, mine, 8);
}

int main(void)
{
	host_fabric_reset(SELF, 4);
	if (host_run_init_hooks(INIT_PROTO) < 0)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(bind_and_call, setup, teardown),
		cmocka_unit_test_setup_teardown(bound_stack_refuses_others, setup, teardown),
		cmocka_unit_test_setup_teardown(repeated_call_runs_once, setup, teardown),
		cmocka_unit_test_setup_teardown(malformed_header_runs_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(unbound_or_out_of_turn_runs_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(call_before_binding_is_not_the_owners, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
