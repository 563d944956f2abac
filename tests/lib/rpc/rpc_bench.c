/*
 * Bench rows for RPC over remote memory (remote-memory paper 3.1.3, Table
 * 4): node 1 serves, node 0 times full round trips of rpc_call.
 *
 *   rpc-simple   four 32-bit integer arguments, one integer result
 *   rpc-mw32     32 32-bit words of arguments, an integer result
 *   rpc-mw64     64 words
 *   rpc-mw128    128 words
 *   rpc-simple-raw   rpc-simple with RPC_UNRELIABLE: call and result as raw
 *                frames, the paper's setting (its RPC ran its own 3.1.2
 *                transport on the bare network); the others use the
 *                default transport, the fabric's reliable channel
 *   rpc-ref-1k   call-by-reference (3.1.1): the argument is a reference to
 *                1 KiB of the caller's memory, which the procedure reads
 *                with remote READs; its CRC is the result
 *   rpc-concurrent   rpc-simple timed on one thread while three more threads
 *                call on the same binding without pause: four calls in
 *                flight on one binding, each on a stack of its own
 *
 * The paper's MW rows spanned several 40-byte ATM cells; here a frame
 * carries up to 1376 argument bytes, so all four are one frame each way.
 * Every result is checked; a wrong one fails the row.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "apps/app.h"
#include "apps/stats.h"
#include "kernel/crc.h"
#include "kernel/thread.h"
#include "kernel/tsc.h"
#include "lib/rpc.h"
#include "net/call/barrier.h"
#include "net/fabric/fabric.h"
#include "net/rmem/rmem.h"
#include "tests/bench/bench.h"
#include "tests/lib/rpc/rpc_simple.h"

enum { P_SIMPLE = 1, P_SUM = 2, P_REF = 3 };
#define REF_LEN 1024
#define BUSY_THREADS 3

static int bench_sum(const void *args, size_t len, uint64_t *result)
{
	const uint32_t *w = args;
	uint64_t s = 0;

	for (size_t i = 0; i < len / 4; i++)
		s += w[i];
	*result = s;
	return 0;
}

/* The CRC of the 1 KiB a reference names, read from the caller. */
static int bench_ref(const void *args, size_t len, uint64_t *result)
{
	struct rpc_ref ref;
	const void *d;

	if (len != sizeof ref)
		return -EINVAL;
	memcpy(&ref, args, sizeof ref);
	int r = rpc_ref_read(&ref, 0, ref.len, &d);
	if (r == 0)
		*result = crc32c(0, d, ref.len);
	return r;
}

static struct rpc_server server;
static struct rpc_binding binding, binding_raw;
static int state;			/* 0: not set up, 1: ready, -1: failed */

/*
 * Once, on every node at the first RPC row: node 1 serves, everyone meets,
 * node 0 binds.  Return 0 or -1.
 */
static int setup(void)
{
	int r = 0;

	if (state)
		return state > 0 ? 0 : -1;
	if (node_id == 1) {
		r = rpc_server_init(&server, "bench");
		if (r == 0)
			r = rpc_register(&server, P_SIMPLE, rpc_simple_sum);
		if (r == 0)
			r = rpc_register(&server, P_SUM, bench_sum);
		if (r == 0)
			r = rpc_register(&server, P_REF, bench_ref);
		if (r == 0)
			r = rpc_serve(&server, BUSY_THREADS + 2);
	}
	if (cluster_barrier(60000000000ULL) < 0)
		r = -1;
	if (r == 0 && node_id == 0)
		r = rpc_bind(&binding, 1, "bench", 0, 30000000000ULL);
	if (r == 0 && node_id == 0)
		r = rpc_bind(&binding_raw, 1, "bench", RPC_UNRELIABLE, 30000000000ULL);
	if (r < 0)
		printf("rpc-bench: setup failed: %d\n", r);
	state = r < 0 ? -1 : 1;
	return r < 0 ? -1 : 0;
}

/* Node 0: warmup + iters calls with nwords words (0: Simple), timed. */
static int sample_rpc(const struct bench_opts *o, struct samples *s, int nwords, struct rpc_binding *b)
{
	uint32_t w[128];
	int32_t a[4];
	uint64_t want, res;

	if (setup() < 0)
		return -1;
	if (node_id != 0)
		return 0;
	for (int i = 0; i < 128; i++)
		w[i] = (uint32_t)(i * 2654435761u);
	for (int i = 0; i < o->warmup + o->iters; i++) {
		const void *args = nwords ? (const void *)w : (const void *)a;
		size_t len = nwords ? (size_t)nwords * 4 : sizeof a;
		uint32_t proc = nwords ? P_SUM : P_SIMPLE;
		if (nwords) {
			w[0] = (uint32_t)i;
			want = 0;
			for (int k = 0; k < nwords; k++)
				want += w[k];
		} else {
			a[0] = i;
			a[1] = -3;
			a[2] = 1000;
			a[3] = 7;
			want = (uint64_t)((int64_t)i + 1004);
		}
		uint64_t t0 = cycles();
		int r = rpc_call(b, proc, args, len, &res);
		uint64_t t1 = cycles();
		if (r != 0 || res != want) {
			printf("rpc-bench: call %d: %d, result %lu, expected %lu\n", i, r, res, want);
			return -1;
		}
		if (i >= o->warmup)
			samples_add(s, t1 - t0);
	}
	return 0;
}

