/*
 * The sending half of the fabric: reliable messages (blocking while a
 * peer's window is full, or not), raw frames, and waiting until what was
 * sent is acknowledged.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kernel/sync.h"
#include "kernel/thread.h"
#include "kernel/trap.h"
#include "kernel/trace.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"
#include "net/fabric/internal.h"
#include "net/net.h"
#include "net/pktshare.h"

#define DISCOVERY_WAIT_NS 60000000000ULL	/* a send waits this long for its peer */

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

/* A message longer than FAB_MTU to dst (checked): 0 if the pair's frames carry it, else -EMSGSIZE. */
static __attribute__((noinline)) int check_long(int dst, size_t len)
{
	return len > fab.peers[dst].ch.cfg.mtu ? -EMSGSIZE : 0;
}

/* Can anything be sent to dst on proto, len bytes?  0, -EINVAL, -EMSGSIZE. */
static int check_send(int dst, uint8_t proto, size_t len)
{
	if (!fab.ready || dst < 0 || dst >= fab.nnodes || dst == fab.me || proto == 0 || proto >= FP_MAX)
		return -EINVAL;
	return __builtin_expect(len > FAB_MTU, 0) ? check_long(dst, len) : 0;
}

size_t fabric_mtu(int dst)
{
	if (!fab.ready || dst < 0 || dst >= fab.nnodes || dst == fab.me)
		return FAB_MTU;
	return fab.peers[dst].ch.cfg.mtu;
}

/* fabric_send_pb to dst's binding epoch only (0: any; see fabric_send_at). */
static int send_pb_at(int dst, uint32_t epoch, uint8_t proto, struct pktbuf *pb, size_t len,
		      int flags)
{
	struct peer *p;
	int r;

	if ((r = check_send(dst, proto, len)) < 0)
		return r;
	p = &fab.peers[dst];
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
	if (!epoch)
		epoch = p->m.epoch;
	if (!(flags & FABRIC_NOWAIT) && !in_irq) {
		if (!p->ch.dead && chan_space(&p->ch) == 0)
			fab.ctr.send_waits++;
		while (!p->ch.dead && chan_space(&p->ch) == 0 && p->m.epoch == epoch)
			waitq_wait_timeout(&p->senders, 100000000);
	}
	/*
	 * Queued frames are charged to the send queues' share of the pool, so
	 * that senders never take what the receive rings refill from: beyond
	 * it a blocking sender waits (for acknowledgements to any peer), a
	 * non-blocking one is told -EAGAIN as for a full window.
	 */
	while (!pb->charged && pkt_charge(pb, fab.pkt_tx) < 0) {
		if ((flags & FABRIC_NOWAIT) || in_irq) {
			fab.ctr.send_no_share++;
			irq_restore(f);
			return -EAGAIN;
		}
		fab.ctr.send_no_share++;
		waitq_wait_timeout(&p->senders, 1000000);
		if (p->m.epoch != epoch || p->ch.dead)
			break;
	}
	/* dst rebooted while we waited: this message was for the old incarnation. */
	if (p->m.epoch != epoch) {
		irq_restore(f);
		return -ECONNRESET;
	}
	/* The channel copies this flag into the header it builds. */
	r = chan_send(&p->ch, pb, proto, len, (flags & FABRIC_ACKNOW) != 0, now_ns());
	fab_after_chan_op(p);
	irq_restore(f);
	sched_maybe_preempt();
	return r;
}

int fabric_send_pb(int dst, uint8_t proto, struct pktbuf *pb, size_t len, int flags)
{
	return send_pb_at(dst, 0, proto, pb, len, flags);
}

static struct pktbuf *tx_get(size_t len);

/* How long a blocking multicast waits for a member whose window is full (fabric_mcast). */
#define FAB_MCAST_WAIT_NS 200000000ULL

