/*
 * pingpong: the floor.  Node 0 sends a frame to node 1, which answers at
 * once from its receive path; node 0 times each round trip with the TSC.
 *
 * mode=raw: the fabric's raw mode, no protocol: the floor every other
 * latency is compared with.  mode=reliable: the same exchange over the
 * reliable channel (sequence numbers, acks, CRC), for its overhead.
 *
 * wait=halt: the waiting thread sleeps and the CPU halts until the NIC
 * interrupt.  wait=spin: the NIC interrupt is off and the thread polls the
 * receive ring.  wait=adaptive: the thread sleeps and the idle CPU polls
 * the receive ring for a while before it halts (net_set_wait; only where
 * polling is cheap: the shared-memory link).  Both nodes use the same
 * mode.  Raw frames whose reply has not come after a timeout are retried,
 * never timed; a reply that comes later still is counted as late, one
 * that never comes as lost.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "apps/app.h"
#include "apps/stats.h"
#include "kernel/sync.h"
#include "kernel/thread.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"
#include "net/call/barrier.h"
#include "net/fabric/fabric.h"
#include "net/net.h"
#include "tests/apps/protos.h"
#include "tests/bench/bench.h"

#define LOST_TIMEOUT_NS 200000000ULL

enum { PING = 'P', REPLY = 'R', END = 'E' };
enum { W_HALT, W_SPIN, W_ADAPTIVE, W_NODE };	/* W_NODE: as the node waits anyway */

static const char *const wait_names[] = { "halt", "spin", "adaptive" };

struct ping {
	uint32_t seq;
	uint8_t kind;
} __attribute__((packed));

static volatile uint32_t reply_seq;

/*
 * Raw pings whose reply did not come within LOST_TIMEOUT_NS.  A reply
 * that comes later (a vCPU descheduled on a loaded host) clears its
 * entry: the frame was late, not lost, and is counted as late.
 */
#define LATE_MAX 128
static volatile uint32_t timed_out[LATE_MAX];
static volatile int ntimed_out, late;
static volatile int end_flag;
static struct waitq wq = WAITQ_INIT;
static size_t payload_len;
static uint8_t pad[FAB_MTU];

/* The ping at the frame's start: 1, or 0 if it is too short for one. */
static int ping_of(const uint8_t *p, size_t len, struct ping *m)
{
	if (len < sizeof *m)
		return 0;
	memcpy(m, p, sizeof *m);
	return 1;
}

static int raw_handler(int src, const uint8_t *p, size_t len, struct pktbuf *pb)
{
	struct ping m;

	(void)pb;
	if (!ping_of(p, len, &m))
		return 0;
	if (m.kind == PING && node_id == 1) {
		struct pktbuf *r = pkt_get();
		if (r) {
			m.kind = REPLY;
			memcpy(fabric_payload(r), &m, sizeof m);
			fabric_raw_send_pb(src, APP_PROTO_PING, r, len);
			pkt_put(r);
		}
	} else if (m.kind == REPLY && node_id == 0) {
		reply_seq = m.seq;
		for (int i = 0; i < ntimed_out; i++) {
			if (timed_out[i] == m.seq) {
				timed_out[i] = 0;
				late++;
				break;
			}
		}
		waitq_wake_one(&wq);
	}
	return 0;
}

static int reliable_handler(int src, const uint8_t *p, size_t len, struct pktbuf *pb)
{
	struct ping m;

	(void)pb;
	if (!ping_of(p, len, &m))
		return 0;
	if (m.kind == PING && node_id == 1) {
		m.kind = REPLY;
		/* Refusing makes the fabric hold the ping and try again later. */
		if (fabric_send(src, APP_PROTO_PING, &m, sizeof m, pad, len - sizeof m, FABRIC_NOWAIT) < 0)
			return -EBUSY;
	} else if (m.kind == REPLY && node_id == 0) {
		reply_seq = m.seq;
		waitq_wake_one(&wq);
	} else if (m.kind == END) {
		end_flag = 1;
		waitq_wake_one(&wq);
	}
	return 0;
}

