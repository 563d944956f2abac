/*
 * libFuzzer target: the e1000 driver's receive ring (drivers/e1000.c, built
 * here whole) against a fake 8254x: the driver's own rx_init/tx_init set
 * up the rings in a fake register file, and the fake device (this file)
 * fills the descriptors the driver gave it (from its head up to RDT) with
 * frames of any length, split over 2048-byte buffers as the NIC does, with
 * any error bits; the driver harvests them through netdev_poll (ops->poll)
 * or its interrupt handler, and hands frames up through drivers/netdev.c to
 * a receive hook that frees buffers at once or holds some, down to an
 * empty pool.
 *
 * Input: operations, each one byte (bits 0-1) and operands:
 *   0 the device receives a frame: length (16 bits, up to 6000), error
 *     bits (8); 1 netdev_poll; 2 the interrupt handler (ICR as the device
 *     set it); 3 the hook's buffers go back to the pool.  Bits 2-3 of each
 *     operation: how many buffers the hook holds from then on (0-3).
 *
 * Checked, __builtin_trap() on a broken promise:
 *  - the device is only ever given descriptors the driver harvested and
 *    re-armed (never one whose frame is still unread), every slot always
 *    holds a buffer of its own and the descriptor points at it;
 *  - a frame goes up exactly when it fit one buffer, carried no frame
 *    error and is 14..1518 bytes, with its bytes and length, in order;
 *    with jumbo frames (every input runs both ways), when it carried no
 *    frame error and is 14..ETH_JUMBO_FRAME bytes, one of several buffers
 *    gathered into a large buffer;
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

#include "drivers/e1000.c"
#include "kernel/trace.h"
#include "tests/host/input.h"
#include "tests/drivers/intel_stubs.h"
#define NIC_FAKE_RING
#include "tests/drivers/nic_fake.h"

/* --- the fake device ------------------------------------------------------------- */

/* A frame of len bytes arrives (8254x SDM 3.2.3: split over buffers, EOP on the last). */
static void device_receive(unsigned len, uint8_t errors)
{
	unsigned pieces = frame_pieces(len);
	unsigned f = frames_in++;

	if (!ring_room(Rdt, pieces))
		return;				/* no room: the NIC drops it (RXO) */
	int good = frame_good(len, pieces, errors & RdFrameErrors);
	for (unsigned p = 0; p < pieces; p++) {
		volatile struct e1000_rdesc *d = &c->rdba[head];
		CHECK(!(d->status & RdDd));	/* given back only once harvested */
		d->length = (uint16_t)piece_put((uint8_t *)(uintptr_t)d->addr, f, len, pieces, p, good);
		d->errors = p + 1 == pieces ? errors : 0;
		d->status = RdDd | (p + 1 == pieces ? RdEop : 0);
	}
	c->n.regs[Icr / 4] |= IntRxt0;
}

/* Every slot armed with a buffer of its own, the descriptor pointing at it. */
static void ring_sound(void)
{
	for (unsigned i = 0; i < NRDESC; i++) {
		slot_own(i);
		CHECK(c->rdba[i].addr == (uintptr_t)c->n.rxpb[i]->buf);
	}
	pool_sound();
}

/* The driver takes what it will; check it against what the device put there. */
static void harvest(int by_interrupt)
{
	unsigned from = c->n.rx_next;

	if (by_interrupt)
		e1000_intr(c);
	else
		CHECK(netdev_poll(&c->n.nd) >= 0);
	for (unsigned i = from; i != c->n.rx_next; i = (i + 1) % NRDESC) {
		taken(i);
		CHECK(!(c->rdba[i].status & RdDd));	/* re-armed */
	}
	accounted();
	ring_sound();
}

/* --- the input ------------------------------------------------------------------------ */

/* in, in_left and take(): tests/host/input.h; the operations: ring_run (nic_fake.h) */

/* A frame: its length (2 bytes), its error bits (1). */
static void ring_receive(void)
{
	unsigned len = take(2) % (MAX_LEN + 1);
	device_receive(len, (uint8_t)take(1));
}

static int run_input(const uint8_t *data, size_t size)
{
	ring_new("e1000", &e1000_ops);
	ring_frames();
	CHECK(rx_init(c) == 0 && tx_init(c) == 0);
	netdev_set_rx(&c->n.nd, hook, NULL);
	ring_sound();

	in = data;
	in_left = size;
	ring_run(e1000_free);
	return 0;
}

/* Every input twice: a NIC of Ethernet's frames, and one of jumbo frames. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	jumbo = 0;
	run_input(data, size);
	jumbo = 1;
	return run_input(data, size);
}
