/*
 * mad-recover: a Madeleine stream on the req or cell driver recovers from
 * a chunk its receiver refused (req: the ring's WRITE refused, so its
 * word is too) or that raised an exception there (cell: the deposit into
 * a protected page of the buffer, skipped by the exception handler).
 *
 * Node 1 has its driver break the stream from node 0 once 64 KiB of it
 * have arrived, until the stream resynchronises (the driver's test hook).
 * Node 0 sends a message of big= bytes (4 MiB, more than a pair's buffer
 * holds, so that the sender is still sending it when the refusal comes
 * back): the break falls inside it, and the message must be reported
 * failed at both ends (the send and the
 * receive return an error).  Then node 0 sends count= messages (100) of
 * 0 to 70,000 bytes, each numbered and filled from its number: every one
 * must go (the send returns 0) and arrive whole, in order, at node 1.
 * With partial=1 (req), node 0's driver also stops every other chunk of
 * several WRITEs after its first, as when the frames queued to go have no
 * room: the chunk goes again whole, or never if the break fails its
 * message first, and the WRITEs that went without their word must not
 * fail the messages after the resynchronisation.
 *
 *	RESULT mad-recover driver=.. send_failed=1 receive_failed=1 intact=100 failures=0
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/app.h"
#include "kernel/thread.h"
#include "kernel/tsc.h"
#include "lib/mad.h"
#include "net/call/barrier.h"
#include "net/fabric/fabric.h"
#include "tests/apps/check.h"

#define BREAK_AFTER (64 * 1024)

struct msg_hdr {
	uint32_t seq, size;
};

static uint8_t *buf;
static size_t buf_len;
static int send_failed, receive_failed, intact;
static uint32_t next_seq;

static uint8_t pattern(uint32_t seq, size_t i)
{
	return (uint8_t)(i * 13 + seq * 101 + (i >> 8));
}

static size_t size_of(uint32_t seq)
{
	return seq == 0 ? buf_len : (size_t)(seq * 7919u % 70000u);
}

static int send_msg(uint32_t seq)
{
	static struct msg_hdr h;
	size_t n = size_of(seq);

	h.seq = seq;
	h.size = (uint32_t)n;
	for (size_t i = 0; i < n; i++)
		buf[i] = pattern(seq, i);
	int r = mad_sendbuf_init(1);
	r |= mad_sendbuf_pack_byte(MAD_SND_CHEAPER | MAD_RECV_EXPRESS, &h, sizeof h);
	r |= mad_sendbuf_pack_byte(MAD_SND_CHEAPER | MAD_RECV_CHEAPER, buf, n);
	if (r < 0)
		return r;
	return mad_sendbuf_send();
}

static int handler(int src)
{
	struct msg_hdr h = { ~0u, 0 };
	int r = mad_recvbuf_unpack_byte(MAD_SND_CHEAPER | MAD_RECV_EXPRESS, &h, sizeof h);

	if (r < 0 || src != 0 || h.size > buf_len || h.size != size_of(h.seq)) {
		EXPECT(0, "message from node %d: header %u/%u (%d)", src, h.seq, h.size, r);
		mad_recvbuf_receive_data();
		return -EPROTO;
	}
	r = mad_recvbuf_unpack_byte(MAD_SND_CHEAPER | MAD_RECV_CHEAPER, buf, h.size);
	int rd = mad_recvbuf_receive_data();
	if (h.seq == 0) {
		/* The broken message: its receive fails, whatever arrived of it. */
		EXPECT(r < 0 || rd < 0, "the message the driver broke (%u bytes) was received whole", h.size);
		receive_failed += r < 0 || rd < 0;
		printf("mad-recover: the broken message's receive failed (%d): at this end too\n", r < 0 ? r : rd);
		return 0;
	}
	EXPECT(r == 0 && rd == 0, "message %u (%u bytes): unpack %d, receive_data %d", h.seq, h.size, r, rd);
	EXPECT(h.seq == next_seq, "message %u came where %u was due", h.seq, next_seq);
	next_seq = h.seq + 1;
	for (size_t i = 0; i < h.size; i++)
		if (buf[i] != pattern(h.seq, i)) {
			EXPECT(0, "message %u (%u bytes) wrong at byte %zu", h.seq, h.size, i);
			return 0;
		}
	intact++;
	return 0;
}

