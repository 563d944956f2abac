/*
 * Remote enqueue in the kernel: queues, the REQ operation over the fabric,
 * the receive half (the paper's network interface: "the remote-enqueue
 * operation as the following atomic sequence of steps", here in the fabric
 * receive path with interrupts off), the overflow handler, and the dequeue
 * protocol.  See req.h and req_queue.h.
 *
 * Choices where the paper leaves one:
 *  - The overflow handler runs in the receive path, right where the
 *    paper's interface raises its interrupt: no dequeue runs (the queue's
 *    do-not-preempt-me bit is clear), so it may move the buffer at once.
 *  - "The network interface stops accepting": REQs for a full queue are
 *    refused to the fabric (FABRIC_BUSY), which holds them and withholds
 *    credit from their sender; the paper's interface stopped all requests,
 *    ours stops that sender's channel.
 *  - Buffers are allocated interrupt-safely (the handler needs one):
 *    pages for 4 KiB and up, aligned pieces of pages below.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kernel/init.h"
#include "kernel/node.h"
#include "kernel/console.h"
#include "kernel/mem.h"
#include "kernel/page.h"
#include "kernel/sync.h"
#include "kernel/thread.h"
#include "kernel/trap.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"
#include "net/fabric/fabric.h"
#include "net/req/req.h"
#include "net/req/queue.h"
#include "net/req/wire.h"
#include "net/rmem/rmem.h"

#define WAIT_NS 30000000000ULL
#define ASYNC_TAG 0x80000000u

struct lqueue {
	int used;
	struct req_q q;
	uint32_t gen;
	char name[REQ_NAME_MAX];
	int own_buffer;
	struct mutex lock;		/* one dequeuer at a time (paper: "a lock variable") */
	struct waitq wq;		/* req_wait */
	uint64_t refused_busy;
	uint64_t tickets;		/* dequeues handed out, under lock */
	void (*notify)(void *arg, int qid, uint32_t word);
	void *notify_arg;
};

struct rqueue {
	int used;
	int node;
	uint64_t addr;
	uint32_t gen;
	int error;
};

struct pending {
	int used;
	int node;
	uint32_t tag;
	volatile int done;
	struct req_msg answer;
	struct waitq wq;
};

static struct lqueue lq[REQ_MAX_QUEUES];
static struct rqueue rqs[REQ_MAX_REMOTE];
static struct pending pend[32];
static uint32_t next_tag = 1, next_async, generation = 1;
static struct req_counters ctr;
static int ready;

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
	if (qid < 0 || qid >= REQ_MAX_QUEUES || !lq[qid].used)
		return NULL;
	return &lq[qid];
}

