/*
 * Host unit tests of kernel/calib.c: the rate taken from several
 * calibration windows when a busy host spoilt some of them.  The windows
 * below are figures a loaded host gave: a LAPIC timer of about 1000 MHz
 * read as 4109, 2170, 1770 or 1357 MHz by a single 5 ms window.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tests/host/unit.h"

#include "kernel/calib.h"

#define MHZ 1000000ULL

/* calib_pick of five windows, tolerance 50, which succeeds and keeps kept of them: its answer. */
static struct calib pick5(const uint64_t hz[5], const uint64_t *slack, uint64_t slack_max, int kept)
{
	struct calib c;

	assert_int_equal(calib_pick(hz, slack, 5, slack_max, 50, &c), 0);
	assert_int_equal(c.kept, kept);
	return c;
}

/* One window held up by the host (its slack shows it): left out. */
static void held_up_window_left_out(void **state)
{
	const uint64_t hz[5] = { 1000 * MHZ, 4109 * MHZ, 1001 * MHZ, 999 * MHZ, 1000 * MHZ };
	const uint64_t slack[5] = { 10, 90000, 12, 9, 11 };

	(void)state;
	struct calib c = pick5(hz, slack, 1000, 4);
	assert_true(c.hz == 1000 * MHZ || c.hz == 1001 * MHZ);
	assert_int_equal(c.lo, 999 * MHZ);
	assert_int_equal(c.hi, 1001 * MHZ);
	assert_false(c.disagree);
}

/* A spoilt window that its slack does not show: the median still holds. */
static void unseen_outliers_outvoted(void **state)
{
	const uint64_t hz[5] = { 2170 * MHZ, 1000 * MHZ, 1357 * MHZ, 1000 * MHZ, 1002 * MHZ };

	(void)state;
	struct calib c = pick5(hz, NULL, 0, 5);
	assert_int_equal(c.hz, 1002 * MHZ);
	assert_int_equal(c.lo, 1000 * MHZ);
	assert_int_equal(c.hi, 2170 * MHZ);
	assert_true(c.disagree);	/* and said */
}

/* Most windows held up: none is better than another, all are taken. */
static void most_held_up_all_taken(void **state)
{
	const uint64_t hz[5] = { 1000 * MHZ, 1770 * MHZ, 1003 * MHZ, 1001 * MHZ, 4109 * MHZ };
	const uint64_t slack[5] = { 5000, 90000, 5000, 7, 80000 };

	(void)state;
	struct calib c = pick5(hz, slack, 1000, 5);
	assert_int_equal(c.hz, 1003 * MHZ);
	assert_true(c.disagree);
}

/* Windows within the tolerance agree; one just past it does not. */
static void tolerance(void **state)
{
	const uint64_t near[3] = { 2096000000ULL, 2100000000ULL, 2110000000ULL };
	const uint64_t far[3] = { 2096000000ULL, 2100000000ULL, 2140000000ULL };
	struct calib c;

	(void)state;
	assert_int_equal(calib_pick(near, NULL, 3, 0, 100, &c), 0);
	assert_int_equal(c.hz, 2100000000ULL);
	assert_false(c.disagree);	/* 14 MHz < 1 % of 2100 */
	assert_int_equal(calib_pick(far, NULL, 3, 0, 100, &c), 0);
	assert_true(c.disagree);	/* 44 MHz > 21 */
	assert_int_equal(calib_pick(far, NULL, 3, 0, 0, &c), 0);
	assert_false(c.disagree);	/* no tolerance: never said */
}

static void bounds(void **state)
{
	uint64_t hz[CALIB_MAX_WINDOWS + 1] = { 5 };
	struct calib c;

	(void)state;
	assert_int_equal(calib_pick(hz, NULL, 0, 0, 50, &c), -1);
	assert_int_equal(calib_pick(hz, NULL, CALIB_MAX_WINDOWS + 1, 0, 50, &c), -1);
	assert_int_equal(calib_pick(hz, NULL, 1, 0, 50, &c), 0);
	assert_int_equal(c.hz, 5);
	assert_int_equal(c.kept, 1);
	const uint64_t slack[1] = { 99 };
	assert_int_equal(calib_pick(hz, slack, 1, 1, 50, &c), 0);	/* held up, but alone */
	assert_int_equal(c.kept, 1);
}

UNIT_MAIN("tests", NULL, NULL,
	  cmocka_unit_test(held_up_window_left_out),
	  cmocka_unit_test(unseen_outliers_outvoted),
	  cmocka_unit_test(most_held_up_all_taken),
	  cmocka_unit_test(tolerance),
	  cmocka_unit_test(bounds))
