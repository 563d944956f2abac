/*
 * fabric_barrier: every node sends 'A' (arrived) to node 0 over the
 * reliable channel and waits for node 0's 'R' (released), which node 0
 * sends once all nodes have arrived.  Generations number the barriers.
 */
#include <errno.h>
#include <string.h>

#include "kernel/init.h"
#include "kernel/sync.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"
#include "net/fabric/internal.h"

#define FP_BARRIER 8			/* the barrier's protocol number */

static volatile uint32_t barrier_arrived, barrier_released;
static struct waitq barrier_wq = WAITQ_INIT;

static int barrier_handler(int src, const uint8_t *p, size_t len, struct pktbuf *pb)
{
	uint32_t gen;

	(void)src;
	(void)pb;
	if (len != 5)
		return 0;
	memcpy(&gen, p + 1, 4);
	if (p[0] == 'A')
		barrier_arrived++;
	else if (p[0] == 'R')
		barrier_released = gen;
	waitq_wake_all(&barrier_wq);
	return 0;
}

int fabric_barrier(uint64_t timeout_ns)
{
	static uint32_t gen;
	uint8_t msg[5];
	uint64_t end = cycles() + ns_to_cycles(timeout_ns);
	int r;

	gen++;
	if (fab.nnodes == 1)
		return 0;
	memcpy(msg + 1, &gen, 4);
	if (fab.me != 0) {
		msg[0] = 'A';
		if ((r = fabric_send(0, FP_BARRIER, msg, 5, NULL, 0, FABRIC_ACKNOW)) < 0)
			return r;
		irqflags_t f = irq_save();
		while (seq_lt(barrier_released, gen) && cycles() < end)
			waitq_wait_timeout(&barrier_wq, cycles_to_ns(end - cycles()));
		r = seq_lt(barrier_released, gen) ? -ETIMEDOUT : 0;
		irq_restore(f);
		return r;
	}
	irqflags_t f = irq_save();
	while (barrier_arrived < gen * (uint32_t)(fab.nnodes - 1) && cycles() < end)
		waitq_wait_timeout(&barrier_wq, cycles_to_ns(end - cycles()));
	r = barrier_arrived < gen * (uint32_t)(fab.nnodes - 1) ? -ETIMEDOUT : 0;
	irq_restore(f);
	if (r)
		return r;
	msg[0] = 'R';
	for (int i = 1; i < fab.nnodes; i++)
		if ((r = fabric_send(i, FP_BARRIER, msg, 5, NULL, 0, FABRIC_ACKNOW)) < 0)
			return r;
	return 0;
}

static int barrier_init(void)
{
	if (!fabric_ready())
		return -ENODEV;
	return fabric_register(FP_BARRIER, barrier_handler);
}
INIT_HOOK(INIT_PROTO, barrier, barrier_init);
