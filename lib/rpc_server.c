/*
 * RPC over protected remote memory, the server: argument stacks and their
 * threads (the client's bind, call and unbind are rpc_client.c).  See
 * rpc.h; the remote-memory paper, section 3.1.
 *
 * An argument stack (one segment):
 *	  0  owner word (8): 0 = free; claimed by the client with rmem_cas
 *	  8  binding request: op, node, reply segment name (client, RMEM_INTR)
 *	 64  call header (32): the flag word (call number), proc, len, frames, CRC
 *	 96  arguments, contiguous, as a local call would see them
 * A client's reply segment holds one struct reply, written by the server.
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
 *  - After binding, only the owner's node keeps rights on the stack
 *    (seg_grant), so nobody else can write into it; unbinding revokes the
 *    owner (its descriptors go stale) and opens the stack to all again.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/crc.h"
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

struct rpc_stack {
	struct rpc_server *srv;
	int k, seg;
	uint8_t *base;
	struct waitq wq;
	/* Set by the notify callback (receive path); the thread reads them with interrupts off. */
	volatile uint64_t mask;		/* argument frames in, for the expected call */
	volatile int hdr_new, ctl_new;
	volatile uint64_t events;
	volatile int kick;		/* set with each event: what the thread polls the NIC for */
	volatile uint64_t last_arrival;	/* cycles */
	/* The stack's thread only. */
	int owner;			/* node, or -1 */
	int reply_rd;
	int raw;			/* the owner's calls come as raw frames: answer so */
	uint32_t expected;		/* the next call number */
	volatile int hdr_seen;		/* the expected call's header is in (read by the callback) */
	struct call_hdr cur;		/* ... and here it is */
	int tries;			/* masks written on timeouts since the last progress */
	uint32_t gen;
	uint32_t last_seq;		/* the last call run, and its answer */
	int32_t last_status;
	uint64_t last_result;
	struct rpc_server_stats st;
};

