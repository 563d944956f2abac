/*
 * net/: the demultiplexer and the raw link, the bottom of the network
 * layers.  It is the only code that attaches to the NIC interface
 * (drivers/netdev.h): received frames go by EtherType to the protocol
 * that registered it (IPv4 and ARP to lwIP, 0x88B5 to the fabric, any
 * other to an app that asked for raw frames); anything else is counted
 * and dropped.  Transmit, the MAC, polling and the counters are reached
 * through here too, so that nothing above net/ touches a driver.
 *
 * Above this: net/fabric (the link layer between nodes), then the
 * mechanisms net/rmem, net/req and net/deposit; net/lwip beside the
 * fabric.  net/ uses kernel/ and drivers/, never lib/ or apps/.
 */
#ifndef NET_NET_H
#define NET_NET_H

#include <stddef.h>
#include <stdint.h>

#include "kernel/counters.h"

#include "drivers/eth.h"
#include "drivers/pktbuf.h"

/*
 * The link's stages (kernel/trace.h): the frame handed to the NIC (here,
 * net_transmit), and the protocols' above the link: a message handed to
 * the fabric, taken by the mechanism's receive half, applied.  The
 * drivers' receive stages, the same numbers as drivers/netdev.h's, for
 * those above that cannot include it.
 */
#define TS_MECH_SEND 1
#define TS_NIC_TX 3
#define TS_NIC_RX 4
#define TS_MECH_RX 6
#define TS_MECH_DONE 7
#define TS_RX_DONE 10

#define ETHERTYPE_IPV4 0x0800
#define ETHERTYPE_ARP 0x0806
#define ETHERTYPE_FABRIC 0x88b5

/* A handler owns pb (it must pkt_put it).  Runs in interrupt context. */
typedef void (*ethertype_handler_t)(struct pktbuf *pb);

/* Register / remove the handler for an EtherType.  0, or -EBUSY / -ENOENT. */
int net_register(uint16_t ethertype, ethertype_handler_t fn);
int net_unregister(uint16_t ethertype);

/*
 * A handler for frames the NIC holds in memory of its own (drivers/
 * netdev.h, netdev_input_frame): len bytes at frame, which only this node
 * writes and which the handler may change, valid until it returns; it
 * copies what it keeps.  0, or -ENOBUFS if it needed a buffer and found
 * none: it changed nothing, and the frame is offered again later.
 * Without one, such frames reach the EtherType's handler in a pktbuf.
 * Runs in interrupt context.
 */
typedef int (*ethertype_frame_handler_t)(uint8_t *frame, size_t len);

/*
 * fn takes ethertype's long frames where they lie in memory other nodes
 * write (the shared-memory link's ring, drivers/netdev.h): it reads every
 * field there once, copying first what it reads twice.  Frames of other
 * types go on copied.  NULL: none (the fabric, keyed).
 */
void net_set_rx_shared(uint16_t ethertype, ethertype_frame_handler_t fn);

/* Add a frame handler to ethertype's registration.  0, or -ENOENT. */
int net_register_frame(uint16_t ethertype, ethertype_frame_handler_t fn);

/* Is there a NIC?  Everything below needs one. */
int net_up(void);

/*
 * Does the link neither drop, corrupt nor reorder frames (the NIC says so:
 * the shared-memory link)?  Then the fabric skips what only a lossy link
 * needs.
 */
int net_link_lossless(void);

/*
 * The largest frame (without FCS) the NIC sends and takes: ETH_MAX_FRAME
 * on every NIC but the shared-memory link with large slots (up to 65535).
 */
uint32_t net_frame_max(void);

/*
 * The longest frame every peer's path was found to pass: the fabric's
 * probes say it per peer (net/fabric/discovery.c), and it sets here the
 * shortest of them, ETH_MAX_FRAME until a probe came through.  Protocols
 * that talk to every node over the same NIC (lwIP) size their packets by
 * it: fn is called at each change (interrupt context), and once at
 * registration.
 */
void net_set_path_frame(uint32_t frame);
void net_on_path_frame(void (*fn)(uint32_t frame));

/*
 * On a link made of memory the nodes share (the shared-memory link): two
 * 64-byte lines of it that carry no frames, the same on every node, for
 * measuring the memory itself (the floor-line bench row: node 0 writes
 * the first, node 1 the second).  NULL on any other link.
 */
volatile uint8_t *net_shared_lines(void);

/* The NIC's MAC address and driver name ("none" without a NIC). */
const uint8_t *net_mac(void);
const char *net_nic_name(void);

