/*
 * Remote-memory benchmark rows (remote-memory paper, Tables 2 and 3):
 * WRITE of 40 and 80 bytes one way, READ of 40 and 80 bytes, compare-and-
 * swap, and sustained write throughput, each beside the floor of the same
 * run.
 *
 * One-way WRITE latency without synchronized clocks: node 0 WRITEs into
 * node 1's segment with RMEM_INTR; node 1's notification, in its receive
 * path, WRITEs the same amount back; node 0 times the pair.  Half of that
 * is the one-way figure, compared with half the raw frame round trip (the
 * rows say oneway=1, and boot/tools/bench compares them with half the floor).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "apps/app.h"
#include "apps/stats.h"
#include "kernel/mem.h"
#include "kernel/sync.h"
#include "kernel/thread.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"
#include "net/fabric/fabric.h"
#include "net/net.h"
#include "net/rmem/rmem.h"
#include "tests/bench/bench.h"

#define BSEG 8192

static uint8_t *mem;			/* this node's exported "bench" segment */
static int myseg = -1, peer_rd = -1;
static volatile uint32_t echo_len;	/* node 1: answer writes with this many bytes */
static volatile uint64_t arrivals;
static struct waitq arrive_wq = WAITQ_INIT;

/* Receive path (irq): node 1 answers; node 0 counts and wakes the timer. */
static void on_write(void *arg, int seg, uint32_t off, uint32_t count)
{
	(void)arg;
	(void)seg;
	if (node_id == 1) {
		if (echo_len && off == 0)
			rmem_write(peer_rd, 0, mem, echo_len, RMEM_INTR);
		return;
	}
	(void)count;
	arrivals++;
	waitq_wake_one(&arrive_wq);
}

/* Export, import each other's segment (nodes 0 and 1). 0 or -1. */
static int setup(void)
{
	mem = page_alloc_zeroed(BSEG);
	if (!mem)
		return -1;
	myseg = seg_export("bench", mem, BSEG, RMEM_ALL);
	if (myseg < 0 || seg_notify(myseg, 1, on_write, NULL) < 0)
		return -1;
	/* The peer may export a moment later. */
	peer_rd = rmem_import_wait(1 - node_id, "bench", 2000000000ULL);
	return peer_rd < 0 ? -1 : 0;
}

static int wait_arrival(uint64_t seen)
{
	uint64_t end = cycles() + ns_to_cycles(1000000000ULL);
	irqflags_t f = irq_save();

	while (arrivals == seen && cycles() < end)
		waitq_wait_timeout(&arrive_wq, 100000000);
	irq_restore(f);
	return arrivals != seen;
}

static uint32_t write_len;

static void echo_writes(int on)
{
	echo_len = on ? write_len : 0;
}

static int time_write(const struct bench_opts *o, struct samples *s)
{
	for (int i = 0; i < o->warmup + o->iters; i++) {
		uint64_t seen = arrivals, t0 = cycles();
		mem[0] = (uint8_t)i;
		if (rmem_write(peer_rd, 0, mem, write_len, RMEM_INTR) < 0 || !wait_arrival(seen))
			return -1;
		if (i >= o->warmup)
			samples_add(s, cycles() - t0);
	}
	return 0;
}

static int sample_write(const struct bench_opts *o, struct samples *s, uint32_t len)
{
	static const struct bench_pair p = { setup, echo_writes, time_write, NULL };

	write_len = len;
	return bench_pair_run(&p, o, s);
}

static uint32_t read_len;

static int time_read(const struct bench_opts *o, struct samples *s)
{
	for (int i = 0; i < o->warmup + o->iters; i++) {
		uint64_t t0 = cycles();
		int h = rmem_read(peer_rd, 64, read_len, myseg, 1024, 0);
		if (h < 0 || rmem_read_wait(h, 1000000000ULL) < 0)
			return -1;
		if (i >= o->warmup)
			samples_add(s, cycles() - t0);
	}
	return 0;
}

static int sample_read(const struct bench_opts *o, struct samples *s, uint32_t len)
{
	static const struct bench_pair p = { setup, NULL, time_read, NULL };

	read_len = len;
	return bench_pair_run(&p, o, s);
}

static int time_cas(const struct bench_opts *o, struct samples *s)
{
	uint64_t old, v = 0;

	for (int i = 0; i < o->warmup + o->iters; i++) {
		uint64_t t0 = cycles();
		if (rmem_cas(peer_rd, 4096, v, v + 1, &old) < 0)
			return -1;
		v = old == v ? v + 1 : old;
		if (i >= o->warmup)
			samples_add(s, cycles() - t0);
	}
	return 0;
}

static const struct bench_pair cas_pair = { setup, NULL, time_cas, NULL };

static int w40(const struct bench_opts *o, struct samples *s) { return sample_write(o, s, 40); }
static int w80(const struct bench_opts *o, struct samples *s) { return sample_write(o, s, 80); }
static int r40(const struct bench_opts *o, struct samples *s) { return sample_read(o, s, 40); }
static int r80(const struct bench_opts *o, struct samples *s) { return sample_read(o, s, 80); }

/* Sustained throughput of asynchronous full-frame WRITEs (Table 3). */
static int time_write_tput(const struct bench_opts *o, struct samples *s)
{
	const size_t total = 8u << 20;		/* 8 MiB */
	uint64_t t0, ns;
	int r = 0;

	(void)o;
	(void)s;
	t0 = cycles();
	for (size_t done = 0; done < total && r == 0; done += RMEM_MAX_XFER)
		r = rmem_write(peer_rd, (uint32_t)(done % (BSEG - RMEM_MAX_XFER)), mem, RMEM_MAX_XFER, 0);
	if (r == 0)
		r = rmem_sync(peer_rd, 60000000000ULL);
	ns = cycles_to_ns(cycles() - t0);
	if (r < 0)
		return -1;
	bench_rate("write-throughput", total, ns, NULL, "mbytes_per_s", "-");
	return 0;
}

static const struct bench_pair write_tput_pair = { setup, NULL, time_write_tput, NULL };

static const struct bench write40 = {
	.name = "write-40", .summary = "40-byte WRITE, one way (half a write answered by a write)",
	.sample = w40, .extra = "size=40 oneway=1", .oneway = 1,
};
static const struct bench write80 = {
	.name = "write-80", .summary = "80-byte WRITE, one way",
	.sample = w80, .extra = "size=80 oneway=1", .oneway = 1,
};
static const struct bench read40 = {
	.name = "read-40", .summary = "40-byte READ into a local segment, round trip",
	.sample = r40, .extra = "size=40",
};
static const struct bench read80 = {
	.name = "read-80", .summary = "80-byte READ, round trip", .sample = r80, .extra = "size=80",
};
static const struct bench cas = {
	.name = "cas", .summary = "remote compare-and-swap, round trip", .sample_pair = &cas_pair,
	.extra = "size=8",
};
static const struct bench write_tput = {
	.name = "write-throughput", .summary = "sustained 1408-byte asynchronous WRITEs, 8 MiB",
	.run_pair = &write_tput_pair,
};
BENCH_REGISTER(write40, 21_write40);
BENCH_REGISTER(write80, 22_write80);
BENCH_REGISTER(read40, 23_read40);
BENCH_REGISTER(read80, 24_read80);
BENCH_REGISTER(cas, 25_cas);
BENCH_REGISTER(write_tput, 29_write_tput);
