/*
 * GDT, TSS, IDT and the common trap handler (Intel SDM vol. 3, chapters 6-7).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "boot/boot.h"
#include "kernel/apic.h"
#include "kernel/console.h"
#include "kernel/panic.h"
#include "kernel/thread.h"
#include "kernel/timer.h"
#include "kernel/trap.h"
#include "kernel/vm.h"
#include "kernel/x86.h"

struct tss {
	uint32_t reserved0;
	uint64_t rsp[3];
	uint64_t reserved1;
	uint64_t ist[7];
	uint64_t reserved2;
	uint16_t reserved3;
	uint16_t iomap_base;
} __attribute__((packed));
_Static_assert(sizeof(struct tss) == 104, "TSS layout");

struct idt_gate {
	uint16_t off_lo;
	uint16_t sel;
	uint8_t ist;
	uint8_t type;
	uint16_t off_mid;
	uint32_t off_hi;
	uint32_t reserved;
} __attribute__((packed));
_Static_assert(sizeof(struct idt_gate) == 16, "IDT gate layout");

struct dtr {
	uint16_t limit;
	uint64_t base;
} __attribute__((packed));

#define GATE_INTR 0x8e		/* present, DPL 0, 64-bit interrupt gate */
#define TSS_SEL   0x18

/* Separate stacks for faults that may find the current stack unusable. */
#define IST_DF  1
#define IST_NMI 2
#define IST_MC  3
#define IST_PF  4		/* a stack overflow faults on the guard page */
#define IST_STACK 16384

static uint64_t gdt[5] __attribute__((aligned(16)));
static struct tss tss __attribute__((aligned(16)));
static struct idt_gate idt[256] __attribute__((aligned(16)));
static uint8_t ist_stacks[4][IST_STACK] __attribute__((aligned(16)));

static struct {
	irq_handler_t fn;
	void *arg;
} handlers[256];

extern const uint64_t trap_vectors[256];

volatile int in_irq;
uint64_t irq_counts[256];

static void set_gate(int vec, uint64_t addr, int ist)
{
	idt[vec].off_lo = addr & 0xffff;
	idt[vec].sel = BOOT_CS;
	idt[vec].ist = (uint8_t)ist;
	idt[vec].type = GATE_INTR;
	idt[vec].off_mid = (addr >> 16) & 0xffff;
	idt[vec].off_hi = (uint32_t)(addr >> 32);
	idt[vec].reserved = 0;
}

void trap_init(void)
{
	uint64_t base = (uintptr_t)&tss;
	struct dtr d;

	gdt[0] = 0;
	gdt[1] = 0x00209a0000000000ULL;		/* 0x08 code */
	gdt[2] = 0x0000920000000000ULL;		/* 0x10 data */
	/* 0x18: 64-bit TSS descriptor, two slots (SDM vol. 3, 7.2.3). */
	gdt[3] = (sizeof tss - 1) | ((base & 0xffffff) << 16) | (0x89ULL << 40) |
		 (((base >> 24) & 0xff) << 56);
	gdt[4] = base >> 32;
	tss.ist[IST_DF - 1] = (uintptr_t)ist_stacks[0] + IST_STACK;
	tss.ist[IST_NMI - 1] = (uintptr_t)ist_stacks[1] + IST_STACK;
	tss.ist[IST_MC - 1] = (uintptr_t)ist_stacks[2] + IST_STACK;
	tss.ist[IST_PF - 1] = (uintptr_t)ist_stacks[3] + IST_STACK;
	tss.iomap_base = sizeof tss;

	d.limit = sizeof gdt - 1;
	d.base = (uintptr_t)gdt;
	__asm__ volatile("lgdt %0" : : "m"(d));
	__asm__ volatile("ltr %w0" : : "r"(TSS_SEL));

	for (int v = 0; v < 256; v++)
		set_gate(v, trap_vectors[v], 0);
	set_gate(2, trap_vectors[2], IST_NMI);
	set_gate(8, trap_vectors[8], IST_DF);
	set_gate(18, trap_vectors[18], IST_MC);
	set_gate(14, trap_vectors[14], IST_PF);
	d.limit = sizeof idt - 1;
	d.base = (uintptr_t)idt;
	__asm__ volatile("lidt %0" : : "m"(d));
}

void irq_register(int vector, irq_handler_t fn, void *arg)
{
	irqflags_t f = irq_save();
	handlers[vector].fn = fn;
	handlers[vector].arg = arg;
	irq_restore(f);
}

int irq_alloc(irq_handler_t fn, void *arg)
{
	irqflags_t f = irq_save();
	for (int v = IRQ_VEC_BASE; v <= IRQ_VEC_LAST; v++) {
		if (!handlers[v].fn) {
			handlers[v].fn = fn;
			handlers[v].arg = arg;
			irq_restore(f);
			return v;
		}
	}
	irq_restore(f);
	return -ENOSPC;
}

