/*
 * rpc-test: RPC over remote memory (lib/rpc.h; remote-memory paper 3.1).
 *
 * Node 0 serves "test"; every other node runs `threads` client threads at
 * once, each bound to its own argument stack, each making `iters` rounds
 * of the paper's calls (3.1.3: Simple = four integers, MW-32/64/128 =
 * 32/64/128 words) and a multi-frame call (4 KiB of arguments, or 9000
 * bytes every fourth round), every result checked.  Then node 1 proves
 * that a stack is write-protected while its procedure runs: one thread
 * calls a slow procedure while another writes into the stack and must get
 * -EROFS, and the procedure finds its arguments intact; a third node must
 * not even import a bound stack.  Node 0 checks that it ran exactly as
 * many calls as the clients made (at most once, none lost).
 *
 * transport=unreliable sends calls and their answers as raw frames; with
 * fault=drop:.. some are lost and the selective acknowledgement of 3.1.2
 * has the client rewrite only the missing ones, which each client counts
 * (rewritten=; timeouts= counts header frames written again because
 * nothing came back).  Over the reliable channel nothing is ever missing.
 * Every node ends with
 *	RESULT rpc-test calls=.. failed=.. rewritten=.. role=client|server ...
 * (for the server, calls run and frames it asked to be rewritten).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/app.h"
#include "apps/check.h"
#include "kernel/crc.h"
#include "kernel/sync.h"
#include "kernel/thread.h"
#include "kernel/tsc.h"
#include "lib/rpc.h"
#include "net/fabric/fabric.h"
#include "net/rmem/rmem.h"

#define BARRIER_NS 300000000000ULL
#define BIND_NS 60000000000ULL
#define SLOW_MAX_NS 60000000000ULL
#define SLOW_LEN 256
#define BIG_LEN 4096
#define HUGE_LEN 9000

enum { P_SIMPLE = 1, P_SUM = 2, P_CRC = 3, P_SLOW = 4, P_FAIL = 5, P_NONE = 9 };
enum { KINDS = 5 };			/* calls per round: Simple, MW-32, MW-64, MW-128, multi-frame */

/* --- the procedures (node 0) ------------------------------------------------ */

static int proc_simple(const void *args, size_t len, uint64_t *result)
{
	int32_t a[4];

	if (len != sizeof a)
		return -EINVAL;
	memcpy(a, args, sizeof a);
	*result = (uint64_t)((int64_t)a[0] + 2 * (int64_t)a[1] + 3 * (int64_t)a[2] + 4 * (int64_t)a[3]);
	return 0;
}

/* A position-weighted sum: a word in the wrong place changes it. */
static uint64_t weighted(const uint32_t *w, size_t n)
{
	uint64_t s = 0;

	for (size_t i = 0; i < n; i++)
		s += (uint64_t)(i + 1) * w[i];
	return s;
}

static int proc_sum(const void *args, size_t len, uint64_t *result)
{
	if (len % 4)
		return -EINVAL;
	*result = weighted(args, len / 4);
	return 0;
}

static int proc_crc(const void *args, size_t len, uint64_t *result)
{
	*result = (uint64_t)len << 32 | crc32c(0, args, len);
	return 0;
}

static uint8_t slow_pat(size_t i)
{
	return (uint8_t)(i * 11 + 5);
}

/* Node 0's gate: the slow procedure runs until a client writes it (or SLOW_MAX_NS). */
static volatile uint64_t gate;

/*
 * Wait for the gate with the stack write-protected; fail if the arguments
 * changed meanwhile.  The gate holds the call running for as long as the
 * client probes it, however slow the host.
 */
static int proc_slow(const void *args, size_t len, uint64_t *result)
{
	const volatile uint8_t *p = args;
	uint64_t end = cycles() + ns_to_cycles(SLOW_MAX_NS);

	if (len != SLOW_LEN)
		return -EINVAL;
	for (size_t i = 0; i < len; i++)
		if (p[i] != slow_pat(i))
			return -EBADMSG;
	while (!gate && cycles() < end)
		thread_sleep_ns(1000000);
	gate = 0;
	for (size_t i = 0; i < len; i++)
		if (p[i] != slow_pat(i))
			return -EIO;
	*result = 1;
	return 0;
}

static int proc_fail(const void *args, size_t len, uint64_t *result)
{
	*result = 77;
	return -EDOM;
}

