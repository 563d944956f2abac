/*
 * The fabric's receive path (NIC interrupt, interrupts off): validate the
 * frame, check that it comes from a node bound by the handshake
 * (member.h), from its bound MAC and with the tag of the pair's current
 * incarnations, and with a cluster key that its tag is right and that
 * it was not taken before (wire.h), then hand HELLOs to discovery, raw frames to their protocol's
 * raw handler and everything else to the sender's channel.  Every frame
 * that fails a check is counted and dropped.
 *
 * A frame arrives in a pktbuf (a NIC whose ring holds pool buffers) or in
 * the NIC's own memory (the shared-memory link, netdev_input_frame): the
 * header is parsed once, where the frame lies, and a frame is copied into
 * a pktbuf only where something keeps it (the channel's window, a
 * protocol that refused it for now).  A long frame of the shared-memory
 * link may lie in the ring itself, which other nodes write
 * (net_set_rx_shared, unkeyed): its header is copied and parsed once, and
 * only a data frame for a protocol that takes it there is taken there
 * (receive_shared); every other is copied first, whole.
 */
#include <errno.h>
#include <string.h>

#include "kernel/trace.h"
#include "kernel/tsc.h"
#include "net/fabric/internal.h"

/* Frames in place need at most this many pktbufs before they are taken (channel.c). */
#define RX_RESERVE 4

/* Is the 6-byte MAC at a the same as at b?  (Two loads each, no call.) */
static inline int mac_eq(const uint8_t *a, const uint8_t *b)
{
	uint32_t a0, b0;
	uint16_t a1, b1;

	memcpy(&a0, a, 4);
	memcpy(&b0, b, 4);
	memcpy(&a1, a + 4, 2);
	memcpy(&b1, b + 4, 2);
	return a0 == b0 && a1 == b1;
}

/*
 * A HELLO, under the cluster key when there is one: only a holder of the
 * key names itself a node.  Its tag is checked against p's HELLO window
 * (RFC 4303's, as for the pair's frames): the caller drops a HELLO of the
 * bound incarnation seen before (fab_hello_input), so that a recorded one
 * replayed draws no answer.  Off the data path: cold.
 */
static __attribute__((cold, noinline)) enum fab_err hello_receive(const uint8_t *frame, const struct fab_hdr *h,
								   const uint8_t *payload, struct peer *p)
{
	uint64_t ctr = 0;
	enum fab_err e;
	int seen = 0;

	if (fab.keyed) {
		if ((e = fab_unseal(&p->hello_rx, frame, h, 0)) != FAB_OK)
			return e;
		seen = fab_unseal_seen(&p->hello_rx, frame, h, &ctr);
	}
	fab_hello_input(h, payload, frame + 6, ctr, seen);
	return FAB_OK;
}

/*
 * A multicast frame (wire.h, FAB_MCAST): this node's entry and the message
 * are the next DATA frame of its channel with the sender, and go there as
 * such: rebuilt as that frame (its header checked already, rx_pre) in
 * memory of this node's own, and received as any frame, with every check
 * a DATA frame takes.  The channel copies what it keeps of it.
 */
static const struct fab_hdr *rx_pre;
static uint8_t mcast_copy[FAB_FRAME_LIMIT];

static __attribute__((cold, noinline)) int mcast_receive(struct pktbuf *pb)
{
	const uint8_t *frame = pb->data;
	size_t len = pb->len;
	const uint8_t *msg;
	struct fab_hdr h;
	enum fab_err e;
	int r;

	if (fab.keyed)
		e = FAB_E_KEY;		/* keyed nodes take only frames of their pairs */
	else
		e = fab_parse_mcast(frame, len, fab.me, fab.nnodes, &h, &msg);
	if (e != FAB_OK) {
		fab.ctr.rx_rejected[e]++;
		pkt_put(pb);
		return 0;
	}
	fab.ctr.rx_mcast++;
	memcpy(mcast_copy, frame, FAB_ETH_HLEN);
	memcpy(mcast_copy + FAB_ETH_HLEN, &h, sizeof h);
	memcpy(mcast_copy + FAB_ETH_HLEN + FAB_HDR_LEN, msg, h.len);
	pkt_put(pb);		/* the frame is copied: its buffer goes */
	rx_pre = &h;
	r = fab_receive(mcast_copy, FAB_ETH_HLEN + FAB_HDR_LEN + h.len, NULL);
	return r < 0 ? 0 : r;	/* no buffer to keep it: lost here, sent again alone */
}

