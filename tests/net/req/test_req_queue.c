/*
 * Host unit tests of the remote-enqueue queue (net/req/queue.c): buffer
 * rules, FIFO through overflows, the deferred overflow of the
 * do-not-preempt-me protocol, and a systematic test that puts an overflow
 * at every step of a dequeue (the paper's race), with and without the
 * protocol.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cmocka.h>

#include "tests/host/unit.h"

#include "net/req/queue.h"

#define ARENA (64u << 20)

#include "tests/net/req/req_arena.h"

static int setup(void **state)
{
	(void)state;
	return arena_reset();
}

/* A first buffer of bytes, from the arena (counted apart: the caller owns it). */
static uint32_t *first_buffer(size_t bytes)
{
	uint32_t *b = arena_get(NULL, bytes);
	live_buffers--;
	return b;
}

/* The dequeuer's protocol: the bit around the dequeue, then space if flagged. */
static int deq(struct req_q *q, uint32_t *v)
{
	q->dnp = 1;
	int r = req_q_dequeue(q, v);
	q->dnp = 0;
	if (q->full)
		assert_int_equal(req_q_make_space(q), 0);
	return r;
}

/* The queue gives 1, 2, ... n in order, then nothing. */
static void deq_1_to(struct req_q *q, uint32_t n)
{
	uint32_t v;

	for (uint32_t i = 1; i <= n; i++) {
		assert_int_equal(deq(q, &v), 1);
		assert_int_equal(v, i);
	}
	assert_int_equal(deq(q, &v), 0);
}

/* --- tests ----------------------------------------------------------------- */

static void buffer_rules(void **state)
{
	(void)state;
	uint32_t *b = first_buffer(4096);
	assert_true(req_buffer_ok(b, 4096));
	assert_true(req_buffer_ok(b, 32));
	assert_false(req_buffer_ok(b, 3000));			/* not a power of two */
	assert_false(req_buffer_ok((uint8_t *)b + 64, 4096));	/* not aligned to its size */
	assert_false(req_buffer_ok(b, 16));			/* smaller than the minimum */
	assert_false(req_buffer_ok(b, 131072));			/* above 64 KiB */
	assert_false(req_buffer_ok(NULL, 4096));
	struct req_q q;
	assert_int_equal(req_q_init(&q, (uint8_t *)b + 4, 4096, &alloc), -EINVAL);
	assert_int_equal(req_q_init(&q, b, 4096, &alloc), 0);
	/* Figure 1: size and tail in word 0, size and head in word 1, next in word 2. */
	assert_int_equal(b[0], 1024u << 16 | 3);
	assert_int_equal(b[1], 1024u << 16 | 3);
	assert_int_equal(b[2], 0);
}

static void fifo_in_one_buffer(void **state)
{
	(void)state;
	struct req_q q;
	uint32_t *b = first_buffer(64), v;
	assert_int_equal(req_q_init(&q, b, 64, &alloc), 0);
	assert_int_equal(deq(&q, &v), 0);
	for (uint32_t i = 0; i < 10; i++)
		assert_int_equal(req_q_enqueue(&q, 100 + i), REQ_ENQ_OK);
	/* Entries sit at buffer OR index: indices 3.. */
	assert_int_equal(b[3], 100);
	assert_int_equal(req_buf_tail(b), 13);
	for (uint32_t i = 0; i < 10; i++) {
		assert_int_equal(deq(&q, &v), 1);
		assert_int_equal(v, 100 + i);
	}
	assert_int_equal(deq(&q, &v), 0);
	/* The tail wraps to 3, never to 0..2. */
	for (uint32_t i = 0; i < 12; i++) {
		assert_int_equal(req_q_enqueue(&q, i), REQ_ENQ_OK);
		assert_true(req_buf_tail(b) >= 3 && req_buf_tail(b) < 16);
		assert_int_equal(deq(&q, &v), 1);
		assert_int_equal(v, i);
	}
}

