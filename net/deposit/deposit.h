/*
 * Hybrid deposit (Osborne, "A Hybrid Deposit Model for Low Overhead
 * Communication in High Speed LANs"; hybrid-deposit paper) in the kernel:
 * the kernel calls that set up endpoints and connections (3.2), the
 * destination's registers and instruction memory (3.4, 6.5), the send
 * registers (DART 6.3), conditional interrupts (3.4) and the host's
 * exception handling (DART 6.4).  The receive half runs in the fabric's
 * receive path (net/deposit/dart.h has the tables and the operation logic); the
 * design choices are in net/deposit/deposit.c.
 *
 * Where each call is: endpoints, connections, registers, instruction
 * memory, interrupts and exceptions in conn.c; the send registers and
 * sends (dep_sendregs, dep_send, dep_send_block, ...) in send.c;
 * deposit.c holds the node's state and its start.
 *
 * A typical duplex connection between nodes 0 and 1, VCI 7:
 *
 *	node 1 (destination of 0's cells)       node 0
 *	ep = dep_endpoint_create(buf, 4096,      ep = dep_endpoint_create(...);
 *	        DART_EP_READ | DART_EP_WRITE);
 *	dep_conn_open(7, &(struct dep_conn_cfg)  dep_conn_open(7, peer 1, ep,
 *	   { .peer = 0, .ep = ep, .flags =           DART_RX | DART_TX, reply 7);
 *	     DART_RX | DART_TX, .reply = 7 });   sr = dep_sendregs(7);
 *	                                         dep_send(sr, DART_OPC(CELL_OP(CK_WRITE,
 *	                                             CA_DIRECT), 0, 0, 0), 64,
 *	                                             DART_IDX(0, 0, 0, 0xff), 0);
 *
 * deposits the 32 bytes at offset 0 of node 0's endpoint at offset 64 of
 * node 1's.
 *
 * Unless marked (irq), call these from threads only.
 */
#ifndef NET_DEPOSIT_H
#define NET_DEPOSIT_H

#include <stddef.h>
#include <stdint.h>

#include "net/deposit/cell.h"
#include "net/deposit/dart.h"

#define DEP_CELLS_PER_FRAME 27	/* in Ethernet's frames: 27 * 53 = 1431 <= FAB_MTU; more in longer ones */
#define DEP_HOLD_DEFAULT 64	/* cells held behind an exception, per connection */
/*
 * Past its hold queue a blocked connection's cells go to the spill pool,
 * shared by all, up to DEP_SPILL_PER_CONN a connection: room for a whole
 * 64 KiB AAL5 block (1,366 cells) behind an exception and what follows it
 * while its sender hears the stop, so that such a block holds its own
 * connection only.  Only past that is the frame refused, which holds the
 * node pair's channel (every connection between them) until re-enabled.
 */
#define DEP_SPILL_CELLS 4096
#define DEP_SPILL_PER_CONN 2048

/* --- endpoints and connections (3.2, DART 6.1) ------------------------------ */

/* An endpoint: see dart_ep_create().  Endpoint number, -EINVAL, -ENOSPC. */
int dep_endpoint_create(void *base, size_t size, int prot);

/* 0, -EBADF, -EBUSY (a connection uses it). */
int dep_endpoint_destroy(int ep);

/*
 * Page protection inside an endpoint (3.2, 3.5): see dart_ep_protect().
 * Takes effect for the next cell.  0, -EBADF, -EINVAL, -ENOSPC.
 */
int dep_endpoint_protect(int ep, uint32_t off, uint32_t len, int prot);

struct dep_conn_cfg {
	int peer;		/* the other node */
	int ep;			/* this node's endpoint */
	int flags;		/* DART_RX, DART_TX, DART_IPONLY, DART_DISCARD */
	int reply;		/* VCI answers to READ and FETCH go on, or -1 */
	uint32_t reg_base, reg_count;	/* address-register window */
	uint32_t ip_base, ip_count;	/* instruction-memory window */
	unsigned hold;		/* cells held behind an exception (0: DEP_HOLD_DEFAULT) */
	/*
	 * Multicast (3.2): the nodes (bit n for node n) every cell sent on
	 * this VCI goes to, peer among them; DART_TX only.  Each member
	 * opens its end with DART_RX and this node as peer.  0: unicast.
	 */
	uint64_t group;
};

