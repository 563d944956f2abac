/*
 * Remote enqueue (REQ): the kernel's queues, the REQ operation over the
 * fabric, and the dequeue with the do-not-preempt-me protocol (remote-
 * enqueue paper, "Remote Enqueue" and below; queue logic in queue.h).
 *
 * A node creates queues and exports them by name; another node imports a
 * queue by (node, name) and gets a handle naming the queue's first buffer
 * address (the paper's vaddr/paddr: the queue *is* the address of its first
 * buffer) and a generation.  REQ(handle, word) returns as soon as the fabric
 * has the request; the receiving node performs the paper's atomic sequence
 * in its receive path, serialized with every other enqueue.  While a queue
 * is full and waiting for space the receiver refuses to take REQs for it:
 * the fabric holds them and, once the window fills, stops the sender:
 * back-pressure, nothing dropped.  A REQ for a queue that does not exist
 * or was destroyed is refused and reported to the sender; nothing is
 * written.
 */
#ifndef NET_REQ_H
#define NET_REQ_H

#include <stddef.h>
#include <stdint.h>

#include "kernel/counters.h"

#define REQ_MAX_QUEUES 32
#define REQ_MAX_REMOTE 64
#define REQ_NAME_MAX 32

/*
 * Create a queue whose first buffer is `bytes` long (a power of two, 32
 * bytes to 64 KiB), allocated here.  Return the queue id, or -EINVAL,
 * -ENOMEM, -ENOSPC.
 */
int req_create(size_t bytes);

/*
 * Create a queue on a buffer the caller supplies, which must be a power
 * of two in size and aligned to its size (paper: "The starting address of
 * each buffer should be an integer multiple of the buffer size").  The
 * caller keeps ownership of buf.  Queue id or -EINVAL.
 */
int req_create_at(void *buf, size_t bytes);

/* Destroy: later and in-flight REQs for it are refused.  0 or -EBADF. */
int req_destroy(int qid);

/*
 * Rights, as for segments (net/rmem/rmem.h; qtab.h says why): a queue
 * takes REQs only from nodes granted the right, each carrying the
 * generation of its own right.  A new queue is granted to nobody.
 *
 * req_export: name the queue and grant every other node.  req_export_for:
 * name it and grant node `node` alone.  0, -EEXIST, -EBADF, -EINVAL.
 */
int req_export(int qid, const char *name);
int req_export_for(int qid, const char *name, int node);

/* Grant node (or every other node, -1) the right; its generation stays. */
int req_grant(int qid, int node);

/*
 * Revoke node's (or every node's, -1) right and move its generation on:
 * its handles and its REQs still in flight are refused from now on
 * (-ESTALE at the sender); it must import again once granted again.
 */
int req_revoke(int qid, int node);

/* The generation node's handles of qid must carry (for req_handle). 0, -EBADF. */
int req_ticket(int qid, int node, uint32_t *gen);

/* The address of a queue's first buffer (what names it on the wire). */
uintptr_t req_address(int qid);

/*
 * Import node's queue `name`: a handle (>= 0), or -ENOENT, -EACCES (not
 * granted to us), -EINVAL, -EHOSTDOWN, -ETIMEDOUT, -ENOSPC.
 */
int req_import(int node, const char *name);

/*
 * A handle for the queue at `addr` on `node` with generation `gen`,
 * without asking the node (the paper's REQ(vaddr, data) by address).
 * The receiver checks it like any other.  Handle or -ENOSPC.
 */
int req_handle(int node, uintptr_t addr, uint32_t gen);

/*
 * REQ(queue, word): hand the request to the fabric and return.  0, or
 * -EBADF, -EHOSTDOWN, -ECONNRESET (the queue's node rebooted since the
 * handle was made: import again).  With sync, wait for the receiver's verdict: 0,
 * -ENOENT (no such queue / destroyed), -ESTALE (our right was revoked),
 * -EACCES (never granted), -ENOSPC (the queue is closed for lack of
 * memory), -EIO (the queue's buffer is corrupt).  Without, a refusal comes
 * back to req_sync.
 */
int req_enqueue(int rq, uint32_t word, int sync);

/*
 * Wait until every REQ sent on rq so far has been performed or refused,
 * and return (and clear) the first refusal since the last call.
 */
int req_sync(int rq, uint64_t timeout_ns);

/* The first refusal rq's node reported so far, cleared (0 if none), without waiting. */
int req_take_error(int rq);

/*
 * Dequeue one word (the paper's dequeue: do-not-preempt-me set, the
 * queue's lock held, space asked for if an overflow struck meanwhile).
 * Return 1 with *word, 0 if empty, -EBADF.
 */
int req_dequeue(int qid, uint32_t *word);

/*
 * As req_dequeue, and *ticket gets this dequeue's number in the queue's
 * order (0, 1, 2, ...), taken under the queue's lock: with several
 * dequeuers, sorting by ticket gives the order the queue gave out words.
 */
