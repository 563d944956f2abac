/*
 * One operation of each kind between nodes 0 and 1 (see ops.h).
 */
#include <errno.h>
#include <string.h>

#include "apps/app.h"
#include "kernel/mem.h"
#include "kernel/thread.h"
#include "kernel/trace.h"
#include "lib/mad.h"
#include "lib/mpi/mpi.h"
#include "lib/rpc.h"
#include "net/deposit/deposit.h"
#include "net/fabric/fabric.h"
#include "net/net.h"
#include "net/req/req.h"
#include "net/rmem/rmem.h"
#include "tests/apps/protos.h"
#include "tests/bench/ops.h"
#include "tests/lib/rpc/rpc_simple.h"

#define WAIT_NS 2000000000ULL
#define SEGBYTES 4096

/* --- the paths the stages app aligns across the nodes ------------------------------ */

static const struct op_stage one_way[] = {
	{ 0, TS_APP_CALL }, { 0, TS_MECH_SEND }, { 0, TS_FABRIC_TX }, { 0, TS_NIC_TX },
	{ 1, TS_NIC_RX }, { 1, TS_FABRIC_RX }, { 1, TS_MECH_RX }, { 1, TS_MECH_DONE },
};
static const struct op_stage round_trip[] = {
	{ 0, TS_APP_CALL }, { 0, TS_MECH_SEND }, { 0, TS_FABRIC_TX }, { 0, TS_NIC_TX },
	{ 1, TS_NIC_RX }, { 1, TS_FABRIC_RX }, { 1, TS_MECH_RX }, { 1, TS_MECH_SEND },
	{ 1, TS_FABRIC_TX }, { 1, TS_NIC_TX }, { 0, TS_NIC_RX }, { 0, TS_FABRIC_RX },
	{ 0, TS_MECH_RX }, { 0, TS_MECH_DONE }, { 0, TS_APP_WAKE },
};
static const struct op_stage frame_way[] = {
	{ 0, TS_APP_CALL }, { 0, TS_FABRIC_TX }, { 0, TS_NIC_TX },
	{ 1, TS_NIC_RX }, { 1, TS_FABRIC_RX }, { 1, TS_MECH_RX },
};
#define PATH(p) p, (int)(sizeof p / sizeof p[0])

/* --- raw frames and reliable messages ---------------------------------------------- */

static uint8_t frame[64];

/* Node 1's handlers: the frame or message reached its protocol. */
static int frame_handler(int src, const uint8_t *p, size_t len, struct pktbuf *pb)
{
	(void)src;
	(void)p;
	(void)len;
	(void)pb;
	trace_point(TS_MECH_RX);
	return 0;
}

static int frames_setup(void)
{
	static int done;

	if (done++)
		return 0;
	if (fabric_register_raw(APP_PROTO_OPS, frame_handler) < 0 ||
	    fabric_register(APP_PROTO_OPS, frame_handler) < 0)
		return -1;
	return 0;
}

static int raw_run(uint32_t i)
{
	int r;

	memcpy(frame, &i, sizeof i);
	/* The NIC's ring may be full for a moment: try again. */
	for (int tries = 0; (r = fabric_raw_send(1, APP_PROTO_OPS, frame, sizeof frame)) == -EAGAIN &&
			    tries < 100; tries++)
		thread_sleep_ns(100000);
	return r;
}

static int reliable_run(uint32_t i)
{
	memcpy(frame, &i, sizeof i);
	return fabric_send(1, APP_PROTO_OPS, frame, sizeof frame, NULL, 0, 0);
}

/* --- remote memory ------------------------------------------------------------------ */

static uint8_t seg_mem[SEGBYTES] __attribute__((aligned(64)));
static int seg = -1, rd = -1;

static int rmem_setup(void)
{
	if (seg >= 0)
		return 0;
	seg = seg_export("ops", seg_mem, sizeof seg_mem, 0);
	return seg >= 0 && seg_grant(seg, 1 - node_id, RMEM_RW | RMEM_A) == 0 ? 0 : -1;
}

static int rmem_bind(void)
{
	if (rd < 0)
		rd = rmem_import_wait(1, "ops", 10000000000ULL);
	return rd >= 0 ? 0 : -1;
}

static int write_run(uint32_t i)
{
	memcpy(seg_mem, &i, sizeof i);
	return rmem_write(rd, 0, seg_mem, 40, 0);
}

