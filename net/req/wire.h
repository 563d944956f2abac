/*
 * REQ messages on the fabric (protocol FP_REQ), and their validation.
 * Pure: the fuzz target drives req_wire_parse as it is.
 */
#ifndef NET_REQ_WIRE_H
#define NET_REQ_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define REQ_PROTO 5		/* fabric protocol number */

enum req_op {
	RQ_ENQ = 1,		/* enqueue word into the queue at addr (generation gen) */
	RQ_STATUS = 2,		/* the verdict on tag (a call's or a sink's, net/call/call.h) */
};

enum {
	RQF_ACK = 1,		/* answer an RQ_ENQ with a STATUS even on success */
	RQF_BODY = 2,		/* announces the body WRITE just before it (reqmsg_send) */
};

enum req_status {
	RQS_OK = 0,
	RQS_NOQUEUE = 1,	/* no queue at that address */
	RQS_STALE = 2,		/* the sender's generation is not current: revoked */
	RQS_DENIED = 3,		/* the sender has no right to enqueue here */
	RQS_NOSPACE = 4,	/* the queue is closed for lack of memory */
	RQS_BROKEN = 5,		/* the queue's buffer header is out of range */
	RQS_NOBODY = 6,		/* the body it announces was refused: not announced */
	RQS_NSTATUS
};

struct req_msg {
	uint8_t op;
	uint8_t flags;
	uint16_t reserved;
	uint32_t gen;
	uint64_t addr;		/* the first buffer of the queue */
	uint32_t word;
	uint32_t tag;
	int32_t status;
} __attribute__((packed));
_Static_assert(sizeof(struct req_msg) == 28, "REQ message is 28 bytes");

/* The name service's answer about a queue (kind NAME_QUEUE). */
struct req_queue_answer {
	uint64_t addr;		/* the first buffer: what names the queue on the wire */
	uint32_t gen;
	uint32_t reserved;
} __attribute__((packed));
_Static_assert(sizeof(struct req_queue_answer) == 16, "queue answer is 16 bytes");

/* Validate len bytes at p.  0 with *m filled; -EPROTO if malformed. */
int req_wire_parse(const uint8_t *p, size_t len, struct req_msg *m);

#endif
