/*
 * Hybrid deposit, the send side (DART 6.3): the send registers of each
 * connection and the write to "go", which sends one cell, or a block as
 * AAL5 cells, as many to a fabric message as the pair's frames hold.  See deposit.h.
 */
#include <errno.h>
#include <string.h>

#include "kernel/console.h"
#include "kernel/node.h"
#include "kernel/sync.h"
#include "kernel/thread.h"
#include "kernel/trace.h"
#include "kernel/trap.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"
#include "net/deposit/internal.h"
#include "net/fabric/fabric.h"
#include "net/net.h"

struct dart_sendregs dep_sendregs_tab[DART_MAX_CONN];

/* --- send side ------------------------------------------------------------------ */

struct dart_sendregs *dep_sendregs(int vci)
{
	if (vci < 0 || vci >= DART_MAX_CONN || dep_dart.conn[vci].state == DC_FREE ||
	    !(dep_dart.conn[vci].flags & DART_TX))
		return NULL;
	return &dep_sendregs_tab[vci];
}

/*
 * Cells in a frame to peer: as many as the pair's messages hold (27 in
 * Ethernet's 1500 bytes, 147 in 7872-byte frames, 1235 in the
 * shared-memory link's 64 KiB slots: a block of 32 KiB is one frame).  A
 * cell is a cell whatever frame carries it: the receiver takes a frame of
 * any whole number of cells (dart_input).
 */
static size_t cells_per_frame(int peer)
{
	size_t n = fabric_mtu(peer) / CELL_SIZE;

	return n > DEP_CELLS_PER_FRAME ? n : DEP_CELLS_PER_FRAME;
}

/*
 * Room for a frame of len bytes to peer (fabric_tx_begin): on the
 * shared-memory link, unkeyed, the NIC's own slot, so that the cells are
 * built where they go and nothing copies them again; else a packet
 * buffer.  In a thread, wait for one (fabric_pb_get leaves half the large
 * pool to the receive path).  Then write and send at once: in the slot,
 * interrupts are off until fabric_tx_end.
 */
static int begin_frame(struct fabric_tx *tx, int peer, size_t len)
{
	int r;

	while ((r = fabric_tx_begin(tx, peer, 0, DEP_PROTO, len, FABRIC_NOWAIT)) == -ENOBUFS) {
		if (in_irq)
			return r;
		dep_stats.send_buffer_waits++;
		thread_sleep_ns(200000);
	}
	/* A buffer's message waits for the window as fabric_send does (begin's flag was for the buffer). */
	tx->flags &= ~FABRIC_NOWAIT;
	return r;
}

static int flow_wait(int vci);

/*
 * Send a block's AAL5 cells on vci: first (taken from seg already), then
 * the rest of seg.  A stop from a receiving end (6.4's flow control) is
 * heeded between frames, not only when the block starts: a long block
 * behind an exception stops once its sender hears so.  (thread)
 */
static int send_block(int vci, int peer, struct cell_seg *seg, const struct cell *first)
{
	size_t per = cells_per_frame(peer), lead = 1;

	for (;;) {
		if (__builtin_expect(dep_flow[vci].stopped_by != 0, 0) && !lead) {
			irqflags_t f = irq_save();
			int r = dep_flow[vci].stopped_by ? flow_wait(vci) : 0;
			irq_restore(f);
			if (r < 0)
				return r;
		}
		size_t left = cell_seg_cells_left(seg) + lead;
		size_t n = left < per ? left : per, i = 0;
		struct fabric_tx tx;
		int r = begin_frame(&tx, peer, n * CELL_SIZE);
		if (r < 0)
			return r;
		uint8_t *p = tx.payload;
		if (lead) {
			memcpy(p, first, CELL_SIZE);
			i = 1;
			lead = 0;
		}
		cell_seg_fill(seg, p + CELL_SIZE * i, n - i);
		if ((r = fabric_tx_end(&tx)) < 0)
			return r;
		__atomic_fetch_add(&dep_stats.tx_frames, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&dep_stats.tx_cells, n, __ATOMIC_RELAXED);
		if (cell_seg_cells_left(seg) == 0)
			return 0;
	}
}

/* The nodes a send goes to: a multicast connection's members (3.2), or its peer. */
static uint64_t send_set(const struct dart_send *snd)
{
	return snd->group ? snd->group : 1ULL << snd->peer;
}

