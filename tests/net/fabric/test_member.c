/*
 * Host unit tests of membership (net/fabric/member.c): the HELLO handshake
 * between simulated nodes, binding only when it completes, a rebooted
 * node bound again once both sides agree, hostile claims refused; and what
 * a reset does to calls in flight (net/call/call.c on the host fabric).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/host/unit.h"

#include "kernel/incarnation.h"
#include "net/call/call.h"
#include "net/fabric/member.h"
#include "net/fabric/wire.h"
#include "tests/host/host_fabric.h"
#include "tests/host/host_rnd.h"

#define N 4
#define QMAX 4096

struct hello_msg {
	int src, dst;			/* dst -1: broadcast */
	uint64_t inc, echo, nonce;
	int bound;
	uint8_t mac[6];
};

static struct member mem[N][N];		/* mem[a][b]: b as a sees it */
static uint64_t inc[N];
static uint8_t macs[N][6];
static struct hello_msg q[QMAX];
static int qn;
static unsigned resets[N][N], binds[N][N];
static double drop;
static unsigned rng = 99;

/* HELLOs from rec_src to rec_dst (-1: broadcasts too), recorded as posted. */
static struct hello_msg rec[256];
static int nrec, rec_src = -1, rec_dst = -1;

static void post(int src, int dst)
{
	struct hello_msg *m;

	if (qn == QMAX || host_rnd_unit(&rng) < drop)
		return;
	m = &q[qn++];
	memset(m, 0, sizeof *m);
	m->src = src;
	m->dst = dst;
	m->inc = inc[src];
	memcpy(m->mac, macs[src], 6);
	if (dst >= 0) {
		m->echo = member_echo(&mem[src][dst]);
		m->nonce = member_nonce(&mem[src][dst]);
		m->bound = member_says_bound(&mem[src][dst]);
	}
	if (src == rec_src && (dst == rec_dst || dst < 0) && nrec < 256)
		rec[nrec++] = *m;
}

static void boot(int n, uint64_t incarnation)
{
	inc[n] = incarnation;
	memset(mem[n], 0, sizeof mem[n]);
	memset(macs[n], 0, 6);
	macs[n][0] = 2;
	macs[n][5] = (uint8_t)n;
}

static void setup(void)
{
	qn = 0;
	drop = 0;
	memset(resets, 0, sizeof resets);
	memset(binds, 0, sizeof binds);
	for (int i = 0; i < N; i++)
		boot(i, 0x1000 + (uint64_t)i * 0x111);
}

static uint64_t fresh_ctr;

/* The challenges random64 would draw: distinct, never 0. */
static uint64_t fresh(void)
{
	return 0xc4a1000000000000ULL + ++fresh_ctr;
}

static unsigned hear(int to, const struct hello_msg *m)
{
	unsigned r = member_hello(&mem[to][m->src], m->inc, m->nonce, m->echo, m->bound, m->mac,
				  m->dst < 0, fresh());

	if (r & MEMBER_BIND)
		binds[to][m->src]++;
	if (r & MEMBER_RESET)
		resets[to][m->src]++;
	if (r & MEMBER_REPLY)
		post(to, m->src);
	return r;
}

/* Deliver the oldest message (a broadcast to every other node). */
static void step(void)
{
	struct hello_msg m = q[0];

	memmove(q, q + 1, (size_t)--qn * sizeof q[0]);
	for (int to = 0; to < N; to++)
		if (to != m.src && (m.dst < 0 || m.dst == to))
			hear(to, &m);
}

static void run(int max)
{
	for (int i = 0; i < max && qn; i++)
		step();
}

static int all_up(void)
{
	for (int a = 0; a < N; a++)
		for (int b = 0; b < N; b++)
			if (a != b && (!member_up(&mem[a][b]) || mem[a][b].inc != inc[b]))
				return 0;
	return 1;
}

/* Every node broadcasts until all are up (the discovery timer). */
static void discover(int rounds)
{
	for (int r = 0; r < rounds && !all_up(); r++) {
		for (int n = 0; n < N; n++) {
			int up = 1;
			for (int b = 0; b < N; b++)
				if (b != n && !member_up(&mem[n][b]))
					up = 0;
			if (!up)
				post(n, -1);
		}
		run(10000);
	}
}

