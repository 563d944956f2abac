/*
 * Host unit tests of protected remote memory (paper section 2): the wire
 * format and the receiver's protection check (net/rmem/proto.c) and the
 * segment table with its per-node rights and generations (net/rmem/segtab.c).
 * The last tests hand requests to the kernel's receive code itself
 * (rmem_receive, net/rmem/serve.c, on the fake fabric of host_fabric.c)
 * and check its verdicts against an oracle written from the paper's rules,
 * memory byte for byte against a model, and what READs and atomics return.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/host/unit.h"

#include "net/rmem/internal.h"
#include "net/rmem/proto.h"
#include "net/rmem/rmem.h"
#include "net/rmem/segtab.h"
#include "tests/host/host_fabric.h"
#include "tests/host/rmem_fixture.h"

#define NOPS_REQ 4
static const uint8_t req_ops[NOPS_REQ] = { RM_WRITE, RM_READ_REQ, RM_CAS, RM_FADD };

/* --- building messages --------------------------------------------------- */

static size_t put(uint8_t *buf, uint8_t op, uint8_t flags, uint16_t seg, uint32_t gen,
		  uint32_t off, uint32_t count, uint32_t tag, int32_t status, size_t dlen)
{
	struct rmem_msg m = rmem_msg_of(op, flags, seg, gen, off, count, tag, status);

	memcpy(buf, &m, sizeof m);
	for (size_t i = 0; i < dlen; i++)
		buf[RMEM_HDR_LEN + i] = (uint8_t)('A' + (i * 7) % 26);	/* never NUL */
	return RMEM_HDR_LEN + dlen;
}

struct parsed {
	int st;
	struct rmem_msg m;
	ptrdiff_t data_off;		/* *data - p */
	size_t dlen;
};

/*
 * Parse len bytes from a heap copy of exactly len bytes, so that
 * AddressSanitizer sees any read past the end.
 */
static struct parsed parse_exact(const uint8_t *src, size_t len)
{
	struct parsed r;
	uint8_t *p = malloc(len ? len : 1);
	const uint8_t *data = NULL;

	assert_non_null(p);
	memcpy(p, src, len);
	memset(&r, 0, sizeof r);
	r.dlen = (size_t)-1;
	r.st = rmem_parse(p, len, &r.m, &data, &r.dlen);
	r.data_off = data ? data - p : -1;
	free(p);
	return r;
}

static int parse_st(const uint8_t *src, size_t len)
{
	return parse_exact(src, len).st;
}

/* The data length each op must carry for a given count (-1: count invalid). */
static long want_dlen(uint8_t op, uint32_t count)
{
	switch (op) {
	case RM_WRITE:
	case RM_READ_RESP:
		return count >= 1 && count <= RMEM_DATA_MAX ? (long)count : -1;
	case RM_READ_REQ:
		return count >= 1 && count <= RMEM_DATA_MAX ? 0 : -1;
	case RM_CAS:
		return count == 8 ? 16 : -1;
	case RM_CAS_BLOCK:
		return count >= 8 && count % 8 == 0 && count <= RMEM_DATA_MAX / 2 ? 2 * (long)count : -1;
	case RM_FADD:
	case RM_ATOMIC_RESP:
		return count == 8 ? 8 : -1;
	case RM_STATUS:
		return 0;
	default:
		return -1;
	}
}

/* --- rmem_parse ---------------------------------------------------------- */

static void wire_layout_is_fixed(void **state)
{
	(void)state;
	/* Little-endian fields at fixed offsets, written by hand. */
	const uint8_t b[RMEM_HDR_LEN + 3] = {
		RM_WRITE, RM_F_ACK,		/* op, flags */
		0x34, 0x12,			/* seg 0x1234 */
		0x78, 0x56, 0x34, 0x12,		/* gen */
		0x10, 0x00, 0x00, 0x00,		/* off 16 */
		0x03, 0x00, 0x00, 0x00,		/* count 3 */
		0xef, 0xbe, 0xad, 0xde,		/* tag */
		0x00, 0x00, 0x00, 0x00,		/* status */
		'x', 'y', 'z',
	};
	struct parsed r = parse_exact(b, sizeof b);
	assert_int_equal(r.st, RMS_OK);
	assert_int_equal(r.m.op, RM_WRITE);
	assert_int_equal(r.m.flags, RM_F_ACK);
	assert_int_equal(r.m.seg, 0x1234);
	assert_int_equal(r.m.gen, 0x12345678u);
	assert_int_equal(r.m.off, 16);
	assert_int_equal(r.m.count, 3);
	assert_int_equal(r.m.tag, 0xdeadbeefu);
	assert_int_equal(r.m.status, 0);
	assert_int_equal(r.data_off, RMEM_HDR_LEN);
	assert_int_equal(r.dlen, 3);
}

static void parse_accepts_every_op(void **state)
{
	static uint8_t b[RMEM_HDR_LEN + RMEM_DATA_MAX];
	static const struct {
		uint8_t op;
		uint32_t count;
		size_t dlen;
	} ok[] = {
		{ RM_WRITE, 1, 1 },
		{ RM_WRITE, 40, 40 },
		{ RM_WRITE, RMEM_DATA_MAX, RMEM_DATA_MAX },
		{ RM_READ_REQ, 1, 0 },
		{ RM_READ_REQ, 777, 0 },
		{ RM_READ_REQ, RMEM_DATA_MAX, 0 },
		{ RM_READ_RESP, 1, 1 },
		{ RM_READ_RESP, RMEM_DATA_MAX, RMEM_DATA_MAX },
		{ RM_CAS, 8, 16 },
		{ RM_FADD, 8, 8 },
		{ RM_ATOMIC_RESP, 8, 8 },
		{ RM_STATUS, 0, 0 },
		{ RM_STATUS, 12345, 0 },	/* count means nothing for STATUS */
	};
	static const uint8_t flag_sets[] = { 0, RM_F_INTR, RM_F_ACK, RM_F_RAW,
					     RM_F_INTR | RM_F_ACK | RM_F_RAW };

	(void)state;
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		for (size_t f = 0; f < sizeof flag_sets; f++) {
			size_t n = put(b, ok[i].op, flag_sets[f], 63, 0xa5a5a5a5u, 4096, ok[i].count,
				       0x80000001u, RMS_OK, ok[i].dlen);
			struct parsed r = parse_exact(b, n);
			assert_int_equal(r.st, RMS_OK);
			assert_int_equal(r.m.op, ok[i].op);
			assert_int_equal(r.m.flags, flag_sets[f]);
			assert_int_equal(r.m.seg, 63);
			assert_int_equal(r.m.gen, 0xa5a5a5a5u);
			assert_int_equal(r.m.off, 4096);
			assert_int_equal(r.m.count, ok[i].count);
			assert_int_equal(r.m.tag, 0x80000001u);
			assert_int_equal(r.m.status, RMS_OK);
			assert_int_equal(r.data_off, RMEM_HDR_LEN);
			assert_int_equal(r.dlen, ok[i].dlen);
		}
	}
	/* Answers carry any defined status. */
	for (int s = 0; s < RMS_NSTATUS; s++) {
		size_t n = put(b, RM_STATUS, 0, 0, 0, 0, 0, 9, s, 0);
		assert_int_equal(parse_st(b, n), RMS_OK);
		n = put(b, RM_READ_RESP, 0, 0, 0, 0, 4, 9, s, 4);
		assert_int_equal(parse_st(b, n), RMS_OK);
		n = put(b, RM_ATOMIC_RESP, 0, 0, 0, 0, 8, 9, s, 8);
		assert_int_equal(parse_st(b, n), RMS_OK);
	}
}

static void parse_rejects_short_headers(void **state)
{
	uint8_t b[RMEM_HDR_LEN + 16];

	(void)state;
	for (uint8_t op = 0; op <= RM_NOPS; op++) {
		put(b, op, 0, 0, 1, 0, 8, 1, 0, 16);
		for (size_t len = 0; len < RMEM_HDR_LEN; len++)
			assert_int_equal(parse_st(b, len), RMS_MALFORMED);
	}
}

