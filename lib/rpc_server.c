/*
 * RPC over protected remote memory, the server: argument stacks and their
 * threads (the client's bind, call and unbind are rpc_client.c).  See
 * rpc.h; the remote-memory paper, section 3.1.
 *
 * An argument stack (one segment):
 *	  0  owner word (8): 0 = free; claimed for one call (or one binding
 *	     request) by the caller with rmem_cas, given back with a WRITE of 0
 *	  8  binding request: op, node, reply segment name or binding (RMEM_INTR)
 *	 64  call header (32): the flag word (call number), proc, len, frames,
 *	     CRC, binding and its secret
 *	 96  arguments, contiguous, as a local call would see them
 * A client's reply segment holds one struct rpc_reply per stack (the answer to
 * a call on stack k lands in slot k), written by the server.
 *
 * Choices where the paper leaves one (DESIGN.md asks for them here):
 *  - The flag word is the call number in the header.  The header frame
 *    carries the header and the first RMEM_MAX_XFER - 32 argument bytes, so
 *    a call of up to 1376 argument bytes (Simple, MW-32/64/128) is one
 *    WRITE; the receive path applies a frame whole before it notifies, so
 *    the flag is never seen before its arguments.  A longer call sends its
 *    later argument frames first and the header frame last (3.1.1: "the
 *    client activates the server by writing a flag word"; 3.1.2: "the
 *    arrival of the last cell indicates that the previous cells have
 *    either arrived or been lost").
 *  - The server waits by interrupt, not by spinning: every frame of a call
 *    carries RMEM_INTR; the stack's notify callback (receive path, short)
 *    records argument frames in the mask and wakes the stack's thread on
 *    the header frame, or on any frame once the header is in.  The paper
 *    spins at user level; under QEMU's TCG a spinning guest starves the
 *    emulator.
 *  - A result is also the final mask (every frame in): the no-loss case
 *    costs no acknowledgement frame of its own.
 *  - On the reliable channel (the default) a frame can be late, never
 *    lost, and the header frame comes last: the server acts on it alone,
 *    with no timeout, and never finds a frame missing.
 *  - With RPC_UNRELIABLE everything of a call travels raw, as the paper's
 *    cells did: argument frames, masks and results.  Losses are found by
 *    two timeouts: the server's (SACK_NS quiet mid-call: write the mask of
 *    what arrived, the header bit clear if the header is what was lost)
 *    and the client's (nothing heard: write the header frame again, which
 *    draws a mask, or the kept result if the call already ran: at most
 *    once).  Binding messages always go reliably.
 *  - Raw frames carry no CRC of the fabric's, and a raw frame duplicated or
 *    delayed past its call could pass for a frame of the next one (the
 *    paper relies on ATM's in-order delivery).  So a raw call carries a
 *    CRC-32C of its header and arguments, checked before the procedure
 *    runs; on a mismatch the server asks for every frame again.  A raw
 *    reply carries its own CRC.
 *  - 3.1.1 has the client pick "an available stack" per call; it takes
 *    one with a compare-and-swap on the owner word and gives it back when
 *    its answer is in.  A binding is the server's record of the client
 *    (RPC_MAX_BINDINGS per service): where its answers go, and a secret
 *    drawn at binding that each call's header must carry, so that no node
 *    has its calls answered into another's reply segment.  A free stack
 *    may be claimed by every node and written by none; the claim (its
 *    compare-and-swap carries RMEM_INTR) gives the claimer's node alone
 *    the right to write it until it gives the stack back, so no other
 *    node reaches a call being built; the write inhibit protects the
 *    call while it runs, as the paper has it.
 *  - At most once with calls of one binding on any stack: the binding
 *    keeps the window of the last SEEN_WINDOW call numbers run.  A number
 *    in it is answered from the result its stack kept, if that stack's
 *    last call was it (a raw client's header written again), and never
 *    runs again; a number older than the window is refused (counted as
 *    stale; its caller's own timeout ends the call).
 *  - A call of several frames carries the CRC too, also on the reliable
 *    channel: stacks are shared, so a stale raw frame of another binding
 *    could land amid its arguments.
 *  - Call-by-reference (rpc_ref_read, rpc_ref_write) reaches the caller's
 *    memory by the segment number and generation in the reference
 *    (rmem_attach, no name service): the caller's node checks the rights
 *    and bounds it exported, and a reference is only ever used on the
 *    node of the binding whose call is running.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/crc.h"
#include "kernel/incarnation.h"
#include "kernel/node.h"
#include "kernel/sync.h"
#include "kernel/thread.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"
#include "lib/rpc.h"
#include "lib/rpc_wire.h"
#include "net/fabric/fabric.h"
#include "net/net.h"
#include "net/rmem/rmem.h"

/* --- the server ------------------------------------------------------------ */

