/*
 * Madeleine benchmark rows (madeleine paper section 3): for each driver,
 *  - the null message (no pack at all) as a ping-pong, beside the raw
 *    transport it runs on, measured in the same run: the TCP driver beside
 *    a 1-byte lwIP TCP echo (tcp-1B), the remote-memory driver beside a
 *    40-byte remote WRITE answered by one (write-40, one way), the REQ
 *    driver beside a REQ answered by a REQ (req, one way), the hybrid-
 *    deposit driver beside a 32-byte deposit answered by one (deposit,
 *    one way);
 *  - the RPC of Figure 6 (the request header EXPRESS, an array CHEAPER into
 *    the handler's buffer, the same sent back) for arrays of 1, 16 and
 *    64 KiB (on TCP also 64 bytes and 4 KiB: Figure 8's curve, beside
 *    tests/lib/mpi/mpi_rpc.c in boot/tools/papers), whose growth against the null
 *    message shows the overhead is constant (Figures 8-10);
 *  - bandwidth: 4 MiB as 16 messages of 256 KiB, one way.
 * Node 1 answers in its bench thread, node 0 times.  Every message
 * received is checked: the header (length and message number) in the
 * handler, and the array, every byte, against the sender's pattern, which
 * differs from one message to the next at every byte (a body left from an
 * earlier message in the reused receive array fails), the message number
 * also stamped in its first word; a message that differs fails the run.
 * The arrays are made and compared outside what is timed (node 0 after
 * its clock stopped, node 1 after its answer went: comparing 64 KiB costs
 * more than moving it under TCG); in the bandwidth run, whose messages
 * follow each other, each of the 16 messages has buffers of its own on
 * both sides, made before and compared after.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/app.h"
#include "apps/stats.h"
#include "kernel/tsc.h"
#include "lib/mad.h"
#include "net/call/barrier.h"
#include "net/fabric/fabric.h"
#include "net/net.h"
#include "tests/bench/bench.h"

#define WAIT_NS 10000000000ULL
#define MAXARR (256 * 1024)
#define BW_MSGS 16

static uint8_t *arr, *rxarr, *peerarr;	/* what we send, receive, and expect */
static size_t cur_len;
static int cur_null;
static uint32_t cur_seq;			/* the number of the message in flight */
static unsigned long checked, bad;
static int unchecked;				/* rxarr holds an array not compared yet */

/*
 * Byte i of message seq that node `node` sends (the first word is then
 * stamped with seq): two messages differ at every byte unless their
 * numbers are 65536 apart.
 */
static void pattern(uint8_t *b, size_t n, int node, uint32_t seq)
{
	uint8_t m = (uint8_t)(seq * 167 + (seq >> 8) * 59 + (uint32_t)node * 101 + 1);

	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(i * 31 + (i >> 8) + m);
}

/* Aim the buffers at messages of len bytes between node 0 and node 1. */
static void set_len(size_t len)
{
	cur_len = len;
}

/* What this node sends as message seq, and what it expects from the other. */
static void make_arrays(uint32_t seq)
{
	pattern(arr, cur_len, node_id, seq);
	pattern(peerarr, cur_len, !node_id, seq);
}

/* Figure 6's generic handler: the header EXPRESS, the array CHEAPER; both checked. */
static int handler(int src)
{
	uint32_t hdr[2];
	int r = 0;

	if (!cur_null) {
		r = mad_recvbuf_unpack_byte(MAD_SND_CHEAPER | MAD_RECV_EXPRESS, hdr, sizeof hdr);
		if (r == 0 && (hdr[0] != cur_len || hdr[1] != cur_seq))
			r = -EPROTO;
		if (r == 0)
			r = mad_recvbuf_unpack_byte(MAD_SND_CHEAPER | MAD_RECV_CHEAPER, rxarr, cur_len);
	}
	int d = mad_recvbuf_receive_data();
	if (!cur_null && r == 0 && d == 0)
		unchecked = 1;		/* the array: check_array(), once nothing is timed */
	if (r == -EPROTO && bad++ < 4)
		printf("mad-pingpong: message %u of %zu bytes from node %d is not what was sent\n", cur_seq,
		       cur_len, src);
	return r ? r : d;
}

