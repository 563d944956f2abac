/*
 * What the Intel gigabit drivers (drivers/e1000.c, drivers/igb.c) share:
 * register access, the station address in receive address 0, a frame's
 * checks and padding on transmit, one received descriptor's outcome, the
 * state both keep of a NIC and its rings (struct inic) and the rings' hot
 * path (harvest, reclaim, transmit), over the descriptor steps each driver
 * gives.  Their descriptor formats and interrupt schemes differ; these do
 * not.  Inline: each is a step of a driver's hot path or of its probe; the
 * set-up both do once (probe, reset, NVM, rings, link) is drivers/intel_nic.c.
 */
#ifndef DRIVERS_INTEL_NIC_H
#define DRIVERS_INTEL_NIC_H

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "drivers/netdev.h"
#include "drivers/pci.h"
#include "drivers/pktbuf.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"

#define INIC_RAH_AV (1u << 31)		/* RAH: the address is valid */

/*
 * Registers both families keep at one address with the same bits (8254x
 * SDM 13.4.1-13.4.4; 82576 DS 8.2.1, 8.2.2, 8.4.1, 8.4.2): what the shared
 * set-up (drivers/intel_nic.c) touches.
 */
enum {
	InicCtrl = 0x0000,		/* Device Control */
	InicStatus = 0x0008,		/* Device Status */
	InicEec = 0x0010,		/* EEPROM/Flash Control */
	InicEerd = 0x0014,		/* EEPROM Read */
	InicRal0 = 0x5400,		/* Receive Address Low, entry 0 (RAH0 after it) */
};

enum {
	InicCtrlGioMasterDisable = 1 << 2, /* CTRL: stop issuing DMA (82574, 82576) */
	InicCtrlRst = 1 << 26,		/* CTRL: device reset (self-clearing) */
	InicStatusLu = 1 << 1,		/* STATUS: link up */
	InicStatusGioMasterEnable = 1 << 19, /* STATUS: DMA requests still pending */
	InicEecAutoRd = 1 << 9,		/* EEC: NVM auto-read done (82574, 82576) */
	InicEerdStart = 1 << 0,		/* EERD: start a read */
	InicEerdDataShift = 16,		/* EERD: the word read */
};

/*
 * The rings: 256 descriptors each way (a multiple of 8: RDLEN is 128-byte
 * aligned).  Re-armed receive slots are handed back to the NIC (an RDT
 * write) INIC_RX_POST_BATCH at a time, as Linux's e1000 does: every RDT
 * write is an MMIO access, and in QEMU 7.2 each one also wakes the
 * emulator's main loop (set_rdt -> qemu_flush_queued_packets ->
 * qemu_notify_event), which cost 17-39 us per frame with the cluster on
 * one host CPU.  The NIC still has INIC_NRDESC - 1 - INIC_RX_POST_BATCH
 * buffers at worst.  An interrupt takes up to INIC_RX_BUDGET frames.
 */
#define INIC_NRDESC 256
#define INIC_NTDESC 256
#define INIC_RX_POST_BATCH 16
#define INIC_RX_BUDGET 64
#define INIC_MAX_FRAME (ETH_MAX_FRAME + 4) /* 802.1Q tag, no FCS (RCTL.SECRC) */
#define INIC_LINK_WAIT_NS 3000000000ULL	/* autonegotiation takes ~2 s on copper */

/* A device the driver takes, by PCI id (vendor 0x8086). */
struct inic_model {
	uint16_t device;
	const char *name;
	int kind;			/* the driver's own */
};

static inline uint32_t inic_r(volatile uint32_t *regs, int reg)
{
	return regs[reg / 4];
}

/* A compiler barrier first: descriptor and buffer stores precede the write. */
static inline void inic_w(volatile uint32_t *regs, int reg, uint32_t v)
{
	barrier();
	regs[reg / 4] = v;
}

/* Spin until (reg & mask) == want or timeout_ns passes; 0 or -ETIMEDOUT. */
static inline int inic_wait(volatile uint32_t *regs, int reg, uint32_t mask, uint32_t want,
			    uint64_t timeout_ns)
{
	uint64_t end = now_ns() + timeout_ns;

	for (;;) {
		if ((inic_r(regs, reg) & mask) == want)
			return 0;
		if (now_ns() >= end)
			return -ETIMEDOUT;
		delay_ns(10000);
	}
}

/* A station address: unicast and not zero. */
static inline int inic_mac_ok(const uint8_t *mac)
{
	static const uint8_t zero[ETH_ALEN];
	return !(mac[0] & 1) && memcmp(mac, zero, ETH_ALEN) != 0;
}

