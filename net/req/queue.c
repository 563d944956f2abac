/*
 * Remote-enqueue queues; see queue.h.
 */
#include <errno.h>
#include <string.h>

#include "net/req/queue.h"

/* The test hook between a dequeue's steps: in host tests and the test image only. */
#if defined(NOW_TEST_HOOKS) || defined(HOST_TEST)
#define STEP(q, n) do { if ((q)->step_hook) (q)->step_hook((q), (n)); } while (0)
#else
#define STEP(q, n) do { } while (0)
#endif

/* The queue has room again: no overflow pending, REQs accepted. */
static inline void accept_again(struct req_q *q)
{
	q->first_full = 0;
	q->full = 0;
	q->starved = 0;
	q->capped = 0;
	q->accepting = 1;
}

static int pow2(size_t n)
{
	return n && !(n & (n - 1));
}

int req_buffer_ok(const void *buf, size_t bytes)
{
	uintptr_t a = (uintptr_t)buf;

	return buf && pow2(bytes) && bytes >= REQ_MIN_BYTES && bytes <= REQ_MAX_BYTES &&
	       (a & (bytes - 1)) == 0 && a + bytes <= 0x100000000ULL;
}

/* An empty buffer of `words` words: head = tail = 3, no next. */
static void buf_reset(uint32_t *b, uint32_t words)
{
	b[0] = words << 16 | REQ_HDR_WORDS;
	b[1] = words << 16 | REQ_HDR_WORDS;
	b[2] = 0;
}

/*
 * Is the header of buffer b, `words` long, in range: size as allocated,
 * tail and head data indices?  (The paper's hardware trusts these words;
 * here they are ordinary memory, so each use checks them first.)
 */
static int hdr_ok(const uint32_t *b, uint32_t words)
{
	uint32_t tail = req_buf_tail(b), head = req_buf_head(b);

	return req_buf_size(b) == words && (b[1] >> 16) == words && tail >= REQ_HDR_WORDS &&
	       tail < words && head >= REQ_HDR_WORDS && head < words;
}

/* A linked buffer's header: its own size must be a valid copy size too. */
static int chain_hdr_ok(const uint32_t *b)
{
	uint32_t words = req_buf_size(b);

	return words >= REQ_MIN_BYTES / 4 && !(words & (words - 1)) &&
	       ((uintptr_t)b & (words * 4 - 1)) == 0 && hdr_ok(b, words);
}

/*
 * Do the next pointers in the buffers say what the queue's own list of
 * links says: first -> links[0] -> ... -> links[nlinks - 1] -> none?  Each
 * pointer is compared before anything is read through it.
 */
static int chain_ok(const struct req_q *q)
{
	const uint32_t *b = q->first;

	for (unsigned i = 0; i < q->nlinks; i++) {
		if (req_buf_next(b) != q->links[i])
			return 0;
		b = q->links[i];
	}
	return req_buf_next(b) == NULL;
}

/* Entries in buffer b; full tells a full first buffer from an empty one. */
static uint32_t buf_count(const uint32_t *b, int full)
{
	uint32_t size = req_buf_size(b), tail = req_buf_tail(b), head = req_buf_head(b);
	uint32_t slots = size - REQ_HDR_WORDS;

	if (tail == head)
		return full ? slots : 0;
	return tail > head ? tail - head : slots - (head - tail);
}

int req_q_init(struct req_q *q, void *buf, size_t bytes, const struct req_alloc *a)
{
	if (!req_buffer_ok(buf, bytes) || !a || !a->get || !a->put)
		return -EINVAL;
	memset(q, 0, sizeof *q);
	q->first = buf;
	q->first_bytes = bytes;
	q->alloc = *a;
	q->accepting = 1;
	q->cap_bytes = REQ_CHAIN_CAP;
	q->links = q->links_inline;
	q->links_cap = REQ_LINKS_INLINE;
	buf_reset(q->first, (uint32_t)(bytes / 4));
	return 0;
}

void req_q_set_cap(struct req_q *q, size_t bytes)
{
	q->cap_bytes = bytes;
}

