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
#define PTE_PROT 0x400ULL		/* software bit: rights reduced by vm_protect */
#define PTE_ADDR 0x000ffffffffff000ULL

/*
 * The page tables boot/entry.S fills before long mode (in .bss, which it
 * clears first): the PML4, one PDPT, and four page directories of 2 MiB
 * pages identity-mapping the first 4 GiB.  Here, so that entry.S uses
 * this file and this file nothing of entry.S.
 */
uint64_t boot_pml4[512] __attribute__((aligned(4096), used));
uint64_t boot_pdpt[512] __attribute__((aligned(4096), used));
uint64_t boot_pd[2048] __attribute__((aligned(4096), used));

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

/* Make va's page a guard (not present, marked) or a page again. */
static int set_guard(uintptr_t va, int guard)
{
	irqflags_t f = irq_save();
	uint64_t *pte = pte_for(va & ~0xfffULL);

	if (!pte) {
		irq_restore(f);
		return -EINVAL;
	}
	*pte = guard ? (*pte & ~PTE_P) | PTE_GUARD : (*pte | PTE_P) & ~PTE_GUARD;
	invlpg(va);
	irq_restore(f);
	return 0;
}

int vm_unmap_page(uintptr_t va)
{
	return set_guard(va, 1);
}

int vm_remap_page(uintptr_t va)
{
	return set_guard(va, 0);
}

/* Is the software bit set in va's 4 KiB entry (none where a 2 MiB page maps it)? */
static int pte_marked(uintptr_t va, uint64_t bit)
{
	uint64_t pde;

	if (va >= BOOT_MAPPED_BYTES)
		return 0;
	pde = boot_pd[va >> 21];
	if (pde & PTE_PS)
		return 0;
	return (((uint64_t *)(uintptr_t)(pde & PTE_ADDR))[(va >> 12) & 511] & bit) != 0;
}

int vm_is_guard(uintptr_t va)
{
	return pte_marked(va, PTE_GUARD);
}

/*
 * Page protection (hybrid deposit 3.2: "the host virtual memory page
 * protection can be used within endpoints"): the pages' own entries carry
 * the rights, so the host's accesses and the network's are checked by the
 * same bits.  No access: not present (marked PTE_PROT, not a guard).
 */
int vm_protect(uintptr_t va, size_t len, int prot)
{
	if ((va & 0xfff) || (len & 0xfff) || len == 0 || va + len < va || va + len > BOOT_MAPPED_BYTES ||
	    (prot & ~(VM_READ | VM_WRITE)))
		return -EINVAL;
	irqflags_t f = irq_save();
	for (uintptr_t a = va; a < va + len; a += PAGE_SIZE)
		if (vm_is_guard(a)) {
			irq_restore(f);
			return -EINVAL;		/* a stack's guard page is no endpoint's */
		}
	for (uintptr_t a = va; a < va + len; a += PAGE_SIZE) {
		uint64_t *pte = pte_for(a);
		if (!pte) {
			irq_restore(f);
			return -ENOMEM;
		}
		uint64_t e = *pte & ~(PTE_P | PTE_W | PTE_PROT);
		if (prot & VM_READ)
			e |= PTE_P;
		if ((prot & (VM_READ | VM_WRITE)) == (VM_READ | VM_WRITE))
			e |= PTE_W;
		if (prot != (VM_READ | VM_WRITE))
			e |= PTE_PROT;
		*pte = e;
		invlpg(a);
	}
	irq_restore(f);
	return 0;
}

int vm_rights(uintptr_t va)
{
	uint64_t e;

	if (va >= BOOT_MAPPED_BYTES)
		return 0;
	e = boot_pd[va >> 21];
	if (!(e & PTE_PS))
		e = ((uint64_t *)(uintptr_t)(e & PTE_ADDR))[(va >> 12) & 511];
	if (!(e & PTE_P))
		return 0;
	return e & PTE_W ? VM_READ | VM_WRITE : VM_READ;
}

