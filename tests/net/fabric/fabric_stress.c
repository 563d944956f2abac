/*
 * fabric-stress: every node streams sequence-numbered messages of varying
 * size to every other node over the reliable channel; every receiver
 * checks each message byte for byte and that each source's messages arrive
 * exactly once, in order.
 *
 * slow=1 makes receivers refuse now and then (-EBUSY) and accept again
 * a little later from a thread, as a mechanism applying back-pressure
 * would: senders must wait, and nothing may be lost.
 *
 * reboot=I (run with boot/cluster --reboot I) makes node I reset itself
 * once it has sent half of its messages.  The others' sends to its old
 * incarnation fail (-ECONNRESET), which they report; its second boot says
 * READY, and they send it everything again from the first message, as to
 * a node that never heard of them.  What a node receives is counted per
 * incarnation of its sender: the old one's messages are checked but not
 * owed, the new one's must all arrive, once and in order.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "apps/app.h"
#include "kernel/cmos.h"
#include "kernel/node.h"
#include "kernel/sync.h"
#include "kernel/thread.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"
#include "net/call/barrier.h"
#include "net/fabric/fabric.h"
#include "tests/apps/protos.h"

struct msg_hdr {
	uint16_t src;
	uint16_t pad;
	uint32_t seq;
	uint32_t len;		/* payload bytes including this header */
} __attribute__((packed));

#define CMOS_STRESS_REBOOT 0x41	/* CMOS byte: the reboot= node's next boot is its second */
#define CMOS_STRESS_BOOTS 0x42	/* CMOS byte: reboots= boots made so far */
#define STRESS_REBOOT_MAGIC 0xc3
#define SEQ_READY 0xffffffffu		/* a rebooted node's "send to me again" */
#define SEQ_BOOT 0xfffffffeu		/* reboots=: a message of a boot that then resets */
#define BOOT_MSGS 5			/* of those, to each peer per boot */

static int count, slow, reboot_node = -1;
static volatile uint32_t expect[MAX_NODES], got[MAX_NODES], epoch_seen[MAX_NODES];
static volatile int ready_from[MAX_NODES];
static volatile uint64_t received, old_received, lost_corrupt, dups, misordered, refusals;
static volatile uint64_t sent_total;
static volatile unsigned restarts;
static volatile uint64_t boot_msgs;	/* SEQ_BOOT messages taken (a replay taken would add one) */
static volatile int blocked;
static struct waitq done_wq = WAITQ_INIT, resume_wq = WAITQ_INIT;
static volatile int senders_failed;

static uint8_t pattern(uint32_t seq, int src, size_t i)
{
	return (uint8_t)(seq * 13 + (uint32_t)src * 101 + i);
}

static size_t msg_len(uint32_t seq, int src, int dst)
{
	/* A spread of sizes: small, medium and full frames. */
	uint32_t r = seq * 2654435761u ^ (uint32_t)(src * 31 + dst);
	switch (r % 4) {
	case 0: return sizeof(struct msg_hdr);
	case 1: return sizeof(struct msg_hdr) + r % 64;
	case 2: return sizeof(struct msg_hdr) + r % 600;
	default: return FAB_MTU;
	}
}

