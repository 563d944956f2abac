/*
 * Remote enqueue, the REQ operation: handles of other nodes' queues, the
 * sending half, and the receive half, which runs in the fabric's receive
 * path with interrupts off, serialized with every other enqueue: the
 * paper's "atomic sequence of steps" of the network interface.  Requests
 * and answers go through the fabric's request/answer facility
 * (net/call/call.h).
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
 *    pages for 4 KiB and up, aligned pieces of pages below (req.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kernel/init.h"
#include "kernel/node.h"
#include "kernel/thread.h"
#include "kernel/trace.h"
#include "kernel/trap.h"
#include "kernel/x86.h"
#include "net/call/call.h"
#include "net/call/names.h"
#include "net/fabric/fabric.h"
#include "net/net.h"
#include "net/req/internal.h"
#include "net/req/wire.h"
#include "net/rmem/rmem.h"

enum { RK_ENQ = 1 };		/* the kind of call a synchronous REQ makes */

struct rqueue {
	int used;
	int node;
	uint64_t addr;
	uint32_t gen;
	int sink;			/* where refusals of asynchronous REQs land */
};

static struct rqueue rqs[REQ_MAX_REMOTE];
int req_ready;

/* --- the receive half (fabric receive path, interrupts off) --------------- */

static void answer(int src, uint32_t tag, int status)
{
	struct req_msg a = { 0 };

	a.op = RQ_STATUS;
	a.tag = tag;
	a.status = status;
	call_answer(src, REQ_PROTO, &a, sizeof a, NULL, 0, 0);
}

/* A verdict from src on one of this node's REQs. */
static void complete(int src, const struct req_msg *m)
{
	struct call *c;

	if (call_tag_is_sink(m->tag)) {
		if (m->status != RQS_OK &&
		    call_sink_error(REQ_PROTO, src, m->tag, req_status_errno(m->status)) == 0)
			req_tab.ctr.errors_reported++;
		return;
	}
	if ((c = call_find(REQ_PROTO, src, m->tag)) != NULL && c->kind == RK_ENQ)
		call_done(c, req_status_errno(m->status));
}

static int req_handler(int src, const uint8_t *payload, size_t len, struct pktbuf *pb)
{
	struct req_msg m;
	struct req_rx v;

	(void)pb;
	trace_point(TS_MECH_RX);
	if (req_wire_parse(payload, len, &m) < 0) {
		req_tab.ctr.rx_malformed++;
		return 0;
	}
	if (m.op == RQ_STATUS) {
		complete(src, &m);
		return 0;
	}
	/*
	 * A notification whose body (the WRITE just before it on this
	 * channel) was refused announces nothing: refused in its turn.
	 */
	if ((m.flags & RQF_BODY) && rmem_marked_refused(src)) {
		if (!call_can_answer(src))
			return -EBUSY;
		rmem_marked_take(src);
		req_tab.ctr.rx_nobody++;
		answer(src, m.tag, RQS_NOBODY);
		return 0;
	}
	req_rx_enq(&req_tab, src, &m, call_can_answer, &v);
	if (v.hold)
		return -EBUSY;
	trace_point(TS_MECH_DONE);	/* the word is in the queue (or refused) */
	if (v.answer)
		answer(src, m.tag, v.status);
	if (v.qid >= 0) {
		struct lqueue *l = &req_lq[v.qid];
		if (l->notify)
			l->notify(l->notify_arg, v.qid, m.word);
		if (l->wq.head)
			waitq_wake_all(&l->wq);
	}
	return 0;
}

static int req_init(void)
{
	int r;

	req_slots_init();
	if (!fabric_ready())
		return -ENODEV;
	if ((r = fabric_register(REQ_PROTO, req_handler)) < 0 ||
	    (r = names_register(NAME_QUEUE, req_resolve)) < 0)
		return r;
	req_ready = 1;
	return 0;
}
INIT_HOOK(INIT_SUBSYS_4, req, req_init);

/* --- the sending half ------------------------------------------------------ */