static int send_ping(int reliable, uint32_t seq)
{
	struct ping m = { seq, PING };

	if (reliable)
		return fabric_send(1, APP_PROTO_PING, &m, sizeof m, pad, payload_len - sizeof m, 0);
	struct pktbuf *pb = pkt_get();
	if (!pb)
		return -ENOBUFS;
	memcpy(fabric_payload(pb), &m, sizeof m);
	int r = fabric_raw_send_pb(1, APP_PROTO_PING, pb, payload_len);
	pkt_put(pb);
	return r;
}

/*
 * Wait for the reply to seq; 1 if it came.  A raw reply may be lost, so
 * raw waits end after LOST_TIMEOUT_NS.  The reliable channel loses
 * nothing: a late reply is only slow (a retransmission under a loaded
 * host), so a reliable wait lasts until it comes or the fabric declares
 * the peer dead, which it does after a bounded time.
 */
static int wait_reply(int reliable, int spin, uint32_t seq)
{
	uint64_t end = cycles() + ns_to_cycles(LOST_TIMEOUT_NS);

	for (;;) {
		if (spin) {
			while (reply_seq != seq && cycles() < end)
				net_poll();
		} else {
			irqflags_t f = irq_save();
			while (reply_seq != seq && cycles() < end)
				waitq_wait_timeout(&wq, cycles_to_ns(end - cycles()));
			irq_restore(f);
		}
		if (reply_seq == seq)
			return 1;
		if (!reliable || fabric_peer_dead(1))
			return 0;
		end = cycles() + ns_to_cycles(LOST_TIMEOUT_NS);
	}
}

/* Remember a raw ping that timed out; its reply may still come. */
static void note_timeout(uint32_t seq)
{
	irqflags_t f = irq_save();
	if (ntimed_out < LATE_MAX)
		timed_out[ntimed_out++] = seq;
	irq_restore(f);
}

/*
 * After the last round trip: give the replies of timed-out pings one more
 * timeout to come; return how many never did (the frames really lost).
 */
static int count_lost(int timeouts, int spin)
{
	uint64_t end = cycles() + ns_to_cycles(LOST_TIMEOUT_NS);

	while (late < ntimed_out && cycles() < end) {
		if (spin)
			net_poll();
		else
			thread_sleep_ns(1000000);
	}
	return timeouts - late;
}

/*
 * Node 0: timed round trips into s; return how many were lost, or -1.
 * A raw reply later than LOST_TIMEOUT_NS is retried like a lost one but
 * counted as late once it comes (`late`), not as lost.
 */
static int measure(int reliable, int spin, int iters, int warmup,
		   struct samples *s)
{
	static uint32_t seq;
	int timeouts = 0, errors = 0;

	ntimed_out = late = 0;

	for (int i = 0; i < warmup + iters;) {
		uint64_t t0, t1;
		seq++;
		t0 = cycles();
		if (send_ping(reliable, seq) < 0) {
			if (++errors > 100)
				return -1;
			thread_sleep_ns(1000000);
			continue;
		}
		if (!wait_reply(reliable, spin, seq)) {
			if (++timeouts > iters / 10 + 100)
				return -1;
			if (!reliable)
				note_timeout(seq);
			continue;
		}
		t1 = cycles();
		if (i >= warmup)
			samples_add(s, t1 - t0);
		i++;
	}
	return reliable ? timeouts : count_lost(timeouts, spin);
}

static void end_phase(void)
{
	struct ping m = { 0, END };

	fabric_send(1, APP_PROTO_PING, &m, sizeof m, NULL, 0, FABRIC_ACKNOW);
}

static void echo_phase(int spin)
{
	irqflags_t f;

	if (spin) {
		while (!end_flag)
			net_poll();
		return;
	}
	f = irq_save();
	while (!end_flag)
		waitq_wait(&wq);
	irq_restore(f);
}

static int registered;

static int setup(void)
{
	if (!net_up() || !fabric_ready())
		return -1;
	if (!registered) {
		fabric_register_raw(APP_PROTO_PING, raw_handler);
		fabric_register(APP_PROTO_PING, reliable_handler);
		registered = 1;
	}
	return 0;
}

/*
 * One measurement on every node: node 0 times, node 1 echoes, others
 * return at once.  On node 0, s holds the samples; return lost frames or -1.
 */
static int ping_phase(int reliable, int spin, int iters, int warmup, size_t frame,
		      struct samples *s)
{
	int lost = 0;

