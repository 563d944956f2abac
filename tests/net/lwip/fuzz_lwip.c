/*
 * libFuzzer target: lwIP's input path through the project's netif
 * (net/lwip/netif.c, built here whole): each frame arrives as the
 * EtherType demultiplexer hands it over, a pktbuf charged to lwIP's share
 * of the pool and wrapped as a custom pbuf, and goes through lwIP's real
 * Ethernet, ARP, IPv4 (fragments and reassembly), ICMP, UDP and TCP code
 * (from the same Debian sources as the kernel's) to a listening TCP
 * port, an echoing one, and a UDP port.  lwIP runs single-threaded here:
 * the netif's input is ethernet_input itself instead of the tcpip
 * thread's mailbox, and the "threads" of sys_arch are not needed.
 *
 * Input: frames, each a 2-byte length and its bytes, with operations
 * between them: a length of 0xffff followed by one byte runs lwIP's
 * timers that many times (TCP's slow and fast timers, reassembly, ARP).
 *
 * Checked (abort): the sanitizers; lwIP's own assertions; the pool share
 * never exceeded; at the end, with every pcb aborted and the reassembly
 * and ARP queues drained by time, every pktbuf back in the pool.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/lwip/netif.c"

/* The port's counters live in its OS layer (sys_arch.c), which this target does without. */
struct lwip_port_stats lwip_port_stats;

#include "lwip/init.h"
#include "lwip/ip4_frag.h"
#include "lwip/priv/tcp_priv.h"
#include "lwip/tcp.h"
#include "lwip/timeouts.h"
#include "lwip/udp.h"
#include "netif/ethernet.h"
#include "tests/host/input.h"

int host_pkt_live(void);

/* --- the kernel and the OS layer, for one thread --------------------------------- */

int node_id = 0, num_nodes = 2;
static const uint8_t mac[6] = { 2, 0x4e, 0x4f, 0x57, 0, 0 };
static uint32_t now_ms;

const uint8_t *net_mac(void) { return mac; }
int net_up(void) { return 1; }
int net_register(uint16_t type, ethertype_handler_t fn) { (void)type; (void)fn; return 0; }
/* An Ethernet NIC: Ethernet's MTU, checksums on, no transmit slot (frames go by net_transmit_wait). */
int net_link_lossless(void) { return 0; }
uint32_t net_frame_max(void) { return 1514; }
/* Every path found to pass Ethernet's frames only. */
void net_on_path_frame(void (*fn)(uint32_t frame)) { fn(1514); }
uint8_t *net_tx_begin(const uint8_t dst[6], size_t len) { (void)dst; (void)len; return NULL; }
void net_tx_commit(size_t len) { (void)len; }
int net_transmit_wait(struct pktbuf *pb, uint64_t timeout_ns, uint64_t *waits)
{
	(void)pb;
	(void)timeout_ns;
	(void)waits;
	return 0;
}
long arg_int(const char *key, long def) { (void)key; return def; }
const char *arg_str(const char *key, const char *def) { (void)key; return def; }
void panic(const char *fmt, ...) { (void)fmt; abort(); }
void host_init_hook_add(const struct init_hook *h) { (void)h; }
void sys_check_core_locking(void) { }
u32_t sys_now(void) { return now_ms; }
void sys_init(void) { }
u32_t lwip_port_rand(void) { static u32_t r = 1; return r = r * 1103515245u + 12345u; }

/* Nothing here runs the API layer's threads: these are never called while fuzzing. */
err_t sys_sem_new(sys_sem_t *s, u8_t c) { (void)c; s->valid = 1; return ERR_OK; }
void sys_sem_free(sys_sem_t *s) { (void)s; }
void sys_sem_signal(sys_sem_t *s) { (void)s; }
u32_t sys_arch_sem_wait(sys_sem_t *s, u32_t t) { (void)s; (void)t; abort(); }
err_t sys_mutex_new(sys_mutex_t *m) { m->valid = 1; return ERR_OK; }
void sys_mutex_free(sys_mutex_t *m) { (void)m; }
void sys_mutex_lock(sys_mutex_t *m) { (void)m; }
void sys_mutex_unlock(sys_mutex_t *m) { (void)m; }
err_t sys_mbox_new(sys_mbox_t *mb, int n) { (void)mb; (void)n; return ERR_MEM; }
void sys_mbox_free(sys_mbox_t *mb) { (void)mb; }
void sys_mbox_post(sys_mbox_t *mb, void *m) { (void)mb; (void)m; abort(); }
err_t sys_mbox_trypost(sys_mbox_t *mb, void *m) { (void)mb; (void)m; return ERR_MEM; }
err_t sys_mbox_trypost_fromisr(sys_mbox_t *mb, void *m) { (void)mb; (void)m; return ERR_MEM; }
u32_t sys_arch_mbox_fetch(sys_mbox_t *mb, void **m, u32_t t) { (void)mb; (void)m; (void)t; abort(); }
u32_t sys_arch_mbox_tryfetch(sys_mbox_t *mb, void **m) { (void)mb; (void)m; return SYS_MBOX_EMPTY; }
err_t tcpip_try_callback(tcpip_callback_fn fn, void *ctx) { (void)fn; (void)ctx; return ERR_MEM; }
sys_thread_t sys_thread_new(const char *n, lwip_thread_fn f, void *a, int s, int p)
{
	(void)n; (void)f; (void)a; (void)s; (void)p;
	return NULL;
}

