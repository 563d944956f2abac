/*
 * Host unit tests of node=auto's agreement (net/fabric/autoview.c):
 * stations that hear each other agree on one view; recorded frames of an
 * earlier boot, replayed (a search frame of an absent machine, an old
 * view, frames that push the count past nodes=N), change nothing.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tests/host/unit.h"

#include "net/fabric/autoview.h"

#define MAXS 8
#define MS 1000000ULL
#define SETTLE (3000 * MS)
#define CONFIRM (300 * MS)

static struct autov st[MAXS];
static int nst, up[MAXS];
static uint64_t now;

static void station(int i, int expect, uint64_t nonce)
{
	uint8_t mac[6] = { 2, 0x4e, 0x4f, 0x57, 0, (uint8_t)(0x10 + i) };

	autov_init(&st[i], mac, expect, nonce, now);
	up[i] = 1;
}

/* A recorded frame replayed right after each of station i's own (shadow[i]), or NULL. */
static const struct fab_auto *shadow[MAXS];

static void replay(const struct fab_auto *a);

/* Station i's frame reaches every other station that is up; members answer searchers. */
static void broadcast(int i)
{
	struct fab_auto a;

	autov_payload(&st[i], 1000 + (uint64_t)i, &a);
	for (int j = 0; j < nst; j++)
		if (j != i && up[j] && autov_input(&st[j], &a, now))
			broadcast(j);
	if (shadow[i])
		replay(shadow[i]);
}

/* A recorded frame, replayed to every station. */
static void replay(const struct fab_auto *a)
{
	for (int j = 0; j < nst; j++)
		if (up[j])
			autov_input(&st[j], a, now);
}

/* 50 ms turns until every station decided (or max turns); the results. */
static void run(int turns, int *res)
{
	for (int t = 0; t < turns; t++) {
		int all = 1;
		now += 50 * MS;
		for (int i = 0; i < nst; i++)
			if (up[i] && !st[i].nview)
				broadcast(i);
		for (int i = 0; i < nst; i++) {
			if (!up[i])
				continue;
			res[i] = autov_decide(&st[i], now, SETTLE, CONFIRM);
			if (res[i] == 1 && st[i].nview)
				broadcast(i);	/* a member tells the others at once */
			if (res[i] == 0)
				all = 0;
		}
		if (all)
			return;
	}
}

static void same_view(int n)
{
	for (int i = 0; i < nst; i++) {
		if (!up[i])
			continue;
		assert_int_equal(st[i].nview, n);
		assert_memory_equal(st[i].view, st[0].view, (size_t)n * 6);
	}
}

static void stations_agree(void **state)
{
	int res[MAXS];

	(void)state;
	now = 1000 * MS;
	nst = 4;
	for (int i = 0; i < nst; i++)
		station(i, 0, 0x1000 + (uint64_t)i);
	run(200, res);
	for (int i = 0; i < nst; i++)
		assert_int_equal(res[i], 1);
	same_view(4);
	for (int i = 1; i < 4; i++)
		assert_true(memcmp(st[0].view[i - 1], st[0].view[i], 6) < 0);
}

/*
 * Frames recorded from an earlier boot of the room, in which an absent
 * machine with the lowest MAC searched and then broadcast a view that does
 * not hold today's newcomer: replayed over and over while the room boots
 * again, they neither make the stations wait for the absent machine nor
 * exclude anyone; nodes=N is not pushed over N.
 */
