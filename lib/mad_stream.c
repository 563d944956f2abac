/*
 * What the Madeleine drivers over a ring share (mad_drv.h): their start
 * over every peer, the pair of segments each end exports to the other and
 * imports from it (rmem, req), and the receive side's sleep until
 * something arrived (rmem, req, cell).
 */
#include <stdio.h>

#include "kernel/sync.h"
#include "kernel/x86.h"
#include "lib/mad_drv.h"
#include "net/net.h"
#include "net/rmem/rmem.h"

int mad_peers_start(int nodes, int self, int (*make)(int peer), int (*join)(int peer), void (*stop)(void))
{
	int r = 0;

	for (int i = 0; i < nodes && r == 0; i++)
		if (i != self)
			r = make(i);
	for (int i = 0; join && i < nodes && r == 0; i++)
		if (i != self)
			r = join(i);
	if (r < 0)
		stop();
	return r;
}

void mad_segpair_init(struct mad_segpair *s)
{
	s->ring_seg = s->ctl_seg = s->ring_rd = s->ctl_rd = -1;
}

int mad_segpair_export(struct mad_segpair *s, const char *ring_fmt, const char *ctl_fmt, int peer, void *ring,
		       size_t ring_len, void *ctl, size_t ctl_len)
{
	char name[RMEM_NAME_MAX];

	/* Ours for the peer's data and control: the peer alone writes both. */
	snprintf(name, sizeof name, ring_fmt, peer);
	s->ring_seg = seg_export_for(name, ring, ring_len, peer, RMEM_W);
	snprintf(name, sizeof name, ctl_fmt, peer);
	s->ctl_seg = seg_export_for(name, ctl, ctl_len, peer, RMEM_W);
	return s->ring_seg < 0 ? s->ring_seg : s->ctl_seg < 0 ? s->ctl_seg : 0;
}

int mad_segpair_import(struct mad_segpair *s, const char *ring_fmt, const char *ctl_fmt, int peer, int self)
{
	char name[RMEM_NAME_MAX];

	snprintf(name, sizeof name, ring_fmt, self);
	s->ring_rd = rmem_import_wait(peer, name, MAD_PEER_TIMEOUT_NS);
	if (s->ring_rd < 0)
		return s->ring_rd;
	snprintf(name, sizeof name, ctl_fmt, self);
	s->ctl_rd = rmem_import_wait(peer, name, MAD_PEER_TIMEOUT_NS);
	return s->ctl_rd < 0 ? s->ctl_rd : 0;
}

void mad_segpair_release(struct mad_segpair *s)
{
	/* Withdraw first: nothing lands in memory that is about to be freed. */
	if (s->ring_seg >= 0)
		seg_unexport(s->ring_seg);
	if (s->ctl_seg >= 0)
		seg_unexport(s->ctl_seg);
	if (s->ring_rd >= 0)
		rmem_release(s->ring_rd);
	if (s->ctl_rd >= 0)
		rmem_release(s->ctl_rd);
	mad_segpair_init(s);
}

void mad_rxwait_sleep(struct mad_rxwait *w, int (*ready)(void), uint64_t timeout_ns)
{
	irqflags_t f = irq_save();

	/*
	 * Where the node polls its link anyway, poll it here first
	 * (net_poll_wait).  A receiver told to give way (mad_recv_abort) since
	 * its last wait does not wait.
	 */
	w->kick = 0;
	if (!w->abort && !ready() && !net_poll_wait(&w->kick) && !ready())
		waitq_wait_timeout(&w->wq, timeout_ns);
	w->abort = 0;
	irq_restore(f);
}