static void overflow_keeps_fifo(void **state)
{
	(void)state;
	struct req_q q;
	uint32_t *b = first_buffer(32), v;	/* 8 words: 5 slots */
	assert_int_equal(req_q_init(&q, b, 32, &alloc), 0);
	for (uint32_t i = 0; i < 1000; i++) {
		enum req_enq_result r = req_q_enqueue(&q, i);
		assert_true(r == REQ_ENQ_OK || r == REQ_ENQ_OVERFLOW);
	}
	assert_int_equal(q.overflows, 200);		/* every fifth enqueue fills it */
	assert_int_equal(req_q_count(&q), 1000);
	for (uint32_t i = 0; i < 1000; i++) {
		assert_int_equal(deq(&q, &v), 1);
		assert_int_equal(v, i);
	}
	assert_int_equal(deq(&q, &v), 0);
	/* Every copy was freed as it drained; the first buffer remains. */
	assert_int_equal(q.buffers_freed, q.buffers_linked);
	assert_int_equal(live_buffers, 0);
	assert_int_equal(req_buf_next(b), NULL);
}

static void random_mix_against_a_model(void **state)
{
	(void)state;
	struct req_q q;
	uint32_t *b = first_buffer(64), v, next_in = 0, next_out = 0;
	assert_int_equal(req_q_init(&q, b, 64, &alloc), 0);
	srand(3);
	for (int step = 0; step < 200000; step++) {
		if (rand() % 100 < 55) {
			enum req_enq_result r = req_q_enqueue(&q, next_in);
			assert_int_not_equal(r, REQ_ENQ_REFUSED);
			next_in++;
		} else if (deq(&q, &v)) {
			assert_int_equal(v, next_out);
			next_out++;
		} else {
			assert_int_equal(next_in, next_out);
		}
		assert_int_equal(req_q_count(&q), next_in - next_out);
	}
	req_q_destroy(&q);
	assert_int_equal(live_buffers, 0);
}

static void deferred_overflow_refuses_then_resumes(void **state)
{
	(void)state;
	struct req_q q;
	uint32_t *b = first_buffer(32), v;
	assert_int_equal(req_q_init(&q, b, 32, &alloc), 0);
	q.dnp = 1;		/* a dequeue is running */
	for (uint32_t i = 0; i < 4; i++)
		assert_int_equal(req_q_enqueue(&q, i), REQ_ENQ_OK);
	assert_int_equal(req_q_enqueue(&q, 4), REQ_ENQ_DEFERRED);
	assert_true(q.full);
	assert_false(q.accepting);
	assert_int_equal(req_q_enqueue(&q, 5), REQ_ENQ_REFUSED);	/* back-pressure */
	assert_int_equal(q.deferred_overflows, 1);
	assert_int_equal(q.overflows, 0);
	assert_int_equal(req_q_count(&q), 5);
	/* The dequeue completes, sees the flag, asks for space. */
	assert_int_equal(req_q_dequeue(&q, &v), 1);
	assert_int_equal(v, 0);
	q.dnp = 0;
	assert_int_equal(req_q_make_space(&q), 0);
	assert_false(q.full);
	assert_true(q.accepting);
	/* No copy was needed: the slot freed in place fills, and that overflows now. */
	assert_int_equal(q.buffers_linked, 0);
	assert_int_equal(req_q_enqueue(&q, 5), REQ_ENQ_OVERFLOW);
	assert_int_equal(q.buffers_linked, 1);
	deq_1_to(&q, 5);
}

