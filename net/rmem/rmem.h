/*
 * Protected remote memory: the network access model of Thekkath, Levy and
 * Lazowska, "Efficient Support for Multicomputing on ATM Networks"
 * (remote-memory-atm paper), section 2.
 *
 * A node exports *segments*: contiguous regions of its memory with a name,
 * a size, and per-node rights (read, write, atomic).  Another node imports
 * a segment by (node, name) through a small name service and gets a
 * *descriptor* (a small integer naming an entry of this node's descriptor
 * table).  With it, it issues WRITE, READ, compare-and-swap and
 * fetch-and-add directly on the remote memory (section 2.1).  Every
 * incoming operation is checked at the receiver, in the fabric's receive
 * path, before one byte moves: segment valid, generation current (revoking
 * bumps it, so old descriptors and operations in flight are refused at
 * once), rights, offset and count in bounds, write inhibit.  A refused
 * operation is counted and reported to its issuer; it never touches memory
 * outside the segment.
 *
 * Operations travel on the fabric's reliable channel by default: nothing is
 * lost, order per node pair is kept.  RMEM_UNRELIABLE sends WRITE and READ
 * as raw frames instead: then they are "only as reliable as the network"
 * (paper 2.3), which is what the RPC transport of section 3.1.2 is built
 * to cope with.  Compare-and-swap and fetch-and-add are always reliable.
 *
 * Threads call the issuing half; nothing here may be called in interrupt
 * context except where marked (irq).
 */
#ifndef NET_RMEM_H
#define NET_RMEM_H

#include <stddef.h>
#include <stdint.h>

#include "kernel/counters.h"

#define RMEM_NAME_MAX 32		/* with the NUL */
#define RMEM_MAX_SEGS 4096		/* exported segments per node (MPI: 3 a window, 2 a region) */
#define RMEM_MAX_DESC 4096		/* imported descriptors per node */
/* READs and atomics outstanding share the fabric's calls (CALL_MAX per node). */

/* Rights on a segment (per importing node). */
enum {
	RMEM_R = 1,			/* READ */
	RMEM_W = 2,			/* WRITE */
	RMEM_A = 4,			/* compare-and-swap, fetch-and-add */
	RMEM_RW = RMEM_R | RMEM_W,
	RMEM_ALL = RMEM_R | RMEM_W | RMEM_A,
};

/* Operation flags. */
enum {
	RMEM_INTR = 1,			/* notify the destination segment on arrival */
	RMEM_SYNC = 2,			/* wait until the target has applied it (or refused) */
	RMEM_UNRELIABLE = 4,		/* raw frames: may be lost or reordered */
	/*
	 * A marked WRITE: the target remembers whether it refused any marked
	 * WRITE from this node since the last rmem_marked_take, so that a
	 * protocol that follows its writes with a message of its own, in
	 * order on the same channel, learns on receipt whether all of them
	 * landed (rmem_marked_refused): REQ's message notification announces
	 * no message whose body did not land (req.h, reqmsg_send).
	 */
	RMEM_MARKED = 8,
	/*
	 * Paper 2.1: "If the network cannot be immediately accessed, the
	 * co-processor buffers the data in an internal FIFO, delivering an
	 * exception should the FIFO overflow."  The frames queued to go
	 * (beyond the channel's window, up to the send queues' share of the
	 * packet pool, fabric_tx_bufs) are that FIFO.  Without this flag an
	 * asynchronous WRITE waits for the window instead of queueing, and
	 * for room in the share, which is what the exception's handler has to
	 * do with data it cannot drop; with it the WRITE is queued without
	 * waiting, or, the share full, returns -EAGAIN at once, nothing sent,
	 * the overflow counted (rmem_counters: fifo_overflows).  Not with
	 * RMEM_SYNC (which waits anyway) nor RMEM_UNRELIABLE (raw frames take
	 * no window).
	 */
	RMEM_NOWAIT = 16,
};

/*
 * Largest WRITE or READ carried by one frame between any two nodes.  A
 * pair whose link carries longer frames (the shared-memory link's large
 * slots) takes more in one: rmem_max_xfer(rd), up to RMEM_XFER_LIMIT.
 */
#define RMEM_MAX_XFER 1408
#define RMEM_XFER_LIMIT 64512

