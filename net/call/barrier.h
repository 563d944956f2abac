/*
 * The cluster barrier, over the fabric's reliable channels (FP_BARRIER):
 * every node's arrival goes to node 0, whose release goes to all.
 */
#ifndef NET_CALL_BARRIER_H
#define NET_CALL_BARRIER_H

#include <stdint.h>

/*
 * All nodes reach this point (a message to node 0 and back).  0 or -errno:
 * -ETIMEDOUT, or -ECONNRESET if a node rebooted while this one waited (a
 * rebooted node starts its barriers from the first again).  Only node 0
 * releases, and only nodes of the cluster arrive, once each.
 */
int cluster_barrier(uint64_t timeout_ns);

/* Barrier messages dropped: a release not from node 0, an arrival out of turn. */
unsigned long cluster_barrier_dropped(void);

#endif
