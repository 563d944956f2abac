/*
 * node=auto's agreement, as pure logic (auto.c runs it on the NIC; host
 * tests run it between simulated stations and a station that replays).
 *
 * Freshness: every station draws a random nonce at boot and puts it in
 * its AUTO frames, with the nonces it heard from the others (the echo
 * list).  A station counts another as live only once a frame of the
 * other's echoes its own nonce: the other heard it in this round, so the
 * frame was made now, not recorded at an earlier boot.  Only live stations
 * are counted and ordered, and a view is taken (or its lack of this
 * station reported) only from a frame that echoes this station's nonce:
 * a replayed search frame of an absent machine, or a replayed old view,
 * changes nothing.
 *
 *  - nodes=N: once N stations are live (this one included) and none has
 *    become live for confirm_ns, the view is the live MACs, ascending.
 *    More than N live is an error that names them.
 *  - nodes=auto: the live station with the lowest MAC decides once none
 *    has become live for settle_ns; the others take its view.
 */
#ifndef NET_FABRIC_AUTOVIEW_H
#define NET_FABRIC_AUTOVIEW_H

#include <stdint.h>

#include "net/fabric/wire.h"

struct autov_peer {
	uint8_t mac[6];
	int live;		/* a frame of its echoed our nonce */
	uint64_t nonce;		/* its nonce, as last heard (ours echo it) */
	uint64_t last;		/* when it was last heard */
};

struct autov {
	uint8_t me[6];
	uint64_t nonce;		/* ours, never 0 */
	int expect;		/* nodes=N, or 0 */
	int n;			/* stations heard, not this one */
	struct autov_peer p[FAB_MAX_NODES];
	uint64_t last_new;	/* when a station last became live */
	int too_many;		/* more live stations than expect (or than FAB_MAX_NODES) */
	int nview;
	uint8_t view[FAB_MAX_NODES][6];
	int excluded;		/* a fresh view without this station */
	uint8_t excluded_by[6];
	/* counters */
	unsigned long stale_views, conflicts, full;
};

void autov_init(struct autov *s, const uint8_t me[6], int expect, uint64_t nonce, uint64_t now);

/*
 * A frame fab_parse_auto accepted (and, keyed, whose tag checked), heard
 * at now.  1 if this station, a member, should answer it (a station still
 * looking: the caller limits how often), else 0.
 */
int autov_input(struct autov *s, const struct fab_auto *a, uint64_t now);

/* Stations live, this one included. */
int autov_live(const struct autov *s);

/*
 * Decide: 1 with the view set, 0 not yet, -E2BIG (more live stations than
 * nodes=N), -EEXIST (a fresh view without this station).
 */
int autov_decide(struct autov *s, uint64_t now, uint64_t settle_ns, uint64_t confirm_ns);

/* This station's AUTO payload: searching, or its view; the echo list. */
void autov_payload(const struct autov *s, uint64_t inc, struct fab_auto *a);

#endif
