/*
 * lwIP configuration for the node: IPv4 over Ethernet, TCP and UDP, the
 * socket API on kernel threads.  Every option set here says why; anything
 * not set is lwIP's default (lwip/opt.h).
 *
 * Memory.  Receive is zero-copy: each frame stays in the driver's 2 KiB
 * pktbuf, wrapped as a custom pbuf (netif.c), so neither the heap nor
 * PBUF_POOL is touched per received frame; the interrupt handler allocates
 * only a tcpip message from a memp pool, which SYS_ARCH_PROTECT (interrupts
 * off) makes safe there.  Transmit data is copied by the socket layer into
 * PBUF_RAM pbufs from the heap.
 */
#ifndef LWIP_LWIPOPTS_H
#define LWIP_LWIPOPTS_H

/* --- operating system ------------------------------------------------------- */

/* Threads, semaphores and mailboxes: the kernel's (sys_arch.c). */
#define NO_SYS 0
/* Critical sections in lwIP's pools and pbufs: interrupts off (sys_arch.h). */
#define SYS_LIGHTWEIGHT_PROT 1
/* Socket calls run the stack in the caller's thread under one mutex instead
 * of a message to the tcpip thread and a wait for its answer: two context
 * switches fewer per call. */
#define LWIP_TCPIP_CORE_LOCKING 1
/* Received frames go through the tcpip mailbox: the receive path runs in
 * interrupt context, where the core mutex cannot be taken. */
#define LWIP_TCPIP_CORE_LOCKING_INPUT 0
/* Catch any entry into the core without the lock, or from an interrupt. */
void sys_check_core_locking(void);
#define LWIP_ASSERT_CORE_LOCKED() sys_check_core_locking()
/* The tcpip thread runs the protocol timers and received frames: above the
 * apps, like the rest of the network receive path. */
#define TCPIP_THREAD_NAME "tcpip"
#define TCPIP_THREAD_PRIO PRIO_HIGH
/* Deep enough for TCP input plus a transmit from inside it, with room to
 * spare; with thread_create's guard page it is one 64 KiB block. */
#define TCPIP_THREAD_STACKSIZE (60 * 1024)
/* Frames waiting for the tcpip thread: a burst of a full TCP window (44
 * segments) from both directions plus ARP, with room; each holds a pktbuf. */
#define TCPIP_MBOX_SIZE 256
/* For threads an app makes with sys_thread_new (lwIP itself makes none). */
#define DEFAULT_THREAD_STACKSIZE (60 * 1024)
#define DEFAULT_THREAD_PRIO PRIO_NORMAL
/* Per-connection mailboxes of the netconn layer.  A TCP one holds received
 * pbufs (each a pktbuf) until the app reads them, one per segment, and
 * must hold what the receive window lets the sender have unread: on a
 * NIC 64 full segments of 1460 bytes (TCP_WND_NIC below), twice that for
 * shorter ones (sends of 4 KiB without Nagle come as 1460 + 1460 + 1176:
 * 69 segments a window).  The window bounds what one connection pins. */
#define DEFAULT_TCP_RECVMBOX_SIZE 128
#define DEFAULT_UDP_RECVMBOX_SIZE 32
/* Connections handshaken and not yet accepted: a connection that finds the
 * mailbox full is reset by lwIP (api_msg.c, accept_function), so it holds
 * more than there are netconns (MEMP_NUM_NETCONN); a burst of idle connections opened ahead of a
 * node's own (mad-test intrude=8) must not push the node's out. */
#define DEFAULT_ACCEPTMBOX_SIZE 32

/* --- memory ----------------------------------------------------------------- */

/* The heap (PBUF_RAM: transmit data and headers) is picolibc's malloc rather
 * than a second fixed heap of MEM_SIZE bytes: one heap for the node.  Its
 * lock is a kernel mutex, so it is called only from threads; nothing on the
 * interrupt path allocates from it (see the top of this file). */
#define MEM_LIBC_MALLOC 1
/* Fixed-size objects come from lwIP's static pools: bounded, and safe in
 * interrupt context (the receive path takes MEMP_TCPIP_MSG_INPKT). */
#define MEMP_MEM_MALLOC 0
/* x86-64: 8-byte alignment for pool objects and pbuf payloads. */
#define MEM_ALIGNMENT 8
/* One tcpip message per received frame in flight: as many as the mailbox. */
#define MEMP_NUM_TCPIP_MSG_INPKT TCPIP_MBOX_SIZE
/* Messages for tcpip_callback and friends (sockets under core locking send
 * none on the data path). */
#define MEMP_NUM_TCPIP_MSG_API 16
/* PBUF_REF/ROM headers: zero-copy writes and IP fragments. */
#define MEMP_NUM_PBUF 64
/* Sockets: a few connections per node; select()'s FD_SETSIZE is picolibc's
 * 64, which must cover them. */
