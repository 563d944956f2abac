/*
 * The TSC offset between this node and a peer (fabric.h,
 * fabric_clock_offset), for putting one operation's stage stamps
 * (kernel/trace.h) from two nodes on one clock.
 *
 * This node sends raw probes carrying its TSC t0; the peer's fabric
 * answers each at once, from its receive path, with its own TSC t1; the
 * answer arrives at t2.  If the two one-way delays were equal, the peer's
 * clock read t1 when ours read (t0 + t2) / 2.  They are not quite, so the
 * estimate is off by at most half the round trip, and the probe with the
 * shortest round trip bounds it best: NTP's minimum-delay filter (RFC 5905
 * 10, the clock filter's choice of the sample with the least delay), and
 * the delay request/response of IEEE 1588 with the same assumption of a
 * symmetric path.
 */
#include <errno.h>
#include <string.h>

#include "kernel/init.h"
#include "kernel/sync.h"
#include "kernel/thread.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"
#include "net/fabric/internal.h"

#define FP_CLOCK 10			/* the probes' protocol number (raw frames) */
#define ANSWER_NS 100000000ULL		/* a probe unanswered after 100 ms is lost */

enum { CLK_PROBE = 1, CLK_ECHO = 2 };

struct clk_msg {
	uint32_t kind;
	uint32_t seq;
	uint64_t t0;			/* the prober's TSC when it sent the probe */
	uint64_t t1;			/* the answerer's TSC when it answered */
} __attribute__((packed));

static struct {
	int busy;			/* a thread is probing (one at a time) */
	int peer;
	uint32_t seq;
	int have;			/* the echo of seq arrived */
	struct clk_msg echo;
	uint64_t t2;			/* when it arrived */
	struct waitq wq;
} clk = { .wq = WAITQ_INIT };

/* Raw frames of FP_CLOCK (irq): answer probes, hand echoes to the waiting thread. */
static int clock_raw(int src, const uint8_t *p, size_t len, struct pktbuf *pb)
{
	struct clk_msg m;
	uint64_t now = rdtsc();

	(void)pb;
	if (len != sizeof m)
		return 0;
	memcpy(&m, p, sizeof m);
	if (m.kind == CLK_PROBE) {
		m.kind = CLK_ECHO;
		m.t1 = rdtsc();
		fabric_raw_send(src, FP_CLOCK, &m, sizeof m);
	} else if (m.kind == CLK_ECHO && clk.busy && src == clk.peer && m.seq == clk.seq && !clk.have) {
		clk.echo = m;
		clk.t2 = now;
		clk.have = 1;
		waitq_wake_all(&clk.wq);
	}
	return 0;
}

int fabric_clock_offset(int peer, int probes, int64_t *offset, uint64_t *error)
{
	uint64_t best = ~0ULL;
	irqflags_t f;

	if (peer < 0 || peer >= fab.nnodes || peer == fab.me || probes < 1)
		return -EINVAL;
	f = irq_save();
	if (clk.busy) {
		irq_restore(f);
		return -EBUSY;
	}
	clk.busy = 1;
	clk.peer = peer;
	irq_restore(f);
	for (int i = 0; i < probes; i++) {
		struct clk_msg m = { .kind = CLK_PROBE };
		uint64_t end;

		f = irq_save();
		m.seq = ++clk.seq;
		clk.have = 0;
		irq_restore(f);
		m.t0 = rdtsc();
		if (fabric_raw_send(peer, FP_CLOCK, &m, sizeof m) < 0) {
			thread_sleep_ns(100000);	/* the ring was full: the next probe */
			continue;
		}
		end = cycles() + ns_to_cycles(ANSWER_NS);
		f = irq_save();
		while (!clk.have && cycles() < end)
			waitq_wait_timeout(&clk.wq, cycles_to_ns(end - cycles()));
		if (clk.have && clk.t2 - clk.echo.t0 < best) {
			best = clk.t2 - clk.echo.t0;
			*offset = (int64_t)clk.echo.t1 - (int64_t)(clk.echo.t0 + best / 2);
		}
		irq_restore(f);
	}
	clk.busy = 0;
	if (best == ~0ULL)
		return -ETIMEDOUT;
	*error = best / 2;
	return 0;
}

static int clock_init(void)
{
	if (!fab.ready)
		return -ENODEV;
	return fabric_register_raw(FP_CLOCK, clock_raw);
}

INIT_HOOK(INIT_SUBSYS_4, fabric_clock, clock_init);