/*
 * One cell to every member of a multicast group (3.2): one frame for the
 * group (fabric_mcast), each member's copy acknowledged by it and sent
 * again to it alone if it missed it, so that its register operations run
 * exactly once there; a member that cannot take it now (told to stop, its
 * window full) gets it after, without holding up the others.
 */
static __attribute__((noinline)) int multicast_cell(uint64_t to, const struct cell *c)
{
	uint64_t group = to;
	int r = fabric_mcast(group, DEP_PROTO, c, CELL_SIZE, in_irq ? FABRIC_NOWAIT : 0, &to);

	if (r == 0 && (group & ~to)) {		/* the group's frame went */
		__atomic_fetch_add(&dep_stats.tx_frames, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&dep_stats.tx_cells, 1, __ATOMIC_RELAXED);
	}
	r = 0;
	/* The members the group's frame could not carry: one copy each. */
	for (int m = 0; to; m++, to >>= 1) {
		if (!(to & 1))
			continue;
		int e = fabric_send(m, DEP_PROTO, c, CELL_SIZE, NULL, 0, in_irq ? FABRIC_NOWAIT : 0);
		if (e < 0 && r == 0)
			r = e;
		if (e == 0) {
			__atomic_fetch_add(&dep_stats.tx_frames, 1, __ATOMIC_RELAXED);
			__atomic_fetch_add(&dep_stats.tx_cells, 1, __ATOMIC_RELAXED);
		}
	}
	return r;
}

/*
 * A node this connection sends to told it to stop (flow control per
 * connection, 6.4): wait for its go; a node that died or rebooted takes
 * its stop with it.  -EAGAIN in interrupt context, -EBADF if the
 * connection closes meanwhile, -ETIMEDOUT if no go came within the stop
 * deadline (dep_stop_timeout, dep_stop_ms=): a receiving end whose app
 * never handles its exception, or a node that stops and never lets go,
 * holds this sender no longer.  The stop stays: the next send waits again.
 * (interrupts off)
 */
static __attribute__((noinline)) int flow_wait(int vci)
{
	struct dep_flow *fl = &dep_flow[vci];
	uint64_t start = now_ns(), limit = dep_stop_ns;

	if (in_irq)
		return -EAGAIN;
	dep_stats.flow_waits++;
	while (fl->stopped_by) {
		for (int m = 0; m < MAX_NODES; m++)
			if ((fl->stopped_by >> m & 1) && fabric_peer_dead(m))
				dep_flow_release(vci, m);
		if (!fl->stopped_by)
			break;
		if (dep_dart.conn[vci].state == DC_FREE)
			return -EBADF;
		uint64_t waited = now_ns() - start;
		if (waited >= limit) {
			dep_stats.flow_timeouts++;
			kprintf("deposit: connection %d: node %d said stop and no go came in %lu ms; "
				"the send fails (-ETIMEDOUT)\n", vci, __builtin_ctzll(fl->stopped_by),
				(unsigned long)(waited / 1000000));
			return -ETIMEDOUT;
		}
		waitq_wait_timeout(&fl->wq, limit - waited < 100000000 ? limit - waited : 100000000);
	}
	return 0;
}

/*
 * A multicast cell while the members in held said stop: the others get it
 * now, the held ones once they say go (flow_wait: all of them, or its
 * deadline; -ETIMEDOUT then, the others having the cell).
 */
static __attribute__((noinline)) int multicast_held(int vci, uint64_t group, uint64_t held, const struct cell *c)
{
	int r = 0, e;

	dep_stats.mcast_held++;
	if (group & ~held)
		r = multicast_cell(group & ~held, c);
	irqflags_t f = irq_save();
	e = flow_wait(vci);
	irq_restore(f);
	if (e < 0)
		return r ? r : e;
	e = multicast_cell(held, c);
	return r ? r : e;
}

