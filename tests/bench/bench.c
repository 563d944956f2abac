/*
 * bench: every registered benchmark row in one cluster run (see bench.h).
 */
#include <stdio.h>
#include <string.h>

#include "apps/app.h"
#include "apps/stats.h"
#include "kernel/tsc.h"
#include "net/call/barrier.h"
#include "net/deposit/deposit.h"
#include "net/fabric/fabric.h"
#include "net/lwip/lwip_port.h"
#include "net/net.h"
#include "tests/bench/bench.h"

extern const struct bench *const __benches_start[], *const __benches_end[];

static void print_samples(const struct bench *b, const struct samples *s);

void bench_latency(const struct bench *b, struct samples *s)
{
	char a[32], c[32], d[32];
	uint64_t med = samples_quantile(s, 0.5), p99 = samples_quantile(s, 0.99);
	uint64_t mn = samples_quantile(s, 0.0);

	if (b->oneway) {
		med /= 2;
		p99 /= 2;
		mn /= 2;
	}
	result("row=%s nic=%s n=%zu median_us=%s p99_us=%s min_us=%s median_cycles=%lu%s%s%s%s%s%s",
	       b->name, net_nic_name(), s->n, fmt_us(a, sizeof a, med), fmt_us(c, sizeof c, p99),
	       fmt_us(d, sizeof d, mn), med, b->base ? " base=" : "", b->base ? b->base : "",
	       b->extra ? " " : "", b->extra ? b->extra : "", b->note ? " " : "",
	       b->note ? b->note() : "");
	if (arg_int("samples", 1))
		print_samples(b, s);
}

/*
 * Every sample of a row, in nanoseconds (halved for one-way rows, like the
 * row's line), SAMPLES_PER_LINE to a line, for boot/tools/bench's distributions:
 *
 *	SAMPLES bench row=<name> i=<index of the first> ns=<v>,<v>,...
 */
#define SAMPLES_PER_LINE 32

static void print_samples(const struct bench *b, const struct samples *s)
{
	char line[SAMPLES_PER_LINE * 12 + 64];

	for (size_t i = 0; i < s->n; i += SAMPLES_PER_LINE) {
		int len = snprintf(line, sizeof line, "SAMPLES bench row=%s i=%zu ns=", b->name, i);
		for (size_t k = i; k < s->n && k < i + SAMPLES_PER_LINE && len < (int)sizeof line - 12;
		     k++) {
			uint64_t ns = cycles_to_ns(s->v[k]) / (b->oneway ? 2 : 1);
			len += snprintf(line + len, sizeof line - (size_t)len, "%s%lu", k > i ? "," : "",
					ns);
		}
		printf("%s\n", line);
	}
}

#define MAX_SETUPS 16

static int is_latency(const struct bench *b)
{
	return b->sample || b->sample_pair;
}

void bench_rate(const char *row, uint64_t bytes, uint64_t ns, const char *words, const char *key,
		const char *base)
{
	uint64_t kbs = bytes * 1000000ULL / (ns ? ns : 1);	/* KB/s (10^3) */

	result("row=%s nic=%s bytes=%lu %s%sms=%lu.%03lu %s=%lu.%02lu base=%s", row, net_nic_name(),
	       (unsigned long)bytes, words ? words : "", words ? " " : "", (unsigned long)(ns / 1000000),
	       (unsigned long)(ns / 1000 % 1000), key, (unsigned long)(kbs / 1000),
	       (unsigned long)(kbs % 1000 / 10), base);
}

const char *bench_size_name(size_t size, char *out, size_t n)
{
	if (size >= (1u << 20))
		snprintf(out, n, "%zum", size >> 20);
	else
		snprintf(out, n, "%zuk", size >> 10);
	return out;
}

int bench_pair_run(const struct bench_pair *p, const struct bench_opts *o, struct samples *s)
{
	static int (*done[MAX_SETUPS])(void);
	static int ndone;
	int r = 0, i;

	if (p->setup && node_id <= 1) {
		for (i = 0; i < ndone && done[i] != p->setup; i++)
			;
		if (i == ndone) {
			if (p->setup() < 0 || ndone == MAX_SETUPS)
				return -1;
			done[ndone++] = p->setup;
		}
	}
	if (node_id == 1 && p->ready)
		p->ready(1);
	if (cluster_barrier(60000000000ULL) < 0)
		return -1;
	if (node_id == 0 && p->time)
		r = p->time(o, s);
	else if (node_id == 1 && p->answer)
		r = p->answer(o);
	/* Node 1 keeps answering until everyone is through. */
	if (cluster_barrier(120000000000ULL) < 0)
		return -1;
	if (node_id == 1 && p->ready)
		p->ready(0);
	return r;
}