/* For every op and a spread of counts: accepted iff the data length matches exactly. */
static void parse_wants_exact_lengths(void **state)
{
	static uint8_t b[RMEM_HDR_LEN + RMEM_DATA_MAX + 64];
	static const uint32_t counts[] = { 0, 1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 100,
					   RMEM_DATA_MAX - 1, RMEM_DATA_MAX, RMEM_DATA_MAX + 1,
					   0x10000, 0x80000000u, 0xffffffffu };
	int accepted = 0;

	(void)state;
	for (uint8_t op = RM_WRITE; op < RM_NOPS; op++) {
		for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
			long want = want_dlen(op, counts[c]);
			/* Data lengths around the expected one, and a spread. */
			size_t dl[] = { 0, 1, 7, 8, 9, 15, 16, 17, 24,
					want > 0 ? (size_t)want - 1 : 2,
					want >= 0 ? (size_t)want : 3,
					want >= 0 ? (size_t)want + 1 : 4,
					RMEM_DATA_MAX, RMEM_DATA_MAX + 1, RMEM_DATA_MAX + 64 };
			for (size_t d = 0; d < sizeof dl / sizeof dl[0]; d++) {
				size_t n = put(b, op, 0, 1, 1, 0, counts[c], 5, RMS_OK, dl[d]);
				struct parsed r = parse_exact(b, n);
				int expect = want >= 0 && dl[d] == (size_t)want ? RMS_OK : RMS_MALFORMED;
				if (r.st != expect)
					fail_msg("op %u count %u dlen %zu: %d, expected %d", op,
						 counts[c], dl[d], r.st, expect);
				if (r.st == RMS_OK) {
					assert_int_equal(r.dlen, dl[d]);
					assert_int_equal(r.data_off, RMEM_HDR_LEN);
					accepted++;
				}
			}
		}
	}
	assert_true(accepted > 40);
}

static void parse_rejects_bad_counts(void **state)
{
	static uint8_t b[RMEM_HDR_LEN + RMEM_DATA_MAX + 16];

	(void)state;
	/* Zero counts, with the data length they would imply. */
	assert_int_equal(parse_st(b, put(b, RM_WRITE, 0, 0, 1, 0, 0, 1, 0, 0)), RMS_MALFORMED);
	assert_int_equal(parse_st(b, put(b, RM_READ_REQ, 0, 0, 1, 0, 0, 1, 0, 0)), RMS_MALFORMED);
	assert_int_equal(parse_st(b, put(b, RM_READ_RESP, 0, 0, 1, 0, 0, 1, 0, 0)), RMS_MALFORMED);
	assert_int_equal(parse_st(b, put(b, RM_CAS, 0, 0, 1, 0, 0, 1, 0, 16)), RMS_MALFORMED);
	assert_int_equal(parse_st(b, put(b, RM_FADD, 0, 0, 1, 0, 0, 1, 0, 8)), RMS_MALFORMED);
	assert_int_equal(parse_st(b, put(b, RM_ATOMIC_RESP, 0, 0, 1, 0, 0, 1, 0, 8)), RMS_MALFORMED);
	/* Above RMEM_DATA_MAX, even with that much data. */
	assert_int_equal(parse_st(b, put(b, RM_WRITE, 0, 0, 1, 0, RMEM_DATA_MAX + 1, 1, 0,
					 RMEM_DATA_MAX + 1)), RMS_MALFORMED);
	assert_int_equal(parse_st(b, put(b, RM_READ_RESP, 0, 0, 1, 0, RMEM_DATA_MAX + 1, 1, 0,
					 RMEM_DATA_MAX + 1)), RMS_MALFORMED);
	assert_int_equal(parse_st(b, put(b, RM_READ_REQ, 0, 0, 1, 0, RMEM_DATA_MAX + 1, 1, 0, 0)),
			 RMS_MALFORMED);
	assert_int_equal(parse_st(b, put(b, RM_READ_REQ, 0, 0, 1, 0, 0xffffffffu, 1, 0, 0)),
			 RMS_MALFORMED);
	/* Atomics are 8 bytes: any other count, with the right data length. */
	static const uint32_t not8[] = { 1, 4, 7, 9, 16, 0x80000008u };
	for (size_t i = 0; i < sizeof not8 / sizeof not8[0]; i++) {
		assert_int_equal(parse_st(b, put(b, RM_CAS, 0, 0, 1, 0, not8[i], 1, 0, 16)),
				 RMS_MALFORMED);
		assert_int_equal(parse_st(b, put(b, RM_FADD, 0, 0, 1, 0, not8[i], 1, 0, 8)),
				 RMS_MALFORMED);
		assert_int_equal(parse_st(b, put(b, RM_ATOMIC_RESP, 0, 0, 1, 0, not8[i], 1, 0, 8)),
				 RMS_MALFORMED);
	}
}

static void parse_rejects_unknown_ops(void **state)
{
	uint8_t b[RMEM_HDR_LEN + 64];

	(void)state;
	static const uint8_t bad[] = { 0, RM_NOPS, RM_NOPS + 1, 0x41, 0x7f, 0x80, 0x81, 0xfe, 0xff };
	for (size_t i = 0; i < sizeof bad; i++)
		for (size_t dlen = 0; dlen <= 64; dlen++)
			for (uint32_t count = 0; count <= 16; count += 8)
				assert_int_equal(parse_st(b, put(b, bad[i], 0, 0, 1, 0, count, 1, 0, dlen)),
						 RMS_MALFORMED);
	/* Every op value: defined iff 1..RM_NOPS-1. */
	for (int op = 0; op < 256; op++) {
		int st = parse_st(b, put(b, (uint8_t)op, 0, 0, 1, 0, 8, 1, 0, 8));
		/* (CAS wants 16 bytes; READ_REQ and STATUS none.) */
		int expect = (op == RM_FADD || op == RM_ATOMIC_RESP || op == RM_WRITE ||
			      op == RM_READ_RESP)
				     ? RMS_OK : RMS_MALFORMED;
		if (st != expect)
			fail_msg("op %d count 8 dlen 8: %d, expected %d", op, st, expect);
	}
}

static void parse_rejects_unknown_flags(void **state)
{
	uint8_t b[RMEM_HDR_LEN + 16];
	const uint8_t known = RM_F_INTR | RM_F_ACK | RM_F_RAW | RM_F_MARKED;

	(void)state;
	for (int f = 0; f < 256; f++) {
		for (size_t i = 0; i < NOPS_REQ; i++) {
			uint8_t op = req_ops[i];
			size_t dlen = op == RM_WRITE ? 8 : op == RM_CAS ? 16 : op == RM_FADD ? 8 : 0;
			int st = parse_st(b, put(b, op, (uint8_t)f, 0, 1, 0, 8, 1, 0, dlen));
			assert_int_equal(st, (f & ~known) ? RMS_MALFORMED : RMS_OK);
		}
		int st = parse_st(b, put(b, RM_STATUS, (uint8_t)f, 0, 0, 0, 0, 1, RMS_OK, 0));
		assert_int_equal(st, (f & ~known) ? RMS_MALFORMED : RMS_OK);
	}
}

static void parse_rejects_bad_status(void **state)
{
	uint8_t b[RMEM_HDR_LEN + 16];
	static const int32_t bad[] = { -1, -2, INT32_MIN, RMS_NSTATUS, RMS_NSTATUS + 1, 100,
				       INT32_MAX };

	(void)state;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_int_equal(parse_st(b, put(b, RM_STATUS, 0, 0, 0, 0, 0, 1, bad[i], 0)),
				 RMS_MALFORMED);
		assert_int_equal(parse_st(b, put(b, RM_READ_RESP, 0, 0, 0, 0, 8, 1, bad[i], 8)),
				 RMS_MALFORMED);
		assert_int_equal(parse_st(b, put(b, RM_ATOMIC_RESP, 0, 0, 0, 0, 8, 1, bad[i], 8)),
				 RMS_MALFORMED);
	}
}

static void status_names_and_errnos(void **state)
{
	(void)state;
	for (int s = 0; s < RMS_NSTATUS; s++)
		assert_non_null(rmem_status_names[s]);
	assert_string_equal(rmem_status_names[RMS_STALE], "stale_generation");
	assert_int_equal(rmem_status_errno(RMS_OK), 0);
	assert_int_equal(rmem_status_errno(RMS_BAD_SEG), -ENOENT);
	assert_int_equal(rmem_status_errno(RMS_STALE), -ESTALE);
	assert_int_equal(rmem_status_errno(RMS_RIGHTS), -EACCES);
	assert_int_equal(rmem_status_errno(RMS_BOUNDS), -ERANGE);
	assert_int_equal(rmem_status_errno(RMS_INHIBIT), -EROFS);
	assert_int_equal(rmem_status_errno(RMS_ALIGN), -EINVAL);
	assert_int_equal(rmem_status_errno(RMS_MALFORMED), -EPROTO);
	assert_int_equal(rmem_status_errno(RMS_NSTATUS), -EPROTO);
	assert_int_equal(rmem_status_errno(-1), -EPROTO);
}

/* --- rmem_check ---------------------------------------------------------- */

static struct rmem_msg req(uint8_t op, uint32_t gen, uint32_t off, uint32_t count)
{
	return rmem_msg_of(op, 0, 3, gen, off, count, 0, 0);
}