int dep_go(struct dart_sendregs *sr, uint32_t value)
{
	int vci = (int)(sr - dep_sendregs_tab), r;
	struct dart_send snd;
	struct cell first;

	if (sr < dep_sendregs_tab || sr >= dep_sendregs_tab + DART_MAX_CONN)
		return -EBADF;
	irqflags_t f = irq_save();
	/*
	 * Told to stop (6.4): wait for the go.  A multicast connection's
	 * single cell goes to the members that did not say stop first, and to
	 * those that did once they say go: one member's stop holds it alone.
	 */
	uint64_t held = 0;
	if (__builtin_expect(dep_flow[vci].stopped_by != 0, 0)) {
		if (dep_dart.conn[vci].group && !in_irq)
			held = dep_flow[vci].stopped_by & dep_dart.conn[vci].group;
		if (!held && (r = flow_wait(vci)) < 0) {
			irq_restore(f);
			return r;
		}
	}
	if (dep_notes[vci].tx_busy) {
		irq_restore(f);
		return -EBUSY;
	}
	r = dart_send_prepare(&dep_dart, vci, sr, value, &first, &snd);
	if (r == -EIO || r == -EFAULT) {
		/*
		 * DART 6.3: sending while the status is non-zero is an
		 * exception; so is reading a source page the sender may not
		 * read (3.2, the page fault of 6.5), at the sender.
		 */
		struct conn_note *n = &dep_notes[vci];
		if (r == -EIO)
			dep_stats.send_refused++;
		else
			dep_stats.send_page_faults++;
		memset(&n->status_exc, 0, sizeof n->status_exc);
		n->status_exc.cls = r == -EIO ? DEX_STATUS : DEX_PAGE;
		n->status_exc.vci = (uint16_t)vci;
		n->status_exc.detail = r == -EIO ? dep_dart.conn[vci].state : value;
		n->status_pending = 1;
		dep_wake_worker();
	}
	if (r < 0) {
		irq_restore(f);
		return r;
	}
	if (!snd.block) {
		/* Counted until it is queued: no block may start in between and enclose it. */
		dep_notes[vci].tx_singles++;
		irq_restore(f);
		trace_point(TS_MECH_SEND);
		/*
		 * One cell: written where it goes (on the shared-memory link, the
		 * NIC's slot); to each member of a multicast connection in turn,
		 * a member that cannot take it not keeping it from the others.
		 */
		int multi = snd.group != 0;
		if (__builtin_expect(!multi, 1))
			r = fabric_send(snd.peer, DEP_PROTO, &first, CELL_SIZE, NULL, 0, in_irq ? FABRIC_NOWAIT : 0);
		else if (!held)
			r = multicast_cell(snd.group, &first);	/* counts what went */
		else
			r = multicast_held(vci, snd.group, held, &first);
		f = irq_save();
		dep_notes[vci].tx_singles--;
		irq_restore(f);
		if (r < 0)
			return r;
		sr->size = 0;
		if (!multi) {
			__atomic_fetch_add(&dep_stats.tx_frames, 1, __ATOMIC_RELAXED);
			__atomic_fetch_add(&dep_stats.tx_cells, 1, __ATOMIC_RELAXED);
		}
		return 0;
	}
	if (in_irq) {
		irq_restore(f);
		return -EWOULDBLOCK;
	}
	if (held && (r = flow_wait(vci)) < 0) {
		irq_restore(f);
		return r;
	}
	/* A block: nothing else may go on this connection until its last cell. */
	dep_notes[vci].tx_busy = 1;
	while (dep_notes[vci].tx_singles) {
		irq_restore(f);
		thread_yield();
		f = irq_save();
	}
	irq_restore(f);
	/* Each member of a multicast connection gets the whole block, one after the other. */
	r = 0;
	for (uint64_t to = send_set(&snd), m = 0; to; m++, to >>= 1) {
		if (!(to & 1))
			continue;
		struct cell_seg seg = snd.seg;
		int e = send_block(vci, (int)m, &seg, &first);
		if (e < 0 && r == 0)
			r = e;
	}
	f = irq_save();
	dep_notes[vci].tx_busy = 0;
	irq_restore(f);
	if (r == 0)
		sr->size = 0;
	return r;
}

#ifdef NOW_TEST_HOOKS
int dep_test_send_raw(int dst, const void *cells, size_t len)
{
	return fabric_send(dst, DEP_PROTO, cells, len, NULL, 0, 0);
}

int dep_test_send_flow(int dst, int vci, int stop)
{
	struct dep_flow_msg m = { (uint16_t)vci, (uint8_t)(stop != 0), 0 };

	return fabric_send(dst, DEP_FLOW_PROTO, &m, sizeof m, NULL, 0, 0);
}
#endif

