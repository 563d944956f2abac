/*
 * Hybrid-deposit benchmark rows (hybrid deposit 5: "the round trip
 * latency for a 32 byte remote write ... send the same 32 bytes back"),
 * each beside the floor of the same run:
 *
 *  deposit           32-byte deposit one way: half of a deposit answered
 *                    by a deposit from the destination's receive path (its
 *                    conditional interrupt), compared with half the floor
 *  deposit-rtt       the paper's measurement: the destination's thread
 *                    wakes on the interrupt and sends the 32 bytes back
 *  deposit-read      remote read of 32 bytes, answered from the receive
 *                    path into the reader's endpoint (paper: 45 us)
 *  deposit-fetch-add fetch-and-increment of a remote register, round trip
 *  deposit-block-throughput  4 KiB AAL5 block transfers, 8 MiB
 *  deposit-seq       deposit one way as above, the cell an instruction
 *                    pointer whose three instructions the destination's
 *                    sequencer runs (DART 6.5: two register operations,
 *                    then the deposit); beside "deposit"
 *  deposit-mcast     a 32-byte deposit on a multicast connection (3.2) from
 *                    node 0 to every other node, each answering with a
 *                    deposit from its receive path: the time until every
 *                    member answered (members= on the line; boot/tools/bench
 *                    --nodes 4 gives the three members of the row)
 *
 * Nodes 0 and 1 open duplex connections 50..54 to each other; the
 * multicast row's connections are 56 and 60 + member.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "apps/app.h"
#include "apps/stats.h"
#include "kernel/mem.h"
#include "kernel/thread.h"
#include "kernel/tsc.h"
#include "net/call/barrier.h"
#include "net/deposit/deposit.h"
#include "net/fabric/fabric.h"
#include "net/net.h"
#include "tests/bench/bench.h"

#define EPSIZE 16384
enum { V_ONEWAY = 50, V_RTT = 51, V_READ = 52, V_TPUT = 53, V_SEQ = 54, V_MC = 56, V_MC_BACK = 60 };
#define SEQ_IP 240		/* node 1's instructions for V_SEQ: 240..242 */
#define MC_MAX 8
#define END_MARK 0xffffffffu
#define WAIT_NS 1000000000ULL

static uint8_t *ep_mem;
static struct dart_sendregs *sr[4], *sr_seq;
static volatile int echo;		/* node 1: answer deposits on V_ONEWAY */

static const uint64_t write_intr =
	DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT) | CO_INTR, 0, 0, CELL_COND(CMP_ALWAYS, 0, 0));

/* Node 1's receive path: a sequenced cell on V_SEQ is answered by a plain deposit. */
static void on_seq(void *arg, const struct dart_event *ev)
{
	(void)arg;
	if (echo && ev->operand != END_MARK)
		dep_send(sr_seq, write_intr, 0, DART_IDX(0, 0, 0, 0xff), 0);
}

/* Node 1's receive path: a deposit on V_ONEWAY is answered by a deposit. */
static void on_oneway(void *arg, const struct dart_event *ev)
{
	(void)arg;
	if (echo && ev->operand != END_MARK)
		dep_send(sr[0], write_intr, 0, DART_IDX(0, 0, 0, 0xff), 0);
}

/* An endpoint and duplex connections V_ONEWAY..V_TPUT between nodes 0 and 1.  0 or -1. */
static int setup(void)
{
	ep_mem = page_alloc_zeroed(EPSIZE);
	int ep = ep_mem ? dep_endpoint_create(ep_mem, EPSIZE, DART_EP_READ | DART_EP_WRITE) : -1;
	if (ep < 0)
		return -1;
	/* Register 0 of this node: the fetch-and-increment counter, open to the peer. */
	dep_reg_protect(0, DART_REG_R | DART_REG_W);
	for (int i = 0; i < 4; i++) {
		struct dep_conn_cfg cfg = { 1 - node_id, ep, DART_RX | DART_TX, V_ONEWAY + i, 0, 4, 0, 0, 0, 0 };
		if (dep_conn_open(V_ONEWAY + i, &cfg) < 0 || !(sr[i] = dep_sendregs(V_ONEWAY + i)))
			return -1;
	}
	if (node_id == 1 && dep_on_intr(V_ONEWAY, on_oneway, NULL) < 0)
		return -1;
	/*
	 * V_SEQ: at node 1 a window of three instructions the sequencer runs
	 * for one cell: b <- b + 1, c <- c + <b>, then the deposit at the
	 * message's operand with an interrupt (registers 4..7).
	 */
	struct dep_conn_cfg cfg = { 1 - node_id, ep, DART_RX | DART_TX, V_SEQ, 4, 4, SEQ_IP, 3, 0, 0 };
	if (dep_conn_open(V_SEQ, &cfg) < 0 || !(sr_seq = dep_sendregs(V_SEQ)))
		return -1;
	if (node_id == 1) {
		const struct cell_ctl inc_b = { CELL_OP(CK_NOP, CA_NONE), CELL_RO(ALU_ADD, CS_B, CSRC_OPERAND), 0, 0, 1,
						{ 0, 1, 2 }, 0 };
		const struct cell_ctl add_c = { CELL_OP(CK_NOP, CA_NONE), CELL_RO(ALU_ADD, CS_C, CSRC_B), 0, 0, 0,
						{ 0, 1, 2 }, 0 };
		const struct cell_ctl store = { CELL_OP(CK_WRITE, CA_DIRECT) | CO_INTR | CO_OPERAND_MSG, 0, 0,
						CELL_COND(CMP_ALWAYS, 0, 0), 0, { 0, 1, 2 }, 0xff };
		if (dep_instr_set(SEQ_IP, &inc_b, DART_I_ENTRY | DART_I_NEXT(1)) < 0 ||
		    dep_instr_set(SEQ_IP + 1, &add_c, DART_I_NEXT(2)) < 0 || dep_instr_set(SEQ_IP + 2, &store, 0) < 0 ||
		    dep_on_intr(V_SEQ, on_seq, NULL) < 0)
			return -1;
	}
	return 0;
}

