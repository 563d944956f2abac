/*
 * Host unit tests of the receive half of REQ and the queue table
 * (net/req/qtab.c, which net/req/remote.c calls from the fabric's receive
 * path): each message goes through req_wire_parse and req_rx_enq as in
 * the kernel.  Rights per node with generations (export to one node,
 * grant, revoke), refusals by reason and their counters, what is held
 * back and what is refused back, and that a refused REQ writes nothing.
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

#include "net/req/qtab.h"
#include "net/req/wire.h"

#define ARENA (1u << 20)
#define SELF 0

#include "tests/net/req/req_arena.h"

static struct req_qtab tab;

static int setup(void **state)
{
	(void)state;
	if (arena_reset() < 0)
		return -1;
	memset(arena, 0x5a, ARENA);
	req_qtab_init(&tab, SELF);
	return 0;
}

/* A new queue on a fresh buffer of bytes. */
static int new_queue(size_t bytes)
{
	void *b = arena_get(NULL, bytes);
	return req_qtab_create(&tab, -1, b, bytes, &alloc);
}

/* One RQ_ENQ from src, through the wire format and the receive half. */
static int answer_ok;
static int can_answer_now(int src) { (void)src; return answer_ok; }

static struct req_rx rx(int src, uint64_t addr, uint32_t gen, uint32_t word, int flags, int can_answer)
{
	struct req_msg m = { 0 }, p;
	struct req_rx v;

	m.op = RQ_ENQ;
	m.flags = (uint8_t)flags;
	m.addr = addr;
	m.gen = gen;
	m.word = word;
	m.tag = 77;
	assert_int_equal(req_wire_parse((const uint8_t *)&m, sizeof m, &p), 0);
	answer_ok = can_answer;
	req_rx_enq(&tab, src, &p, can_answer_now, &v);
	return v;
}

static uint64_t addr_of(int q)
{
	return (uintptr_t)tab.e[q].q.first;
}

static uint32_t ticket(int q, int node)
{
	uint32_t g = 0;
	assert_int_equal(req_qtab_ticket(&tab, q, node, &g), 0);
	return g;
}

/* --- rights ------------------------------------------------------------------ */

static void new_queue_is_granted_to_nobody(void **state)
{
	(void)state;
	int q = new_queue(64);
	assert_true(q >= 0);
	struct req_rx v = rx(1, addr_of(q), ticket(q, 1), 5, 0, 1);
	assert_int_equal(v.qid, -1);
	assert_true(v.answer);
	assert_int_equal(v.status, RQS_DENIED);
	assert_int_equal(req_status_errno(v.status), -EACCES);
	assert_int_equal(tab.ctr.rx_denied, 1);
	assert_int_equal(req_q_count(&tab.e[q].q), 0);
}

static void export_for_one_node(void **state)
{
	(void)state;
	int q = new_queue(64);
	struct req_queue_answer a;
	assert_int_equal(req_qtab_export(&tab, q, "mine", 2), 0);
	/* The name service tells node 1 nothing but "not for you". */
	assert_int_equal(req_qtab_resolve(&tab, "mine", 1, &a), -EACCES);
	assert_int_equal(req_qtab_resolve(&tab, "nope", 2, &a), -ENOENT);
	assert_int_equal(req_qtab_resolve(&tab, "mine", 2, &a), 0);
	assert_int_equal(a.addr, addr_of(q));
	/* Node 1, knowing address and generation anyway, is refused and counted. */
	struct req_rx v = rx(1, a.addr, ticket(q, 1), 9, 0, 1);
	assert_int_equal(v.status, RQS_DENIED);
	assert_int_equal(tab.ctr.rx_denied, 1);
	v = rx(2, a.addr, a.gen, 10, 0, 1);
	assert_int_equal(v.qid, q);
	assert_false(v.answer);
	uint32_t w;
	assert_int_equal(req_q_dequeue(&tab.e[q].q, &w), 1);
	assert_int_equal(w, 10);
	assert_int_equal(req_q_dequeue(&tab.e[q].q, &w), 0);
	/* Never to itself; a taken name stays taken. */
	assert_int_equal(req_qtab_export(&tab, q, "mine", SELF), -EINVAL);
	int q2 = new_queue(64);
	assert_int_equal(req_qtab_export(&tab, q2, "mine", -1), -EEXIST);
}

