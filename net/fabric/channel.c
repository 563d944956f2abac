/*
 * The reliable channel; see channel.h for the protocol.
 */
#include <errno.h>
#include <string.h>

#include "net/fabric/channel.h"

/* Windows are powers of two: a slot is found by masking. */
#define TXSLOT(c, s) (&(c)->txq[(s) & ((c)->sndq - 1)])
#define RXSLOT(c, s) (&(c)->rxq[(s) & ((c)->cfg.window - 1)])
/* A kept frame's protocol and length, in its pktbuf's stamp (keep()). */
#define KEPT_FIELDS(proto, len) ((uint64_t)(proto) | (uint64_t)(len) << 8)
#define KEPT_PROTO(st) ((uint8_t)(st))
#define KEPT_LEN(st) ((size_t)(uint16_t)((st) >> 8))

static void set_inflight(struct chan *c);

void chan_init(struct chan *c, const struct chan_cfg *cfg, const struct chan_ops *ops, void *ctx)
{
	memset(c, 0, sizeof *c);
	c->cfg = *cfg;
	if (c->cfg.mtu < FAB_MTU)
		c->cfg.mtu = FAB_MTU;
	if (!c->cfg.kept_stride)
		c->cfg.kept_stride = chan_kept_stride(FAB_MTU);
	if (c->cfg.window == 0 || c->cfg.window > CHAN_WIN_MAX)
		c->cfg.window = CHAN_WIN_MAX;
	while (c->cfg.window & (c->cfg.window - 1))
		c->cfg.window &= c->cfg.window - 1;
	c->ops = ops;
	c->ctx = ctx;
	c->sndq = 2 * c->cfg.window;
	set_inflight(c);
	/* Until the peer says otherwise it grants the same window we do. */
	c->snd_limit = c->cfg.window;
	c->limit_sent = c->cfg.window;
	c->rto = cfg->rto_init_ns;
	/* Unkeyed only: a keyed frame's tag is over bytes no one else can change (a copy). */
	c->pin_min = c->cfg.by_ref && !c->cfg.seal ? CHAN_PIN_MIN : SIZE_MAX;
}

void chan_release(struct chan *c)
{
	unsigned pinned = 0;

	for (uint32_t s = c->snd_una; s != c->snd_nxt; s++) {
		struct chan_tx_slot *t = TXSLOT(c, s);
		if (t->pb)
			pkt_put(t->pb);
		t->pb = NULL;
		if (t->pinned == CHAN_SHARED)
			pkt_put(t->shared);
		else
			pinned += t->pinned;
		t->pinned = 0;
	}
	if (pinned)
		c->ops->unpin(c->ctx, c->cfg.peer_mac, pinned);
	c->snd_una = c->snd_tx = c->snd_nxt;
	for (unsigned i = 0; i < c->cfg.window; i++) {
		if (c->rxq[i])
			pkt_put(c->rxq[i]);
		c->rxq[i] = NULL;
	}
	/* Nothing is left to deliver: the window is empty and nothing waits. */
	c->rx_ooo = 0;
	c->dlv_nxt = c->rcv_nxt;
	c->blocked = 0;
	c->rto_deadline = c->probe_deadline = c->quiet_deadline = 0;
	c->ack_pending = 0;
}

void chan_reset(struct chan *c, uint16_t session, const uint8_t peer_mac[6])
{
	struct chan_cfg cfg = c->cfg;
	struct chan_stats stats = c->stats;

	chan_release(c);
	cfg.session = session;
	cfg.lossless = 0;
	cfg.mtu = FAB_MTU;		/* until the new incarnation's HELLO says more */
	memcpy(cfg.peer_mac, peer_mac, 6);
	chan_init(c, &cfg, c->ops, c->ctx);
	c->stats = stats;
}

int chan_unpin_oldest(struct chan *c)
{
	for (uint32_t s = c->snd_una; s != c->snd_nxt; s++) {
		struct chan_tx_slot *t = TXSLOT(c, s);
		if (t->pinned != CHAN_PINNED)
			continue;
		if (!t->pb)
			memcpy(c->cfg.kept + (s & (c->cfg.window - 1)) * c->cfg.kept_stride, t->ref, t->len);
		t->pinned = 0;
		c->stats.unpinned_early++;
		c->ops->unpin(c->ctx, c->cfg.peer_mac, 1);
		return 1;
	}
	return 0;
}

unsigned chan_space(const struct chan *c)
{
	unsigned used = c->snd_nxt - c->snd_una;

	/* Blocking senders keep half of the queue free for non-blocking ones. */
	return used < c->cfg.window ? c->cfg.window - used : 0;
}

unsigned chan_outstanding(const struct chan *c)
{
	return c->snd_nxt - c->snd_una;
}