static uint32_t op_count(uint8_t op)
{
	return op == RM_CAS || op == RM_FADD ? 8 : 16;
}

static int need_of(uint8_t op)
{
	return op == RM_WRITE ? RMEM_W : op == RM_READ_REQ ? RMEM_R : RMEM_A;
}

static const struct rmem_segview good = { .exists = 1, .gen = 5, .rights = RMEM_ALL,
					  .size = 4096, .inhibit = 0 };

/* rmem_check's verdict on req(op, gen, off, count) against the view v. */
static int check(const struct rmem_segview *v, uint8_t op, uint32_t gen, uint32_t off, uint32_t count)
{
	struct rmem_msg m = req(op, gen, off, count);

	return rmem_check(v, &m);
}

static void check_bad_segment(void **state)
{
	struct rmem_segview v = good;

	(void)state;
	v.exists = 0;
	for (size_t i = 0; i < NOPS_REQ; i++) {
		assert_int_equal(check(&v, req_ops[i], 5, 0, op_count(req_ops[i])), RMS_BAD_SEG);
		/* Whatever else is wrong too. */
		assert_int_equal(check(&v, req_ops[i], 6, 0xfffffff9u, op_count(req_ops[i])), RMS_BAD_SEG);
		/* The all-zero view segtab_view() gives for no segment. */
		struct rmem_segview none = { 0 };
		assert_int_equal(check(&none, req_ops[i], 0, 0, op_count(req_ops[i])), RMS_BAD_SEG);
	}
}

static void check_stale_generation(void **state)
{
	static const uint32_t gens[] = { 0, 4, 6, 0x80000005u, 0xffffffffu };

	(void)state;
	for (size_t i = 0; i < NOPS_REQ; i++) {
		for (size_t g = 0; g < sizeof gens / sizeof gens[0]; g++)
			assert_int_equal(check(&good, req_ops[i], gens[g], 0, op_count(req_ops[i])), RMS_STALE);
		assert_int_equal(check(&good, req_ops[i], 5, 0, op_count(req_ops[i])), RMS_OK);
	}
}

static void check_rights_per_op(void **state)
{
	struct rmem_segview v = good;

	(void)state;
	for (size_t i = 0; i < NOPS_REQ; i++) {
		uint8_t op = req_ops[i];
		for (int r = 0; r <= RMEM_ALL; r++) {
			v.rights = (uint8_t)r;
			int expect = (r & need_of(op)) ? RMS_OK : RMS_RIGHTS;
			int st = check(&v, op, 5, 64, op_count(op));
			if (st != expect)
				fail_msg("op %u rights %d: %d, expected %d", op, r, st, expect);
		}
	}
	/* Exactly: WRITE needs W, READ needs R, CAS and FADD need A. */
	v.rights = RMEM_R | RMEM_A;
	assert_int_equal(check(&v, RM_WRITE, 5, 0, 1), RMS_RIGHTS);
	v.rights = RMEM_W | RMEM_A;
	assert_int_equal(check(&v, RM_READ_REQ, 5, 0, 1), RMS_RIGHTS);
	v.rights = RMEM_RW;
	assert_int_equal(check(&v, RM_CAS, 5, 0, 8), RMS_RIGHTS);
	assert_int_equal(check(&v, RM_FADD, 5, 0, 8), RMS_RIGHTS);
}

static void check_bounds(void **state)
{
	struct rmem_segview v = good;

	(void)state;
	v.size = 1000;
	for (size_t i = 0; i < 2; i++) {	/* WRITE and READ */
		uint8_t op = req_ops[i];
		struct { uint32_t off, count; int st; } t[] = {
			{ 0, 1000, RMS_OK },		/* count == size at off 0 */
			{ 999, 1, RMS_OK },		/* the last byte */
			{ 0, 1, RMS_OK },
			{ 500, 500, RMS_OK },
			{ 0, 1001, RMS_BOUNDS },
			{ 1, 1000, RMS_BOUNDS },	/* spans the end by one byte */
			{ 999, 2, RMS_BOUNDS },
			{ 1000, 1, RMS_BOUNDS },	/* off exactly at the end */
			{ 1001, 1, RMS_BOUNDS },
			{ 0xffffffffu, 1, RMS_BOUNDS },	/* off + count == 2^32 wraps to 0 */
			{ 0xffffffffu, 2, RMS_BOUNDS },	/* wraps to 1 */
			{ 0xfffffc18u, 0x3e8, RMS_BOUNDS },	/* wraps to 0 with count == size */
			{ 0xffffff00u, 0x101, RMS_BOUNDS },	/* wraps to 1 */
			{ 0x80000000u, 0x80000000u, RMS_BOUNDS },
			{ 0, 0xffffffffu, RMS_BOUNDS },
			{ 0xffffffffu, 0xffffffffu, RMS_BOUNDS },
		};
		for (size_t k = 0; k < sizeof t / sizeof t[0]; k++) {
			int st = check(&v, op, 5, t[k].off, t[k].count);
			if (st != t[k].st)
				fail_msg("op %u off %u count %u size 1000: %d, expected %d", op,
					 t[k].off, t[k].count, st, t[k].st);
		}
	}
	/* The largest segment export allows: 2^32 - 1 bytes. */
	v.size = 0xffffffffu;
	assert_int_equal(check(&v, RM_WRITE, 5, 0xfffffffeu, 1), RMS_OK);
	assert_int_equal(check(&v, RM_WRITE, 5, 0xffffffffu, 1), RMS_BOUNDS);
	/* Ends at 2^32 + 1, then at 2^32 - 1. */
	assert_int_equal(check(&v, RM_READ_REQ, 5, 0xfffffa81u, RMEM_MAX_XFER), RMS_BOUNDS);
	assert_int_equal(check(&v, RM_READ_REQ, 5, 0xfffffa7fu, RMEM_MAX_XFER), RMS_OK);
	assert_int_equal(check(&v, RM_FADD, 5, 0xfffffff0u, 8), RMS_OK);
	assert_int_equal(check(&v, RM_FADD, 5, 0xfffffff8u, 8), RMS_BOUNDS);	/* wraps to 0 */
	/* A one-byte segment. */
	v.size = 1;
	assert_int_equal(check(&v, RM_WRITE, 5, 0, 1), RMS_OK);
	assert_int_equal(check(&v, RM_WRITE, 5, 1, 1), RMS_BOUNDS);
	assert_int_equal(check(&v, RM_CAS, 5, 0, 8), RMS_BOUNDS);
}

static void check_atomics(void **state)
{
	struct rmem_segview v = good;

	(void)state;
	v.size = 1004;		/* not a multiple of 8 */
	for (size_t i = 2; i < NOPS_REQ; i++) {
		uint8_t op = req_ops[i];
		for (uint32_t off = 0; off < 64; off++)
			assert_int_equal(check(&v, op, 5, off, 8), (off & 7) ? RMS_ALIGN : RMS_OK);
		assert_int_equal(check(&v, op, 5, 992, 8), RMS_OK);		/* the last whole word */
		assert_int_equal(check(&v, op, 5, 996, 8), RMS_ALIGN);		/* ends exactly at size, misaligned */
		assert_int_equal(check(&v, op, 5, 1000, 8), RMS_BOUNDS);	/* aligned, 4 bytes past the end */
		assert_int_equal(check(&v, op, 5, 997, 8), RMS_BOUNDS);		/* misaligned and beyond: bounds first */
	}
	/* WRITE and READ need no alignment. */
	assert_int_equal(check(&v, RM_WRITE, 5, 3, 8), RMS_OK);
	assert_int_equal(check(&v, RM_READ_REQ, 5, 1001, 3), RMS_OK);
}

static void check_write_inhibit(void **state)
{
	struct rmem_segview v = good;

	(void)state;
	v.inhibit = 1;
	assert_int_equal(check(&v, RM_WRITE, 5, 0, 16), RMS_INHIBIT);
	assert_int_equal(check(&v, RM_WRITE, 5, 4095, 1), RMS_INHIBIT);
	assert_int_equal(check(&v, RM_READ_REQ, 5, 0, 16), RMS_OK);	/* reads still allowed */
	assert_int_equal(check(&v, RM_READ_REQ, 5, 4095, 1), RMS_OK);
	/* Inhibited means read-only: atomics change memory, so they are refused too. */
	assert_int_equal(check(&v, RM_CAS, 5, 8, 8), RMS_INHIBIT);
	assert_int_equal(check(&v, RM_FADD, 5, 8, 8), RMS_INHIBIT);
	/* Inhibit comes after the other checks. */
	assert_int_equal(check(&v, RM_WRITE, 5, 4096, 1), RMS_BOUNDS);
	v.rights = RMEM_R;
	assert_int_equal(check(&v, RM_WRITE, 5, 0, 1), RMS_RIGHTS);
	assert_int_equal(check(&v, RM_WRITE, 4, 0, 1), RMS_STALE);
	/* Off again: the write goes. */
	v = good;
	assert_int_equal(check(&v, RM_WRITE, 5, 0, 16), RMS_OK);
}