__attribute__((cold)) int fabric_mcast(uint64_t group, uint8_t proto, const void *data, size_t len, int flags,
				       uint64_t *rest_out)
{
	struct fab_mcast_member m[FAB_MAX_NODES];
	uint64_t shared = 0;
	struct pktbuf *pb = NULL;
	unsigned n = 0, k;

	*rest_out = group;
	if (!fab.ready || proto == 0 || proto >= FP_MAX || (group >> fab.me & 1) ||
	    (fab.nnodes < 64 && group >> fab.nnodes))
		return -EINVAL;
	/*
	 * The members whose channels take it now, in one frame; unkeyed only
	 * (a tag is a pair's: a frame for a group would need one per member).
	 * A blocking sender waits a while for a member whose window is full
	 * (its acknowledgements are on their way) before it sends that one
	 * its copy alone.
	 */
	irqflags_t f = irq_save();
	uint64_t end = now_ns() + FAB_MCAST_WAIT_NS;
	for (;;) {
		uint64_t want = 0;
		shared = 0;
		for (int i = 0; i < fab.nnodes && !fab.keyed; i++) {
			struct peer *p = &fab.peers[i];
			if (!(group >> i & 1) || !p->known || p->ch.dead || len > p->ch.cfg.mtu)
				continue;
			want |= 1ULL << i;
			if (chan_can_send_shared(&p->ch))
				shared |= 1ULL << i;
		}
		uint64_t now = now_ns();
		if (shared == want || (flags & FABRIC_NOWAIT) || in_irq || now >= end)
			break;
		struct peer *late = &fab.peers[__builtin_ctzll(want & ~shared)];
		waitq_wait_timeout(&late->senders, end - now < 10000000 ? end - now : 10000000);
	}
	if ((k = (unsigned)__builtin_popcountll(shared)) >= 2) {
		pb = tx_get(FAB_MCAST_MSG_OFF(k) + len);
		if (pb && pkt_charge(pb, fab.pkt_tx) < 0) {
			pkt_put(pb);
			pb = NULL;
		}
	}
	if (pb) {
		uint8_t *msg = pb->data + FAB_MCAST_MSG_OFF(k);
		uint64_t now = now_ns();
		memcpy(msg, data, len);
		for (int i = 0; i < fab.nnodes; i++) {
			if (!(shared >> i & 1))
				continue;
			chan_send_shared(&fab.peers[i].ch, pb, msg, proto, len, &m[n++], now);
		}
		pb->len = (uint16_t)fab_build_mcast(pb->data, net_mac(), shared, fab.me, proto, m, n, len);
		fab.ctr.tx_mcast++;
		fab.ctr.tx_mcast_members += n;
		fab_xmit(pb);		/* refused by the NIC: each channel sends it again alone */
		pkt_put(pb);
		for (int i = 0; i < fab.nnodes; i++)
			if (shared >> i & 1)
				fab_after_chan_op(&fab.peers[i]);
		*rest_out = group & ~shared;
	}
	irq_restore(f);
	/* The others: the caller's, each as it can take it (a stop at one holds that one only). */
	fab.ctr.tx_mcast_unicast += (uint64_t)__builtin_popcountll(*rest_out);
	return 0;
}

int fabric_send(int dst, uint8_t proto, const void *hdr, size_t hlen, const void *data,
		size_t dlen, int flags)
{
	return fabric_send_at(dst, 0, proto, hdr, hlen, data, dlen, flags);
}

/*
 * A message in the NIC's transmit slot (net_tx_begin), on a lossless link
 * with credit and nothing queued (chan_can_send_in_place): tx->frame, or
 * NULL if it cannot go so now.  Interrupts off (the caller's tx->irq).
 *
 * Never with a key.  The slot is shared memory: whatever else maps it
 * (another guest on the same ivshmem server, a process with the memory)
 * can change the payload between the caller's writing it and the tag's
 * computing, and the tag would then vouch for bytes this node never sent.
 * A keyed frame is built and sealed in a buffer of this node's own, and
 * the NIC copies it, sealed, into the slot; the receiver checks the tag on
 * a copy of its own (rx.c), so a change made in the ring fails there.
 */
static uint8_t *slot_begin(struct fabric_tx *tx)
{
	struct peer *p;

	if (fab.keyed || check_send(tx->dst, tx->proto, tx->len) < 0)
		return NULL;
	p = &fab.peers[tx->dst];
	if (!p->known || (tx->epoch && p->m.epoch != tx->epoch) || !chan_can_send_in_place(&p->ch))
		return NULL;
	/* No room (the ring full, maybe at a frame pinned in it): the message goes in a buffer (chan_xmit). */
	return net_tx_begin(p->mac, CHAN_PAYLOAD_OFF + tx->len);
}

/* A message longer than FAB_MTU: too long for dst (or no such dst)?  Apart: the short ones' path stays lean. */
static __attribute__((noinline)) int tx_too_long(int dst, size_t len)
{
	return !fab.ready || dst < 0 || dst >= fab.nnodes || dst == fab.me || check_long(dst, len) < 0;
}

/*
 * Large buffers a sender leaves to the receive path: the channel's copy of
 * a frame that came out of order, a frame copied out of the ring.  A node
 * whose queued sends took every large buffer could take no frame of its
 * peer's, so no acknowledgement, and its sends would never be freed: both
 * nodes of a pair stall (make soak: mad-test on shm with 64 KiB frames
 * and faults, node 1 retrying one frame 80 million times for want of a
 * buffer while its 41 queued frames held them all).  So a frame to be
 * kept leaves half of the large pool to the receive path, whoever sends
 * it (fabric_pb_get): four shm nodes each sending the hybrid deposit's
 * blocks of 256 KiB to the other three, their buffers taken with no
 * reserve, stalled so in 5 runs of 6 (mad-test-4-cell-faults-shm); with
 * half left, in none of 6.
 */
