/*
 * lwIP port: the netif on the raw link of net/net.h (STYLE.md 1, 3), shaped
 * like lwIP's contrib/examples/ethernetif: linkoutput transmits with
 * net_transmit_wait, and received frames come from the EtherType demux.
 * Nothing here knows which NIC it runs on.
 *
 * Receive, zero copy: the demux hands over the driver's pktbuf in
 * interrupt context; it is wrapped as a PBUF_REF custom pbuf (the struct
 * pbuf_custom lives in the pktbuf's ext[] scratch space, the payload is
 * the frame where the NIC wrote it) and posted to the tcpip thread.  The
 * pbuf's free function drops the pktbuf, whenever and wherever lwIP frees
 * it.  If the tcpip mailbox is full the frame is dropped and counted.
 * Every received pktbuf lwIP holds is charged to its share of the pool
 * (its consumer "lwip", drivers/pktbuf.h): with its share held (segments the apps
 * have not read, out-of-order segments) a frame is dropped and counted,
 * and TCP sends it again later; the NIC rings and the fabric keep the
 * rest of the pool.
 *
 * Transmit: lwIP's pbuf chain is copied into the NIC's transmit slot
 * where it has one (the shared-memory link, net_tx_begin), else into one
 * pktbuf given to the driver (the only copy on the way out); with its ring
 * full the sender (always a thread: the tcpip thread or an app under the
 * core lock) waits for ring space, for at most TX_WAIT_NS.
 *
 * The MTU is Ethernet's on a NIC, the slots' (up to LWIP_MTU_MAX) on the
 * shared-memory link, which goes without checksums (netif_setup).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "kernel/console.h"
#include "kernel/init.h"
#include "kernel/node.h"
#include "kernel/x86.h"
#include "lwip/etharp.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "lwip/stats.h"
#include "lwip/tcp.h"
#include "lwip/tcpip.h"
#include "net/lwip/lwip_port.h"
#include "net/net.h"
#include "net/pktshare.h"

#define LOCAL_TRACE 0
#define LTRACEF(...) do { if (LOCAL_TRACE) printf("lwip: " __VA_ARGS__); } while (0)

#define TX_WAIT_NS 100000000ULL		/* longest wait for TX ring space */
#define LWIP_MTU 1500			/* on Ethernet */

/* lwIP's TCP sanity checks (init.c), as they hold with window scaling (lwipopts.h). */
_Static_assert(TCP_MSS <= 16382, "lwIP keeps TCP_MSS below 16383");
_Static_assert(TCP_SND_BUF >= 2 * TCP_MSS, "a send buffer holds two segments");
_Static_assert(TCP_SND_QUEUELEN >= 2 * (TCP_SND_BUF / TCP_MSS), "a queue of the send buffer's segments");
_Static_assert(TCP_SND_QUEUELEN <= 0xffff && MEMP_NUM_TCP_SEG >= TCP_SND_QUEUELEN, "segments for a queue");
_Static_assert(TCP_SNDLOWAT < TCP_SND_BUF && TCP_SNDLOWAT < 0xffff,
	       "writable below the send buffer and tcp_sndbuf's 16 bits");
_Static_assert(TCP_WND_MOST >= TCP_MSS && TCP_WND_MOST <= 0xffff << TCP_RCV_SCALE, "the window, in 16 bits scaled");
_Static_assert(TCP_WND_NIC >= 4 * 1460 && TCP_WND_NIC <= TCP_WND_MOST, "a NIC's window, below the most");
_Static_assert(TCP_NIC_INFLIGHT >= 2 * 1460 && TCP_NIC_INFLIGHT <= TCP_WND_NIC, "a NIC's share of the window");
_Static_assert(DEFAULT_TCP_RECVMBOX_SIZE >= 2 * (TCP_WND_NIC / 1460),
	       "a connection's mailbox holds a NIC's window of segments down to half of 1460 bytes");

_Static_assert(sizeof(struct pbuf_custom) <= sizeof(((struct pktbuf *)0)->ext),
	       "struct pbuf_custom must fit in pktbuf.ext");
