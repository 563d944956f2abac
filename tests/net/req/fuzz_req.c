/*
 * libFuzzer target: the REQ receive path as the kernel runs it
 * (net/req/remote.c): each message goes through req_wire_parse and, if
 * an RQ_ENQ, through req_rx_enq on a queue table (net/req/qtab.c) of
 * three queues of tiny buffers inside a guarded arena below 4 GiB.
 *
 * Input: a sequence of (length, control, message) chunks.  The control
 * byte picks the sender (node 0..3; this node is 0) and whether an answer
 * can go now, runs dequeues (with the do-not-preempt-me bit, and REQs
 * that overflow during them), revokes or grants the sender, exhausts
 * memory, and destroys and recreates a queue.  A message's address below
 * 4 selects queue 0..2 (3: no queue), and a generation without its top bit
 * becomes the sender's current ticket, so that the fuzzer reaches the
 * queues; every other value goes through as it came.
 *
 * The queues' overflow copies are capped: queue 0 at two copies, queue 1
 * at none (its first buffer alone), queue 2 at the kernel's default.
 *
 * Checks: nothing is ever written outside the buffers the queues own;
 * the copies never hold more than the cap, and chain_bytes is what they
 * hold;
 * a REQ is stored only from a sender with the right and the current
 * generation; each queue hands out each stored word once and in FIFO
 * order; a held REQ changed nothing; no buffer leaks.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "net/req/qtab.h"
#include "net/req/wire.h"

#define ARENA (512u << 10)	/* small: exhausting it exercises the no-memory path too */
#define GUARD 0xa5
#define NQ 3

static uint8_t *arena;
static size_t used;
static int live, starve;
static uint8_t owned[ARENA / 32];	/* one flag per 32-byte unit handed out */
static struct req_qtab tab;

static void *get(void *ctx, size_t bytes)
{
	(void)ctx;
	size_t a = (used + bytes - 1) & ~(bytes - 1);
	if (starve || a + bytes > ARENA)
		return NULL;
	used = a + bytes;
	live++;
	memset(owned + a / 32, 1, bytes / 32);
	return arena + a;
}

static void put(void *ctx, void *b, size_t bytes)
{
	(void)ctx;
	size_t a = (size_t)((uint8_t *)b - arena);
	memset(owned + a / 32, 0, bytes / 32);
	memset(b, GUARD, bytes);
	live--;
}

static const struct req_alloc alloc = { get, put, NULL };

struct fq {
	int qid;
	uint32_t *first;
	size_t bytes;
	uint32_t next_out;	/* the word we expect next (words are a counter) */
	uint32_t next_in;
};

static struct fq qs[NQ];
static const size_t caps[NQ] = { 128, 0, REQ_CHAIN_CAP };

/* The copies after the first buffer: their bytes, within the cap. */
static void check_chain(const struct req_q *q)
{
	size_t bytes = 0;

	for (const uint32_t *b = req_buf_next(q->first); b; b = req_buf_next(b))
		bytes += (size_t)req_buf_size(b) * 4;
	if (bytes != q->chain_bytes || bytes > q->cap_bytes)
		abort();
}

/* One RQ_ENQ as the kernel's receive path takes it, with the model's checks. */
static int answer_ok;
static int can_answer_now(int src) { (void)src; return answer_ok; }

