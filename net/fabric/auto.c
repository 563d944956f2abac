/*
 * node=auto: the nodes on one segment agree on their ids and, with
 * nodes=auto, on the cluster's size, so that every PC of a room boots the
 * same command line.  Runs once at boot, after the NIC and before the
 * fabric (INIT_IDENTITY), and afterwards answers stations still looking.
 *
 * Each station without an id broadcasts an AUTO frame (wire.h) every
 * AUTO_INTERVAL_NS: its MAC, its incarnation and the count it expects.
 * Every station collects the MACs it hears.  The ids are the MACs' ranks
 * in ascending order, so two stations that heard the same set agree:
 *
 *  - nodes=N: a station that has heard exactly N stations (itself
 *    included) and no newcomer for auto_confirm_ms takes the set as the
 *    view.  Every one of the N hears the same N, so all take the same
 *    view.  More than N is an error that names them.
 *  - nodes=auto: only the station with the lowest MAC it has heard
 *    decides, once no newcomer has been heard for auto_settle_ms; the
 *    others take its view when it is broadcast.  A station that boots
 *    after the view was made is not in it, and says so.
 *
 * A station that hears a view with its own MAC in it takes that view at
 * once: a late one, and a node that rebooted, learn their id from any
 * member, which answers AUTO frames for as long as it runs.  The fabric's
 * membership handshake (member.h) then binds each id to its MAC and
 * incarnation as for a typed node=; nothing here binds anything.
 *
 * With a cluster key the frames carry a tag under it, as HELLOs do, so a
 * station without the key takes no part.  A recorded view replayed later
 * holds the same MACs in the same order: it can only give a node the id
 * the view gave it before.
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
#include "net/fabric/internal.h"
#include "net/net.h"

#define AUTO_INTERVAL_NS 50000000ULL		/* a searching station's broadcasts */
#define AUTO_ANSWER_NS 20000000ULL		/* members: at most one answer per 20 ms */
#define AUTO_PROGRESS_NS 5000000000ULL
#define AUTO_LINGER_NS 1000000000ULL		/* a station in error: still heard this long */

