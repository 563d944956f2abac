/*
 * Hybrid deposit in the kernel: the fabric receive handler for cells
 * (DEP_PROTO) and the exception thread, here; the kernel calls on
 * endpoints, connections, registers and exceptions in conn.c; the send
 * registers in send.c.  The tables and the operation logic are dart.c and
 * dart_op.c; the cell format is cell.h.  See deposit.h.
 *
 * Choices where the paper leaves one (DESIGN.md), and why:
 *
 *  - Transport.  Cells travel in fabric messages (DEP_PROTO) on the
 *    reliable channel, 1 to as many cells a message as the pair's frames
 *    hold (27 in Ethernet's, 147 in 7872-byte ones), in order per node pair and
 *    so per connection (ATM's guarantee, which 6.4 relies on).  A 32-byte
 *    deposit is one cell in one frame.  A message whose length is not a
 *    whole number of cells is dropped and counted: it is not a cell.
 *  - Control-field layout: cell.h.  The compound operation is spelled out
 *    in the opcode (kind, address generation and whether it comes before or
 *    after the register operations, where the conditional is tested,
 *    whether it interrupts and whether it guards register operation 2)
 *    plus one byte per register operation and one for the conditional, so
 *    one address generation, two register operations and one conditional
 *    (DART 6.5) fit the 16 control bytes with the operand, three register
 *    indices and the mask.  The check is CRC-8 (the HEC's polynomial, with
 *    its coset so an all-zero cell fails); the data CRC is CRC-16/CCITT.
 *  - Connection numbers.  The VCI is the connection number and indexes
 *    the connection table directly (VCI < 256).  A VCI names a connection
 *    between one pair of nodes, as an ATM VCI is local to a link: both
 *    ends open it with the same number (kernel calls on both sides), and
 *    a node's table holds each VCI once, so a VCI is in use with one peer
 *    at a time.  A cell on a VCI from any node but the connection's peer
 *    is refused and counted and blocks nothing, so no node can block
 *    another's connection.  VPI and GFC are 0: the fabric channel is the
 *    one path between two nodes.
 *  - Operations (3.4).  Besides WRITE and READ: NOP (register operations
 *    and the conditional only), FETCH (reply with register values before
 *    and after the operation: fetch-and-increment in one cell), BLOCK
 *    (the control cell of an AAL5 block) and SWEXC (software exception).
 *    Compare-and-swap: a NOP loads the new value into a register private
 *    to the connection's window, then a FETCH whose conditional (<a> ==
 *    operand) guards "a <- b" returns the old value and the outcome;
 *    letting the conditional guard register operation 2 is the one
 *    addition to Fig. 2, needed to make the swap conditional.  Effective
 *    addresses must be 4-byte aligned (the mask's unit), not 32: strided
 *    deposits (3.4) need any stride.  Registers are 32 bits, arithmetic
 *    wraps, comparisons are unsigned.
 *  - Protection (3.5): see dart_op.c.  "Sender-readable" covers every use
 *    of a register's value by a sender-named operand, not only a FETCH;
 *    registers an instruction names are the destination's, unchecked.
 *    Endpoints carry read and write protection (READ needs read, deposits
 *    need write), and so does each page inside an endpoint
 *    (dep_endpoint_protect, 3.2: "the host virtual memory page protection
 *    can be used within endpoints"): its rights are the page-table entry's
 *    (kernel/vm.c), the same bits the host's own accesses obey, so
 *    endpoints over the same pages share them.  A cell whose data touches
 *    a page without the right raises the page-fault exception (DEX_PAGE,
 *    6.5) at the destination; a send that reads a source page the sender
 *    may not read fails (-EFAULT) and raises it at the sender, as a
 *    DEX_STATUS is (6.3).  Until an endpoint's pages are first protected,
 *    no page is looked up (the endpoint's own rights cover them all).
 *  - Remote reads (3.4, 4, 6.5).  A READ or FETCH is answered from the
 *    receive path, not by interrupting the host (6.5's "more complicated
 *    receive controller"): one reply cell on the connection's reply
 *    connection (a VCI in this node's table, opened for sending), whose
 *    control fields are the first 13 data bytes of the request (4: "the
 *    data section contains control fields for the read reply message") and
 *    whose data is the block read (words the mask leaves out are 0) or,
 *    for FETCH, the words old a, b, c, new a, b, c, the condition, 0 (host
 *    byte order).  The reply is an ordinary cell at the requester: it
 *    deposits where its control says, under the requester's own checks.
 *    The reply is sent before the request commits (6.4: nothing changes
 *    before the last exception point), so a request whose reply did not
 *    go has changed nothing.  No room for it now (call_can_answer,
 *    net/call/call.h, or a failed send): the request waits on its own
 *    connection, as the first of its held cells (DC_WAIT), and the frame
 *    goes on, so that cells of other connections, and the node pair's
 *    other protocols, are not held up by it (6.4: "cells belonging to
 *    other connections can be processed"); the exception thread offers
 *    it again every millisecond (dart_resume, DART_CONTINUE), then the
 *    cells held behind it in order.  A connection opened without a hold
 *    queue has nowhere to wait: there the handler returns -EBUSY, which
 *    holds the frame and back-pressures that node pair, and remembers how
 *    many of the frame's cells it already applied, so that none is
 *    applied twice; the exception thread calls fabric_resume() every
 *    millisecond until it goes.  The reply connection's node is dead: the
 *    request raises DEX_NOREPLY, which blocks its own connection only
 *    (6.4), instead of holding the frame for ever.
 *  - Exceptions (6.4).  A faulting cell changes nothing and is kept in
 *    its connection's exception record; the connection is blocked and
 *    later cells for it are held, per connection, in a queue of
 *    DEP_HOLD_DEFAULT (or cfg.hold) cells, then in the spill pool
 *    (DEP_SPILL_CELLS shared, DEP_SPILL_PER_CONN at most a connection's);
 *    other connections, and the node pair's other protocols, go on: 6.4
 *    says "cells belonging to other connections can be processed" and
 *    assumes "per connection buffering and flow control at the
 *    destination" behind an exception.  That flow control: once a
 *    connection holds half its queue, its receiving end tells the sender
 *    to stop (a DEP_FLOW_PROTO message, struct dep_flow_msg), whose
 *    dep_go on that connection then waits; once it holds nothing and is
 *    open again, to go on.  The pool takes what was in flight meanwhile.
 *    A sender that does not stop (raw cells) fills the connection's part
 *    of the pool; the next cell is then refused with its frame (-EBUSY to
 *    the fabric, counted in dep_conn_info().hold_full and "hold_full" in
 *    the stats), so that the fabric keeps it and withholds credit from
 *    that node pair alone, and nothing is dropped (a block's cells past
 *    the queue would otherwise be lost, its last one among them);
 *    re-enabling or closing the connection offers the frame again.
 *    The host's exception handler (a callback run by the "dep-exc"
 *    thread) sees the record and re-enables with dep_conn_resume(): RETRY
 *    (after fixing the cause) or SKIP; then the held cells are replayed in
 *    order.  DART_DISCARD connections drop faulting cells instead (not
 *    software exceptions, which are requests to the host).  A connection
 *    keeps its place in a block across an exception; skipping a block's
 *    cell discards the rest of that block.  Cells with a bad HEC, a bad
 *    header or for a connection that is not open or not the sender's are
 *    counted and dropped: they belong to no connection.
 *  - Blocks (4, 6.2).  A BLOCK control cell deposits its 32 bytes; the
 *    AAL5 cells after it deposit each as it arrives (cut-through), each
 *    checked against the endpoint; the last cell's length and CRC-32 are
 *    checked before its own data is written.  A bad trailer raises a CRC
 *    exception on that cell; the data before it stays where the
 *    connection was allowed to write it.  The conditional interrupt of a
 *    BLOCK comes after its last cell.  A control cell whose check passed
 *    and that names a BLOCK (directly or by an instruction pointer into
 *    the window) carries its AAL5 cells with it whatever fault it raises
 *    (data CRC, IP-only connection, ...): skipped or discarded, they go
 *    too and are never parsed as control cells.  One whose check failed
 *    says nothing trustworthy, not even that a block follows.
 *  - Instruction memory (6.5): DART_NINSTR slots of struct dart_instr: an
 *    operation in the cell's control format, whose opcode says whether
 *    the operand, the indices and the mask come from the instruction or
 *    the message, and an entry-point bit.  A connection sees a window of
 *    it.  The sequencer: an instruction may name the next (DART_I_NEXT),
 *    up to DART_SEQ_MAX per cell; all but the last are NOPs, whose
 *    register writes the later ones see through the write cache and
 *    which commit with the last (6.4's roll-back stays whole: a fault
 *    anywhere in the sequence changes nothing).  Data moves only in the
 *    last, so a reply never goes for a sequence that did not commit.
 *  - Send registers (6.3): struct dart_sendregs, one per connection,
 *    written by the app directly; dep_go() is the write to "go".  opcode
 *    holds the 5 bytes of opcode and operation fields, index the three
 *    indices and the mask.  size counts 16-byte blocks (0 or 2: one cell;
 *    more: a block) and reads 0 once the last cell went.  Mode
 *    DART_MODE_GO_OPERAND: the value written to go is the operand as well
 *    as the source offset (so one write sends a block to the same offset
 *    at the destination).  Mode DART_MODE_STATUS_EXC: writing go while
 *    the connection's status here is non-zero (it is blocked by an
 *    exception) sends nothing, returns -EIO and raises a DEX_STATUS
 *    exception to the handler; the connection's state does not change.
 *  - Conditional interrupts: per connection, a callback in the receive
 *    path and a count threads wait on (dep_intr_wait).
 *  - "Cell processing can also be blocked globally" (6.4): every kernel
 *    call here runs with interrupts off, which stops the receive path.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kernel/init.h"
#include "kernel/node.h"
#include "kernel/sync.h"
#include "kernel/thread.h"
#include "kernel/trace.h"
#include "kernel/tsc.h"
#include "kernel/vm.h"
#include "kernel/x86.h"
#include "net/call/call.h"
#include "net/deposit/internal.h"
#include "net/fabric/fabric.h"
#include "net/net.h"

_Static_assert(DEP_CELLS_PER_FRAME * CELL_SIZE <= FAB_MTU, "a frame carries 27 cells");
_Static_assert(MAX_NODES <= DART_MAX_PEER, "every node can be a peer");

#define BUSY_POLL_NS 1000000ULL		/* retry held frames and replays every ms */
#define EXC_PRINT_MAX 20		/* unhandled exceptions printed in full */