/* Receive address 0 (RAL at ral, RAH after it) into mac: 1 if valid and good. */
static inline int inic_mac_get(volatile uint32_t *regs, int ral, uint8_t *mac)
{
	uint32_t lo = inic_r(regs, ral), hi = inic_r(regs, ral + 4);

	for (int i = 0; i < 4; i++)
		mac[i] = (uint8_t)(lo >> (8 * i));
	mac[4] = (uint8_t)hi;
	mac[5] = (uint8_t)(hi >> 8);
	return (hi & INIC_RAH_AV) && inic_mac_ok(mac);
}

/* mac into receive address 0, valid. */
static inline void inic_mac_set(volatile uint32_t *regs, int ral, const uint8_t *mac)
{
	inic_w(regs, ral, (uint32_t)mac[0] | (uint32_t)mac[1] << 8 | (uint32_t)mac[2] << 16 |
				  (uint32_t)mac[3] << 24);
	inic_w(regs, ral + 4, (uint32_t)mac[4] | (uint32_t)mac[5] << 8 | INIC_RAH_AV);
}

/*
 * A frame to transmit: its length on the wire (at least ETH_MIN_FRAME: a
 * shorter one is padded with zeros written after pb->len in pb's buffer,
 * pb->len left as it was), or -EINVAL for a length of 0, over max_frame,
 * or whose padding would leave the buffer (a large one's: pkt_large_room(pb)).
 */
static inline int inic_tx_len(struct pktbuf *pb, unsigned max_frame)
{
	unsigned len = pb->len;

	if (len == 0 || len > max_frame ||
	    pb->data + (len < ETH_MIN_FRAME ? ETH_MIN_FRAME : len) > pkt_buf_end(pb))
		return -EINVAL;
	if (len < ETH_MIN_FRAME) {
		memset(pb->data + len, 0, ETH_MIN_FRAME - len);
		len = ETH_MIN_FRAME;
	}
	return (int)len;
}

/*
 * What a receive ring carries from one descriptor to the next: a frame
 * longer than one buffer (a jumbo frame in 2 KiB buffers) gathered into a
 * large buffer, or one being dropped.
 */
struct inic_rx {
	int discard;			/* inside a frame being dropped */
	int nobuf;			/* and it is for want of a large buffer: counted at its end */
	struct pktbuf *big;		/* the long frame gathered so far, or NULL */
	unsigned have;			/* its bytes (or the dropped one's) */
};

/*
 * What both drivers keep of a NIC: first in each driver's struct ctlr (so
 * nd->softc and pci_dev's softc are both), which adds its descriptor rings
 * and its interrupt mode.
 */
struct inic {
	struct netdev nd;
	struct pci_dev *pci;
	const struct inic_model *model;
	volatile uint32_t *regs;
	int vector;			/* the one, or (igb, MSI-X) the queues' */
	uint32_t gsi;			/* INTx: the I/O APIC input */

	struct pktbuf *rxpb[INIC_NRDESC]; /* the buffer armed in each slot */
	unsigned rx_next;		/* next slot to harvest */
	unsigned rx_unposted;		/* re-armed slots behind RDT, < INIC_RX_POST_BATCH */
	struct inic_rx rx;		/* a frame that spans descriptors */
	unsigned max_frame;		/* the longest frame sent or taken: INIC_MAX_FRAME, or frame_max */

	struct pktbuf *txpb[INIC_NTDESC]; /* NULL when the slot is free */
	unsigned tx_clean;		/* oldest descriptor not reclaimed */
	unsigned tx_next;		/* next descriptor to fill (== TDT) */
	int txdw_armed;			/* the transmit interrupt on: a sender waits for space */
};

/*
 * A descriptor of a frame over several buffers: its bytes appended to a
 * large buffer (pkt_get_len) up to nd->frame_max, the whole handed up at
 * its last (eop), pb's slot re-armed with pb itself.  Dropped whole, and
 * counted once in rx_errors, where the NIC's frames are Ethernet's, the
 * frame grows past frame_max or is flagged bad; in rx_no_buffer where it
 * is good but no large buffer was free at its start.
 */
