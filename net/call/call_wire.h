/*
 * The request/answer facility's own messages (fabric protocol
 * CALL_PROTO): fences and name lookups.  Each is a 12-byte header and,
 * for a lookup, the name; for its answer, what the resolver returned.
 * Pure: host unit tests and the fuzz target drive call_msg_parse as it is.
 */
#ifndef NET_CALL_CALL_WIRE_H
#define NET_CALL_CALL_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define CALL_PROTO 9			/* fabric protocol number */
#define CALL_HDR_LEN 12
#define CALL_NAME_MAX 31		/* bytes of a name (no NUL on the wire) */
#define CALL_ANSWER_MAX 32		/* bytes of a lookup's answer */

enum call_op {
	CALL_FENCE = 1,			/* answer once everything sent before it was taken */
	CALL_FENCE_DONE = 2,
	CALL_LOOKUP = 3,		/* body: the name */
	CALL_LOOKUP_DONE = 4,		/* body: the answer (status CALL_OK only) */
};

/* What a name names (the resolver that answers it). */
enum name_kind {
	NAME_SEGMENT = 1,		/* remote memory: a segment */
	NAME_QUEUE = 2,			/* remote enqueue: a queue */
	NAME_CONN = 3,			/* hybrid deposit: a connection */
	NAME_KINDS
};

enum call_status {
	CALL_OK = 0,
	CALL_NOENT = 1,			/* no such name */
	CALL_DENIED = 2,		/* the name exists, the asker has no rights */
	CALL_NSTATUS
};

struct call_msg {
	uint8_t op;
	uint8_t kind;			/* LOOKUP and its answer: enum name_kind */
	uint16_t len;			/* body bytes after the header */
	uint32_t tag;			/* the asker's call */
	uint32_t status;		/* answers: enum call_status */
} __attribute__((packed));
_Static_assert(sizeof(struct call_msg) == CALL_HDR_LEN, "call header is 12 bytes");

/*
 * Validate len bytes at p.  0 with *m filled and *body pointing at its
 * m->len body bytes; -EPROTO if anything is out of place.
 */
int call_msg_parse(const uint8_t *p, size_t len, struct call_msg *m, const uint8_t **body);

#endif
