/*
 * Host unit tests of kernel/counters.c: a list of counters declared once
 * (kernel/counters.h) gives a struct's fields and the rows one routine
 * prints; each line as the header says, a LINE_IF line only where one of
 * its counters is not 0, an array's entries from its first printed one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/host/unit.h"

#include "kernel/counters.h"

static const char *const kinds[4] = { "none", "short", "long", "odd" };

#define TEST_COUNTERS(X) \
	X(LINE, "rx") \
	X(ONE, frames, "frames") \
	X(ONE, bytes, "bytes") \
	X(PART, "; refused") \
	X(EACH, refused, 1, 4, kinds) \
	X(LINE_IF, "injected") \
	X(ONE, drop, "drop") \
	X(ONE, dup, "dup") \
	X(LINE, "") \
	X(ONE, waits, "waits")

struct test_counters {
	TEST_COUNTERS(COUNTER_FIELD)
};

#define COUNTER_TYPE struct test_counters
static const struct counter_row rows[] = { TEST_COUNTERS(COUNTER_ROW) };
#undef COUNTER_TYPE

/* What counters_print wrote to stdout for c. */
static char *printed(const struct test_counters *c)
{
	static char out[1024];
	FILE *f = tmpfile();
	int saved = dup(1);
	size_t n;

	assert_non_null(f);
	fflush(stdout);
	dup2(fileno(f), 1);
	counters_print("mod", rows, COUNTER_ROWS(rows), c);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	rewind(f);
	n = fread(out, 1, sizeof out - 1, f);
	out[n] = 0;
	fclose(f);
	return out;
}

/* The struct holds one field per counter, an array whole; the rows name each. */
static void fields_and_rows_from_one_list(void **state)
{
	(void)state;
	assert_int_equal(sizeof(struct test_counters), 9 * sizeof(uint64_t));
	assert_int_equal(COUNTER_ROWS(rows), 10);
	assert_int_equal(rows[4].off, offsetof(struct test_counters, refused[1]));
	assert_int_equal(rows[4].n, 3);
}

/* Each counter "label value", a comma between, a part's text as it is; a LINE_IF of zeros left out. */
static void lines_as_the_header_says(void **state)
{
	struct test_counters c = { .frames = 7, .bytes = 1500, .refused = { 9, 1, 0, 2 }, .waits = 3 };

	(void)state;
	assert_string_equal(printed(&c),
			    "mod: rx frames 7, bytes 1500; refused short 1, long 0, odd 2\n"
			    "mod: waits 3\n");
}

/* One counter of a LINE_IF line not 0: the line, its zeros too. */
static void line_if_shows_with_one_counter(void **state)
{
	struct test_counters c = { .dup = 4 };

	(void)state;
	assert_string_equal(printed(&c),
			    "mod: rx frames 0, bytes 0; refused short 0, long 0, odd 0\n"
			    "mod: injected drop 0, dup 4\n"
			    "mod: waits 0\n");
}

/* The array's entries before its first printed one count for nothing, printed or not. */
static void an_arrays_first_entries_are_not_printed(void **state)
{
	struct test_counters c = { .refused = { 5 } };

	(void)state;
	assert_null(strstr(printed(&c), "none"));
}

UNIT_MAIN("counters", NULL, NULL,
	  cmocka_unit_test(fields_and_rows_from_one_list),
	  cmocka_unit_test(lines_as_the_header_says),
	  cmocka_unit_test(line_if_shows_with_one_counter),
	  cmocka_unit_test(an_arrays_first_entries_are_not_printed))