/* The paper's WRITE is asynchronous: to know it landed, a fence behind it (MPI_Put's flush, bare). */
static int write_sync_run(uint32_t i)
{
	uint64_t v = i;
	int r = rmem_write(rd, 192, &v, sizeof v, 0);

	if (r == 0)
		r = rmem_sync(rd, WAIT_NS);
	trace_point(TS_APP_WAKE);
	return r;
}

static int read_run(uint32_t i)
{
	(void)i;
	int h = rmem_read(rd, 64, 40, seg, 0, 0);
	int r = h < 0 ? h : rmem_read_wait(h, WAIT_NS);

	trace_point(TS_APP_WAKE);
	return r;
}

/*
 * The remote memory paper's own WRITE and READ (Table 1): "only as
 * reliable as the network", raw frames with no channel, no sequence and
 * no acknowledgement (RMEM_UNRELIABLE).
 */
static int write_unreliable_run(uint32_t i)
{
	memcpy(seg_mem, &i, sizeof i);
	return rmem_write(rd, 0, seg_mem, 40, RMEM_UNRELIABLE);
}

static int read_unreliable_run(uint32_t i)
{
	(void)i;
	int h = rmem_read(rd, 64, 40, seg, 0, RMEM_UNRELIABLE);
	int r = h < 0 ? h : rmem_read_wait(h, WAIT_NS);

	trace_point(TS_APP_WAKE);
	return r;
}

static int cas_run(uint32_t i)
{
	uint64_t old;
	int r = rmem_cas(rd, 128, i, i + 1, &old);

	trace_point(TS_APP_WAKE);
	return r;
}

static int fadd_run(uint32_t i)
{
	uint64_t old;
	int r = rmem_fadd(rd, 136, i, &old);

	trace_point(TS_APP_WAKE);
	return r;
}

/* --- remote enqueue ------------------------------------------------------------------ */

static int queue = -1;			/* node 1's queue; node 0's handle to it */

static int req_setup(void)
{
	if (rmem_setup() < 0)
		return -1;
	if (node_id == 1 && queue < 0 && ((queue = req_create(4096)) < 0 || req_export(queue, "ops") < 0))
		return -1;
	return 0;
}

static int req_bind(void)
{
	for (int t = 0; t < 100 && queue < 0; t++)
		if ((queue = req_import(1, "ops")) < 0)
			thread_sleep_ns(10000000);
	return queue >= 0 && rmem_bind() == 0 ? 0 : -1;
}

static int req_run(uint32_t i)
{
	return req_enqueue(queue, i, 0);
}

static int req_notify_run(uint32_t i)
{
	uint32_t off = (i % 64) * 48;

	memcpy(seg_mem + off, &i, sizeof i);
	return reqmsg_send(rd, off, seg_mem + off, 40, queue);
}

/* The words the REQs left in node 1's queue: taken, so that it never fills. */
static void req_tidy(void)
{
	uint32_t w;

	while (queue >= 0 && req_dequeue(queue, &w) == 1)
		;
}

/* --- hybrid deposit ------------------------------------------------------------------ */

enum { V_ONEWAY = 60, V_RTT = 61 };
#define EP_SIZE 4096
static uint8_t ep_mem[EP_SIZE] __attribute__((aligned(4096)));
static struct dart_sendregs *sr[2];
static const uint64_t dep_write =
	DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, CELL_COND(CMP_ALWAYS, 0, 0));
static const uint64_t dep_write_intr =
	DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT) | CO_INTR, 0, 0, CELL_COND(CMP_ALWAYS, 0, 0));

/* Node 1's thread: every deposit on V_RTT is sent back. */
static void *rtt_echo(void *arg)
{
	uint64_t seen = (uintptr_t)arg;

	for (;;) {
		if (dep_intr_wait(V_RTT, &seen, 60000000000ULL) < 0)
			continue;
		dep_send(sr[1], dep_write_intr, 32, DART_IDX(0, 0, 0, 0xff), 32);
	}
	return NULL;
}

