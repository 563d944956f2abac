/*
 * Protected remote memory: segments, descriptors, the name service, the
 * issuing half of each operation, and the receiving half, which runs in
 * the fabric's receive path (interrupts off, serialized), where the
 * paper's kernel emulation ran (section 2.3).  See rmem.h.
 *
 * Choices where the paper leaves one (DESIGN.md: "where the paper leaves a
 * choice, DESIGN choices and their reasons go in the module's header"):
 *  - Rights and generations are per importing node, so revoking one node
 *    leaves the others' descriptors working.
 *  - A refused non-SYNC WRITE is reported back asynchronously and kept in
 *    the issuer's descriptor until rmem_sync(); a SYNC WRITE waits for the
 *    target's verdict.  The issuer also checks bounds and rights locally,
 *    as the paper's co-processor "verifies the rights of the sender", but
 *    only the target's check protects the target.
 *  - READ answers are matched to an outstanding request by (node, tag);
 *    the destination comes from the issuer's record, so a peer cannot make
 *    this node write anywhere by sending answers it never asked for.
 *  - Atomic operations act on naturally aligned 8-byte words (the address,
 *    not just the offset, so a segment may start anywhere).
 *  - Write inhibit refuses atomics as well as WRITEs: it protects an RPC
 *    server's stack (paper 3.1.1) from any change.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/init.h"
#include "kernel/node.h"
#include "kernel/console.h"
#include "kernel/panic.h"
#include "kernel/sync.h"
#include "kernel/thread.h"
#include "kernel/trap.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"
#include "net/fabric/fabric.h"
#include "net/rmem/rmem.h"
#include "net/rmem/proto.h"
#include "net/rmem/segtab.h"

_Static_assert(RMEM_MAX_DESC <= 0x800, "a descriptor fits the 11 bits of an async tag");
_Static_assert(RMEM_MAX_SEGS == SEGTAB_SLOTS && MAX_NODES == SEGTAB_NODES, "table sizes agree");

_Static_assert(RMEM_MAX_XFER == RMEM_DATA_MAX, "one maximum transfer");
_Static_assert(RMEM_HDR_LEN + RMEM_MAX_XFER <= FAB_MTU, "a transfer fits one frame");

#define WAIT_NS 30000000000ULL		/* blocking calls give up after 30 s */

/* What the kernel keeps beside each slot of the segment table. */
struct segnote {
	int notify;
	seg_notify_fn fn;
	void *fn_arg;
	volatile uint64_t arrivals;
	struct waitq wq;
};

struct desc {
	int used;
	int node;
	uint16_t seg;
	uint32_t gen;
	uint64_t size;
	int rights;
	int error;			/* first refusal reported, until rmem_sync */
};

enum pkind { P_FREE, P_READ, P_ATOMIC, P_STATUS, P_LOOKUP };

struct pending {
	enum pkind kind;
	int node;
	uint32_t tag;
	volatile int done;
	int status;			/* enum rmem_status */
	uint64_t value;			/* atomic: old value; lookup: size */
	struct rmem_msg answer;		/* lookup: the header of the answer */
	int lseg;			/* READ: where the data goes */
	uint32_t doff, count;
	int flags;
	struct waitq wq;
};

#define NPENDING (RMEM_MAX_READS + 64)

static struct segtab segtab;
static struct segnote notes[RMEM_MAX_SEGS];
static struct desc descs[RMEM_MAX_DESC];
static struct pending pend[NPENDING];
/*
 * Tags: requests that wait for an answer take 1..2^31-1; asynchronous
 * WRITEs carry ASYNC_TAG | rd << 20 | sequence, so that a refusal coming
 * back names the descriptor it belongs to.
 */
#define ASYNC_TAG 0x80000000u
static uint32_t next_tag = 1, next_async;
static struct rmem_counters ctr;
static int ready;

/* --- helpers --------------------------------------------------------------- */

static struct segslot *seg_get(int seg)
{
	if (seg < 0 || seg >= RMEM_MAX_SEGS || !segtab.slot[seg].used)
		return NULL;
	return &segtab.slot[seg];
}

static struct desc *desc_get(int rd)
{
	if (rd < 0 || rd >= RMEM_MAX_DESC || !descs[rd].used)
		return NULL;
	return &descs[rd];
}