/* The reverse-direction state every frame carries. */
static void fill_ack(struct chan *c, struct fab_hdr *h)
{
	uint32_t sack = 0;

	/* Nothing held beyond a gap (the common case): no bitmap to build. */
	for (unsigned i = 0; c->rx_ooo && i < 32; i++) {
		uint32_t s = c->rcv_nxt + 1 + i;
		if (!seq_lt(s, c->dlv_nxt + c->cfg.window))
			break;
		if (*RXSLOT(c, s))
			sack |= 1u << i;
	}
	h->ack = c->rcv_nxt;
	h->sack = sack;
	h->limit = c->dlv_nxt + c->cfg.window;
	c->limit_sent = h->limit;
	c->ack_pending = 0;
	c->unacked_rx = 0;
}

static void header(struct chan *c, struct fab_hdr *h, uint8_t type)
{
	memset(h, 0, sizeof *h);
	h->type = type;
	if (c->cfg.lossless)
		h->flags = FAB_F_NOCRC;
	h->src = (uint16_t)c->cfg.me;
	h->dst = (uint16_t)c->cfg.peer;
	h->session = c->cfg.session;
	fill_ack(c, h);
}

/* Lossless: frames outstanding; if nothing is acknowledged for rto, the oldest goes again. */
static inline void quiet_arm(struct chan *c, uint64_t now)
{
	c->quiet_interval = c->rto;
	c->quiet_deadline = now + c->rto;
}

/* Build (or rebuild, with fresh ack fields) and transmit a queued frame. */
static void tx_data(struct chan *c, uint32_t seq, uint64_t now)
{
	struct chan_tx_slot *t = TXSLOT(c, seq);
	struct fab_hdr h;
	int r;

	/* Sent in place: its kept payload (or its slot's) into a buffer of its own, now that it goes again. */
	if (!t->pb) {
		struct pktbuf *pb = c->ops->alloc(c->ctx, CHAN_PAYLOAD_OFF + t->len + FAB_TRAILER_LEN);
		if (!pb) {
			c->stats.alloc_failures++;
			return;
		}
		memcpy(pb->data + CHAN_PAYLOAD_OFF,
		       t->pinned ? t->ref : c->cfg.kept + (seq & (c->cfg.window - 1)) * c->cfg.kept_stride, t->len);
		if (__builtin_expect(t->pinned == CHAN_SHARED, 0)) {
			/* Missed in the group's frame: to this peer alone from now on. */
			pkt_put(t->shared);
			t->pinned = 0;
		}
		t->pb = pb;
		t->acknow = 0;		/* sent again, it asks for nothing more */
	}
	/*
	 * A retransmission must not rewrite a buffer the NIC may still be
	 * sending from (drivers reclaim finished descriptors lazily): move the
	 * frame to a fresh buffer first.  Without one, try at the next timer.
	 */
	if (t->tries > 0 && t->pb->refs > 1) {
		struct pktbuf *fresh = c->ops->alloc(c->ctx, t->pb->len);
		if (!fresh) {
			c->stats.alloc_failures++;
			return;
		}
		memcpy(fresh->data, t->pb->data, t->pb->len);
		fresh->len = t->pb->len;
		pkt_put(t->pb);
		t->pb = fresh;
	}
	/* The header from the slot: what chan_send was given. */
	header(c, &h, FAB_DATA);
	if (t->acknow)
		h.flags |= FAB_F_ACKNOW;
	h.proto = t->proto;
	h.seq = seq;
	h.len = t->len;
	t->pb->len = (uint16_t)fab_build_sealed(t->pb->data, c->cfg.peer_mac, c->cfg.my_mac, &h,
						     c->cfg.seal);
	if (t->tries == 0)
		t->first_tx = now;
	t->last_tx = now;
	t->tries++;
	c->stats.tx_data++;
	r = c->ops->xmit(c->ctx, t->pb);
	t->refused = r < 0;
	/* On a lossless link a frame the NIC refused goes again soon; a lost one after rto. */
	if (!c->rto_deadline && (!c->cfg.lossless || r < 0))
		c->rto_deadline = now + (c->cfg.lossless ? c->cfg.rto_min_ns : c->rto);
	if (c->cfg.lossless && !c->quiet_deadline)
		quiet_arm(c, now);
}

static void send_ctl(struct chan *c, uint8_t type, uint64_t now)
{
	struct pktbuf *pb = c->ops->alloc(c->ctx, CHAN_PAYLOAD_OFF + FAB_TRAILER_LEN);
	struct fab_hdr h;

	if (!pb) {
		/* Try again soon: the pool is only briefly empty. */
		c->stats.alloc_failures++;
		c->ack_pending = 1;
		c->ack_deadline = now + 1000000;
		return;
	}
	header(c, &h, type);
	if (type == FAB_PROBE)
		h.flags = FAB_F_ACKNOW;
	pb->len = (uint16_t)fab_build_sealed(pb->data, c->cfg.peer_mac, c->cfg.my_mac, &h, c->cfg.seal);
	if (type == FAB_ACK)
		c->stats.tx_ack++;
	else
		c->stats.tx_probe++;
	if (c->ops->xmit(c->ctx, pb) < 0 && type == FAB_ACK) {
		/*
		 * The NIC refused it (a ring full of data both ways): the credit
		 * it carries must still arrive, or both sides wait for it.
		 */
		c->ack_pending = 1;
		c->ack_deadline = now + c->cfg.rto_min_ns / 2;
	}
	pkt_put(pb);
}