/* Node 0: time deposit-and-wait pairs; go() sends, the answer is an interrupt on vci. */
static int timed_pairs(const struct bench_opts *o, struct samples *s, int vci, int (*go)(int i))
{
	uint64_t seen = 0;
	struct dep_conn_info ci;

	if (dep_conn_info(vci, &ci) < 0)
		return -1;
	seen = ci.interrupts;
	for (int i = 0; i < o->warmup + o->iters; i++) {
		uint64_t t0 = cycles();
		if (go(i) < 0 || dep_intr_wait(vci, &seen, WAIT_NS) < 0)
			return -1;
		if (i >= o->warmup)
			samples_add(s, cycles() - t0);
	}
	return 0;
}

static int go_oneway(int i)
{
	(void)i;
	return dep_send(sr[0], write_intr, 0, DART_IDX(0, 0, 0, 0xff), 0);
}

static void echo_oneway(int on)
{
	echo = on;
}

static int time_oneway(const struct bench_opts *o, struct samples *s)
{
	return timed_pairs(o, s, V_ONEWAY, go_oneway);
}

static const struct bench_pair oneway_pair = { setup, echo_oneway, time_oneway, NULL };

static int go_seq(int i)
{
	(void)i;
	return dep_send(sr_seq, DART_OPC(CELL_IP | 0, 0, 0, 0), 64, 0, 0);
}

static int time_seq(const struct bench_opts *o, struct samples *s)
{
	return timed_pairs(o, s, V_SEQ, go_seq);
}

static const struct bench_pair seq_pair = { setup, echo_oneway, time_seq, NULL };

/* --- multicast (3.2) -------------------------------------------------------------------- */

static struct dart_sendregs *mc_sr, *mc_back;
static volatile int mc_echo;
static int mc_state;			/* 0 not set up, 1 ready, -1 failed */

/* A member's receive path: each multicast cell is answered on its own connection back to node 0. */
static void on_mc(void *arg, const struct dart_event *ev)
{
	(void)arg;
	(void)ev;
	if (mc_echo)
		dep_send(mc_back, write_intr, 0, DART_IDX(0, 0, 0, 0xff), 0);
}

/* Every node, once: node 0's multicast connection to all others, and their connections back. */
static int mc_setup(void)
{
	static uint8_t *mem;

	if (mc_state)
		return mc_state > 0 ? 0 : -1;
	mc_state = -1;
	if (num_nodes > MC_MAX || !(mem = page_alloc_zeroed(4096)))
		return -1;
	int ep = dep_endpoint_create(mem, 4096, DART_EP_READ | DART_EP_WRITE);
	if (ep < 0)
		return -1;
	if (node_id == 0) {
		uint64_t others = ((1ULL << num_nodes) - 1) & ~1ULL;
		struct dep_conn_cfg cfg = { 1, ep, DART_TX, -1, 0, 0, 0, 0, 0, others };
		if (dep_conn_open(V_MC, &cfg) < 0 || !(mc_sr = dep_sendregs(V_MC)))
			return -1;
		for (int m = 1; m < num_nodes; m++) {
			struct dep_conn_cfg back = { m, ep, DART_RX, -1, 0, 0, 0, 0, 0, 0 };
			if (dep_conn_open(V_MC_BACK + m, &back) < 0)
				return -1;
		}
	} else {
		struct dep_conn_cfg in = { 0, ep, DART_RX, -1, 0, 0, 0, 0, 0, 0 };
		struct dep_conn_cfg back = { 0, ep, DART_TX, -1, 0, 0, 0, 0, 0, 0 };
		if (dep_conn_open(V_MC, &in) < 0 || dep_conn_open(V_MC_BACK + node_id, &back) < 0 ||
		    !(mc_back = dep_sendregs(V_MC_BACK + node_id)) || dep_on_intr(V_MC, on_mc, NULL) < 0)
			return -1;
	}
	mc_state = 1;
	return 0;
}