/*
 * Open this node's end of connection vci (both nodes open it, with the
 * same VCI).  0, -EINVAL (a field out of range, the peer is this node),
 * -EBADF (no such endpoint), -EBUSY (vci open), -ENOMEM.
 */
int dep_conn_open(int vci, const struct dep_conn_cfg *cfg);

/*
 * Tear down this end: held cells are dropped; later cells for vci are
 * refused.  0, -EBADF, -EBUSY (a send on it is in progress).
 */
int dep_conn_close(int vci);

/*
 * Re-enable a connection blocked by an exception (DART 6.4): DART_RETRY
 * applies the faulting cell again, DART_SKIP discards it (and the rest of
 * its block); then the cells held meanwhile are applied in order.  Return
 * 0 (open), DART_BLOCKED (a cell faulted again: its exception is raised),
 * -EAGAIN (a held cell waits for room for its reply; it goes on by
 * itself), -EINVAL (not blocked), -EBADF.
 */
int dep_conn_resume(int vci, int how);

/*
 * Name this node's end of connection vci, so that its peer (and only its
 * peer) can find the VCI with dep_conn_lookup (the name service of
 * net/call/call.h).  0, -EINVAL, -EBADF (not open), -EEXIST.  Closing
 * the connection forgets the name.
 */
int dep_conn_export(int vci, const char *name);

/*
 * The VCI under which node exported a connection named name with this
 * node: >= 0, or -ENOENT, -EACCES (its peer is another node), -EHOSTDOWN,
 * -ETIMEDOUT, -EINVAL.
 */
int dep_conn_lookup(int node, const char *name, uint64_t timeout_ns);

struct dep_conn_info {
	int state;		/* enum dart_state */
	struct dart_exc exc;	/* the current exception (state DC_EXCEPTION) */
	unsigned held;		/* cells held behind it */
	unsigned spilled;	/* ... of them in the spill pool, past the hold queue */
	int flow_stop;		/* receiving end: its sender was asked to stop (flow control, 6.4) */
	uint64_t stopped_by;	/* sending end: the nodes that asked us to stop sending on it */
	uint32_t hold_full;	/* refusals (back-pressure) of a cell: hold queue and spill full (since open) */
	uint64_t cells, exceptions, discarded, interrupts;
};

int dep_conn_info(int vci, struct dep_conn_info *out);

/* --- the destination's state (3.4, 3.5, DART 6.2, 6.5) ---------------------- */

/* Address register r (absolute) of this node: set, read, protect (DART_REG_R/W). */
int dep_reg_set(unsigned r, uint32_t v);
int dep_reg_get(unsigned r, uint32_t *v);
int dep_reg_protect(unsigned r, int prot);

/* r <- alu(<r>, operand) atomically with incoming cells; *newval gets the result. */
int dep_reg_op(unsigned r, unsigned alu, uint32_t operand, uint32_t *newval);

/*
 * Instruction memory slot (absolute): an operation in the cell's control
 * format; flags DART_I_ENTRY (senders may name it) and DART_I_NEXT(ip)
 * (the sequencer goes on with the instruction at ip of the window).
 */
int dep_instr_set(unsigned slot, const struct cell_ctl *ins, int flags);

/* --- interrupts and exceptions ------------------------------------------------ */

/*
 * Conditional interrupts on vci: fn(arg, ev) in the receive path (irq:
 * short, no sleeping), at the end of the compound operation that raised
 * it.  fn NULL: count and wake waiters only.
 */
typedef void (*dep_intr_fn)(void *arg, const struct dart_event *ev);
int dep_on_intr(int vci, dep_intr_fn fn, void *arg);

/*
 * Sleep until vci has had an interrupt after *seen (a count the caller
 * keeps, from 0), or timeout_ns.  The new count, -ETIMEDOUT, -EBADF.
 */
long dep_intr_wait(int vci, uint64_t *seen, uint64_t timeout_ns);

/*
 * The host exception handler of vci (vci -1: of every connection without
 * one of its own): fn(arg, e) runs in the kernel's exception thread for
 * each exception, with the record (class, detail, the cell).  It may call
 * dep_conn_resume().  Without a handler the exception is printed and the
 * connection stays blocked until dep_conn_resume().
 */