/* A binding: a client registered with the service (3.1.1, "at bind time"). */
struct rpc_bound {
	int used;
	int node;
	int reply_rd;
	int raw;			/* its calls come as raw frames: answer so */
	uint64_t secret;
	struct rpc_seen seen;		/* at most once across the stacks */
	int running;			/* its calls running now (unbinding waits for none) */
};

struct rpc_stack {
	struct rpc_server *srv;
	int k, seg;
	uint8_t *base;
	struct waitq wq;
	/* Set by the notify callback (receive path); the thread reads them with interrupts off. */
	volatile uint64_t mask;		/* argument frames in */
	volatile int hdr_new, ctl_new;
	volatile uint64_t events;
	volatile int kick;		/* set with each event: what the thread polls the NIC for */
	volatile uint64_t last_arrival;	/* cycles */
	/* The stack's thread only. */
	volatile int hdr_seen;		/* a call's header is in (read by the callback) ... */
	struct call_hdr cur;		/* ... here it is ... */
	struct rpc_bound *cur_b;	/* ... and its binding */
	int tries;			/* masks written on timeouts since the last progress */
	uint32_t gen;			/* replies written from this stack */
	struct rpc_bound *last_b;	/* the last call run here, and its answer */
	uint32_t last_seq;
	int32_t last_status;
	uint64_t last_result;
	int run_node;			/* the node whose call runs now */
	int writer;			/* the node that may write the stack (its claimer), -1 none */
	int ref_seg;			/* call-by-reference: READs land here (-1: none yet) */
	uint8_t *ref_buf;
	struct rpc_server_stats st;
};

/* The stack whose procedure this thread runs (call-by-reference). */
static __thread struct rpc_stack *running_here;

/* The 64-bit number a header's 32-bit one stands for: the nearest to the highest run. */
static uint64_t seen_extend(const struct rpc_seen *w, uint32_t seq)
{
	return w->top + (uint64_t)(int64_t)(int32_t)(seq - (uint32_t)w->top);
}

int rpc_seen_check(const struct rpc_seen *w, uint32_t seq)
{
	uint64_t s = seen_extend(w, seq);

	if ((int64_t)s <= 0)
		return SEEN_OLD;		/* numbers start at 1 */
	if (s > w->top)
		return s - w->top <= SEEN_AHEAD ? SEEN_NEW : SEEN_OLD;
	if (w->top - s >= SEEN_WINDOW)
		return SEEN_OLD;
	return w->bits[s % SEEN_WINDOW / 64] >> (s % 64) & 1 ? SEEN_DONE : SEEN_NEW;
}

void rpc_seen_mark(struct rpc_seen *w, uint32_t seq)
{
	uint64_t s = seen_extend(w, seq);

	if (s > w->top) {
		/* The window moves up: the numbers it leaves behind are cleared for the new ones. */
		if (s - w->top >= SEEN_WINDOW)
			memset(w->bits, 0, sizeof w->bits);
		else
			for (uint64_t t = w->top + 1; t != s; t++)
				w->bits[t % SEEN_WINDOW / 64] &= ~(1ULL << (t % 64));
		w->top = s;
	}
	w->bits[s % SEEN_WINDOW / 64] |= 1ULL << (s % 64);
}

/* The node a token names ((node + 1) << 32 | nonce), or -1. */
static int token_node(uint64_t token)
{
	uint32_t n = (uint32_t)(token >> 32);

	return n == 0 || n > (uint32_t)num_nodes ? -1 : (int)n - 1;
}

/*
 * The owner word changed (a claim or a release, both with RMEM_INTR; irq):
 * a claimed stack may be written by its claimer's node alone, a free one
 * by nobody; every node keeps the right to claim it (a compare-and-swap).
 * A token naming no node leaves the stack closed to writes.
 */
