/*
 * Write seed inputs for fuzz_rmem in its format: message chunks
 * (src, 2-byte little-endian length, message) and table changes
 * (0xf0 | cmd, a, b, c); src 0x40 | node is a raw frame, 0x80 | node
 * a request while no answer can go.  The messages are valid requests against the
 * table fuzz_rmem.c's setup() builds on node 1, near misses, and STATUS
 * answers with calls' and sinks' tags (some with no such status):
 *
 *   slot 0 "data"  2048 bytes, all rights; node 2 revoked (its gen is 2)
 *   slot 1 "ro"    1409 bytes, read only
 *   slot 2 "none"  1408 bytes, node 2 read/write only
 *   slot 3 "word"  8 bytes, all rights
 *   slot 4 "odd"   100 bytes, read/write/atomic, write-inhibited
 *   slot 5 "tiny"  1 byte, write only
 *   slot 6 "ovl"   512 bytes inside "data", all rights, slot reused (gen 3)
 *
 * (generations 1 unless said).  Usage: seed_rmem <dir>
 */
#include <string.h>

#include "net/rmem/proto.h"
#include "net/rmem/rmem.h"
#include "tests/host/rmem_fixture.h"
#include "tests/host/seed_common.h"

static void msg(int src, uint8_t op, uint8_t flags, uint16_t seg, uint32_t gen, uint32_t off,
		uint32_t count, size_t dlen, const char *name)
{
	struct rmem_msg m = rmem_msg_of(op, flags, seg, gen, off, count, (uint32_t)olen, 0);

	b(src);	/* 0xe0..0xef: the odd sources */
	b((int)(RMEM_HDR_LEN + dlen));
	b((int)((RMEM_HDR_LEN + dlen) >> 8));
	put(&m, sizeof m);
	for (size_t i = 0; i < dlen; i++)
		b(name ? (uint8_t)name[i] : (uint8_t)(i * 29 + off + 1));
}

static void wr(int src, uint16_t seg, uint32_t gen, uint32_t off, uint32_t count)
{
	msg(src, RM_WRITE, 0, seg, gen, off, count, count, NULL);
}

static void rd(int src, uint16_t seg, uint32_t gen, uint32_t off, uint32_t count)
{
	msg(src, RM_READ_REQ, 0, seg, gen, off, count, 0, NULL);
}

static void cas(int src, uint16_t seg, uint32_t gen, uint32_t off)
{
	msg(src, RM_CAS, 0, seg, gen, off, 8, 16, NULL);
}

/* A block of words compare-and-swapped, their pairs of values after the header. */
static void cas_block(int src, uint16_t seg, uint32_t gen, uint32_t off, uint32_t words)
{
	msg(src, RM_CAS_BLOCK, 0, seg, gen, off, 8 * words, 16 * words, NULL);
}

static void fadd(int src, uint16_t seg, uint32_t gen, uint32_t off)
{
	msg(src, RM_FADD, 0, seg, gen, off, 8, 8, NULL);
}

/* A tag with the top bit set is a sink's (net/call/call.h): a refusal kept for rmem_sync(). */
#define SINK(s) (0x80000000u | (uint32_t)(s))

/* A STATUS answer to tag: what a refused asynchronous WRITE or a fence's verdict looks like. */
static void status(int src, uint8_t flags, uint32_t tag, int32_t st)
{
	struct rmem_msg m;
	size_t at = olen + 3;

	msg(src, RM_STATUS, flags, 0, 0, 0, 0, 0, NULL);
	memcpy(&m, out + at, sizeof m);
	m.tag = tag;
	m.status = st;
	memcpy(out + at, &m, sizeof m);
}

enum { C_GRANT, C_REVOKE, C_INHIBIT, C_UNEXPORT, C_EXPORT };

static void ctl(int cmd, uint8_t a, uint8_t b, uint8_t c)
{
	const uint8_t op[4] = { (uint8_t)(0xf0 | cmd), a, b, c };

	put(op, sizeof op);
}

