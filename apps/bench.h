/*
 * Benchmark rows.  Each module registers its rows with BENCH_REGISTER; the
 * bench app runs every row in name order on every node (nodes 0 and 1 do
 * the work, the others wait), with a barrier between rows, and each row
 * prints one or more lines
 *   RESULT bench row=<name> nic=<driver> median_us=.. p99_us=.. median_cycles=.. ...
 * that tests/bench.py turns into the table and build/bench/results.json,
 * with every latency as a ratio to the floor (row "floor") of the same run.
 */
#ifndef APPS_BENCH_H
#define APPS_BENCH_H

#include <stddef.h>
#include <stdint.h>

struct bench_opts {
	int iters;		/* timed iterations of a latency row */
	int warmup;
};

struct bench {
	const char *name;	/* sorts the rows: "10-floor", "20-reliable", ... */
	const char *summary;
	/* Run on every node; 0 or -1.  Print RESULT lines with bench_result(). */
	int (*run)(const struct bench_opts *o);
};

/* key orders the rows in the run, e.g. 10_floor, 20_reliable. */
#define BENCH_REGISTER(b, key) \
	static const struct bench *const bench_ptr_##b __attribute__((used, section(".benches." #key))) = &(b)

/*
 * Print a latency row from cycle samples (sorted in place).  extra is
 * appended (may be NULL).
 */
struct samples;
void bench_latency(const char *row, struct samples *s, const char *extra);

#endif