static void owner_rights(struct rpc_stack *st)
{
	uint64_t owner = __atomic_load_n((uint64_t *)(st->base + CTL_OFF), __ATOMIC_SEQ_CST);
	int node = owner ? token_node(owner) : -1;

	if (node == node_id)
		node = -1;
	if (node == st->writer)
		return;
	/* Only the node that could write and the one that may now change: no pass over every node. */
	if (st->writer >= 0)
		seg_grant(st->seg, st->writer, RMEM_A);
	if (node >= 0)
		seg_grant(st->seg, node, RMEM_ALL);
	st->writer = node;
}

/*
 * The server gives a stack back itself (owner word 0, rights as for a
 * free stack) after a binding request, and after a call on the reliable
 * channel, before it answers: the client's next call may claim it at
 * once, and no message of the client's is needed.  A raw client gives its
 * stack back itself once it has the answer: until then its header frame
 * may have to come again.
 */
static void stack_free(struct rpc_stack *st)
{
	irqflags_t f = irq_save();
	__atomic_store_n((uint64_t *)(st->base + CTL_OFF), 0, __ATOMIC_SEQ_CST);
	owner_rights(st);
	irq_restore(f);
}

/* The receive path (irq): note what arrived; wake the thread when it has work. */
static void stack_notify(void *arg, int seg, uint32_t off, uint32_t count)
{
	struct rpc_stack *st = arg;
	int wake = 0;

	(void)seg;
	(void)count;
	if (off == CTL_OFF) {
		owner_rights(st);
		return;
	}
	st->last_arrival = cycles();
	if (off == HDR_OFF) {
		st->hdr_new = 1;
		wake = 1;
	} else if (off >= ARGS_OFF + RPC_FIRST && (off - ARGS_OFF - RPC_FIRST) % RPC_FRAME == 0) {
		/* 3.1.2: the destination keeps the mask of frames received. */
		uint32_t i = (off - ARGS_OFF - (uint32_t)RPC_FIRST) / RPC_FRAME;
		if (i < MAX_FRAMES - 1)
			st->mask |= 1ULL << i;
		wake = st->hdr_seen;
	} else if (off == REQ_OFF) {
		st->ctl_new = 1;
		wake = 1;
	}
	if (wake) {
		st->events++;
		st->kick = 1;
		waitq_wake_one(&st->wq);
	}
}

/*
 * One WRITE into stack st's slot of b's reply segment; answers to calls
 * travel as the calls did (raw frames for an RPC_UNRELIABLE client: a lost
 * one is found by the client's timeout), binding answers always reliably.
 */
static void reply_write_rd(struct rpc_stack *st, int rd, int raw_client, uint32_t seq, uint32_t kind,
			   int32_t status, uint64_t mask, uint64_t result)
{
	struct rpc_reply r = { seq, kind, ++st->gen, status, mask, result, 0, 0 };
	int raw = raw_client && (kind == R_RESULT || kind == R_MASK);

	if (raw_client)
		r.crc = reply_crc(&r);
	int e = rmem_write(rd, (uint32_t)st->k * REPLY_SLOT, &r, sizeof r,
			   RMEM_INTR | (raw ? RMEM_UNRELIABLE : 0));

	if (e < 0)
		LTRACEF("%s.%d: reply failed: %d\n", st->srv->service, st->k, e);
}

static void reply_write(struct rpc_stack *st, const struct rpc_bound *b, uint32_t seq, uint32_t kind,
			int32_t status, uint64_t mask, uint64_t result)
{
	reply_write_rd(st, b->reply_rd, b->raw, seq, kind, status, mask, result);
}

/* Drop what arrived of a call that is not complete. */
static void partial_reset(struct rpc_stack *st)
{
	irqflags_t f = irq_save();
	st->mask = 0;
	st->hdr_seen = 0;
	st->cur_b = NULL;
	st->tries = 0;
	irq_restore(f);
}

/* 3.1.2: write the mask of frames received into the client; it rewrites the rest. */
static void mask_write(struct rpc_stack *st, uint64_t have, unsigned n)
{
	st->st.frames_missing += (uint64_t)__builtin_popcountll(all_frames(n) & ~have);
	st->st.masks++;
	st->last_arrival = cycles();
	reply_write(st, st->cur_b, st->cur.seq, R_MASK, 0, have, 0);
}

