/*
 * The kernel as lib/mad.c sees it, for one host thread: a mutex only
 * counts its depth, a yield returns at once, a cycle is a nanosecond.
 * The host builds of Madeleine (tests/lib/mad/fuzz_mad.c, fuzz_madcell.c,
 * fuzz_madreq.c, mad_tcp_host.h; tests/lib/mad/test_mad.c) include this
 * after kernel/sync.h and give the rest themselves.
 */
#ifndef TESTS_LIB_MAD_MAD_HOST_H
#define TESTS_LIB_MAD_MAD_HOST_H

#include <stdint.h>
#include <string.h>

#include "kernel/sync.h"

void mutex_init(struct mutex *m, int recursive)
{
	memset(m, 0, sizeof *m);
	m->recursive = recursive;
}
void mutex_lock(struct mutex *m) { m->depth++; }
void mutex_unlock(struct mutex *m) { m->depth--; }
void thread_yield(void) {}
uint64_t cycles_to_ns(uint64_t c) { return c; }
uint64_t ns_to_cycles(uint64_t ns) { return ns; }

#endif
