/*
 * The kernel below the packet pool, for the host tests of the pool and
 * its shares (tests/drivers/test_pktbuf.c, tests/net/test_pktshare.c):
 * page memory from the C heap, init hooks not run (each test makes the
 * pool itself: host_pool_whole), a panic that aborts the test.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "drivers/pktbuf.h"
#include "kernel/init.h"
#include "kernel/mem.h"
#include "kernel/panic.h"
#include "tests/host/host_kernel.h"

void *page_alloc_zeroed(size_t bytes)
{
	return calloc(1, bytes);
}

void host_init_hook_add(const struct init_hook *h)
{
	(void)h;
}

void panic(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

/* The pool lives for the process; a test's setup asks that it be whole. */
int host_pool_whole(int n)
{
	static int made;

	if (!made && pkt_pool_init(n) < 0)
		return -1;
	made = 1;
	return pkt_free_count() == n ? 0 : -1;
}
