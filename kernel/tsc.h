/*
 * Time: the TSC, calibrated at boot against the HPET (or the PIT when there
 * is no HPET).  Every latency the node reports is measured in TSC cycles.
 */
#ifndef KERNEL_TSC_H
#define KERNEL_TSC_H

#include <stdint.h>

#include "kernel/x86.h"

extern uint64_t tsc_hz;			/* calibrated cycles per second */
extern const char *tsc_source;		/* "hpet" or "pit" */

/* Calibrate; return 0, or -EIO if no reference clock gave a sane answer. */
int tsc_calibrate(void);

static inline uint64_t cycles(void) { return rdtsc(); }

uint64_t cycles_to_ns(uint64_t c);
uint64_t ns_to_cycles(uint64_t ns);

/* Nanoseconds since calibration. */
uint64_t now_ns(void);

/* Spin for at least ns nanoseconds (no scheduling). */
void delay_ns(uint64_t ns);

#endif
