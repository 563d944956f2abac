/*
 * The segment table of remote memory (paper 2.1: "Information about
 * segments is maintained in a simple table in the kernel; the segment
 * descriptor name is used as a table index"): export, grant, revoke,
 * write inhibit, and the view of a segment an incoming operation is
 * checked against.  Pure logic on a caller-supplied table; rmem.c keeps
 * the node's table and calls these with interrupts off.
 */
#ifndef NET_RMEM_SEG_H
#define NET_RMEM_SEG_H

#include <stddef.h>
#include <stdint.h>

#include "net/rmem/proto.h"

#define SEGTAB_SLOTS 4096
#define SEGTAB_NODES 64
#define SEGTAB_NAME 32
#define SEGTAB_HASH 1024		/* name buckets: a power of two */

struct segslot {
	int used;
	char name[SEGTAB_NAME];
	uint8_t *base;
	uint64_t size;
	uint8_t rights[SEGTAB_NODES];	/* per importing node */
	uint32_t gen[SEGTAB_NODES];	/* per importing node */
	int inhibit;
	uint32_t epoch;			/* moves on at each export of the slot */
};

/*
 * Export, unexport and find by name are O(1) in the table's size: a
 * bitmap of used slots gives the lowest free one (a word at a time), and
 * names hang in hash chains.  Walking 4096 slots of 400 bytes took 80-180 us
 * under QEMU's TCG, on every Madeleine message that exports its receive
 * buffer (a READY waited on it).
 */
struct segtab {
	struct segslot slot[SEGTAB_SLOTS];
	int self;			/* this node: never granted anything */
	uint64_t usedmap[SEGTAB_SLOTS / 64];
	uint16_t head[SEGTAB_HASH];	/* slot + 1 of the chain's first, 0: empty */
	uint16_t next[SEGTAB_SLOTS];	/* slot + 1 of the next in its chain */
};

void segtab_init(struct segtab *t, int self);

/*
 * Export [base, base+size) as `name` with `rights` for every other node.
 * Return the slot, -EEXIST, -ENOSPC or -EINVAL.  A reused slot keeps
 * counting generations, so descriptors of its previous segment stay stale,
 * and its epoch, so that this node's own records of the previous segment
 * (a pending READ's destination) can tell it from the new one.
 */
int segtab_export(struct segtab *t, const char *name, void *base, uint64_t size, int rights);

/* Set node's (or, for -1, every other node's) rights.  0, -EBADF, -EINVAL. */
int segtab_grant(struct segtab *t, int seg, int node, int rights);

/* Take node's (or everyone's, -1) rights and move its generation on. */
int segtab_revoke(struct segtab *t, int seg, int node);

/* Remove the segment; every generation moves on. */
int segtab_unexport(struct segtab *t, int seg);

int segtab_inhibit(struct segtab *t, int seg, int on);

/* The slot named name, or -1. */
int segtab_find(const struct segtab *t, const char *name);

/* What an operation from node src is checked against (rmem_check). */
struct rmem_segview segtab_view(const struct segtab *t, int seg, int src);

#endif
