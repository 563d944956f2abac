/*
 * busy-send: a node that writes blocks is not interrupted by its peer's
 * answers (net_busy_begin, netdev ops->busy).  Node 1 exports a segment
 * of `mib` MiB to node 0, which writes it `blocks` times with
 * rmem_write_block, each block a pattern of its own with the notify flag on
 * its last piece.  Node 1's fabric acknowledges the frames meanwhile (on
 * the shared-memory link, for credit and to let go of the frames pinned in
 * the ring); node 0's thread sends all the time, so the link's driver
 * would ring node 0's doorbell for them: an interrupt, and on this host an
 * exit into QEMU for node 1, for nearly every acknowledgement.  Where the
 * node polls its link (wait mode adaptive or spin), node 0 asks for no
 * doorbell while it sends a piece and takes what came after it.
 *
 *     RESULT busy-send blocks=<n> mib=<n> irqs=<node 0's NIC interrupts while it wrote>
 *
 * and, from node 1, `busy-send: <n> blocks notified, the last one intact`.
 * The app fails where a block went missing or its bytes differ.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/app.h"
#include "kernel/sync.h"
#include "kernel/thread.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"
#include "net/call/barrier.h"
#include "net/fabric/fabric.h"
#include "net/net.h"
#include "net/rmem/rmem.h"

#define WAIT_NS 120000000000ULL

static volatile uint32_t notified;
static struct waitq notify_wq = WAITQ_INIT;

static uint8_t pat(uint32_t block, size_t i)
{
	return (uint8_t)(block * 131 + i * 7 + (i >> 12));
}

static void on_notify(void *arg, int seg, uint32_t off, uint32_t count)
{
	(void)arg, (void)seg, (void)off, (void)count;
	notified++;
	waitq_wake_all(&notify_wq);
}

/* Node 1: the segment, then every block's notification, then the last block's bytes. */
static int target(uint8_t *buf, size_t len, uint32_t blocks)
{
	int seg = seg_export_for("busy-send", buf, len, 0, RMEM_W);

	if (seg < 0) {
		printf("busy-send: cannot export the segment (%d)\n", seg);
		return 1;
	}
	seg_notify(seg, 1, on_notify, NULL);
	if (cluster_barrier(WAIT_NS) < 0)
		return 1;
	uint64_t end = cycles() + ns_to_cycles(WAIT_NS);
	irqflags_t f = irq_save();
	while (notified < blocks && cycles() < end)
		waitq_wait_timeout(&notify_wq, 100000000ULL);
	irq_restore(f);
	size_t bad = 0;
	for (size_t i = 0; i < len; i++)
		bad += buf[i] != pat(blocks - 1, i);
	printf("busy-send: %u blocks notified, the last one %s (%zu bytes differ)\n", notified,
	       bad ? "DAMAGED" : "intact", bad);
	seg_unexport(seg);
	return cluster_barrier(WAIT_NS) < 0 || notified != blocks || bad ? 1 : 0;
}

/* Node 0: the blocks, counting its NIC's interrupts meanwhile. */
static int writer(uint8_t *buf, size_t len, uint32_t blocks)
{
	if (cluster_barrier(WAIT_NS) < 0)
		return 1;
	int rd = rmem_import_wait(1, "busy-send", WAIT_NS);
	if (rd < 0) {
		printf("busy-send: cannot import node 1's segment (%d)\n", rd);
		return 1;
	}
	int r = 0;
	uint64_t irqs = 0;
	for (uint32_t b = 0; b < blocks && r == 0; b++) {
		for (size_t i = 0; i < len; i++)
			buf[i] = pat(b, i);
		/* Only while it writes: patterning the next block is work of another kind. */
		uint64_t before = net_irqs();
		if ((r = rmem_write_block(rd, 0, buf, len, RMEM_INTR)) < 0)
			printf("busy-send: block %u: %d\n", b, r);
		irqs += net_irqs() - before;
	}
	rmem_release(rd);
	result("blocks=%u mib=%zu irqs=%lu", blocks, len >> 20, (unsigned long)irqs);
	return cluster_barrier(WAIT_NS) < 0 || r < 0 ? 1 : 0;
}

static int busy_send_main(void)
{
	uint32_t blocks = (uint32_t)arg_int("blocks", 8);
	size_t len = (size_t)arg_int("mib", 4) << 20;
	uint8_t *buf;

	if (!fabric_ready() || fabric_wait_peers(60000000000ULL) < 0) {
		printf("busy-send: no fabric\n");
		return 1;
	}
	if (node_id > 1)	/* the others only meet the two barriers */
		return cluster_barrier(WAIT_NS) < 0 || cluster_barrier(WAIT_NS) < 0 ? 1 : 0;
	if (!(buf = malloc(len))) {
		printf("busy-send: no memory for %zu MiB\n", len >> 20);
		return 1;
	}
	int r = node_id == 0 ? writer(buf, len, blocks) : target(buf, len, blocks);
	free(buf);
	return r;
}

static const struct argspec busy_send_args[] = {
	{ "blocks", ARG_INT, 1, 1000, "blocks node 0 writes (default 8)" },
	{ "mib", ARG_INT, 1, 16, "MiB a block (default 4)" },
	{ NULL, 0, 0, 0, NULL },
};

APP(busy_send, "busy-send", "a node writing blocks takes its peer's answers after each piece, unrung",
    busy_send_main, busy_send_args, 2);