static int new_handle(int node, uint64_t addr, uint32_t gen)
{
	int sink = call_sink_new(REQ_PROTO, node);

	if (sink < 0)
		return sink;
	irqflags_t f = irq_save();
	for (int i = 0; i < REQ_MAX_REMOTE; i++) {
		if (!rqs[i].used) {
			rqs[i].used = 1;
			rqs[i].node = node;
			rqs[i].addr = addr;
			rqs[i].gen = gen;
			rqs[i].sink = sink;
			irq_restore(f);
			return i;
		}
	}
	irq_restore(f);
	call_sink_free(sink);
	return -ENOSPC;
}

int req_import(int node, const char *name)
{
	struct req_queue_answer a;
	size_t n = strlen(name);
	int r;

	if (!req_ready)
		return -ENODEV;
	if (n == 0 || n >= REQ_NAME_MAX || node < 0 || node >= num_nodes || node == node_id)
		return -EINVAL;
	r = names_lookup(node, NAME_QUEUE, name, &a, sizeof a, CALL_WAIT_NS);
	if (r < 0)
		return r;
	return new_handle(node, a.addr, a.gen);
}

int req_handle(int node, uintptr_t addr, uint32_t gen)
{
	if (node < 0 || node >= num_nodes || node == node_id)
		return -EINVAL;
	return new_handle(node, addr, gen);
}

/* sync: 1 wait for the answer, 0 hand it to the fabric, -1 the same but never wait (-EAGAIN). */
static int enqueue(int rq, uint32_t word, int sync, uint8_t flags)
{
	struct req_msg m = { 0 };
	struct rqueue *h;
	struct call *c;

	if (rq < 0 || rq >= REQ_MAX_REMOTE || !rqs[rq].used)
		return -EBADF;
	h = &rqs[rq];
	m.op = RQ_ENQ;
	m.flags = flags;
	m.addr = h->addr;
	m.gen = h->gen;
	m.word = word;
	trace_point(TS_MECH_SEND);
	if (sync <= 0) {
		/*
		 * A refusal comes back to the handle's sink.  Written where it
		 * goes (fabric_tx_begin), to the incarnation the handle was
		 * made for: -ECONNRESET if its node was bound again since.
		 */
		struct fabric_tx tx;
		int r;
		m.tag = call_sink_tag(h->sink);
		r = fabric_tx_begin(&tx, h->node, call_sink_epoch(h->sink), REQ_PROTO, sizeof m,
				    in_irq || sync < 0 ? FABRIC_NOWAIT : 0);
		if (r < 0)
			return r == -ENOBUFS ? -EAGAIN : r;
		memcpy(tx.payload, &m, sizeof m);
		return fabric_tx_end(&tx);
	}
	if (call_sink_stale(h->sink))
		return -ECONNRESET;	/* a queue of an incarnation that is gone */
	if (!(c = call_new(REQ_PROTO, RK_ENQ, h->node)))
		return -EAGAIN;
	m.flags |= RQF_ACK;
	m.tag = c->tag;
	return call_run(c, &m, sizeof m, NULL, 0, 0, CALL_WAIT_NS);
}

int req_enqueue(int rq, uint32_t word, int sync)
{
	return enqueue(rq, word, sync, 0);
}

int req_take_error(int rq)
{
	if (rq < 0 || rq >= REQ_MAX_REMOTE || !rqs[rq].used)
		return -EBADF;
	return call_sink_take(rqs[rq].sink);
}

int req_sync(int rq, uint64_t timeout_ns)
{
	if (rq < 0 || rq >= REQ_MAX_REMOTE || !rqs[rq].used)
		return -EBADF;
	return call_sync(rqs[rq].sink, timeout_ns);
}

