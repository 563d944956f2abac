/*
 * peer-timeout: a peer that stops answering is an error after a bounded
 * time, never a hang.  Node 1 leaves right after the start barrier; node 0
 * then streams to it and must see fabric_send or fabric_flush fail with
 * -EHOSTDOWN within a few peer timeouts (peer_timeout_ms, 1000 here).
 */
#include <errno.h>
#include <stdio.h>

#include "apps/app.h"
#include "kernel/tsc.h"
#include "net/call/barrier.h"
#include "net/fabric/fabric.h"
#include "tests/apps/protos.h"

static int peer_timeout_main(void)
{
	uint8_t msg[100] = { 0 };
	uint64_t t0;
	int r = 0, sent = 0;

	if (!fabric_ready() || fabric_wait_peers(30000000000ULL) < 0 ||
	    cluster_barrier(30000000000ULL) < 0)
		return 1;
	if (node_id != 0)
		return 0;	/* gone: the node powers off */
	uint64_t limit_ms = (uint64_t)arg_int("peer_timeout_ms", 10000) * 3 + 2000;
	t0 = cycles();
	while (r == 0 && cycles_to_ns(cycles() - t0) / 1000000 < limit_ms) {
		r = fabric_send(1, APP_PROTO_TEST, msg, sizeof msg, NULL, 0, 0);
		if (r == 0)
			sent++;
		if (r == 0 && sent % 50 == 0)
			r = fabric_flush(1, 1000000000ULL) == -EHOSTDOWN ? -EHOSTDOWN : 0;
	}
	uint64_t ms = cycles_to_ns(cycles() - t0) / 1000000;
	int dead = fabric_peer_dead(1);
	printf("peer-timeout: after %d messages, error %d after %lu ms; peer marked dead: %s\n", sent, r,
	       ms, dead ? "yes" : "no");
	result("error=%d ms=%lu sent=%d dead=%d", r, ms, sent, dead);
	return r == -EHOSTDOWN && dead && ms < limit_ms ? 0 : 1;
}

APP(peer_timeout, "peer-timeout",
    "node 1 leaves; node 0 must get -EHOSTDOWN in bounded time",
    peer_timeout_main, NULL, 2);
