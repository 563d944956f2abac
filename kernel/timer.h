/*
 * The timer: a periodic scheduler tick (TICK_HZ) and one-shot kernel timers
 * with TSC-cycle deadlines, both driven by the LAPIC timer in one-shot mode,
 * reprogrammed at each expiry for whichever comes first.
 */
#ifndef KERNEL_TIMER_H
#define KERNEL_TIMER_H

#include <stdint.h>

#define TICK_HZ 100

struct ktimer {
	uint64_t deadline;		/* TSC cycles */
	void (*fn)(void *arg);		/* runs in interrupt context */
	void *arg;
	struct ktimer *next;
	int armed;
};

extern volatile uint64_t ticks;		/* ticks since timer_init */
extern uint64_t lapic_timer_hz;

/* Calibrate the LAPIC timer against the TSC and start the tick. */
void timer_init(void);

/* Arm t to call fn(arg) at TSC time deadline; re-arming moves it (irq). */
void timer_arm(struct ktimer *t, uint64_t deadline, void (*fn)(void *), void *arg);

/*
 * Call fn at every tick, in interrupt context (at most 4 hooks).  For
 * housekeeping that may be late by a tick and must not cost a timer
 * reprogramming of its own.
 */
void timer_add_tick_hook(void (*fn)(void));

/* Disarm t; harmless if not armed (irq).  Return 1 if it was armed. */
int timer_cancel(struct ktimer *t);

/* Print the tick count and the armed timers' first deadline (an NMI's dump). */
void timer_dump(void);

#endif
