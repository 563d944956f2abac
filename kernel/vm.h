/*
 * The one address space: identity mapping built by boot/entry.S (2 MiB
 * pages below 4 GiB), refined here with 4 KiB pages where a guard page is
 * needed, and extended for device memory above 4 GiB (2^47 up in the
 * upper half).
 */
#ifndef KERNEL_VM_H
#define KERNEL_VM_H

#include <stddef.h>
#include <stdint.h>

/* Unmap / remap one 4 KiB page below 4 GiB (thread stack guards). 0 or -EINVAL. */
int vm_unmap_page(uintptr_t va);
int vm_remap_page(uintptr_t va);

/* Nonzero if va lies in a page vm_unmap_page() removed. */
int vm_is_guard(uintptr_t va);

/*
 * Page protection below 4 GiB, in the pages' own entries: [va, va+len)
 * (whole pages) gets prot, VM_READ | VM_WRITE, VM_READ or 0 (no access).
 * With CR0.WP the kernel's own writes to a read-only page fault too.  0,
 * -EINVAL (not whole pages, beyond the map, a guard page), -ENOMEM.
 */
#define VM_READ 1
#define VM_WRITE 2
int vm_protect(uintptr_t va, size_t len, int prot);
/* The rights of va's page (VM_READ, VM_WRITE), from its entry: a walk of two tables. */
int vm_rights(uintptr_t va);
/* Nonzero if va's page had its rights reduced by vm_protect. */
int vm_is_protected(uintptr_t va);

/* Device memory the kernel can map: below 2^48, the 4-level limit. */
#define VM_PHYS_TOP (1ULL << 48)
#define VM_LOW_TOP (1ULL << 47)			/* the lower canonical half */
#define VM_HIGH_OFFSET 0xffff000000000000ULL	/* 2^47..2^48 seen at the top */

/*
 * Map [phys, phys+len) uncached for a device wherever the firmware put it
 * (above 4 GiB included) and return the address to use; NULL if it lies
 * beyond VM_PHYS_TOP or the CPU's physical address width, or page-table
 * memory ran out.
 */
void *vm_map_mmio(uint64_t phys, uint64_t len);

/* The CPU's physical address width in bits (CPUID 0x80000008). */
int vm_phys_bits(void);

/*
 * Under QEMU's TCG (vm.c says why): vm_tcg_init maps RAM with 4 KiB
 * pages, once the page allocator runs and before anything is mapped
 * (the 2 MiB pages it split, 0 elsewhere, -ENOMEM); vm_tlb_grow, once
 * start-up has mapped what it maps, has QEMU's TLB grow to what RAM
 * fills (the entries it asked for; 0 elsewhere).
 */
int vm_tcg_init(void);
size_t vm_tlb_grow(void);
/* QEMU's TLB entries as memcpy takes them (kernel/memcpy.c): 64, or what vm_tlb_grow grew to. */
extern size_t memcpy_tlb_pages;

/* The size of the page that maps va: 4 KiB, 2 MiB or 1 GiB; 0 if no table maps it (a walk). */
size_t vm_page_size(uintptr_t va);

/* The physical address va is mapped to, or VM_NO_PAGE (a page-table walk). */
#define VM_NO_PAGE (~0ULL)
uint64_t vm_translate(uintptr_t va);

#endif
