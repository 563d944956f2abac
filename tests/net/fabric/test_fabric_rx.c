/*
 * Host unit tests of the fabric's receive path as the kernel runs it
 * (net/fabric/fabric.c, rx.c, discovery.c, send.c, barrier.c, the channel
 * and membership), node 1 of four with three simulated peers
 * (tests/net/fabric/host_node.c), CRCs and tags checked: the handshake, the
 * cluster key against forged, damaged and replayed frames, a replayed
 * HELLO of a past boot or of the bound one, a dead peer that comes back, the barrier.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "tests/host/unit.h"

#include "net/call/barrier.h"
#include "net/fabric/fabric.h"
#include "net/fabric/wire.h"
#include "tests/net/fabric/host_node.h"
#include "tests/host/host_rnd.h"

static unsigned rng = 7;

static unsigned rnd(unsigned n)
{
	return host_rnd_next(&rng) % n;
}

static void discovery_binds_every_peer(void **state)
{
	struct fabric_counters c;

	(void)state;
	for (int keyed = 0; keyed < 2; keyed++) {
		hn_reset(keyed, 10000);
		assert_int_equal(hn_discover(), 0);
		for (int k = 0; k < HN_NODES; k++) {
			uint64_t inc;
			if (k == HN_ME)
				continue;
			assert_true(hn_bound(k, &inc));
			assert_true(inc == hn_peer_inc(k));
		}
		hn_counters(&c);
		assert_int_equal(c.rebinds, 0);
		assert_int_equal(hn_teardown(), 0);
	}
}

/* Keyed, under loss, duplication, reordering and replays: every message once, in order. */
static void keyed_messages_once_in_order_under_loss_and_replays(void **state)
{
	struct fabric_counters c;

	(void)state;
	hn_reset(1, 10000);
	assert_int_equal(hn_discover(), 0);
	for (int round = 0; round < 400; round++) {
		int k = (int)rnd(HN_NODES);
		if (k != HN_ME)
			hn_send(k, 24 + rnd(1000));
		switch (rnd(6)) {
		case 0:
			hn_drop((int)rnd((unsigned)hn_waiting() + 1));
			break;
		case 1:
			hn_replay(rnd(64));
			break;
		case 2:
			hn_deliver((int)rnd((unsigned)hn_waiting() + 1));
			break;
		default:
			break;
		}
		if (rnd(8) == 0) {
			hn_settle();
			hn_advance(3);
		}
	}
	for (int i = 0; i < 200; i++) {
		hn_settle();
		hn_advance(25);
	}
	hn_counters(&c);
	assert_int_equal(hn.garbage, 0);
	assert_int_equal(hn.out_of_order, 0);
	for (int k = 0; k < HN_NODES; k++)
		if (k != HN_ME)
			assert_true(hn.good[k] > 50);
	assert_true(c.rx_rejected[FAB_E_REPLAY] > 0);
	assert_int_equal(c.rebinds, 0);
	assert_int_equal(hn_teardown(), 0);
}

/* Keyed: damaged and unkeyed frames are refused and never reach the channel or a handler. */
static void keyed_refuses_damaged_and_unkeyed_frames(void **state)
{
	struct fabric_counters c;
	uint8_t f[FAB_FRAME_MAX];

	(void)state;
	hn_reset(1, 10000);
	assert_int_equal(hn_discover(), 0);
	/* Every byte of a message frame after the Ethernet header, flipped in turn (within a window). */
	for (int i = 0; i < 60; i++) {
		hn_send(2, 40);
		hn_damage(hn_waiting() - 1, FAB_ETH_HLEN + (size_t)i, 0x10);
		hn_deliver(hn_waiting() - 1);
	}
	/* A raw frame and a HELLO of a new incarnation, unkeyed, with the right tag and MAC. */
	struct fab_hdr h = { 0 };
	h.type = FAB_RAW;
	h.proto = HN_PROTO;
	h.src = 2;
	h.dst = HN_ME;
	h.session = fab_pair_tag(hn_peer_inc(2), 0);
	h.len = 16;
	uint8_t me[6] = { 2, 0x4e, 0x4f, 0x57, 0, HN_ME }, two[6] = { 2, 0x4e, 0x4f, 0x57, 0, 2 };
	size_t n = fab_build(f, me, two, &h);
	hn_inject(f, n);
	hn_counters(&c);
	uint64_t refused = c.rx_stale_session + c.rx_foreign_mac;
	for (int e = 1; e < FAB_NERR; e++)
		refused += c.rx_rejected[e];
	assert_int_equal(refused, 61);		/* each damaged frame, and the unkeyed one */
	assert_true(c.rx_rejected[FAB_E_MAC] >= 30);
	assert_true(c.rx_rejected[FAB_E_KEY] >= 1);
	assert_int_equal(hn.delivered[2], 0);
	assert_int_equal(hn.raw[2], 0);
	/* The real frames, sent again by the channel, all arrive once. */
	for (int i = 0; i < 3000 && hn.good[2] < 60; i++) {
		hn_settle();
		hn_advance(25);
	}
	assert_int_equal(hn.good[2], 60);
	assert_int_equal(hn.out_of_order, 0);
	assert_int_equal(hn.garbage, 0);
	assert_int_equal(hn_teardown(), 0);
}