static void replayed_frames_of_an_earlier_boot_count_for_nothing(void **state)
{
	int res[MAXS];
	struct fab_auto old_search, old_view;

	(void)state;
	/* The earlier boot: stations 0 (lowest MAC, absent today), 1, 2. */
	now = 1000 * MS;
	nst = 3;
	for (int i = 0; i < nst; i++)
		station(i, 0, 0x2000 + (uint64_t)i);
	autov_payload(&st[0], 1000, &old_search);
	run(200, res);
	same_view(3);
	autov_payload(&st[1], 1001, &old_view);
	assert_int_equal(old_view.nview, 3);

	/* Today: 1, 2 and a newcomer 3 boot again (new nonces); 0 stays off. */
	memset(st, 0, sizeof st);
	memset(up, 0, sizeof up);
	nst = 4;
	now += 60000 * MS;
	for (int i = 1; i < nst; i++)
		station(i, 0, 0x3000 + (uint64_t)i);
	for (int t = 0; t < 300; t++) {
		replay(&old_search);
		replay(&old_view);
		run(1, res);
	}
	for (int i = 1; i < nst; i++) {
		assert_int_equal(res[i], 1);
		assert_int_equal(st[i].excluded, 0);
		assert_true(st[i].stale_views > 0 || st[i].nview);
	}
	/* The view is today's three, without the absent machine. */
	assert_int_equal(st[1].nview, 3);
	for (int i = 1; i < nst; i++)
		assert_memory_equal(st[i].view, st[1].view, 3 * 6);
	for (int k = 0; k < 3; k++)
		assert_int_not_equal(memcmp(st[1].view[k], old_search.mac, 6), 0);

	/* nodes=2: the replays of a third station never make it too many. */
	memset(st, 0, sizeof st);
	memset(up, 0, sizeof up);
	nst = 3;
	now += 60000 * MS;
	station(1, 2, 0x4001);
	station(2, 2, 0x4002);
	old_search.expect = 2;
	for (int t = 0; t < 100; t++) {
		replay(&old_search);
		run(1, res);
	}
	assert_int_equal(res[1], 1);
	assert_int_equal(res[2], 1);
	assert_int_equal(st[1].nview, 2);
	assert_int_equal(st[1].too_many, 0);
}

/*
 * One frame recorded at an earlier boot of a station that is present
 * today, replayed right after each of its real frames (with nodes=auto
 * and nodes=N): the others keep its stale nonce beside today's, echo
 * both, and everyone still agrees on the three.  (With only the last
 * nonce heard kept, the others echoed the stale one: the victim never
 * counted anyone live, decided alone under nodes=auto and the others
 * were excluded; under nodes=3 no one decided.)
 */
static void a_present_station_shadowed_by_its_old_frame(void **state)
{
	int res[MAXS];
	struct fab_auto old;

	(void)state;
	for (int expect = 0; expect <= 3; expect += 3) {
		/* The earlier boot, where station 1's frame is recorded. */
		memset(st, 0, sizeof st);
		memset(up, 0, sizeof up);
		memset(shadow, 0, sizeof shadow);
		now = 1000 * MS;
		nst = 3;
		for (int i = 0; i < nst; i++)
			station(i, expect, 0x6000 + (uint64_t)i);
		run(200, res);
		autov_payload(&st[1], 1001, &old);

		/* Today: the same three, new nonces; 1's old frame follows each of its own. */
		memset(st, 0, sizeof st);
		now += 60000 * MS;
		for (int i = 0; i < nst; i++)
			station(i, expect, 0x7000 + (uint64_t)i);
		shadow[1] = &old;
		run(400, res);
		for (int i = 0; i < nst; i++) {
			assert_int_equal(res[i], 1);
			assert_int_equal(st[i].excluded, 0);
		}
		same_view(3);
		/* The stale nonce is held beside the proven one, never in its place. */
		for (int j = 0; j < nst; j++) {
			if (j == 1)
				continue;
			const struct autov_peer *p = NULL;
			for (int k = 0; k < st[j].n; k++)
				if (memcmp(st[j].p[k].mac, st[1].me, 6) == 0)
					p = &st[j].p[k];
			assert_non_null(p);
			assert_true(p->live);
			assert_true(p->nonce[0] == 0x7001);
		}
	}
	shadow[1] = NULL;
}

/* Stations 0 and 1 alone (nonces nonce, nonce + 1, nodes=expect), agreed on their view. */
static void agreed_pair(int expect, uint64_t nonce)
{
	int res[MAXS];

	memset(st, 0, sizeof st);
	memset(up, 0, sizeof up);
	memset(shadow, 0, sizeof shadow);
	now = 1000 * MS;
	nst = 2;
	station(0, expect, nonce);
	station(1, expect, nonce + 1);
	run(200, res);
	assert_int_equal(res[0], 1);
}