/* A pending entry with a fresh tag; interrupts off.  NULL if all busy. */
static struct pending *pend_alloc(enum pkind kind, int node)
{
	for (int i = 0; i < NPENDING; i++) {
		struct pending *p = &pend[i];
		if (p->kind != P_FREE)
			continue;
		memset(p, 0, sizeof *p);
		p->kind = kind;
		p->node = node;
		p->tag = next_tag++;
		if (next_tag >= ASYNC_TAG)
			next_tag = 1;
		return p;
	}
	return NULL;
}

static struct pending *pend_find(int node, uint32_t tag)
{
	for (int i = 0; i < NPENDING; i++)
		if (pend[i].kind != P_FREE && pend[i].node == node && pend[i].tag == tag)
			return &pend[i];
	return NULL;
}

/*
 * Wait (interrupts off) until p is done, its node dies, or timeout_ns.
 * Return 0 when done, -EHOSTDOWN or -ETIMEDOUT.
 */
static int pend_wait(struct pending *p, uint64_t timeout_ns)
{
	uint64_t end = cycles() + ns_to_cycles(timeout_ns);

	while (!p->done) {
		if (fabric_peer_dead(p->node))
			return -EHOSTDOWN;
		uint64_t now = cycles();
		if (now >= end)
			return -ETIMEDOUT;
		uint64_t left = cycles_to_ns(end - now);
		waitq_wait_timeout(&p->wq, left < 100000000 ? left : 100000000);
	}
	return 0;
}

/* Send a message (header, then data) to node; flags choose the channel. */
static int send_msg(int node, const struct rmem_msg *m, const void *data, size_t dlen, int flags)
{
	if (flags & RMEM_UNRELIABLE) {
		struct pktbuf *pb = pkt_get();
		int r;
		if (!pb)
			return -ENOBUFS;
		memcpy(fabric_payload(pb), m, sizeof *m);
		if (dlen)
			memcpy(fabric_payload(pb) + sizeof *m, data, dlen);
		r = fabric_raw_send_pb(node, RMEM_PROTO, pb, sizeof *m + dlen);
		pkt_put(pb);
		return r;
	}
	return fabric_send(node, RMEM_PROTO, m, sizeof *m, data, dlen, in_irq ? FABRIC_NOWAIT : 0);
}

/* --- segments ------------------------------------------------------------ */

int seg_export(const char *name, void *base, size_t size, int rights)
{
	irqflags_t f = irq_save();
	int r = segtab_export(&segtab, name, base, size, rights);
	if (r >= 0)
		memset(&notes[r], 0, sizeof notes[r]);
	irq_restore(f);
	return r;
}

int seg_export_for(const char *name, void *base, size_t size, int node, int rights)
{
	if (node < 0 || node >= MAX_NODES || node == node_id)
		return -EINVAL;
	irqflags_t f = irq_save();
	int r = segtab_export(&segtab, name, base, size, 0);
	if (r >= 0) {
		memset(&notes[r], 0, sizeof notes[r]);
		if (segtab_grant(&segtab, r, node, rights) < 0) {
			segtab_unexport(&segtab, r);
			r = -EINVAL;
		}
	}
	irq_restore(f);
	return r;
}

int seg_grant(int seg, int node, int rights)
{
	irqflags_t f = irq_save();
	int r = segtab_grant(&segtab, seg, node, rights);
	irq_restore(f);
	return r;
}

int seg_revoke(int seg, int node)
{
	irqflags_t f = irq_save();
	int r = segtab_revoke(&segtab, seg, node);
	irq_restore(f);
	return r;
}

int seg_unexport(int seg)
{
	irqflags_t f = irq_save();
	int r = segtab_unexport(&segtab, seg);
	if (r == 0)
		waitq_wake_all(&notes[seg].wq);
	irq_restore(f);
	return r;
}

int seg_inhibit(int seg, int on)
{
	irqflags_t f = irq_save();
	int r = segtab_inhibit(&segtab, seg, on);
	irq_restore(f);
	return r;
}

