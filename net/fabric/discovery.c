/*
 * Discovery: nodes find each other at boot by broadcasting HELLO frames
 * every HELLO_INTERVAL_NS until every peer is bound and has bound this
 * node.  A peer's MAC and incarnation are bound by the handshake of
 * net/fabric/member.h, never assumed and never taken from any other
 * frame.  A HELLO from a new incarnation of a bound peer (it rebooted)
 * starts the handshake again; when it completes, the pair's channel is
 * reset and what was in flight to the old incarnation fails.  Broadcasts
 * start again whenever a peer does not (or no longer) know this node.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kernel/console.h"
#include "kernel/incarnation.h"
#include "kernel/sync.h"
#include "kernel/timer.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"
#include "net/fabric/internal.h"
#include "net/net.h"

/*
 * Broadcasts: every HELLO_INTERVAL_NS at first, then less often (doubling
 * up to HELLO_INTERVAL_MAX_NS) while some peer stays silent: a node that
 * boots later broadcasts itself and is answered at once, so the others'
 * broadcasts only cover lost frames.  Many nodes broadcasting every 20 ms
 * to peers not yet up would take the CPU those peers need to boot.
 */
#define HELLO_INTERVAL_NS 20000000ULL		/* 20 ms */
#define HELLO_INTERVAL_MAX_NS 640000000ULL	/* 640 ms */
/*
 * Answers to one node's HELLOs: a burst of HELLO_BURST, then one per
 * HELLO_REPLY_NS.  A handshake takes three or four; a station flooding
 * HELLOs in a node's name gets no more than that out of us.  An answer
 * held back costs nothing but time: broadcasts go on until both sides
 * are bound, and each is answered.
 */
#define HELLO_BURST 4
#define HELLO_REPLY_NS 2000000ULL		/* 2 ms */
/*
 * A broadcast of a node whose pair with us is up (each bound the other's
 * incarnation) asks nothing of us, unless our HELLO saying so was lost:
 * at most one answer per HELLO_UP_REPLY_NS, so that replayed broadcasts
 * of a present node draw ten frames a second, not one each.
 */
#define HELLO_UP_REPLY_NS 100000000ULL		/* 100 ms */

static struct waitq discovery_wq = WAITQ_INIT;
static struct ktimer hello_timer;

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

static int all_discovered(void);
static void hello_fire(void *arg);

/*
 * dst < 0: broadcast, echoing nothing.  frame > 0 (unicast): padded with
 * zeros to a frame of that many bytes, the probe of the path to dst.
 */
static void send_hello_frame(int dst, uint32_t frame)
{
	size_t len = sizeof(struct fab_hello);
	if (frame)
		len = fab_payload_max(frame) + (fab.keyed ? 0 : FAB_TRAILER_LEN);
	struct pktbuf *pb = pkt_get_len(frame ? frame : CHAN_PAYLOAD_OFF + len + FAB_TRAILER_LEN);
	struct fab_hdr h;
	struct fab_hello hello;

	if (!pb)
		return;
	memset(&h, 0, sizeof h);
	memset(&hello, 0, sizeof hello);
	h.type = FAB_HELLO;
	h.src = (uint16_t)fab.me;
	h.dst = dst < 0 ? FAB_BROADCAST : (uint16_t)dst;
	h.len = (uint16_t)len;
	hello.nodes = (uint16_t)fab.nnodes;
	hello.flags = fab.lossless ? FAB_HELLO_LOSSLESS : 0;
	memcpy(hello.mac, net_mac(), 6);
	hello.frame = (uint16_t)fab.frame_max;
	hello.known = known_mask();
	hello.lossless = lossless_mask();
	hello.inc = fab.inc;
	if (dst >= 0) {
		hello.echo = member_echo(&fab.peers[dst].m);
		hello.nonce = member_nonce(&fab.peers[dst].m);
		hello.heard = (uint16_t)fab.peers[dst].heard_long;
		if (member_says_bound(&fab.peers[dst].m))
			hello.flags |= FAB_HELLO_BOUND;
	}
	memcpy(pb->data + CHAN_PAYLOAD_OFF, &hello, sizeof hello);
	memset(pb->data + CHAN_PAYLOAD_OFF + sizeof hello, 0, len - sizeof hello);
	/* To whoever last spoke for dst: the new incarnation before it is bound. */
	pb->len = (uint16_t)fab_build_sealed(pb->data, dst < 0 ? bcast_mac : fab.peers[dst].m.heard_mac,
					     net_mac(), &h, fab.keyed ? &fab.hello_seal : NULL);
	fab.ctr.hello_tx++;
	fab_xmit(pb);
	pkt_put(pb);
}

static void send_hello(int dst)
{
	send_hello_frame(dst, 0);
}

/* --- the path's probe: frames longer than Ethernet's (wire.h) ------------- */

