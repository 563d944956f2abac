/*
 * Remote enqueue in the kernel, the node's own queues: creating and
 * exporting them, their buffers, and the dequeue protocol.  The REQ
 * operation and its receive half (the paper's network interface: "the
 * remote-enqueue operation as the following atomic sequence of steps",
 * there in the fabric receive path with interrupts off) are remote.c.
 * See req.h and queue.h.
 *
 * Choices where the paper leaves one:
 *  - The overflow handler runs in the receive path, right where the
 *    paper's interface raises its interrupt: no dequeue runs (the queue's
 *    do-not-preempt-me bit is clear), so it may move the buffer at once.
 *  - "The network interface stops accepting": REQs for a full queue are
 *    refused to the fabric (-EBUSY), which holds them and withholds
 *    credit from their sender; the paper's interface stopped all requests,
 *    ours stops that sender's channel.
 *  - Buffers are allocated interrupt-safely (the handler needs one):
 *    pages for 4 KiB and up, aligned pieces of pages below.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kernel/console.h"
#include "kernel/init.h"
#include "kernel/mem.h"
#include "kernel/node.h"
#include "kernel/page.h"
#include "kernel/sync.h"
#include "kernel/thread.h"
#include "kernel/trap.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"
#include "net/fabric/call.h"
#include "net/fabric/fabric.h"
#include "net/req/internal.h"
#include "net/req/wire.h"

struct lqueue req_lq[REQ_MAX_QUEUES];
static uint32_t generation = 1;

/* --- buffers --------------------------------------------------------------- */

#define SMALL_CLASSES 7			/* 32, 64, ..., 2048 bytes */
static void *small_free[SMALL_CLASSES];

static int small_class(size_t bytes)
{
	int c = 0;

	while ((32u << c) < bytes)
		c++;
	return c;
}

static void *buf_get(void *ctx, size_t bytes)
{
	(void)ctx;
	if (bytes >= PAGE_SIZE)
		return page_alloc(page_order(bytes));
	irqflags_t f = irq_save();
	int c = small_class(bytes);
	void *b = small_free[c];
	if (b) {
		small_free[c] = *(void **)b;
	} else {
		/* Carve a page into pieces of this size: each aligned to its size. */
		uint8_t *pg = page_alloc(0);
		if (pg) {
			for (size_t off = bytes; off + bytes <= PAGE_SIZE; off += bytes) {
				*(void **)(pg + off) = small_free[c];
				small_free[c] = pg + off;
			}
			b = pg;
		}
	}
	irq_restore(f);
	return b;
}

static void buf_put(void *ctx, void *b, size_t bytes)
{
	(void)ctx;
	if (bytes >= PAGE_SIZE) {
		page_free(b, page_order(bytes));
		return;
	}
	irqflags_t f = irq_save();
	int c = small_class(bytes);
	*(void **)b = small_free[c];
	small_free[c] = b;
	irq_restore(f);
}

static const struct req_alloc kalloc = { buf_get, buf_put, NULL };

/* --- local queues ---------------------------------------------------------- */

static struct lqueue *lq_get(int qid)
{
	if (qid < 0 || qid >= REQ_MAX_QUEUES || !req_lq[qid].used)
		return NULL;
	return &req_lq[qid];
}

static int create(void *buf, size_t bytes, int own)
{
	irqflags_t f = irq_save();
	for (int i = 0; i < REQ_MAX_QUEUES; i++) {
		struct lqueue *l = &req_lq[i];
		if (l->used)
			continue;
		memset(l, 0, sizeof *l);
		if (req_q_init(&l->q, buf, bytes, &kalloc) < 0) {
			irq_restore(f);
			return -EINVAL;
		}
		l->gen = generation++;
		l->own_buffer = own;
		mutex_init(&l->lock, 0);
		l->used = 1;
		irq_restore(f);
		return i;
	}
	irq_restore(f);
	return -ENOSPC;
}

int req_create_at(void *buf, size_t bytes)
{
	if (!req_buffer_ok(buf, bytes))
		return -EINVAL;
	return create(buf, bytes, 0);
}

int req_create(size_t bytes)
{
	void *b;
	int r;

	if (bytes < REQ_MIN_BYTES || bytes > REQ_MAX_BYTES || (bytes & (bytes - 1)))
		return -EINVAL;
	b = buf_get(NULL, bytes);
	if (!b)
		return -ENOMEM;
	r = create(b, bytes, 1);
	if (r < 0)
		buf_put(NULL, b, bytes);
	return r;
}

int req_destroy(int qid)
{
	irqflags_t f = irq_save();
	struct lqueue *l = lq_get(qid);
	if (!l) {
		irq_restore(f);
		return -EBADF;
	}
	req_q_destroy(&l->q);
	l->used = 0;
	l->name[0] = '\0';
	if (l->own_buffer)
		buf_put(NULL, l->q.first, l->q.first_bytes);
	waitq_wake_all(&l->wq);
	irq_restore(f);
	/* REQs held back for it can now be refused. */
	fabric_resume();
	return 0;
}

