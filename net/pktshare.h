/*
 * The packet pool's shares (the pool: drivers/pktbuf.h).  A consumer that
 * may hold buffers for long (lwIP keeps received frames as pbufs until the
 * app reads them, out-of-order segments until the gap fills; the fabric
 * its frames not yet acknowledged) registers itself by name with its
 * share, is charged for every buffer it holds and holds at most its share;
 * past it, it drops what it is offered.  The rest of the pool stays for
 * the NIC receive rings, which take from it without a share: a consumer at
 * its share never stops a ring's refill.
 *
 * A charged buffer counts against its consumer until its last reference
 * goes: the pool keeps that count (pkt_held_bufs) and takes the buffer off
 * it in pkt_put; the rest (the names, the shares, the refusals) is here.
 *
 * All functions may be called from interrupt handlers.
 */
#ifndef NET_PKTSHARE_H
#define NET_PKTSHARE_H

#include "drivers/pktbuf.h"

/*
 * The consumer called name (a string that lives as long as the kernel),
 * added with a share of n buffers the first time, its share set to n
 * after: its number, or -EINVAL (n outside 0..the pool), -ENOSPC
 * (PKT_MAX_CONSUMERS taken).  pkt_consumer_find: the number of the one
 * called name, or -ENOENT.
 */
int pkt_consumer(const char *name, int n);
int pkt_consumer_find(const char *name);

/*
 * Charge pb (held by the caller, not charged yet) to consumer c until its
 * last reference goes.  0, or -ENOBUFS (c holds its share: pb is left
 * as it was, the caller drops it), -EINVAL (no such consumer, or pb is
 * charged already).
 */
int pkt_charge(struct pktbuf *pb, int c);

/* Has c room for one more buffer?  1, or 0 (counted as a refusal; c unknown: 0). */
int pkt_share_left(int c);

/* Set c's share (buffers it may hold at once, 0..the pool).  0 or -EINVAL. */
int pkt_share_set(int c, int n);

/* Buffers c holds now, its share, and the times it was refused one. */
int pkt_held(int c);
int pkt_share(int c);
unsigned long pkt_refused(int c);

#endif
