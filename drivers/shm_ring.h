/*
 * The shared-memory link's layout: a wire format, since every node reads
 * what the others write.  It fills the memory of QEMU's ivshmem device
 * (BAR2), whose size is a power of two; every offset below is a function
 * of that size and the number of nodes alone, so every node computes the
 * same layout without asking anyone.
 *
 *   0            a control block per node, SHM_CTL bytes at node * SHM_CTL
 *   shm_lines()  SHM_LINES cache lines that no ring uses: a measurement of
 *                the memory itself bounces a word through them (the
 *                bench's floor-line row), nodes 0 and 1 writing one each
 *   shm_rings()  a ring per ordered pair of nodes (src -> dst), at
 *                shm_rings() + (dst * nodes + src) * shm_ring_bytes(slots)
 *
 * A ring has one producer (src) and one consumer (dst), each writing its
 * own cache line: the producer's holds tail, the consumer's head, both
 * free-running 32-bit counts of frames.  Then `slots` slots of `slot`
 * bytes each (struct shm_geom: 2 KiB in a small region, up to 64 KiB where
 * the region holds as many slots of that size): a 32-bit stamp, then the
 * frame (an Ethernet frame without FCS, 14 bytes up to the slot's room,
 * shm_frame_max: 2044 bytes to 65535).  Frame n (counting from 0) goes in slot n & (slots - 1);
 * its stamp, stored after the frame, is shm_stamp(n + 1, length): the low
 * 16 bits of the count it brings the ring to, and its length.  A frame is
 * in the ring from the moment its stamp is stored until head passes it;
 * tail follows the stamps (a producer that reboots continues from it).
 *
 * The consumer looks for the next frame in its slot's stamp, not in tail:
 * the stamp shares a cache line with the frame's first 60 bytes, so a
 * short frame crosses from one host CPU to the other as one line, and
 * the poll reads no line the frame does not need.  A stamp left from an
 * earlier turn of the ring names a count `slots` (or a multiple of it,
 * below 2^16) lower: it never matches.  The producer reads head only when
 * the ring looks full by the head it last read.
 *
 * A control block has `armed`, written by its node: nonzero while it
 * waits for a doorbell.  A producer that has published a frame to dst and
 * then finds dst armed rings dst's doorbell, unless one it rang is still
 * on its way: each ring counts the doorbells its producer rang (rung, in
 * the producer's line) and the consumer copies that count (heard, in its
 * line) each time it drains and at every tick, so a producer rings again
 * only once rung == heard.  A doorbell is an exit into QEMU (about 24 us
 * under TCG here); a consumer busy in a thread, armed, had one for every
 * frame, where one per drain wakes it as well.
 *
 * Nothing read from the region is trusted: a node validates every count
 * and length another node wrote before it uses it (tail - head <= slots,
 * 14 <= length <= shm_frame_max), so another node's bug can cost this node only
 * frames, never memory outside the region.  Pure: host unit tests build
 * this header as it is.
 */
#ifndef DRIVERS_SHM_RING_H
#define DRIVERS_SHM_RING_H

#include <stddef.h>
#include <stdint.h>

#define SHM_CTL 64			/* bytes of a node's control block */
#define SHM_LINES 2			/* cache lines after the control blocks */
#define SHM_RING_HDR 128		/* the producer's and the consumer's line */
#define SHM_SLOT_MIN 2048		/* bytes of a slot: stamp and frame */
#define SHM_SLOT_MAX 65536
#define SHM_SLOTS_MAX 64
#define SHM_SLOTS_MIN 4
#define SHM_FRAME_MIN 14
#define SHM_FRAME_LIMIT 65535		/* a stamp's low half */

struct shm_ctl {
	volatile uint32_t armed;
	uint8_t pad[SHM_CTL - 4];
};

struct shm_ring {
	volatile uint32_t tail;		/* the producer's: frames published */
	volatile uint32_t rung;		/* the producer's: doorbells it rang the consumer */
	uint8_t pad0[56];
	volatile uint32_t head;		/* the consumer's: frames taken */
	volatile uint32_t heard;	/* the consumer's: rung, as it was when it last drained */
	uint8_t pad1[56];
	/* then the slots */
};

struct shm_slot {
	volatile uint32_t stamp;	/* shm_stamp(count after this frame, its length) */
	uint8_t frame[];		/* up to shm_frame_max() bytes */
};

/*
 * The geometry of the rings: bytes of a slot and slots a ring, both powers
 * of two.  shm_geom() finds it from the region's size and the nodes alone.
 */