/* --- clients ------------------------------------------------------------------ */

struct client {
	int id;
	int flags;
	int iters;
	uint32_t rng;
	struct rpc_client_stats stats;
	int done;
};

static uint32_t rnd(uint32_t *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 1;
}

static void fill(uint32_t *s, void *buf, size_t len)
{
	uint8_t *p = buf;

	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(rnd(s) >> 7);
}

static void *client_main(void *arg)
{
	struct client *c = arg;
	struct rpc_binding b;
	uint32_t w[128];
	uint8_t *big = malloc(HUGE_LEN);
	uint64_t res;
	int r;

	r = rpc_bind(&b, 0, "test", c->flags, BIND_NS);
	EXPECT(r == 0, "client %d: bind: %d", c->id, r);
	if (r < 0 || !big) {
		free(big);
		return NULL;
	}
	for (int it = 0; it < c->iters; it++) {
		/* Simple: four integer arguments, one integer result. */
		int32_t a[4];
		fill(&c->rng, a, sizeof a);
		r = rpc_call(&b, P_SIMPLE, a, sizeof a, &res);
		EXPECT(r == 0 && res == (uint64_t)((int64_t)a[0] + 2 * (int64_t)a[1] + 3 * (int64_t)a[2] +
						  4 * (int64_t)a[3]),
		       "client %d: simple: %d", c->id, r);
		/* MW-32, MW-64, MW-128: that many 32-bit words, an integer result. */
		for (int n = 32; n <= 128; n *= 2) {
			fill(&c->rng, w, (size_t)n * 4);
			r = rpc_call(&b, P_SUM, w, (size_t)n * 4, &res);
			EXPECT(r == 0 && res == weighted(w, (size_t)n), "client %d: mw-%d: %d", c->id, n, r);
		}
		/* More than one frame: the 3.1.2 transport. */
		size_t len = it % 4 == 3 ? HUGE_LEN : BIG_LEN;
		fill(&c->rng, big, len);
		r = rpc_call(&b, P_CRC, big, len, &res);
		EXPECT(r == 0 && res == ((uint64_t)len << 32 | crc32c(0, big, len)),
		       "client %d: %zu-byte call: %d", c->id, len, r);
	}
	c->stats = b.stats;
	r = rpc_unbind(&b);
	EXPECT(r == 0, "client %d: unbind: %d", c->id, r);
	free(big);
	return NULL;
}

/* --- write protection (node 1; node 2 looks from outside) ------------------------ */

struct slow_call {
	struct rpc_binding *b;
	volatile int started, finished;
	int r;
	uint64_t res;
};

static void *slow_main(void *arg)
{
	struct slow_call *s = arg;
	uint8_t a[SLOW_LEN];

	for (size_t i = 0; i < sizeof a; i++)
		a[i] = slow_pat(i);
	s->started = 1;
	s->r = rpc_call(s->b, P_SLOW, a, sizeof a, &s->res);
	s->finished = 1;
	return NULL;
}

