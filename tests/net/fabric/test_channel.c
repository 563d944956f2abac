/*
 * Host unit tests of the reliable channel (net/fabric/channel.c) over a fake
 * link that drops, duplicates, reorders and corrupts frames, with a
 * virtual clock.  Every test checks exactly-once, in-order delivery.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/host/unit.h"

#include "net/fabric/channel.h"
#include "net/fabric/wire.h"
#include "tests/host/host_rnd.h"

int host_pkt_live(void);

#define MS 1000000ULL
#define US 1000ULL

/* --- the fake link ---------------------------------------------------- */

struct wire_frame {
	struct pktbuf *pb;	/* a private copy of what was sent */
	uint64_t at;		/* arrival time */
	int to;			/* 0 = A, 1 = B */
};

#define WIRE_MAX 20000

struct link {
	double drop, dup, reorder, corrupt;
	int cut;			/* nothing gets through */
	int drop_acks_to;		/* drop ACK/PROBE frames going to this side (-1 none) */
	int refuse_every;		/* the NIC refuses every n-th data frame (0 never) */
	uint64_t refused, nocrc_frames, crc_frames;
	int lossless_rx;		/* receivers take frames without a CRC */
	int in_place;			/* every other frame arrives in place (pb NULL) */
	uint64_t delivered;
	int keyed;			/* frames sealed; receivers check tag and window */
	struct fab_seal seal[2];	/* side i's sending half */
	struct fab_unseal unseal[2];	/* side i's receiving half */
	uint64_t bad_mac, replays;
	double replay_late;		/* a copy arrives again 20 ms later (a recording) */
	int fifo;			/* due frames arrive in the order they were sent */
	uint64_t latency;
	struct wire_frame q[WIRE_MAX];
	int n;
	uint64_t sent[2], frames_beyond_limit;
	struct fab_hdr last_data;	/* the header of the last data frame sent */
};

struct side {
	struct chan ch;
	int id;
	struct link *link;
	uint64_t *now;
	/* receiver checks */
	uint32_t next_expected;
	uint64_t got, bad_order;
	int busy_mode;			/* 1: refuse everything */
	double busy_rate;		/* refuse at random */
	uint32_t max_limit_seen;	/* the largest limit this side advertised */
};

static uint64_t clock_ns;
static unsigned rng = 12345;

static double rnd(void)
{
	return host_rnd_unit(&rng);
}

static struct side sides[2];
static struct link link;

static void wire_push(int to, struct pktbuf *src, uint64_t delay)
{
	if (link.n >= WIRE_MAX)
		return;
	struct pktbuf *c = pkt_get();
	memcpy(c->data, src->data, src->len);
	c->len = src->len;
	link.q[link.n].pb = c;
	link.q[link.n].at = clock_ns + delay;
	link.q[link.n].to = to;
	link.n++;
}

static int xmit(void *ctx, struct pktbuf *pb)
{
	struct side *s = ctx;
	int to = 1 - s->id;
	struct fab_hdr h;

	memcpy(&h, pb->data + FAB_ETH_HLEN, sizeof h);
	if (h.type == FAB_DATA && link.refuse_every && ++link.refused % link.refuse_every == 0)
		return -EAGAIN;		/* the ring is full: nothing went */
	link.sent[s->id]++;
	if (h.type == FAB_DATA)
		link.last_data = h;
	if (h.flags & FAB_F_NOCRC)
		link.nocrc_frames++;
	else
		link.crc_frames++;
	/* Credit check on the wire: a data frame beyond what the peer granted. */
	if (h.type == FAB_DATA && !seq_lt(h.seq, sides[to].max_limit_seen))
		link.frames_beyond_limit++;
	if (link.cut)
		return 0;
	if ((h.type == FAB_ACK || h.type == FAB_PROBE) && link.drop_acks_to == to)
		return 0;
	if (rnd() < link.drop)
		return 0;
	uint64_t delay = link.latency;
	if (rnd() < link.reorder)
		delay += (uint64_t)(rnd() * 5 * link.latency) + 1;
	wire_push(to, pb, delay);
	if (rnd() < link.corrupt) {
		struct wire_frame *w = &link.q[link.n - 1];
		size_t off = FAB_ETH_HLEN + (size_t)(rnd() * (w->pb->len - FAB_ETH_HLEN));
		w->pb->data[off] ^= (uint8_t)(1u << (int)(rnd() * 8));
	}
	if (rnd() < link.dup)
		wire_push(to, pb, delay + (uint64_t)(rnd() * 3 * link.latency));
	if (rnd() < link.replay_late)
		wire_push(to, pb, delay + 20 * MS);
	return 0;
}

static int deliver(void *ctx, int peer, uint8_t proto, const uint8_t *p, size_t len,
		   struct pktbuf *pb)
{
	struct side *s = ctx;
	uint32_t v;

	(void)peer;
	(void)pb;
	if (s->busy_mode || (s->busy_rate > 0 && rnd() < s->busy_rate))
		return -EBUSY;
	assert_int_equal(proto, 7);
	assert_true(len >= 4);
	memcpy(&v, p, 4);
	/* The rest of the payload is a pattern of v: catches corruption. */
	for (size_t i = 4; i < len; i++)
		assert_int_equal(p[i], (uint8_t)(v + i));
	if (v != s->next_expected)
		s->bad_order++;
	s->next_expected = v + 1;
	s->got++;
	return 0;
}

static struct pktbuf *alloc(void *ctx, size_t len)
{
	(void)ctx;
	return pkt_get_len(len);
}