_Static_assert(_Alignof(struct pbuf_custom) <= _Alignof(uint64_t),
	       "pktbuf.ext is not aligned enough for struct pbuf_custom");


/* At most half the pool: the receive rings and the fabric keep the rest. */
static const struct argspec lwip_args[] = {
	{ "lwip_bufs", ARG_INT, 16, PKT_POOL_BUFS / 2,
	  "packet buffers lwIP may hold, received data not yet read (default 256)" },
	{ NULL, 0, 0, 0, NULL },
};
static const struct arg_table lwip_argtab = { "lwip", lwip_args, NULL };
ARGS_REGISTER(lwip_argtab);

static struct netif the_netif;
static int ready;
static int nic_inflight;		/* a NIC: connections keep at most TCP_NIC_INFLIGHT in flight */
unsigned int lwip_port_wnd_cut;		/* TCP_WND_MOST less this node's window (lwipopts.h) */

/* --- receive ---------------------------------------------------------------- */

/* pbuf_custom free function: any context (pkt_put is interrupt-safe). */
static void rx_pbuf_free(struct pbuf *p)
{
	struct pktbuf *pb = (struct pktbuf *)((char *)p - offsetof(struct pktbuf, ext));

	pkt_put(pb);
}

/*
 * lwIP's share of the packet pool (pktbuf.h): the received frames it
 * keeps, a quarter of the pool by default (lwip_bufs=).
 */
#define LWIP_PKT_SHARE (PKT_POOL_BUFS / 4)
static int pkt_lwip = -1;

/* The demux handler for IPv4 and ARP.  Interrupt context; owns pb. */
static void rx_input(struct pktbuf *pb)
{
	struct pbuf_custom *pc = (struct pbuf_custom *)(void *)pb->ext;
	struct pbuf *p;

	if (pkt_charge(pb, pkt_lwip) < 0) {
		lwip_port_stats.rx_over_share++;
		pkt_put(pb);
		return;
	}
	pc->custom_free_function = rx_pbuf_free;
	p = pbuf_alloced_custom(PBUF_RAW, pb->len, PBUF_REF, pc, pb->data, pb->len);
	if (!p) {
		lwip_port_stats.rx_errors++;
		pkt_put(pb);
		return;
	}
	if (the_netif.input(p, &the_netif) != ERR_OK) {
		lwip_port_stats.rx_dropped++;
		pbuf_free(p);		/* frees pb */
		return;
	}
	lwip_port_stats.rx_frames++;
}

/* --- transmit --------------------------------------------------------------- */

/* netif->linkoutput: p is a whole Ethernet frame without FCS. */
static err_t link_output(struct netif *netif, struct pbuf *p)
{
	struct pktbuf *pb;
	uint8_t *slot;
	int r;

	if (p->tot_len > netif->mtu + ETH_HLEN) {
		lwip_port_stats.tx_dropped++;
		return ERR_IF;
	}
	/* Where the NIC has one (the shared-memory link), written straight into its transmit slot. */
	irqflags_t f = irq_save();
	if (!(((const uint8_t *)p->payload)[0] & 1) && p->len >= ETH_ALEN &&
	    (slot = net_tx_begin(p->payload, p->tot_len)) != NULL) {
		pbuf_copy_partial(p, slot, p->tot_len, 0);
		net_tx_commit(p->tot_len);
		irq_restore(f);
		lwip_port_stats.tx_frames++;
		return ERR_OK;
	}
	irq_restore(f);
	/*
	 * Not charged to lwIP's share: the driver holds a sent frame only
	 * until the NIC took it (its TX ring bounds them), and a share full
	 * of unread received data must not stop lwIP's ACKs and resets.
	 */
	pb = pkt_get_len(p->tot_len);
	if (!pb) {
		lwip_port_stats.tx_no_buffer++;
		return ERR_MEM;
	}
	pb->len = pbuf_copy_partial(p, pb->data, p->tot_len, 0);
	r = net_transmit_wait(pb, TX_WAIT_NS, &lwip_port_stats.tx_ring_waits);
	pkt_put(pb);
	if (r < 0) {
		LTRACEF("transmit of %u bytes failed: %d\n", p->tot_len, r);
		lwip_port_stats.tx_dropped++;
		/* A full ring is congestion: lwIP's TCP keeps the segment. */
		return r == -ETIMEDOUT ? ERR_MEM : ERR_IF;
	}
	lwip_port_stats.tx_frames++;
	return ERR_OK;
}