/* Node 1: a client writing into a busy stack gets -EROFS. */
static void protect_checks(struct rpc_binding *b)
{
	struct slow_call s = { .b = b };
	uint8_t junk[64];
	char name[RMEM_NAME_MAX];
	uint64_t res = 0;
	int rd, r, busy = 0;

	memset(junk, 0xee, sizeof junk);
	snprintf(name, sizeof name, "rpc.test.%d", b->stack);
	/* Our own node keeps its rights on the stack: a second descriptor for it. */
	rd = rmem_import(0, name);
	EXPECT(rd >= 0, "import our own bound stack: %d", rd);
	if (rd < 0)
		return;
	struct thread *t = thread_create("rpc-slow", slow_main, &s, PRIO_NORMAL, 0);
	EXPECT(t != NULL, "thread");
	if (!t)
		return;
	/* Probe past the arguments until the stack is write-protected. */
	uint64_t end = cycles() + ns_to_cycles(5000000000ULL);
	while (!s.finished && cycles() < end) {
		r = rmem_write(rd, RPC_STACK_SIZE - 64, junk, 8, RMEM_SYNC);
		if (r == -EROFS) {
			busy = 1;
			break;
		}
		thread_sleep_ns(2000000);
	}
	EXPECT(busy, "the stack was never write-protected during the slow call");
	if (busy) {
		/* Over the running call's arguments (it runs until the gate opens): refused. */
		r = rmem_write(rd, RPC_STACK_ARGS_OFF, junk, sizeof junk, RMEM_SYNC);
		EXPECT(r == -EROFS, "write into a busy stack: %d", r);
	}
	/* Open the gate: the slow call returns. */
	uint64_t one = 1;
	int rg = rmem_import(0, "rpc-test.gate");
	EXPECT(rg >= 0, "import the gate: %d", rg);
	if (rg >= 0) {
		EXPECT(rmem_write(rg, 0, &one, 8, RMEM_SYNC) == 0, "open the gate");
		rmem_release(rg);
	}
	thread_join(t);
	EXPECT(s.r == 0 && s.res == 1, "slow call: %d result %lu (arguments changed?)", s.r, s.res);
	r = rmem_write(rd, RPC_STACK_SIZE - 64, junk, 8, RMEM_SYNC);
	EXPECT(r == 0, "stack writable again after the call: %d", r);
	rmem_release(rd);

	/* Errors come back as the procedure's value. */
	r = rpc_call(b, P_FAIL, NULL, 0, &res);
	EXPECT(r == -EDOM && res == 77, "failing procedure: %d result %lu", r, res);
	r = rpc_call(b, P_NONE, &res, sizeof res, &res);
	EXPECT(r == -ENOSYS, "unregistered procedure: %d", r);
	r = rpc_call(b, P_SIMPLE, junk, RPC_ARGS_MAX + 1, &res);
	EXPECT(r == -EMSGSIZE, "oversized call: %d", r);
}

/* Another node: a bound stack cannot even be imported; the free ones can. */
static void outsider_checks(int nstacks)
{
	char name[RMEM_NAME_MAX];
	int refused = 0, free_ok = 0;

	for (int k = 0; k < nstacks; k++) {
		snprintf(name, sizeof name, "rpc.test.%d", k);
		int rd = rmem_import(0, name);
		if (rd == -EACCES)
			refused++;
		else if (rd >= 0) {
			free_ok++;
			rmem_release(rd);
		}
	}
	EXPECT(refused == 1 && free_ok == nstacks - 1, "imports: %d refused, %d allowed of %d stacks",
	       refused, free_ok, nstacks);
}

/* --- the run ----------------------------------------------------------------------- */

static int sync_all(const char *where)
{
	int r = fabric_barrier(BARRIER_NS);
	if (r < 0)
		printf("rpc-test: barrier %s failed: %d\n", where, r);
	return r;
}

static const struct argspec rpc_test_args[] = {
	{ "iters", ARG_INT, 1, 100000, "rounds of calls per client thread (default 50)" },
	{ "threads", ARG_INT, 1, 8, "client threads per node (default 2)" },
	{ "transport", ARG_STR, 0, 0, "reliable (default) or unreliable: calls and answers as raw frames" },
	{ NULL, 0, 0, 0, NULL },
};