/* Node 0: a multicast deposit, then every member's answer. */
static int sample_mcast(const struct bench_opts *o, struct samples *s)
{
	uint64_t seen[MC_MAX] = { 0 };
	int r = mc_setup();

	mc_echo = r == 0;
	if (cluster_barrier(60000000000ULL) < 0 || r < 0)
		return -1;
	if (node_id == 0) {
		for (int m = 1; m < num_nodes; m++) {
			struct dep_conn_info ci;
			dep_conn_info(V_MC_BACK + m, &ci);
			seen[m] = ci.interrupts;
		}
		for (int i = 0; r == 0 && i < o->warmup + o->iters; i++) {
			uint64_t t0 = cycles();
			r = dep_send(mc_sr, write_intr, 0, DART_IDX(0, 0, 0, 0xff), 0);
			for (int m = 1; r == 0 && m < num_nodes; m++)
				if (dep_intr_wait(V_MC_BACK + m, &seen[m], WAIT_NS) < 0)
					r = -1;
			if (r == 0 && i >= o->warmup)
				samples_add(s, cycles() - t0);
		}
	}
	if (cluster_barrier(120000000000ULL) < 0)
		return -1;
	mc_echo = 0;
	return r < 0 ? -1 : 0;
}

static const char *mcast_note(void)
{
	static char buf[24];

	snprintf(buf, sizeof buf, "members=%d", num_nodes - 1);
	return buf;
}

static int go_rtt(int i)
{
	return dep_send(sr[1], write_intr, 32, DART_IDX(0, 0, 0, 0xff), (uint32_t)(i & 63) * 32);
}

/*
 * Node 1's thread: wait for each deposit and send the same 32 bytes back,
 * until the end mark.  seen counts the interrupts before node 0 began:
 * taken before the barrier, since node 0's first deposit may arrive right
 * behind the barrier's release, before this thread runs again.
 */
static int rtt_echo(uint64_t seen)
{
	for (;;) {
		long r = dep_intr_wait(V_RTT, &seen, 60000000000ULL);
		if (r < 0)
			return -1;
		uint32_t mark;
		memcpy(&mark, ep_mem + 32, 4);
		if (mark == END_MARK)
			return 0;
		if (dep_send(sr[1], write_intr, 32, DART_IDX(0, 0, 0, 0xff), 32) < 0)
			return -1;
	}
}

static uint64_t rtt_seen;		/* node 1: interrupts on V_RTT before the row */

static void rtt_ready(int on)
{
	struct dep_conn_info ci;

	if (!on)
		return;
	rtt_seen = dep_conn_info(V_RTT, &ci) == 0 ? ci.interrupts : 0;
	memset(ep_mem + 32, 0, 32);	/* the last round's end mark */
}

static int time_rtt(const struct bench_opts *o, struct samples *s)
{
	uint32_t mark = END_MARK;
	int r;

	memset(ep_mem, 0, 64 * 32);
	r = timed_pairs(o, s, V_RTT, go_rtt);
	memcpy(ep_mem + 4064, &mark, 4);
	memcpy(ep_mem + 4064 + 4, &mark, 4);
	if (dep_send(sr[1], write_intr, 32, DART_IDX(0, 0, 0, 0x01), 4064) < 0)
		r = -1;
	return r;
}

static int answer_rtt(const struct bench_opts *o)
{
	(void)o;
	return rtt_echo(rtt_seen);
}

static const struct bench_pair rtt_pair = { setup, rtt_ready, time_rtt, answer_rtt };

/* A READ of 32 bytes at offset 1024 of node 1; the reply deposits at 2048 here, with an interrupt. */
static int go_read(int i)
{
	(void)i;
	return dep_send(sr[2], DART_OPC(CELL_OP(CK_READ, CA_DIRECT), 0, 0, 0), 1024,
			DART_IDX(0, 0, 0, 0xff), 8192);
}

/* Fetch-and-increment of node 1's register 0; the old value deposits at 2080 here. */
static int go_fetch(int i)
{
	(void)i;
	return dep_send(sr[2], DART_OPC(CELL_OP(CK_FETCH, CA_NONE), CELL_RO(ALU_ADD, CS_A, CSRC_OPERAND), 0, 0),
			1, DART_IDX(0, 0, 0, 0x01), 8224);
}