/* Transmit queued frames the peer's credit now allows (those from snd_tx on were never sent). */
static void push(struct chan *c, uint64_t now)
{
	while (c->snd_tx != c->snd_nxt && seq_lt(c->snd_tx, c->snd_limit) &&
	       c->snd_tx - c->snd_una < c->inflight) {
		tx_data(c, c->snd_tx, now);
		c->snd_tx++;
	}
	/* Data waits beyond the peer's limit: probe until the window opens (not for inflight's). */
	if (c->snd_tx != c->snd_nxt && !seq_lt(c->snd_tx, c->snd_limit)) {
		if (!c->probe_deadline) {
			c->probe_interval = c->rto;
			c->probe_deadline = now + c->probe_interval;
		}
	} else {
		c->probe_deadline = 0;
	}
}

int chan_send(struct chan *c, struct pktbuf *pb, uint8_t proto, size_t len, int acknow, uint64_t now)
{
	struct chan_tx_slot *t;
	uint16_t len16 = (uint16_t)len;

	if (c->dead)
		return -EHOSTDOWN;
	if (len > c->cfg.mtu)
		return -EMSGSIZE;
	if (c->snd_nxt - c->snd_una >= c->sndq)
		return -EAGAIN;
	if (c->snd_una == c->snd_nxt)
		c->last_heard = now;	/* the silence clock starts with the first outstanding frame */
	t = TXSLOT(c, c->snd_nxt);
	t->pb = pb;
	t->pinned = 0;
	t->tries = 0;
	t->sacked = 0;
	t->refused = 0;
	t->proto = proto;
	t->acknow = acknow != 0;
	t->len = len16;
	c->snd_nxt++;
	push(c, now);
	return 0;
}

/* The template of chan_template, made on first use (and after the link's kind changed). */
static __attribute__((noinline)) void make_template(struct chan *c)
{
	struct fab_hdr h = {
		.version = FAB_VERSION,
		.type = FAB_DATA,
		.flags = FAB_F_NOCRC,
		.src = (uint16_t)c->cfg.me,
		.dst = (uint16_t)c->cfg.peer,
		.session = c->cfg.session,
	};

	memcpy(c->tmpl, c->cfg.peer_mac, 6);
	memcpy(c->tmpl + 6, c->cfg.my_mac, 6);
	c->tmpl[12] = 0x88;
	c->tmpl[13] = 0xb5;
	memcpy(c->tmpl + FAB_ETH_HLEN, &h, sizeof h);
	c->tmpl_ok = 1;
}

const uint8_t *chan_template(struct chan *c)
{
	if (__builtin_expect(!c->tmpl_ok, 0))
		make_template(c);
	return c->tmpl;
}

/*
 * The payload of a frame sent in place, to its kept slot: whole 16-byte
 * blocks (the slot and the frame's buffer have room for the last one's
 * tail), inline, two SSE moves a block (trap entry saves the SSE state).
 */
typedef uint8_t block16 __attribute__((vector_size(16), aligned(1), may_alias));

static inline void keep_copy(uint8_t *d, const uint8_t *s, size_t n)
{
	for (size_t i = 0; i < n; i += 16)
		*(block16 *)(d + i) = *(const block16 *)(s + i);
}

/* A slot's message gone once, without a buffer of its own (pb NULL): its fields as sent now. */
static inline void slot_sent(struct chan *c, struct chan_tx_slot *t, uint8_t proto, size_t len, uint64_t now)
{
	t->pb = NULL;
	t->proto = proto;
	t->len = (uint16_t)len;
	t->tries = 1;
	t->sacked = 0;
	t->refused = 0;
	t->first_tx = t->last_tx = now;
	c->stats.tx_data++;
}

/* chan_send_in_place's sealed frame (or one with a SACK bitmap to carry): built in full. */
static __attribute__((noinline)) size_t send_in_place_built(struct chan *c, uint8_t *frame,
							    uint8_t proto, size_t len, int acknow)
{
	struct fab_hdr h;

	header(c, &h, FAB_DATA);
	if (acknow)
		h.flags |= FAB_F_ACKNOW;
	h.proto = proto;
	h.seq = c->snd_nxt++;
	h.len = (uint16_t)len;
	c->snd_tx = c->snd_nxt;
	return fab_build_sealed(frame, c->cfg.peer_mac, c->cfg.my_mac, &h, c->cfg.seal);
}

