/*
 * libFuzzer target: the igb driver's receive ring (drivers/igb.c, built
 * here whole) against a fake 82576: the driver's own rx_init/tx_init set
 * up the rings in a fake register file, and the fake device (this file)
 * fills the descriptors the driver gave it (from its head up to RDT) with
 * frames of any length, split over 2048-byte buffers as the NIC does, in
 * the advanced write-back format (which overwrites the buffer address the
 * driver wrote), with any error bits; the driver harvests them through
 * netdev_poll (ops->poll) or its interrupt handlers (MSI-X or INTx, the
 * first input byte says which), and hands frames up through
 * drivers/netdev.c to a receive hook that frees buffers at once or holds
 * some, down to an empty pool.
 *
 * Input: a byte (bit 0: MSI-X; bit 1: jumbo frames, gathered from several
 * buffers into a large one), then operations, each one byte (bits 0-1)
 * and operands:
 *   0 the device receives a frame: length (16 bits, up to 6000), error
 *     bits (8: status_error bits 31:24), junk for the write-back's first
 *     8 bytes (8); 1 netdev_poll; 2 the interrupt handler; 3 the hook's
 *     buffers go back to the pool.  Bits 2-3 of each operation: how many
 *     buffers the hook holds from then on (0-3).
 *
 * Checked, __builtin_trap() on a broken promise:
 *  - the device is only ever given descriptors the driver harvested and
 *    re-armed (never one whose frame is still unread), every slot always
 *    holds a buffer of its own and every slot the device may fill points
 *    at it, with no header buffer;
 *  - a frame goes up exactly when it fit one buffer, carried no frame
 *    error and is 14..1518 bytes, with its bytes and length, in order;
 *    the others count once each in rx_errors (a frame over several
 *    buffers once, not per buffer); a good frame with no buffer to replace
 *    its own counts in rx_no_buffer and its slot is re-armed;
 *  - no buffer is lost or freed twice.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/igb.c"
#include "kernel/trace.h"
#include "tests/fuzz/input.h"
#include "tests/fuzz/intel_stubs.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)
#define REGS_BYTES 0x20000
#define POOL_EXTRA 2			/* buffers beyond the ring's: the hook can empty the pool */
#define MAX_LEN 12000

/* --- the fake device ------------------------------------------------------------- */

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

static uint32_t reg(int r) { return c->regs[r / 4]; }

static uint8_t frame_byte(unsigned frame, unsigned i)
{
	return (uint8_t)(frame * 29 + i + (i >> 8));
}

/*
 * A frame of len bytes arrives (82576 DS 7.1.5: split over buffers, EOP on
 * the last; the write-back overwrites the whole descriptor).
 */
static void device_receive(unsigned len, uint8_t errors, uint64_t junk)
{
	unsigned pieces = len ? (len + RX_BUF_SIZE - 1) / RX_BUF_SIZE : 1;
	unsigned avail = (reg(IgbRdt0) + NRDESC - head) % NRDESC;
	unsigned f = frames_in++;
	uint32_t err = (uint32_t)errors << 24;

	CHECK(reg(IgbRdt0) < NRDESC);
	if (avail < pieces)
		return;				/* no room: the NIC drops it (RQDPC) */
	int good = !(err & IgbRdFrameErrors) && len >= ETH_HLEN &&
		   (jumbo ? len <= ETH_JUMBO_FRAME : pieces == 1 && len <= MAX_FRAME);
	for (unsigned p = 0; p < pieces; p++) {
		volatile union igb_rdesc *d = &c->rdba[head];
		unsigned n = p + 1 < pieces ? RX_BUF_SIZE : len - p * RX_BUF_SIZE;
		CHECK(!(d->wb.status_error & IgbRdDd));	/* given back only once harvested */
		CHECK(d->read.hdr_addr == 0);
		uint8_t *buf = (uint8_t *)(uintptr_t)d->read.pkt_addr;
		for (unsigned i = 0; i < n; i++)
			buf[i] = frame_byte(f, p * RX_BUF_SIZE + i);
		d->wb.info = (uint32_t)junk;
		d->wb.rss = (uint32_t)(junk >> 32);
		d->wb.length = (uint16_t)n;
		d->wb.vlan = 0;
		d->wb.status_error = IgbRdDd | (p + 1 == pieces ? IgbRdEop | err : 0);
		rec[head] = (struct slotrec){ p == 0, pieces, p + 1 == pieces, good, f, len };
		head = (head + 1) % NRDESC;
	}
	c->regs[IgbIcr / 4] |= IgbIntRxdw;
}

/* --- the receive hook -------------------------------------------------------------- */

static struct pktbuf *held[3];
static unsigned hold;			/* buffers the hook keeps */
static unsigned nheld, handed;

