/*
 * The pktbuf pool: one contiguous block of 2 KiB buffers and a free list;
 * and, for a NIC with longer frames, a block of large ones and theirs;
 * and what each consumer holds, which the last reference takes a buffer
 * off (the shares themselves are net's: net/pktshare.c).
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
static struct pktbuf *large_pool, *large_free;
static int nlarge_free, nlarge;
static uint32_t large_frame;		/* frame bytes a large buffer holds */
int pkt_held_bufs[PKT_MAX_CONSUMERS];

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

int pkt_large_init(int n, uint32_t frame)
{
	if (large_pool)
		return frame <= large_frame ? 0 : -ENOMEM;
	size_t each = (PKT_HEADROOM + (size_t)frame + 4095) & ~(size_t)4095;
	uint8_t *mem = page_alloc_zeroed((size_t)n * each);
	struct pktbuf *p = calloc((size_t)n, sizeof *p);

	if (!mem || !p) {
		free(p);
		return -ENOMEM;
	}
	irqflags_t f = irq_save();
	for (int i = 0; i < n; i++) {
		p[i].buf = mem + (size_t)i * each;
		p[i].large = 1;
		p[i].next = large_free;
		large_free = &p[i];
	}
	large_pool = p;
	nlarge_free = nlarge = n;
	large_frame = frame;
	irq_restore(f);
	return 0;
}

/* A buffer off list (the small or the large free list) made ready: one reference, data at the headroom. */
static inline struct pktbuf *ready(struct pktbuf *pb)
{
	pb->next = NULL;
	pb->refs = 1;
	pb->charged = 0;
	pb->data = pb->buf + PKT_HEADROOM;
	pb->len = 0;
	pb->stamp = 0;
	pb->owner = NULL;
	return pb;
}

struct pktbuf *pkt_get_len(size_t len)
{
	if (len <= PKT_MAX_FRAME)
		return pkt_get();
	if (len > large_frame)
		return NULL;
	irqflags_t f = irq_save();
	struct pktbuf *pb = large_free;
	if (pb) {
		large_free = pb->next;
		nlarge_free--;
	}
	irq_restore(f);
	return pb ? ready(pb) : NULL;
}

uint32_t pkt_large_room(void)
{
	return PKT_HEADROOM + large_frame;
}

int pkt_free_len(size_t len)
{
	return len <= PKT_MAX_FRAME ? nfree : len <= large_frame ? nlarge_free : 0;
}

int pkt_large_total(void)
{
	return nlarge;
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
	return pb ? ready(pb) : NULL;
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
		if (pb->large) {
			pb->next = large_free;
			large_free = pb;
			nlarge_free++;
		} else {
			pb->next = freelist;
			freelist = pb;
			nfree++;
		}
	}
	irq_restore(f);
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
