/*
 * One reliable, in-order, flow-controlled channel between this node and
 * one peer: the fabric's answer to the papers' assumption of a network
 * that never drops and applies back-pressure (DESIGN.md, "Fabric").
 *
 *  - Sequencing: every DATA frame has a 32-bit sequence number; the
 *    receiver delivers each exactly once, in order.
 *  - Acknowledgement: cumulative (ack = next seq expected) plus a 32-bit
 *    selective bitmap of what arrived beyond a gap; piggybacked on every
 *    frame, or sent alone after ack_delay, at once for a gap or duplicate,
 *    and every window/4 frames (fewer with long frames: half of what the
 *    sender may have in flight).
 *  - Retransmission: per-frame, on a timeout (RFC 6298 estimator, Karn's
 *    rule, exponential backoff) and early for holes the SACK bitmap shows.
 *  - Credit: the receiver buffers at most `window` frames it has not
 *    delivered; `limit` (= first undelivered + window) tells the sender how
 *    far it may go.  A protocol that cannot take a frame now (deliver()
 *    returns -EBUSY) stops delivery; the frames wait in the window, the
 *    limit stops moving, and the sender stops: back-pressure, not loss.
 *    A zero window is probed so that a lost window update cannot stall.
 *  - A peer from which nothing is heard for dead_ns while frames are
 *    outstanding is declared dead: sends fail with -EHOSTDOWN.
 *  - On a lossless link (chan_set_lossless: the NIC neither drops,
 *    corrupts nor reorders, and the peer agreed) frames carry no CRC and
 *    acknowledgements go only for credit: when half the window was
 *    delivered, when asked (FAB_F_ACKNOW), when delivery resumes, or
 *    after ack_delay.  A frame is still kept until acknowledged (one sent
 *    in place: its payload copied to cfg.kept, or, a long one on a link
 *    that keeps its slots until let go, pinned where it lies: cfg.by_ref),
 *    because the link's memory
 *    is writable by others: a hole the SACK bitmap shows is filled at
 *    once, and frames unacknowledged for rto are sent again (the oldest,
 *    with backoff), so that a frame lost in the link stalls nothing.  A
 *    frame the NIC refused goes again after a tick.  Order, exactly-once
 *    delivery, credit and peer death are as on any link.
 *
 * Pure logic: time is passed in (nanoseconds); frames leave through
 * ops->xmit and arrive through chan_input.  The kernel glue (fabric.c)
 * serializes all calls (interrupts off); host tests drive it over a fake
 * link that drops, duplicates and reorders.
 */
#ifndef NET_CHANNEL_H
#define NET_CHANNEL_H

#include <stddef.h>
#include <stdint.h>

#include "drivers/pktbuf.h"
#include "net/fabric/wire.h"

#define CHAN_WIN_MAX 64
#define CHAN_SNDQ_MAX (2 * CHAN_WIN_MAX)

/* Offset of the payload in a frame's pktbuf data. */
#define CHAN_PAYLOAD_OFF (FAB_ETH_HLEN + FAB_HDR_LEN)

struct chan_ops {
	/*
	 * Transmit a built frame; take a reference if it must outlive the call.
	 * 0, or negative if the NIC refused it (its ring full).
	 */
	int (*xmit)(void *ctx, struct pktbuf *pb);
	/* Deliver one message: 0 = taken (pb may be pkt_ref'd), -EBUSY = not now. */
	int (*deliver)(void *ctx, int peer, uint8_t proto, const uint8_t *p, size_t len,
		       struct pktbuf *pb);
	/* A buffer for a frame of len bytes (an ACK, a PROBE, a copy of a DATA frame), or NULL. */
	struct pktbuf *(*alloc)(void *ctx, size_t len);
	/*
	 * The n oldest frames sent in place to peer_mac and kept by reference
	 * (cfg.by_ref) are acknowledged, or given up: the link may write their
	 * slots again.  NULL where nothing is kept so.
	 */
	void (*unpin)(void *ctx, const uint8_t peer_mac[6], unsigned n);
};