struct dart dep_dart;
struct conn_note dep_notes[DART_MAX_CONN];
dep_exc_fn dep_default_exc_fn;
void *dep_default_exc_arg;
struct dep_counters dep_stats;
volatile int dep_replay_waiting;
int dep_ready;


/*
 * A frame held with -EBUSY, and how many of its cells are applied.  The
 * channel delivers nothing else from that node until it takes this frame
 * (kept in its receive window: the frame it offers next from that node is
 * this one; a dead channel delivers nothing more, a new boot session's
 * frames are dropped as stale and dep_peer_reset forgets this), so being
 * held and its length identify it.
 */
static struct {
	int held;
	size_t len, next;
} rx_resume[MAX_NODES];

static volatile int busy_pending, work;
static int hold_waiting;	/* a frame waits for room in a hold queue */
static struct waitq worker_wq = WAITQ_INIT;

/* --- the sink: what the operation logic asks of the kernel (irq) ------------ */

/* A dead node never takes a reply: the request's connection gets DEX_NOREPLY (6.4). */
static int sink_can_reply(void *ctx, int peer)
{
	(void)ctx;
	if (fabric_peer_dead(peer))
		return -EHOSTDOWN;
	return call_can_answer(peer);
}

static int sink_reply(void *ctx, int peer, const struct cell *c)
{
	int r;

	(void)ctx;
	r = call_answer(peer, DEP_PROTO, c, CELL_SIZE, NULL, 0, 0);
	if (r < 0) {
		dep_stats.reply_lost++;
		return fabric_peer_dead(peer) ? -EHOSTDOWN : r;
	}
	dep_stats.tx_frames++;
	dep_stats.tx_cells++;
	return 0;
}