static __attribute__((noinline, unused)) struct pktbuf *
inic_rx_part(struct netdev *nd, struct inic_rx *rx, struct pktbuf *pb, int eop, int frame_err,
	     unsigned len, unsigned buf_size, struct pktbuf **up)
{
	if (rx->discard) {
		rx->have += len;
		if (eop) {
			if (rx->nobuf && !frame_err && rx->have <= nd->frame_max)
				nd->stats.rx_no_buffer++;
			else if (rx->nobuf)
				nd->stats.rx_errors++;
			rx->discard = rx->nobuf = 0;
		}
		return pb;
	}
	if (!rx->big) {
		rx->have = 0;
		if (nd->frame_max <= ETH_MAX_FRAME || frame_err) {
			nd->stats.rx_errors++;
			rx->discard = !eop;
			return pb;
		}
		if (!(rx->big = pkt_get_len(nd->frame_max))) {
			rx->discard = rx->nobuf = 1;
			return inic_rx_part(nd, rx, pb, eop, frame_err, len, buf_size, up);
		}
	}
	if (frame_err || len > buf_size || rx->have + len > nd->frame_max ||
	    (eop && rx->have + len < ETH_HLEN)) {
		pkt_put(rx->big);
		rx->big = NULL;
		nd->stats.rx_errors++;
		rx->discard = !eop;
		return pb;
	}
	memcpy(rx->big->data + rx->have, pb->buf, len);
	rx->have += len;
	if (eop) {
		rx->big->len = (uint16_t)rx->have;
		*up = rx->big;
		rx->big = NULL;
	}
	return pb;
}

/*
 * One written-back receive descriptor holding pb: whether it ended its
 * frame (eop), was flagged bad (frame_err) and its length.  A frame in one
 * buffer goes up in it; one over several descriptors is gathered
 * (inic_rx_part) where the NIC takes frames longer than Ethernet's, else
 * dropped whole (rx->discard carries that across them) and counted once
 * in rx_errors, as is a bad one; a good one in one buffer gets a fresh
 * buffer for the slot, or without one counts in rx_no_buffer and keeps
 * its own.  Returns the buffer to arm the slot with; *up is the frame to
 * hand up (pb, data and len set) or NULL.
 */
static inline struct pktbuf *inic_rx_one(struct netdev *nd, struct inic_rx *rx, struct pktbuf *pb,
					 int eop, int frame_err, unsigned len, unsigned max_frame,
					 unsigned buf_size, struct pktbuf **up)
{
	struct pktbuf *fresh = NULL;

	*up = NULL;
	if (__builtin_expect(!eop || rx->discard || rx->big, 0))
		return inic_rx_part(nd, rx, pb, eop, frame_err, len, buf_size, up);
	if (frame_err || len < ETH_HLEN || len > max_frame || len > buf_size) {
		nd->stats.rx_errors++;
		return pb;
	}
	if (!(fresh = pkt_get())) {
		nd->stats.rx_no_buffer++;
		return pb;
	}
	pb->data = pb->buf;
	pb->len = (uint16_t)len;
	*up = pb;
	return fresh;
}

/*
 * The hot path over a driver's descriptors.  Each takes the driver's steps
 * as functions (static inline in the driver) and is inlined whole into the
 * driver's own netdev ops, so every step is a direct, inlined call:
 *  - take(n, i, &up): slot i's receive descriptor, if the NIC wrote it back
 *    (else 0): its outcome through inic_rx_one, the slot re-armed, *up the
 *    frame to hand up or NULL; 1;
 *  - ready(n): the slot at rx_next is written back (a frame waits);
 *  - kick(n): raise the receive interrupt again;
 *  - done(n, i): the NIC is done with transmit descriptor i;
 *  - put(n, i, pb, len): transmit descriptor i sends pb's len bytes;
 *  - wait(n): the transmit interrupt on (txdw_armed set): a sender waits.
 */
typedef int inic_take_fn(struct inic *n, unsigned i, struct pktbuf **up);
typedef int inic_ready_fn(struct inic *n);
typedef void inic_kick_fn(struct inic *n);
typedef int inic_done_fn(struct inic *n, unsigned i);
typedef void inic_put_fn(struct inic *n, unsigned i, struct pktbuf *pb, unsigned len);
#define INIC_HOT static inline __attribute__((always_inline))

/*
 * Reclaim completed TX descriptors.  Interrupts off.  Return how many.
 * once: tx_next read once, before the first descriptor, else before each
 * (the same value: nothing here moves it; the callers' code differs).
 */
INIC_HOT int inic_tx_reclaim(struct inic *n, inic_done_fn *done, int once)
{
	unsigned i = n->tx_clean, end = n->tx_next;
	int k = 0;

	while (i != (once ? end : n->tx_next) && done(n, i)) {
		pkt_put(n->txpb[i]);
		n->txpb[i] = NULL;
		i = (i + 1) % INIC_NTDESC;
		k++;
	}
	n->tx_clean = i;
	return k;
}

/*
 * netdev ops->transmit over the driver's put and wait, TDT at tdt.  Frames
 * shorter than ETH_MIN_FRAME go out padded (inic_tx_len).  0, -EAGAIN
 * (ring full) or -EINVAL (bad length).
 */
