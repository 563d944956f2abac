/*
 * The fabric's kernel side: discovery, one channel per peer, the receive
 * path with fault injection, raw frames, timers and the blocking send.
 *
 * Everything that touches channel state runs with interrupts off: the
 * receive path is the NIC interrupt, the timers are the timer interrupt,
 * and the thread-side calls take irq_save.  That is the "serialized per
 * node" receive half of DESIGN.md.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/init.h"
#include "kernel/node.h"
#include "kernel/console.h"
#include "kernel/panic.h"
#include "kernel/sync.h"
#include "kernel/thread.h"
#include "kernel/timer.h"
#include "kernel/trap.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"
#include "kernel/crc.h"
#include "net/fabric/channel.h"
#include "net/fabric/fabric.h"
#include "net/fabric/fault.h"
#include "net/net.h"

#define HELLO_INTERVAL_NS 20000000ULL		/* 20 ms */
#define DISCOVERY_WAIT_NS 60000000000ULL	/* a send waits this long for its peer */
#define REORDER_HOLD_NS 2000000ULL		/* a held-back frame waits at most 2 ms */
#define FP_BARRIER 8				/* the barrier's protocol number */

static const struct argspec fabric_args[] = {
	{ "fault", ARG_STR, 0, 0, "receive faults, e.g. drop:0.05,dup:0.01,reorder:0.01,corrupt:0.01" },
	{ "peer_timeout_ms", ARG_INT, 100, 3600000, "declare a silent peer dead after this (default 10000)" },
	{ "seed", ARG_INT, 0, 0x7fffffff, "fault injection random seed (default: node id)" },
	{ NULL, 0, 0, 0, NULL },
};

struct peer {
	struct chan ch;
	int known;			/* heard a HELLO (or frame) from it */
	int knows_me;			/* its HELLO listed this node */
	uint16_t session;
	uint8_t mac[6];
	struct waitq senders;		/* threads waiting for window space or an ack */
	int reported_dead;
};

static struct peer *peers;
static int me, nnodes, ready, started;
static uint16_t session;
static uint64_t peer_timeout_ns = 10000000000ULL;
static fabric_handler_t handlers[FP_MAX], raw_handlers[FP_MAX];
static struct fabric_counters ctr;
static struct waitq discovery_wq = WAITQ_INIT;
static struct ktimer hello_timer;
static int discovery_done;

static struct fault_cfg faults;
static uint64_t rng_state;
static struct pktbuf *held;			/* reorder: the frame held back */
static struct ktimer held_timer;

