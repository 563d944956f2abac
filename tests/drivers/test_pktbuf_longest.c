/*
 * Host unit tests of the packet buffer pool's two large blocks (drivers/
 * pktbuf.c), made for a NIC whose frames are longer than PKT_JUMBO_FRAME
 * (virtio-net's 64 KiB, the shared-memory link's slots): a frame up to
 * PKT_JUMBO_SHARE_FRAME takes a jumbo buffer first and a longest one only
 * when no jumbo buffer is free; a longer frame only a longest one; every
 * buffer goes back to its own block.  A process of its own: the blocks
 * are made once (test_pktbuf.c makes the single block).
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
#define LONGEST 3
#define LONGEST_FRAME 40000
#define SHORT (PKT_JUMBO_SHARE_FRAME - 14)	/* a frame the jumbo buffers hold */
#define LONG (PKT_JUMBO_SHARE_FRAME + 1)	/* one only the longest hold */

static int setup(void **state)
{
	(void)state;
	return host_pool_whole(POOL);
}

static void two_blocks(void **state)
{
	static struct pktbuf *jumbo[PKT_LARGE_BUFS_JUMBO];
	struct pktbuf *longest[LONGEST], *pb;

	(void)state;
	assert_int_equal(pkt_large_init(LONGEST, LONGEST_FRAME), 0);
	assert_int_equal(pkt_large_init(LONGEST, LONGEST_FRAME), 0);	/* made already */
	assert_int_equal(pkt_large_init(LONGEST, LONGEST_FRAME + 1), -ENOMEM);
	/* What a frame of each length may take, free and in all. */
	assert_int_equal(pkt_free_len(SHORT), PKT_LARGE_BUFS_JUMBO + LONGEST);
	assert_int_equal(pkt_total_len(SHORT), PKT_LARGE_BUFS_JUMBO + LONGEST);
	assert_int_equal(pkt_free_len(LONG), LONGEST);
	assert_int_equal(pkt_total_len(LONG), LONGEST);
	assert_int_equal(pkt_total_len(LONGEST_FRAME + 1), 0);
	assert_null(pkt_get_len(LONGEST_FRAME + 1));
	/* Short frames: every jumbo buffer first, each long enough. */
	for (int i = 0; i < PKT_LARGE_BUFS_JUMBO; i++) {
		assert_non_null(jumbo[i] = pkt_get_len(SHORT));
		assert_int_equal(jumbo[i]->large, 1);
		assert_true(pkt_buf_end(jumbo[i]) >= jumbo[i]->data + PKT_JUMBO_SHARE_FRAME);
		assert_true(pkt_large_room(jumbo[i]) < PKT_HEADROOM + LONGEST_FRAME);
	}
	assert_int_equal(pkt_free_len(SHORT), LONGEST);
	/* Then a longest one, which a long frame needs: it finds one fewer. */
	assert_non_null(pb = pkt_get_len(SHORT));
	assert_int_equal(pb->large, 2);
	assert_int_equal(pkt_free_len(LONG), LONGEST - 1);
	for (int i = 0; i < LONGEST - 1; i++) {
		assert_non_null(longest[i] = pkt_get_len(LONG));
		assert_int_equal(longest[i]->large, 2);
		assert_ptr_equal(pkt_buf_end(longest[i]), longest[i]->buf + pkt_large_room(longest[i]));
		assert_true(pkt_large_room(longest[i]) >= PKT_HEADROOM + LONGEST_FRAME);
	}
	assert_null(pkt_get_len(LONG));
	assert_null(pkt_get_len(SHORT));
	assert_int_equal(pkt_free_count(), POOL);	/* the small pool untouched */
	/* Each goes back to its own block. */
	pkt_put(pb);
	assert_int_equal(pkt_free_len(LONG), 1);
	pkt_put(jumbo[0]);
	assert_int_equal(pkt_free_len(LONG), 1);
	assert_int_equal(pkt_free_len(SHORT), 2);
	assert_ptr_equal(pkt_get_len(SHORT), jumbo[0]);	/* the jumbo one first again */
	pkt_put(jumbo[0]);
	for (int i = 1; i < PKT_LARGE_BUFS_JUMBO; i++)
		pkt_put(jumbo[i]);
	for (int i = 0; i < LONGEST - 1; i++)
		pkt_put(longest[i]);
	assert_int_equal(pkt_free_len(SHORT), PKT_LARGE_BUFS_JUMBO + LONGEST);
	assert_int_equal(pkt_free_len(LONG), LONGEST);
}

UNIT_MAIN("tests", NULL, NULL, cmocka_unit_test_setup(two_blocks, setup))