static struct pktbuf *tx_get(size_t len)
{
	if (len > PKT_MAX_FRAME && pkt_free_len(len) <= pkt_total_len(len) / 2)
		return NULL;
	return pkt_get_len(len);
}

struct pktbuf *fabric_pb_get(size_t len)
{
	return tx_get(CHAN_PAYLOAD_OFF + len + FAB_TRAILER_LEN);
}

/* fabric_tx_begin's buffer when the NIC's slot cannot take the message: 0 or -ENOBUFS. */
static __attribute__((noinline)) int tx_buffer(struct fabric_tx *tx)
{
	while ((tx->pb = tx_get(CHAN_PAYLOAD_OFF + tx->len + FAB_TRAILER_LEN)) == NULL) {
		if ((tx->flags & FABRIC_NOWAIT) || in_irq)
			return -ENOBUFS;
		thread_sleep_ns(200000);
	}
	tx->payload = fabric_payload(tx->pb);
	return 0;
}

int fabric_tx_begin(struct fabric_tx *tx, int dst, uint32_t epoch, uint8_t proto, size_t len,
		    int flags)
{
	if (__builtin_expect(len > FAB_MTU, 0) && tx_too_long(dst, len))
		return -EMSGSIZE;
	tx->dst = dst;
	tx->epoch = epoch;
	tx->proto = proto;
	tx->len = len;
	tx->flags = flags;
	tx->pb = NULL;
	tx->irq = irq_save();
	if ((tx->frame = slot_begin(tx)) != NULL) {
		tx->payload = tx->frame + CHAN_PAYLOAD_OFF;
		return 0;		/* interrupts stay off until fabric_tx_end */
	}
	irq_restore(tx->irq);
	return tx_buffer(tx);
}

/* fabric_tx_end of a message in a buffer: apart, so that the slot's path stays short where it is inlined. */
static __attribute__((noinline)) int tx_end_buffer(struct fabric_tx *tx)
{
	int r = send_pb_at(tx->dst, tx->epoch, tx->proto, tx->pb, tx->len, tx->flags);

	if (r < 0)
		pkt_put(tx->pb);
	return r;
}

int fabric_tx_end(struct fabric_tx *tx)
{
	if (!tx->pb) {
		struct peer *p = &fab.peers[tx->dst];
		int pin = chan_pins(&p->ch, tx->len);
		size_t n = chan_send_in_place(&p->ch, tx->frame, tx->proto, tx->len,
					      (tx->flags & FABRIC_ACKNOW) != 0, now_ns());
		trace_point(TS_FABRIC_TX);
		if (__builtin_expect(pin, 0))
			net_tx_commit_pinned(n);
		else
			net_tx_commit(n);
		irq_restore(tx->irq);
		return 0;
	}
	return tx_end_buffer(tx);
}

void fabric_tx_drop(struct fabric_tx *tx)
{
	if (tx->pb)
		pkt_put(tx->pb);
	else
		irq_restore(tx->irq);	/* the slot was never published */
}

int fabric_send_at(int dst, uint32_t epoch, uint8_t proto, const void *hdr, size_t hlen,
		   const void *data, size_t dlen, int flags)
{
	struct fabric_tx tx;
	int r;

	if ((r = fabric_tx_begin(&tx, dst, epoch, proto, hlen + dlen, flags)) < 0)
		return r;
	if (hlen)
		memcpy(tx.payload, hdr, hlen);
	if (dlen)
		memcpy(tx.payload + hlen, data, dlen);
	return fabric_tx_end(&tx);
}

/*
 * The headers (and, keyed, the trailer) of a raw frame to p around the
 * len payload bytes already at frame + CHAN_PAYLOAD_OFF; its length.
 * Interrupts off: a keyed frame's counter is the channel's too.
 */
static inline size_t build_raw(uint8_t *frame, struct peer *p, uint8_t proto, size_t len)
{
	uint16_t len16 = (uint16_t)len;

	if (fab.keyed) {
		struct fab_hdr h = { .type = FAB_RAW, .proto = proto, .flags = FAB_F_NOCRC,
				     .src = (uint16_t)fab.me, .dst = (uint16_t)p->ch.cfg.peer,
				     .session = p->ch.cfg.session, .len = len16 };
		return fab_build_sealed(frame, p->mac, net_mac(), &h, &p->tx_seal);
	}
	/* The channel's headers as a raw frame: no sequence, no acknowledgement, no CRC. */
	memcpy(frame, chan_template(&p->ch), CHAN_PAYLOAD_OFF);
	frame[FAB_ETH_HLEN + offsetof(struct fab_hdr, type)] = FAB_RAW;
	frame[FAB_ETH_HLEN + offsetof(struct fab_hdr, proto)] = proto;
	memcpy(frame + FAB_ETH_HLEN + offsetof(struct fab_hdr, len), &len16, 2);
	return CHAN_PAYLOAD_OFF + len;
}

