/*
 * MPI benchmark rows (lib/mpi over each Madeleine driver), beside
 * Madeleine's own rows of the same run (tests/lib/mad/mad_bench.c):
 *  - ping-pong of 0 bytes (beside Madeleine's null message on the same
 *    driver: MPI adds its envelope and its matching), 1 KiB and 64 KiB,
 *    MPI_Send then MPI_Recv on node 0, the reverse on node 1; the 0-byte
 *    row in rounds with Madeleine's null message on MPI's own channel
 *    (mad-<drv>-null-beside, MPI paused for it), its ratio to that row;
 *  - bandwidth: 4 MiB as 16 messages of 256 KiB one way (rendezvous, the
 *    body straight into the posted buffer), then a 0-byte answer.
 * Every rank takes part in MPI_Init and in the switch between drivers
 * (mpii_use_driver after a barrier: each driver's channel is opened once
 * and keeps its receive thread); nodes 0 and 1 do the work.  The rows run
 * once, after every latency row (their rounds are not interleaved with the
 * others'): MPI's receive threads take every message of the channels they
 * receive on, Madeleine's own rows' among them, so MPI starts when those
 * are done (keys 79_ and up, after 69_mad_bw).  The 1 KiB and
 * 64 KiB messages and every bandwidth message are checked byte for byte
 * after the clock stopped: the sender's pattern differs from one message
 * to the next at every byte.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/app.h"
#include "apps/stats.h"
#include "kernel/tsc.h"
#include "lib/mad.h"
#include "lib/mpi/mpi.h"
#include "lib/mpi/pt2pt.h"
#include "net/call/barrier.h"
#include "net/net.h"
#include "tests/bench/bench.h"

#define BW_MSG (256 * 1024)
#define BW_MSGS 16

static uint8_t *sbuf, *rbuf;
static unsigned long bad;

/* A step failed: say which, where and why (bench prints only the row's name). -1. */
static int failed(const char *drv, const char *step, long len, int round, int err)
{
	char why[MPI_MAX_ERROR_STRING];
	int n;

	if (err == MPI_SUCCESS)
		snprintf(why, sizeof why, "the bytes differ");
	else if (err < 0)
		snprintf(why, sizeof why, "error %d", err);
	else if (MPI_Error_string(err, why, &n) != MPI_SUCCESS)
		snprintf(why, sizeof why, "MPI error %d", err);
	printf("mpi-bench: node %d, driver %s: %s", node_id, drv, step);
	if (len >= 0)
		printf(" of %ld bytes, round %d", len, round);
	printf(" failed: %s\n", why);
	return -1;
}

static int ready(const char *drv)
{
	static const char *cur;
	int r;

	if (!cur) {
		if ((r = MPI_Init(NULL, NULL)) != MPI_SUCCESS)
			return failed(drv, "MPI_Init", -1, 0, r);
		if (!(sbuf = malloc(BW_MSG)) || !(rbuf = malloc(BW_MSG)))
			return failed(drv, "allocating the buffers", -1, 0, -ENOMEM);
		MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	}
	if (cur && strcmp(cur, drv) == 0)
		return 0;
	/* Every rank quiet, then all on the driver together. */
	if ((r = MPI_Barrier(MPI_COMM_WORLD)) != MPI_SUCCESS)
		return failed(cur ? cur : drv, "the barrier before switching drivers", -1, 0, r);
	if ((r = mpii_use_driver(drv)) < 0)
		return failed(drv, "opening the driver's channel", -1, 0, r);
	if ((r = MPI_Barrier(MPI_COMM_WORLD)) != MPI_SUCCESS)
		return failed(drv, "the barrier after switching drivers", -1, 0, r);
	cur = drv;
	return 0;
}

static void pattern(uint8_t *b, size_t n, uint32_t seq)
{
	uint8_t m = (uint8_t)(seq * 167 + (seq >> 8) * 59 + 1);

	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(i * 31 + (i >> 8) + m);
}

static int check(const uint8_t *b, size_t n, uint32_t seq)
{
	static uint8_t *want;

	if (!n)
		return 0;
	if (!want && !(want = malloc(BW_MSG)))
		return -1;
	pattern(want, n, seq);
	if (memcmp(b, want, n) == 0)
		return 0;
	if (bad++ < 4)
		printf("mpi-bench: message %u of %zu bytes is not what was sent\n", seq, n);
	return -1;
}