static int create(void *buf, size_t bytes, int own)
{
	irqflags_t f = irq_save();
	for (int i = 0; i < REQ_MAX_QUEUES; i++) {
		struct lqueue *l = &lq[i];
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
		if (lq[i].used && i != qid && strcmp(lq[i].name, name) == 0)
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
				ctr.nomem++;
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

/* --- the receive half (fabric receive path, interrupts off) --------------- */

static void answer(int src, uint8_t op, uint32_t tag, int status, uint64_t addr, uint32_t gen)
{
	struct req_msg a = { 0 };

	a.op = op;
	a.tag = tag;
	a.status = status;
	a.addr = addr;
	a.gen = gen;
	fabric_send(src, REQ_PROTO, &a, sizeof a, NULL, 0, FABRIC_NOWAIT);
}

static struct lqueue *find(uint64_t addr, uint32_t gen)
{
	for (int i = 0; i < REQ_MAX_QUEUES; i++)
		if (lq[i].used && (uintptr_t)lq[i].q.first == addr && lq[i].gen == gen)
			return &lq[i];
	return NULL;
}

static void complete(int src, const struct req_msg *m)
{
	if (m->op == RQ_STATUS && (m->tag & ASYNC_TAG)) {
		int rq = (int)((m->tag >> 24) & 0x7f);
		if (m->status != RQS_OK && rq < REQ_MAX_REMOTE && rqs[rq].used && rqs[rq].node == src) {
			ctr.errors_reported++;
			if (!rqs[rq].error)
				rqs[rq].error = -ENOENT;
		}
		return;
	}
	for (int i = 0; i < (int)(sizeof pend / sizeof pend[0]); i++) {
		struct pending *p = &pend[i];
		if (p->used && !p->done && p->node == src && p->tag == m->tag) {
			p->answer = *m;
			p->done = 1;
			waitq_wake_all(&p->wq);
			return;
		}
	}
}

static int req_handler(int src, const uint8_t *payload, size_t len, struct pktbuf *pb)
{
	struct req_msg m;
	const char *name;
	size_t namelen;

	(void)pb;
	if (req_wire_parse(payload, len, &m, &name, &namelen) < 0) {
		ctr.rx_malformed++;
		return 0;
	}
	switch (m.op) {
	case RQ_STATUS:
	case RQ_LOOKUP_RESP:
		complete(src, &m);
		return 0;
	case RQ_FENCE:
		if (!fabric_can_send(src))
			return FABRIC_BUSY;
		answer(src, RQ_STATUS, m.tag, RQS_OK, 0, 0);
		return 0;
	case RQ_LOOKUP: {
		if (!fabric_can_send(src))
			return FABRIC_BUSY;
		for (int i = 0; i < REQ_MAX_QUEUES; i++) {
			if (lq[i].used && strlen(lq[i].name) == namelen &&
			    memcmp(lq[i].name, name, namelen) == 0) {
				answer(src, RQ_LOOKUP_RESP, m.tag, RQS_OK, (uintptr_t)lq[i].q.first, lq[i].gen);
				return 0;
			}
		}
		answer(src, RQ_LOOKUP_RESP, m.tag, RQS_NOENT, 0, 0);
		return 0;
	}
	case RQ_ENQ: {
		struct lqueue *l = find(m.addr, m.gen);
		int wants_answer = !l || (m.flags & RQF_ACK);
		ctr.rx_req++;
		/* Its answer must be able to go before anything happens. */
		if (wants_answer && !fabric_can_send(src))
			return FABRIC_BUSY;
		if (!l) {
			ctr.rx_refused_noqueue++;
			answer(src, RQ_STATUS, m.tag, RQS_NOQUEUE, 0, 0);
			return 0;
		}
		enum req_enq_result r = req_q_enqueue(&l->q, m.word);
		if (r == REQ_ENQ_REFUSED) {
			/* Full, waiting for space: hold it (back-pressure). */
			l->refused_busy++;
			ctr.rx_busy++;
			return FABRIC_BUSY;
		}
		if (r == REQ_ENQ_NOMEM)
			ctr.nomem++;
		if (m.flags & RQF_ACK)
			answer(src, RQ_STATUS, m.tag, RQS_OK, 0, 0);
		if (l->notify)
			l->notify(l->notify_arg, (int)(l - lq), m.word);
		if (l->wq.head)
			waitq_wake_all(&l->wq);
		return 0;
	}
	}
	ctr.rx_malformed++;
	return 0;
}

static int req_init(void)
{
	if (!fabric_ready())
		return -ENODEV;
	if (fabric_register(REQ_PROTO, req_handler) < 0)
		return -EBUSY;
	ready = 1;
	return 0;
}
INIT_HOOK(INIT_PROTO, req, req_init);

/* --- the sending half ------------------------------------------------------ */

static struct pending *pend_alloc(int node)
{
	irqflags_t f = irq_save();
	for (int i = 0; i < (int)(sizeof pend / sizeof pend[0]); i++) {
		struct pending *p = &pend[i];
		if (p->used)
			continue;
		memset(p, 0, sizeof *p);
		p->used = 1;
		p->node = node;
		p->tag = next_tag++;
		if (next_tag >= ASYNC_TAG)
			next_tag = 1;
		irq_restore(f);
		return p;
	}
	irq_restore(f);
	return NULL;
}

/* Send m, wait for the answer into m; 0 or -errno.  The entry is freed. */
static int request(int node, struct req_msg *m, const void *extra, size_t elen)
{
	struct pending *p = pend_alloc(node);
	uint64_t end = cycles() + ns_to_cycles(WAIT_NS);
	int r;

	if (!p)
		return -EAGAIN;
	m->tag = p->tag;
	r = fabric_send(node, REQ_PROTO, m, sizeof *m, extra, elen, 0);
	irqflags_t f = irq_save();
	while (r == 0 && !p->done) {
		if (fabric_peer_dead(node))
			r = -EHOSTDOWN;
		else if (cycles() >= end)
			r = -ETIMEDOUT;
		else
			waitq_wait_timeout(&p->wq, 100000000);
	}
	if (r == 0)
		*m = p->answer;
	p->used = 0;
	irq_restore(f);
	return r;
}

static int new_handle(int node, uint64_t addr, uint32_t gen)
{
	irqflags_t f = irq_save();
	for (int i = 0; i < REQ_MAX_REMOTE; i++) {
		if (!rqs[i].used) {
			rqs[i].used = 1;
			rqs[i].node = node;
			rqs[i].addr = addr;
			rqs[i].gen = gen;
			rqs[i].error = 0;
			irq_restore(f);
			return i;
		}
	}
	irq_restore(f);
	return -ENOSPC;
}

int req_import(int node, const char *name)
{
	struct req_msg m = { 0 };
	size_t n = strlen(name);
	int r;

	if (!ready)
		return -ENODEV;
	if (n == 0 || n > REQ_WIRE_NAME_MAX || node < 0 || node >= num_nodes || node == node_id)
		return -EINVAL;
	m.op = RQ_LOOKUP;
	r = request(node, &m, name, n);
	if (r < 0)
		return r;
	if (m.status != RQS_OK)
		return -ENOENT;
	return new_handle(node, m.addr, m.gen);
}

int req_handle(int node, uintptr_t addr, uint32_t gen)
{
	if (node < 0 || node >= num_nodes || node == node_id)
		return -EINVAL;
	return new_handle(node, addr, gen);
}

int req_enqueue(int rq, uint32_t word, int sync)
{
	struct req_msg m = { 0 };
	struct rqueue *h;
	int r;

	if (rq < 0 || rq >= REQ_MAX_REMOTE || !rqs[rq].used)
		return -EBADF;
	h = &rqs[rq];
	m.op = RQ_ENQ;
	m.addr = h->addr;
	m.gen = h->gen;
	m.word = word;
	if (sync) {
		m.flags = RQF_ACK;
		r = request(h->node, &m, NULL, 0);
		if (r == 0 && m.status != RQS_OK)
			r = -ENOENT;
		return r;
	}
	m.tag = ASYNC_TAG | (uint32_t)rq << 24 | (__atomic_fetch_add(&next_async, 1, __ATOMIC_RELAXED) & 0xffffff);
	return fabric_send(h->node, REQ_PROTO, &m, sizeof m, NULL, 0, in_irq ? FABRIC_NOWAIT : 0);
}

int req_sync(int rq, uint64_t timeout_ns)
{
	struct req_msg m = { 0 };
	int r;

	(void)timeout_ns;
	if (rq < 0 || rq >= REQ_MAX_REMOTE || !rqs[rq].used)
		return -EBADF;
	m.op = RQ_FENCE;
	r = request(rqs[rq].node, &m, NULL, 0);
	if (r < 0)
		return r;
	irqflags_t f = irq_save();
	r = rqs[rq].error;
	rqs[rq].error = 0;
	irq_restore(f);
	return r;
}

int reqmsg_send(int rd, uint32_t off, const void *body, uint32_t len, int rq)
{
	int r = rmem_write(rd, off, body, len, 0);

	if (r < 0)
		return r;
	/* Same node pair, same channel: the body is in place before this arrives. */
	return req_enqueue(rq, off, 0);
}

int reqmsg_poll(int qid, uint32_t *off)
{
	return req_dequeue(qid, off);
}

void req_counters(struct req_counters *out)
{
	irqflags_t f = irq_save();
	*out = ctr;
	irq_restore(f);
}

void req_print_stats(void)
{
	struct req_counters c;

	req_counters(&c);
	printf("req: received %lu, refused (no such queue) %lu, held back (queue full) %lu, "
	       "malformed %lu, out of memory %lu, errors reported back %lu\n",
	       c.rx_req, c.rx_refused_noqueue, c.rx_busy, c.rx_malformed, c.nomem, c.errors_reported);
}