int seg_notify(int seg, int on, seg_notify_fn fn, void *arg)
{
	irqflags_t f = irq_save();
	struct segslot *s = seg_get(seg);
	if (s) {
		notes[seg].notify = on;
		notes[seg].fn = fn;
		notes[seg].fn_arg = arg;
	}
	irq_restore(f);
	return s ? 0 : -EBADF;
}

int seg_ticket(int seg, int node, uint32_t *gen)
{
	irqflags_t f = irq_save();
	struct segslot *s = seg_get(seg);
	if (s && node >= 0 && node < MAX_NODES)
		*gen = s->gen[node];
	irq_restore(f);
	return s && node >= 0 && node < MAX_NODES ? 0 : -EBADF;
}

long seg_wait(int seg, uint64_t *seen, uint64_t timeout_ns)
{
	uint64_t end = cycles() + ns_to_cycles(timeout_ns);
	irqflags_t f = irq_save();
	struct segslot *s = seg_get(seg);
	struct segnote *n = s ? &notes[seg] : NULL;
	long r = -ETIMEDOUT;

	while (s && s->used && n->arrivals == *seen) {
		uint64_t now = cycles();
		if (now >= end)
			break;
		waitq_wait_timeout(&n->wq, cycles_to_ns(end - now));
	}
	if (n && n->arrivals != *seen) {
		*seen = n->arrivals;
		r = (long)*seen;
	} else if (!s || !s->used) {
		r = -EBADF;
	}
	irq_restore(f);
	return r;
}

void *seg_base(int seg, size_t *size)
{
	struct segslot *s = seg_get(seg);

	if (!s)
		return NULL;
	if (size)
		*size = s->size;
	return s->base;
}

struct handler_args {
	int seg;
	void (*fn)(void *arg, int seg);
	void *arg;
};

static void *handler_main(void *p)
{
	struct handler_args a = *(struct handler_args *)p;
	uint64_t seen = 0;

	free(p);
	for (;;) {
		long r = seg_wait(a.seg, &seen, 1000000000ULL);
		if (r == -EBADF)
			return NULL;
		if (r >= 0)
			a.fn(a.arg, a.seg);
	}
}

int seg_handler_thread(int seg, void (*fn)(void *arg, int seg), void *arg)
{
	struct handler_args *a = malloc(sizeof *a);
	struct thread *t;

	if (!a)
		return -ENOMEM;
	if (!seg_get(seg)) {
		free(a);
		return -EBADF;
	}
	a->seg = seg;
	a->fn = fn;
	a->arg = arg;
	t = thread_create("seg-handler", handler_main, a, PRIO_HIGH, 0);
	if (!t) {
		free(a);
		return -ENOMEM;
	}
	thread_detach(t);
	return 0;
}

/* Notify a segment of an arrival (irq context, interrupts off). */
static void arrived(int seg, uint32_t off, uint32_t count)
{
	struct segnote *n = &notes[seg];

	if (!n->notify)
		return;
	ctr.notifications++;
	n->arrivals++;
	if (n->fn)
		n->fn(n->fn_arg, seg, off, count);
	if (n->wq.head)
		waitq_wake_all(&n->wq);
}

/* --- the receiving half (fabric receive path, interrupts off) ------------- */

static void count_refusal(int st)
{
	switch (st) {
	case RMS_BAD_SEG: ctr.refused_bad_seg++; break;
	case RMS_STALE: ctr.refused_stale++; break;
	case RMS_RIGHTS: ctr.refused_rights++; break;
	case RMS_BOUNDS: ctr.refused_bounds++; break;
	case RMS_INHIBIT: ctr.refused_inhibit++; break;
	case RMS_ALIGN: ctr.refused_align++; break;
	default: ctr.refused_malformed++; break;
	}
}


static void answer(int src, uint8_t op, uint32_t tag, int status, const void *data, size_t dlen,
		   int raw)
{
	struct rmem_msg a = { 0 };

	a.op = op;
	a.tag = tag;
	a.status = status;
	a.count = (uint32_t)dlen;
	if (op == RM_ATOMIC_RESP)
		a.count = 8;
	if (raw)
		a.flags = RM_F_RAW;
	send_msg(src, &a, data, dlen, raw ? RMEM_UNRELIABLE : 0);
}

