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
 * Shares: a buffer may be charged to a consumer with a share of the pool
 * (lwIP, the fabric's send queues).  The shares, who has one and the
 * charging are net's: net/pktshare.h.  The pool keeps only the count of
 * what each consumer holds (pkt_held_bufs), which pkt_put takes a buffer
 * off with its last reference.
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

/* The consumers buffers may be charged to (net/pktshare.h), at most. */
#define PKT_MAX_CONSUMERS 4

struct pktbuf {
	uint8_t *data;			/* first byte of the frame */
	uint16_t len;			/* frame length */
	int16_t refs;
	uint8_t charged;		/* consumer + 1 it is charged to (net/pktshare.h), or 0 */
	uint8_t large;			/* from a large pool (pkt_get_len): its number + 1 */
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
 * (a NIC's jumbo frames, the shared-memory link's large slots, virtio-net's
 * 64 KiB): a second pool of n buffers of frame bytes each after the
 * headroom, made once (netdev_register, for the NIC's frame_max).  Frames
 * beyond PKT_JUMBO_FRAME get two: PKT_LARGE_BUFS_JUMBO jumbo buffers (of
 * PKT_JUMBO_SHARE_FRAME), which a frame up to that length takes first (a
 * window of 4 KiB WRITEs has as many buffers as on a jumbo NIC), and n of
 * frame bytes.  0, or -ENOMEM;
 * a second call with a frame no longer than the first's changes nothing.
 */
#define PKT_LARGE_BUFS 48
#define PKT_LARGE_BUFS_JUMBO 192	/* for frames to 16 KiB (a NIC's jumbo frames): a window's worth */
#define PKT_JUMBO_FRAME 16384		/* frames up to this: one pool, of PKT_LARGE_BUFS_JUMBO */
#define PKT_JUMBO_SHARE_FRAME 9014	/* beyond: the jumbo buffers' frame (a NIC's 9000 bytes of payload) */
int pkt_large_init(int n, uint32_t frame);
/* Bytes from large buffer pb's start (pb->buf) that it holds: the headroom and its frame. */
uint32_t pkt_large_room(const struct pktbuf *pb);
/* The end of pb's buffer, small or large. */
static inline const uint8_t *pkt_buf_end(const struct pktbuf *pb)
{
	return pb->buf + (pb->large ? pkt_large_room(pb) : PKT_BUF_SIZE);
}

/*
 * A buffer for a frame of len bytes: pkt_get() for one that fits a small
 * buffer, else one of the large pool; NULL if none (or len beyond both).
 */
struct pktbuf *pkt_get_len(size_t len);

/* Buffers free now that hold a frame of len bytes. */
int pkt_free_len(size_t len);
/* Buffers, free or not, that hold a frame of len bytes (large ones: 0 before pkt_large_init). */
int pkt_total_len(size_t len);

/* Take another reference. */
void pkt_ref(struct pktbuf *pb);

/* Drop a reference; the last one returns the buffer to the pool. */
void pkt_put(struct pktbuf *pb);

/*
 * Buffers charged to each consumer now: one with pb->charged == c + 1
 * counts in pkt_held_bufs[c] until its last reference goes, when pkt_put
 * takes it off and clears pb->charged.  The charging is net's (pkt_charge,
 * net/pktshare.h: it sets pb->charged and counts the buffer here, with
 * interrupts off); the pool only takes off.
 */
extern int pkt_held_bufs[PKT_MAX_CONSUMERS];

/* For the pools alone (pktbuf.c, the host tests' twin): pb's last reference went.  Interrupts off. */
static inline void pkt_uncharge(struct pktbuf *pb)
{
	if (pb->charged) {
		pkt_held_bufs[pb->charged - 1]--;
		pb->charged = 0;
	}
}

/* Buffers free now, in all, and the fewest ever free. */
int pkt_free_count(void);
int pkt_total(void);
int pkt_low_water(void);

#endif
