/*
 * RPC over protected remote memory, the client: bind (claim an argument
 * stack with compare-and-swap), call, unbind.  The layout and the design
 * are in rpc_wire.h and rpc_server.c.  See rpc.h; the remote-memory
 * paper, section 3.1.
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

/* --- the client ------------------------------------------------------------- */

/* Wait up to timeout_ns for a reply not consumed yet; copy it.  0 or -ETIMEDOUT. */
static int reply_wait(struct rpc_binding *b, struct reply *r, uint64_t timeout_ns)
{
	uint64_t end = cycles() + ns_to_cycles(timeout_ns);

	for (;;) {
		irqflags_t f = irq_save();
		memcpy(r, b->reply, sizeof *r);
		irq_restore(f);
		/* A damaged raw reply is a lost one (reliable ones carry no CRC of their own). */
		if (r->gen != b->reply_gen && (!(b->flags & RPC_UNRELIABLE) || r->crc == reply_crc(r))) {
			b->reply_gen = r->gen;
			return 0;
		}
		uint64_t now = cycles();
		if (now >= end)
			return -ETIMEDOUT;
		seg_wait(b->rseg, &b->seen, cycles_to_ns(end - now));
	}
}

/* Wait for a binding reply of kind. */
static int ctl_wait(struct rpc_binding *b, uint32_t kind)
{
	uint64_t end = cycles() + ns_to_cycles(BIND_NS);
	struct reply r;

	while (cycles() < end) {
		if (fabric_peer_dead(b->server))
			return -EHOSTDOWN;
		if (reply_wait(b, &r, SLICE_NS) == 0 && r.kind == kind)
			return 0;
	}
	return -ETIMEDOUT;
}

static int ctl_send(struct rpc_binding *b, uint32_t op, const char *reply)
{
	struct ctl c = { 0 };

	c.op = op;
	c.node = (uint32_t)node_id;
	c.flags = (uint32_t)b->flags;
	if (reply)
		strncpy(c.reply, reply, sizeof c.reply - 1);
	return rmem_write(b->rd, REQ_OFF, (const uint8_t *)&c + REQ_OFF,
			  (uint32_t)(offsetof(struct ctl, pad) - REQ_OFF), RMEM_INTR);
}

#define CAS_TRIES 4		/* asks of a claim or release whose answer is late */

/*
 * Import and claim a free stack of service on node: 0 with b->rd, b->stack
 * set.  The claim is a CAS of the owner word from 0 to this binding's
 * token; a CAS whose answer is late may still land, so its outcome is
 * settled (rmem_cas_settled) before the stack is let go: otherwise a stack
 * this client holds would be lost to everyone.
 */
int rpc_stack_claim(struct rpc_binding *b, int node, const char *service, uint64_t token)
{
	char name[RMEM_NAME_MAX];
	int found = 0;

	for (int k = 0; k < RPC_MAX_STACKS; k++) {
		uint64_t old = 1;
		snprintf(name, sizeof name, "rpc.%s.%d", service, k);
		int rd = rmem_import(node, name);
		if (rd == -ENOENT)
			break;
		found = 1;
		if (rd == -EACCES)
			continue;		/* bound: only its owner has rights */
		if (rd < 0)
			return rd;
		/* 3.1.1: stacks are "imported by clients at bind time"; the CAS makes one ours. */
		int r = rmem_cas_settled(rd, CTL_OFF, 0, token, &old, CAS_TRIES);
		if (r == 0 && old == 0) {
			b->rd = rd;
			b->stack = k;
			return 0;
		}
		rmem_release(rd);
		if (r == -ETIMEDOUT || r == -EHOSTDOWN)
			return r;	/* the stack may be ours: claim no second one */
	}
	return found ? -EBUSY : -ENOENT;
}

int rpc_bind(struct rpc_binding *b, int node, const char *service, int flags, uint64_t timeout_ns)
{
	static uint32_t nonce, names;
	char rname[RMEM_NAME_MAX];
	uint64_t end = cycles() + ns_to_cycles(timeout_ns);
	int r;

	if (!service || !service[0] || strlen(service) >= RPC_SERVICE_MAX || node < 0 ||
	    node >= num_nodes || node == node_id)
		return -EINVAL;
	memset(b, 0, sizeof *b);
	b->server = node;
	b->flags = flags;
	b->rd = -1;
	b->reply = calloc(1, REPLY_SEG);
	if (!b->reply)
		return -ENOMEM;
	snprintf(rname, sizeof rname, "rpc-r%u", __atomic_fetch_add(&names, 1, __ATOMIC_RELAXED));
	b->rseg = seg_export(rname, b->reply, REPLY_SEG, 0);
	if (b->rseg < 0) {
		r = b->rseg;
		goto free;
	}
	/* Only the server may write our reply segment. */
	seg_grant(b->rseg, node, RMEM_W);
	seg_notify(b->rseg, 1, NULL, NULL);

	uint64_t token = (uint64_t)(node_id + 1) << 32 |
			 (__atomic_add_fetch(&nonce, 1, __ATOMIC_RELAXED) & 0xffffffffu);
	for (;;) {
		r = rpc_stack_claim(b, node, service, token);
		if (r != -ENOENT || cycles() >= end)
			break;
		thread_sleep_ns(10000000);	/* the service is not up yet */
	}
	if (r < 0)
		goto unexport;
	if ((r = ctl_send(b, CTL_BIND, rname)) < 0 || (r = ctl_wait(b, R_BOUND)) < 0)
		goto unclaim;
	return 0;

unclaim:
	{
		/* The server may yet bind us: ask it to let go, and free the word if it did not. */
		uint64_t old;
		ctl_send(b, CTL_UNBIND, NULL);
		/* Asking again is harmless: once the word is not our token nothing changes. */
		for (int i = 0; i < CAS_TRIES && rmem_cas(b->rd, CTL_OFF, token, 0, &old) == -ETIMEDOUT; i++)
			;
		rmem_release(b->rd);
	}
unexport:
	seg_unexport(b->rseg);
free:
	free(b->reply);
	b->reply = NULL;
	return r;
}

