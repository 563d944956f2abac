/*
 * CMOS bytes and machine reset; see cmos.h.
 */
#include <errno.h>

#include "kernel/cmos.h"
#include "kernel/x86.h"

enum {
	CMOS_INDEX = 0x70,	/* bit 7: NMI disabled while set */
	CMOS_DATA = 0x71,
	RESET_CTL = 0xcf9,	/* PIIX/ICH reset control: 0x02 system reset, 0x04 do it */
	KBC_CMD = 0x64,
	KBC_PULSE_RESET = 0xfe,
};

int cmos_read(unsigned idx)
{
	irqflags_t f;
	int v;

	if (idx < CMOS_USER_FIRST || idx > CMOS_USER_LAST)
		return -EINVAL;
	f = irq_save();
	outb(CMOS_INDEX, (uint8_t)idx);
	v = inb(CMOS_DATA);
	irq_restore(f);
	return v;
}

int cmos_write(unsigned idx, uint8_t v)
{
	irqflags_t f;

	if (idx < CMOS_USER_FIRST || idx > CMOS_USER_LAST)
		return -EINVAL;
	f = irq_save();
	outb(CMOS_INDEX, (uint8_t)idx);
	outb(CMOS_DATA, v);
	irq_restore(f);
	return 0;
}

void machine_reset(void)
{
	static const struct { uint16_t limit; uint64_t base; } __attribute__((packed)) none = { 0, 0 };

	cli();
	outb(RESET_CTL, 0x02);
	outb(RESET_CTL, 0x06);
	for (int i = 0; i < 100000; i++)
		cpu_relax();
	for (int i = 0; i < 1000 && (inb(KBC_CMD) & 0x02); i++)
		cpu_relax();
	outb(KBC_CMD, KBC_PULSE_RESET);
	for (int i = 0; i < 100000; i++)
		cpu_relax();
	/* An empty IDT: the next exception is a triple fault. */
	__asm__ volatile("lidt %0; int3" : : "m"(none));
	for (;;)
		hlt();
}
