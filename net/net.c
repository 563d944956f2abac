/*
 * The EtherType demultiplexer (the NIC's one receive hook) and the raw
 * link calls.  See net.h.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "drivers/netdev.h"
#include "kernel/init.h"
#include "kernel/sync.h"
#include "kernel/thread.h"
#include "kernel/trace.h"
#include "kernel/trap.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"
#include "net/net.h"

TRACE_STAGE(TS_MECH_SEND, "mech_send");
TRACE_STAGE(TS_NIC_TX, "nic_tx");
TRACE_STAGE(TS_MECH_RX, "mech_rx");
TRACE_STAGE(TS_MECH_DONE, "mech_done");

#define MAX_TYPES 8

static struct netdev *nd;
static struct {
	uint16_t type;
	ethertype_handler_t fn;
	ethertype_frame_handler_t frame_fn;	/* or NULL: frames in place go up in a pktbuf */
} types[MAX_TYPES];
static unsigned last_type;		/* the slot of the last frame's type */

struct net_stats net_stats;

/* The slot of the handler of type, or -1. */
static __attribute__((noinline)) int type_slot(uint16_t type)
{
	for (int i = 0; i < MAX_TYPES; i++)
		if (types[i].fn && types[i].type == type)
			return i;
	return -1;
}

int net_register(uint16_t type, ethertype_handler_t fn)
{
	irqflags_t f = irq_save();
	int free_slot = -1;

	for (int i = 0; i < MAX_TYPES; i++) {
		if (types[i].fn && types[i].type == type) {
			irq_restore(f);
			return -EBUSY;
		}
		if (!types[i].fn && free_slot < 0)
			free_slot = i;
	}
	if (free_slot >= 0) {
		types[free_slot].type = type;
		types[free_slot].fn = fn;
		types[free_slot].frame_fn = NULL;
	}
	irq_restore(f);
	return free_slot >= 0 ? 0 : -EBUSY;
}

int net_register_frame(uint16_t type, ethertype_frame_handler_t fn)
{
	irqflags_t f = irq_save();
	int i = type_slot(type);

	if (i >= 0)
		types[i].frame_fn = fn;
	irq_restore(f);
	return i >= 0 ? 0 : -ENOENT;
}

int net_unregister(uint16_t type)
{
	irqflags_t f = irq_save();
	int i = type_slot(type);

	if (i >= 0)
		types[i].fn = NULL;
	irq_restore(f);
	return i >= 0 ? 0 : -ENOENT;
}

/* The NIC's receive hook (interrupt context). */
static void demux(struct netdev *dev, struct pktbuf *pb)
{
	uint16_t type;

	(void)dev;
	if (pb->len < ETH_HLEN) {
		net_stats.short_frames++;
		pkt_put(pb);
		return;
	}
	type = get_be16(pb->data + 12);
	int i = type_slot(type);
	if (i < 0) {
		net_stats.unknown_type++;
		pkt_put(pb);
		return;
	}
	net_stats.delivered++;
	types[i].fn(pb);
}

/* demux_frame's frame to a handler that keeps what it is given: in a buffer of the pool, or later. */
static __attribute__((noinline)) int frame_to_pktbuf(int i, const uint8_t *frame, size_t len)
{
	struct pktbuf *pb = pkt_get_len(len);

	if (!pb) {
		net_stats.no_buffer++;
		return -ENOBUFS;
	}
	memcpy(pb->data, frame, len);
	pb->len = (uint16_t)len;
	net_stats.delivered++;
	types[i].fn(pb);
	return 0;
}

/*
 * The NIC's hook for a frame in its own memory (interrupt context): 0 or
 * -ENOBUFS.  The slot of the last frame's type is tried first: a link
 * carries runs of one kind.
 */
static int demux_frame(struct netdev *dev, uint8_t *frame, size_t len)
{
	int i = (int)last_type, r;
	uint16_t type;

	if (len < ETH_HLEN || len > dev->frame_max) {
		net_stats.short_frames++;
		return 0;
	}
	type = get_be16(frame + 12);
	if (!types[i].fn || types[i].type != type) {
		if ((i = type_slot(type)) < 0) {
			net_stats.unknown_type++;
			return 0;
		}
		last_type = (unsigned)i;
	}
	if (!types[i].frame_fn)
		return frame_to_pktbuf(i, frame, len);
	if ((r = types[i].frame_fn(frame, len)) == 0)
		net_stats.delivered++;
	return r;
}

int net_up(void)
{
	return nd != NULL;
}

uint32_t net_frame_max(void)
{
	return nd ? nd->frame_max : ETH_MAX_FRAME;
}

static uint32_t path_frame = ETH_MAX_FRAME;
static void (*path_frame_fn)(uint32_t);

void net_set_path_frame(uint32_t frame)
{
	if (frame == path_frame)
		return;
	path_frame = frame;
	if (path_frame_fn)
		path_frame_fn(frame);
}

void net_on_path_frame(void (*fn)(uint32_t frame))
{
	path_frame_fn = fn;
	fn(path_frame);
}

int net_link_lossless(void)
{
	return nd && (nd->flags & NETDEV_LOSSLESS);
}

const uint8_t *net_mac(void)
{
	static const uint8_t none[ETH_ALEN];

	return nd ? nd->mac : none;
}

volatile uint8_t *net_shared_lines(void)
{
	return nd ? nd->lines : NULL;
}

static uint16_t shared_type;
static ethertype_frame_handler_t shared_fn;