/*
 * The largest WRITE or READ through descriptor rd in one frame: what
 * the fabric's message to its node holds (fabric_mtu) less the header,
 * in whole KiB, at least RMEM_MAX_XFER; RMEM_MAX_XFER for a bad rd.
 * The block transfers go in pieces of this.
 */
uint32_t rmem_max_xfer(int rd);

/* --- segments (the exporting side) --------------------------------------- */

/*
 * Export [base, base+size) as segment `name`, granting `rights` to every
 * other node (0 = to none yet: grant them one by one).  Return the segment
 * number (>= 0), or -EEXIST (name taken), -ENOSPC (table full), -EINVAL.
 */
int seg_export(const char *name, void *base, size_t size, int rights);

/*
 * Export granting `rights` to node `node` alone, in one step (no moment
 * where the name is visible with other rights).  As seg_export.
 */
int seg_export_for(const char *name, void *base, size_t size, int node, int rights);

/* Grant node `node` (or every node for -1) `rights`; the generation stays. */
int seg_grant(int seg, int node, int rights);

/*
 * Revoke node `node`'s (or every node's, -1) access: its rights go to 0
 * and its generation moves on, so its descriptors and any of its
 * operations still in flight are refused from now on.
 */
int seg_revoke(int seg, int node);

/* Withdraw the segment: the name disappears and every access is refused. */
int seg_unexport(int seg);

/*
 * Write inhibit (paper 2.1, 3.1.1): while on, the segment is read-only:
 * incoming WRITEs and atomics are refused, READs still served.
 */
int seg_inhibit(int seg, int on);

/*
 * Interrupt control (paper 2.1): with notifications on, each WRITE carrying
 * RMEM_INTR (and each READ completing into this segment with RMEM_INTR)
 * calls fn(arg, seg, off, count) in the receive path (irq context: short,
 * no sleeping) and wakes threads in seg_wait().  Off by default.
 */
typedef void (*seg_notify_fn)(void *arg, int seg, uint32_t off, uint32_t count);
int seg_notify(int seg, int on, seg_notify_fn fn, void *arg);

/*
 * Sleep until a notification for seg arrives after *seen (a counter the
 * caller keeps, start at 0), or timeout_ns.  Return the new count, or
 * -ETIMEDOUT.
 */
long seg_wait(int seg, uint64_t *seen, uint64_t timeout_ns);

/*
 * The generation node's descriptors of seg must carry: with the segment
 * number, what a peer needs to address seg without the name service
 * (rmem_attach).  0 or -EBADF.
 */
int seg_ticket(int seg, int node, uint32_t *gen);

/* The address and size of a local segment (NULL if none). */
void *seg_base(int seg, size_t *size);

/*
 * Start a thread that calls fn(arg, seg) after every notification on seg:
 * the paper's "interrupt control" delivered to a handler thread.
 */
int seg_handler_thread(int seg, void (*fn)(void *arg, int seg), void *arg);

/* --- descriptors (the importing side) ------------------------------------ */

/*
 * Import segment `name` of node `node`: ask its name service, and on
 * success enter a descriptor in this node's table.  Return the descriptor
 * (>= 0), or -ENOENT (no such name), -EACCES (no rights for us),
 * -EHOSTDOWN/-ETIMEDOUT (node unreachable), -ENOSPC (table full).
 */
int rmem_import(int node, const char *name);

/*
 * As rmem_import, for a peer that may still be setting up: while the name
 * is not there yet (or grants us nothing yet), ask again, for at most
 * timeout_ns; then the last answer.
 */
int rmem_import_wait(int node, const char *name, uint64_t timeout_ns);

/*
 * A descriptor for segment seg of node, generation gen, as that node
 * handed them over (seg_ticket), without asking its name service.  The
 * target checks every operation as for any descriptor: a wrong or stale
 * ticket is refused there, never trusted here.  Descriptor or -EINVAL,
 * -ENOSPC.
 */
int rmem_attach(int node, int seg, uint32_t gen, size_t size, int rights);

/* Forget a descriptor. */
int rmem_release(int rd);

/*
 * Let descriptor rd issue operations needing `rights` beyond those its
 * segment granted this node at import: for a segment whose exporter
 * grants them later (seg_grant keeps the generation, so the descriptor
 * stays good).  Only the issuer's own check is widened; the target still
 * checks every operation against what it grants at that moment.  0 or
 * -EBADF, -EINVAL.
 */
int rmem_desc_expect(int rd, int rights);