static const uint8_t bcast_mac[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

static uint64_t rng_next(void)
{
	/* xorshift64* (Vigna). */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static int chance(uint32_t rate)
{
	return rate && (uint32_t)(rng_next() >> 32) < rate;
}

static int fabric_check_args(const struct cmdline *c, char *err, size_t errlen)
{
	const char *f = cmdline_get(c, "fault");
	struct fault_cfg tmp;

	if (f && fault_parse(f, &tmp, err, errlen) < 0)
		return -1;
	return 0;
}

static const struct arg_table fabric_argtab = { "fabric", fabric_args, fabric_check_args };
ARGS_REGISTER(fabric_argtab);

/* --- transmit ------------------------------------------------------------ */

static int xmit_raw(struct pktbuf *pb)
{
	int r = net_transmit(pb);

	if (r < 0)
		ctr.tx_failed++;
	return r;
}

static void chan_xmit(void *ctx, struct pktbuf *pb)
{
	(void)ctx;
	/* A full TX ring is a loss to the channel: it retransmits. */
	xmit_raw(pb);
}

static struct pktbuf *chan_alloc(void *ctx)
{
	(void)ctx;
	return pkt_get();
}

static int chan_deliver(void *ctx, int src, uint8_t proto, const uint8_t *p, size_t len,
			struct pktbuf *pb)
{
	(void)ctx;
	if (proto < FP_MAX && !handlers[proto] && !started)
		return CHAN_BUSY;	/* its protocol is not up yet: keep it */
	if (proto >= FP_MAX || !handlers[proto]) {
		ctr.rx_unknown_proto++;
		return 0;		/* consumed: nobody will ever want it */
	}
	return handlers[proto](src, p, len, pb);
}

static const struct chan_ops ops = { chan_xmit, chan_deliver, chan_alloc };

/* --- timers ---------------------------------------------------------------- */

/*
 * Retransmission, probes, delayed acks and the dead-peer check all run from
 * the periodic tick (TICK_HZ) rather than from timers of their own: a lost
 * frame waits up to a tick longer for its retransmission (SACK recovers
 * most losses in streams sooner), and loss-free traffic costs no timer
 * work at all, which matters under QEMU where programming the LAPIC timer
 * wakes the emulator's main loop.
 */

/* After any channel operation (interrupts off): report a death, wake senders. */
static void after_chan_op(struct peer *p)
{
	/*
	 * A handler that could not answer p (window to p full) refused p's
	 * message; p's acknowledgement just made room: try it again now.
	 */
	if (p->ch.blocked && chan_space(&p->ch) > 0)
		chan_resume(&p->ch, now_ns());
	if (p->ch.dead && !p->reported_dead) {
		p->reported_dead = 1;
		kprintf("fabric: node %d stopped answering (nothing heard for %lu ms); "
			"messages to it now fail\n", (int)(p - peers), peer_timeout_ns / 1000000);
		waitq_wake_all(&p->senders);
	}
	if (p->senders.head && (chan_space(&p->ch) > 0 || p->ch.dead || chan_outstanding(&p->ch) == 0))
		waitq_wake_all(&p->senders);
}

/* The tick: every channel's timers, delayed acks included (interrupt context). */
static void fabric_tick(void)
{
	uint64_t now = now_ns();

	for (int i = 0; i < nnodes; i++) {
		if (i == me)
			continue;
		chan_timer(&peers[i].ch, now);
		/* Refused messages are offered again every tick, resumed or not. */
		if (peers[i].ch.blocked)
			chan_resume(&peers[i].ch, now);
		after_chan_op(&peers[i]);
	}
}

/* The CPU is about to halt: acknowledge what arrived (interrupts off). */
static void fabric_idle(void)
{
	uint64_t now = 0;

	for (int i = 0; i < nnodes; i++) {
		if (i != me && peers[i].ch.ack_pending) {
			if (!now)
				now = now_ns();
			chan_flush_ack(&peers[i].ch, now);
		}
	}
}

/* --- discovery ------------------------------------------------------------- */

static uint64_t known_mask(void)
{
	uint64_t m = 1ULL << me;

	for (int i = 0; i < nnodes; i++)
		if (peers[i].known)
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
	h.src = (uint16_t)me;
	h.dst = dst < 0 ? FAB_BROADCAST : (uint16_t)dst;
	h.session = session;
	h.len = sizeof hello;
	hello.nodes = (uint16_t)nnodes;
	memcpy(hello.mac, net_mac(), 6);
	hello.known = known_mask();
	memcpy(pb->data + CHAN_PAYLOAD_OFF, &hello, sizeof hello);
	pb->len = (uint16_t)fab_build(pb->data, dst < 0 ? bcast_mac : peers[dst].mac, net_mac(), &h);
	ctr.hello_tx++;
	xmit_raw(pb);
	pkt_put(pb);
}

static int all_discovered(void)
{
	for (int i = 0; i < nnodes; i++)
		if (i != me && (!peers[i].known || !peers[i].knows_me))
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

static void learn_peer(struct peer *p, int id, const uint8_t *mac, uint16_t sess)
{
	p->known = 1;
	p->session = sess;
	memcpy(p->mac, mac, 6);
	memcpy(p->ch.cfg.peer_mac, mac, 6);
	(void)id;
	waitq_wake_all(&p->senders);
}

static void receive_hello(const struct fab_hdr *h, const uint8_t *payload, const uint8_t *src_mac)
{
	struct fab_hello hello;
	struct peer *p = &peers[h->src];

	memcpy(&hello, payload, sizeof hello);
	ctr.hello_rx++;
	if (hello.nodes != nnodes || memcmp(hello.mac, src_mac, 6) != 0) {
		ctr.rx_foreign_mac++;
		return;
	}
	if (p->known && p->session != h->session) {
		ctr.rx_stale_session++;
		return;
	}
	if (!p->known)
		learn_peer(p, h->src, hello.mac, h->session);
	if (hello.known & (1ULL << me))
		p->knows_me = 1;
	/* Answer broadcasts, so that a node that already finished still helps. */
	if (h->dst == FAB_BROADCAST)
		send_hello(h->src);
	if (all_discovered() && !discovery_done) {
		discovery_done = 1;
		waitq_wake_all(&discovery_wq);
	}
}

/* --- receive --------------------------------------------------------------- */

static void process(struct pktbuf *pb)
{
	struct fab_hdr h;
	const uint8_t *payload;
	enum fab_err e;
	struct peer *p;

	ctr.rx_frames++;
	e = fab_parse(pb->data, pb->len, me, nnodes, &h, &payload);
	if (e != FAB_OK) {
		ctr.rx_rejected[e]++;
		pkt_put(pb);
		return;
	}
	p = &peers[h.src];
	if (h.type == FAB_HELLO) {
		receive_hello(&h, payload, pb->data + 6);
		pkt_put(pb);
		return;
	}
	if (!p->known) {
		/* It heard our HELLO before we heard its: learn it from this frame. */
		learn_peer(p, h.src, pb->data + 6, h.session);
	} else if (p->session != h.session) {
		ctr.rx_stale_session++;
		pkt_put(pb);
		return;
	} else if (memcmp(p->mac, pb->data + 6, 6) != 0) {
		ctr.rx_foreign_mac++;
		pkt_put(pb);
		return;
	}
	if (h.type == FAB_RAW) {
		ctr.rx_raw++;
		if (h.proto < FP_MAX && raw_handlers[h.proto])
			raw_handlers[h.proto](h.src, payload, h.len, pb);
		else
			ctr.rx_unknown_proto++;
		pkt_put(pb);
		return;
	}
	if (p->ch.dead) {
		ctr.rx_dead_peer++;
		pkt_put(pb);
		return;
	}
	chan_input(&p->ch, &h, payload, pb, now_ns());
	after_chan_op(p);
}

static void release_held(void *arg)
{
	struct pktbuf *pb = held;

	(void)arg;
	held = NULL;
	if (pb)
		process(pb);
}

/* The EtherType handler (interrupt context): fault injection, then process. */
static void fabric_input(struct pktbuf *pb)
{
	if (!faults.any) {
		process(pb);
		return;
	}
	if (chance(faults.drop)) {
		ctr.fault_drop++;
		pkt_put(pb);
		return;
	}
	if (chance(faults.corrupt) && pb->len > FAB_ETH_HLEN) {
		uint64_t r = rng_next();
		size_t off = FAB_ETH_HLEN + (size_t)(r % (pb->len - FAB_ETH_HLEN));
		pb->data[off] ^= (uint8_t)(1u << ((r >> 32) & 7));
		ctr.fault_corrupt++;
	}
	struct pktbuf *dup = NULL;
	if (chance(faults.dup) && (dup = pkt_get()) != NULL) {
		memcpy(dup->data, pb->data, pb->len);
		dup->len = pb->len;
		ctr.fault_dup++;
	}
	if (!held && chance(faults.reorder)) {
		/* Hold this one back until the next frame has gone past it. */
		held = pb;
		ctr.fault_reorder++;
		timer_arm(&held_timer, cycles() + ns_to_cycles(REORDER_HOLD_NS), release_held, NULL);
		pb = dup;
		dup = NULL;
		if (!pb)
			return;
	}
	process(pb);
	if (dup)
		process(dup);
	if (held && held != pb) {
		timer_cancel(&held_timer);
		release_held(NULL);
	}
}

/* --- barrier --------------------------------------------------------------- */

static volatile uint32_t barrier_arrived, barrier_released;
static struct waitq barrier_wq = WAITQ_INIT;

static int barrier_handler(int src, const uint8_t *p, size_t len, struct pktbuf *pb)
{
	uint32_t gen;

	(void)src;
	(void)pb;
	if (len != 5)
		return 0;
	memcpy(&gen, p + 1, 4);
	if (p[0] == 'A')
		barrier_arrived++;
	else if (p[0] == 'R')
		barrier_released = gen;
	waitq_wake_all(&barrier_wq);
	return 0;
}

int fabric_barrier(uint64_t timeout_ns)
{
	static uint32_t gen;
	uint8_t msg[5];
	uint64_t end = cycles() + ns_to_cycles(timeout_ns);
	int r;

	gen++;
	if (nnodes == 1)
		return 0;
	memcpy(msg + 1, &gen, 4);
	if (me != 0) {
		msg[0] = 'A';
		if ((r = fabric_send(0, FP_BARRIER, msg, 5, NULL, 0, FABRIC_ACKNOW)) < 0)
			return r;
		irqflags_t f = irq_save();
		while (seq_lt(barrier_released, gen) && cycles() < end)
			waitq_wait_timeout(&barrier_wq, cycles_to_ns(end - cycles()));
		r = seq_lt(barrier_released, gen) ? -ETIMEDOUT : 0;
		irq_restore(f);
		return r;
	}
	irqflags_t f = irq_save();
	while (barrier_arrived < gen * (uint32_t)(nnodes - 1) && cycles() < end)
		waitq_wait_timeout(&barrier_wq, cycles_to_ns(end - cycles()));
	r = barrier_arrived < gen * (uint32_t)(nnodes - 1) ? -ETIMEDOUT : 0;
	irq_restore(f);
	if (r)
		return r;
	msg[0] = 'R';
	for (int i = 1; i < nnodes; i++)
		if ((r = fabric_send(i, FP_BARRIER, msg, 5, NULL, 0, FABRIC_ACKNOW)) < 0)
			return r;
	return 0;
}

/* --- API ------------------------------------------------------------------- */

static int fabric_init(void)
{
	char desc[128];
	const char *f;
	unsigned window;

	if (!net_up())
		return -ENODEV;
	me = node_id;
	nnodes = num_nodes;
	peers = calloc((size_t)nnodes, sizeof *peers);
	if (!peers)
		return -ENOMEM;
	session = (uint16_t)(rdtsc() ^ (rdtsc() >> 16) ^ (uint64_t)me * 0x9e37) | 1;
	if (arg_int("peer_timeout_ms", 0))
		peer_timeout_ns = (uint64_t)arg_int("peer_timeout_ms", 10000) * 1000000ULL;
	rng_state = (uint64_t)arg_int("seed", me) * 0x9e3779b97f4a7c15ULL + 0x1234567ULL;
	if ((f = arg_str("fault", NULL)) != NULL) {
		char err[128];
		if (fault_parse(f, &faults, err, sizeof err) < 0)
			panic("fabric: %s", err);	/* config_init checked it already */
	}

	/* Every peer's window fits the receive ring and the buffer pool together. */
	window = nnodes > 1 ? 192 / (unsigned)(nnodes - 1) : CHAN_WIN_MAX;
	if (window > CHAN_WIN_MAX)
		window = CHAN_WIN_MAX;
	if (window < 4)
		window = 4;
	while (window & (window - 1))	/* a power of two: slots are found by masking */
		window &= window - 1;

	for (int i = 0; i < nnodes; i++) {
		struct chan_cfg cfg = {
			.me = me,
			.peer = i,
			.session = session,
			.window = window,
			.rto_init_ns = 20000000,
			.rto_min_ns = 2000000,
			.rto_max_ns = 500000000,
			.ack_delay_ns = 5000000,	/* a backstop: acks go out at idle */
			.dead_ns = peer_timeout_ns,
		};
		memcpy(cfg.my_mac, net_mac(), 6);
		chan_init(&peers[i].ch, &cfg, &ops, &peers[i]);
	}
	fabric_register(FP_BARRIER, barrier_handler);
	timer_add_tick_hook(fabric_tick);
	thread_add_idle_hook(fabric_idle);
	if (net_register(ETHERTYPE_FABRIC, fabric_input) < 0)
		return -EBUSY;
	ready = 1;
	fault_format(&faults, desc, sizeof desc);
	printf("fabric: node %d of %d, window %u frames per peer, peer timeout %lu ms, crc32c %s%s%s\n",
	       me, nnodes, window, peer_timeout_ns / 1000000, crc32c_impl(),
	       faults.any ? ", receive faults: " : "", faults.any ? desc : "");
	irqflags_t fl = irq_save();
	hello_fire(NULL);
	irq_restore(fl);
	return 0;
}

int fabric_ready(void)
{
	return ready;
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
	for (int i = 0; i < nnodes; i++)
		if (i != me && (!peers[i].known || !peers[i].knows_me))
			printf(" n%d%s", i, peers[i].known ? " (does not hear us)" : "");
	printf("\n");
	return -ETIMEDOUT;
}

int fabric_register(uint8_t proto, fabric_handler_t fn)
{
	if (proto == 0 || proto >= FP_MAX)
		return -EINVAL;
	if (handlers[proto])
		return -EBUSY;
	handlers[proto] = fn;
	return 0;
}

int fabric_register_raw(uint8_t proto, fabric_handler_t fn)
{
	if (proto == 0 || proto >= FP_MAX)
		return -EINVAL;
	if (raw_handlers[proto])
		return -EBUSY;
	raw_handlers[proto] = fn;
	return 0;
}

/* Wait (interrupts off) until dst is known; 0 or -ETIMEDOUT. */
static int wait_known(struct peer *p)
{
	uint64_t end = cycles() + ns_to_cycles(DISCOVERY_WAIT_NS);

	while (!p->known) {
		if (cycles() >= end)
			return -ETIMEDOUT;
		waitq_wait_timeout(&p->senders, 100000000);
	}
	return 0;
}

int fabric_send_pb(int dst, uint8_t proto, struct pktbuf *pb, size_t len, int flags)
{
	struct peer *p;
	int r;

	if (!ready || dst < 0 || dst >= nnodes || dst == me || proto == 0 || proto >= FP_MAX)
		return -EINVAL;
	if (len > FAB_MTU)
		return -EMSGSIZE;
	p = &peers[dst];
	irqflags_t f = irq_save();
	if (!p->known) {
		if ((flags & FABRIC_NOWAIT) || in_irq) {
			irq_restore(f);
			return -EAGAIN;
		}
		if ((r = wait_known(p)) < 0) {
			irq_restore(f);
			return r;
		}
	}
	if (!(flags & FABRIC_NOWAIT) && !in_irq) {
		if (!p->ch.dead && chan_space(&p->ch) == 0)
			ctr.send_waits++;
		while (!p->ch.dead && chan_space(&p->ch) == 0)
			waitq_wait_timeout(&p->senders, 100000000);
	}
	if (flags & FABRIC_ACKNOW)
		pb->data[FAB_ETH_HLEN + offsetof(struct fab_hdr, flags)] = FAB_F_ACKNOW;
	r = chan_send(&p->ch, pb, proto, len, now_ns());
	after_chan_op(p);
	irq_restore(f);
	sched_maybe_preempt();
	return r;
}

int fabric_send(int dst, uint8_t proto, const void *hdr, size_t hlen, const void *data,
		size_t dlen, int flags)
{
	struct pktbuf *pb;
	int r;

	if (hlen + dlen > FAB_MTU)
		return -EMSGSIZE;
	while ((pb = pkt_get()) == NULL) {
		if ((flags & FABRIC_NOWAIT) || in_irq)
			return -ENOBUFS;
		thread_sleep_ns(200000);
	}
	if (hlen)
		memcpy(fabric_payload(pb), hdr, hlen);
	if (dlen)
		memcpy(fabric_payload(pb) + hlen, data, dlen);
	r = fabric_send_pb(dst, proto, pb, hlen + dlen, flags);
	if (r < 0)
		pkt_put(pb);
	return r;
}

int fabric_raw_send_pb(int dst, uint8_t proto, struct pktbuf *pb, size_t len)
{
	struct fab_hdr h;
	struct peer *p;
	int r;

	if (!ready || dst < 0 || dst >= nnodes || dst == me || proto == 0 || proto >= FP_MAX)
		return -EINVAL;
	if (len > FAB_MTU)
		return -EMSGSIZE;
	p = &peers[dst];
	if (!p->known)
		return -EAGAIN;
	memset(&h, 0, sizeof h);
	h.type = FAB_RAW;
	h.proto = proto;
	h.flags = FAB_F_NOCRC;
	h.src = (uint16_t)me;
	h.dst = (uint16_t)dst;
	h.session = session;
	h.len = (uint16_t)len;
	pb->len = (uint16_t)fab_build(pb->data, p->mac, net_mac(), &h);
	irqflags_t f = irq_save();
	r = xmit_raw(pb);
	if (r == 0)
		ctr.tx_raw++;
	irq_restore(f);
	return r;
}

int fabric_raw_send(int dst, uint8_t proto, const void *data, size_t len)
{
	struct pktbuf *pb = pkt_get();
	int r;

	if (!pb)
		return -ENOBUFS;
	if (len <= FAB_MTU)
		memcpy(fabric_payload(pb), data, len);
	r = fabric_raw_send_pb(dst, proto, pb, len);
	pkt_put(pb);
	return r;
}

int fabric_can_send(int dst)
{
	if (!ready || dst < 0 || dst >= nnodes || dst == me)
		return 0;
	struct peer *p = &peers[dst];
	return p->known && !p->ch.dead && p->ch.snd_nxt - p->ch.snd_una < p->ch.sndq &&
	       pkt_free_count() > 0;
}

int fabric_flush(int dst, uint64_t timeout_ns)
{
	struct peer *p;
	uint64_t end = cycles() + ns_to_cycles(timeout_ns);
	int r = 0;

	if (!ready || dst < 0 || dst >= nnodes || dst == me)
		return -EINVAL;
	p = &peers[dst];
	irqflags_t f = irq_save();
	while (!p->ch.dead && chan_outstanding(&p->ch) > 0) {
		if (cycles() >= end) {
			r = -ETIMEDOUT;
			break;
		}
		waitq_wait_timeout(&p->senders, 50000000);
	}
	if (p->ch.dead)
		r = -EHOSTDOWN;
	irq_restore(f);
	return r;
}

int fabric_shutdown(uint64_t timeout_ns, uint64_t linger_ns)
{
	uint64_t end = cycles() + ns_to_cycles(timeout_ns);
	int left = 0;

	if (!ready)
		return 0;
	for (int i = 0; i < nnodes; i++) {
		uint64_t now = cycles();
		if (i == me || peers[i].ch.dead || !chan_outstanding(&peers[i].ch))
			continue;
		if (now >= end || fabric_flush(i, cycles_to_ns(end - now)) < 0)
			left++;
	}
	thread_sleep_ns(linger_ns);
	if (left)
		printf("fabric: %d peer(s) did not acknowledge everything before exit\n", left);
	return left;
}

/* The kernel's protocols have registered: deliver what waited for them. */
static int fabric_start(void)
{
	if (!ready)
		return -ENODEV;
	started = 1;
	fabric_resume();
	return 0;
}

/* Nothing this node sent may be lost because it stopped. */
static void fabric_exit(void)
{
	fabric_shutdown(3000000000ULL, 100000000ULL);
}

INIT_HOOK(INIT_FABRIC, fabric, fabric_init);
INIT_HOOK(INIT_START, fabric_start, fabric_start);
EXIT_HOOK(fabric, fabric_exit);

void fabric_resume(void)
{
	irqflags_t f = irq_save();

	for (int i = 0; i < nnodes; i++) {
		if (i != me && peers[i].ch.blocked) {
			chan_resume(&peers[i].ch, now_ns());
			after_chan_op(&peers[i]);
		}
	}
	irq_restore(f);
	sched_maybe_preempt();
}

int fabric_peer_dead(int dst)
{
	return dst >= 0 && dst < nnodes && dst != me && peers[dst].ch.dead;
}

uint16_t fabric_session(void)
{
	return session;
}

const uint8_t *fabric_peer_mac(int dst)
{
	if (dst == me)
		return net_mac();
	return dst >= 0 && dst < nnodes && peers[dst].known ? peers[dst].mac : NULL;
}

void fabric_counters(struct fabric_counters *out)
{
	irqflags_t f = irq_save();

	*out = ctr;
	for (int i = 0; i < nnodes; i++) {
		const struct chan_stats *s = &peers[i].ch.stats;
		if (i == me)
			continue;
		out->tx_data += s->tx_data;
		out->retransmits += s->tx_retx_timeout + s->tx_retx_sack;
		out->tx_acks += s->tx_ack;
		out->rx_data += s->rx_data;
		out->rx_dup += s->rx_dup;
		out->rx_ooo += s->rx_ooo;
		out->delivered += s->delivered;
		out->busy += s->busy_refusals;
	}
	irq_restore(f);
}

void fabric_print_stats(void)
{
	struct fabric_counters c;

	if (!ready)
		return;
	fabric_counters(&c);
	printf("fabric: rx frames %lu, data %lu, delivered %lu, dup %lu, out-of-order %lu, busy %lu\n",
	       c.rx_frames, c.rx_data, c.delivered, c.rx_dup, c.rx_ooo, c.busy);
	printf("fabric: tx data %lu, retransmits %lu, acks %lu, raw tx %lu rx %lu, tx failed %lu, "
	       "sender waits for window %lu\n",
	       c.tx_data, c.retransmits, c.tx_acks, c.tx_raw, c.rx_raw, c.tx_failed, c.send_waits);
	printf("fabric: rejected:");
	for (int e = 1; e < FAB_NERR; e++)
		printf(" %s %lu", fab_err_names[e], c.rx_rejected[e]);
	printf(", stale session %lu, foreign mac %lu, unknown proto %lu, from dead peer %lu\n",
	       c.rx_stale_session, c.rx_foreign_mac, c.rx_unknown_proto, c.rx_dead_peer);
	if (faults.any)
		printf("fabric: injected drop %lu dup %lu reorder %lu corrupt %lu\n", c.fault_drop,
		       c.fault_dup, c.fault_reorder, c.fault_corrupt);
	for (int i = 0; i < nnodes; i++) {
		const struct chan *ch = &peers[i].ch;
		if (i == me)
			continue;
		printf("fabric: peer n%d%s srtt %lu us rto %lu us, tx %lu retx %lu+%lu (timeout+sack), "
		       "rx %lu dup %lu ooo %lu outside %lu\n",
		       i, ch->dead ? " DEAD" : "", ch->srtt / 1000, ch->rto / 1000, ch->stats.tx_data,
		       ch->stats.tx_retx_timeout, ch->stats.tx_retx_sack, ch->stats.rx_data,
		       ch->stats.rx_dup, ch->stats.rx_ooo, ch->stats.rx_outside_window);
	}
}