/* A request from src.  Return FABRIC_BUSY to be called again later. */
static int serve(int src, const struct rmem_msg *m, const uint8_t *data, int raw)
{
	struct rmem_segview v;
	int st, needs_answer;

	if (m->op == RM_LOOKUP) {
		char name[RMEM_NAME_LEN];
		uint64_t size = 0;
		struct rmem_msg a = { 0 };
		if (!raw && !fabric_can_send(src))
			return FABRIC_BUSY;
		memcpy(name, data, m->count);
		name[m->count] = '\0';
		a.op = RM_LOOKUP_RESP;
		a.tag = m->tag;
		a.status = RMS_NOENT;
		int i = segtab_find(&segtab, name);
		if (i >= 0) {
			struct segslot *s = &segtab.slot[i];
			a.seg = (uint16_t)i;
			a.gen = s->gen[src];
			a.count = s->rights[src];
			a.status = s->rights[src] ? RMS_OK : RMS_RIGHTS;
			size = s->size;
		}
		send_msg(src, &a, &size, 8, raw ? RMEM_UNRELIABLE : 0);
		return 0;
	}
	if (m->op == RM_FENCE) {
		if (!raw && !fabric_can_send(src))
			return FABRIC_BUSY;
		answer(src, RM_STATUS, m->tag, RMS_OK, NULL, 0, raw);
		return 0;
	}

	v = segtab_view(&segtab, m->seg, src);
	st = rmem_check(&v, m);
	needs_answer = st != RMS_OK || m->op != RM_WRITE || (m->flags & RM_F_ACK);
	/* Nothing changes unless its answer can go: a retry must not apply twice. */
	if (needs_answer && !raw && !fabric_can_send(src))
		return FABRIC_BUSY;
	if (st != RMS_OK) {
		count_refusal(st);
		answer(src, RM_STATUS, m->tag, st, NULL, 0, raw);
		return 0;
	}
	struct segslot *s = &segtab.slot[m->seg];
	uint8_t *target = s->base + m->off;
	switch (m->op) {
	case RM_WRITE:
		memcpy(target, data, m->count);
		ctr.applied_write++;
		if (m->flags & RM_F_ACK)
			answer(src, RM_STATUS, m->tag, RMS_OK, NULL, 0, raw);
		if (m->flags & RM_F_INTR)
			arrived(m->seg, m->off, m->count);
		break;
	case RM_READ_REQ:
		ctr.applied_read++;
		answer(src, RM_READ_RESP, m->tag, RMS_OK, target, m->count, raw);
		break;
	case RM_CAS: {
		uint64_t expect, desired, old;
		memcpy(&expect, data, 8);
		memcpy(&desired, data + 8, 8);
		old = expect;
		__atomic_compare_exchange_n((uint64_t *)target, &old, desired, 0, __ATOMIC_SEQ_CST,
					    __ATOMIC_SEQ_CST);
		ctr.applied_atomic++;
		answer(src, RM_ATOMIC_RESP, m->tag, RMS_OK, &old, 8, raw);
		if (m->flags & RM_F_INTR)
			arrived(m->seg, m->off, 8);
		break;
	}
	case RM_FADD: {
		uint64_t add, old;
		memcpy(&add, data, 8);
		old = __atomic_fetch_add((uint64_t *)target, add, __ATOMIC_SEQ_CST);
		ctr.applied_atomic++;
		answer(src, RM_ATOMIC_RESP, m->tag, RMS_OK, &old, 8, raw);
		if (m->flags & RM_F_INTR)
			arrived(m->seg, m->off, 8);
		break;
	}
	}
	return 0;
}

