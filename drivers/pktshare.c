/*
 * The packet pool's shares (pktbuf.h): the consumers registered by name,
 * and the buffers each holds against its share.  The same code under the
 * kernel's pool (pktbuf.c) and the host tests' (tests/host/host_pktbuf.c),
 * which call into it and nothing the other way.
 */
#include <errno.h>
#include <string.h>

#include "drivers/pktbuf.h"
#include "drivers/pktshare.h"
#include "kernel/x86.h"

static int held[PKT_MAX_CONSUMERS], share[PKT_MAX_CONSUMERS];
static unsigned long refused[PKT_MAX_CONSUMERS];
static const char *names[PKT_MAX_CONSUMERS];
static int nconsumers;
static int pool_size;		/* the pool's buffers, once it is made (0: not yet) */

void pkt_shares_init(int pool_bufs)
{
	pool_size = pool_bufs;
}

void pkt_uncharge(struct pktbuf *pb)
{
	if (pb->charged) {
		held[pb->charged - 1]--;
		pb->charged = 0;
	}
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

	if (n < 0 || (pool_size > 0 && n > pool_size))
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
	} else if (held[c] >= share[c]) {
		refused[c]++;
		r = -ENOBUFS;
	} else {
		held[c]++;
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
	if (held[c] >= share[c]) {
		refused[c]++;
		return 0;
	}
	return 1;
}

int pkt_share_set(int c, int n)
{
	if (c < 0 || c >= nconsumers || n < 0 || (pool_size > 0 && n > pool_size))
		return -EINVAL;
	share[c] = n;
	return 0;
}

int pkt_held(int c)
{
	return c >= 0 && c < nconsumers ? held[c] : 0;
}

int pkt_share(int c)
{
	return c >= 0 && c < nconsumers ? share[c] : 0;
}

unsigned long pkt_refused(int c)
{
	return c >= 0 && c < nconsumers ? refused[c] : 0;
}
