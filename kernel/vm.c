/*
 * Page tables (Intel SDM vol. 3, 4.5: 4-level paging).
 */
#include <errno.h>
#include <string.h>

#include "boot/boot.h"
#include "kernel/bootinfo.h"
#include "kernel/machine.h"
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

/*
 * QEMU's TCG (cpu_is_tcg) looks guest addresses up in a software TLB of
 * its own, direct-mapped by page number: 256 entries at first, resized
 * only when the guest flushes all of it (QEMU's accel/tcg/cputlb.c,
 * tlb_mmu_resize_locked: doubled where more than 70 % of it filled since
 * the flush before, shrunk to fit where less than 30 % did over 100 ms).
 * This kernel flushes nothing once it runs, so the TLB stayed at 256
 * entries, a megabyte: a 4 MiB copy missed twice a page, and a message
 * after a bulk transfer missed again on its code and data.  So, under TCG
 * only:
 *  - RAM is mapped with 4 KiB pages (vm_tcg_init).  QEMU notes where the
 *    guest used large pages, and an invlpg anywhere in that region
 *    flushes the whole TLB (tlb_flush_page_locked), resizing it: every
 *    thread stack's guard page would shrink it again.  Device memory
 *    above 4 GiB gets 4 KiB pages too (vm_map_mmio); the boot map's
 *    2 MiB pages of devices below 4 GiB (the local APIC) stay, and the
 *    region QEMU notes for them lies above RAM.
 *  - Once start-up has mapped what it maps, vm_tlb_grow reads a byte of
 *    each of as many RAM pages as three quarters of the TLB's next size
 *    and flushes, size after size up to TLB_GROW_TOP entries or what the
 *    RAM allows.  No flush follows, so the TLB keeps that size.
 * Measured on shm, 2 nodes, alternating runs of one hour (MB/s): memcpy-4m
 * 2630 to 3400, write-bw-4m 2100 to 2700, mad-bw-rmem-4m 1720 to 1950,
 * mad-bw-req-4m 930 to 1040.  Under KVM and on hardware nothing of this
 * happens: the CPU's TLB is its own.
 */
#define TLB_FIRST 256			/* QEMU's first size (CPU_TLB_DYN_DEFAULT_BITS) */
#define TLB_GROW_TOP 32768		/* 128 MiB of pages */
#define RAM_LOW 0x100000ULL		/* below, the firmware's */

static int tcg_small_pages;		/* vm_tcg_init split RAM's 2 MiB pages */

/* A 2 MiB page's entry made a table of 512 4 KiB pages with its flags; the table, or NULL.  No flush. */
static uint64_t *split_2m(uint64_t *pde)
{
	uint64_t base = *pde & ~(uint64_t)0x1fffff & PTE_ADDR;
	uint64_t flags = *pde & (PTE_P | PTE_W | PTE_PWT | PTE_PCD);
	uint64_t *pt = page_alloc(0);

	if (!pt)
		return NULL;
	for (int i = 0; i < 512; i++)
		pt[i] = (base + ((uint64_t)i << 12)) | flags;
	*pde = (uintptr_t)pt | PTE_P | PTE_W;
	return pt;
}

/* The 4 KiB page-table entry for va, splitting its 2 MiB page if needed. */
static uint64_t *pte_for(uintptr_t va)
{
	uint64_t *pde, *pt;

	if (va >= BOOT_MAPPED_BYTES)
		return NULL;
	pde = &boot_pd[va >> 21];
	if (*pde & PTE_PS) {
		if (!split_2m(pde))
			return NULL;
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
 * half, at phys + VM_HIGH_OFFSET (nothing else lives there).  2 MiB pages
 * (4 KiB under TCG: see vm_tcg_init), uncached (SDM vol. 3, 4.5, table
 * 4-17).  Mapping the same range twice writes the same entries.
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
		if (!tcg_small_pages) {
			pd[(va >> 21) & 511] = a | PTE_P | PTE_W | PTE_PS | PTE_PCD | PTE_PWT;
			continue;
		}
		uint64_t *pde = &pd[(va >> 21) & 511];
		uint64_t *pt = *pde & PTE_PS ? split_2m(pde) : table_of(pde);
		if (!pt) {
			irq_restore(f);
			return NULL;
		}
		for (int k = 0; k < 512; k++)
			pt[k] = (a + ((uint64_t)k << 12)) | PTE_P | PTE_W | PTE_PCD | PTE_PWT;
	}
	write_cr3(read_cr3());
	irq_restore(f);
	return (void *)(uintptr_t)(phys + off);
}