/* A frame in the name of a node not yet bound binds nothing and is not delivered. */
static void frames_before_the_handshake_bind_nothing(void **state)
{
	struct fabric_counters c;

	(void)state;
	hn_reset(0, 10000);
	hn_raw(2, 20);
	hn_send(3, 40);
	while (hn_waiting())
		hn_deliver(0);		/* no HELLO reaches the peers: no handshake */
	hn_counters(&c);
	assert_false(hn_bound(2, NULL));
	assert_false(hn_bound(3, NULL));
	assert_int_equal(hn.raw[2] + hn.delivered[3], 0);
	assert_true(c.rx_unbound >= 1);
	assert_int_equal(hn_teardown(), 0);
}

/* Keyed: a HELLO recorded from peer 2's earlier boot, replayed, does not take the node back. */
static void keyed_replayed_hello_of_a_past_boot(void **state)
{
	struct fabric_counters c;
	uint64_t inc;

	(void)state;
	hn_reset(1, 10000);
	assert_int_equal(hn_discover(), 0);
	hn_hello(2, 0);			/* recorded: the newest frame of the history */
	hn_deliver(hn_waiting() - 1);
	hn_settle();
	hn_reboot(2, 0x77770001);
	assert_int_equal(hn_discover(), 0);
	hn_counters(&c);
	assert_int_equal(c.rebinds, 1);
	for (unsigned i = 0; i < 64; i++)
		hn_replay(i);		/* the old HELLO is among them */
	hn_settle();
	hn_counters(&c);
	assert_int_equal(c.rebinds, 1);
	assert_true(hn_bound(2, &inc) && inc == 0x77770001);
	assert_true(c.hello_bad >= 1);
	assert_int_equal(hn_teardown(), 0);
}

/*
 * Keyed: HELLOs of the bound boots replayed, every frame of the history
 * 20 times, are each counted as replayed and draw no HELLO in answer; a
 * new HELLO of the same boot is still taken.
 */
static void keyed_replayed_hellos_of_the_bound_boot_draw_nothing(void **state)
{
	struct fabric_counters c0, c;

	(void)state;
	hn_reset(1, 10000);
	assert_int_equal(hn_discover(), 0);
	hn_hello(2, 0);
	hn_deliver(hn_waiting() - 1);
	hn_hello(3, 1);
	hn_deliver(hn_waiting() - 1);
	hn_settle();
	hn_counters(&c0);
	for (int round = 0; round < 20; round++)
		for (unsigned i = 0; i < 64; i++)
			hn_replay(i);
	hn_settle();
	hn_counters(&c);
	assert_true(c.hello_rx - c0.hello_rx >= 40);	/* both HELLOs, 20 times */
	assert_int_equal(c.hello_replayed - c0.hello_replayed, c.hello_rx - c0.hello_rx);
	assert_int_equal(c.hello_tx, c0.hello_tx);
	assert_int_equal(c.rebinds, 0);
	hn_hello(2, 0);
	hn_deliver(hn_waiting() - 1);
	hn_settle();
	hn_counters(&c0);
	assert_int_equal(c0.hello_replayed, c.hello_replayed);
	assert_int_equal(c0.hello_rx, c.hello_rx + 1);
	assert_int_equal(hn_teardown(), 0);
}