	if (setup() < 0)
		return -1;
	/* A keyed frame's trailer is part of its size. */
	payload_len = frame - FAB_ETH_HLEN - FAB_HDR_LEN - (fabric_keyed() ? FAB_TRAILER_LEN : 0);
	if (frame < FAB_ETH_HLEN + FAB_HDR_LEN + (fabric_keyed() ? FAB_TRAILER_LEN : 0) + 5 ||
	    payload_len > FAB_MTU) {
		printf("pingpong: size=%zu does not fit: a frame has %d bytes of headers%s and at most "
		       "%d of payload\n", frame, FAB_ETH_HLEN + FAB_HDR_LEN,
		       fabric_keyed() ? " and a 12-byte trailer" : "", FAB_MTU);
		return -1;
	}
	end_flag = 0;
	if (cluster_barrier(30000000000ULL) < 0)
		return -1;
	int before = net_wait_mode();
	unsigned before_us = net_wait_spin_us();
	if (spin == W_SPIN)
		net_set_polling(1);
	else if (spin != W_NODE)
		net_set_wait(spin == W_ADAPTIVE ? NET_WAIT_ADAPTIVE : NET_WAIT_HALT,
			     (unsigned)arg_int("spin_us", 200));
	if (node_id == 0) {
		lost = measure(reliable, spin == W_SPIN, iters, warmup, s);
		end_phase();
	} else if (node_id == 1) {
		echo_phase(spin == W_SPIN);
	}
	if (spin == W_SPIN)
		net_set_polling(0);
	if (spin != W_SPIN && spin != W_NODE)
		net_set_wait(before, before_us);
	return lost;
}

static const struct argspec pingpong_args[] = {
	{ "iters", ARG_INT, 1, 10000000, "timed round trips per measurement (default 10000)" },
	{ "spin_iters", ARG_INT, 1, 10000000,
	  "timed round trips when spinning (default 300: under TCG each takes milliseconds)" },
	{ "warmup", ARG_INT, 0, 1000000, "untimed round trips first (default 500)" },
	{ "size", ARG_INT, 51, 1514, "frame size in bytes, headers included (default 64; at most 1502, "
	  "or 1514 with a cluster key, whose trailer takes 12 of the bytes)" },
	{ "mode", ARG_STR, 0, 0, "raw, reliable or both (default raw)" },
	{ "wait", ARG_STR, 0, 0, "halt, spin, adaptive, both (halt and spin) or all (default both)" },
	{ "spin_us", ARG_INT, 0, 10000000, "wait=adaptive: poll this long before halting (default 200)" },
	{ NULL, 0, 0, 0, NULL },
};

static int pingpong_main(void)
{
	const char *mode = arg_str("mode", "raw"), *wait = arg_str("wait", "both");
	int iters = (int)arg_int("iters", 10000), warmup = (int)arg_int("warmup", 500);
	size_t frame = (size_t)arg_int("size", 64);
	int modes[2], nmodes = 0, waits[3], nwaits = 0, failed = 0;
	char a[32], b[32], c[32];

	if (!strcmp(mode, "raw") || !strcmp(mode, "both"))
		modes[nmodes++] = 0;
	if (!strcmp(mode, "reliable") || !strcmp(mode, "both"))
		modes[nmodes++] = 1;
	if (!strcmp(wait, "halt") || !strcmp(wait, "both") || !strcmp(wait, "all"))
		waits[nwaits++] = W_HALT;
	if (!strcmp(wait, "spin") || !strcmp(wait, "both") || !strcmp(wait, "all"))
		waits[nwaits++] = W_SPIN;
	if (!strcmp(wait, "adaptive") || !strcmp(wait, "all")) {
		if (net_set_wait(NET_WAIT_ADAPTIVE, 200) == 0) {
			net_set_wait(NET_WAIT_HALT, 0);
			waits[nwaits++] = W_ADAPTIVE;
		} else {
			printf("pingpong: wait=adaptive: %s can only halt (polling it would stall QEMU)\n",
			       net_nic_name());
		}
	}
	if (!nmodes || !nwaits) {
		printf("pingpong: mode= takes raw, reliable or both; wait= takes halt, spin, adaptive, "
		       "both or all\n");
		return 1;
	}
	if (setup() < 0 || fabric_wait_peers(30000000000ULL) < 0) {
		printf("pingpong: no network\n");
		return 1;
	}
	for (int m = 0; m < nmodes; m++) {
		for (int w = 0; w < nwaits; w++) {
			struct samples s;
			int spin = waits[w] == W_SPIN;
			int n = spin ? (int)arg_int("spin_iters", 300) : iters;
			if (samples_init(&s, (size_t)n) < 0)
				return 1;
			int lost = ping_phase(modes[m], waits[w], n, spin ? 10 : warmup, frame, &s);
			if (node_id == 0) {
				uint64_t med = samples_quantile(&s, 0.5);
				result("nic=%s wait=%s mode=%s size=%zu iters=%zu lost=%d median_us=%s "
				       "p99_us=%s median_cycles=%lu min_us=%s late=%d",
				       net_nic_name(), wait_names[waits[w]], modes[m] ? "reliable" : "raw",
				       frame, s.n, lost, fmt_us(a, sizeof a, med),
				       fmt_us(b, sizeof b, samples_quantile(&s, 0.99)), med,
				       fmt_us(c, sizeof c, samples_quantile(&s, 0.0)), late);
				if (lost < 0 || (int)s.n != n || (modes[m] && lost > 0))
					failed++;
			}
			samples_free(&s);
		}
	}
	cluster_barrier(30000000000ULL);
	if (node_id < 2)
		fabric_print_stats();
	return failed ? 1 : 0;
}