static struct hello_msg take(void)
{
	struct hello_msg m = q[0];

	assert_true(qn > 0);
	memmove(q, q + 1, (size_t)--qn * sizeof q[0]);
	return m;
}

static void handshake_binds_only_when_complete(void **state)
{
	(void)state;
	setup();
	/* B hears A's broadcast: A is heard and challenged, not bound. */
	post(0, -1);
	struct hello_msg m = take();
	assert_int_equal(hear(1, &m), MEMBER_REPLY);
	assert_int_equal(mem[1][0].inc, 0);
	assert_int_equal(mem[1][0].heard, inc[0]);
	assert_int_not_equal(mem[1][0].chal, 0);
	/* A hears B's challenge (it echoes nothing yet): A challenges B in turn. */
	m = take();
	assert_int_equal(m.nonce, mem[1][0].chal);
	assert_int_equal(m.echo, 0);
	assert_int_equal(hear(0, &m), MEMBER_REPLY);
	assert_int_equal(mem[0][1].inc, 0);
	/* B hears A's answer to its challenge: B binds A, and tells it. */
	m = take();
	assert_int_equal(m.echo, mem[1][0].chal);
	assert_false(m.bound);
	unsigned r = hear(1, &m);
	assert_true(r & MEMBER_BIND);
	assert_false(r & MEMBER_RESET);
	assert_int_equal(mem[1][0].inc, inc[0]);
	assert_int_equal(mem[1][0].epoch, 1);
	assert_false(member_up(&mem[1][0]));	/* A has not bound B yet */
	/* A hears B's BOUND hello answering A's challenge: A binds B, both up after A's answer. */
	m = take();
	assert_true(m.bound);
	assert_int_equal(m.echo, mem[0][1].chal);
	assert_true(hear(0, &m) & MEMBER_BIND);
	assert_true(member_up(&mem[0][1]));
	run(10);
	assert_true(member_up(&mem[1][0]));
	assert_int_equal(qn, 0);	/* and the exchange stops */
}

static void cluster_discovers_under_loss(void **state)
{
	(void)state;
	setup();
	discover(5);
	assert_true(all_up());
	for (int a = 0; a < N; a++)
		for (int b = 0; b < N; b++)
			if (a != b)
				assert_int_equal(binds[a][b], 1);
	setup();
	drop = 0.4;
	discover(200);
	if (!all_up())
		for (int a = 0; a < N; a++)
			for (int b = 0; b < N; b++)
				if (a != b)
					print_message("%d sees %d: inc %lx heard %lx knows %d\n", a, b, mem[a][b].inc, mem[a][b].heard, mem[a][b].knows_me);
	assert_true(all_up());
	for (int a = 0; a < N; a++)
		for (int b = 0; b < N; b++)
			if (a != b)
				assert_int_equal(resets[a][b], 0);
}

static void claims_without_handshake_bind_nothing(void **state)
{
	uint8_t evil[6] = { 0x66, 6, 6, 6, 6, 6 };

	(void)state;
	setup();
	/* Claiming node 0 with a guessed echo, or none, or no incarnation. */
	struct hello_msg m = { .src = 0, .dst = 1, .inc = 0xdead, .echo = fresh_ctr + 1, .bound = 1 };
	memcpy(m.mac, evil, 6);
	assert_false(hear(1, &m) & MEMBER_BIND);
	m.echo = 0;
	assert_false(hear(1, &m) & MEMBER_BIND);
	m.inc = 0;
	assert_int_equal(hear(1, &m), MEMBER_INVALID);
	assert_int_equal(mem[1][0].inc, 0);
	/* Once bound, the bound incarnation from another MAC is refused. */
	discover(5);
	assert_true(all_up());
	m.inc = inc[0];
	m.echo = mem[1][0].chal;
	assert_int_equal(hear(1, &m), MEMBER_FOREIGN);
	assert_int_equal(mem[1][0].inc, inc[0]);
	assert_memory_equal(mem[1][0].mac, macs[0], 6);
	/* A new incarnation that never answers B's challenge is only heard. */
	m.inc = 0xbeef;
	m.echo = mem[1][0].bound_chal;	/* node 0's answer, replaced at its binding */
	assert_false(hear(1, &m) & (MEMBER_BIND | MEMBER_RESET));
	assert_int_equal(mem[1][0].inc, inc[0]);
	assert_int_equal(mem[1][0].epoch, 1);
}

