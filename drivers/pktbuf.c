/*
 * The pktbuf pool: one contiguous block of 2 KiB buffers and a free list;
 * and, for a NIC with longer frames, a block of large ones and theirs (two
 * blocks for frames beyond PKT_JUMBO_FRAME: one of jumbo buffers, which
 * frames up to that length take first, and one of the longest);
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
/* The large blocks: [0] the only one, or the jumbo buffers' where there are two; [1] the longest. */
static struct large {
	struct pktbuf *pool, *free;
	int nfree, n;
	uint32_t frame;			/* frame bytes each buffer holds (0: no such block) */
} large[2];
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

/* Block k of n buffers of frame bytes each (interrupts on: before any NIC starts). */
static int large_block(int k, int n, uint32_t frame)
{
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
		p[i].large = (uint8_t)(k + 1);
		p[i].next = large[k].free;
		large[k].free = &p[i];
	}
	large[k].pool = p;
	large[k].nfree = large[k].n = n;
	large[k].frame = frame;
	irq_restore(f);
	return 0;
}

int pkt_large_init(int n, uint32_t frame)
{
	uint32_t most = large[1].frame ? large[1].frame : large[0].frame;

	if (large[0].pool)
		return frame <= most ? 0 : -ENOMEM;
	if (frame <= PKT_JUMBO_FRAME)
		return large_block(0, n, frame);
	/* The jumbo buffers first, so that a window of 9 KiB frames has its share of buffers too. */
	if (large_block(0, PKT_LARGE_BUFS_JUMBO, PKT_JUMBO_SHARE_FRAME) < 0)
		return -ENOMEM;
	return large_block(1, n, frame);
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
	struct pktbuf *pb = NULL;

	if (len <= PKT_MAX_FRAME)
		return pkt_get();
	irqflags_t f = irq_save();
	/* The shortest buffers that hold it, then the longer ones. */
	for (int k = 0; k < 2 && !pb; k++) {
		if (len > large[k].frame || !(pb = large[k].free))
			continue;
		large[k].free = pb->next;
		large[k].nfree--;
	}
	irq_restore(f);
	return pb ? ready(pb) : NULL;
}

uint32_t pkt_large_room(const struct pktbuf *pb)
{
	return PKT_HEADROOM + large[pb->large - 1].frame;
}

int pkt_free_len(size_t len)
{
	if (len <= PKT_MAX_FRAME)
		return nfree;
	return (len <= large[0].frame ? large[0].nfree : 0) + (len <= large[1].frame ? large[1].nfree : 0);
}

int pkt_total_len(size_t len)
{
	if (len <= PKT_MAX_FRAME)
		return nbufs;
	return (len <= large[0].frame ? large[0].n : 0) + (len <= large[1].frame ? large[1].n : 0);
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
			struct large *l = &large[pb->large - 1];
			pb->next = l->free;
			l->free = pb;
			l->nfree++;
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