int req_dequeue_ticket(int qid, uint32_t *word, uint64_t *ticket);

/*
 * Dequeue up to max words in one critical section (the lock and the
 * do-not-preempt-me bit taken once).  Return how many (0 if empty) or
 * -EBADF; *first_ticket (if not NULL) is the ticket of words[0].
 */
int req_dequeue_many(int qid, uint32_t *words, int max, uint64_t *first_ticket);

/*
 * Call fn(arg, qid, word) in the receive path after each enqueue into qid
 * (irq context: short, no sleeping), or stop with fn NULL.
 */
int req_notify(int qid, void (*fn)(void *arg, int qid, uint32_t word), void *arg);

/* Block until the queue is not empty (or timeout_ns).  1, 0 on timeout, -EBADF. */
int req_wait(int qid, uint64_t timeout_ns);

struct req_stats {
	uint64_t enqueued, dequeued, overflows, deferred_overflows, buffers_linked, refused_busy;
	uint64_t capped_overflows;	/* overflows that found the copies at their cap */
	size_t chain_bytes;		/* bytes the overflow copies hold now */
};

/*
 * Cap the bytes queue qid's overflow copies may hold (REQ_CHAIN_CAP by
 * default): past it the receive path allocates nothing and holds REQs
 * back (their senders' windows stop them) until dequeues free a copy.
 * 0 or -EBADF.
 */
int req_set_cap(int qid, size_t bytes);

/* Counters of one queue. */
int req_queue_stats(int qid, struct req_stats *out);

/* The counters (kernel/counters.h): each field with the label it is printed with. */
#define REQ_COUNTERS(X) \
	X(LINE, "") \
	X(ONE, rx_req, "received") \
	/* refused, by reason */ \
	X(ONE, rx_refused_noqueue, "refused (no such queue)") \
	X(ONE, rx_denied, "(no right)") \
	X(ONE, rx_stale, "(stale)") \
	X(ONE, rx_nospace, "(no space)") \
	X(ONE, rx_corrupt, "(header corrupt)") \
	X(ONE, rx_nobody, "(body refused)")	/* notifications whose body was refused */ \
	X(ONE, rx_busy, "held back (queue full)") \
	X(ONE, rx_malformed, "malformed") \
	X(ONE, nomem, "out of memory") \
	X(ONE, capped, "at the overflow cap")	/* overflows that found a queue's copies at their cap */ \
	X(ONE, errors_reported, "errors reported back")

struct req_counters {
	REQ_COUNTERS(COUNTER_FIELD)
};

void req_counters(struct req_counters *out);

#ifdef NOW_TEST_HOOKS
/*
 * For tests only: call fn(q, step) between the steps of each dequeue of
 * qid, in the dequeuing thread with the queue's lock held (queue.h,
 * step_hook); fn may sleep.  0 or -EBADF.
 */
struct req_q;
int req_test_dequeue_hook(int qid, void (*fn)(struct req_q *q, int step));


/* For tests only: fn runs between a body and its notification (req_enqueue_body; may sleep). */
void req_test_body_hook(void (*fn)(void));
#endif
void req_print_stats(void);

/*
 * Message-arrival notification (paper, Introduction): write the message
 * body with a remote WRITE into the receiver's segment (rmem descriptor
 * rd, offset off), then REQ its offset into the receiver's notification
 * queue rq, both one way, in order on one channel.  If the receiver
 * refuses the body, it refuses the notification too: nothing is
 * announced, the body's refusal reaches rd's sink (rmem_sync) and the
 * notification's, -ENODATA, rq's (req_sync).  0, -EXDEV (rd and rq are
 * on different nodes), -EBADF, or an error sending.
 */
int reqmsg_send(int rd, uint32_t off, const void *body, uint32_t len, int rq);

/*
 * reqmsg_send's parts, for a body of several WRITEs (Madeleine's message
 * stream): reqmsg_begin takes this node's turn to rq's node (threads
 * sending bodies to one node take turns, so that no other body comes
 * between a body and its notification), the body goes as rmem_write(...,
 * RMEM_MARKED) to a segment of that node, req_enqueue_body announces it with
 * word (refused, -ENODATA in rq's sink, if any WRITE of the body was), and
 * reqmsg_end gives the turn back.  begin: 0 or -EBADF; enqueue_body: as
 * req_enqueue without sync, but it never waits: -EAGAIN when the frames
 * queued to go have no room for it now (paper: the enqueue "can return
 * control ... as soon as the data to be enqueued have been entered in the
 * sender's network interface").
 */
int reqmsg_begin(int rq);
int req_enqueue_body(int rq, uint32_t word);
void reqmsg_end(int rq);

/*
 * Poll the notification queue: if a message arrived, return 1 with its
 * offset in *off.  0 if none.
 */
int reqmsg_poll(int qid, uint32_t *off);

#endif
