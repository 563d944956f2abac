/*
 * Remote memory's shared state, for its own files only: segments.c (the
 * exporting side, and the counters), serve.c (the receive half) and
 * rmem.c (descriptors and the issuing half, answers included).  Touched
 * with interrupts off.
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
	volatile int kick;		/* set by each arrival: what seg_wait polls the NIC for */
	struct waitq wq;
};

/* The kinds of call (net/call/call.h) the issuing half makes. */
enum { RK_READ = 1, RK_ATOMIC, RK_STATUS };

/*
 * A READ's record, in its call: where the answer's data goes.  The epoch
 * names the export of lseg the READ was issued into: if lseg is withdrawn
 * and its slot exported again meanwhile, the answer lands nowhere.
 */
struct read_dest {
	int lseg;
	uint32_t epoch;
	uint32_t doff, count;
	int flags;
};

/*
 * A SYNC write's record, in its call: every piece of the train carries the
 * call's tag and asks for an answer; the call is done when each of its
 * pieces has answered (pending counts down, seen marks them by offset: an
 * answer to a piece already answered is a duplicate), with the first
 * refusal among them.
 */
#define RMEM_TRAIN_MAX 128		/* pieces a call waits for at once */

struct write_train {
	uint32_t pending;
	int16_t first;			/* enum rmem_status */
	uint16_t pieces;		/* at most RMEM_TRAIN_MAX */
	uint32_t off0;			/* the first piece's offset */
	uint32_t piece;			/* bytes of every piece but the last (rmem_max_xfer) */
	uint64_t seen[RMEM_TRAIN_MAX / 64];
};

extern struct segtab rmem_segtab;
extern struct segnote rmem_notes[RMEM_MAX_SEGS];
extern struct rmem_counters rmem_ctr;
extern int rmem_ready;

/* rmem.c, the issuing half: an answer (or a sink's refusal) from src, from serve.c.  (irq) */
struct rmem_msg;
void rmem_complete(int src, const struct rmem_msg *m, const uint8_t *data);

/* The slot of a local segment in use, or NULL. */
struct segslot *rmem_seg(int seg);

/* An arrival in seg: count it, call the notify function, wake seg_wait.  (irq) */
void rmem_arrived(int seg, uint32_t off, uint32_t count);

/*
 * One message from node src, as the fabric's handlers hand it over (raw:
 * it came as a raw frame, not on the reliable channel).  -EBUSY: offer it
 * again later.  Host tests drive it directly.  (irq)
 */
int rmem_receive(int src, const uint8_t *payload, size_t len, int raw);

/* The name service's resolver for segments (segments.c).  (irq) */
int rmem_seg_resolve(const char *name, int asker, void *answer, size_t *len);

#endif