/* --- bring-up --------------------------------------------------------------- */

/* netif_add's init callback; runs under the core lock. */
static err_t netif_setup(struct netif *netif)
{
	netif->name[0] = 'e';
	netif->name[1] = 'n';
	netif->output = etharp_output;
	netif->linkoutput = link_output;
	/*
	 * Ethernet's MTU on a NIC: what lies between the nodes may pass no
	 * more.  The shared-memory link passes every frame its slots hold,
	 * and neither corrupts nor loses one: frames up to LWIP_MTU_MAX, and
	 * no checksums (the fabric's frames carry no CRC there either).
	 */
	netif->mtu = LWIP_MTU;
	nic_inflight = !net_link_lossless();
	/* Before any connection, and never again (lwipopts.h, TCP_WND). */
	lwip_port_wnd_cut = nic_inflight ? TCP_WND_MOST - TCP_WND_NIC : 0;
	if (net_link_lossless()) {
		uint32_t fm = net_frame_max();
		netif->mtu = (u16_t)(fm - ETH_HLEN < LWIP_MTU_MAX ? fm - ETH_HLEN : LWIP_MTU_MAX);
		NETIF_SET_CHECKSUM_CTRL(netif, NETIF_CHECKSUM_DISABLE_ALL);
	}
	netif->hwaddr_len = ETH_HWADDR_LEN;
	memcpy(netif->hwaddr, net_mac(), ETH_HWADDR_LEN);
	netif->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP | NETIF_FLAG_ETHERNET;
	return ERR_OK;
}

/*
 * lwIP's hook on every segment a connection takes, before its own
 * processing (LWIP_HOOK_TCP_INPACKET_PCB, lwipopts.h).  On a NIC the
 * congestion window is held at TCP_NIC_INFLIGHT: the scaled window is
 * for the shared-memory link, and a burst that long is more than the
 * switch between two NICs passes.  Processing this segment's
 * acknowledgement may add a segment or two; the next one holds it again.
 * (Core locked.)
 */
volatile uint32_t lwip_port_inflight_most;
volatile uint32_t lwip_port_mss_least;

void lwip_port_tcp_input(struct tcp_pcb *pcb)
{
	if (pcb->state < ESTABLISHED)
		return;		/* a listening pcb has no send state */
	if (pcb->mss && (!lwip_port_mss_least || pcb->mss < lwip_port_mss_least))
		lwip_port_mss_least = pcb->mss;
	uint32_t flight = pcb->snd_nxt - pcb->lastack;
	if (flight > lwip_port_inflight_most && flight <= TCP_SND_BUF)
		lwip_port_inflight_most = flight;
	if (nic_inflight && pcb->cwnd > TCP_NIC_INFLIGHT)
		pcb->cwnd = TCP_NIC_INFLIGHT;
}

/*
 * A NIC's MTU: Ethernet's until every peer's path was found to pass long
 * frames (the fabric's probes, net.h), then theirs: a connection's MSS is
 * fixed at its SYN from both ends' MTUs, so segments as long as the
 * frames once both ends know.  On a NIC at most the jumbo frames' 9000:
 * its window (TCP_WND_NIC, 93440 bytes) then holds ten segments, where
 * virtio-net's 64 KiB frames would leave it one or two.  (Interrupt context.)
 */
static void path_frame_changed(uint32_t frame)
{
	uint32_t mtu = frame - ETH_HLEN, most = nic_inflight ? ETH_JUMBO_FRAME - ETH_HLEN : LWIP_MTU_MAX;

	the_netif.mtu = (u16_t)(mtu < most ? mtu : most);
	if (ready)
		kprintf("lwip: MTU %u: every node's path takes frames of %u bytes\n", (unsigned)the_netif.mtu,
			(unsigned)frame);
}

