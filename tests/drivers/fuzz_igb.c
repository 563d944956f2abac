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
#include "tests/host/input.h"
#include "tests/drivers/intel_stubs.h"
#define NIC_FAKE_RING
#include "tests/drivers/nic_fake.h"

/* --- the fake device ------------------------------------------------------------- */

/*
 * A frame of len bytes arrives (82576 DS 7.1.5: split over buffers, EOP on
 * the last; the write-back overwrites the whole descriptor).
 */
static void device_receive(unsigned len, uint8_t errors, uint64_t junk)
{
	unsigned pieces = frame_pieces(len);
	unsigned f = frames_in++;
	uint32_t err = (uint32_t)errors << 24;

	if (!ring_room(IgbRdt0, pieces))
		return;				/* no room: the NIC drops it (RQDPC) */
	int good = frame_good(len, pieces, err & IgbRdFrameErrors);
	for (unsigned p = 0; p < pieces; p++) {
		volatile union igb_rdesc *d = &c->rdba[head];
		CHECK(!(d->wb.status_error & IgbRdDd));	/* given back only once harvested */
		CHECK(d->read.hdr_addr == 0);
		unsigned n = piece_put((uint8_t *)(uintptr_t)d->read.pkt_addr, f, len, pieces, p, good);
		d->wb.info = (uint32_t)junk;
		d->wb.rss = (uint32_t)(junk >> 32);
		d->wb.length = (uint16_t)n;
		d->wb.vlan = 0;
		d->wb.status_error = IgbRdDd | (p + 1 == pieces ? IgbRdEop | err : 0);
	}
	c->n.regs[IgbIcr / 4] |= IgbIntRxdw;
}

/*
 * Every slot armed with a buffer of its own; those the device may fill (all
 * but the written-back ones the driver has not taken yet) point at it.
 */
static void ring_sound(void)
{
	unsigned written = (head + NRDESC - c->n.rx_next) % NRDESC;

	for (unsigned i = 0; i < NRDESC; i++) {
		int unread = (i + NRDESC - c->n.rx_next) % NRDESC < written;
		slot_own(i);
		CHECK(unread || (c->rdba[i].read.pkt_addr == (uintptr_t)c->n.rxpb[i]->buf &&
				 c->rdba[i].read.hdr_addr == 0));
	}
	pool_sound();
}

/* The driver takes what it will; check it against what the device put there. */
static void harvest(int by_interrupt)
{
	unsigned from = c->n.rx_next;

	if (by_interrupt)
		c->msix ? igb_intr_queues(c) : igb_intr_intx(c);
	else
		CHECK(netdev_poll(&c->n.nd) >= 0);
	for (unsigned i = from; i != c->n.rx_next; i = (i + 1) % NRDESC) {
		taken(i);
		CHECK(!(c->rdba[i].wb.status_error & IgbRdDd));	/* re-armed */
	}
	accounted();
	ring_sound();
}

/* --- the input ------------------------------------------------------------------------ */

/* in, in_left and take(): tests/host/input.h; the operations: ring_run (nic_fake.h) */

/* A frame: its length (2 bytes), its error bits (1), the write-back's other fields (8). */
static void ring_receive(void)
{
	unsigned len = take(2) % (MAX_LEN + 1);
	uint8_t errors = (uint8_t)take(1);
	uint64_t junk = take(4);
	device_receive(len, errors, junk << 32 | take(4));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ring_new("igb", &igb_ops);
	/* The fake register file reads back what was written: queue enables included. */
	CHECK(rx_init(c) == 0 && tx_init(c) == 0);
	netdev_set_rx(&c->n.nd, hook, NULL);
	ring_sound();

	in = data;
	in_left = size;
	unsigned mode = take(1);
	c->msix = mode & 1;
	jumbo = (mode >> 1) & 1;
	ring_frames();
	ring_run(igb_free);
	return 0;
}