INIC_HOT int inic_transmit(struct netdev *nd, struct pktbuf *pb, int tdt, inic_done_fn *done,
			   inic_put_fn *put, inic_kick_fn *wait)
{
	struct inic *n = nd->softc;
	int len = inic_tx_len(pb, n->max_frame);

	if (len < 0)
		return len;

	irqflags_t f = irq_save();
	if (inic_tx_reclaim(n, done, 1))
		netdev_tx_space(nd);
	unsigned i = n->tx_next, next = (i + 1) % INIC_NTDESC;
	if (next == n->tx_clean) {
		/* Full (one slot stays empty: TDT == TDH means idle). */
		nd->stats.tx_ring_full++;
		if (!n->txdw_armed)
			wait(n);
		irq_restore(f);
		return -EAGAIN;
	}
	pkt_ref(pb);
	n->txpb[i] = pb;
	put(n, i, pb, (unsigned)len);
	n->tx_next = next;
	inic_w(n->regs, tdt, next);
	nd->stats.tx_frames++;
	nd->stats.tx_bytes += len;
	irq_restore(f);
	return 0;
}

/*
 * Harvest up to budget RX descriptors through take, handing good frames up
 * and counting them in *frames, and give the re-armed slots back to the
 * NIC (RDT at rdt) INIC_RX_POST_BATCH at a time.  Interrupts off.  Return
 * the descriptors taken.
 */
INIC_HOT int inic_rx_harvest(struct inic *n, int budget, int *frames, int rdt, inic_take_fn *take)
{
	struct netdev *nd = &n->nd;
	unsigned i = n->rx_next;
	int k;

	for (k = 0; k < budget; k++) {
		struct pktbuf *up;
		if (!take(n, i, &up))
			break;
		i = (i + 1) % INIC_NRDESC;
		n->rx_next = i;
		if (up) {
			netdev_input(nd, up);
			(*frames)++;
		}
	}
	n->rx_unposted += (unsigned)k;
	if (n->rx_unposted >= INIC_RX_POST_BATCH) {
		inic_w(n->regs, rdt, (i + INIC_NRDESC - 1) % INIC_NRDESC);
		n->rx_unposted = 0;
	}
	return k;
}

/* netdev ops->poll: harvest, then reclaim.  Interrupts off.  Return the frames handed up. */
INIC_HOT int inic_poll(struct netdev *nd, int budget, int rdt, inic_take_fn *take, inic_done_fn *done)
{
	struct inic *n = nd->softc;
	int frames = 0;

	inic_rx_harvest(n, budget, &frames, rdt, take);
	if (inic_tx_reclaim(n, done, 0))
		netdev_tx_space(nd);
	return frames;
}

/*
 * The queues' work in an interrupt handler (interrupts off): receive unless
 * polling, frames left over after INIC_RX_BUDGET raising the interrupt
 * again (kick) rather than holding the CPU here; then reclaim.
 */
INIC_HOT void inic_queue_work(struct inic *n, int rdt, inic_take_fn *take, inic_ready_fn *ready,
			      inic_kick_fn *kick, inic_done_fn *done)
{
	if (!n->nd.polling) {
		int frames = 0;
		if (inic_rx_harvest(n, INIC_RX_BUDGET, &frames, rdt, take) == INIC_RX_BUDGET && ready(n))
			kick(n);
	}
	if (inic_tx_reclaim(n, done, 0))
		netdev_tx_space(&n->nd);
}

/* drivers/intel_nic.c: the set-up both drivers do once, off the hot path. */

/* EERD's done bit and word address shift (the 82574 and 82576 have theirs elsewhere than the 8254x). */
struct inic_nvm {
	uint32_t done;
	int addr_shift;
};

const struct inic_model *inic_model_of(const struct inic_model *models, size_t n,
				       const struct pci_dev *d);
int inic_attach(struct pci_dev *d, const struct inic_model *model, const char *name, size_t size,
		struct inic **out);
int inic_reset(struct inic *n, int gio, uint64_t settle_ns, int autord);
int inic_read_mac(struct inic *n, const struct inic_nvm *nvm);
int inic_rx_fill(struct inic *n);
void inic_ring_regs(struct inic *n, int bal, volatile void *ring, size_t bytes, unsigned tail);
void inic_free(struct inic *n, volatile void *rdba, size_t rbytes, volatile void *tdba, size_t tbytes);
void inic_link_check(struct netdev *nd);
void inic_link_changed(struct inic *n);
int inic_up(struct inic *n, const struct netdev_ops *ops, const char *irq);

#endif
