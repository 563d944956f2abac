/*
 * The registry of the node's NIC and the calls every driver shares.
 */
#include <errno.h>
#include <stdio.h>

#include "drivers/netdev.h"
#include "kernel/trace.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"

TRACE_STAGE(TS_NIC_RX, "nic_rx");
TRACE_STAGE(TS_RX_DONE, "rx_done");

static struct netdev *the_netdev;

int netdev_register(struct netdev *nd)
{
	if (the_netdev) {
		printf("net: %s: a NIC (%s) is already in use; ignoring this one\n", nd->name,
		       the_netdev->name);
		return -EBUSY;
	}
	if (!nd->frame_max)
		nd->frame_max = ETH_MAX_FRAME;
	/* Longer frames than a small buffer holds: large buffers for those the layers above keep. */
	int nlarge = nd->frame_max <= PKT_JUMBO_FRAME ? PKT_LARGE_BUFS_JUMBO : PKT_LARGE_BUFS;
	if (nd->frame_max > PKT_MAX_FRAME && pkt_large_init(nlarge, nd->frame_max) < 0) {
		printf("net: %s: no memory for %d buffers of %u-byte frames; frames of %d bytes\n",
		       nd->name, nlarge, nd->frame_max, ETH_MAX_FRAME);
		nd->frame_max = ETH_MAX_FRAME;
	}
	the_netdev = nd;
	printf("net: %s (%s) mac %02x:%02x:%02x:%02x:%02x:%02x link %s\n", nd->name,
	       nd->model ? nd->model : "?", nd->mac[0], nd->mac[1], nd->mac[2], nd->mac[3],
	       nd->mac[4], nd->mac[5], nd->link_up ? "up" : "down");
	return 0;
}

struct netdev *netdev_get(void)
{
	return the_netdev;
}

void netdev_set_rx(struct netdev *nd, netdev_rx_fn fn, netdev_rx_frame_fn frame_fn)
{
	irqflags_t f = irq_save();
	nd->rx = fn;
	nd->rx_frame = frame_fn;
	irq_restore(f);
}

void netdev_input(struct netdev *nd, struct pktbuf *pb)
{
	nd->stats.rx_frames++;
	nd->stats.rx_bytes += pb->len;
	if (!nd->rx) {
		nd->stats.rx_no_hook++;
		pkt_put(pb);
		return;
	}
	nd->rx(nd, pb);
	trace_point(TS_RX_DONE);
}

void netdev_tx_space(struct netdev *nd)
{
	if (nd->tx_waiters.head)
		waitq_wake_all(&nd->tx_waiters);
}

void netdev_set_polling(struct netdev *nd, int on)
{
	irqflags_t f = irq_save();
	nd->polling = on;
	nd->ops->irq_enable(nd, !on);
	irq_restore(f);
}

int netdev_poll(struct netdev *nd)
{
	irqflags_t f = irq_save();
	int n = nd->ops->poll(nd, 64);
	irq_restore(f);
	return n;
}

int netdev_poll_wait(struct netdev *nd, volatile int *flag)
{
	if (*flag || nd->polling || nd->wait == NETDEV_WAIT_HALT || !nd->ops->poll_wait ||
	    nd->spin_us == 0)
		return *flag;
	irqflags_t f = irq_save();
	int r = nd->ops->poll_wait(nd, flag);
	irq_restore(f);
	return r;
}

int netdev_busy(struct netdev *nd, int how)
{
	if (how == NETDEV_BUSY_START && (!nd->ops->busy || nd->polling || nd->wait == NETDEV_WAIT_HALT))
		return 0;
	irqflags_t f = irq_save();
	nd->ops->busy(nd, how);
	irq_restore(f);
	return 1;
}

#define COUNTER_TYPE struct netdev_stats
static const struct counter_row netdev_rows[] = { NETDEV_COUNTERS(COUNTER_ROW) };
#undef COUNTER_TYPE

void netdev_print_stats(struct netdev *nd)
{
	struct netdev_stats s;
	char module[40];

	irqflags_t f = irq_save();
	if (nd->ops->read_counters)
		nd->ops->read_counters(nd);
	s = nd->stats;
	irq_restore(f);
	snprintf(module, sizeof module, "net: %s", nd->name);
	counters_print(module, netdev_rows, COUNTER_ROWS(netdev_rows), &s);
}
