/*
 * libFuzzer target: the REQ receive path.  Each input is a sequence of
 * (length, message) chunks arriving at a node with three queues of tiny
 * buffers inside a guarded arena below 4 GiB.  A message goes through
 * req_wire_parse; an RQ_ENQ for a known (address, generation) is enqueued
 * exactly as net/req/remote.c does; input bits also run dequeues (with the
 * do-not-preempt-me bit, and interleaved enqueues that overflow during
 * them), make space, and destroy or recreate queues.  Checks: nothing is
 * ever written outside the buffers the queues own, every queue hands out
 * each word once and in FIFO order, and no buffer leaks.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "net/req/queue.h"
#include "net/req/wire.h"

#define ARENA (512u << 10)	/* small: exhausting it exercises the no-memory path too */
#define GUARD 0xa5

static uint8_t *arena;
static size_t used;
static int live;
static uint8_t owned[ARENA / 32];	/* one flag per 32-byte unit handed out */

static void *get(void *ctx, size_t bytes)
{
	(void)ctx;
	size_t a = (used + bytes - 1) & ~(bytes - 1);
	if (a + bytes > ARENA)
		return NULL;
	used = a + bytes;
	live++;
	memset(owned + a / 32, 1, bytes / 32);
	return arena + a;
}

static void put(void *ctx, void *b, size_t bytes)
{
	(void)ctx;
	size_t a = (size_t)((uint8_t *)b - arena);
	memset(owned + a / 32, 0, bytes / 32);
	memset(b, GUARD, bytes);
	live--;
}

static const struct req_alloc alloc = { get, put, NULL };

struct fq {
	int used;
	struct req_q q;
	uint32_t gen;
	uint32_t next_out;	/* the word we expect next (words are a counter) */
	uint32_t next_in;
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fq qs[3];
	uint32_t gen = 1;

	if (!arena) {
		arena = mmap(NULL, ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
		if (arena == MAP_FAILED)
			abort();
	}
	/* Only the part the previous run handed out can have changed. */
	memset(arena, GUARD, used ? used : ARENA);
	memset(owned, 0, sizeof owned);
	used = 0;
	live = 0;
	memset(qs, 0, sizeof qs);
	for (int i = 0; i < 3; i++) {
		void *b = get(NULL, 32u << i);
		if (req_q_init(&qs[i].q, b, 32u << i, &alloc) != 0)
			abort();
		qs[i].used = 1;
		qs[i].gen = gen++;
	}

	while (size >= 2) {
		size_t n = data[0] % 64, ctl = data[1];
		data += 2;
		size -= 2;
		if (n > size)
			n = size;
		struct req_msg m;
		if (req_wire_parse(data, n, &m) == 0 && m.op == RQ_ENQ) {
			for (int i = 0; i < 3; i++) {
				struct fq *f = &qs[i];
				if (!f->used || (uintptr_t)f->q.first != m.addr || f->gen != m.gen)
					continue;
				/* The word is ours to choose: a counter, to check FIFO. */
				enum req_enq_result r = req_q_enqueue(&f->q, f->next_in);
				if (r != REQ_ENQ_REFUSED)
					f->next_in++;
			}
		}
		data += n;
		size -= n;

		/* Control bits: dequeue (maybe with enqueues striking mid-way), space, destroy. */
		struct fq *f = &qs[ctl % 3];
		if (!f->used)
			continue;
		if (ctl & 0x10) {
			f->q.dnp = 1;
			if (ctl & 0x20)		/* an "interrupt" during the dequeue */
				for (int k = 0; k < 8; k++)
					if (req_q_enqueue(&f->q, f->next_in) != REQ_ENQ_REFUSED)
						f->next_in++;
			uint32_t w;
			int got = req_q_dequeue(&f->q, &w);
			f->q.dnp = 0;
			if (got) {
				if (w != f->next_out)
					abort();	/* FIFO or exactly-once broken */
				f->next_out++;
			}
			if (f->q.full)
				req_q_make_space(&f->q);
		}
		if ((ctl & 0xc0) == 0xc0) {
			size_t bytes = f->q.first_bytes;
			uint32_t *first = f->q.first;
			req_q_destroy(&f->q);
			memset(first, 0, bytes);
			if (req_q_init(&f->q, first, bytes, &alloc) != 0)
				abort();
			f->gen = gen++;
			f->next_in = f->next_out = 0;
		}
		if (req_q_count(&f->q) != f->next_in - f->next_out)
			abort();
	}
	/* Nothing outside owned buffers changed. */
	for (size_t i = 0; i < used; i++)
		if (!owned[i / 32] && arena[i] != GUARD)
			abort();
	for (size_t i = used; i < used + 256 && i < ARENA; i++)
		if (arena[i] != GUARD)
			abort();
	for (int i = 0; i < 3; i++)
		req_q_destroy(&qs[i].q);
	if (live != 3)
		abort();	/* only the three first buffers remain */
	return 0;
}
