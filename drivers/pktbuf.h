/*
 * Packet buffers: fixed 2 KiB buffers, reference-counted, from one pool
 * allocated at boot (and, for a NIC with longer frames, a few large ones:
 * pkt_large_init).  They carry frames in both directions without copies:
 *
 *  - receive: a driver posts pktbufs to its RX ring; a filled one goes up
 *    to netdev_input() and belongs to the layer above, which calls pkt_put()
 *    when done (possibly much later: lwIP holds them as pbufs).  The driver
 *    refills its ring slot with a fresh pktbuf.
 *  - transmit: the fabric builds a frame in a pktbuf and keeps a reference
 *    for retransmission; the driver takes its own reference until the NIC
 *    reports the descriptor done.
 *
 * Shares: a consumer that may hold buffers for long (lwIP keeps received
 * frames as pbufs until the app reads them, out-of-order segments until
 * the gap fills) is charged for every buffer it holds and holds at most
 * its share; past it, it drops what it is offered.  The rest of the pool
 * stays for the NIC receive rings and the fabric, which take from it
 * without a share: a consumer at its share never stops a ring's refill.
 *
 * All functions may be called from interrupt handlers.
 */
#ifndef DRIVERS_PKTBUF_H
#define DRIVERS_PKTBUF_H

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
#define ETH_JUMBO_FRAME (9000 + ETH_HLEN)	/* the NICs' long frames: 9000 bytes of payload */

/*
 * Consumers with a share of the pool: a layer that keeps buffers for long
 * (lwIP's received frames, the fabric's frames not yet acknowledged)
 * registers itself by name with its share, and is charged for what it
 * holds; what no share takes stays for the receive rings.
 */
#define PKT_MAX_CONSUMERS 4

struct pktbuf {
	uint8_t *data;			/* first byte of the frame */
	uint16_t len;			/* frame length */
	int16_t refs;
	uint8_t charged;		/* consumer + 1 it is charged to, or 0 */
	uint8_t large;			/* from the large pool (pkt_get_len) */
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

/*
 * Large buffers, for a NIC whose frames are longer than PKT_MAX_FRAME
 * (the shared-memory link's large slots): a second pool of n buffers of
 * frame bytes each after the headroom, made once (netdev_register, for the
 * NIC's frame_max).  0, or -ENOMEM; a second call with a frame no longer
 * than the first's changes nothing.
 */
#define PKT_LARGE_BUFS 48
#define PKT_LARGE_BUFS_JUMBO 192	/* for frames to 16 KiB (a NIC's jumbo frames): a window's worth */
int pkt_large_init(int n, uint32_t frame);
/* Bytes from a large buffer's start (pb->buf) that it holds: the headroom and its frame. */
uint32_t pkt_large_room(void);
/* The end of pb's buffer, small or large. */
static inline const uint8_t *pkt_buf_end(const struct pktbuf *pb)
{
	return pb->buf + (pb->large ? pkt_large_room() : PKT_BUF_SIZE);
}

/*
 * A buffer for a frame of len bytes: pkt_get() for one that fits a small
 * buffer, else one of the large pool; NULL if none (or len beyond both).
 */
struct pktbuf *pkt_get_len(size_t len);

/* Buffers free now that hold a frame of len bytes. */
int pkt_free_len(size_t len);

/* Take another reference. */
void pkt_ref(struct pktbuf *pb);

/* Drop a reference; the last one returns the buffer to the pool. */
void pkt_put(struct pktbuf *pb);

/*
 * The consumer called name (a string that lives as long as the kernel),
 * added with a share of n buffers the first time, its share set to n
 * after: its number, or -EINVAL (n outside 0..the pool), -ENOSPC
 * (PKT_MAX_CONSUMERS taken).  pkt_consumer_find: the number of the one
 * called name, or -ENOENT.
 */
int pkt_consumer(const char *name, int n);
int pkt_consumer_find(const char *name);

/*
 * Charge pb (held by the caller, not charged yet) to consumer c until its
 * last reference goes.  0, or -ENOBUFS (c holds its share: pb is left
 * as it was, the caller drops it), -EINVAL (no such consumer, or pb is
 * charged already).
 */
int pkt_charge(struct pktbuf *pb, int c);

/* Set c's share (buffers it may hold at once, 0..the pool).  0 or -EINVAL. */
int pkt_share_set(int c, int n);

/* Buffers c holds now, its share, and the times it was refused one. */
int pkt_held(int c);
int pkt_share(int c);
unsigned long pkt_refused(int c);

/* Buffers free now, in all, and the fewest ever free. */
int pkt_free_count(void);
int pkt_total(void);
int pkt_low_water(void);

#endif
