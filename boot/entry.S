/*
 * Kernel entry: from 32-bit protected mode to 64-bit long mode.
 *
 * Two loaders enter here, both in 32-bit protected mode with paging off:
 *  - QEMU's -kernel through the PVH note (Xen ELF note type 18,
 *    XEN_ELFNOTE_PHYS32_ENTRY): %ebx = physical address of hvm_start_info.
 *  - GRUB through the multiboot2 header: %eax = 0x36d76289,
 *    %ebx = physical address of the multiboot2 information structure.
 *
 * Both paths clear the BSS, build identity-mapped page tables for the low
 * 4 GiB with 2 MiB pages (RAM and the PCI/LAPIC/IOAPIC/HPET MMIO hole; the
 * hole from 3 GiB up is mapped uncached), enable SSE (picolibc is compiled
 * with it), enter long mode and call kmain(boot_kind, boot_info) on the boot
 * stack.  Nothing here touches memory above 4 GiB; kernel/vm.c maps more.
 */

#include "boot.h"

#define MB2_MAGIC       0xe85250d6
#define MB2_ARCH_I386   0
#define MB2_LOADER_MAGIC 0x36d76289

#define CR0_PE  (1 << 0)
#define CR0_MP  (1 << 1)
#define CR0_EM  (1 << 2)
#define CR0_TS  (1 << 3)
#define CR0_WP  (1 << 16)
#define CR0_PG  (1 << 31)
#define CR4_PAE (1 << 5)
#define CR4_OSFXSR (1 << 9)
#define CR4_OSXMMEXCPT (1 << 10)
#define MSR_EFER 0xc0000080
#define EFER_LME (1 << 8)
#define EFER_NXE (1 << 11)

#define PTE_P   0x001
#define PTE_W   0x002
#define PTE_PWT 0x008
#define PTE_PCD 0x010
#define PTE_PS  0x080

/* Multiboot2 header (Multiboot2 spec 3.1.1): magic, arch, length, checksum. */
	.section .multiboot2, "a"
	.balign 8
mb2_header:
	.long MB2_MAGIC
	.long MB2_ARCH_I386
	.long mb2_header_end - mb2_header
	.long -(MB2_MAGIC + MB2_ARCH_I386 + (mb2_header_end - mb2_header))
	/*
	 * Framebuffer tag (3.1.10), optional, no preferred mode: on a UEFI PC
	 * GRUB passes the GOP framebuffer (there is no VGA text mode), and the
	 * kernel draws its console there; the menu's gfxpayload=text keeps a
	 * BIOS PC in VGA text mode.
	 */
	.balign 8
	.short 5		/* type */
	.short 1		/* flags: optional */
	.long 20		/* size */
	.long 0			/* width: any */
	.long 0			/* height: any */
	.long 32		/* depth */
	/* End tag. */
	.balign 8
	.short 0
	.short 0
	.long 8
	.globl mb2_header_end
mb2_header_end:

/* PVH entry note, read by QEMU's ELF loader from the PT_NOTE segment. */
	.section .note.Xen, "a", @note
	.balign 4
	.long 4			/* namesz: "Xen\0" */
	.long 4			/* descsz */
	.long 18		/* XEN_ELFNOTE_PHYS32_ENTRY */
	.asciz "Xen"
	.balign 4
	.long pvh_start
	.balign 4

	.section .boot.text, "ax"
	.code32

	.globl pvh_start
pvh_start:
	cli
	cld
	movl %ebx, %esi
	movl $BOOT_PVH, %ebp
	jmp common32

	.globl mb2_start
mb2_start:
	cli
	cld
	cmpl $MB2_LOADER_MAGIC, %eax
	jne no_boot_protocol
	movl %ebx, %esi
	movl $BOOT_MULTIBOOT2, %ebp
	/* fall through */

