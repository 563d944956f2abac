/*
 * req-stress: every other node REQs sequence-tagged words into one queue
 * on node 0 whose buffers are tiny (32 bytes: five words), so that the
 * overflow handler runs thousands of times, while node 0 dequeues from
 * several preemptible threads.  Every word is checked: none lost, none
 * twice, and each node's words in the order it sent them (the queue is
 * FIFO; dequeue tickets give the order it handed words out in).  Overflows
 * that struck while a dequeue ran are the deferred ones of the paper's
 * do-not-preempt-me protocol.  Also: a REQ to a queue that does not exist
 * or was destroyed is refused; a queue on a misaligned or non-power-of-two
 * buffer cannot be created; a queue exported to one node is refused to
 * the others, and a revoked node's handle fails with -ESTALE; a message
 * whose body WRITE was refused is never announced.  With cap= the
 * queue's overflow copies are capped: past the cap REQs are held back
 * (their senders' windows stop them), none lost, and the copies never
 * hold more than the cap.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/app.h"
#include "kernel/node.h"
#include "kernel/sync.h"
#include "kernel/thread.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"
#include "net/call/barrier.h"
#include "net/fabric/fabric.h"
#include "net/req/req.h"
#include "net/rmem/rmem.h"
#include "tests/apps/check.h"

#define SRC_SHIFT 26			/* word = src << 26 | sequence */
#define SEQ_MASK ((1u << SRC_SHIFT) - 1)
#define DEQUEUERS 3

static int qid = -1, doomed = -1, count;
static long cap;			/* cap= on the copies' bytes, 0: the kernel's */
static size_t chain_max;		/* most bytes the copies held, as dequeuers saw it */
static uint32_t *by_ticket;		/* word dequeued with each ticket */
static volatile uint64_t dequeued;
static uint64_t total;

static void release_senders(void);

static void *dequeuer(void *arg)
{
	uint32_t w[64];
	struct req_stats st;

	(void)arg;
	/*
	 * Start late, once half of all words are queued: a receiver that fell
	 * behind.  The backlog is a long chain of copies, and each dequeue
	 * walks it to the oldest buffer (paper: "find_last_buffer_following_
	 * the_next_pointers"); batches keep do-not-preempt-me set across many
	 * such dequeues.  So the dequeuers are inside dequeues while the
	 * second half of the REQs fills the first buffer: overflows strike
	 * during dequeues (the paper's race) and are deferred.
	 */
	for (int i = 0; i < 6000; i++) {
		if (req_queue_stats(qid, &st) < 0 || st.enqueued >= total / 2 ||
		    st.capped_overflows > 0)
			break;
		thread_sleep_ns(10000000);
	}
	release_senders();
	while (dequeued < total) {
		uint64_t t;
		int n = req_dequeue_many(qid, w, 64, &t);
		if (req_queue_stats(qid, &st) == 0 && st.chain_bytes > chain_max)
			chain_max = st.chain_bytes;
		if (n > 0) {
			for (int i = 0; i < n; i++)
				if (t + (uint64_t)i < total)
					by_ticket[t + (uint64_t)i] = w[i];
			__atomic_fetch_add(&dequeued, (uint64_t)n, __ATOMIC_RELAXED);
		} else if (n == 0) {
			req_wait(qid, 100000000);
		} else {
			return NULL;
		}
	}
	return NULL;
}

static void check_order(uint64_t *lost, uint64_t *dup, uint64_t *fifo)
{
	uint32_t next[MAX_NODES] = { 0 };
	uint8_t *seen = calloc(total, 1);

	*lost = *dup = *fifo = 0;
	for (uint64_t t = 0; t < dequeued && t < total; t++) {
		uint32_t w = by_ticket[t], src = w >> SRC_SHIFT, seq = w & SEQ_MASK;
		if (src == 0 || src >= (uint32_t)num_nodes || seq >= (uint32_t)count) {
			(*dup)++;		/* a word nobody sent */
			continue;
		}
		uint64_t idx = (uint64_t)(src - 1) * (uint64_t)count + seq;
		if (seen && seen[idx]++)
			(*dup)++;
		if (seq != next[src])
			(*fifo)++;
		if (seq >= next[src])
			next[src] = seq + 1;
	}
	for (uint64_t i = 0; seen && i < total; i++)
		if (!seen[i])
			(*lost)++;
	free(seen);
}

