/*
 * The membership handshake; see member.h.
 */
#include <string.h>

#include "net/fabric/member.h"

unsigned member_hello(struct member *m, uint64_t my_inc, uint64_t inc, uint64_t echo,
		      int says_bound, const uint8_t mac[6], int broadcast)
{
	unsigned r = 0;
	int knows;

	if (inc == 0)
		return MEMBER_INVALID;
	for (int i = 0; m->keep_past && i < MEMBER_PAST && inc != m->inc; i++)
		if (m->past[i] == inc)
			return MEMBER_PAST_INC;
	/* The bound incarnation speaks only from its bound MAC. */
	if (m->inc && inc == m->inc && memcmp(mac, m->mac, 6) != 0)
		return MEMBER_FOREIGN;
	if (inc != m->heard || memcmp(mac, m->heard_mac, 6) != 0) {
		/* A new claim: echo it back so that it can bind us. */
		m->heard = inc;
		memcpy(m->heard_mac, mac, 6);
		r |= MEMBER_REPLY;
	}
	if (echo == my_inc && inc != m->inc) {
		/* It heard our HELLO and we heard its: bind it. */
		if (m->inc) {
			r |= MEMBER_RESET;
			memmove(m->past + 1, m->past, sizeof m->past - sizeof m->past[0]);
			m->past[0] = m->inc;
		}
		m->inc = inc;
		memcpy(m->mac, mac, 6);
		m->epoch++;
		m->knows_me = 0;
		r |= MEMBER_BIND | MEMBER_REPLY;
	}
	/* A broadcast echoes nothing: it says nothing of whom its sender bound. */
	knows = says_bound && echo == my_inc && m->inc == inc;
	if (inc == m->inc && !broadcast)
		m->knows_me = knows;
	else if (inc == m->inc)
		knows = m->knows_me;
	/* Bound, and it does not know it yet: tell it. */
	if (broadcast || (inc == m->inc && !knows))
		r |= MEMBER_REPLY;
	return r;
}