#define PROBE_INTERVAL_NS 100000000ULL	/* 100 ms */
#define PROBE_TRIES 5

static struct ktimer probe_timer;
static int probe_armed;

/* The frames to p: the agreed length once a probe of it came through, else Ethernet's. */
static uint32_t peer_frame(const struct peer *p)
{
	return fab.link_exact || p->frame_ok >= p->frame ? p->frame : FAB_FRAME_MAX;
}

/*
 * The shortest of every peer's frames, for the protocols beside the
 * fabric (net.h): a peer not yet bound counts as Ethernet's, so that the
 * figure rises once, when the last probe came through.
 */
static void publish_path_frame(void)
{
	uint32_t f = fab.nnodes > 1 ? fab.frame_max : FAB_FRAME_MAX;

	for (int i = 0; i < fab.nnodes; i++) {
		uint32_t pf = fab.peers[i].known ? peer_frame(&fab.peers[i]) : FAB_FRAME_MAX;
		if (i != fab.me && pf < f)
			f = pf;
	}
	net_set_path_frame(f);
}

static void peer_set_frame(struct peer *p)
{
	chan_set_mtu(&p->ch, fab_payload_max(peer_frame(p)));
	publish_path_frame();
}

/* A padded HELLO to every bound peer whose long frames are not confirmed yet, PROBE_TRIES each. */
static void probe_fire(void *arg)
{
	int again = 0;

	(void)arg;
	probe_armed = 0;
	for (int i = 0; i < fab.nnodes; i++) {
		struct peer *p = &fab.peers[i];
		if (i == fab.me || !p->known || p->frame <= FAB_FRAME_MAX || p->frame_ok >= p->frame ||
		    p->probes > PROBE_TRIES)
			continue;
		if (p->probes == PROBE_TRIES && p->frame > FAB_FRAME_STEP) {
			/* Longer than the NICs' jumbo frames: those may still pass (a 9000-byte bridge). */
			fab.ctr.probe_failed++;
			kprintf("fabric: node %d: no frame of %u bytes reached it in %d tries: trying %d\n",
				i, p->frame, PROBE_TRIES, FAB_FRAME_STEP);
			p->frame = p->frame_cap = FAB_FRAME_STEP;
			p->probes = 0;
			peer_set_frame(p);
		}
		if (p->probes == PROBE_TRIES) {
			p->probes++;
			fab.ctr.probe_failed++;
			kprintf("fabric: node %d: no frame of %u bytes reached it in %d tries (what lies "
				"between passes no more): frames of %d bytes to it\n",
				i, p->frame, PROBE_TRIES, FAB_FRAME_MAX);
			waitq_wake_all(&discovery_wq);	/* its path settled (fabric_wait_path) */
			continue;
		}
		p->probes++;
		send_hello_frame(i, p->frame);
		again = 1;
	}
	if (again) {
		probe_armed = 1;
		timer_arm(&probe_timer, cycles() + ns_to_cycles(PROBE_INTERVAL_NS), probe_fire, NULL);
	}
}

static void probe_start(void)
{
	if (!probe_armed) {
		probe_armed = 1;
		timer_arm(&probe_timer, cycles() + ns_to_cycles(1000000), probe_fire, NULL);
	}
}

static int all_discovered(void)
{
	for (int i = 0; i < fab.nnodes; i++)
		if (i != fab.me && !member_up(&fab.peers[i].m))
			return 0;
	return 1;
}

static int hello_armed;
static uint64_t hello_interval = HELLO_INTERVAL_NS;

static void hello_fire(void *arg)
{
	(void)arg;
	if (all_discovered()) {
		hello_armed = 0;
		hello_interval = HELLO_INTERVAL_NS;
		waitq_wake_all(&discovery_wq);
		return;
	}
	hello_armed = 1;
	send_hello(-1);
	timer_arm(&hello_timer, cycles() + ns_to_cycles(hello_interval), hello_fire, NULL);
	if (hello_interval < HELLO_INTERVAL_MAX_NS)
		hello_interval *= 2;
}

void fab_discovery_start(void)
{
	irqflags_t f = irq_save();
	hello_fire(NULL);
	irq_restore(f);
}

static int hello_answer_allowed(struct peer *p)
{
	uint64_t now = now_ns(), n = (now - p->hello_refill) / HELLO_REPLY_NS;

	if (n) {
		p->hello_tokens = n >= HELLO_BURST || p->hello_tokens + n >= HELLO_BURST ?
					  HELLO_BURST : p->hello_tokens + (unsigned)n;
		p->hello_refill = now;
	}
	if (!p->hello_tokens) {
		fab.ctr.hello_limited++;
		return 0;
	}
	p->hello_tokens--;
	return 1;
}

