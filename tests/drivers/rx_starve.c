/*
 * rx-starve: a receiver out of packet buffers must not stop its node.
 * Node 0 takes every packet buffer it can for hold_ms while node 1 sends
 * it count messages: the driver leaves the frames in its ring (back-
 * pressure, not loss) and goes on with other work (the app's own thread
 * runs and gives the buffers back), then every message arrives, in order.
 *
 *     RESULT rx-starve held=<buffers> received=<n> misordered=<n> ms=<ms>
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "apps/app.h"
#include "kernel/sync.h"
#include "kernel/thread.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"
#include "net/call/barrier.h"
#include "net/fabric/fabric.h"
#include "net/net.h"
#include "tests/apps/protos.h"

#define HOLD_MAX 4096

static volatile uint32_t received, misordered, next_seq;
static struct waitq done_wq = WAITQ_INIT;

static int handler(int src, const uint8_t *p, size_t len, struct pktbuf *pb)
{
	uint32_t seq;

	(void)pb;
	if (src != 1 || len != sizeof seq)
		return 0;
	memcpy(&seq, p, sizeof seq);
	if (seq != next_seq)
		misordered++;
	next_seq = seq + 1;
	received++;
	waitq_wake_all(&done_wq);
	return 0;
}

static int rx_starve_main(void)
{
	static struct pktbuf *held[HOLD_MAX];
	int count = (int)arg_int("count", 200), nheld = 0;
	uint64_t hold_ns = (uint64_t)arg_int("hold_ms", 300) * 1000000ULL, t0;

	if (!fabric_ready() || fabric_register(APP_PROTO_TEST, handler) < 0) {
		printf("rx-starve: no fabric\n");
		return 1;
	}
	if (fabric_wait_peers(60000000000ULL) < 0 || cluster_barrier(30000000000ULL) < 0)
		return 1;
	if (node_id == 1) {
		thread_sleep_ns(hold_ns / 3);	/* node 0 takes the buffers first */
		for (uint32_t seq = 0; seq < (uint32_t)count; seq++) {
			int r = fabric_send(0, APP_PROTO_TEST, &seq, sizeof seq, NULL, 0, 0);
			if (r < 0) {
				printf("rx-starve: send %u failed: %d\n", seq, r);
				return 1;
			}
		}
		return fabric_flush(0, 60000000000ULL) < 0 ? 1 : 0;
	}
	if (node_id != 0)
		return 0;
	/* Every buffer the pool gives, held while node 1 sends. */
	t0 = cycles();
	while (nheld < HOLD_MAX && (held[nheld] = pkt_get()) != NULL)
		nheld++;
	printf("rx-starve: node 0 holds %d packet buffers for %lu ms\n", nheld,
	       (unsigned long)(hold_ns / 1000000));
	thread_sleep_ns(hold_ns);
	uint32_t during = received;
	for (int i = 0; i < nheld; i++)
		pkt_put(held[i]);
	printf("rx-starve: gave them back (%u messages taken meanwhile)\n", during);
	uint64_t end = cycles() + ns_to_cycles(60000000000ULL);
	irqflags_t f = irq_save();
	while (received < (uint32_t)count && cycles() < end)
		waitq_wait_timeout(&done_wq, 100000000ULL);
	irq_restore(f);
	result("held=%d received=%u misordered=%u ms=%lu", nheld, received, misordered,
	       (unsigned long)(cycles_to_ns(cycles() - t0) / 1000000));
	return received == (uint32_t)count && !misordered ? 0 : 1;
}

static const struct argspec rx_starve_args[] = {
	{ "count", ARG_INT, 1, 100000, "messages node 1 sends node 0 (default 200)" },
	{ "hold_ms", ARG_INT, 1, 60000, "how long node 0 holds every packet buffer (default 300)" },
	{ NULL, 0, 0, 0, NULL },
};

APP(rx_starve, "rx-starve",
    "a node out of packet buffers goes on running; the frames wait, then arrive",
    rx_starve_main, rx_starve_args, 2);