/*
 * The shared-memory link's ring to the peer as a channel kept by reference
 * sees it (cfg.by_ref): RSLOTS slots, a frame's slot never written while
 * it is pinned, pins let go oldest first (drivers/ivshmem.c).
 */
#define RSLOTS 8		/* fewer than the window: the pins fill the ring */
static struct ring_model {
	uint8_t slot[RSLOTS][PKT_BUF_SIZE];
	uint32_t tail;
	uint32_t pin[RSLOTS];
	unsigned first, n;
	uint64_t pinned, unpinned;
} rings[2];

static void unpin(void *ctx, const uint8_t peer_mac[6], unsigned n)
{
	struct side *s = ctx;
	struct ring_model *r = &rings[s->id];

	assert_int_equal(peer_mac[0], 2 - s->id);	/* the peer's MAC (setup_pair) */
	assert_true(n <= r->n);
	r->first = (r->first + n) % RSLOTS;
	r->n -= n;
	r->unpinned += n;
}

static const struct chan_ops ops = { xmit, deliver, alloc, unpin };
static int setup_by_ref;		/* the next setup_pair's channels keep long frames in their slots */

#define KEPT_STRIDE ((FAB_MTU + 16 + 15) & ~15)
static uint8_t kept[2][CHAN_WIN_MAX * KEPT_STRIDE];

static void setup_pair(unsigned window)
{
	memset(sides, 0, sizeof sides);
	memset(&link, 0, sizeof link);
	link.latency = 50 * US;
	link.drop_acks_to = -1;
	clock_ns = 1 * MS;
	for (int i = 0; i < 2; i++) {
		struct chan_cfg cfg = {
			.me = i, .peer = 1 - i, .session = (uint16_t)(100 + i), .window = window,
			.rto_init_ns = 5 * MS, .rto_min_ns = 1 * MS, .rto_max_ns = 200 * MS,
			.ack_delay_ns = 100 * US, .dead_ns = 2000 * MS, .kept = kept[i],
			.by_ref = setup_by_ref,
		};
		memset(cfg.my_mac, i + 1, 6);
		memset(cfg.peer_mac, 2 - i, 6);
		sides[i].id = i;
		chan_init(&sides[i].ch, &cfg, &ops, &sides[i]);
		sides[i].max_limit_seen = window;
	}
}

/* Deliver due frames and run due timers; advance the clock by step. */
static void pump(uint64_t step)
{
	clock_ns += step;
	for (int i = 0; i < link.n;) {
		struct wire_frame w = link.q[i];
		if (w.at > clock_ns) {
			i++;
			continue;
		}
		if (link.fifo)
			memmove(&link.q[i], &link.q[i + 1], (size_t)(--link.n - i) * sizeof link.q[0]);
		else
			link.q[i] = link.q[--link.n];
		struct fab_hdr h;
		const uint8_t *payload;
		if (w.pb->len > FAB_ETH_HLEN + 1 && w.pb->data[FAB_ETH_HLEN + 1] == FAB_MCAST) {
			/* A group's frame: the entry naming this side, as rx.c takes it (the frame stays ours). */
			if (fab_parse_mcast(w.pb->data, w.pb->len, w.to, 2, &h, &payload) == FAB_OK)
				assert_int_equal(chan_input(&sides[w.to].ch, &h, payload, NULL, clock_ns), 0);
			pkt_put(w.pb);
			continue;
		}
		if (fab_parse_link(w.pb->data, w.pb->len, w.to, 2, link.lossless_rx, link.keyed, &h,
				   &payload) != FAB_OK) {
			pkt_put(w.pb);
			continue;
		}
		if (link.keyed) {
			enum fab_err e = fab_unseal(&link.unseal[w.to], w.pb->data, &h, 1);
			if (e != FAB_OK) {
				link.bad_mac += e == FAB_E_MAC;
				link.replays += e == FAB_E_REPLAY;
				pkt_put(w.pb);
				continue;
			}
		}
		if (link.in_place && link.delivered++ % 2) {
			/* As the shared-memory link hands frames up: in place, valid until the call returns. */
			static uint8_t frame[PKT_BUF_SIZE];
			size_t off = (size_t)(payload - w.pb->data);
			memcpy(frame, w.pb->data, w.pb->len);
			pkt_put(w.pb);
			assert_int_equal(chan_input(&sides[w.to].ch, &h, frame + off, NULL, clock_ns), 0);
			memset(frame, 0xa5, sizeof frame);	/* gone: whatever was kept is a copy */
			continue;
		}
		chan_input(&sides[w.to].ch, &h, payload, w.pb, clock_ns);
	}
	for (int i = 0; i < 2; i++) {
		chan_timer(&sides[i].ch, clock_ns);
		uint32_t lim = sides[i].ch.limit_sent;
		if (seq_lt(sides[i].max_limit_seen, lim))
			sides[i].max_limit_seen = lim;
	}
}

/* Message v's len bytes of payload at p: v, then a pattern of v (deliver() checks it). */
static void fill(uint8_t *p, uint32_t v, size_t len)
{
	memcpy(p, &v, 4);
	for (size_t i = 4; i < len; i++)
		p[i] = (uint8_t)(v + i);
}

static int send_one(int from, uint32_t v, size_t len)
{
	struct pktbuf *pb = pkt_get();

	fill(pb->data + CHAN_PAYLOAD_OFF, v, len);
	int r = chan_send(&sides[from].ch, pb, 7, len, 0, clock_ns);
	if (r < 0)
		pkt_put(pb);
	return r;
}

