/*
 * stages: where the time of one remote-memory WRITE, READ and
 * compare-and-swap and one remote enqueue goes, stage by stage, across
 * nodes 0 and 1 (kernel/trace.h).
 *
 * First the two nodes' TSCs are aligned by the fabric
 * (fabric_clock_offset: the probe with the shortest round trip, as NTP
 * does, within half that round trip).  Then, for each of `iters`
 * operations of each kind in ops=: node 0 arms node 1 (which starts
 * tracing and says so), starts tracing itself, and runs one WRITE (40
 * bytes, one way), READ (40 bytes, round trip), CAS (round trip) or REQ
 * (one word, one way) or a hybrid deposit (32 bytes, one way); node 1
 * sends back its record once the operation has passed through it.  Node 0 puts both records on its
 * clock and prints, for every step from one stage to the next, the median
 * and 99th percentile over the iterations:
 *
 *	RESULT stages op=write from=n0.app_call to=n0.mech_send median_ns=.. p99_ns=..
 *
 * A step between the nodes includes the alignment's error (printed).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "apps/app.h"
#include "apps/stats.h"
#include "kernel/sync.h"
#include "kernel/thread.h"
#include "kernel/trace.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"
#include "net/fabric/fabric.h"
#include "net/deposit/deposit.h"
#include "net/req/req.h"
#include "net/rmem/rmem.h"

#define PROBES 200
#define WAIT_NS 2000000000ULL
#define SETTLE_NS 20000ULL		/* node 0, armed and before the operation */
#define PASS_NS 2000000ULL		/* node 1, armed: the operation has passed by then */

enum { M_ARM = 'A', M_ARMED = 'B', M_REC = 'R', M_END = 'E' };
enum { OP_WRITE, OP_READ, OP_CAS, OP_REQ, OP_DEPOSIT, OP_N };
static const char *const op_names[OP_N] = { "write", "read", "cas", "req", "deposit" };

struct msg {
	uint8_t kind, op;
	uint16_t pad;
	uint32_t seq;
	struct trace_rec rec;
} __attribute__((packed));

/* One step of an operation's path: from (node, stage) to the next. */
struct stage_at {
	int node;
	enum trace_stage stage;
};

static const struct stage_at write_path[] = {
	{ 0, TS_APP_CALL }, { 0, TS_MECH_SEND }, { 0, TS_FABRIC_TX }, { 0, TS_NIC_TX },
	{ 1, TS_NIC_RX }, { 1, TS_FABRIC_RX }, { 1, TS_MECH_RX }, { 1, TS_MECH_DONE },
};
static const struct stage_at read_path[] = {
	{ 0, TS_APP_CALL }, { 0, TS_MECH_SEND }, { 0, TS_FABRIC_TX }, { 0, TS_NIC_TX },
	{ 1, TS_NIC_RX }, { 1, TS_FABRIC_RX }, { 1, TS_MECH_RX }, { 1, TS_MECH_SEND },
	{ 1, TS_FABRIC_TX }, { 1, TS_NIC_TX }, { 0, TS_NIC_RX }, { 0, TS_FABRIC_RX },
	{ 0, TS_MECH_RX }, { 0, TS_MECH_DONE }, { 0, TS_APP_WAKE },
};
#define MAX_STEPS 16

/* One way (WRITE, REQ) or a round trip through node 1's mechanism (READ, CAS). */
static int path_of(int op, const struct stage_at **path)
{
	if (op == OP_WRITE || op == OP_REQ || op == OP_DEPOSIT) {
		*path = write_path;
		return (int)(sizeof write_path / sizeof write_path[0]);
	}
	*path = read_path;
	return (int)(sizeof read_path / sizeof read_path[0]);
}

static int node1_queue = -1;	/* node 1's queue for REQs; node 0's handle to it */

/* Hybrid deposit: a duplex connection between nodes 0 and 1, a 32-byte deposit one way. */
#define DEP_VCI 60
#define DEP_EP_SIZE 4096
static struct dart_sendregs *dep_sr;
static const uint64_t dep_write =
	DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, CELL_COND(CMP_ALWAYS, 0, 0));

static int deposit_setup(void)
{
	static uint8_t ep_mem[DEP_EP_SIZE] __attribute__((aligned(4096)));
	int ep = dep_endpoint_create(ep_mem, sizeof ep_mem, DART_EP_READ | DART_EP_WRITE);
	struct dep_conn_cfg cfg = { 1 - node_id, ep, DART_RX | DART_TX, DEP_VCI, 0, 4, 0, 0, 0 };

	if (ep < 0 || dep_conn_open(DEP_VCI, &cfg) < 0 || !(dep_sr = dep_sendregs(DEP_VCI)))
		return -1;
	return 0;
}

static struct waitq wq = WAITQ_INIT;
static struct msg inbox;
static volatile int have_msg;

