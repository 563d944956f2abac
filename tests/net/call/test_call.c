/*
 * Host unit tests of the request/answer facility's messages
 * (net/call/call_wire.c): the fences and name lookups every mechanism's
 * name service and rmem_sync/req_sync rest on.  call_msg_parse is driven
 * as it is, over bytes laid out by hand.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/host/unit.h"

#include "net/call/call_wire.h"
#include "net/req/wire.h"
#include "net/rmem/proto.h"

/* A message: header fields, then blen body bytes (from body, or a pattern). */
static size_t put(uint8_t *b, uint8_t op, uint8_t kind, uint16_t len, uint32_t tag, uint32_t status,
		  const void *body, size_t blen)
{
	b[0] = op;
	b[1] = kind;
	b[2] = (uint8_t)len;
	b[3] = (uint8_t)(len >> 8);
	for (int i = 0; i < 4; i++) {
		b[4 + i] = (uint8_t)(tag >> (8 * i));
		b[8 + i] = (uint8_t)(status >> (8 * i));
	}
	for (size_t i = 0; i < blen; i++)
		b[CALL_HDR_LEN + i] = body ? ((const uint8_t *)body)[i] : (uint8_t)('a' + i % 26);
	return CALL_HDR_LEN + blen;
}

/* A tag with the top bit set is a sink's (net/call/call.h). */
#define SINK(s) (0x80000000u | (uint32_t)(s))

/*
 * Parse a private copy of exactly n bytes (AddressSanitizer sees any read
 * beyond them); on success the body must be the n - 12 bytes after the
 * header.  The parser's verdict, with the message in *out if given.
 */
static int parse_msg(const uint8_t *b, size_t n, struct call_msg *out)
{
	uint8_t *q = malloc(n ? n : 1);
	struct call_msg m;
	const uint8_t *body = NULL;

	assert_non_null(q);
	memcpy(q, b, n);
	int r = call_msg_parse(q, n, &m, &body);
	if (r == 0) {
		assert_ptr_equal(body, q + CALL_HDR_LEN);
		assert_int_equal(m.len, n - CALL_HDR_LEN);
		if (out)
			*out = m;
	} else {
		assert_int_equal(r, -EPROTO);
	}
	free(q);
	return r;
}

static int parse(const uint8_t *b, size_t n)
{
	return parse_msg(b, n, NULL);
}

static void header_layout_is_fixed(void **state)
{
	static const uint8_t b[CALL_HDR_LEN + 3] = {
		CALL_LOOKUP, NAME_QUEUE,	/* op, kind */
		0x03, 0x00,			/* len 3 */
		0x78, 0x56, 0x34, 0x12,		/* tag */
		0x00, 0x00, 0x00, 0x00,		/* status */
		'a', 'b', 'c',
	};
	struct call_msg m;
	const uint8_t *body;

	(void)state;
	assert_int_equal(call_msg_parse(b, sizeof b, &m, &body), 0);
	assert_int_equal(m.op, CALL_LOOKUP);
	assert_int_equal(m.kind, NAME_QUEUE);
	assert_int_equal(m.len, 3);
	assert_int_equal(m.tag, 0x12345678u);
	assert_int_equal(m.status, CALL_OK);
	assert_ptr_equal(body, b + CALL_HDR_LEN);
	assert_memory_equal(body, "abc", 3);
}

/* Every valid kind of message is accepted, and every field comes back as sent. */
static void every_kind_with_its_fields(void **state)
{
	static const uint32_t tags[] = { 1, 0x7fffffffu, SINK(0), SINK(1023), 0xffffffffu };
	static const uint8_t answer[CALL_ANSWER_MAX] = { 0x34, 0x12, 7, 0, 5, 0, 0, 0, 0, 0x10 };
	uint8_t b[CALL_HDR_LEN + 64];
	struct call_msg m;

	(void)state;
	for (size_t t = 0; t < sizeof tags / sizeof tags[0]; t++) {
		for (uint8_t op = CALL_FENCE; op <= CALL_FENCE_DONE; op++) {
			memset(&m, 0xee, sizeof m);
			assert_int_equal(parse_msg(b, put(b, op, 0, 0, tags[t], CALL_OK, NULL, 0), &m), 0);
			assert_int_equal(m.op, op);
			assert_int_equal(m.kind, 0);
			assert_int_equal(m.len, 0);
			assert_int_equal(m.tag, tags[t]);
			assert_int_equal(m.status, CALL_OK);
		}
		for (uint8_t kind = NAME_SEGMENT; kind < NAME_KINDS; kind++) {
			assert_int_equal(parse_msg(b, put(b, CALL_LOOKUP, kind, 4, tags[t], CALL_OK, "bar0", 4), &m), 0);
			assert_int_equal(m.op, CALL_LOOKUP);
			assert_int_equal(m.kind, kind);
			assert_int_equal(m.len, 4);
			assert_int_equal(m.tag, tags[t]);
			assert_int_equal(m.status, CALL_OK);
			assert_memory_equal(b + CALL_HDR_LEN, "bar0", 4);

			assert_int_equal(parse_msg(b, put(b, CALL_LOOKUP_DONE, kind, 16, tags[t], CALL_OK, answer, 16),
						   &m), 0);
			assert_int_equal(m.op, CALL_LOOKUP_DONE);
			assert_int_equal(m.kind, kind);
			assert_int_equal(m.len, 16);
			assert_int_equal(m.tag, tags[t]);
			assert_int_equal(m.status, CALL_OK);
			for (uint32_t st = CALL_NOENT; st < CALL_NSTATUS; st++) {
				assert_int_equal(parse_msg(b, put(b, CALL_LOOKUP_DONE, kind, 0, tags[t], st, NULL, 0), &m), 0);
				assert_int_equal(m.kind, kind);
				assert_int_equal(m.len, 0);
				assert_int_equal(m.tag, tags[t]);
				assert_int_equal(m.status, st);
			}
		}
	}
}

