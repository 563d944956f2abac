/*
 * tcp-echo: TCP round trips through lwIP's socket API.
 *
 * Node 1 serves echo on port 7 (RFC 862) until its client closes; node 0
 * connects to 10.0.0.2, then for each message size sends a patterned
 * message, reads it back and checks every byte, iters times, timing each
 * round trip with the TSC.  Per size it prints
 *	RESULT tcp-echo size=S iters=N median_us=.. p99_us=.. throughput_mbps=..
 * where throughput is the message bytes echoed per second of round trips
 * (one direction's payload; the wire carries it both ways).  Node 0 exits
 * 0 only if every byte came back right.  Nodes above 1 have nothing to do.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/app.h"
#include "apps/stats.h"
#include "kernel/thread.h"
#include "kernel/tsc.h"
#include "lwip/sockets.h"
#include "net/fabric/fabric.h"
#include "net/lwip/lwip_port.h"
#include "net/net.h"
#include "tests/bench/bench.h"

#define ECHO_PORT 7
#define SERVER_NODE 1
#define MAX_MSG (64 * 1024)
#define CHUNK (16 * 1024)		/* client writes at most this between reads */
#define CONNECT_TRIES 60		/* one second each */
#define IO_TIMEOUT_MS 10000		/* a blocked send or recv gives up */
#define ACCEPT_TIMEOUT_MS 60000
#define EOF_TIMEOUT_MS 3000		/* client: wait for the server's FIN */
#define FIN_LINGER_NS 200000000ULL	/* server: let its FIN leave the NIC */

static const size_t sizes[] = { 1, 64, 1024, 4096, 16384, 65536 };

/* Default round trips per size: fewer for the big ones. */
static int default_iters(size_t size)
{
	return size <= 4096 ? 200 : size <= 16384 ? 100 : 50;
}

/* Byte i of message seq: every byte of every message differs by position. */
static inline uint8_t pattern(uint32_t seq, size_t i)
{
	return (uint8_t)(((uint32_t)i * 2654435761u + seq * 0x9e3779b9u) >> 24);
}

static void fill(uint8_t *p, size_t n, uint32_t seq)
{
	for (size_t i = 0; i < n; i++)
		p[i] = pattern(seq, i);
}

/* Return the number of wrong bytes; report the first. */
static size_t check(const uint8_t *p, size_t n, uint32_t seq)
{
	size_t bad = 0;

	for (size_t i = 0; i < n; i++) {
		if (p[i] == pattern(seq, i))
			continue;
		if (!bad)
			printf("tcp-echo: message %u (%zu bytes): byte %zu is %#x, expected %#x\n",
			       seq, n, i, p[i], pattern(seq, i));
		bad++;
	}
	return bad;
}

static void set_timeout(int s, int opt, int ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	if (setsockopt(s, SOL_SOCKET, opt, &tv, sizeof tv) < 0)
		printf("tcp-echo: setsockopt(%#x): errno %d\n", opt, errno);
}

static void set_nodelay(int s)
{
	int on = 1;

	if (setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on) < 0)
		printf("tcp-echo: setsockopt(TCP_NODELAY): errno %d\n", errno);
}

/* A connection's options: no Nagle, a receive timeout of rcv_ms, a send timeout of IO_TIMEOUT_MS. */
static void tune(int s, int rcv_ms)
{
	set_nodelay(s);
	set_timeout(s, SO_RCVTIMEO, rcv_ms);
	set_timeout(s, SO_SNDTIMEO, IO_TIMEOUT_MS);
}

/* The next connection to ls (ACCEPT_TIMEOUT_MS at the most), tuned: its socket, or -1, said as <who>: accept. */
static int accept_one(int ls, const char *who, int rcv_ms)
{
	set_timeout(ls, SO_RCVTIMEO, ACCEPT_TIMEOUT_MS);
	int c = accept(ls, NULL, NULL);
	if (c < 0) {
		printf("%s: accept: errno %d\n", who, errno);
		return -1;
	}
	tune(c, rcv_ms);
	return c;
}