static const struct argspec bench_args[] = {
	{ "iters", ARG_INT, 10, 10000000, "timed iterations per latency row (default 5000)" },
	{ "rounds", ARG_INT, 1, 1000, "interleaved rounds the iterations are split into (default 5)" },
	{ "warmup", ARG_INT, 0, 1000000, "untimed iterations before each round (default 100)" },
	{ "stats", ARG_INT, 0, 1, "1: print the fabric's, the NIC's and lwIP's counters at the end" },
	{ "only", ARG_STR, 0, 0, "run only rows named in this comma-separated list (substrings)" },
	{ "part", ARG_STR, 0, 0, "bulk: only the bulk (MB/s) rows; latency: all but those (default both)" },
	{ "bw", ARG_STR, 0, 0, "mad-bandwidth: only these drivers and sizes, e.g. cell,4m (default all)" },
	{ "bulkrounds", ARG_INT, 1, 100, "times each bulk row runs, in a row, a RESULT line each (default 1)" },
	{ "samples", ARG_BOOL, 0, 0, "print every sample of every latency row (default 1)" },
	{ NULL, 0, 0, 0, NULL },
};

#define MAX_ROWS 64

/* Does the comma-separated list of substrings name row? */
static int selected(const char *list, const char *row)
{
	char word[32];

	while (*list) {
		size_t n = strcspn(list, ",");
		if (n && n < sizeof word) {
			memcpy(word, list, n);
			word[n] = '\0';
			if (strstr(row, word))
				return 1;
		}
		list += n + (list[n] == ',');
	}
	return 0;
}

static int bench_main(void)
{
	const struct bench *rows[MAX_ROWS];
	struct samples samples[MAX_ROWS];
	int iters = (int)arg_int("iters", 5000), rounds = (int)arg_int("rounds", 5);
	int bulkrounds = (int)arg_int("bulkrounds", 1);
	struct bench_opts o = { 0, (int)arg_int("warmup", 100) };
	const char *only = arg_str("only", NULL), *part = arg_str("part", "");
	int n = 0, failed = 0, want_bulk = -1;

	if (!fabric_ready() || fabric_wait_peers(30000000000ULL) < 0) {
		printf("bench: no network\n");
		return 1;
	}
	if (strcmp(part, "bulk") == 0)
		want_bulk = 1;
	else if (strcmp(part, "latency") == 0)
		want_bulk = 0;
	else if (*part) {
		printf("bench: part=%s: not bulk or latency\n", part);
		return 1;
	}
	for (const struct bench *const *b = __benches_start; b < __benches_end && n < MAX_ROWS; b++)
		if ((!only || selected(only, (*b)->name)) && (!(*b)->applies || (*b)->applies()) &&
		    (want_bulk < 0 || !(*b)->bulk == !want_bulk))
			rows[n++] = *b;
	if (rounds > iters)
		rounds = iters;

	/* Latency rows, interleaved round by round. */
	for (int i = 0; i < n; i++)
		if (is_latency(rows[i]) && samples_init(&samples[i], (size_t)iters) < 0)
			return 1;
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < n; i++) {
			const struct bench *b = rows[i];
			if (!is_latency(b))
				continue;
			o.iters = iters / rounds;
			if (b->max_iters && o.iters > b->max_iters / rounds)
				o.iters = b->max_iters / rounds > 0 ? b->max_iters / rounds : 1;
			if (cluster_barrier(60000000000ULL) < 0) {
				printf("bench: barrier before %s failed\n", b->name);
				return 1;
			}
			if (node_id == 0 && r == 0)
				printf("bench: %s: %s\n", b->name, b->summary);
			if ((b->sample ? b->sample(&o, &samples[i]) : bench_pair_run(b->sample_pair, &o, &samples[i])) < 0) {
				printf("bench: row %s failed\n", b->name);
				failed++;
			}
		}
	}
	for (int i = 0; i < n; i++) {
		if (!is_latency(rows[i]))
			continue;
		if (node_id == 0)
			bench_latency(rows[i], &samples[i]);
		samples_free(&samples[i]);
	}

	/*
	 * Rows that report for themselves.  The bulk ones run bulkrounds
	 * times in a row, a RESULT line each time: one transfer of a few MiB
	 * lasts tens of milliseconds, and on a shared host one such sample
	 * moves by a third between minutes, so boot/tools/bench reports the
	 * median of the rounds beside their least and most.  In a row, not
	 * round by round as the latency rows: a row may leave the node in a
	 * state that rows before it cannot run in (mpi-bandwidth leaves MPI's
	 * receivers on the Madeleine channels that mad-bandwidth would use).
	 */
	o.iters = iters;
	for (int i = 0; i < n; i++) {
		const struct bench *b = rows[i];
		if (!b->run && !b->run_pair)
			continue;
		for (int r = 0; r < (b->bulk ? bulkrounds : 1); r++) {
			if (cluster_barrier(60000000000ULL) < 0)
				return 1;
			if (node_id == 0 && r == 0)
				printf("bench: %s: %s\n", b->name, b->summary);
			else if (node_id == 0)
				printf("bench: %s: round %d of %d\n", b->name, r + 1, bulkrounds);
			if ((b->run ? b->run(&o) : bench_pair_run(b->run_pair, &o, NULL)) < 0) {
				printf("bench: row %s failed\n", b->name);
				failed++;
			}
		}
	}
	cluster_barrier(60000000000ULL);
	if (arg_int("stats", 0)) {
		fabric_print_stats();
		net_print_stats();
		deposit_print_stats();
		if (lwip_port_ready())
			lwip_port_print_stats();
	}
	return failed ? 1 : 0;
}
APP(bench, "bench",
    "every benchmark row in one run (make bench)",
    bench_main, bench_args, 2);