void req_q_destroy(struct req_q *q)
{
	/* The queue's own list, not the pointers in application memory. */
	for (unsigned i = 0; i < q->nlinks; i++)
		q->alloc.put(q->alloc.ctx, q->links[i], (size_t)req_buf_size(q->links[i]) * 4);
	q->nlinks = 0;
	if (q->links != q->links_inline)
		q->alloc.put(q->alloc.ctx, q->links, q->links_cap * sizeof q->links[0]);
	q->links = q->links_inline;
	q->links_cap = REQ_LINKS_INLINE;
	q->chain_bytes = 0;
	q->first[2] = 0;
	q->accepting = 0;
}

/* Room in the list of links for one more: 0, or -ENOMEM. */
static int links_room(struct req_q *q)
{
	uint32_t **nl;

	if (q->nlinks < q->links_cap)
		return 0;
	nl = q->alloc.get(q->alloc.ctx, 2 * q->links_cap * sizeof nl[0]);
	if (!nl)
		return -ENOMEM;
	memcpy(nl, q->links, q->nlinks * sizeof nl[0]);
	if (q->links != q->links_inline)
		q->alloc.put(q->alloc.ctx, q->links, q->links_cap * sizeof nl[0]);
	q->links = nl;
	q->links_cap *= 2;
	return 0;
}

enum req_enq_result req_q_enqueue(struct req_q *q, uint32_t data)
{
	uint32_t *b = q->first;
	uint32_t w0, size, tail, head;

	if (!q->accepting) {
		if (!q->starved)
			return REQ_ENQ_REFUSED;
		/* Closed for lack of memory: try the copy again, else refuse back. */
		if (q->dnp || req_q_make_space(q) < 0 || !q->accepting)
			return REQ_ENQ_NOSPACE;
	}
	/* RD0: (size, tail).  WR0: the data at buffer OR tail. */
	w0 = b[0];
	size = w0 >> 16;
	tail = w0 & 0xffff;
	if (!hdr_ok(b, (uint32_t)(q->first_bytes / 4))) {
		q->corrupt++;
		return REQ_ENQ_CORRUPT;
	}
	*(volatile uint32_t *)((uintptr_t)b | ((uintptr_t)tail << 2)) = data;
	/* Advance, wrapping to the first data slot.  RD1: (size, head).  WR1. */
	if (++tail == size)
		tail = REQ_HDR_WORDS;
	head = req_buf_head(b);
	b[0] = size << 16 | tail;
	q->enqueued++;
	if (tail != head)
		return REQ_ENQ_OK;
	/* tail == head: the buffer is full; stop accepting. */
	q->first_full = 1;
	q->full = 1;
	q->accepting = 0;
	if (q->dnp) {
		/* A dequeue runs: only the flag; it asks for space when done. */
		q->deferred_overflows++;
		return REQ_ENQ_DEFERRED;
	}
	switch (req_q_overflow(q)) {
	case 0: return REQ_ENQ_OVERFLOW;
	case -ENOSPC: return REQ_ENQ_CAPPED;
	default: return REQ_ENQ_NOMEM;
	}
}

int req_q_overflow(struct req_q *q)
{
	uint32_t *b = q->first;
	uint32_t size = req_buf_size(b), head = req_buf_head(b);
	uint32_t slots = size - REQ_HDR_WORDS, count = buf_count(b, q->first_full);
	/* Twice the size: a copy is never full, so tail == head means empty. */
	size_t nbytes = q->first_bytes * 2;
	uint32_t *nb;

	if (!hdr_ok(b, (uint32_t)(q->first_bytes / 4))) {
		q->corrupt++;
		q->full = 1;
		q->accepting = 0;
		return -EIO;
	}
	q->overflows++;
	if (q->chain_bytes + nbytes > q->cap_bytes) {
		q->capped_overflows++;
		q->full = 1;
		q->accepting = 0;
		q->starved = 0;
		q->capped = 1;
		return -ENOSPC;
	}
	nb = links_room(q) == 0 ? q->alloc.get(q->alloc.ctx, nbytes) : NULL;
	if (!nb || ((uintptr_t)nb >> 32)) {
		if (nb)
			q->alloc.put(q->alloc.ctx, nb, nbytes);
		q->full = 1;
		q->accepting = 0;
		q->starved = 1;
		q->capped = 0;
		return -ENOMEM;
	}
	/* Copy the entries oldest first (paper: "Copy the contents of the full buffer"). */
	for (uint32_t i = 0; i < count; i++) {
		uint32_t idx = head + i;
		if (idx >= size)
			idx -= slots;
		nb[REQ_HDR_WORDS + i] = b[idx];
	}
	nb[0] = (uint32_t)(nbytes / 4) << 16 | (REQ_HDR_WORDS + count);
	nb[1] = (uint32_t)(nbytes / 4) << 16 | REQ_HDR_WORDS;
	/* Link it right after the first: older copies are further down the chain. */
	nb[2] = q->nlinks ? (uint32_t)(uintptr_t)q->links[0] : 0;
	b[2] = (uint32_t)(uintptr_t)nb;
	memmove(q->links + 1, q->links, q->nlinks * sizeof q->links[0]);
	q->links[0] = nb;
	q->nlinks++;
	/* "Mark the previously overflowed buffer as empty", then accept again. */
	buf_reset(b, size);
	b[2] = (uint32_t)(uintptr_t)nb;
	q->buffers_linked++;
	q->chain_bytes += nbytes;
	accept_again(q);
	return 0;
}

