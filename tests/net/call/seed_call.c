/*
 * Seeds for fuzz_call: one well-formed message of each kind, and near
 * misses (a name of the longest length and one more, a name with a NUL,
 * a refusal with a body, an answer one byte too long).
 * Usage: seed_call <dir>
 */
#include <string.h>

#include "net/call/call_wire.h"
#include "tests/host/seed_common.h"

/* m as an op with a body of len bytes, as dir/seed<i>. */
static int save_msg(const char *dir, int i, struct call_msg *m, uint8_t op, const char *body, uint16_t len)
{
	m->op = op;
	m->len = len;
	put(m, sizeof *m);
	if (len)
		put(body, len);
	return save(dir, i);
}

int main(int argc, char **argv)
{
	static const char name31[] = "0123456789abcdefghijklmnopqrstu", name32[] = "0123456789abcdefghijklmnopqrstuv";
	static const char answer[CALL_ANSWER_MAX] = { 1, 0, 7, 0, 5 };
	struct call_msg m;
	int bad = 0, i = 0;

	if (argc != 2)
		return 2;
	memset(&m, 0, sizeof m);
	m.tag = 0x102;
	bad |= save_msg(argv[1], i++, &m, CALL_FENCE, NULL, 0);
	bad |= save_msg(argv[1], i++, &m, CALL_FENCE_DONE, NULL, 0);
	for (uint8_t kind = 1; kind < NAME_KINDS; kind++) {
		m.kind = kind;
		bad |= save_msg(argv[1], i++, &m, CALL_LOOKUP, "bar0", 4);
		bad |= save_msg(argv[1], i++, &m, CALL_LOOKUP_DONE, answer, 16);
	}
	m.kind = NAME_SEGMENT;
	bad |= save_msg(argv[1], i++, &m, CALL_LOOKUP, name31, 31);
	bad |= save_msg(argv[1], i++, &m, CALL_LOOKUP, name32, 32);
	m.status = CALL_DENIED;
	bad |= save_msg(argv[1], i++, &m, CALL_LOOKUP_DONE, NULL, 0);
	bad |= save_msg(argv[1], i++, &m, CALL_LOOKUP_DONE, answer, 2);
	m.status = CALL_NOENT;
	bad |= save_msg(argv[1], i++, &m, CALL_LOOKUP_DONE, NULL, 0);
	m.status = CALL_OK;
	m.kind = NAME_QUEUE;
	bad |= save_msg(argv[1], i++, &m, CALL_LOOKUP_DONE, answer, CALL_ANSWER_MAX);
	bad |= save_msg(argv[1], i++, &m, CALL_LOOKUP_DONE, name32, CALL_ANSWER_MAX + 1);
	m.kind = NAME_CONN;
	bad |= save_msg(argv[1], i++, &m, CALL_LOOKUP, "\xff/ ab", 5);	/* any byte but NUL */
	bad |= save_msg(argv[1], i++, &m, CALL_LOOKUP, "ab\0cd", 5);
	m.kind = 0;
	m.tag = 0x80000003u;				/* a sink-style tag: the parser takes any */
	bad |= save_msg(argv[1], i++, &m, CALL_FENCE, NULL, 0);
	return bad;
}