static void do_bind(struct rpc_stack *st, const struct rpc_ctl *c)
{
	struct rpc_server *s = st->srv;
	int node = token_node(c->owner), rd, id = -1;
	char name[RMEM_NAME_MAX];

	/* The binding request of the stack's claimer, naming its own node. */
	if (node < 0 || node >= num_nodes || node == node_id || (int)c->node != node)
		return;
	memcpy(name, c->reply, sizeof name);
	name[sizeof name - 1] = '\0';
	rd = rmem_import(node, name);
	if (rd < 0)
		return;			/* nobody to answer: the client's wait ends it */
	for (int i = 0; i < RPC_MAX_BINDINGS && id < 0; i++)
		if (!s->bound[i].used)
			id = i;
	if (id < 0) {
		st->st.refused++;
		reply_write_rd(st, rd, 0, 0, R_BOUND, -EBUSY, 0, 0);
		rmem_release(rd);
		return;
	}
	struct rpc_bound *b = &s->bound[id];
	memset(b, 0, sizeof *b);
	b->used = 1;
	b->node = node;
	b->reply_rd = rd;
	b->raw = !!(c->flags & RPC_UNRELIABLE);
	b->secret = (uint32_t)random64() | 1;
	st->st.binds++;
	reply_write(st, b, 0, R_BOUND, 0, b->secret, (uint64_t)id);
}

/* The binding a header or request names, if its secret and node match. */
static struct rpc_bound *bound_find(struct rpc_server *s, uint32_t id, uint64_t secret)
{
	if (id >= RPC_MAX_BINDINGS || !s->bound[id].used || s->bound[id].secret != secret)
		return NULL;
	return &s->bound[id];
}

static void do_unbind(struct rpc_stack *st, const struct rpc_ctl *c)
{
	struct rpc_bound *b = bound_find(st->srv, c->bind, c->secret);

	if (!b || b->node != (int)c->node || b->node != token_node(c->owner)) {
		st->st.forged++;
		return;
	}
	if (b->running) {
		/* A call of its own still runs on another stack: the client has to wait for it. */
		reply_write(st, b, 0, R_UNBOUND, -EBUSY, 0, 0);
		return;
	}
	reply_write(st, b, 0, R_UNBOUND, 0, 0, 0);
	/* Answers kept on stacks for this binding are nobody's now. */
	for (int k = 0; k < st->srv->nstacks; k++)
		if (st->srv->stacks[k].last_b == b)
			st->srv->stacks[k].last_b = NULL;
	rmem_release(b->reply_rd);
	b->used = 0;
	b->secret = 0;
	st->st.unbinds++;
}

static void ctl_handle(struct rpc_stack *st)
{
	struct rpc_ctl c;
	irqflags_t f = irq_save();

	memcpy(&c, st->base + CTL_OFF, sizeof c);
	irq_restore(f);
	if (c.op == CTL_BIND)
		do_bind(st, &c);
	else if (c.op == CTL_UNBIND)
		do_unbind(st, &c);
	/* Whatever came of it, the claimer made its one request. */
	stack_free(st);
}

/*
 * Does the caller hold the stack: the owner word its claim's token?  A
 * call runs only on a stack its own claim took: frames of a claim that
 * was lost (sent behind its compare-and-swap before the answer came) may
 * still land once another call of the same node holds the stack, which
 * its node's right to write lets in; they do not run.
 */
static int claim_holds(struct rpc_stack *st, const struct rpc_bound *b, const struct call_hdr *h)
{
	uint64_t owner = __atomic_load_n((uint64_t *)(st->base + CTL_OFF), __ATOMIC_SEQ_CST);

	return owner == ((uint64_t)(b->node + 1) << 32 | h->claim);
}

/*
 * Run the call whose header is st->cur, its frames all in.  While the
 * stack is write-inhibited no WRITE lands and no notification comes, so
 * its state needs no interrupt masking here.
 */
