/*
 * The name service: a node answers lookups of a kind (enum name_kind,
 * call_wire.h) with the resolver registered for it; another node asks by
 * name.  It rides on the request/answer facility (call.h).
 */
#ifndef NET_CALL_NAMES_H
#define NET_CALL_NAMES_H

#include <stddef.h>
#include <stdint.h>

/*
 * A resolver: what this node tells node asker about name (NUL-terminated)
 * of its kind: 0 with up to CALL_ANSWER_MAX bytes in answer and their
 * count in *len, -ENOENT (no such name) or -EACCES (no rights for asker).
 * (irq: short, no sleeping)
 */
typedef int (*name_resolver_t)(const char *name, int asker, void *answer, size_t *len);

/* Answer lookups of kind (enum name_kind) with fn.  0, -EBUSY, -EINVAL. */
int names_register(int kind, name_resolver_t fn);

/*
 * Ask node's resolver of kind about name: 0 with the answer, which must be
 * size bytes exactly, in answer, or -EPROTO (an answer of another length:
 * nothing written, however long the other node made it), -ENOENT,
 * -EACCES, -EINVAL (name empty or longer than CALL_NAME_MAX, size above
 * CALL_ANSWER_MAX), -EAGAIN, -EHOSTDOWN, -ETIMEDOUT.
 */
int names_lookup(int node, int kind, const char *name, void *answer, size_t size,
		 uint64_t timeout_ns);

#endif