static void sink_intr(void *ctx, const struct dart_event *ev)
{
	struct conn_note *n = &dep_notes[ev->vci];

	(void)ctx;
	n->intrs++;
	n->kick = 1;
	if (n->intr_fn)
		n->intr_fn(n->intr_arg, ev);
	if (n->wq.head)
		waitq_wake_all(&n->wq);
}

void dep_wake_worker(void)
{
	work = 1;
	if (worker_wq.head)
		waitq_wake_one(&worker_wq);
}

static void sink_exception(void *ctx, int vci)
{
	(void)ctx;
	dep_notes[vci].exc_pending = 1;
	dep_wake_worker();
}

/* --- flow control per connection (6.4) ------------------------------------------ */

static struct dart_spill spill_pool[DEP_SPILL_CELLS];
struct dep_flow dep_flow[DART_MAX_CONN];
static volatile int flow_dirty;	/* a stop or go did not go: the worker sends it */

/* dep_go's stop deadline (send.c, flow_wait). */
#define DEP_STOP_MS_DEFAULT 60000
uint64_t dep_stop_ns = DEP_STOP_MS_DEFAULT * 1000000ULL;

static const struct argspec dep_args[] = {
	{ "dep_stop_ms", ARG_INT, 1, 86400000, "deposit: a send told to stop waits this long for "
	  "the go, then fails with -ETIMEDOUT (default 60000)" },
	{ NULL, 0, 0, 0, NULL },
};
static const struct arg_table dep_argtab = { "deposit", dep_args, NULL };
ARGS_REGISTER(dep_argtab);