/* Compare the array the handler took with what message cur_seq must hold.  0 or -EPROTO. */
static int check_array(void)
{
	uint32_t stamp = cur_seq;
	size_t k = cur_len < sizeof stamp ? cur_len : sizeof stamp;
	int ok = memcmp(rxarr, &stamp, k) == 0;

	if (!unchecked)
		return 0;
	unchecked = 0;
	ok = ok && memcmp(rxarr + k, peerarr + k, cur_len - k) == 0;
	checked++;
	if (ok)
		return 0;
	if (bad++ < 4)
		printf("mad-pingpong: message %u of %zu bytes from node %d is not what was sent\n", cur_seq,
		       cur_len, !node_id);
	return -EPROTO;
}

static int send_one(struct mad_channel *ch, int dest)
{
	static uint32_t hdr[2];
	int r = mad_sendbuf_init_on(ch, dest);

	if (r == 0 && !cur_null) {
		hdr[0] = (uint32_t)cur_len;
		hdr[1] = cur_seq;
		memcpy(arr, &cur_seq, cur_len < sizeof cur_seq ? cur_len : sizeof cur_seq);
		r = mad_sendbuf_pack_byte(MAD_SND_CHEAPER | MAD_RECV_EXPRESS, hdr, sizeof hdr);
		if (r == 0)
			r = mad_sendbuf_pack_byte(MAD_SND_CHEAPER | MAD_RECV_CHEAPER, arr, cur_len);
	}
	int s = mad_sendbuf_send();
	return r ? r : s;
}

static struct mad_channel *channel(const char *drv)
{
	if (!arr && (!(arr = calloc(1, MAXARR)) || !(rxarr = calloc(1, MAXARR)) ||
		     !(peerarr = calloc(1, MAXARR))))
		return NULL;
	return mad_open(drv);
}

/* A ping-pong of n messages of len bytes (null: no pack) on drv. */
static int pingpong(const char *drv, int null, size_t len, const struct bench_opts *o, struct samples *s)
{
	struct mad_channel *ch = channel(drv);
	int n = o->warmup + o->iters;

	if (!ch)
		return -1;
	if (node_id > 1)
		return 0;
	cur_null = null;
	set_len(len);
	for (int i = 0; i < n; i++) {
		cur_seq = (uint32_t)i;
		if (!null)
			make_arrays(cur_seq);
		if (node_id == 0) {
			uint64_t t0 = cycles();
			if (send_one(ch, 1) < 0 || mad_recvbuf_receive_on(ch, handler, WAIT_NS) < 0)
				return -1;
			uint64_t t1 = cycles();
			if (i >= o->warmup)
				samples_add(s, t1 - t0);
			if (check_array() < 0)
				return -1;
		} else {
			if (mad_recvbuf_receive_on(ch, handler, WAIT_NS) < 0 || send_one(ch, 0) < 0 ||
			    check_array() < 0)
				return -1;
		}
	}
	return 0;
}

#define NULL_ROW(id, drv, base_, ow, summ)                                                    \
	static int sample_##id(const struct bench_opts *o, struct samples *s)                 \
	{                                                                                     \
		return pingpong(drv, 1, 0, o, s);                                             \
	}                                                                                     \
	static const struct bench id = {                                                      \
		.name = "mad-" drv "-null", .summary = summ, .sample = sample_##id,           \
		.extra = ow ? "size=0 oneway=1" : "size=0", .base = base_, .oneway = ow,      \
	}

#define RPC_ROW(id, drv, len, cap)                                                              \
	static int sample_##id(const struct bench_opts *o, struct samples *s)                   \
	{                                                                                       \
		return pingpong(drv, 0, len, o, s);                                             \
	}                                                                                       \
	static const struct bench id = {                                                        \
		.name = "mad-rpc-" drv "-" #len, .summary = "RPC of Figure 6 with a " #len        \
							     "-byte array, and back, on " drv, \
		.sample = sample_##id, .extra = "size=" #len, .base = "-", .max_iters = cap,    \
	}