/* Stream n messages each way, as fast as the window allows. */
static void stream(uint32_t n, uint64_t max_ns)
{
	uint32_t sent[2] = { 0, 0 };
	uint64_t end = clock_ns + max_ns;

	while ((sides[0].got < n || sides[1].got < n) && clock_ns < end) {
		for (int from = 0; from < 2; from++) {
			while (sent[from] < n && chan_space(&sides[from].ch) > 0) {
				size_t len = 4 + (sent[from] * 37) % (FAB_MTU - 4);
				assert_int_equal(send_one(from, sent[from], len), 0);
				sent[from]++;
			}
		}
		pump(20 * US);
	}
}

static void finish(void)
{
	/* Let the last acks settle, then nothing may be left anywhere. */
	for (int i = 0; i < 2000 && (chan_outstanding(&sides[0].ch) || chan_outstanding(&sides[1].ch)); i++)
		pump(100 * US);
	for (int i = 0; i < 2; i++)
		chan_release(&sides[i].ch);
	for (int i = 0; i < link.n; i++)
		pkt_put(link.q[i].pb);
	link.n = 0;
	assert_int_equal(host_pkt_live(), 0);
}

/* Side i received want messages, none out of order. */
static void assert_arrived(int i, uint64_t want)
{
	assert_int_equal(sides[i].got, want);
	assert_int_equal(sides[i].bad_order, 0);
}

/* Each side received want messages, none out of order. */
static void assert_all_arrived(uint64_t want)
{
	for (int i = 0; i < 2; i++)
		assert_arrived(i, want);
}

/* Both ends' channels lossless (on 1) or not (on 0). */
static void set_lossless(int on)
{
	for (int i = 0; i < 2; i++)
		chan_set_lossless(&sides[i].ch, on, clock_ns);
}

/*
 * Both ends lossless over a fifo link that loses frames in it with
 * probability drop and hands every other frame up in place if in_place.
 */
static void setup_lossless_link(int in_place, double drop)
{
	link.lossless_rx = 1;
	link.fifo = 1;
	link.in_place = in_place;
	link.drop = drop;
	set_lossless(1);
}

/* The link drops, doubles, reorders and corrupts frames with these probabilities. */
static void set_faults(double drop, double dup, double reorder, double corrupt)
{
	link.drop = drop;
	link.dup = dup;
	link.reorder = reorder;
	link.corrupt = corrupt;
}

/* Side 0 sends messages *sent, *sent + 1 ... below max, of len bytes, while its channel has room. */
static void send_while_space(uint32_t *sent, uint32_t max, size_t len)
{
	while (*sent < max && chan_space(&sides[0].ch) > 0)
		assert_int_equal(send_one(0, (*sent)++, len), 0);
}

/*
 * A pair of the given window whose receiver (side 1) refuses every
 * message: side 0 sends 64-byte messages below max while its channel has
 * room, for rounds pumps of step each.  The number it sent.
 */
static uint32_t send_to_busy_receiver(unsigned window, int rounds, uint32_t max, uint64_t step)
{
	uint32_t sent = 0;

	setup_pair(window);
	sides[1].busy_mode = 1;
	for (int round = 0; round < rounds; round++) {
		send_while_space(&sent, max, 64);
		pump(step);
	}
	return sent;
}

/* Side 1 refuses and holds four messages from side 0, undelivered. */
static void hold_refused_frames(void)
{
	sides[1].busy_mode = 1;
	for (uint32_t v = 0; v < 4; v++)
		assert_int_equal(send_one(0, v, 64), 0);
	for (int i = 0; i < 20; i++)
		pump(100 * US);
	assert_true(sides[1].ch.rcv_nxt != sides[1].ch.dlv_nxt);
}

/* --- tests -------------------------------------------------------------- */

static void lossless_both_ways(void **state)
{
	(void)state;
	setup_pair(32);
	stream(5000, 60000 * MS);
	assert_all_arrived(5000);
	for (int i = 0; i < 2; i++)
		assert_int_equal(sides[i].ch.stats.tx_retx_timeout, 0);
	assert_int_equal(link.frames_beyond_limit, 0);
	finish();
}

/*
 * A lossless link (channel.h): no CRC on any frame, no retransmission but
 * of what the NIC refused, while every message still arrives once and in
 * order.
 */
static void lossless_mode_skips_crc_and_timers(void **state)
{
	(void)state;
	setup_pair(32);
	setup_lossless_link(0, 0);
	link.refuse_every = 50;
	stream(5000, 60000 * MS);
	assert_all_arrived(5000);
	uint64_t retx = 0;
	for (int i = 0; i < 2; i++) {
		assert_int_equal(sides[i].ch.stats.rx_dup, 0);
		retx += sides[i].ch.stats.tx_retx_timeout + sides[i].ch.stats.tx_retx_sack;
	}
	assert_int_equal(link.crc_frames, 0);
	assert_true(link.nocrc_frames >= 10000);
	/* Every refused frame went again, and nothing else did. */
	assert_true(link.refused / 50 > 0);
	assert_int_equal(retx, link.refused / 50);
	finish();
}

/*
 * 3000 messages each way on a lossless pair: built in place in the NIC's
 * slot (a buffer the wire copies, as the ring's consumer would) whenever
 * the channel allows it, queued otherwise; a frame built in place is lost
 * in the link (its slot damaged before it was read) with probability lose.
 * The protocols take again what they refused, as the fabric offers it at
 * its tick.
 */
