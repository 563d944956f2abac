/*
 * What the stream drivers' fuzz targets (fuzz_madcell.c, fuzz_madreq.c)
 * give lib/mad.c and the driver besides mad_host.h: waits that return at
 * once and are counted (more than WAITS_MAX traps: single-threaded, a
 * wait that loops never ends), wake-ups that wake nobody, a poll that
 * reads its flag, and peers that are gone while hostile[] says they wrote
 * by hand; the messages' bytes and their drawing from the input
 * (pack_byte, stream_draw), and the run of an input's operations
 * (stream_run).  The
 * including file defines NODES, MAXQ (the messages a node's queue holds)
 * and WAITS_MAX first, and includes tests/host/input.h.
 */
#ifndef TESTS_LIB_MAD_MAD_STREAM_HOST_H
#define TESTS_LIB_MAD_MAD_STREAM_HOST_H

#include "tests/lib/mad/mad_host.h"

static unsigned waits;

int waitq_wait_timeout(struct waitq *wq, uint64_t ns)
{
	(void)wq, (void)ns;
	if (++waits >= WAITS_MAX)
		__builtin_trap();
	return 0;
}
int waitq_wake_all(struct waitq *wq)
{
	(void)wq;
	return 0;
}
int net_poll_wait(volatile int *flag) { return *flag; }

static int hostile[NODES];

/* What a node that wrote by hand did not send will never come: it counts as gone. */
int fabric_peer_dead(int dst)
{
	return dst > 0 && dst < NODES && hostile[dst];
}

/* Byte j of piece i of message id: every message's bytes its own. */
static uint8_t pack_byte(unsigned id, int i, uint32_t j)
{
	return (uint8_t)(id * 11 + (unsigned)i * 5 + j + (j >> 8));
}

/*
 * A message of message number id drawn from the input: its pieces (1 to
 * 4) in *n, each one's mode (of four) and length (0 to 4096) in mode and
 * len, its bytes (pack_byte) in data; its length returned.
 */
static size_t stream_draw(unsigned id, int *n, int mode[4], uint32_t len[4], uint8_t data[4][4096])
{
	static const int modes[] = { MAD_SND_CHEAPER | MAD_RECV_CHEAPER, MAD_SND_SAFER | MAD_RECV_EXPRESS,
				     MAD_SND_LATER | MAD_RECV_CHEAPER, MAD_SND_CHEAPER | MAD_RECV_EXPRESS };
	size_t total = 0;

	*n = 1 + (int)take(1) % 4;
	for (int i = 0; i < *n; i++) {
		unsigned v = take(2);
		mode[i] = modes[v & 3];
		len[i] = (v >> 2) % 4097;
		total += len[i];
		for (uint32_t j = 0; j < len[i]; j++)
			data[i][j] = pack_byte(id, i, j);
	}
	return total;
}

/* The target's: a message node k sends (op: the byte that chose it), bytes node k writes by hand, a receive (0: nothing came). */
static void op_send(int k, unsigned op);
static void op_write(int k);
static int receive_one(void);

/* Every message still coming received (4 * MAXQ + 16 receives at the most). */
static void stream_drain(void)
{
	for (int n = 0; n < 4 * MAXQ + 16 && receive_one(); n++)
		;
}

/*
 * The input's operations, a byte each (at most 128): its low two bits
 * pick a send, a write by hand or a receive (2 and 3), bit 2 the node
 * (1 or 2); then stream_drain().
 */
static void stream_run(void)
{
	for (int n = 0; in_left && n < 128; n++) {
		unsigned op = take(1);
		int k = 1 + (int)((op >> 2) & 1);
		switch (op & 3) {
		case 0:
			op_send(k, op);
			break;
		case 1:
			op_write(k);
			break;
		default:
			receive_one();
			break;
		}
	}
	stream_drain();
}

#endif