static const char *const exc_names[32] = {
	"#DE divide error", "#DB debug", "NMI", "#BP breakpoint",
	"#OF overflow", "#BR bound range", "#UD invalid opcode", "#NM device not available",
	"#DF double fault", "coprocessor overrun", "#TS invalid TSS", "#NP segment not present",
	"#SS stack fault", "#GP general protection", "#PF page fault", "reserved 15",
	"#MF x87 error", "#AC alignment check", "#MC machine check", "#XM SIMD error",
	"#VE virtualization", "#CP control protection", "reserved 22", "reserved 23",
	"reserved 24", "reserved 25", "reserved 26", "reserved 27",
	"#HV hypervisor injection", "#VC VMM communication", "#SX security", "reserved 31",
};

static volatile int in_exception;

static void exception(struct trapframe *tf)
{
	struct thread *t = thread_current();

	if (in_exception++) {
		kprintf("\n*** nested exception %lu at rip=%#lx while reporting one; stopping\n",
			tf->vector, tf->rip);
		kernel_exit(EXIT_FAULT);
	}
	console_flush();
	kprintf("\n*** EXCEPTION %lu (%s) error=%#lx in thread '%s'%s\n", tf->vector,
		exc_names[tf->vector], tf->error, t ? t->name : "?", in_irq ? " (in interrupt)" : "");
	if (tf->vector == 14 && vm_is_guard(read_cr2()))
		kprintf("    STACK OVERFLOW: the fault address is the guard page below a thread stack\n");
	if (tf->vector == 14 && vm_is_protected(read_cr2()))
		kprintf("    the page's rights were reduced by vm_protect (an endpoint page's protection, "
			"dep_endpoint_protect): this access is one they refuse\n");
	if (tf->vector == 14)
		kprintf("    fault address (cr2) = 0x%016lx, %s %s%s\n", read_cr2(),
			(tf->error & 1) ? "protection violation" : "page not present",
			(tf->error & 2) ? "on write" : "on read",
			(tf->error & 16) ? " (instruction fetch)" : "");
	kprintf("    rip=0x%016lx rsp=0x%016lx rflags=0x%08lx cs=%#lx ss=%#lx\n",
		tf->rip, tf->rsp, tf->rflags, tf->cs, tf->ss);
	kprintf("    rax=0x%016lx rbx=0x%016lx rcx=0x%016lx rdx=0x%016lx\n", tf->rax, tf->rbx, tf->rcx, tf->rdx);
	kprintf("    rsi=0x%016lx rdi=0x%016lx rbp=0x%016lx r8 =0x%016lx\n", tf->rsi, tf->rdi, tf->rbp, tf->r8);
	kprintf("    r9 =0x%016lx r10=0x%016lx r11=0x%016lx r12=0x%016lx\n", tf->r9, tf->r10, tf->r11, tf->r12);
	kprintf("    r13=0x%016lx r14=0x%016lx r15=0x%016lx\n", tf->r13, tf->r14, tf->r15);
	kprintf("    cr0=%#lx cr3=%#lx cr4=%#lx\n", read_cr0(), read_cr3(), read_cr4());
	backtrace_print(tf->rip, tf->rbp);
	kernel_exit(EXIT_FAULT);
}

extern void (*const __dumphooks_start[])(void), (*const __dumphooks_end[])(void);

/*
 * An NMI: the launcher asks where this node stands before its --timeout
 * kills it (boot/cluster sends one through QEMU's monitor).  The threads
 * and their stacks, then each DUMP_HOOK's state, all read as they are;
 * then the node goes on.  NMIs are held until this returns (SDM 6.7.1).
 */
static void nmi_dump(struct trapframe *tf)
{
	node_dump("NMI", tf->rip, tf->rbp);
}

void node_dump(const char *why, uint64_t rip, uint64_t rbp)
{
	struct thread *t = thread_current();

	console_raw = 1;
	kprintf("\nnow: %s: where this node stands (thread '%s'%s, rip %#lx)\n", why, t ? t->name : "?",
		in_irq ? ", in an interrupt" : "", rip);
	timer_dump();
	thread_dump(rip, rbp);
	for (void (*const *h)(void) = __dumphooks_start; h < __dumphooks_end; h++)
		(*h)();
	kprintf("now: %s: end of the dump\n", why);
	console_raw = 0;
}

void trap(struct trapframe *tf)
{
	uint64_t v = tf->vector;

	if (v == 2) {
		nmi_dump(tf);
		return;
	}
	if (v < 32) {
		exception(tf);
		return;
	}
	irq_counts[v]++;
	if (v >= VEC_PIC_BASE && v < VEC_PIC_BASE + 16)
		return;			/* spurious from the masked 8259s: no EOI */
	if (v == VEC_SPURIOUS)
		return;			/* LAPIC spurious: no EOI (SDM 10.9) */
	in_irq++;
	if (handlers[v].fn)
		handlers[v].fn(handlers[v].arg);
	in_irq--;
	lapic_eoi();
	sched_irq_exit();
}