size_t chan_send_in_place(struct chan *c, uint8_t *frame, uint8_t proto, size_t len, int acknow,
			  uint64_t now)
{
	struct chan_tx_slot *t = TXSLOT(c, c->snd_nxt);

	if (c->snd_una == c->snd_nxt) {
		c->last_heard = now;	/* the silence clock starts with the first outstanding frame */
		quiet_arm(c, now);
	}
	/*
	 * No buffer, no round-trip sample: the payload kept where the link's
	 * memory cannot reach, should the frame be lost there; or, pinned,
	 * where it lies.
	 */
	int pin = chan_pins(c, len);
	if (__builtin_expect(pin, 0))
		t->ref = frame + CHAN_PAYLOAD_OFF;
	else
		keep_copy(c->cfg.kept + (c->snd_nxt & (c->cfg.window - 1)) * c->cfg.kept_stride,
			  frame + CHAN_PAYLOAD_OFF, len);
	t->pinned = (uint8_t)pin;
	slot_sent(c, t, proto, len, now);
	if (c->rx_ooo || c->cfg.seal)
		return send_in_place_built(c, frame, proto, len, acknow);
	/*
	 * Unsealed, and nothing held beyond a gap (no SACK bitmap): the
	 * headers written straight where they go, as fab_build would (a
	 * lossless link: no CRC): what never changes on this channel from a
	 * template made once, then the fields of this frame.
	 */
	const uint8_t *tmpl = chan_template(c);
	uint32_t seq = c->snd_nxt++, ack = c->rcv_nxt, limit = c->dlv_nxt + c->cfg.window;
	uint16_t len16 = (uint16_t)len;
	uint8_t *fh = frame + FAB_ETH_HLEN;
	memcpy(frame, tmpl, CHAN_PAYLOAD_OFF);
	fh[offsetof(struct fab_hdr, proto)] = proto;
	if (acknow)
		fh[offsetof(struct fab_hdr, flags)] = FAB_F_NOCRC | FAB_F_ACKNOW;
	memcpy(fh + offsetof(struct fab_hdr, seq), &seq, 4);
	memcpy(fh + offsetof(struct fab_hdr, ack), &ack, 4);
	memcpy(fh + offsetof(struct fab_hdr, limit), &limit, 4);
	memcpy(fh + offsetof(struct fab_hdr, len), &len16, 2);
	c->snd_tx = c->snd_nxt;
	c->limit_sent = limit;
	c->ack_pending = 0;
	c->unacked_rx = 0;
	return CHAN_PAYLOAD_OFF + len;
}

__attribute__((cold, noinline)) void chan_send_shared(struct chan *c, struct pktbuf *frame, const uint8_t *payload, uint8_t proto, size_t len,
		      struct fab_mcast_member *m, uint64_t now)
{
	struct chan_tx_slot *t = TXSLOT(c, c->snd_nxt);
	struct fab_hdr h;

	if (c->snd_una == c->snd_nxt)
		c->last_heard = now;	/* the silence clock starts with the first outstanding frame */
	pkt_ref(frame);
	t->shared = frame;
	t->ref = payload;
	t->pinned = CHAN_SHARED;
	t->acknow = 0;
	slot_sent(c, t, proto, len, now);
	/* The entry: what this frame's header would say to the peer alone. */
	header(c, &h, FAB_DATA);
	m->node = (uint16_t)c->cfg.peer;
	m->session = h.session;
	m->seq = c->snd_nxt++;
	m->ack = h.ack;
	m->sack = h.sack;
	m->limit = h.limit;
	c->snd_tx = c->snd_nxt;
	if (!c->cfg.lossless && !c->rto_deadline)
		c->rto_deadline = now + c->rto;
	if (c->cfg.lossless && !c->quiet_deadline)
		quiet_arm(c, now);
}

/*
 * The smaller and the larger of two times, and the distance between
 * them, without a branch on their values: a round trip measured on one
 * node depends on when the other node's answer came, so a branch on it
 * would make an operation's instruction count (make cost, under -icount)
 * differ from run to run.  Times are below 2^63.
 */
static inline uint64_t min_ns(uint64_t a, uint64_t b)
{
	uint64_t lt = -(uint64_t)(a < b);	/* all ones if a < b; a setcc, not a branch */

	return (a & lt) | (b & ~lt);
}

static inline uint64_t max_ns(uint64_t a, uint64_t b)
{
	uint64_t lt = -(uint64_t)(a < b);

	return (b & lt) | (a & ~lt);
}

static inline uint64_t dist_ns(uint64_t a, uint64_t b)
{
	uint64_t d = a - b, m = (uint64_t)((int64_t)d >> 63);

	return (d ^ m) - m;
}

/* rto from the smoothed round trip (RFC 6298 2.3), within the configured bounds. */
static void rto_from_srtt(struct chan *c)
{
	uint64_t rto = c->srtt ? c->srtt + 4 * c->rttvar : c->cfg.rto_init_ns;

	c->rto = min_ns(max_ns(rto, c->cfg.rto_min_ns), c->cfg.rto_max_ns);
}

/* RFC 6298 2.2-2.4. */
static void rtt_sample(struct chan *c, uint64_t r)
{
	if (c->srtt == 0) {
		c->srtt = r;
		c->rttvar = r / 2;
	} else {
		c->rttvar = (3 * c->rttvar + dist_ns(c->srtt, r)) / 4;
		c->srtt = (7 * c->srtt + r) / 8;
	}
	rto_from_srtt(c);
}