/* Many recorded nonces of one station: the set stays bounded and the proven one stays first. */
static void a_stations_nonces_are_bounded(void **state)
{
	struct fab_auto old;

	(void)state;
	agreed_pair(2, 0x8000);
	autov_payload(&st[1], 1001, &old);
	for (uint64_t n = 1; n <= 100; n++) {
		old.nonce = 0x9000 + n;
		autov_input(&st[0], &old, now);	/* it echoes 0's nonce: each one proven in turn */
	}
	const struct autov_peer *p = &st[0].p[0];
	/* old echoes station 0's nonce, so each counts as fresh: it is replaced, set of one. */
	assert_int_equal(p->nn, 1);
	/* Frames that echo nothing of 0's: held as others, at most AUTOV_NONCES in all. */
	old.necho = 0;
	uint64_t proven = p->nonce[0];
	for (uint64_t n = 1; n <= 100; n++) {
		old.nonce = 0xa000 + n;
		autov_input(&st[0], &old, now);
	}
	assert_int_equal(p->nn, AUTOV_NONCES);
	assert_true(p->nonce[0] == proven);
	assert_true(p->nonce[1] == 0xa000 + 100);
	assert_true(st[0].nonces_dropped > 0);
	/* Its echo list carries each nonce held. */
	struct fab_auto a;
	autov_payload(&st[0], 1000, &a);
	assert_int_equal(a.necho, AUTOV_NONCES);
}

/*
 * A member answers a search at once, and the same search replayed every
 * millisecond for two seconds only at 50, 100, 200 ... ms, at most a
 * second apart: a handful of views, not one per replay (it was one per
 * 20 ms, the caller's limit, before).  A new search (a new nonce) is
 * answered at once.
 */
static void a_replayed_search_draws_few_answers(void **state)
{
	int answers = 0;
	struct fab_auto search;

	(void)state;
	agreed_pair(0, 0xb000);
	/* A third station's search, recorded. */
	struct autov absent;
	uint8_t mac[6] = { 2, 0x4e, 0x4f, 0x57, 0, 0x30 };
	autov_init(&absent, mac, 0, 0xc000, now);
	autov_payload(&absent, 77, &search);
	for (int t = 0; t < 2000; t++) {
		now += MS;
		answers += autov_input(&st[0], &search, now);
	}
	/* At 0, 50, 150, 350, 750, 1550 ms. */
	assert_int_equal(answers, 6);
	assert_true(st[0].answers_held > 1900);
	search.nonce = 0xc001;		/* it rebooted: a new search */
	now += MS;
	assert_int_equal(autov_input(&st[0], &search, now), 1);
	now += MS;
	assert_int_equal(autov_input(&st[0], &search, now), 0);
}

/* A station that boots after the view was made learns it from a member, made for it. */
static void late_station_takes_a_fresh_view(void **state)
{
	int res[MAXS];

	(void)state;
	now = 1000 * MS;
	nst = 3;
	station(0, 3, 0x5000);
	station(1, 3, 0x5001);
	up[2] = 0;
	run(20, res);
	assert_int_equal(st[0].nview, 0);	/* two of three: not yet */
	station(2, 3, 0x5002);
	run(200, res);
	same_view(3);
	/* And a rebooted member (a new nonce) gets its id back from the others' answers. */
	station(1, 3, 0x5011);
	run(200, res);
	assert_int_equal(res[1], 1);
	same_view(3);
}

UNIT_MAIN("tests", NULL, NULL,
	  cmocka_unit_test(stations_agree),
	  cmocka_unit_test(replayed_frames_of_an_earlier_boot_count_for_nothing),
	  cmocka_unit_test(late_station_takes_a_fresh_view),
	  cmocka_unit_test(a_present_station_shadowed_by_its_old_frame),
	  cmocka_unit_test(a_stations_nonces_are_bounded),
	  cmocka_unit_test(a_replayed_search_draws_few_answers))
