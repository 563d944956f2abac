/*
 * The membership handshake; see member.h.
 */
#include <string.h>

#include "net/fabric/member.h"

unsigned member_hello(struct member *m, uint64_t inc, uint64_t nonce, uint64_t echo,
		      int says_bound, const uint8_t mac[6], int broadcast, uint64_t fresh)
{
	unsigned r = 0;
	int answers;

	if (inc == 0)
		return MEMBER_INVALID;
	for (int i = 0; m->keep_past && i < MEMBER_PAST && inc != m->inc; i++)
		if (m->past[i] == inc)
			return MEMBER_PAST_INC;
	/* The bound incarnation speaks only from its bound MAC. */
	if (m->inc && inc == m->inc && memcmp(mac, m->mac, 6) != 0)
		return MEMBER_FOREIGN;
	if (inc != m->heard || memcmp(mac, m->heard_mac, 6) != 0) {
		/* A new claim: challenge it (with the challenge in force). */
		m->heard = inc;
		memcpy(m->heard_mac, mac, 6);
		m->heard_nonce = 0;
		r |= MEMBER_REPLY;
	}
	if (!m->chal)
		m->chal = fresh ? fresh : 1;
	if (!broadcast && nonce != m->heard_nonce) {
		/* Its challenge to us: our next HELLO answers it. */
		m->heard_nonce = nonce;
		r |= MEMBER_REPLY;
	}
	/* Only a unicast HELLO answers a challenge (a broadcast carries none). */
	answers = !broadcast && (echo == m->chal || (inc == m->inc && echo == m->bound_chal));
	if (answers && inc != m->inc) {
		/* It heard our challenge and answered it: bind it. */
		if (m->inc) {
			r |= MEMBER_RESET;
			memmove(m->past + 1, m->past, sizeof m->past - sizeof m->past[0]);
			m->past[0] = m->inc;
		}
		m->inc = inc;
		memcpy(m->mac, mac, 6);
		m->knows_me = 0;
		m->epoch++;
		/*
		 * A new challenge from now on: nothing that answered one of
		 * this binding or before binds anything again.
		 */
		m->bound_chal = m->chal;
		m->chal = fresh && fresh != m->bound_chal ? fresh : m->bound_chal + 1;
		r |= MEMBER_BIND | MEMBER_REPLY;
	}
	/*
	 * A broadcast says nothing of whom its sender bound.  Once the bound
	 * incarnation said it bound ours, it does for as long as both last
	 * (it forgets us only by rebooting, a new binding): a HELLO of its
	 * from before that, replayed, takes nothing down.
	 */
	if (inc == m->inc && !broadcast && says_bound && answers)
		m->knows_me = 1;
	/*
	 * Answer a broadcast; a claim not bound yet (its HELLO may be the
	 * answer to ours it is waiting for, ours to it may have been lost);
	 * and a bound node that does not know it yet.
	 */
	if (broadcast || inc != m->inc || !m->knows_me)
		r |= MEMBER_REPLY;
	return r;
}