static int stress_handler(int src, const uint8_t *p, size_t len, struct pktbuf *pb)
{
	struct msg_hdr h;

	(void)pb;
	if (slow && !blocked && ((received + refusals) % 53) == 17) {
		refusals++;
		blocked = 1;
		waitq_wake_one(&resume_wq);
		return -EBUSY;
	}
	if (len < sizeof h) {
		lost_corrupt++;
		return 0;
	}
	memcpy(&h, p, sizeof h);
	if (h.src != src || h.len != len) {
		lost_corrupt++;
		return 0;
	}
	if (h.seq == SEQ_READY && len == sizeof h) {
		ready_from[src] = 1;
		return 0;
	}
	if (h.seq == SEQ_BOOT && len == sizeof h) {
		boot_msgs++;
		return 0;
	}
	/* A new incarnation of src: it owes everything from the first message again. */
	if (fabric_peer_epoch(src) != epoch_seen[src]) {
		if (epoch_seen[src]) {
			old_received += got[src];
			received -= got[src];
			expect[src] = 0;
			got[src] = 0;
		}
		epoch_seen[src] = fabric_peer_epoch(src);
	}
	for (size_t i = sizeof h; i < len; i++) {
		if (p[i] != pattern(h.seq, src, i)) {
			lost_corrupt++;
			return 0;
		}
	}
	if (h.seq < expect[src])
		dups++;
	else if (h.seq > expect[src])
		misordered++;
	if (h.seq >= expect[src])
		expect[src] = h.seq + 1;
	got[src]++;
	received++;
	if (received == (uint64_t)count * (uint64_t)(num_nodes - 1))
		waitq_wake_all(&done_wq);
	return 0;
}

/* slow=1: accept again a little after each refusal. */
static void *resumer(void *arg)
{
	(void)arg;
	for (;;) {
		irqflags_t f = irq_save();
		while (!blocked)
			waitq_wait(&resume_wq);
		irq_restore(f);
		thread_sleep_ns(500000);
		blocked = 0;
		fabric_resume();
	}
	return NULL;
}

/* reboot=: wait up to 60 s for dst's new incarnation to say READY. */
static int wait_ready(int dst)
{
	for (int i = 0; i < 6000 && !ready_from[dst]; i++)
		thread_sleep_ns(10000000);
	return ready_from[dst] ? 0 : -ETIMEDOUT;
}

static void *sender(void *arg)
{
	int dst = (int)(uintptr_t)arg;
	uint8_t buf[FAB_MTU];
	uint32_t epoch = fabric_peer_epoch(dst);
	/* To the reboot= node: the stream must reach its second incarnation whole. */
	int owe_new = dst == reboot_node && node_id != reboot_node;

	for (uint32_t seq = 0; seq < (uint32_t)count || owe_new; seq++) {
		int r = 0;
		if (seq < (uint32_t)count) {
			size_t len = msg_len(seq, node_id, dst);
			struct msg_hdr h = { (uint16_t)node_id, 0, seq, (uint32_t)len };
			memcpy(buf, &h, sizeof h);
			for (size_t i = sizeof h; i < len; i++)
				buf[i] = pattern(seq, node_id, i);
			/* Only to the incarnation this stream began with. */
			r = fabric_send_at(dst, epoch, APP_PROTO_TEST, buf, len, NULL, 0, 0);
		}
		if (owe_new && (r == -ECONNRESET || seq >= (uint32_t)count)) {
			/* Its old incarnation got what it got; the new one gets all of it. */
			if (r == -ECONNRESET)
				printf("fabric-stress: n%d rebooted: send %u to its old incarnation failed "
				       "(%d); all %d again once it is ready\n", dst, seq, r, count);
			if (wait_ready(dst) < 0) {
				printf("fabric-stress: n%d never said READY\n", dst);
				senders_failed++;
				return NULL;
			}
			if (r != -ECONNRESET)
				printf("fabric-stress: n%d rebooted after taking all %d; all again\n", dst,
				       count);
			restarts++;
			owe_new = 0;
			epoch = fabric_peer_epoch(dst);
			seq = (uint32_t)-1;
			continue;
		}
		if (r < 0) {
			printf("fabric-stress: send %u to n%d failed: %d\n", seq, dst, r);
			senders_failed++;
			return NULL;
		}
		sent_total++;
	}
	if (fabric_flush(dst, 60000000000ULL) < 0) {
		printf("fabric-stress: messages to n%d never acknowledged\n", dst);
		senders_failed++;
	}
	return NULL;
}