static int recover_main(void)
{
	const char *drv = arg_str("driver", "req");
	int count = (int)arg_int("count", 100);
	int r;

	buf_len = (size_t)arg_int("big", 4 << 20);
	buf = malloc(buf_len);
	if (!buf || num_nodes != 2) {
		printf("mad-recover: needs 2 nodes and memory\n");
		return 2;
	}
	if (fabric_wait_peers(60000000000ULL) < 0 || mad_init(drv) < 0)
		return 2;
	printf("mad-recover: node %d on driver %s\n", node_id, mad_driver_name());
	if (node_id == 0 && arg_int("partial", 0)) {
		r = strcmp(mad_driver_name(), "req") == 0 ? mad_req_test_partial(1) : -ENOTSUP;
		EXPECT(r == 0, "cut chunks on driver %s: %d", mad_driver_name(), r);
	}
	if (node_id == 1) {
		if (strcmp(mad_driver_name(), "req") == 0)
			r = mad_req_test_break(0, BREAK_AFTER);
		else if (strcmp(mad_driver_name(), "cell") == 0)
			r = mad_cell_test_break(0, BREAK_AFTER);
		else
			r = -ENOTSUP;
		EXPECT(r == 0, "break node 0's stream after %d bytes: %d", BREAK_AFTER, r);
	}
	EXPECT(cluster_barrier(60000000000ULL) == 0, "barrier before the broken message");
	if (node_id == 0) {
		r = send_msg(0);
		EXPECT(r < 0, "the %zu-byte message the receiver broke: sent (%d)", buf_len, r);
		send_failed += r < 0;
		printf("mad-recover: the broken message's send failed (%d)\n", r);
		for (uint32_t s = 1; s <= (uint32_t)count && !check_failures; s++) {
			r = send_msg(s);
			EXPECT(r == 0, "message %u after the broken one: %d", s, r);
		}
	} else {
		next_seq = 1;
		for (int k = 0; k < count + 1 && !check_failures; k++) {
			int broken = receive_failed;
			r = mad_recvbuf_receive_timeout(handler, 60000000000ULL);
			if (receive_failed > broken)
				EXPECT(r < 0, "the broken message's receive returned %d", r);
			else
				EXPECT(r == 0, "receive %d: %d", k, r);
			if (r == -ETIMEDOUT)
				break;
		}
		EXPECT(intact == count, "%d of %d messages after the broken one intact", intact, count);
		if (intact == count)
			printf("mad-recover: %d messages after the broken one, every one intact and in order\n",
			       intact);
	}
	EXPECT(cluster_barrier(120000000000ULL) == 0, "final barrier");
	const char *used = mad_driver_name();
	mad_exit();
	result("driver=%s send_failed=%d receive_failed=%d intact=%d failures=%d", used, send_failed,
	       receive_failed, intact, check_failures);
	return check_failures ? 1 : 0;
}

static const struct argspec recover_args[] = {
	{ "driver", ARG_STR, 0, 0, "Madeleine driver: req or cell (default req)" },
	{ "count", ARG_INT, 1, 100000, "messages after the broken one (default 100)" },
	{ "big", ARG_INT, 256 * 1024, 64 << 20, "bytes of the broken message (default 1 MiB)" },
	{ "partial", ARG_INT, 0, 1, "1: node 0 (req) cuts every other chunk after its first WRITE (default 0)" },
	{ NULL, 0, 0, 0, NULL },
};

APP(recover_app, "mad-recover",
    "a Madeleine stream (req, cell) recovers from a refused chunk: 100 messages intact after",
    recover_main, recover_args, 2);
