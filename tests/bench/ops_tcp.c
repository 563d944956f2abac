/*
 * The tcp-1B operation of tests/bench/ops.h: one byte through a TCP socket from
 * node 0 to a thread of node 1 that reads it (lwIP's socket API, with
 * TCP_NODELAY, as the tcp-1B bench row).  Apart from ops.c because it
 * needs lwIP's headers.
 */
#include <errno.h>
#include <stdio.h>

#include "kernel/node.h"
#include "kernel/thread.h"
#include "kernel/trace.h"
#include "lwip/sockets.h"
#include "tests/bench/ops.h"

#define OPS_PORT 9
#define CONNECT_TRIES 50

static int sock = -1;

static void nodelay(int s)
{
	int on = 1;

	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
}

/* Node 1's thread: accept one connection and read it a byte at a time. */
static void *reader(void *arg)
{
	int ls = (int)(intptr_t)arg, c;
	char b;

	if ((c = accept(ls, NULL, NULL)) < 0) {
		printf("ops: tcp: accept: errno %d\n", errno);
		return NULL;
	}
	nodelay(c);
	while (recv(c, &b, 1, 0) == 1)
		trace_point(TS_APP_RETURN);
	closesocket(c);
	return NULL;
}

int op_tcp_setup(void)
{
	struct sockaddr_in sa = { 0 };
	int ls;

	if (node_id != 1 || sock >= 0)
		return 0;
	sa.sin_family = AF_INET;
	sa.sin_port = htons(OPS_PORT);
	sa.sin_addr.s_addr = htonl(INADDR_ANY);
	if ((ls = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
	    bind(ls, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(ls, 1) < 0) {
		printf("ops: tcp: cannot listen on port %d: errno %d\n", OPS_PORT, errno);
		return -1;
	}
	sock = ls;
	return thread_create("ops-tcp-rx", reader, (void *)(intptr_t)ls, PRIO_NORMAL, 0) ? 0 : -1;
}

int op_tcp_bind(void)
{
	struct sockaddr_in sa = { 0 };

	if (sock >= 0)
		return 0;
	sa.sin_family = AF_INET;
	sa.sin_port = htons(OPS_PORT);
	sa.sin_addr.s_addr = htonl(0x0a000002u);	/* node 1: 10.0.0.2 */
	for (int t = 0; t < CONNECT_TRIES; t++) {
		int s = socket(AF_INET, SOCK_STREAM, 0);
		if (s < 0)
			return -1;
		if (connect(s, (struct sockaddr *)&sa, sizeof sa) == 0) {
			nodelay(s);
			sock = s;
			return 0;
		}
		closesocket(s);
		thread_sleep_ns(200000000ULL);
	}
	printf("ops: tcp: cannot connect to 10.0.0.2:%d\n", OPS_PORT);
	return -1;
}

int op_tcp_run(uint32_t i)
{
	char b = (char)i;

	return send(sock, &b, 1, 0) == 1 ? 0 : -errno;
}