NULL_ROW(null_tcp, "tcp", "tcp-1B", 0, "null message ping-pong on the TCP driver");
NULL_ROW(null_rmem, "rmem", "write-40", 1, "null message on the remote-memory driver, one way");
NULL_ROW(null_req, "req", "req", 1, "null message on the REQ driver, one way");
NULL_ROW(null_cell, "cell", "deposit", 1, "null message on the hybrid-deposit driver, one way");
RPC_ROW(rpc_tcp_64, "tcp", 64, 2000);
RPC_ROW(rpc_tcp_1k, "tcp", 1024, 2000);
RPC_ROW(rpc_tcp_4k, "tcp", 4096, 1000);
RPC_ROW(rpc_tcp_16k, "tcp", 16384, 500);
RPC_ROW(rpc_tcp_64k, "tcp", 65536, 100);
RPC_ROW(rpc_rmem_1k, "rmem", 1024, 2000);
RPC_ROW(rpc_rmem_16k, "rmem", 16384, 500);
RPC_ROW(rpc_rmem_64k, "rmem", 65536, 100);
RPC_ROW(rpc_req_1k, "req", 1024, 2000);
RPC_ROW(rpc_req_16k, "req", 16384, 500);
RPC_ROW(rpc_req_64k, "req", 65536, 100);
RPC_ROW(rpc_cell_1k, "cell", 1024, 2000);
RPC_ROW(rpc_cell_16k, "cell", 16384, 500);
RPC_ROW(rpc_cell_64k, "cell", 65536, 100);

/*
 * One way: 4 MiB as messages of one size (4 KiB to 4 MiB), then a null
 * answer.  Each message has bytes of its own on each side (one 4 MiB block
 * a side, message i at i * size), patterned before the clock starts and
 * compared, every byte, after it stopped.  The 256 KiB messages' row is
 * mad-bw-<drv>, the others mad-bw-<drv>-<size>.  Messages are numbered
 * on from run to run (bw_seq), so that every run's bytes differ from the
 * last one's: a body that never landed leaves the receiver's block as the
 * last run left it, which the comparison finds.
 */
#define BW_TOTAL (BW_MSGS * MAXARR)
static uint8_t *bwbuf;
static uint32_t bw_seq;		/* the next run's first message number (nodes 0 and 1 alike) */

