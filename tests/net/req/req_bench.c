/*
 * Remote-enqueue benchmark rows: REQ one way, notification of a 40-byte
 * message one way (body by remote WRITE, then its offset by REQ: the use
 * the paper motivates), and REQ throughput.
 *
 * One way, without synchronized clocks: node 0's REQ (or message) makes
 * node 1 answer from its receive path with the same; node 0's thread waits
 * on its own queue and dequeues.  Half of the pair is the one-way figure,
 * compared with half the floor (oneway=1).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "apps/app.h"
#include "apps/stats.h"
#include "kernel/mem.h"
#include "kernel/thread.h"
#include "kernel/tsc.h"
#include "net/fabric/fabric.h"
#include "net/net.h"
#include "net/req/req.h"
#include "net/rmem/rmem.h"
#include "tests/bench/bench.h"

#define QBYTES 65536			/* the largest first buffer: few overflows */
#define SEGBYTES 4096

static int myq = -1, peerq = -1, myseg = -1, peer_rd = -1, echo;
static uint8_t *segmem;

/* Node 1's receive path: answer a REQ with a REQ, a message with a message. */
static void on_req(void *arg, int qid, uint32_t word)
{
	(void)arg;
	(void)qid;
	if (node_id != 1 || !echo)
		return;
	if (echo == 2)
		reqmsg_send(peer_rd, word, segmem + word, 40, peerq);
	else
		req_enqueue(peerq, word, 0);
}

/* Queues and segments both ways between nodes 0 and 1.  0 or -1. */
static int setup(void)
{
	segmem = page_alloc_zeroed(SEGBYTES);
	myq = req_create(QBYTES);
	myseg = segmem ? seg_export("reqbench", segmem, SEGBYTES, RMEM_RW) : -1;
	if (myq < 0 || myseg < 0 || req_export(myq, "reqbench") < 0 ||
	    req_notify(myq, on_req, NULL) < 0)
		return -1;
	for (int i = 0; i < 200 && (peerq < 0 || peer_rd < 0); i++) {
		if (peerq < 0)
			peerq = req_import(1 - node_id, "reqbench");
		if (peer_rd < 0)
			peer_rd = rmem_import(1 - node_id, "reqbench");
		if (peerq < 0 || peer_rd < 0)
			thread_sleep_ns(10000000);
	}
	return peerq >= 0 && peer_rd >= 0 ? 0 : -1;
}

/* Empty this node's queue between rounds (node 1's fills with our REQs). */
static void drain(void)
{
	uint32_t w[64];

	while (myq >= 0 && req_dequeue_many(myq, w, 64, NULL) > 0)
		;
}

static int mode;			/* 1: REQ, 2: message notified by REQ */

/* Node 1 answers (mode) from its receive path, or stops and empties its queue. */
static void echo_pairs(int on)
{
	echo = on ? mode : 0;
	if (!on)
		drain();
}

static int time_pairs(const struct bench_opts *o, struct samples *s)
{
	for (int i = 0; i < o->warmup + o->iters; i++) {
		uint32_t off = (uint32_t)(i % 64) * 48, got;
		int r;
		uint64_t t0 = cycles();
		if (mode == 2) {
			memset(segmem + off, i & 0xff, 40);
			r = reqmsg_send(peer_rd, off, segmem + off, 40, peerq);
		} else {
			r = req_enqueue(peerq, off, 0);
		}
		if (r < 0 || req_wait(myq, 1000000000ULL) != 1 || req_dequeue(myq, &got) != 1)
			return -1;
		uint64_t t1 = cycles();
		if (got != off || (mode == 2 && segmem[off] != (uint8_t)(i & 0xff)))
			return -1;
		if (i >= o->warmup)
			samples_add(s, t1 - t0);
	}
	drain();
	return 0;
}

static int sample_pair(const struct bench_opts *o, struct samples *s, int m)
{
	static const struct bench_pair p = { setup, echo_pairs, time_pairs, NULL };

	mode = m;
	return bench_pair_run(&p, o, s);
}