uint64_t dep_stop_timeout(uint64_t ns)
{
	uint64_t was = dep_stop_ns;

	if (ns)
		dep_stop_ns = ns;
	return was;
}

static int flow_msg(int peer, int vci, int stop)
{
	struct dep_flow_msg m = { (uint16_t)vci, (uint8_t)stop, 0 };
	int r = fabric_send(peer, DEP_FLOW_PROTO, &m, sizeof m, NULL, 0, FABRIC_NOWAIT);

	if (r == -EAGAIN || r == -ENOBUFS)
		return r;	/* no room now: again later */
	if (r == 0)
		dep_stats.flow_tx++;
	return 0;		/* sent, or its node is gone (a new incarnation starts unstopped) */
}

/*
 * Tell vci's sender what its receiving end wants now: stop while its held
 * cells reached the mark (dart_conn.flow_stop), else go on.  What could
 * not go now is left to the worker.  (interrupts off)
 */
void dep_flow_sync(int vci)
{
	struct conn_note *n = &dep_notes[vci];
	const struct dart_conn *c = &dep_dart.conn[vci];
	int want = c->state != DC_FREE && c->flow_stop;

	if (n->flow_sent && (!want || n->flow_peer != c->peer)) {
		if (flow_msg(n->flow_peer, vci, 0) < 0)
			goto later;
		n->flow_sent = 0;
	}
	if (want && !n->flow_sent) {
		if (flow_msg(c->peer, vci, 1) < 0)
			goto later;
		n->flow_sent = 1;
		n->flow_peer = (uint8_t)c->peer;
	}
	return;
later:
	flow_dirty = 1;
	dep_wake_worker();
}

static void dep_flow_sync_all(void)
{
	flow_dirty = 0;
	for (int vci = 0; vci < DART_MAX_CONN; vci++)
		if (dep_notes[vci].flow_sent || dep_dart.conn[vci].flow_stop)
			dep_flow_sync(vci);
}

static void sink_flow(void *ctx, int vci, int stop)
{
	(void)ctx;
	(void)stop;
	dep_flow_sync(vci);
}

/* Our sending end of a connection is told to stop, or to go on.  (irq) */
static int flow_handler(int src, const uint8_t *payload, size_t len, struct pktbuf *pb)
{
	struct dep_flow_msg m;

	(void)pb;
	if (len != sizeof m || src < 0 || src >= MAX_NODES) {
		dep_stats.flow_bad++;
		return 0;
	}
	memcpy(&m, payload, sizeof m);
	const struct dart_conn *c = &dep_dart.conn[m.vci < DART_MAX_CONN ? m.vci : 0];
	/* Only a node a cell on it goes to may stop a connection. */
	if (m.vci >= DART_MAX_CONN || m.stop > 1 || m.zero || c->state == DC_FREE || !(c->flags & DART_TX) ||
	    !((c->group ? c->group : 1ULL << c->peer) >> src & 1)) {
		dep_stats.flow_bad++;
		return 0;
	}
	dep_stats.flow_rx++;
	if (m.stop)
		dep_flow[m.vci].stopped_by |= 1ULL << src;
	else
		dep_flow_release(m.vci, src);
	return 0;
}