static int lwip_port_init(void)
{
	ip4_addr_t addr, mask, gw;
	char buf[IP4ADDR_STRLEN_MAX];
	struct netif *n;

	if (!net_up())
		return -ENODEV;
	if (node_id < 0 || node_id > 253) {
		printf("lwip: node %d has no address in 10.0.0.0/24\n", node_id);
		return -EINVAL;
	}
	uint64_t failed = lwip_port_stats.threads_failed;
	if ((pkt_lwip = pkt_consumer("lwip", (int)arg_int("lwip_bufs", LWIP_PKT_SHARE))) < 0)
		return pkt_lwip;
	tcpip_init(NULL, NULL);
	if (lwip_port_stats.threads_failed != failed) {
		printf("lwip: no tcpip thread: TCP/IP stays down\n");
		return -ENOMEM;
	}

	IP4_ADDR(&addr, 10, 0, 0, node_id + 1);
	IP4_ADDR(&mask, 255, 255, 255, 0);
	ip4_addr_set_zero(&gw);
	LOCK_TCPIP_CORE();
	n = netif_add(&the_netif, &addr, &mask, &gw, NULL, netif_setup, tcpip_input);
	if (n) {
		netif_set_default(n);
		netif_set_up(n);
		/*
		 * The driver interface has no link-change event, so the link is
		 * up from the start; frames sent before a real NIC's link comes
		 * up are lost and TCP sends them again.
		 */
		netif_set_link_up(n);
	}
	UNLOCK_TCPIP_CORE();
	if (!n)
		return -ENOMEM;

	if (net_register(ETHERTYPE_IPV4, rx_input) < 0)
		goto busy;
	if (net_register(ETHERTYPE_ARP, rx_input) < 0)
		goto unregister;
	if (!net_link_lossless())
		net_on_path_frame(path_frame_changed);
	ready = 1;
	printf("lwip: %s/24 up on %s, MTU %u%s\n", ip4addr_ntoa_r(&addr, buf, sizeof buf), net_nic_name(),
	       (unsigned)n->mtu, net_link_lossless() ? ", no checksums" : "");
	return 0;
unregister:
	net_unregister(ETHERTYPE_IPV4);
busy:
	printf("lwip: IPv4 or ARP already has a handler\n");
	return -EBUSY;
}
INIT_HOOK(INIT_LATE, lwip, lwip_port_init);

int lwip_port_ready(void)
{
	return ready;
}

#define COUNTER_TYPE struct lwip_port_stats
static const struct counter_row lwip_rows[] = { LWIP_PORT_COUNTERS(COUNTER_ROW) };
#undef COUNTER_TYPE

void lwip_port_print_stats(void)
{
	struct lwip_port_stats s;
	irqflags_t f = irq_save();

	s = lwip_port_stats;
	irq_restore(f);
	counters_print("lwip", lwip_rows, COUNTER_ROWS(lwip_rows), &s);
	printf("lwip: holds %d packet buffers of its share of %d (refused %lu), %d of %d free\n",
	       pkt_held(pkt_lwip), pkt_share(pkt_lwip), pkt_refused(pkt_lwip), pkt_free_count(),
	       pkt_total());
	if (lwip_port_mss_least)
		printf("lwip: the shortest segment size of a connection: %u bytes\n", (unsigned)lwip_port_mss_least);
#if TCP_STATS
	printf("lwip: tcp xmit %u recv %u drop %u chkerr %u memerr %u proterr %u\n",
	       (unsigned)lwip_stats.tcp.xmit, (unsigned)lwip_stats.tcp.recv,
	       (unsigned)lwip_stats.tcp.drop, (unsigned)lwip_stats.tcp.chkerr,
	       (unsigned)lwip_stats.tcp.memerr, (unsigned)lwip_stats.tcp.proterr);
#endif
}