static void deliver(struct req_msg *m, int src, int can_answer)
{
	struct fq *f = NULL;

	if (m->addr < 4)
		m->addr = m->addr < NQ ? (uintptr_t)qs[m->addr].first : 0x10;
	for (int i = 0; i < NQ; i++)
		if ((uintptr_t)qs[i].first == m->addr)
			f = &qs[i];
	uint32_t g;
	if (f && !(m->gen & 0x80000000u) && req_qtab_ticket(&tab, f->qid, src, &g) == 0)
		m->gen = g;
	if (f)
		m->word = f->next_in;	/* ours to choose: a counter, to check FIFO */
	int allowed = f && tab.e[f->qid].right[src] && tab.e[f->qid].gen[src] == m->gen;
	size_t before = f ? req_q_count(&tab.e[f->qid].q) : 0;
	struct req_rx v;
	answer_ok = can_answer;
	req_rx_enq(&tab, src, m, can_answer_now, &v);
	if (v.qid >= 0) {
		if (!f || v.qid != f->qid || !allowed)
			abort();	/* stored without the right, or into the wrong queue */
		f->next_in++;
	} else if (f && req_q_count(&tab.e[f->qid].q) != before) {
		abort();		/* refused or held, yet something changed */
	}
	if (v.hold && v.answer)
		abort();
	if (!can_answer && v.answer)
		abort();
	if (v.answer && (v.status < 0 || v.status >= RQS_NSTATUS))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!arena) {
		arena = mmap(NULL, ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
		if (arena == MAP_FAILED)
			abort();
	}
	/* Only the part the previous run handed out can have changed. */
	memset(arena, GUARD, used ? used : ARENA);
	memset(owned, 0, sizeof owned);
	used = 0;
	live = 0;
	starve = 0;
	req_qtab_init(&tab, 0);
	for (int i = 0; i < NQ; i++) {
		qs[i].bytes = 32u << i;
		qs[i].first = get(NULL, qs[i].bytes);
		qs[i].qid = req_qtab_create(&tab, -1, qs[i].first, qs[i].bytes, &alloc);
		if (qs[i].qid == i)
			req_q_set_cap(&tab.e[i].q, caps[i]);
		if (qs[i].qid != i || req_qtab_export(&tab, i, i == 2 ? "two" : i ? "one" : "zero",
							i == 1 ? 2 : -1) != 0)
			abort();
		qs[i].next_in = qs[i].next_out = 0;
	}

	while (size >= 2) {
		size_t n = data[0] % 64, ctl = data[1];
		int src = (int)(ctl & 3), can_answer = !(ctl & 4);
		data += 2;
		size -= 2;
		if (n > size)
			n = size;
		struct req_msg m;
		if (req_wire_parse(data, n, &m) == 0 && m.op == RQ_ENQ)
			deliver(&m, src, can_answer);
		data += n;
		size -= n;

		struct fq *f = &qs[(ctl >> 3) % NQ];
		struct req_q *q = &tab.e[f->qid].q;
		if ((ctl & 0x0c) == 0x0c)
			starve = !starve;
		if (ctl & 0x10) {
			q->dnp = 1;
			if (ctl & 0x20)		/* an "interrupt" during the dequeue: REQs from src */
				for (int k = 0; k < 8; k++) {
					struct req_msg e = { .op = RQ_ENQ, .addr = (uint64_t)f->qid };
					deliver(&e, src, 1);
				}
			uint32_t w;
			int got = req_q_dequeue(q, &w);
			q->dnp = 0;
			if (got < 0)
				abort();	/* only the table writes the headers here */
			if (got) {
				if (w != f->next_out)
					abort();	/* FIFO or exactly-once broken */
				f->next_out++;
			}
			if (q->full)
				req_q_make_space(q);
		}
		switch (ctl & 0xc0) {
		case 0x40:
			req_qtab_revoke(&tab, f->qid, src);
			break;
		case 0x80:
			req_qtab_grant(&tab, f->qid, src);
			break;
		case 0xc0:
			if (req_qtab_destroy(&tab, f->qid) != 0)
				abort();
			memset(f->first, 0, f->bytes);
			if (req_qtab_create(&tab, f->qid, f->first, f->bytes, &alloc) != f->qid ||
			    req_qtab_grant(&tab, f->qid, -1) != 0)
				abort();
			req_q_set_cap(&tab.e[f->qid].q, caps[f->qid]);
			f->next_in = f->next_out = 0;
			break;
		}
		if (req_q_count(&tab.e[f->qid].q) != f->next_in - f->next_out)
			abort();
		for (int i = 0; i < NQ; i++)
			check_chain(&tab.e[i].q);
	}
	/* Nothing outside owned buffers changed. */
	for (size_t i = 0; i < used; i++)
		if (!owned[i / 32] && arena[i] != GUARD)
			abort();
	for (size_t i = used; i < used + 256 && i < ARENA; i++)
		if (arena[i] != GUARD)
			abort();
	for (int i = 0; i < NQ; i++)
		req_qtab_destroy(&tab, qs[i].qid);
	if (live != NQ)
		abort();	/* only the three first buffers remain */
	return 0;
}
