/*
 * cluster_barrier: every node sends 'A' (arrived) to node 0, the
 * coordinator, over the reliable channel and waits for node 0's 'R'
 * (released), which node 0 sends once all nodes have arrived.
 * Generations number the barriers.
 *
 * What is accepted: an arrival only at node 0, from a node 1..nodes-1,
 * for the generation after the last one that node arrived at (each node
 * arrives once per barrier, in order on its channel); a release only
 * from node 0, for the barrier this node waits at.  Anything else (a
 * release from another node, an arrival repeated or out of turn, a bad
 * length or kind) is counted and dropped: it neither releases nor counts.
 *
 * A node that rebooted starts again at generation 1 (barrier_peer_reset):
 * its arrivals at barriers node 0 has released already (every other node
 * passed them) are released at once, so that it catches up with the
 * others' generation instead of waiting for a release that came before
 * it was born.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kernel/init.h"
#include "kernel/node.h"
#include "kernel/sync.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"
#include "net/call/barrier.h"
#include "net/fabric/fabric.h"

#define FP_BARRIER 8			/* the barrier's protocol number */
#define BARRIER_MSG 5			/* kind, generation (32 bits) */

static uint32_t barrier_gen;		/* the barrier this node is at */
static volatile uint32_t barrier_released;	/* last generation released */
static uint32_t arrived_gen[MAX_NODES];	/* node 0: last generation each node arrived at */
static uint32_t released_gen;		/* node 0: the last generation it released */
static volatile unsigned long barrier_dropped;
static volatile uint32_t barrier_resets;	/* peers that rebooted: a barrier waiting fails */
static struct waitq barrier_wq = WAITQ_INIT;

static inline int gen_lt(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

/* Receive path (serialized per node): validate, then count or release. */
static int barrier_handler(int src, const uint8_t *p, size_t len, struct pktbuf *pb)
{
	uint32_t gen;

	(void)pb;
	if (len != BARRIER_MSG || src < 0 || src >= num_nodes)
		goto drop;
	memcpy(&gen, p + 1, 4);
	if (p[0] == 'A') {
		if (node_id != 0 || src == 0 || gen != arrived_gen[src] + 1)
			goto drop;
		arrived_gen[src] = gen;
		if (!gen_lt(released_gen, gen)) {
			/* Released before this (rebooted) node came: let it through now. */
			uint8_t msg[BARRIER_MSG] = { 'R' };
			memcpy(msg + 1, &gen, 4);
			if (fabric_send(src, FP_BARRIER, msg, BARRIER_MSG, NULL, 0,
					FABRIC_NOWAIT | FABRIC_ACKNOW) < 0)
				barrier_dropped++;
			return 0;
		}
	} else if (p[0] == 'R') {
		if (src != 0 || node_id == 0 || gen != barrier_gen || !gen_lt(barrier_released, gen))
			goto drop;
		barrier_released = gen;
	} else {
		goto drop;
	}
	waitq_wake_all(&barrier_wq);
	return 0;
drop:
	barrier_dropped++;
	return 0;
}

/* Node 0: has every other node arrived at gen?  Interrupts off. */
static int all_arrived(uint32_t gen)
{
	for (int i = 1; i < num_nodes; i++)
		if (gen_lt(arrived_gen[i], gen))
			return 0;
	return 1;
}

int cluster_barrier(uint64_t timeout_ns)
{
	uint8_t msg[BARRIER_MSG];
	uint64_t end = cycles() + ns_to_cycles(timeout_ns);
	irqflags_t f;
	uint32_t gen;
	int r;

	f = irq_save();
	gen = ++barrier_gen;
	uint32_t resets = barrier_resets;
	irq_restore(f);
	if (num_nodes == 1)
		return 0;
	memcpy(msg + 1, &gen, 4);
	if (node_id != 0) {
		msg[0] = 'A';
		if ((r = fabric_send(0, FP_BARRIER, msg, BARRIER_MSG, NULL, 0, FABRIC_ACKNOW)) < 0)
			return r;
		f = irq_save();
		while (gen_lt(barrier_released, gen) && resets == barrier_resets && cycles() < end)
			waitq_wait_timeout(&barrier_wq, cycles_to_ns(end - cycles()));
		r = !gen_lt(barrier_released, gen) ? 0 : resets != barrier_resets ? -ECONNRESET : -ETIMEDOUT;
		irq_restore(f);
		return r;
	}
	f = irq_save();
	while (!all_arrived(gen) && resets == barrier_resets && cycles() < end)
		waitq_wait_timeout(&barrier_wq, cycles_to_ns(end - cycles()));
	r = all_arrived(gen) ? 0 : resets != barrier_resets ? -ECONNRESET : -ETIMEDOUT;
	irq_restore(f);
	if (r == -ETIMEDOUT) {
		/* Who the others wait for. */
		printf("barrier: generation %u timed out; not arrived:", gen);
		for (int i = 1; i < num_nodes; i++)
			if (gen_lt(arrived_gen[i], gen))
				printf(" n%d", i);
		printf("\n");
	}
	if (r)
		return r;
	msg[0] = 'R';
	f = irq_save();
	if (gen_lt(released_gen, gen))
		released_gen = gen;
	irq_restore(f);
	for (int i = 1; i < num_nodes; i++)
		if ((r = fabric_send(i, FP_BARRIER, msg, BARRIER_MSG, NULL, 0, FABRIC_ACKNOW)) < 0)
			return r;
	return 0;
}

/*
 * A node rebooted: its new incarnation starts at generation 1, and a
 * barrier in progress cannot complete with the old one's arrival.  Node 0
 * takes the new incarnation's arrivals from the start; every node's
 * waiting barrier fails with -ECONNRESET rather than waiting out its
 * timeout.  (irq)
 */
static void barrier_peer_reset(int node)
{
	if (node >= 0 && node < MAX_NODES)
		arrived_gen[node] = 0;
	barrier_resets++;
	waitq_wake_all(&barrier_wq);
}

unsigned long cluster_barrier_dropped(void)
{
	return barrier_dropped;
}

static int barrier_init(void)
{
	if (!fabric_ready())
		return -ENODEV;
	int r = fabric_register(FP_BARRIER, barrier_handler);

	return r < 0 ? r : fabric_on_peer_reset(barrier_peer_reset);
}
INIT_HOOK(INIT_SUBSYS_4, barrier, barrier_init);