struct shm_geom {
	uint32_t slot;			/* SHM_SLOT_MIN..SHM_SLOT_MAX */
	unsigned slots;			/* SHM_SLOTS_MIN..SHM_SLOTS_MAX; 0: no rings fit */
};

/* The stamp of the frame of len bytes that brings the ring's count to count. */
static inline uint32_t shm_stamp(uint32_t count, uint32_t len)
{
	return count << 16 | len;
}

/* Is stamp that of the frame that brings the count to count?  Then its length is stamp & 0xffff. */
static inline int shm_stamp_is(uint32_t stamp, uint32_t count)
{
	return (stamp >> 16) == (count & 0xffff);
}

_Static_assert(sizeof(struct shm_ctl) == SHM_CTL, "a control block is one cache line");
_Static_assert(sizeof(struct shm_ring) == SHM_RING_HDR, "a ring's header is two cache lines");
_Static_assert(offsetof(struct shm_ring, head) == 64, "head on its own cache line");
_Static_assert(offsetof(struct shm_slot, frame) == 4, "a frame right after its stamp");
_Static_assert(4 + 1514 <= SHM_SLOT_MIN, "an Ethernet frame fits the smallest slot");
_Static_assert(SHM_SLOTS_MAX < 1 << 16, "an earlier turn's stamp never matches");
_Static_assert(SHM_RING_HDR % 64 == 0 && SHM_SLOT_MIN % 64 == 0, "a slot starts a cache line");

/* The largest frame a slot of g holds. */
static inline uint32_t shm_frame_max(struct shm_geom g)
{
	return g.slot - 4 < SHM_FRAME_LIMIT ? g.slot - 4 : SHM_FRAME_LIMIT;
}

/* The lines no ring uses: after the control blocks. */
static inline uint64_t shm_lines(int nodes)
{
	return (uint64_t)nodes * SHM_CTL;
}

/* Where the rings start: after the control blocks and the lines, page aligned. */
static inline uint64_t shm_rings(int nodes)
{
	return ((uint64_t)(nodes + SHM_LINES) * SHM_CTL + 4095) & ~(uint64_t)4095;
}

static inline uint64_t shm_ring_bytes(struct shm_geom g)
{
	return SHM_RING_HDR + (uint64_t)g.slots * g.slot;
}

/* Bytes the layout takes for nodes with rings of geometry g. */
static inline uint64_t shm_bytes(int nodes, struct shm_geom g)
{
	return shm_rings(nodes) + (uint64_t)nodes * nodes * shm_ring_bytes(g);
}

/*
 * The geometry of a region of size bytes shared by nodes: the largest
 * slot (SHM_SLOT_MAX down to SHM_SLOT_MIN) of which SHM_SLOTS_MAX a ring
 * fit; failing that, SHM_SLOT_MIN with the most slots (a power of two)
 * that fit; slots 0 if not even SHM_SLOTS_MIN do.  A ring always has as
 * many slots as it can up to SHM_SLOTS_MAX: a larger slot is taken only
 * where it costs no slots.
 */
static inline struct shm_geom shm_geom(uint64_t size, int nodes)
{
	struct shm_geom g = { SHM_SLOT_MAX, SHM_SLOTS_MAX };

	if (nodes < 1)
		return (struct shm_geom){ SHM_SLOT_MIN, 0 };
	for (; g.slot > SHM_SLOT_MIN; g.slot /= 2)
		if (shm_bytes(nodes, g) <= size)
			return g;
	for (; g.slots >= SHM_SLOTS_MIN; g.slots /= 2)
		if (shm_bytes(nodes, g) <= size)
			return g;
	g.slots = 0;
	return g;
}

static inline volatile struct shm_ctl *shm_ctl(void *base, int node)
{
	return (volatile struct shm_ctl *)((uint8_t *)base + (size_t)node * SHM_CTL);
}

static inline struct shm_ring *shm_ring(void *base, int nodes, struct shm_geom g, int src, int dst)
{
	return (struct shm_ring *)((uint8_t *)base + shm_rings(nodes) +
				   ((uint64_t)dst * nodes + src) * shm_ring_bytes(g));
}

static inline struct shm_slot *shm_slot(struct shm_ring *r, struct shm_geom g, uint32_t n)
{
	return (struct shm_slot *)((uint8_t *)r + SHM_RING_HDR + (size_t)(n & (g.slots - 1)) * g.slot);
}

#endif