/*
 * A destroy (and a create after it) while a dequeue runs on the queue,
 * "doomed", which holds the one word node 1 put in: the dequeuer sleeps
 * inside its dequeue (a test hook between the dequeue's steps), holding
 * the queue's lock.  The destroy must wait for it: the dequeue finishes on
 * the queue it started on and takes that word (a destroy that did not
 * wait would free the queue under it), and its unlock finds the lock it
 * took.
 */
static struct sem dd_started;
static int dd_q = -1, dd_got = -2;
static uint32_t dd_word;

static void dd_hook(struct req_q *q, int step)
{
	static int once;

	(void)q;
	if (step == 1 && !once) {
		once = 1;
		sem_post(&dd_started);
		thread_sleep_ns(50000000);	/* the main thread runs meanwhile */
	}
}

/*
 * The paper's deferred overflow, made certain: an overflow that strikes
 * while a dequeue holds the queue.  The senders hold back their last HOLD
 * words for two barriers.  The first dequeuer meets them at the first
 * outside any dequeue: every word sent before it has then arrived (frames
 * behind a REQ held back inside a dequeue would hold the barrier's up
 * too).  The second is met from inside node 0's next dequeue, in its
 * critical section: the senders' words go out only once that dequeue
 * holds the queue, which then waits there (5 s at most) until they
 * overflow it, by then a backlog of full buffers.  So the claim does not
 * rest on how the host schedules the nodes (words sent after one barrier
 * could all land before node 0's dequeuer ran again).  Not with cap=:
 * capped senders wait for room that only dequeues make.
 */
#define HOLD 64

static int released;			/* 1: the first barrier is under way; 2: it is through */

static void release_senders(void)
{
	if (cap > 0 || count <= HOLD || __atomic_exchange_n(&released, 1, __ATOMIC_RELAXED))
		return;
	EXPECT(cluster_barrier(60000000000ULL) == 0, "the senders never reached their last words");
	__atomic_store_n(&released, 2, __ATOMIC_RELEASE);
}

static void pause_hook(struct req_q *q, int step)
{
	static int taken;
	struct req_stats st;

	(void)q;
	if (step != 1 || __atomic_load_n(&released, __ATOMIC_ACQUIRE) != 2 ||
	    __atomic_exchange_n(&taken, 1, __ATOMIC_RELAXED))
		return;
	/* Inside the critical section: the senders' last words go out now. */
	EXPECT(cluster_barrier(60000000000ULL) == 0, "the senders never took the go for their last words");
	for (int i = 0; i < 5000; i++) {
		if (req_queue_stats(qid, &st) < 0 || st.deferred_overflows > 0)
			break;
		thread_sleep_ns(1000000);
	}
}

static void *dd_dequeuer(void *arg)
{
	(void)arg;
	dd_got = req_dequeue(dd_q, &dd_word);
	return NULL;
}

static void destroy_during_dequeue(int q)
{
	sem_init(&dd_started, 0);
	dd_q = q;
	EXPECT(req_test_dequeue_hook(dd_q, dd_hook) == 0, "hook");
	struct thread *t = thread_create("dd-dequeuer", dd_dequeuer, NULL, PRIO_NORMAL, 0);
	EXPECT(t != NULL, "thread");
	if (!t)
		return;
	sem_wait(&dd_started);
	/* The dequeuer holds the lock and sleeps inside its dequeue. */
	int r = req_destroy(dd_q);
	uint32_t w;
	EXPECT(req_dequeue(dd_q, &w) == -EBADF, "a dequeue of the destroyed queue");
	int q2 = req_create(64);
	thread_join(t);
	EXPECT(r == 0, "destroy: %d", r);
	EXPECT(dd_got == 1 && dd_word == 1, "the running dequeue: %d, word %u (want 1, the one REQ "
	       "into doomed)", dd_got, dd_word);
	EXPECT(q2 >= 0 && req_dequeue(q2, &w) == 0, "the new queue is not empty");
	if (q2 >= 0)
		req_destroy(q2);
}

