/*
 * The pktbuf pool: one contiguous block of 2 KiB buffers and a free list,
 * and per consumer the buffers it holds against its share.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/pktbuf.h"
#include "kernel/init.h"
#include "kernel/mem.h"
#include "kernel/panic.h"
#include "kernel/x86.h"

static struct pktbuf *pool, *freelist;
static int nbufs, nfree, low_water;
static int held[PKT_MAX_CONSUMERS], share[PKT_MAX_CONSUMERS];
static unsigned long refused[PKT_MAX_CONSUMERS];
static const char *names[PKT_MAX_CONSUMERS];
static int nconsumers;

int pkt_pool_init(int n)
{
	uint8_t *mem = page_alloc_zeroed((size_t)n * PKT_BUF_SIZE);

	pool = calloc((size_t)n, sizeof *pool);
	if (!mem || !pool)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		pool[i].buf = mem + (size_t)i * PKT_BUF_SIZE;
		pool[i].next = freelist;
		freelist = &pool[i];
	}
	nbufs = nfree = low_water = n;
	return 0;
}

struct pktbuf *pkt_get(void)
{
	irqflags_t f = irq_save();
	struct pktbuf *pb = freelist;

	if (pb) {
		freelist = pb->next;
		if (--nfree < low_water)
			low_water = nfree;
	}
	irq_restore(f);
	if (!pb)
		return NULL;
	pb->next = NULL;
	pb->refs = 1;
	pb->charged = 0;
	pb->data = pb->buf + PKT_HEADROOM;
	pb->len = 0;
	pb->stamp = 0;
	pb->owner = NULL;
	return pb;
}

void pkt_ref(struct pktbuf *pb)
{
	irqflags_t f = irq_save();
	KASSERT(pb->refs > 0);
	pb->refs++;
	irq_restore(f);
}

void pkt_put(struct pktbuf *pb)
{
	irqflags_t f = irq_save();

	if (pb->refs <= 0)
		panic("pkt_put: buffer %p has no reference (double free)", (void *)pb);
	if (--pb->refs == 0) {
		if (pb->charged) {
			held[pb->charged - 1]--;
			pb->charged = 0;
		}
		pb->next = freelist;
		freelist = pb;
		nfree++;
	}
	irq_restore(f);
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

	if (n < 0 || (nbufs && n > nbufs))
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

struct pktbuf *pkt_get_for(int c)
{
	struct pktbuf *pb;

	if (c < 0 || c >= nconsumers)
		return NULL;
	/* Racing chargers can only be refused here, never pass the share. */
	if (held[c] >= share[c]) {
		refused[c]++;
		return NULL;
	}
	if (!(pb = pkt_get()))
		return NULL;
	if (pkt_charge(pb, c) < 0) {
		pkt_put(pb);
		return NULL;
	}
	return pb;
}

int pkt_share_set(int c, int n)
{
	if (c < 0 || c >= nconsumers || n < 0 || (nbufs && n > nbufs))
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

int pkt_free_count(void)
{
	return nfree;
}

int pkt_total(void)
{
	return nbufs;
}

int pkt_low_water(void)
{
	return low_water;
}

/* The pool every NIC driver and protocol shares, before any driver starts. */
static int pkt_pool_start(void)
{
	if (pkt_pool_init(PKT_POOL_BUFS) < 0) {
		printf("net: cannot allocate the packet buffer pool\n");
		return -ENOMEM;
	}
	return 0;
}
INIT_HOOK(INIT_POOLS, pktbuf, pkt_pool_start);
