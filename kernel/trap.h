/*
 * Interrupts and exceptions.
 *
 * Vectors 0-31 are CPU exceptions: each prints the vector, error code,
 * registers and a backtrace, then stops the node with EXIT_FAULT.
 * Vectors from IRQ_VEC_BASE up are device and timer interrupts, dispatched
 * to handlers registered with irq_register(); every interrupt ends with
 * an EOI and sched_irq_exit().
 */
#ifndef KERNEL_TRAP_H
#define KERNEL_TRAP_H

#include <stdint.h>

struct trapframe {
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
	uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
	uint64_t vector, error;
	uint64_t rip, cs, rflags, rsp, ss;	/* pushed by the CPU */
};

#define VEC_TIMER       0x20	/* LAPIC timer */
#define IRQ_VEC_BASE    0x30	/* first vector handed out by irq_alloc() */
#define IRQ_VEC_LAST    0xdf
#define VEC_PIC_BASE    0xe0	/* legacy 8259s, remapped here and masked */
#define VEC_SPURIOUS    0xff

typedef void (*irq_handler_t)(void *arg);

/* Load the IDT, GDT and TSS.  Call once, early. */
void trap_init(void);

/* Install handler on a fixed vector. */
void irq_register(int vector, irq_handler_t fn, void *arg);

/* Allocate a free device vector and install handler; -ENOSPC if none left. */
int irq_alloc(irq_handler_t fn, void *arg);

/* Nonzero while an interrupt handler runs. */
extern volatile int in_irq;

/* Interrupts taken since boot, per vector. */
extern uint64_t irq_counts[256];

/*
 * Where this node stands, as an NMI from the launcher asks (and the
 * watchdog): why on the first line, the timers, every thread's backtrace
 * (the current one's from rip and rbp), each DUMP_HOOK's state.  Reads
 * only; interrupts off.
 */
void node_dump(const char *why, uint64_t rip, uint64_t rbp);

#endif
