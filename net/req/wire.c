#include <errno.h>
#include <string.h>

#include "net/req/wire.h"

int req_wire_parse(const uint8_t *p, size_t len, struct req_msg *m)
{
	if (len != sizeof *m)
		return -EPROTO;
	memcpy(m, p, sizeof *m);
	if (m->flags & ~(RQF_ACK | RQF_BODY) || m->reserved)
		return -EPROTO;
	switch (m->op) {
	case RQ_ENQ:
		return 0;
	case RQ_STATUS:
		return m->status < 0 || m->status >= RQS_NSTATUS ? -EPROTO : 0;
	default:
		return -EPROTO;
	}
}
