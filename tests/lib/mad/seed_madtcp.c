/*
 * Seeds for fuzz_madtcp: the set-up (true ids), then node 0 sending and
 * receiving messages of a few packs, and a stream with a malformed
 * header and its body between them.
 */
#include <stdio.h>

#include "tests/host/seed_common.h"

int main(int argc, char **argv)
{
	static const unsigned char a[] = {
		0, 1, 1,		/* any read size; nodes 1 and 2 say their ids */
		1, 2, 4, 8, 2,		/* send: two packs of 32 and 64 bytes; receive */
		1, 0, 2,		/* an empty message */
		1, 4, 1, 1, 1, 1, 2,
	};
	static const unsigned char b[] = {
		3, 1, 1,		/* reads of at most 3 bytes */
		0, 0, 24, 0,		/* 24 bytes into node 1's stream: */
		0x31, 0x44, 0x41, 0x4d, 1, 0, 1, 0, 0, 0, 0, 0, 4, 0, 0, 0, 9, 9, 9, 9,
		'b', 'o', 'd', 'y',
		2, 1, 1, 3, 2,
	};

	if (!seed_args(argc, argv))
		return 2;
	if (seed_write(argv[1], "messages", a, sizeof a) || seed_write(argv[1], "malformed", b, sizeof b))
		return 1;
	return 0;
}