struct chan_cfg {
	int me, peer;
	uint16_t session;		/* the tag this node's frames to the peer carry */
	uint8_t my_mac[6], peer_mac[6];
	unsigned window;		/* frames; a power of two, at most CHAN_WIN_MAX */
	uint64_t rto_init_ns, rto_min_ns, rto_max_ns;
	uint64_t ack_delay_ns;
	int lossless;			/* see chan_set_lossless */
	uint64_t dead_ns;
	struct fab_seal *seal;		/* keyed: every frame built is sealed with it; else NULL */
	/*
	 * The largest payload a message to the peer may have: FAB_MTU, or
	 * more on a link of longer frames both ends take (chan_set_mtu).
	 */
	size_t mtu;
	/*
	 * window * kept_stride bytes where a frame sent in place keeps its
	 * payload until acknowledged; NULL: none is sent in place.  The
	 * stride is chan_kept_stride(the largest mtu the channel will have).
	 */
	uint8_t *kept;
	size_t kept_stride;
	/*
	 * Unkeyed, on a link whose transmit slots keep what was written in
	 * them until this node lets them go (net.h, net_tx_commit_pinned: the
	 * shared-memory link): a frame sent in place longer than CHAN_PIN_MIN
	 * is kept by reference, where it lies in the slot, not copied to kept;
	 * ops->unpin lets the slots go once acknowledged.  The link's memory
	 * is writable by others, and a frame lost there (shm_repair) goes
	 * again from the slot, as the peer would have read it.
	 */
	int by_ref;
};

/* Frames sent in place longer than this are kept by reference where cfg.by_ref says so. */
#define CHAN_PIN_MIN 1024

/* A kept slot's bytes for payloads of up to mtu: keep_copy writes whole 16-byte blocks. */
static inline size_t chan_kept_stride(size_t mtu)
{
	return (mtu + 16 + 15) & ~(size_t)15;
}


struct chan_stats {
	uint64_t tx_data, tx_retx_timeout, tx_retx_sack, tx_ack, tx_probe;
	uint64_t rx_data, rx_dup, rx_ooo, rx_outside_window, rx_ack_frames;
	uint64_t delivered, busy_refusals, rto_events, alloc_failures;
	uint64_t unpinned_early;		/* pinned frames copied out to free their slots */
};

struct chan_tx_slot {
	struct pktbuf *pb;
	uint64_t first_tx, last_tx;
	uint16_t tries;
	uint8_t sacked;
	uint8_t refused;		/* the NIC refused its last transmission */
	uint8_t proto;			/* its protocol, length and the sender's ask for an */
	uint8_t acknow;			/* ack at once: tx_data builds the header from them */
	uint16_t len;
	/*
	 * Kept by reference, the payload at ref: CHAN_PINNED, sent in place
	 * and kept where it lies in the link's slot (cfg.by_ref); CHAN_SHARED,
	 * sent in a group's frame (chan_send_shared), shared holding a
	 * reference to it.  0: in pb, or copied to cfg.kept.
	 */
	uint8_t pinned;
	const uint8_t *ref;
	struct pktbuf *shared;
};
#define CHAN_PINNED 1
#define CHAN_SHARED 2

struct chan {
	struct chan_cfg cfg;
	const struct chan_ops *ops;
	void *ctx;