static int dep_setup(void)
{
	static int done;
	struct dep_conn_info ci;

	if (done++)
		return 0;
	int ep = dep_endpoint_create(ep_mem, sizeof ep_mem, DART_EP_READ | DART_EP_WRITE);
	for (int k = 0; k < 2; k++) {
		struct dep_conn_cfg cfg = { 1 - node_id, ep, DART_RX | DART_TX, V_ONEWAY + k, 0, 4, 0, 0, 0, 0 };
		if (ep < 0 || dep_conn_open(V_ONEWAY + k, &cfg) < 0 || !(sr[k] = dep_sendregs(V_ONEWAY + k)))
			return -1;
	}
	if (node_id == 1 && (dep_conn_info(V_RTT, &ci) < 0 ||
			     !thread_create("ops-dep-echo", rtt_echo, (void *)(uintptr_t)ci.interrupts,
					    PRIO_NORMAL, 0)))
		return -1;
	return 0;
}

static int deposit_run(uint32_t i)
{
	/* The operand is the address in node 1's endpoint: always the same, aligned. */
	(void)i;
	return dep_send(sr[0], dep_write, 0, DART_IDX(0, 0, 0, 0xff), 0);
}

static int deposit_rtt_run(uint32_t i)
{
	static uint64_t seen;
	struct dep_conn_info ci;

	if (!seen && dep_conn_info(V_RTT, &ci) == 0)
		seen = ci.interrupts;
	int r = dep_send(sr[1], dep_write_intr, 32, DART_IDX(0, 0, 0, 0xff), (i & 63) * 32);
	if (r == 0 && dep_intr_wait(V_RTT, &seen, WAIT_NS) < 0)
		r = -ETIMEDOUT;
	trace_point(TS_APP_WAKE);
	return r;
}

/* --- RPC over remote memory -------------------------------------------------------- */

static struct rpc_server server;
static struct rpc_binding binding;

static int rpc_setup(void)
{
	if (node_id != 1 || server.stacks)
		return 0;
	if (rpc_server_init(&server, "ops") < 0 || rpc_register(&server, 1, rpc_simple_sum) < 0 ||
	    rpc_serve(&server, 1) < 0)
		return -1;
	return 0;
}

static int rpc_bind_ops(void)
{
	static int bound;

	if (!bound && rpc_bind(&binding, 1, "ops", 0, 30000000000ULL) == 0)
		bound = 1;
	return bound ? 0 : -1;
}

static int rpc_run(uint32_t i)
{
	int32_t a[4] = { (int32_t)i, -3, 1000, 7 };
	uint64_t res;
	int r = rpc_call(&binding, 1, a, sizeof a, &res);

	return r == 0 && res != (uint64_t)((int64_t)i + 1004) ? -EPROTO : r;
}

/* --- Madeleine ----------------------------------------------------------------------- */

static const char *const mad_drivers[] = { "rmem", "req", "cell" };
static struct mad_channel *chans[3];

static int null_handler(int src)
{
	(void)src;
	return mad_recvbuf_receive_data();
}

/* Node 1's thread per driver: receive null messages for ever. */
static void *mad_receiver(void *arg)
{
	struct mad_channel *ch = arg;

	for (;;)
		if (mad_recvbuf_receive_on(ch, null_handler, 60000000000ULL) == 0)
			trace_point(TS_APP_RETURN);
	return NULL;
}

static int mad_setup_drv(int k)
{
	if (chans[k])
		return 0;
	if (!(chans[k] = mad_open(mad_drivers[k])))
		return -1;
	if (node_id == 1 && !thread_create("ops-mad-rx", mad_receiver, chans[k], PRIO_NORMAL, 0))
		return -1;
	return 0;
}

static int mad_send_null(int k)
{
	int r = mad_sendbuf_init_on(chans[k], 1);
	int s = mad_sendbuf_send();

	return r ? r : s;
}

static int mad_rmem_setup(void) { return mad_setup_drv(0); }
static int mad_req_setup(void) { return mad_setup_drv(1); }
static int mad_cell_setup(void) { return mad_setup_drv(2); }
static int mad_rmem_run(uint32_t i) { (void)i; return mad_send_null(0); }
static int mad_req_run(uint32_t i) { (void)i; return mad_send_null(1); }
static int mad_cell_run(uint32_t i) { (void)i; return mad_send_null(2); }

/* --- MPI -------------------------------------------------------------------------------- */

