/*
 * What the seeds of fuzz_madcell and fuzz_madreq share: the operations
 * both targets read (node k sends packs, node 0 receives one message),
 * written into seed_common.h's seed, and the first two seeds of each:
 * messages from both nodes, small and of several chunks, received one by
 * one and in bulk, then enough of them to wrap the buffer.
 */
#ifndef TESTS_LIB_MAD_SEED_MAD_STREAM_H
#define TESTS_LIB_MAD_SEED_MAD_STREAM_H

#include "tests/host/seed_common.h"

/* Four packs (modes 0..3, lengths) of several chunks, and one small pack. */
static const unsigned m4[] = { 1, 0, 3, 2 }, l4[] = { 4, 4000, 100, 4096 };
static const unsigned m1[] = { 0 }, l1[] = { 16 };

static void w16(unsigned v) { b((int)(v & 0xff)); b((int)(v >> 8)); }
/* Node k sends n packs of (mode 0..3, len). */
static void send(int k, int n, const unsigned *mode, const unsigned *len)
{
	b((k - 1) << 2);
	b(n - 1);
	for (int i = 0; i < n; i++)
		w16(mode[i] | len[i] << 2);
}
static void recv1(void) { b(2); }

/* Seeds 0 and 1 in dir: 0 or 1, as save() returns. */
static int save_whole_streams(const char *dir)
{
	int bad = 0;

	send(1, 4, m4, l4); send(2, 1, m1, l1); recv1(); recv1(); recv1();
	bad |= save(dir, 0);
	for (int k = 0; k < 20; k++) {
		send(1, 4, m4, l4);
		send(2, 1, m1, l1);
		recv1();
		recv1();
	}
	bad |= save(dir, 1);
	return bad;
}

#endif
