/*
 * libFuzzer target: the fabric's kernel receive path with several peers.
 * The kernel's own net/fabric files run as node 1 of four
 * (tests/net/fabric/host_node.c): fabric.c's EtherType input, rx.c, discovery
 * and the membership handshake, the channel, raw dispatch, the barrier,
 * dead peers on a virtual clock, with or without a cluster key.  Three
 * simulated peers are real on the wire (their own membership state and
 * channel toward the node, sealed when keyed); the input drives them and
 * the wire between them and the node.
 *
 * Input: one byte, bit 0: keyed; then operations, each a byte (the low
 * four bits the operation, the next two a peer) and its operands:
 *   0 a peer's message (length byte)       1 a peer's raw frame (length byte)
 *   2 a peer's HELLO, broadcast or not     3 deliver the i-th waiting frame
 *   4 drop the i-th waiting frame          5 damage the i-th (offset, xor)
 *   6 replay a frame heard before          7 any bytes as a frame (length, bytes)
 *   8 a peer reboots                        9 time passes (ms byte)
 *  10 the node sends to a peer (raw or not) 11 everything settles
 *  12 a barrier message from a peer        13 the handshake runs to the end
 * With the CRC and tag checks of fuzzing mode off, damaged frames go as
 * deep as they can.
 *
 * Checked (abort): the sanitizers; the fabric hands its handlers only
 * what it validated; the node never sends a frame a peer cannot parse;
 * keyed, the node's frames reach each peer at most once (their window);
 * messages of the peers' own, as long as nothing damaged or injected
 * reached the node (and, without a key, nothing replayed), arrive once
 * and in order; every packet buffer is back in the pool at the end.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/fabric/wire.h"
#include "tests/host/input.h"
#include "tests/net/fabric/host_node.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* The fabric prints a line at each start: not the fuzzer's output. */
	if (!freopen("/dev/null", "w", stdout))
		abort();
	return 0;
}

static int peer(unsigned op)
{
	static const int ids[4] = { 0, 2, 3, 0 };
	return ids[(op >> 4) & 3];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t buf[FAB_FRAME_MAX + 64];
	int replays = 0, keyed;

	in = data;
	in_left = size;
	keyed = take(1) & 1;
	hn_reset(keyed, 1000);
	for (int ops = 0; in_left && ops < 2000; ops++) {
		unsigned op = take(1);
		int k = peer(op);
		switch (op & 15) {
		case 0: hn_send(k, take(1) * 6); break;
		case 1: hn_raw(k, take(1) * 6); break;
		case 2: hn_hello(k, op >> 7); break;
		case 3: hn_deliver((int)take(1)); break;
		case 4: hn_drop((int)take(1)); break;
		case 5: {
			int i = (int)take(1);
			size_t off = take(2);
			hn_damage(i, off, (uint8_t)take(1));
			break;
		}
		case 6: hn_replay(take(1)); replays++; break;
		case 7: {
			size_t n = take(2) % sizeof buf;
			for (size_t j = 0; j < n; j++)
				buf[j] = (uint8_t)take(1);
			hn_inject(buf, n);
			break;
		}
		case 8: hn_reboot(k, 0); break;
		case 9: hn_advance(take(1)); break;
		case 10: hn_node_send(k, take(1) * 6, op >> 7); break;
		case 11: hn_settle(); break;
		case 12: hn_barrier_msg(k, take(1) & 1 ? 'R' : 'A', take(1)); break;
		case 13: hn_discover(); break;
		default: break;
		}
	}
	hn_settle();
	/*
	 * Without a key a replayed HELLO of a peer's earlier boot really does
	 * reset its channel, and replayed messages are then taken again: the
	 * segment is trusted.  With a key, or without replays, nothing is.
	 */
	if (!hn.damaged && (keyed || !replays) && (hn.out_of_order || hn.garbage)) {
		fprintf(stderr, "fuzz_fabric_rx: %lu messages out of order, %lu not a peer's own\n",
			(unsigned long)hn.out_of_order, (unsigned long)hn.garbage);
		abort();
	}
	if (hn_teardown() < 0)
		abort();
	return 0;
}