static int bandwidth(const char *drv, size_t size)
{
	struct mad_channel *ch = channel(drv);
	uint8_t *keep_arr = arr, *keep_rx = rxarr;
	const int msgs = (int)(BW_TOTAL / size);
	int r = 0;

	if (!ch)
		return -1;
	if (cluster_barrier(30000000000ULL) < 0)
		return -1;
	if (node_id > 1)
		return cluster_barrier(120000000000ULL) < 0 ? -1 : 0;
	set_len(size);
	const uint32_t seq0 = bw_seq;
	bw_seq += (uint32_t)msgs;
	if (!bwbuf && !(bwbuf = malloc(BW_TOTAL))) {
		printf("mad-pingpong: no memory for the bandwidth run's %u KiB\n", BW_TOTAL >> 10);
		r = -1;
	}
	for (int i = 0; i < msgs && r == 0 && node_id == 0; i++)
		pattern(bwbuf + (size_t)i * size, size, 0, seq0 + (uint32_t)i);
	uint64_t t0 = cycles();
	for (int i = 0; i < msgs && r == 0; i++) {
		cur_null = 0;
		cur_seq = seq0 + (uint32_t)i;
		if (node_id == 0) {
			arr = bwbuf + (size_t)i * size;
			r = send_one(ch, 1);
		} else {
			rxarr = bwbuf + (size_t)i * size;
			r = mad_recvbuf_receive_on(ch, handler, WAIT_NS);
			unchecked = 0;		/* compared below */
		}
	}
	arr = keep_arr;
	rxarr = keep_rx;
	cur_null = 1;
	if (r == 0)
		r = node_id == 0 ? mad_recvbuf_receive_on(ch, handler, WAIT_NS) : send_one(ch, 0);
	uint64_t ns = cycles_to_ns(cycles() - t0);
	if (r == 0 && node_id == 0) {
		char row[32], sz[8];
		if (size == MAXARR)
			snprintf(row, sizeof row, "mad-bw-%s", drv);
		else
			snprintf(row, sizeof row, "mad-bw-%s-%s", drv, bench_size_name(size, sz, sizeof sz));
		bench_rate(row, BW_TOTAL, ns, NULL, "mb_per_s", "-");
	}
	/* Node 1: every message, every byte (the expected bytes made a message at a time). */
	uint8_t *want = r == 0 && node_id == 1 ? malloc(size) : NULL;
	if (r == 0 && node_id == 1 && !want)
		r = -1;
	for (int i = 0; i < msgs && r == 0 && node_id == 1; i++) {
		uint8_t *keep_peer = peerarr;
		cur_null = 0;
		cur_seq = seq0 + (uint32_t)i;
		peerarr = want;
		pattern(peerarr, size, 0, cur_seq);
		rxarr = bwbuf + (size_t)i * size;
		unchecked = 1;
		r = check_array();
		rxarr = keep_rx;
		peerarr = keep_peer;
	}
	free(want);
	return cluster_barrier(120000000000ULL) < 0 || r < 0 ? -1 : 0;
}

static const size_t bw_sizes[] = { 4096, 16384, 65536, MAXARR, 1u << 20, 4u << 20 };

/*
 * The bench's bw= argument picks the drivers and sizes of this run: a
 * comma-separated list of driver names and sizes (4k, 256k, 4m); naming
 * no driver means every driver, and likewise sizes.  A word that names
 * neither fails the row (a misspelt one would run nothing, silently).
 */
static int run_bw(const struct bench_opts *o)
{
	static const char *const drv[] = { "tcp", "rmem", "req", "cell" };
	const size_t ndrv = sizeof drv / sizeof drv[0], nsize = sizeof bw_sizes / sizeof bw_sizes[0];
	unsigned drv_mask = 0, size_mask = 0;
	char sz[8];
	int r = 0;

	(void)o;
	for (const char *list = arg_str("bw", ""); *list;) {
		size_t n = strcspn(list, ",");
		unsigned d = 0, k = 0;
		for (size_t i = 0; i < ndrv; i++)
			d |= (unsigned)(strlen(drv[i]) == n && strncmp(list, drv[i], n) == 0) << i;
		for (size_t i = 0; i < nsize; i++)
			k |= (unsigned)(strlen(bench_size_name(bw_sizes[i], sz, sizeof sz)) == n &&
					strncmp(list, sz, n) == 0) << i;
		if (n && !d && !k) {
			if (node_id == 0)
				printf("mad-bandwidth: bw=%s: '%.*s' is no driver (tcp, rmem, req, cell) nor size "
				       "(4k, 16k, 64k, 256k, 1m, 4m)\n", arg_str("bw", ""), (int)n, list);
			return -1;
		}
		drv_mask |= d;
		size_mask |= k;
		list += n + (list[n] == ',');
	}
	if (!drv_mask)
		drv_mask = ~0u;
	if (!size_mask)
		size_mask = ~0u;
	for (size_t d = 0; d < ndrv; d++)
		for (size_t k = 0; k < nsize; k++)
			if (drv_mask >> d & size_mask >> k & 1)
				r |= bandwidth(drv[d], bw_sizes[k]);
	return r;
}

static const struct bench bw = {
	.name = "mad-bandwidth", .summary = "4 MiB one way as messages of 4 KiB to 4 MiB, per driver",
	.run = run_bw, .bulk = 1,
};

