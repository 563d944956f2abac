/*
 * libFuzzer target: the receive path from a NIC to the protocols, as the
 * kernel runs it: a fake NIC (this file) registered with the real
 * drivers/netdev.c, whose poll hands frames of any length and content up
 * through netdev_input (in a pktbuf) or netdev_input_frame (in the NIC's
 * own memory, as the shared-memory link does), the EtherType
 * demultiplexer of net/net.c attached
 * by its own init hook, and handlers registered and unregistered with
 * net_register/net_unregister as the input says.
 *
 * Input: operations, each one byte (bits 0-1) and operands:
 *   0 register handler h (0..9) for a type (16 bits),
 *   1 unregister a type,
 *   2 a frame: length (16 bits, at most the buffer) and its bytes; the
 *     operation's bits 2-7 say whether the handler keeps the buffer for a
 *     while, and whether the NIC hands it up in place,
 *   3 attach the demultiplexer (net's init hook), if not yet.
 *
 * Checked, __builtin_trap() on a broken promise:
 *  - registration agrees with a model of a table of 8 types (-EBUSY for a
 *    type taken or a full table, -ENOENT for a type not there);
 *  - every frame reaches exactly the handler registered for its type, with
 *    its bytes and length, or is counted short, unknown or hookless and
 *    freed; the counters of netdev and net add up;
 *  - no buffer is lost or freed twice (host_pktbuf counts them), whether
 *    the handler frees it at once or later.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/netdev.h"
#include "drivers/pktbuf.h"
#include "kernel/init.h"
#include "kernel/sync.h"
#include "kernel/trace.h"
#include "net/net.h"
#include "tests/host/input.h"
#include "tests/host/quiet.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)
#define NTYPES_MAX 8
#define NH 10

/* --- what the files need from the kernel ---------------------------------------- */

static const struct init_hook *net_hook;

void host_init_hook_add(const struct init_hook *h)
{
	if (h->level == INIT_SUBSYS_1)
		net_hook = h;
}

volatile int trace_on;
volatile int in_irq;
void thread_nopreempt_begin(void) {}
void thread_nopreempt_end(void) {}
struct trace_rec trace_cur;
void trace_mark(trace_stage_t s) { (void)s; }
uint64_t ns_to_cycles(uint64_t ns) { return ns; }
uint64_t cycles_to_ns(uint64_t c) { return c; }
int waitq_wait_timeout(struct waitq *wq, uint64_t ns)
{
	(void)wq, (void)ns;
	return 0;
}
int waitq_wake_all(struct waitq *wq)
{
	(void)wq;
	return 0;
}

/* --- the fake NIC ------------------------------------------------------------------ */

static const uint8_t *frame_src;
static size_t frame_len;
static int frame_waiting, frame_in_place;

/* ops->poll: the NIC's receive ring holds at most the one frame the input gave. */
static int fake_poll(struct netdev *nd, int budget)
{
	struct pktbuf *pb;

	if (!frame_waiting || budget < 1)
		return 0;
	frame_waiting = 0;
	if (frame_in_place) {
		static uint8_t mine[PKT_BUF_SIZE];
		memcpy(mine, frame_src, frame_len);
		CHECK(netdev_input_frame(nd, mine, frame_len) == 0);	/* the pool never runs out here */
		return 1;
	}
	pb = pkt_get();
	CHECK(pb);
	memcpy(pb->data, frame_src, frame_len);
	pb->len = (uint16_t)frame_len;
	netdev_input(nd, pb);
	return 1;
}

static void fake_irq_enable(struct netdev *nd, int on)
{
	(void)nd, (void)on;
}

static int fake_transmit(struct netdev *nd, struct pktbuf *pb)
{
	(void)nd;
	pkt_put(pb);
	return 0;
}

static const struct netdev_ops fake_ops = {
	.transmit = fake_transmit,
	.poll = fake_poll,
	.irq_enable = fake_irq_enable,
};

/* Its frames fill a small buffer (PKT_MAX_FRAME): longer than Ethernet's, as the model expects. */
static struct netdev nic = { .name = "fake", .ops = &fake_ops, .frame_max = PKT_MAX_FRAME };

/* --- handlers and the model ------------------------------------------------------- */

static struct {
	int used;
	uint16_t type;
	int h;
} model[NTYPES_MAX];

static int hit_h = -1;			/* the handler that took the last frame */
static struct pktbuf *hit_pb, *kept[4];
static int keep_next;

static void handle(int h, struct pktbuf *pb)
{
	CHECK(hit_h < 0);
	hit_h = h;
	hit_pb = pb;
	if (keep_next) {			/* freed later, after other frames */
		int k = keep_next - 1;
		if (kept[k])
			pkt_put(kept[k]);
		kept[k] = pb;
	} else {
		pkt_put(pb);
	}
}