static void stream_lossless(double lose, uint64_t *in_place, uint64_t *lost)
{
	uint32_t sent[2] = { 0, 0 };

	while ((sides[0].got < 3000 || sides[1].got < 3000) && clock_ns < 60000 * MS) {
		for (int from = 0; from < 2; from++) {
			while (sent[from] < 3000 && chan_space(&sides[from].ch) > 0) {
				struct chan *c = &sides[from].ch;
				size_t len = 4 + (sent[from] * 37) % 200;
				if (!chan_can_send_in_place(c)) {
					assert_int_equal(send_one(from, sent[from]++, len), 0);
					continue;
				}
				struct pktbuf *pb = pkt_get();
				fill(pb->data + CHAN_PAYLOAD_OFF, sent[from]++, len);
				pb->len = (uint16_t)chan_send_in_place(c, pb->data, 7, len, 0, clock_ns);
				assert_int_equal(pb->len, CHAN_PAYLOAD_OFF + len);
				if (lose > 0 && rnd() < lose)
					++*lost;
				else
					wire_push(1 - from, pb, link.latency);
				pkt_put(pb);
				++*in_place;
			}
		}
		pump(20 * US);
		for (int i = 0; i < 2; i++)
			if (sides[i].ch.blocked)
				chan_resume(&sides[i].ch, clock_ns);
	}
}

/*
 * Messages built in place in the NIC's slot (chan_send_in_place) whenever
 * the channel allows it, queued otherwise (behind a frame the NIC refused,
 * beyond the peer's credit), and every other frame handed up in place to
 * receivers that refuse one message in ten for now: every message arrives
 * once and in order, and no buffer is left anywhere.
 */
static void lossless_in_place_mixes_with_queued_sends(void **state)
{
	uint64_t in_place = 0;

	(void)state;
	setup_pair(16);
	setup_lossless_link(1, 0);
	link.refuse_every = 13;
	for (int i = 0; i < 2; i++)
		sides[i].busy_rate = 0.1;
	stream_lossless(0, &in_place, NULL);
	assert_all_arrived(3000);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(sides[i].ch.stats.rx_dup, 0);
		assert_true(sides[i].ch.stats.busy_refusals > 0);
	}
	assert_true(in_place > 1000);
	assert_true(link.refused / 13 > 0);
	assert_int_equal(link.frames_beyond_limit, 0);
	finish();
}

/* Every one of want messages arrived at each end, in order, some by a resend. */
static void assert_all_arrived_resent(uint32_t want)
{
	assert_all_arrived(want);
	for (int i = 0; i < 2; i++)
		assert_true(sides[i].ch.stats.tx_retx_sack + sides[i].ch.stats.tx_retx_timeout > 0);
}

/*
 * A lossless link whose memory others can write: frames lost in the link
 * (in place or queued), and acks too.  Every message still arrives once
 * and in order, filled by the SACK at once where a later frame shows the
 * hole and by the quiet timer where none does (the last frame lost).
 */
static void lossless_link_recovers_frames_lost_in_the_link(void **state)
{
	uint64_t in_place = 0, lost_in_place = 0;

	(void)state;
	setup_pair(16);
	setup_lossless_link(1, 0.02);
	stream_lossless(0.02, &in_place, &lost_in_place);
	assert_all_arrived_resent(3000);
	assert_true(in_place > 500);
	assert_true(lost_in_place > 0);
	finish();
}

/*
 * Frames longer than CHAN_PIN_MIN sent in place on a link that keeps its
 * slots as written until let go (cfg.by_ref): each stays pinned in its
 * slot, never copied, until acknowledged; a frame lost in the link goes
 * again from its slot (the kept area holds other bytes: a resend from it
 * would fail the receiver's pattern check).  Every message arrives once
 * and in order, every pin is let go once, and a reset lets go of the
 * pins of frames never acknowledged.
 */