static void call_run(struct rpc_stack *st)
{
	struct call_hdr h;
	struct rpc_bound *b = st->cur_b;
	const uint8_t *args = st->base + ARGS_OFF;
	uint64_t result = 0;
	int status;

	/* 3.1.1: write-protect the stack before the procedure begins. */
	seg_inhibit(st->seg, 1);
	memcpy(&h, st->base + HDR_OFF, sizeof h);
	if (memcmp(&h, &st->cur, sizeof h) != 0 || ((h.flags & HF_CRC) && call_crc(&h, args) != h.crc)) {
		/*
		 * Another header frame landed meanwhile, or a frame is not what
		 * the client wrote (damaged, or a stale raw frame): which one is
		 * unknown, so every frame counts as missing.
		 */
		st->mask = 0;
		st->st.bad_frames++;
		seg_inhibit(st->seg, 0);
		mask_write(st, 0, st->cur.nframes);
		return;
	}
	rpc_proc_fn fn = h.proc < RPC_MAX_PROCS ? st->srv->procs[h.proc] : NULL;
	irqflags_t f = irq_save();
	if (!b->used || b->secret != h.secret || rpc_seen_check(&b->seen, h.seq) != SEEN_NEW || !claim_holds(st, b, &h)) {
		/*
		 * Unbound since its header came, or the same number ran on
		 * another stack meanwhile (no client sends one call to two
		 * stacks), or the stack is not the caller's: it does not run.
		 */
		irq_restore(f);
		st->st.repeats++;
		partial_reset(st);
		seg_inhibit(st->seg, 0);
		if (!b->raw)
			stack_free(st);
		return;
	}
	rpc_seen_mark(&b->seen, h.seq);	/* run now: never again, whichever stack it comes to */
	b->running++;
	irq_restore(f);
	st->run_node = b->node;
	running_here = st;
	status = fn ? fn(args, h.len, &result) : -ENOSYS;
	running_here = NULL;
	st->mask = 0;
	st->hdr_seen = 0;
	st->cur_b = NULL;
	st->tries = 0;
	st->last_b = b;
	st->last_seq = h.seq;
	st->last_status = status;
	st->last_result = result;
	st->st.calls++;
	/* Writable again, and free for a reliable client, before the result goes. */
	seg_inhibit(st->seg, 0);
	if (!b->raw)
		stack_free(st);
	reply_write(st, b, h.seq, R_RESULT, status, 0, result);
	f = irq_save();
	b->running--;
	irq_restore(f);
}

/* What the thread saw when it woke, copied with interrupts off. */
struct wake {
	int ctl, hdr, timed_out;
	struct call_hdr h;		/* hdr: the header frame as it landed */
	uint64_t mask;
};

/* A header frame landed: make it the stack's call, answer it from what was kept, or pass it over. */
static void header_take(struct rpc_stack *st, const struct call_hdr *h)
{
	struct rpc_bound *b = bound_find(st->srv, h->bind, h->secret);

	/* Whatever header was there is overwritten: it counts as missing again. */
	st->hdr_seen = 0;
	st->cur_b = NULL;
	if (!b) {
		st->st.forged++;
		return;
	}
	if (!claim_holds(st, b, h)) {
		st->st.unclaimed++;
		return;
	}
	if (st->last_b == b && st->last_seq == h->seq) {
		/*
		 * At most once: answer a repeated call from what was kept.  Its
		 * caller still holds the stack (a raw client gives it back only
		 * once it has the answer), so this stack's last call is it,
		 * however far the binding's other calls moved the window since.
		 */
		st->st.repeats++;
		reply_write(st, b, h->seq, R_RESULT, st->last_status, 0, st->last_result);
		return;
	}
	switch (rpc_seen_check(&b->seen, h->seq)) {
	case SEEN_OLD:
		st->st.stale++;
		return;
	case SEEN_DONE:
		return;		/* it ran on another stack: not this caller's repeat */
	}
	if (h->len > RPC_ARGS_MAX || h->nframes != frames_for(h->len)) {
		/* Malformed (or a raw frame damaged): as good as lost. */
		st->st.bad_frames++;
		return;
	}
	st->cur = *h;
	st->cur_b = b;
	st->hdr_seen = 1;
	st->tries = 0;
}

/*
 * A header frame arrived, or a quiet spell mid-call ended, or an argument
 * frame came after the header: run the call if it is complete, else write
 * the mask (3.1.2).
 */
static void call_progress(struct rpc_stack *st, const struct wake *w)
{
	if (w->hdr)
		header_take(st, &w->h);
	if (!st->hdr_seen) {
		/* Argument frames with no header: the header's own arrival decides. */
		if (w->timed_out && ++st->tries > SACK_TRIES)
			partial_reset(st);
		return;
	}
	unsigned n = st->cur.nframes;
	uint64_t have = (w->mask | 1ULL << (n - 1)) & all_frames(n);
	if (have == all_frames(n)) {
		call_run(st);
		return;
	}
	if (w->hdr || w->timed_out) {
		st->tries += w->timed_out;
		mask_write(st, have, n);
	}
	if (st->tries > SACK_TRIES)
		partial_reset(st);	/* the client's timeout starts it again */
}

