/* Host unit tests of the buddy page allocator (kernel/page.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/host/unit.h"

#include "kernel/page.h"

#define ARENA_PAGES 4096		/* 16 MiB */

static uint8_t *arena;
static uint8_t *meta;

static int setup(void **state)
{
	(void)state;
	/* Align to the largest block so that buddies line up as in the kernel. */
	arena = aligned_alloc(PAGE_SIZE << PAGE_MAX_ORDER, ARENA_PAGES * PAGE_SIZE);
	uintptr_t lo = (uintptr_t)arena, hi = lo + ARENA_PAGES * PAGE_SIZE;
	meta = malloc(page_meta_bytes(lo, hi));
	page_init(lo, hi, meta);
	return arena && meta ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	free(arena);
	free(meta);
	return 0;
}

static void adds_and_merges(void **state)
{
	(void)state;
	page_add((uintptr_t)arena, ARENA_PAGES * PAGE_SIZE);
	assert_int_equal(page_free_pages(), ARENA_PAGES);
	/* Everything merged into maximal blocks. */
	void *blocks[ARENA_PAGES >> PAGE_MAX_ORDER];
	for (size_t i = 0; i < ARENA_PAGES >> PAGE_MAX_ORDER; i++) {
		blocks[i] = page_alloc(PAGE_MAX_ORDER);
		assert_non_null(blocks[i]);
	}
	assert_null(page_alloc(0));
	for (size_t i = 0; i < ARENA_PAGES >> PAGE_MAX_ORDER; i++)
		page_free(blocks[i], PAGE_MAX_ORDER);
	assert_int_equal(page_free_pages(), ARENA_PAGES);
}

static void alignment_and_disjointness(void **state)
{
	enum { N = 300 };
	struct { uint8_t *p; int order; } b[N];
	int n = 0;

	(void)state;
	page_add((uintptr_t)arena, ARENA_PAGES * PAGE_SIZE);
	srand(7);
	for (int i = 0; i < N; i++) {
		int order = rand() % 5;
		uint8_t *p = page_alloc(order);
		if (!p)
			continue;
		assert_int_equal((uintptr_t)p & ((PAGE_SIZE << order) - 1), 0);
		assert_true(p >= arena && p + (PAGE_SIZE << order) <= arena + ARENA_PAGES * PAGE_SIZE);
		memset(p, n & 0xff, PAGE_SIZE << order);
		b[n].p = p;
		b[n].order = order;
		n++;
	}
	/* Each block still holds its own fill: no two overlapped. */
	for (int i = 0; i < n; i++)
		for (size_t j = 0; j < (PAGE_SIZE << b[i].order); j += 512)
			assert_int_equal(b[i].p[j], i & 0xff);
	/* Free in a scrambled order; all memory comes back merged. */
	for (int i = 0; i < n; i += 2)
		page_free(b[i].p, b[i].order);
	for (int i = 1; i < n; i += 2)
		page_free(b[i].p, b[i].order);
	assert_int_equal(page_free_pages(), ARENA_PAGES);
	assert_non_null(page_alloc(PAGE_MAX_ORDER));
}

static void split_ranges_do_not_merge_across_holes(void **state)
{
	(void)state;
	/* Two ranges with a one-page hole between them. */
	page_add((uintptr_t)arena, 100 * PAGE_SIZE);
	page_add((uintptr_t)arena + 101 * PAGE_SIZE, 27 * PAGE_SIZE);
	assert_int_equal(page_free_pages(), 127);
	/* The hole must never be handed out. */
	for (;;) {
		uint8_t *p = page_alloc(0);
		if (!p)
			break;
		assert_true(p != arena + 100 * PAGE_SIZE);
	}
	assert_int_equal(page_free_pages(), 0);
}

static void partial_pages_are_dropped(void **state)
{
	(void)state;
	page_add((uintptr_t)arena + 100, 3 * PAGE_SIZE);
	/* [100, 3 pages + 100) covers two whole pages. */
	assert_int_equal(page_free_pages(), 2);
}

/*
 * An unaligned range goes in as the largest aligned blocks it holds: every
 * page of it can be had, none outside it, and adding it writes none of its
 * pages (the free lists live beside the metadata: a canary in every page
 * survives the add).
 */
static void unaligned_range_in_blocks(void **state)
{
	enum { FIRST = 3, LAST = 3000 };	/* pages [3, 3000) */
	static uint8_t seen[ARENA_PAGES];

	(void)state;
	memset(arena, 0xa5, ARENA_PAGES * PAGE_SIZE);
	page_add((uintptr_t)arena + FIRST * PAGE_SIZE, (LAST - FIRST) * PAGE_SIZE);
	assert_int_equal(page_free_pages(), LAST - FIRST);
	for (size_t i = 0; i < ARENA_PAGES * PAGE_SIZE; i += 8)
		assert_int_equal(arena[i], 0xa5);
	/* Given again: ignored. */
	page_add((uintptr_t)arena + FIRST * PAGE_SIZE, PAGE_SIZE);
	assert_int_equal(page_free_pages(), LAST - FIRST);
	memset(seen, 0, sizeof seen);
	for (;;) {
		uint8_t *p = page_alloc(0);
		if (!p)
			break;
		size_t i = (size_t)(p - arena) / PAGE_SIZE;
		assert_true(i >= FIRST && i < LAST);
		assert_int_equal(seen[i], 0);
		seen[i] = 1;
	}
	assert_int_equal(page_free_pages(), 0);
	for (size_t i = FIRST; i < LAST; i++)
		page_free(arena + i * PAGE_SIZE, 0);
	assert_int_equal(page_free_pages(), LAST - FIRST);
	assert_non_null(page_alloc(PAGE_MAX_ORDER));	/* [1024, 2048) merged again */
}

static void order_of_sizes(void **state)
{
	(void)state;
	assert_int_equal(page_order(1), 0);
	assert_int_equal(page_order(PAGE_SIZE), 0);
	assert_int_equal(page_order(PAGE_SIZE + 1), 1);
	assert_int_equal(page_order(64 * 1024), 4);
	assert_int_equal(page_order(PAGE_SIZE << PAGE_MAX_ORDER), PAGE_MAX_ORDER);
	assert_int_equal(page_order((PAGE_SIZE << PAGE_MAX_ORDER) + 1), -1);
	assert_null(page_alloc(PAGE_MAX_ORDER + 1));
	assert_null(page_alloc(-1));
}

UNIT_MAIN("page", NULL, NULL,
	  cmocka_unit_test_setup_teardown(adds_and_merges, setup, teardown),
	  cmocka_unit_test_setup_teardown(alignment_and_disjointness, setup, teardown),
	  cmocka_unit_test_setup_teardown(unaligned_range_in_blocks, setup, teardown),
	  cmocka_unit_test_setup_teardown(split_ranges_do_not_merge_across_holes, setup, teardown),
	  cmocka_unit_test_setup_teardown(partial_pages_are_dropped, setup, teardown),
	  cmocka_unit_test_setup_teardown(order_of_sizes, setup, teardown))
