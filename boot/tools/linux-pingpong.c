/*
 * linux-pingpong: the round trips a Linux guest gets on the same switch and
 * NIC as the nodes (boot/tools/peers, make bench PEERS=1): UDP with 64-byte
 * datagrams and TCP with 1-byte messages (TCP_NODELAY).
 *
 *   linux-pingpong -s                  echo UDP on port 7000, TCP on 7001, until killed
 *   linux-pingpong -c ADDR [-n N]      N timed round trips of each (default 1000)
 *
 * The client prints, per row, the bench app's lines: "RESULT peer row=udp-64 n=..
 * median_us=.. p99_us=.. min_us=.." and "SAMPLES peer row=.. i=.. ns=..,..".
 * Built static for the peers' initramfs; runs on the host too.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define UDP_PORT 7000
#define TCP_PORT 7001
#define WARMUP 50

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "linux-pingpong: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void report(const char *row, uint64_t *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_u64);
	uint64_t med = v[(int)(0.5 * (n - 1) + 0.5)], p99 = v[(int)(0.99 * (n - 1) + 0.5)];
	printf("RESULT peer row=%s n=%d median_us=%lu.%02lu p99_us=%lu.%02lu min_us=%lu.%02lu\n", row, n,
	       (unsigned long)(med / 1000), (unsigned long)(med % 1000 / 10),
	       (unsigned long)(p99 / 1000), (unsigned long)(p99 % 1000 / 10),
	       (unsigned long)(v[0] / 1000), (unsigned long)(v[0] % 1000 / 10));
	for (int i = 0; i < n; i += 32) {
		printf("SAMPLES peer row=%s i=%d ns=", row, i);
		for (int k = i; k < n && k < i + 32; k++)
			printf("%s%lu", k > i ? "," : "", (unsigned long)v[k]);
		printf("\n");
	}
	fflush(stdout);
}

static void serve(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY) };
	int u = socket(AF_INET, SOCK_DGRAM, 0), t = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	char buf[2048];

	if (u < 0 || t < 0)
		die("socket");
	setsockopt(t, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	a.sin_port = htons(UDP_PORT);
	if (bind(u, (struct sockaddr *)&a, sizeof a) < 0)
		die("bind udp");
	a.sin_port = htons(TCP_PORT);
	if (bind(t, (struct sockaddr *)&a, sizeof a) < 0 || listen(t, 4) < 0)
		die("bind tcp");
	if (fork() == 0) {
		for (;;) {
			struct sockaddr_in from;
			socklen_t fl = sizeof from;
			ssize_t n = recvfrom(u, buf, sizeof buf, 0, (struct sockaddr *)&from, &fl);
			if (n > 0)
				sendto(u, buf, (size_t)n, 0, (struct sockaddr *)&from, fl);
		}
	}
	for (;;) {
		int c = accept(t, NULL, NULL);
		if (c < 0)
			continue;
		setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		for (ssize_t n; (n = read(c, buf, sizeof buf)) > 0;)
			if (write(c, buf, (size_t)n) != n)
				break;
		close(c);
	}
}

static void client(const char *addr, int n)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	uint64_t *v = calloc((size_t)n, sizeof *v);
	char buf[64] = { 0 };
	int u, t, one = 1;
	struct timeval tmo = { 1, 0 };

	if (!v || inet_pton(AF_INET, addr, &a.sin_addr) != 1) {
		fprintf(stderr, "linux-pingpong: bad address %s\n", addr);
		exit(2);
	}
	/* UDP, 64 bytes: a lost datagram (1 s) is sent again and not counted. */
	a.sin_port = htons(UDP_PORT);
	if ((u = socket(AF_INET, SOCK_DGRAM, 0)) < 0 || connect(u, (struct sockaddr *)&a, sizeof a) < 0)
		die("udp");
	setsockopt(u, SOL_SOCKET, SO_RCVTIMEO, &tmo, sizeof tmo);
	for (int i = 0, lost = 0; i < WARMUP + n;) {
		uint64_t t0 = now_ns();
		if (send(u, buf, 64, 0) != 64 || recv(u, buf, sizeof buf, 0) != 64) {
			if (++lost > 20)
				die("udp round trips (20 lost: is the server up?)");
			continue;
		}
		if (i >= WARMUP)
			v[i - WARMUP] = now_ns() - t0;
		i++;
	}
	report("udp-64", v, n);
	/* TCP, 1 byte each way, no Nagle; the server may still be starting: retry. */
	a.sin_port = htons(TCP_PORT);
	for (int tries = 0;; tries++) {
		if ((t = socket(AF_INET, SOCK_STREAM, 0)) < 0)
			die("tcp");
		if (connect(t, (struct sockaddr *)&a, sizeof a) == 0)
			break;
		close(t);
		if (tries > 100)
			die("tcp connect");
		usleep(100000);
	}
	setsockopt(t, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	for (int i = 0; i < WARMUP + n; i++) {
		uint64_t t0 = now_ns();
		if (write(t, buf, 1) != 1 || read(t, buf, 1) != 1)
			die("tcp round trip");
		if (i >= WARMUP)
			v[i - WARMUP] = now_ns() - t0;
	}
	report("tcp-1B", v, n);
	close(t);
	free(v);
}

int main(int argc, char **argv)
{
	int opt, n = 1000;
	const char *addr = NULL;
	int server = 0;

	while ((opt = getopt(argc, argv, "sc:n:h")) != -1) {
		switch (opt) {
		case 's': server = 1; break;
		case 'c': addr = optarg; break;
		case 'n': n = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: linux-pingpong -s | -c ADDR [-n N]\n");
			return opt == 'h' ? 0 : 2;
		}
	}
	if (n < 1)
		n = 1;
	if (server)
		serve();
	else if (addr)
		client(addr, n);
	else {
		fprintf(stderr, "usage: linux-pingpong -s | -c ADDR [-n N]\n");
		return 2;
	}
	return 0;
}