/*
 * The paper's sender writes the body, then enqueues its notification
 * (Introduction: "After writing their message to the receiver's main
 * memory, senders enqueue their message arrival notifications"); on
 * Telegraphos a write the sender has no right to is stopped at the sender
 * by its page tables, so no notification ever follows a write that did
 * not happen.  Here the segment's rights are checked at the receiver.
 * Body and notification go one way, in order on the channel to the
 * receiver; the body is marked (RMEM_MARKED) and the receiver remembers
 * whether it refused it; the notification is marked (RQF_BODY) and is
 * refused if its body was.  So no notification ever announces a body that
 * did not land, and the sender does not wait a round trip.  Body and queue
 * must be on the same node: one channel orders them, and the notification
 * names an offset in that node's segment.
 *
 * The receiver remembers one verdict per sender, the last body's: so a
 * body and its notification go together, no other message's body between
 * them on the channel.  Threads sending messages to one node take turns
 * (msg_busy, from the body to its notification); without it thread A's
 * refused body, thread B's body and B's notification, then A's
 * notification would announce A's body.  The turn is a flag taken by an
 * atomic exchange, a handful of instructions when nobody else sends to
 * that node; a thread that finds it taken sleeps 20 us at a time (the
 * holder may itself wait for the channel's credit).
 */
static uint8_t msg_busy[MAX_NODES];

/* Wait for node's turn, which another thread holds: out of the common path. */
static __attribute__((noinline, cold)) void msg_turn_wait(int node)
{
	while (__atomic_exchange_n(&msg_busy[node], 1, __ATOMIC_ACQUIRE))
		thread_sleep_ns(20000);
}

static inline void turn_take(int node)
{
	if (__atomic_exchange_n(&msg_busy[node], 1, __ATOMIC_ACQUIRE))
		msg_turn_wait(node);
}

static inline void turn_give(int node)
{
	__atomic_store_n(&msg_busy[node], 0, __ATOMIC_RELEASE);
}

/* The node of handle rq, or -EBADF. */
static int rq_node(int rq)
{
	if (rq < 0 || rq >= REQ_MAX_REMOTE || !rqs[rq].used || rqs[rq].node < 0 ||
	    rqs[rq].node >= MAX_NODES)
		return -EBADF;
	return rqs[rq].node;
}

#ifdef NOW_TEST_HOOKS
static void (*body_hook)(void);

void req_test_body_hook(void (*fn)(void))
{
	body_hook = fn;
}
#endif

/* The notification of a body just written (sync as for enqueue). */
static inline int body_notify(int rq, uint32_t word, int sync)
{
#ifdef NOW_TEST_HOOKS
	if (body_hook)
		body_hook();
#endif
	return enqueue(rq, word, sync, RQF_BODY);
}

int reqmsg_begin(int rq)
{
	int node = rq_node(rq);

	if (node < 0)
		return node;
	turn_take(node);
	return 0;
}

int req_enqueue_body(int rq, uint32_t word)
{
	return body_notify(rq, word, -1);
}

void reqmsg_end(int rq)
{
	int node = rq_node(rq);

	if (node >= 0)
		turn_give(node);
}

int reqmsg_send(int rd, uint32_t off, const void *body, uint32_t len, int rq)
{
	int node = rq_node(rq), dnode, r;

	if (node < 0)
		return node;
	if ((r = rmem_desc_info(rd, &dnode, NULL, NULL)) < 0)
		return r;
	if (dnode != node)
		return -EXDEV;
	turn_take(node);
	if ((r = rmem_write(rd, off, body, len, RMEM_MARKED)) == 0)
		r = body_notify(rq, off, 0);
	turn_give(node);
	return r;
}

int reqmsg_poll(int qid, uint32_t *off)
{
	return req_dequeue(qid, off);
}

void req_counters(struct req_counters *out)
{
	irqflags_t f = irq_save();
	*out = req_tab.ctr;
	irq_restore(f);
}

#define COUNTER_TYPE struct req_counters
static const struct counter_row req_rows[] = { REQ_COUNTERS(COUNTER_ROW) };
#undef COUNTER_TYPE

void req_print_stats(void)
{
	struct req_counters c;

	req_counters(&c);
	counters_print("req", req_rows, COUNTER_ROWS(req_rows), &c);
}
