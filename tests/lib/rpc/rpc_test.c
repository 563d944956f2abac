/*
 * rpc-test: RPC over remote memory (lib/rpc.h; remote-memory paper 3.1).
 *
 * Node 0 serves "test" with fewer argument stacks than there are calling
 * threads; every other node binds once and runs `threads` client threads
 * on that one binding at once, each making `iters` rounds of the paper's
 * calls (3.1.3: Simple = four integers, MW-32/64/128 = 32/64/128 words), a
 * multi-frame call (4 KiB of arguments, or 9000 bytes every fourth round)
 * and a call by reference (3.1.1: 1 KiB the procedure reads from the
 * caller, and an answer it writes back there), every result checked.
 * Each call takes a free stack and gives it back (3.1.1), so the threads
 * of all nodes share and wait for the stacks.  Then node 1 binds more
 * times than there are stacks and calls on each binding; it proves that a
 * stack is write-protected while its procedure runs (one thread calls a
 * slow procedure while another writes into its stack and must get
 * -EROFS, and the procedure finds its arguments intact); that a
 * reference lets the server do only what the caller exported it for; and
 * a third node forges a call with a wrong secret, which must not run.
 * Node 0 checks that it ran exactly as many calls as the clients made (at
 * most once, none lost).
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
#include "kernel/crc.h"
#include "kernel/sync.h"
#include "kernel/thread.h"
#include "kernel/tsc.h"
#include "lib/rpc.h"
#include "net/call/barrier.h"
#include "net/fabric/fabric.h"
#include "net/rmem/rmem.h"
#include "tests/apps/check.h"
#include "tests/lib/rpc/rpc_simple.h"

#define BARRIER_NS 300000000000ULL
#define BIND_NS 60000000000ULL
#define SLOW_MAX_NS 60000000000ULL
#define SLOW_LEN 256
#define BIG_LEN 4096
#define HUGE_LEN 9000

enum { P_SIMPLE = 1, P_SUM = 2, P_CRC = 3, P_SLOW = 4, P_FAIL = 5, P_REF = 6, P_REF_WRITE = 7, P_NONE = 9 };
enum { KINDS = 6 };			/* calls per round: Simple, MW-32/64/128, multi-frame, by reference */
#define REF_LEN 1024
#define EXTRA_BINDINGS 2		/* node 1 binds this many more times than there are stacks */

/* --- the procedures (node 0) ------------------------------------------------ */

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

/* By reference (3.1.1): the arguments are two references and a length. */
struct ref_args {
	struct rpc_ref in, out;
	uint32_t len;
	uint32_t salt;
};

/* Read len bytes through `in`, write them back through `out` each XORed with salt; the CRC of what was read. */
static int proc_ref(const void *args, size_t len, uint64_t *result)
{
	struct ref_args a;
	const uint8_t *data;
	uint8_t back[REF_LEN];

	if (len != sizeof a)
		return -EINVAL;
	memcpy(&a, args, sizeof a);
	if (a.len > REF_LEN)
		return -EINVAL;
	int r = rpc_ref_read(&a.in, 0, a.len, (const void **)&data);
	if (r < 0)
		return r;
	*result = crc32c(0, data, a.len);
	for (uint32_t i = 0; i < a.len; i++)
		back[i] = data[i] ^ (uint8_t)a.salt;
	return rpc_ref_write(&a.out, 0, back, a.len);
}

/* Write 8 bytes through the one reference given, whatever it claims. */
static int proc_ref_write(const void *args, size_t len, uint64_t *result)
{
	struct rpc_ref ref;
	static const uint8_t x[8] = { 0xde, 0xad, 0xbe, 0xef, 0xde, 0xad, 0xbe, 0xef };

	if (len != sizeof ref)
		return -EINVAL;
	memcpy(&ref, args, sizeof ref);
	*result = 5;
	return rpc_ref_write(&ref, 0, x, sizeof x);
}

/* --- clients ------------------------------------------------------------------ */

