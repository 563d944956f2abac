/*
 * RPC over protected remote memory, the client: bind (import the stacks,
 * register), call (claim a free stack with compare-and-swap, build the
 * frame on it, give it back), unbind; and call-by-reference.  The layout
 * and the design are in rpc_wire.h and rpc_server.c.  See rpc.h; the
 * remote-memory paper, section 3.1.
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
#include "net/rmem/rmem.h"

#define CAS_TRIES 4		/* asks of a claim whose answer is late */
#define STACK_WAIT_NS 1000000ULL	/* every stack taken: look again after this, doubling */
#define STACK_WAIT_MAX_NS 20000000ULL

#define STAT(b, f, n) __atomic_fetch_add(&(b)->stats.f, (uint64_t)(n), __ATOMIC_RELAXED)

/* A token only this call writes into an owner word. */
static uint64_t new_token(void)
{
	static uint32_t nonce;

	return (uint64_t)(node_id + 1) << 32 | __atomic_add_fetch(&nonce, 1, __ATOMIC_RELAXED);
}

static struct rpc_reply *slot(const struct rpc_binding *b, int k)
{
	return (struct rpc_reply *)((uint8_t *)b->reply + (size_t)k * REPLY_SLOT);
}

/*
 * Wait up to timeout_ns for a reply in stack k's slot newer than *gen;
 * copy it.  0 or -ETIMEDOUT.  *seen is the caller's own count of the
 * segment's notifications: several threads may wait on one binding.
 */
static int reply_wait(const struct rpc_binding *b, int k, uint32_t *gen, uint64_t *seen, struct rpc_reply *r,
		      uint64_t timeout_ns)
{
	uint64_t end = cycles() + ns_to_cycles(timeout_ns);

	for (;;) {
		irqflags_t f = irq_save();
		memcpy(r, slot(b, k), sizeof *r);
		irq_restore(f);
		/* A damaged raw reply is a lost one (reliable ones carry no CRC of their own). */
		if (r->gen != *gen && (!(b->flags & RPC_UNRELIABLE) || r->crc == reply_crc(r))) {
			*gen = r->gen;
			return 0;
		}
		uint64_t now = cycles();
		if (now >= end)
			return -ETIMEDOUT;
		seg_wait(b->rseg, seen, cycles_to_ns(end - now));
	}
}

static uint32_t slot_gen(const struct rpc_binding *b, int k)
{
	irqflags_t f = irq_save();
	uint32_t g = slot(b, k)->gen;
	irq_restore(f);
	return g;
}

#define LOCAL_MAX 16
static struct rpc_local locals[LOCAL_MAX];

struct rpc_local *rpc_local_get(int server, const char *service)
{
	struct rpc_local *l = NULL;
	irqflags_t f = irq_save();

	for (int i = 0; i < LOCAL_MAX && !l; i++)
		if (locals[i].service[0] && locals[i].server == server && !strcmp(locals[i].service, service))
			l = &locals[i];
	for (int i = 0; i < LOCAL_MAX && !l; i++)
		if (!locals[i].service[0]) {
			l = &locals[i];
			l->server = server;
			strcpy(l->service, service);
		}
	irq_restore(f);
	return l;
}

/* Stack k for one of this node's calls, if no other holds it. */
static int local_take(struct rpc_binding *b, int k)
{
	uint32_t bit = 1u << k;

	return !(__atomic_fetch_or(&b->local->busy, bit, __ATOMIC_ACQ_REL) & bit);
}

static void local_drop(struct rpc_binding *b, int k)
{
	__atomic_fetch_and(&b->local->busy, ~(1u << k), __ATOMIC_RELEASE);
}

/*
 * The i-th stack a claim tries, counted from the binding's hint, if no
 * other call of this node holds it (then taken for this call); else -1.
 */
static int stack_try(struct rpc_binding *b, uint32_t start, int i)
{
	int k = (int)((start + (uint32_t)i) % (uint32_t)b->nstacks);

	return local_take(b, k) ? k : -1;
}

/* Stack k is this call's: the binding's next call tries the one after it, so concurrent ones spread. */
static int stack_won(struct rpc_binding *b, int k)
{
	__atomic_store_n(&b->hint, (uint32_t)(k + 1), __ATOMIC_RELAXED);
	return k;
}