static int sample_simple(const struct bench_opts *o, struct samples *s) { return sample_rpc(o, s, 0, &binding); }
static int sample_mw32(const struct bench_opts *o, struct samples *s) { return sample_rpc(o, s, 32, &binding); }
static int sample_mw64(const struct bench_opts *o, struct samples *s) { return sample_rpc(o, s, 64, &binding); }
static int sample_mw128(const struct bench_opts *o, struct samples *s) { return sample_rpc(o, s, 128, &binding); }
static int sample_simple_raw(const struct bench_opts *o, struct samples *s) { return sample_rpc(o, s, 0, &binding_raw); }

/* Node 0: calls whose argument is a reference to 1 KiB of its memory. */
static int sample_ref(const struct bench_opts *o, struct samples *s)
{
	static uint8_t buf[REF_LEN];
	struct rpc_ref ref;
	uint64_t res;
	int r;

	if (setup() < 0)
		return -1;
	if (node_id != 0)
		return 0;
	for (int i = 0; i < REF_LEN; i++)
		buf[i] = (uint8_t)(i * 7 + 1);
	if ((r = rpc_ref_make(&binding, &ref, buf, sizeof buf, RMEM_R)) < 0) {
		printf("rpc-bench: reference: %d\n", r);
		return -1;
	}
	for (int i = 0; i < o->warmup + o->iters; i++) {
		buf[0] = (uint8_t)i;
		uint64_t want = crc32c(0, buf, sizeof buf), t0 = cycles();
		r = rpc_call(&binding, P_REF, &ref, sizeof ref, &res);
		uint64_t t1 = cycles();
		if (r != 0 || res != want) {
			printf("rpc-bench: call by reference %d: %d, result %lx, expected %lx\n", i, r, res, want);
			rpc_ref_drop(&ref);
			return -1;
		}
		if (i >= o->warmup)
			samples_add(s, t1 - t0);
	}
	rpc_ref_drop(&ref);
	return 0;
}

/* Threads that call on the shared binding until told to stop. */
static volatile int busy_stop;
static volatile int busy_failed;
static uint64_t busy_calls;

static void *busy_main(void *arg)
{
	int32_t a[4] = { 1, 2, 3, (int32_t)(uintptr_t)arg };
	uint64_t res;

	while (!busy_stop) {
		int r = rpc_call(&binding, P_SIMPLE, a, sizeof a, &res);
		if (r != 0 || res != (uint64_t)(6 + a[3]))
			busy_failed = r ? r : -EBADMSG;
		__atomic_fetch_add(&busy_calls, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* Node 0: rpc-simple with three more threads calling on the same binding meanwhile. */
static int sample_concurrent(const struct bench_opts *o, struct samples *s)
{
	struct thread *t[BUSY_THREADS];
	int n = 0, r;

	if (setup() < 0)
		return -1;
	if (node_id != 0)
		return 0;
	busy_stop = 0;
	busy_failed = 0;
	for (; n < BUSY_THREADS; n++)
		if (!(t[n] = thread_create("rpc-busy", busy_main, (void *)(uintptr_t)n, PRIO_NORMAL, 0)))
			break;
	r = n == BUSY_THREADS ? sample_rpc(o, s, 0, &binding) : -1;
	busy_stop = 1;
	for (int i = 0; i < n; i++)
		thread_join(t[i]);
	if (busy_failed) {
		printf("rpc-bench: a concurrent call failed: %d\n", busy_failed);
		return -1;
	}
	return r;
}

static const char *concurrent_note(void)
{
	static char buf[48];

	snprintf(buf, sizeof buf, "busy_calls=%lu", (unsigned long)busy_calls);
	return buf;
}

static const struct bench rpc_simple_bench = {
	.name = "rpc-simple", .summary = "RPC over remote memory: 4 integer arguments, integer result (paper Table 4)",
	.sample = sample_simple, .extra = "args=16",
};
static const struct bench rpc_mw32_bench = {
	.name = "rpc-mw32", .summary = "RPC over remote memory: 32 words of arguments, integer result",
	.sample = sample_mw32, .extra = "args=128",
};
static const struct bench rpc_mw64_bench = {
	.name = "rpc-mw64", .summary = "RPC over remote memory: 64 words of arguments, integer result",
	.sample = sample_mw64, .extra = "args=256",
};
static const struct bench rpc_mw128_bench = {
	.name = "rpc-mw128", .summary = "RPC over remote memory: 128 words of arguments, integer result",
	.sample = sample_mw128, .extra = "args=512",
};
static const struct bench rpc_simple_raw_bench = {
	.name = "rpc-simple-raw", .summary = "rpc-simple with raw frames and the paper's own transport (3.1.2)",
	.sample = sample_simple_raw, .extra = "args=16 transport=unreliable",
};
BENCH_REGISTER(rpc_simple_bench, 40_rpc_simple);
BENCH_REGISTER(rpc_mw32_bench, 41_rpc_mw32);
BENCH_REGISTER(rpc_mw64_bench, 42_rpc_mw64);
BENCH_REGISTER(rpc_mw128_bench, 43_rpc_mw128);
static const struct bench rpc_ref_bench = {
	.name = "rpc-ref-1k", .summary = "RPC with a call-by-reference argument: the server reads 1 KiB of the caller",
	.sample = sample_ref, .extra = "args=16 ref=1024",
};
static const struct bench rpc_concurrent_bench = {
	.name = "rpc-concurrent", .summary = "rpc-simple with three more threads calling on the same binding",
	.sample = sample_concurrent, .extra = "args=16 threads=4", .base = "rpc-simple", .note = concurrent_note,
};
BENCH_REGISTER(rpc_simple_raw_bench, 44_rpc_simple_raw);
BENCH_REGISTER(rpc_ref_bench, 45_rpc_ref_1k);
BENCH_REGISTER(rpc_concurrent_bench, 46_rpc_concurrent);