/*
 * Size, rights and node of a descriptor; 0 or -EBADF.
 *
 * A descriptor names a segment of the incarnation of its node it was
 * imported from: once that node has rebooted and been bound again
 * (net/fabric/member.h), every operation on it fails with -ECONNRESET
 * and nothing reaches the new incarnation; import again.
 */
int rmem_desc_info(int rd, int *node, size_t *size, int *rights);

/*
 * WRITE rd, off, count, intr (paper 2.1): count bytes from src to offset
 * off of the remote segment.  Returns once the operation is handed to the
 * fabric (RMEM_SYNC: once the target applied or refused it).  Counts up to
 * RMEM_MAX_XFER.  0, or -EBADF, -EINVAL (bounds, count), -EACCES (no write
 * right in the descriptor), -EAGAIN with RMEM_NOWAIT (no room to the
 * target now: the paper's FIFO overflow exception), and with RMEM_SYNC the
 * target's refusal (-ESTALE revoked, -EACCES, -EROFS inhibited, -ERANGE
 * bounds, -ENOENT).
 */
int rmem_write(int rd, uint32_t off, const void *src, uint32_t count, int flags);

/*
 * Block write: any count, as a train of WRITEs.  Same results; with
 * RMEM_SYNC it returns once the target applied or refused every piece,
 * and a refusal of any piece (a revoke or write inhibit in mid-train) is
 * the result.  With RMEM_NOWAIT the train stops at the first piece that
 * finds no room (-EAGAIN): the pieces before it went.
 */
int rmem_write_block(int rd, uint32_t off, const void *src, size_t count, int flags);

/*
 * READ rs, soff, count, rd, doff, intr (paper 2.1): non-blocking; the data
 * is deposited into local segment `lseg` at `doff` when it returns.  Return
 * a read handle (>= 0) to poll or wait on, or a negative error.
 */
int rmem_read(int rs, uint32_t soff, uint32_t count, int lseg, uint32_t doff, int flags);

/* 1 if read handle h completed, 0 if not yet; never blocks. */
int rmem_read_poll(int h);

/*
 * Block until read h completes (or timeout_ns); free the handle.  Return
 * 0, the target's refusal, -ESTALE also when lseg was withdrawn before
 * the data came (nothing is written then, even if its slot holds a new
 * segment), -ETIMEDOUT (the handle stays valid), -EBADF.
 */
int rmem_read_wait(int h, uint64_t timeout_ns);

/*
 * Compare-and-swap on the 8-byte word at off: if it holds expect, store
 * desired.  *old gets the value found.  The word's address at the target
 * must be 8-aligned (the segment may start anywhere: the target decides,
 * -EINVAL if not).  Always reliable; blocks until the answer.  0 or a
 * negative error as for rmem_write.
 */
int rmem_cas(int rd, uint32_t off, uint64_t expect, uint64_t desired, uint64_t *old);

/*
 * A compare-and-swap whose outcome is always known.  A CAS whose answer
 * does not come in time (-ETIMEDOUT) may still have landed, or land
 * later: a claim then leaks, or its owner thinks it lost.  This one then
 * asks again on the same channel, which keeps order, with a CAS of
 * desired for desired (it changes nothing): its answer shows the word
 * after the first CAS was served, and the word holds desired only if the
 * first CAS put it there, which holds when desired is a value only this
 * caller writes (a token).  0 with *old as rmem_cas would give (expect if
 * it landed), or -EHOSTDOWN, a refusal, or -ETIMEDOUT after `tries`
 * unanswered asks.  flags: RMEM_INTR notifies the target of each ask.
 */
int rmem_cas_settled(int rd, uint32_t off, uint64_t expect, uint64_t desired, uint64_t *old,
		     int tries, int flags);

/* Fetch-and-add on the 8-byte word at off (aligned as for rmem_cas); *old gets the previous value. */
int rmem_fadd(int rd, uint32_t off, uint64_t add, uint64_t *old);

/*
 * Start a compare-and-swap (or a fetch-and-add) and return at once with a
 * handle (>= 0) for rmem_atomic_wait, which blocks until the answer (or
 * timeout_ns; the handle stays valid after -ETIMEDOUT) and gives the value
 * found.
 */
int rmem_cas_start(int rd, uint32_t off, uint64_t expect, uint64_t desired, int flags);
int rmem_fadd_start(int rd, uint32_t off, uint64_t add, int flags);
int rmem_atomic_wait(int h, uint64_t *old, uint64_t timeout_ns);

