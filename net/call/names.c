/*
 * The name service: one for segments, queues and connections alike.  A
 * lookup is a call on the facility's protocol; the node asked runs the
 * resolver registered for the name's kind (in its receive path) and
 * answers with what the resolver returned for the asker.
 */
#include <errno.h>
#include <string.h>

#include "kernel/x86.h"
#include "net/call/call.h"
#include "net/call/internal.h"
#include "net/call/names.h"

static name_resolver_t resolvers[NAME_KINDS];

int names_register(int kind, name_resolver_t fn)
{
	if (kind <= 0 || kind >= NAME_KINDS)
		return -EINVAL;
	if (resolvers[kind])
		return -EBUSY;
	resolvers[kind] = fn;
	return 0;
}

void names_serve(int src, const struct call_msg *m, const uint8_t *body)
{
	struct call_msg a = { .op = CALL_LOOKUP_DONE, .kind = m->kind, .tag = m->tag };
	uint8_t answer[CALL_ANSWER_MAX];
	char name[CALL_NAME_MAX + 1];
	size_t len = 0;
	int r = -ENOENT;

	memcpy(name, body, m->len);
	name[m->len] = '\0';
	if (resolvers[m->kind])
		r = resolvers[m->kind](name, src, answer, &len);
	if (r == 0 && len > CALL_ANSWER_MAX)
		r = -ENOENT;		/* a resolver's bug must not reach the wire */
	a.status = r == 0 ? CALL_OK : r == -EACCES ? CALL_DENIED : CALL_NOENT;
	a.len = r == 0 ? (uint16_t)len : 0;
	call_answer(src, CALL_PROTO, &a, sizeof a, answer, a.len, 0);
}

void names_answered(struct call *c, const struct call_msg *m, const uint8_t *body)
{
	if (m->kind != c->value) {	/* asked for another kind of name */
		call_done(c, -EPROTO);
		return;
	}
	memcpy(c->priv, body, m->len);
	c->value = m->len;
	call_done(c, m->status == CALL_OK ? 0 : m->status == CALL_DENIED ? -EACCES : -ENOENT);
}

int names_lookup(int node, int kind, const char *name, void *answer, size_t size,
		 uint64_t timeout_ns)
{
	struct call_msg m = { 0 };
	size_t n = strlen(name);
	struct call *c;
	int r;

	_Static_assert(CALL_ANSWER_MAX <= sizeof c->priv, "an answer fits a call");
	if (kind <= 0 || kind >= NAME_KINDS || n == 0 || n > CALL_NAME_MAX || size > CALL_ANSWER_MAX)
		return -EINVAL;
	if (!(c = call_new(CALL_PROTO, CALL_LOOKUP, node)))
		return -EAGAIN;
	c->value = (uint64_t)kind;
	m.op = CALL_LOOKUP;
	m.kind = (uint8_t)kind;
	m.len = (uint16_t)n;
	m.tag = c->tag;
	r = call_post(c, &m, sizeof m, name, n, 0);
	if (r == 0)
		r = call_wait(c, timeout_ns);
	if (r == 0)
		r = c->status;
	if (r == 0 && c->value != size)
		r = -EPROTO;
	if (r == 0)
		memcpy(answer, c->priv, size);
	call_free(c);
	return r;
}