static void lossless_by_reference_resends_from_the_slot(void **state)
{
	uint32_t sent[2] = { 0, 0 };
	uint64_t in_place = 0, lost = 0, ring_full = 0;

	(void)state;
	setup_by_ref = 1;
	setup_pair(16);
	setup_by_ref = 0;
	memset(rings, 0, sizeof rings);
	memset(kept, 0xee, sizeof kept);
	setup_lossless_link(1, 0.02);
	while ((sides[0].got < 2000 || sides[1].got < 2000) && clock_ns < 60000 * MS) {
		for (int from = 0; from < 2; from++) {
			struct chan *c = &sides[from].ch;
			struct ring_model *r = &rings[from];
			while (sent[from] < 2000 && chan_space(c) > 0) {
				size_t len = CHAN_PIN_MIN + 1 + (sent[from] * 37) % (FAB_MTU - CHAN_PIN_MIN);
				int full = r->n && r->tail - r->pin[r->first] >= RSLOTS;
				ring_full += full;
				if (!chan_can_send_in_place(c) || full) {
					assert_int_equal(send_one(from, sent[from]++, len), 0);
					continue;
				}
				uint8_t *frame = r->slot[r->tail % RSLOTS];
				fill(frame + CHAN_PAYLOAD_OFF, sent[from]++, len);
				assert_true(chan_pins(c, len));
				size_t n = chan_send_in_place(c, frame, 7, len, 0, clock_ns);
				r->pin[(r->first + r->n) % RSLOTS] = r->tail++;
				r->n++;
				r->pinned++;
				in_place++;
				if (rnd() < 0.02) {
					lost++;		/* its slot damaged before the peer read it */
					continue;
				}
				struct pktbuf *pb = pkt_get();
				memcpy(pb->data, frame, n);
				pb->len = (uint16_t)n;
				wire_push(1 - from, pb, link.latency);
				pkt_put(pb);
			}
		}
		pump(20 * US);
		for (int i = 0; i < 2; i++)
			if (sides[i].ch.blocked)
				chan_resume(&sides[i].ch, clock_ns);
	}
	assert_all_arrived_resent(2000);
	assert_true(in_place > 500);
	assert_true(lost > 0);
	assert_true(ring_full > 0);		/* the pins held the ring: slots were never overwritten */
	for (int i = 0; i < 2; i++) {
		for (int k = 0; k < 100; k++)
			pump(1 * MS);		/* the last acknowledgements */
		assert_int_equal(rings[i].n, 0);
		assert_true(rings[i].pinned > 0);
		assert_true(rings[i].pinned == rings[i].unpinned);
	}
	/* No long frame was copied to kept. */
	for (size_t k = 0; k < sizeof kept; k++)
		assert_int_equal(((uint8_t *)kept)[k], 0xee);
	/* Frames pinned and never acknowledged: a reset lets them go. */
	struct ring_model *r = &rings[0];
	for (int k = 0; k < 3; k++) {
		size_t len = CHAN_PIN_MIN + 100;
		uint8_t *frame = r->slot[r->tail % RSLOTS];
		assert_true(chan_can_send_in_place(&sides[0].ch));
		fill(frame + CHAN_PAYLOAD_OFF, 5000 + (uint32_t)k, len);
		chan_send_in_place(&sides[0].ch, frame, 7, len, 0, clock_ns);
		r->pin[(r->first + r->n) % RSLOTS] = r->tail++;
		r->n++;
		r->pinned++;
	}
	assert_int_equal(r->n, 3);
	uint8_t mac[6];
	memset(mac, 2, 6);
	chan_reset(&sides[0].ch, 300, mac);
	assert_int_equal(r->n, 0);
	assert_true(r->pinned == r->unpinned);
	finish();
}

/*
 * A frame sent before the link turned lossless, and lost (the peer had not
 * bound us yet and dropped it): the lossless mode's quiet timer resends it.
 * Before, the rto timer it was sent under resent only what the NIC refused
 * once the mode changed, and the peer was declared dead with the frame
 * never sent again.
 */
static void frame_lost_before_lossless_is_resent(void **state)
{
	(void)state;
	setup_pair(16);
	link.fifo = 1;
	link.cut = 1;
	assert_int_equal(send_one(0, 0, 64), 0);
	pump(20 * US);
	link.cut = 0;
	link.lossless_rx = 1;
	set_lossless(1);
	for (int i = 0; i < 50000 && sides[1].got == 0; i++)
		pump(20 * US);
	assert_arrived(1, 1);
	assert_false(sides[0].ch.dead);
	assert_int_equal(sides[0].ch.stats.tx_retx_timeout, 1);
	finish();
}

/*
 * Acknowledgements for credit only: a one-way stream is acknowledged every
 * half window instead of every quarter (delayed acks set long, so that the
 * window decides).
 */
static uint64_t acks_for(int lossless)
{
	uint32_t sent = 0;

	setup_pair(32);
	link.lossless_rx = lossless;
	link.fifo = 1;
	for (int i = 0; i < 2; i++)
		sides[i].ch.cfg.ack_delay_ns = 50 * MS;
	set_lossless(lossless);
	while (sides[1].got < 3000 && clock_ns < 60000 * MS) {
		send_while_space(&sent, 3000, 64);
		pump(20 * US);
	}
	assert_arrived(1, 3000);
	assert_int_equal(lossless ? link.crc_frames : link.nocrc_frames, 0);
	uint64_t acks = sides[1].ch.stats.tx_ack;
	finish();
	return acks;
}

static void lossless_mode_acks_for_credit(void **state)
{
	(void)state;
	uint64_t lossy = acks_for(0), lossless = acks_for(1);
	assert_true(lossless > 0 && lossless * 4 <= lossy * 3);
}

static void lossy_link_delivers_exactly_once_in_order(void **state)
{
	(void)state;
	setup_pair(32);
	set_faults(0.10, 0.05, 0.10, 0.02);
	stream(5000, 600000 * MS);
	assert_all_arrived(5000);
	for (int i = 0; i < 2; i++) {
		assert_true(sides[i].ch.stats.tx_retx_timeout + sides[i].ch.stats.tx_retx_sack > 0);
		assert_true(sides[i].ch.stats.rx_dup > 0);
	}
	finish();
}

/*
 * Keyed (the kernel's rx.c order: parse, tag and window, then the
 * channel): under the same faults, and with recorded frames replayed long
 * after, every message arrives once and in order; corrupted frames fail
 * the tag and every copy is refused by the window before the channel
 * sees it (what the channel still counts as duplicates are its own
 * retransmissions, each sealed anew).
 */
static void keyed_link_refuses_replays_and_delivers_exactly_once(void **state)
{
	struct sipkey k;

	(void)state;
	setup_pair(32);
	link.keyed = 1;
	fab_key_from_text(&k, "a-cluster-key-for-tests", NULL);
	for (int i = 0; i < 2; i++) {
		fab_pair_key(&link.seal[i].key, &k, i, 0x100 + (uint64_t)i, 1 - i, 0x101 - (uint64_t)i);
		fab_pair_key(&link.unseal[i].key, &k, 1 - i, 0x101 - (uint64_t)i, i, 0x100 + (uint64_t)i);
		sides[i].ch.cfg.seal = &link.seal[i];
	}
	set_faults(0.05, 0.05, 0.05, 0.02);
	link.replay_late = 0.05;
	stream(3000, 600000 * MS);
	assert_all_arrived(3000);
	assert_true(link.replays > 100);
	assert_true(link.bad_mac > 10);
	finish();
}