/* The refusals: no such queue, destroyed queue, bad buffers. */
static void refusals(void)
{
	static uint8_t area[256] __attribute__((aligned(256)));

	EXPECT(req_create_at(area + 4, 64) == -EINVAL, "misaligned buffer accepted");
	EXPECT(req_create_at(area, 96) == -EINVAL, "non-power-of-two buffer accepted");
	EXPECT(req_create(100) == -EINVAL, "req_create(100) accepted");
	EXPECT(req_create(131072) == -EINVAL, "a 128 KiB buffer accepted");
	if (node_id == 1) {
		/* An address that is no queue; then a real one, destroyed. */
		int h = req_handle(0, 0x123440, 1);
		EXPECT(h >= 0 && req_enqueue(h, 7, 1) == -ENOENT, "REQ to no queue not refused");
		int d = req_import(0, "doomed");
		EXPECT(d >= 0, "import doomed: %d", d);
		EXPECT(req_enqueue(d, 1, 1) == 0, "REQ to a live queue refused");
		cluster_barrier(60000000000ULL);		/* node 0 checks it, destroys it */
		cluster_barrier(60000000000ULL);
		int r = req_enqueue(d, 2, 1);
		EXPECT(r == -ENOENT, "REQ to a destroyed queue not refused: %d", r);
		EXPECT(req_enqueue(d, 3, 0) == 0 && req_sync(d, 10000000000ULL) == -ENOENT,
		       "asynchronous REQ to a destroyed queue: refusal not reported");
	} else if (node_id == 0) {
		int q = doomed;
		cluster_barrier(60000000000ULL);
		/* Its one word is taken by a dequeue that a destroy meets half done. */
		destroy_during_dequeue(q);
		cluster_barrier(60000000000ULL);
	} else {
		cluster_barrier(60000000000ULL);
		cluster_barrier(60000000000ULL);
	}
}

/*
 * Rights (with 3 nodes or more): node 0 exports "private" to node 2 alone;
 * node 1 cannot import it; node 2 enqueues, is revoked, and its handle
 * then fails with -ESTALE, synchronously and through req_sync; nothing it
 * sent after the revocation reaches the queue.
 */
static void rights(void)
{
	static int qp = -1;

	if (num_nodes < 3)
		return;
	/* After every node is done with "doomed": qp may take its buffer. */
	cluster_barrier(60000000000ULL);
	if (node_id == 0) {
		qp = req_create(64);
		EXPECT(qp >= 0 && req_export_for(qp, "private", 2) == 0, "export private: %d", qp);
	}
	cluster_barrier(60000000000ULL);
	int h = -1;
	if (node_id == 1)
		EXPECT(req_import(0, "private") == -EACCES, "private queue imported by node 1");
	if (node_id == 2) {
		h = req_import(0, "private");
		EXPECT(h >= 0 && req_enqueue(h, 11, 1) == 0, "REQ by the granted node: %d", h);
	}
	cluster_barrier(60000000000ULL);
	if (node_id == 0) {
		uint32_t w;
		EXPECT(req_dequeue(qp, &w) == 1 && w == 11, "the granted node's REQ");
		EXPECT(req_revoke(qp, 2) == 0, "revoke");
	}
	cluster_barrier(60000000000ULL);
	if (node_id == 2 && h >= 0) {
		int r = req_enqueue(h, 12, 1);
		EXPECT(r == -ESTALE, "REQ on a revoked handle: %d", r);
		EXPECT(req_enqueue(h, 13, 0) == 0 && (r = req_sync(h, 10000000000ULL)) == -ESTALE,
		       "asynchronous REQ on a revoked handle: %d", r);
		EXPECT(req_import(0, "private") == -EACCES, "revoked node imported again");
	}
	cluster_barrier(60000000000ULL);
	if (node_id == 0) {
		uint32_t w;
		struct req_counters c;
		req_counters(&c);
		EXPECT(req_dequeue(qp, &w) == 0, "a revoked node's REQ was stored");
		EXPECT(c.rx_stale >= 2, "stale REQs not counted (%lu)", c.rx_stale);
		req_destroy(qp);
	}
}

