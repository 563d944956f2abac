/*
 * lwip-pin: lwIP pins what it may of the packet pool, and the fabric
 * keeps working.  Node 0 opens conns= TCP connections to node 1 and sends
 * one byte per segment (TCP_NODELAY) on each, without pause; node 1
 * accepts them and never reads, so every segment it takes stays a
 * received pktbuf in lwIP until the connection closes.  Without a limit
 * that takes the pool from the NIC's receive ring and the fabric.  Once
 * lwIP holds its share (its refusals count up), the two nodes run the
 * fabric beside it: messages of every size both ways over the reliable
 * channel, each checked byte for byte, exactly once and in order, and
 * barriers.  Node 1 checks that lwIP never held more than its share, that
 * the pool never ran dry, and that no peer was declared dead; then it
 * closes the connections and lwIP gives its buffers back.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "apps/app.h"
#include "kernel/node.h"
#include "kernel/sync.h"
#include "kernel/thread.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"
#include "lwip/sockets.h"
#include "lwip/sys.h"
#include "net/call/barrier.h"
#include "net/fabric/fabric.h"
#include "net/lwip/lwip_port.h"
#include "net/net.h"
#include "net/pktshare.h"
#include "tests/apps/check.h"
#include "tests/apps/protos.h"

/* lwIP's consumer of the packet pool (net/lwip/netif.c registers it). */
static int pkt_find_lwip(void)
{
	return pkt_consumer_find("lwip");
}

#define PORT 9				/* discard (RFC 863), never read here */
#define MAX_CONNS 14			/* lwIP's pools: 16 connections, 16 netconns */
#define WAIT_NS 60000000000ULL
#define PIN_WAIT_MS 60000		/* node 1: wait this long for lwIP to hold its share */

static int conns, count;
static volatile int stop_sending;
static volatile uint32_t next_seq;
static volatile uint64_t got, bad, held_max;
static struct waitq got_wq = WAITQ_INIT;

static uint8_t pattern(uint32_t seq, size_t i)
{
	return (uint8_t)(seq * 29 + i * 7 + (uint32_t)node_id);
}

static size_t msg_len(uint32_t seq)
{
	return 4 + (seq * 2654435761u) % (FAB_MTU - 4);
}

static void note_held(void)
{
	uint64_t h = (uint64_t)pkt_held(pkt_find_lwip());

	if (h > held_max)
		held_max = h;
}

/* Messages from the other node: seq, then its pattern (of the sender). */
static int pin_handler(int src, const uint8_t *p, size_t len, struct pktbuf *pb)
{
	uint32_t seq;

	(void)pb;
	note_held();
	if (len < 4 || src != 1 - node_id) {
		bad++;
		return 0;
	}
	memcpy(&seq, p, 4);
	if (seq != next_seq || len != msg_len(seq)) {
		bad++;
		return 0;
	}
	for (size_t i = 4; i < len; i++) {
		if (p[i] != (uint8_t)(seq * 29 + i * 7 + (uint32_t)src)) {
			bad++;
			return 0;
		}
	}
	next_seq++;
	got++;
	waitq_wake_all(&got_wq);
	return 0;
}

/* count messages to the other node, then all of the other's; 0 or -errno. */
static int exchange(void)
{
	uint8_t buf[FAB_MTU];
	int peer = 1 - node_id, r;

	for (uint32_t seq = 0; seq < (uint32_t)count; seq++) {
		size_t len = msg_len(seq);
		memcpy(buf, &seq, 4);
		for (size_t i = 4; i < len; i++)
			buf[i] = pattern(seq, i);
		if ((r = fabric_send(peer, APP_PROTO_TEST, buf, len, NULL, 0, 0)) < 0) {
			printf("lwip-pin: send %u failed: %d\n", seq, r);
			return r;
		}
		note_held();
	}
	if ((r = fabric_flush(peer, WAIT_NS)) < 0)
		return r;
	uint64_t end = cycles() + ns_to_cycles(WAIT_NS);
	irqflags_t f = irq_save();
	while (got < (uint64_t)count && cycles() < end)
		waitq_wait_timeout(&got_wq, cycles_to_ns(end - cycles()));
	irq_restore(f);
	return got == (uint64_t)count ? 0 : -ETIMEDOUT;
}