/* Node 1's thread: receive 0-byte messages for ever (MPI is thread safe: any thread may call it). */
static void *mpi_receiver(void *arg)
{
	(void)arg;
	for (;;)
		if (MPI_Recv(NULL, 0, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS)
			trace_point(TS_APP_RETURN);
	return NULL;
}

static int mpi_setup(void)
{
	static int done;

	if (done)
		return 0;
	if (MPI_Init(NULL, NULL) != MPI_SUCCESS)
		return -1;
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	if (node_id == 1 && !thread_create("ops-mpi-rx", mpi_receiver, NULL, PRIO_NORMAL, 0))
		return -1;
	done = 1;
	return 0;
}

static int mpi_run(uint32_t i)
{
	(void)i;
	return MPI_Send(NULL, 0, MPI_BYTE, 1, 1, MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1;
}

/*
 * MPI_Put of 8 bytes into node 1's window, then MPI_Win_flush: one remote
 * WRITE, and the wait until it reached node 1 (issue: one-sided windows).
 * Both nodes make the window in setup (collective); node 0 holds a
 * lock_all for good (NOCHECK: no lock traffic), node 1's CPU takes no part.
 */
static MPI_Win put_win = MPI_WIN_NULL;

static int mpi_put_setup(void)
{
	void *base;

	if (mpi_setup() < 0)
		return -1;
	if (put_win != MPI_WIN_NULL)
		return 0;
	if (MPI_Win_allocate(64, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &put_win) != MPI_SUCCESS)
		return -1;
	return node_id == 0 && MPI_Win_lock_all(MPI_MODE_NOCHECK, put_win) != MPI_SUCCESS ? -1 : 0;
}

static int mpi_put_run(uint32_t i)
{
	uint64_t v = i;

	if (MPI_Put(&v, 1, MPI_UINT64_T, 1, 0, 1, MPI_UINT64_T, put_win) != MPI_SUCCESS)
		return -1;
	int r = MPI_Win_flush(1, put_win) == MPI_SUCCESS ? 0 : -1;
	trace_point(TS_APP_WAKE);
	return r;
}

/* --- the table ----------------------------------------------------------------------- */

const struct op ops[] = {
	{ "raw", frames_setup, NULL, raw_run, NULL, PATH(frame_way) },
	{ "reliable", frames_setup, NULL, reliable_run, NULL, PATH(frame_way) },
	{ "write", rmem_setup, rmem_bind, write_run, NULL, PATH(one_way) },
	{ "write-sync", rmem_setup, rmem_bind, write_sync_run, NULL, NULL, 0 },
	{ "read", rmem_setup, rmem_bind, read_run, NULL, PATH(round_trip) },
	{ "write-unreliable", rmem_setup, rmem_bind, write_unreliable_run, NULL, PATH(one_way) },
	{ "read-unreliable", rmem_setup, rmem_bind, read_unreliable_run, NULL, PATH(round_trip) },
	{ "cas", rmem_setup, rmem_bind, cas_run, NULL, PATH(round_trip) },
	{ "fadd", rmem_setup, rmem_bind, fadd_run, NULL, PATH(round_trip) },
	{ "req", req_setup, req_bind, req_run, req_tidy, PATH(one_way) },
	{ "req-notify", req_setup, req_bind, req_notify_run, req_tidy, NULL, 0 },
	{ "deposit", dep_setup, NULL, deposit_run, NULL, PATH(one_way) },
	{ "deposit-rtt", dep_setup, NULL, deposit_rtt_run, NULL, NULL, 0 },
	{ "rpc-simple", rpc_setup, rpc_bind_ops, rpc_run, NULL, NULL, 0 },
	{ "mad-rmem", mad_rmem_setup, NULL, mad_rmem_run, NULL, NULL, 0 },
	{ "mad-req", mad_req_setup, NULL, mad_req_run, NULL, NULL, 0 },
	{ "mad-cell", mad_cell_setup, NULL, mad_cell_run, NULL, NULL, 0 },
	{ "tcp-1B", op_tcp_setup, op_tcp_bind, op_tcp_run, NULL, NULL, 0 },
	{ "mpi-rmem", mpi_setup, NULL, mpi_run, NULL, NULL, 0 },
	{ "mpi-put", mpi_put_setup, NULL, mpi_put_run, NULL, NULL, 0 },
};
const int nops = (int)(sizeof ops / sizeof ops[0]);

const struct op *op_find(const char *name, int len)
{
	for (int k = 0; k < nops; k++)
		if ((int)strlen(ops[k].name) == len && strncmp(ops[k].name, name, (size_t)len) == 0)
			return &ops[k];
	return NULL;
}
