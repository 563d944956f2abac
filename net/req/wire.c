#include <string.h>

#include "net/req/wire.h"

int req_wire_parse(const uint8_t *p, size_t len, struct req_msg *m, const char **name,
		   size_t *namelen)
{
	size_t extra;

	if (len < sizeof *m)
		return -1;
	memcpy(m, p, sizeof *m);
	extra = len - sizeof *m;
	*name = NULL;
	*namelen = 0;
	if (m->flags & ~RQF_ACK || m->reserved)
		return -1;
	switch (m->op) {
	case RQ_ENQ:
	case RQ_FENCE:
		return extra == 0 ? 0 : -1;
	case RQ_STATUS:
	case RQ_LOOKUP_RESP:
		if (extra || m->status < 0 || m->status >= RQS_NSTATUS)
			return -1;
		return 0;
	case RQ_LOOKUP:
		if (extra == 0 || extra > REQ_WIRE_NAME_MAX || memchr(p + sizeof *m, '\0', extra))
			return -1;
		*name = (const char *)(p + sizeof *m);
		*namelen = extra;
		return 0;
	default:
		return -1;
	}
}
