/* x86-64 instructions the kernel uses, as inline functions. */
#ifndef KERNEL_X86_H
#define KERNEL_X86_H

#include <stdint.h>

static inline uint8_t inb(uint16_t port)
{
	uint8_t v;
	__asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static inline uint16_t inw(uint16_t port)
{
	uint16_t v;
	__asm__ volatile("inw %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static inline uint32_t inl(uint16_t port)
{
	uint32_t v;
	__asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static inline void outb(uint16_t port, uint8_t v)
{
	__asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}

static inline void outw(uint16_t port, uint16_t v)
{
	__asm__ volatile("outw %0, %1" : : "a"(v), "Nd"(port));
}

static inline void outl(uint16_t port, uint32_t v)
{
	__asm__ volatile("outl %0, %1" : : "a"(v), "Nd"(port));
}

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

static inline uint64_t rdmsr(uint32_t msr)
{
	uint32_t lo, hi;
	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return ((uint64_t)hi << 32) | lo;
}

static inline void wrmsr(uint32_t msr, uint64_t v)
{
	__asm__ volatile("wrmsr" : : "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)));
}

static inline uint64_t read_cr0(void) { uint64_t v; __asm__ volatile("mov %%cr0, %0" : "=r"(v)); return v; }
static inline uint64_t read_cr2(void) { uint64_t v; __asm__ volatile("mov %%cr2, %0" : "=r"(v)); return v; }
static inline uint64_t read_cr3(void) { uint64_t v; __asm__ volatile("mov %%cr3, %0" : "=r"(v)); return v; }
static inline uint64_t read_cr4(void) { uint64_t v; __asm__ volatile("mov %%cr4, %0" : "=r"(v)); return v; }
static inline void write_cr3(uint64_t v) { __asm__ volatile("mov %0, %%cr3" : : "r"(v) : "memory"); }
static inline void write_cr4(uint64_t v) { __asm__ volatile("mov %0, %%cr4" : : "r"(v) : "memory"); }

static inline uint64_t read_rflags(void)
{
	uint64_t f;
	__asm__ volatile("pushfq; popq %0" : "=r"(f));
	return f;
}

#define RFLAGS_IF (1UL << 9)

static inline void cli(void) { __asm__ volatile("cli" ::: "memory"); }
static inline void sti(void) { __asm__ volatile("sti" ::: "memory"); }
static inline void hlt(void) { __asm__ volatile("hlt" ::: "memory"); }
/* Enable interrupts and halt with no window between the two (sti shadow). */
static inline void sti_hlt(void) { __asm__ volatile("sti; hlt" ::: "memory"); }
static inline void cpu_relax(void) { __asm__ volatile("pause" ::: "memory"); }
static inline void barrier(void) { __asm__ volatile("" ::: "memory"); }

static inline void invlpg(uintptr_t va) { __asm__ volatile("invlpg (%0)" : : "r"(va) : "memory"); }

/* Interrupt state save/restore: the kernel's critical sections (one CPU). */
typedef uint64_t irqflags_t;

#ifndef HOST_TEST
static inline irqflags_t irq_save(void)
{
	irqflags_t f = read_rflags();
	cli();
	return f;
}

static inline void irq_restore(irqflags_t f)
{
	if (f & RFLAGS_IF)
		sti();
}
#else
/* Host tests run the kernel's code in one user thread: nothing to mask. */
static inline irqflags_t irq_save(void) { return 0; }
static inline void irq_restore(irqflags_t f) { (void)f; }
#endif

static inline int irq_enabled(void) { return (read_rflags() & RFLAGS_IF) != 0; }

static inline void cpuid(uint32_t leaf, uint32_t sub, uint32_t *a, uint32_t *b, uint32_t *c, uint32_t *d)
{
	__asm__ volatile("cpuid" : "=a"(*a), "=b"(*b), "=c"(*c), "=d"(*d) : "a"(leaf), "c"(sub));
}

#define MSR_APIC_BASE   0x1b
#define MSR_FS_BASE     0xc0000100
#define MSR_GS_BASE     0xc0000101

#endif