static void rebooted_node_is_bound_again_after_both_agree(void **state)
{
	(void)state;
	setup();
	discover(5);
	assert_true(all_up());
	/* Node 2 reboots: a new incarnation, nothing remembered. */
	boot(2, 0x77777777);
	post(2, -1);
	struct hello_msg m = take();
	qn = 0;
	/* Node 0 hears it: challenged, not reset yet, the old binding stands. */
	assert_int_equal(hear(0, &m), MEMBER_REPLY);
	assert_int_equal(mem[0][2].inc, 0x1000 + 2 * 0x111);
	assert_int_equal(mem[0][2].epoch, 1);
	/* Node 2 hears node 0's challenge and challenges it in turn. */
	m = take();
	assert_int_equal(m.nonce, mem[0][2].chal);
	assert_int_equal(m.echo, 0);
	assert_false(m.bound);
	assert_false(hear(2, &m) & MEMBER_BIND);
	/* Node 0 resets when node 2 answers its challenge. */
	m = take();
	assert_int_equal(m.echo, mem[0][2].chal);
	unsigned r = hear(0, &m);
	assert_true(r & MEMBER_RESET);
	assert_true(r & MEMBER_BIND);
	assert_int_equal(mem[0][2].inc, 0x77777777);
	assert_int_equal(mem[0][2].epoch, 2);
	run(100);
	discover(20);
	assert_true(all_up());
	for (int a = 0; a < N; a++) {
		if (a != 2)
			assert_int_equal(resets[a][2], 1);
		assert_int_equal(resets[2][a], 0);
	}
	/* A second reboot under loss: bound again, one reset each. */
	drop = 0.3;
	boot(2, 0x88888888);
	discover(300);
	if (!all_up())
		for (int a = 0; a < N; a++)
			for (int b = 0; b < N; b++)
				if (a != b)
					print_message("%d sees %d: inc %lx heard %lx chal %lx heard_nonce %lx knows %d\n", a, b,
						      mem[a][b].inc, mem[a][b].heard, mem[a][b].chal, mem[a][b].heard_nonce, mem[a][b].knows_me);
	assert_true(all_up());
	for (int a = 0; a < N; a++)
		if (a != 2) {
			assert_int_equal(resets[a][2], 2);
			assert_int_equal(mem[a][2].epoch, 3);
		}
}

/*
 * A HELLO recorded from an earlier boot of node 2 (unicast, answering node
 * 0's challenge, saying bound), replayed after node 2 rebooted and was
 * bound again: it must not take node 0's binding back to the dead
 * incarnation (a reset of the pair's channel toward nobody).
 */
static void replayed_hello_of_a_past_incarnation_is_refused(void **state)
{
	struct hello_msg old;

	(void)state;
	setup();
	for (int a = 0; a < N; a++)
		for (int b = 0; b < N; b++)
			mem[a][b].keep_past = 1;	/* keyed */
	discover(5);
	assert_true(all_up());
	post(2, 0);
	old = q[--qn];
	assert_true(old.bound && old.echo == mem[0][2].chal);
	boot(2, 0x99999999);
	discover(20);
	assert_true(all_up());
	assert_int_equal(resets[0][2], 1);
	assert_int_equal(hear(0, &old), MEMBER_PAST_INC);
	assert_int_equal(mem[0][2].inc, 0x99999999);
	assert_int_equal(resets[0][2], 1);
	assert_int_equal(mem[0][2].epoch, 2);
	/* Unkeyed too, the stale answer binds nothing: it answers a challenge long replaced. */
	mem[0][2].keep_past = 0;
	assert_false(hear(0, &old) & (MEMBER_BIND | MEMBER_RESET));
	assert_int_equal(mem[0][2].inc, 0x99999999);
	run(100);
	discover(20);
	assert_true(all_up());
	assert_int_equal(resets[0][2], 1);
}