static int stack_partial(struct rpc_stack *st)
{
	return st->hdr_seen || st->mask != 0;
}

/*
 * What the stack's thread does each time it wakes: take what the receive
 * path noted (interrupts off) and act on it.  (Interrupts off on entry;
 * restored as f on return.)
 */
static void stack_step(struct rpc_stack *st, int timed_out, irqflags_t f)
{
	struct wake w;

	w.timed_out = timed_out;
	w.ctl = st->ctl_new;
	w.hdr = st->hdr_new;
	st->ctl_new = st->hdr_new = 0;
	if (w.hdr)
		memcpy(&w.h, st->base + HDR_OFF, sizeof w.h);
	w.mask = st->mask;
	irq_restore(f);
	if (w.ctl)
		ctl_handle(st);
	if (w.hdr || w.timed_out || stack_partial(st))
		call_progress(st, &w);
}

int rpc_stack_step(struct rpc_server *s, int k, int timed_out)
{
	if (!s->stacks || k < 0 || k >= s->nstacks)
		return -EINVAL;
	stack_step(&s->stacks[k], timed_out, irq_save());
	return 0;
}

/* One per stack: wait for the flag (or a timeout mid-call), then act. */
static void *stack_main(void *arg)
{
	struct rpc_stack *st = arg;
	uint64_t seen = 0;

	for (;;) {
		int timed_out = 0;
		irqflags_t f = irq_save();
		while (st->events == seen) {
			/*
			 * On the reliable channel a frame is late, never lost: no
			 * timeout.  Where the node polls its link anyway, this
			 * thread polls it first (net_poll_wait): the call is then
			 * taken without a switch to the idle thread and back.
			 */
			if (!st->hdr_seen || !st->cur_b->raw) {
				st->kick = 0;
				if (st->events == seen && !net_poll_wait(&st->kick))
					waitq_wait(&st->wq);
				continue;
			}
			uint64_t due = st->last_arrival + ns_to_cycles(SACK_NS), now = cycles();
			if (now >= due) {
				timed_out = 1;
				break;
			}
			waitq_wait_timeout(&st->wq, cycles_to_ns(due - now));
		}
		seen = st->events;
		stack_step(st, timed_out, f);
	}
	return NULL;
}

int rpc_server_init(struct rpc_server *s, const char *service)
{
	size_t n = service ? strlen(service) : 0;

	if (n == 0 || n >= RPC_SERVICE_MAX)
		return -EINVAL;
	memset(s, 0, sizeof *s);
	memcpy(s->service, service, n + 1);
	return 0;
}

int rpc_register(struct rpc_server *s, uint32_t proc, rpc_proc_fn fn)
{
	if (proc >= RPC_MAX_PROCS || !fn)
		return -EINVAL;
	s->procs[proc] = fn;
	return 0;
}

int rpc_serve(struct rpc_server *s, int nstacks)
{
	char name[RMEM_NAME_MAX], tname[THREAD_NAME_MAX];

	if (nstacks < 1 || nstacks > RPC_MAX_STACKS || !s->service[0])
		return -EINVAL;
	if (s->stacks)
		return -EBUSY;
	s->bound = calloc(RPC_MAX_BINDINGS, sizeof *s->bound);
	s->stacks = calloc((size_t)nstacks, sizeof *s->stacks);
	if (!s->stacks || !s->bound)
		return -ENOMEM;
	for (int k = 0; k < nstacks; k++) {
		struct rpc_stack *st = &s->stacks[k];
		st->srv = s;
		st->k = k;
		st->ref_seg = -1;
		st->writer = -1;
		st->base = calloc(1, RPC_STACK_SIZE);
		if (!st->base)
			return -ENOMEM;
		/* 3.1.1: "The server exports each stack as a separate segment." */
		snprintf(name, sizeof name, "rpc.%s.%d", s->service, k);
		/*
		 * Free: every node may claim it (RMEM_A), none write it
		 * (owner_rights).  Exported and its notification set with
		 * interrupts off: a claim served in between would not reach
		 * stack_notify, and its claimer would never be let write.
		 */
		irqflags_t f = irq_save();
		st->seg = seg_export(name, st->base, RPC_STACK_SIZE, RMEM_A);
		if (st->seg >= 0)
			seg_notify(st->seg, 1, stack_notify, st);
		irq_restore(f);
		if (st->seg < 0)
			return st->seg;
		snprintf(tname, sizeof tname, "rpc-%.15s-%u", s->service, (unsigned)k % RPC_MAX_STACKS);
		struct thread *t = thread_create(tname, stack_main, st, PRIO_HIGH, 0);
		if (!t)
			return -ENOMEM;
		thread_detach(t);
		s->nstacks = k + 1;
	}
	return 0;
}