/*
 * The first acknowledgement of progress after a timeout: the link carries
 * frames again.  The backoff ends (rto from the round trip once more, as
 * TCP's does on new data acknowledged), and every frame still missing
 * that was sent at least an rto ago goes again now: a lost tail of a
 * burst (a switch that dropped the frames queued for a busy port), with
 * no later frame to SACK it, would otherwise come back one frame per
 * doubled timeout, seconds for a dozen frames.  Only after a timeout: a
 * stream's acks never walk the window here.
 */
static void recover_after_timeout(struct chan *c, uint64_t now)
{
	c->backed_off = 0;
	rto_from_srtt(c);
	for (uint32_t s = c->snd_una; s != c->snd_tx && seq_lt(s, c->snd_limit); s++) {
		struct chan_tx_slot *t = TXSLOT(c, s);
		if (t->tries > 0 && !t->sacked && now - t->last_tx >= c->rto) {
			c->stats.tx_retx_timeout++;
			tx_data(c, s, now);
		}
	}
}

/* process_ack when the frame tells something new. */
static __attribute__((noinline)) void process_ack_update(struct chan *c, const struct fab_hdr *h,
							 uint64_t now)
{
	int progress = 0;

	/*
	 * Cumulative: everything before h->ack arrived.  Fields from the wire
	 * are checked as unsigned distances from snd_una: signed comparisons
	 * are ambiguous 2^31 away.
	 */
	uint32_t in_flight = c->snd_nxt - c->snd_una;
	uint32_t acked = h->ack - c->snd_una;
	if (acked > 0 && acked <= in_flight) {
		uint64_t sample = 0;
		unsigned pinned = 0;
		while (c->snd_una != h->ack) {
			struct chan_tx_slot *t = TXSLOT(c, c->snd_una);
			/* Karn: only unambiguous samples (a frame sent in place gives none) */
			if (t->tries == 1 && t->pb)
				sample = now - t->first_tx;
			if (t->pb)
				pkt_put(t->pb);
			t->pb = NULL;
			if (__builtin_expect(t->pinned == CHAN_SHARED, 0))
				pkt_put(t->shared);
			else
				pinned += t->pinned;
			t->pinned = 0;
			c->snd_una++;
		}
		if (pinned)
			c->ops->unpin(c->ctx, c->cfg.peer_mac, pinned);
		/* Acknowledged before it was sent (a forged ack): never send it now. */
		if (seq_lt(c->snd_tx, c->snd_una))
			c->snd_tx = c->snd_una;
		if (sample)
			rtt_sample(c, sample);
		progress = 1;
	}
	/* Selective: frames beyond a gap. */
	for (unsigned i = 0; i < 32 && h->sack; i++) {
		uint32_t s = h->ack + 1 + i;
		if (!(h->sack & (1u << i)))
			continue;
		if (s - c->snd_una >= c->snd_nxt - c->snd_una)
			continue;
		TXSLOT(c, s)->sacked = 1;
	}
	/* Credit only grows, and never beyond what a peer could grant. */
	uint32_t ahead = h->limit - c->snd_una;
	if (ahead <= c->sndq + c->cfg.window && (int32_t)(h->limit - c->snd_limit) > 0)
		c->snd_limit = h->limit;

	/*
	 * Nothing outstanding: nothing to send again, on any link (a timer
	 * armed before the link was agreed lossless goes too: it would keep
	 * frames from being built in place until it ran out).
	 */
	if (progress && c->backed_off && !c->cfg.lossless)
		recover_after_timeout(c, now);
	if (progress && c->snd_una == c->snd_nxt)
		c->rto_deadline = c->quiet_deadline = 0;
	else if (progress && !c->cfg.lossless)
		c->rto_deadline = now + c->rto;
	else if (progress)
		quiet_arm(c, now);
	/*
	 * Early retransmission of frames still missing below the highest
	 * SACKed one: at once for a first loss that three later frames
	 * overtook (TCP's duplicate threshold), else at most once per
	 * smoothed round trip.  On a lossless link nothing overtakes: a
	 * frame missing below one that arrived was lost in the link (or
	 * refused by the NIC), and goes again at once.
	 */
	if (h->sack && h->ack - c->snd_una <= c->snd_nxt - c->snd_una) {
		uint32_t top = h->ack + 32 - (uint32_t)__builtin_clz(h->sack);
		uint64_t gap = c->srtt ? c->srtt + c->srtt / 4 : c->cfg.rto_min_ns;
		unsigned above = 0;
		if (top - c->snd_una > c->snd_nxt - c->snd_una)
			top = c->snd_nxt;
		for (uint32_t s = top; seq_lt(c->snd_una, s);) {
			struct chan_tx_slot *t = TXSLOT(c, --s);
			if (t->sacked) {
				above++;
				continue;
			}
			if (t->tries == 0)
				continue;
			if ((t->tries == 1 && above >= (c->cfg.lossless ? 1u : 3u)) || now - t->last_tx >= gap) {
				c->stats.tx_retx_sack++;
				tx_data(c, s, now);
			}
		}
	}
	push(c, now);
}