/* Send all n bytes.  0 or -errno. */
static int send_all(int s, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t r = send(s, p, n, 0);
		if (r < 0)
			return -errno;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/* --- server (node 1) ------------------------------------------------------- */

static int serve(void)
{
	struct sockaddr_in sa = { 0 };
	uint8_t *buf = malloc(MAX_MSG);
	uint64_t echoed = 0;
	int ls, c, status = 1;

	if (!buf)
		return 1;
	ls = socket(AF_INET, SOCK_STREAM, 0);
	if (ls < 0) {
		printf("tcp-echo: socket: errno %d\n", errno);
		goto free;
	}
	sa.sin_family = AF_INET;
	sa.sin_port = htons(ECHO_PORT);
	sa.sin_addr.s_addr = htonl(INADDR_ANY);
	if (bind(ls, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(ls, 1) < 0) {
		printf("tcp-echo: bind/listen on port %d: errno %d\n", ECHO_PORT, errno);
		goto close_listen;
	}
	printf("tcp-echo: listening on port %d\n", ECHO_PORT);
again:
	c = accept_one(ls, "tcp-echo", ACCEPT_TIMEOUT_MS);
	if (c < 0)
		goto close_listen;
	for (;;) {
		ssize_t r = recv(c, buf, MAX_MSG, 0);
		if (r == 0) {
			status = 0;	/* the client closed: done */
			break;
		}
		if (r < 0) {
			printf("tcp-echo: recv: errno %d\n", errno);
			break;
		}
		int e = send_all(c, buf, (size_t)r);
		if (e < 0) {
			printf("tcp-echo: send: errno %d\n", -e);
			break;
		}
		echoed += (uint64_t)r;
	}
	if (echoed == 0) {
		/*
		 * A connection that carried nothing is an attempt the client gave
		 * up on (its SYN answered after its one-second wait): not the
		 * session.  Wait for the one it retried with.
		 */
		closesocket(c);
		status = 1;
		goto again;
	}
	closesocket(c);
	thread_sleep_ns(FIN_LINGER_NS);
	printf("tcp-echo: echoed %lu bytes\n", echoed);
close_listen:
	closesocket(ls);
free:
	free(buf);
	return status;
}

/* --- client (node 0) ------------------------------------------------------- */

/*
 * Connect to the server, trying again while it is not up yet (refused, or
 * no answer within a second: the peer may still be booting, and an e1000
 * ignores frames for about a second after its reset).  A socket or -errno.
 */
static int connect_server(void)
{
	struct sockaddr_in sa = { 0 };
	int err = ETIMEDOUT;

	sa.sin_family = AF_INET;
	sa.sin_port = htons(ECHO_PORT);
	sa.sin_addr.s_addr = htonl(0x0a000000u | (SERVER_NODE + 1));	/* 10.0.0.2 */
	for (int attempt = 1; attempt <= CONNECT_TRIES; attempt++) {
		int s = socket(AF_INET, SOCK_STREAM, 0), on = 1, r;
		if (s < 0)
			return -errno;
		ioctlsocket(s, FIONBIO, &on);
		r = connect(s, (struct sockaddr *)&sa, sizeof sa);
		err = r < 0 ? errno : 0;
		if (r < 0 && errno == EINPROGRESS) {
			struct timeval tv = { 1, 0 };
			fd_set w;
			FD_ZERO(&w);
			FD_SET(s, &w);
			err = ETIMEDOUT;
			if (select(s + 1, NULL, &w, NULL, &tv) == 1) {
				socklen_t len = sizeof err;
				if (getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
					err = errno;
			}
		}
		if (err == 0) {
			on = 0;
			ioctlsocket(s, FIONBIO, &on);
			if (attempt > 1)
				printf("tcp-echo: connected on attempt %d\n", attempt);
			return s;
		}
		closesocket(s);
		if (err != ETIMEDOUT)
			thread_sleep_ns(200000000ULL);	/* refused: give it time */
	}
	printf("tcp-echo: cannot connect to 10.0.0.%d:%d (errno %d)\n", SERVER_NODE + 1, ECHO_PORT,
	       err);
	return -err;
}

/*
 * One round trip: send tx, read n bytes back into rx.  The message goes
 * out in CHUNK pieces, each followed by a read of whatever has come back,
 * so that neither side's buffers need to hold a whole message.  0 or -errno.
 */
static int round_trip(int s, const uint8_t *tx, uint8_t *rx, size_t n)
{
	size_t sent = 0, got = 0;

	while (got < n) {
		ssize_t r;
		if (sent < n) {
			size_t k = n - sent < CHUNK ? n - sent : CHUNK;
			int e = send_all(s, tx + sent, k);
			if (e < 0)
				return e;
			sent += k;
			r = recv(s, rx + got, n - got, sent < n ? MSG_DONTWAIT : 0);
			if (r < 0 && errno == EWOULDBLOCK)
				continue;
		} else {
			r = recv(s, rx + got, n - got, 0);
		}
		if (r == 0)
			return -ECONNRESET;
		if (r < 0)
			return -errno;
		got += (size_t)r;
	}
	return 0;
}

/* Time iters round trips of size bytes (after warmup untimed ones). */
static int measure(int s, size_t size, int iters, int warmup, uint8_t *tx, uint8_t *rx)
{
	static uint32_t seq;
	struct samples smp;
	uint64_t total = 0;
	size_t bad = 0;
	char a[32], b[32];

	if (samples_init(&smp, (size_t)iters) < 0)
		return -ENOMEM;
	for (int i = 0; i < warmup + iters; i++) {
		seq++;
		fill(tx, size, seq);
		uint64_t t0 = cycles();
		int e = round_trip(s, tx, rx, size);
		uint64_t t1 = cycles();
		if (e < 0) {
			printf("tcp-echo: size %zu round trip %d: errno %d\n", size, i, -e);
			samples_free(&smp);
			return e;
		}
		bad += check(rx, size, seq);
		if (i >= warmup) {
			samples_add(&smp, t1 - t0);
			total += t1 - t0;
		}
	}
	uint64_t ns = cycles_to_ns(total);
	uint64_t centi_mbps = ns ? (uint64_t)size * (uint64_t)iters * 8 * 100000 / ns : 0;
	result("size=%zu iters=%d median_us=%s p99_us=%s throughput_mbps=%lu.%02lu", size, iters,
	       fmt_us(a, sizeof a, samples_quantile(&smp, 0.5)),
	       fmt_us(b, sizeof b, samples_quantile(&smp, 0.99)), centi_mbps / 100,
	       centi_mbps % 100);
	samples_free(&smp);
	if (bad) {
		printf("tcp-echo: size %zu: %zu bytes wrong\n", size, bad);
		return -EIO;
	}
	return 0;
}

static int client(void)
{
	const char *iters_arg = arg_str("iters", NULL);
	int warmup = (int)arg_int("warmup", 5);
	uint8_t *tx = malloc(MAX_MSG), *rx = malloc(MAX_MSG);
	int s, status = 1;

	if (!tx || !rx)
		goto free;
	s = connect_server();
	if (s < 0)
		goto free;
	tune(s, IO_TIMEOUT_MS);
	status = 0;
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		int iters = iters_arg ? (int)arg_int("iters", 0) : default_iters(sizes[k]);
		if (measure(s, sizes[k], iters, warmup, tx, rx) < 0) {
			status = 1;
			break;
		}
	}
	/* Close our half and wait for the server's: it has seen the end. */
	shutdown(s, SHUT_WR);
	set_timeout(s, SO_RCVTIMEO, EOF_TIMEOUT_MS);
	if (recv(s, rx, MAX_MSG, 0) != 0)
		printf("tcp-echo: the server did not close its side (errno %d)\n", errno);
	closesocket(s);
free:
	free(tx);
	free(rx);
	return status;
}

/* --- bench rows: 1-byte round trip and 64 KiB throughput ------------------ */

static int bench_sock = -1;
static int bench_server_started;

static void *bench_server(void *arg)
{
	(void)arg;
	serve();
	return NULL;
}

/* The server thread on node 1, the connection on node 0; once. 0 or -1. */
static int bench_connect(void)
{
	if (node_id == SERVER_NODE && !bench_server_started) {
		struct thread *t = thread_create("tcp-server", bench_server, NULL, PRIO_NORMAL, 0);
		if (!t)
			return -1;
		thread_detach(t);
		bench_server_started = 1;
	}
	if (node_id != 0 || bench_sock >= 0)
		return 0;
	bench_sock = connect_server();
	if (bench_sock < 0)
		return -1;
	tune(bench_sock, IO_TIMEOUT_MS);
	return 0;
}

static int sample_tcp1(const struct bench_opts *o, struct samples *smp)
{
	static uint32_t seq;
	uint8_t tx, rx;

	if (bench_connect() < 0)
		return -1;
	if (node_id != 0)
		return 0;
	for (int i = 0; i < o->warmup + o->iters; i++) {
		seq++;
		fill(&tx, 1, seq);
		uint64_t t0 = cycles();
		if (round_trip(bench_sock, &tx, &rx, 1) < 0)
			return -1;
		uint64_t t1 = cycles();
		if (check(&rx, 1, seq))
			return -1;
		if (i >= o->warmup)
			samples_add(smp, t1 - t0);
	}
	return 0;
}

static int run_tcp64k(const struct bench_opts *o)
{
	static uint32_t seq = 1u << 20;
	const int iters = o->iters / 100 < 20 ? 20 : o->iters / 100;
	uint8_t *tx = malloc(MAX_MSG), *rx = malloc(MAX_MSG);
	struct samples smp;
	uint64_t total = 0;
	int r = -1;
	char a[32], b[32];

	if (bench_connect() < 0 || !tx || !rx || samples_init(&smp, (size_t)iters) < 0)
		goto out;
	if (node_id != 0) {
		r = 0;
		goto out_smp;
	}
	for (int i = 0; i < iters + 2; i++) {
		seq++;
		fill(tx, MAX_MSG, seq);
		uint64_t t0 = cycles();
		if (round_trip(bench_sock, tx, rx, MAX_MSG) < 0 || check(rx, MAX_MSG, seq))
			goto out_smp;
		uint64_t t1 = cycles();
		if (i >= 2) {
			samples_add(&smp, t1 - t0);
			total += t1 - t0;
		}
	}
	uint64_t ns = cycles_to_ns(total);
	uint64_t centi_mbps = (uint64_t)MAX_MSG * (uint64_t)iters * 8 * 100000 / (ns ? ns : 1);
	result("row=tcp-64k nic=%s n=%d median_us=%s p99_us=%s throughput_mbps=%lu.%02lu base=-",
	       net_nic_name(), iters, fmt_us(a, sizeof a, samples_quantile(&smp, 0.5)),
	       fmt_us(b, sizeof b, samples_quantile(&smp, 0.99)), centi_mbps / 100, centi_mbps % 100);
	/* The last TCP row: close, so that the server thread ends. */
	shutdown(bench_sock, SHUT_WR);
	set_timeout(bench_sock, SO_RCVTIMEO, EOF_TIMEOUT_MS);
	recv(bench_sock, rx, MAX_MSG, 0);
	closesocket(bench_sock);
	bench_sock = -1;
	r = 0;
out_smp:
	samples_free(&smp);
out:
	free(tx);
	free(rx);
	return r;
}

/*
 * --- bench rows: lwIP TCP one way, 4 KiB to 4 MiB -------------------------
 *
 *   tcp-bw-<size>   node 0 sends BW_TOTAL bytes (at least two writes) to
 *                   node 1's sink on port 9 (RFC 863's discard, but for
 *                   its answer) in send() calls of <size> bytes; the sink
 *                   reads them all and answers one byte: the time from the
 *                   first send to that answer.  Each run begins with the
 *                   count of bytes to come (8 bytes).
 *
 * The same bytes the block WRITE rows move (bulk_bench.c), by lwIP's
 * sockets: RESULT bench row=tcp-bw-<size> nic=.. bytes=B inflight_most=F
 * ms=T mb_per_s=M, where F is the most bytes node 0 had in flight when an
 * acknowledgement came (lwip_port_inflight_most): the window at work.
 */
#define SINK_PORT 9
#define BW_TOTAL (8u << 20)
#define BW_BUF (4u << 20)

static const size_t bw_sizes[] = { 4096, 16384, 65536, 262144, 1u << 20, 4u << 20 };

/* Read exactly n bytes (into p, or a scratch buffer of n bytes at most len).  0 or -errno/-EPIPE. */
static int recv_all(int s, uint8_t *p, size_t n, size_t len)
{
	size_t got = 0;

	while (got < n) {
		size_t want = n - got < len ? n - got : len;
		ssize_t r = recv(s, p + (len >= n ? got : 0), want, 0);
		if (r == 0)
			return -EPIPE;
		if (r < 0)
			return -errno;
		got += (size_t)r;
	}
	return 0;
}

/*
 * Node 1's sink, for the node's life: one connection at a time (a row, or
 * a round of it: the bench's bulkrounds=), each run on it its count, its
 * bytes and a one-byte answer.  One listening socket for them all: a
 * listener made anew for the next round would find the port still held
 * by the last connection, closing.
 */
static int sink_up;

static void *sink(void *arg)
{
	struct sockaddr_in sa = { 0 };
	uint8_t *buf = malloc(256 * 1024);
	int ls = socket(AF_INET, SOCK_STREAM, 0);

	(void)arg;
	sa.sin_family = AF_INET;
	sa.sin_port = htons(SINK_PORT);
	sa.sin_addr.s_addr = htonl(INADDR_ANY);
	if (!buf || ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(ls, 1) < 0) {
		printf("tcp-bw: no sink on port %d (errno %d)\n", SINK_PORT, errno);
		goto out;
	}
	set_timeout(ls, SO_RCVTIMEO, ACCEPT_TIMEOUT_MS);
	for (;;) {
		int c = accept(ls, NULL, NULL);
		if (c < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			continue;	/* no row yet */
		if (c < 0) {
			printf("tcp-bw: sink: accept: errno %d\n", errno);
			break;
		}
		tune(c, IO_TIMEOUT_MS);
		for (;;) {
			uint64_t total;
			uint8_t one = 1;
			int e = recv_all(c, (uint8_t *)&total, sizeof total, sizeof total);
			if (e == -EPIPE)
				break;		/* the client is through */
			if (e < 0 || (e = recv_all(c, buf, total, 256 * 1024)) < 0 || (e = send_all(c, &one, 1)) < 0) {
				printf("tcp-bw: sink: errno %d\n", -e);
				break;
			}
		}
		closesocket(c);
	}
out:
	if (ls >= 0)
		closesocket(ls);
	free(buf);
	sink_up = 0;
	return NULL;
}

static int run_tcp_bw(const struct bench_opts *o)
{
	uint8_t *tx;
	int s, r = -1;

	(void)o;
	/*
	 * The sink listens and node 0 connects once both know how long their
	 * frames are: a connection's segment size is fixed at its SYN, and
	 * one made before long frames passed would keep 1460-byte segments.
	 */
	(void)fabric_wait_path(30000000000ULL);
	if (node_id == SERVER_NODE) {
		if (sink_up)
			return 0;
		struct thread *t = thread_create("tcp-sink", sink, NULL, PRIO_NORMAL, 0);
		if (!t)
			return -1;
		sink_up = 1;
		thread_detach(t);
		return 0;
	}
	if (node_id != 0)
		return 0;
	if (!(tx = malloc(BW_BUF)))
		return -1;
	fill(tx, BW_BUF, 7);
	struct sockaddr_in sa = { 0 };
	sa.sin_family = AF_INET;
	sa.sin_port = htons(SINK_PORT);
	sa.sin_addr.s_addr = htonl(0x0a000000u | (SERVER_NODE + 1));
	/* The sink is up once node 1 got here: try for CONNECT_TRIES seconds. */
	for (int attempt = 0;; attempt++) {
		if ((s = socket(AF_INET, SOCK_STREAM, 0)) < 0)
			goto out;
		if (connect(s, (struct sockaddr *)&sa, sizeof sa) == 0)
			break;
		closesocket(s);
		if (attempt == CONNECT_TRIES) {
			printf("tcp-bw: cannot connect to the sink on 10.0.0.%d:%d (errno %d)\n", SERVER_NODE + 1,
			       SINK_PORT, errno);
			goto out;
		}
		thread_sleep_ns(1000000000ULL);
	}
	tune(s, IO_TIMEOUT_MS);
	for (size_t k = 0; k < sizeof bw_sizes / sizeof bw_sizes[0]; k++) {
		size_t size = bw_sizes[k];
		uint64_t total = BW_TOTAL > 2 * size ? BW_TOTAL : 2 * size;
		uint8_t one;
		char row[32];
		lwip_port_inflight_most = 0;
		uint64_t t0 = cycles();
		int e = send_all(s, (const uint8_t *)&total, sizeof total);
		for (uint64_t done = 0; e == 0 && done < total; done += size)
			e = send_all(s, tx + done % BW_BUF, size);
		if (e == 0)
			e = recv_all(s, &one, 1, 1);
		uint64_t ns = cycles_to_ns(cycles() - t0);
		if (e < 0) {
			printf("tcp-bw: %zu-byte sends: errno %d\n", size, -e);
			closesocket(s);
			goto out;
		}
		char sz[8], flight[32];
		snprintf(row, sizeof row, "tcp-bw-%s", bench_size_name(size, sz, sizeof sz));
		/* What the window let this node have in flight (net/lwip/lwip_port.h). */
		snprintf(flight, sizeof flight, "inflight_most=%u", (unsigned)lwip_port_inflight_most);
		bench_rate(row, total, ns, flight, "mb_per_s", "-");
	}
	closesocket(s);
	r = 0;
out:
	free(tx);
	return r;
}

static const struct bench tcp1_bench = {
	.name = "tcp-1B", .summary = "lwIP TCP echo round trip of 1 byte (sockets, TCP_NODELAY)",
	.sample = sample_tcp1, .extra = "size=1",
};
static const struct bench tcp64k_bench = {
	.name = "tcp-64k", .summary = "lwIP TCP echo of 64 KiB messages: round trip and throughput",
	.run = run_tcp64k,
};
BENCH_REGISTER(tcp1_bench, 30_tcp1);
BENCH_REGISTER(tcp64k_bench, 31_tcp64k);
static const struct bench tcp_bw_bench = {
	.name = "tcp-bw", .summary = "lwIP TCP one way: 8 MiB in sends of 4 KiB to 4 MiB, to node 1's sink",
	.run = run_tcp_bw, .bulk = 1,
};
BENCH_REGISTER(tcp_bw_bench, 32_tcpbw);

static const struct argspec tcp_echo_args[] = {
	{ "iters", ARG_INT, 1, 1000000,
	  "timed round trips per size (default 200 up to 4 KiB, 100 at 16 KiB, 50 at 64 KiB)" },
	{ "warmup", ARG_INT, 0, 10000, "untimed round trips first, per size (default 5)" },
	{ NULL, 0, 0, 0, NULL },
};

static int tcp_echo_main(void)
{
	int status = 0;

	if (!lwip_port_ready()) {
		printf("tcp-echo: no TCP/IP stack (no NIC?)\n");
		return 1;
	}
	if (node_id == SERVER_NODE)
		status = serve();
	else if (node_id == 0)
		status = client();
	else
		return 0;
	lwip_port_print_stats();
	net_print_stats();
	return status;
}

APP(tcp_echo, "tcp-echo",
    "TCP echo over lwIP sockets: node 0 times round trips of 1 B..64 KiB to node 1",
    tcp_echo_main, tcp_echo_args, 2);