/* Raw frames of this app (irq): node 1 answers probes at once; the rest goes to the thread. */
static int stages_handler(int src, const uint8_t *p, size_t len, struct pktbuf *pb)
{
	struct msg m;

	(void)pb;
	if (len != sizeof m)
		return 0;
	memcpy(&m, p, sizeof m);
	inbox = m;
	have_msg = 1;
	waitq_wake_all(&wq);
	return 0;
}

/* The next message of kind (and seq), or -ETIMEDOUT. */
static int wait_msg(uint8_t kind, uint32_t seq, struct msg *out)
{
	uint64_t end = cycles() + ns_to_cycles(WAIT_NS);
	irqflags_t f = irq_save();
	int r = -ETIMEDOUT;

	while (cycles() < end) {
		if (have_msg) {
			have_msg = 0;
			if (inbox.kind == kind && inbox.seq == seq) {
				*out = inbox;
				r = 0;
				break;
			}
			continue;
		}
		waitq_wait_timeout(&wq, cycles_to_ns(end - cycles()));
	}
	irq_restore(f);
	return r;
}

/* A raw frame; the NIC's ring may be full for a moment: try again. */
static int send_msg(int dst, struct msg *m)
{
	int r;

	for (int tries = 0; (r = fabric_raw_send(dst, APP_PROTO_STAGES, m, sizeof *m)) < 0 && tries < 100;
	     tries++)
		thread_sleep_ns(100000);
	return r;
}

/* Node 1: arm, trace one operation, send the record back; until node 0 ends. */
static int serve(void)
{
	for (;;) {
		struct msg m, r;
		uint64_t end = cycles() + ns_to_cycles(60000000000ULL);
		irqflags_t f = irq_save();
		while (!have_msg && cycles() < end)
			waitq_wait_timeout(&wq, cycles_to_ns(end - cycles()));
		int got = have_msg;
		have_msg = 0;
		m = inbox;
		irq_restore(f);
		if (!got) {
			printf("stages: node 0 went quiet\n");
			return 1;
		}
		if (m.kind == M_END)
			return 0;
		if (m.kind != M_ARM)
			continue;
		r = m;
		r.kind = M_ARMED;
		if (send_msg(0, &r) < 0)
			return 1;
		trace_start();
		/*
		 * The operation passes within a few microseconds; this node
		 * sleeps meanwhile, its CPU waiting on the link as it would.
		 */
		thread_sleep_ns(PASS_NS);
		struct trace_rec rec;
		trace_stop(&rec);
		for (uint32_t w; node1_queue >= 0 && req_dequeue(node1_queue, &w) == 1;)
			;	/* the REQs' words: taken, so that the queue never fills */
		r.rec = rec;
		r.kind = M_REC;
		if (send_msg(0, &r) < 0)
			return 1;
	}
}

/* Node 0: one traced operation; the two records in *mine and *theirs.  0 or -errno. */
static int traced(int op, uint32_t seq, int rd, int lseg, uint8_t *buf, struct trace_rec *mine,
		  struct trace_rec *theirs)
{
	struct msg m = { .kind = M_ARM, .op = (uint8_t)op, .seq = seq }, a;
	int r;

	have_msg = 0;
	if ((r = send_msg(1, &m)) < 0 || (r = wait_msg(M_ARMED, seq, &a)) < 0)
		return r;
	thread_sleep_ns(SETTLE_NS);		/* whatever was in flight has passed */
	trace_start();
	trace_point(TS_APP_CALL);
	if (op == OP_WRITE) {
		r = rmem_write(rd, 0, buf, 40, 0);
	} else if (op == OP_READ) {
		int h = rmem_read(rd, 64, 40, lseg, 0, 0);
		r = h < 0 ? h : rmem_read_wait(h, WAIT_NS);
		trace_point(TS_APP_WAKE);
	} else if (op == OP_CAS) {
		uint64_t old;
		r = rmem_cas(rd, 128, seq, seq + 1, &old);
		trace_point(TS_APP_WAKE);
	} else if (op == OP_REQ) {
		r = req_enqueue(node1_queue, seq, 0);
	} else {
		r = dep_send(dep_sr, dep_write, seq, DART_IDX(0, 0, 0, 0xff), 0);
	}
	trace_stop(mine);
	if (r < 0)
		return r;
	if ((r = wait_msg(M_REC, seq, &a)) < 0)
		return r;
	*theirs = a.rec;
	return 0;
}

static void report(const char *opname, const struct stage_at *path, int n, struct samples *s,
		   uint64_t error)
{
	char a[32], b[32];

	for (int k = 1; k < n; k++) {
		uint64_t med = samples_quantile(&s[k], 0.5), p99 = samples_quantile(&s[k], 0.99);
		result("op=%s from=n%d.%s to=n%d.%s n=%zu median_ns=%lu p99_ns=%lu%s", opname, path[k - 1].node,
		       trace_names[path[k - 1].stage], path[k].node, trace_names[path[k].stage], s[k].n,
		       cycles_to_ns(med), cycles_to_ns(p99),
		       path[k - 1].node != path[k].node ? " between_nodes=1" : "");
	}
	uint64_t med = samples_quantile(&s[0], 0.5);
	printf("stages: %s: %s us in all (median); steps between the nodes are within %s us of "
	       "the truth (one that came out negative counts as 0)\n",
	       opname, fmt_us(a, sizeof a, med), fmt_us(b, sizeof b, error));
}

