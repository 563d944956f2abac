/*
 * QEMU platform devices: fw_cfg (docs/specs/fw_cfg.txt: selector port
 * 0x510, data port 0x511, key 0 = signature "QEMU") and isa-debug-exit.
 */
#include <stdint.h>

#include "drivers/qemu.h"
#include "kernel/x86.h"

#define FW_CFG_SEL 0x510
#define FW_CFG_DATA 0x511
#define DEBUG_EXIT_PORT 0xf4

int qemu_detect(void)
{
	static int cached = -1;
	uint32_t a, b, c, d;
	char sig[4];

	if (cached >= 0)
		return cached;
	/* Only touch the fw_cfg ports under a hypervisor (CPUID.1:ECX[31]). */
	cpuid(1, 0, &a, &b, &c, &d);
	if (!(c & (1u << 31))) {
		cached = 0;
		return 0;
	}
	outw(FW_CFG_SEL, 0);
	for (int i = 0; i < 4; i++)
		sig[i] = (char)inb(FW_CFG_DATA);
	cached = sig[0] == 'Q' && sig[1] == 'E' && sig[2] == 'M' && sig[3] == 'U';
	return cached;
}

void qemu_exit(int status)
{
	outl(DEBUG_EXIT_PORT, (uint32_t)status);
}