/*
 * Every HELLO node 2 sent node 0 (and broadcast) on its way up, replayed
 * to node 0 once the pair is up, keyed and not: none unbinds it, resets
 * it or takes the pair down.  (A unicast HELLO from before node 2 bound
 * node 0 said "not bound", and once cleared knows_me: the pair went down
 * until a rediscovery.)
 */
static void replayed_hellos_of_the_handshake_keep_the_pair_up(void **state)
{
	(void)state;
	for (int keyed = 0; keyed < 2; keyed++) {
		setup();
		for (int a = 0; a < N; a++)
			for (int b = 0; b < N; b++)
				mem[a][b].keep_past = keyed;
		nrec = 0;
		rec_src = 2;
		rec_dst = 0;
		discover(5);
		rec_src = rec_dst = -1;
		assert_true(all_up());
		int unbound = 0;
		for (int i = 0; i < nrec; i++)
			unbound += rec[i].dst >= 0 && !rec[i].bound;
		assert_true(unbound > 0);
		for (int round = 0; round < 3; round++)
			for (int i = 0; i < nrec; i++) {
				unsigned r = hear(0, &rec[i]);
				assert_false(r & (MEMBER_BIND | MEMBER_RESET));
				assert_true(member_up(&mem[0][2]));
			}
		assert_int_equal(resets[0][2], 0);
		assert_int_equal(binds[0][2], 1);
		assert_int_equal(mem[0][2].epoch, 1);
	}
}

/*
 * Every HELLO node 2 sent in its first boot, recorded and replayed to
 * node 0 after node 2 rebooted ten times (more than MEMBER_PAST, so the
 * list of refused incarnations no longer names it), interleaved with the
 * real node's traffic: node 0 never binds the dead incarnation again, the
 * real one stays bound, and both are up once the real HELLOs go on.
 */
static void no_past_boot_is_bound_again_however_many_reboots(void **state)
{
	static struct hello_msg rec[QMAX];
	int nrec = 0;

	(void)state;
	setup();
	for (int a = 0; a < N; a++)
		for (int b = 0; b < N; b++)
			mem[a][b].keep_past = 1;
	/* Discovery, recording every HELLO node 2 sends (as a station on the wire would). */
	for (int r = 0; r < 5 && !all_up(); r++) {
		for (int n = 0; n < N; n++)
			post(n, -1);
		while (qn) {
			if (q[0].src == 2 && nrec < QMAX)
				rec[nrec++] = q[0];
			step();
		}
	}
	assert_true(all_up());
	assert_true(nrec > 2);
	uint64_t first = inc[2];
	for (int b = 1; b <= 10; b++) {
		boot(2, 0xb0000000 + (uint64_t)b);
		discover(20);
		assert_true(all_up());
	}
	assert_int_equal(resets[0][2], 10);
	for (int k = 0; k < MEMBER_PAST; k++)
		assert_int_not_equal(mem[0][2].past[k], first);	/* out of the list */
	uint32_t epoch = mem[0][2].epoch;
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < nrec; i++) {
			assert_false(hear(0, &rec[i]) & (MEMBER_BIND | MEMBER_RESET));
			assert_int_equal(mem[0][2].inc, inc[2]);
			if (i % 3 == 0)
				run(4);		/* node 0's answers reach the real node 2 */
		}
		run(1000);
		discover(20);
		assert_true(all_up());
	}
	assert_int_equal(mem[0][2].epoch, epoch);
	assert_int_equal(resets[0][2], 10);
	assert_int_equal(resets[2][0], 0);
}

static void pair_tags_differ_per_incarnation(void **state)
{
	(void)state;
	assert_int_not_equal(fab_pair_tag(1, 2), fab_pair_tag(2, 1));
	assert_int_not_equal(fab_pair_tag(0x1000, 0x1222), fab_pair_tag(0x1000, 0x77777777));
	assert_int_not_equal(fab_pair_tag(0x1000, 0x1222), fab_pair_tag(0x1001, 0x1222));
	for (uint64_t i = 0; i < 1000; i++)
		assert_int_not_equal(fab_pair_tag(i, i * 31), 0);
}