int req_export(int qid, const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n >= REQ_NAME_MAX)
		return -EINVAL;
	irqflags_t f = irq_save();
	struct lqueue *l = lq_get(qid);
	int r = l ? 0 : -EBADF;
	for (int i = 0; r == 0 && i < REQ_MAX_QUEUES; i++)
		if (req_lq[i].used && i != qid && strcmp(req_lq[i].name, name) == 0)
			r = -EEXIST;
	if (r == 0)
		memcpy(l->name, name, n + 1);
	irq_restore(f);
	return r;
}

uintptr_t req_address(int qid)
{
	struct lqueue *l = lq_get(qid);
	return l ? (uintptr_t)l->q.first : 0;
}

int req_queue_stats(int qid, struct req_stats *out)
{
	irqflags_t f = irq_save();
	struct lqueue *l = lq_get(qid);
	if (l) {
		out->enqueued = l->q.enqueued;
		out->dequeued = l->q.dequeued;
		out->overflows = l->q.overflows;
		out->deferred_overflows = l->q.deferred_overflows;
		out->buffers_linked = l->q.buffers_linked;
		out->refused_busy = l->refused_busy;
	}
	irq_restore(f);
	return l ? 0 : -EBADF;
}

/*
 * The paper's dequeue (section "Dequeuing and Queue Handling in the
 * Receiver Software"): take the queue's lock, set do-not-preempt-me (for
 * the scheduler and, per queue, for the overflow handler), dequeue, clear
 * it, and if an overflow struck meanwhile (the full-queue flag) ask for
 * space and let the held REQs in.
 */
int req_dequeue(int qid, uint32_t *word)
{
	return req_dequeue_ticket(qid, word, NULL);
}

int req_dequeue_ticket(int qid, uint32_t *word, uint64_t *ticket)
{
	return req_dequeue_many(qid, word, 1, ticket);
}

int req_dequeue_many(int qid, uint32_t *words, int max, uint64_t *first_ticket)
{
	struct lqueue *l = lq_get(qid);
	int n = 0, resume = 0;

	if (!l)
		return -EBADF;
	mutex_lock(&l->lock);
	if (!l->used) {
		mutex_unlock(&l->lock);
		return -EBADF;
	}
	thread_nopreempt_begin();
	if (first_ticket)
		*first_ticket = l->tickets;
	while (n < max) {
		l->q.dnp = 1;
		barrier();
		int r = req_q_dequeue(&l->q, &words[n]);
		barrier();
		l->q.dnp = 0;
		barrier();
		if (l->q.full) {
			/* An overflow struck during the dequeue: ask for space now. */
			irqflags_t f = irq_save();
			if (req_q_make_space(&l->q) < 0)
				req_ctr.nomem++;
			irq_restore(f);
			resume = 1;
		}
		if (r != 1)
			break;
		n++;
	}
	l->tickets += (uint64_t)n;
	thread_nopreempt_end();
	mutex_unlock(&l->lock);
	if (resume)
		fabric_resume();
	return n;
}

int req_notify(int qid, void (*fn)(void *arg, int qid, uint32_t word), void *arg)
{
	irqflags_t f = irq_save();
	struct lqueue *l = lq_get(qid);
	if (l) {
		l->notify = fn;
		l->notify_arg = arg;
	}
	irq_restore(f);
	return l ? 0 : -EBADF;
}

int req_wait(int qid, uint64_t timeout_ns)
{
	uint64_t end = cycles() + ns_to_cycles(timeout_ns);
	irqflags_t f = irq_save();
	struct lqueue *l = lq_get(qid);
	int r = 0;

	while (l && l->used && req_q_count(&l->q) == 0 && cycles() < end)
		waitq_wait_timeout(&l->wq, cycles_to_ns(end - cycles()));
	if (!l || !l->used)
		r = -EBADF;
	else
		r = req_q_count(&l->q) > 0;
	irq_restore(f);
	return r;
}

struct lqueue *req_find(uint64_t addr, uint32_t gen)
{
	for (int i = 0; i < REQ_MAX_QUEUES; i++)
		if (req_lq[i].used && (uintptr_t)req_lq[i].q.first == addr && req_lq[i].gen == gen)
			return &req_lq[i];
	return NULL;
}

int req_resolve(const char *name, int asker, void *answer, size_t *len)
{
	(void)asker;
	for (int i = 0; i < REQ_MAX_QUEUES; i++) {
		if (req_lq[i].used && strcmp(req_lq[i].name, name) == 0) {
			struct req_queue_answer a = { (uintptr_t)req_lq[i].q.first, req_lq[i].gen, 0 };
			memcpy(answer, &a, sizeof a);
			*len = sizeof a;
			return 0;
		}
	}
	return -ENOENT;
}