static void no_memory_for_a_copy(void **state)
{
	(void)state;
	struct req_q q;
	uint32_t *b = first_buffer(32), v;
	struct req_alloc none = alloc;
	none.get = NULL;
	assert_int_equal(req_q_init(&q, b, 32, &none), -EINVAL);
	/* With memory exhausted the queue stops accepting; nothing stored is lost. */
	assert_int_equal(req_q_init(&q, b, 32, &alloc), 0);
	size_t saved = arena_used;
	arena_used = ARENA;	/* arena exhausted */
	for (uint32_t i = 0; i < 4; i++)
		assert_int_equal(req_q_enqueue(&q, i), REQ_ENQ_OK);
	assert_int_equal(req_q_enqueue(&q, 4), REQ_ENQ_NOMEM);
	assert_int_equal(req_q_enqueue(&q, 5), REQ_ENQ_NOSPACE);
	assert_int_equal(req_q_count(&q), 5);
	/* A dequeue frees a slot in place: acceptance resumes without a copy. */
	assert_int_equal(deq(&q, &v), 1);
	assert_int_equal(v, 0);
	assert_true(q.accepting);
	assert_int_equal(req_q_enqueue(&q, 5), REQ_ENQ_NOMEM);	/* full again, still no memory */
	arena_used = saved;
	deq_1_to(&q, 5);
	assert_int_equal(req_q_count(&q), 0);
}


/*
 * Item: the tail and head are read from the buffer's header, which lives
 * in memory anyone on the node can write.  A corrupted header must never
 * make an enqueue write outside the first buffer, or a dequeue read
 * outside the chain.
 */
/*
 * The overflow chain is capped: past the cap the queue stores what filled
 * it, allocates nothing, and refuses (REFUSED: the caller holds the REQ
 * and retries) until dequeues free a copy; nothing is lost, FIFO holds.
 */
static void overflow_cap_holds_back_then_resumes(void **state)
{
	(void)state;
	struct req_q q;
	uint32_t *b = first_buffer(32), v, next_out = 0;	/* 5 slots; copies are 64 bytes */
	assert_int_equal(req_q_init(&q, b, 32, &alloc), 0);
	assert_int_equal(q.cap_bytes, REQ_CHAIN_CAP);
	req_q_set_cap(&q, 128);					/* two copies */
	for (uint32_t i = 0; i < 10; i++)
		assert_int_equal(req_q_enqueue(&q, i), i % 5 == 4 ? REQ_ENQ_OVERFLOW : REQ_ENQ_OK);
	for (uint32_t i = 10; i < 14; i++)
		assert_int_equal(req_q_enqueue(&q, i), REQ_ENQ_OK);
	assert_int_equal(req_q_enqueue(&q, 14), REQ_ENQ_CAPPED);
	assert_int_equal(live_buffers, 2);
	assert_int_equal(q.chain_bytes, 128);
	assert_int_equal(q.capped, 1);
	assert_false(req_q_accepting(&q));
	for (int i = 0; i < 3; i++)
		assert_int_equal(req_q_enqueue(&q, 99), REQ_ENQ_REFUSED);
	assert_int_equal(live_buffers, 2);
	assert_int_equal(req_q_count(&q), 15);
	/* The oldest copy drains; space comes once it is freed, not before. */
	for (uint32_t i = 0; i < 5; i++) {
		q.dnp = 1;
		assert_int_equal(req_q_dequeue(&q, &v), 1);
		q.dnp = 0;
		assert_int_equal(v, next_out++);
		assert_true(q.full);
		assert_int_equal(req_q_make_space(&q), -ENOSPC);
		assert_int_equal(req_q_enqueue(&q, 99), REQ_ENQ_REFUSED);
	}
	q.dnp = 1;
	assert_int_equal(req_q_dequeue(&q, &v), 1);
	q.dnp = 0;
	assert_int_equal(v, next_out++);
	assert_int_equal(req_q_make_space(&q), 0);
	assert_true(req_q_accepting(&q));
	assert_int_equal(q.chain_bytes, 128);
	assert_int_equal(live_buffers, 2);
	for (uint32_t i = 15; i < 19; i++)
		assert_int_equal(req_q_enqueue(&q, i), REQ_ENQ_OK);
	while (deq(&q, &v) == 1)
		assert_int_equal(v, next_out++);
	assert_int_equal(next_out, 19);
	assert_int_equal(live_buffers, 0);
	assert_int_equal(q.chain_bytes, 0);
}

