/*
 * The packet pool's shares (net/pktshare.h): the consumers registered by
 * name, their shares and refusals, and the charging.  What each consumer
 * holds is the pool's count (drivers/pktbuf.h: pkt_held_bufs), which a
 * buffer's last reference takes it off.  The same code over the kernel's
 * pool (drivers/pktbuf.c) and the host tests' (tests/host/host_pktbuf.c).
 */
#include <errno.h>
#include <string.h>

#include "drivers/pktbuf.h"
#include "kernel/x86.h"
#include "net/pktshare.h"

static int share[PKT_MAX_CONSUMERS];
static unsigned long refused[PKT_MAX_CONSUMERS];
static const char *names[PKT_MAX_CONSUMERS];
static int nconsumers;

/* n outside 0..the pool's buffers (any n >= 0 before the pool is made)? */
static int share_bad(int n)
{
	int pool = pkt_total();

	return n < 0 || (pool > 0 && n > pool);
}

int pkt_consumer_find(const char *name)
{
	for (int c = 0; c < nconsumers; c++)
		if (strcmp(names[c], name) == 0)
			return c;
	return -ENOENT;
}

int pkt_consumer(const char *name, int n)
{
	int c = pkt_consumer_find(name);

	if (share_bad(n))
		return -EINVAL;
	if (c < 0) {
		if (nconsumers == PKT_MAX_CONSUMERS)
			return -ENOSPC;
		c = nconsumers;
		names[c] = name;
	}
	share[c] = n;
	if (c == nconsumers)
		nconsumers++;	/* last: a charge that checks c < nconsumers sees it whole */
	return c;
}

int pkt_charge(struct pktbuf *pb, int c)
{
	irqflags_t f;
	int r = 0;

	if (c < 0 || c >= nconsumers)
		return -EINVAL;
	f = irq_save();
	if (pb->charged) {
		r = -EINVAL;
	} else if (pkt_held_bufs[c] >= share[c]) {
		refused[c]++;
		r = -ENOBUFS;
	} else {
		pkt_held_bufs[c]++;
		pb->charged = (uint8_t)(c + 1);
	}
	irq_restore(f);
	return r;
}

int pkt_share_left(int c)
{
	/* Racing chargers can only be refused here, never pass the share. */
	if (c < 0 || c >= nconsumers)
		return 0;
	if (pkt_held_bufs[c] >= share[c]) {
		refused[c]++;
		return 0;
	}
	return 1;
}

int pkt_share_set(int c, int n)
{
	if (c < 0 || c >= nconsumers || share_bad(n))
		return -EINVAL;
	share[c] = n;
	return 0;
}

int pkt_held(int c)
{
	return c >= 0 && c < nconsumers ? pkt_held_bufs[c] : 0;
}

int pkt_share(int c)
{
	return c >= 0 && c < nconsumers ? share[c] : 0;
}

unsigned long pkt_refused(int c)
{
	return c >= 0 && c < nconsumers ? refused[c] : 0;
}