static int sample_req(const struct bench_opts *o, struct samples *s) { return sample_pair(o, s, 1); }
static int sample_msg(const struct bench_opts *o, struct samples *s) { return sample_pair(o, s, 2); }

/* REQs per second into node 1's queue, which node 1 drains meanwhile. */
static volatile int draining;

static void *drainer(void *arg)
{
	uint32_t w[64];

	(void)arg;
	while (draining)
		if (req_dequeue_many(myq, w, 64, NULL) <= 0)
			req_wait(myq, 10000000);
	return NULL;
}

static struct thread *drain_thread;

/* Node 1 drains its queue in a thread while node 0 enqueues; then stops and empties it. */
static void drain_during(int on)
{
	if (on) {
		draining = 1;
		drain_thread = thread_create("req-drain", drainer, NULL, PRIO_NORMAL, 0);
		return;
	}
	draining = 0;
	if (drain_thread)
		thread_join(drain_thread);
	drain_thread = NULL;
	drain();
}

static int time_tput(const struct bench_opts *o, struct samples *s)
{
	const int n = o->iters * 10 < 20000 ? 20000 : o->iters * 10;
	uint64_t t0, ns;
	int r = 0;

	(void)s;
	t0 = cycles();
	for (int i = 0; i < n && r == 0; i++)
		r = req_enqueue(peerq, (uint32_t)i, 0);
	if (r == 0)
		r = req_sync(peerq, 60000000000ULL);
	ns = cycles_to_ns(cycles() - t0);
	if (r < 0)
		return -1;
	uint64_t per_s = (uint64_t)n * 1000000000ULL / (ns ? ns : 1);
	result("row=req-throughput nic=%s reqs=%d ms=%lu.%03lu reqs_per_s=%lu base=-", net_nic_name(), n,
	       ns / 1000000, ns / 1000 % 1000, per_s);
	return 0;
}

static const struct bench_pair tput_pair = { setup, drain_during, time_tput, NULL };

/*
 * What a REQ costs its sender: the time until a non-blocking req_enqueue
 * returns (the paper, section 1: the operation "may return control within
 * a few (network interface) clock cycles").  Every 32 calls, untimed, the
 * sender waits for the queue's acknowledgements, so that no call waits for
 * the channel's window.
 */
static int time_issue(const struct bench_opts *o, struct samples *s)
{
	for (int i = 0; i < o->warmup + o->iters; i++) {
		uint64_t t0 = cycles();
		int r = req_enqueue(peerq, (uint32_t)i, 0);
		uint64_t t1 = cycles();
		if (r < 0)
			return -1;
		if (i >= o->warmup)
			samples_add(s, t1 - t0);
		if (i % 32 == 31 && req_sync(peerq, 60000000000ULL) < 0)
			return -1;
	}
	return req_sync(peerq, 60000000000ULL) < 0 ? -1 : 0;
}

static const struct bench_pair issue_pair = { setup, drain_during, time_issue, NULL };

static const struct bench req_issue = {
	.name = "req-issue", .summary = "what a REQ costs its sender: until req_enqueue returns",
	.sample_pair = &issue_pair, .extra = "size=4", .base = "-",
};

static const struct bench req_oneway = {
	.name = "req", .summary = "REQ of one word, one way (half a REQ answered by a REQ)",
	.sample = sample_req, .extra = "size=4 oneway=1", .oneway = 1,
};
static const struct bench req_msg = {
	.name = "req-notify-40", .summary = "40-byte message by WRITE, notified by REQ, one way",
	.sample = sample_msg, .extra = "size=40 oneway=1", .oneway = 1,
};
static const struct bench req_tput = {
	.name = "req-throughput", .summary = "REQs per second into a queue drained meanwhile",
	.run_pair = &tput_pair,
};
BENCH_REGISTER(req_oneway, 26_req);
BENCH_REGISTER(req_msg, 27_req_notify);
BENCH_REGISTER(req_tput, 28_req_tput);
BENCH_REGISTER(req_issue, 26_req_issue);