static void revoke_makes_old_handles_stale(void **state)
{
	(void)state;
	int q = new_queue(64);
	struct req_queue_answer a1, a2;
	assert_int_equal(req_qtab_export(&tab, q, "all", -1), 0);
	assert_int_equal(req_qtab_resolve(&tab, "all", 1, &a1), 0);
	assert_int_equal(req_qtab_resolve(&tab, "all", 2, &a2), 0);
	assert_int_equal(rx(1, a1.addr, a1.gen, 1, 0, 1).qid, q);
	assert_int_equal(req_qtab_revoke(&tab, q, 1), 0);
	/* Node 1's old handle: stale, a clear error at the sender. */
	struct req_rx v = rx(1, a1.addr, a1.gen, 2, 0, 1);
	assert_int_equal(v.status, RQS_STALE);
	assert_int_equal(req_status_errno(v.status), -ESTALE);
	assert_int_equal(tab.ctr.rx_stale, 1);
	assert_int_equal(req_qtab_resolve(&tab, "all", 1, &a1), -EACCES);
	/* Node 2 is untouched. */
	assert_int_equal(rx(2, a2.addr, a2.gen, 3, 0, 1).qid, q);
	/* Granted again: the old handle stays stale; a new import works. */
	assert_int_equal(req_qtab_grant(&tab, q, 1), 0);
	assert_int_equal(rx(1, a1.addr, a1.gen, 4, 0, 1).status, RQS_STALE);
	struct req_queue_answer b;
	assert_int_equal(req_qtab_resolve(&tab, "all", 1, &b), 0);
	assert_int_not_equal(b.gen, a1.gen);
	assert_int_equal(rx(1, b.addr, b.gen, 5, 0, 1).qid, q);
	/* Revoking everyone. */
	assert_int_equal(req_qtab_revoke(&tab, q, -1), 0);
	assert_int_equal(rx(2, a2.addr, a2.gen, 6, 0, 1).status, RQS_STALE);
	assert_int_equal(rx(1, b.addr, b.gen, 6, 0, 1).status, RQS_STALE);
	/* Only the three accepted words are in the queue. */
	uint32_t w, want[] = { 1, 3, 5 };
	for (int i = 0; i < 3; i++) {
		assert_int_equal(req_q_dequeue(&tab.e[q].q, &w), 1);
		assert_int_equal(w, want[i]);
	}
	assert_int_equal(req_q_dequeue(&tab.e[q].q, &w), 0);
}

static void destroyed_and_reused_address(void **state)
{
	(void)state;
	int q = new_queue(64);
	uint64_t addr = addr_of(q);
	assert_int_equal(req_qtab_export(&tab, q, "x", -1), 0);
	uint32_t g = ticket(q, 1);
	uint32_t *first = tab.e[q].q.first;
	assert_int_equal(req_qtab_destroy(&tab, q), 0);
	struct req_rx v = rx(1, addr, g, 1, 0, 1);
	assert_int_equal(v.status, RQS_NOQUEUE);
	assert_int_equal(tab.ctr.rx_refused_noqueue, 1);
	/* A new queue on the same buffer: the old handle does not reach it. */
	int q2 = req_qtab_create(&tab, q, first, 64, &alloc);
	assert_int_equal(q2, q);
	assert_int_equal(req_qtab_export(&tab, q2, "x", -1), 0);
	assert_int_equal(rx(1, addr, g, 1, 0, 1).status, RQS_STALE);
	assert_int_equal(req_q_count(&tab.e[q2].q), 0);
	assert_int_equal(req_qtab_create(&tab, q, first, 64, &alloc), -EBUSY);
}

