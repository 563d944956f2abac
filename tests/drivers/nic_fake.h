/*
 * What the NIC drivers' fuzz targets share (fuzz_e1000, fuzz_igb,
 * fuzz_virtio_net; each includes its driver whole, then this): the
 * receive hook's holding of buffers, down to an empty pool, and
 * LLVMFuzzerInitialize.  With NIC_FAKE_RING defined, for the Intel
 * drivers (struct inic, drivers/intel_nic.h): the fake device's record of
 * what it put in each slot, the frames' bytes, the hook that checks a
 * frame against that record, the accounting of a harvest and the pool's
 * and the ring's checks, and the run of an input's operations (ring_run;
 * the target includes tests/host/input.h first); the target gives the
 * descriptor format (ring_receive, ring_sound's descriptor check,
 * harvest's handlers).
 */
#ifndef TESTS_DRIVERS_NIC_FAKE_H
#define TESTS_DRIVERS_NIC_FAKE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/host/quiet.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)
#define POOL_EXTRA 2			/* buffers beyond the ring's: the hook can empty the pool */

/* --- the receive hook's buffers ---------------------------------------------------- */

static struct pktbuf *held[3];
static unsigned hold;			/* buffers the hook keeps */
static unsigned nheld, handed;

/* A good frame handed up: counted, kept while the hook holds fewer than hold, else freed. */
static void hook_keep(struct pktbuf *pb)
{
	handed++;
	if (nheld < hold) {
		held[nheld++] = pb;
		return;
	}
	pkt_put(pb);
}

static void release(void)
{
	while (nheld)
		pkt_put(held[--nheld]);
}

#ifdef NIC_FAKE_RING

#define REGS_BYTES 0x20000
#define MAX_LEN 12000

/* --- the fake device's record ---------------------------------------------------- */

static struct ctlr *c;
static unsigned head;			/* the device's next descriptor (RDH) */

struct slotrec {			/* what the device put in a slot */
	int first;			/* the first buffer of its frame */
	unsigned pieces;		/* the buffers of its frame */
	int last;			/* its last buffer */
	int good;			/* the frame should go up */
	unsigned frame, len;
};
static struct slotrec rec[NRDESC];
static unsigned frames_in;
static int jumbo;			/* the NIC takes long frames (ETH_JUMBO_FRAME): they are gathered */

static uint32_t reg(int r) { return c->n.regs[r / 4]; }

/* Whether the slots from head to the ring's tail (register rdt) hold a frame of that many pieces. */
static int ring_room(int rdt, unsigned pieces)
{
	CHECK(reg(rdt) < NRDESC);
	return (reg(rdt) + NRDESC - head) % NRDESC >= pieces;
}

static uint8_t frame_byte(unsigned frame, unsigned i)
{
	return (uint8_t)(frame * 29 + i + (i >> 8));
}

/* The buffers a frame of len bytes takes (one for a frame of 0). */
static unsigned frame_pieces(unsigned len)
{
	return len ? (len + RX_BUF_SIZE - 1) / RX_BUF_SIZE : 1;
}

/* Whether a frame of len bytes over pieces buffers, flagged bad or not, should go up. */
static int frame_good(unsigned len, unsigned pieces, int frame_err)
{
	return !frame_err && len >= ETH_HLEN &&
	       (jumbo ? len <= ETH_JUMBO_FRAME : pieces == 1 && len <= MAX_FRAME);
}

/* Buffer p of frame f's pieces written at head: its bytes into buf, the slot's record; head moves on. */
static unsigned piece_put(uint8_t *buf, unsigned f, unsigned len, unsigned pieces, unsigned p, int good)
{
	unsigned n = p + 1 < pieces ? RX_BUF_SIZE : len - p * RX_BUF_SIZE;

	for (unsigned i = 0; i < n; i++)
		buf[i] = frame_byte(f, p * RX_BUF_SIZE + i);
	rec[head] = (struct slotrec){ p == 0, pieces, p + 1 == pieces, good, f, len };
	head = (head + 1) % NRDESC;
	return n;
}

/* --- the receive hook -------------------------------------------------------------- */

static void hook(struct netdev *nd, struct pktbuf *pb)
{
	unsigned slot = (c->n.rx_next + NRDESC - 1) % NRDESC;
	const struct slotrec *r = &rec[slot];

	CHECK(nd == &c->n.nd);
	/* A frame of one buffer goes up in it; a longer one in a large buffer, gathered. */
	CHECK(r->good && pb->len == r->len &&
	      (r->pieces == 1 ? pb->data == pb->buf : pb->large && pb->data == pb->buf + PKT_HEADROOM));
	for (unsigned i = 0; i < pb->len; i++)
		CHECK(pb->data[i] == frame_byte(r->frame, i));
	hook_keep(pb);
}

