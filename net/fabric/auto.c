/*
 * node=auto: the nodes on one segment agree on their ids and, with
 * nodes=auto, on the cluster's size, so that every PC of a room boots the
 * same command line.  Runs once at boot, after the NIC and before the
 * fabric (INIT_SUBSYS_2), and afterwards answers stations still looking.
 *
 * Each station without an id broadcasts an AUTO frame (wire.h) every
 * AUTO_INTERVAL_NS: its MAC, incarnation, the count it expects, its nonce
 * and the nonces it heard.  The agreement itself is autoview.h: stations
 * count each other only once each echoed the other's nonce (so recorded
 * frames of an earlier boot, replayed, count for nothing), and the ids are
 * the live MACs' ranks in ascending order.
 *
 * A station that hears a view made for it (echoing its nonce) with its own
 * MAC in it takes that view at once: a late one, and a node that
 * rebooted, learn their id from any member, which answers AUTO frames for
 * as long as it runs.  The fabric's membership handshake (member.h) then
 * binds each id to its MAC and incarnation as for a typed node=; nothing
 * here binds anything.  A station still without a view after
 * auto_timeout_ms gives up and names the stations it heard.
 *
 * With a cluster key the frames carry a tag under it, as HELLOs do, so a
 * station without the key takes no part, and the frames must be
 * broadcast: every station sees the same ones.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/console.h"
#include "kernel/incarnation.h"
#include "kernel/init.h"
#include "kernel/node.h"
#include "kernel/panic.h"
#include "kernel/sync.h"
#include "kernel/timer.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"
#include "net/fabric/autoview.h"
#include "net/fabric/internal.h"
#include "net/net.h"

#define AUTO_INTERVAL_NS 50000000ULL		/* a searching station's broadcasts */
#define AUTO_ANSWER_NS 20000000ULL		/* members: at most one answer per 20 ms */
#define AUTO_PROGRESS_NS 5000000000ULL
#define AUTO_LINGER_NS 1000000000ULL		/* a station in error: still heard this long */
#define AUTO_TIMEOUT_MS 300000			/* auto_timeout_ms: give up after this long */

