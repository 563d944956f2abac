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
	RQ_STATUS = 2,		/* the verdict on tag */
	RQ_LOOKUP = 3,		/* name service: payload is the name */
	RQ_LOOKUP_RESP = 4,	/* addr and gen of the queue, or a status */
	RQ_FENCE = 5,		/* answer with a STATUS once everything before it is done */
};

enum { RQF_ACK = 1 };		/* answer an RQ_ENQ with a STATUS even on success */

enum req_status { RQS_OK = 0, RQS_NOQUEUE = 1, RQS_NOENT = 2, RQS_NSTATUS };

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

#define REQ_WIRE_NAME_MAX 31

/*
 * Validate len bytes at p.  0 with *m filled, and name and namelen set for
 * lookups; -1 if malformed.
 */
int req_wire_parse(const uint8_t *p, size_t len, struct req_msg *m, const char **name,
		   size_t *namelen);

#endif
