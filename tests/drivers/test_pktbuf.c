/*
 * Host unit tests of the packet buffer pool itself (drivers/pktbuf.c): a
 * buffer goes back with its last reference, never before, and then off
 * the count of the consumer it was charged to; the large pool.  The
 * shares are net's (tests/net/test_pktshare.c).
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

#define POOL 8
#define LARGE 2
#define LARGE_FRAME 4000

/* The pool lives for the process; each case starts with it whole. */
static int setup(void **state)
{
	(void)state;
	return host_pool_whole(POOL);
}

/* --- tests ------------------------------------------------------------------ */

/* Every buffer of the pool, each ready (one reference, data at the headroom), then none. */
static void get_until_empty(void **state)
{
	struct pktbuf *pb[POOL];

	(void)state;
	assert_int_equal(pkt_total(), POOL);
	for (int i = 0; i < POOL; i++) {
		assert_non_null(pb[i] = pkt_get());
		assert_int_equal(pb[i]->refs, 1);
		assert_int_equal(pb[i]->charged, 0);
		assert_int_equal(pb[i]->len, 0);
		assert_ptr_equal(pb[i]->data, pb[i]->buf + PKT_HEADROOM);
		assert_ptr_equal(pkt_buf_end(pb[i]), pb[i]->buf + PKT_BUF_SIZE);
		assert_int_equal(pkt_free_count(), POOL - 1 - i);
	}
	assert_null(pkt_get());
	assert_int_equal(pkt_low_water(), 0);
	for (int i = 0; i < POOL; i++)
		pkt_put(pb[i]);
	assert_int_equal(pkt_free_count(), POOL);
}

/* A buffer another holder references goes back with the last put. */
static void back_with_the_last_reference(void **state)
{
	struct pktbuf *pb;

	(void)state;
	assert_non_null(pb = pkt_get());
	pkt_ref(pb);				/* the driver's, until the NIC sent it */
	pkt_put(pb);
	assert_int_equal(pkt_free_count(), POOL - 1);
	pkt_put(pb);
	assert_int_equal(pkt_free_count(), POOL);
}

/* A charged buffer (as net's pkt_charge leaves it) counts for its consumer until its last reference goes. */
static void off_its_consumer_with_the_last_reference(void **state)
{
	struct pktbuf *pb;
	int c = PKT_MAX_CONSUMERS - 1;

	(void)state;
	assert_non_null(pb = pkt_get());
	pb->charged = (uint8_t)(c + 1);
	pkt_held_bufs[c]++;
	pkt_ref(pb);
	pkt_put(pb);
	assert_int_equal(pkt_held_bufs[c], 1);
	assert_int_equal(pb->charged, c + 1);
	pkt_put(pb);
	assert_int_equal(pkt_held_bufs[c], 0);
	/* The same buffer, taken again, is nobody's. */
	struct pktbuf *again = pkt_get();
	assert_ptr_equal(again, pb);
	assert_int_equal(again->charged, 0);
	pkt_put(again);
	for (int i = 0; i < PKT_MAX_CONSUMERS; i++)
		assert_int_equal(pkt_held_bufs[i], 0);
}

/* Frames longer than a small buffer's come from the large pool, once it is made; the small pool is untouched. */
static void large_buffers(void **state)
{
	struct pktbuf *pb[LARGE];

	(void)state;
	assert_null(pkt_get_len(PKT_MAX_FRAME + 1));	/* no large pool yet */
	assert_int_equal(pkt_free_len(PKT_MAX_FRAME + 1), 0);
	assert_int_equal(pkt_large_init(LARGE, LARGE_FRAME), 0);
	assert_int_equal(pkt_large_init(LARGE, LARGE_FRAME - 1), 0);	/* made already, long enough */
	assert_int_equal(pkt_large_init(LARGE, LARGE_FRAME + 1), -ENOMEM);
	assert_int_equal(pkt_free_len(LARGE_FRAME), LARGE);
	assert_null(pkt_get_len(LARGE_FRAME + 1));
	for (int i = 0; i < LARGE; i++) {
		assert_non_null(pb[i] = pkt_get_len(LARGE_FRAME));
		assert_int_equal(pb[i]->large, 1);
		assert_ptr_equal(pb[i]->data, pb[i]->buf + PKT_HEADROOM);
		assert_ptr_equal(pkt_buf_end(pb[i]), pb[i]->buf + pkt_large_room(pb[i]));
		assert_true(pkt_large_room(pb[i]) >= PKT_HEADROOM + LARGE_FRAME);
	}
	assert_null(pkt_get_len(PKT_MAX_FRAME + 1));
	assert_int_equal(pkt_free_count(), POOL);
	struct pktbuf *small = pkt_get_len(PKT_MAX_FRAME);
	assert_non_null(small);
	assert_int_equal(small->large, 0);
	pkt_put(small);
	for (int i = 0; i < LARGE; i++)
		pkt_put(pb[i]);
	assert_int_equal(pkt_free_len(LARGE_FRAME), LARGE);
}

UNIT_MAIN("tests", NULL, NULL,
	  cmocka_unit_test_setup(get_until_empty, setup),
	  cmocka_unit_test_setup(back_with_the_last_reference, setup),
	  cmocka_unit_test_setup(off_its_consumer_with_the_last_reference, setup),
	  cmocka_unit_test_setup(large_buffers, setup))