static inline void process_ack(struct chan *c, const struct fab_hdr *h, uint64_t now)
{
	/* Nothing new (the common case: a frame of a stream, our frames already counted). */
	if (h->ack == c->snd_una && !h->sack && h->limit == c->snd_limit && c->snd_tx == c->snd_nxt)
		return;
	/*
	 * The answer to the one frame outstanding, sent in place (no buffer
	 * to free, no round-trip sample), everything sent: what
	 * process_ack_update would do, in short.
	 */
	if (h->ack == c->snd_nxt && h->ack - c->snd_una == 1 && c->snd_tx == c->snd_nxt && !h->sack &&
	    !TXSLOT(c, c->snd_una)->pb && !TXSLOT(c, c->snd_una)->pinned) {
		c->snd_una = h->ack;
		if (h->limit - c->snd_una <= c->sndq + c->cfg.window &&
		    (int32_t)(h->limit - c->snd_limit) > 0)
			c->snd_limit = h->limit;
		c->rto_deadline = 0;
		c->probe_deadline = 0;
		c->quiet_deadline = 0;
		return;
	}
	process_ack_update(c, h, now);
}

/* Hand in-order frames to their protocol until one is refused. */
static void deliver(struct chan *c)
{
	while (!c->blocked && seq_lt(c->dlv_nxt, c->rcv_nxt)) {
		struct pktbuf **slot = RXSLOT(c, c->dlv_nxt);
		struct pktbuf *pb = *slot;

		if (c->ops->deliver(c->ctx, c->cfg.peer, KEPT_PROTO(pb->stamp), pb->data + CHAN_PAYLOAD_OFF,
				    KEPT_LEN(pb->stamp), pb) == -EBUSY) {
			c->blocked = 1;
			c->stats.busy_refusals++;
			break;
		}
		*slot = NULL;
		pkt_put(pb);
		c->dlv_nxt++;
		c->stats.delivered++;
	}
}

static void schedule_ack(struct chan *c, int now_please, uint64_t now)
{
	if (now_please || ++c->unacked_rx >= c->ack_after) {
		send_ctl(c, FAB_ACK, now);
		return;
	}
	if (!c->ack_pending) {
		c->ack_pending = 1;
		c->ack_deadline = now + c->cfg.ack_delay_ns;
	}
}

/*
 * The frame whose payload is at payload, in a buffer of the channel's own:
 * pb itself, or a copy of a frame in place (pb NULL).  NULL if none.
 */
static struct pktbuf *keep(struct chan *c, const struct fab_hdr *h, const uint8_t *payload,
			   struct pktbuf *pb)
{
	if (!pb) {
		if (!(pb = c->ops->alloc(c->ctx, CHAN_PAYLOAD_OFF + h->len))) {
			c->stats.alloc_failures++;
			return NULL;
		}
		memcpy(pb->data, payload - CHAN_PAYLOAD_OFF, CHAN_PAYLOAD_OFF + h->len);
		pb->len = (uint16_t)(CHAN_PAYLOAD_OFF + h->len);
	}
	/* The parsed fields kept beside the frame (pktbuf's owner word): deliver() reads no header. */
	pb->stamp = KEPT_FIELDS(h->proto, h->len);
	return pb;
}

/* receive_data's next frame, refused by its protocol for now: kept (its slot) until resumed. */
static __attribute__((noinline)) int refused_in_order(struct chan *c, const struct fab_hdr *h,
						      const uint8_t *payload, struct pktbuf *pb)
{
	struct pktbuf *kept;

	c->blocked = 1;
	c->stats.busy_refusals++;
	if (!(kept = keep(c, h, payload, pb))) {
		/* Cannot happen with the caller's reserve; a lossy link's sender resends. */
		c->rcv_nxt--;
		return 0;
	}
	*RXSLOT(c, h->seq) = kept;
	return 0;
}

