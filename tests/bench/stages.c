/*
 * stages: where one operation's time goes, stage by stage, across nodes 0
 * and 1 (kernel/trace.h), for each operation of tests/bench/ops.h named in ops=.
 *
 * First the two nodes' TSCs are aligned by the fabric
 * (fabric_clock_offset: the probe with the shortest round trip, as NTP
 * does, within half that round trip).  Then, for each of `iters`
 * operations of each kind: node 0 arms node 1 (which starts tracing and
 * says so), starts tracing itself and runs one operation, then tells node
 * 1 to stop (on the reliable channel, so behind every frame of the
 * operation); node 1 lets what the operation woke finish, stops, and
 * sends back its record, the marks of the stop itself left out.  Arming
 * goes on the reliable channel and asks for an acknowledgement at once,
 * so that both nodes start every operation with nothing outstanding and
 * nothing to acknowledge: every operation takes the same path, and under
 * -icount the same instructions (make cost).  Node 0 puts
 * both records on its clock and prints, for every step from one stage to
 * the next of the operation's path, the median and 99th percentile over
 * the iterations:
 *
 *	RESULT stages op=write from=n0.app_call to=n0.mech_send median_ns=.. p99_ns=..
 *
 * A step between the nodes includes the alignment's error (printed).
 *
 * With marks=1 each node also prints, after every operation, every mark
 * it logged, as TSC cycles since its first (under QEMU's -icount these
 * are instructions: boot/tools/cost reads them), and what one mark costs:
 *
 *	MARKS op=write i=3 node=1 lost=0 m=nic_rx:0,fabric_rx:58,...
 *	MARKS node=1 mark_cost=21
 *
 * In that mode every operation of tests/bench/ops.h may be named, also those
 * without a path across the nodes (an RPC, a Madeleine message, TCP).
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
#include "net/call/barrier.h"
#include "net/fabric/fabric.h"
#include "net/net.h"
#include "tests/apps/protos.h"
#include "tests/bench/ops.h"

#define PROBES 200
#define WAIT_NS 2000000000ULL
#define SETTLE_NS 100000ULL		/* node 0, after the operation: what it left to do is done */
#define MAX_OPS 24
#define MAX_STEPS 16

enum { M_ARM = 'A', M_ARMED = 'B', M_STOP = 'S', M_REC = 'R', M_END = 'E' };

struct msg {
	uint8_t kind, op;
	uint16_t pad;
	uint32_t seq;
	uint64_t t[TS_N];		/* M_REC: node 1's first marks */
} __attribute__((packed));

static struct waitq wq = WAITQ_INIT;
static int marks;			/* marks=1: print every mark */

/*
 * The last message of each kind, and whether it is new: one box per kind,
 * so that a message never hides another that came before the thread
 * looked (node 1's record may follow its "armed" at once when the host
 * stalls this node's CPU).
 */
enum { BOX_ARM, BOX_ARMED, BOX_STOP, BOX_REC, BOX_END, NBOX };
static struct msg box[NBOX];
static volatile int box_full[NBOX];
static uint32_t stop_at;		/* node 1: its log up to the stop's arrival */

static int box_of(uint8_t kind)
{
	return kind == M_ARM ? BOX_ARM : kind == M_ARMED ? BOX_ARMED : kind == M_STOP ? BOX_STOP :
	       kind == M_REC ? BOX_REC : kind == M_END ? BOX_END : -1;
}

/* Messages of this app, raw and reliable (irq): to the thread. */
static int stages_handler(int src, const uint8_t *p, size_t len, struct pktbuf *pb)
{
	int b;

	(void)src;
	(void)pb;
	if (len != sizeof(struct msg) || (b = box_of(p[0])) < 0)
		return 0;
	if (b == BOX_STOP) {
		/* The operation's marks end where this frame's began (its own are not the operation's). */
		stop_at = trace_cur.n;
		while (stop_at && trace_cur.s[stop_at - 1] != TS_NIC_RX)
			stop_at--;
		if (stop_at)
			stop_at--;
	}
	memcpy(&box[b], p, sizeof box[b]);
	box_full[b] = 1;
	waitq_wake_all(&wq);
	return 0;
}