/*
 * Message-arrival notification: node 1 writes 50 message bodies into node
 * 0's segment and REQs each one's offset into node 0's notification
 * queue; node 0 polls the queue and finds each body complete.  Then two
 * threads of node 1 send at once: A's body is refused and A stops between
 * its body and its notification (a test hook) while B sends a good
 * message.  Node 0 must see B's message only: A's notification refused.
 */
static struct sem ab_in_a;
static int ab_rd = -1, ab_rq = -1, ab_r = -2;
static uint32_t ab_off;

static void ab_hook(void)
{
	static int once;

	if (!once) {
		once = 1;
		sem_post(&ab_in_a);
		thread_sleep_ns(50000000);	/* thread B tries to send meanwhile */
	}
}

static void *ab_sender(void *arg)
{
	static uint8_t body[40];

	(void)arg;
	memset(body, 0xaa, sizeof body);
	ab_r = reqmsg_send(ab_rd, ab_off, body, sizeof body, ab_rq);
	return NULL;
}
static void notifications(void)
{
	static uint8_t inbox[4096];
	static int nq = -1;
	enum { MSGS = 50, LEN = 40 };

	if (node_id == 0) {
		nq = req_create(128);
		EXPECT(nq >= 0 && req_export(nq, "notify") == 0, "notification queue");
		EXPECT(seg_export("inbox", inbox, sizeof inbox, RMEM_W) >= 0, "inbox segment");
	}
	cluster_barrier(60000000000ULL);
	if (node_id == 1) {
		int rd = rmem_import(0, "inbox"), rq = req_import(0, "notify");
		uint8_t body[LEN];
		EXPECT(rd >= 0 && rq >= 0, "imports %d %d", rd, rq);
		for (int m = 0; rd >= 0 && rq >= 0 && m < MSGS; m++) {
			for (int i = 0; i < LEN; i++)
				body[i] = (uint8_t)(m * 7 + i);
			EXPECT(reqmsg_send(rd, (uint32_t)(m * LEN), body, LEN, rq) == 0, "reqmsg_send %d", m);
		}
		if (rd >= 0 && rq >= 0) {
			/* A body the receiver refuses (stale descriptor): not announced. */
			memset(body, 0xee, LEN);
			EXPECT(rmem_test_forge(rd, -1, 0x7ffffff0, -1, -1) == 0, "forge");
			int r = reqmsg_send(rd, MSGS * LEN, body, LEN, rq);
			EXPECT(r == 0, "reqmsg_send with a refused body: %d", r);
			/* Both are refused, each to its own sink: the body -ESTALE, its notification -ENODATA. */
			r = rmem_sync(rd, 30000000000ULL);
			EXPECT(r == -ESTALE, "the refused body's verdict: %d, not -ESTALE", r);
			r = req_sync(rq, 30000000000ULL);
			EXPECT(r == -ENODATA, "the notification of a refused body: %d, not -ENODATA", r);
			/* Two threads at once: A's refused body, then B's good message. */
			sem_init(&ab_in_a, 0);
			ab_rd = rmem_import(0, "inbox");
			ab_rq = req_import(0, "notify");
			ab_off = (MSGS + 1) * LEN;
			EXPECT(ab_rd >= 0 && ab_rq >= 0 && rmem_test_forge(ab_rd, -1, 0x7ffffff0, -1, -1) == 0,
			       "thread A's descriptors %d %d", ab_rd, ab_rq);
			req_test_body_hook(ab_hook);
			struct thread *a = thread_create("msg-a", ab_sender, NULL, PRIO_NORMAL, 0);
			EXPECT(a != NULL, "thread A");
			if (a) {
				sem_wait(&ab_in_a);
				for (int i = 0; i < LEN; i++)
					body[i] = (uint8_t)((MSGS + 2) * 7 + i);
				int rdb = rmem_import(0, "inbox");	/* rd is stale (forged above) */
				r = reqmsg_send(rdb, (MSGS + 2) * LEN, body, LEN, rq);
				EXPECT(r == 0, "thread B's message: %d", r);
				thread_join(a);
				EXPECT(ab_r == 0, "thread A's message: %d", ab_r);
				r = req_sync(ab_rq, 30000000000ULL);
				EXPECT(r == -ENODATA, "thread A's notification: %d, not -ENODATA", r);
				EXPECT(rmem_sync(ab_rd, 30000000000ULL) == -ESTALE, "thread A's body");
				EXPECT(req_sync(rq, 30000000000ULL) == 0 && rmem_sync(rdb, 30000000000ULL) == 0,
				       "thread B's message");
			}
			req_test_body_hook(NULL);
			/* Body and queue on different nodes: refused before anything is sent. */
			if (num_nodes > 2) {
				int other = req_handle(2, 0x100000, 1);
				EXPECT(other >= 0 && reqmsg_send(rd, 0, body, LEN, other) == -EXDEV,
				       "body and queue on different nodes accepted");
			}
		}
	} else if (node_id == 0) {
		int got = 0, bad = 0;
		uint64_t end = cycles() + ns_to_cycles(30000000000ULL);
		/* The 50, then thread B's (message MSGS + 2): never thread A's (MSGS + 1). */
		while (got < MSGS + 1 && cycles() < end) {
			uint32_t off;
			if (reqmsg_poll(nq, &off) != 1) {
				req_wait(nq, 100000000);
				continue;
			}
			int m = (int)off / LEN, want = got < MSGS ? got : MSGS + 2;
			/* The body is complete when its notification is there. */
			for (int i = 0; i < LEN; i++)
				if (inbox[off + (uint32_t)i] != (uint8_t)(m * 7 + i))
					bad++;
			EXPECT(m == want, "notification of message %d where %d was due", m, want);
			got++;
		}
		EXPECT(got == MSGS + 1 && bad == 0, "%d notifications, %d bad bytes", got, bad);
	}
	cluster_barrier(60000000000ULL);
	if (node_id == 0) {
		uint32_t off;
		EXPECT(reqmsg_poll(nq, &off) == 0, "a message announced whose body was refused");
	}
}