/* receive_data for every frame but the next one with nothing waiting. */
static __attribute__((noinline)) int receive_data_other(struct chan *c, const struct fab_hdr *h,
							const uint8_t *payload, struct pktbuf *pb,
							uint64_t now)
{
	uint32_t s = h->seq;
	struct pktbuf **slot;

	if (seq_lt(s, c->rcv_nxt)) {
		c->stats.rx_dup++;
		schedule_ack(c, 1, now);	/* our ack was probably lost */
		goto drop;
	}
	if (!seq_lt(s, c->dlv_nxt + c->cfg.window)) {
		c->stats.rx_outside_window++;
		schedule_ack(c, 1, now);
		goto drop;
	}
	slot = RXSLOT(c, s);
	if (*slot) {
		c->stats.rx_dup++;
		schedule_ack(c, 1, now);
		goto drop;
	}
	if (!(pb = keep(c, h, payload, pb)))
		return -ENOBUFS;
	*slot = pb;
	if (s == c->rcv_nxt) {
		c->rcv_nxt++;
		/* Frames that waited beyond the gap are now in order. */
		while (c->rx_ooo && seq_lt(c->rcv_nxt, c->dlv_nxt + c->cfg.window) && *RXSLOT(c, c->rcv_nxt)) {
			c->rcv_nxt++;
			c->rx_ooo--;
		}
		/*
		 * Schedule the ack before delivering: a reply the protocol sends
		 * from its handler then carries it, and no ACK frame is needed.
		 */
		schedule_ack(c, (h->flags & FAB_F_ACKNOW) != 0, now);
		deliver(c);
	} else {
		c->stats.rx_ooo++;
		c->rx_ooo++;
		schedule_ack(c, 1, now);	/* the SACK lets the sender fill the gap */
	}
	return 0;
drop:
	if (pb)
		pkt_put(pb);
	return 0;
}

/* 0, or -ENOBUFS: a frame in place that had to be kept and could not be (nothing changed). */
static inline int receive_data(struct chan *c, const struct fab_hdr *h, const uint8_t *payload,
			       struct pktbuf *pb, uint64_t now)
{
	uint32_t s = h->seq;

	c->stats.rx_data++;
	if (__builtin_expect(s != c->rcv_nxt || c->dlv_nxt != s || c->blocked || c->rx_ooo ||
			     *RXSLOT(c, s), 0))
		return receive_data_other(c, h, payload, pb, now);
	/*
	 * The next frame, and nothing waits before it (the common case):
	 * delivered from where it lies, kept only if its protocol cannot take
	 * it now.  A buffer for that is there (the caller made sure of it for
	 * a frame in place), asked for before anything changes.
	 */
	c->rcv_nxt++;
	schedule_ack(c, (h->flags & FAB_F_ACKNOW) != 0, now);
	if (c->ops->deliver(c->ctx, c->cfg.peer, h->proto, payload, h->len, pb) == -EBUSY)
		return refused_in_order(c, h, payload, pb);
	c->dlv_nxt++;
	c->stats.delivered++;
	if (pb)
		pkt_put(pb);
	return 0;
}

int chan_input(struct chan *c, const struct fab_hdr *h, const uint8_t *payload,
	       struct pktbuf *pb, uint64_t now)
{
	if (c->dead)
		goto drop;
	c->last_heard = now;
	process_ack(c, h, now);
	switch (h->type) {
	case FAB_DATA:
		return receive_data(c, h, payload, pb, now);
	case FAB_PROBE:
		c->stats.rx_ack_frames++;
		send_ctl(c, FAB_ACK, now);
		break;
	default:
		c->stats.rx_ack_frames++;
		break;
	}
drop:
	if (pb)
		pkt_put(pb);
	return 0;
}

/*
 * Frames in flight at most: the window, but on a link that can lose
 * frames with frames longer than Ethernet's, as many as carry the bytes
 * of two windows of Ethernet's frames (at least INFLIGHT_LEAST, at most
 * the window).  The least is what a path of 9000-byte frames has: on one
 * that passes virtio-net's 64 KiB frames (a Linux bridge) two windows'
 * bytes are two frames, and a stream of 4 KiB WRITEs, a frame each, had
 * 8 in flight and ran at 95 MB/s where the same path at 9014 gave it
 * 123-157.
 * A switch or socket between the nodes buffers bytes, not frames: a
 * window of 9000-byte frames would overrun what holds 64 of 1500 and lose
 * them in bursts; two windows' bytes keep a link of 150 MB/s busy over a
 * round trip of 1 ms (issue 38: the bandwidth-delay product).
 *
 * And how many frames received earn an acknowledgement of their own
 * (schedule_ack): on a lossless link half a window, for credit only; on a
 * lossy one a quarter window, or half of what the peer may have in flight
 * if that is fewer, so that the sender's in-flight limit never waits for
 * an idle receiver's acknowledgement.  (The pair's frame length is the
 * same both ways: the peer's limit is ours.)
 */
#define INFLIGHT_LEAST 20
static void set_inflight(struct chan *c)
{
	unsigned n = c->cfg.window;

	if (!c->cfg.lossless && c->cfg.mtu > FAB_MTU) {
		n = (unsigned)((size_t)c->cfg.window * FAB_MTU * 2 / c->cfg.mtu);
		n = n < INFLIGHT_LEAST ? INFLIGHT_LEAST : n > c->cfg.window ? c->cfg.window : n;
	}
	c->inflight = n;
	if (c->cfg.lossless)
		c->ack_after = c->cfg.window >> 1;
	else
		c->ack_after = n >> 1 < c->cfg.window >> 2 ? n >> 1 : c->cfg.window >> 2;
}