/*
 * The jitter fallback's mixer: a one-bit change in a sample changes about
 * half the state's bits, so that a few bits of jitter spread over all 64.
 */
static void jitter_fold_spreads_every_bit(void **state)
{
	(void)state;
	for (int b = 0; b < 64; b++) {
		uint64_t a = incarnation_fold(0x0123456789abcdefULL, 1000);
		uint64_t c = incarnation_fold(0x0123456789abcdefULL, 1000 ^ (1ULL << b));
		int d = __builtin_popcountll(a ^ c);
		assert_true(d >= 12 && d <= 52);
		c = incarnation_fold(0x0123456789abcdefULL ^ (1ULL << b), 1000);
		d = __builtin_popcountll(a ^ c);
		assert_true(d >= 12 && d <= 52);
	}
}

/* The DRNG's values a faulty CPU gives are refused: 0, all ones, a repeat. */
static void faulty_drng_values_are_refused(void **state)
{
	(void)state;
	assert_false(incarnation_value_ok(0, 5));
	assert_false(incarnation_value_ok(~0ULL, 5));
	assert_false(incarnation_value_ok(0x1234, 0x1234));
	assert_true(incarnation_value_ok(0x1234, 0x1235));
	assert_true(incarnation_value_ok(0x8000000000000000ULL, 0));
}

/* --- calls in flight to a node that rebooted -------------------------------------------- */

static void calls_in_flight_fail_on_reset(void **state)
{
	(void)state;
	host_fabric_reset(0, 3);
	host_epoch[1] = host_epoch[2] = 1;
	struct call *c1 = call_new(CALL_PROTO, CALL_FENCE, 1);
	struct call *c2 = call_new(CALL_PROTO, CALL_FENCE, 2);
	int s1 = call_sink_new(CALL_PROTO, 1);
	assert_non_null(c1);
	assert_non_null(c2);
	assert_true(s1 >= 0);
	uint32_t tag1 = c1->tag;
	/* Node 1 rebooted and was bound again. */
	host_epoch[1] = 2;
	call_node_reset(1);
	assert_true(c1->done);
	assert_int_equal(c1->status, -ECONNRESET);
	assert_false(c2->done);
	/* An answer for the old call is matched to nothing. */
	assert_null(call_find(CALL_PROTO, 1, tag1));
	/* Waiting returns at once; the status says what happened. */
	assert_int_equal(call_wait(c1, 1000000), 0);
	call_free(c1);
	/* A call made for epoch 1 is not sent to epoch 2. */
	struct call *c3 = call_new(CALL_PROTO, CALL_FENCE, 1);
	host_epoch[1] = 3;
	struct call_msg msg = { .op = CALL_FENCE, .tag = c3->tag };
	assert_int_equal(call_run(c3, &msg, sizeof msg, NULL, 0, 0, 1000000), -ECONNRESET);
	assert_int_equal(host_frames(), 0);
	/* The sink reports the loss once, at the next sync's fence answer. */
	assert_int_equal(call_sink_error(CALL_PROTO, 1, call_sink_tag(s1), -EIO), 0);
	call_sink_free(s1);
	call_free(c2);
}

UNIT_MAIN("tests", NULL, NULL,
	  cmocka_unit_test(handshake_binds_only_when_complete),
	  cmocka_unit_test(cluster_discovers_under_loss),
	  cmocka_unit_test(claims_without_handshake_bind_nothing),
	  cmocka_unit_test(rebooted_node_is_bound_again_after_both_agree),
	  cmocka_unit_test(replayed_hello_of_a_past_incarnation_is_refused),
	  cmocka_unit_test(replayed_hellos_of_the_handshake_keep_the_pair_up),
	  cmocka_unit_test(no_past_boot_is_bound_again_however_many_reboots),
	  cmocka_unit_test(pair_tags_differ_per_incarnation),
	  cmocka_unit_test(jitter_fold_spreads_every_bit),
	  cmocka_unit_test(faulty_drng_values_are_refused),
	  cmocka_unit_test(calls_in_flight_fail_on_reset))