static void fences_carry_nothing(void **state)
{
	uint8_t b[64];

	(void)state;
	assert_int_equal(parse(b, put(b, CALL_FENCE, 0, 0, 7, CALL_OK, NULL, 0)), 0);
	assert_int_equal(parse(b, put(b, CALL_FENCE_DONE, 0, 0, 7, CALL_OK, NULL, 0)), 0);
	for (uint8_t op = CALL_FENCE; op <= CALL_FENCE_DONE; op++) {
		assert_int_equal(parse(b, put(b, op, 0, 1, 7, CALL_OK, NULL, 1)), -EPROTO);
		assert_int_equal(parse(b, put(b, op, NAME_SEGMENT, 0, 7, CALL_OK, NULL, 0)), -EPROTO);
		assert_int_equal(parse(b, put(b, op, 0, 0, 7, CALL_NOENT, NULL, 0)), -EPROTO);
	}
}

static void lookup_names(void **state)
{
	uint8_t b[CALL_HDR_LEN + 64];
	size_t n;

	(void)state;
	/* Every length 1..CALL_NAME_MAX, every kind. */
	for (int kind = 1; kind < NAME_KINDS; kind++)
		for (uint16_t len = 1; len <= CALL_NAME_MAX; len++)
			assert_int_equal(parse(b, put(b, CALL_LOOKUP, (uint8_t)kind, len, 1, 0, NULL, len)), 0);
	/* Empty, or longer than a name may be. */
	assert_int_equal(parse(b, put(b, CALL_LOOKUP, NAME_SEGMENT, 0, 1, 0, NULL, 0)), -EPROTO);
	for (uint16_t len = CALL_NAME_MAX + 1; len < CALL_NAME_MAX + 8; len++)
		assert_int_equal(parse(b, put(b, CALL_LOOKUP, NAME_SEGMENT, len, 1, 0, NULL, len)), -EPROTO);
	/* A NUL anywhere, in a name of any length. */
	for (uint16_t len = 1; len <= CALL_NAME_MAX; len++)
		for (uint16_t at = 0; at < len; at++) {
			n = put(b, CALL_LOOKUP, NAME_SEGMENT, len, 1, 0, NULL, len);
			b[CALL_HDR_LEN + at] = '\0';
			assert_int_equal(parse(b, n), -EPROTO);
		}
	/* Any other byte: 0xff, '/', ' ', and every non-NUL value in the last place. */
	assert_int_equal(parse(b, put(b, CALL_LOOKUP, NAME_CONN, 3, 1, 0, "\xff/ ", 3)), 0);
	for (int c = 1; c < 256; c++) {
		n = put(b, CALL_LOOKUP, NAME_QUEUE, CALL_NAME_MAX, 1, 0, NULL, CALL_NAME_MAX);
		b[n - 1] = (uint8_t)c;
		assert_int_equal(parse(b, n), 0);
	}
	/* Kinds that name nothing; a status on a request. */
	assert_int_equal(parse(b, put(b, CALL_LOOKUP, 0, 3, 1, 0, NULL, 3)), -EPROTO);
	assert_int_equal(parse(b, put(b, CALL_LOOKUP, NAME_KINDS, 3, 1, 0, NULL, 3)), -EPROTO);
	assert_int_equal(parse(b, put(b, CALL_LOOKUP, 0xff, 3, 1, 0, NULL, 3)), -EPROTO);
	static const uint32_t st[] = { CALL_NOENT, CALL_DENIED, CALL_NSTATUS, 0x100, 0x80000000u, 0xffffffffu };
	for (size_t i = 0; i < sizeof st / sizeof st[0]; i++)
		assert_int_equal(parse(b, put(b, CALL_LOOKUP, NAME_SEGMENT, 3, 1, st[i], NULL, 3)), -EPROTO);
}

