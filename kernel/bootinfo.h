/*
 * What the loader told us, in one loader-independent form.
 *
 * bootinfo_parse() reads the PVH start_info (QEMU -kernel) or the multiboot2
 * information (GRUB) once, early, and copies what the kernel needs (command
 * line, memory map, ACPI RSDP address) into kernel memory so that the
 * loader's structures can be reused as free RAM afterwards.
 */
#ifndef KERNEL_BOOTINFO_H
#define KERNEL_BOOTINFO_H

#include <stdint.h>

#define BOOTINFO_CMDLINE_MAX 1024
#define BOOTINFO_MMAP_MAX    64

enum { MEM_USABLE = 1, MEM_RESERVED = 2 };

struct mem_range {
	uint64_t base;
	uint64_t len;
	uint32_t type;
};

struct bootinfo {
	int kind;			/* BOOT_PVH or BOOT_MULTIBOOT2 */
	const char *loader;		/* "pvh" or "multiboot2" */
	char cmdline[BOOTINFO_CMDLINE_MAX];
	int cmdline_truncated;
	struct mem_range mmap[BOOTINFO_MMAP_MAX];
	int nmmap;
	uint64_t rsdp;			/* physical address, 0 if not given */
	int efi;			/* started by UEFI firmware (its system table was passed) */
	int vga_text;			/* a BIOS left VGA's text mode (multiboot2, no UEFI) */
	const char *mmap_source;	/* where the memory map came from, if not the loader's */
	struct bootinfo_fb {		/* a linear framebuffer (multiboot2 tag 8), if fb.addr */
		uint64_t addr;
		uint32_t pitch, width, height;
		uint8_t bpp, type;	/* type 1: RGB; 2: EGA text (VGA text mode) */
		uint8_t rpos, rsize, gpos, gsize, bpos, bsize;
		uint8_t drawable;	/* type 1, wholly inside the memory mapped at boot */
	} fb;
};

extern struct bootinfo bootinfo;

/* Parse the loader's structures.  Return 0, or -EINVAL with a message printed. */
int bootinfo_parse(int kind, uint32_t info);

/*
 * A file the host handed the node beside its command line (under QEMU:
 * fw_cfg's -fw_cfg name=NAME,file=...; boot/mpirun passes a program's
 * arguments and environment so): read into buf, at most max bytes.  Its
 * size, -ENOENT (none), -E2BIG (larger than max) or -EIO.
 */
long bootinfo_file(const char *name, void *buf, size_t max);

#endif
