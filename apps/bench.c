/*
 * bench: every registered benchmark row in one cluster run (see bench.h).
 */
#include <stdio.h>
#include <string.h>

#include "apps/app.h"
#include "apps/bench.h"
#include "apps/stats.h"
#include "kernel/tsc.h"
#include "net/fabric.h"
#include "net/netdev.h"

extern const struct bench *const __benches_start[], *const __benches_end[];

void bench_latency(const char *row, struct samples *s, const char *extra)
{
	char a[32], b[32], c[32];
	uint64_t med = samples_quantile(s, 0.5), p99 = samples_quantile(s, 0.99);
	uint64_t mn = samples_quantile(s, 0.0);
	struct netdev *nd = netdev_get();

	result("row=%s nic=%s n=%zu median_us=%s p99_us=%s min_us=%s median_cycles=%lu%s%s", row,
	       nd ? nd->name : "none", s->n, fmt_us(a, sizeof a, med), fmt_us(b, sizeof b, p99),
	       fmt_us(c, sizeof c, mn), med, extra ? " " : "", extra ? extra : "");
}

static const struct argspec bench_args[] = {
	{ "iters", ARG_INT, 10, 10000000, "timed iterations per latency row (default 5000)" },
	{ "warmup", ARG_INT, 0, 1000000, "untimed iterations first (default 300)" },
	{ "only", ARG_STR, 0, 0, "run only rows whose name contains this" },
	{ NULL, 0, 0, 0, NULL },
};

static int bench_main(void)
{
	struct bench_opts o = { (int)arg_int("iters", 5000), (int)arg_int("warmup", 300) };
	const char *only = arg_str("only", NULL);
	int failed = 0;

	if (!fabric_ready() || fabric_wait_peers(30000000000ULL) < 0) {
		printf("bench: no network\n");
		return 1;
	}
	for (const struct bench *const *b = __benches_start; b < __benches_end; b++) {
		if (only && !strstr((*b)->name, only))
			continue;
		if (fabric_barrier(60000000000ULL) < 0) {
			printf("bench: barrier before %s failed\n", (*b)->name);
			return 1;
		}
		if (node_id == 0)
			printf("bench: %s: %s\n", (*b)->name, (*b)->summary);
		if ((*b)->run(&o) < 0) {
			printf("bench: row %s failed\n", (*b)->name);
			failed++;
		}
	}
	fabric_barrier(60000000000ULL);
	return failed ? 1 : 0;
}

static const struct app bench = {
	.name = "bench",
	.summary = "every benchmark row in one run (make bench)",
	.main = bench_main,
	.args = bench_args,
	.min_nodes = 2,
};
APP_REGISTER(bench);