/* A cap below one copy: the queue is its first buffer alone, and still loses nothing. */
static void cap_below_one_copy(void **state)
{
	(void)state;
	struct req_q q;
	uint32_t *b = first_buffer(32), v;
	assert_int_equal(req_q_init(&q, b, 32, &alloc), 0);
	req_q_set_cap(&q, 0);
	for (uint32_t i = 0; i < 4; i++)
		assert_int_equal(req_q_enqueue(&q, i), REQ_ENQ_OK);
	assert_int_equal(req_q_enqueue(&q, 4), REQ_ENQ_CAPPED);
	assert_int_equal(req_q_enqueue(&q, 5), REQ_ENQ_REFUSED);
	assert_int_equal(live_buffers, 0);
	assert_int_equal(deq(&q, &v), 1);
	assert_int_equal(v, 0);
	assert_true(req_q_accepting(&q));
	assert_int_equal(req_q_enqueue(&q, 5), REQ_ENQ_CAPPED);
	deq_1_to(&q, 5);
}

static void corrupted_header_never_writes_outside(void **state)
{
	(void)state;
	struct req_q q;
	uint32_t *b = first_buffer(32), v;
	uint32_t *after = first_buffer(4096);		/* what lies beyond */
	memset(after, 0x5a, 4096);
	assert_int_equal(req_q_init(&q, b, 32, &alloc), 0);
	assert_int_equal(req_q_enqueue(&q, 1), REQ_ENQ_OK);
	const uint32_t bad[][2] = {
		{ 8u << 16 | 0xffff, 8u << 16 | 3 },	/* tail past the buffer */
		{ 8u << 16 | 8, 8u << 16 | 3 },		/* tail == size */
		{ 8u << 16 | 1, 8u << 16 | 3 },		/* tail inside the header */
		{ 0xffffu << 16 | 40, 0xffffu << 16 | 3 },	/* size larger than the buffer */
		{ 8u << 16 | 5, 8u << 16 | 0xfff0 },	/* head past the buffer */
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		b[0] = bad[i][0];
		b[1] = bad[i][1];
		uint64_t enq = q.enqueued;
		enum req_enq_result r = req_q_enqueue(&q, 0xdeadbeef);
		assert_int_equal(r, REQ_ENQ_CORRUPT);
		assert_int_equal(q.enqueued, enq);
		q.dnp = 1;
		assert_true(req_q_dequeue(&q, &v) < 0);
		q.dnp = 0;
		for (int k = 0; k < 1024; k++)
			assert_int_equal(after[k], 0x5a5a5a5a);
	}
	for (uint32_t k = 3; k < 8; k++)
		assert_int_not_equal(b[k], 0xdeadbeef);
}

/*
 * The next pointers live in the buffers: a stray write there (a pointer to
 * memory the queue never linked, a link cut, a loop) must never be
 * followed or freed.  The dequeue refuses (-EIO, counted); the count and
 * destroy use the queue's own list; put right, the queue goes on in order.
 */