void dep_flow_release(int vci, int node)
{
	struct dep_flow *fl = &dep_flow[vci];

	fl->stopped_by &= node < 0 ? 0 : ~(1ULL << node);
	if (!fl->stopped_by && fl->wq.head)
		waitq_wake_all(&fl->wq);
}

const struct dart_sink dep_sink = { NULL, sink_can_reply, sink_reply, sink_intr, sink_exception, sink_flow };

/* --- the receive handler (fabric receive path, interrupts off) -------------- */

static int cell_handler(int src, const uint8_t *payload, size_t len, struct pktbuf *pb)
{
	size_t next = 0;

	if (len == 0 || len % CELL_SIZE || src < 0 || src >= MAX_NODES) {
		dep_stats.bad_frames++;
		return 0;
	}
	(void)pb;
	/* The same frame again after -EBUSY: its first cells are applied already. */
	if (rx_resume[src].held && rx_resume[src].len == len)
		next = rx_resume[src].next;
	trace_point(TS_MECH_RX);
	uint64_t waits = dep_dart.ctr.reply_waits;
	dep_dart.rx_shared = (uint8_t)fabric_rx_shared();
	int r = dart_input(&dep_dart, src, payload, len / CELL_SIZE, &next, &dep_sink);
	dep_dart.rx_shared = 0;
	if (dep_dart.ctr.reply_waits != waits) {
		/* A request waits for reply room on its connection: the worker offers it again. */
		dep_replay_waiting = 1;
		dep_wake_worker();
	}
	switch (r) {
	case 0:
		trace_point(TS_MECH_DONE);	/* every cell of the frame applied, held or waiting */
		rx_resume[src].held = 0;
		return 0;
	case -ENOBUFS:
		/* A hold queue is full: the frame waits until its connection is re-enabled or closed. */
		hold_waiting = 1;
		break;
	default:
		/* Room for a reply: the exception thread offers the frame again every millisecond. */
		busy_pending = 1;
		dep_wake_worker();
		break;
	}
	rx_resume[src].held = 1;
	rx_resume[src].len = len;
	rx_resume[src].next = next;
	return -EBUSY;
}

/*
 * A node rebooted (fabric_on_peer_reset): the frame of its old
 * incarnation held here is gone with its channel (and its buffer may
 * come back for another frame), and its connections forget its unfinished
 * block and held cells (dart_peer_reset).  (irq)
 */
static void dep_peer_reset(int node)
{
	if (node < 0 || node >= MAX_NODES)
		return;
	rx_resume[node].held = 0;
	/* A hold queue with room again: the tick offers refused frames anew. */
	dart_peer_reset(&dep_dart, node);
	/* Its new incarnation was told nothing, and told us nothing: no stop holds either way. */
	for (int vci = 0; vci < DART_MAX_CONN; vci++) {
		struct conn_note *n = &dep_notes[vci];
		if (n->flow_sent && n->flow_peer == node)
			n->flow_sent = 0;
		if (dep_flow[vci].stopped_by >> node & 1)
			dep_flow_release(vci, node);
	}
}

void dep_hold_freed(void)
{
	if (!hold_waiting)
		return;
	hold_waiting = 0;
	fabric_resume();	/* the handler sets hold_waiting again if a queue is still full */
}

/* --- the exception thread ------------------------------------------------------- */

static void report(int vci, const struct dart_exc *e)
{
	dep_exc_fn fn = dep_notes[vci].exc_fn ? dep_notes[vci].exc_fn : dep_default_exc_fn;
	void *arg = dep_notes[vci].exc_fn ? dep_notes[vci].exc_arg : dep_default_exc_arg;

	if (fn) {
		dep_stats.exc_handled++;
		fn(arg, e);
		return;
	}
	if (dep_stats.exc_unhandled++ < EXC_PRINT_MAX)
		printf("deposit: connection %d: %s exception (detail %#x%s); blocked until "
		       "dep_conn_resume\n", vci, dart_exc_names[e->cls], e->detail,
		       e->data_cell ? ", AAL5 cell" : "");
}