#define MEMP_NUM_NETCONN 16
#define MEMP_NUM_TCP_PCB 16
#define MEMP_NUM_TCP_PCB_LISTEN 4
#define MEMP_NUM_UDP_PCB 8
#define MEMP_NUM_NETBUF 32
/* TCP segments queued for sending (TCP_SND_QUEUELEN per connection) plus
 * out-of-order ones received: a few connections' worth. */
#define MEMP_NUM_TCP_SEG 512
/* No PBUF_POOL: receive wraps pktbufs and nothing else in this
 * configuration allocates from it (0 also tells init.c's sanity check that
 * the TCP window is not backed by PBUF_POOL). */
#define PBUF_POOL_SIZE 0
/* The receive path wraps each pktbuf as a struct pbuf_custom. */
#define LWIP_SUPPORT_CUSTOM_PBUF 1

/* --- link and network layers ------------------------------------------------ */

/* IPv4 only. */
#define LWIP_IPV4 1
#define LWIP_IPV6 0
/* Ethernet with ARP; one entry per node of the largest cluster (64). */
#define LWIP_ARP 1
#define ARP_TABLE_SIZE 64
/* Keep every packet sent while ARP resolves (lwIP keeps only the last one
 * otherwise): the first exchange with each peer does not lose its start. */
#define ARP_QUEUEING 1
/* Received frames start at the Ethernet header, no 2-byte pad in front. */
#define ETH_PAD_SIZE 0
/* Static addresses (netif.c): no DHCP, AutoIP, IGMP or DNS. */
#define LWIP_DHCP 0
#define LWIP_AUTOIP 0
#define LWIP_IGMP 0
#define LWIP_DNS 0
/* Answer ping. */
#define LWIP_ICMP 1
/* No raw sockets. */
#define LWIP_RAW 0

/* Checksums in software, generated and checked at every layer: the
 * emulated NICs would not care, but real ones are not set up to offload.
 * Per netif, so that the shared-memory link, which neither corrupts nor
 * loses a frame and carries no checksum of its own either (the fabric's
 * frames go without a CRC there), goes without them (netif.c). */
#define LWIP_CHECKSUM_CTRL_PER_NETIF 1
#define CHECKSUM_GEN_IP 1
#define CHECKSUM_GEN_UDP 1
#define CHECKSUM_GEN_TCP 1
#define CHECKSUM_GEN_ICMP 1
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define CHECKSUM_CHECK_IP 1
#define CHECKSUM_CHECK_UDP 1
#define CHECKSUM_CHECK_TCP 1
#define CHECKSUM_CHECK_ICMP 1
#else
/* The host fuzz target (tests/net/lwip/fuzz_lwip.c): past the checksums, and a known ISN. */
#define CHECKSUM_CHECK_IP 0
#define CHECKSUM_CHECK_UDP 0
#define CHECKSUM_CHECK_TCP 0
#define CHECKSUM_CHECK_ICMP 0
#define LWIP_HOOK_TCP_ISN(local_ip, local_port, remote_ip, remote_port) 0x1000u
#endif
/* Every segment a connection takes, before lwIP's own processing: net/lwip/netif.c. */
struct tcp_pcb;
void lwip_port_tcp_input(struct tcp_pcb *pcb);
#define LWIP_HOOK_TCP_INPACKET_PCB(pcb, hdr, optlen, opt1len, opt2, p) (lwip_port_tcp_input(pcb), 0)
/*
 * No sum while copying the app's data in: lwIP's copy-and-sum is a copy
 * then a sum (lwip_chksum_copy), so it saves nothing where the segment is
 * summed (a NIC's netif sums it once at output), and it would sum what
 * the shared-memory link sends without checksums.
 */
#define LWIP_CHECKSUM_ON_COPY 0
/* lwIP's fastest portable checksum loop (32-bit adds). */
#define LWIP_CHKSUM_ALGORITHM 3

/* --- transport layer -------------------------------------------------------- */

#define LWIP_UDP 1
#define LWIP_TCP 1
/*
 * Segments as long as the link's frames: the netif's MTU is the NIC's
 * frame less its header, up to LWIP_MTU_MAX, 16 KiB (netif.c): on a NIC
 * 1500 until every peer's path passed long frames, then theirs; on the
 * shared-memory link its large slots'.  A connection's MSS
 * is the smaller of the two ends' MTU less 40.  TCP_MSS is the most any
 * has: lwIP keeps a segment's length and its send low-water mark in
 * 16 bits, and asks no more than 16382 of TCP_MSS.
 */