static void sack_refills_a_single_hole_before_timeout(void **state)
{
	(void)state;
	setup_pair(32);
	/* Send 10; the wire loses exactly the third. */
	for (uint32_t v = 0; v < 10; v++) {
		assert_int_equal(send_one(0, v, 100), 0);
		if (v == 2) {
			pkt_put(link.q[link.n - 1].pb);
			link.n--;
		}
	}
	/* Long enough for a SACK round trip, well short of the 5 ms RTO. */
	for (int i = 0; i < 40; i++)
		pump(50 * US);
	assert_arrived(1, 10);
	assert_true(sides[0].ch.stats.tx_retx_sack >= 1);
	assert_int_equal(sides[0].ch.stats.tx_retx_timeout, 0);
	finish();
}

/*
 * The tail of a burst lost (a switch dropped what it had queued for a busy
 * port): no later frame SACKs it, so the rto timer resends the oldest, and
 * when that is acknowledged the rest goes at once.  Before, each of the
 * lost frames came back one doubled timeout after the one before: 1, 2,
 * 4 ... 200 ms, 0.65 s for ten frames here, and seconds on a node.
 */
static void lost_tail_comes_back_after_one_timeout(void **state)
{
	(void)state;
	setup_pair(32);
	link.fifo = 1;
	/* A round trip measured first, as a running node has one. */
	for (uint32_t v = 0; v < 6; v++) {
		assert_int_equal(send_one(0, v, 200), 0);
		for (int i = 0; i < 20 && sides[1].got <= v; i++)
			pump(20 * US);
	}
	for (int i = 0; i < 100 && chan_outstanding(&sides[0].ch); i++)
		pump(20 * US);
	assert_int_equal(sides[1].got, 6);
	link.cut = 1;
	for (uint32_t v = 6; v < 16; v++)
		assert_int_equal(send_one(0, v, 200), 0);
	link.cut = 0;
	uint64_t t0 = clock_ns;
	for (int i = 0; i < 100000 && sides[1].got < 16; i++)
		pump(20 * US);
	assert_arrived(1, 16);
	/* One timeout (at least rto_min, 1 ms) and a few round trips of 100 us. */
	assert_true(clock_ns - t0 < 10 * MS);
	assert_int_equal(sides[0].ch.backed_off, 0);
	assert_true(sides[0].ch.rto < 5 * MS);
	finish();
}

static void busy_receiver_stops_the_sender_without_loss(void **state)
{
	(void)state;
	/* The sender fills the receiver's window and then must stop. */
	uint32_t sent = send_to_busy_receiver(16, 200, UINT32_MAX, 100 * US);
	assert_int_equal(sides[1].got, 0);
	assert_true(sides[1].ch.stats.busy_refusals > 0);
	/* At most a window's worth crossed the wire beyond what was delivered. */
	assert_int_equal(link.frames_beyond_limit, 0);
	assert_int_equal(chan_space(&sides[0].ch), 0);
	/* Open up: everything arrives, in order, exactly once. */
	sides[1].busy_mode = 0;
	chan_resume(&sides[1].ch, clock_ns);
	for (int round = 0; round < 2000 && sides[1].got < sent; round++)
		pump(100 * US);
	assert_arrived(1, sent);
	finish();
}

static void lost_window_update_is_recovered_by_probes(void **state)
{
	(void)state;
	uint32_t sent = send_to_busy_receiver(8, 50, 40, 200 * US);
	/* The receiver opens, but its window update is lost. */
	link.drop_acks_to = 0;
	sides[1].busy_mode = 0;
	chan_resume(&sides[1].ch, clock_ns);
	pump(10 * US);
	link.drop_acks_to = -1;
	for (int round = 0; round < 20000 && sides[1].got < 40; round++) {
		send_while_space(&sent, 40, 64);
		pump(200 * US);
	}
	assert_int_equal(sides[1].got, 40);
	assert_true(sides[0].ch.stats.tx_probe > 0);
	finish();
}

static void random_busy_receiver(void **state)
{
	(void)state;
	setup_pair(16);
	sides[1].busy_rate = 0.3;
	link.drop = 0.05;
	uint32_t sent = 0;
	for (int round = 0; round < 200000 && sides[1].got < 3000; round++) {
		send_while_space(&sent, 3000, 200);
		pump(50 * US);
		/* The protocol resumes a little later each time it refused. */
		if (sides[1].ch.blocked && round % 3 == 0)
			chan_resume(&sides[1].ch, clock_ns);
	}
	assert_arrived(1, 3000);
	finish();
}