#define H(n) static void h##n(struct pktbuf *pb) { handle(n, pb); }
H(0) H(1) H(2) H(3) H(4) H(5) H(6) H(7) H(8) H(9)
static const ethertype_handler_t handlers[NH] = { h0, h1, h2, h3, h4, h5, h6, h7, h8, h9 };

static int model_find(uint16_t type)
{
	for (int i = 0; i < NTYPES_MAX; i++)
		if (model[i].used && model[i].type == type)
			return i;
	return -1;
}

static int model_register(uint16_t type, int h)
{
	if (model_find(type) >= 0)
		return -EBUSY;
	for (int i = 0; i < NTYPES_MAX; i++)
		if (!model[i].used) {
			model[i].used = 1;
			model[i].type = type;
			model[i].h = h;
			return 0;
		}
	return -EBUSY;
}

static int model_unregister(uint16_t type)
{
	int i = model_find(type);

	if (i < 0)
		return -ENOENT;
	model[i].used = 0;
	return 0;
}

/* --- the input ---------------------------------------------------------------------- */

/* in, in_left and take(): tests/host/input.h */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int registered;
	static uint8_t frame[PKT_BUF_SIZE];
	struct net_stats ns0 = net_stats;
	struct netdev_stats nd0 = nic.stats;
	int attached = 0;

	if (!registered) {
		registered = 1;
		CHECK(pkt_pool_init(8) == 0);
		CHECK(net_transmit(NULL) == -ENODEV);	/* no NIC yet */
		CHECK(netdev_register(&nic) == 0);
		CHECK(netdev_register(&nic) == -EBUSY);
	}
	/* Every handler from the last input goes, and the demultiplexer. */
	netdev_set_rx(&nic, NULL, NULL);
	for (int i = 0; i < NTYPES_MAX; i++)
		if (model[i].used)
			CHECK(net_unregister(model[i].type) == 0);
	memset(model, 0, sizeof model);
	in = data;
	in_left = size;
	for (int n = 0; in_left && n < 256; n++) {
		unsigned op = take(1);
		uint16_t type;
		int h;

		switch (op & 3) {
		case 0:
			type = (uint16_t)take(2);
			h = (int)(op >> 2) % NH;
			CHECK(net_register(type, handlers[h]) == model_register(type, h));
			break;
		case 1:
			type = (uint16_t)take(2);
			CHECK(net_unregister(type) == model_unregister(type));
			break;
		case 2: {
			size_t len = take(2) % (PKT_BUF_SIZE - PKT_HEADROOM + 1);
			for (size_t i = 0; i < len; i++)
				frame[i] = (uint8_t)take(1);
			keep_next = (int)(op >> 2) % 5;
			frame_in_place = (op >> 5) & 1;
			struct netdev_stats before = nic.stats;
			struct net_stats nb = net_stats;
			int free_before = pkt_free_count();
			frame_src = frame;
			frame_len = len;
			frame_waiting = 1;
			hit_h = -1;
			hit_pb = NULL;
			CHECK(netdev_poll(&nic) == 1);
			CHECK(nic.stats.rx_frames == before.rx_frames + 1);
			CHECK(nic.stats.rx_bytes == before.rx_bytes + len);
			int want = len >= ETH_HLEN ? model_find((uint16_t)(frame[12] << 8 | frame[13])) : -1;
			if (!attached) {
				CHECK(hit_h < 0 && nic.stats.rx_no_hook == before.rx_no_hook + 1);
			} else if (len < ETH_HLEN) {
				CHECK(hit_h < 0 && net_stats.short_frames == nb.short_frames + 1);
			} else if (want < 0) {
				CHECK(hit_h < 0 && net_stats.unknown_type == nb.unknown_type + 1);
			} else {
				CHECK(hit_h == model[want].h && net_stats.delivered == nb.delivered + 1);
				if (keep_next == 0)	/* freed: nothing else to look at */
					CHECK(pkt_free_count() == free_before);
				else
					CHECK(hit_pb->len == len && memcmp(hit_pb->data, frame, len) == 0);
			}
			if (!attached || hit_h < 0)
				CHECK(pkt_free_count() == free_before);
			break;
		}
		default:
			if (!attached) {
				CHECK(net_hook && net_hook->fn() == 0);
				attached = 1;
			}
			break;
		}
	}
	for (int k = 0; k < 4; k++)
		if (kept[k]) {
			pkt_put(kept[k]);
			kept[k] = NULL;
		}
	CHECK(pkt_free_count() == 8);			/* every buffer came back */
	CHECK(net_stats.delivered + net_stats.short_frames + net_stats.unknown_type - ns0.delivered -
		      ns0.short_frames - ns0.unknown_type + nic.stats.rx_no_hook - nd0.rx_no_hook ==
	      nic.stats.rx_frames - nd0.rx_frames);
	return 0;
}