/*
 * The next message of kind (and seq, but for M_ARM), or M_END: 0 with it
 * in *out, or -ETIMEDOUT.
 */
static int wait_msg(uint8_t kind, uint32_t seq, struct msg *out, uint64_t timeout_ns)
{
	uint64_t end = cycles() + ns_to_cycles(timeout_ns);
	irqflags_t f = irq_save();
	int b = box_of(kind), r = -ETIMEDOUT;

	while (cycles() < end) {
		if (box_full[BOX_END]) {
			*out = box[BOX_END];
			r = 0;
			break;
		}
		if (box_full[b]) {
			box_full[b] = 0;
			if (kind == M_ARM || box[b].seq == seq) {
				*out = box[b];
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

/* marks=1: every mark of this node's record, as cycles since the first. */
static void print_marks(const char *opname, uint32_t i, const struct trace_rec *r)
{
	char line[TRACE_LOG * 24 + 96];
	int len = snprintf(line, sizeof line, "MARKS op=%s i=%u node=%d lost=%u m=", opname, i, node_id,
			   r->lost);

	for (uint32_t k = 0; k < r->n && len < (int)sizeof line - 24; k++)
		len += snprintf(line + len, sizeof line - (size_t)len, "%s%s:%lu", k ? "," : "",
				trace_name(r->s[k]), r->at[k] - r->at[0]);
	printf("%s\n", line);
}

/* Node 1: arm, trace one operation, send the record back; until node 0 ends. */
static int serve(void)
{
	for (;;) {
		struct msg m, r;
		if (wait_msg(M_ARM, 0, &m, 60000000000ULL) < 0) {
			printf("stages: node 0 went quiet\n");
			return 1;
		}
		if (m.kind == M_END)
			return 0;
		if (m.op >= nops)
			continue;
		r = m;
		r.kind = M_ARMED;
		/* Tracing before anything of the operation can arrive: it follows the answer. */
		irqflags_t f = irq_save();
		int sent = send_msg(0, &r);
		trace_start();
		irq_restore(f);
		if (sent < 0)
			return 1;
		/*
		 * Node 0 says when the operation has passed (its stop follows
		 * every frame of it on the link); this node waits on the link
		 * meanwhile, as it would, and then lets what the operation woke
		 * finish before it stops tracing.
		 */
		struct msg stop;
		if (wait_msg(M_STOP, m.seq, &stop, 60000000000ULL) < 0 || stop.kind == M_END) {
			trace_stop(NULL);
			return stop.kind == M_END ? 0 : 1;
		}
		for (int k = 0; k < 100 && thread_runnable(); k++)
			thread_yield();
		static struct trace_rec rec;
		trace_stop(&rec);
		if (stop_at < rec.n)
			rec.n = stop_at;
		if (ops[m.op].tidy)
			ops[m.op].tidy();
		memcpy(r.t, rec.t, sizeof r.t);
		r.kind = M_REC;
		if (marks)
			print_marks(ops[m.op].name, m.seq & 0xfffff, &rec);
		if (send_msg(0, &r) < 0)
			return 1;
	}
}

/*
 * Node 0: one traced operation; its record in *mine, node 1's first marks
 * in theirs.  0 or -errno.
 *
 * The arming message goes on the reliable channel and asks for an
 * acknowledgement at once: it carries node 0's acknowledgement of what
 * node 1 sent, node 1's acknowledges it and everything before it, so both
 * nodes start every operation with nothing outstanding and nothing to
 * acknowledge, and each operation takes the same path.
 */
static int traced(int k, uint32_t seq, uint32_t i, struct trace_rec *mine, uint64_t *theirs)
{
	struct msg m = { .kind = M_ARM, .op = (uint8_t)k, .seq = seq }, a;
	int r;

	if ((r = fabric_send(1, APP_PROTO_STAGES, &m, sizeof m, NULL, 0, FABRIC_ACKNOW)) < 0 ||
	    (r = wait_msg(M_ARMED, seq, &a, WAIT_NS)) < 0)
		return r;
	trace_start();
	trace_point(TS_APP_CALL);
	r = ops[k].run(i);
	trace_point(TS_APP_RETURN);
	trace_stop(mine);
	/*
	 * What the operation left to this node's threads (lwIP's) goes out
	 * before the stop; on a lossy link also node 1's acknowledgement of
	 * it (sent when node 1 goes idle), so that it is always inside node
	 * 1's record, never after it.
	 */
	thread_sleep_ns(SETTLE_NS);
	if (!net_link_lossless())
		fabric_flush(1, WAIT_NS);
	m.kind = M_STOP;
	if (fabric_send(1, APP_PROTO_STAGES, &m, sizeof m, NULL, 0, 0) < 0 && r == 0)
		r = -EIO;
	if (r < 0)
		return r;
	if ((r = wait_msg(M_REC, seq, &a, WAIT_NS)) < 0)
		return r;
	memcpy(theirs, a.t, sizeof a.t);
	return 0;
}

static void report(const char *opname, const struct op_stage *path, int n, struct samples *s,
		   uint64_t error)
{
	char a[32], b[32];

	for (int k = 1; k < n; k++) {
		uint64_t med = samples_quantile(&s[k], 0.5), p99 = samples_quantile(&s[k], 0.99);
		result("op=%s from=n%d.%s to=n%d.%s n=%zu median_ns=%lu p99_ns=%lu%s", opname, path[k - 1].node,
		       trace_name(path[k - 1].stage), path[k].node, trace_name(path[k].stage), s[k].n,
		       cycles_to_ns(med), cycles_to_ns(p99),
		       path[k - 1].node != path[k].node ? " between_nodes=1" : "");
	}
	uint64_t med = samples_quantile(&s[0], 0.5);
	printf("stages: %s: %s us in all (median); steps between the nodes are within %s us of "
	       "the truth (one that came out negative counts as 0)\n",
	       opname, fmt_us(a, sizeof a, med), fmt_us(b, sizeof b, error));
}

/* iters operations of kind k; the steps of its path.  0, or 1 if it failed. */
static int run_op(int k, int iters, int64_t offset, uint64_t error)
{
	const struct op *op = &ops[k];
	int n = op->npath, skipped = 0, failed = 0;
	struct samples s[MAX_STEPS];
	static struct trace_rec mine;
	uint64_t theirs[TS_N];

	for (int j = 0; j < n; j++)
		if (samples_init(&s[j], (size_t)iters) < 0)
			return 1;
	for (int i = 0; i < iters; i++) {
		int r = traced(k, (uint32_t)k << 20 | (uint32_t)i, (uint32_t)i, &mine, theirs);
		if (r < 0) {
			/* A record lost on the way (raw frames, on Ethernet): skip it, but not many. */
			printf("stages: %s %d of %d: no record (%d)\n", op->name, i + 1, iters, r);
			if (++skipped > iters / 10 + 1) {
				failed = 1;
				break;
			}
			continue;
		}
		if (marks)
			print_marks(op->name, (uint32_t)i, &mine);
		/* Node 1's stamps on node 0's clock; a stage that never came spoils the run. */
		int ok = n > 0;
		uint64_t t[MAX_STEPS];
		for (int j = 0; j < n; j++) {
			uint64_t v = op->path[j].node ? theirs[op->path[j].stage] : mine.t[op->path[j].stage];
			ok &= v != 0;
			t[j] = op->path[j].node ? (uint64_t)((int64_t)v - offset) : v;
		}
		if (!ok)
			continue;
		samples_add(&s[0], t[n - 1] - t[0]);
		for (int j = 1; j < n; j++)
			samples_add(&s[j], t[j] >= t[j - 1] ? t[j] - t[j - 1] : 0);
	}
	if (n && s[0].n == 0 && !failed) {
		printf("stages: no complete record of a %s\n", op->name);
		failed = 1;
	} else if (n && !failed) {
		report(op->name, op->path, n, s, error);
	}
	for (int j = 0; j < n; j++)
		samples_free(&s[j]);
	return failed;
}

static const struct argspec stages_args[] = {
	{ "iters", ARG_INT, 1, 1000000, "traced operations of each kind (default 200)" },
	{ "ops", ARG_STR, 0, 0,
	  "the kinds, comma-separated, of tests/bench/ops.h: raw, reliable, write, write-sync, read, cas, fadd, req, "
	  "req-notify, deposit, deposit-rtt, rpc-simple, mad-rmem, mad-req, mad-cell, tcp-1B, mpi-rmem, "
	  "mpi-put (default write,read)" },
	{ "marks", ARG_INT, 0, 1, "1: every node prints every mark of every operation (make cost)" },
	{ NULL, 0, 0, 0, NULL },
};

/* The operations named in list, in order; their number, or -1 naming the unknown one. */
static int parse_ops(const char *list, int *want)
{
	int n = 0;

	for (const char *p = list; *p;) {
		const char *e = strchr(p, ',');
		int len = e ? (int)(e - p) : (int)strlen(p);
		const struct op *op = op_find(p, len);
		if (!op || n == MAX_OPS) {
			printf("stages: ops=: '%.*s' is not an operation (%s)\n", len, p,
			       "raw, reliable, write, write-sync, read, cas, fadd, req, req-notify, deposit, "
			       "deposit-rtt, rpc-simple, mad-rmem, mad-req, mad-cell, tcp-1B, mpi-rmem, mpi-put, "
			       "write-unreliable, read-unreliable");
			return -1;
		}
		if (!op->npath && !marks) {
			printf("stages: %s has no path across the nodes to align: give marks=1\n", op->name);
			return -1;
		}
		want[n++] = (int)(op - ops);
		p += len;
		if (*p == ',')
			p++;
	}
	return n;
}

static int stages_main(void)
{
	int iters = (int)arg_int("iters", 200), failed = 0, want[MAX_OPS], nwant;
	int64_t offset = 0;
	uint64_t error = 0;

	marks = (int)arg_int("marks", 0);
	if ((nwant = parse_ops(arg_str("ops", "write,read"), want)) < 0)
		return 2;
	if (!fabric_ready() || fabric_register_raw(APP_PROTO_STAGES, stages_handler) < 0 ||
	    fabric_register(APP_PROTO_STAGES, stages_handler) < 0 ||
	    fabric_wait_peers(30000000000ULL) < 0) {
		printf("stages: no network\n");
		return 1;
	}
	if (marks)
		printf("MARKS node=%d mark_cost=%lu\n", node_id, trace_mark_cost());
	for (int j = 0; j < nwant && node_id <= 1; j++) {
		if (ops[want[j]].setup && ops[want[j]].setup() < 0) {
			printf("stages: cannot set up %s\n", ops[want[j]].name);
			return 1;
		}
	}
	if (cluster_barrier(30000000000ULL) < 0)
		return 1;
	if (node_id == 1)
		failed = serve();
	if (node_id != 0)
		goto out;

	for (int j = 0; j < nwant; j++) {
		if (ops[want[j]].bind && ops[want[j]].bind() < 0) {
			printf("stages: cannot reach node 1 for %s\n", ops[want[j]].name);
			failed = 1;
			goto end;
		}
	}
	if (fabric_clock_offset(1, PROBES, &offset, &error) < 0) {
		printf("stages: cannot align the clocks\n");
		failed = 1;
		goto end;
	}
	printf("stages: node 1's TSC is node 0's %+ld cycles (within %lu ns)\n", offset,
	       cycles_to_ns(error));
	for (int j = 0; j < nwant; j++)
		failed |= run_op(want[j], iters, offset, error);
end:;
	struct msg e = { .kind = M_END };
	send_msg(1, &e);
out:
	cluster_barrier(30000000000ULL);
	return failed ? 1 : 0;
}

APP(stages, "stages",
    "one operation at a time, stage by stage across nodes 0 and 1 (marks=1: every mark)",
    stages_main, stages_args, 2);