/* Can a raw frame of len bytes on proto go to dst now?  0, check_send's error, or -EAGAIN. */
static int raw_check(int dst, uint8_t proto, size_t len)
{
	int r = check_send(dst, proto, len);

	return r < 0 ? r : fab.peers[dst].known ? 0 : -EAGAIN;
}

/* A raw frame in pb to p (checked): headers, then the NIC. */
static int raw_xmit_pb(struct peer *p, uint8_t proto, struct pktbuf *pb, size_t len)
{
	irqflags_t f = irq_save();
	int r;

	pb->len = (uint16_t)build_raw(pb->data, p, proto, len);
	if ((r = fab_xmit(pb)) == 0)
		fab.ctr.tx_raw++;
	irq_restore(f);
	return r;
}

int fabric_raw_send_pb(int dst, uint8_t proto, struct pktbuf *pb, size_t len)
{
	int r = raw_check(dst, proto, len);

	return r < 0 ? r : raw_xmit_pb(&fab.peers[dst], proto, pb, len);
}

/* A raw frame of hdr then data: fabric_raw_send and fabric_raw_sendv. */
static inline int raw_send(int dst, uint8_t proto, const void *hdr, size_t hlen, const void *data, size_t dlen)
{
	size_t len = hlen + dlen;
	struct pktbuf *pb;
	struct peer *p;
	uint8_t *f;
	int r;

	if ((r = raw_check(dst, proto, len)) < 0)
		return r;
	p = &fab.peers[dst];
	/* Built in the NIC's transmit slot where it has one (the shared-memory link), unkeyed (slot_begin). */
	irqflags_t fl = irq_save();
	if (!fab.keyed && (f = net_tx_begin(p->mac, CHAN_PAYLOAD_OFF + len))) {
		memcpy(f + CHAN_PAYLOAD_OFF, hdr, hlen);
		if (dlen)
			memcpy(f + CHAN_PAYLOAD_OFF + hlen, data, dlen);
		size_t n = build_raw(f, p, proto, len);
		trace_point(TS_FABRIC_TX);
		net_tx_commit(n);
		fab.ctr.tx_raw++;
		irq_restore(fl);
		return 0;
	}
	irq_restore(fl);
	if (!(pb = pkt_get_len(CHAN_PAYLOAD_OFF + len + FAB_TRAILER_LEN)))
		return -ENOBUFS;
	memcpy(fabric_payload(pb), hdr, hlen);
	if (dlen)
		memcpy(fabric_payload(pb) + hlen, data, dlen);
	r = raw_xmit_pb(p, proto, pb, len);
	pkt_put(pb);
	return r;
}

int fabric_raw_send(int dst, uint8_t proto, const void *data, size_t len)
{
	return raw_send(dst, proto, data, len, NULL, 0);
}

int fabric_raw_sendv(int dst, uint8_t proto, const void *hdr, size_t hlen, const void *data, size_t dlen)
{
	return raw_send(dst, proto, hdr, hlen, data, dlen);
}

int fabric_can_send(int dst)
{
	if (!fab.ready || dst < 0 || dst >= fab.nnodes || dst == fab.me)
		return 0;
	struct peer *p = &fab.peers[dst];
	return p->known && !p->ch.dead && p->ch.snd_nxt - p->ch.snd_una < p->ch.sndq &&
	       pkt_free_count() > 0;
}

int fabric_flush(int dst, uint64_t timeout_ns)
{
	struct peer *p;
	uint64_t end = cycles() + ns_to_cycles(timeout_ns);
	int r = 0;

	if (!fab.ready || dst < 0 || dst >= fab.nnodes || dst == fab.me)
		return -EINVAL;
	p = &fab.peers[dst];
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

	if (!fab.ready)
		return 0;
	for (int i = 0; i < fab.nnodes; i++) {
		uint64_t now = cycles();
		if (i == fab.me || fab.peers[i].ch.dead || !chan_outstanding(&fab.peers[i].ch))
			continue;
		if (now >= end || fabric_flush(i, cycles_to_ns(end - now)) < 0)
			left++;
	}
	thread_sleep_ns(linger_ns);
	if (left)
		printf("fabric: %d peer(s) did not acknowledge everything before exit\n", left);
	return left;
}