/* An answer from src to one of our requests. */
static void complete(int src, const struct rmem_msg *m, const uint8_t *data)
{
	struct pending *p = pend_find(src, m->tag);

	if (m->op == RM_STATUS && (m->tag & ASYNC_TAG)) {
		/*
		 * A refused asynchronous WRITE: the tag names the descriptor;
		 * keep the first error until rmem_sync.
		 */
		int rd = (int)((m->tag >> 20) & 0x7ff);
		if (m->status != RMS_OK && rd < RMEM_MAX_DESC && descs[rd].used && descs[rd].node == src) {
			ctr.errors_reported++;
			if (!descs[rd].error)
				descs[rd].error = rmem_status_errno(m->status);
			return;
		}
		ctr.responses_unmatched++;
		return;
	}
	if (!p || p->done) {
		ctr.responses_unmatched++;
		return;
	}
	switch (m->op) {
	case RM_READ_RESP: {
		if (p->kind != P_READ) {
			ctr.responses_unmatched++;
			return;
		}
		if (m->status == RMS_OK) {
			struct segslot *s = seg_get(p->lseg);
			/* The local segment may have gone or shrunk meanwhile. */
			if (m->count != p->count || !s || (uint64_t)p->doff + p->count > s->size) {
				ctr.responses_unmatched++;
				p->status = RMS_MALFORMED;
			} else {
				memcpy(s->base + p->doff, data, p->count);
				if (p->flags & RMEM_INTR)
					arrived(p->lseg, p->doff, p->count);
			}
		}
		break;
	}
	case RM_ATOMIC_RESP:
		if (p->kind != P_ATOMIC) {
			ctr.responses_unmatched++;
			return;
		}
		memcpy(&p->value, data, 8);
		break;
	case RM_STATUS:
		/* The verdict on a SYNC write or fence, or any request refused. */
		if (p->kind != P_STATUS && m->status == RMS_OK) {
			ctr.responses_unmatched++;
			return;
		}
		break;
	case RM_LOOKUP_RESP:
		if (p->kind != P_LOOKUP) {
			ctr.responses_unmatched++;
			return;
		}
		p->answer = *m;
		memcpy(&p->value, data, 8);
		break;
	}
	if (m->status != RMS_OK && !p->status)
		p->status = m->status;
	if (m->op == RM_STATUS && m->status != RMS_OK && p->kind == P_READ)
		p->status = m->status;
	if (m->status != RMS_OK)
		ctr.errors_reported++;
	p->done = 1;
	waitq_wake_all(&p->wq);
}

static int receive(int src, const uint8_t *payload, size_t len, int raw)
{
	struct rmem_msg m;
	const uint8_t *data;
	size_t dlen;

	if (rmem_parse(payload, len, &m, &data, &dlen) != RMS_OK) {
		ctr.refused_malformed++;
		return 0;
	}
	switch (m.op) {
	case RM_READ_RESP:
	case RM_ATOMIC_RESP:
	case RM_STATUS:
	case RM_LOOKUP_RESP:
		complete(src, &m, data);
		return 0;
	default:
		return serve(src, &m, data, raw);
	}
}

static int rmem_handler(int src, const uint8_t *payload, size_t len, struct pktbuf *pb)
{
	(void)pb;
	return receive(src, payload, len, 0);
}

static int rmem_raw_handler(int src, const uint8_t *payload, size_t len, struct pktbuf *pb)
{
	(void)pb;
	receive(src, payload, len, 1);
	return 0;
}

static int rmem_init(void)
{
	if (!fabric_ready())
		return -ENODEV;
	if (fabric_register(RMEM_PROTO, rmem_handler) < 0 || fabric_register_raw(RMEM_PROTO, rmem_raw_handler) < 0)
		return -EBUSY;
	segtab_init(&segtab, node_id);
	ready = 1;
	return 0;
}
INIT_HOOK(INIT_PROTO, rmem, rmem_init);

/* --- the issuing half ---------------------------------------------------- */

int rmem_import(int node, const char *name)
{
	struct rmem_msg m = { 0 };
	size_t n = strlen(name);
	struct pending *p;
	int r, rd = -1;

	if (!ready)
		return -ENODEV;
	if (n == 0 || n >= RMEM_NAME_LEN || node < 0 || node >= num_nodes || node == node_id)
		return -EINVAL;
	irqflags_t f = irq_save();
	p = pend_alloc(P_LOOKUP, node);
	irq_restore(f);
	if (!p)
		return -EAGAIN;
	m.op = RM_LOOKUP;
	m.count = (uint32_t)n;
	m.tag = p->tag;
	r = fabric_send(node, RMEM_PROTO, &m, sizeof m, name, n, 0);
	f = irq_save();
	if (r == 0)
		r = pend_wait(p, WAIT_NS);
	if (r == 0 && p->status != RMS_OK)
		r = p->status == RMS_RIGHTS ? -EACCES : rmem_status_errno(p->status);
	if (r == 0) {
		for (int i = 0; i < RMEM_MAX_DESC; i++) {
			if (!descs[i].used) {
				rd = i;
				break;
			}
		}
		if (rd < 0) {
			r = -ENOSPC;
		} else {
			struct desc *d = &descs[rd];
			memset(d, 0, sizeof *d);
			d->used = 1;
			d->node = node;
			d->seg = p->answer.seg;
			d->gen = p->answer.gen;
			d->rights = (int)p->answer.count;
			d->size = p->value;
		}
	}
	p->kind = P_FREE;
	irq_restore(f);
	return r < 0 ? r : rd;
}

