/*
 * Remote memory's shared state, for its own files only: segments.c (the
 * exporting side), serve.c (the receive half) and rmem.c (descriptors and
 * the issuing half).  Touched with interrupts off.
 */
#ifndef NET_RMEM_INTERNAL_H
#define NET_RMEM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "kernel/sync.h"
#include "net/rmem/rmem.h"
#include "net/rmem/segtab.h"

/* What the kernel keeps beside each slot of the segment table. */
struct segnote {
	int notify;
	seg_notify_fn fn;
	void *fn_arg;
	volatile uint64_t arrivals;
	struct waitq wq;
};

/* The kinds of call (net/fabric/call.h) the issuing half makes. */
enum { RK_READ = 1, RK_ATOMIC, RK_STATUS };

/* A READ's record, in its call: where the answer's data goes. */
struct read_dest {
	int lseg;
	uint32_t doff, count;
	int flags;
};

extern struct segtab rmem_segtab;
extern struct segnote rmem_notes[RMEM_MAX_SEGS];
extern struct rmem_counters rmem_ctr;
extern int rmem_ready;

/* The slot of a local segment in use, or NULL. */
struct segslot *rmem_seg(int seg);

/* An arrival in seg: count it, call the notify function, wake seg_wait.  (irq) */
void rmem_arrived(int seg, uint32_t off, uint32_t count);

/* The name service's resolver for segments (segments.c).  (irq) */
int rmem_seg_resolve(const char *name, int asker, void *answer, size_t *len);

#endif