/* rx_pre: a header receive_shared (or mcast_receive) checked already: fab_receive takes it instead of the frame's. */

int fab_receive(uint8_t *frame, size_t len, struct pktbuf *pb)
{
	struct fab_hdr h;
	const uint8_t *payload;
	enum fab_err e;
	struct peer *p;
	uint64_t ctr = 0;
	int r = 0;

	trace_point(TS_FABRIC_RX);
	if (__builtin_expect(rx_pre != NULL, 0)) {
		h = *rx_pre;
		rx_pre = NULL;
		payload = frame + FAB_ETH_HLEN + FAB_HDR_LEN;
	} else {
		e = fab_parse_link(frame, len, fab.me, fab.nnodes, fab.lossless, fab.keyed, &h, &payload);
		if (e != FAB_OK) {
			/* A type no unicast frame has: a group's frame is one (off the path of the others). */
			goto reject;
		}
	}
	p = &fab.peers[h.src];
	if (h.type == FAB_HELLO) {
		if ((e = hello_receive(frame, &h, payload, p)) != FAB_OK)
			goto reject;
		goto done;
	}
	if (!p->known) {
		/* Only the handshake binds a node, never a frame that names it. */
		fab.ctr.rx_unbound++;
		goto done;
	} else if (p->rx_tag != h.session) {
		/* A frame of the pair's channel before one side rebooted, or a forgery. */
		fab.ctr.rx_stale_session++;
		goto done;
	} else if (!mac_eq(p->mac, frame + 6)) {
		fab.ctr.rx_foreign_mac++;
		goto done;
	}
	/*
	 * Keyed: the tag under the pair's key (its incarnations and ours), then
	 * the replay window.  Checked after the cheap tests above, before any
	 * field reaches the channel or a protocol; the counter is taken once
	 * the frame is (a frame left in the NIC for want of a buffer comes
	 * again).
	 */
	if (fab.keyed && (e = fab_unseal_check(&p->rx_seal, frame, &h, &ctr)) != FAB_OK)
		goto reject;
	/* Without a CRC only from a node that said its link is lossless. */
	if ((h.flags & FAB_F_NOCRC) && h.type != FAB_RAW && !p->lossless) {
		fab.ctr.rx_rejected[FAB_E_FIELD]++;
		goto done;
	}
	if (h.type == FAB_RAW) {
		if (fab.keyed)
			fab_unseal_take(&p->rx_seal, ctr);
		fab.ctr.rx_raw++;
		if (h.proto < FP_MAX && fab.raw_handlers[h.proto])
			fab.raw_handlers[h.proto](h.src, payload, h.len, pb);
		else
			fab.ctr.rx_unknown_proto++;
		goto done;
	}
	if (p->ch.dead) {
		fab.ctr.rx_dead_peer++;
		goto done;
	}
	r = chan_input(&p->ch, &h, payload, pb, now_ns());
	if (r == 0) {
		if (fab.keyed)
			fab_unseal_take(&p->rx_seal, ctr);
		fab_after_chan_op(p);
	}
	return r;
reject:
	fab.ctr.rx_rejected[e]++;
done:
	if (pb)
		pkt_put(pb);
	return 0;
}

