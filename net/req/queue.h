/*
 * Remote-enqueue queues: the data structure of Markatos, Katevenis and
 * Vatsolaki, "The Remote Enqueue Operation on Networks of Workstations"
 * (remote-enqueue paper), section "Remote Enqueue" and below.  Pure logic:
 * the kernel (net/req/req.c) calls these with its locking, host unit tests
 * drive them directly.
 *
 * A queue is a linked list of buffers (Figure 1).  Each buffer is a power
 * of two in size, aligned to its size, at most 64 KiB for a buffer that
 * receives enqueues, and begins with three 32-bit words:
 *
 *   word 0: size (16 bits, in words) | tail (16 bits, a word index)
 *   word 1: size (16 bits)           | head (16 bits)
 *   word 2: next buffer (physical address; memory is below 4 GiB)
 *
 * so that an entry's address is `buffer | index` (an OR, not an add).
 * Data words occupy indices 3 .. size-1; the tail wraps to 3.
 *
 * The first buffer receives enqueues; when it fills (tail reaches head)
 * the overflow handler copies its entries into a fresh buffer, links that
 * right after the first (older copies further down the chain), and empties
 * the first buffer.  Dequeues drain the last buffer of the chain, the
 * oldest, first: FIFO order holds across any number of overflows.
 *
 * The race the paper describes (a dequeue interrupted while the overflow
 * handler moves its buffer) is closed its way: a dequeuer sets the queue's
 * do-not-preempt-me bit; an overflow that strikes while it is set only
 * sets the full-queue flag and stops acceptance; the dequeuer, when done,
 * sees the flag and asks for space (req_q_make_space).
 */
#ifndef NET_REQ_QUEUE_H
#define NET_REQ_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#define REQ_HDR_WORDS 3
#define REQ_MIN_BYTES 32		/* 8 words: 5 data slots */
#define REQ_MAX_BYTES 65536		/* the paper's limit for a 32-bit machine */
/*
 * The most a queue's overflow copies may hold together (bytes of the
 * chain after the first buffer), by default: two copies of the largest
 * first buffer.  The overflow handler runs in the receive path with
 * interrupts off; past the cap it allocates nothing and the queue stops
 * accepting (the REQ that filled it is stored) until dequeues free a copy.
 */
#define REQ_CHAIN_CAP (4 * REQ_MAX_BYTES)

/*
 * The chain's next pointers live in the buffers, which are application
 * memory: the queue keeps its own list of the copies it linked, in chain
 * order (inline for the first REQ_LINKS_INLINE, then in an array from the
 * allocator that doubles as the chain grows), and follows or frees a next
 * pointer only when it is the one that list says.
 */
#define REQ_LINKS_INLINE 8

/* Allocation, supplied by the user of this module (page allocator, malloc). */
struct req_alloc {
	/* bytes is a power of two; the result must be aligned to it (or NULL). */
	void *(*get)(void *ctx, size_t bytes);
	void (*put)(void *ctx, void *buf, size_t bytes);
	void *ctx;
};

struct req_q {
	uint32_t *first;		/* the buffer REQs go to; its address names the queue */
	size_t first_bytes;
	struct req_alloc alloc;
	volatile int dnp;		/* do-not-preempt-me: a dequeue is running */
	volatile int full;		/* full-queue flag: an overflow waits for space */
	volatile int accepting;		/* REQs are taken (0 while full) */
	int first_full;			/* the first buffer holds size-3 entries (tail == head) */
	int starved;			/* closed because the overflow copy found no memory */
	int capped;			/* closed because a copy would pass cap_bytes */
	size_t chain_bytes;		/* bytes in the copies linked after the first buffer */
	size_t cap_bytes;		/* the most chain_bytes may reach (REQ_CHAIN_CAP) */
	uint32_t **links;		/* the copies linked, newest (after first) to oldest */
	unsigned nlinks, links_cap;
	uint32_t *links_inline[REQ_LINKS_INLINE];
	/* counters */
	uint64_t enqueued, dequeued, overflows, deferred_overflows, buffers_linked, buffers_freed;
	uint64_t capped_overflows;	/* overflows that found the chain at its cap */
	uint64_t corrupt;		/* operations refused: a buffer header out of range */
	/*
	 * Tests only: called between the steps of a dequeue (step number),
	 * where an interrupt could strike.  Called only in host tests and
	 * the test image (NOW_TEST_HOOKS); the field is there in every build,
	 * so that the struct is the same in both.
	 */
	void (*step_hook)(struct req_q *q, int step);
};

