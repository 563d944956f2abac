/*
 * The one address space: identity mapping built by boot/entry.S (2 MiB
 * pages below 4 GiB), refined here with 4 KiB pages where a guard page is
 * needed, and extended for device memory above 4 GiB.
 */
#ifndef KERNEL_VM_H
#define KERNEL_VM_H

#include <stdint.h>

/* Unmap / remap one 4 KiB page below 4 GiB (thread stack guards). 0 or -EINVAL. */
int vm_unmap_page(uintptr_t va);
int vm_remap_page(uintptr_t va);

/* Nonzero if va lies in a page vm_unmap_page() removed. */
int vm_is_guard(uintptr_t va);

/* Identity-map [phys, phys+len) uncached for a device; 0 or -EINVAL. */
int vm_map_mmio(uint64_t phys, uint64_t len);

#endif