int rpc_stack_claim(struct rpc_binding *b, uint64_t token)
{
	uint32_t start = __atomic_load_n(&b->hint, __ATOMIC_RELAXED);

	for (int i = 0; i < b->nstacks; i++) {
		int k = stack_try(b, start, i);
		uint64_t old = 1;
		if (k < 0)
			continue;
		/*
		 * 3.1.1: a call "picks an available stack".  A CAS
		 * whose answer is late may still land: its outcome is settled
		 * (rmem_cas_settled) before the stack is passed over, or a
		 * stack claimed by nobody who knows it would be lost to all.
		 * RMEM_INTR: the server gives the claimer's node alone the
		 * right to write the stack.
		 */
		int r = rmem_cas_settled(b->rd[k], CTL_OFF, 0, token, &old, CAS_TRIES, RMEM_INTR);
		if (r == 0 && old == 0)
			return stack_won(b, k);
		if (r == -ETIMEDOUT || r == -EHOSTDOWN)
			return r;	/* the stack may be ours: claim no second one (it stays busy here) */
		local_drop(b, k);
		/* Taken, or write-protected while its procedure runs (-EROFS): the next. */
		if (r != 0 && r != -EROFS)
			return r;
		STAT(b, claims_lost, 1);
	}
	return -EBUSY;
}

/* Wait while every stack is taken: 0 to look again, or -EHOSTDOWN / -ETIMEDOUT past end. */
static int stack_wait(struct rpc_binding *b, uint64_t *wait, int *waited, uint64_t end)
{
	if (!(*waited)++)
		STAT(b, stack_waits, 1);
	if (fabric_peer_dead(b->server))
		return -EHOSTDOWN;
	if (cycles() >= end)
		return -ETIMEDOUT;
	thread_sleep_ns(*wait);
	*wait = *wait * 2 < STACK_WAIT_MAX_NS ? *wait * 2 : STACK_WAIT_MAX_NS;
	return 0;
}

/* Claim a stack, waiting while all are taken, until end (cycles). */
static int stack_get(struct rpc_binding *b, uint64_t token, uint64_t end)
{
	uint64_t wait = STACK_WAIT_NS;
	int waited = 0;

	for (;;) {
		int k = rpc_stack_claim(b, token), r;
		if (k != -EBUSY)
			return k;
		if ((r = stack_wait(b, &wait, &waited, end)) < 0)
			return r;
	}
}

/*
 * Give stack k back: its owner word to 0 (RMEM_INTR: the server opens the
 * stack to every node's claim again).  The WRITE follows the call's
 * frames on the reliable channel; nothing waits for it.  A frame of the
 * call still in flight as a raw frame is refused: the right to write went
 * with the stack.
 */
static void stack_put(struct rpc_binding *b, int k)
{
	static const uint64_t zero;
	int r = rmem_write(b->rd[k], CTL_OFF, &zero, 8, RMEM_INTR);

	if (r < 0)
		LTRACEF("stack %d of node %d not given back: %d\n", k, b->server, r);
	local_drop(b, k);
}

/*
 * A binding request on a stack claimed for it: the server answers in the
 * stack's reply slot.  0 (with the reply in *rep) or an error.
 */
static int ctl_exchange(struct rpc_binding *b, const struct rpc_ctl *c, uint32_t kind, struct rpc_reply *rep)
{
	uint64_t end = cycles() + ns_to_cycles(BIND_NS), seen = 0;
	int k = stack_get(b, new_token(), end), r;

	if (k < 0)
		return k;
	uint32_t gen = slot_gen(b, k);
	r = rmem_write(b->rd[k], REQ_OFF, (const uint8_t *)c + REQ_OFF, CTL_LEN, RMEM_INTR);
	while (r == 0) {
		if (fabric_peer_dead(b->server)) {
			r = -EHOSTDOWN;
			break;
		}
		if (cycles() >= end) {
			r = -ETIMEDOUT;
			break;
		}
		if (reply_wait(b, k, &gen, &seen, rep, SLICE_NS) == 0 && rep->kind == kind) {
			/* The server gave the stack back before it answered. */
			local_drop(b, k);
			return 0;
		}
	}
	stack_put(b, k);
	return r;
}

