/*
 * barrier-forge: barrier messages that are not what they claim are
 * counted and dropped.  After a first barrier, node 2 sends over its
 * reliable channels what only node 0 may send, and arrivals out of turn:
 * to node 1 releases of the next barriers and an arrival (node 1 is no
 * coordinator); to node 0 a release, an arrival for barrier 1 again and
 * one far ahead.  Then it says so on the same channels and stops: it
 * never arrives at barrier 2.  Nodes 0 and 1 must each count every
 * forged message, and barrier 2 must not complete for either of them:
 * without node 2's arrival no release is due, so both end in
 * -ETIMEDOUT (a bounded wait, not a measure of time).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "apps/app.h"
#include "kernel/node.h"
#include "kernel/sync.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"
#include "net/call/barrier.h"
#include "net/fabric/fabric.h"
#include "tests/apps/check.h"
#include "tests/apps/protos.h"

#define FP_BARRIER 8			/* the barrier's protocol number (net/call/barrier.c) */
#define FORGER 2
#define WAIT_NS 60000000000ULL
#define BARRIER2_NS 2000000000ULL	/* how long barrier 2 waits for a release not due */

static volatile int forged_done;
static struct waitq done_wq = WAITQ_INIT;

static int done_handler(int src, const uint8_t *p, size_t len, struct pktbuf *pb)
{
	(void)p, (void)len, (void)pb;
	if (src == FORGER) {
		forged_done = 1;
		waitq_wake_all(&done_wq);
	}
	return 0;
}

static int forge(int dst, char kind, uint32_t gen)
{
	uint8_t m[5] = { (uint8_t)kind };

	memcpy(m + 1, &gen, 4);
	return fabric_send(dst, FP_BARRIER, m, sizeof m, NULL, 0, 0);
}

static int barrier_forge_main(void)
{
	/* Forged to node 1 and to node 0: each must be dropped. */
	static const struct { int dst; char kind; uint32_t gen; } f[] = {
		{ 1, 'R', 2 }, { 1, 'R', 3 }, { 1, 'A', 2 },
		{ 0, 'R', 2 }, { 0, 'A', 1 }, { 0, 'A', 1000 },
	};
	const int to_node1 = 3, to_node0 = 3;
	unsigned long before;
	int r;

	if (num_nodes != 3) {
		printf("barrier-forge: runs on three nodes\n");
		return 1;
	}
	if (!fabric_ready() || fabric_register(APP_PROTO_TEST, done_handler) < 0 ||
	    fabric_wait_peers(WAIT_NS) < 0)
		return 1;
	/*
	 * Counted from before the first barrier: node 2 forges as soon as it
	 * leaves it, which may be before this node has.
	 */
	before = cluster_barrier_dropped();
	if (cluster_barrier(WAIT_NS) < 0)
		return 1;
	if (node_id == FORGER) {
		for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
			EXPECT((r = forge(f[i].dst, f[i].kind, f[i].gen)) == 0, "forged send: %d", r);
		for (int dst = 0; dst < FORGER; dst++) {
			EXPECT(fabric_send(dst, APP_PROTO_TEST, "done", 4, NULL, 0, 0) == 0, "done to %d", dst);
			EXPECT(fabric_flush(dst, WAIT_NS) == 0, "flush to %d", dst);
		}
		return check_failures ? 1 : 0;
	}
	/* What node 2 forged came before its "done" on the same channel. */
	uint64_t end = cycles() + ns_to_cycles(WAIT_NS);
	irqflags_t fl = irq_save();
	while (!forged_done && cycles() < end)
		waitq_wait_timeout(&done_wq, cycles_to_ns(end - cycles()));
	irq_restore(fl);
	EXPECT(forged_done, "node 2 never finished forging");
	unsigned long dropped = cluster_barrier_dropped() - before;
	EXPECT(dropped == (unsigned long)(node_id == 1 ? to_node1 : to_node0),
	       "%lu forged barrier messages dropped", dropped);
	r = cluster_barrier(BARRIER2_NS);
	EXPECT(r == -ETIMEDOUT, "barrier 2 ended with %d without node 2", r);
	result("forged=%d dropped=%lu barrier2=%d checks=%d failed=%d",
	       node_id == 1 ? to_node1 : to_node0, dropped, r, check_count, check_failures);
	return check_failures ? 1 : 0;
}

APP(barrier_forge, "barrier-forge",
    "forged barrier releases and arrivals from node 2: counted, dropped, nothing released",
    barrier_forge_main, NULL, 3);
