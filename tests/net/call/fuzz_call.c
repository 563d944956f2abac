/*
 * libFuzzer target: the request/answer facility's messages (fences and
 * name lookups, net/call/call_wire.c), as call.c's handler receives
 * them from any node.  Every input is one message; call_msg_parse must
 * accept exactly what the wire format allows, and on acceptance keep its
 * promises: the body lies within the input and is len bytes long, a name
 * has 1..CALL_NAME_MAX bytes and no NUL, an answer at most
 * CALL_ANSWER_MAX bytes and none after a refusal, the header's fields
 * are the input's first 12 bytes; a refusal is -EPROTO.  __builtin_trap()
 * on a broken promise.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/call/call_wire.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

/* What the parser must say, from call_wire.h. */
static int model(const uint8_t *p, size_t len)
{
	struct call_msg m;
	const uint8_t *body = p + CALL_HDR_LEN;

	if (len < CALL_HDR_LEN)
		return 0;
	memcpy(&m, p, sizeof m);
	if ((size_t)m.len != len - CALL_HDR_LEN)
		return 0;
	switch (m.op) {
	case CALL_FENCE:
	case CALL_FENCE_DONE:
		return m.len == 0 && m.kind == 0 && m.status == 0;
	case CALL_LOOKUP:
		if (m.kind < 1 || m.kind >= NAME_KINDS || m.status || m.len < 1 || m.len > CALL_NAME_MAX)
			return 0;
		for (size_t i = 0; i < m.len; i++)
			if (!body[i])
				return 0;
		return 1;
	case CALL_LOOKUP_DONE:
		return m.kind >= 1 && m.kind < NAME_KINDS && m.status < CALL_NSTATUS &&
		       m.len <= CALL_ANSWER_MAX && (m.status == CALL_OK || m.len == 0);
	default:
		return 0;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A private copy of exactly size bytes: AddressSanitizer sees over-reads. */
	uint8_t *p = malloc(size ? size : 1);
	struct call_msg m;
	const uint8_t *body = NULL;

	if (!p)
		abort();
	memcpy(p, data, size);
	int r = call_msg_parse(p, size, &m, &body);
	CHECK((r == 0) == model(p, size));
	CHECK(r == 0 || r == -EPROTO);		/* the only refusal call_wire.h names */
	if (r == 0) {
		CHECK(memcmp(&m, p, sizeof m) == 0);
		CHECK(body == p + CALL_HDR_LEN && CALL_HDR_LEN + (size_t)m.len == size);
		if (m.op == CALL_LOOKUP)
			CHECK(m.len >= 1 && m.len <= CALL_NAME_MAX && !memchr(body, 0, m.len));
		if (m.op == CALL_LOOKUP_DONE)
			CHECK(m.len <= CALL_ANSWER_MAX && (m.status == CALL_OK || m.len == 0));
	}
	free(p);
	return 0;
}