static void silent_peer_is_declared_dead(void **state)
{
	(void)state;
	setup_pair(16);
	link.cut = 1;
	assert_int_equal(send_one(0, 0, 64), 0);
	uint64_t start = clock_ns;
	uint64_t prev_tx = link.sent[0], last_change = clock_ns;
	uint64_t gaps[16];
	int ngaps = 0;
	while (!sides[0].ch.dead && clock_ns - start < 10000 * MS) {
		pump(100 * US);
		if (link.sent[0] != prev_tx) {
			if (ngaps < 16)
				gaps[ngaps++] = clock_ns - last_change;
			last_change = clock_ns;
			prev_tx = link.sent[0];
		}
	}
	assert_true(sides[0].ch.dead);
	/* Dead no sooner than dead_ns and not much later. */
	assert_true(clock_ns - start >= 2000 * MS);
	assert_true(clock_ns - start <= 2500 * MS);
	/* Retransmissions back off: each gap at least the one before. */
	assert_true(ngaps >= 4);
	for (int i = 2; i < ngaps; i++)
		assert_true(gaps[i] + 200 * US >= gaps[i - 1]);
	assert_int_equal(send_one(0, 1, 64), -EHOSTDOWN);
	finish();
}

static void dead_peer_with_blocked_delivery(void **state)
{
	(void)state;
	setup_pair(8);
	/* The receiver holds frames it refused, then its peer goes silent. */
	hold_refused_frames();
	assert_true(sides[1].ch.blocked);
	/* B has data outstanding to A; A stops answering: B declares A dead. */
	assert_int_equal(send_one(1, 0, 64), 0);
	link.cut = 1;
	while (!sides[1].ch.dead)
		pump(10 * MS);
	/* Resuming a dead channel delivers nothing and touches nothing freed. */
	sides[1].busy_mode = 0;
	chan_resume(&sides[1].ch, clock_ns);
	assert_int_equal(sides[1].got, 0);
	assert_false(sides[1].ch.blocked);
	finish();
}

static void send_queue_limits(void **state)
{
	(void)state;
	setup_pair(4);
	link.cut = 1;
	/* Capacity is twice the window; blocking senders see half. */
	int ok = 0;
	while (send_one(0, (uint32_t)ok, 64) == 0)
		ok++;
	assert_int_equal(ok, 8);
	assert_int_equal(chan_space(&sides[0].ch), 0);
	struct pktbuf *pb = pkt_get();
	assert_int_equal(chan_send(&sides[0].ch, pb, 7, FAB_MTU + 1, 0, clock_ns), -EMSGSIZE);
	pkt_put(pb);
	finish();
}

/* The header comes from what chan_send was given: protocol, length, and the ask for an ack at once. */
static void header_from_the_send(void **state)
{
	struct pktbuf *pb;

	uint32_t first = 0;

	(void)state;
	setup_pair(8);
	link.cut = 1;
	for (int acknow = 1; acknow >= 0; acknow--) {
		pb = pkt_get();
		fill(pb->data + CHAN_PAYLOAD_OFF, 5, 20 + (size_t)acknow);
		/* Header bytes of the buffer as the caller left them: the channel writes them itself. */
		memset(pb->data, 0xee, CHAN_PAYLOAD_OFF);
		assert_int_equal(chan_send(&sides[0].ch, pb, 7, 20 + (size_t)acknow, acknow, clock_ns), 0);
		assert_int_equal(link.last_data.type, FAB_DATA);
		assert_int_equal(link.last_data.proto, 7);
		assert_int_equal(link.last_data.len, 20 + acknow);
		assert_int_equal((link.last_data.flags & FAB_F_ACKNOW) != 0, acknow);
		if (acknow)
			first = link.last_data.seq;
	}
	/* The first sent again after a timeout (nothing came back), from its slot: the same header. */
	memset(&link.last_data, 0, sizeof link.last_data);
	for (int i = 0; i < 100 && link.last_data.type != FAB_DATA; i++)
		pump(1 * MS);
	assert_int_equal(link.last_data.seq, first);
	assert_int_equal(link.last_data.proto, 7);
	assert_int_equal(link.last_data.len, 21);
	assert_int_equal((link.last_data.flags & FAB_F_ACKNOW) != 0, 1);
	link.cut = 0;
	finish();
}

static void wraps_sequence_numbers(void **state)
{
	(void)state;
	setup_pair(16);
	/* Start both directions just below 2^32. */
	for (int i = 0; i < 2; i++) {
		struct chan *c = &sides[i].ch;
		c->snd_una = c->snd_nxt = c->snd_tx = 0xffffff00u;
		c->snd_limit = c->snd_una + 16;
		c->rcv_nxt = c->dlv_nxt = 0xffffff00u;
		c->limit_sent = c->dlv_nxt + 16;
		sides[i].max_limit_seen = c->limit_sent;
	}
	link.drop = 0.05;
	stream(1000, 600000 * MS);
	assert_int_equal(sides[0].got, 1000);
	assert_arrived(1, 1000);
	assert_true(seq_lt(0xffffff00u, sides[1].ch.rcv_nxt) == 0 || sides[1].ch.rcv_nxt < 0x1000);
	finish();
}

/*
 * A peer rebooted: the channel to it is reset.  Frames queued for the old
 * incarnation, frames held for delivery from it and death are gone; the
 * new channel starts at sequence 0 with the new tag, and streams as a new
 * one does.
 */