#define LWIP_MTU_MAX 16384
#define TCP_MSS (LWIP_MTU_MAX - 40)
/*
 * Send buffer, and the receive window on the shared-memory link: 176 of
 * Ethernet's segments (256960 bytes), scaled by 4 (RFC 7323), so that on
 * the shared-memory link, where a
 * 16 KiB segment is copied in about 6 us and a window's acknowledgement
 * comes back through both nodes' threads, the sender still has room
 * while the receiver copies what came: 44 segments (64240, the most
 * without scaling) left the pair taking turns, 300-400 MB/s against
 * 400-550 with this window, alternate runs of Madeleine's and lwIP's
 * bulk rows.  On a NIC, what lies between the nodes drops a burst that
 * long (the bulk rows then fell to a few MB/s, waiting out
 * retransmission timers), so there a connection keeps at most
 * TCP_NIC_INFLIGHT bytes in flight, the old window
 * (lwip_port_tcp_input, net/lwip/netif.c).
 */
#define LWIP_WND_SCALE 1
#define TCP_RCV_SCALE 2
#define TCP_WND_MOST (176 * 1460)
/*
 * The receive window on a NIC: 64 segments of 1460 bytes, which a
 * connection's mailbox holds (DEFAULT_TCP_RECVMBOX_SIZE) and three
 * connections' pktbufs stay within lwIP's share of the pool
 * (net/lwip/netif.c).  The scaled window there let a reader that lagged
 * by 64 segments fill a mailbox of 64; lwIP then refuses the next segment
 * and drops every one after it unacknowledged, and the sender waits out
 * retransmission timers: bulk TCP over 1460-byte segments fell to 2-6
 * MB/s.  Segments longer than 1460 (a path that passes long frames) are
 * fewer a window.
 */
#define TCP_WND_NIC (64 * 1460)
/*
 * A node's window, fixed at bring-up before any connection (netif.c sets
 * the cut: TCP_WND_MOST - TCP_WND_NIC on a NIC, 0 on the shared-memory
 * link): lwIP compares a connection's window with TCP_WND when it closes
 * and sends a reset if they differ, so it never changes after.  In the
 * #if lines where lwIP checks its configuration the cut reads 0 and
 * TCP_WND is TCP_WND_MOST.
 */
extern unsigned int lwip_port_wnd_cut;
#define TCP_WND (TCP_WND_MOST - lwip_port_wnd_cut)
#define TCP_SND_BUF (176 * 1460)
#define TCP_NIC_INFLIGHT (44 * 1460)
/* Segments in a send queue: small writes make small segments (Ethernet's, one per 1460 bytes). */
#define TCP_SND_QUEUELEN (TCP_SND_BUF / 1460)
/*
 * A socket is writable again with a quarter of its buffer free.  lwIP's
 * own checks of these sizes want the low-water mark four segments below
 * 65535, which no 16 KiB segment allows: they are off, and
 * net/lwip/netif.c checks what still holds.
 */
#define TCP_SNDLOWAT (TCP_SND_BUF / 4)
#define LWIP_DISABLE_TCP_SANITY_CHECKS 1
/* Keep out-of-order segments (a lost frame then costs one retransmission,
 * not a window), but bound the pktbufs they pin. */
#define TCP_QUEUE_OOSEQ 1
#define TCP_OOSEQ_MAX_PBUFS 48

/* --- APIs ------------------------------------------------------------------- */

/* BSD sockets (and the netconn layer below them). */
#define LWIP_NETCONN 1
#define LWIP_SOCKET 1
/* socket(), connect(), send() ... as names for lwip_socket() ...; but not
 * read/write/close/fcntl/ioctl, which would clash with picolibc's
 * <unistd.h> and <fcntl.h>: use closesocket() and ioctlsocket(). */
#define LWIP_COMPAT_SOCKETS 1
#define LWIP_POSIX_SOCKETS_IO_NAMES 0
/* struct timeval is picolibc's (arch/cc.h includes <sys/time.h>). */
#define LWIP_TIMEVAL_PRIVATE 0
/* Time limits on blocking socket calls (SO_RCVTIMEO, SO_SNDTIMEO). */
#define LWIP_SO_RCVTIMEO 1
#define LWIP_SO_SNDTIMEO 1

/* --- statistics and debugging ----------------------------------------------- */

/* Counters (lwip_stats), printed by lwip_port_print_stats(). */
#define LWIP_STATS 1
#define LWIP_STATS_DISPLAY 0
/* 32-bit counters: a bulk run passes 65535 segments (16-bit ones wrapped). */
#define LWIP_STATS_LARGE 1
/* LWIP_DEBUGF tracing: off.  Define LWIP_DEBUG and set e.g. TCP_DEBUG to
 * LWIP_DBG_ON here to trace one module. */

#endif