static void hook(struct netdev *nd, struct pktbuf *pb)
{
	unsigned slot = (c->rx_next + NRDESC - 1) % NRDESC;
	const struct slotrec *r = &rec[slot];

	CHECK(nd == &c->nd);
	/* A frame of one buffer goes up in it; a longer one in a large buffer, gathered. */
	CHECK(r->good && pb->len == r->len &&
	      (r->pieces == 1 ? pb->data == pb->buf : pb->large && pb->data == pb->buf + PKT_HEADROOM));
	for (unsigned i = 0; i < pb->len; i++)
		CHECK(pb->data[i] == frame_byte(r->frame, i));
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

/*
 * Every slot armed with a buffer of its own; those the device may fill (all
 * but the written-back ones the driver has not taken yet) point at it.
 */
static void ring_sound(void)
{
	unsigned written = (head + NRDESC - c->rx_next) % NRDESC;

	for (unsigned i = 0; i < NRDESC; i++) {
		int unread = (i + NRDESC - c->rx_next) % NRDESC < written;
		CHECK(c->rxpb[i]);
		CHECK(unread || (c->rdba[i].read.pkt_addr == (uintptr_t)c->rxpb[i]->buf &&
				 c->rdba[i].read.hdr_addr == 0));
		for (unsigned k = 0; k < nheld; k++)
			CHECK(held[k] != c->rxpb[i]);
	}
	/* and a long frame gathered so far, if a harvest ended inside it */
	CHECK(pkt_free_count() == NRDESC + POOL_EXTRA - (NRDESC + (int)nheld + (c->rx.big != NULL)));
}

/* The driver takes what it will; check it against what the device put there. */
static uint64_t want_good, want_bad;

static void harvest(int by_interrupt)
{
	unsigned from = c->rx_next;

	if (by_interrupt)
		c->msix ? igb_intr_queues(c) : igb_intr_intx(c);
	else
		CHECK(netdev_poll(&c->nd) >= 0);
	for (unsigned i = from; i != c->rx_next; i = (i + 1) % NRDESC) {
		/* A frame counts once: at its first buffer where it is dropped at once, else at its last. */
		want_good += rec[i].good && rec[i].last;
		want_bad += !rec[i].good && (jumbo ? rec[i].last : rec[i].first);
		CHECK(!(c->rdba[i].wb.status_error & IgbRdDd));	/* re-armed */
	}
	/* Where a harvest ends between frames, every frame so far is accounted for. */
	if (c->rx_next == head || rec[c->rx_next].first) {
		CHECK(c->nd.stats.rx_errors == want_bad);
		CHECK(handed + c->nd.stats.rx_no_buffer == want_good);
	}
	ring_sound();
}

/* --- the input ------------------------------------------------------------------------ */

/* in, in_left and take(): tests/fuzz/input.h */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	CHECK(pkt_pool_init(NRDESC + POOL_EXTRA) == 0);
	c = calloc(1, sizeof *c);
	CHECK(c);
	c->regs = calloc(1, REGS_BYTES);
	c->model = &models[0];
	c->nd.name = "igb";
	c->nd.ops = &igb_ops;
	c->nd.softc = c;
	/* The fake register file reads back what was written: queue enables included. */
	CHECK(c->regs && rx_init(c) == 0 && tx_init(c) == 0);
	netdev_set_rx(&c->nd, hook, NULL);
	head = 0;
	frames_in = 0;
	handed = nheld = hold = 0;
	want_good = want_bad = 0;
	memset(rec, 0, sizeof rec);
	ring_sound();

	in = data;
	in_left = size;
	unsigned mode = take(1);
	c->msix = mode & 1;
	jumbo = (mode >> 1) & 1;
	c->nd.frame_max = jumbo ? ETH_JUMBO_FRAME : ETH_MAX_FRAME;
	c->max_frame = jumbo ? ETH_JUMBO_FRAME : MAX_FRAME;
	CHECK(pkt_large_init(PKT_LARGE_BUFS_JUMBO, ETH_JUMBO_FRAME) == 0);
	for (int n = 0; in_left && n < 2048; n++) {
		unsigned op = take(1);
		hold = (op >> 2) & 3;
		switch (op & 3) {
		case 0: {
			unsigned len = take(2) % (MAX_LEN + 1);
			uint8_t errors = (uint8_t)take(1);
			uint64_t junk = take(4);
			device_receive(len, errors, junk << 32 | take(4));
			break;
		}
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
	/* Everything the device put in the ring is taken in the end. */
	while (c->rx_next != head)
		harvest(0);
	release();
#ifdef FZ_DEBUG
	fprintf(stderr, "frames %u handed %u rx_errors %lu no_buffer %lu\n", frames_in, handed,
		c->nd.stats.rx_errors, c->nd.stats.rx_no_buffer);
#endif
	volatile uint32_t *regs = c->regs;
	igb_free(c);
	free((void *)regs);
	CHECK(pkt_free_count() == NRDESC + POOL_EXTRA);
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (!getenv("FUZZ_VERBOSE"))
		(void)!freopen("/dev/null", "w", stdout);
	return 0;
}