/* --- the applications lwIP serves -------------------------------------------------- */

static struct tcp_pcb *listener, *echo_listener;
static struct udp_pcb *udp;
static unsigned long echoed, held, udp_in_n;	/* FUZZ_LWIP_VERBOSE=1 prints them */

/* Port 7 echoes what it reads; port 9 reads nothing (its window fills). */
static err_t echo_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
	(void)arg;
	(void)err;
	if (!p) {
		tcp_close(pcb);
		return ERR_OK;
	}
	echoed++;
	tcp_recved(pcb, p->tot_len);
	if (p->tot_len <= tcp_sndbuf(pcb))
		tcp_write(pcb, p->payload, p->len, TCP_WRITE_FLAG_COPY);
	pbuf_free(p);
	return ERR_OK;
}

static err_t hold_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
	(void)arg;
	(void)pcb;
	(void)err;
	(void)p;
	held++;
	return ERR_MEM;		/* "not now": lwIP keeps the data and offers it again */
}

static err_t accept_echo(void *arg, struct tcp_pcb *pcb, err_t err)
{
	(void)arg;
	(void)err;
	tcp_recv(pcb, echo_recv);
	return ERR_OK;
}

static err_t accept_hold(void *arg, struct tcp_pcb *pcb, err_t err)
{
	(void)arg;
	(void)err;
	tcp_recv(pcb, hold_recv);
	return ERR_OK;
}

static void udp_in(void *arg, struct udp_pcb *pcb, struct pbuf *p, const ip_addr_t *a, u16_t port)
{
	/*
	 * Echoed from a copy in one buffer, as an app that answers does: a
	 * datagram reassembled from fragments may end in an empty pbuf, and
	 * lwIP's ARP queue (etharp_query) asserts against such a chain.
	 */
	struct pbuf *q = pbuf_clone(PBUF_TRANSPORT, PBUF_RAM, p);

	(void)arg;
	udp_in_n++;
	if (q) {
		udp_sendto(pcb, q, a, port);
		pbuf_free(q);
	}
	pbuf_free(p);
}

static void start(void)
{
	ip4_addr_t addr, mask, gw;

	IP4_ADDR(&addr, 10, 0, 0, 1);
	IP4_ADDR(&mask, 255, 255, 255, 0);
	ip4_addr_set_zero(&gw);
	netif_add(&the_netif, &addr, &mask, &gw, NULL, netif_setup, ethernet_input);
	netif_set_default(&the_netif);
	netif_set_up(&the_netif);
	netif_set_link_up(&the_netif);
	echo_listener = tcp_new();
	tcp_bind(echo_listener, IP_ADDR_ANY, 7);
	echo_listener = tcp_listen(echo_listener);
	tcp_accept(echo_listener, accept_echo);
	listener = tcp_new();
	tcp_bind(listener, IP_ADDR_ANY, 9);
	listener = tcp_listen(listener);
	tcp_accept(listener, accept_hold);
	udp = udp_new();
	udp_bind(udp, IP_ADDR_ANY, 7);
	udp_recv(udp, udp_in, NULL);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	lwip_init();
	pkt_lwip = pkt_consumer("lwip", 64);
	start();
	return 0;
}

static void timers(unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		now_ms += 250;
		tcp_tmr();
		tcp_tmr();
		ip_reass_tmr();
		etharp_tmr();
	}
}

/* Abort every connection lwIP holds: what is left of the input must go with them. */
static void forget_connections(void)
{
	while (tcp_active_pcbs)
		tcp_abort(tcp_active_pcbs);
	while (tcp_tw_pcbs)
		tcp_abort(tcp_tw_pcbs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int live = host_pkt_live();

	in = data;
	in_left = size;
	while (in_left) {
		unsigned len = take(2);
		if (len == 0xffff) {
			timers(take(1) % 64);
			continue;
		}
		len %= ETH_MAX_FRAME + 1;
		struct pktbuf *pb = pkt_get();
		if (!pb)
			abort();
		for (unsigned i = 0; i < len; i++)
			pb->data[i] = (uint8_t)take(1);
		pb->len = (uint16_t)len;
		rx_input(pb);
		if (pkt_held(pkt_lwip) > pkt_share(pkt_lwip))
			abort();
	}
	forget_connections();
	timers(100);		/* reassembly (IP_REASS_MAXAGE) and ARP's queues empty with time */
	if (host_pkt_live() != live || pkt_held(pkt_lwip) != 0)
		abort();
	if (getenv("FUZZ_LWIP_VERBOSE"))
		fprintf(stderr, "fuzz_lwip: echoed %lu, held %lu, udp %lu\n", echoed, held, udp_in_n);
	return 0;
}
