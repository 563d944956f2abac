/*
 * The pktbuf pool: one contiguous block of 2 KiB buffers and a free list.
 * What each consumer holds against its share is pktshare.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/pktbuf.h"
#include "drivers/pktshare.h"
#include "kernel/init.h"
#include "kernel/mem.h"
#include "kernel/panic.h"
#include "kernel/x86.h"

static struct pktbuf *pool, *freelist;
static int nbufs, nfree, low_water;

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
	pkt_shares_init(n);
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
		pkt_uncharge(pb);
		pb->next = freelist;
		freelist = pb;
		nfree++;
	}
	irq_restore(f);
}

struct pktbuf *pkt_get_for(int c)
{
	struct pktbuf *pb;

	if (!pkt_share_left(c) || !(pb = pkt_get()))
		return NULL;
	if (pkt_charge(pb, c) < 0) {
		pkt_put(pb);
		return NULL;
	}
	return pb;
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