void chan_set_mtu(struct chan *c, size_t mtu)
{
	size_t most = c->cfg.kept ? c->cfg.kept_stride - 16 : mtu;

	c->cfg.mtu = mtu < FAB_MTU ? FAB_MTU : mtu > most ? most : mtu;
	set_inflight(c);
}

void chan_set_lossless(struct chan *c, int on, uint64_t now)
{
	c->cfg.lossless = on;
	c->tmpl_ok = 0;
	set_inflight(c);
	/*
	 * Frames already sent keep a timer that resends them: on a lossless
	 * link the quiet timer (the rto timer there resends only what the NIC
	 * refused), on a lossy one the rto timer.  A frame the peer dropped
	 * before it bound us is one of them.
	 */
	if (c->snd_una == c->snd_nxt || c->dead)
		return;
	if (on && !c->quiet_deadline)
		quiet_arm(c, now);
	else if (!on && !c->rto_deadline)
		c->rto_deadline = now + c->rto;
}

void chan_resume(struct chan *c, uint64_t now)
{
	uint32_t before = c->dlv_nxt;

	if (c->dead)
		return;
	c->blocked = 0;
	deliver(c);
	/* The window moved: tell the sender, which may be waiting on it. */
	if (c->dlv_nxt != before)
		send_ctl(c, FAB_ACK, now);
}

static void declare_dead(struct chan *c)
{
	c->dead = 1;
	chan_release(c);
}

uint64_t chan_next_deadline(const struct chan *c)
{
	uint64_t next = 0;

	if (c->dead)
		return 0;
	if (c->rto_deadline && (!next || c->rto_deadline < next))
		next = c->rto_deadline;
	if (c->probe_deadline && (!next || c->probe_deadline < next))
		next = c->probe_deadline;
	if (c->quiet_deadline && (!next || c->quiet_deadline < next))
		next = c->quiet_deadline;
	return next;
}

void chan_flush_ack(struct chan *c, uint64_t now)
{
	if (c->ack_pending && !c->dead)
		send_ctl(c, FAB_ACK, now);
}

uint64_t chan_timer(struct chan *c, uint64_t now)
{
	if (c->dead)
		return 0;
	if ((c->snd_una != c->snd_nxt) && now - c->last_heard > c->cfg.dead_ns) {
		declare_dead(c);
		return 0;
	}
	if (c->ack_pending && now >= c->ack_deadline)
		send_ctl(c, FAB_ACK, now);
	if (c->rto_deadline && now >= c->rto_deadline && c->cfg.lossless) {
		/* Lossless: what the NIC refused, again (tx_data re-arms if it refuses again). */
		c->stats.rto_events++;
		c->rto_deadline = 0;
		for (uint32_t s = c->snd_una; s != c->snd_nxt && seq_lt(s, c->snd_limit); s++) {
			struct chan_tx_slot *t = TXSLOT(c, s);
			if (t->tries > 0 && t->refused) {
				c->stats.tx_retx_timeout++;
				tx_data(c, s, now);
			}
		}
	} else if (c->rto_deadline && now >= c->rto_deadline) {
		/* Resend the oldest frame still missing that was ever sent. */
		c->stats.rto_events++;
		for (uint32_t s = c->snd_una; s != c->snd_nxt && seq_lt(s, c->snd_limit); s++) {
			struct chan_tx_slot *t = TXSLOT(c, s);
			if (t->tries > 0 && !t->sacked) {
				c->stats.tx_retx_timeout++;
				tx_data(c, s, now);
				break;
			}
		}
		c->rto *= 2;
		if (c->rto > c->cfg.rto_max_ns)
			c->rto = c->cfg.rto_max_ns;
		c->backed_off = 1;
		c->rto_deadline = c->snd_una != c->snd_nxt ? now + c->rto : 0;
	}
	if (c->quiet_deadline && now >= c->quiet_deadline) {
		/*
		 * Lossless, and nothing acknowledged for a while: the oldest
		 * frame outstanding was lost in the link, or its ack was.  Sent
		 * again: the peer takes it, or counts a duplicate and acks.
		 */
		c->quiet_deadline = 0;
		if (c->snd_una != c->snd_nxt && TXSLOT(c, c->snd_una)->tries > 0) {
			c->stats.rto_events++;
			c->stats.tx_retx_timeout++;
			uint64_t interval = c->quiet_interval;
			tx_data(c, c->snd_una, now);
			c->quiet_interval = interval * 2 > c->cfg.rto_max_ns ? c->cfg.rto_max_ns : interval * 2;
			c->quiet_deadline = now + c->quiet_interval;
		}
	}
	if (c->probe_deadline && now >= c->probe_deadline) {
		send_ctl(c, FAB_PROBE, now);
		c->probe_interval *= 2;
		if (c->probe_interval > c->cfg.rto_max_ns)
			c->probe_interval = c->cfg.rto_max_ns;
		c->probe_deadline = now + c->probe_interval;
	}
	uint64_t next = chan_next_deadline(c);
	if (c->ack_pending && (!next || c->ack_deadline < next))
		next = c->ack_deadline;
	return next;
}
