/*
 * CMOS bytes and machine reset; see cmos.h.
 */
#include <errno.h>
#include <string.h>

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

static uint8_t rtc_reg(unsigned idx)
{
	outb(CMOS_INDEX, (uint8_t)idx);
	return inb(CMOS_DATA);
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

int64_t cmos_rtc_seconds(void)
{
	uint8_t r[7], again[7], b;
	irqflags_t f = irq_save();
	int tries = 0;

	/* Read twice outside an update (status A bit 7) until two reads agree. */
	do {
		while ((rtc_reg(0x0a) & 0x80) && tries++ < 100000)
			;
		for (int i = 0; i < 7; i++)
			r[i] = rtc_reg((unsigned[]){ 0, 2, 4, 7, 8, 9, 0x32 }[i]);
		while ((rtc_reg(0x0a) & 0x80) && tries++ < 100000)
			;
		for (int i = 0; i < 7; i++)
			again[i] = rtc_reg((unsigned[]){ 0, 2, 4, 7, 8, 9, 0x32 }[i]);
	} while (memcmp(r, again, sizeof r) != 0 && tries++ < 100000);
	b = rtc_reg(0x0b);
	irq_restore(f);
	int pm = !(b & 0x02) && (r[2] & 0x80);
	r[2] &= 0x7f;
	if (!(b & 0x04))		/* BCD */
		for (int i = 0; i < 7; i++)
			r[i] = (uint8_t)((r[i] >> 4) * 10 + (r[i] & 15));
	if (!(b & 0x02))		/* 12-hour clock: 12 AM is 0 */
		r[2] = (uint8_t)(r[2] % 12 + (pm ? 12 : 0));
	unsigned century = r[6] >= 19 && r[6] <= 30 ? r[6] : 20;
	if (r[0] > 59 || r[1] > 59 || r[2] > 23 || r[3] < 1 || r[3] > 31 || r[4] < 1 || r[4] > 12 || r[5] > 99)
		return -EIO;
	return days_from_civil((int64_t)century * 100 + r[5], r[4], r[3]) * 86400 + r[2] * 3600 + r[1] * 60 + r[0];
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
