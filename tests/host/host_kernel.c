/*
 * The kernel below the packet pool, for the host tests of the pool and
 * its shares (tests/drivers/test_pktbuf.c, tests/net/test_pktshare.c):
 * page memory from the C heap, init hooks not run (each test makes the
 * pool itself), a panic that aborts the test.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernel/init.h"
#include "kernel/mem.h"
#include "kernel/panic.h"

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
