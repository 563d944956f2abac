/*
 * What the stream drivers' fuzz targets (fuzz_madcell.c, fuzz_madreq.c)
 * give lib/mad.c and the driver besides mad_host.h: waits that return at
 * once and are counted (more than WAITS_MAX traps: single-threaded, a
 * wait that loops never ends), wake-ups that wake nobody, a poll that
 * reads its flag, and peers that are gone while hostile[] says they wrote
 * by hand.  The including file defines NODES and WAITS_MAX first.
 */
#ifndef TESTS_LIB_MAD_MAD_STREAM_HOST_H
#define TESTS_LIB_MAD_MAD_STREAM_HOST_H

#include "tests/lib/mad/mad_host.h"

static unsigned waits;

int waitq_wait_timeout(struct waitq *wq, uint64_t ns)
{
	(void)wq, (void)ns;
	if (++waits >= WAITS_MAX)
		__builtin_trap();
	return 0;
}
int waitq_wake_all(struct waitq *wq)
{
	(void)wq;
	return 0;
}
int net_poll_wait(volatile int *flag) { return *flag; }

static int hostile[NODES];

/* What a node that wrote by hand did not send will never come: it counts as gone. */
int fabric_peer_dead(int dst)
{
	return dst > 0 && dst < NODES && hostile[dst];
}

#endif
