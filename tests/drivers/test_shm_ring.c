/*
 * Host unit tests of the shared-memory link's layout (drivers/shm_ring.h):
 * the rings of every ordered pair fit the region and do not overlap, every
 * slot starts a cache line, and a slot's stamp says that its frame is
 * there exactly when it is: a producer and a consumer following the
 * ring's rules over more than 2^16 frames (the stamps' count wraps), with
 * each ring size, and a stamp left from an earlier turn or from memory
 * never written never taken for the next frame.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/host/unit.h"

#include "drivers/shm_ring.h"

static void test_layout(void **state)
{
	(void)state;
	for (int nodes = 1; nodes <= 64; nodes *= 2) {
		for (uint64_t size = 1 << 20; size <= 256ull << 20; size *= 2) {
			struct shm_geom g = shm_geom(size, nodes);
			if (!g.slots)
				continue;
			assert_true(shm_bytes(nodes, g) <= size);
			assert_true(g.slot >= SHM_SLOT_MIN && g.slot <= SHM_SLOT_MAX && !(g.slot & (g.slot - 1)));
			assert_true(g.slots >= SHM_SLOTS_MIN && g.slots <= SHM_SLOTS_MAX && !(g.slots & (g.slots - 1)));
			/* A larger slot only with every slot a ring has room for; and the largest that fits. */
			if (g.slot > SHM_SLOT_MIN)
				assert_int_equal(g.slots, SHM_SLOTS_MAX);
			if (g.slot < SHM_SLOT_MAX)
				assert_true(shm_bytes(nodes, (struct shm_geom){ g.slot * 2, SHM_SLOTS_MAX }) > size);
			assert_true(shm_frame_max(g) >= 1514 && shm_frame_max(g) <= SHM_FRAME_LIMIT);
			assert_true(4 + shm_frame_max(g) <= g.slot);
			void *base = aligned_alloc(4096, size);	/* addresses only: never touched */
			assert_non_null(base);
			uint8_t *last_end = (uint8_t *)base + shm_rings(nodes);
			assert_true(shm_lines(nodes) + SHM_LINES * SHM_CTL <= shm_rings(nodes));
			for (int dst = 0; dst < nodes; dst++)
				for (int src = 0; src < nodes; src++) {
					struct shm_ring *r = shm_ring(base, nodes, g, src, dst);
					assert_ptr_equal((uint8_t *)r, last_end);
					for (unsigned n = 0; n < g.slots; n++)
						assert_int_equal((uintptr_t)shm_slot(r, g, n) % 64, 0);
					last_end = (uint8_t *)r + shm_ring_bytes(g);
				}
			assert_true((uint64_t)(last_end - (uint8_t *)base) <= size);
			free(base);
		}
	}
	/* What boot/cluster sizes for 2, 4 and 8 nodes: 64 KiB, 32 KiB and 8 KiB slots. */
	assert_int_equal(shm_geom(32u << 20, 2).slot, 65536);
	assert_int_equal(shm_geom(64u << 20, 4).slot, 32768);
	assert_int_equal(shm_geom(64u << 20, 8).slot, 8192);
	assert_int_equal(shm_geom(1u << 20, 2).slot, SHM_SLOT_MIN);
	assert_int_equal(shm_geom(1u << 20, 2).slots, SHM_SLOTS_MAX);
	assert_int_equal(shm_geom(0, 2).slots, 0);
}

/*
 * A producer that publishes when the ring has room and a consumer that
 * takes when the next slot's stamp names its frame, in a pseudo-random
 * interleaving: every frame taken once, in order, with its length, and
 * the stamp never names a frame not yet published.
 */
static void test_stamps_over_the_wrap(void **state)
{
	(void)state;
	for (unsigned slots = SHM_SLOTS_MIN; slots <= SHM_SLOTS_MAX; slots *= 2) {
		struct shm_geom g = { slots == SHM_SLOTS_MAX ? SHM_SLOT_MAX : SHM_SLOT_MIN, slots };
		const uint32_t fmax = shm_frame_max(g);
		struct shm_ring *r = calloc(1, shm_ring_bytes(g));
		uint32_t tail = 0, head = 0, taken = 0, x = 12345;
		const uint32_t frames = (1u << 16) + 3 * slots + 7;

		assert_non_null(r);
		while (taken < frames) {
			x = x * 1103515245 + 12345;
			if ((x >> 16) & 1 && tail < frames && tail - head < slots) {
				struct shm_slot *s = shm_slot(r, g, tail);
				uint32_t len = SHM_FRAME_MIN + tail % (fmax - SHM_FRAME_MIN + 1);
				memcpy(s->frame, &tail, sizeof tail);
				tail++;
				s->stamp = shm_stamp(tail, len);
			} else {
				struct shm_slot *s = shm_slot(r, g, head);
				int there = shm_stamp_is(s->stamp, head + 1);
				assert_int_equal(there, head < tail);
				if (there) {
					uint32_t n;
					memcpy(&n, s->frame, sizeof n);
					assert_int_equal(n, head);
					assert_int_equal(s->stamp & 0xffff,
							 SHM_FRAME_MIN + head % (fmax - SHM_FRAME_MIN + 1));
					head++;
					taken++;
				}
			}
		}
		free(r);
	}
}

/* Zeroed memory (a fresh region) holds no frame for a consumer starting at any count below 2^16. */
static void test_fresh_memory_holds_nothing(void **state)
{
	(void)state;
	for (uint32_t count = 0; count < (1u << 16) - 1; count++)
		assert_false(shm_stamp_is(0, count + 1));
	assert_true(shm_stamp_is(shm_stamp(70000, 60), 70000));
	assert_int_equal(shm_stamp(70000, 60) & 0xffff, 60);
}

UNIT_MAIN("tests", NULL, NULL,
	  cmocka_unit_test(test_layout),
	  cmocka_unit_test(test_stamps_over_the_wrap),
	  cmocka_unit_test(test_fresh_memory_holds_nothing))