static void check_atomic_alignment_uses_the_address(void **state)
{
	struct rmem_segview v = good;

	(void)state;
	/* A segment that starts 4 bytes past an 8-byte boundary. */
	v.base = 0x10004;
	assert_int_equal(check(&v, RM_CAS, 5, 8, 8), RMS_ALIGN);
	assert_int_equal(check(&v, RM_CAS, 5, 4, 8), RMS_OK);
	assert_int_equal(check(&v, RM_FADD, 5, 12, 8), RMS_OK);
	/* Byte operations do not care. */
	assert_int_equal(check(&v, RM_WRITE, 5, 3, 5), RMS_OK);
}

/* With every violation at once, peel them off one by one: a fixed order. */
static void check_violation_order(void **state)
{
	struct rmem_segview v = { .exists = 0, .gen = 5, .rights = RMEM_R, .size = 100,
				  .inhibit = 1 };
	struct rmem_msg w = req(RM_WRITE, 4, 100, 1);
	struct rmem_msg c = req(RM_CAS, 4, 97, 8);

	(void)state;
	assert_int_equal(rmem_check(&v, &w), RMS_BAD_SEG);
	assert_int_equal(rmem_check(&v, &c), RMS_BAD_SEG);
	v.exists = 1;
	assert_int_equal(rmem_check(&v, &w), RMS_STALE);
	assert_int_equal(rmem_check(&v, &c), RMS_STALE);
	w.gen = c.gen = 5;
	assert_int_equal(rmem_check(&v, &w), RMS_RIGHTS);
	assert_int_equal(rmem_check(&v, &c), RMS_RIGHTS);
	v.rights = RMEM_ALL;
	assert_int_equal(rmem_check(&v, &w), RMS_BOUNDS);
	assert_int_equal(rmem_check(&v, &c), RMS_BOUNDS);
	w.off = 99;
	c.off = 89;
	assert_int_equal(rmem_check(&v, &w), RMS_INHIBIT);
	assert_int_equal(rmem_check(&v, &c), RMS_ALIGN);
	v.inhibit = 0;
	c.off = 88;
	assert_int_equal(rmem_check(&v, &w), RMS_OK);
	assert_int_equal(rmem_check(&v, &c), RMS_OK);
}

static void check_refuses_non_requests(void **state)
{
	(void)state;
	for (int op = 0; op < 256; op++) {
		int is_req = op == RM_WRITE || op == RM_READ_REQ || op == RM_CAS || op == RM_FADD || op == RM_CAS_BLOCK;
		assert_int_equal(check(&good, (uint8_t)op, 5, 0, 8), is_req ? RMS_OK : RMS_MALFORMED);
	}
}

/* --- the segment table --------------------------------------------------- */

static struct segtab tab;
static uint8_t mem[4][256];

static void view_equal(struct rmem_segview a, struct rmem_segview b)
{
	assert_int_equal(a.exists, b.exists);
	assert_int_equal(a.gen, b.gen);
	assert_int_equal(a.rights, b.rights);
	assert_int_equal(a.size, b.size);
	assert_int_equal(a.inhibit, b.inhibit);
}

static int check_from(const struct segtab *t, int seg, int src, uint8_t op, uint32_t gen,
		      uint32_t off, uint32_t count)
{
	struct rmem_segview v = segtab_view(t, seg, src);
	struct rmem_msg m = req(op, gen, off, count);

	m.seg = (uint16_t)seg;
	return rmem_check(&v, &m);
}

static void seg_export_rules(void **state)
{
	char name[64];

	(void)state;
	segtab_init(&tab, 0);
	/* Names: 1 to SEGTAB_NAME - 1 characters. */
	assert_int_equal(segtab_export(&tab, "", mem[0], 256, RMEM_RW), -EINVAL);
	memset(name, 'n', sizeof name);
	name[SEGTAB_NAME] = '\0';
	assert_int_equal(segtab_export(&tab, name, mem[0], 256, RMEM_RW), -EINVAL);
	name[SEGTAB_NAME - 1] = '\0';
	assert_int_equal(segtab_export(&tab, name, mem[0], 256, RMEM_RW), 0);
	assert_int_equal(segtab_find(&tab, name), 0);
	assert_int_equal(segtab_export(&tab, "a", mem[1], 256, RMEM_RW), 1);
	/* Other arguments. */
	assert_int_equal(segtab_export(&tab, "b", NULL, 256, RMEM_RW), -EINVAL);
	assert_int_equal(segtab_export(&tab, "b", mem[1], 0, RMEM_RW), -EINVAL);
	assert_int_equal(segtab_export(&tab, "b", mem[1], 0x100000000ULL, RMEM_RW), -EINVAL);
	assert_int_equal(segtab_export(&tab, "b", mem[1], UINT64_MAX, RMEM_RW), -EINVAL);
	assert_int_equal(segtab_export(&tab, "b", mem[1], 256, RMEM_ALL + 1), -EINVAL);
	assert_int_equal(segtab_export(&tab, "b", mem[1], 256, 0x100 | RMEM_R), -EINVAL);
	assert_int_equal(segtab_export(&tab, "b", mem[1], 256, -1), -EINVAL);
	/* Refusals took no slot. */
	assert_int_equal(segtab_find(&tab, "b"), -1);
	assert_int_equal(segtab_view(&tab, 2, 1).exists, 0);
	/* The largest size; rights 0 is allowed (grant later). */
	assert_int_equal(segtab_export(&tab, "big", mem[2], 0xffffffffULL, 0), 2);
	assert_int_equal(segtab_view(&tab, 2, 1).size, 0xffffffffULL);
	assert_int_equal(segtab_view(&tab, 2, 1).rights, 0);
	/* Duplicate names, whatever the other arguments. */
	assert_int_equal(segtab_export(&tab, "a", mem[1], 256, RMEM_RW), -EEXIST);
	assert_int_equal(segtab_export(&tab, "a", mem[3], 16, RMEM_R), -EEXIST);
	assert_int_equal(segtab_export(&tab, "big", mem[3], 16, RMEM_R), -EEXIST);
	/* Names are compared whole. */
	assert_int_equal(segtab_export(&tab, "ab", mem[3], 16, RMEM_R), 3);
	assert_int_equal(segtab_export(&tab, "A", mem[3], 16, RMEM_R), 4);
	assert_int_equal(segtab_find(&tab, "a"), 1);
	assert_int_equal(segtab_find(&tab, "ab"), 3);
	assert_int_equal(segtab_find(&tab, "A"), 4);
	assert_int_equal(segtab_find(&tab, "abc"), -1);
	assert_int_equal(segtab_find(&tab, ""), -1);
	/* The view tells the size and rights exported. */
	struct rmem_segview v = segtab_view(&tab, 1, 7);
	assert_int_equal(v.exists, 1);
	assert_int_equal(v.size, 256);
	assert_int_equal(v.rights, RMEM_RW);
	assert_int_equal(v.inhibit, 0);
	assert_ptr_equal(tab.slot[1].base, mem[1]);
}

