#include <errno.h>
#include <string.h>

#include "net/call/call_wire.h"

int call_msg_parse(const uint8_t *p, size_t len, struct call_msg *m, const uint8_t **body)
{
	if (len < CALL_HDR_LEN)
		return -EPROTO;
	memcpy(m, p, sizeof *m);
	*body = p + CALL_HDR_LEN;
	if (m->len != len - CALL_HDR_LEN)
		return -EPROTO;
	switch (m->op) {
	case CALL_FENCE:
	case CALL_FENCE_DONE:
		return m->len == 0 && m->kind == 0 && m->status == CALL_OK ? 0 : -EPROTO;
	case CALL_LOOKUP:
		if (m->kind == 0 || m->kind >= NAME_KINDS || m->status != CALL_OK)
			return -EPROTO;
		if (m->len == 0 || m->len > CALL_NAME_MAX || memchr(*body, '\0', m->len))
			return -EPROTO;
		return 0;
	case CALL_LOOKUP_DONE:
		if (m->kind == 0 || m->kind >= NAME_KINDS || m->status >= CALL_NSTATUS)
			return -EPROTO;
		if (m->len > CALL_ANSWER_MAX || (m->status != CALL_OK && m->len != 0))
			return -EPROTO;
		return 0;
	default:
		return -EPROTO;
	}
}