/* Usable RAM range i of the boot map, clipped to [RAM_LOW, BOOT_MAPPED_BYTES): 0 if none is left. */
static int ram_range(int i, uint64_t *b, uint64_t *e)
{
	const struct mem_range *r = &bootinfo.mmap[i];

	if (r->type != MEM_USABLE)
		return 0;
	*b = r->base < RAM_LOW ? RAM_LOW : r->base;
	*e = r->base + r->len > BOOT_MAPPED_BYTES ? BOOT_MAPPED_BYTES : r->base + r->len;
	*b = (*b + PAGE_SIZE - 1) & ~(uint64_t)(PAGE_SIZE - 1);
	*e &= ~(uint64_t)(PAGE_SIZE - 1);
	return *e > *b;
}

int vm_tcg_init(void)
{
	int n = 0;
	uint64_t b, e;

	if (!cpu_is_tcg())
		return 0;
	irqflags_t f = irq_save();
	for (int i = 0; i < bootinfo.nmmap; i++) {
		if (!ram_range(i, &b, &e))
			continue;
		for (uint64_t a = b & ~0x1fffffULL; a < e; a += 0x200000) {
			uint64_t *pde = &boot_pd[a >> 21];
			if (!(*pde & PTE_PS))
				continue;
			if (!split_2m(pde)) {
				write_cr3(read_cr3());
				irq_restore(f);
				return -ENOMEM;
			}
			n++;
		}
	}
	write_cr3(read_cr3());
	tcg_small_pages = 1;
	irq_restore(f);
	return n;
}

/* A byte read from each of the first n readable RAM pages; how many there were. */
static size_t touch_ram(size_t n)
{
	size_t done = 0;
	uint64_t b, e;

	for (int i = 0; i < bootinfo.nmmap && done < n; i++) {
		if (!ram_range(i, &b, &e))
			continue;
		for (uintptr_t va = b; va < e && done < n; va += PAGE_SIZE)
			if (vm_rights(va) & VM_READ) {
				(void)*(volatile uint8_t *)va;
				done++;
			}
	}
	return done;
}

size_t vm_tlb_grow(void)
{
	size_t size = TLB_FIRST;

	if (!tcg_small_pages)
		return 0;
	while (size < TLB_GROW_TOP) {
		size_t want = size - size / 4 + 16;	/* above QEMU's 70 % */
		if (touch_ram(want) < want)
			break;
		write_cr3(read_cr3());
		size *= 2;
	}
	/* Where it grew, at least to size (a flush after 70 % use doubles it); else memcpy keeps QEMU's least. */
	if (size > TLB_FIRST)
		memcpy_tlb_pages = size;
	return size;
}

/* The entry that maps va (1 GiB, 2 MiB or 4 KiB: *size), present or not; *size 0 where no table reaches one. */
static uint64_t leaf(uintptr_t va, size_t *size)
{
	uint64_t e = boot_pml4[(va >> 39) & 511];

	*size = 0;
	for (int shift = 30; shift >= 12 && (e & PTE_P); shift -= 9) {
		e = ((uint64_t *)(uintptr_t)(e & PTE_ADDR))[(va >> shift) & 511];
		if (shift == 12 || (e & PTE_PS)) {
			*size = (size_t)1 << shift;
			return e;
		}
	}
	return 0;
}

size_t vm_page_size(uintptr_t va)
{
	size_t size;

	leaf(va, &size);
	return size;
}

uint64_t vm_translate(uintptr_t va)
{
	size_t size;
	uint64_t e = leaf(va, &size);

	if (!(e & PTE_P))
		return VM_NO_PAGE;
	return (e & PTE_ADDR & ~(uint64_t)(size - 1)) | (va & (size - 1));
}