static void seg_table_full(void **state)
{
	char name[16];

	(void)state;
	segtab_init(&tab, 2);
	for (int i = 0; i < SEGTAB_SLOTS; i++) {
		snprintf(name, sizeof name, "s%d", i);
		assert_int_equal(segtab_export(&tab, name, mem[i & 3], 256, RMEM_ALL), i);
	}
	assert_int_equal(segtab_export(&tab, "more", mem[0], 256, RMEM_ALL), -ENOSPC);
	/* A duplicate is still a duplicate when full; bad arguments still -EINVAL. */
	assert_int_equal(segtab_export(&tab, "s63", mem[0], 256, RMEM_ALL), -EEXIST);
	assert_int_equal(segtab_export(&tab, "", mem[0], 256, RMEM_ALL), -EINVAL);
	for (int i = 0; i < SEGTAB_SLOTS; i++) {
		snprintf(name, sizeof name, "s%d", i);
		assert_int_equal(segtab_find(&tab, name), i);
	}
	/* Freeing one slot makes room in that slot, and only one. */
	assert_int_equal(segtab_unexport(&tab, 17), 0);
	assert_int_equal(segtab_find(&tab, "s17"), -1);
	assert_int_equal(segtab_export(&tab, "more", mem[0], 256, RMEM_ALL), 17);
	assert_int_equal(segtab_export(&tab, "again", mem[0], 256, RMEM_ALL), -ENOSPC);
	/* The lowest free slot is taken first. */
	assert_int_equal(segtab_unexport(&tab, 40), 0);
	assert_int_equal(segtab_unexport(&tab, 5), 0);
	assert_int_equal(segtab_export(&tab, "s17", mem[0], 256, RMEM_ALL), 5);
	assert_int_equal(segtab_export(&tab, "s5", mem[0], 256, RMEM_ALL), 40);
	assert_int_equal(segtab_find(&tab, "s17"), 5);
	assert_int_equal(segtab_find(&tab, "more"), 17);
	/* Every third withdrawn: the rest still found through their chains (four names a bucket). */
	for (int i = 0; i < SEGTAB_SLOTS; i += 3)
		assert_int_equal(segtab_unexport(&tab, i), 0);
	assert_int_equal(segtab_unexport(&tab, 3), -EBADF);
	for (int i = 0; i < SEGTAB_SLOTS; i++) {
		if (i == 5 || i == 17 || i == 40)
			continue;	/* renamed above */
		snprintf(name, sizeof name, "s%d", i);
		assert_int_equal(segtab_find(&tab, name), i % 3 ? i : -1);
	}
	assert_int_equal(segtab_find(&tab, "more"), 17);
	assert_int_equal(segtab_export(&tab, "new", mem[0], 256, RMEM_ALL), 0);
}

static void seg_self_never_has_rights(void **state)
{
	(void)state;
	for (int self = 0; self < SEGTAB_NODES; self += 21) {
		segtab_init(&tab, self);
		int s = segtab_export(&tab, "x", mem[0], 256, RMEM_ALL);
		assert_int_equal(s, 0);
		for (int n = 0; n < SEGTAB_NODES; n++)
			assert_int_equal(segtab_view(&tab, s, n).rights, n == self ? 0 : RMEM_ALL);
		/* Granting to itself, alone or with everyone, gives it nothing. */
		assert_int_equal(segtab_grant(&tab, s, self, RMEM_ALL), 0);
		assert_int_equal(segtab_view(&tab, s, self).rights, 0);
		assert_int_equal(segtab_grant(&tab, s, -1, RMEM_R), 0);
		assert_int_equal(segtab_view(&tab, s, self).rights, 0);
		assert_int_equal(segtab_view(&tab, s, (self + 1) % SEGTAB_NODES).rights, RMEM_R);
		uint32_t g = segtab_view(&tab, s, self).gen;
		for (size_t i = 0; i < NOPS_REQ; i++)
			assert_int_equal(check_from(&tab, s, self, req_ops[i], g, 0, 8), RMS_RIGHTS);
	}
}

static void seg_grant_one_node(void **state)
{
	struct rmem_segview before[SEGTAB_NODES];

	(void)state;
	segtab_init(&tab, 0);
	int s = segtab_export(&tab, "g", mem[0], 256, 0);
	assert_int_equal(s, 0);
	for (int n = 0; n < SEGTAB_NODES; n++) {
		before[n] = segtab_view(&tab, s, n);
		assert_int_equal(before[n].exists, 1);
		assert_int_equal(before[n].rights, 0);
	}
	assert_int_equal(segtab_grant(&tab, s, 2, RMEM_RW), 0);
	for (int n = 0; n < SEGTAB_NODES; n++) {
		struct rmem_segview v = segtab_view(&tab, s, n);
		struct rmem_segview e = before[n];
		if (n == 2)
			e.rights = RMEM_RW;		/* the generation stays */
		view_equal(v, e);
	}
	assert_int_equal(check_from(&tab, s, 2, RM_WRITE, before[2].gen, 0, 8), RMS_OK);
	assert_int_equal(check_from(&tab, s, 2, RM_CAS, before[2].gen, 0, 8), RMS_RIGHTS);
	assert_int_equal(check_from(&tab, s, 3, RM_WRITE, before[3].gen, 0, 8), RMS_RIGHTS);
	/* Grants replace, they do not add. */
	assert_int_equal(segtab_grant(&tab, s, 2, RMEM_A), 0);
	assert_int_equal(segtab_view(&tab, s, 2).rights, RMEM_A);
	assert_int_equal(check_from(&tab, s, 2, RM_WRITE, before[2].gen, 0, 8), RMS_RIGHTS);
	assert_int_equal(check_from(&tab, s, 2, RM_FADD, before[2].gen, 0, 8), RMS_OK);
	/* Everyone. */
	assert_int_equal(segtab_grant(&tab, s, -1, RMEM_R), 0);
	for (int n = 0; n < SEGTAB_NODES; n++) {
		assert_int_equal(segtab_view(&tab, s, n).rights, n == 0 ? 0 : RMEM_R);
		assert_int_equal(segtab_view(&tab, s, n).gen, before[n].gen);
	}
	/* Bad arguments change nothing. */
	assert_int_equal(segtab_grant(&tab, s, 2, RMEM_ALL + 1), -EINVAL);
	assert_int_equal(segtab_grant(&tab, s, 2, -1), -EINVAL);
	assert_int_equal(segtab_grant(&tab, s, -2, RMEM_R), -EINVAL);
	assert_int_equal(segtab_grant(&tab, s, SEGTAB_NODES, RMEM_R), -EINVAL);
	assert_int_equal(segtab_grant(&tab, 1, 2, RMEM_R), -EBADF);
	assert_int_equal(segtab_grant(&tab, -1, 2, RMEM_R), -EBADF);
	assert_int_equal(segtab_grant(&tab, SEGTAB_SLOTS, 2, RMEM_R), -EBADF);
	assert_int_equal(segtab_grant(&tab, 1, 2, 8), -EINVAL);	/* arguments first */
	for (int n = 0; n < SEGTAB_NODES; n++)
		assert_int_equal(segtab_view(&tab, s, n).rights, n == 0 ? 0 : RMEM_R);
}

static void seg_revoke_one_node(void **state)
{
	struct rmem_segview before[SEGTAB_NODES], other[SEGTAB_NODES];

	(void)state;
	segtab_init(&tab, 1);
	int s = segtab_export(&tab, "r", mem[0], 256, RMEM_ALL);
	int o = segtab_export(&tab, "other", mem[1], 256, RMEM_ALL);
	assert_int_equal(s, 0);
	assert_int_equal(o, 1);
	for (int n = 0; n < SEGTAB_NODES; n++) {
		before[n] = segtab_view(&tab, s, n);
		other[n] = segtab_view(&tab, o, n);
	}
	/* An operation node 2 built from its view, before the revoke. */
	uint32_t old2 = before[2].gen;
	assert_int_equal(check_from(&tab, s, 2, RM_WRITE, old2, 0, 8), RMS_OK);

	assert_int_equal(segtab_revoke(&tab, s, 2), 0);
	struct rmem_segview v2 = segtab_view(&tab, s, 2);
	assert_int_equal(v2.exists, 1);
	assert_int_equal(v2.rights, 0);
	assert_true(v2.gen != old2);
	assert_true(v2.gen > old2);
	/* Everyone else, and the other segment, exactly as before. */
	for (int n = 0; n < SEGTAB_NODES; n++) {
		if (n != 2)
			view_equal(segtab_view(&tab, s, n), before[n]);
		view_equal(segtab_view(&tab, o, n), other[n]);
	}
	/* Node 2's old operation is stale (not merely refused for rights). */
	for (size_t i = 0; i < NOPS_REQ; i++)
		assert_int_equal(check_from(&tab, s, 2, req_ops[i], old2, 0, 8), RMS_STALE);
	/* With the new generation but no rights: rights. */
	assert_int_equal(check_from(&tab, s, 2, RM_READ_REQ, v2.gen, 0, 8), RMS_RIGHTS);
	/* The others still work, node 2 still works on the other segment. */
	assert_int_equal(check_from(&tab, s, 3, RM_WRITE, before[3].gen, 0, 8), RMS_OK);
	assert_int_equal(check_from(&tab, s, 63, RM_FADD, before[63].gen, 8, 8), RMS_OK);
	assert_int_equal(check_from(&tab, o, 2, RM_WRITE, other[2].gen, 0, 8), RMS_OK);

	/* Re-grant: the old generation stays stale, the new one works. */
	assert_int_equal(segtab_grant(&tab, s, 2, RMEM_ALL), 0);
	assert_int_equal(segtab_view(&tab, s, 2).gen, v2.gen);
	for (size_t i = 0; i < NOPS_REQ; i++) {
		assert_int_equal(check_from(&tab, s, 2, req_ops[i], old2, 0, 8), RMS_STALE);
		assert_int_equal(check_from(&tab, s, 2, req_ops[i], v2.gen, 0, 8), RMS_OK);
	}
	/* A second revoke moves on again; both earlier generations are stale. */
	assert_int_equal(segtab_revoke(&tab, s, 2), 0);
	uint32_t g3 = segtab_view(&tab, s, 2).gen;
	assert_true(g3 != v2.gen && g3 != old2);
	segtab_grant(&tab, s, 2, RMEM_ALL);
	assert_int_equal(check_from(&tab, s, 2, RM_WRITE, old2, 0, 8), RMS_STALE);
	assert_int_equal(check_from(&tab, s, 2, RM_WRITE, v2.gen, 0, 8), RMS_STALE);
	assert_int_equal(check_from(&tab, s, 2, RM_WRITE, g3, 0, 8), RMS_OK);

	/* Revoking everyone: every rights gone, every generation moved. */
	for (int n = 0; n < SEGTAB_NODES; n++)
		before[n] = segtab_view(&tab, s, n);
	assert_int_equal(segtab_revoke(&tab, s, -1), 0);
	for (int n = 0; n < SEGTAB_NODES; n++) {
		struct rmem_segview v = segtab_view(&tab, s, n);
		assert_int_equal(v.exists, 1);
		assert_int_equal(v.rights, 0);
		assert_true(v.gen != before[n].gen);
		if (n != 1)
			assert_int_equal(check_from(&tab, s, n, RM_READ_REQ, before[n].gen, 0, 8),
					 RMS_STALE);
		view_equal(segtab_view(&tab, o, n), other[n]);
	}
	/* Bad arguments. */
	assert_int_equal(segtab_revoke(&tab, s, -2), -EINVAL);
	assert_int_equal(segtab_revoke(&tab, s, SEGTAB_NODES), -EINVAL);
	assert_int_equal(segtab_revoke(&tab, 2, 3), -EBADF);
	assert_int_equal(segtab_revoke(&tab, -1, 3), -EBADF);
	assert_int_equal(segtab_revoke(&tab, SEGTAB_SLOTS, 3), -EBADF);
}

