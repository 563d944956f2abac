/*
 * What the Intel gigabit drivers (drivers/e1000.c, drivers/igb.c) share:
 * register access, the station address in receive address 0, a frame's
 * checks and padding on transmit, and one received descriptor's outcome.
 * Their descriptor formats and interrupt schemes differ; these do not.
 * Inline: each is a step of a driver's hot path or of its probe.
 */
#ifndef DRIVERS_INTEL_NIC_H
#define DRIVERS_INTEL_NIC_H

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "drivers/netdev.h"
#include "drivers/pktbuf.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"

#define INIC_RAH_AV (1u << 31)		/* RAH: the address is valid */

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
 * or whose padding would leave the buffer (a large one's: pkt_large_room).
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

#endif
