/*
 * Packet buffers: fixed 2 KiB buffers, reference-counted, from one pool
 * allocated at boot.  They carry frames in both directions without copies:
 *
 *  - receive: a driver posts pktbufs to its RX ring; a filled one goes up
 *    to net_input() and belongs to the layer above, which calls pkt_put()
 *    when done (possibly much later: lwIP holds them as pbufs).  The driver
 *    refills its ring slot with a fresh pktbuf.
 *  - transmit: the fabric builds a frame in a pktbuf and keeps a reference
 *    for retransmission; the driver takes its own reference until the NIC
 *    reports the descriptor done.
 *
 * All functions may be called from interrupt handlers.
 */
#ifndef NET_PKTBUF_H
#define NET_PKTBUF_H

#include <stdint.h>

#define PKT_BUF_SIZE 2048
#define PKT_POOL_BUFS 1024	/* the pool made at boot */
#define PKT_HEADROOM 64		/* room in front of a frame (virtio-net header) */
#define PKT_MAX_FRAME (PKT_BUF_SIZE - PKT_HEADROOM)

/* The Ethernet frames they carry. */
#define ETH_ALEN 6
#define ETH_HLEN 14
#define ETH_MIN_FRAME 60		/* without FCS */
#define ETH_MAX_FRAME 1514		/* without FCS */

struct pktbuf {
	uint8_t *data;			/* first byte of the frame */
	uint16_t len;			/* frame length */
	int16_t refs;
	struct pktbuf *next;		/* free list, or any queue of the owner's */
	uint8_t *buf;			/* start of the 2 KiB buffer (DMA-able) */
	uint64_t stamp;			/* owner's use (e.g. TSC at receipt) */
	void *owner;			/* owner's use */
	uint64_t ext[6];		/* owner's use: e.g. lwIP's pbuf_custom wrapper */
};

/* Create the pool with n buffers.  Return 0 or -ENOMEM. */
int pkt_pool_init(int n);

/* A buffer with one reference and data at PKT_HEADROOM, len 0; NULL if none. */
struct pktbuf *pkt_get(void);

/* Take another reference. */
void pkt_ref(struct pktbuf *pb);

/* Drop a reference; the last one returns the buffer to the pool. */
void pkt_put(struct pktbuf *pb);

/* Buffers free now, in all, and the fewest ever free. */
int pkt_free_count(void);
int pkt_total(void);
int pkt_low_water(void);

#endif