static int pingpong(const char *drv, size_t len, const struct bench_opts *o, struct samples *s)
{
	int n = o->warmup + o->iters;

	if (ready(drv) < 0)
		return -1;
	if (node_id > 1)
		return 0;
	for (int i = 0; i < n; i++) {
		uint32_t seq = (uint32_t)i;
		int r;
		if (node_id == 0) {
			pattern(sbuf, len, seq);
			uint64_t t0 = cycles();
			if ((r = MPI_Send(sbuf, (int)len, MPI_BYTE, 1, 7, MPI_COMM_WORLD)) != MPI_SUCCESS)
				return failed(drv, "ping-pong MPI_Send", (long)len, i, r);
			if ((r = MPI_Recv(rbuf, (int)len, MPI_BYTE, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
				return failed(drv, "ping-pong MPI_Recv", (long)len, i, r);
			uint64_t t1 = cycles();
			if (i >= o->warmup)
				samples_add(s, t1 - t0);
			if (check(rbuf, len, seq) < 0)
				return failed(drv, "ping-pong's answer", (long)len, i, MPI_SUCCESS);
		} else {
			if ((r = MPI_Recv(rbuf, (int)len, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
				return failed(drv, "ping-pong MPI_Recv", (long)len, i, r);
			/* The answer carries the same bytes back: node 0 checks them. */
			if ((r = MPI_Send(rbuf, (int)len, MPI_BYTE, 0, 7, MPI_COMM_WORLD)) != MPI_SUCCESS)
				return failed(drv, "ping-pong MPI_Send", (long)len, i, r);
		}
	}
	return 0;
}

/* A row's line, as the latency rows print theirs (bench_latency). */
#define ROW(id, drv, len, base_, ow, cap)                                                        \
	static const struct bench id = {                                                         \
		.name = "mpi-" drv "-" #len, .summary = "MPI_Send/MPI_Recv ping-pong of " #len  \
							    " bytes on Madeleine's " drv " driver", \
		.extra = ow ? "size=" #len " oneway=1" : "size=" #len, .base = base_, .oneway = ow,  \
		.max_iters = cap,                                                                \
	}

/* The 0-byte rows as Madeleine's null rows are measured: one way, except on TCP. */
ROW(mpi_rmem_0, "rmem", 0, "mad-rmem-null-beside", 1, 0);
ROW(mpi_rmem_1k, "rmem", 1024, "-", 0, 2000);
ROW(mpi_rmem_64k, "rmem", 65536, "-", 0, 100);
ROW(mpi_req_0, "req", 0, "mad-req-null-beside", 1, 0);
ROW(mpi_req_1k, "req", 1024, "-", 0, 2000);
ROW(mpi_req_64k, "req", 65536, "-", 0, 100);
ROW(mpi_cell_0, "cell", 0, "mad-cell-null-beside", 1, 0);
ROW(mpi_cell_1k, "cell", 1024, "-", 0, 2000);
ROW(mpi_cell_64k, "cell", 65536, "-", 0, 100);
ROW(mpi_tcp_0, "tcp", 0, "mad-tcp-null-beside", 0, 0);
ROW(mpi_tcp_1k, "tcp", 1024, "-", 0, 2000);
ROW(mpi_tcp_64k, "tcp", 65536, "-", 0, 100);

static const struct {
	const struct bench *row;
	const char *drv;
	size_t len;
} rows[] = {
	{ &mpi_rmem_0, "rmem", 0 }, { &mpi_rmem_1k, "rmem", 1024 }, { &mpi_rmem_64k, "rmem", 65536 },
	{ &mpi_req_0, "req", 0 }, { &mpi_req_1k, "req", 1024 }, { &mpi_req_64k, "req", 65536 },
	{ &mpi_cell_0, "cell", 0 }, { &mpi_cell_1k, "cell", 1024 }, { &mpi_cell_64k, "cell", 65536 },
	{ &mpi_tcp_0, "tcp", 0 }, { &mpi_tcp_1k, "tcp", 1024 }, { &mpi_tcp_64k, "tcp", 65536 },
};

/* Madeleine's null message, as mad-<drv>-null sends it, on MPI's own channel (MPI paused). */
static int null_handler(int src)
{
	(void)src;
	return mad_recvbuf_receive_data();
}

static int null_recv(struct mad_channel *c)
{
	int r;

	/* The pause's kick may end one receive early. */
	while ((r = mad_recvbuf_receive_on(c, null_handler, 10000000000ULL)) == -EINTR)
		;
	return r;
}

static int null_send(struct mad_channel *c, int dest)
{
	int r = mad_sendbuf_init_on(c, dest);

	return r ? r : mad_sendbuf_send();
}

static int null_pingpong(const char *drv, int warmup, int n, struct samples *s)
{
	struct mad_channel *c = mad_open(drv);

	if (!c)
		return failed(drv, "opening MPI's channel for Madeleine's null message", -1, 0, -ENODEV);
	for (int i = 0; i < warmup + n; i++) {
		int r;
		if (node_id == 0) {
			uint64_t t0 = cycles();
			if ((r = null_send(c, 1)) < 0)
				return failed(drv, "Madeleine's null message, sending", 0, i, r);
			if ((r = null_recv(c)) < 0)
				return failed(drv, "Madeleine's null message, receiving", 0, i, r);
			if (i >= warmup)
				samples_add(s, cycles() - t0);
		} else if ((r = null_recv(c)) < 0) {
			return failed(drv, "Madeleine's null message, receiving", 0, i, r);
		} else if ((r = null_send(c, 0)) < 0) {
			return failed(drv, "Madeleine's null message, sending", 0, i, r);
		}
	}
	return 0;
}

/*
 * Beside each 0-byte row, Madeleine's null message on the same driver in
 * the same minutes: rounds of MPI's ping-pong and Madeleine's, MPI paused
 * for Madeleine's (mpii_pause: every rank quiet between two barriers), so
 * that drift on the host affects both alike.  The MPI row's ratio is to
 * this one.
 */
#define BESIDE_ROUNDS 10
#define BESIDE(id, drv, ow)                                                                       \
	static const struct bench id = {                                                          \
		.name = "mad-" drv "-null-beside", .summary = "Madeleine's null message on " drv \
							      ", in rounds beside mpi-" drv "-0", \
		.extra = ow ? "size=0 oneway=1" : "size=0", .base = "mad-" drv "-null", .oneway = ow, \
	}
BESIDE(beside_rmem, "rmem", 1);
BESIDE(beside_req, "req", 1);
BESIDE(beside_cell, "cell", 1);
BESIDE(beside_tcp, "tcp", 0);

static int beside(const char *drv, const struct bench_opts *o, struct samples *mpi, struct samples *mad)
{
	int per = o->iters / BESIDE_ROUNDS > 0 ? o->iters / BESIDE_ROUNDS : 1;
	struct bench_opts ro = { .iters = per, .warmup = o->warmup / BESIDE_ROUNDS };
	int r = 0;

	if (ready(drv) < 0)
		return -1;
	/* No PING from now on, and none on its way once every rank passed the barriers. */
	mpii_pings_off();
	if ((r = MPI_Barrier(MPI_COMM_WORLD)) != MPI_SUCCESS || (r = MPI_Barrier(MPI_COMM_WORLD)) != MPI_SUCCESS)
		return failed(drv, "the barriers before the rounds", -1, 0, r);
	for (int k = 0; k < BESIDE_ROUNDS && r == 0; k++) {
		r = pingpong(drv, 0, &ro, mpi);
		if (r == 0 && (r = MPI_Barrier(MPI_COMM_WORLD)) != MPI_SUCCESS)
			r = failed(drv, "the barrier after MPI's round", -1, k, r);
		if (r)
			break;
		/* Every node's MPI paused before any Madeleine message goes (the fabric's barrier). */
		mpii_pause(1);
		if ((r = cluster_barrier(60000000000ULL)) < 0)
			r = failed(drv, "the fabric's barrier before Madeleine's round", -1, k, r);
		if (r == 0 && node_id <= 1)
			r = null_pingpong(drv, ro.warmup, per, mad);
		mpii_pause(0);
		int rb = MPI_Barrier(MPI_COMM_WORLD);
		if (rb != MPI_SUCCESS && r == 0)
			r = failed(drv, "the barrier after Madeleine's round", -1, k, rb);
	}
	return r;
}

static int run_latency(const struct bench_opts *o)
{
	static const struct bench *const besides[] = { &beside_rmem, &beside_req, &beside_cell, &beside_tcp };
	struct samples s, m;
	int r = 0, nb = 0;

	if (samples_init(&s, (size_t)o->iters) < 0 || samples_init(&m, (size_t)o->iters) < 0)
		return failed("-", "allocating the samples", -1, 0, -ENOMEM);
	for (size_t k = 0; k < sizeof rows / sizeof rows[0] && r == 0; k++) {
		const struct bench *b = rows[k].row;
		int n = b->max_iters && o->iters > b->max_iters ? b->max_iters : o->iters;
		struct bench_opts ro = { .iters = n, .warmup = o->warmup };
		s.n = 0;
		m.n = 0;
		if (rows[k].len == 0) {
			r = beside(rows[k].drv, &ro, &s, &m);
			if (r == 0 && node_id == 0)
				bench_latency(besides[nb], &m);
			nb++;
		} else {
			r = pingpong(rows[k].drv, rows[k].len, &ro, &s);
		}
		if (r == 0 && node_id == 0)
			bench_latency(b, &s);
	}
	samples_free(&s);
	samples_free(&m);
	return r;
}

static const struct bench latency_row = {
	.name = "mpi-latency", .summary = "MPI ping-pong of 0 B, 1 KiB and 64 KiB on each Madeleine driver",
	.run = run_latency,
};

static uint8_t *bw[BW_MSGS];

static int bandwidth(const char *drv)
{
	int r = 0;

	if (ready(drv) < 0)
		return -1;
	for (int i = 0; i < BW_MSGS && node_id <= 1; i++) {
		if (!bw[i] && !(bw[i] = malloc(BW_MSG)))
			return failed(drv, "allocating the bandwidth buffers", -1, 0, -ENOMEM);
		if (node_id == 0)
			pattern(bw[i], BW_MSG, (uint32_t)i);
	}
	if ((r = MPI_Barrier(MPI_COMM_WORLD)) != MPI_SUCCESS)
		return failed(drv, "the barrier before the bandwidth run", -1, 0, r);
	uint64_t t0 = cycles();
	int i = 0;
	for (; i < BW_MSGS && r == 0 && node_id <= 1; i++)
		r = node_id == 0 ? MPI_Send(bw[i], BW_MSG, MPI_BYTE, 1, 8, MPI_COMM_WORLD)
				 : MPI_Recv(bw[i], BW_MSG, MPI_BYTE, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	if (r != 0)
		return failed(drv, node_id == 0 ? "bandwidth MPI_Send" : "bandwidth MPI_Recv", BW_MSG, i - 1, r);
	if (node_id <= 1 &&
	    (r = node_id == 0 ? MPI_Recv(NULL, 0, MPI_BYTE, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
			      : MPI_Send(NULL, 0, MPI_BYTE, 0, 9, MPI_COMM_WORLD)) != 0)
		return failed(drv, "the bandwidth run's answer", 0, 0, r);
	uint64_t ns = cycles_to_ns(cycles() - t0);
	if (r == 0 && node_id == 0) {
		char row[32], base[32];
		snprintf(row, sizeof row, "mpi-bw-%s", drv);
		snprintf(base, sizeof base, "mad-bw-%s", drv);
		bench_rate(row, (uint64_t)BW_MSGS * BW_MSG, ns, NULL, "mb_per_s", base);
	}
	for (i = 0; i < BW_MSGS && r == 0 && node_id == 1; i++)
		if ((r = check(bw[i], BW_MSG, (uint32_t)i)) < 0)
			failed(drv, "a bandwidth message", BW_MSG, i, MPI_SUCCESS);
	int rb = MPI_Barrier(MPI_COMM_WORLD);
	if (rb != MPI_SUCCESS)
		return failed(drv, "the barrier after the bandwidth run", -1, 0, rb);
	return r != 0 ? -1 : 0;
}

static int run_bw(const struct bench_opts *o)
{
	(void)o;
	return bandwidth("rmem") | bandwidth("req") | bandwidth("cell") | bandwidth("tcp");
}

static const struct bench bw_row = {
	.name = "mpi-bandwidth", .summary = "4 MiB one way as 256 KiB MPI messages, per driver", .run = run_bw, .bulk = 1,
};

BENCH_REGISTER(latency_row, 79_mpi_1);
BENCH_REGISTER(bw_row, 79_mpi_2);