/* --- held back or refused back -------------------------------------------- */

static void verdict_that_cannot_go_is_held(void **state)
{
	(void)state;
	int q = new_queue(64);
	assert_int_equal(req_qtab_export(&tab, q, "x", -1), 0);
	uint32_t g = ticket(q, 1);
	/* An acknowledged REQ, or a refusal, while no answer can go: held, nothing done. */
	struct req_rx v = rx(1, addr_of(q), g, 1, RQF_ACK, 0);
	assert_true(v.hold);
	assert_int_equal(req_q_count(&tab.e[q].q), 0);
	v = rx(3, addr_of(q), g + 100, 1, 0, 0);
	assert_true(v.hold);
	assert_int_equal(tab.ctr.rx_stale, 0);
	/* A plain REQ needs no answer: taken. */
	v = rx(1, addr_of(q), g, 2, 0, 0);
	assert_false(v.hold);
	assert_int_equal(v.qid, q);
	v = rx(1, addr_of(q), g, 3, RQF_ACK, 1);
	assert_true(v.answer);
	assert_int_equal(v.status, RQS_OK);
}

static void full_during_dequeue_holds(void **state)
{
	(void)state;
	int q = new_queue(32);		/* 5 slots */
	assert_int_equal(req_qtab_export(&tab, q, "x", -1), 0);
	uint32_t g = ticket(q, 1);
	tab.e[q].q.dnp = 1;		/* a dequeue runs */
	for (uint32_t i = 0; i < 5; i++)
		assert_int_equal(rx(1, addr_of(q), g, i, 0, 1).qid, q);
	struct req_rx v = rx(1, addr_of(q), g, 5, 0, 1);
	assert_true(v.hold);		/* back-pressure until the dequeue asks for space */
	assert_int_equal(tab.ctr.rx_busy, 1);
	assert_int_equal(tab.e[q].refused_busy, 1);
}

static void no_memory_refuses_back(void **state)
{
	(void)state;
	int q = new_queue(32);
	assert_int_equal(req_qtab_export(&tab, q, "x", -1), 0);
	uint32_t g = ticket(q, 1);
	no_memory = 1;
	for (uint32_t i = 0; i < 5; i++)
		assert_int_equal(rx(1, addr_of(q), g, i, 0, 1).qid, q);
	assert_int_equal(tab.ctr.nomem, 1);
	/* Not held (that would stall the sender's channel): refused back. */
	struct req_rx v = rx(1, addr_of(q), g, 5, 0, 1);
	assert_false(v.hold);
	assert_true(v.answer);
	assert_int_equal(v.status, RQS_NOSPACE);
	assert_int_equal(req_status_errno(v.status), -ENOSPC);
	assert_int_equal(tab.ctr.rx_nospace, 1);
	/* While no answer can go it is held instead. */
	assert_true(rx(1, addr_of(q), g, 5, 0, 0).hold);
	no_memory = 0;
	v = rx(1, addr_of(q), g, 5, 0, 1);
	assert_int_equal(v.qid, q);
	assert_int_equal(req_q_count(&tab.e[q].q), 6);
}

/*
 * Past the queue's overflow cap nothing is allocated and nothing refused
 * back: the REQ is held (the fabric keeps it, the sender's window stops
 * it) and taken once a dequeue made space.
 */