int rmem_import_wait(int node, const char *name, uint64_t timeout_ns)
{
	uint64_t end = cycles() + ns_to_cycles(timeout_ns);
	int r;

	while (((r = rmem_import(node, name)) == -ENOENT || r == -EACCES) && cycles() < end)
		thread_sleep_ns(10000000);
	return r;
}

int rmem_attach(int node, int seg, uint32_t gen, size_t size, int rights)
{
	int rd = -ENOSPC;

	if (node < 0 || node >= num_nodes || node == node_id || seg < 0 || seg >= RMEM_MAX_SEGS ||
	    size == 0 || size > 0xffffffffULL || (rights & ~RMEM_ALL))
		return -EINVAL;
	irqflags_t f = irq_save();
	for (int i = 0; i < RMEM_MAX_DESC; i++) {
		if (!descs[i].used) {
			struct desc *d = &descs[i];
			memset(d, 0, sizeof *d);
			d->used = 1;
			d->node = node;
			d->seg = (uint16_t)seg;
			d->gen = gen;
			d->size = size;
			d->rights = rights;
			rd = i;
			break;
		}
	}
	irq_restore(f);
	return rd;
}

int rmem_release(int rd)
{
	irqflags_t f = irq_save();
	struct desc *d = desc_get(rd);
	if (d)
		d->used = 0;
	irq_restore(f);
	return d ? 0 : -EBADF;
}

int rmem_desc_info(int rd, int *node, size_t *size, int *rights)
{
	struct desc *d = desc_get(rd);

	if (!d)
		return -EBADF;
	if (node)
		*node = d->node;
	if (size)
		*size = d->size;
	if (rights)
		*rights = d->rights;
	return 0;
}

/* The issuer's own check (paper 2.1: the co-processor verifies the sender's rights). */
static int local_check(struct desc *d, uint32_t off, uint64_t count, int right)
{
	if (!d)
		return -EBADF;
	if (!(d->rights & right))
		return -EACCES;
	if (count == 0 || (uint64_t)off + count > d->size)
		return -EINVAL;
	return 0;
}

/* Send m and wait for its STATUS answer. */
static int request_status(struct desc *d, struct rmem_msg *m, const void *data, size_t dlen, int flags)
{
	irqflags_t f = irq_save();
	struct pending *p = pend_alloc(P_STATUS, d->node);
	irq_restore(f);
	int r;

	if (!p)
		return -EAGAIN;
	m->tag = p->tag;
	m->flags |= RM_F_ACK;
	r = send_msg(d->node, m, data, dlen, flags);
	f = irq_save();
	if (r == 0)
		r = pend_wait(p, WAIT_NS);
	if (r == 0)
		r = rmem_status_errno(p->status);
	p->kind = P_FREE;
	irq_restore(f);
	return r;
}

int rmem_write(int rd, uint32_t off, const void *src, uint32_t count, int flags)
{
	struct desc *d = desc_get(rd);
	struct rmem_msg m = { 0 };
	int r;

	if ((r = local_check(d, off, count, RMEM_W)) < 0)
		return r;
	if (count > RMEM_MAX_XFER)
		return -EINVAL;
	m.op = RM_WRITE;
	m.seg = d->seg;
	m.gen = d->gen;
	m.off = off;
	m.count = count;
	if (flags & RMEM_INTR)
		m.flags |= RM_F_INTR;
	if (flags & RMEM_UNRELIABLE)
		m.flags |= RM_F_RAW;
	if (flags & RMEM_SYNC)
		return request_status(d, &m, src, count, flags);
	/* Refusals come back tagged with the descriptor. */
	m.tag = ASYNC_TAG | (uint32_t)rd << 20 | (__atomic_fetch_add(&next_async, 1, __ATOMIC_RELAXED) & 0xfffff);
	return send_msg(d->node, &m, src, count, flags);
}