static void corrupted_next_pointer_is_never_followed(void **state)
{
	(void)state;
	struct req_q q;
	uint32_t *b = first_buffer(32), v;
	uint32_t *foreign = first_buffer(64);	/* a buffer-shaped block the queue never linked */
	assert_int_equal(req_q_init(&q, b, 32, &alloc), 0);
	for (uint32_t i = 0; i < 12; i++)	/* two overflows: first -> copy2 -> copy1 */
		assert_true(req_q_enqueue(&q, i) != REQ_ENQ_CORRUPT);
	assert_int_equal(q.nlinks, 2);
	uint32_t *c2 = req_buf_next(b), *c1 = req_buf_next(c2);
	assert_non_null(c1);
	memcpy(foreign, c1, 64);		/* a perfect copy of a real header */
	int live = live_buffers;
	const uint32_t saved_b = b[2], saved_c2 = c2[2];
	uint32_t bad[][2] = {
		{ (uint32_t)(uintptr_t)foreign, saved_c2 },	/* first points elsewhere */
		{ saved_b, (uint32_t)(uintptr_t)foreign },	/* the middle link redirected */
		{ saved_b, 0 },					/* the chain cut short */
		{ saved_b, saved_b },				/* a loop */
		{ 0, saved_c2 },				/* no chain at all */
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		b[2] = bad[i][0];
		c2[2] = bad[i][1];
		uint64_t corrupt = q.corrupt;
		q.dnp = 1;
		assert_int_equal(req_q_dequeue(&q, &v), -EIO);
		q.dnp = 0;
		assert_int_equal(q.corrupt, corrupt + 1);
		assert_int_equal(live_buffers, live);		/* nothing freed */
		assert_int_equal(req_q_count(&q), 12);		/* counted from the queue's own list */
	}
	/* Put right: every entry in order, every copy freed. */
	b[2] = saved_b;
	c2[2] = saved_c2;
	for (uint32_t i = 0; i < 12; i++) {
		assert_int_equal(deq(&q, &v), 1);
		assert_int_equal(v, i);
	}
	assert_int_equal(live_buffers, live - 2);
	/* Destroy frees what the queue linked, whatever the buffers say. */
	for (uint32_t i = 0; i < 12; i++)
		req_q_enqueue(&q, i);
	assert_int_equal(q.nlinks, 2);
	b[2] = (uint32_t)(uintptr_t)foreign;
	req_q_destroy(&q);
	assert_int_equal(live_buffers, live - 2);
}

/*
 * Item: an overflow copy that cannot be allocated must not leave the
 * queue holding REQs back (the fabric would stall every protocol from
 * their sender): it refuses them as "no space", and the next REQ after
 * memory is back makes the copy and is taken.
 */
static void no_memory_refuses_and_recovers(void **state)
{
	(void)state;
	struct req_q q;
	uint32_t *b = first_buffer(32), v;
	assert_int_equal(req_q_init(&q, b, 32, &alloc), 0);
	size_t saved = arena_used;
	arena_used = ARENA;
	for (uint32_t i = 0; i < 4; i++)
		assert_int_equal(req_q_enqueue(&q, i), REQ_ENQ_OK);
	assert_int_equal(req_q_enqueue(&q, 4), REQ_ENQ_NOMEM);
	enum req_enq_result r = req_q_enqueue(&q, 99);
	assert_int_equal(r, REQ_ENQ_NOSPACE);		/* refused back, not held */
	assert_int_equal(req_q_count(&q), 5);
	arena_used = saved;
	/* Memory again: the next REQ makes the copy and is stored. */
	assert_int_equal(req_q_enqueue(&q, 5), REQ_ENQ_OK);
	assert_true(q.accepting);
	for (uint32_t i = 0; i <= 5; i++) {
		assert_int_equal(deq(&q, &v), 1);
		assert_int_equal(v, i);
	}
	assert_int_equal(deq(&q, &v), 0);
}

/* --- the race: an overflow at every step of a dequeue -------------------- */

static struct {
	int strike_step;		/* step at which "interrupts" strike */
	int struck;
	int protocol;			/* honour do-not-preempt-me */
	uint32_t next_in;
} race;

/* An interrupt at a dequeue step: enqueues until the first buffer fills. */
static void strike(struct req_q *q, int step)
{
	if (step != race.strike_step || race.struck)
		return;
	race.struck = 1;
	for (int i = 0; i < 64; i++) {
		if (!q->accepting)
			break;
		if (!race.protocol && q->dnp) {
			/* Without the protocol the handler runs at once, mid-dequeue. */
			q->dnp = 0;
			enum req_enq_result r = req_q_enqueue(q, race.next_in++);
			q->dnp = 1;
			if (r == REQ_ENQ_OVERFLOW)
				break;
			continue;
		}
		enum req_enq_result r = req_q_enqueue(q, race.next_in++);
		if (r == REQ_ENQ_DEFERRED || r == REQ_ENQ_OVERFLOW)
			break;
	}
}

