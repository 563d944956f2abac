/*
 * Loader information: PVH hvm_start_info (Xen public/arch-x86/hvm/start_info.h)
 * and multiboot2 information (Multiboot2 specification, section 3.6).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "boot/boot.h"
#include "kernel/bootinfo.h"
#include "kernel/machine.h"

struct bootinfo bootinfo;

#define PVH_MAGIC 0x336ec578

struct hvm_start_info {
	uint32_t magic;
	uint32_t version;
	uint32_t flags;
	uint32_t nr_modules;
	uint64_t modlist_paddr;
	uint64_t cmdline_paddr;
	uint64_t rsdp_paddr;
	uint64_t memmap_paddr;		/* version >= 1 */
	uint32_t memmap_entries;
	uint32_t reserved;
};
_Static_assert(sizeof(struct hvm_start_info) == 56, "hvm_start_info layout");

struct hvm_memmap_entry {
	uint64_t addr;
	uint64_t size;
	uint32_t type;
	uint32_t reserved;
};
_Static_assert(sizeof(struct hvm_memmap_entry) == 24, "hvm_memmap_entry layout");

struct mb2_tag {
	uint32_t type;
	uint32_t size;
};

enum {
	MB2_TAG_END = 0,
	MB2_TAG_CMDLINE = 1,
	MB2_TAG_MMAP = 6,
	MB2_TAG_FRAMEBUFFER = 8,
	MB2_TAG_EFI32 = 11,
	MB2_TAG_EFI64 = 12,
	MB2_TAG_EFI_MMAP = 17,
	MB2_TAG_ACPI_OLD = 14,
	MB2_TAG_ACPI_NEW = 15,
};

struct mb2_mmap_entry {
	uint64_t base;
	uint64_t len;
	uint32_t type;
	uint32_t reserved;
};
_Static_assert(sizeof(struct mb2_mmap_entry) == 24, "multiboot2 mmap entry layout");

/* A copy of the RSDP from the multiboot2 ACPI tag (up to the ACPI 2.0 size). */
static uint8_t rsdp_copy[36] __attribute__((aligned(16)));

static void copy_cmdline(const char *s)
{
	size_t n = strnlen(s, BOOTINFO_CMDLINE_MAX);

	if (n == BOOTINFO_CMDLINE_MAX) {
		bootinfo.cmdline_truncated = 1;
		n = BOOTINFO_CMDLINE_MAX - 1;
	}
	memcpy(bootinfo.cmdline, s, n);
	bootinfo.cmdline[n] = '\0';
	/*
	 * The loader's copy is read once, here: zero it, so that a secret on
	 * the line (the cluster key) lives only where arg_forget can reach.
	 */
	for (size_t i = 0; i < n; i++)
		((volatile char *)s)[i] = 0;
}

static void add_range(uint64_t base, uint64_t len, uint32_t e820type)
{
	struct mem_range *last = bootinfo.nmmap ? &bootinfo.mmap[bootinfo.nmmap - 1] : NULL;
	uint32_t type = e820type == 1 ? MEM_USABLE : MEM_RESERVED;

	/* Firmware maps come in many pieces (UEFI's by allocation): join neighbours. */
	if (last && last->type == type && last->base + last->len == base) {
		last->len += len;
		return;
	}
	if (bootinfo.nmmap >= BOOTINFO_MMAP_MAX || len == 0)
		return;
	bootinfo.mmap[bootinfo.nmmap].base = base;
	bootinfo.mmap[bootinfo.nmmap].len = len;
	bootinfo.mmap[bootinfo.nmmap].type = e820type == 1 ? MEM_USABLE : MEM_RESERVED;
	bootinfo.nmmap++;
}

static int parse_pvh(const struct hvm_start_info *si)
{
	if (si->magic != PVH_MAGIC) {
		printf("boot: bad PVH start_info magic %#x\n", si->magic);
		return -EINVAL;
	}
	bootinfo.loader = "pvh";
	if (si->cmdline_paddr)
		copy_cmdline((const char *)(uintptr_t)si->cmdline_paddr);
	bootinfo.rsdp = si->rsdp_paddr;
	if (si->version >= 1 && si->memmap_paddr) {
		const struct hvm_memmap_entry *e = (const void *)(uintptr_t)si->memmap_paddr;
		for (uint32_t i = 0; i < si->memmap_entries; i++)
			add_range(e[i].addr, e[i].size, e[i].type);
	}
	if (bootinfo.nmmap == 0) {
		printf("boot: PVH loader gave no memory map\n");
		return -EINVAL;
	}
	return 0;
}

/*
 * The EFI memory map (multiboot2 tag 17: descriptor size, version, then
 * UEFI 2.10 7.2's EFI_MEMORY_DESCRIPTORs).  After ExitBootServices, which
 * GRUB called, loader and boot-services memory is free like conventional
 * memory (UEFI 2.10 7.2, Table 7.6); everything else is kept.  Returns the
 * ranges taken (they replace the loader's map), or 0.
 */
enum { EfiLoaderCode = 1, EfiLoaderData = 2, EfiBootServicesCode = 3, EfiBootServicesData = 4,
       EfiConventionalMemory = 7 };

