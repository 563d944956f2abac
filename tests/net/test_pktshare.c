/*
 * Host unit tests of the packet pool's shares (net/pktshare.c) over the
 * kernel's pool (drivers/pktbuf.c): a consumer holds at most its share,
 * whatever it is offered; the rest of the pool stays for those without a
 * share (the NIC rings); a buffer is uncharged with its last reference,
 * never before.
 */
#include <errno.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/host/host_kernel.h"
#include "tests/host/unit.h"

#include "drivers/pktbuf.h"
#include "net/pktshare.h"

#define POOL 16

static int c_lwip = -1;	/* a consumer with a share, as lwIP's */

/* A buffer charged to c, as a consumer takes one (lwIP's port): NULL if none or c holds its share. */
static struct pktbuf *get_for(int c)
{
	struct pktbuf *pb;

	if (!pkt_share_left(c) || !(pb = pkt_get()))
		return NULL;
	if (pkt_charge(pb, c) < 0) {
		pkt_put(pb);
		return NULL;
	}
	return pb;
}

/* The pool lives for the process; each case starts with it whole. */
static int setup(void **state)
{
	(void)state;
	if (host_pool_whole(POOL) < 0)
		return -1;
	if ((c_lwip = pkt_consumer("lwip", 4)) < 0)
		return -1;
	if (pkt_free_count() != POOL || pkt_held(c_lwip) != 0)
		return -1;
	return 0;
}

/* --- tests ------------------------------------------------------------------ */

/* Offered every buffer of the pool, the consumer keeps its share and no more. */
static void share_caps_what_is_held(void **state)
{
	struct pktbuf *pb[POOL];
	int kept = 0;

	(void)state;
	for (int i = 0; i < POOL; i++) {
		pb[i] = pkt_get();			/* a ring's buffer, filled, offered up */
		assert_non_null(pb[i]);
		if (pkt_charge(pb[i], c_lwip) == 0) {
			kept++;
		} else {
			assert_int_equal(pb[i]->charged, 0);
			pkt_put(pb[i]);			/* dropped: back to the pool at once */
			pb[i] = NULL;
		}
	}
	assert_int_equal(kept, 4);
	assert_int_equal(pkt_held(c_lwip), 4);
	assert_int_equal(pkt_refused(c_lwip) >= 12, 1);
	assert_int_equal(pkt_free_count(), POOL - 4);
	for (int i = 0; i < POOL; i++)
		if (pb[i])
			pkt_put(pb[i]);
	assert_int_equal(pkt_held(c_lwip), 0);
	assert_int_equal(pkt_free_count(), POOL);
}

/* With the consumer at its share, the rest of the pool is there for the others. */
static void the_rest_stays_for_the_rings(void **state)
{
	struct pktbuf *held[4], *ring[POOL];

	(void)state;
	for (int i = 0; i < 4; i++)
		assert_non_null(held[i] = get_for(c_lwip));
	assert_null(get_for(c_lwip));
	assert_int_equal(pkt_free_count(), POOL - 4);
	for (int i = 0; i < POOL - 4; i++)
		assert_non_null(ring[i] = pkt_get());
	assert_null(pkt_get());
	/* The pool is empty: a consumer under its share gets nothing either. */
	pkt_put(held[0]);
	assert_int_equal(pkt_held(c_lwip), 3);
	assert_non_null(ring[POOL - 4] = pkt_get());
	assert_null(get_for(c_lwip));
	for (int i = 0; i <= POOL - 4; i++)
		pkt_put(ring[i]);
	for (int i = 1; i < 4; i++)
		pkt_put(held[i]);
	assert_int_equal(pkt_held(c_lwip), 0);
	assert_int_equal(pkt_free_count(), POOL);
}

/* A charged buffer another holder references stays charged until the last put. */
static void uncharged_with_the_last_reference(void **state)
{
	struct pktbuf *pb;

	(void)state;
	assert_non_null(pb = get_for(c_lwip));
	pkt_ref(pb);				/* the driver's, until the NIC sent it */
	pkt_put(pb);
	assert_int_equal(pkt_held(c_lwip), 1);
	pkt_put(pb);
	assert_int_equal(pkt_held(c_lwip), 0);
	/* The same buffer, taken again, is nobody's. */
	struct pktbuf *again = pkt_get();
	assert_ptr_equal(again, pb);
	assert_int_equal(again->charged, 0);
	pkt_put(again);
	assert_int_equal(pkt_held(c_lwip), 0);
}

