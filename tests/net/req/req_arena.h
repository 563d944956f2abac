/*
 * The request queues' allocator for the host tests (struct req_alloc,
 * net/req/queue.h): buffers from an arena below 4 GiB (they hold 32-bit
 * next pointers) of ARENA bytes, a size the including file defines; each
 * aligned to its size, none reused, each given back filled with 0xee.
 */
#ifndef TESTS_NET_REQ_REQ_ARENA_H
#define TESTS_NET_REQ_REQ_ARENA_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "net/req/queue.h"

static uint8_t *arena;
static size_t arena_used;
static int live_buffers;	/* taken and not given back */
static int no_memory;		/* 1: every request is refused */

static void *arena_get(void *ctx, size_t bytes)
{
	(void)ctx;
	size_t a = (arena_used + bytes - 1) & ~(bytes - 1);
	if (no_memory || a + bytes > ARENA)
		return NULL;
	arena_used = a + bytes;
	live_buffers++;
	return arena + a;
}

static void arena_put(void *ctx, void *buf, size_t bytes)
{
	(void)ctx;
	memset(buf, 0xee, bytes);
	live_buffers--;
}

static const struct req_alloc alloc = { arena_get, arena_put, NULL };

/* The arena mapped (the first time) and all free, every counter cleared: 0, or -1 if it cannot be mapped. */
static int arena_reset(void)
{
	if (!arena) {
		arena = mmap(NULL, ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT,
			     -1, 0);
		if (arena == MAP_FAILED)
			return -1;
	}
	arena_used = 0;
	live_buffers = 0;
	no_memory = 0;
	return 0;
}

#endif
