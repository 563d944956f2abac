/*
 * Discovery: nodes find each other at boot by broadcasting HELLO frames
 * every HELLO_INTERVAL_NS until every peer has been heard and has heard
 * this node.  A peer's MAC and boot session are learned from its HELLO
 * (or from its first frame, if it heard our HELLO before we heard its),
 * never assumed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kernel/sync.h"
#include "kernel/timer.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"
#include "net/fabric/internal.h"
#include "net/net.h"

#define HELLO_INTERVAL_NS 20000000ULL		/* 20 ms */

static struct waitq discovery_wq = WAITQ_INIT;
static struct ktimer hello_timer;
static int discovery_done;

static const uint8_t bcast_mac[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

static uint64_t known_mask(void)
{
	uint64_t m = 1ULL << fab.me;

	for (int i = 0; i < fab.nnodes; i++)
		if (fab.peers[i].known)
			m |= 1ULL << i;
	return m;
}

/* The nodes whose HELLO said lossless, if this node is lossless too. */
static uint64_t lossless_mask(void)
{
	uint64_t m = 0;

	for (int i = 0; fab.lossless && i < fab.nnodes; i++)
		if (fab.peers[i].lossless)
			m |= 1ULL << i;
	return m;
}

static void send_hello(int dst)
{
	struct pktbuf *pb = pkt_get();
	struct fab_hdr h;
	struct fab_hello hello;

	if (!pb)
		return;
	memset(&h, 0, sizeof h);
	memset(&hello, 0, sizeof hello);
	h.type = FAB_HELLO;
	h.src = (uint16_t)fab.me;
	h.dst = dst < 0 ? FAB_BROADCAST : (uint16_t)dst;
	h.session = fab.session;
	h.len = sizeof hello;
	hello.nodes = (uint16_t)fab.nnodes;
	hello.flags = fab.lossless ? FAB_HELLO_LOSSLESS : 0;
	memcpy(hello.mac, net_mac(), 6);
	hello.known = known_mask();
	hello.lossless = lossless_mask();
	memcpy(pb->data + CHAN_PAYLOAD_OFF, &hello, sizeof hello);
	pb->len = (uint16_t)fab_build(pb->data, dst < 0 ? bcast_mac : fab.peers[dst].mac, net_mac(), &h);
	fab.ctr.hello_tx++;
	fab_xmit(pb);
	pkt_put(pb);
}

static int all_discovered(void)
{
	for (int i = 0; i < fab.nnodes; i++)
		if (i != fab.me && (!fab.peers[i].known || !fab.peers[i].knows_me))
			return 0;
	return 1;
}

static void hello_fire(void *arg)
{
	(void)arg;
	if (all_discovered()) {
		discovery_done = 1;
		waitq_wake_all(&discovery_wq);
		return;
	}
	send_hello(-1);
	timer_arm(&hello_timer, cycles() + ns_to_cycles(HELLO_INTERVAL_NS), hello_fire, NULL);
}

void fab_discovery_start(void)
{
	irqflags_t f = irq_save();
	hello_fire(NULL);
	irq_restore(f);
}

void fab_learn_peer(struct peer *p, const uint8_t *mac, uint16_t sess)
{
	p->known = 1;
	p->session = sess;
	memcpy(p->mac, mac, 6);
	memcpy(p->ch.cfg.peer_mac, mac, 6);
	waitq_wake_all(&p->senders);
}

void fab_hello_input(const struct fab_hdr *h, const uint8_t *payload, const uint8_t *src_mac)
{
	struct fab_hello hello;
	struct peer *p = &fab.peers[h->src];

	memcpy(&hello, payload, sizeof hello);
	fab.ctr.hello_rx++;
	if (hello.nodes != fab.nnodes || memcmp(hello.mac, src_mac, 6) != 0) {
		fab.ctr.rx_foreign_mac++;
		return;
	}
	if (p->known && p->session != h->session) {
		fab.ctr.rx_stale_session++;
		return;
	}
	if (!p->known)
		fab_learn_peer(p, hello.mac, h->session);
	if (hello.known & (1ULL << fab.me))
		p->knows_me = 1;
	/*
	 * A lossless link both ways: p takes our frames without a CRC once its
	 * HELLO shows it heard that we are lossless too, and we take its
	 * frames without one from the moment it says it is.
	 */
	if (fab.lossless && (hello.flags & FAB_HELLO_LOSSLESS) && !p->lossless) {
		p->lossless = 1;
		send_hello(h->src);	/* so that p learns we heard it */
	}
	if (p->lossless && (hello.lossless & (1ULL << fab.me)) && !p->ch.cfg.lossless)
		chan_set_lossless(&p->ch, 1);
	/* Answer broadcasts, so that a node that already finished still helps. */
	if (h->dst == FAB_BROADCAST)
		send_hello(h->src);
	if (all_discovered() && !discovery_done) {
		discovery_done = 1;
		waitq_wake_all(&discovery_wq);
	}
}

int fabric_wait_peers(uint64_t timeout_ns)
{
	uint64_t end = cycles() + ns_to_cycles(timeout_ns);
	irqflags_t f = irq_save();

	while (!discovery_done && cycles() < end)
		waitq_wait_timeout(&discovery_wq, cycles_to_ns(end - cycles()));
	int done = discovery_done;
	irq_restore(f);
	if (done)
		return 0;
	printf("fabric: discovery timed out; missing:");
	for (int i = 0; i < fab.nnodes; i++)
		if (i != fab.me && (!fab.peers[i].known || !fab.peers[i].knows_me))
			printf(" n%d%s", i, fab.peers[i].known ? " (does not hear us)" : "");
	printf("\n");
	return -ETIMEDOUT;
}
