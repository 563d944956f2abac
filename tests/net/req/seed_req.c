/*
 * Seeds for fuzz_req: well-formed messages of every kind (enqueues to
 * queue 0..2 by the target's address convention (an address below 4 is a
 * queue index), with and without RQF_ACK, from every sender, and STATUS
 * answers with calls' and sinks' tags) with control bytes that dequeue,
 * overflow, revoke, grant and recreate.  Usage: seed_req <dir>
 */
#include <string.h>

#include "net/req/wire.h"
#include "tests/host/seed_common.h"

/* A tag with the top bit set is a sink's (net/call/call.h): a refusal kept for req_sync(). */
#define SINK(s) (0x80000000u | (uint32_t)(s))

static size_t msg(unsigned char *p, uint8_t op, uint8_t flags, uint8_t ctl, uint32_t tag,
		  int32_t status)
{
	struct req_msg m = { 0 };

	m.op = op;
	m.flags = flags;
	m.addr = tag % 4;	/* queue 0..2, or 3: none */
	m.tag = tag;
	m.status = status;
	p[0] = (unsigned char)sizeof m;
	p[1] = ctl;
	memcpy(p + 2, &m, sizeof m);
	return sizeof m + 2;
}

int main(int argc, char **argv)
{
	static unsigned char buf[4096];

	if (argc != 2)
		return 2;
	for (int s = 0; s < 4; s++) {
		size_t n = 0;
		for (int i = 0; i < 40; i++) {
			/* Mostly enqueues; now and then a call's verdict, or a refusal to a sink. */
			uint8_t ctl = (uint8_t)((i * 37 + s) | (i % 3 == 0 ? 0x10 : 0) | (i % 4 == 0 ? 0x20 : 0));
			if (s == 3 && i == 20)
				ctl |= 0xc0;
			if (i % 7 == 6)
				n += msg(buf + n, RQ_STATUS, 0, ctl, (uint32_t)(i + 1), RQS_OK);
			else if (i % 5 == 4)
				n += msg(buf + n, RQ_STATUS, 0, ctl, SINK(s * 40 + i), 1 + i % (RQS_NSTATUS - 1));
			else
				n += msg(buf + n, RQ_ENQ, i % 8 == 1 ? RQF_ACK : 0, ctl, SINK(s + i), 0);
		}
		if (seed_write_nth(argv[1], s, buf, n))
			return 1;
	}
	return 0;
}