static int rpc_test_main(void)
{
	static struct rpc_server srv;
	int iters = (int)arg_int("iters", 50), nthreads = (int)arg_int("threads", 2);
	const char *transport = arg_str("transport", "reliable");
	int flags, nstacks = nthreads * (num_nodes - 1) + 1;
	struct client cl[8];
	struct thread *th[8];
	uint64_t t0;

	if (!strcmp(transport, "unreliable"))
		flags = RPC_UNRELIABLE;
	else if (!strcmp(transport, "reliable"))
		flags = 0;
	else {
		printf("rpc-test: transport= takes reliable or unreliable\n");
		return 1;
	}
	if (nstacks > RPC_MAX_STACKS)
		nstacks = RPC_MAX_STACKS;
	if (!fabric_ready() || fabric_wait_peers(60000000000ULL) < 0) {
		printf("rpc-test: no network\n");
		return 1;
	}
	if (node_id == 0) {
		int r = rpc_server_init(&srv, "test");
		rpc_register(&srv, P_SIMPLE, proc_simple);
		rpc_register(&srv, P_SUM, proc_sum);
		rpc_register(&srv, P_CRC, proc_crc);
		rpc_register(&srv, P_SLOW, proc_slow);
		rpc_register(&srv, P_FAIL, proc_fail);
		if (r == 0 && seg_export("rpc-test.gate", (void *)&gate, sizeof gate, RMEM_W) < 0)
			r = -ENOSPC;
		if (r == 0)
			r = rpc_serve(&srv, nstacks);
		if (r < 0) {
			printf("rpc-test: cannot serve: %d\n", r);
			return 1;
		}
	}
	if (sync_all("after serve") < 0)
		return 1;

	/* Concurrent clients: every thread of every node bound to its own stack. */
	t0 = cycles();
	memset(cl, 0, sizeof cl);
	if (node_id != 0) {
		for (int i = 0; i < nthreads; i++) {
			cl[i].id = node_id * 10 + i;
			cl[i].flags = flags;
			cl[i].iters = iters;
			cl[i].rng = (uint32_t)(node_id * 7919 + i * 104729 + 1);
			th[i] = thread_create("rpc-client", client_main, &cl[i], PRIO_NORMAL, 0);
			EXPECT(th[i] != NULL, "client thread %d", i);
		}
		for (int i = 0; i < nthreads; i++)
			if (th[i])
				thread_join(th[i]);
	}
	uint64_t ms = cycles_to_ns(cycles() - t0) / 1000000;
	if (sync_all("after calls") < 0)
		return 1;

	/* Write protection while a procedure runs. */
	static struct rpc_binding pb;
	int outsider = num_nodes > 2 ? 2 : -1;
	if (node_id == 1) {
		int r = rpc_bind(&pb, 0, "test", flags, BIND_NS);
		EXPECT(r == 0, "bind for the protection checks: %d", r);
		if (r == 0)
			protect_checks(&pb);
	}
	if (sync_all("protection") < 0)
		return 1;
	if (node_id == outsider)
		outsider_checks(nstacks);
	if (sync_all("outsider") < 0)
		return 1;
	if (node_id == 1 && pb.reply) {
		struct rpc_client_stats ps = pb.stats;
		int r = rpc_unbind(&pb);
		EXPECT(r == 0, "unbind: %d", r);
		cl[0].stats.calls += ps.calls;
		cl[0].stats.frames += ps.frames;
		cl[0].stats.rewritten += ps.rewritten;
		cl[0].stats.masks += ps.masks;
		cl[0].stats.timeouts += ps.timeouts;
	}
	if (sync_all("end") < 0)
		return 1;

	if (node_id == 0) {
		struct rpc_server_stats s;
		rpc_server_stats(&srv, &s);
		/* Every call made ran exactly once: the protection phase made three. */
		uint64_t want = (uint64_t)(num_nodes - 1) * (uint64_t)nthreads * (uint64_t)iters * KINDS + 3;
		EXPECT(s.calls == want, "server ran %lu calls, clients made %lu", s.calls, want);
		EXPECT(s.binds == s.unbinds && s.binds == (uint64_t)(num_nodes - 1) * nthreads + 1,
		       "binds %lu unbinds %lu", s.binds, s.unbinds);
		rmem_print_stats();
		fabric_print_stats();
		result("calls=%lu failed=%d rewritten=%lu role=server masks=%lu repeats=%lu bad_frames=%lu "
		       "stacks=%d transport=%s checks=%d",
		       s.calls, check_failures, s.frames_missing, s.masks, s.repeats, s.bad_frames, nstacks,
		       transport, check_count);
	} else {
		struct rpc_client_stats t = { 0 };
		for (int i = 0; i < nthreads; i++) {
			t.calls += cl[i].stats.calls;
			t.frames += cl[i].stats.frames;
			t.rewritten += cl[i].stats.rewritten;
			t.masks += cl[i].stats.masks;
			t.timeouts += cl[i].stats.timeouts;
		}
		printf("rpc-test: node %d: %d threads x %d rounds in %lu ms\n", node_id, nthreads, iters, ms);
		result("calls=%lu failed=%d rewritten=%lu role=client frames=%lu masks=%lu timeouts=%lu "
		       "transport=%s checks=%d",
		       t.calls, check_failures, t.rewritten, t.frames, t.masks, t.timeouts, transport, check_count);
	}
	return check_failures ? 1 : 0;
}

static const struct app rpc_test = {
	.name = "rpc-test",
	.summary = "RPC over remote memory: paper calls, multi-frame SACK transport, write protection",
	.main = rpc_test_main,
	.args = rpc_test_args,
	.min_nodes = 2,
};
APP_REGISTER(rpc_test);
