/*
 * The facility's own protocol, CALL_PROTO: a fence is answered once
 * everything sent before it was taken; a lookup goes to the name service
 * (names.c) and its answer to the call that asked.  Registered with the
 * fabric at start-up, with the peer-reset hook through which a rebooted
 * node's calls fail.
 */
#include <errno.h>
#include <stddef.h>

#include "kernel/init.h"
#include "net/call/call.h"
#include "net/call/internal.h"
#include "net/fabric/fabric.h"

/* --- the facility's protocol (fabric receive path, interrupts off) ----------- */

static int call_handler(int src, const uint8_t *payload, size_t len, struct pktbuf *pb)
{
	struct call_msg m;
	const uint8_t *body;
	struct call *c;

	(void)pb;
	if (call_msg_parse(payload, len, &m, &body) < 0) {
		call_ctr.malformed++;
		return 0;
	}
	switch (m.op) {
	case CALL_FENCE: {
		struct call_msg a = { .op = CALL_FENCE_DONE, .tag = m.tag };
		if (!call_can_answer(src))
			return -EBUSY;
		call_answer(src, CALL_PROTO, &a, sizeof a, NULL, 0, 0);
		return 0;
	}
	case CALL_FENCE_DONE:
		if ((c = call_find(CALL_PROTO, src, m.tag)) != NULL && c->kind == CALL_FENCE)
			call_done(c, 0);
		return 0;
	case CALL_LOOKUP:
		if (!call_can_answer(src))
			return -EBUSY;
		call_ctr.lookups_served++;
		names_serve(src, &m, body);
		return 0;
	case CALL_LOOKUP_DONE:
		if ((c = call_find(CALL_PROTO, src, m.tag)) != NULL && c->kind == CALL_LOOKUP)
			names_answered(c, &m, body);
		return 0;
	}
	return 0;
}

static int call_init(void)
{
	int r;

	if (!fabric_ready())
		return -ENODEV;
	/* A rebooted node's calls fail, as every protocol learns of it: through the peer-reset hooks. */
	if ((r = fabric_register(CALL_PROTO, call_handler)) < 0)
		return r;
	return fabric_on_peer_reset(call_node_reset);
}
INIT_HOOK(INIT_SUBSYS_4, call, call_init);