static void reset_starts_a_fresh_channel(void **state)
{
	uint8_t mac[6] = { 9, 9, 9, 9, 9, 9 };

	(void)state;
	setup_pair(8);
	/* B holds frames it refused; A has frames outstanding; then A declares B dead. */
	hold_refused_frames();
	link.cut = 1;
	assert_int_equal(send_one(0, 4, 64), 0);
	while (!sides[0].ch.dead)
		pump(10 * MS);
	assert_int_equal(send_one(0, 5, 64), -EHOSTDOWN);
	/* Drop what is on the wire: it belonged to the old pair. */
	for (int i = 0; i < link.n; i++)
		pkt_put(link.q[i].pb);
	link.n = 0;
	link.cut = 0;
	sides[1].busy_mode = 0;
	chan_reset(&sides[0].ch, 555, mac);
	chan_reset(&sides[1].ch, 556, mac);
	assert_false(sides[0].ch.dead);
	assert_false(sides[1].ch.blocked);
	assert_int_equal(chan_outstanding(&sides[0].ch), 0);
	assert_int_equal(sides[0].ch.snd_nxt, 0);
	assert_int_equal(sides[1].ch.rcv_nxt, 0);
	assert_int_equal(sides[1].ch.cfg.window, 8);
	/* Only the buffers of nothing: everything the old channel held was freed. */
	assert_int_equal(host_pkt_live(), 0);
	/* Nothing old reached B's protocol; the new channel carries the new tag. */
	assert_int_equal(sides[1].got, 0);
	sides[1].next_expected = 0;
	assert_int_equal(send_one(0, 0, 64), 0);
	assert_int_equal(link.n, 1);
	struct fab_hdr h;
	memcpy(&h, link.q[0].pb->data + FAB_ETH_HLEN, sizeof h);
	assert_int_equal(h.session, 555);
	assert_int_equal(h.seq, 0);
	assert_memory_equal(link.q[0].pb->data, mac, 6);
	for (int i = 0; i < 50; i++)
		pump(100 * US);
	assert_int_equal(sides[1].got, 1);
	sides[0].next_expected = 0;
	sides[1].next_expected = 0;
	sides[0].got = sides[1].got = 0;
	stream(200, 60000 * MS);
	assert_arrived(1, 200);
	assert_int_equal(sides[0].got, 200);
	finish();
}

/*
 * Messages in group frames (chan_send_shared, wire.h FAB_MCAST), over a
 * link that drops, doubles, reorders and corrupts: each arrives once and
 * in order; those the link lost went again as DATA frames to this peer
 * alone; and once all are acknowledged no reference to a group frame is
 * left (host_pkt_live).
 */
static void shared_frames_arrive_once_and_in_order(void **state)
{
	static const uint8_t mac[6] = { 1, 1, 1, 1, 1, 1 };
	uint32_t sent = 0, group_frames = 0;

	(void)state;
	setup_pair(16);
	set_faults(0.1, 0.05, 0.05, 0.02);
	while (sides[1].got < 2000 && clock_ns < 60000 * MS) {
		while (sent < 2000 && chan_can_send_shared(&sides[0].ch)) {
			size_t len = 4 + (sent * 29) % 600;
			struct pktbuf *pb = pkt_get();
			struct fab_mcast_member m;
			uint8_t *msg = pb->data + FAB_MCAST_MSG_OFF(1);
			fill(msg, sent, len);
			chan_send_shared(&sides[0].ch, pb, msg, 7, len, &m, clock_ns);
			assert_int_equal(m.node, 1);
			assert_int_equal(m.session, 100);
			assert_int_equal(m.seq, sent);
			pb->len = (uint16_t)fab_build_mcast(pb->data, mac, 1u << 1, 0, 7, &m, 1, len);
			xmit(&sides[0], pb);
			pkt_put(pb);
			sent++;
			group_frames++;
		}
		/* A message sent the ordinary way between them: one sequence for both. */
		if (sent < 2000 && sent % 7 == 3 && chan_space(&sides[0].ch) > 0) {
			assert_int_equal(send_one(0, sent, 40), 0);
			sent++;
		}
		pump(20 * US);
	}
	assert_arrived(1, 2000);
	assert_true(group_frames > 1500);
	/* What the link lost went again, alone. */
	assert_true(sides[0].ch.stats.tx_retx_timeout + sides[0].ch.stats.tx_retx_sack > 0);
	assert_true(sides[1].ch.stats.rx_dup > 0);
	finish();
}

UNIT_MAIN("channel", NULL, NULL,
	  cmocka_unit_test(shared_frames_arrive_once_and_in_order),
	  cmocka_unit_test(lossless_both_ways),
	  cmocka_unit_test(lossless_mode_skips_crc_and_timers),
	  cmocka_unit_test(lossless_mode_acks_for_credit),
	  cmocka_unit_test(lossless_in_place_mixes_with_queued_sends),
	  cmocka_unit_test(lossless_link_recovers_frames_lost_in_the_link),
	  cmocka_unit_test(lossless_by_reference_resends_from_the_slot),
	  cmocka_unit_test(frame_lost_before_lossless_is_resent),
	  cmocka_unit_test(lossy_link_delivers_exactly_once_in_order),
	  cmocka_unit_test(keyed_link_refuses_replays_and_delivers_exactly_once),
	  cmocka_unit_test(sack_refills_a_single_hole_before_timeout),
	  cmocka_unit_test(lost_tail_comes_back_after_one_timeout),
	  cmocka_unit_test(busy_receiver_stops_the_sender_without_loss),
	  cmocka_unit_test(lost_window_update_is_recovered_by_probes),
	  cmocka_unit_test(random_busy_receiver),
	  cmocka_unit_test(silent_peer_is_declared_dead),
	  cmocka_unit_test(dead_peer_with_blocked_delivery),
	  cmocka_unit_test(send_queue_limits),
	  cmocka_unit_test(header_from_the_send),
	  cmocka_unit_test(wraps_sequence_numbers),
	  cmocka_unit_test(reset_starts_a_fresh_channel))