static const uint8_t bcast_mac[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

static struct {
	int on;				/* node=auto was given */
	int expect;			/* nodes=N, or 0 */
	int keyed;
	struct fab_seal seal;		/* under the cluster key */
	struct fab_unseal unseal;
	uint64_t inc;
	/* What this station has heard (interrupt side; irq off to read). */
	int n;
	uint8_t mac[FAB_MAX_NODES][6];
	int too_many;			/* a station beyond FAB_MAX_NODES, or beyond expect */
	uint64_t last_new;		/* now_ns() of the last newcomer */
	/* The view: set once. */
	int nview;
	uint8_t view[FAB_MAX_NODES][6];
	int excluded;			/* heard a view without this station */
	uint8_t excluded_by[6];
	uint64_t last_answer;
	struct ktimer wake;
	/* Counters. */
	unsigned long rx, rejected[FAB_NERR], expect_mismatch, conflicts, answers;
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

static int mac_cmp(const void *a, const void *b)
{
	return memcmp(a, b, 6);
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
	memset(&a, 0, sizeof a);
	h.type = FAB_AUTO;
	h.src = FAB_BROADCAST;
	h.dst = FAB_BROADCAST;
	h.len = sizeof a;
	a.expect = (uint16_t)au.expect;
	a.heard = (uint16_t)au.n;
	memcpy(a.mac, net_mac(), 6);
	a.inc = au.inc;
	if (au.nview) {
		a.nview = (uint16_t)au.nview;
		memcpy(a.view, au.view, (size_t)au.nview * 6);
	}
	memcpy(pb->data + CHAN_PAYLOAD_OFF, &a, sizeof a);
	pb->len = (uint16_t)fab_build_sealed(pb->data, bcast_mac, net_mac(), &h,
					     au.keyed ? &au.seal : NULL);
	net_transmit(pb);
	pkt_put(pb);
}

/* Take a view in which this station is.  (irq off) */
static void take_view(const uint8_t (*view)[6], int n)
{
	memcpy(au.view, view, (size_t)n * 6);
	au.nview = n;
}

void fab_auto_input(struct pktbuf *pb)
{
	struct fab_hdr h;
	struct fab_auto a;
	enum fab_err e;

	au.rx++;
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
		au.rejected[e]++;
		return;
	}
	if (a.expect != au.expect) {
		au.expect_mismatch++;
		return;
	}
	if (au.nview) {
		/* A member: answer a station still looking; note a view unlike ours. */
		if (a.nview && (a.nview != au.nview || memcmp(a.view, au.view, (size_t)au.nview * 6)))
			au.conflicts++;
		if (!a.nview && now_ns() - au.last_answer >= AUTO_ANSWER_NS) {
			au.last_answer = now_ns();
			au.answers++;
			auto_send();
		}
		return;
	}
	if (a.nview) {
		if (fab_auto_find((const uint8_t (*)[6])a.view, a.nview, net_mac()) >= 0) {
			take_view((const uint8_t (*)[6])a.view, a.nview);
		} else if (!au.excluded) {
			au.excluded = 1;
			memcpy(au.excluded_by, a.mac, 6);
		}
		return;
	}
	if (fab_auto_find((const uint8_t (*)[6])au.mac, au.n, a.mac) >= 0)
		return;
	if (au.n == FAB_MAX_NODES || (au.expect && au.n == au.expect)) {
		au.too_many = 1;
		return;
	}
	memcpy(au.mac[au.n++], a.mac, 6);
	au.last_new = now_ns();
}

/* Before the fabric is up, AUTO frames come here; anything else waits for it. */
static void phase_input(struct pktbuf *pb)
{
	if (pb->len > FAB_ETH_HLEN + 1 && pb->data[FAB_ETH_HLEN + 1] == FAB_AUTO)
		fab_auto_input(pb);
	else
		pkt_put(pb);
}

/* The thread's look at what was heard: decide, or fail with a message.  (irq off) */
static int auto_step(uint64_t now, uint64_t settle_ns, uint64_t confirm_ns)
{
	if (au.nview)
		return 1;
	if (au.excluded) {
		printf("auto: error: the cluster was formed without this node (view from ");
		print_mac(au.excluded_by);
		printf("); start every node before the first one decides, or give node=\n");
		return -EEXIST;
	}
	if (au.too_many) {
		printf("auto: error: more stations with node=auto nodes=%d than %d:", au.expect,
		       au.expect ? au.expect : FAB_MAX_NODES);
		for (int i = 0; i < au.n; i++) {
			printf(" ");
			print_mac(au.mac[i]);
		}
		printf(" and more\n");
		return -E2BIG;
	}
	if (au.expect) {
		if (au.n == au.expect && now - au.last_new >= confirm_ns) {
			qsort(au.mac, (size_t)au.n, 6, mac_cmp);
			take_view((const uint8_t (*)[6])au.mac, au.n);
			return 1;
		}
		return 0;
	}
	/* nodes=auto: the lowest MAC decides, once nobody new has come for the settle time. */
	for (int i = 0; i < au.n; i++)
		if (memcmp(au.mac[i], net_mac(), 6) < 0)
			return 0;
	if (now - au.last_new >= settle_ns) {
		qsort(au.mac, (size_t)au.n, 6, mac_cmp);
		take_view((const uint8_t (*)[6])au.mac, au.n);
		return 1;
	}
	return 0;
}

static int fabric_auto(void)
{
	uint64_t start, next_send, next_progress, settle_ns, confirm_ns;
	int id, r;

	if (!node_auto(&au.expect))
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
	au.on = 1;
	au.inc = incarnation();
	settle_ns = (uint64_t)arg_int("auto_settle_ms", 3000) * 1000000ULL;
	confirm_ns = (uint64_t)arg_int("auto_confirm_ms", 300) * 1000000ULL;
	if (fab_cluster_key(&au.seal.key)) {
		au.keyed = 1;
		au.unseal.key = au.seal.key;
	}
	memcpy(au.mac[0], net_mac(), 6);
	au.n = 1;
	start = now_ns();
	au.last_new = start;
	if (net_register(ETHERTYPE_FABRIC, phase_input) < 0)
		return -EBUSY;
	if (au.expect)
		printf("auto: agreeing on ids with %d nodes (MAC order)...\n", au.expect);
	else
		printf("auto: agreeing on ids and the cluster's size (MAC order; settles after %lu ms "
		       "without a newcomer)...\n", settle_ns / 1000000);
	next_send = start;
	next_progress = start + AUTO_PROGRESS_NS;
	for (;;) {
		uint64_t now = now_ns();
		irqflags_t f = irq_save();
		r = auto_step(now, settle_ns, confirm_ns);
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
			printf("auto: %lu s, heard %d station%s%s\n", (unsigned long)((now - start) / 1000000000ULL), au.n,
			       au.n == 1 ? "" : "s",
			       au.expect_mismatch ? " (and some with another nodes=)" : "");
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
	id = fab_auto_find((const uint8_t (*)[6])au.view, au.nview, net_mac());
	printf("auto: node %d of %d (MAC order), agreed in %lu ms:", id, au.nview,
	       (now_ns() - start) / 1000000);
	for (int i = 0; i < au.nview; i++) {
		printf(" %d=", i);
		print_mac(au.view[i]);
	}
	printf("\n");
	if (node_set_identity(id, au.nview) < 0)
		kernel_exit(EXIT_USAGE);
	return 0;
}

INIT_HOOK(INIT_IDENTITY, fabric_auto, fabric_auto);

void fab_auto_print_stats(void)
{
	unsigned long bad = 0;

	if (!au.on)
		return;
	for (int i = 0; i < FAB_NERR; i++)
		bad += au.rejected[i];
	printf("fabric: auto: frames %lu, rejected %lu, other nodes= %lu, answers %lu, views unlike "
	       "ours %lu\n", au.rx, bad, au.expect_mismatch, au.answers, au.conflicts);
}
