/*
 * mad-figure6: the Madeleine paper's RPC (section 2.1.4, the Madeleine
 * half of Figure 6) written as the paper writes it.  A generic handler
 * unpacks the request's header RECV_EXPRESS and switches on its type; the
 * ping-pong handler unpacks the array RECV_CHEAPER into a static buffer of
 * the size the header gives, calls receive_data, and executes the same
 * RPC back on the sender.  Messages carry data only: no pack descriptor
 * (section 2.1.2, "MADELEINE internal messages are not self-describing"),
 * unless mad_debug=1 asks for Madeleine's debug mode.
 *
 * Nodes pair up (0 with 1, 2 with 3, ...; an odd last node waits); for
 * each size of the list the even node of a pair starts a ping-pong of
 * iters= round trips.  Every array is compared, byte by byte, with the
 * sender's pattern, and every header with what its sender put there.
 * Each send's bytes on the wire (mad_stats bytes_sent) less the program's
 * header and array are Madeleine's own per message: its 16-byte header
 * with data only, 8 bytes more (a word per pack) in debug mode.
 *
 *	RESULT mad-figure6 driver=.. rpcs=.. bytes=.. overhead=.. failures=..
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "apps/app.h"
#include "kernel/tsc.h"
#include "lib/mad.h"
#include "net/call/barrier.h"
#include "net/fabric/fabric.h"
#include "tests/apps/check.h"

#define MAX_SIZE (256 * 1024)
enum { PING_PONG = 1 };

typedef struct {
	uint32_t request_type;
	uint32_t sender;
	uint32_t size;
	uint32_t remaining;		/* times the RPC is still to be executed back */
} header_t;

static char body[MAX_SIZE];
static char out[MAX_SIZE];
static const uint32_t sizes[] = { 0, 1, 40, 1408, 4096, 65536, MAX_SIZE };
#define NSIZES (sizeof sizes / sizeof sizes[0])

static int peer;
static unsigned rpcs, received;
static uint64_t bytes;
static long overhead = -1;		/* the same for every message, or -2 */

static uint8_t pattern(uint32_t sender, uint32_t size, uint32_t remaining, size_t i)
{
	return (uint8_t)(i * 31 + sender * 7 + size + remaining * 13 + (i >> 9));
}

/* The emission code: "straightforward" (2.1.4). */
static int pingpong_rpc(int dest, uint32_t size, uint32_t remaining)
{
	static header_t header;
	struct mad_stats a, b;
	int r;

	header.request_type = PING_PONG;
	header.sender = (uint32_t)node_id;
	header.size = size;
	header.remaining = remaining;
	for (size_t i = 0; i < size; i++)
		out[i] = (char)pattern(header.sender, size, remaining, i);
	mad_stats(&a);
	r = mad_sendbuf_init(dest);
	r |= mad_sendbuf_pack_byte(MAD_SND_CHEAPER | MAD_RECV_EXPRESS, &header, sizeof header);
	r |= mad_sendbuf_pack_byte(MAD_SND_CHEAPER | MAD_RECV_CHEAPER, out, size);
	r |= mad_sendbuf_send();
	mad_stats(&b);
	if (r == 0) {
		long o = (long)(b.bytes_sent - a.bytes_sent) - (long)sizeof header - (long)size;
		overhead = overhead == -1 || overhead == o ? o : -2;
		rpcs++;
		bytes += size;
	}
	return r;
}

static void handle_pingpong_rpc(header_t *header)
{
	mad_recvbuf_unpack_byte(MAD_RECV_CHEAPER | MAD_SND_CHEAPER, body, header->size);
	int r = mad_recvbuf_receive_data();
	EXPECT(r == 0, "receive_data of a %u-byte array from node %u: %d", header->size, header->sender, r);
	if (r < 0)
		return;
	received++;
	for (size_t i = 0; i < header->size; i++)
		if ((uint8_t)body[i] != pattern(header->sender, header->size, header->remaining, i)) {
			EXPECT(0, "byte %zu of a %u-byte array from node %u differs from the one sent", i,
			       header->size, header->sender);
			break;
		}
	/* ... execute the same RPC back on the sender (it's a ping pong) */
	if (header->remaining > 0)
		EXPECT(pingpong_rpc((int)header->sender, header->size, header->remaining - 1) == 0,
		       "RPC back to node %u", header->sender);
}

