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
 * A station's nonce as heard is not simply the last one heard: a frame
 * recorded at an earlier boot of a station that is present, replayed
 * after each of its real frames, would then make every other station echo
 * a stale nonce, and the present one would never count anyone live.  So
 * each station's nonces form a bounded set, most recently heard first,
 * all echoed; a frame that echoes this station's nonce (made now) proves
 * its own nonce, which then leads the set, and a replay neither displaces
 * it nor is counted for anything.
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

#include "kernel/counters.h"

#include "net/fabric/wire.h"

/* Nonces kept for one station: its proven one and the latest others heard. */
#define AUTOV_NONCES 4

struct autov_peer {
	uint8_t mac[6];
	int live;		/* a frame of its echoed our nonce */
	int nn;			/* nonces in nonce[] */
	/*
	 * Its nonces as heard (ours echo them all): nonce[0] the one a fresh
	 * frame of its carried, once live; then the others, the most
	 * recently heard first.
	 */
	uint64_t nonce[AUTOV_NONCES];
	uint64_t last;		/* when it was last heard */
	/* A member's answers to its search frames (autov_input): */
	uint64_t answered_nonce;	/* the nonce of the search last answered */
	uint64_t answered_at;
	uint64_t answer_gap;		/* before the same search is answered again */
};

/*
 * A member answers a station's search at once, the same search (the same
 * nonce) again after AUTOV_ANSWER_MIN_NS, then twice as long each time up
 * to AUTOV_ANSWER_MAX_NS: a station whose answer was lost still hears
 * soon, and a search frame replayed over and over (of a station that may
 * be absent) draws about one view a second from each member, not one per
 * replay.
 */
#define AUTOV_ANSWER_MIN_NS 50000000ULL		/* 50 ms: a searcher's own interval */
#define AUTOV_ANSWER_MAX_NS 1000000000ULL	/* 1 s */

/* The agreement's counters (kernel/counters.h), fields of struct autov. */
#define AUTOV_COUNTERS(X) \
	X(LINE, "views") \
	X(ONE, conflicts, "unlike ours") \
	X(ONE, stale_views, "stale") \
	X(ONE, nonces_dropped, "nonces dropped") \
	X(ONE, answers_held, "answers held back") \
	X(ONE, full, "stations not kept (table full)")

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
	AUTOV_COUNTERS(COUNTER_FIELD)
};

void autov_init(struct autov *s, const uint8_t me[6], int expect, uint64_t nonce, uint64_t now);

/*
 * A frame fab_parse_auto accepted (and, keyed, whose tag checked), heard
 * at now.  1 if this station, a member, should answer it (a station still
 * looking, not answered in the last answer_gap: see AUTOV_ANSWER_MIN_NS),
 * else 0.
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