/* The receive path (irq): note what arrived; wake the thread when it has work. */
static void stack_notify(void *arg, int seg, uint32_t off, uint32_t count)
{
	struct rpc_stack *st = arg;
	int wake = 0;

	(void)seg;
	(void)count;
	st->last_arrival = cycles();
	if (off == HDR_OFF) {
		st->hdr_new = 1;
		wake = 1;
	} else if (off >= ARGS_OFF + FIRST && (off - ARGS_OFF - FIRST) % FRAME == 0) {
		/* 3.1.2: the destination keeps the mask of frames received. */
		uint32_t i = (off - ARGS_OFF - (uint32_t)FIRST) / FRAME;
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
 * One WRITE into the owner's reply segment; answers to calls travel as the
 * calls did (raw frames for an RPC_UNRELIABLE client: a lost one is found
 * by the client's timeout), binding answers always reliably.
 */
static void reply_write(struct rpc_stack *st, uint32_t seq, uint32_t kind, int32_t status,
			uint64_t mask, uint64_t result)
{
	struct reply r = { seq, kind, ++st->gen, status, mask, result, 0, 0 };
	int raw = st->raw && (kind == R_RESULT || kind == R_MASK);

	if (st->raw)
		r.crc = reply_crc(&r);
	int e = rmem_write(st->reply_rd, 0, &r, sizeof r, RMEM_INTR | (raw ? RMEM_UNRELIABLE : 0));

	if (e < 0)
		LTRACEF("%s.%d: reply to node %d failed: %d\n", st->srv->service, st->k, st->owner, e);
}

/* Drop what arrived of a call that is not complete. */
static void partial_reset(struct rpc_stack *st)
{
	irqflags_t f = irq_save();
	st->mask = 0;
	st->hdr_seen = 0;
	st->tries = 0;
	irq_restore(f);
}

/* 3.1.2: write the mask of frames received into the client; it rewrites the rest. */
static void mask_write(struct rpc_stack *st, uint64_t have, unsigned n)
{
	if (n)
		st->st.frames_missing += (uint64_t)__builtin_popcountll(all_frames(n) & ~have);
	st->st.masks++;
	st->last_arrival = cycles();
	reply_write(st, st->expected, R_MASK, 0, have, 0);
}

static void do_bind(struct rpc_stack *st, const struct ctl *c)
{
	int node = (int)(c->owner >> 32) - 1, rd;
	char name[RMEM_NAME_MAX];

	if (st->owner >= 0 || node < 0 || node >= num_nodes || node == node_id || (int)c->node != node)
		return;
	memcpy(name, c->reply, sizeof name);
	name[sizeof name - 1] = '\0';
	rd = rmem_import(node, name);
	if (rd < 0) {
		/* Nobody to answer: give the stack back. */
		__atomic_store_n((uint64_t *)(st->base + CTL_OFF), 0, __ATOMIC_SEQ_CST);
		return;
	}
	/* Only the owner may write its stack from now on. */
	seg_grant(st->seg, -1, 0);
	seg_grant(st->seg, node, RMEM_ALL);
	st->owner = node;
	st->reply_rd = rd;
	st->raw = !!(c->flags & RPC_UNRELIABLE);
	st->expected = 1;
	st->last_seq = 0;
	partial_reset(st);
	st->st.binds++;
	reply_write(st, 0, R_BOUND, 0, 0, 0);
}

static void do_unbind(struct rpc_stack *st, const struct ctl *c)
{
	if (st->owner < 0 || (int)c->node != st->owner)
		return;
	/* The old owner's descriptors go stale; everyone may claim the stack again. */
	seg_revoke(st->seg, st->owner);
	seg_grant(st->seg, -1, RMEM_ALL);
	reply_write(st, 0, R_UNBOUND, 0, 0, 0);
	rmem_release(st->reply_rd);
	st->owner = -1;
	st->reply_rd = -1;
	partial_reset(st);
	st->st.unbinds++;
	__atomic_store_n((uint64_t *)(st->base + CTL_OFF), 0, __ATOMIC_SEQ_CST);
}

static void ctl_handle(struct rpc_stack *st)
{
	struct ctl c;
	irqflags_t f = irq_save();

	memcpy(&c, st->base + CTL_OFF, sizeof c);
	irq_restore(f);
	if (c.op == CTL_BIND)
		do_bind(st, &c);
	else if (c.op == CTL_UNBIND)
		do_unbind(st, &c);
}

/*
 * Run the expected call, whose frames are all in.  While the stack is
 * write-inhibited no WRITE lands and no notification comes, so its state
 * needs no interrupt masking here.
 */
static void call_run(struct rpc_stack *st)
{
	struct call_hdr h;
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
		unsigned n = st->cur.nframes;
		st->mask = 0;
		st->hdr_seen = 0;
		st->st.bad_frames++;
		seg_inhibit(st->seg, 0);
		mask_write(st, 0, n);
		return;
	}
	rpc_proc_fn fn = h.proc < RPC_MAX_PROCS ? st->srv->procs[h.proc] : NULL;
	status = fn ? fn(args, h.len, &result) : -ENOSYS;
	st->mask = 0;
	st->hdr_seen = 0;
	st->tries = 0;
	st->last_seq = h.seq;
	st->last_status = status;
	st->last_result = result;
	st->expected = h.seq + 1;
	st->st.calls++;
	/* Writable again before the result goes: the client's next call may follow at once. */
	seg_inhibit(st->seg, 0);
	reply_write(st, h.seq, R_RESULT, status, 0, result);
}

/* What the thread saw when it woke, copied with interrupts off. */
struct wake {
	int ctl, hdr, timed_out;
	struct call_hdr h;		/* hdr: the header frame as it landed */
	uint64_t mask;
};

/*
 * A header frame arrived, or a quiet spell mid-call ended, or an argument
 * frame came after the header: run the call if it is complete, else write
 * the mask (3.1.2).
 */
static void call_progress(struct rpc_stack *st, const struct wake *w)
{
	uint64_t have = w->mask;

	if (st->owner < 0) {
		partial_reset(st);
		return;
	}
	if (w->hdr) {
		const struct call_hdr *h = &w->h;
		if (h->seq == st->expected) {
			if (h->len > RPC_ARGS_MAX || h->nframes != frames_for(h->len)) {
				/* Malformed (or a raw frame damaged): as good as lost. */
				st->st.bad_frames++;
				st->hdr_seen = 0;
			} else {
				st->cur = *h;
				st->hdr_seen = 1;
				st->tries = 0;
			}
		} else {
			/* Our header (if any) was overwritten: it counts as missing again. */
			st->hdr_seen = 0;
			if (h->seq == st->last_seq && h->seq + 1 == st->expected) {
				/* At most once: answer a repeated call from what was kept. */
				st->st.repeats++;
				reply_write(st, h->seq, R_RESULT, st->last_status, 0, st->last_result);
				return;
			}
		}
	}
	if (st->hdr_seen) {
		unsigned n = st->cur.nframes;
		have = (have | 1ULL << (n - 1)) & all_frames(n);
		if (have == all_frames(n)) {
			call_run(st);
			return;
		}
		if (w->hdr || w->timed_out) {
			st->tries += w->timed_out;
			mask_write(st, have, n);
		}
	} else if (w->timed_out && have) {
		st->tries++;
		mask_write(st, have, 0);
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
	if (w.ctl) {
		int owner = st->owner;
		ctl_handle(st);
		if (st->owner != owner) {
			/* A header or frames that came before the (un)binding are not the owner's. */
			w.hdr = 0;
			w.mask = 0;
		}
	}
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
			if (!st->raw || !stack_partial(st)) {
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
	s->stacks = calloc((size_t)nstacks, sizeof *s->stacks);
	if (!s->stacks)
		return -ENOMEM;
	for (int k = 0; k < nstacks; k++) {
		struct rpc_stack *st = &s->stacks[k];
		st->srv = s;
		st->k = k;
		st->owner = -1;
		st->reply_rd = -1;
		st->base = calloc(1, RPC_STACK_SIZE);
		if (!st->base)
			return -ENOMEM;
		/* 3.1.1: "The server exports each stack as a separate segment." */
		snprintf(name, sizeof name, "rpc.%s.%d", s->service, k);
		st->seg = seg_export(name, st->base, RPC_STACK_SIZE, RMEM_ALL);
		if (st->seg < 0)
			return st->seg;
		seg_notify(st->seg, 1, stack_notify, st);
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
		out->binds += t->binds;
		out->unbinds += t->unbinds;
	}
}