static const struct argspec stress_args[] = {
	{ "count", ARG_INT, 1, 1000000, "REQs from each node (default 12000 / (nodes - 1))" },
	{ "bytes", ARG_INT, 32, 65536, "size of the queue's first buffer (default 32)" },
	{ "cap", ARG_INT, 0, 1 << 20, "cap on the bytes of the queue's overflow copies (default: the kernel's)" },
	{ NULL, 0, 0, 0, NULL },
};

static int req_stress_main(void)
{
	struct thread *t[DEQUEUERS];
	uint64_t lost, dup, fifo, t0;

	count = (int)arg_int("count", 12000 / (num_nodes > 1 ? num_nodes - 1 : 1));
	total = (uint64_t)count * (uint64_t)(num_nodes - 1);
	if (!fabric_ready() || fabric_wait_peers(60000000000ULL) < 0)
		return 1;
	cap = arg_int("cap", 0);
	if (node_id == 0) {
		qid = req_create((size_t)arg_int("bytes", 32));
		if (qid >= 0 && cap > 0)
			req_set_cap(qid, (size_t)cap);
		doomed = req_create(64);
		by_ticket = calloc(total, sizeof *by_ticket);
		if (qid < 0 || doomed < 0 || !by_ticket || req_export(qid, "stress") < 0 ||
		    req_export(doomed, "doomed") < 0) {
			printf("req-stress: cannot create the queue (%d)\n", qid);
			return 1;
		}
	}
	if (cluster_barrier(60000000000ULL) < 0)
		return 1;
	refusals();
	rights();
	notifications();
	if (cluster_barrier(60000000000ULL) < 0)
		return 1;

	t0 = cycles();
	if (node_id == 0) {
		req_test_dequeue_hook(qid, pause_hook);
		for (int i = 0; i < DEQUEUERS; i++)
			t[i] = thread_create("dequeuer", dequeuer, NULL, PRIO_NORMAL, 0);
		for (int i = 0; i < DEQUEUERS; i++)
			if (t[i])
				thread_join(t[i]);
	} else {
		int rq = req_import(0, "stress");
		EXPECT(rq >= 0, "import stress: %d", rq);
		/* The last HOLD words once node 0 is inside a dequeue (pause_hook). */
		int hold = cap > 0 || count <= HOLD ? -1 : count - HOLD;
		for (int i = 0; rq >= 0 && i < count; i++) {
			if (i == hold) {
				int b1 = cluster_barrier(60000000000ULL);
				int b2 = b1 < 0 ? b1 : cluster_barrier(60000000000ULL);
				EXPECT(b1 == 0, "node 0's dequeuers never started: %d", b1);
				EXPECT(b2 == 0, "node 0's dequeue never held the queue: %d", b2);
				if (b2 < 0)
					break;
			}
			int r = req_enqueue(rq, (uint32_t)node_id << SRC_SHIFT | (uint32_t)i, 0);
			if (r < 0) {
				EXPECT(r == 0, "req_enqueue %d: %d", i, r);
				break;
			}
		}
		if (rq >= 0)
			EXPECT(req_sync(rq, 60000000000ULL) == 0, "REQs refused");
	}
	uint64_t ms = cycles_to_ns(cycles() - t0) / 1000000;
	cluster_barrier(120000000000ULL);

	if (node_id == 0) {
		struct req_stats st;
		req_queue_stats(qid, &st);
		check_order(&lost, &dup, &fifo);
		printf("req-stress: %lu words from %d nodes in %lu ms; queue held back REQs %lu times\n",
		       dequeued, num_nodes - 1, ms, st.refused_busy);
		EXPECT(lost == 0 && dup == 0 && fifo == 0, "lost %lu dup %lu fifo %lu", lost, dup, fifo);
		EXPECT(st.overflows > 100, "only %lu overflows", st.overflows);
		/* A capped queue keeps no long backlog: overflows during dequeues are rare. */
		EXPECT(cap > 0 || st.deferred_overflows > 0, "no overflow struck during a dequeue");
		if (cap > 0) {
			EXPECT(st.capped_overflows > 0, "the cap of %ld bytes was never reached", cap);
			EXPECT(chain_max <= (size_t)cap, "copies held %zu bytes, above the cap %ld",
			       chain_max, cap);
			printf("req-stress: overflow cap %ld bytes reached %lu times, copies held at most %zu\n",
			       cap, st.capped_overflows, chain_max);
		}
		result("enqueued=%lu dequeued=%lu lost=%lu dup=%lu fifo_violations=%lu overflows=%lu "
		       "deferred_overflows=%lu buffers_linked=%lu held_back=%lu ms=%lu",
		       st.enqueued, dequeued, lost, dup, fifo, st.overflows + st.deferred_overflows,
		       st.deferred_overflows, st.buffers_linked, st.refused_busy, ms);
	}
	req_print_stats();
	return check_failures ? 1 : 0;
}

APP(req_stress, "req-stress",
    "remote enqueue from every node into one tiny queue; checks FIFO and exactly-once",
    req_stress_main, stress_args, 2);
