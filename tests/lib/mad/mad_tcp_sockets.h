/*
 * The sockets of the host builds of lib/mad_tcp.c (tests/lib/mad/fuzz_madtcp.c,
 * tests/lib/mad/test_mad_tcp.c): fd 100 + k is the stream from node k, its
 * bytes stream[k] from head[k] to tail_[k]; 99 is the listener.  A select
 * finds ready the streams with bytes to read and is never cut short (one
 * thread); socket, bind, listen, setsockopt and close succeed, a connect
 * fails.  The including file defines NODES and STREAM_MAX first and gives
 * reads, writes and accepts itself.
 */
#ifndef TESTS_LIB_MAD_MAD_TCP_SOCKETS_H
#define TESTS_LIB_MAD_MAD_TCP_SOCKETS_H

#include <stddef.h>
#include <stdint.h>

static uint8_t stream[NODES][STREAM_MAX];
static size_t head[NODES], tail_[NODES];

static int node_of(int fd)
{
	return fd >= 100 && fd < 100 + NODES ? fd - 100 : -1;
}

static size_t avail(int k)
{
	return tail_[k] - head[k];
}

void lwip_select_kickable(int on) { (void)on; }
void lwip_select_kick(void) { }

int lwip_select(int maxfdp1, fd_set *r, fd_set *w, fd_set *e, struct timeval *t)
{
	int n = 0;

	(void)w;
	(void)e;
	(void)t;
	for (int fd = 0; fd < maxfdp1; fd++) {
		if (!FD_ISSET(fd, r))
			continue;
		int k = node_of(fd);
		if (k >= 0 && avail(k))
			n++;
		else
			FD_CLR(fd, r);
	}
	return n;
}

int lwip_socket(int domain, int type, int protocol) { (void)domain; (void)type; (void)protocol; return 99; }
int lwip_bind(int s, const struct sockaddr *a, socklen_t l) { (void)s; (void)a; (void)l; return 0; }
int lwip_listen(int s, int b) { (void)s; (void)b; return 0; }
int lwip_connect(int s, const struct sockaddr *a, socklen_t l) { (void)s; (void)a; (void)l; return -1; }
int lwip_close(int s) { (void)s; return 0; }
int lwip_setsockopt(int s, int l, int o, const void *v, socklen_t n)
{
	(void)s; (void)l; (void)o; (void)v; (void)n;
	return 0;
}

#endif
