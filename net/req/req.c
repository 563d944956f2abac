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
 *    pages for 4 KiB and up, aligned pieces of pages below.  What one
 *    queue's copies hold is capped (REQ_CHAIN_CAP, req_set_cap): past the
 *    cap the handler allocates nothing and the queue holds REQs back as
 *    when it is full during a dequeue, until a dequeue frees a copy.
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
#include "net/call/call.h"
#include "net/fabric/fabric.h"
#include "net/req/internal.h"
#include "net/req/wire.h"

struct lqueue req_lq[REQ_MAX_QUEUES];
struct req_qtab req_tab;

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

static int slots_ready;

void req_slots_init(void)
{
	if (slots_ready)
		return;
	for (int i = 0; i < REQ_MAX_QUEUES; i++)
		mutex_init(&req_lq[i].lock, 0);
	req_qtab_init(&req_tab, node_id);
	slots_ready = 1;
}

static int create(void *buf, size_t bytes, int own)
{
	req_slots_init();
	irqflags_t f = irq_save();
	int r = req_qtab_create(&req_tab, -1, buf, bytes, &kalloc);
	if (r >= 0) {
		/* The lock and the incarnation carry over; the rest starts afresh. */
		struct lqueue *l = &req_lq[r];
		l->own_buffer = own;
		l->tickets = 0;
		l->notify = NULL;
		l->notify_arg = NULL;
	}
	irq_restore(f);
	return r;
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

static int valid(int qid)
{
	return slots_ready && qid >= 0 && qid < REQ_MAX_QUEUES && req_tab.e[qid].used;
}

/*
 * Takes the queue's lock first, as a dequeuer does: a dequeue that runs
 * finishes on the queue it started on, and one waiting for the lock finds
 * the queue gone (the incarnation moved on) when it gets it.
 */
int req_destroy(int qid)
{
	if (!valid(qid))
		return -EBADF;
	struct lqueue *l = &req_lq[qid];
	mutex_lock(&l->lock);
	irqflags_t f = irq_save();
	struct req_qent *e = &req_tab.e[qid];
	if (!e->used) {
		irq_restore(f);
		mutex_unlock(&l->lock);
		return -EBADF;
	}
	req_qtab_destroy(&req_tab, qid);
	l->incarnation++;
	l->notify = NULL;
	if (l->own_buffer)
		buf_put(NULL, e->q.first, e->q.first_bytes);
	waitq_wake_all(&l->wq);
	irq_restore(f);
	mutex_unlock(&l->lock);
	/* REQs held back for it can now be refused. */
	fabric_resume();
	return 0;
}

int req_export(int qid, const char *name)
{
	irqflags_t f = irq_save();
	int r = valid(qid) ? req_qtab_export(&req_tab, qid, name, -1) : -EBADF;
	irq_restore(f);
	return r;
}

int req_export_for(int qid, const char *name, int node)
{
	if (node < 0 || node >= num_nodes || node == node_id)
		return -EINVAL;
	irqflags_t f = irq_save();
	int r = valid(qid) ? req_qtab_export(&req_tab, qid, name, node) : -EBADF;
	irq_restore(f);
	return r;
}

int req_grant(int qid, int node)
{
	irqflags_t f = irq_save();
	int r = valid(qid) ? req_qtab_grant(&req_tab, qid, node) : -EBADF;
	irq_restore(f);
	return r;
}

int req_revoke(int qid, int node)
{
	irqflags_t f = irq_save();
	int r = valid(qid) ? req_qtab_revoke(&req_tab, qid, node) : -EBADF;
	irq_restore(f);
	return r;
}

int req_ticket(int qid, int node, uint32_t *gen)
{
	irqflags_t f = irq_save();
	int r = valid(qid) ? req_qtab_ticket(&req_tab, qid, node, gen) : -EBADF;
	irq_restore(f);
	return r;
}

uintptr_t req_address(int qid)
{
	return valid(qid) ? (uintptr_t)req_tab.e[qid].q.first : 0;
}

int req_set_cap(int qid, size_t bytes)
{
	irqflags_t f = irq_save();
	int ok = valid(qid);
	if (ok)
		req_q_set_cap(&req_tab.e[qid].q, bytes);
	irq_restore(f);
	return ok ? 0 : -EBADF;
}

int req_queue_stats(int qid, struct req_stats *out)
{
	irqflags_t f = irq_save();
	int ok = valid(qid);
	if (ok) {
		const struct req_qent *e = &req_tab.e[qid];
		out->enqueued = e->q.enqueued;
		out->dequeued = e->q.dequeued;
		out->overflows = e->q.overflows;
		out->deferred_overflows = e->q.deferred_overflows;
		out->buffers_linked = e->q.buffers_linked;
		out->refused_busy = e->refused_busy;
		out->capped_overflows = e->q.capped_overflows;
		out->chain_bytes = e->q.chain_bytes;
	}
	irq_restore(f);
	return ok ? 0 : -EBADF;
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
	int n = 0, resume = 0, err = 0;

	if (!valid(qid))
		return -EBADF;
	struct lqueue *l = &req_lq[qid];
	struct req_q *q = &req_tab.e[qid].q;
	uint32_t inc = l->incarnation;
	mutex_lock(&l->lock);
	if (!req_tab.e[qid].used || l->incarnation != inc) {
		mutex_unlock(&l->lock);
		return -EBADF;
	}
	thread_nopreempt_begin();
	if (first_ticket)
		*first_ticket = l->tickets;
	while (n < max) {
		q->dnp = 1;
		barrier();
		int r = req_q_dequeue(q, &words[n]);
		barrier();
		q->dnp = 0;
		barrier();
		if (q->full) {
			/* An overflow struck during the dequeue: ask for space now. */
			irqflags_t f = irq_save();
			if (req_q_make_space(q) == -ENOMEM)
				req_tab.ctr.nomem++;
			irq_restore(f);
			resume = 1;
		}
		if (r < 0)
			err = r;
		if (r != 1)
			break;
		n++;
	}
	l->tickets += (uint64_t)n;
	thread_nopreempt_end();
	mutex_unlock(&l->lock);
	if (resume)
		fabric_resume();
	return n > 0 ? n : err;
}

#ifdef NOW_TEST_HOOKS
int req_test_dequeue_hook(int qid, void (*fn)(struct req_q *q, int step))
{
	irqflags_t f = irq_save();
	int ok = valid(qid);
	if (ok)
		req_tab.e[qid].q.step_hook = fn;
	irq_restore(f);
	return ok ? 0 : -EBADF;
}
#endif

int req_notify(int qid, void (*fn)(void *arg, int qid, uint32_t word), void *arg)
{
	irqflags_t f = irq_save();
	int ok = valid(qid);
	if (ok) {
		req_lq[qid].notify = fn;
		req_lq[qid].notify_arg = arg;
	}
	irq_restore(f);
	return ok ? 0 : -EBADF;
}

int req_wait(int qid, uint64_t timeout_ns)
{
	uint64_t end = cycles() + ns_to_cycles(timeout_ns);
	irqflags_t f = irq_save();
	if (!valid(qid)) {
		irq_restore(f);
		return -EBADF;
	}
	struct lqueue *l = &req_lq[qid];
	struct req_qent *e = &req_tab.e[qid];
	uint32_t inc = l->incarnation;
	int r;

	while (e->used && l->incarnation == inc && req_q_count(&e->q) == 0 && cycles() < end)
		waitq_wait_timeout(&l->wq, cycles_to_ns(end - cycles()));
	if (!e->used || l->incarnation != inc)
		r = -EBADF;
	else
		r = req_q_count(&e->q) > 0;
	irq_restore(f);
	return r;
}

int req_resolve(const char *name, int asker, void *answer, size_t *len)
{
	struct req_queue_answer a;
	int r = req_qtab_resolve(&req_tab, name, asker, &a);

	if (r < 0)
		return r;
	memcpy(answer, &a, sizeof a);
	*len = sizeof a;
	return 0;
}
