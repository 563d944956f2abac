/*
 * Bench row floor-line: the physical floor of the shared-memory link, in
 * the same run as every other row.  Nodes 0 and 1 bounce one 64-bit word
 * through two cache lines of the memory the link is made of
 * (net_shared_lines): no ring, no driver, no frame.  Node 0 writes a
 * number into its line and spins until node 1's line holds it; node 1
 * spins on node 0's line and copies each new number into its own.  A
 * round trip with both nodes spinning, as floor-spin's, so that every
 * other row of the link can be read as a multiple of what the memory
 * itself costs (boot/tools/bench prints that ratio for every shm row).  On any
 * other link the row does not apply.
 */
#include <stdint.h>

#include "apps/app.h"
#include "apps/stats.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"
#include "net/net.h"
#include "tests/bench/bench.h"

#define STOP UINT64_MAX
#define ANSWER_NS 120000000000ULL	/* node 1 gives up after this without STOP */

static volatile uint64_t *line0, *line1;	/* node 0's and node 1's */
static uint64_t round_no;

static int applies(void)
{
	return net_shared_lines() != NULL;
}

static int setup(void)
{
	volatile uint8_t *l = net_shared_lines();

	if (!l)
		return -1;
	line0 = (volatile uint64_t *)l;
	line1 = (volatile uint64_t *)(l + 64);
	return 0;
}

/* Node 1, before the barrier: both lines cleared (the last round left STOP in node 0's). */
static void ready(int on)
{
	if (on) {
		*line1 = 0;
		*line0 = 0;
	}
}

static int time_line(const struct bench_opts *o, struct samples *s)
{
	/* Numbers never seen before in either line: the round in the high half. */
	uint64_t base = ++round_no << 32;

	for (int i = 0; i < o->warmup + o->iters; i++) {
		uint64_t v = base + (uint64_t)i + 1, t0 = rdtsc(), end = t0 + ns_to_cycles(1000000000ULL);
		*line0 = v;
		while (*line1 != v) {
			if (rdtsc() > end) {
				*line0 = STOP;
				return -1;	/* node 1 is not answering */
			}
		}
		uint64_t t1 = rdtsc();
		if (i >= o->warmup)
			samples_add(s, t1 - t0);
	}
	*line0 = STOP;
	return 0;
}

static int answer_line(const struct bench_opts *o)
{
	uint64_t end = rdtsc() + ns_to_cycles(ANSWER_NS), seen = 0, v;

	(void)o;
	while ((v = *line0) != STOP) {
		if (v != seen) {
			*line1 = v;
			seen = v;
		}
		if (rdtsc() > end)
			return -1;
	}
	return 0;
}

static const struct bench_pair line_pair = { setup, ready, time_line, answer_line };

static const struct bench floor_line_bench = {
	.name = "floor-line", .summary = "one word bounced through two lines of the shared memory, "
	"both nodes spinning: no ring, no driver", .sample_pair = &line_pair, .extra = "size=8 wait=spin",
	.applies = applies,
};
BENCH_REGISTER(floor_line_bench, 09_floor_line);