/*
 * Transmit one frame of pb->len bytes at pb->data (the caller keeps its
 * reference).  net_transmit never sleeps: 0, or -EAGAIN with the TX ring
 * full (irq).  net_transmit_wait sleeps for ring space, at most
 * timeout_ns: 0, -ETIMEDOUT, or the driver's error; *waits (if not NULL)
 * counts the times it slept.  Thread context.
 */
int net_transmit(struct pktbuf *pb);
int net_transmit_wait(struct pktbuf *pb, uint64_t timeout_ns, uint64_t *waits);

/*
 * A unicast frame of up to len bytes to dst built in place in the NIC's
 * transmit ring, where the NIC can (the shared-memory link): where to
 * write it, or NULL (no room now, or the NIC cannot: build it in a pktbuf
 * and net_transmit it).  net_tx_commit sends the len bytes written.
 * Interrupts off from one to the other, and no other transmit between.
 */
uint8_t *net_tx_begin(const uint8_t dst[ETH_ALEN], size_t len);
void net_tx_commit(size_t len);

/*
 * Where the NIC can (net_tx_pins: the shared-memory link), a frame built
 * in place stays in its slot as written until net_tx_unpin lets it go: the
 * slot is never written again before (the ring to dst is full at it), so
 * what lies there can be read and sent again.  Pins to one node are let
 * go oldest first, n at a time.  Interrupts off.
 */
int net_tx_pins(void);
void net_tx_commit_pinned(size_t len);
void net_tx_unpin(const uint8_t dst[ETH_ALEN], unsigned n);

/*
 * Polling mode: the receive interrupt is off and frames arrive only from
 * net_poll() (which returns how many it harvested).  For latency
 * measurements that spin instead of halting.
 */
void net_set_polling(int on);
int net_poll(void);

/*
 * How the node waits for frames when it has nothing to run: halt until
 * the NIC interrupts (every NIC), or poll first (NET_WAIT_ADAPTIVE, up to
 * spin_us) or only (NET_WAIT_SPIN), where polling is cheap (the
 * shared-memory link).  0, or -ENOTSUP.
 */
enum { NET_WAIT_HALT, NET_WAIT_ADAPTIVE, NET_WAIT_SPIN };
int net_set_wait(int mode, unsigned spin_us);
int net_wait_mode(void);
unsigned net_wait_spin_us(void);

/*
 * A thread about to sleep until *flag is set by the receive path: where the
 * node polls its link anyway (wait mode adaptive or spin), poll it from
 * this thread first, for up to the node's spin time, so that the frame is
 * taken and the thread goes on without a switch to the idle thread and
 * back.  Stops as soon as another thread can run.  Returns *flag; 0 means
 * sleep as usual.
 */
int net_poll_wait(volatile int *flag);

/*
 * A thread sends frames, and takes what arrived meanwhile between them
 * (net_busy_look) and when it stops (netdev ops->busy): where the node
 * polls its link, no peer rings it for the frames it sends meanwhile, and
 * nothing preempts the thread until net_busy_end.  net_busy_begin returns
 * what the other two take (0: none of this applies).
 */
int net_busy_begin(void);
void net_busy_look_now(void);
void net_busy_stop(void);

static inline void net_busy_look(int busy)
{
	if (busy)
		net_busy_look_now();
}

static inline void net_busy_end(int busy)
{
	if (busy)
		net_busy_stop();
}

/*
 * Between two pieces of a long send or copy in a busy section: look at
 * the link, or every `every` pieces (counted in *k) end the section and
 * begin it again, so that the thread may be preempted there.  Returns the
 * section's new value for net_busy_end.
 */
static inline int net_busy_next(int busy, unsigned *k, unsigned every)
{
	if (busy && ++*k % every == 0) {
		net_busy_stop();
		return net_busy_begin();
	}
	net_busy_look(busy);
	return busy;
}

/* The demultiplexer's counters (kernel/counters.h): each with the label it is printed with. */
#define NET_COUNTERS(X) \
	X(LINE, "demux") \
	X(ONE, delivered, "delivered") \
	X(ONE, short_frames, "short")		/* shorter than an Ethernet header */ \
	X(ONE, unknown_type, "unknown type")	/* no handler for the EtherType */ \
	/* a frame left in the NIC: its handler needed a pktbuf, none free */ \
	X(ONE, no_buffer, "no buffer")

struct net_stats {
	NET_COUNTERS(COUNTER_FIELD)
};

extern struct net_stats net_stats;

/* Print the NIC's and the demultiplexer's counters. */
void net_print_stats(void);

/* Interrupts the NIC raised so far (its driver's count; 0 without a NIC). */
uint64_t net_irqs(void);

static inline uint16_t get_be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline void put_be16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static inline uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}

#endif