/* A peer silent past the timeout is dead; a new boot of it is bound again. */
static void dead_peer_comes_back(void **state)
{
	uint64_t inc;

	(void)state;
	hn_reset(0, 1000);
	assert_int_equal(hn_discover(), 0);
	assert_int_equal(hn_node_send(3, 100, 0), 0);
	for (int i = 0; i < 40 && !hn_dead(3); i++)
		hn_advance(50);		/* nothing reaches peer 3: its answers never come */
	assert_true(hn_dead(3));
	assert_int_equal(hn_node_send(3, 100, 0), -EHOSTDOWN);
	hn_flush();
	hn_reboot(3, 0x33330003);
	assert_int_equal(hn_discover(), 0);
	assert_false(hn_dead(3));
	assert_true(hn_bound(3, &inc) && inc == 0x33330003);
	uint64_t got = hn.peer_got[3];
	assert_int_equal(hn_node_send(3, 100, 0), 0);
	hn_settle();
	assert_int_equal(hn.peer_got[3], got + 1);
	assert_int_equal(hn_teardown(), 0);
}

/* A barrier release from a node that is not the coordinator is dropped. */
static void barrier_release_from_a_member_is_dropped(void **state)
{
	unsigned long before;

	(void)state;
	hn_reset(0, 10000);
	assert_int_equal(hn_discover(), 0);
	before = cluster_barrier_dropped();
	hn_barrier_msg(2, 'R', 1);
	hn_barrier_msg(3, 'A', 1);	/* an arrival sent to a member */
	hn_settle();
	assert_int_equal(cluster_barrier_dropped() - before, 2);
	assert_int_equal(hn_teardown(), 0);
}

static int tags_are(const uint8_t *want, int n)
{
	if (hn.late_n != n)
		return 0;
	return memcmp(hn.late_tags, want, (size_t)n) == 0;
}

/*
 * Messages for an app protocol its app has not registered yet (HN_LATE_PROTO)
 * are set aside: the same peer's messages of a registered protocol behind
 * them are delivered meanwhile (they waited behind the first for up to
 * 20 s before), the parked ones go in order when it registers, and a
 * handler that refuses one keeps the rest of its protocol behind it.  A
 * sender's reboot drops none of them: they were acknowledged.  One never
 * registered is dropped at the end of the grace, as no one's.
 */
/*
 * An app's message that comes before the fabric starts (the kernel's
 * protocols not all registered) is parked at once, not held in the
 * channel: kept when its sender reboots before the start (the reset
 * empties the channel, and the sender had it acknowledged), and whatever
 * tick comes inside fabric_start (as TCG takes an interrupt after the
 * clock's rdtsc); handed over when the app registers.  Held in the
 * channel, a tick between fabric_start's "started" and its grace once
 * dropped such messages as no one's.
 */
static void a_message_before_the_start_is_parked(void **state)
{
	static const uint8_t t1[] = { 1 }, t12[] = { 1, 2 };
	struct fabric_counters c;

	(void)state;
	for (int tick = 0; tick < 2; tick++) {
		hn_reset_unstarted(0, 10000);
		assert_int_equal(hn_discover(), 0);
		assert_int_equal(hn_send_late(0, 1, 100), 0);
		hn_settle();
		hn_counters(&c);
		assert_int_equal(c.parked, 1);
		hn_start(tick);
		hn_settle();
		hn_counters(&c);
		assert_int_equal(c.rx_unknown_proto, 0);
		assert_int_equal(hn_register_late(), 0);
		assert_true(tags_are(t1, 1));
		assert_int_equal(hn_teardown(), 0);
	}
	/* Its sender reboots before the start: the reset leaves the park alone. */
	hn_reset_unstarted(0, 10000);
	assert_int_equal(hn_discover(), 0);
	assert_int_equal(hn_send_late(2, 1, 100), 0);
	hn_settle();
	hn_reboot(2, 0x7777000000000002ULL);
	assert_int_equal(hn_discover(), 0);
	assert_int_equal(hn_send_late(2, 2, 100), 0);
	hn_settle();
	hn_start(1);
	hn_settle();
	assert_int_equal(hn_register_late(), 0);
	assert_true(tags_are(t12, 2));
	hn_counters(&c);
	assert_int_equal(c.rx_unknown_proto, 0);
	assert_int_equal(c.rebinds, 1);
	assert_int_equal(hn_teardown(), 0);
}