static void over_the_cap_holds(void **state)
{
	(void)state;
	int q = new_queue(32);
	struct req_q *rq = &tab.e[q].q;
	assert_int_equal(req_qtab_export(&tab, q, "x", -1), 0);
	uint32_t g = ticket(q, 1), w;
	req_q_set_cap(rq, 64);			/* one copy */
	for (uint32_t i = 0; i < 10; i++)
		assert_int_equal(rx(1, addr_of(q), g, i, 0, 1).qid, q);
	assert_int_equal(tab.ctr.capped, 1);
	size_t used = arena_used;
	struct req_rx v = rx(1, addr_of(q), g, 10, RQF_ACK, 1);
	assert_true(v.hold);
	assert_false(v.answer);
	assert_int_equal(v.qid, -1);
	assert_int_equal(tab.ctr.rx_busy, 1);
	assert_int_equal(tab.ctr.rx_nospace, 0);
	assert_int_equal(tab.ctr.nomem, 0);
	assert_int_equal(arena_used, used);	/* nothing allocated */
	assert_int_equal(req_q_count(rq), 10);
	/* A dequeue drains the copy, the next one frees it and makes space. */
	for (uint32_t i = 0; i < 6; i++) {
		rq->dnp = 1;
		assert_int_equal(req_q_dequeue(rq, &w), 1);
		rq->dnp = 0;
		assert_int_equal(w, i);
		req_q_make_space(rq);
	}
	v = rx(1, addr_of(q), g, 10, RQF_ACK, 1);
	assert_false(v.hold);
	assert_int_equal(v.qid, q);
	assert_int_equal(v.status, RQS_OK);
	for (uint32_t i = 6; i <= 10; i++) {
		assert_int_equal(req_q_dequeue(rq, &w), 1);
		assert_int_equal(w, i);
	}
}

static void corrupt_header_refused_nothing_written(void **state)
{
	(void)state;
	int q = new_queue(32);
	assert_int_equal(req_qtab_export(&tab, q, "x", -1), 0);
	uint32_t *b = tab.e[q].q.first;
	b[0] = 8u << 16 | 0xfff0;	/* tail far past the 32-byte buffer */
	/* Its refusal cannot go yet: held, nothing written, nothing answered. */
	struct req_rx v = rx(1, addr_of(q), ticket(q, 1), 0xdeadbeef, 0, 0);
	assert_true(v.hold);
	assert_false(v.answer);
	assert_int_equal(v.qid, -1);
	assert_int_equal(tab.ctr.rx_corrupt, 0);
	/* Once it can: refused back. */
	v = rx(1, addr_of(q), ticket(q, 1), 0xdeadbeef, 0, 1);
	assert_false(v.hold);
	assert_int_equal(v.qid, -1);
	assert_int_equal(v.status, RQS_BROKEN);
	assert_int_equal(tab.ctr.rx_corrupt, 1);
	for (size_t i = 32; i < ARENA; i += 4)
		assert_int_not_equal(*(uint32_t *)(arena + i), 0xdeadbeef);
}

static void malformed_and_unknown_status(void **state)
{
	(void)state;
	struct req_msg m = { 0 }, p;
	m.op = RQ_STATUS;
	m.status = RQS_NSTATUS;
	assert_int_equal(req_wire_parse((const uint8_t *)&m, sizeof m, &p), -EPROTO);
	m.status = RQS_BROKEN;
	assert_int_equal(req_wire_parse((const uint8_t *)&m, sizeof m, &p), 0);
	assert_int_equal(req_status_errno(RQS_BROKEN), -EIO);
	assert_int_equal(req_status_errno(RQS_NOQUEUE), -ENOENT);
	assert_int_equal(req_wire_parse((const uint8_t *)&m, sizeof m - 1, &p), -EPROTO);
}

UNIT_MAIN("tests", NULL, NULL,
	  cmocka_unit_test_setup(new_queue_is_granted_to_nobody, setup),
	  cmocka_unit_test_setup(export_for_one_node, setup),
	  cmocka_unit_test_setup(revoke_makes_old_handles_stale, setup),
	  cmocka_unit_test_setup(destroyed_and_reused_address, setup),
	  cmocka_unit_test_setup(verdict_that_cannot_go_is_held, setup),
	  cmocka_unit_test_setup(full_during_dequeue_holds, setup),
	  cmocka_unit_test_setup(no_memory_refuses_back, setup),
	  cmocka_unit_test_setup(over_the_cap_holds, setup),
	  cmocka_unit_test_setup(corrupt_header_refused_nothing_written, setup),
	  cmocka_unit_test_setup(malformed_and_unknown_status, setup))