int rmem_write_block(int rd, uint32_t off, const void *src, size_t count, int flags)
{
	struct desc *d = desc_get(rd);
	const uint8_t *p = src;
	int r;

	if ((r = local_check(d, off, count, RMEM_W)) < 0)
		return r;
	while (count) {
		uint32_t n = count > RMEM_MAX_XFER ? RMEM_MAX_XFER : (uint32_t)count;
		/* Only the last piece notifies or waits: it arrives last (in order). */
		int fl = count > n ? (flags & RMEM_UNRELIABLE) : flags;
		if ((r = rmem_write(rd, off, p, n, fl)) < 0)
			return r;
		off += n;
		p += n;
		count -= n;
	}
	return 0;
}

int rmem_read(int rs, uint32_t soff, uint32_t count, int lseg, uint32_t doff, int flags)
{
	struct desc *d = desc_get(rs);
	struct segslot *s;
	struct rmem_msg m = { 0 };
	struct pending *p;
	int r;

	if ((r = local_check(d, soff, count, RMEM_R)) < 0)
		return r;
	if (count > RMEM_MAX_XFER)
		return -EINVAL;
	irqflags_t f = irq_save();
	s = seg_get(lseg);
	if (!s || (uint64_t)doff + count > s->size) {
		irq_restore(f);
		return -EINVAL;
	}
	p = pend_alloc(P_READ, d->node);
	if (p) {
		p->lseg = lseg;
		p->doff = doff;
		p->count = count;
		p->flags = flags;
	}
	irq_restore(f);
	if (!p)
		return -EAGAIN;
	m.op = RM_READ_REQ;
	m.seg = d->seg;
	m.gen = d->gen;
	m.off = soff;
	m.count = count;
	m.tag = p->tag;
	if (flags & RMEM_UNRELIABLE)
		m.flags |= RM_F_RAW;
	r = send_msg(d->node, &m, NULL, 0, flags);
	if (r < 0) {
		p->kind = P_FREE;
		return r;
	}
	return (int)(p - pend);
}

int rmem_read_poll(int h)
{
	if (h < 0 || h >= NPENDING || pend[h].kind != P_READ)
		return -EBADF;
	return pend[h].done;
}

/* Wait for handle h of kind k and free it (not after -ETIMEDOUT); *value gets its value. */
static int pend_finish(int h, enum pkind k, uint64_t *value, uint64_t timeout_ns)
{
	int r;

	if (h < 0 || h >= NPENDING || pend[h].kind != k)
		return -EBADF;
	irqflags_t f = irq_save();
	r = pend_wait(&pend[h], timeout_ns);
	if (r == -ETIMEDOUT) {
		irq_restore(f);
		return r;
	}
	if (r == 0) {
		r = rmem_status_errno(pend[h].status);
		if (r == 0 && value)
			*value = pend[h].value;
	}
	pend[h].kind = P_FREE;
	irq_restore(f);
	return r;
}

int rmem_read_wait(int h, uint64_t timeout_ns)
{
	return pend_finish(h, P_READ, NULL, timeout_ns);
}

/* Send an atomic; return its pending handle (>= 0) or a negative error. */
static int atomic_start(int rd, uint8_t op, uint32_t off, const void *data, size_t dlen, int flags)
{
	struct desc *d = desc_get(rd);
	struct rmem_msg m = { 0 };
	struct pending *p;
	int r;

	if ((r = local_check(d, off, 8, RMEM_A)) < 0)
		return r;
	if (off & 7)
		return -EINVAL;
	irqflags_t f = irq_save();
	p = pend_alloc(P_ATOMIC, d->node);
	irq_restore(f);
	if (!p)
		return -EAGAIN;
	m.op = op;
	m.seg = d->seg;
	m.gen = d->gen;
	m.off = off;
	m.count = 8;
	m.tag = p->tag;
	if (flags & RMEM_INTR)
		m.flags |= RM_F_INTR;
	/* Always on the reliable channel (paper 2.3: the CAS is reliable). */
	r = fabric_send(d->node, RMEM_PROTO, &m, sizeof m, data, dlen, 0);
	if (r < 0) {
		p->kind = P_FREE;
		return r;
	}
	return (int)(p - pend);
}