/* Import every stack of service on node, waiting until end for the first.  0 or -errno. */
static int stacks_import(struct rpc_binding *b, const char *service, uint64_t end)
{
	char name[RMEM_NAME_MAX];

	for (int k = 0; k < RPC_MAX_STACKS; k++) {
		snprintf(name, sizeof name, "rpc.%s.%d", service, k);
		int rd;
		for (;;) {
			rd = rmem_import(b->server, name);
			if (rd != -ENOENT || k > 0 || cycles() >= end)
				break;
			thread_sleep_ns(10000000);	/* the service is not up yet */
		}
		if (rd == -ENOENT && k > 0)
			break;
		if (rd < 0)
			return rd;
		/* A free stack grants claims only; a claim brings the right to write it. */
		rmem_desc_expect(rd, RMEM_RW);
		b->rd[k] = rd;
		b->nstacks = k + 1;
	}
	return 0;
}

static void stacks_release(struct rpc_binding *b)
{
	for (int k = 0; k < b->nstacks; k++)
		rmem_release(b->rd[k]);
	b->nstacks = 0;
}

int rpc_bind(struct rpc_binding *b, int node, const char *service, int flags, uint64_t timeout_ns)
{
	static uint32_t names;
	char rname[RMEM_NAME_MAX];
	uint64_t end = cycles() + ns_to_cycles(timeout_ns);
	struct rpc_ctl c = { 0 };
	struct rpc_reply rep;
	int r;

	if (!service || !service[0] || strlen(service) >= RPC_SERVICE_MAX || node < 0 ||
	    node >= num_nodes || node == node_id)
		return -EINVAL;
	memset(b, 0, sizeof *b);
	b->server = node;
	b->flags = flags;
	b->hint = (uint32_t)node_id;
	b->local = rpc_local_get(node, service);
	if (!b->local)
		return -ENOMEM;
	b->reply = calloc(1, REPLY_SEG);
	if (!b->reply)
		return -ENOMEM;
	snprintf(rname, sizeof rname, "rpc-r%u", __atomic_fetch_add(&names, 1, __ATOMIC_RELAXED));
	/* Only the server may write our reply segment. */
	b->rseg = seg_export_for(rname, b->reply, REPLY_SEG, node, RMEM_W);
	if (b->rseg < 0) {
		r = b->rseg;
		goto free;
	}
	seg_notify(b->rseg, 1, NULL, NULL);
	/* 3.1.1: stacks "are then imported by clients at bind time". */
	if ((r = stacks_import(b, service, end)) < 0)
		goto release;
	c.op = CTL_BIND;
	c.node = (uint32_t)node_id;
	c.flags = (uint32_t)flags;
	strncpy(c.reply, rname, sizeof c.reply - 1);
	if ((r = ctl_exchange(b, &c, R_BOUND, &rep)) < 0)
		goto release;
	if (rep.status < 0) {
		r = rep.status;
		goto release;
	}
	b->id = (uint32_t)rep.result;
	b->secret = rep.mask;
	b->hint = (uint32_t)(node_id + b->id);
	return 0;

release:
	/* A registration the server made after we stopped waiting lapses when its reply segment goes. */
	stacks_release(b);
	seg_unexport(b->rseg);
free:
	free(b->reply);
	b->reply = NULL;
	return r;
}

/* Write frame i of n of the call on stack k (n - 1 is the header frame, hdrbuf). */
static int frame_write(struct rpc_binding *b, int k, const uint8_t *args, size_t len, const uint8_t *hdrbuf,
		       unsigned i, unsigned n)
{
	int fl = RMEM_INTR | (b->flags & RPC_UNRELIABLE ? RMEM_UNRELIABLE : 0), r;

	if (i == n - 1) {
		size_t first = len < RPC_FIRST ? len : RPC_FIRST;
		r = rmem_write(b->rd[k], HDR_OFF, hdrbuf, (uint32_t)(sizeof(struct call_hdr) + first), fl);
	} else {
		size_t off = RPC_FIRST + (size_t)i * RPC_FRAME, cnt = len - off < RPC_FRAME ? len - off : RPC_FRAME;
		r = rmem_write(b->rd[k], (uint32_t)(ARGS_OFF + off), args + off, (uint32_t)cnt, fl);
	}
	/* A raw frame the NIC could not take now is just a lost frame. */
	if (r < 0 && (b->flags & RPC_UNRELIABLE) && (r == -EAGAIN || r == -ENOBUFS))
		r = 0;
	return r;
}

/*
 * Number the call once it has a stack: the numbers of calls in flight then
 * stay within the server's window however long a call waited for a stack.
 */
static void call_number(struct rpc_binding *b, struct call_hdr *h, const uint8_t *a, uint64_t token)
{
	h->seq = __atomic_add_fetch(&b->seq, 1, __ATOMIC_RELAXED);
	h->claim = (uint32_t)token;
	if (h->flags & HF_CRC)
		h->crc = call_crc(h, a);
}