struct client {
	struct rpc_binding *b;		/* the node's one binding, shared */
	int id;
	int iters;
	uint32_t rng;
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

/* One call by reference: 1 KiB there, 1 KiB back. */
static void ref_call(struct client *c, uint8_t *in, uint8_t *out)
{
	struct ref_args a = { 0 };
	uint64_t res = 0;
	int r;

	fill(&c->rng, in, REF_LEN);
	memset(out, 0, REF_LEN);
	a.len = REF_LEN;
	a.salt = rnd(&c->rng) | 1;
	r = rpc_ref_make(c->b, &a.in, in, REF_LEN, RMEM_R);
	EXPECT(r == 0, "client %d: reference to the arguments: %d", c->id, r);
	if (r < 0)
		return;
	r = rpc_ref_make(c->b, &a.out, out, REF_LEN, RMEM_W);
	EXPECT(r == 0, "client %d: reference for the answer: %d", c->id, r);
	if (r == 0) {
		r = rpc_call(c->b, P_REF, &a, sizeof a, &res);
		int same = 1;
		for (int i = 0; i < REF_LEN; i++)
			same &= out[i] == (uint8_t)(in[i] ^ (uint8_t)a.salt);
		EXPECT(r == 0 && res == crc32c(0, in, REF_LEN) && same,
		       "client %d: call by reference: %d, crc %s, written back %s", c->id, r,
		       res == crc32c(0, in, REF_LEN) ? "right" : "wrong", same ? "right" : "wrong");
		rpc_ref_drop(&a.out);
	}
	rpc_ref_drop(&a.in);
}

static void *client_main(void *arg)
{
	struct client *c = arg;
	uint32_t w[128];
	uint8_t *big = malloc(HUGE_LEN), *in = malloc(REF_LEN), *out = malloc(REF_LEN);
	uint64_t res;
	int r;

	EXPECT(big && in && out, "client %d: memory", c->id);
	for (int it = 0; big && in && out && it < c->iters; it++) {
		/* Simple: four integer arguments, one integer result. */
		int32_t a[4];
		fill(&c->rng, a, sizeof a);
		r = rpc_call(c->b, P_SIMPLE, a, sizeof a, &res);
		EXPECT(r == 0 && res == (uint64_t)((int64_t)a[0] + 2 * (int64_t)a[1] + 3 * (int64_t)a[2] +
						  4 * (int64_t)a[3]),
		       "client %d: simple: %d", c->id, r);
		/* MW-32, MW-64, MW-128: that many 32-bit words, an integer result. */
		for (int n = 32; n <= 128; n *= 2) {
			fill(&c->rng, w, (size_t)n * 4);
			r = rpc_call(c->b, P_SUM, w, (size_t)n * 4, &res);
			EXPECT(r == 0 && res == weighted(w, (size_t)n), "client %d: mw-%d: %d", c->id, n, r);
		}
		/* More than one frame: the 3.1.2 transport. */
		size_t len = it % 4 == 3 ? HUGE_LEN : BIG_LEN;
		fill(&c->rng, big, len);
		r = rpc_call(c->b, P_CRC, big, len, &res);
		EXPECT(r == 0 && res == ((uint64_t)len << 32 | crc32c(0, big, len)),
		       "client %d: %zu-byte call: %d", c->id, len, r);
		ref_call(c, in, out);
	}
	free(big);
	free(in);
	free(out);
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

/* The stack that refuses a WRITE past its arguments: the one whose procedure runs.  -1: none. */
static int busy_stack(struct rpc_binding *b, const uint8_t *junk)
{
	for (int k = 0; k < b->nstacks; k++)
		if (rmem_write(b->rd[k], RPC_STACK_SIZE - 64, junk, 8, RMEM_SYNC) == -EROFS)
			return k;
	return -1;
}

/* Node 1: a client writing into a busy stack gets -EROFS. */
static void protect_checks(struct rpc_binding *b)
{
	struct slow_call s = { .b = b };
	uint8_t junk[64];
	uint64_t res = 0;
	int r, busy = -1;

	memset(junk, 0xee, sizeof junk);
	struct thread *t = thread_create("rpc-slow", slow_main, &s, PRIO_NORMAL, 0);
	EXPECT(t != NULL, "thread");
	if (!t)
		return;
	/* Probe past the arguments until a stack is write-protected. */
	uint64_t end = cycles() + ns_to_cycles(5000000000ULL);
	while (!s.finished && cycles() < end && (busy = busy_stack(b, junk)) < 0)
		thread_sleep_ns(2000000);
	EXPECT(busy >= 0, "no stack was write-protected during the slow call");
	if (busy >= 0) {
		/* Over the running call's arguments (it runs until the gate opens): refused. */
		r = rmem_write(b->rd[busy], RPC_STACK_ARGS_OFF, junk, sizeof junk, RMEM_SYNC);
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
	if (busy >= 0) {
		/* Given back, the stack is nobody's to write until claimed again. */
		uint64_t end2 = cycles() + ns_to_cycles(5000000000ULL);
		do
			r = rmem_write(b->rd[busy], RPC_STACK_SIZE - 64, junk, 8, RMEM_SYNC);
		while (r != -EACCES && cycles() < end2);
		EXPECT(r == -EACCES, "a stack given back still writable: %d", r);
	}

	/* Errors come back as the procedure's value. */
	r = rpc_call(b, P_FAIL, NULL, 0, &res);
	EXPECT(r == -EDOM && res == 77, "failing procedure: %d result %lu", r, res);
	r = rpc_call(b, P_NONE, &res, sizeof res, &res);
	EXPECT(r == -ENOSYS, "unregistered procedure: %d", r);
	r = rpc_call(b, P_SIMPLE, junk, RPC_ARGS_MAX + 1, &res);
	EXPECT(r == -EMSGSIZE, "oversized call: %d", r);

	/*
	 * A reference exported for reading, its rights field raised to
	 * writing: the server's WRITE is refused by this node, which checks
	 * what it exported, not what the reference says.
	 */
	uint8_t mine[16];
	struct rpc_ref ref;
	memset(mine, 0x11, sizeof mine);
	r = rpc_ref_make(b, &ref, mine, sizeof mine, RMEM_R);
	EXPECT(r == 0, "reference: %d", r);
	if (r == 0) {
		ref.rights |= RMEM_W;
		r = rpc_call(b, P_REF_WRITE, &ref, sizeof ref, &res);
		EXPECT(r == -EACCES && mine[0] == 0x11 && mine[7] == 0x11,
		       "write through a read-only reference: %d, memory %s", r, mine[0] == 0x11 ? "intact" : "changed");
		rpc_ref_drop(&ref);
	}
}

/* Node 1: more bindings than stacks, each with a call: none holds a stack while idle. */
static void many_bindings(int nstacks, int flags)
{
	int n = nstacks + EXTRA_BINDINGS, ok = 0;
	struct rpc_binding *bs = calloc((size_t)n, sizeof *bs);

	if (!bs) {
		EXPECT(0, "memory for %d bindings", n);
		return;
	}
	for (int i = 0; i < n; i++) {
		int r = rpc_bind(&bs[i], 0, "test", flags, BIND_NS);
		EXPECT(r == 0, "binding %d of %d (%d stacks): %d", i + 1, n, nstacks, r);
		if (r < 0)
			n = i;
	}
	for (int i = 0; i < n; i++) {
		int32_t a[4] = { i, 1, 1, 1 };
		uint64_t res = 0;
		int r = rpc_call(&bs[i], P_SIMPLE, a, sizeof a, &res);
		ok += r == 0 && res == (uint64_t)(i + 9);
	}
	EXPECT(ok == n, "%d of %d bindings answered", ok, n);
	for (int i = 0; i < n; i++)
		EXPECT(rpc_unbind(&bs[i]) == 0, "unbind %d", i);
	free(bs);
}

/*
 * Another node: it cannot write a stack it has not claimed; claimed, a
 * call with a wrong secret written straight into it must not run.
 */
static void outsider_checks(void)
{
	uint8_t frame[RPC_STACK_ARGS_OFF - 64 + 16] = { 0 };
	uint32_t *h = (uint32_t *)frame;
	uint64_t token = (uint64_t)(node_id + 1) << 32 | 0xbad, old = 1, zero = 0;
	int rd = rmem_import(0, "rpc.test.0");

	EXPECT(rd >= 0, "import a stack: %d", rd);
	if (rd < 0)
		return;
	rmem_desc_expect(rd, RMEM_W);
	h[0] = 1;			/* seq */
	h[1] = P_SIMPLE;		/* proc */
	h[2] = 16;			/* len */
	h[3] = 1;			/* one frame */
	h[5] = 0;			/* binding 0 ... */
	h[6] = 0x5ec2e7;		/* ... and a guess at its secret */
	h[7] = 0x1234;
	int r = rmem_write(rd, 64, frame, sizeof frame, RMEM_INTR | RMEM_SYNC);
	EXPECT(r == -EACCES, "header written into a stack not claimed: %d", r);
	r = rmem_cas_flags(rd, 0, 0, token, &old, RMEM_INTR);
	EXPECT(r == 0 && old == 0, "claim: %d, owner %#lx", r, old);
	if (r == 0 && old == 0) {
		r = rmem_write(rd, 64, frame, sizeof frame, RMEM_INTR | RMEM_SYNC);
		EXPECT(r == 0, "forged header written: %d", r);
		EXPECT(rmem_write(rd, 0, &zero, 8, RMEM_INTR | RMEM_SYNC) == 0, "give the stack back");
	}
	rmem_release(rd);
}

/* --- the run ----------------------------------------------------------------------- */

static const struct argspec rpc_test_args[] = {
	{ "iters", ARG_INT, 1, 100000, "rounds of calls per client thread (default 50)" },
	{ "threads", ARG_INT, 1, 8, "client threads per node (default 2)" },
	{ "transport", ARG_STR, 0, 0, "reliable (default) or unreliable: calls and answers as raw frames" },
	{ "stacks", ARG_INT, 1, RPC_MAX_STACKS, "argument stacks served (default: half the calling threads)" },
	{ NULL, 0, 0, 0, NULL },
};

static int rpc_test_main(void)
{
	static struct rpc_server srv;
	static struct rpc_binding nb, pb;
	int iters = (int)arg_int("iters", 50), nthreads = (int)arg_int("threads", 2);
	const char *transport = arg_str("transport", "reliable");
	int total = nthreads * (num_nodes - 1);
	int flags, nstacks = (int)arg_int("stacks", (total + 1) / 2);
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
		rpc_register(&srv, P_SIMPLE, rpc_simple_weighted);
		rpc_register(&srv, P_SUM, proc_sum);
		rpc_register(&srv, P_CRC, proc_crc);
		rpc_register(&srv, P_SLOW, proc_slow);
		rpc_register(&srv, P_FAIL, proc_fail);
		rpc_register(&srv, P_REF, proc_ref);
		rpc_register(&srv, P_REF_WRITE, proc_ref_write);
		if (r == 0 && seg_export("rpc-test.gate", (void *)&gate, sizeof gate, RMEM_W) < 0)
			r = -ENOSPC;
		if (r == 0)
			r = rpc_serve(&srv, nstacks);
		if (r < 0) {
			printf("rpc-test: cannot serve: %d\n", r);
			return 1;
		}
		printf("rpc-test: %d stacks for %d calling threads\n", nstacks, total);
	}
	if (check_barrier("after serve", BARRIER_NS) < 0)
		return 1;

	/* Concurrent clients: the threads of a node share its one binding; all share the stacks. */
	t0 = cycles();
	memset(cl, 0, sizeof cl);
	if (node_id != 0) {
		int r = rpc_bind(&nb, 0, "test", flags, BIND_NS);
		EXPECT(r == 0, "bind: %d", r);
		for (int i = 0; r == 0 && i < nthreads; i++) {
			cl[i].b = &nb;
			cl[i].id = node_id * 10 + i;
			cl[i].iters = iters;
			cl[i].rng = (uint32_t)(node_id * 7919 + i * 104729 + 1);
			th[i] = thread_create("rpc-client", client_main, &cl[i], PRIO_NORMAL, 0);
			EXPECT(th[i] != NULL, "client thread %d", i);
		}
		for (int i = 0; r == 0 && i < nthreads; i++)
			if (th[i])
				thread_join(th[i]);
	}
	uint64_t ms = cycles_to_ns(cycles() - t0) / 1000000;
	if (check_barrier("after calls", BARRIER_NS) < 0)
		return 1;

	/* More bindings than stacks; write protection while a procedure runs; references. */
	int outsider = num_nodes > 2 ? 2 : -1;
	if (node_id == 1) {
		many_bindings(nstacks, flags);
		int r = rpc_bind(&pb, 0, "test", flags, BIND_NS);
		EXPECT(r == 0, "bind for the protection checks: %d", r);
		if (r == 0)
			protect_checks(&pb);
	}
	if (check_barrier("protection", BARRIER_NS) < 0)
		return 1;
	if (node_id == outsider)
		outsider_checks();
	if (check_barrier("outsider", BARRIER_NS) < 0)
		return 1;
	struct rpc_client_stats t = nb.stats;
	if (node_id == 1 && pb.reply) {
		struct rpc_client_stats ps = pb.stats;
		int r = rpc_unbind(&pb);
		EXPECT(r == 0, "unbind: %d", r);
		t.calls += ps.calls;
		t.frames += ps.frames;
		t.rewritten += ps.rewritten;
		t.masks += ps.masks;
		t.timeouts += ps.timeouts;
	}
	if (node_id != 0 && nb.reply)
		EXPECT(rpc_unbind(&nb) == 0, "unbind the node's binding");
	if (check_barrier("end", BARRIER_NS) < 0)
		return 1;

	if (node_id == 0) {
		struct rpc_server_stats s;
		rpc_server_stats(&srv, &s);
		/* Every call made ran exactly once: node 1's checks made 4, its many bindings one each. */
		uint64_t want = (uint64_t)total * (uint64_t)iters * KINDS + 4 + (uint64_t)(nstacks + EXTRA_BINDINGS);
		EXPECT(s.calls == want, "server ran %lu calls, clients made %lu", s.calls, want);
		uint64_t binds = (uint64_t)(num_nodes - 1) + 1 + (uint64_t)(nstacks + EXTRA_BINDINGS);
		EXPECT(s.binds == s.unbinds && s.binds == binds, "binds %lu unbinds %lu, expected %lu", s.binds,
		       s.unbinds, binds);
		EXPECT(outsider < 0 || s.forged >= 1, "the forged call was not noticed");
		rmem_print_stats();
		fabric_print_stats();
		result("calls=%lu failed=%d rewritten=%lu role=server masks=%lu repeats=%lu bad_frames=%lu "
		       "forged=%lu stale=%lu unclaimed=%lu stacks=%d transport=%s checks=%d",
		       s.calls, check_failures, s.frames_missing, s.masks, s.repeats, s.bad_frames, s.forged, s.stale,
		       s.unclaimed, nstacks, transport, check_count);
	} else {
		printf("rpc-test: node %d: %d threads x %d rounds in %lu ms, %lu stacks found taken, %lu waits for one\n",
		       node_id, nthreads, iters, ms, nb.stats.claims_lost, nb.stats.stack_waits);
		result("calls=%lu failed=%d rewritten=%lu role=client frames=%lu masks=%lu timeouts=%lu "
		       "transport=%s checks=%d",
		       t.calls, check_failures, t.rewritten, t.frames, t.masks, t.timeouts, transport, check_count);
	}
	return check_failures ? 1 : 0;
}

APP(rpc_test, "rpc-test",
    "RPC over remote memory: paper calls, stacks per call, call-by-reference, SACK transport, write protection",
    rpc_test_main, rpc_test_args, 2);
