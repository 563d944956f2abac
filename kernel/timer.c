/*
 * LAPIC timer (Intel SDM vol. 3, 10.5.4) in one-shot mode with divide-by-1.
 */
#include <stdio.h>

#include "kernel/apic.h"
#include "kernel/calib.h"
#include "kernel/console.h"
#include "kernel/panic.h"
#include "kernel/thread.h"
#include "kernel/timer.h"
#include "kernel/trap.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"

volatile uint64_t ticks;
uint64_t lapic_timer_hz;

static uint64_t tick_cycles;
static uint64_t next_tick;
static struct ktimer *timers;		/* sorted by deadline */
static int in_timer_irq;		/* timer_irq reprograms on its way out */
static void (*tick_hooks[4])(void);

/*
 * The LAPIC timer counts toward `programmed` (TSC cycles).  Programming it
 * is cheap on hardware but not under QEMU, where every write to the timer
 * wakes the emulator's main loop: so it is written only when the deadline
 * moves, and arming a timer that is not the earliest writes nothing.
 */
static uint64_t programmed;

static void program(uint64_t now)
{
	uint64_t deadline = next_tick;
	uint64_t delta, count;

	if (timers && timers->deadline < deadline)
		deadline = timers->deadline;
	if (deadline == programmed && deadline > now)
		return;
	programmed = deadline;
	delta = deadline > now ? deadline - now : 0;
	count = (uint64_t)(((unsigned __int128)delta * lapic_timer_hz) / tsc_hz);
	if (count == 0)
		count = 1;
	if (count > 0xffffffffULL)
		count = 0xffffffffULL;
	lapic_timer_oneshot((uint32_t)count);
}

static void timer_irq(void *arg)
{
	uint64_t now = cycles();

	(void)arg;
	in_timer_irq = 1;
	programmed = 0;		/* the one-shot fired (maybe early): always re-arm */
	if (now >= next_tick) {
		ticks++;
		next_tick += tick_cycles;
		if (next_tick <= now)		/* fell behind: do not replay ticks */
			next_tick = now + tick_cycles;
		sched_tick();
		for (int i = 0; i < 4 && tick_hooks[i]; i++)
			tick_hooks[i]();
		now = cycles();
	}
	while (timers && timers->deadline <= now) {
		struct ktimer *t = timers;
		timers = t->next;
		t->armed = 0;
		t->next = NULL;
		t->fn(t->arg);
		now = cycles();
	}
	program(now);
	in_timer_irq = 0;
}

/*
 * One calibration window of the LAPIC timer against the TSC: each read of
 * the timer's count is bracketed by two TSC reads, and the window counts
 * from midpoint to midpoint.  *slack: the brackets' width, what a host
 * that stopped this CPU during a read adds to the error.
 */
static uint64_t lapic_window(uint64_t window, uint64_t *slack)
{
	uint64_t a0, a1, b0, b1;
	uint32_t c0, c1;

	lapic_timer_oneshot(0xffffffffu);
	a0 = cycles();
	c0 = lapic_timer_current();
	a1 = cycles();
	while (cycles() - a1 < window)
		cpu_relax();
	b0 = cycles();
	c1 = lapic_timer_current();
	b1 = cycles();
	lapic_timer_stop();
	*slack = (a1 - a0) + (b1 - b0);
	return (uint64_t)(c0 - c1) * tsc_hz / ((b0 + b1) / 2 - (a0 + a1) / 2);
}

#define LAPIC_WINDOWS 5

/*
 * The LAPIC timer's rate: the median of LAPIC_WINDOWS windows of 2 ms,
 * leaving out those whose reads were held up (a busy host: one window
 * alone once gave four times the true rate).  Said if they disagree.
 */
static uint64_t lapic_calibrate(void)
{
	const uint64_t window = ns_to_cycles(2000000);
	uint64_t hz[LAPIC_WINDOWS], slack[LAPIC_WINDOWS];
	struct calib c;

	for (int i = 0; i < LAPIC_WINDOWS; i++)
		hz[i] = lapic_window(window, &slack[i]);
	calib_pick(hz, slack, LAPIC_WINDOWS, window / 100, 50, &c);
	if (c.disagree)
		printf("timer: lapic timer calibration windows disagree (%lu..%lu Hz over %d windows); "
		       "taking the median, %lu Hz\n", c.lo, c.hi, c.kept, c.hz);
	return c.hz;
}

void timer_init(void)
{
	lapic_timer_setup(VEC_TIMER);
	lapic_timer_hz = lapic_calibrate();
	if (lapic_timer_hz < 1000000)
		panic("timer: LAPIC timer runs at %lu Hz; cannot drive the tick", lapic_timer_hz);

	tick_cycles = tsc_hz / TICK_HZ;
	irq_register(VEC_TIMER, timer_irq, NULL);
	next_tick = cycles() + tick_cycles;
	program(cycles());
}

void timer_add_tick_hook(void (*fn)(void))
{
	for (int i = 0; i < 4; i++) {
		if (!tick_hooks[i]) {
			tick_hooks[i] = fn;
			return;
		}
	}
	panic("timer: more than 4 tick hooks");
}

static void unlink(struct ktimer *t)
{
	for (struct ktimer **pp = &timers; *pp; pp = &(*pp)->next) {
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	}
	t->next = NULL;
	t->armed = 0;
}

void timer_arm(struct ktimer *t, uint64_t deadline, void (*fn)(void *), void *arg)
{
	irqflags_t f = irq_save();
	struct ktimer **pp;

	if (t->armed)
		unlink(t);
	t->deadline = deadline;
	t->fn = fn;
	t->arg = arg;
	for (pp = &timers; *pp && (*pp)->deadline <= deadline; pp = &(*pp)->next)
		;
	t->next = *pp;
	*pp = t;
	t->armed = 1;
	if (deadline < programmed && !in_timer_irq)
		program(cycles());
	irq_restore(f);
}

int timer_cancel(struct ktimer *t)
{
	irqflags_t f = irq_save();
	int was = t->armed;

	if (was)
		unlink(t);
	irq_restore(f);
	return was;
}

void timer_dump(void)
{
	uint64_t now = cycles();
	int n = 0;

	for (struct ktimer *t = timers; t; t = t->next)
		n++;
	kprintf("timer: %lu ticks, %d timers armed, the first in %ld us, the LAPIC timer's deadline "
		"in %ld us\n", ticks, n,
		timers ? (long)((int64_t)(timers->deadline - now) / (int64_t)(tsc_hz / 1000000)) : -1L,
		programmed ? (long)((int64_t)(programmed - now) / (int64_t)(tsc_hz / 1000000)) : -1L);
}
