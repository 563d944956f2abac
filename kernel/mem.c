#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "boot/boot.h"
#include "kernel/bootinfo.h"
#include "kernel/mem.h"
#include "kernel/page.h"
#include "kernel/panic.h"
#include "kernel/x86.h"

extern char __kernel_start[], __kernel_end[];

uintptr_t heap_start, heap_end;
static uintptr_t heap_brk;
size_t mem_usable_bytes;

#define LOW_LIMIT 0x100000ULL		/* leave the first MiB to the firmware */

/* Clip a usable range to what the boot map covers and the kernel leaves. */
static int clip(uint64_t *base, uint64_t *end)
{
	uint64_t kstart = (uintptr_t)__kernel_start, kend = (uintptr_t)__kernel_end;

	if (*base < LOW_LIMIT)
		*base = LOW_LIMIT;
	if (*end > BOOT_MAPPED_BYTES)
		*end = BOOT_MAPPED_BYTES;
	if (*base < kend && *end > kstart) {
		/* The kernel sits at 1 MiB; keep the part above it. */
		if (*base >= kstart)
			*base = kend;
		else
			*end = kstart;
	}
	*base = (*base + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
	*end &= ~(PAGE_SIZE - 1);
	return *end > *base;
}

void memory_init(void)
{
	uint64_t lo = ~0ULL, hi = 0, best_base = 0, best_len = 0, above4g = 0;

	for (int i = 0; i < bootinfo.nmmap; i++) {
		const struct mem_range *r = &bootinfo.mmap[i];
		uint64_t b = r->base, e = r->base + r->len;
		if (r->type != MEM_USABLE)
			continue;
		if (e > BOOT_MAPPED_BYTES)
			above4g += e - (b > BOOT_MAPPED_BYTES ? b : BOOT_MAPPED_BYTES);
		if (!clip(&b, &e))
			continue;
		mem_usable_bytes += e - b;
		if (b < lo)
			lo = b;
		if (e > hi)
			hi = e;
		if (e - b > best_len) {
			best_base = b;
			best_len = e - b;
		}
	}
	if (best_len < (8ULL << 20))
		panic("mem: need at least 8 MiB of usable RAM above the kernel, found %lu KiB",
		      best_len >> 10);

	/* Heap: half of the largest range, from its start. */
	heap_start = best_base;
	heap_end = best_base + ((best_len / 2) & ~(PAGE_SIZE - 1));
	heap_brk = heap_start;

	/* Page metadata sits at the heap's end, inside the reserved half. */
	size_t mbytes = page_meta_bytes(lo, hi);
	if (mbytes > (heap_end - heap_start) / 2)
		panic("mem: the page metadata of %lu MiB of memory (%lu KiB) does not fit in half of a heap "
		      "of %lu KiB (the largest usable range is too small beside the others)",
		      (unsigned long)((hi - lo) >> 20), (unsigned long)(mbytes >> 10),
		      (unsigned long)((heap_end - heap_start) >> 10));
	heap_end -= (mbytes + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
	page_init(lo, hi, (uint8_t *)heap_end);

	for (int i = 0; i < bootinfo.nmmap; i++) {
		const struct mem_range *r = &bootinfo.mmap[i];
		uint64_t b = r->base, e = r->base + r->len;
		if (r->type != MEM_USABLE || !clip(&b, &e))
			continue;
		/* Skip the heap and metadata, [best_base, best_base + len/2). */
		uint64_t hs = best_base, he = best_base + ((best_len / 2) & ~(PAGE_SIZE - 1));
		if (b < he && e > hs) {
			if (b < hs)
				page_add(b, hs - b);
			if (e > he)
				page_add(he, e - he);
		} else {
			page_add(b, e - b);
		}
	}
	if (above4g)
		printf("mem: %lu MiB above 4 GiB left unused\n", above4g >> 20);
}

size_t heap_used(void)
{
	return heap_brk - heap_start;
}

/* picolibc's malloc grows its arena through sbrk. */
void *sbrk(ptrdiff_t incr)
{
	irqflags_t f = irq_save();
	uintptr_t old = heap_brk;

	if ((incr > 0 && (uintptr_t)incr > heap_end - heap_brk) ||
	    (incr < 0 && (uintptr_t)-incr > heap_brk - heap_start)) {
		irq_restore(f);
		errno = ENOMEM;
		return (void *)-1;
	}
	heap_brk += incr;
	irq_restore(f);
	return (void *)old;
}

void *page_alloc_zeroed(size_t bytes)
{
	int order = page_order(bytes);
	void *p;

	if (order < 0)
		return NULL;
	p = page_alloc(order);
	if (p)
		memset(p, 0, PAGE_SIZE << order);
	return p;
}

void page_free_bytes(void *p, size_t bytes)
{
	int order = page_order(bytes);

	if (p && order >= 0)
		page_free(p, order);
}