common32:
	/* Clear the BSS; the boot stack and page tables live there. */
	movl $__bss_start, %edi
	movl $__bss_end, %ecx
	subl %edi, %ecx
	xorl %eax, %eax
	rep stosb

	movl $boot_stack_top, %esp
	movl %ebp, boot_kind
	movl %esi, boot_info

	/* Long mode present?  CPUID 0x80000001 EDX bit 29. */
	movl $0x80000000, %eax
	cpuid
	cmpl $0x80000001, %eax
	jb no_long_mode
	movl $0x80000001, %eax
	cpuid
	btl $29, %edx
	jnc no_long_mode
	movl %edx, %ebx			/* bit 20: NX */

	/* PML4[0] -> PDPT; PDPT[0..3] -> the four page directories. */
	movl $boot_pdpt, %eax
	orl $(PTE_P | PTE_W), %eax
	movl %eax, boot_pml4

	xorl %ecx, %ecx
1:	movl %ecx, %eax
	shll $12, %eax
	addl $boot_pd, %eax
	orl $(PTE_P | PTE_W), %eax
	movl %eax, boot_pdpt(, %ecx, 8)
	incl %ecx
	cmpl $4, %ecx
	jb 1b

	/* 2048 2 MiB pages; from 3 GiB up (entry 1536) uncached for MMIO. */
	xorl %ecx, %ecx
2:	movl %ecx, %eax
	shll $21, %eax
	orl $(PTE_P | PTE_W | PTE_PS), %eax
	cmpl $1536, %ecx
	jb 3f
	orl $(PTE_PCD | PTE_PWT), %eax
3:	movl %eax, boot_pd(, %ecx, 8)
	incl %ecx
	cmpl $2048, %ecx
	jb 2b

	movl %cr4, %eax
	orl $(CR4_PAE | CR4_OSFXSR | CR4_OSXMMEXCPT), %eax
	movl %eax, %cr4

	movl $boot_pml4, %eax
	movl %eax, %cr3

	movl $MSR_EFER, %ecx
	rdmsr
	orl $EFER_LME, %eax
	btl $20, %ebx
	jnc 4f
	orl $EFER_NXE, %eax
4:	wrmsr

	movl %cr0, %eax
	andl $~(CR0_EM | CR0_TS), %eax
	orl $(CR0_PE | CR0_MP | CR0_WP | CR0_PG), %eax
	movl %eax, %cr0

	lgdt boot_gdtr
	ljmp $BOOT_CS, $long_start

/* Without long mode or a known loader there is nothing to run: say so on COM1. */
no_long_mode:
	movl $msg_no_lm, %esi
	jmp fail32
no_boot_protocol:
	movl $msg_no_boot, %esi
fail32:
	movw $0x3fd, %dx
5:	inb %dx, %al
	testb $0x20, %al
	jz 5b
	movw $0x3f8, %dx
	lodsb
	testb %al, %al
	jz 6f
	outb %al, %dx
	jmp fail32
6:	cli
	hlt
	jmp 6b

	.code64
long_start:
	movw $BOOT_DS, %ax
	movw %ax, %ds
	movw %ax, %es
	movw %ax, %ss
	xorw %ax, %ax
	movw %ax, %fs
	movw %ax, %gs
	movq $boot_stack_top, %rsp
	xorq %rbp, %rbp
	fninit
	movl boot_kind, %edi
	movl boot_info, %esi
	call kmain
7:	cli
	hlt
	jmp 7b

	.section .boot.data, "a"
	.balign 8
boot_gdt:
	.quad 0				/* null */
	.quad 0x00209a0000000000	/* 0x08: 64-bit code, present, DPL 0 */
	.quad 0x0000920000000000	/* 0x10: data, present, writable */
boot_gdt_end:
boot_gdtr:
	.short boot_gdt_end - boot_gdt - 1
	.long boot_gdt

msg_no_lm:
	.asciz "now: this CPU has no 64-bit long mode; cannot boot\r\n"
msg_no_boot:
	.asciz "now: unknown boot protocol (need PVH or multiboot2)\r\n"

	/* The page tables filled above are kernel/vm.c's (boot_pml4, boot_pdpt, boot_pd). */
	.section .bss
	.balign 4096
	.globl boot_stack_bottom
boot_stack_bottom:
	.skip BOOT_STACK_SIZE
	.globl boot_stack_top
boot_stack_top:
	.balign 8
boot_kind:
	.long 0
boot_info:
	.long 0