static const uint8_t bcast_mac[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

/* The frames' counters (kernel/counters.h); the agreement's are au.v's (AUTOV_COUNTERS). */
#define AUTO_COUNTERS(X) \
	X(LINE, "") \
	X(ONE, rx, "frames") \
	X(ONE, expect_mismatch, "other nodes=") \
	X(ONE, answers, "answers") \
	X(LINE_IF, "rejected:") \
	X(EACH, rejected, 1, FAB_NERR, fab_err_names)

struct auto_counters {
	AUTO_COUNTERS(COUNTER_FIELD)
};

static struct {
	int on;				/* node=auto was given */
	int keyed;
	struct fab_seal seal;		/* under the cluster key */
	struct fab_unseal unseal;
	uint64_t inc;
	struct autov v;			/* the agreement (interrupt side; irq off to read) */
	uint64_t last_answer;
	struct ktimer wake;
	struct auto_counters ctr;
} au;

static void wake_fire(void *arg)
{
	(void)arg;
}

/* Halt until a frame arrives or ns pass (no other thread exists yet to run). */
static void halt_for(uint64_t ns)
{
	irqflags_t f = irq_save();

	timer_arm(&au.wake, cycles() + ns_to_cycles(ns), wake_fire, NULL);
	sti_hlt();
	timer_cancel(&au.wake);
	irq_restore(f);
}

static void print_mac(const uint8_t m[6])
{
	printf("%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

/* Broadcast this station's AUTO frame: searching, or the view.  (irq off or thread) */
static void auto_send(void)
{
	struct pktbuf *pb = pkt_get();
	struct fab_hdr h;
	struct fab_auto a;

	if (!pb)
		return;
	memset(&h, 0, sizeof h);
	h.type = FAB_AUTO;
	h.src = FAB_BROADCAST;
	h.dst = FAB_BROADCAST;
	h.len = sizeof a;
	autov_payload(&au.v, au.inc, &a);
	memcpy(pb->data + CHAN_PAYLOAD_OFF, &a, sizeof a);
	pb->len = (uint16_t)fab_build_sealed(pb->data, bcast_mac, net_mac(), &h,
					     au.keyed ? &au.seal : NULL);
	net_transmit(pb);
	pkt_put(pb);
}

void fab_auto_input(struct pktbuf *pb)
{
	struct fab_hdr h;
	struct fab_auto a;
	enum fab_err e;

	au.ctr.rx++;
	if (!au.on) {
		/* A node with a typed id: not its business. */
		pkt_put(pb);
		return;
	}
	e = fab_parse_auto(pb->data, pb->len, au.keyed, &h, &a);
	if (e == FAB_OK && au.keyed)
		e = fab_unseal(&au.unseal, pb->data, &h, 0);
	pkt_put(pb);
	if (e != FAB_OK) {
		au.ctr.rejected[e]++;
		return;
	}
	if (a.expect != au.v.expect) {
		au.ctr.expect_mismatch++;
		return;
	}
	/* A member answers a station still looking, at most once per AUTO_ANSWER_NS. */
	if (autov_input(&au.v, &a, now_ns()) && now_ns() - au.last_answer >= AUTO_ANSWER_NS) {
		au.last_answer = now_ns();
		au.ctr.answers++;
		auto_send();
	}
}

/* Before the fabric is up, AUTO frames come here; anything else waits for it. */
static void phase_input(struct pktbuf *pb)
{
	if (pb->len > FAB_ETH_HLEN + 1 && pb->data[FAB_ETH_HLEN + 1] == FAB_AUTO)
		fab_auto_input(pb);
	else
		pkt_put(pb);
}

/* The stations heard: live ones, and those never live (gone, or replays). */
static void print_heard(void)
{
	printf(" live: ");
	print_mac(au.v.me);
	for (int i = 0; i < au.v.n; i++)
		if (au.v.p[i].live) {
			printf(" ");
			print_mac(au.v.p[i].mac);
		}
	printf("; heard but never answering:");
	int none = 1;
	for (int i = 0; i < au.v.n; i++)
		if (!au.v.p[i].live) {
			printf(" ");
			print_mac(au.v.p[i].mac);
			none = 0;
		}
	printf("%s\n", none ? " none" : "");
}

/* The thread's look at what was heard: decide, or fail with a message.  (irq off) */
static int auto_step(uint64_t now, uint64_t settle_ns, uint64_t confirm_ns, uint64_t deadline)
{
	int r = autov_decide(&au.v, now, settle_ns, confirm_ns);

	if (r == -EEXIST) {
		printf("auto: error: the cluster was formed without this node (view from ");
		print_mac(au.v.excluded_by);
		printf("); start every node before the first one decides, or give node=\n");
	} else if (r == -E2BIG) {
		printf("auto: error: more stations with node=auto nodes=%d than %d;", au.v.expect,
		       au.v.expect ? au.v.expect : FAB_MAX_NODES);
		print_heard();
	} else if (r == 0 && now >= deadline) {
		printf("auto: error: no agreement after %lu s (auto_timeout_ms); %d of %s stations live;",
		       (unsigned long)(arg_int("auto_timeout_ms", AUTO_TIMEOUT_MS) / 1000), autov_live(&au.v),
		       au.v.expect ? "the expected" : "any");
		print_heard();
		r = -ETIMEDOUT;
	}
	return r;
}

static int fabric_auto(void)
{
	uint64_t start, next_send, next_progress, settle_ns, confirm_ns, deadline;
	int id, r, expect;

	if (!node_auto(&expect))
		return 0;
	if (!net_up()) {
		printf("auto: error: node=auto needs a network card to agree on ids over\n");
		kernel_exit(EXIT_USAGE);
	}
	if (net_link_lossless()) {
		printf("auto: error: node=auto is for Ethernet; the shared-memory link numbers its "
		       "nodes itself: give node= and nodes=\n");
		kernel_exit(EXIT_USAGE);
	}
	au.inc = incarnation();
	settle_ns = (uint64_t)arg_int("auto_settle_ms", 3000) * 1000000ULL;
	confirm_ns = (uint64_t)arg_int("auto_confirm_ms", 300) * 1000000ULL;
	if (fab_cluster_key(&au.seal.key)) {
		au.keyed = 1;
		au.unseal.key = au.seal.key;
	}
	start = now_ns();
	deadline = start + (uint64_t)arg_int("auto_timeout_ms", AUTO_TIMEOUT_MS) * 1000000ULL;
	autov_init(&au.v, net_mac(), expect, random64(), start);
	au.on = 1;
	if (net_register(ETHERTYPE_FABRIC, phase_input) < 0)
		return -EBUSY;
	if (expect)
		printf("auto: agreeing on ids with %d nodes (MAC order)...\n", expect);
	else
		printf("auto: agreeing on ids and the cluster's size (MAC order; settles after %lu ms "
		       "without a newcomer)...\n", settle_ns / 1000000);
	next_send = start;
	next_progress = start + AUTO_PROGRESS_NS;
	for (;;) {
		uint64_t now = now_ns();
		irqflags_t f = irq_save();
		r = auto_step(now, settle_ns, confirm_ns, deadline);
		irq_restore(f);
		if (r)
			break;
		if (now >= next_send) {
			f = irq_save();
			auto_send();
			irq_restore(f);
			next_send = now + AUTO_INTERVAL_NS;
		}
		if (now >= next_progress) {
			int live = autov_live(&au.v);
			printf("auto: %lu s, %d station%s live%s\n", (unsigned long)((now - start) / 1000000000ULL),
			       live, live == 1 ? "" : "s",
			       au.ctr.expect_mismatch ? " (and some with another nodes=)" : "");
			next_progress = now + AUTO_PROGRESS_NS;
		}
		halt_for(5000000);
	}
	if (r == -E2BIG) {
		/* Go on being heard for a while, so that every station finds the same error. */
		uint64_t end = now_ns() + AUTO_LINGER_NS, next = 0;
		while (now_ns() < end) {
			if (now_ns() >= next) {
				irqflags_t f = irq_save();
				auto_send();
				irq_restore(f);
				next = now_ns() + AUTO_INTERVAL_NS;
			}
			halt_for(AUTO_INTERVAL_NS);
		}
	}
	net_unregister(ETHERTYPE_FABRIC);
	if (r < 0)
		kernel_exit(EXIT_USAGE);
	/* Tell the others at once; from here the fabric answers those still looking. */
	irqflags_t f = irq_save();
	auto_send();
	irq_restore(f);
	id = fab_auto_find((const uint8_t (*)[6])au.v.view, au.v.nview, net_mac());
	printf("auto: node %d of %d (MAC order), agreed in %lu ms:", id, au.v.nview,
	       (now_ns() - start) / 1000000);
	for (int i = 0; i < au.v.nview; i++) {
		printf(" %d=", i);
		print_mac(au.v.view[i]);
	}
	printf("\n");
	if (node_set_identity(id, au.v.nview) < 0)
		kernel_exit(EXIT_USAGE);
	return 0;
}

INIT_HOOK(INIT_SUBSYS_2, fabric_auto, fabric_auto);

#define COUNTER_TYPE struct auto_counters
static const struct counter_row auto_rows[] = { AUTO_COUNTERS(COUNTER_ROW) };
#undef COUNTER_TYPE
#define COUNTER_TYPE struct autov
static const struct counter_row autov_rows[] = { AUTOV_COUNTERS(COUNTER_ROW) };
#undef COUNTER_TYPE

void fab_auto_print_stats(void)
{
	if (!au.on)
		return;
	counters_print("fabric: auto", auto_rows, COUNTER_ROWS(auto_rows), &au.ctr);
	counters_print("fabric: auto", autov_rows, COUNTER_ROWS(autov_rows), &au.v);
}
