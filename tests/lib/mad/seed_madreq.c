/*
 * Seeds for fuzz_madreq: messages from both nodes, small and of several
 * chunks, EXPRESS and CHEAPER, received one by one and in bulk, enough of
 * them to wrap the ring (credit); then the same with node 2 writing bytes
 * of its own and enqueueing words for them (naming another node, longer
 * than a chunk, beyond the ring, announcing a header it never wrote).
 * Usage: seed_madreq <dir>
 */
#include <stdint.h>
#include <string.h>

#include "tests/lib/mad/seed_mad_stream.h"

static void hostile(int k, unsigned off, int len, const uint8_t *bytes, uint32_t word)
{
	b(1 | (k - 1) << 2);
	w16(off);
	b(len);
	for (int i = 0; i < len; i++)
		b(bytes[i]);
	for (int i = 0; i < 4; i++)
		b((int)(word >> (8 * i) & 0xff));
}

int main(int argc, char **argv)
{
	/* a Madeleine header: magic "MAD1", 1 pack, src 2, no EXPRESS, a 16-byte body */
	static const uint8_t hdr[20] = { '1', 'D', 'A', 'M', 1, 0, 2, 0, 0, 0, 0, 0, 16, 0, 0, 0, 16, 0, 0, 0 };
	static const uint8_t junk[32] = { 0xff, 1, 2, 3 };
	int bad = 0, i = 2;

	if (argc != 2)
		return 2;
	bad |= save_whole_streams(argv[1]);
	send(1, 4, m4, l4); hostile(2, 0, 20, hdr, 2u << 24 | 20); send(1, 1, m1, l1); recv1(); recv1();
	bad |= save(argv[1], i++);
	send(2, 1, m1, l1); hostile(2, 0, 32, junk, 1u << 24 | 32); send(1, 1, m1, l1); recv1(); recv1(); recv1();
	bad |= save(argv[1], i++);
	hostile(2, 0, 20, hdr, 2u << 24 | 0x10000); hostile(2, 0, 0, hdr, 2u << 24 | 9000); send(1, 4, m4, l4);
	recv1(); recv1();
	bad |= save(argv[1], i++);
	return bad;
}