/* Every frame of the call on stack k (3.1.2: N frames without waiting, the one with the flag last). */
static int frames_write(struct rpc_binding *b, int k, const uint8_t *a, size_t len, const void *frame, unsigned n)
{
	int r;

	for (unsigned i = 0; i < n; i++)
		if ((r = frame_write(b, k, a, len, frame, i, n)) < 0)
			return r;
	return 0;
}

/*
 * Over the reliable channel the claim and the call go together: the
 * compare-and-swap is sent, the frames right behind it, and only then is
 * its answer awaited.  The channel keeps their order, and the frames land
 * only if the claim gave this node the right to write the stack; a lost
 * claim's frames are refused there, and the call goes again to the next
 * stack.  So a call costs one round trip, as with a stack held for good.
 * The stack's number, or an error.
 */
static int claim_and_send(struct rpc_binding *b, uint64_t token, const uint8_t *a, size_t len, void *frame,
			  unsigned n, uint64_t end, uint32_t *gen)
{
	uint64_t wait = STACK_WAIT_NS;
	int waited = 0, r;

	for (;;) {
		uint32_t start = __atomic_load_n(&b->hint, __ATOMIC_RELAXED);
		for (int i = 0; i < b->nstacks; i++) {
			int k = stack_try(b, start, i);
			uint64_t old = 1;
			if (k < 0)
				continue;
			int h = rmem_cas_start(b->rd[k], CTL_OFF, 0, token, RMEM_INTR);
			if (h < 0) {
				local_drop(b, k);
				return h;
			}
			*gen = slot_gen(b, k);	/* before any answer to this call can come */
			call_number(b, frame, a, token);
			int w = frames_write(b, k, a, len, frame, n);
			r = rmem_atomic_wait(h, &old, CALL_NS);
			if (r == 0 && old == 0 && w == 0)
				return stack_won(b, k);
			if (r == 0 && old == 0) {
				stack_put(b, k);	/* ours, but the frames did not go */
			} else if (r == 0 || r == -EROFS) {
				/*
				 * Taken, or its call running: the frames are refused
				 * there, but some may still be on their way.  Another
				 * call of this node may take the stack only once they
				 * are refused: once it held the stack, this node's
				 * write right would let them land.
				 */
				rmem_sync(b->rd[k], CALL_NS);
				local_drop(b, k);
			} else {
				return r;		/* the claim's outcome is unknown: the stack stays busy here */
			}
			if (w < 0)
				return w;
			STAT(b, claims_lost, 1);
		}
		if ((r = stack_wait(b, &wait, &waited, end)) < 0)
			return r;
	}
}

/* Wait for the answer to the call on stack k (3.1.2: masks and timeouts). */
static int call_wait(struct rpc_binding *b, int k, const uint8_t *a, size_t len, const void *frame,
		     const struct call_hdr *h, uint32_t gen, uint64_t end, uint64_t *result, int *answered)
{
	unsigned n = h->nframes;
	int unreliable = b->flags & RPC_UNRELIABLE, r;
	uint64_t seen = 0;
	uint64_t wait = unreliable ? POKE_NS : SLICE_NS;

	for (;;) {
		struct rpc_reply rep;
		if (reply_wait(b, k, &gen, &seen, &rep, wait) == 0) {
			if (rep.seq != h->seq)
				continue;
			if (rep.kind == R_RESULT) {
				if (result)
					*result = rep.result;
				*answered = 1;
				return rep.status;
			}
			if (rep.kind == R_MASK) {
				/* 3.1.2: "The source then rewrites only the missing cells." */
				uint64_t missing = all_frames(n) & ~rep.mask;
				STAT(b, masks, 1);
				for (unsigned i = 0; i < n; i++) {
					if (!(missing & 1ULL << i))
						continue;
					if ((r = frame_write(b, k, a, len, frame, i, n)) < 0)
						return r;
					STAT(b, rewritten, 1);
				}
				wait = unreliable ? POKE_NS : SLICE_NS;
			}
			continue;
		}
		if (fabric_peer_dead(b->server))
			return -EHOSTDOWN;
		if (cycles() >= end)
			return -ETIMEDOUT;
		if (unreliable) {
			/* Nothing heard: the header frame again draws a mask or the kept result. */
			STAT(b, timeouts, 1);
			if ((r = frame_write(b, k, a, len, frame, n - 1, n)) < 0)
				return r;
			wait = wait * 2 < POKE_MAX_NS ? wait * 2 : POKE_MAX_NS;
		}
	}
}