/*
 * Report exceptions to their handlers (in this thread, so handlers may
 * sleep and re-enable), go on with replays that waited for reply room,
 * and let held frames in again.
 */
static void *worker(void *arg)
{
	(void)arg;
	for (;;) {
		irqflags_t f = irq_save();
		while (!work && !busy_pending && !dep_replay_waiting && !flow_dirty)
			waitq_wait(&worker_wq);
		work = 0;
		if (flow_dirty)
			dep_flow_sync_all();
		for (int vci = 0; vci < DART_MAX_CONN; vci++) {
			struct conn_note *n = &dep_notes[vci];
			struct dart_exc e;
			if (n->status_pending) {
				n->status_pending = 0;
				e = n->status_exc;
				irq_restore(f);
				report(vci, &e);
				f = irq_save();
			}
			if (!n->exc_pending)
				continue;
			n->exc_pending = 0;
			/* Re-enabled meanwhile, or closed: nothing to report. */
			if (dep_dart.conn[vci].state != DC_EXCEPTION)
				continue;
			e = dep_dart.conn[vci].exc;
			irq_restore(f);
			report(vci, &e);
			f = irq_save();
		}
		irq_restore(f);
		if (!busy_pending && !dep_replay_waiting && !flow_dirty)
			continue;
		thread_sleep_ns(BUSY_POLL_NS);
		f = irq_save();
		if (dep_replay_waiting) {
			dep_replay_waiting = 0;
			for (int vci = 0; vci < DART_MAX_CONN; vci++)
				if (dep_dart.conn[vci].state == DC_WAIT &&
				    dart_resume(&dep_dart, vci, DART_CONTINUE, &dep_sink) == -EAGAIN)
					dep_replay_waiting = 1;
			dep_hold_freed();
		}
		if (busy_pending) {
			busy_pending = 0;
			fabric_resume();	/* the handler sets busy_pending again if still no room */
		}
		irq_restore(f);
		sched_maybe_preempt();
	}
	return NULL;
}

static int deposit_init(void)
{
	struct thread *t;

	if (!fabric_ready())
		return -ENODEV;
	dep_stop_ns = (uint64_t)arg_int("dep_stop_ms", DEP_STOP_MS_DEFAULT) * 1000000ULL;
	dart_init(&dep_dart);
	_Static_assert(DART_EP_READ == VM_READ && DART_EP_WRITE == VM_WRITE, "the page rights' bits");
	dart_pages.rights = vm_rights;
	dart_pages.protect = vm_protect;
	dart_spill_init(&dep_dart, spill_pool, DEP_SPILL_CELLS, DEP_SPILL_PER_CONN);
	/* A frame in the shared-memory link's ring is taken where it lies (dart_input reads it once). */
	if (fabric_register(DEP_PROTO, cell_handler) < 0 || fabric_register_in_place(DEP_PROTO) < 0 ||
	    fabric_register(DEP_FLOW_PROTO, flow_handler) < 0 ||
	    fabric_on_peer_reset(dep_peer_reset) < 0)
		return -EBUSY;
	t = thread_create("dep-exc", worker, NULL, PRIO_HIGH, 0);
	if (!t)
		return -ENOMEM;
	thread_detach(t);
	dep_ready = 1;
	return 0;
}
INIT_HOOK(INIT_SUBSYS_4, deposit, deposit_init);

/* --- accounting ------------------------------------------------------------------ */

void deposit_counters(struct dep_counters *out)
{
	irqflags_t f = irq_save();
	*out = dep_stats;
	out->dart = dep_dart.ctr;
	irq_restore(f);
}

#define COUNTER_TYPE struct dart_counters
static const struct counter_row dart_rows[] = { DART_COUNTERS(COUNTER_ROW) };
#undef COUNTER_TYPE
#define COUNTER_TYPE struct dep_counters
static const struct counter_row dep_rows[] = { DEP_COUNTERS(COUNTER_ROW) };
#undef COUNTER_TYPE

void deposit_print_stats(void)
{
	struct dep_counters c;

	deposit_counters(&c);
	counters_print("deposit", dart_rows, COUNTER_ROWS(dart_rows), &c.dart);
	counters_print("deposit", dep_rows, COUNTER_ROWS(dep_rows), &c);
}

