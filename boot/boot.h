/* Constants shared by boot/entry.S and the kernel. */
#ifndef BOOT_H
#define BOOT_H

#define BOOT_PVH          1	/* entered through the PVH note (QEMU -kernel) */
#define BOOT_MULTIBOOT2   2	/* entered through multiboot2 (GRUB) */

#define BOOT_CS 0x08
#define BOOT_DS 0x10

#define BOOT_STACK_SIZE (64 * 1024)

/* The boot page tables identity-map this much with 2 MiB pages. */
#define BOOT_MAPPED_BYTES (4ULL << 30)

#endif
