/*
 * Seeds for fuzz_fabric_rx: the handshake and traffic of each peer, keyed
 * and not; with losses, replays, a reboot and time passing.
 */
#include <stdio.h>
#include <string.h>

#include "tests/host/seed_common.h"

int main(int argc, char **argv)
{
	unsigned char s[256];
	size_t n;

	if (!seed_args(argc, argv))
		return 2;
	for (int keyed = 0; keyed < 2; keyed++) {
		char name[32];
		/* Handshake, then messages from each peer, settle, time, more. */
		n = 0;
		s[n++] = (unsigned char)keyed;
		s[n++] = 13;
		for (int k = 0; k < 3; k++) {
			s[n++] = (unsigned char)(0 | k << 4);
			s[n++] = 40;
		}
		s[n++] = 11;
		s[n++] = 9; s[n++] = 30;
		s[n++] = 10; s[n++] = 20;
		s[n++] = 10 | 0x90; s[n++] = 20;
		s[n++] = 1 | 0x10; s[n++] = 10;
		s[n++] = 11;
		snprintf(name, sizeof name, "traffic-%d", keyed);
		if (seed_write(argv[1], name, s, n))
			return 1;
		/* Losses and replays, then a reboot of peer 2 and a handshake again. */
		n = 0;
		s[n++] = (unsigned char)keyed;
		s[n++] = 13;
		for (int i = 0; i < 8; i++) {
			s[n++] = (unsigned char)(0 | (i % 3) << 4);
			s[n++] = (unsigned char)(10 * i);
		}
		s[n++] = 4; s[n++] = 1;
		s[n++] = 6; s[n++] = 3;
		s[n++] = 5; s[n++] = 0; s[n++] = 20; s[n++] = 0; s[n++] = 0x40;
		s[n++] = 11;
		s[n++] = 9; s[n++] = 200;
		s[n++] = 8 | 0x10;
		s[n++] = 13;
		s[n++] = 12 | 0x20; s[n++] = 1; s[n++] = 1;
		s[n++] = 11;
		snprintf(name, sizeof name, "loss-reboot-%d", keyed);
		if (seed_write(argv[1], name, s, n))
			return 1;
	}
	return 0;
}