static void length_field_must_match(void **state)
{
	uint8_t b[CALL_HDR_LEN + 64];

	(void)state;
	/* The len field says 5; 4 or 6 bytes follow. */
	assert_int_equal(parse(b, put(b, CALL_LOOKUP, NAME_SEGMENT, 5, 1, 0, NULL, 4)), -EPROTO);
	assert_int_equal(parse(b, put(b, CALL_LOOKUP, NAME_SEGMENT, 5, 1, 0, NULL, 6)), -EPROTO);
	assert_int_equal(parse(b, put(b, CALL_LOOKUP_DONE, NAME_SEGMENT, 16, 1, 0, NULL, 15)), -EPROTO);
	assert_int_equal(parse(b, put(b, CALL_LOOKUP_DONE, NAME_SEGMENT, 0xffff, 1, 0, NULL, 16)), -EPROTO);
	/* A fence whose len field claims a body that is not there, or none with one present. */
	assert_int_equal(parse(b, put(b, CALL_FENCE, 0, 1, 1, 0, NULL, 0)), -EPROTO);
	assert_int_equal(parse(b, put(b, CALL_FENCE_DONE, 0, 0, 1, 0, NULL, 1)), -EPROTO);
	/* Every truncated header, of every kind of message that is valid whole. */
	static const uint8_t ops[] = { CALL_FENCE, CALL_FENCE_DONE, CALL_LOOKUP, CALL_LOOKUP_DONE };
	for (size_t i = 0; i < sizeof ops; i++) {
		uint8_t kind = ops[i] >= CALL_LOOKUP ? NAME_SEGMENT : 0;
		uint16_t blen = ops[i] >= CALL_LOOKUP ? 4 : 0;
		size_t whole = put(b, ops[i], kind, blen, 1, 0, NULL, blen);
		assert_int_equal(parse(b, whole), 0);
		for (size_t n = 0; n < CALL_HDR_LEN; n++)
			assert_int_equal(parse(b, n), -EPROTO);
	}
}

static void lookup_answers(void **state)
{
	uint8_t b[CALL_HDR_LEN + 64];

	(void)state;
	for (uint16_t len = 0; len <= CALL_ANSWER_MAX; len++)
		assert_int_equal(parse(b, put(b, CALL_LOOKUP_DONE, NAME_QUEUE, len, 9, CALL_OK, NULL, len)), 0);
	assert_int_equal(parse(b, put(b, CALL_LOOKUP_DONE, NAME_QUEUE, CALL_ANSWER_MAX + 1, 9, CALL_OK, NULL,
				      CALL_ANSWER_MAX + 1)), -EPROTO);
	/* A refusal carries no answer. */
	for (uint32_t st = CALL_NOENT; st < CALL_NSTATUS; st++) {
		assert_int_equal(parse(b, put(b, CALL_LOOKUP_DONE, NAME_SEGMENT, 0, 9, st, NULL, 0)), 0);
		assert_int_equal(parse(b, put(b, CALL_LOOKUP_DONE, NAME_SEGMENT, 1, 9, st, NULL, 1)), -EPROTO);
	}
	static const uint32_t bad[] = { CALL_NSTATUS, CALL_NSTATUS + 1, 0x80000000u, 0xffffffffu };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_int_equal(parse(b, put(b, CALL_LOOKUP_DONE, NAME_SEGMENT, 0, 9, bad[i], NULL, 0)), -EPROTO);
	assert_int_equal(parse(b, put(b, CALL_LOOKUP_DONE, 0, 0, 9, CALL_OK, NULL, 0)), -EPROTO);
	assert_int_equal(parse(b, put(b, CALL_LOOKUP_DONE, NAME_KINDS, 0, 9, CALL_OK, NULL, 0)), -EPROTO);
}

static void unknown_ops(void **state)
{
	static const uint8_t bad[] = { 0, CALL_LOOKUP_DONE + 1, 0x40, 0x80, 0xff };
	uint8_t b[CALL_HDR_LEN + 8];

	(void)state;
	for (size_t i = 0; i < sizeof bad; i++) {
		assert_int_equal(parse(b, put(b, bad[i], 0, 0, 1, 0, NULL, 0)), -EPROTO);
		assert_int_equal(parse(b, put(b, bad[i], NAME_SEGMENT, 4, 1, 0, NULL, 4)), -EPROTO);
	}
}

static void answers_fit(void **state)
{
	(void)state;
	/* What the segment and queue resolvers answer goes in one lookup answer. */
	assert_true(sizeof(struct rmem_seg_answer) <= CALL_ANSWER_MAX);
	assert_true(sizeof(struct req_queue_answer) <= CALL_ANSWER_MAX);
	assert_true(sizeof(uint16_t) <= CALL_ANSWER_MAX);	/* a connection's VCI */
	assert_true(RMEM_NAME_LEN - 1 <= CALL_NAME_MAX);
}

UNIT_MAIN("call", NULL, NULL,
	  cmocka_unit_test(header_layout_is_fixed),
	  cmocka_unit_test(every_kind_with_its_fields),
	  cmocka_unit_test(fences_carry_nothing),
	  cmocka_unit_test(lookup_names),
	  cmocka_unit_test(length_field_must_match),
	  cmocka_unit_test(lookup_answers),
	  cmocka_unit_test(unknown_ops),
	  cmocka_unit_test(answers_fit))
