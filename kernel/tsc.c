/*
 * TSC calibration against the HPET (IA-PC HPET specification 1.0a, 2.3:
 * capabilities at 0x000 with the counter period in femtoseconds in bits
 * 63:32, configuration at 0x010, main counter at 0x0f0) or, failing that,
 * PIT channel 2 in one-shot mode (8254 data sheet, mode 0) gated through
 * port 0x61.
 */
#include <errno.h>
#include <stdio.h>

#include "kernel/acpi.h"
#include "kernel/calib.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"

uint64_t tsc_hz;
const char *tsc_source = "none";
static uint64_t tsc_base;
static uint64_t ns_mult;	/* ns = cycles * ns_mult >> 32 */
static uint64_t cyc_mult;	/* cycles = ns * cyc_mult >> 32 */

enum {
	HpetCap = 0x000,
	HpetConfig = 0x010,
	HpetCounter = 0x0f0,
};

#define CAL_NS 7000000ULL	/* 7 ms a window */
#define CAL_WINDOWS 3		/* the median of these */

static uint64_t hpet_window(void)
{
	volatile uint64_t *h = (volatile uint64_t *)(uintptr_t)acpi.hpet_addr;
	uint64_t period_fs, target, c0, c1, t0, t1, h0, h1;
	int i;

	period_fs = h[HpetCap / 8] >> 32;
	if (period_fs == 0 || period_fs > 100000000ULL)	/* spec: at most 100 ns */
		return 0;
	h[HpetConfig / 8] |= 1;		/* ENABLE_CNF */
	target = CAL_NS * 1000000ULL / period_fs;

	/* Make sure the counter runs before trusting it. */
	h0 = h[HpetCounter / 8];
	for (i = 0; i < 1000000 && h[HpetCounter / 8] == h0; i++)
		cpu_relax();
	if (h[HpetCounter / 8] == h0)
		return 0;

	t0 = rdtsc();
	h0 = h[HpetCounter / 8];
	c0 = rdtsc();
	while (h[HpetCounter / 8] - h0 < target)
		cpu_relax();
	t1 = rdtsc();
	h1 = h[HpetCounter / 8];
	c1 = rdtsc();
	/* Midpoints of the TSC reads that bracket each HPET read. */
	uint64_t dt = (t1 + c1) / 2 - (t0 + c0) / 2;
	unsigned __int128 dfs = (unsigned __int128)(h1 - h0) * period_fs;	/* femtoseconds */
	return (uint64_t)((unsigned __int128)dt * 1000000000000000ULL / dfs);
}

static uint64_t pit_calibrate(void)
{
	/* 1193182 Hz; 7 ms = 8352 ticks. */
	const uint16_t ticks = 8352;
	uint64_t t0, t1;
	uint8_t gate = inb(0x61);

	outb(0x61, (gate & ~0x02) | 0x01);	/* gate on, speaker off */
	outb(0x43, 0xb0);			/* channel 2, lobyte/hibyte, mode 0 */
	outb(0x42, ticks & 0xff);
	outb(0x42, ticks >> 8);
	/* Restart the count: drop and raise the gate. */
	gate = inb(0x61);
	outb(0x61, gate & ~0x01);
	outb(0x61, gate | 0x01);
	t0 = rdtsc();
	for (uint64_t i = 0; !(inb(0x61) & 0x20); i++)
		if (i > 100000000ULL)
			return 0;
	t1 = rdtsc();
	return (t1 - t0) * 1193182ULL / ticks;
}

static int sane(uint64_t hz)
{
	return hz >= 100000000ULL && hz <= 20000000000ULL;
}

/*
 * CAL_WINDOWS windows of one source, their median: a host that stops this
 * CPU during one window moves that window only.  Said if they disagree by
 * more than 1 %.
 */
static uint64_t median_of(uint64_t (*window)(void), const char *what)
{
	uint64_t hz[CAL_WINDOWS];
	struct calib c;

	for (int i = 0; i < CAL_WINDOWS; i++)
		hz[i] = window();
	calib_pick(hz, NULL, CAL_WINDOWS, 0, 100, &c);
	if (sane(c.hz) && c.disagree)
		printf("tsc: calibration windows against the %s disagree (%lu..%lu Hz); taking the "
		       "median, %lu Hz\n", what, c.lo, c.hi, c.hz);
	return c.hz;
}

static void set_hz(uint64_t hz)
{
	tsc_hz = hz;
	ns_mult = (uint64_t)(((unsigned __int128)1000000000ULL << 32) / hz);
	cyc_mult = (uint64_t)(((unsigned __int128)hz << 32) / 1000000000ULL);
	tsc_base = rdtsc();
}

int tsc_calibrate(void)
{
	uint64_t hz = 0;

	if (acpi.hpet_addr && acpi.hpet_addr < 0x100000000ULL) {
		hz = median_of(hpet_window, "hpet");
		if (sane(hz))
			tsc_source = "hpet";
	}
	if (!sane(hz)) {
		hz = median_of(pit_calibrate, "pit");
		if (sane(hz))
			tsc_source = "pit";
	}
	if (!sane(hz)) {
		printf("tsc: calibration failed (hpet and pit gave %lu Hz); assuming 2 GHz\n", hz);
		set_hz(2000000000ULL);
		return -EIO;
	}
	set_hz(hz);
	return 0;
}

uint64_t cycles_to_ns(uint64_t c)
{
	return (uint64_t)(((unsigned __int128)c * ns_mult) >> 32);
}

uint64_t ns_to_cycles(uint64_t ns)
{
	return (uint64_t)(((unsigned __int128)ns * cyc_mult) >> 32);
}

uint64_t now_ns(void)
{
	return cycles_to_ns(rdtsc() - tsc_base);
}

void delay_ns(uint64_t ns)
{
	uint64_t end = rdtsc() + ns_to_cycles(ns);

	while (rdtsc() < end)
		cpu_relax();
}