int req_q_dequeue(struct req_q *q, uint32_t *data)
{
	uint32_t *prev, *b;

	for (;;) {
		/* The last buffer of the chain holds the oldest entries. */
		prev = NULL;
		b = q->first;
		STEP(q, 1);
		if (!hdr_ok(b, (uint32_t)(q->first_bytes / 4))) {
			q->corrupt++;
			return -EIO;
		}
		if (!chain_ok(q)) {
			q->corrupt++;
			return -EIO;
		}
		if (q->nlinks) {
			b = q->links[q->nlinks - 1];
			prev = q->nlinks > 1 ? q->links[q->nlinks - 2] : q->first;
		}
		STEP(q, 2);
		if (b != q->first && !chain_hdr_ok(b)) {
			q->corrupt++;
			return -EIO;
		}
		if (buf_count(b, b == q->first && q->first_full) > 0)
			break;
		if (b == q->first)
			return 0;	/* EMPTY_QUEUE */
		/* A drained copy: unlink and free it, then look again. */
		prev[2] = 0;
		if (--q->nlinks == 0 && q->links != q->links_inline) {
			/* The chain drained: its list goes back inline. */
			q->alloc.put(q->alloc.ctx, q->links, q->links_cap * sizeof q->links[0]);
			q->links = q->links_inline;
			q->links_cap = REQ_LINKS_INLINE;
		}
		q->chain_bytes -= (size_t)req_buf_size(b) * 4;
		q->alloc.put(q->alloc.ctx, b, (size_t)req_buf_size(b) * 4);
		q->buffers_freed++;
		STEP(q, 3);
	}
	uint32_t head = req_buf_head(b), size = req_buf_size(b);
	STEP(q, 4);
	*data = *(volatile uint32_t *)((uintptr_t)b | ((uintptr_t)head << 2));
	STEP(q, 5);
	if (++head == size)
		head = REQ_HDR_WORDS;
	/*
	 * Only the head moves here.  first_full belongs to the enqueue side
	 * and the overflow handler: a dequeue that cleared it could race an
	 * enqueue refilling the buffer between two of its stores.  With the
	 * first buffer full nothing is enqueued (accepting is 0), and once an
	 * entry left it, tail != head and first_full is not consulted.
	 */
	b[1] = size << 16 | head;
	STEP(q, 6);
	q->dequeued++;
	return 1;
}

int req_q_make_space(struct req_q *q)
{
	uint32_t *b = q->first;

	if (!q->full && q->accepting)
		return 0;
	/* The dequeue took from the first buffer: it has room again, no copy needed. */
	if (!q->first_full || req_buf_tail(b) != req_buf_head(b)) {
		accept_again(q);
		return 0;
	}
	return req_q_overflow(q);
}

int req_q_accepting(const struct req_q *q)
{
	return q->accepting && hdr_ok(q->first, (uint32_t)(q->first_bytes / 4));
}

size_t req_q_count(const struct req_q *q)
{
	size_t n = 0;

	n = buf_count(q->first, q->first_full);
	for (unsigned i = 0; i < q->nlinks; i++)
		if (chain_hdr_ok(q->links[i]))
			n += buf_count(q->links[i], 0);
	return n;
}