/*
 * mad-pingpong: the same measurements as an app, on one driver: the null
 * message and RPCs of growing size (round trips, node 0 timing node 1's
 * answers), then the bandwidth.  Prints one line per size:
 *	RESULT mad-pingpong driver=D size=N median_us=.. p99_us=.. n=.. checked=.. bad=..
 * where checked counts the arrays node 0 received and verified so far.
 */
static const struct argspec mp_args[] = {
	{ "driver", ARG_STR, 0, 0, "tcp (default), rmem, req or cell" },
	{ "iters", ARG_INT, 10, 1000000, "round trips per size (default 1000)" },
	{ NULL, 0, 0, 0, NULL },
};

static int mp_main(void)
{
	static const size_t sizes[] = { 0, 4, 64, 1024, 4096, 16384, 65536, 262144 };
	const char *drv = arg_str("driver", "tcp");
	int iters = (int)arg_int("iters", 1000);
	struct samples s;
	char a[24], b[24];

	if (fabric_wait_peers(60000000000ULL) < 0 || !channel(drv))
		return 1;
	if (samples_init(&s, (size_t)iters) < 0)
		return 1;
	if (node_id == 0)
		printf("mad-pingpong: round trips on the %s driver, node 0 and node 1 (size 0: the null message)\n",
		       drv);
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		/* Big messages take long: fewer of them. */
		int n = sizes[i] > 16384 ? (iters / 20 > 5 ? iters / 20 : 5) : iters;
		struct bench_opts o = { .iters = n, .warmup = n / 10 + 1 };
		s.n = 0;
		bad = 0;
		if (cluster_barrier(30000000000ULL) < 0 ||
		    pingpong(drv, sizes[i] == 0, sizes[i], &o, &s) < 0) {
			printf("mad-pingpong: FAILED at %zu bytes\n", sizes[i]);
			return 1;
		}
		if (node_id == 0)
			result("driver=%s size=%zu median_us=%s p99_us=%s n=%d checked=%lu bad=%lu", drv,
			       sizes[i], fmt_us(a, sizeof a, samples_quantile(&s, 0.5)),
			       fmt_us(b, sizeof b, samples_quantile(&s, 0.99)), n, checked, bad);
	}
	samples_free(&s);
	return bandwidth(drv, MAXARR) < 0 ? 1 : 0;
}

APP(mp_app, "mad-pingpong",
    "Madeleine round trips by size and bandwidth on one driver (madeleine paper 3)",
    mp_main, mp_args, 2);

BENCH_REGISTER(null_tcp, 60_mad_tcp);
BENCH_REGISTER(null_rmem, 61_mad_rmem);
BENCH_REGISTER(null_req, 62_mad_req);
BENCH_REGISTER(null_cell, 63_mad_cell);
BENCH_REGISTER(rpc_tcp_64, 64_mad_rpc_tcp_0);
BENCH_REGISTER(rpc_tcp_1k, 64_mad_rpc_tcp_1);
BENCH_REGISTER(rpc_tcp_4k, 64_mad_rpc_tcp_15);
BENCH_REGISTER(rpc_tcp_16k, 64_mad_rpc_tcp_2);
BENCH_REGISTER(rpc_tcp_64k, 64_mad_rpc_tcp_3);
BENCH_REGISTER(rpc_rmem_1k, 65_mad_rpc_rmem_1);
BENCH_REGISTER(rpc_rmem_16k, 65_mad_rpc_rmem_2);
BENCH_REGISTER(rpc_rmem_64k, 65_mad_rpc_rmem_3);
BENCH_REGISTER(rpc_req_1k, 66_mad_rpc_req_1);
BENCH_REGISTER(rpc_req_16k, 66_mad_rpc_req_2);
BENCH_REGISTER(rpc_req_64k, 66_mad_rpc_req_3);
BENCH_REGISTER(rpc_cell_1k, 67_mad_rpc_cell_1);
BENCH_REGISTER(rpc_cell_16k, 67_mad_rpc_cell_2);
BENCH_REGISTER(rpc_cell_64k, 67_mad_rpc_cell_3);
BENCH_REGISTER(bw, 69_mad_bw);
