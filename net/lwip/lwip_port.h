/*
 * The lwIP port's entry points: bring the stack up on the node's NIC.
 *
 * After lwip_port_init() the node is 10.0.0.(node_id+1)/24 on its NIC
 * (ARP, no gateway) and apps use lwIP's socket API (lwip/sockets.h) from
 * any thread.  IPv4 and ARP frames reach lwIP through the EtherType demux
 * (net/net.h); every other EtherType (the fabric's) is untouched.
 */
#ifndef NET_LWIP_LWIP_PORT_H
#define NET_LWIP_LWIP_PORT_H

#include <stdint.h>

#include "kernel/counters.h"

/* Counters of the glue between the driver interface and lwIP. */
/* The port's counters (kernel/counters.h): each field with the label it is printed with. */
#define LWIP_PORT_COUNTERS(X) \
	X(LINE, "rx") \
	X(ONE, rx_frames, "frames")		/* handed to lwIP */ \
	X(ONE, rx_dropped, "dropped")		/* tcpip mailbox or message pool full */ \
	X(ONE, rx_errors, "errors")		/* could not be wrapped as a pbuf */ \
	X(ONE, rx_over_share, "over its share")	/* lwIP held its share of the packet pool */ \
	X(PART, "; tx") \
	X(ONE, tx_frames, "frames")		/* handed to the driver */ \
	X(ONE, tx_no_buffer, "no buffer")	/* no pktbuf to copy into: lwIP retries */ \
	X(ONE, tx_ring_waits, "ring waits")	/* waits for TX ring space */ \
	X(ONE, tx_dropped, "dropped")		/* ring stayed full too long, or bad frame */ \
	X(LINE_IF, "") \
	X(ONE, threads_failed, "threads not made")	/* sys_thread_new found no memory: returned NULL */

struct lwip_port_stats {
	LWIP_PORT_COUNTERS(COUNTER_FIELD)
};

extern struct lwip_port_stats lwip_port_stats;

/*
 * The most bytes a connection had sent and not yet seen acknowledged
 * when a segment came to it, since the last time this was set to 0: on a
 * NIC it stays near TCP_NIC_INFLIGHT (lwipopts.h; a segment or two past,
 * the acknowledgement's own growth of the window), on the shared-memory
 * link it may reach the scaled window.  For the bulk rows and their tests.
 */
extern volatile uint32_t lwip_port_inflight_most;

/*
 * The shortest segment size (MSS) of a connection that took a segment
 * since boot, 0 before any: fixed at each connection's SYN from both
 * ends' MTUs, so a connection made before long frames were found to pass
 * (net_on_path_frame, fabric_wait_path) keeps 1460.  Printed with the
 * counters (lwip_port_print_stats).
 */
extern volatile uint32_t lwip_port_mss_least;

/*
 * lwIP starts itself at boot (an init hook, after the NIC and the fabric):
 * its thread, and the interface on the node's NIC.  Without a NIC it stays
 * down; a node id beyond 253 has no address.
 */

/* Nonzero once lwIP is up. */
int lwip_port_ready(void);

/*
 * The calling thread's select() may be cut short by lwip_select_kick()
 * from another thread (on: 1 before the select, 0 after): it returns 0,
 * as if it timed out.  A kick between the two ends the next select at
 * once.  One such thread (Madeleine's tcp receiver).
 */
void lwip_select_kickable(int on);
void lwip_select_kick(void);

/*
 * Abort TCP socket s's connection (tcp_abort in lwIP's thread: an RST to
 * the peer), leaving the socket itself open: a thread blocked in a call on
 * it returns with an error, later calls fail, and closesocket frees it.
 * 0, or -EBADF (not a TCP socket), -ENOMEM.
 */
int lwip_socket_abort(int s);

/* Print the glue's counters and lwIP's TCP and memory counters. */
void lwip_port_print_stats(void);

#endif