static int generic_handler(int src)
{
	header_t header;

	memset(&header, 0, sizeof header);
	mad_recvbuf_unpack_byte(MAD_RECV_EXPRESS | MAD_SND_CHEAPER, &header, sizeof(header));
	/* EXPRESS: here now; an array larger than the buffer is a broken peer. */
	if (header.sender != (uint32_t)src || header.size > MAX_SIZE) {
		EXPECT(0, "header from node %d: type %u, sender %u, size %u", src, header.request_type,
		       header.sender, header.size);
		return mad_recv_misuse("mad-figure6: a header this program never sends");
	}
	switch (header.request_type) {
	case PING_PONG:
		handle_pingpong_rpc(&header);
		break;
	default:
		EXPECT(0, "request type %u from node %d", header.request_type, src);
		return mad_recv_misuse("mad-figure6: unknown request type");
	}
	return 0;
}

static int figure6_main(void)
{
	const char *drv = arg_str("driver", "rmem");
	int iters = (int)arg_int("iters", 20);
	uint64_t t0;

	peer = node_id ^ 1;
	if (fabric_wait_peers(60000000000ULL) < 0)
		return 1;
	if (mad_init(drv) < 0)
		return 2;
	printf("mad-figure6: node %d on driver %s, %s\n", node_id, mad_driver_name(),
	       arg_bool("mad_debug", 0) ? "messages with their pack descriptor (mad_debug)" :
					  "messages of data only");
	EXPECT(cluster_barrier(60000000000ULL) == 0, "barrier before the ping-pongs");
	t0 = cycles();
	if (peer < num_nodes) {
		for (size_t k = 0; k < NSIZES && !check_failures; k++) {
			unsigned want = received + (unsigned)iters;
			/* The even node triggers; each handler executes the RPC back, 2 iters - 1 times. */
			if (node_id % 2 == 0)
				EXPECT(pingpong_rpc(peer, sizes[k], 2u * (unsigned)iters - 1) == 0,
				       "the first RPC of %u bytes to node %d", sizes[k], peer);
			while (received < want && !check_failures) {
				int r = mad_recvbuf_receive_timeout(generic_handler, 60000000000ULL);
				EXPECT(r == 0, "receive of a %u-byte RPC: %d", sizes[k], r);
				if (r == -ETIMEDOUT)
					break;
			}
			if (node_id == 0)
				printf("mad-figure6: %d round trips of %u bytes, every array intact\n", iters,
				       sizes[k]);
		}
	}
	double secs = (double)cycles_to_ns(cycles() - t0) / 1e9;
	/* No node withdraws its driver while its peer may still write into it. */
	EXPECT(cluster_barrier(120000000000ULL) == 0, "final barrier");
	const char *used = mad_driver_name();
	mad_exit();
	result("driver=%s rpcs=%u bytes=%lu overhead=%ld seconds=%.2f failures=%d", used, rpcs,
	       (unsigned long)bytes, overhead, secs, check_failures);
	return check_failures ? 1 : 0;
}

static const struct argspec figure6_args[] = {
	{ "driver", ARG_STR, 0, 0, "Madeleine driver: rmem, req, cell or tcp (default rmem)" },
	{ "iters", ARG_INT, 1, 100000, "round trips per array size (default 20)" },
	{ NULL, 0, 0, 0, NULL },
};

APP(figure6_app, "mad-figure6",
    "the Madeleine paper's Figure 6 RPC as written there (no pack descriptor), every driver",
    figure6_main, figure6_args, 2);
