/*
 * For the packet pools alone (pktbuf.c, and the host tests' stand-in):
 * the shares' side of making the pool, of the last reference going,
 * and of a buffer asked for on a consumer's account.
 */
#ifndef DRIVERS_PKTSHARE_H
#define DRIVERS_PKTSHARE_H

#include "drivers/pktbuf.h"

/* The pool has pool_bufs buffers: no share may be larger. */
void pkt_shares_init(int pool_bufs);

/* pb's last reference went: what its consumer holds goes down by it.  (irq off) */
void pkt_uncharge(struct pktbuf *pb);

/* Has c room for one more buffer?  1, or 0 (counted as a refusal; c unknown: 0). */
int pkt_share_left(int c);

#endif
