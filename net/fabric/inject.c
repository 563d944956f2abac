/*
 * Receive fault injection (fault= on the command line, DESIGN.md
 * "Fabric"): every fabric frame this node receives may be dropped,
 * corrupted (one bit flipped after the Ethernet header), duplicated or
 * held back past the next frame (at most REORDER_HOLD_NS), at the rates
 * given, drawn from a generator seeded by seed= (default: the node id).
 * The mechanisms must lose nothing under it.
 */
#include <stdio.h>
#include <string.h>

#include "kernel/node.h"
#include "kernel/panic.h"
#include "kernel/timer.h"
#include "kernel/tsc.h"
#include "net/fabric/fault.h"
#include "net/fabric/internal.h"

#define REORDER_HOLD_NS 2000000ULL		/* a held-back frame waits at most 2 ms */

static struct fault_cfg faults;
static uint64_t rng_state;
static struct pktbuf *held;			/* reorder: the frame held back */
static struct ktimer held_timer;

static uint64_t rng_next(void)
{
	/* xorshift64* (Vigna). */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static int chance(uint32_t rate)
{
	return rate && (uint32_t)(rng_next() >> 32) < rate;
}

/* Where a frame goes on, once its fault is applied (fab_process). */
static void (*deliver)(struct pktbuf *pb);

void fab_inject_init(void (*fn)(struct pktbuf *pb))
{
	const char *f;

	deliver = fn;
	rng_state = (uint64_t)arg_int("seed", fab.me) * 0x9e3779b97f4a7c15ULL + 0x1234567ULL;
	if ((f = arg_str("fault", NULL)) != NULL && arg_int("fault_node", fab.me) == fab.me) {
		char err[128];
		if (fault_parse(f, &faults, err, sizeof err) < 0)
			panic("fabric: %s", err);	/* the argument check passed it already */
	}
}

int fab_inject_any(void)
{
	return faults.any;
}

void fab_inject_describe(char *buf, size_t len)
{
	fault_format(&faults, buf, len);
}

static void release_held(void *arg)
{
	struct pktbuf *pb = held;

	(void)arg;
	held = NULL;
	if (pb)
		deliver(pb);
}

void fab_inject(struct pktbuf *pb)
{
	if (chance(faults.drop)) {
		fab.ctr.fault_drop++;
		pkt_put(pb);
		return;
	}
	if (chance(faults.corrupt) && pb->len > FAB_ETH_HLEN) {
		uint64_t r = rng_next();
		size_t off = FAB_ETH_HLEN + (size_t)(r % (pb->len - FAB_ETH_HLEN));
		pb->data[off] ^= (uint8_t)(1u << ((r >> 32) & 7));
		fab.ctr.fault_corrupt++;
	}
	struct pktbuf *dup = NULL;
	if (chance(faults.dup) && (dup = pkt_get_len(pb->len)) != NULL) {
		memcpy(dup->data, pb->data, pb->len);
		dup->len = pb->len;
		fab.ctr.fault_dup++;
	}
	if (!held && chance(faults.reorder)) {
		/* Hold this one back until the next frame has gone past it. */
		held = pb;
		fab.ctr.fault_reorder++;
		timer_arm(&held_timer, cycles() + ns_to_cycles(REORDER_HOLD_NS), release_held, NULL);
		pb = dup;
		dup = NULL;
		if (!pb)
			return;
	}
	deliver(pb);
	if (dup)
		deliver(dup);
	if (held && held != pb) {
		timer_cancel(&held_timer);
		release_held(NULL);
	}
}
