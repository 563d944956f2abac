/*
 * The fabric's kernel side, what every file of it uses: the state (fab),
 * the channels' link to the NIC and to the protocols' handlers, the step
 * after a channel operation, the protocol table, the peers, the key and
 * the counters.  Above it: start-up (start.c), discovery, the receive
 * path (rx.c), fault injection, sending; internal.h is what they share.
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

#include "kernel/console.h"
#include "kernel/crc.h"
#include "kernel/incarnation.h"
#include "kernel/init.h"
#include "kernel/node.h"
#include "kernel/panic.h"
#include "kernel/sync.h"
#include "kernel/thread.h"
#include "kernel/timer.h"
#include "kernel/trace.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"
#include "net/fabric/fault.h"
#include "net/fabric/internal.h"
#include "net/net.h"

TRACE_STAGE(TS_FABRIC_TX, "fabric_tx");
TRACE_STAGE(TS_FABRIC_RX, "fabric_rx");

struct fabric fab = { .peer_timeout_ns = 10000000000ULL };

int fab_cluster_key(struct sipkey *k)
{
	if (!fab.key_state) {
		const char *text = arg_str("key", NULL);
		fab.key_state = text ? 2 : 1;
		if (text) {
			uint64_t t0 = now_ns();
			if (fab_key_from_text(&fab.key, text, arg_str("cluster", NULL)) < 0)
				panic("fabric: no memory to derive the cluster key (scrypt, %d KiB)",
				      FAB_KEY_N * 128 * FAB_KEY_R / 1024);
			fab.key_ns = now_ns() - t0;
			arg_forget("key");	/* the text is needed no more */
		}
	}
	if (fab.key_state == 2)
		*k = fab.key;
	return fab.key_state == 2;
}

/* --- the channels' link -------------------------------------------------------- */

int fab_xmit(struct pktbuf *pb)
{
	int r;

	trace_point(TS_FABRIC_TX);
	r = net_transmit(pb);

	if (r < 0)
		fab.ctr.tx_failed++;
	return r;
}

static int chan_xmit(void *ctx, struct pktbuf *pb)
{
	struct peer *p = ctx;
	int r = fab_xmit(pb);

	/*
	 * A ring full at a frame pinned in it (channel.h, cfg.by_ref): that
	 * frame copied out and its slot let go, and this one tried again; so
	 * an acknowledgement goes even while both ends' rings hold only
	 * frames waiting for one.  Otherwise a full TX ring is a loss to the
	 * channel: it sends the frame again.
	 */
	if (__builtin_expect(r == -EAGAIN, 0) && chan_unpin_oldest(&p->ch))
		r = fab_xmit(pb);
	return r;
}

static struct pktbuf *chan_alloc(void *ctx, size_t len)
{
	(void)ctx;
	return pkt_get_len(len);
}

/*
 * A message for a protocol with no handler: kept while its handler may
 * still come, else refused as no one's.  A kernel protocol registers
 * before INIT_START: until then the channel holds it (-EBUSY: offered
 * again every tick, and at once when a handler registers).  An app
 * registers its own once it runs, after a peer may have sent to them:
 * those are parked (park.c) from their arrival, before the start too,
 * until FAB_APP_GRACE_NS after it, the sender's other protocols going on
 * meanwhile.  Parked, not held in the channel: a sender that reboots
 * resets the channel, and the park keeps what it acknowledged.
 */
static __attribute__((noinline)) int deliver_unhandled(int src, uint8_t proto, const uint8_t *p,
							size_t len, struct pktbuf *pb)
{
	if (proto >= FP_APP_FIRST && proto < FP_MAX &&
	    (!fab.started || now_ns() < fab.app_grace_end || fab_park_has(proto)))
		return fab_park(src, proto, p, len, pb);
	if (proto < FP_MAX && !fab.started)
		return -EBUSY;
	fab.ctr.rx_unknown_proto++;
	return 0;		/* consumed: nobody will ever want it */
}

static int chan_deliver(void *ctx, int src, uint8_t proto, const uint8_t *p, size_t len,
			struct pktbuf *pb)
{
	(void)ctx;
	if (__builtin_expect(proto < FP_MAX && fab.handlers[proto] != NULL, 1))
		return fab.handlers[proto](src, p, len, pb);
	return deliver_unhandled(src, proto, p, len, pb);
}