/* A HELLO of p's asking for an answer: not a broadcast of the pair up more often than HELLO_UP_REPLY_NS. */
static int up_broadcast_answer_allowed(struct peer *p, const struct fab_hdr *h, uint64_t inc)
{
	uint64_t now;

	if (h->dst != FAB_BROADCAST || inc != p->m.inc || !member_up(&p->m))
		return 1;
	now = now_ns();
	if (p->hello_up_answer && now - p->hello_up_answer < HELLO_UP_REPLY_NS) {
		fab.ctr.hello_limited++;
		return 0;
	}
	p->hello_up_answer = now;
	return 1;
}

/* (inc, mac) is p's new binding: tag its channel, and reset it if p rebooted. */
static void bind_peer(struct peer *p, int reset)
{
	int id = (int)(p - fab.peers);

	p->known = 1;
	memcpy(p->mac, p->m.mac, 6);
	p->rx_tag = fab_pair_tag(p->m.inc, fab.inc);
	if (fab.keyed) {
		/* The pair's keys name both incarnations: no frame of another boot passes. */
		fab_pair_key(&p->tx_seal.key, &fab.key, fab.me, fab.inc, id, p->m.inc);
		fab_pair_key(&p->rx_seal.key, &fab.key, id, p->m.inc, fab.me, fab.inc);
		p->tx_seal.ctr = 0;
		p->rx_seal.top = p->rx_seal.seen = 0;
	}
	if (reset) {
		/* Nothing of the old incarnation's channel survives, nor reaches the new one. */
		chan_reset(&p->ch, fab_pair_tag(fab.inc, p->m.inc), p->m.mac);
		p->lossless = 0;
		p->frame = p->frame_ok = FAB_FRAME_MAX;
		p->frame_cap = 0;
		publish_path_frame();
		p->heard_long = 0;
		p->probes = 0;
		p->reported_dead = 0;
		for (int i = 0; i < FABRIC_RESET_HOOKS && fab_reset_hooks[i]; i++)
			fab_reset_hooks[i](id);
		/*
		 * What its old incarnation sent an app not yet running stays
		 * parked: it was acknowledged, so it is handed over when the
		 * protocol registers, before what the new one sends.
		 */
		fab.ctr.rebinds++;
		kprintf("fabric: node %d rebooted (incarnation %016lx); its channel starts again, "
			"what was in flight to it failed\n", id, p->m.inc);
	} else {
		p->ch.cfg.session = fab_pair_tag(fab.inc, p->m.inc);
		memcpy(p->ch.cfg.peer_mac, p->m.mac, 6);
	}
	waitq_wake_all(&p->senders);
}