/* The NIC's hook for a long frame where it lies in shared memory: its type read once. */
static int demux_shared(struct netdev *dev, uint8_t *frame, size_t len)
{
	uint16_t type = get_be16(frame + 12);
	int i, r;

	(void)dev;
	if (type == shared_type && shared_fn) {
		if ((r = shared_fn(frame, len)) == 0)
			net_stats.delivered++;
		return r;
	}
	if ((i = type_slot(type)) < 0) {
		net_stats.unknown_type++;
		return 0;
	}
	return frame_to_pktbuf(i, frame, len);	/* a copy of its own, whatever its handler */
}

void net_set_rx_shared(uint16_t ethertype, ethertype_frame_handler_t fn)
{
	irqflags_t f = irq_save();

	shared_type = ethertype;
	shared_fn = fn;
	if (nd)
		nd->rx_shared = fn ? demux_shared : NULL;
	irq_restore(f);
}

const char *net_nic_name(void)
{
	return nd ? nd->name : "none";
}

int net_transmit(struct pktbuf *pb)
{
	irqflags_t f;
	int r;

	if (!nd)
		return -ENODEV;
	f = irq_save();
	r = nd->ops->transmit(nd, pb);
	irq_restore(f);
	trace_point(TS_NIC_TX);
	return r;
}

uint8_t *net_tx_begin(const uint8_t dst[ETH_ALEN], size_t len)
{
	return nd && nd->ops->tx_begin ? nd->ops->tx_begin(nd, dst, len) : NULL;
}

void net_tx_commit(size_t len)
{
	nd->ops->tx_commit(nd, len);
	trace_point(TS_NIC_TX);
}

int net_tx_pins(void)
{
	return nd && nd->ops->tx_commit_pinned && nd->ops->tx_unpin;
}

void net_tx_commit_pinned(size_t len)
{
	nd->ops->tx_commit_pinned(nd, len);
	trace_point(TS_NIC_TX);
}

void net_tx_unpin(const uint8_t dst[ETH_ALEN], unsigned n)
{
	nd->ops->tx_unpin(nd, dst, n);
}

int net_transmit_wait(struct pktbuf *pb, uint64_t timeout_ns, uint64_t *waits)
{
	uint64_t deadline = cycles() + ns_to_cycles(timeout_ns);
	irqflags_t f;
	int r;

	if (!nd)
		return -ENODEV;
	f = irq_save();
	while ((r = nd->ops->transmit(nd, pb)) == -EAGAIN) {
		uint64_t now = cycles();
		if (now >= deadline) {
			r = -ETIMEDOUT;
			break;
		}
		if (waits)
			(*waits)++;
		waitq_wait_timeout(&nd->tx_waiters, cycles_to_ns(deadline - now));
	}
	irq_restore(f);
	return r;
}

void net_set_polling(int on)
{
	if (nd)
		netdev_set_polling(nd, on);
}

int net_poll(void)
{
	return nd ? netdev_poll(nd) : 0;
}

_Static_assert((int)NET_WAIT_HALT == (int)NETDEV_WAIT_HALT &&
	       (int)NET_WAIT_ADAPTIVE == (int)NETDEV_WAIT_ADAPTIVE &&
	       (int)NET_WAIT_SPIN == (int)NETDEV_WAIT_SPIN, "one set of wait modes");

int net_set_wait(int mode, unsigned spin_us)
{
	if (!nd)
		return -ENODEV;
	if (mode == NETDEV_WAIT_HALT && !nd->ops->set_wait)
		return 0;
	if (!nd->ops->set_wait)
		return -ENOTSUP;
	irqflags_t f = irq_save();
	int r = nd->ops->set_wait(nd, mode, spin_us);
	irq_restore(f);
	return r;
}

int net_wait_mode(void)
{
	return nd ? nd->wait : NETDEV_WAIT_HALT;
}

unsigned net_wait_spin_us(void)
{
	return nd ? nd->spin_us : 0;
}

int net_poll_wait(volatile int *flag)
{
	return nd ? netdev_poll_wait(nd, flag) : *flag;
}

int net_busy_begin(void)
{
	/* A thread with interrupts on: a caller with them off expects no frame taken under it. */
	if (!nd || in_irq || !irq_enabled())
		return 0;
	/* No other thread runs while the node asks for no interrupt: it would not look at the rings. */
	thread_nopreempt_begin();
	if (netdev_busy(nd, NETDEV_BUSY_START))
		return 1;
	thread_nopreempt_end();
	return 0;
}

void net_busy_look_now(void)
{
	netdev_busy(nd, NETDEV_BUSY_LOOK);
}

void net_busy_stop(void)
{
	netdev_busy(nd, NETDEV_BUSY_STOP);
	thread_nopreempt_end();
}

uint64_t net_irqs(void)
{
	return nd ? nd->stats.irqs : 0;
}

#define COUNTER_TYPE struct net_stats
static const struct counter_row net_rows[] = { NET_COUNTERS(COUNTER_ROW) };
#undef COUNTER_TYPE

void net_print_stats(void)
{
	if (nd)
		netdev_print_stats(nd);
	counters_print("net", net_rows, COUNTER_ROWS(net_rows), &net_stats);
	printf("net: pktbufs free %d of %d (low %d)\n", pkt_free_count(), pkt_total(), pkt_low_water());
}

/* Attach to the NIC the drivers found (after INIT_DEVICES). */
static int net_init(void)
{
	nd = netdev_get();
	if (!nd) {
		printf("net: no supported NIC found\n");
		return -ENODEV;
	}
	netdev_set_rx(nd, demux, demux_frame);
	return 0;
}
INIT_HOOK(INIT_SUBSYS_1, net, net_init);