/*
 * Run a dequeue with interrupts striking at `step`, many times, starting
 * from `fill` entries in the first buffer (and some in copies).  Return 1
 * if FIFO order and exactly-once delivery held throughout.
 */
static int run_race(int step, int fill, int protocol, uint64_t *deferred)
{
	struct req_q q;
	uint32_t *b = first_buffer(32), v, next_out = 0;
	int ok = 1;

	setup(NULL);
	b = first_buffer(32);
	if (req_q_init(&q, b, 32, &alloc) != 0)
		return 0;
	q.step_hook = strike;
	memset(&race, 0, sizeof race);
	race.strike_step = step;
	race.protocol = protocol;
	for (int i = 0; i < fill; i++)
		req_q_enqueue(&q, race.next_in++);
	for (int round = 0; round < 40 && ok; round++) {
		race.struck = 0;
		q.dnp = 1;
		int got = req_q_dequeue(&q, &v);
		q.dnp = 0;
		if (q.full && req_q_make_space(&q) != 0)
			ok = 0;
		if (got) {
			if (v != next_out)
				ok = 0;
			next_out++;
		}
	}
	/* Drain and check the rest. */
	q.step_hook = NULL;
	for (int i = 0; i < 100000 && ok; i++) {
		q.dnp = 1;
		int got = req_q_dequeue(&q, &v);
		q.dnp = 0;
		if (q.full)
			req_q_make_space(&q);
		if (!got)
			break;
		if (v != next_out)
			ok = 0;
		next_out++;
	}
	if (next_out != race.next_in)
		ok = 0;
	if (deferred)
		*deferred += q.deferred_overflows;
	return ok;
}

static void overflow_at_every_dequeue_step_with_protocol(void **state)
{
	uint64_t deferred = 0;

	(void)state;
	for (int step = 1; step <= 6; step++)
		for (int fill = 0; fill <= 5; fill++)
			if (!run_race(step, fill, 1, &deferred))
				fail_msg("FIFO or exactly-once broken: overflow at step %d, fill %d", step, fill);
	/* The overflows really struck during dequeues. */
	assert_true(deferred > 100);
}

static void without_the_protocol_the_race_breaks_the_queue(void **state)
{
	int broken = 0;

	(void)state;
	for (int step = 1; step <= 6; step++)
		for (int fill = 0; fill <= 5; fill++)
			if (!run_race(step, fill, 0, NULL))
				broken++;
	/* The paper's scenario: the handler moves the buffer under the dequeue. */
	assert_true(broken > 0);
}

UNIT_MAIN("req_queue", NULL, NULL,
	  cmocka_unit_test_setup(buffer_rules, setup),
	  cmocka_unit_test_setup(fifo_in_one_buffer, setup),
	  cmocka_unit_test_setup(overflow_keeps_fifo, setup),
	  cmocka_unit_test_setup(random_mix_against_a_model, setup),
	  cmocka_unit_test_setup(deferred_overflow_refuses_then_resumes, setup),
	  cmocka_unit_test_setup(no_memory_for_a_copy, setup),
	  cmocka_unit_test_setup(overflow_cap_holds_back_then_resumes, setup),
	  cmocka_unit_test_setup(cap_below_one_copy, setup),
	  cmocka_unit_test_setup(corrupted_header_never_writes_outside, setup),
	  cmocka_unit_test_setup(corrupted_next_pointer_is_never_followed, setup),
	  cmocka_unit_test_setup(no_memory_refuses_and_recovers, setup),
	  cmocka_unit_test_setup(overflow_at_every_dequeue_step_with_protocol, setup),
	  cmocka_unit_test_setup(without_the_protocol_the_race_breaks_the_queue, setup))
