/*
 * Host unit tests of net/call/barrier.c's receive side: only node 0
 * releases, only nodes of the cluster arrive, each once per barrier, in
 * turn.  Forged and repeated messages are handed to the kernel's handler
 * while cluster_barrier waits (host_pump); each must be counted and must
 * neither release a waiting node nor count as an arrival.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tests/host/unit.h"

#include "kernel/init.h"
#include "net/call/barrier.h"
#include "net/fabric/fabric.h"
#include "tests/host/host_fabric.h"

#define FP_BARRIER 8
/* 20 s on the node; on the host (ns_to_cycles is ns / 1000) about 10 ms of TSC: long enough
 * that a busy host does not time a barrier out before the script is delivered. */
#define WAIT_NS 20000000000ULL

struct msg {
	int src;
	char kind;
	uint32_t gen;
	size_t len;
};

static const struct msg *script;	/* what the network delivers at the first wait */
static int nscript, pumped;
static uint32_t sent_gen;		/* generation of this node's arrival */

static void deliver(int src, char kind, uint32_t gen, size_t len)
{
	fabric_handler_t h = host_handler(FP_BARRIER, 0);
	uint8_t p[8] = { (uint8_t)kind };

	assert_non_null(h);
	memcpy(p + 1, &gen, 4);
	assert_int_equal(h(src, p, len, NULL), 0);
}

/* The network: take this node's arrival (if any), then deliver the script once. */
static void pump(void)
{
	struct host_frame f;

	while (host_frame_take(&f) == 0) {
		assert_int_equal(f.dst, 0);
		assert_int_equal(f.proto, FP_BARRIER);
		assert_int_equal(f.len, 5);
		assert_int_equal(f.data[0], 'A');
		memcpy(&sent_gen, f.data + 1, 4);
	}
	if (pumped++)
		return;
	for (int i = 0; i < nscript; i++)
		if (script[i].kind == '!')
			host_peer_reset(script[i].src);		/* it rebooted */
		else
			deliver(script[i].src, script[i].kind,
			script[i].gen ? script[i].gen : sent_gen + (uint32_t)script[i].len / 100,
			script[i].len % 100);
}

static int run(int self, int nodes, const struct msg *m, int n)
{
	host_fabric_reset(self, nodes);
	script = m;
	nscript = n;
	pumped = 0;
	host_pump = pump;
	return cluster_barrier(WAIT_NS);
}

static int setup(void **state)
{
	(void)state;
	host_fabric_reset(0, 3);
	return host_run_init_hooks(INIT_SUBSYS_4);
}

/* Node 0 of 3, barrier 1: nothing here is a real arrival of both nodes. */
static void coordinator_refuses_forged_arrivals(void **state)
{
	static const struct msg m[] = {
		{ 1, 'A', 1, 5 }, { 1, 'A', 1, 5 },	/* node 1, then the same again */
		{ 0, 'A', 1, 5 },			/* from the coordinator itself */
		{ 7, 'A', 1, 5 },			/* from no node of the cluster */
		{ 2, 'A', 2, 5 },			/* node 2 skipping barrier 1 */
		{ 2, 'A', 1, 4 },			/* too short */
		{ 1, 'R', 1, 5 },			/* a release sent to the coordinator */
	};
	unsigned long before = cluster_barrier_dropped();

	(void)state;
	assert_int_equal(run(0, 3, m, 7), -ETIMEDOUT);
	assert_int_equal(host_frames(), 0);		/* nobody released */
	assert_int_equal(cluster_barrier_dropped() - before, 6);
}

/* Node 0, barrier 2: node 1 arrived at 1 already; both arrive at 2. */
static void coordinator_releases_on_real_arrivals(void **state)
{
	static const struct msg m[] = {
		{ 1, 'A', 2, 5 }, { 2, 'A', 1, 5 }, { 2, 'A', 2, 5 },
	};
	unsigned long before = cluster_barrier_dropped();
	struct host_frame f;
	uint32_t gen;

	(void)state;
	assert_int_equal(run(0, 3, m, 3), 0);
	assert_int_equal(cluster_barrier_dropped(), before);
	for (int dst = 1; dst <= 2; dst++) {
		assert_int_equal(host_frame_take(&f), 0);
		assert_int_equal(f.dst, dst);
		assert_int_equal(f.data[0], 'R');
		memcpy(&gen, f.data + 1, 4);
		assert_int_equal(gen, 2);
	}
	assert_int_equal(host_frames(), 0);
}

/*
 * Node 1 of 3: releases that are not node 0's for this barrier.  A gen of
 * 0 in the script means "the barrier waited at, plus len / 100".
 */
static void member_refuses_forged_releases(void **state)
{
	static const struct msg m[] = {
		{ 2, 'R', 0, 5 },			/* from node 2 */
		{ 7, 'R', 0, 5 },			/* from no node */
		{ 0, 'R', 0, 105 },			/* node 0, a barrier ahead */
		{ 0, 'A', 0, 5 },			/* an arrival sent to a member */
		{ 0, 'X', 0, 5 },			/* no such kind */
		{ 0, 'R', 0, 6 },			/* too long */
	};
	unsigned long before = cluster_barrier_dropped();

	(void)state;
	assert_int_equal(run(1, 3, m, 6), -ETIMEDOUT);
	assert_int_equal(cluster_barrier_dropped() - before, 6);
}

/* Node 1: a stale release is dropped, node 0's release for this barrier releases. */
static void member_released_by_coordinator(void **state)
{
	static const struct msg m[] = {
		{ 0, 'R', 1, 5 },			/* barrier 1, long gone */
		{ 0, 'R', 0, 5 },
	};
	unsigned long before = cluster_barrier_dropped();

	(void)state;
	assert_int_equal(run(1, 3, m, 2), 0);
	assert_true(sent_gen > 1);
	assert_int_equal(cluster_barrier_dropped() - before, 1);
}

/*
 * Node 0 of 3: node 1 arrived, node 2 reboots before it does: the barrier
 * fails at once with -ECONNRESET (not at its timeout), and node 2's new
 * incarnation arrives from generation 1 again and is released at once.
 */
static void reboot_fails_the_waiting_barrier(void **state)
{
	static const struct msg m[] = {
		{ 1, 'A', 3, 5 },	/* node 1 arrived at 1 and 2 in the tests before */
		{ 2, '!', 0, 0 }, { 2, 'A', 1, 5 },
	};
	unsigned long before = cluster_barrier_dropped();

	(void)state;
	struct host_frame f;
	uint32_t gen;

	assert_int_equal(run(0, 3, m, 3), -ECONNRESET);
	assert_int_equal(cluster_barrier_dropped(), before);	/* generation 1 again: taken */
	/* Barrier 1 was released long ago: the new incarnation is let through at once. */
	assert_int_equal(host_frame_take(&f), 0);
	assert_int_equal(f.dst, 2);
	assert_int_equal(f.data[0], 'R');
	memcpy(&gen, f.data + 1, 4);
	assert_int_equal(gen, 1);
	assert_int_equal(host_frames(), 0);
}

UNIT_MAIN("tests", setup, NULL,
	  cmocka_unit_test(coordinator_refuses_forged_arrivals),
	  cmocka_unit_test(coordinator_releases_on_real_arrivals),
	  cmocka_unit_test(member_refuses_forged_releases),
	  cmocka_unit_test(member_released_by_coordinator),
	  cmocka_unit_test(reboot_fails_the_waiting_barrier))