/* Node 0: one byte per segment on every connection until told to stop. */
static void *pinner(void *arg)
{
	int *s = arg;
	uint8_t b = 0x5a;
	uint64_t sent = 0;

	while (!stop_sending) {
		int any = 0;
		for (int i = 0; i < conns; i++)
			if (s[i] >= 0 && send(s[i], &b, 1, MSG_DONTWAIT) == 1) {
				sent++;
				any = 1;
			}
		if (!any)
			thread_sleep_ns(1000000);
	}
	printf("lwip-pin: sent %lu one-byte segments on %d connections\n", sent, conns);
	return NULL;
}

/*
 * Node 0: connect s[from..to).  A connection lwIP has established but
 * node 1 has not accepted waits in node 1's accept mailbox
 * (DEFAULT_ACCEPTMBOX_SIZE, 8); one beyond it is reset.  So the two
 * nodes go GROUP connections at a time, with a barrier between groups.
 */
#define GROUP 4

static int connect_some(int *s, int from, int to)
{
	struct sockaddr_in sa;

	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_port = htons(PORT);
	sa.sin_addr.s_addr = htonl(0x0a000002);		/* 10.0.0.2: node 1 */
	for (int i = from; i < to; i++) {
		int on = 1;
		s[i] = -1;
		for (int attempt = 0; attempt < 60 && s[i] < 0; attempt++) {
			int c = socket(AF_INET, SOCK_STREAM, 0);
			if (c < 0)
				return -errno;
			if (connect(c, (struct sockaddr *)&sa, sizeof sa) == 0) {
				setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
				s[i] = c;
			} else {
				closesocket(c);
				thread_sleep_ns(1000000000ULL);
			}
		}
		if (s[i] < 0)
			return -ECONNREFUSED;
	}
	return 0;
}