void rpc_server_stats(const struct rpc_server *s, struct rpc_server_stats *out)
{
	memset(out, 0, sizeof *out);
	for (int k = 0; k < s->nstacks; k++) {
		const struct rpc_server_stats *t = &s->stacks[k].st;
		out->calls += t->calls;
		out->repeats += t->repeats;
		out->masks += t->masks;
		out->frames_missing += t->frames_missing;
		out->bad_frames += t->bad_frames;
		out->forged += t->forged;
		out->stale += t->stale;
		out->unclaimed += t->unclaimed;
		out->binds += t->binds;
		out->unbinds += t->unbinds;
		out->refused += t->refused;
	}
}

/* --- call-by-reference: the server's half (3.1.1) ------------------------------------ */

#define REF_WAIT_NS 10000000000ULL

int rpc_ref_read(const struct rpc_ref *ref, uint32_t off, size_t len, const void **data)
{
	struct rpc_stack *st = running_here;
	char name[RMEM_NAME_MAX];
	int h[RPC_REF_MAX / RMEM_MAX_XFER + 1], n = 0, r = 0;

	if (!st)
		return -EPERM;
	if (!ref || !data || len == 0 || len > RPC_REF_MAX || !(ref->rights & RMEM_R))
		return -EINVAL;
	if ((uint64_t)off + len > ref->len)
		return -ERANGE;
	if (st->ref_seg < 0) {
		/* The landing area for READs: exported to nobody. */
		st->ref_buf = malloc(RPC_REF_MAX);
		if (!st->ref_buf)
			return -ENOMEM;
		snprintf(name, sizeof name, "rpc-ref.%s.%d", st->srv->service, st->k);
		st->ref_seg = seg_export(name, st->ref_buf, RPC_REF_MAX, 0);
		if (st->ref_seg < 0) {
			r = st->ref_seg;
			free(st->ref_buf);
			st->ref_buf = NULL;
			return r;
		}
	}
	int rd = rmem_attach(st->run_node, ref->seg, ref->gen, ref->len, RMEM_R);
	if (rd < 0)
		return rd;
	/* Every piece asked at once; then the answers. */
	for (size_t at = 0; at < len; at += RMEM_MAX_XFER) {
		uint32_t cnt = len - at < RMEM_MAX_XFER ? (uint32_t)(len - at) : RMEM_MAX_XFER;
		int hh = rmem_read(rd, off + (uint32_t)at, cnt, st->ref_seg, (uint32_t)at, 0);
		if (hh < 0) {
			r = hh;
			break;
		}
		h[n++] = hh;
	}
	for (int i = 0; i < n; i++) {
		int e = rmem_read_wait(h[i], REF_WAIT_NS);
		if (e < 0 && r == 0)
			r = e;
	}
	rmem_release(rd);
	if (r == 0)
		*data = st->ref_buf;
	return r;
}

int rpc_ref_write(const struct rpc_ref *ref, uint32_t off, const void *src, size_t len)
{
	struct rpc_stack *st = running_here;

	if (!st)
		return -EPERM;
	if (!ref || (len && !src) || !(ref->rights & RMEM_W))
		return -EINVAL;
	if ((uint64_t)off + len > ref->len)
		return -ERANGE;
	if (len == 0)
		return 0;
	int rd = rmem_attach(st->run_node, ref->seg, ref->gen, ref->len, RMEM_W);
	if (rd < 0)
		return rd;
	int r = rmem_write_block(rd, off, src, len, RMEM_SYNC);
	rmem_release(rd);
	return r;
}
