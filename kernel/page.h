/*
 * Physical page allocator: a binary buddy allocator over 4 KiB pages.
 *
 * A block of order k is 2^k pages, aligned to its size (the REQ paper's
 * buffers need power-of-two sizes aligned to their size; DMA rings need
 * contiguous pages).  Memory is identity-mapped, so a block's address is
 * both its physical and virtual address.  The allocator is pure logic so
 * that host unit tests can drive it over an ordinary array.
 */
#ifndef KERNEL_PAGE_H
#define KERNEL_PAGE_H

#include <stddef.h>
#include <stdint.h>

#define PAGE_SIZE 4096UL
#define PAGE_SHIFT 12
#define PAGE_MAX_ORDER 10		/* 4 MiB blocks */

/*
 * Manage the address span [lo, hi): meta must hold page_meta_bytes(lo, hi)
 * bytes.  The span starts with no free memory; page_add() gives it some.
 */
size_t page_meta_bytes(uintptr_t lo, uintptr_t hi);
void page_init(uintptr_t lo, uintptr_t hi, uint8_t *meta);

/* Hand [base, base+len) to the allocator; partial pages are dropped.  Ranges must not overlap. */
void page_add(uintptr_t base, size_t len);

/* A block of 2^order pages aligned to its size, or NULL. Not zeroed. */
void *page_alloc(int order);

/* Return a block from page_alloc with the same order. */
void page_free(void *p, int order);

/* The smallest order whose block holds bytes; -1 if beyond PAGE_MAX_ORDER. */
int page_order(size_t bytes);

/* Free pages, and free pages at the time of page_add's last call. */
size_t page_free_pages(void);
size_t page_total_pages(void);

#endif