/* Node 1: accept s[from..to). */
static int accept_some(int ls, int *s, int from, int to)
{
	struct timeval tv = { 60, 0 };

	setsockopt(ls, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	for (int i = from; i < to; i++) {
		s[i] = -1;
		if ((s[i] = accept(ls, NULL, NULL)) < 0)
			return -errno;
	}
	return 0;
}

/* sys_thread_new refuses what cannot be had and says so, never a panic. */
static void no_thread(void *arg)
{
	(void)arg;
}

static void thread_failure_is_an_error(void)
{
	uint64_t failed = lwip_port_stats.threads_failed;

	EXPECT(sys_thread_new("huge", no_thread, NULL, 1 << 30, PRIO_NORMAL) == NULL,
	       "a thread with a 1 GiB stack was created");
	EXPECT(sys_thread_new("badprio", no_thread, NULL, 0, NPRIO + 3) == NULL,
	       "a thread of no priority was created");
	EXPECT(lwip_port_stats.threads_failed == failed + 2, "failures not counted");
}

static const struct argspec pin_args[] = {
	{ "conns", ARG_INT, 1, MAX_CONNS, "TCP connections node 0 fills (default 14)" },
	{ "count", ARG_INT, 1, 1000000, "fabric messages each way once lwIP is pinned (default 2000)" },
	{ NULL, 0, 0, 0, NULL },
};

static int lwip_pin_main(void)
{
	int s[MAX_CONNS], ls = -1, r;
	struct thread *t = NULL;

	conns = (int)arg_int("conns", MAX_CONNS);
	count = (int)arg_int("count", 2000);
	if (!lwip_port_ready() || !fabric_ready() || fabric_wait_peers(WAIT_NS) < 0) {
		printf("lwip-pin: no TCP/IP or no fabric\n");
		return 1;
	}
	if (num_nodes != 2) {
		printf("lwip-pin: runs on two nodes\n");
		return 1;
	}
	if (fabric_register(APP_PROTO_TEST, pin_handler) < 0)
		return 1;
	thread_failure_is_an_error();
	if (node_id == 1) {
		struct sockaddr_in sa;
		memset(&sa, 0, sizeof sa);
		sa.sin_family = AF_INET;
		sa.sin_port = htons(PORT);
		ls = socket(AF_INET, SOCK_STREAM, 0);
		EXPECT(ls >= 0 && bind(ls, (struct sockaddr *)&sa, sizeof sa) == 0 && listen(ls, conns) == 0,
		       "listen: errno %d", errno);
	}
	if (cluster_barrier(WAIT_NS) < 0)
		return 1;
	for (int i = 0; i < MAX_CONNS; i++)
		s[i] = -1;
	r = 0;
	for (int from = 0; from < conns; from += GROUP) {
		int to = from + GROUP < conns ? from + GROUP : conns;
		if (r == 0)
			r = node_id == 0 ? connect_some(s, from, to) : accept_some(ls, s, from, to);
		if (cluster_barrier(WAIT_NS) < 0)
			return 1;
	}
	EXPECT(r == 0, "connections: %d", r);
	/*
	 * Every connection is accepted before the pinning starts: with its
	 * share held, lwIP takes no frame at all, a handshake's neither.
	 */
	if (cluster_barrier(WAIT_NS) < 0)
		return 1;
	if (node_id == 0) {
		if (r == 0)
			t = thread_create("pinner", pinner, s, PRIO_NORMAL, 0);
		EXPECT(t != NULL, "no pinner thread");
	} else {
		/* Wait until lwIP is offered more than its share. */
		for (int ms = 0; ms < PIN_WAIT_MS && pkt_refused(pkt_find_lwip()) == 0; ms += 10)
			thread_sleep_ns(10000000);
		note_held();
		printf("lwip-pin: lwIP holds %d packet buffers (share %d), refused %lu; %d of %d free\n",
		       pkt_held(pkt_find_lwip()), pkt_share(pkt_find_lwip()), pkt_refused(pkt_find_lwip()), pkt_free_count(),
		       pkt_total());
		EXPECT(pkt_refused(pkt_find_lwip()) > 0, "lwIP never reached its share");
	}
	/* lwIP is pinned on node 1: the fabric beside it. */
	if ((r = cluster_barrier(WAIT_NS)) < 0)
		EXPECT(r == 0, "barrier with lwIP pinned: %d", r);
	r = exchange();
	EXPECT(r == 0 && bad == 0, "fabric exchange: %d, %lu of %d received, %lu bad", r, got, count,
	       bad);
	for (int i = 0; i < 10; i++) {
		int b = cluster_barrier(WAIT_NS);
		EXPECT(b == 0, "barrier %d with lwIP pinned: %d", i, b);
	}
	EXPECT(!fabric_peer_dead(1 - node_id), "node %d declared dead", 1 - node_id);
	if (node_id == 1) {
		note_held();
		EXPECT(held_max <= (uint64_t)pkt_share(pkt_find_lwip()), "lwIP held %lu buffers, share %d",
		       held_max, pkt_share(pkt_find_lwip()));
		EXPECT(pkt_low_water() > 0, "the packet pool ran dry");
		printf("lwip-pin: fabric ok with lwIP pinned: %lu messages, lwIP held at most %lu of %d, "
		       "pool low water %d\n", got, held_max, pkt_share(pkt_find_lwip()), pkt_low_water());
	}
	stop_sending = 1;
	if (t)
		thread_join(t);
	if (cluster_barrier(WAIT_NS) < 0)
		return 1;
	if (r == 0 || node_id == 1)
		for (int i = 0; i < conns; i++)
			if (s[i] >= 0)
				closesocket(s[i]);
	if (ls >= 0)
		closesocket(ls);
	if (node_id == 1) {
		/* Closed unread: lwIP frees what it held. */
		for (int ms = 0; ms < 10000 && pkt_held(pkt_find_lwip()) > pkt_share(pkt_find_lwip()) / 4; ms += 10)
			thread_sleep_ns(10000000);
		EXPECT(pkt_held(pkt_find_lwip()) <= pkt_share(pkt_find_lwip()) / 4,
		       "lwIP still holds %d buffers after closing", pkt_held(pkt_find_lwip()));
		lwip_port_print_stats();
		net_print_stats();
		result("pinned=%lu share=%d fabric_messages=%lu bad=%lu checks=%d failed=%d",
		       held_max, pkt_share(pkt_find_lwip()), got, bad, check_count, check_failures);
	}
	if (cluster_barrier(WAIT_NS) < 0)
		return 1;
	return check_failures ? 1 : 0;
}

APP(lwip_pin, "lwip-pin",
    "TCP data nobody reads pins lwIP's share of the packet pool; the fabric keeps working",
    lwip_pin_main, pin_args, 2);
