/*
 * Benchmark rows.  Each module registers its rows with BENCH_REGISTER; the
 * bench app runs every row in name order on every node (nodes 0 and 1 do
 * the work, the others wait), with a barrier between rows, and each row
 * prints one or more lines
 *   RESULT bench row=<name> nic=<driver> median_us=.. p99_us=.. median_cycles=.. ...
 * that boot/tools/bench turns into the table and build/bench/results.json,
 * with every latency as a ratio to the floor (row "floor") of the same run.
 */
#ifndef TESTS_BENCH_BENCH_H
#define TESTS_BENCH_BENCH_H

#include <stddef.h>
#include <stdint.h>

struct bench_opts {
	int iters;		/* timed iterations of a latency row, per round */
	int warmup;		/* untimed iterations before each round */
};

struct samples;

struct bench_pair;

struct bench {
	const char *name;	/* the row's name in the table */
	const char *summary;
	/*
	 * A latency row: called once per round on every node; node 0 adds
	 * o->iters round-trip (or one-way) samples in TSC cycles to s.  The
	 * rounds of all latency rows interleave, so drift on the host affects
	 * each row alike.  Return 0 or -1.
	 */
	int (*sample)(const struct bench_opts *o, struct samples *s);
	/* Or a row that runs once, after the latency rows, and prints its own lines. */
	int (*run)(const struct bench_opts *o);
	/* Or either as a row between nodes 0 and 1 (bench_pair_run, below). */
	const struct bench_pair *sample_pair, *run_pair;
	const char *extra;	/* latency rows: more key=value words for the line */
	const char *base;	/* latency rows: the row its ratio is to (NULL: floor) */
	int max_iters;		/* latency rows: cap on iterations per round (0: none) */
	int oneway;		/* latency rows: samples are two one-way trips; print half */
	/* NULL, or whether the row means anything on this node's NIC. */
	int (*applies)(void);
	/* NULL, or more key=value words for the line, known only when it runs. */
	const char *(*note)(void);
	/*
	 * A bulk row (MB/s, a node sending as fast as it can): the bench's
	 * part=bulk runs these alone, part=latency the others, so that
	 * make bench can give bulk transfers a host CPU per node (as the
	 * Linux guests beside them have) and keep the latency rows on one.
	 */
	int bulk;
};

/* key orders the rows in the run, e.g. 10_floor, 20_reliable. */
#define BENCH_REGISTER(b, key) \
	static const struct bench *const bench_ptr_##b __attribute__((used, section(".benches." #key))) = &(b)

/* Print a latency row from cycle samples (sorted in place). */
void bench_latency(const struct bench *b, struct samples *s);

/*
 * Print a throughput row: bytes moved in ns, as
 *	RESULT bench row=<row> nic=<nic> bytes=B [words ]ms=T <key>=M.MM base=<base>
 * with M in MB/s (10^6 bytes); key is the row's (mb_per_s, or
 * mbytes_per_s for the remote memory paper's rows), words NULL or more
 * key=value words.
 */
void bench_rate(const char *row, uint64_t bytes, uint64_t ns, const char *words, const char *key,
		const char *base);

/* A message size as the rows name it: "4k", "256k", "4m". */
const char *bench_size_name(size_t size, char *out, size_t n);

/*
 * A row between nodes 0 and 1, in the shape the mechanisms' rows share:
 * nodes 0 and 1 set up (setup, once per node however many rows name it;
 * the other nodes only meet at the barriers), node 1 gets ready to answer
 * (ready(1)), every node meets at a barrier, node 0 times the operations
 * (time) while node 1 answers (answer, if the answers need a thread; else
 * the receive path answers), every node meets again, node 1 stops
 * (ready(0)).  Any function may be NULL.  0, or -1 if a step failed.
 */
struct bench_pair {
	int (*setup)(void);
	void (*ready)(int on);
	int (*time)(const struct bench_opts *o, struct samples *s);
	int (*answer)(const struct bench_opts *o);
};

int bench_pair_run(const struct bench_pair *p, const struct bench_opts *o, struct samples *s);

#endif
