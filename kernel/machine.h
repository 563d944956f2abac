/*
 * The machine a node runs on, as the driver that knows it describes it
 * (QEMU: drivers/qemu.c, its fw_cfg and isa-debug-exit).  A driver
 * registers one with MACHINE_REGISTER; the kernel asks the first whose
 * detect() answers and names none.  On a PC none answers: bare metal.
 */
#ifndef KERNEL_MACHINE_H
#define KERNEL_MACHINE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

/*
 * Nonzero if the CPU is QEMU's TCG, which emulates it instruction by
 * instruction: CPUID.1:ECX bit 31 (a hypervisor) and "TCGTCGTCGTCG" in
 * leaf 0x40000000.  Under KVM and on hardware 0.  Inline: the host builds
 * of kernel/crc.c for the unit tests ask it too.
 */
static inline int cpu_is_tcg(void)
{
	uint32_t a, sig[3], c, d;

	__asm__ volatile("cpuid" : "=a"(a), "=b"(sig[0]), "=c"(c), "=d"(d) : "a"(1), "c"(0));
	if (!(c >> 31))
		return 0;
	__asm__ volatile("cpuid" : "=a"(a), "=b"(sig[0]), "=c"(sig[1]), "=d"(sig[2]) : "a"(0x40000000), "c"(0));
	return memcmp(sig, "TCGTCGTCGTCG", 12) == 0;
}

#endif