/* Is (buf, bytes) a valid REQ buffer: power of two, aligned, within limits? */
int req_buffer_ok(const void *buf, size_t bytes);

/*
 * Make q a queue whose first buffer is buf (bytes long, checked with
 * req_buffer_ok).  0, or -EINVAL.
 */
int req_q_init(struct req_q *q, void *buf, size_t bytes, const struct req_alloc *a);

/* Set the cap on the copies' bytes (REQ_CHAIN_CAP after req_q_init). */
void req_q_set_cap(struct req_q *q, size_t bytes);

/* Free every buffer of the chain but the first (the caller owns that). */
void req_q_destroy(struct req_q *q);

enum req_enq_result {
	REQ_ENQ_OK,		/* stored */
	REQ_ENQ_OVERFLOW,	/* stored, the buffer filled and was handled */
	REQ_ENQ_DEFERRED,	/* stored, the buffer filled during a dequeue: flag set */
	REQ_ENQ_REFUSED,	/* not accepting (full, waiting for space): try later */
	REQ_ENQ_NOMEM,		/* stored, filled, and no memory for the copy: not accepting */
	REQ_ENQ_CAPPED,		/* stored, filled, and the copies at their cap: not accepting */
	REQ_ENQ_NOSPACE,	/* not stored: closed for lack of memory; refuse it back */
	REQ_ENQ_CORRUPT,	/* not stored: the first buffer's header is out of range */
};

/*
 * The receiver's atomic sequence (paper, "The Receiver Node" and Table 1):
 * write data at first|tail, advance tail (wrapping to 3), and on tail ==
 * head raise the overflow handler.  The caller serializes enqueues.
 *
 * The header words are memory, not registers: size, tail and head are
 * checked (size as created, 3 <= tail, head < size) before the write, so
 * that a corrupted header can never direct it outside the buffer.  A
 * queue closed for lack of memory (starved) retries the copy on each REQ
 * and refuses the REQ (NOSPACE) while it still fails, rather than holding
 * it: a held REQ holds back everything else from its sender.  A queue
 * closed at its cap (capped) refuses (REFUSED: hold it) until a dequeue
 * makes space: its memory is there, only not drained yet.
 */
enum req_enq_result req_q_enqueue(struct req_q *q, uint32_t data);

/*
 * The overflow handler (paper, "Handling Buffer Overflow"): copy the full
 * first buffer into a fresh one, link it after the first, empty the first,
 * accept again.  0, or -ENOMEM, or -ENOSPC (the copy would pass the cap;
 * nothing allocated); on error the queue stays full, not accepting.
 */
int req_q_overflow(struct req_q *q);

/*
 * Dequeue one word (paper, "Dequeuing and Queue Handling in the Receiver
 * Software").  The caller sets q->dnp around it (and keeps other
 * dequeuers out).  Return 1 and *data, 0 if the queue is empty, or -EIO
 * if a buffer's header is out of range (nothing read or written).
 */
int req_q_dequeue(struct req_q *q, uint32_t *data);

/*
 * After a dequeue found q->full (call it after every such dequeue, before
 * the next): make space and accept again.  If the dequeue took its entry
 * from the first buffer that buffer has room already; otherwise the
 * overflow handler copies it, now that no dequeue runs.  0, -ENOMEM or
 * -ENOSPC (at the cap: a later dequeue frees a drained copy and asks again).
 */
int req_q_make_space(struct req_q *q);

/* Is q taking REQs now (accepting, and its first buffer's header sound)? */
int req_q_accepting(const struct req_q *q);

/* Words queued in all buffers. */
size_t req_q_count(const struct req_q *q);

/* Helpers on a buffer (exposed for tests and the fuzz target). */
static inline uint32_t req_buf_size(const uint32_t *b) { return b[0] >> 16; }
static inline uint32_t req_buf_tail(const uint32_t *b) { return b[0] & 0xffff; }
static inline uint32_t req_buf_head(const uint32_t *b) { return b[1] & 0xffff; }
static inline uint32_t *req_buf_next(const uint32_t *b) { return (uint32_t *)(uintptr_t)b[2]; }

#endif
