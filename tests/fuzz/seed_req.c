/*
 * Seeds for fuzz_req: the three queues' addresses are deterministic in the
 * target's arena (first buffers of 32, 64 and 128 bytes at offsets 0, 64,
 * 128) but the arena's base is not; so seeds carry well-formed messages of
 * every kind with control bytes that dequeue, overflow and recreate.
 * Usage: seed_req <dir>
 */
#include <stdio.h>
#include <string.h>

#include "net/req/wire.h"

static size_t put(unsigned char *out, uint8_t op, uint8_t ctl, const char *name)
{
	struct req_msg m = { 0 };
	size_t n = sizeof m;

	m.op = op;
	m.gen = 1;
	out[0] = (unsigned char)(sizeof m + (name ? strlen(name) : 0));
	out[1] = ctl;
	memcpy(out + 2, &m, sizeof m);
	if (name) {
		memcpy(out + 2 + sizeof m, name, strlen(name));
		n += strlen(name);
	}
	return n + 2;
}

int main(int argc, char **argv)
{
	static unsigned char buf[4096];
	char path[512];

	if (argc != 2)
		return 2;
	for (int s = 0; s < 4; s++) {
		size_t n = 0;
		for (int i = 0; i < 40; i++) {
			/* Mostly enqueues; now and then a status, or an op number no longer used. */
			uint8_t op = i % 7 == 6 ? RQ_STATUS : i % 5 == 4 ? 3 : RQ_ENQ;
			uint8_t ctl = (uint8_t)((i * 37 + s) | (i % 3 == 0 ? 0x10 : 0) | (i % 4 == 0 ? 0x20 : 0));
			if (s == 3 && i == 20)
				ctl |= 0xc0;
			n += put(buf + n, op, ctl, op == 3 ? "stress" : NULL);
		}
		snprintf(path, sizeof path, "%s/seed%d", argv[1], s);
		FILE *f = fopen(path, "wb");
		if (!f)
			return 1;
		fwrite(buf, 1, n, f);
		fclose(f);
	}
	return 0;
}
