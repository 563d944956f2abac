/*
 * Page tables (Intel SDM vol. 3, 4.5: 4-level paging).
 */
#include <errno.h>
#include <string.h>

#include "boot/boot.h"
#include "kernel/page.h"
#include "kernel/vm.h"
#include "kernel/x86.h"

#define PTE_P 0x001ULL
#define PTE_W 0x002ULL
#define PTE_PWT 0x008ULL
#define PTE_PCD 0x010ULL
#define PTE_PS 0x080ULL
#define PTE_GUARD 0x200ULL		/* software bit: an unmapped guard page */
#define PTE_ADDR 0x000ffffffffff000ULL

extern uint64_t boot_pml4[512];
extern uint64_t boot_pd[2048];

/* The 4 KiB page-table entry for va, splitting its 2 MiB page if needed. */
static uint64_t *pte_for(uintptr_t va)
{
	uint64_t *pde, *pt;

	if (va >= BOOT_MAPPED_BYTES)
		return NULL;
	pde = &boot_pd[va >> 21];
	if (*pde & PTE_PS) {
		uint64_t base = *pde & ~(uint64_t)0x1fffff & PTE_ADDR;
		uint64_t flags = *pde & (PTE_P | PTE_W | PTE_PWT | PTE_PCD);
		pt = page_alloc(0);
		if (!pt)
			return NULL;
		for (int i = 0; i < 512; i++)
			pt[i] = (base + ((uint64_t)i << 12)) | flags;
		*pde = (uintptr_t)pt | PTE_P | PTE_W;
		/* The 2 MiB translation may be cached: flush it all. */
		write_cr3(read_cr3());
	}
	pt = (uint64_t *)(uintptr_t)(*pde & PTE_ADDR);
	return &pt[(va >> 12) & 511];
}

int vm_unmap_page(uintptr_t va)
{
	irqflags_t f = irq_save();
	uint64_t *pte = pte_for(va & ~0xfffULL);

	if (!pte) {
		irq_restore(f);
		return -EINVAL;
	}
	*pte = (*pte & ~PTE_P) | PTE_GUARD;
	invlpg(va);
	irq_restore(f);
	return 0;
}

int vm_remap_page(uintptr_t va)
{
	irqflags_t f = irq_save();
	uint64_t *pte = pte_for(va & ~0xfffULL);

	if (!pte) {
		irq_restore(f);
		return -EINVAL;
	}
	*pte = (*pte | PTE_P) & ~PTE_GUARD;
	invlpg(va);
	irq_restore(f);
	return 0;
}

int vm_is_guard(uintptr_t va)
{
	uint64_t pde;

	if (va >= BOOT_MAPPED_BYTES)
		return 0;
	pde = boot_pd[va >> 21];
	if (pde & PTE_PS)
		return 0;
	return (((uint64_t *)(uintptr_t)(pde & PTE_ADDR))[(va >> 12) & 511] & PTE_GUARD) != 0;
}

int vm_map_mmio(uint64_t phys, uint64_t len)
{
	uint64_t *pdpt = (uint64_t *)(uintptr_t)(boot_pml4[0] & PTE_ADDR);
	uint64_t end = phys + len;

	if (end <= BOOT_MAPPED_BYTES)
		return 0;		/* already mapped (and uncached from 3 GiB) */
	if (end > (512ULL << 30))
		return -EINVAL;		/* beyond the first PML4 entry */
	irqflags_t f = irq_save();
	for (uint64_t a = phys & ~0x1fffffULL; a < end; a += 0x200000) {
		if (a < BOOT_MAPPED_BYTES)
			continue;
		uint64_t *pe = &pdpt[a >> 30];
		if (!(*pe & PTE_P)) {
			uint64_t *pd = page_alloc(0);
			if (!pd) {
				irq_restore(f);
				return -EINVAL;
			}
			memset(pd, 0, PAGE_SIZE);
			*pe = (uintptr_t)pd | PTE_P | PTE_W;
		}
		uint64_t *pd = (uint64_t *)(uintptr_t)(*pe & PTE_ADDR);
		pd[(a >> 21) & 511] = a | PTE_P | PTE_W | PTE_PS | PTE_PCD | PTE_PWT;
	}
	write_cr3(read_cr3());
	irq_restore(f);
	return 0;
}