/* Misuse is refused and changes nothing. */
static void misuse(void **state)
{
	struct pktbuf *pb;

	(void)state;
	assert_non_null(pb = pkt_get());
	assert_int_equal(pkt_charge(pb, PKT_MAX_CONSUMERS), -EINVAL);
	assert_int_equal(pkt_charge(pb, -1), -EINVAL);
	assert_int_equal(pkt_charge(pb, c_lwip), 0);
	assert_int_equal(pkt_charge(pb, c_lwip), -EINVAL);	/* charged once only */
	assert_int_equal(pkt_held(c_lwip), 1);
	pkt_put(pb);
	assert_int_equal(pkt_share_set(c_lwip, POOL + 1), -EINVAL);
	assert_int_equal(pkt_share_set(c_lwip, -1), -EINVAL);
	assert_int_equal(pkt_share_set(PKT_MAX_CONSUMERS, 1), -EINVAL);
	assert_int_equal(pkt_share(c_lwip), 4);
	assert_null(get_for(PKT_MAX_CONSUMERS));
	/* A share of 0: the consumer holds nothing. */
	assert_int_equal(pkt_share_set(c_lwip, 0), 0);
	assert_null(get_for(c_lwip));
	assert_int_equal(pkt_free_count(), POOL);
}

/* A share lowered below what is held: nothing more until it drains below. */
static void share_lowered_while_held(void **state)
{
	struct pktbuf *pb[4];

	(void)state;
	for (int i = 0; i < 4; i++)
		assert_non_null(pb[i] = get_for(c_lwip));
	assert_int_equal(pkt_share_set(c_lwip, 2), 0);
	pkt_put(pb[0]);
	assert_null(get_for(c_lwip));	/* 3 held, share 2 */
	pkt_put(pb[1]);
	assert_null(get_for(c_lwip));	/* 2 held */
	pkt_put(pb[2]);
	assert_non_null(pb[0] = get_for(c_lwip));
	pkt_put(pb[0]);
	pkt_put(pb[3]);
	assert_int_equal(pkt_held(c_lwip), 0);
}

/* Consumers register by name: the same name the same number, a share in range, a table that fills. */
static void consumers_by_name(void **state)
{
	int a, b, names_left;

	(void)state;
	assert_int_equal(pkt_consumer_find("lwip"), c_lwip);
	assert_int_equal(pkt_consumer("lwip", 5), c_lwip);		/* again: its share set */
	assert_int_equal(pkt_share(c_lwip), 5);
	assert_int_equal(pkt_consumer("too-big", POOL + 1), -EINVAL);
	assert_int_equal(pkt_consumer("negative", -1), -EINVAL);
	assert_int_equal(pkt_consumer_find("too-big"), -ENOENT);
	a = pkt_consumer("a", 2);
	assert_true(a >= 0 && a != c_lwip);
	b = pkt_consumer("b", 3);
	assert_true(b >= 0 && b != a && b != c_lwip);
	assert_int_equal(pkt_consumer_find("b"), b);
	/* Fill the table: then a new name is refused, a known one still found. */
	names_left = 0;
	while (pkt_consumer(names_left == 0 ? "c" : "d", 1) >= 0 && ++names_left < PKT_MAX_CONSUMERS)
		;
	assert_int_equal(pkt_consumer("one-too-many", 1), -ENOSPC);
	assert_int_equal(pkt_consumer("a", 1), a);
	/* Each is charged apart. */
	struct pktbuf *pa = get_for(a), *pb = get_for(b);
	assert_non_null(pa);
	assert_non_null(pb);
	assert_int_equal(pkt_held(a), 1);
	assert_int_equal(pkt_held(b), 1);
	pkt_put(pa);
	pkt_put(pb);
	assert_int_equal(pkt_held(a), 0);
}

UNIT_MAIN("tests", NULL, NULL,
	  cmocka_unit_test_setup(share_caps_what_is_held, setup),
	  cmocka_unit_test_setup(the_rest_stays_for_the_rings, setup),
	  cmocka_unit_test_setup(uncharged_with_the_last_reference, setup),
	  cmocka_unit_test_setup(misuse, setup),
	  cmocka_unit_test_setup(share_lowered_while_held, setup),
	  cmocka_unit_test_setup(consumers_by_name, setup))
