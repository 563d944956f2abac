/*
 * rejoin: a node that reboots joins the cluster again, and what was in
 * flight to its old incarnation fails clearly, never reaching the new one.
 * Two nodes; the launcher lets node 1 reboot (boot/cluster --reboot 1).
 *
 * Node 1, first boot: after the start barrier it turns interrupts off,
 * tells node 0 (FREEZE, raw), and from then on answers nothing: it spins for
 * freeze_ms (with peer_timeout_ms below it, node 0 declares it dead), marks
 * a CMOS byte and resets the machine.  Node 0, on FREEZE, queues `count`
 * messages of phase 1 and a fence to node 1 and waits: the fence must end
 * with -ECONNRESET when the new incarnation is bound (-EHOSTDOWN first if
 * node 1 was declared dead), and the binding epoch must grow by one.
 *
 * Node 1, second boot (the CMOS byte says so): tells node 0 READY and
 * counts what arrives; node 0 then sends `count` messages of phase 2 and
 * a fence, which must succeed, then DONE.  Node 1 must have received every
 * phase-2 message in order and not one of phase 1.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "apps/app.h"
#include "kernel/cmos.h"
#include "kernel/sync.h"
#include "kernel/thread.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"
#include "net/call/barrier.h"
#include "net/call/call.h"
#include "net/fabric/fabric.h"
#include "tests/apps/protos.h"

#define CMOS_REJOIN 0x40
#define REJOIN_MAGIC 0xb7
#define WAIT_NS 60000000000ULL

enum { M_FREEZE = 1, M_READY, M_DATA, M_DONE };

struct msg {
	uint32_t kind, phase, seq;
	uint64_t inc;			/* the sender's incarnation */
} __attribute__((packed));

static struct waitq wq = WAITQ_INIT;
static volatile int got_freeze, got_ready, got_done;
static volatile uint32_t old_seen, new_seen, new_next, misordered;

static int handler(int src, const uint8_t *p, size_t len, struct pktbuf *pb)
{
	struct msg m;

	(void)pb;
	if (len != sizeof m || src != (node_id == 0 ? 1 : 0))
		return 0;
	memcpy(&m, p, sizeof m);
	switch (m.kind) {
	case M_FREEZE: got_freeze = 1; break;
	case M_READY: got_ready = 1; break;
	case M_DONE: got_done = 1; break;
	case M_DATA:
		if (m.phase == 1) {
			old_seen++;
		} else {
			if (m.seq != new_next)
				misordered++;
			new_next = m.seq + 1;
			new_seen++;
		}
		break;
	}
	waitq_wake_all(&wq);
	return 0;
}

static int wait_flag(volatile int *flag, uint64_t ns)
{
	uint64_t end = cycles() + ns_to_cycles(ns);
	irqflags_t f = irq_save();

	while (!*flag && cycles() < end)
		waitq_wait_timeout(&wq, 100000000);
	irq_restore(f);
	return *flag ? 0 : -ETIMEDOUT;
}

static int say(int dst, uint32_t kind, uint32_t phase, uint32_t seq, int flags)
{
	struct msg m = { kind, phase, seq, fabric_incarnation() };

	return fabric_send(dst, APP_PROTO_TEST, &m, sizeof m, NULL, 0, flags);
}

static int node1_first_boot(void)
{
	uint64_t freeze_ns = (uint64_t)arg_int("freeze_ms", 0) * 1000000ULL;

	if (cluster_barrier(WAIT_NS) < 0)
		return 1;
	printf("rejoin: node 1, first boot (incarnation %016lx): freezing, then rebooting\n",
	       fabric_incarnation());
	cli();
	/*
	 * From here nothing is answered: the FREEZE notice leaves, nothing comes
	 * in.  As raw frames, several, since nothing will be retransmitted.
	 */
	struct msg m = { M_FREEZE, 0, 0, fabric_incarnation() };
	for (int i = 0; i < 4; i++)
		fabric_raw_send(0, APP_PROTO_TEST, &m, sizeof m);
	/*
	 * An emulated NIC sends from its host thread, later: a reset right
	 * after the notices could drop them with the device.  Give them 50 ms.
	 */
	if (freeze_ns < 50000000ULL)
		freeze_ns = 50000000ULL;
	uint64_t t0 = rdtsc();
	while (cycles_to_ns(rdtsc() - t0) < freeze_ns)
		cpu_relax();
	cmos_write(CMOS_REJOIN, REJOIN_MAGIC);
	machine_reset();
}