static int (*request_go)(int);

static int time_request(const struct bench_opts *o, struct samples *s)
{
	/* The requests' data: the control of their replies. */
	dart_reply_ctl(ep_mem + 8192, write_intr, 2048, DART_IDX(0, 0, 0, 0xff));
	dart_reply_ctl(ep_mem + 8224, write_intr, 2080, DART_IDX(0, 0, 0, 0xff));
	return timed_pairs(o, s, V_READ, request_go);
}

static int sample_request(const struct bench_opts *o, struct samples *s, int (*go)(int))
{
	static const struct bench_pair p = { setup, NULL, time_request, NULL };

	request_go = go;
	return bench_pair_run(&p, o, s);
}

static int sample_read(const struct bench_opts *o, struct samples *s) { return sample_request(o, s, go_read); }
static int sample_fetch(const struct bench_opts *o, struct samples *s) { return sample_request(o, s, go_fetch); }

static int time_tput(const struct bench_opts *o, struct samples *s)
{
	const size_t total = 8u << 20, blk = 4096;
	uint64_t t0, ns, seen;
	struct dep_conn_info ci;
	int r = 0;

	(void)o;
	(void)s;
	dart_reply_ctl(ep_mem + 8192, write_intr, 2048, DART_IDX(0, 0, 0, 0xff));
	dep_conn_info(V_TPUT, &ci);
	seen = ci.interrupts;
	t0 = cycles();
	for (size_t done = 0; done < total && r == 0; done += blk) {
		sr[3]->size = blk / 16;
		r = dep_send(sr[3], DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0), (uint32_t)(done % (2 * blk)),
			     DART_IDX(0, 0, 0, 0xff), 0);
	}
	if (r == 0)
		r = dep_send(sr[3], DART_OPC(CELL_OP(CK_READ, CA_DIRECT), 0, 0, 0), 0, DART_IDX(0, 0, 0, 0xff), 8192);
	if (r == 0 && dep_intr_wait(V_TPUT, &seen, 120000000000ULL) < 0)
		r = -1;
	ns = cycles_to_ns(cycles() - t0);
	if (r < 0)
		return -1;
	char words[24];
	snprintf(words, sizeof words, "block=%zu", blk);
	bench_rate("deposit-block-throughput", total, ns, words, "mbytes_per_s", "-");
	return 0;
}

/* Sustained block transfers: 4 KiB blocks (256 x 16 bytes), then a READ to know they all landed. */
static const struct bench_pair tput_pair = { setup, NULL, time_tput, NULL };

static const struct bench dep_oneway = {
	.name = "deposit", .summary = "32-byte deposit, one way (half a deposit answered by a deposit)",
	.sample_pair = &oneway_pair, .extra = "size=32 oneway=1", .oneway = 1,
};
static const struct bench dep_rtt = {
	.name = "deposit-rtt", .summary = "32-byte deposit round trip, echoed by the destination's thread (paper 5)",
	.sample_pair = &rtt_pair, .extra = "size=32",
};
static const struct bench dep_read = {
	.name = "deposit-read", .summary = "remote read of 32 bytes, reply deposited with an interrupt",
	.sample = sample_read, .extra = "size=32",
};
static const struct bench dep_fetch = {
	.name = "deposit-fetch-add", .summary = "fetch-and-increment of a remote register, round trip",
	.sample = sample_fetch, .extra = "size=4",
};
static const struct bench dep_tput = {
	.name = "deposit-block-throughput", .summary = "4 KiB AAL5 block transfers, 8 MiB",
	.run_pair = &tput_pair,
};
static const struct bench dep_seq = {
	.name = "deposit-seq", .summary = "deposit-one-way whose cell runs three instructions through the sequencer",
	.sample_pair = &seq_pair, .extra = "size=32 oneway=1 instructions=3", .oneway = 1, .base = "deposit",
};
static const struct bench dep_mcast = {
	.name = "deposit-mcast", .summary = "32-byte deposit to every other node on a multicast connection, all answers",
	.sample = sample_mcast, .extra = "size=32", .note = mcast_note,
};
BENCH_REGISTER(dep_oneway, 50_deposit);
BENCH_REGISTER(dep_seq, 54_deposit_seq);
BENCH_REGISTER(dep_mcast, 55_deposit_mcast);
BENCH_REGISTER(dep_rtt, 51_deposit_rtt);
BENCH_REGISTER(dep_read, 52_deposit_read);
BENCH_REGISTER(dep_fetch, 53_deposit_fetch);
BENCH_REGISTER(dep_tput, 59_deposit_tput);