int rmem_atomic_wait(int h, uint64_t *old, uint64_t timeout_ns)
{
	return pend_finish(h, P_ATOMIC, old, timeout_ns);
}

static int atomic_op(int rd, uint8_t op, uint32_t off, const void *data, size_t dlen, uint64_t *old,
		     int flags)
{
	int h = atomic_start(rd, op, off, data, dlen, flags), r;

	if (h < 0)
		return h;
	if ((r = rmem_atomic_wait(h, old, WAIT_NS)) == -ETIMEDOUT)
		pend[h].kind = P_FREE;		/* nobody will wait for it again */
	return r;
}

int rmem_cas_start(int rd, uint32_t off, uint64_t expect, uint64_t desired, int flags)
{
	uint64_t v[2] = { expect, desired };

	return atomic_start(rd, RM_CAS, off, v, sizeof v, flags & RMEM_INTR);
}

int rmem_cas_flags(int rd, uint32_t off, uint64_t expect, uint64_t desired, uint64_t *old, int flags)
{
	uint64_t v[2] = { expect, desired };

	return atomic_op(rd, RM_CAS, off, v, sizeof v, old, flags & RMEM_INTR);
}

int rmem_cas(int rd, uint32_t off, uint64_t expect, uint64_t desired, uint64_t *old)
{
	return rmem_cas_flags(rd, off, expect, desired, old, 0);
}

int rmem_fadd_flags(int rd, uint32_t off, uint64_t add, uint64_t *old, int flags)
{
	return atomic_op(rd, RM_FADD, off, &add, sizeof add, old, flags & RMEM_INTR);
}

int rmem_fadd(int rd, uint32_t off, uint64_t add, uint64_t *old)
{
	return rmem_fadd_flags(rd, off, add, old, 0);
}

int rmem_sync(int rd, uint64_t timeout_ns)
{
	struct desc *d = desc_get(rd);
	struct rmem_msg m = { 0 };
	struct pending *p;
	int r;

	if (!d)
		return -EBADF;
	irqflags_t f = irq_save();
	p = pend_alloc(P_STATUS, d->node);
	irq_restore(f);
	if (!p)
		return -EAGAIN;
	/* In order behind everything sent before it, so its answer comes after theirs. */
	m.op = RM_FENCE;
	m.tag = p->tag;
	r = fabric_send(d->node, RMEM_PROTO, &m, sizeof m, NULL, 0, 0);
	f = irq_save();
	if (r == 0)
		r = pend_wait(p, timeout_ns);
	p->kind = P_FREE;
	if (r == 0) {
		r = d->error;
		d->error = 0;
	}
	irq_restore(f);
	return r;
}

int rmem_test_forge(int rd, int seg, int64_t gen, int64_t size, int rights)
{
	struct desc *d = desc_get(rd);

	if (!d)
		return -EBADF;
	if (seg >= 0)
		d->seg = (uint16_t)seg;
	if (gen >= 0)
		d->gen = (uint32_t)gen;
	if (size >= 0)
		d->size = (uint64_t)size;
	if (rights >= 0)
		d->rights = rights;
	return 0;
}

void rmem_counters(struct rmem_counters *out)
{
	irqflags_t f = irq_save();
	*out = ctr;
	irq_restore(f);
}

void rmem_print_stats(void)
{
	struct rmem_counters c;

	rmem_counters(&c);
	printf("rmem: applied write %lu read %lu atomic %lu; refused bad_segment %lu stale %lu "
	       "rights %lu bounds %lu inhibited %lu misaligned %lu malformed %lu\n",
	       c.applied_write, c.applied_read, c.applied_atomic, c.refused_bad_seg, c.refused_stale,
	       c.refused_rights, c.refused_bounds, c.refused_inhibit, c.refused_align,
	       c.refused_malformed);
	printf("rmem: errors reported back %lu, unmatched answers %lu, notifications %lu\n",
	       c.errors_reported, c.responses_unmatched, c.notifications);
}