typedef void (*dep_exc_fn)(void *arg, const struct dart_exc *e);
int dep_on_exception(int vci, dep_exc_fn fn, void *arg);

/* --- send side (DART 6.3) ------------------------------------------------------ */

/* The send registers of connection vci (opened with DART_TX), or NULL. */
struct dart_sendregs *dep_sendregs(int vci);

/*
 * Write value to the go register: send (see dart_send_prepare() for what
 * and the errors), plus -EBUSY (a block is being sent on this connection),
 * -EWOULDBLOCK (a block, in interrupt context), and the fabric's errors.
 * A single cell may be sent from the receive path (irq).  While a node
 * the connection sends to has told it to stop (its receiving end holds
 * cells behind an exception: flow control per connection, 6.4), a thread
 * waits for the go and the receive path gets -EAGAIN; the connection's
 * other nodes, and every other connection, are not held up by it.  A
 * thread waits at most the stop deadline (dep_stop_timeout), then gets
 * -ETIMEDOUT (said on the console, with the node that stopped it).
 */
int dep_go(struct dart_sendregs *sr, uint32_t value);

/*
 * The stop deadline of dep_go: ns > 0 sets it; 0 leaves it.  The one in
 * force before, in ns.  dep_stop_ms= on the command line sets it at boot
 * (default 60000).
 */
uint64_t dep_stop_timeout(uint64_t ns);

/* Set opcode, operand and index, then write go (irq, as dep_go). */
static inline int dep_send(struct dart_sendregs *sr, uint64_t opcode, uint32_t operand,
			   uint32_t index, uint32_t go)
{
	sr->opcode = opcode;
	sr->operand = operand;
	sr->index = index;
	return dep_go(sr, go);
}

#ifdef NOW_TEST_HOOKS
/*
 * For tests only: send len bytes of raw cells (any bytes at all) to node
 * dst in one frame, as a hostile sender could.
 */
int dep_test_send_raw(int dst, const void *cells, size_t len);
/* A stop (stop 1) or go of vci, as the connection's receiving end sends it, to dst. */
int dep_test_send_flow(int dst, int vci, int stop);
#endif

/* --- accounting -------------------------------------------------------------- */

/* The kernel's counters beside the operation logic's (kernel/counters.h). */
#define DEP_COUNTERS(X) \
	X(LINE, "") \
	X(ONE, bad_frames, "bad frames")	/* frame length not a whole number of cells */ \
	X(ONE, tx_frames, "tx frames") \
	X(ONE, tx_cells, "cells") \
	X(ONE, send_refused, "sends refused") \
	/* sends refused: a source page the sender may not read (DEX_PAGE) */ \
	X(ONE, send_page_faults, "send page faults") \
	/* a frame's buffer waited for: none free, or the large pool's half left to receiving (fabric_pb_get) */ \
	X(ONE, send_buffer_waits, "buffer waits") \
	/* multicast cells that went to some members before the stopped ones */ \
	X(ONE, mcast_held, "multicast held") \
	/* a reply did not go after can_reply said yes: its request waits */ \
	X(ONE, reply_lost, "replies lost") \
	X(ONE, exc_handled, "exceptions handled") \
	X(ONE, exc_unhandled, "unhandled") \
	/* flow control per connection: stop and go messages sent, taken, refused; sends that waited */ \
	X(LINE, "flow messages") \
	X(ONE, flow_tx, "sent") \
	X(ONE, flow_rx, "taken") \
	X(ONE, flow_bad, "refused") \
	X(ONE, flow_waits, "sends waited")	/* a send waited for a go */ \
	/* ... and no go came in time (dep_stop_ns: -ETIMEDOUT) */ \
	X(ONE, flow_timeouts, "past the stop deadline")

/* Both: the kernel counts in its own (dep_stats, .dart unused), the operation logic in dep_dart.ctr. */
struct dep_counters {
	struct dart_counters dart;
	DEP_COUNTERS(COUNTER_FIELD)
};

void deposit_counters(struct dep_counters *out);
void deposit_print_stats(void);

#endif