	/* sender */
	uint32_t snd_una, snd_nxt, snd_limit;
	uint32_t snd_tx;			/* the first frame never sent (snd_una..snd_nxt) */
	size_t pin_min;				/* frames in place longer than this are pinned (chan_pins) */
	int tmpl_ok;				/* tmpl holds this channel's headers (0 after init) */
	uint8_t tmpl[CHAN_PAYLOAD_OFF];		/* a frame in place's headers, but for its own fields */
	unsigned sndq;				/* capacity of txq */
	unsigned inflight;			/* frames sent and not acknowledged, at most (set_inflight) */
	unsigned ack_after;			/* frames received that earn an ack of their own (set_inflight) */
	struct chan_tx_slot txq[CHAN_SNDQ_MAX];
	uint64_t srtt, rttvar, rto;
	uint64_t rto_deadline;			/* 0 = not armed */
	int backed_off;				/* rto doubled by a timeout, no progress since */
	uint64_t probe_deadline, probe_interval;
	uint64_t quiet_deadline, quiet_interval;	/* lossless: nothing acknowledged for this long */
	uint64_t last_heard;
	int dead;

	/* receiver */
	uint32_t rcv_nxt, dlv_nxt;
	unsigned rx_ooo;			/* frames held beyond rcv_nxt */
	struct pktbuf *rxq[CHAN_WIN_MAX];
	int blocked;
	int ack_pending;
	uint64_t ack_deadline;
	unsigned unacked_rx;
	uint32_t limit_sent;

	struct chan_stats stats;
};

void chan_init(struct chan *c, const struct chan_cfg *cfg, const struct chan_ops *ops, void *ctx);

/*
 * Drop every buffer the channel holds and everything undelivered (tests;
 * dead peers).
 */
void chan_release(struct chan *c);

/*
 * The peer is a new incarnation (net/fabric/member.h): drop every buffer,
 * forget sequence numbers, credit, timers, lossless mode and death, and
 * start again as chan_init left it, sending with tag session to peer_mac.
 * Statistics are kept.
 */
void chan_reset(struct chan *c, uint16_t session, const uint8_t peer_mac[6]);

/*
 * The largest payload of a message to the peer from now on: at least
 * FAB_MTU, at most what cfg.kept_stride was made for (clamped).  Frames
 * queued keep their length; the peer takes any up to its NIC's.
 */
void chan_set_mtu(struct chan *c, size_t mtu);

/*
 * Queue a message whose payload (len bytes) the caller wrote at
 * pb->data + CHAN_PAYLOAD_OFF; acknow: the peer acknowledges it at once.
 * The channel takes the caller's reference and writes the header.
 * Return 0, -EAGAIN if the send queue is full (pb not taken), -EHOSTDOWN
 * if the peer is dead (pb not taken), -EMSGSIZE if len > cfg.mtu.
 */
int chan_send(struct chan *c, struct pktbuf *pb, uint8_t proto, size_t len, int acknow, uint64_t now);

/*
 * A message built in place in the link's own transmit buffer (net.h,
 * net_tx_begin), which sends it as soon as this returns: on a lossless
 * link only, where a frame the NIC took is sent again only if lost in
 * the link, so the channel keeps its payload (cfg.kept, or the slot itself
 * where chan_pins says so: the caller then commits the frame pinned), not
 * a buffer.  chan_can_send_in_place says whether the
 * next message may go so now (lossless, credit, room, nothing queued or
 * refused before it); chan_send_in_place takes the len bytes of payload
 * the caller wrote at frame + CHAN_PAYLOAD_OFF, writes the headers (and
 * the seal) around them and returns the frame's length.
 */
/*
 * The oldest frame still pinned in its slot (cfg.by_ref) copied to the
 * kept area and its slot let go (ops->unpin): for a link whose ring to the
 * peer is full at that slot, so that what must go to the peer (an
 * acknowledgement above all, which the peer needs to let go of its own
 * pins) can.  1 if one was, 0 if none is pinned.
 */
int chan_unpin_oldest(struct chan *c);

/* Does a frame of len payload bytes sent in place stay pinned in the link's slot (cfg.by_ref)? */
static inline int chan_pins(const struct chan *c, size_t len)
{
	return len > c->pin_min;
}