void fab_process(struct pktbuf *pb)
{
	fab.ctr.rx_frames++;
	/* The types no pair's frame has: node=auto stations, not yet nodes; a group's frame. */
	if (pb->len > FAB_ETH_HLEN + 1 && pb->data[FAB_ETH_HLEN + 1] >= FAB_AUTO) {
		if (pb->data[FAB_ETH_HLEN + 1] == FAB_AUTO)
			fab_auto_input(pb);
		else
			mcast_receive(pb);
		return;
	}
	if (fab_receive(pb->data, pb->len, pb) < 0)
		pkt_put(pb);	/* the channel keeps buffers it is given: it never asks for one */
}

/* fab_process_frame for the frames that go up in a pktbuf: node=auto stations, fault injection. */
static __attribute__((noinline)) int process_frame_copied(uint8_t *frame, size_t len)
{
	struct pktbuf *pb;

	if (!(pb = pkt_get_len(len)))
		return -ENOBUFS;
	memcpy(pb->data, frame, len);
	pb->len = (uint16_t)len;
	if (fab.inject)
		fab_inject(pb);
	else
		fab_process(pb);
	return 0;
}

/* A frame of the ring, copied into memory of this node's own and received from there. */
static uint8_t rx_copy[FAB_FRAME_LIMIT];

static __attribute__((noinline)) int receive_copy(const uint8_t *frame, size_t len)
{
	fab.ctr.rx_copied++;
	memcpy(rx_copy, frame, len);
	return fab_receive(rx_copy, len, NULL);
}

/*
 * A long frame where it lies in the shared-memory link's ring, which other
 * nodes may write while it is read.  Every check is on a copy of the
 * header; what the checks do not settle here goes to receive_copy, which
 * counts and rejects as for any frame.  The payload goes to its protocol
 * in place only on the stream's fast path (in order, nothing waiting):
 * the channel copies anything else it keeps.
 */
static __attribute__((noinline)) int receive_shared(uint8_t *frame, size_t len)
{
	uint8_t head[FAB_ETH_HLEN + FAB_HDR_LEN];
	struct fab_hdr h;
	int r;

	memcpy(head, frame, sizeof head);
	__asm__ volatile("" ::: "memory");	/* no check below reads the ring again */
	memcpy(&h, head + FAB_ETH_HLEN, sizeof h);
	if (fab.keyed || len > fab.frame_max || !fab_stream_ok(&h, len, fab.me, fab.nnodes, fab.lossless) ||
	    h.type != FAB_DATA || h.proto >= FP_MAX || !fab.in_place[h.proto])
		return receive_copy(frame, len);
	fab.ctr.rx_in_place++;
	fab.rx_shared = 1;
	rx_pre = &h;
	r = fab_receive(frame, len, NULL);
	fab.rx_shared = 0;
	return r;
}

int fab_process_frame(uint8_t *frame, size_t len)
{
	/* What the channel or a protocol may keep of it needs buffers: without them, later. */
	if (pkt_free_count() < RX_RESERVE)
		return -ENOBUFS;
	if (__builtin_expect(fab.inject, 0) ||
	    (len > FAB_ETH_HLEN + 1 && frame[FAB_ETH_HLEN + 1] >= FAB_AUTO))	/* AUTO, MCAST (fab_process) */
		return process_frame_copied(frame, len);
	/* A frame longer than a small buffer, should it be kept: a large buffer for it, or later. */
	if (__builtin_expect(len > PKT_MAX_FRAME, 0) && pkt_free_len(len) < 1)
		return -ENOBUFS;
	fab.ctr.rx_frames++;
	return fab_receive(frame, len, NULL);
}

int fab_process_shared(uint8_t *frame, size_t len)
{
	if (pkt_free_count() < RX_RESERVE)
		return -ENOBUFS;
	if (fab.inject || frame[FAB_ETH_HLEN + 1] >= FAB_AUTO)	/* AUTO, MCAST (fab_process) */
		return process_frame_copied(frame, len);
	if (len > PKT_MAX_FRAME && pkt_free_len(len) < 1)
		return -ENOBUFS;
	fab.ctr.rx_frames++;
	return receive_shared(frame, len);
}