int rpc_call(struct rpc_binding *b, uint32_t proc, const void *args, size_t len, uint64_t *result)
{
	struct {
		struct call_hdr h;
		uint8_t first[RPC_FIRST];
	} fr;
	const uint8_t *a = args;
	int unreliable = b->flags & RPC_UNRELIABLE, answered = 0, k, r;
	uint32_t gen;

	if (!b->reply || (len && !args))
		return -EINVAL;
	if (len > RPC_ARGS_MAX)
		return -EMSGSIZE;
	if (proc >= RPC_MAX_PROCS)
		return -ENOSYS;
	uint64_t end = cycles() + ns_to_cycles(CALL_NS), token = new_token();
	memset(&fr.h, 0, sizeof fr.h);
	fr.h.proc = proc;
	fr.h.len = (uint32_t)len;
	fr.h.nframes = (uint16_t)frames_for(len);
	fr.h.bind = b->id;
	fr.h.secret = (uint32_t)b->secret;
	/*
	 * Raw frames, and a call of several frames, carry a CRC: a stale raw
	 * frame (duplicated or held up past its call, perhaps another
	 * binding's on the same stack) is then never taken for one of ours.
	 */
	if (unreliable || fr.h.nframes > 1)
		fr.h.flags = HF_CRC;
	if (len)
		memcpy(fr.first, a, len < RPC_FIRST ? len : RPC_FIRST);

	if (unreliable) {
		/* Raw frames keep no order with the claim: it is settled first (paper 3.1: the CAS is reliable). */
		if ((k = stack_get(b, token, end)) < 0)
			return k;
		gen = slot_gen(b, k);
		call_number(b, &fr.h, a, token);
		if ((r = frames_write(b, k, a, len, &fr, fr.h.nframes)) < 0) {
			stack_put(b, k);
			return r;
		}
	} else if ((k = claim_and_send(b, token, a, len, &fr, fr.h.nframes, end, &gen)) < 0) {
		return k;
	}
	STAT(b, frames, fr.h.nframes);
	STAT(b, calls, 1);
	r = call_wait(b, k, a, len, &fr, &fr.h, gen, end, result, &answered);
	/*
	 * A reliable call's stack was given back by the server before it
	 * answered; a raw call gives it back itself (its header may have to go
	 * again until the answer is in).  A call that ended without an answer
	 * gives it back too: if it still runs, the stack stays write-protected
	 * until it ends.
	 */
	if (unreliable || !answered)
		stack_put(b, k);
	else
		local_drop(b, k);
	return r;
}

int rpc_unbind(struct rpc_binding *b)
{
	struct rpc_ctl c = { 0 };
	struct rpc_reply rep;
	int r;

	if (!b->reply)
		return -EINVAL;
	c.op = CTL_UNBIND;
	c.node = (uint32_t)node_id;
	c.bind = b->id;
	c.secret = b->secret;
	r = ctl_exchange(b, &c, R_UNBOUND, &rep);
	if (r == 0 && rep.status < 0)
		r = rep.status;
	stacks_release(b);
	seg_unexport(b->rseg);
	free(b->reply);
	b->reply = NULL;
	return r;
}

/* --- call-by-reference: the client's half ------------------------------------------ */

int rpc_ref_make(const struct rpc_binding *b, struct rpc_ref *ref, void *buf, size_t len, int rights)
{
	static uint32_t names;
	char name[RMEM_NAME_MAX];
	uint32_t gen;

	if (!b->reply || !ref || !buf || len == 0 || len > UINT32_MAX || !rights || (rights & ~RMEM_RW))
		return -EINVAL;
	snprintf(name, sizeof name, "rpc-a%u", __atomic_fetch_add(&names, 1, __ATOMIC_RELAXED));
	/* The server alone, with the rights asked: the client's node checks every access. */
	int seg = seg_export_for(name, buf, len, b->server, rights);
	if (seg < 0)
		return seg;
	seg_ticket(seg, b->server, &gen);
	ref->seg = seg;
	ref->gen = gen;
	ref->len = (uint32_t)len;
	ref->rights = (uint32_t)rights;
	return 0;
}

int rpc_ref_drop(struct rpc_ref *ref)
{
	int r;

	if (!ref || ref->seg < 0)
		return -EINVAL;
	r = seg_unexport(ref->seg);
	ref->seg = -1;
	return r;
}