void fab_hello_input(const struct fab_hdr *h, const uint8_t *payload, const uint8_t *src_mac, uint64_t ctr,
		     int seen)
{
	struct fab_hello hello;
	struct peer *p = &fab.peers[h->src];
	unsigned r;

	memcpy(&hello, payload, sizeof hello);
	fab.ctr.hello_rx++;
	if (hello.nodes != fab.nnodes || memcmp(hello.mac, src_mac, 6) != 0) {
		fab.ctr.rx_foreign_mac++;
		return;
	}
	/*
	 * Keyed, a HELLO of the bound incarnation is taken once (its window,
	 * hello_receive): replayed, it is counted and draws nothing.  One of
	 * another incarnation goes to the handshake, which refuses a past one
	 * and only challenges a new claim.
	 */
	int bound_inc = fab.keyed && p->m.inc && hello.inc == p->m.inc;
	if (bound_inc && seen) {
		fab.ctr.hello_replayed++;
		return;
	}
	r = member_hello(&p->m, hello.inc, hello.nonce, hello.echo, (hello.flags & FAB_HELLO_BOUND) != 0,
			 src_mac, h->dst == FAB_BROADCAST, random64());
	if (r & (MEMBER_INVALID | MEMBER_PAST_INC)) {
		fab.ctr.hello_bad++;
		return;
	}
	if (r & MEMBER_FOREIGN) {
		fab.ctr.rx_foreign_mac++;
		return;
	}
	if (r & MEMBER_BIND) {
		bind_peer(p, (r & MEMBER_RESET) != 0);
		/* The window is the new incarnation's, none of its HELLOs before this one taken again. */
		p->hello_rx.top = ctr;
		p->hello_rx.seen = ~0ULL;
	} else if (bound_inc) {
		fab_unseal_take(&p->hello_rx, ctr);
	}
	/* Lossless agreement is with the bound incarnation only. */
	if (hello.inc == p->m.inc) {
		/*
		 * A lossless link both ways: p takes our frames without a CRC once
		 * its HELLO shows it heard that we are lossless too, and we take
		 * its frames without one from the moment it says it is.
		 */
		if (fab.lossless && (hello.flags & FAB_HELLO_LOSSLESS) && !p->lossless) {
			p->lossless = 1;
			r |= MEMBER_REPLY;	/* so that p learns we heard it */
		}
		if (p->lossless && (hello.lossless & (1ULL << fab.me)) && !p->ch.cfg.lossless)
			chan_set_lossless(&p->ch, 1, now_ns());
		/* Frames as long as both NICs take, once one of that length came through (probe_fire). */
		uint32_t frame = hello.frame > FAB_FRAME_MAX ? hello.frame : FAB_FRAME_MAX;
		if (frame > fab.frame_max)
			frame = fab.frame_max;
		if (p->frame_cap && frame > p->frame_cap)
			frame = p->frame_cap;	/* the longer ones found not to pass (probe_fire) */
		if (frame != p->frame) {
			p->frame = frame;
			p->probes = 0;
			peer_set_frame(p);
			if (frame > FAB_FRAME_MAX && !fab.link_exact && p->frame_ok < frame)
				probe_start();
		}
		/*
		 * The longest frame taken from p intact, said back to it: every
		 * probe is answered (the answer may be lost as the probe may).
		 */
		uint32_t got = FAB_ETH_HLEN + FAB_HDR_LEN + h->len + (fab.keyed ? FAB_TRAILER_LEN : 0);
		if (h->dst != FAB_BROADCAST && got > FAB_FRAME_MAX) {
			if (got > p->heard_long)
				p->heard_long = got;
			r |= MEMBER_REPLY;
		}
		if (hello.heard > p->frame_ok && h->dst != FAB_BROADCAST) {
			int was = p->frame_ok >= p->frame;
			p->frame_ok = hello.heard;
			peer_set_frame(p);
			if (!was && p->frame_ok >= p->frame && !fab.link_exact)
				kprintf("fabric: node %d takes frames of %u bytes from this node\n",
					(int)(p - fab.peers), p->frame);
		}
	}
	/* Answer broadcasts too, so that a node that already finished still helps. */
	if ((r & MEMBER_REPLY) && up_broadcast_answer_allowed(p, h, hello.inc) && hello_answer_allowed(p))
		send_hello(h->src);
	if (all_discovered()) {
		waitq_wake_all(&discovery_wq);
	} else if (!hello_armed) {
		/* A peer rebooted: broadcast until it is bound again. */
		hello_armed = 1;
		timer_arm(&hello_timer, cycles() + ns_to_cycles(HELLO_INTERVAL_NS), hello_fire, NULL);
	}
}

/* Is the length of our frames to every peer settled (fabric_wait_path)?  (irq off) */
static int paths_settled(void)
{
	if (fab.link_exact)
		return 1;
	for (int i = 0; i < fab.nnodes; i++) {
		const struct peer *p = &fab.peers[i];
		if (i != fab.me && p->frame > FAB_FRAME_MAX && p->frame_ok < p->frame && p->probes <= PROBE_TRIES)
			return 0;
	}
	return 1;
}

int fabric_wait_path(uint64_t timeout_ns)
{
	uint64_t end = cycles() + ns_to_cycles(timeout_ns);
	int r = fabric_wait_peers(timeout_ns);
	irqflags_t f;

	if (r < 0)
		return r;
	f = irq_save();
	while (!(all_discovered() && paths_settled()) && cycles() < end)
		waitq_wait_timeout(&discovery_wq, cycles_to_ns(end - cycles()));
	int done = all_discovered() && paths_settled();
	irq_restore(f);
	if (done)
		return 0;
	printf("fabric: the length of frames to every node not settled in time:");
	for (int i = 0; i < fab.nnodes; i++)
		if (i != fab.me && fab.peers[i].frame > FAB_FRAME_MAX && fab.peers[i].frame_ok < fab.peers[i].frame)
			printf(" n%d (probe %d of %d)", i, fab.peers[i].probes, PROBE_TRIES);
	printf("\n");
	return -ETIMEDOUT;
}

int fabric_wait_peers(uint64_t timeout_ns)
{
	uint64_t end = cycles() + ns_to_cycles(timeout_ns);
	irqflags_t f = irq_save();

	while (!all_discovered() && cycles() < end)
		waitq_wait_timeout(&discovery_wq, cycles_to_ns(end - cycles()));
	int done = all_discovered();
	irq_restore(f);
	if (done)
		return 0;
	printf("fabric: discovery timed out; missing:");
	for (int i = 0; i < fab.nnodes; i++)
		if (i != fab.me && !member_up(&fab.peers[i].m))
			printf(" n%d%s", i, fab.peers[i].known ? " (has not bound us)" : "");
	printf("\n");
	/* Whether this node heard anyone at all, and what its NIC did: a dead link shows here. */
	printf("fabric: HELLOs sent %lu, heard %lu\n", (unsigned long)fab.ctr.hello_tx,
	       (unsigned long)fab.ctr.hello_rx);
	net_print_stats();
	return -ETIMEDOUT;
}
