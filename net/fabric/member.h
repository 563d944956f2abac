/*
 * Membership: which incarnation of each peer this node talks to.
 *
 * A node is bound (its id, MAC and incarnation taken as one peer) only by
 * a completed handshake of HELLO frames (wire.h, struct fab_hello): its
 * HELLO was heard, and a unicast HELLO of its echoed the challenge this
 * node sent to that claim, so it heard ours and answered now.  Never by
 * the first frame that names it: until bound, every other frame from it
 * is dropped.
 *
 * The challenge is random and changes at every binding: only a HELLO
 * echoing the challenge in force binds, and once one has, the next
 * binding needs a new one.  A HELLO recorded from an earlier boot echoes
 * a challenge that was replaced when the boot after it was bound, so,
 * replayed however many reboots later, it binds nothing: no past boot is
 * bound again and none of its traffic (sealed under a pair key naming its
 * incarnation) is accepted again.  Nor can a replay unbind the real
 * incarnation, or stall its handshake: claims in between change neither
 * the challenge nor the binding, and the bound incarnation still counts
 * as knowing us when it echoes the challenge it answered.
 *
 * A HELLO from a bound node with another incarnation says it rebooted.
 * The new incarnation is only heard (challenged in our HELLOs) until it
 * answers: then both sides agree and member_hello() answers MEMBER_RESET,
 * upon which the caller discards the pair's channel (its frames,
 * sequence numbers and credit) and fails what was in flight to the old
 * incarnation.  A node declared dead comes back the same way.
 *
 * The epoch counts bindings (0: never bound): a send or a call made for
 * one epoch must fail rather than reach the next.
 *
 * With a cluster key (keep_past set), the last MEMBER_PAST incarnations
 * replaced are also refused outright, without a new challenge (a replay
 * of theirs costs nothing).  Without a key anyone can forge a HELLO that
 * answers a challenge it saw on the wire: the handshake then only keeps
 * honest nodes apart from each other's past boots.
 *
 * Pure logic: the caller (discovery.c) sends the HELLOs; host tests drive
 * it between simulated nodes.
 */
#ifndef NET_FABRIC_MEMBER_H
#define NET_FABRIC_MEMBER_H

#include <stdint.h>

#define MEMBER_PAST 8

struct member {
	uint64_t inc;		/* the bound incarnation; 0: not bound */
	uint8_t mac[6];		/* the bound MAC */
	uint64_t heard;		/* the incarnation its last HELLO carried */
	uint8_t heard_mac[6];
	uint64_t heard_nonce;	/* the challenge its last unicast HELLO carried; ours echo it */
	uint64_t chal;		/* our challenge; 0: none drawn yet */
	uint64_t bound_chal;	/* the one the bound incarnation answered */
	int knows_me;		/* its HELLO said it bound our incarnation (until a new binding) */
	uint32_t epoch;		/* bindings so far */
	uint64_t past[MEMBER_PAST];	/* incarnations bound before, most recent first */
	int keep_past;			/* refuse them (a cluster key is set) */
};

/* What member_hello asks of the caller (a mask). */
enum {
	MEMBER_BIND = 1,	/* bound (inc, mac): first time, or a new incarnation */
	MEMBER_RESET = 2,	/* with BIND: a new incarnation replaces a bound one */
	MEMBER_REPLY = 4,	/* send it our HELLO (unicast) */
	MEMBER_FOREIGN = 8,	/* the bound incarnation from another MAC: drop it */
	MEMBER_INVALID = 16,	/* no incarnation: drop it */
	MEMBER_PAST_INC = 32,	/* an incarnation bound before and replaced: drop it */
};

/*
 * A HELLO from this peer: its incarnation inc, the challenge it sends us
 * (nonce; 0 in a broadcast) and the echo of ours it carries, whether it
 * says it bound us (FAB_HELLO_BOUND), its MAC (checked by the caller to be
 * the frame's source), and whether it was broadcast.  fresh: a random
 * number, never 0, taken as the new challenge if this HELLO is a new
 * claim.
 */
unsigned member_hello(struct member *m, uint64_t inc, uint64_t nonce, uint64_t echo,
		      int says_bound, const uint8_t mac[6], int broadcast, uint64_t fresh);

/* What our unicast HELLO to the peer carries: our challenge, its echoed, BOUND. */
static inline uint64_t member_nonce(const struct member *m) { return m->chal; }
static inline uint64_t member_echo(const struct member *m) { return m->heard_nonce; }
static inline int member_says_bound(const struct member *m)
{
	return m->inc != 0 && m->inc == m->heard;
}

/* Bound and it bound us: the pair is up. */
static inline int member_up(const struct member *m) { return m->inc != 0 && m->knows_me; }

#endif