int main(int argc, char **argv)
{
	int bad = 0;

	if (argc != 2)
		return 2;

	/* 0: every operation that works, on every segment. */
	wr(0, 0, 1, 0, 64);
	wr(3, 0, 1, 2047, 1);
	rd(0, 0, 1, 0, RMEM_DATA_MAX);
	cas(0, 0, 1, 8);
	fadd(5, 0, 1, 2040);
	rd(4, 1, 1, 1, RMEM_DATA_MAX);
	wr(2, 2, 1, 0, RMEM_DATA_MAX);
	rd(2, 2, 1, 1407, 1);
	fadd(0, 3, 1, 0);
	cas(7, 3, 1, 0);
	cas_block(0, 0, 1, 16, 4);
	cas_block(2, 3, 1, 0, 3);
	rd(0, 4, 1, 0, 100);
	fadd(0, 4, 1, 88);
	wr(0, 5, 1, 0, 1);
	wr(6, 6, 3, 500, 12);
	msg(3, RM_STATUS, 0, 0, 0, 0, 0, 0, NULL);
	status(0, 0, SINK(3), RMS_RIGHTS);		/* a sink's refusals */
	status(3, RM_F_RAW, SINK(0), RMS_BOUNDS);
	status(4, 0, SINK(0x7fffffff), RMS_OK);	/* a sink's ACK */
	bad |= save(argv[1], 0);

	/* 1: revoke and re-grant, stale generations. */
	wr(2, 0, 1, 0, 8);		/* stale */
	wr(2, 0, 2, 0, 8);		/* rights */
	ctl(C_GRANT, 0, 2, RMEM_ALL);
	wr(2, 0, 2, 0, 8);		/* ok */
	ctl(C_REVOKE, 0, 2, 0);
	wr(2, 0, 2, 0, 8);		/* stale again */
	ctl(C_GRANT, 0, 2, RMEM_RW);
	wr(2, 0, 3, 16, 8);
	wr(3, 0, 1, 16, 8);		/* others unaffected */
	ctl(C_REVOKE, 3, 0x81, 0);	/* everyone, on "word" */
	fadd(0, 3, 1, 0);
	fadd(0, 3, 2, 0);
	bad |= save(argv[1], 1);

	/* 2: unexport, re-export in the same slot, old generations. */
	wr(0, 6, 3, 0, 32);
	ctl(C_UNEXPORT, 6, 0, 0);
	wr(0, 6, 3, 0, 32);		/* bad segment */
	status(0, 0, SINK(1), RMS_BAD_SEG);		/* the refusal of the write before */
	ctl(C_EXPORT, 7, RMEM_ALL, 9);	/* "s9" on region 7 */
	wr(0, 6, 3, 0, 32);		/* stale */
	wr(0, 6, 5, 0, 32);		/* the new segment */
	wr(0, 6, 5, 1400, 100);
	rd(0, 6, 5, 0, 8);
	ctl(C_EXPORT, 0, RMEM_ALL, 0);	/* "data" again: -EEXIST */
	ctl(C_UNEXPORT, 0, 0, 0);
	ctl(C_EXPORT, 6, RMEM_R, 0);	/* "data" on region 6, slot 0 */
	rd(0, 0, 3, 0, 512);
	bad |= save(argv[1], 2);

	/* 3: the edges: last byte, one past, wrapping offsets, misaligned atomics. */
	wr(0, 0, 1, 2047, 1);
	wr(0, 0, 1, 2048, 1);
	wr(0, 0, 1, 2047, 2);
	wr(0, 0, 1, 0xffffffffu, 1);
	wr(0, 0, 1, 0xfffffc00u, 1024);
	rd(0, 0, 1, 0xfffffa80u, RMEM_DATA_MAX);
	rd(0, 2, 1, 0, RMEM_DATA_MAX);
	wr(2, 2, 1, 1, RMEM_DATA_MAX);
	fadd(0, 3, 1, 4);
	cas(0, 3, 1, 8);
	cas(0, 0, 1, 2044);
	cas(0, 0, 1, 12);		/* in bounds, 4 off the word */
	cas_block(0, 0, 1, 2032, 3);	/* its last word beyond the segment */
	cas_block(0, 0, 1, 4, 2);	/* 4 off the word */
	fadd(0, 6, 3, 4);
	fadd(0, 0, 1, 1);
	fadd(0, 4, 1, 96);
	wr(0, 5, 1, 0, 2);
	wr(0, 5, 1, 1, 1);
	bad |= save(argv[1], 3);

	/* 4: write inhibit on and off; reads and atomics while inhibited. */
	wr(0, 4, 1, 0, 8);
	rd(0, 4, 1, 0, 8);
	cas(0, 4, 1, 0);
	ctl(C_INHIBIT, 4, 0, 0);
	wr(0, 4, 1, 0, 8);
	ctl(C_INHIBIT, 0, 0, 1);
	wr(0, 0, 1, 0, 8);
	rd(0, 0, 1, 0, 8);
	fadd(0, 0, 1, 0);
	ctl(C_INHIBIT, 0, 0, 0);
	wr(0, 0, 1, 0, 8);
	bad |= save(argv[1], 4);

	/* 5: malformed and misdirected messages among good ones. */
	msg(0, RM_WRITE, 0x08, 0, 1, 0, 8, 8, NULL);
	msg(0, RM_WRITE, 0, 0, 1, 0, 9, 8, NULL);
	msg(0, RM_CAS, 0, 0, 1, 0, 8, 8, NULL);
	msg(0, RM_READ_REQ, 0, 0, 1, 0, 0, 0, NULL);
	msg(0, RM_STATUS, 0, 0, 0, 0, 0, 0, NULL);
	msg(0, RM_READ_RESP, 0, 0, 0, 0, 4, 4, NULL);
	msg(0, 11, 0, 0, 1, 0, 8, 8, NULL);
	wr(1, 0, 1, 0, 8);		/* from the node itself */
	wr(0, 9, 1, 0, 8);
	wr(0, 0xffff, 1, 0, 8);
	status(0, 0, SINK(2), RMS_NSTATUS);		/* malformed: no such status */
	status(0, 0, SINK(2), -1);
	status(0, 0, SINK(2), RMS_MALFORMED);
	msg(0, RM_STATUS, RM_F_RAW, 0, 1, 0, RMEM_RW, 0, NULL);
	msg(0, RM_ATOMIC_RESP, 0, 0, 0, 0, 8, 8, NULL);
	msg(0, RM_READ_RESP, 0, 0, 0, 0, 16, 16, NULL);
	wr(0, 0, 1, 0, 8);
	wr(0xe5, 0, 1, 0, 8);		/* from node 65: beyond the table */
	wr(0xef, 0, 1, 0, 8);		/* from node -1 */
	bad |= save(argv[1], 5);

	/* 6: exports at the limits of their arguments. */
	ctl(C_EXPORT, 7, RMEM_ALL, 17);		/* 31-character name */
	ctl(C_EXPORT, 7, RMEM_ALL, 18);		/* 32: -EINVAL */
	ctl(C_EXPORT, 7, RMEM_ALL, 16);		/* empty: -EINVAL */
	ctl(C_EXPORT, 7, 4 << 5 | RMEM_ALL, 10);	/* size 0 */
	ctl(C_EXPORT, 7, 5 << 5 | RMEM_ALL, 11);	/* base NULL */
	ctl(C_EXPORT, 7, 6 << 5 | RMEM_ALL, 12);	/* size 2^32 */
	ctl(C_EXPORT, 7, 7 << 5 | RMEM_ALL, 13);	/* size 2^64 - 1 */
	ctl(C_EXPORT, 7, 8 | RMEM_ALL, 14);		/* unknown rights */
	wr(0, 7, 1, 1499, 1);
	status(0, 0, SINK(5), RMS_INHIBIT);
	status(0, RM_F_RAW, SINK(5), RMS_STALE);
	ctl(C_GRANT, 7, 0x80, RMEM_R);		/* node -2: -EINVAL */
	ctl(C_GRANT, 0x88, 3, RMEM_R);		/* segment 7 */
	ctl(C_REVOKE, 0xff, 3, 0);		/* segment 126: -EBADF */
	bad |= save(argv[1], 6);

	/* 7: raw frames (0x40 | node) and requests while no answer can go (0x80 | node). */
	fadd(0x40, 0, 1, 0);			/* a raw atomic: refused, twice */
	fadd(0x40, 0, 1, 0);
	cas(0x40, 3, 1, 0);
	wr(0x40, 0, 1, 64, 8);			/* a raw WRITE: applied */
	rd(0x40, 0, 1, 64, 8);
	fadd(0x80, 0, 1, 0);			/* offered again later: nothing changes */
	wr(0x80, 0, 1, 0, 8);			/* no answer needed: applied */
	wr(0x80, 0, 9, 0, 8);			/* stale: its refusal must wait */
	fadd(0, 0, 1, 0);
	bad |= save(argv[1], 7);
	return bad;
}
