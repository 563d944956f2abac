/*
 * Remote memory, the exporting side: the node's segment table (pure logic
 * in segtab.c), notification ("interrupt control", paper 2.1) and the
 * name service's resolver for segments.  See rmem.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/node.h"
#include "kernel/sync.h"
#include "kernel/thread.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"
#include "net/call/call.h"
#include "net/net.h"
#include "net/rmem/internal.h"

/* Remote memory's counters (rmem.h), every file of it counting here, and whether it is up. */
struct rmem_counters rmem_ctr;
int rmem_ready;

_Static_assert(RMEM_MAX_SEGS == SEGTAB_SLOTS && MAX_NODES == SEGTAB_NODES, "table sizes agree");

struct segtab rmem_segtab;
struct segnote rmem_notes[RMEM_MAX_SEGS];

struct segslot *rmem_seg(int seg)
{
	if (seg < 0 || seg >= RMEM_MAX_SEGS || !rmem_segtab.slot[seg].used)
		return NULL;
	return &rmem_segtab.slot[seg];
}

int seg_export(const char *name, void *base, size_t size, int rights)
{
	irqflags_t f = irq_save();
	int r = segtab_export(&rmem_segtab, name, base, size, rights);
	if (r >= 0)
		memset(&rmem_notes[r], 0, sizeof rmem_notes[r]);
	irq_restore(f);
	return r;
}

int seg_export_for(const char *name, void *base, size_t size, int node, int rights)
{
	if (node < 0 || node >= MAX_NODES || node == node_id)
		return -EINVAL;
	irqflags_t f = irq_save();
	int r = segtab_export(&rmem_segtab, name, base, size, 0);
	if (r >= 0) {
		memset(&rmem_notes[r], 0, sizeof rmem_notes[r]);
		if (segtab_grant(&rmem_segtab, r, node, rights) < 0) {
			segtab_unexport(&rmem_segtab, r);
			r = -EINVAL;
		}
	}
	irq_restore(f);
	return r;
}

/*
 * Inlined into its callers: the RPC server grants its stacks on every call,
 * and left to itself LTO's choice moves with unrelated code (45
 * instructions a call, rpc-simple in make cost).
 */
__attribute__((always_inline)) inline int seg_grant(int seg, int node, int rights)
{
	irqflags_t f = irq_save();
	int r = segtab_grant(&rmem_segtab, seg, node, rights);
	irq_restore(f);
	return r;
}

int seg_revoke(int seg, int node)
{
	irqflags_t f = irq_save();
	int r = segtab_revoke(&rmem_segtab, seg, node);
	irq_restore(f);
	return r;
}

int seg_unexport(int seg)
{
	irqflags_t f = irq_save();
	int r = segtab_unexport(&rmem_segtab, seg);
	if (r == 0)
		waitq_wake_all(&rmem_notes[seg].wq);
	irq_restore(f);
	return r;
}

int seg_inhibit(int seg, int on)
{
	irqflags_t f = irq_save();
	int r = segtab_inhibit(&rmem_segtab, seg, on);
	irq_restore(f);
	return r;
}

int seg_notify(int seg, int on, seg_notify_fn fn, void *arg)
{
	irqflags_t f = irq_save();
	struct segslot *s = rmem_seg(seg);
	if (s) {
		rmem_notes[seg].notify = on;
		rmem_notes[seg].fn = fn;
		rmem_notes[seg].fn_arg = arg;
	}
	irq_restore(f);
	return s ? 0 : -EBADF;
}

int seg_ticket(int seg, int node, uint32_t *gen)
{
	irqflags_t f = irq_save();
	struct segslot *s = rmem_seg(seg);
	if (s && node >= 0 && node < MAX_NODES)
		*gen = s->gen[node];
	irq_restore(f);
	return s && node >= 0 && node < MAX_NODES ? 0 : -EBADF;
}

long seg_wait(int seg, uint64_t *seen, uint64_t timeout_ns)
{
	uint64_t start = cycles(), end;
	irqflags_t f = irq_save();
	struct segslot *s = rmem_seg(seg);
	struct segnote *n = s ? &rmem_notes[seg] : NULL;
	long r = -ETIMEDOUT;

	/*
	 * Where the node polls its link anyway, poll it from this thread
	 * first (net_poll_wait, as call_wait does): the arrival is then taken
	 * without a switch to the idle thread and back.  Not for a wait
	 * shorter than the poll would be.
	 */
	if (s && n->arrivals == *seen && timeout_ns >= net_wait_spin_us() * 1000ULL) {
		n->kick = 0;
		if (n->arrivals == *seen)
			net_poll_wait(&n->kick);
	}
	end = start + ns_to_cycles(timeout_ns);
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
	struct segslot *s = rmem_seg(seg);

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
	if (!rmem_seg(seg)) {
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

void rmem_arrived(int seg, uint32_t off, uint32_t count)
{
	struct segnote *n = &rmem_notes[seg];

	if (!n->notify)
		return;
	rmem_ctr.notifications++;
	n->arrivals++;
	n->kick = 1;
	if (n->fn)
		n->fn(n->fn_arg, seg, off, count);
	if (n->wq.head)
		waitq_wake_all(&n->wq);
}

/* The name service's resolver for segments (irq): what `asker` may import. */
int rmem_seg_resolve(const char *name, int asker, void *answer, size_t *len)
{
	struct rmem_seg_answer a;
	int i = segtab_find(&rmem_segtab, name);
	const struct segslot *s;

	if (i < 0)
		return -ENOENT;
	s = &rmem_segtab.slot[i];
	if (asker < 0 || asker >= SEGTAB_NODES || !s->rights[asker])
		return -EACCES;
	a.seg = (uint16_t)i;
	a.rights = s->rights[asker];
	a.gen = s->gen[asker];
	a.size = s->size;
	memcpy(answer, &a, sizeof a);
	*len = sizeof a;
	return 0;
}