int vm_is_protected(uintptr_t va)
{
	return pte_marked(va, PTE_PROT);
}

/* The table an entry points to, made (empty) if the entry is absent. */
static uint64_t *table_of(uint64_t *e)
{
	if (!(*e & PTE_P)) {
		uint64_t *t = page_alloc(0);
		if (!t)
			return NULL;
		memset(t, 0, PAGE_SIZE);
		*e = (uintptr_t)t | PTE_P | PTE_W;
	}
	return (uint64_t *)(uintptr_t)(*e & PTE_ADDR);
}

int vm_phys_bits(void)
{
	uint32_t a, b, c, d;

	cpuid(0x80000000, 0, &a, &b, &c, &d);
	if (a < 0x80000008)
		return 36;		/* SDM vol. 3, 4.1.4: no leaf, 36 bits */
	cpuid(0x80000008, 0, &a, &b, &c, &d);
	return a & 0xff;
}

/*
 * Device memory above the boot map: below 2^47 (the lower canonical half)
 * at its own address, as below 4 GiB; from 2^47 up to 2^48 in the upper
 * half, at phys + VM_HIGH_OFFSET (nothing else lives there).  2 MiB pages,
 * uncached (SDM vol. 3, 4.5, table 4-17).  Mapping the same range twice
 * writes the same entries.
 */
void *vm_map_mmio(uint64_t phys, uint64_t len)
{
	uint64_t end = phys + len;

	if (len == 0 || end < phys)
		return NULL;
	if (end <= BOOT_MAPPED_BYTES)
		return (void *)(uintptr_t)phys;	/* mapped at boot, uncached from 3 GiB */
	int bits = vm_phys_bits();
	if (end > VM_PHYS_TOP || (bits < 64 && end > 1ULL << bits))
		return NULL;
	uint64_t off = phys >= VM_LOW_TOP ? VM_HIGH_OFFSET : 0;
	if (phys < VM_LOW_TOP && end > VM_LOW_TOP)
		return NULL;			/* astride the two halves */
	irqflags_t f = irq_save();
	for (uint64_t a = phys & ~0x1fffffULL; a < end; a += 0x200000) {
		uint64_t va = a + off;
		if (va < BOOT_MAPPED_BYTES)
			continue;
		uint64_t *pdpt = table_of(&boot_pml4[(va >> 39) & 511]);
		uint64_t *pd = pdpt ? table_of(&pdpt[(va >> 30) & 511]) : NULL;
		if (!pd) {
			irq_restore(f);
			return NULL;
		}
		pd[(va >> 21) & 511] = a | PTE_P | PTE_W | PTE_PS | PTE_PCD | PTE_PWT;
	}
	write_cr3(read_cr3());
	irq_restore(f);
	return (void *)(uintptr_t)(phys + off);
}

uint64_t vm_translate(uintptr_t va)
{
	uint64_t e = boot_pml4[(va >> 39) & 511];

	if (!(e & PTE_P))
		return VM_NO_PAGE;
	e = ((uint64_t *)(uintptr_t)(e & PTE_ADDR))[(va >> 30) & 511];
	if (!(e & PTE_P))
		return VM_NO_PAGE;
	if (e & PTE_PS)
		return (e & PTE_ADDR & ~0x3fffffffULL) | (va & 0x3fffffff);
	e = ((uint64_t *)(uintptr_t)(e & PTE_ADDR))[(va >> 21) & 511];
	if (!(e & PTE_P))
		return VM_NO_PAGE;
	if (e & PTE_PS)
		return (e & PTE_ADDR & ~0x1fffffULL) | (va & 0x1fffff);
	e = ((uint64_t *)(uintptr_t)(e & PTE_ADDR))[(va >> 12) & 511];
	if (!(e & PTE_P))
		return VM_NO_PAGE;
	return (e & PTE_ADDR) | (va & 0xfff);
}
