/*
 * The rate a clock runs at, from several calibration windows: what a busy
 * host does to one window (stops this CPU between a read of the reference
 * and a read of the clock) moves that window only.  Pure logic: the LAPIC
 * timer (kernel/timer.c) and the TSC (kernel/tsc.c) take their windows
 * and hand them here; host unit tests feed it windows a host spoilt.
 */
#ifndef KERNEL_CALIB_H
#define KERNEL_CALIB_H

#include <stdint.h>

#define CALIB_MAX_WINDOWS 8

struct calib {
	uint64_t hz;			/* the median of the windows kept */
	uint64_t lo, hi;		/* the range of the windows kept */
	int kept;			/* windows kept */
	int disagree;			/* hi - lo over 1/tolerance of hz */
};

/*
 * n windows' rates hz[] (1..CALIB_MAX_WINDOWS).  With slack (may be NULL):
 * a window whose reads were held up by more than slack_max is left out,
 * unless fewer than half of them (at least one) would be left.  The median
 * of the rest is the rate; they disagree when their range exceeds
 * hz / tolerance.  0, or -1 if n is out of range.
 */
int calib_pick(const uint64_t *hz, const uint64_t *slack, int n, uint64_t slack_max,
	       uint64_t tolerance, struct calib *out);

#endif
