/*
 * netdev: the registry of the node's NIC and the EtherType demultiplexer.
 */
#include <errno.h>
#include <stdio.h>

#include "drivers/pci.h"
#include "kernel/panic.h"
#include "kernel/x86.h"
#include "net/net.h"
#include "net/netdev.h"

#define MAX_TYPES 8

static struct netdev *the_netdev;
static struct {
	uint16_t type;
	ethertype_handler_t fn;
} types[MAX_TYPES];

struct net_stats net_stats;

int netdev_register(struct netdev *nd)
{
	if (the_netdev) {
		printf("net: %s: a NIC (%s) is already in use; ignoring this one\n", nd->name,
		       the_netdev->name);
		return -1;
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

int net_register(uint16_t type, ethertype_handler_t fn)
{
	irqflags_t f = irq_save();
	int free_slot = -1;

	for (int i = 0; i < MAX_TYPES; i++) {
		if (types[i].fn && types[i].type == type) {
			irq_restore(f);
			return -1;
		}
		if (!types[i].fn && free_slot < 0)
			free_slot = i;
	}
	if (free_slot >= 0) {
		types[free_slot].type = type;
		types[free_slot].fn = fn;
	}
	irq_restore(f);
	return free_slot >= 0 ? 0 : -1;
}

int net_unregister(uint16_t type)
{
	irqflags_t f = irq_save();

	for (int i = 0; i < MAX_TYPES; i++) {
		if (types[i].fn && types[i].type == type) {
			types[i].fn = NULL;
			irq_restore(f);
			return 0;
		}
	}
	irq_restore(f);
	return -1;
}

void netdev_input(struct netdev *nd, struct pktbuf *pb)
{
	uint16_t type;

	nd->stats.rx_frames++;
	nd->stats.rx_bytes += pb->len;
	if (pb->len < ETH_HLEN) {
		net_stats.short_frames++;
		pkt_put(pb);
		return;
	}
	type = get_be16(pb->data + 12);
	for (int i = 0; i < MAX_TYPES; i++) {
		if (types[i].fn && types[i].type == type) {
			net_stats.delivered++;
			types[i].fn(nd, pb);
			return;
		}
	}
	net_stats.unknown_type++;
	pkt_put(pb);
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

void netdev_print_stats(const struct netdev *nd)
{
	const struct netdev_stats *s = &nd->stats;

	printf("net: %s rx %lu frames %lu bytes, tx %lu frames %lu bytes, rx_no_buffer %lu, "
	       "rx_errors %lu, tx_ring_full %lu, irqs %lu\n",
	       nd->name, s->rx_frames, s->rx_bytes, s->tx_frames, s->tx_bytes, s->rx_no_buffer,
	       s->rx_errors, s->tx_ring_full, s->irqs);
	printf("net: demux delivered %lu, short %lu, unknown type %lu; pktbufs free %d of %d (low %d)\n",
	       net_stats.delivered, net_stats.short_frames, net_stats.unknown_type, pkt_free_count(),
	       pkt_total(), pkt_low_water());
}

int net_init(void)
{
	if (pkt_pool_init(1024) < 0) {
		printf("net: cannot allocate the packet buffer pool\n");
		return -1;
	}
	pci_probe_drivers();
	if (!the_netdev) {
		printf("net: no supported NIC found\n");
		return -1;
	}
	return 0;
}
