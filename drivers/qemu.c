/*
 * QEMU platform devices: fw_cfg (docs/specs/fw_cfg.txt: selector port
 * 0x510, data port 0x511, key 0 = signature "QEMU") and isa-debug-exit.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "kernel/machine.h"
#include "kernel/x86.h"

#define FW_CFG_SEL 0x510
#define FW_CFG_DATA 0x511
#define DEBUG_EXIT_PORT 0xf4

/* Under QEMU: fw_cfg answers with its signature. */
static int qemu_detect(void)
{
	uint32_t a, b, c, d;
	char sig[4];

	/* Only touch the fw_cfg ports under a hypervisor (CPUID.1:ECX[31]). */
	cpuid(1, 0, &a, &b, &c, &d);
	if (!(c & (1u << 31)))
		return 0;
	outw(FW_CFG_SEL, 0);
	for (int i = 0; i < 4; i++)
		sig[i] = (char)inb(FW_CFG_DATA);
	return sig[0] == 'Q' && sig[1] == 'E' && sig[2] == 'M' && sig[3] == 'U';
}

/*
 * isa-debug-exit (iobase 0xf4): QEMU exits with (status << 1) | 1.  Returns
 * only if the device is absent.
 */
static void qemu_exit(int status)
{
	outl(DEBUG_EXIT_PORT, (uint32_t)status);
}

#define FW_CFG_FILE_DIR 0x19

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void fwcfg_read(void *buf, size_t n)
{
	uint8_t *p = buf;

	for (size_t i = 0; i < n; i++)
		p[i] = inb(FW_CFG_DATA);
}

/* The fw_cfg file name (QEMU's -fw_cfg name=...,file=...) into buf: machine.h's file. */
static long qemu_fwcfg_file(const char *name, void *buf, size_t max)
{
	uint8_t n4[4], ent[64];
	uint32_t count;

	outw(FW_CFG_SEL, FW_CFG_FILE_DIR);
	fwcfg_read(n4, 4);
	count = be32(n4);
	/* The directory is QEMU's, but bounded all the same: no loop runs on its word alone. */
	if (count > 4096)
		return -EIO;
	for (uint32_t i = 0; i < count; i++) {
		fwcfg_read(ent, sizeof ent);
		ent[63] = 0;
		if (strcmp((const char *)ent + 8, name) != 0)
			continue;
		uint32_t size = be32(ent);
		if (size > max)
			return -E2BIG;
		outw(FW_CFG_SEL, (uint16_t)(ent[4] << 8 | ent[5]));
		fwcfg_read(buf, size);
		return size;
	}
	return -ENOENT;
}

static const struct machine qemu = {
	.name = "QEMU",
	.detect = qemu_detect,
	.exit = qemu_exit,
	.file = qemu_fwcfg_file,
};
MACHINE_REGISTER(qemu);
