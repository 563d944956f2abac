/*
 * Binary buddy allocator (Knuth, TAOCP vol. 1, 2.5).  One metadata byte per
 * page: for the first page of a free block, FREE | order; otherwise 0 or
 * the order of an allocated block (for checking page_free's order).  The
 * free lists are linked through an array beside the metadata, not through
 * the free pages themselves: free memory is never written, so memory given
 * to the allocator costs nothing until it is used (under QEMU a guest
 * page's first write costs the host a fault and a page of zeroes; on this
 * host a node of 1 GiB spent 1 s of its boot linking its free pages).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kernel/page.h"

#ifdef HOST_TEST
#define PAGE_LOCK() do { } while (0)
#define PAGE_UNLOCK() do { } while (0)
#define PAGE_BUG(msg) do { } while (0)
#else
#include "kernel/panic.h"
#include "kernel/x86.h"
#define PAGE_LOCK() irqflags_t pflags_ = irq_save()
#define PAGE_UNLOCK() irq_restore(pflags_)
#define PAGE_BUG(msg) panic("page: %s", msg)
#endif

#define META_FREE 0x80
#define META_ALLOC 0x40
#define META_ORDER 0x1f

/* A free block's neighbours in its list: page indexes plus one, 0 for none. */
struct flink {
	uint32_t next, prev;
};

static uintptr_t span_lo, span_hi;
static uint8_t *meta;
static struct flink *links;		/* one per page, valid for a free block's first */
static uint32_t freelist[PAGE_MAX_ORDER + 1];
static size_t nfree, ntotal;

static inline size_t idx_of(uintptr_t a) { return (a - span_lo) >> PAGE_SHIFT; }
static inline uintptr_t addr_of(size_t i) { return span_lo + (i << PAGE_SHIFT); }

static size_t span_pages(uintptr_t lo, uintptr_t hi)
{
	uintptr_t blk = PAGE_SIZE << PAGE_MAX_ORDER;
	lo &= ~(blk - 1);
	hi = (hi + blk - 1) & ~(blk - 1);
	return (hi - lo) >> PAGE_SHIFT;
}

size_t page_meta_bytes(uintptr_t lo, uintptr_t hi)
{
	size_t n = span_pages(lo, hi);

	/* The bytes, then the links (aligned to 8). */
	return ((n + 7) & ~(size_t)7) + n * sizeof(struct flink);
}

void page_init(uintptr_t lo, uintptr_t hi, uint8_t *m)
{
	uintptr_t blk = PAGE_SIZE << PAGE_MAX_ORDER;
	size_t n = span_pages(lo, hi);

	span_lo = lo & ~(blk - 1);
	span_hi = (hi + blk - 1) & ~(blk - 1);
	meta = m;
	memset(meta, 0, n);		/* the links are read only where meta says free */
	links = (struct flink *)(void *)(m + ((n + 7) & ~(size_t)7));
	memset(freelist, 0, sizeof freelist);
	nfree = ntotal = 0;
}

static void push(size_t i, int order)
{
	struct flink *n = &links[i];

	meta[i] = (uint8_t)(META_FREE | order);
	n->prev = 0;
	n->next = freelist[order];
	if (n->next)
		links[n->next - 1].prev = (uint32_t)i + 1;
	freelist[order] = (uint32_t)i + 1;
}

static void unlink_block(size_t i, int order)
{
	struct flink *n = &links[i];

	if (n->prev)
		links[n->prev - 1].next = n->next;
	else
		freelist[order] = n->next;
	if (n->next)
		links[n->next - 1].prev = n->prev;
	meta[i] = 0;
}

/* Free a block without accounting: merge with free buddies. */
static void release(size_t i, int order)
{
	size_t limit = (span_hi - span_lo) >> PAGE_SHIFT;

	while (order < PAGE_MAX_ORDER) {
		size_t b = i ^ ((size_t)1 << order);
		if (b >= limit || meta[b] != (META_FREE | order))
			break;
		unlink_block(b, order);
		if (b < i)
			i = b;
		order++;
	}
	push(i, order);
}

void page_add(uintptr_t base, size_t len)
{
	uintptr_t a = (base + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
	uintptr_t end = (base + len) & ~(PAGE_SIZE - 1);

	if (a < span_lo)
		a = span_lo;
	if (end > span_hi)
		end = span_hi;
	/* In the largest aligned blocks the range holds, not page by page. */
	PAGE_LOCK();
	while (a < end) {
		size_t i = idx_of(a), n;
		int order = 0;
		while (order < PAGE_MAX_ORDER && !(i & ((size_t)1 << order)) &&
		       a + (PAGE_SIZE << (order + 1)) <= end)
			order++;
		/*
		 * Ranges must not overlap ones given before (memory_init's are
		 * disjoint): only a free block's first page is recognised, and
		 * ignored, if given again.
		 */
		for (n = 0; n < ((size_t)1 << order) && !(meta[i + n] & META_FREE); n++)
			;
		if (n < ((size_t)1 << order))
			order = 0;
		if (!(meta[i] & META_FREE)) {
			release(i, order);
			nfree += (size_t)1 << order;
			ntotal += (size_t)1 << order;
		}
		a += PAGE_SIZE << order;
	}
	PAGE_UNLOCK();
}

void *page_alloc(int order)
{
	int k;
	size_t i;

	if (order < 0 || order > PAGE_MAX_ORDER)
		return NULL;
	PAGE_LOCK();
	for (k = order; k <= PAGE_MAX_ORDER && !freelist[k]; k++)
		;
	if (k > PAGE_MAX_ORDER) {
		PAGE_UNLOCK();
		return NULL;
	}
	i = freelist[k] - 1;
	unlink_block(i, k);
	while (k > order) {
		k--;
		push(i + ((size_t)1 << k), k);
	}
	meta[i] = (uint8_t)(META_ALLOC | order);
	nfree -= (size_t)1 << order;
	PAGE_UNLOCK();
	return (void *)addr_of(i);
}

void page_free(void *p, int order)
{
	uintptr_t a = (uintptr_t)p;
	size_t i;

	if (!p)
		return;
	if (a < span_lo || a >= span_hi || (a & ((PAGE_SIZE << order) - 1)) != 0) {
		PAGE_BUG("free of a block the allocator never gave");
		return;
	}
	PAGE_LOCK();
	i = idx_of(a);
	if (meta[i] != (META_ALLOC | order)) {
		PAGE_UNLOCK();
		PAGE_BUG("free with the wrong order, or twice");
		return;
	}
	release(i, order);
	nfree += (size_t)1 << order;
	PAGE_UNLOCK();
}

int page_order(size_t bytes)
{
	int order = 0;

	while ((PAGE_SIZE << order) < bytes) {
		if (++order > PAGE_MAX_ORDER)
			return -1;
	}
	return order;
}

size_t page_free_pages(void)
{
	return nfree;
}

size_t page_total_pages(void)
{
	return ntotal;
}