static void seg_unexport_and_reuse(void **state)
{
	struct rmem_segview before[SEGTAB_NODES];
	uint32_t older2;

	(void)state;
	segtab_init(&tab, 0);
	assert_int_equal(segtab_export(&tab, "keep", mem[0], 256, RMEM_ALL), 0);
	int s = segtab_export(&tab, "u", mem[1], 256, RMEM_ALL);
	assert_int_equal(s, 1);
	older2 = segtab_view(&tab, s, 2).gen;
	assert_int_equal(segtab_revoke(&tab, s, 2), 0);
	assert_int_equal(segtab_grant(&tab, s, 2, RMEM_ALL), 0);
	assert_int_equal(segtab_inhibit(&tab, s, 1), 0);
	for (int n = 0; n < SEGTAB_NODES; n++)
		before[n] = segtab_view(&tab, s, n);
	struct rmem_segview keep = segtab_view(&tab, 0, 5);

	assert_int_equal(segtab_unexport(&tab, s), 0);
	struct rmem_segview none = { 0 };
	for (int n = 0; n < SEGTAB_NODES; n++) {
		view_equal(segtab_view(&tab, s, n), none);
		for (size_t i = 0; i < NOPS_REQ; i++)
			assert_int_equal(check_from(&tab, s, n, req_ops[i], before[n].gen, 0, 8),
					 RMS_BAD_SEG);
	}
	assert_int_equal(segtab_find(&tab, "u"), -1);
	view_equal(segtab_view(&tab, 0, 5), keep);
	/* Everything on a withdrawn segment: -EBADF. */
	assert_int_equal(segtab_unexport(&tab, s), -EBADF);
	assert_int_equal(segtab_grant(&tab, s, 2, RMEM_R), -EBADF);
	assert_int_equal(segtab_revoke(&tab, s, 2), -EBADF);
	assert_int_equal(segtab_inhibit(&tab, s, 0), -EBADF);
	view_equal(segtab_view(&tab, s, 2), none);
	assert_int_equal(segtab_unexport(&tab, -1), -EBADF);
	assert_int_equal(segtab_unexport(&tab, SEGTAB_SLOTS), -EBADF);
	assert_int_equal(segtab_unexport(&tab, 9), -EBADF);

	/* A new segment in the same slot, even under the same name. */
	assert_int_equal(segtab_export(&tab, "u", mem[2], 128, RMEM_ALL), s);
	for (int n = 0; n < SEGTAB_NODES; n++) {
		struct rmem_segview v = segtab_view(&tab, s, n);
		assert_int_equal(v.exists, 1);
		assert_int_equal(v.size, 128);
		assert_int_equal(v.inhibit, 0);		/* fresh state */
		assert_int_equal(v.rights, n == 0 ? 0 : RMEM_ALL);
		assert_true(v.gen != before[n].gen);
		assert_true(v.gen > before[n].gen);
		if (n == 0)
			continue;
		/* Operations built for the old segment are stale, not applied to the new one. */
		for (size_t i = 0; i < NOPS_REQ; i++) {
			assert_int_equal(check_from(&tab, s, n, req_ops[i], before[n].gen, 0, 8),
					 RMS_STALE);
			assert_int_equal(check_from(&tab, s, n, req_ops[i], v.gen, 0, 8), RMS_OK);
		}
	}
	assert_true(segtab_view(&tab, s, 2).gen != older2);
	assert_int_equal(check_from(&tab, s, 2, RM_WRITE, older2, 0, 8), RMS_STALE);
	assert_int_equal(segtab_find(&tab, "u"), s);
	assert_ptr_equal(tab.slot[s].base, mem[2]);
	/* The name freed can be taken by a new export in another slot too. */
	assert_int_equal(segtab_unexport(&tab, 0), 0);
	assert_int_equal(segtab_export(&tab, "x", mem[3], 64, RMEM_R), 0);
	assert_int_equal(segtab_export(&tab, "keep", mem[3], 64, RMEM_R), 2);
	assert_int_equal(check_from(&tab, 0, 5, RM_READ_REQ, keep.gen, 0, 8), RMS_STALE);
}

static void seg_inhibit_on_off(void **state)
{
	(void)state;
	segtab_init(&tab, 0);
	int s = segtab_export(&tab, "i", mem[0], 256, RMEM_ALL);
	struct rmem_segview v0 = segtab_view(&tab, s, 4);
	assert_int_equal(v0.inhibit, 0);
	assert_int_equal(check_from(&tab, s, 4, RM_WRITE, v0.gen, 0, 256), RMS_OK);

	assert_int_equal(segtab_inhibit(&tab, s, 1), 0);
	struct rmem_segview v1 = segtab_view(&tab, s, 4);
	assert_int_equal(v1.inhibit, 1);
	assert_int_equal(v1.gen, v0.gen);		/* nothing else changes */
	assert_int_equal(v1.rights, v0.rights);
	assert_int_equal(v1.size, v0.size);
	for (int n = 1; n < SEGTAB_NODES; n++) {
		uint32_t g = segtab_view(&tab, s, n).gen;
		assert_int_equal(check_from(&tab, s, n, RM_WRITE, g, 0, 1), RMS_INHIBIT);
		assert_int_equal(check_from(&tab, s, n, RM_WRITE, g, 255, 1), RMS_INHIBIT);
		assert_int_equal(check_from(&tab, s, n, RM_READ_REQ, g, 0, 256), RMS_OK);
	}
	/* Inhibit twice, then off once: off. */
	assert_int_equal(segtab_inhibit(&tab, s, 1), 0);
	assert_int_equal(segtab_inhibit(&tab, s, 0), 0);
	view_equal(segtab_view(&tab, s, 4), v0);
	assert_int_equal(check_from(&tab, s, 4, RM_WRITE, v0.gen, 0, 256), RMS_OK);
	/* Only that segment. */
	int t = segtab_export(&tab, "j", mem[1], 256, RMEM_ALL);
	assert_int_equal(segtab_inhibit(&tab, t, 1), 0);
	assert_int_equal(segtab_view(&tab, s, 4).inhibit, 0);
	assert_int_equal(segtab_view(&tab, t, 4).inhibit, 1);
	assert_int_equal(segtab_inhibit(&tab, 5, 1), -EBADF);
	assert_int_equal(segtab_inhibit(&tab, -1, 1), -EBADF);
	assert_int_equal(segtab_inhibit(&tab, SEGTAB_SLOTS, 1), -EBADF);
}

