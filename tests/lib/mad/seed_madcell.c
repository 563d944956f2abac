/*
 * Seeds for fuzz_madcell: messages from both nodes, small and of several
 * chunks, EXPRESS and CHEAPER, received one by one and in bulk, enough of
 * them to wrap the buffer (padding, credit); then the same with node 2
 * writing a chunk header of its own (a wrong number, a padding chunk, a
 * length beyond the buffer) and raising events for it; then sends that
 * break (a message's first chunk, a later one, by its control cell or an
 * AAL5 cell of its block) among whole ones.
 * Usage: seed_madcell <dir>
 */
#include <stdint.h>
#include <string.h>

#include "tests/lib/mad/seed_mad_stream.h"

/* The same, breaking deposit dep of it (its control cell, or an AAL5 cell after cells AAL5 cells). */
static void send_broken(int k, int n, const unsigned *mode, const unsigned *len, unsigned dep, int aal5,
			unsigned cells)
{
	b((k - 1) << 2 | 8);
	w16(dep | (unsigned)aal5 << 2 | cells << 3);
	b(n - 1);
	for (int i = 0; i < n; i++)
		w16(mode[i] | len[i] << 2);
}
static void hostile(int k, unsigned off, int len, const uint8_t *bytes, unsigned ea, unsigned el)
{
	b(1 | (k - 1) << 2);
	w16(off);
	b(len);
	for (int i = 0; i < len; i++)
		b(bytes[i]);
	w16(ea);
	w16(el);
}

/*
 * Found by the fuzzer: a send that only reported a lost message (-EIO)
 * spent the chunk number of the padding cell it did not send, and the
 * next message was out of step.
 */
static const uint8_t pad_not_sent[] = {
		0x00, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e,
		0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0x38, 0x38,
		0x38, 0x17, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38,
		0x38, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e,
		0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0x38, 0x38, 0x38, 0x17, 0x38, 0x38, 0x38, 0x38,
		0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38,
		0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38,
		0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e,
		0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0x3e, 0x00, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38,
		0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0xff, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38, 0x38,
		0x69, 0x02, 0x40, 0x04, 0x00, 0x2f, 0x00, 0x02, 0x02, 0x02,
};

int main(int argc, char **argv)
{
	/* chunk headers: len, seq, flags, pad */
	static const uint8_t wrong_seq[32] = { 16, 0, 0, 0, 9, 0, 0, 0 };
	static const uint8_t pad[32] = { 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0 };
	static const uint8_t huge[32] = { 0, 0, 1, 0, 0, 0, 0, 0 };
	int bad = 0, i = 2;

	if (argc != 2)
		return 2;
	bad |= save_whole_streams(argv[1]);
	send(1, 4, m4, l4); hostile(2, 0, 32, wrong_seq, 0, 64); send(1, 1, m1, l1); recv1(); recv1();
	bad |= save(argv[1], i++);
	send(2, 1, m1, l1); hostile(2, 64, 32, pad, 64, 32); send(1, 1, m1, l1); recv1(); recv1(); recv1();
	bad |= save(argv[1], i++);
	hostile(2, 0, 32, huge, 0, 65535); send(1, 4, m4, l4); recv1(); recv1();
	bad |= save(argv[1], i++);
	/* A message's later chunk lost (control cell, then an AAL5 cell), then its first; whole ones between. */
	send(1, 4, m4, l4); send_broken(1, 4, m4, l4, 1, 0, 0); send(1, 4, m4, l4); recv1(); recv1();
	send(1, 1, m1, l1); recv1(); recv1();
	send_broken(2, 4, m4, l4, 2, 1, 40); send(2, 1, m1, l1); recv1(); send(2, 1, m1, l1); recv1(); recv1();
	send_broken(1, 4, m4, l4, 0, 1, 3); send_broken(2, 1, m1, l1, 0, 0, 0); send(1, 4, m4, l4);
	send(2, 1, m1, l1); recv1(); recv1(); recv1();
	bad |= save(argv[1], i++);
	/* Breaks while the buffer wraps (padding among the deposits). */
	for (int k = 0; k < 24; k++) {
		if (k % 5 == 2)
			send_broken(1 + k % 2, 4, m4, l4, (unsigned)k % 4, k % 3 == 0, (unsigned)k * 7);
		else
			send(1 + k % 2, 4, m4, l4);
		recv1();
		if (k % 3 == 0)
			recv1();
	}
	bad |= save(argv[1], i++);
	put(pad_not_sent, sizeof pad_not_sent);
	bad |= save(argv[1], i++);
	return bad;
}
