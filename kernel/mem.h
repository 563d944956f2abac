/*
 * Memory layout at boot: the kernel image, then the heap behind picolibc's
 * malloc (sbrk over one contiguous region), then the page allocator for
 * everything else the boot memory map calls usable.
 */
#ifndef KERNEL_MEM_H
#define KERNEL_MEM_H

#include <stddef.h>
#include <stdint.h>

/* Set up the heap and the page allocator from bootinfo.mmap. */
void memory_init(void);

extern uintptr_t heap_start, heap_end;	/* the sbrk region */
extern size_t mem_usable_bytes;		/* usable RAM below 4 GiB */

/* Bytes handed out by sbrk so far. */
size_t heap_used(void);

/* Zeroed, page-aligned contiguous memory for DMA or stacks. */
void *page_alloc_zeroed(size_t bytes);
void page_free_bytes(void *p, size_t bytes);

#endif
