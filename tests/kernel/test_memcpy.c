/*
 * Host unit tests of the node's memcpy (kernel/memcpy.c), under the name
 * now_memcpy beside the host's own: every length from 0 to 700 and some
 * long ones, at every alignment of source and destination within 16 bytes,
 * both on pages that are TLB twins (the block copy) and on pages that are
 * not (rep movsq), and twins by the TLB's size as the kernel grew it;
 * nothing outside the destination range may change.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/host/unit.h"

#define memcpy now_memcpy
#include "kernel/memcpy.c"
#undef memcpy

#define SPAN (128 * 4096)		/* two halves 64 pages apart: twins */
#define GUARD 64

static uint8_t *area;

static int setup(void **state)
{
	(void)state;
	area = aligned_alloc(4096, 2 * SPAN);
	return area ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	free(area);
	return 0;
}

/* Copy n bytes from src to dst (dst's GUARD bytes either side checked too) and compare. */
static void check(uint8_t *dst, const uint8_t *src, size_t n)
{
	uint8_t before[GUARD], after[GUARD];

	memcpy(before, dst - GUARD, GUARD);
	memcpy(after, dst + n, GUARD);
	void *r = now_memcpy(dst, src, n);
	assert_ptr_equal(r, dst);
	if (n)
		assert_memory_equal(dst, src, n);
	assert_memory_equal(before, dst - GUARD, GUARD);
	assert_memory_equal(after, dst + n, GUARD);
}

/* A pattern over the bytes around both sides of a copy of up to n bytes. */
static void fill(const uint8_t *src, const uint8_t *dst, size_t n)
{
	size_t a = (size_t)(src - area) - GUARD, b = (size_t)(dst - area) - GUARD;

	for (size_t i = 0; i < n + 16 + 2 * GUARD; i++) {
		area[a + i] = (uint8_t)((a + i) * 131 + ((a + i) >> 9) + 7);
		area[b + i] = (uint8_t)((b + i) * 29 + 1);
	}
}

static void every_length_and_alignment(void **state, int twins)
{
	(void)state;
	uint8_t *src = area + 4096, *dst = area + SPAN + 4096 + (twins ? 0 : 5 * 4096);

	assert_int_equal(tlb_twins(dst, src), twins);
	for (size_t n = 0; n <= 700; n++)
		for (int sa = 0; sa < 16; sa += 3)
			for (int da = 0; da < 16; da += 5) {
				fill(src, dst, n);
				check(dst + da, src + sa, n);
			}
}

static void lengths_twins(void **state) { every_length_and_alignment(state, 1); }
static void lengths_not_twins(void **state) { every_length_and_alignment(state, 0); }

static void long_copies(void **state)
{
	(void)state;
	static const size_t lens[] = { 4096, 4097, 65536 - 3, 100000, 3 * 4096 + 255 };

	for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++)
		for (int twins = 0; twins < 2; twins++) {
			uint8_t *src = area + 64, *dst = area + SPAN + 64 + (twins ? 0 : 3 * 4096);
			assert_int_equal(tlb_twins(dst, src), twins);
			fill(src, dst, lens[k]);
			check(dst + 1, src + 3, lens[k]);
		}
}

/*
 * Twins follow the TLB's size (memcpy_tlb_pages): once vm_tlb_grow has
 * grown it, pages 64 apart take entries of their own and go by rep movsq;
 * pages that many entries apart are twins still.  Only the addresses are
 * compared here; a copy between grown-apart pages is the same bytes.
 */
static void twins_follow_tlb_size(void **state)
{
	(void)state;
	const uintptr_t base = (uintptr_t)1 << 32;

	assert_int_equal(memcpy_tlb_pages, 64);
	assert_true(tlb_twins((void *)(base + 64 * 4096), (void *)base));
	memcpy_tlb_pages = 32768;
	assert_false(tlb_twins((void *)(base + 64 * 4096), (void *)base));
	assert_false(tlb_twins((void *)(base + 1024 * 4096 + 100), (void *)(base + 8)));
	assert_true(tlb_twins((void *)(base + ((uintptr_t)32768 << 12) + 100), (void *)(base + 8)));
	assert_true(tlb_twins((void *)(base + 5), (void *)(base + 4000)));
	/* Real copies at the grown size: the halves 128 pages apart go by rep movsq now. */
	uint8_t *src = area + 64, *dst = area + SPAN + 64;
	assert_false(tlb_twins(dst, src));
	fill(src, dst, 65536 - 3);
	check(dst + 1, src + 3, 65536 - 3);
	memcpy_tlb_pages = 64;
	assert_true(tlb_twins(dst, src));
}

UNIT_MAIN("tests", setup, teardown,
	  cmocka_unit_test(twins_follow_tlb_size),
	  cmocka_unit_test(lengths_twins),
	  cmocka_unit_test(lengths_not_twins),
	  cmocka_unit_test(long_copies))
