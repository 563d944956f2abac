/*
 * Membership: which incarnation of each peer this node talks to.
 *
 * A node is bound (its id, MAC and incarnation taken as one peer) only by
 * a completed handshake of HELLO frames (wire.h, struct fab_hello): its
 * HELLO was heard, and a HELLO of its echoed this node's own incarnation,
 * so it heard ours.  Never by the first frame that names it: until bound,
 * every other frame from it is dropped.
 *
 * A HELLO from a bound node with another incarnation says it rebooted.
 * The new incarnation is only heard (echoed back in our HELLOs) until it
 * echoes ours in turn: then both sides agree and member_hello() answers
 * MEMBER_RESET, upon which the caller discards the pair's channel (its
 * frames, sequence numbers and credit) and fails what was in flight to the
 * old incarnation.  A node declared dead comes back the same way.
 *
 * The epoch counts bindings (0: never bound): a send or a call made for
 * one epoch must fail rather than reach the next.
 *
 * With a cluster key (keep_past set), an incarnation once replaced is
 * never bound again (the last MEMBER_PAST of them are kept): a recorded
 * HELLO of an earlier boot,
 * replayed, would otherwise make this node reset the pair's channel to a
 * node that no longer exists.  With a cluster key nobody else can make a
 * HELLO, and a replayed one of the current incarnation changes nothing
 * the next real HELLO does not set right, so replays gain nothing.  (A
 * HELLO of an incarnation that was never bound and rebooted before it was,
 * replayed, resets the pair once; the real node's next HELLO rebinds it.)
 * Without a key anyone can forge a HELLO of a new incarnation anyway, and
 * refusing the real one afterwards would make such a forgery's partition
 * permanent: the real node's next HELLO binds it again instead.
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
	uint64_t heard;		/* the incarnation its last HELLO carried; ours echo it */
	uint8_t heard_mac[6];
	int knows_me;		/* its HELLO said it bound our incarnation */
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
 * A HELLO from this peer: its incarnation inc, the echo it carries,
 * whether it says it bound us (FAB_HELLO_BOUND), its MAC (checked by the
 * caller to be the frame's source), and whether it was broadcast.
 */
unsigned member_hello(struct member *m, uint64_t my_inc, uint64_t inc, uint64_t echo,
		      int says_bound, const uint8_t mac[6], int broadcast);

/* What our unicast HELLO to the peer echoes, and whether it says BOUND. */
static inline uint64_t member_echo(const struct member *m) { return m->heard; }
static inline int member_says_bound(const struct member *m)
{
	return m->inc != 0 && m->inc == m->heard;
}

/* Bound and it bound us: the pair is up. */
static inline int member_up(const struct member *m) { return m->inc != 0 && m->knows_me; }

#endif
