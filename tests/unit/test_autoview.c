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

/* Station i's frame reaches every other station that is up; members answer searchers. */
static void broadcast(int i)
{
	struct fab_auto a;

	autov_payload(&st[i], 1000 + (uint64_t)i, &a);
	for (int j = 0; j < nst; j++)
		if (j != i && up[j] && autov_input(&st[j], &a, now))
			broadcast(j);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stations_agree),
		cmocka_unit_test(replayed_frames_of_an_earlier_boot_count_for_nothing),
		cmocka_unit_test(late_station_takes_a_fresh_view),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