static int parse_efi_map(const struct mb2_tag *t)
{
	const uint8_t *p = (const uint8_t *)(t + 1), *end = (const uint8_t *)t + t->size;
	uint32_t dsize;
	int n = 0;

	if (t->size < 16)
		return 0;
	memcpy(&dsize, p, 4);
	if (dsize < 40)			/* type, pad, physical start, virtual start, pages, attribute */
		return 0;
	bootinfo.nmmap = 0;
	for (p += 8; p + dsize <= end; p += dsize, n++) {
		uint32_t type;
		uint64_t start, pages;
		memcpy(&type, p, 4);
		memcpy(&start, p + 8, 8);
		memcpy(&pages, p + 24, 8);
		if (pages > (1ULL << 40))
			continue;
		add_range(start, pages << 12,
			  type == EfiLoaderCode || type == EfiLoaderData || type == EfiBootServicesCode ||
					  type == EfiBootServicesData || type == EfiConventionalMemory ?
				  1 : 2);
	}
	return n;
}

static int parse_mb2(const uint8_t *mbi)
{
	uint32_t total = *(const uint32_t *)mbi;
	const uint8_t *p = mbi + 8, *end = mbi + total;
	const struct mb2_tag *efi_map = NULL;

	bootinfo.loader = "multiboot2";
	while (p + sizeof(struct mb2_tag) <= end) {
		const struct mb2_tag *t = (const void *)p;
		if (t->type == MB2_TAG_END || t->size < 8)
			break;
		switch (t->type) {
		case MB2_TAG_CMDLINE:
			copy_cmdline((const char *)(t + 1));
			break;
		case MB2_TAG_MMAP: {
			const uint32_t *hdr = (const uint32_t *)(t + 1);
			uint32_t esize = hdr[0];
			const uint8_t *e = (const uint8_t *)(hdr + 2);
			if (esize < sizeof(struct mb2_mmap_entry))
				break;
			for (; e + esize <= p + t->size; e += esize) {
				const struct mb2_mmap_entry *m = (const void *)e;
				add_range(m->base, m->len, m->type);
			}
			break;
		}
		case MB2_TAG_EFI32:
		case MB2_TAG_EFI64:
			bootinfo.efi = 1;
			break;
		case MB2_TAG_EFI_MMAP:
			efi_map = t;
			break;
		case MB2_TAG_FRAMEBUFFER: {
			/* 3.6.12: address, pitch, width, height, bpp, type, 2 reserved, colour info. */
			const uint8_t *f = (const uint8_t *)t;
			struct bootinfo_fb *fb = &bootinfo.fb;
			if (t->size < 32)
				break;
			memcpy(&fb->addr, f + 8, 8);
			memcpy(&fb->pitch, f + 16, 4);
			memcpy(&fb->width, f + 20, 4);
			memcpy(&fb->height, f + 24, 4);
			fb->bpp = f[28];
			fb->type = f[29];
			if (fb->type == 1 && t->size >= 38) {
				fb->rpos = f[32], fb->rsize = f[33];
				fb->gpos = f[34], fb->gsize = f[35];
				fb->bpos = f[36], fb->bsize = f[37];
			}
			break;
		}
		case MB2_TAG_ACPI_OLD:
		case MB2_TAG_ACPI_NEW: {
			size_t n = t->size - 8;
			if (n > sizeof(rsdp_copy))
				n = sizeof(rsdp_copy);
			/* Prefer the ACPI 2.0 RSDP when both are given. */
			if (t->type == MB2_TAG_ACPI_NEW || bootinfo.rsdp == 0) {
				memcpy(rsdp_copy, t + 1, n);
				bootinfo.rsdp = (uintptr_t)rsdp_copy;
			}
			break;
		}
		}
		p += (t->size + 7) & ~7u;
	}
	/* UEFI: the firmware's own map, rather than the loader's translation of it. */
	if (efi_map && parse_efi_map(efi_map) > 0)
		bootinfo.mmap_source = "EFI memory map";
	if (bootinfo.nmmap == 0) {
		printf("boot: multiboot2 loader gave no memory map\n");
		return -EINVAL;
	}
	return 0;
}

int bootinfo_parse(int kind, uint32_t info)
{
	int r;

	bootinfo.kind = kind;
	if (kind == BOOT_PVH) {
		r = parse_pvh((const struct hvm_start_info *)(uintptr_t)info);
	} else if (kind == BOOT_MULTIBOOT2) {
		r = parse_mb2((const uint8_t *)(uintptr_t)info);
	} else {
		printf("boot: unknown boot kind %d\n", kind);
		return -EINVAL;
	}
	const struct bootinfo_fb *fb = &bootinfo.fb;
	bootinfo.fb.drawable = fb->type == 1 && fb->addr &&
			       fb->addr + (uint64_t)fb->pitch * fb->height <= BOOT_MAPPED_BYTES;
	bootinfo.vga_text = kind == BOOT_MULTIBOOT2 && !bootinfo.efi;
	return r;
}

long bootinfo_file(const char *name, void *buf, size_t max)
{
	const struct machine *m = machine();

	return m && m->file ? m->file(name, buf, max) : -ENOENT;
}