static const struct argspec stress_args[] = {
	{ "count", ARG_INT, 1, 10000000, "messages to each other node (default 2000)" },
	{ "slow", ARG_BOOL, 0, 0, "receivers refuse now and then (back-pressure), default off" },
	{ "reboot", ARG_INT, 1, MAX_NODES - 1,
	  "this node resets itself halfway (with boot/cluster --reboot I), default none" },
	{ "reboots", ARG_INT, 1, 100, "with reboot=I: node I instead resets this many times once "
	  "bound, before the streams, then streams with its last incarnation" },
	{ "stall_ms", ARG_INT, 1, 600000, "node 0's app thread stops this long before its streams "
	  "(a wait nothing ends early: the watchdog's test), default none" },
	{ NULL, 0, 0, 0, NULL },
};

static int stress_main(void)
{
	struct thread *t[MAX_NODES];
	struct fabric_counters c;
	uint64_t want, t0, elapsed;
	int timed_out = 0;

	count = (int)arg_int("count", 2000);
	slow = arg_bool("slow", 0);
	reboot_node = (int)arg_int("reboot", -1);
	int second_boot = node_id == reboot_node && cmos_read(CMOS_STRESS_REBOOT) == STRESS_REBOOT_MAGIC;
	if (!fabric_ready()) {
		printf("fabric-stress: no network\n");
		return 1;
	}
	fabric_register(APP_PROTO_TEST, stress_handler);
	if (slow && !thread_create("resumer", resumer, NULL, PRIO_HIGH, 0))
		return 1;
	if (fabric_wait_peers(120000000000ULL) < 0)
		return 1;
	long stall_ms = arg_int("stall_ms", 0);
	if (stall_ms && node_id == 0) {
		struct sem never;
		sem_init(&never, 0);
		printf("fabric-stress: node 0's app thread stops for %ld ms\n", stall_ms);
		sem_wait_timeout(&never, (uint64_t)stall_ms * 1000000ULL);
	}
	int reboots = (int)arg_int("reboots", 0);
	if (reboots && node_id == reboot_node) {
		/* Bound by every peer (wait_peers): each boot is one they bind, then replace. */
		int k = cmos_read(CMOS_STRESS_BOOTS);
		if (k < reboots) {
			/* A few messages each boot, acknowledged: what a replay of this boot would repeat. */
			struct msg_hdr bm = { (uint16_t)node_id, 0, SEQ_BOOT, sizeof bm };
			for (int i = 0; i < num_nodes; i++)
				for (int m = 0; i != node_id && m < BOOT_MSGS; m++)
					if (fabric_send(i, APP_PROTO_TEST, &bm, sizeof bm, NULL, 0, 0) < 0)
						return 1;
			for (int i = 0; i < num_nodes; i++)
				if (i != node_id && fabric_flush(i, 10000000000ULL) < 0)
					return 1;
			cmos_write(CMOS_STRESS_BOOTS, (uint8_t)(k + 1));
			printf("fabric-stress: node %d, boot %d of %d (incarnation %016lx): resets\n", node_id,
			       k + 1, reboots + 1, fabric_incarnation());
			machine_reset();
		}
		cmos_write(CMOS_STRESS_BOOTS, 0);
		printf("fabric-stress: node %d, boot %d of %d (incarnation %016lx): streams\n", node_id,
		       k + 1, reboots + 1, fabric_incarnation());
	}
	if (reboots) {
		/* The last incarnation says READY; the others wait for it before the barrier. */
		if (node_id == reboot_node) {
			struct msg_hdr ready = { (uint16_t)node_id, 0, SEQ_READY, sizeof ready };
			for (int i = 0; i < num_nodes; i++)
				if (i != node_id &&
				    fabric_send(i, APP_PROTO_TEST, &ready, sizeof ready, NULL, 0, 0) < 0)
					return 1;
		} else if (wait_ready(reboot_node) < 0) {
			printf("fabric-stress: n%d never said READY after its reboots\n", reboot_node);
			return 1;
		}
		reboot_node = -1;	/* no reset halfway: every stream is to the last incarnation */
	}
	if (second_boot) {
		/* The others wait for this before they send to the new incarnation. */
		struct msg_hdr ready = { (uint16_t)node_id, 0, SEQ_READY, sizeof ready };
		cmos_write(CMOS_STRESS_REBOOT, 0);
		printf("fabric-stress: node %d, second boot (incarnation %016lx)\n", node_id,
		       fabric_incarnation());
		for (int i = 0; i < num_nodes; i++)
			if (i != node_id && fabric_send(i, APP_PROTO_TEST, &ready, sizeof ready, NULL, 0, 0) < 0)
				return 1;
	}
	/* A second boot's first barrier was released long ago: node 0 lets it through. */
	int br = cluster_barrier(reboots ? 120000000000ULL : 30000000000ULL);
	if (br < 0) {
		printf("fabric-stress: the start barrier failed (%d)\n", br);
		return 1;
	}

	t0 = cycles();
	for (int i = 0; i < num_nodes; i++) {
		t[i] = NULL;
		if (i != node_id)
			t[i] = thread_create("sender", sender, (void *)(uintptr_t)i, PRIO_NORMAL, 0);
	}
	if (node_id == reboot_node && !second_boot) {
		/* Halfway: reset, in the middle of every stream to and from this node. */
		while (sent_total < (uint64_t)count * (uint64_t)(num_nodes - 1) / 2)
			thread_sleep_ns(1000000);
		printf("fabric-stress: node %d resets after %lu messages\n", node_id, sent_total);
		cmos_write(CMOS_STRESS_REBOOT, STRESS_REBOOT_MAGIC);
		machine_reset();
	}
	for (int i = 0; i < num_nodes; i++)
		if (t[i])
			thread_join(t[i]);

	want = (uint64_t)count * (uint64_t)(num_nodes - 1);
	/*
	 * Up to 60 s for what the others send, but no longer than three peer
	 * timeouts without a message: a sender that failed (its peer died or
	 * was reset) sends no more, and waiting for it would only hang.
	 */
	uint64_t end = cycles() + ns_to_cycles(60000000000ULL);
	uint64_t stall = ns_to_cycles(3 * (uint64_t)arg_int("peer_timeout_ms", 10000) * 1000000ULL);
	uint64_t seen = received, last = cycles();
	irqflags_t f = irq_save();
	while (received < want && cycles() < end && cycles() - last < stall) {
		waitq_wait_timeout(&done_wq, 100000000ULL);
		if (received != seen) {
			seen = received;
			last = cycles();
		}
	}
	irq_restore(f);
	elapsed = cycles_to_ns(cycles() - t0) / 1000000;
	if (received < want)
		timed_out = 1;
	/* Everyone done before anyone stops answering acks (a failed run has nothing to wait for). */
	if (!timed_out && !senders_failed)
		cluster_barrier(60000000000ULL);

	uint64_t lost = want - received + lost_corrupt;
	fabric_counters(&c);
	fabric_print_stats();
	printf("fabric-stress: %lu messages in %lu ms, back-pressure refusals %lu%s\n", received,
	       elapsed, refusals, timed_out ? " (timed out waiting)" : "");
	result("sent=%lu received=%lu lost=%lu dup=%lu misordered=%lu retransmits=%lu "
	       "refusals=%lu sender_waits=%lu ms=%lu%s",
	       (uint64_t)count * (uint64_t)(num_nodes - 1), received, lost, dups, misordered,
	       c.retransmits, refusals, c.send_waits, elapsed, reboot_node < 0 ? "" : "");
	if (reboot_node >= 0)
		result("reboot node=%d restarts=%u old_received=%lu", reboot_node, restarts, old_received);
	if (reboots)
		result("reboots=%d boot_msgs=%lu", reboots, boot_msgs);
	return lost || dups || misordered || senders_failed ? 1 : 0;
}

APP(fabric_stress, "fabric-stress",
    "all-to-all reliable streams; checks exactly-once in-order delivery",
    stress_main, stress_args, 2);