static void seg_view_out_of_range(void **state)
{
	struct rmem_segview none = { 0 };

	(void)state;
	segtab_init(&tab, 0);
	assert_int_equal(segtab_export(&tab, "v", mem[0], 256, RMEM_ALL), 0);
	view_equal(segtab_view(&tab, 0, -1), none);
	view_equal(segtab_view(&tab, 0, SEGTAB_NODES), none);
	view_equal(segtab_view(&tab, 0, 1000), none);
	view_equal(segtab_view(&tab, -1, 1), none);
	view_equal(segtab_view(&tab, SEGTAB_SLOTS, 1), none);
	view_equal(segtab_view(&tab, 0xffff, 1), none);
	view_equal(segtab_view(&tab, 1, 1), none);
	assert_int_equal(segtab_view(&tab, 0, SEGTAB_NODES - 1).exists, 1);
	/* A 16-bit segment number from the wire beyond the table. */
	assert_int_equal(check_from(&tab, 0xffff, 1, RM_WRITE, 0, 0, 1), RMS_BAD_SEG);
	assert_int_equal(check_from(&tab, SEGTAB_SLOTS, 1, RM_WRITE, 0, 0, 1), RMS_BAD_SEG);
}

/* --- memory stays byte-for-byte unchanged -------------------------------- */

#define ARENA 8192
#define SEG_AT 1000		/* 8-aligned, so atomics land on aligned words */
#define SEG_SIZE 2996		/* not a multiple of 8: the last word is partial */
#define SELF 0

static _Alignas(64) uint8_t arena[ARENA];
static uint8_t model[ARENA], before_op[ARENA];

static uint8_t pattern(size_t i)
{
	return (uint8_t)(i * 131 + (i >> 8) * 7 + 0x5a);
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* The rules, written out independently of rmem_check, for the oracle. */
static int oracle(const struct segtab *t, int seg, int src, const struct rmem_msg *m)
{
	if (seg < 0 || seg >= SEGTAB_SLOTS || !t->slot[seg].used || src < 0 || src >= SEGTAB_NODES)
		return RMS_BAD_SEG;
	const struct segslot *s = &t->slot[seg];
	if (m->gen != s->gen[src])
		return RMS_STALE;
	int need = need_of(m->op);
	if (src == t->self || !(s->rights[src] & need))
		return RMS_RIGHTS;
	if (m->off > s->size || m->count > s->size - m->off)
		return RMS_BOUNDS;
	if (need == RMEM_A && ((uintptr_t)s->base + m->off) % 8 != 0)
		return RMS_ALIGN;
	if (need != RMEM_R && s->inhibit)
		return RMS_INHIBIT;
	return RMS_OK;
}

/*
 * What an allowed operation must do, worked on the model alone, byte by
 * byte (through the segment's known position in the arena): the bytes a
 * READ returns or the old value an atomic returns go to *ret.
 */
static void model_apply(const struct rmem_msg *m, const uint8_t *data, uint8_t *ret)
{
	uint8_t *mt = model + SEG_AT + m->off;
	uint64_t a, b, prev;

	switch (m->op) {
	case RM_WRITE:
		memcpy(mt, data, m->count);
		break;
	case RM_READ_REQ:
		memcpy(ret, mt, m->count);
		break;
	case RM_CAS:
		memcpy(&a, data, 8);
		memcpy(&b, data + 8, 8);
		memcpy(&prev, mt, 8);
		memcpy(ret, &prev, 8);
		if (prev == a)
			memcpy(mt, &b, 8);
		break;
	case RM_FADD:
		memcpy(&a, data, 8);
		memcpy(&prev, mt, 8);
		memcpy(ret, &prev, 8);
		prev += a;
		memcpy(mt, &prev, 8);
		break;
	}
}

static void outside_unchanged(void)
{
	for (size_t i = 0; i < ARENA; i++)
		if ((i < SEG_AT || i >= SEG_AT + SEG_SIZE) && arena[i] != pattern(i))
			fail_msg("byte %zu outside the segment changed", i);
}

/*
 * Build one request from node src and hand it to the kernel's receive code
 * (rmem_receive, net/rmem/serve.c) on the kernel's segment table; take its
 * answer from the fake fabric and return the verdict it carries.  The
 * verdict must be the oracle's, memory must be the model's (nothing moved
 * if refused), and a READ's bytes or an atomic's old value the model's.
 */
static int one_op(struct segtab *t, uint8_t op, int seg, int src, uint32_t gen, uint32_t off,
		  uint32_t count, const uint8_t *payload)
{
	static uint8_t b[RMEM_HDR_LEN + RMEM_DATA_MAX], ret[RMEM_DATA_MAX];
	size_t dlen = op == RM_WRITE ? count : op == RM_CAS ? 16 : op == RM_FADD ? 8 : 0;
	size_t n = put(b, op, RM_F_ACK, (uint16_t)seg, gen, off, count, 0x77, 0, 0);
	struct rmem_msg m, a;
	struct host_frame f;
	const uint8_t *data;
	size_t got;

	assert_ptr_equal(t, &rmem_segtab);
	memcpy(b + RMEM_HDR_LEN, payload, dlen);
	n += dlen;
	assert_int_equal(rmem_parse(b, n, &m, &data, &got), RMS_OK);
	assert_int_equal(got, dlen);
	int expect = oracle(t, m.seg, src, &m);

	memcpy(before_op, arena, ARENA);
	assert_int_equal(rmem_receive(src, b, n, 0), 0);
	assert_int_equal(host_frame_take(&f), 0);		/* one answer, to src */
	assert_int_equal(host_frames(), 0);
	assert_int_equal(f.dst, src);
	memcpy(&a, f.data, sizeof a);
	assert_int_equal(a.tag, 0x77);
	int st = a.op == RM_STATUS ? a.status : RMS_OK;
	if (st != expect)
		fail_msg("op %u seg %d src %d gen %u off %u count %u: %d, oracle %d", op, seg, src,
			 gen, off, count, st, expect);
	if (st == RMS_OK) {
		assert_true((uint64_t)m.off + m.count <= SEG_SIZE);
		model_apply(&m, data, ret);
		assert_memory_equal(arena, model, ARENA);
		if (op == RM_READ_REQ) {
			assert_int_equal(a.op, RM_READ_RESP);
			assert_int_equal(f.len, sizeof a + m.count);
			assert_memory_equal(f.data + sizeof a, ret, m.count);
		} else if (op == RM_CAS || op == RM_FADD) {
			assert_int_equal(a.op, RM_ATOMIC_RESP);
			assert_memory_equal(f.data + sizeof a, ret, 8);
		}
	} else {
		assert_int_equal(a.op, RM_STATUS);
		assert_memory_equal(arena, before_op, ARENA);	/* refused: nothing moved */
	}
	return st;
}

static void setup_arena(struct segtab *t)
{
	for (size_t i = 0; i < ARENA; i++)
		arena[i] = model[i] = pattern(i);
	/*
	 * The fabric's node id is one no request comes from, so that even the
	 * answer to a request claiming to come from the table's own node
	 * (SELF, which has no rights) goes out and can be checked.
	 */
	host_fabric_reset(8, 9);
	rmem_ready = 1;
	segtab_init(t, SELF);
	assert_int_equal(segtab_export(t, "decoy", arena, 16, RMEM_ALL), 0);
	assert_int_equal(segtab_unexport(t, 0), 0);	/* slot 0 reused: generations move on */
	assert_int_equal(segtab_export(t, "mem", arena + SEG_AT, SEG_SIZE, RMEM_ALL), 0);
	assert_int_equal(segtab_grant(t, 0, 3, RMEM_R), 0);	/* node 3 reads only */
	assert_int_equal(segtab_grant(t, 0, 4, 0), 0);		/* node 4 nothing */
	assert_int_equal(segtab_grant(t, 0, 6, RMEM_A), 0);	/* node 6 atomics only */
	assert_int_equal(segtab_revoke(t, 0, 5), 0);		/* node 5 revoked */
}

/* A fixed table of operations at the edges, each with its exact verdict. */
static void memory_table_of_edges(void **state)
{
	static uint8_t payload[RMEM_MAX_XFER];
	struct segtab *t = &rmem_segtab;

	(void)state;
	setup_arena(t);
	for (size_t i = 0; i < sizeof payload; i++)
		payload[i] = (uint8_t)~pattern(i + 3);
	uint32_t g1 = segtab_view(t, 0, 1).gen, g5 = segtab_view(t, 0, 5).gen;
	const struct {
		uint8_t op;
		int seg, src;
		uint32_t gen, off, count;
		int st;
	} ops[] = {
		{ RM_WRITE, 0, 1, g1, 0, 1, RMS_OK },
		{ RM_WRITE, 0, 1, g1, SEG_SIZE - 1, 1, RMS_OK },		/* last byte */
		{ RM_WRITE, 0, 1, g1, SEG_SIZE, 1, RMS_BOUNDS },		/* just past */
		{ RM_WRITE, 0, 1, g1, SEG_SIZE - 100, 101, RMS_BOUNDS },	/* spans by one */
		{ RM_WRITE, 0, 1, g1, SEG_SIZE - 100, 100, RMS_OK },
		{ RM_WRITE, 0, 1, g1, 0xffffffffu, 1, RMS_BOUNDS },		/* wraps */
		{ RM_WRITE, 0, 1, g1, 0xfffffa80u, RMEM_MAX_XFER, RMS_BOUNDS },	/* wraps to 0 */
		{ RM_WRITE, 0, 1, g1, 0xfffffb00u, RMEM_MAX_XFER, RMS_BOUNDS },	/* wraps to 128 */
		{ RM_WRITE, 0, 1, g1 - 1, 0, 8, RMS_STALE },			/* an older gen */
		{ RM_WRITE, 0, 1, g1 + 1, 0, 8, RMS_STALE },
		{ RM_WRITE, 0, 5, g1, 0, 8, RMS_STALE },			/* revoked node */
		{ RM_WRITE, 0, 5, g5, 0, 8, RMS_RIGHTS },
		{ RM_WRITE, 0, 3, g1, 0, 8, RMS_RIGHTS },
		{ RM_READ_REQ, 0, 3, g1, 0, 8, RMS_OK },
		{ RM_WRITE, 0, 4, g1, 0, 8, RMS_RIGHTS },
		{ RM_WRITE, 0, SELF, g1, 0, 8, RMS_RIGHTS },
		{ RM_WRITE, 1, 1, g1, 0, 8, RMS_BAD_SEG },
		{ RM_WRITE, 0xffff, 1, g1, 0, 8, RMS_BAD_SEG },
		{ RM_CAS, 0, 1, g1, 8, 8, RMS_OK },
		{ RM_CAS, 0, 1, g1, 9, 8, RMS_ALIGN },
		{ RM_FADD, 0, 6, g1, SEG_SIZE - 8, 8, RMS_ALIGN },		/* ends at size */
		{ RM_FADD, 0, 6, g1, SEG_SIZE - 4, 8, RMS_BOUNDS },		/* aligned, partial word */
		{ RM_FADD, 0, 6, g1, SEG_SIZE - 12, 8, RMS_OK },		/* last whole word */
		{ RM_CAS, 0, 1, g1, SEG_SIZE - 12, 8, RMS_OK },
		{ RM_FADD, 0, 6, g1, 0xfffffff8u, 8, RMS_BOUNDS },
		{ RM_WRITE, 0, 6, g1, 16, 8, RMS_RIGHTS },
		{ RM_READ_REQ, 0, 1, g1, 0, SEG_SIZE < RMEM_MAX_XFER ? SEG_SIZE : RMEM_MAX_XFER, RMS_OK },
	};
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
		int st = one_op(t, ops[i].op, ops[i].seg, ops[i].src, ops[i].gen, ops[i].off,
				ops[i].count, payload);
		if (st != ops[i].st)
			fail_msg("table row %zu: %d, expected %d", i, st, ops[i].st);
		outside_unchanged();
	}
	/* Inhibited: the same write refused, reads and atomics pass. */
	segtab_inhibit(t, 0, 1);
	assert_int_equal(one_op(t, RM_WRITE, 0, 1, g1, 0, 1, payload), RMS_INHIBIT);
	assert_int_equal(one_op(t, RM_WRITE, 0, 1, g1, SEG_SIZE - 1, 1, payload), RMS_INHIBIT);
	assert_int_equal(one_op(t, RM_READ_REQ, 0, 1, g1, 0, 1, payload), RMS_OK);
	segtab_inhibit(t, 0, 0);
	assert_int_equal(one_op(t, RM_WRITE, 0, 1, g1, 0, 1, payload), RMS_OK);
	outside_unchanged();
	/* The first and last bytes of the segment did change, to what was written. */
	assert_int_equal(arena[SEG_AT], payload[0]);
	assert_int_equal(arena[SEG_AT + SEG_SIZE - 1], payload[99]);	/* from the write at size - 100 */
}

