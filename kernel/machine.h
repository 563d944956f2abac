/*
 * The machine a node runs on, as the driver that knows it describes it
 * (QEMU: drivers/qemu.c, its fw_cfg and isa-debug-exit).  A driver
 * registers one with MACHINE_REGISTER; the kernel asks the first whose
 * detect() answers and names none.  On a PC none answers: bare metal.
 */
#ifndef KERNEL_MACHINE_H
#define KERNEL_MACHINE_H

#include <stddef.h>

struct machine {
	const char *name;			/* said on the console: "under QEMU" */
	int (*detect)(void);			/* nonzero: the node runs on it (called once) */
	void (*exit)(int status);		/* NULL, or leave with status 0-127; returns if it cannot */
	/*
	 * NULL, or read the file name the host handed the node beside its
	 * command line into buf: its size, -ENOENT (none), -E2BIG (larger
	 * than max; nothing read) or -EIO.
	 */
	long (*file)(const char *name, void *buf, size_t max);
};

#define MACHINE_REGISTER(m)                                                             \
	static const struct machine *const machine_ptr_##m                              \
		__attribute__((used, section(".machines." #m))) = &(m)

/* The machine detected (the first time, asked of each), or NULL: bare metal. */
const struct machine *machine(void);

#endif
