/*
 * Stopping the node.
 *
 * Exit statuses (the launcher reports the worst across the cluster):
 *   0 the app succeeded; 1 the app failed; 2 the command line was rejected;
 *   3 an exception or panic stopped the kernel.
 */
#ifndef KERNEL_PANIC_H
#define KERNEL_PANIC_H

#include <stdint.h>

enum {
	EXIT_OK = 0,
	EXIT_FAIL = 1,
	EXIT_USAGE = 2,
	EXIT_FAULT = 3,
};

/* Print the cause and a backtrace, then stop the node with EXIT_FAULT. */
__attribute__((noreturn, format(printf, 1, 2))) void panic(const char *fmt, ...);

/*
 * Stop the node with status: under QEMU through the isa-debug-exit device,
 * on hardware by printing the status and halting.
 */
__attribute__((noreturn)) void kernel_exit(int status);

/* Print a frame-pointer backtrace starting at rbp (rip first, if nonzero). */
void backtrace_print(uint64_t rip, uint64_t rbp);
/* The same on one line (and its newline): "fn+off < caller+off < ...". */
void backtrace_short(uint64_t rip, uint64_t rbp);

/* Look up the function containing addr; return its name and set *off. */
const char *ksym_lookup(uint64_t addr, uint64_t *off);

#define KASSERT(cond) \
	do { if (!(cond)) panic("assertion failed: %s (%s:%d)", #cond, __FILE__, __LINE__); } while (0)

#endif