/* Slot i holds a buffer of its own, none the hook keeps. */
static void slot_own(unsigned i)
{
	CHECK(c->n.rxpb[i]);
	for (unsigned k = 0; k < nheld; k++)
		CHECK(held[k] != c->n.rxpb[i]);
}

/* Every buffer in a slot, the hook's, or free; and a long frame gathered so far, if a harvest ended inside it. */
static void pool_sound(void)
{
	CHECK(pkt_free_count() == NRDESC + POOL_EXTRA - (NRDESC + (int)nheld + (c->n.rx.big != NULL)));
}

/* --- a harvest's accounting ---------------------------------------------------------- */

static uint64_t want_good, want_bad;

/* Slot i taken by the driver: its frame counts once, at its first buffer where dropped at once, else at its last. */
static void taken(unsigned i)
{
	want_good += rec[i].good && rec[i].last;
	want_bad += !rec[i].good && (jumbo ? rec[i].last : rec[i].first);
}

/* Where a harvest ends between frames, every frame so far is accounted for. */
static void accounted(void)
{
	if (c->n.rx_next == head || rec[c->n.rx_next].first) {
		CHECK(c->n.nd.stats.rx_errors == want_bad);
		CHECK(handed + c->n.nd.stats.rx_no_buffer == want_good);
	}
}

/* --- a run ------------------------------------------------------------------------------ */

/* The pool, the driver's state over a fake register file (model 0), name and ops; the record cleared. */
static void ring_new(const char *name, const struct netdev_ops *ops)
{
	CHECK(pkt_pool_init(NRDESC + POOL_EXTRA) == 0);
	c = calloc(1, sizeof *c);
	CHECK(c);
	c->n.regs = calloc(1, REGS_BYTES);
	CHECK(c->n.regs);
	c->n.model = &models[0];
	c->n.nd.name = name;
	c->n.nd.ops = ops;
	c->n.nd.softc = c;
	head = 0;
	frames_in = 0;
	handed = nheld = hold = 0;
	want_good = want_bad = 0;
	memset(rec, 0, sizeof rec);
}

/* The frame sizes the NIC takes: Ethernet's, or jumbo frames from large buffers. */
static void ring_frames(void)
{
	c->n.nd.frame_max = jumbo ? ETH_JUMBO_FRAME : ETH_MAX_FRAME;
	c->n.max_frame = jumbo ? ETH_JUMBO_FRAME : MAX_FRAME;
	CHECK(pkt_large_init(PKT_LARGE_BUFS_JUMBO, ETH_JUMBO_FRAME) == 0);
}

/* The end of a run (everything taken): the driver's state freed (free_fn), every buffer back. */
static void ring_end(void (*free_fn)(struct ctlr *))
{
	release();
#ifdef FZ_DEBUG
	fprintf(stderr, "frames %u handed %u rx_errors %lu no_buffer %lu\n", frames_in, handed,
		c->n.nd.stats.rx_errors, c->n.nd.stats.rx_no_buffer);
#endif
	volatile uint32_t *regs = c->n.regs;
	free_fn(c);
	free((void *)regs);
	CHECK(pkt_free_count() == NRDESC + POOL_EXTRA);
}

/* The target's: a frame arrives (its length and the rest taken from the input), the slots' check, a harvest. */
static void ring_receive(void);
static void ring_sound(void);
static void harvest(int by_interrupt);

/*
 * The input's operations, a byte each (at most 2048): its low two bits
 * pick a frame the device receives, a harvest by polling, one by the
 * interrupt, or the held buffers' release; bits 2-3 how many buffers the
 * hook holds from then on.  Then everything the device put in the ring is
 * taken, and the run ends (ring_end).
 */
static void ring_run(void (*free_fn)(struct ctlr *))
{
	for (int n = 0; in_left && n < 2048; n++) {
		unsigned op = take(1);
		hold = (op >> 2) & 3;
		switch (op & 3) {
		case 0:
			ring_receive();
			break;
		case 1:
			harvest(0);
			break;
		case 2:
			harvest(1);
			break;
		default:
			release();
			ring_sound();
			break;
		}
	}
	while (c->n.rx_next != head)
		harvest(0);
	ring_end(free_fn);
}

#endif
#endif