static void an_unregistered_protocol_holds_up_only_itself(void **state)
{
	static const uint8_t t12[] = { 1, 2 }, t123[] = { 1, 2, 3 };
	struct fabric_counters c;

	(void)state;
	for (int keyed = 0; keyed < 2; keyed++) {
		hn_reset(keyed, 10000);
		assert_int_equal(hn_discover(), 0);
		assert_int_equal(hn_send_late(0, 1, 100), 0);
		assert_int_equal(hn_send(0, 200), 0);
		assert_int_equal(hn_send_late(0, 2, 300), 0);
		assert_int_equal(hn_send(0, 400), 0);
		hn_settle();
		assert_int_equal(hn.good[0], 2);	/* not held behind the first */
		assert_int_equal(hn.out_of_order, 0);
		assert_int_equal(hn.late_n, 0);
		hn_counters(&c);
		assert_int_equal(c.parked, 2);
		assert_int_equal(hn_register_late(), 0);
		assert_true(tags_are(t12, 2));
		assert_int_equal(hn_register_late(), -EBUSY);
		/* Registered: the next goes straight to it. */
		assert_int_equal(hn_send_late(0, 3, 50), 0);
		hn_settle();
		assert_true(tags_are(t123, 3));
		hn_counters(&c);
		assert_int_equal(c.park_delivered, 2);
		assert_int_equal(hn.garbage, 0);
		assert_int_equal(hn_teardown(), 0);

		/* A handler that refuses a parked message: its protocol's later ones stay behind it. */
		hn_reset(keyed, 10000);
		assert_int_equal(hn_discover(), 0);
		assert_int_equal(hn_send_late(2, 1, 64), 0);
		assert_int_equal(hn_send_late(2, 2, 64), 0);
		hn_settle();
		hn.late_refuse = 1;
		assert_int_equal(hn_register_late(), 0);
		assert_int_equal(hn_send_late(2, 3, 64), 0);
		assert_int_equal(hn_send(2, 64), 0);
		hn_settle();
		assert_int_equal(hn.late_n, 0);
		assert_int_equal(hn.good[2], 1);
		hn.late_refuse = 0;
		hn_advance(10);
		hn_settle();
		assert_true(tags_are(t123, 3));
		hn_counters(&c);
		assert_true(c.park_refused >= 1);
		assert_int_equal(hn_teardown(), 0);

		/*
		 * The sender reboots while its messages are parked: they were
		 * acknowledged (its fabric_flush returned), so they stay and are
		 * handed over when the protocol registers, before the new boot's.
		 */
		hn_reset(keyed, 10000);
		assert_int_equal(hn_discover(), 0);
		assert_int_equal(hn_send_late(0, 1, 64), 0);
		assert_int_equal(hn_send_late(0, 2, 64), 0);
		hn_settle();
		hn_reboot(0, 0x11110001 + (uint64_t)keyed);
		assert_int_equal(hn_discover(), 0);
		assert_int_equal(hn_send_late(0, 3, 64), 0);
		hn_settle();
		assert_int_equal(hn.late_n, 0);
		assert_int_equal(hn_register_late(), 0);
		hn_settle();
		assert_true(tags_are(t123, 3));
		assert_int_equal(hn_teardown(), 0);

		/* Never registered: dropped when the grace ends, counted as no one's. */
		hn_reset(keyed, 100000);
		assert_int_equal(hn_discover(), 0);
		assert_int_equal(hn_send_late(3, 9, 64), 0);
		hn_settle();
		for (int i = 0; i < 21; i++) {
			hn_advance(1000);
			hn_settle();
		}
		hn_counters(&c);
		assert_int_equal(c.parked, 1);
		assert_int_equal(c.rx_unknown_proto, 1);
		assert_int_equal(hn_send(3, 64), 0);
		hn_settle();
		assert_int_equal(hn.good[3], 1);
		assert_int_equal(hn_teardown(), 0);
	}
}

UNIT_MAIN("tests", NULL, NULL,
	  cmocka_unit_test(discovery_binds_every_peer),
	  cmocka_unit_test(keyed_messages_once_in_order_under_loss_and_replays),
	  cmocka_unit_test(keyed_refuses_damaged_and_unkeyed_frames),
	  cmocka_unit_test(frames_before_the_handshake_bind_nothing),
	  cmocka_unit_test(keyed_replayed_hello_of_a_past_boot),
	  cmocka_unit_test(keyed_replayed_hellos_of_the_bound_boot_draw_nothing),
	  cmocka_unit_test(dead_peer_comes_back),
	  cmocka_unit_test(barrier_release_from_a_member_is_dropped),
	  cmocka_unit_test(an_unregistered_protocol_holds_up_only_itself),
	  cmocka_unit_test(a_message_before_the_start_is_parked))