static uint32_t pick_off(uint8_t op)
{
	switch (rnd() % 8) {
	case 0: return (uint32_t)(SEG_SIZE - rnd() % 16);		/* near the end */
	case 1: return (uint32_t)(SEG_SIZE + rnd() % 16);		/* just past */
	case 2: return (uint32_t)(0u - 1 - rnd() % RMEM_MAX_XFER);	/* wrapping */
	case 3: return (uint32_t)rnd();					/* anywhere */
	case 4: return (uint32_t)(rnd() % 16);				/* near the start */
	default:
		if (op == RM_CAS || op == RM_FADD)
			return (uint32_t)(rnd() % (SEG_SIZE + 8)) & ~7u;
		return (uint32_t)(rnd() % (SEG_SIZE + 8));
	}
}

static void memory_random_operations(void **state)
{
	static uint8_t payload[RMEM_MAX_XFER];
	struct segtab *t = &rmem_segtab;
	int seen[RMS_NSTATUS] = { 0 };

	(void)state;
	rng = 0x2545f4914f6cdd1dULL;
	setup_arena(t);
	for (int i = 0; i < 30000; i++) {
		uint8_t op = req_ops[rnd() % NOPS_REQ];
		int src = (int)(rnd() % 8);
		int seg = rnd() % 16 == 0 ? (int)(rnd() % 3) : 0;
		uint32_t gen = segtab_view(t, 0, src).gen;
		if (rnd() % 10 == 0)
			gen += (uint32_t)(rnd() % 3) - 1;
		uint32_t off = pick_off(op);
		uint32_t count = 8;
		if (op == RM_WRITE || op == RM_READ_REQ)
			count = rnd() % 4 ? 1 + (uint32_t)(rnd() % 64)
					  : 1 + (uint32_t)(rnd() % RMEM_MAX_XFER);
		for (size_t k = 0; k < (op == RM_WRITE ? count : 16); k++)
			payload[k] = (uint8_t)rnd();
		/* Now and then the table changes under the issuers' feet. */
		switch (rnd() % 64) {
		case 0: segtab_inhibit(t, 0, 1); break;
		case 1: case 2: segtab_inhibit(t, 0, 0); break;
		case 3: segtab_revoke(t, 0, (int)(rnd() % 8)); break;
		case 4: segtab_grant(t, 0, (int)(rnd() % 8), (int)(rnd() % 8)); break;
		default: break;
		}
		int st = one_op(t, op, seg, src, gen, off, count, payload);
		seen[st]++;
		if (i % 64 == 0)
			outside_unchanged();
	}
	outside_unchanged();
	assert_memory_equal(arena, model, ARENA);
	/* Every verdict a request can get came up. */
	for (int s = RMS_OK; s <= RMS_ALIGN; s++)
		if (seen[s] < 20)
			fail_msg("status %s seen only %d times", rmem_status_names[s], seen[s]);
	assert_int_equal(seen[RMS_MALFORMED], 0);
}

UNIT_MAIN("rmem", NULL, NULL,
	  cmocka_unit_test(wire_layout_is_fixed),
	  cmocka_unit_test(parse_accepts_every_op),
	  cmocka_unit_test(parse_rejects_short_headers),
	  cmocka_unit_test(parse_wants_exact_lengths),
	  cmocka_unit_test(parse_rejects_bad_counts),
	  cmocka_unit_test(parse_rejects_unknown_ops),
	  cmocka_unit_test(parse_rejects_unknown_flags),
	  cmocka_unit_test(parse_rejects_bad_status),
	  cmocka_unit_test(status_names_and_errnos),
	  cmocka_unit_test(check_bad_segment),
	  cmocka_unit_test(check_stale_generation),
	  cmocka_unit_test(check_rights_per_op),
	  cmocka_unit_test(check_bounds),
	  cmocka_unit_test(check_atomics),
	  cmocka_unit_test(check_write_inhibit),
	  cmocka_unit_test(check_atomic_alignment_uses_the_address),
	  cmocka_unit_test(check_violation_order),
	  cmocka_unit_test(check_refuses_non_requests),
	  cmocka_unit_test(seg_export_rules),
	  cmocka_unit_test(seg_table_full),
	  cmocka_unit_test(seg_self_never_has_rights),
	  cmocka_unit_test(seg_grant_one_node),
	  cmocka_unit_test(seg_revoke_one_node),
	  cmocka_unit_test(seg_unexport_and_reuse),
	  cmocka_unit_test(seg_inhibit_on_off),
	  cmocka_unit_test(seg_view_out_of_range),
	  cmocka_unit_test(memory_table_of_edges),
	  cmocka_unit_test(memory_random_operations))