static inline int chan_can_send_in_place(const struct chan *c)
{
	/*
	 * Lossless, nothing queued before it and nothing the NIC refused to
	 * be sent again (the only reason the timer is armed there), credit,
	 * and room in the half of the queue blocking senders may use.
	 */
	return c->cfg.lossless && c->cfg.kept && !c->dead && c->snd_tx == c->snd_nxt &&
	       !c->rto_deadline && seq_lt(c->snd_nxt, c->snd_limit) &&
	       c->snd_nxt - c->snd_una < c->cfg.window;
}

size_t chan_send_in_place(struct chan *c, uint8_t *frame, uint8_t proto, size_t len, int acknow,
			  uint64_t now);

/*
 * A message that goes to the peer in a multicast frame (wire.h,
 * FAB_MCAST) built by the caller, who sends it once for the group:
 * chan_can_send_shared says whether this channel's next message may go so
 * now (unkeyed, credit, room, nothing queued before it); chan_send_shared
 * gives it the next sequence number, fills the peer's entry in the frame
 * (m) as a DATA frame's header would be, and keeps a reference to frame,
 * whose payload (len bytes at payload) it sends again, in a DATA frame of
 * its own to this peer alone, should the peer not acknowledge it.
 */
static inline int chan_can_send_shared(const struct chan *c)
{
	return !c->cfg.seal && !c->dead && c->snd_tx == c->snd_nxt && seq_lt(c->snd_nxt, c->snd_limit) &&
	       c->snd_nxt - c->snd_una < c->inflight && c->snd_nxt - c->snd_una < c->sndq;
}

void chan_send_shared(struct chan *c, struct pktbuf *frame, const uint8_t *payload, uint8_t proto, size_t len,
		      struct fab_mcast_member *m, uint64_t now);

/*
 * The headers of this channel's frames but for their own fields (a DATA
 * frame without a CRC: seq, ack, limit, proto, len and the ACKNOW flag
 * zero), made once per binding: a frame built in place starts from them.
 */
const uint8_t *chan_template(struct chan *c);

/* Free send-queue slots for a blocking sender (0 = wait). */
unsigned chan_space(const struct chan *c);

/* Messages queued and not yet acknowledged. */
unsigned chan_outstanding(const struct chan *c);

/*
 * A validated frame from the peer (any type but HELLO/RAW): its header h
 * (a copy) and its payload (h->len bytes), in pb, whose reference the
 * channel takes, or (pb NULL) in memory the caller owns until this
 * returns: the channel copies what it keeps into a buffer of ops->alloc.
 * 0, or -ENOBUFS: a frame in place had to be kept and no buffer came;
 * nothing but its acknowledgement fields was taken, and the caller offers
 * it again later.  (A frame in order, delivered at once, is kept only if
 * its protocol refuses it; ops->alloc must then succeed.)
 */
int chan_input(struct chan *c, const struct fab_hdr *h, const uint8_t *payload,
	       struct pktbuf *pb, uint64_t now);

/* Run due timers (acks included); return the next deadline (0 = none). */
uint64_t chan_timer(struct chan *c, uint64_t now);

/*
 * The next retransmission or probe deadline (0 = none).  Delayed acks are
 * not included: the kernel sends them when the CPU goes idle or at the
 * tick (chan_flush_ack, chan_timer), so that acknowledging costs no timer
 * reprogramming on the hot path.
 */
uint64_t chan_next_deadline(const struct chan *c);

/* Send a pending acknowledgement now, if there is one. */
void chan_flush_ack(struct chan *c, uint64_t now);

/* A protocol that returned -EBUSY can take messages again. */
void chan_resume(struct chan *c, uint64_t now);

/*
 * The link to the peer is lossless and the peer agreed (it takes frames
 * without a CRC): see the header comment.  Frames already sent are resent
 * by the new mode's timer, armed from now.
 */
void chan_set_lossless(struct chan *c, int on, uint64_t now);

#endif
