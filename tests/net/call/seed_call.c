/*
 * Seeds for fuzz_call: one well-formed message of each kind, and near
 * misses (a name of the longest length and one more, a name with a NUL,
 * a refusal with a body, an answer one byte too long).
 * Usage: seed_call <dir>
 */
#include <string.h>

#include "net/call/call_wire.h"
#include "tests/host/seed_common.h"

/* A message and its body as dir/seed<i>. */
static int save_msg(const char *dir, int i, const struct call_msg *m, const char *body, size_t blen)
{
	put(m, sizeof *m);
	if (blen)
		put(body, blen);
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
	m.op = CALL_FENCE;
	bad |= save_msg(argv[1], i++, &m, NULL, 0);
	m.op = CALL_FENCE_DONE;
	bad |= save_msg(argv[1], i++, &m, NULL, 0);
	for (uint8_t kind = 1; kind < NAME_KINDS; kind++) {
		m.op = CALL_LOOKUP;
		m.kind = kind;
		m.len = 4;
		bad |= save_msg(argv[1], i++, &m, "bar0", 4);
		m.op = CALL_LOOKUP_DONE;
		m.len = 16;
		bad |= save_msg(argv[1], i++, &m, answer, 16);
	}
	m.op = CALL_LOOKUP;
	m.kind = NAME_SEGMENT;
	m.len = 31;
	bad |= save_msg(argv[1], i++, &m, name31, 31);
	m.len = 32;
	bad |= save_msg(argv[1], i++, &m, name32, 32);
	m.op = CALL_LOOKUP_DONE;
	m.status = CALL_DENIED;
	m.len = 0;
	bad |= save_msg(argv[1], i++, &m, NULL, 0);
	m.len = 2;
	bad |= save_msg(argv[1], i++, &m, answer, 2);
	m.status = CALL_NOENT;
	m.len = 0;
	bad |= save_msg(argv[1], i++, &m, NULL, 0);
	m.status = CALL_OK;
	m.kind = NAME_QUEUE;
	m.len = CALL_ANSWER_MAX;
	bad |= save_msg(argv[1], i++, &m, answer, CALL_ANSWER_MAX);
	m.len = CALL_ANSWER_MAX + 1;
	bad |= save_msg(argv[1], i++, &m, name32, CALL_ANSWER_MAX + 1);
	m.op = CALL_LOOKUP;
	m.kind = NAME_CONN;
	m.len = 5;
	bad |= save_msg(argv[1], i++, &m, "\xff/ ab", 5);	/* any byte but NUL */
	bad |= save_msg(argv[1], i++, &m, "ab\0cd", 5);
	m.op = CALL_FENCE;
	m.kind = 0;
	m.len = 0;
	m.tag = 0x80000003u;				/* a sink-style tag: the parser takes any */
	bad |= save_msg(argv[1], i++, &m, NULL, 0);
	return bad;
}