/*
 * A block of compare-and-swaps in one message: the word at off + 8i
 * becomes pairs[2i + 1] if it holds pairs[2i], for i < words, each word's
 * swap atomic as rmem_cas's (the block as a whole is not).  The words
 * found land in local segment lseg at doff, as a READ's data; the handle
 * (>= 0) is a READ's: rmem_read_poll, rmem_read_wait.  words at most
 * rmem_cas_block_max(rd) (a message of pairs fills the pair's frame:
 * 88 words in a 1500-byte frame, 4032 in a 64 KiB one).  Always reliable;
 * the first word's address at the target 8-aligned, as for rmem_cas.
 */
int rmem_cas_block_start(int rd, uint32_t off, const uint64_t *pairs, uint32_t words, int lseg, uint32_t doff);
uint32_t rmem_cas_block_max(int rd);

/* The same, with RMEM_INTR: the target segment is notified once applied. */
int rmem_cas_flags(int rd, uint32_t off, uint64_t expect, uint64_t desired, uint64_t *old, int flags);
int rmem_fadd_flags(int rd, uint32_t off, uint64_t add, uint64_t *old, int flags);

/*
 * Wait until every operation issued on rd so far has reached its target
 * (reliable ones), then return and clear the first error the target
 * reported for rd since the last call (0 if none).
 */
int rmem_sync(int rd, uint64_t timeout_ns);

/* The first refusal the target reported for rd so far, cleared (0 if none), without waiting. */
int rmem_take_error(int rd);

/*
 * Receive side (interrupts off): "did the writes land?"  Whether a
 * marked WRITE (RMEM_MARKED) from node src was refused since the last
 * rmem_marked_take(src); a new incarnation of src starts clear.  The
 * writes and the message that asks travel in order on one channel, with
 * no other marked writes from src between them (REQ's reqmsg_send): the
 * message asks on receipt and takes the verdict once it is done.
 */
int rmem_marked_refused(int src);
void rmem_marked_take(int src);

/* --- setup and accounting ------------------------------------------------ */

/* The counters (kernel/counters.h): each field with the label it is printed with. */
#define RMEM_COUNTERS(X) \
	/* target side: operations applied and refused, by reason */ \
	X(LINE, "applied") \
	X(ONE, applied_write, "write") \
	X(ONE, applied_read, "read") \
	X(ONE, applied_atomic, "atomic") \
	X(ONE, applied_cas_block, "of them in blocks")	/* RM_CAS_BLOCK messages (their words count as atomics) */ \
	X(PART, "; refused") \
	X(ONE, refused_bad_seg, "bad_segment") \
	X(ONE, refused_stale, "stale") \
	X(ONE, refused_rights, "rights") \
	X(ONE, refused_bounds, "bounds") \
	X(ONE, refused_inhibit, "inhibited") \
	X(ONE, refused_align, "misaligned") \
	X(ONE, refused_malformed, "malformed") \
	X(LINE, "refused") \
	X(ONE, refused_unreliable, "raw atomics")	/* atomics that came as raw frames */ \
	/* issuer side */ \
	X(ONE, errors_reported, "errors reported back")	/* refusals that came back */ \
	X(ONE, responses_unmatched, "unmatched answers")	/* READ/atomic answers nobody asked for */ \
	/* a SYNC write's piece answered again (a doubled raw frame) */ \
	X(ONE, answers_duplicate, "duplicate answers") \
	X(ONE, notifications, "notifications") \
	X(ONE, answers_lost, "answers lost")	/* answers the fabric refused to queue (target side) */ \
	/* RMEM_NOWAIT writes that found no room (paper 2.1's exception) */ \
	X(ONE, fifo_overflows, "fifo overflows")

struct rmem_counters {
	RMEM_COUNTERS(COUNTER_FIELD)
};

void rmem_counters(struct rmem_counters *out);

#ifdef NOW_TEST_HOOKS
/*
 * For protection tests only: overwrite fields of one of this node's own
 * descriptors (negative values leave a field alone), so that an
 * operation can carry a forged segment, a stale generation, a larger size
 * or more rights than were granted.  The target must refuse them all.
 */
int rmem_test_forge(int rd, int seg, int64_t gen, int64_t size, int rights);
#endif
void rmem_print_stats(void);

#endif