static const struct argspec stages_args[] = {
	{ "iters", ARG_INT, 1, 100000, "traced operations of each kind (default 200)" },
	{ "ops", ARG_STR, 0, 0,
	  "the kinds, comma-separated: write, read, cas, req, deposit (default write,read)" },
	{ NULL, 0, 0, 0, NULL },
};

static int stages_main(void)
{
	int iters = (int)arg_int("iters", 200), failed = 0, skipped = 0;
	static uint8_t seg_mem[4096] __attribute__((aligned(64)));
	int64_t offset = 0;
	uint64_t error = 0;

	if (!fabric_ready() || fabric_register_raw(APP_PROTO_STAGES, stages_handler) < 0 ||
	    fabric_wait_peers(30000000000ULL) < 0) {
		printf("stages: no network\n");
		return 1;
	}
	int seg = seg_export("stages", seg_mem, sizeof seg_mem, 0);
	if (seg < 0 || (node_id <= 1 && seg_grant(seg, 1 - node_id, RMEM_RW | RMEM_A) < 0))
		return 1;
	const char *ops = arg_str("ops", "write,read");
	int want[OP_N] = { 0 };
	for (int op = 0; op < OP_N; op++) {
		size_t n = strlen(op_names[op]);
		for (const char *p = ops; (p = strstr(p, op_names[op])) != NULL; p += n)
			if ((p == ops || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
				want[op] = 1;
	}
	if (node_id <= 1 && want[OP_DEPOSIT] && deposit_setup() < 0) {
		printf("stages: cannot open the deposit connection\n");
		return 1;
	}
	if (node_id == 1 && want[OP_REQ] &&
	    ((node1_queue = req_create(4096)) < 0 || req_export(node1_queue, "stages") < 0))
		return 1;
	if (fabric_barrier(30000000000ULL) < 0)
		return 1;
	if (node_id == 1)
		failed = serve();
	if (node_id != 0)
		goto out;

	int rd = rmem_import_wait(1, "stages", 10000000000ULL);
	if (want[OP_REQ])
		for (int t = 0; t < 100 && (node1_queue = req_import(1, "stages")) < 0; t++)
			thread_sleep_ns(10000000);
	if (rd < 0 || (want[OP_REQ] && node1_queue < 0) ||
	    fabric_clock_offset(1, PROBES, &offset, &error) < 0) {
		printf("stages: cannot import node 1's segment or queue, or align the clocks\n");
		failed = 1;
		goto end;
	}
	printf("stages: node 1's TSC is node 0's %+ld cycles (within %lu ns)\n", offset,
	       cycles_to_ns(error));
	for (int op = 0; op < OP_N; op++) {
		const struct stage_at *path;
		int n = path_of(op, &path);
		if (!want[op])
			continue;
		struct samples s[MAX_STEPS];
		for (int k = 0; k < n; k++)
			if (samples_init(&s[k], (size_t)iters) < 0)
				return 1;
		for (int i = 0; i < iters; i++) {
			struct trace_rec rec[2];
			int r = traced(op, (uint32_t)(op * iters + i), rd, seg, seg_mem, &rec[0], &rec[1]);
			if (r < 0) {
				/* A record lost on the way (raw frames): skip it, but not many. */
				printf("stages: %s %d of %d: no record (%d)\n", op_names[op], i + 1, iters, r);
				if (++skipped > iters / 10 + 1) {
					failed++;
					break;
				}
				continue;
			}
			/* Node 1's stamps on node 0's clock; a stage that never came spoils the run. */
			int ok = 1;
			uint64_t t[MAX_STEPS];
			for (int k = 0; k < n; k++) {
				uint64_t v = rec[path[k].node].t[path[k].stage];
				ok &= v != 0;
				t[k] = path[k].node ? (uint64_t)((int64_t)v - offset) : v;
			}
			if (!ok)
				continue;
			samples_add(&s[0], t[n - 1] - t[0]);
			for (int k = 1; k < n; k++)
				samples_add(&s[k], t[k] >= t[k - 1] ? t[k] - t[k - 1] : 0);
		}
		if (s[0].n == 0) {
			printf("stages: no complete record of a %s\n", op_names[op]);
			failed++;
		} else {
			report(op_names[op], path, n, s, error);
		}
		for (int k = 0; k < n; k++)
			samples_free(&s[k]);
	}
end:;
	struct msg e = { .kind = M_END };
	send_msg(1, &e);
out:
	fabric_barrier(30000000000ULL);
	return failed ? 1 : 0;
}

static const struct app stages = {
	.name = "stages",
	.summary = "remote WRITE, READ, CAS and REQ broken down by stage across nodes 0 and 1",
	.main = stages_main,
	.args = stages_args,
	.min_nodes = 2,
};
APP_REGISTER(stages);