/* Write frame i of n of the call (n - 1 is the header frame, hdrbuf). */
static int frame_write(struct rpc_binding *b, const uint8_t *args, size_t len, const uint8_t *hdrbuf,
		       unsigned i, unsigned n)
{
	int fl = RMEM_INTR | (b->flags & RPC_UNRELIABLE ? RMEM_UNRELIABLE : 0), r;

	if (i == n - 1) {
		size_t first = len < FIRST ? len : FIRST;
		r = rmem_write(b->rd, HDR_OFF, hdrbuf, (uint32_t)(sizeof(struct call_hdr) + first), fl);
	} else {
		size_t off = FIRST + (size_t)i * FRAME, cnt = len - off < FRAME ? len - off : FRAME;
		r = rmem_write(b->rd, (uint32_t)(ARGS_OFF + off), args + off, (uint32_t)cnt, fl);
	}
	/* A raw frame the NIC could not take now is just a lost frame. */
	if (r < 0 && (b->flags & RPC_UNRELIABLE) && (r == -EAGAIN || r == -ENOBUFS))
		r = 0;
	return r;
}

int rpc_call(struct rpc_binding *b, uint32_t proc, const void *args, size_t len, uint64_t *result)
{
	struct {
		struct call_hdr h;
		uint8_t first[FIRST];
	} fr;
	const uint8_t *a = args;
	unsigned n = frames_for(len);
	int unreliable = b->flags & RPC_UNRELIABLE, r;

	if (!b->reply || (len && !args))
		return -EINVAL;
	if (len > RPC_ARGS_MAX)
		return -EMSGSIZE;
	if (proc >= RPC_MAX_PROCS)
		return -ENOSYS;
	memset(&fr.h, 0, sizeof fr.h);
	fr.h.seq = ++b->seq;
	fr.h.proc = proc;
	fr.h.len = (uint32_t)len;
	fr.h.nframes = (uint16_t)n;
	if (unreliable) {
		fr.h.flags = HF_CRC;
		fr.h.crc = call_crc(&fr.h, a);
	}
	if (len)
		memcpy(fr.first, a, len < FIRST ? len : FIRST);

	/* 3.1.2: N frames without waiting, the one with the flag last. */
	for (unsigned i = 0; i < n; i++)
		if ((r = frame_write(b, a, len, (const uint8_t *)&fr, i, n)) < 0)
			return r;
	b->stats.frames += n;
	b->stats.calls++;

	uint64_t end = cycles() + ns_to_cycles(CALL_NS), wait = unreliable ? POKE_NS : SLICE_NS;
	for (;;) {
		struct reply rep;
		if (reply_wait(b, &rep, wait) == 0) {
			if (rep.seq != fr.h.seq)
				continue;
			if (rep.kind == R_RESULT) {
				if (result)
					*result = rep.result;
				return rep.status;
			}
			if (rep.kind == R_MASK) {
				/* 3.1.2: "The source then rewrites only the missing cells." */
				uint64_t missing = all_frames(n) & ~rep.mask;
				b->stats.masks++;
				for (unsigned i = 0; i < n; i++) {
					if (!(missing & 1ULL << i))
						continue;
					if ((r = frame_write(b, a, len, (const uint8_t *)&fr, i, n)) < 0)
						return r;
					b->stats.rewritten++;
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
			b->stats.timeouts++;
			if ((r = frame_write(b, a, len, (const uint8_t *)&fr, n - 1, n)) < 0)
				return r;
			wait = wait * 2 < POKE_MAX_NS ? wait * 2 : POKE_MAX_NS;
		}
	}
}

int rpc_unbind(struct rpc_binding *b)
{
	int r;

	if (!b->reply)
		return -EINVAL;
	r = ctl_send(b, CTL_UNBIND, NULL);
	if (r == 0)
		r = ctl_wait(b, R_UNBOUND);
	rmem_release(b->rd);
	seg_unexport(b->rseg);
	free(b->reply);
	b->reply = NULL;
	b->rd = -1;
	return r;
}