/* Bench rows: the floor (raw, both wait modes) and the reliable channel. */
static int sample_ping(const struct bench_opts *o, struct samples *s, int reliable, int wait)
{
	int lost = ping_phase(reliable, wait, o->iters, wait == W_SPIN ? 10 : o->warmup, 64, s);
	return lost < 0 || (reliable && lost > 0) ? -1 : 0;
}

/*
 * The floor and the reliable row wait as the node waits for every other row
 * (halt on a NIC, adaptive on the shared-memory link by default), so that
 * the ratios compare like with like; floor-spin and floor-halt show the
 * link's other modes.
 */
static int sample_floor(const struct bench_opts *o, struct samples *s) { return sample_ping(o, s, 0, W_NODE); }
static int sample_floor_spin(const struct bench_opts *o, struct samples *s) { return sample_ping(o, s, 0, W_SPIN); }
static int sample_floor_halt(const struct bench_opts *o, struct samples *s) { return sample_ping(o, s, 0, W_HALT); }
static int sample_reliable(const struct bench_opts *o, struct samples *s) { return sample_ping(o, s, 1, W_NODE); }

static const char *node_wait(void)
{
	static const char *const names[] = { "wait=halt", "wait=adaptive", "wait=spin" };
	int m = net_wait_mode();

	return m >= 0 && m <= NET_WAIT_SPIN ? names[m] : "wait=?";
}

/* Does the node wait otherwise than by halting (so that halting is a row of its own)? */
static int waits_otherwise(void)
{
	return net_wait_mode() != NET_WAIT_HALT;
}

static const struct bench floor_bench = {
	.name = "floor", .summary = "raw 64-byte frame round trip, waiting as every row does",
	.sample = sample_floor, .extra = "size=64", .note = node_wait,
};
static const struct bench floor_halt_bench = {
	.name = "floor-halt", .summary = "raw 64-byte frame round trip, halting until the doorbell",
	.sample = sample_floor_halt, .extra = "size=64 wait=halt", .applies = waits_otherwise,
};
static const struct bench floor_spin_bench = {
	.name = "floor-spin", .summary = "raw 64-byte frame round trip, spinning on the receive ring",
	.sample = sample_floor_spin, .extra = "size=64 wait=spin",
	/* Spinning under TCG costs milliseconds a round trip: fewer of them. */
	.max_iters = 250,
};
static const struct bench reliable_bench = {
	.name = "reliable", .summary = "64-byte message round trip over the reliable channel",
	.sample = sample_reliable, .extra = "size=64", .note = node_wait,
};
BENCH_REGISTER(floor_bench, 10_floor);
BENCH_REGISTER(floor_spin_bench, 11_floor_spin);
BENCH_REGISTER(floor_halt_bench, 12_floor_halt);
BENCH_REGISTER(reliable_bench, 20_reliable);

APP(pingpong, "pingpong",
    "raw-frame round trip between nodes 0 and 1: the floor (and the reliable channel's)",
    pingpong_main, pingpong_args, 2);