static int node1_second_boot(void)
{
	int ok;

	cmos_write(CMOS_REJOIN, 0);
	printf("rejoin: node 1, second boot (incarnation %016lx)\n", fabric_incarnation());
	if (say(0, M_READY, 0, 0, 0) < 0 || wait_flag(&got_done, WAIT_NS) < 0) {
		printf("rejoin: node 0 never finished\n");
		return 1;
	}
	ok = old_seen == 0 && misordered == 0 && new_seen == (uint32_t)arg_int("count", 16);
	result("node=1 boot=2 old=%u new=%u misordered=%u ok=%d", old_seen, new_seen, misordered, ok);
	return !ok;
}

static int node0(void)
{
	int count = (int)arg_int("count", 16), queued = 0, old_op, new_op;
	uint32_t e1, e2;

	if (cluster_barrier(WAIT_NS) < 0) {
		printf("rejoin: the first barrier failed\n");
		return 1;
	}
	if (wait_flag(&got_freeze, WAIT_NS) < 0) {
		printf("rejoin: node 1's notice that it freezes never came\n");
		return 1;
	}
	e1 = fabric_peer_epoch(1);
	/* Node 1 answers nothing now: all of this is in flight to its old incarnation. */
	for (int i = 0; i < count; i++)
		if (say(1, M_DATA, 1, (uint32_t)i, FABRIC_NOWAIT) == 0)
			queued++;
	uint64_t t0 = cycles();
	old_op = call_fence(1, WAIT_NS);
	uint64_t ms = cycles_to_ns(cycles() - t0) / 1000000;
	printf("rejoin: the fence to node 1's old incarnation: %d (%s) after %lu ms; %d messages "
	       "were queued to it\n", old_op, strerror(-old_op), ms, queued);
	/* Declared dead first: the new incarnation is bound later. */
	if (wait_flag(&got_ready, WAIT_NS) < 0) {
		printf("rejoin: node 1 did not come back\n");
		return 1;
	}
	e2 = fabric_peer_epoch(1);
	for (int i = 0; i < count; i++) {
		int r = say(1, M_DATA, 2, (uint32_t)i, 0);
		if (r < 0) {
			printf("rejoin: message %d to node 1's new incarnation: %d\n", i, r);
			return 1;
		}
	}
	new_op = call_fence(1, WAIT_NS);
	printf("rejoin: node 1 is back (binding %u, was %u); the fence to it: %d\n", e2, e1, new_op);
	if (say(1, M_DONE, 0, 0, 0) < 0 || fabric_flush(1, WAIT_NS) < 0) {
		printf("rejoin: the last message to node 1 did not go\n");
		return 1;
	}
	int ok = (old_op == -ECONNRESET || old_op == -EHOSTDOWN) && new_op == 0 && e2 == e1 + 1 &&
		 queued == count;
	result("node=0 old_op=%d new_op=%d epoch_before=%u epoch_after=%u queued=%d dead=%d ok=%d",
	       old_op, new_op, e1, e2, queued, old_op == -EHOSTDOWN, ok);
	return !ok;
}

static int rejoin_main(void)
{
	if (!fabric_ready() || fabric_register(APP_PROTO_TEST, handler) < 0 ||
	    fabric_register_raw(APP_PROTO_TEST, handler) < 0)
		return 1;
	if (node_id == 1 && cmos_read(CMOS_REJOIN) == REJOIN_MAGIC)
		return node1_second_boot();
	if (fabric_wait_peers(WAIT_NS) < 0)
		return 1;
	if (node_id == 1)
		return node1_first_boot();
	if (node_id == 0)
		return node0();
	return cluster_barrier(WAIT_NS) < 0;	/* other nodes only take part in the barrier */
}

static const struct argspec rejoin_args[] = {
	{ "count", ARG_INT, 1, 64, "messages queued to each incarnation (default 16)" },
	{ "freeze_ms", ARG_INT, 0, 600000, "node 1 answers nothing this long before it reboots (default 0; at least 50 ms pass, so that its notices leave first)" },
	{ NULL, 0, 0, 0, NULL },
};

APP(rejoin, "rejoin",
    "node 1 reboots: operations to its old incarnation fail, to its new one succeed",
    rejoin_main, rejoin_args, 2);
