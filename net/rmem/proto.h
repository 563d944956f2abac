/*
 * Remote memory on the wire, and the receiver's protection check.
 *
 * Every message is a 24-byte header (struct rmem_msg) and, for some
 * operations, data.  The issuer names its request with a tag (a call's or
 * a sink's, net/call/call.h); answers (READ data, atomic results,
 * status) carry the tag back and
 * nothing else that could steer them: where READ data lands is decided by
 * the issuer's own record of the request, never by the answer.
 *
 * rmem_parse() validates a message's structure; rmem_check() decides
 * whether an operation may touch a segment (paper 2.1: "the remote
 * co-processor uses the segment descriptor number, the offset, and the
 * size to validate the request").  Both are pure: host unit tests and the
 * fuzz target drive them as they are.
 */
#ifndef NET_RMEM_PROTO_H
#define NET_RMEM_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define RMEM_PROTO 3		/* fabric protocol number */
#define RMEM_HDR_LEN 24
/* The most data one message carries: a frame of FAB_FRAME_LIMIT bytes (rmem.h, rmem_max_xfer). */
#define RMEM_DATA_MAX 65453
#define RMEM_NAME_LEN 32

enum rmem_op {
	RM_WRITE = 1,		/* hdr + count bytes: store at seg/off */
	RM_READ_REQ = 2,	/* hdr: send count bytes from seg/off back */
	RM_READ_RESP = 3,	/* hdr + count bytes: the answer to tag */
	RM_CAS = 4,		/* hdr + expect(8) + desired(8) at seg/off */
	RM_FADD = 5,		/* hdr + addend(8) at seg/off */
	RM_ATOMIC_RESP = 6,	/* hdr + old value(8) */
	RM_STATUS = 7,		/* hdr: status of tag */
	RM_CAS_BLOCK = 8,	/* hdr + count/8 pairs expect(8) desired(8): a CAS on each word of
				   [off, off + count); answered by a READ_RESP of the words found */
	RM_NOPS
};

enum {				/* rmem_msg.flags */
	RM_F_INTR = 0x01,	/* notify the destination segment */
	RM_F_ACK = 0x02,	/* answer with a STATUS even on success */
	RM_F_RAW = 0x04,	/* came (and is answered) as a raw frame */
	RM_F_MARKED = 0x08,	/* a marked WRITE (rmem.h RMEM_MARKED): its refusal is remembered */
};

/* Status codes on the wire (rmem_msg.status). */
enum rmem_status {
	RMS_OK = 0,
	RMS_BAD_SEG = 1,	/* no such segment */
	RMS_STALE = 2,		/* generation revoked */
	RMS_RIGHTS = 3,		/* the operation needs a right the issuer lacks */
	RMS_BOUNDS = 4,		/* off + count beyond the segment */
	RMS_INHIBIT = 5,	/* write-inhibited */
	RMS_ALIGN = 6,		/* atomic not on an 8-byte boundary */
	RMS_MALFORMED = 7,	/* fields inconsistent */
	RMS_NSTATUS
};

struct rmem_msg {
	uint8_t op;
	uint8_t flags;
	uint16_t seg;		/* target segment */
	uint32_t gen;		/* the issuer's generation */
	uint32_t off;		/* offset in the segment */
	uint32_t count;		/* data bytes */
	uint32_t tag;		/* the issuer's request id */
	int32_t status;		/* answers: enum rmem_status */
} __attribute__((packed));
_Static_assert(sizeof(struct rmem_msg) == RMEM_HDR_LEN, "rmem header is 24 bytes");

/*
 * The name service's answer about a segment (net/call/call.h, kind
 * NAME_SEGMENT): what the asker's descriptor will carry.
 */
struct rmem_seg_answer {
	uint16_t seg;
	uint16_t rights;	/* RMEM_R/W/A granted to the asker (never 0) */
	uint32_t gen;		/* the asker's generation */
	uint64_t size;
} __attribute__((packed));
_Static_assert(sizeof(struct rmem_seg_answer) == 16, "segment answer is 16 bytes");

/* What the check needs to know of a segment, for the issuing node. */
struct rmem_segview {
	int exists;
	uint32_t gen;		/* current generation for the issuer */
	uint8_t rights;		/* RMEM_R/W/A for the issuer */
	uint64_t size;
	int inhibit;
	uintptr_t base;		/* where it starts: atomics need base + off 8-aligned */
};

/*
 * Validate the structure of len bytes at p.  On success fill *m and point
 * *data at the data part (dlen bytes) and return RMS_OK; else RMS_MALFORMED.
 */
int rmem_parse(const uint8_t *p, size_t len, struct rmem_msg *m, const uint8_t **data,
	       size_t *dlen);

/* The same checks on a header already copied out, whose message carries dlen bytes of data. */
int rmem_parse_header(const struct rmem_msg *m, size_t dlen);

/* May operation m touch the segment seen as sv?  RMS_OK or why not. */
int rmem_check(const struct rmem_segview *sv, const struct rmem_msg *m);

/* The negative errno an issuer reports for a status. */
int rmem_status_errno(int status);

extern const char *const rmem_status_names[RMS_NSTATUS];

#endif
