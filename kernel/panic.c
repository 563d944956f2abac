/*
 * Panics, backtraces and the node's exit.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "kernel/acpi.h"
#include "kernel/console.h"
#include "kernel/machine.h"
#include "kernel/node.h"
#include "kernel/panic.h"
#include "kernel/thread.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"

/*
 * The symbol table, filled in by the second link (Makefile: ksyms):
 * sorted (address, name offset) pairs, then the names.
 */
struct ksym {
	uint64_t addr;
	uint32_t name;
	uint32_t pad;
};
extern const char __ksyms_start[], __ksyms_end[];
extern char __text_start[], __text_end[];

const char *ksym_lookup(uint64_t addr, uint64_t *off)
{
	const uint64_t *hdr = (const uint64_t *)__ksyms_start;
	const struct ksym *tab;
	uint64_t n, lo = 0, hi;

	if (__ksyms_end - __ksyms_start < 8 || addr < (uintptr_t)__text_start ||
	    addr >= (uintptr_t)__text_end)
		return NULL;
	n = hdr[0];
	tab = (const struct ksym *)(hdr + 1);
	if (n == 0 || addr < tab[0].addr)
		return NULL;
	hi = n;
	while (hi - lo > 1) {
		uint64_t mid = (lo + hi) / 2;
		if (tab[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	*off = addr - tab[lo].addr;
	return (const char *)(tab + n) + tab[lo].name;
}

static void print_frame(int i, uint64_t addr)
{
	uint64_t off = 0;
	const char *name = ksym_lookup(addr, &off);

	if (name)
		kprintf("      #%d 0x%016lx %s+%#lx\n", i, addr, name, off);
	else
		kprintf("      #%d 0x%016lx\n", i, addr);
}

void backtrace_print(uint64_t rip, uint64_t rbp)
{
	int i = 0;

	kprintf("    backtrace:\n");
	if (rip)
		print_frame(i++, rip);
	for (; i < 24; i++) {
		/* Frames live in the kernel image (boot stack) or in RAM stacks. */
		if (rbp < 0x100000 || rbp >= 0x100000000ULL || (rbp & 7))
			break;
		uint64_t ret = ((uint64_t *)rbp)[1];
		if (ret < 0x100000)
			break;
		/* Return addresses point after the call; show the call itself. */
		print_frame(i, ret - 1);
		rbp = ((uint64_t *)rbp)[0];
	}
}

/*
 * The same chain on one line, innermost first, "name+off < caller+off ...".
 * 16 frames: a thread an interrupt caught in its driver's handler has the
 * handler's chain (intr < trap < trap_common) above its own.
 */
void backtrace_short(uint64_t rip, uint64_t rbp)
{
	uint64_t off = 0;
	const char *name;

	for (int i = 0; i < 16; i++) {
		if (i > 0) {
			if (rbp < 0x100000 || rbp >= 0x100000000ULL || (rbp & 7))
				break;
			rip = ((uint64_t *)rbp)[1];
			rbp = ((uint64_t *)rbp)[0];
			if (rip < 0x100000)
				break;
			rip--;		/* the call, not what follows it */
		}
		name = ksym_lookup(rip, &off);
		if (name)
			kprintf("%s%s+%#lx", i ? " < " : "", name, off);
		else
			kprintf("%s%#lx", i ? " < " : "", rip);
	}
	kprintf("\n");
}

static volatile int panicking;

void panic(const char *fmt, ...)
{
	va_list ap;
	struct thread *t = thread_current();

	cli();
	if (panicking++) {
		kprintf("\n*** panic while panicking; stopping\n");
		kernel_exit(EXIT_FAULT);
	}
	console_flush();
	kprintf("\n*** PANIC in thread '%s': ", t ? t->name : "?");
	va_start(ap, fmt);
	kvprintf(fmt, ap);
	va_end(ap);
	kprintf("\n");
	backtrace_print(0, (uint64_t)__builtin_frame_address(0));
	kernel_exit(EXIT_FAULT);
}

void kernel_exit(int status)
{
	cli();
	console_flush();
	kprintf("now: node exits with status %d\n", status);
	const struct machine *m = machine();
	if (m && m->exit) {
		/*
		 * The machine's way out (QEMU's isa-debug-exit), if it has one.  QEMU 7.2 ends
		 * at the write; later ones at their main loop's next turn, with
		 * the node still running meanwhile: it waits for that silently
		 * (up to 2 s), so that nothing it prints is cut by the exit.
		 */
		console_drain();
		/* QEMU's exit code has 7 bits for it; the line above says the rest. */
		m->exit(status < 0 || status > 127 ? 127 : status);
		delay_ns(2000000000ULL);
	}
	if (strcmp(arg_str("exit", "halt"), "poweroff") == 0) {
		if (acpi.s5) {
			kprintf("now: powering off (ACPI S5)\n");
			console_flush();
			acpi_poweroff();
		}
		kprintf("now: cannot power off (%s)\n",
			acpi.found ? "no \\_S5 in the DSDT that this kernel understands" : "no ACPI");
	}
	kprintf("now: halted (status %d); it is safe to power off\n", status);
	for (;;)
		hlt();
}