/* Frames sent in place and kept in their slots (channel.h, cfg.by_ref): acknowledged, the slots go. */
static void chan_unpin(void *ctx, const uint8_t peer_mac[6], unsigned n)
{
	(void)ctx;
	net_tx_unpin(peer_mac, n);
}

const struct chan_ops fab_chan_ops = { chan_xmit, chan_deliver, chan_alloc, chan_unpin };

void fab_after_chan_op_slow(struct peer *p)
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
			"messages to it now fail\n", (int)(p - fab.peers), fab.peer_timeout_ns / 1000000);
		waitq_wake_all(&p->senders);
	}
	if (p->senders.head && (chan_space(&p->ch) > 0 || p->ch.dead || chan_outstanding(&p->ch) == 0))
		waitq_wake_all(&p->senders);
}

/* --- protocols and peers --------------------------------------------------- */

int fabric_ready(void)
{
	return fab.ready;
}

int fabric_register(uint8_t proto, fabric_handler_t fn)
{
	if (proto == 0 || proto >= FP_MAX)
		return -EINVAL;
	irqflags_t f = irq_save();
	/* Taken, or taken and still handing over what was parked for it (park.c): -EBUSY. */
	int r = fab.handlers[proto] ? -EBUSY : fab_park_register(proto, fn, fab_park_late());
	irq_restore(f);
	if (r < 0)
		return r;
	/* What waited for it in a channel goes now. */
	if (fab.started)
		fabric_resume();
	return 0;
}

int fabric_register_in_place(uint8_t proto)
{
	if (proto == 0 || proto >= FP_MAX)
		return -EINVAL;
	fab.in_place[proto] = 1;
	return 0;
}

int fabric_rx_shared(void)
{
	return fab.rx_shared;
}

int fabric_register_raw(uint8_t proto, fabric_handler_t fn)
{
	if (proto == 0 || proto >= FP_MAX)
		return -EINVAL;
	if (fab.raw_handlers[proto])
		return -EBUSY;
	fab.raw_handlers[proto] = fn;
	return 0;
}

void fabric_resume(void)
{
	irqflags_t f = irq_save();

	for (int i = 0; i < fab.nnodes; i++) {
		if (i != fab.me && fab.peers[i].ch.blocked) {
			chan_resume(&fab.peers[i].ch, now_ns());
			fab_after_chan_op(&fab.peers[i]);
		}
	}
	irq_restore(f);
	sched_maybe_preempt();
}

int fabric_peer_dead(int dst)
{
	return dst >= 0 && dst < fab.nnodes && dst != fab.me && fab.peers[dst].ch.dead;
}

uint16_t fabric_tag(int dst)
{
	return dst >= 0 && dst < fab.nnodes && dst != fab.me ? fab.peers[dst].ch.cfg.session : 0;
}

void (*fab_reset_hooks[FABRIC_RESET_HOOKS])(int node);

int fabric_on_peer_reset(void (*fn)(int node))
{
	for (int i = 0; i < FABRIC_RESET_HOOKS; i++) {
		if (!fab_reset_hooks[i]) {
			fab_reset_hooks[i] = fn;
			return 0;
		}
	}
	return -ENOSPC;
}

int fabric_keyed(void)
{
	return fab.keyed;
}

int fabric_key_tag(const char *domain, const void *msg, size_t n, uint64_t *tag)
{
	struct siphash st;

	if (!fab.keyed)
		return -ENOENT;
	siphash_init(&st, &fab.key);
	siphash_update(&st, domain, strlen(domain) + 1);
	siphash_update(&st, msg, n);
	*tag = siphash_final(&st);
	return 0;
}

uint64_t fabric_incarnation(void)
{
	return fab.inc;
}

uint32_t fabric_peer_epoch(int dst)
{
	return dst >= 0 && dst < fab.nnodes && dst != fab.me ? fab.peers[dst].m.epoch : 0;
}

const uint8_t *fabric_peer_mac(int dst)
{
	if (dst == fab.me)
		return net_mac();
	return dst >= 0 && dst < fab.nnodes && fab.peers[dst].known ? fab.peers[dst].mac : NULL;
}

/* --- counters -------------------------------------------------------------- */

void fabric_counters(struct fabric_counters *out)
{
	irqflags_t f = irq_save();

	*out = fab.ctr;
	for (int i = 0; i < fab.nnodes; i++) {
		const struct chan_stats *s = &fab.peers[i].ch.stats;
		if (i == fab.me)
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

