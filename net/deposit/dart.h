/*
 * DART (hybrid deposit 6): the state the hybrid deposit model keeps at a
 * node and the logic that applies incoming cells to it.  Pure: the kernel
 * (net/deposit/deposit.c) keeps one struct dart and calls these with interrupts
 * off; host unit tests and the fuzz target call them as they are.
 *
 *  - Connection table (DART 6.1, Fig. 5), indexed by the VCI: the peer
 *    node, the endpoint, the address-register window (base, count), the
 *    instruction-memory window (DART 6.5), the reply connection, options,
 *    the receive state (control cell, or data cells of a block), and the
 *    exception state with the cells held behind it (DART 6.4).
 *  - Endpoint table (6.1): base, bounds, protection.
 *  - Address registers (3.4, 6.2): one file of 32-bit registers per node,
 *    each marked sender-readable and/or sender-writable (3.5); connections
 *    see windows of it, which may overlap.
 *  - Instruction memory (6.5): operations in the cell's control format,
 *    each marked as an entry point for senders or not.
 *
 * dart_input() takes the cells of one fabric frame from a peer;
 * dart_resume() re-enables a connection after an exception.  Neither ever
 * blocks: what they need from their environment (room for a reply cell,
 * raising an interrupt or an exception) they ask of a struct dart_sink.
 * A cell changes state only when it commits, after every check passed
 * (6.4); one that faults changes nothing, and blocks its own connection
 * only.
 */
#ifndef NET_DART_H
#define NET_DART_H

#include <stddef.h>
#include <stdint.h>

#include "kernel/counters.h"

#include "net/deposit/cell.h"

#define DART_MAX_CONN 256	/* connection numbers: VCIs 0..255 */
#define DART_MAX_EP 64
#define DART_NREGS 1024
#define DART_NINSTR 256
#define DART_MAX_PEER 64
#define DART_PAGE 4096		/* the unit of page protection inside an endpoint (3.2) */

/* Connection options (struct dart_conn_cfg.flags). */
enum {
	DART_RX = 1,		/* cells from the peer on this VCI deposit here */
	DART_TX = 2,		/* this node sends on this VCI (send registers) */
	DART_IPONLY = 4,	/* refuse every cell that is not an instruction pointer (3.5) */
	DART_DISCARD = 8,	/* error traps discard the cell, no exception (6.4) */
};

enum { DART_EP_READ = 1, DART_EP_WRITE = 2 };	/* endpoint protection */
enum { DART_REG_R = 1, DART_REG_W = 2 };	/* address register protection (3.5) */
enum { DART_I_ENTRY = 1 };			/* instruction: senders may name it (6.5) */
/*
 * The sequencer (6.5: "a sequencer to step the destination through
 * several instructions per cell"): an instruction's flags may name the
 * next one, by its place in the connection's window, DART_I_NEXT(ip).
 * A cell runs at most DART_SEQ_MAX instructions; every one but the last
 * is a NOP (register operations and a conditional); the registers they
 * write are seen by the ones after and written back only when the whole
 * sequence commits (6.4, 6.5: "address register writes are cached and
 * only written back after the cell processing commits"), their
 * conditional interrupts raised then, before the last one's.
 */
#define DART_I_NEXT(ip) (((ip) + 1) << 8)
#define DART_I_NEXT_OF(flags) ((int)((unsigned)(flags) >> 8) - 1)
#define DART_SEQ_MAX 4

/* Connection states. */
enum dart_state {
	DC_FREE = 0,
	DC_OPEN,		/* cells are applied as they come */
	DC_EXCEPTION,		/* a cell faulted: later cells are held until re-enabled */
	DC_REPLAY,		/* re-enabled: the held cells are being applied */
	DC_WAIT,		/* re-enabled, but a held cell waits for room for its reply */
};

/* Exception classes (DART 6.4), in counters and records. */
enum dart_exc_class {
	DEX_NONE = 0,
	DEX_CHECK,		/* the control check byte is wrong */
	DEX_CRC,		/* data CRC-16, or AAL5 length/CRC-32, wrong */
	DEX_BOUNDS,		/* effective address, register index or ip beyond its window */
	DEX_ALIGN,		/* effective address not a multiple of 4 */
	DEX_PROT,		/* register or endpoint protection, entry point, IP-only connection */
	DEX_UNIMPL,		/* an unimplemented operation, or reserved bits set */
	DEX_NOREPLY,		/* a READ or FETCH on a connection without a usable reply connection */
	DEX_SOFTWARE,		/* CK_SWEXC: the host performs the cell */
	DEX_STATUS,		/* send side: go written while the status was non-zero (6.3) */
	DEX_PAGE,		/* page fault (6.5): a page of the endpoint without the right, at either end */
	DEX_N
};
extern const char *const dart_exc_names[DEX_N];

/* What a conditional interrupt reports (raised at the end of the compound operation). */
struct dart_event {
	uint16_t vci;
	uint8_t kind;		/* enum cell_kind of the operation */
	uint32_t operand;	/* the effective operand */
	uint32_t effaddr;	/* where the data went (WRITE, BLOCK, READ) */
	uint32_t len;		/* data bytes deposited: 32, or a whole block */
};

/* An exception: the class, what failed, and the cell retained (6.4). */
struct dart_exc {
	uint8_t cls;		/* enum dart_exc_class */
	uint8_t data_cell;	/* an AAL5 cell of a block, not a control cell */
	uint8_t skip_block;	/* skipping it discards the block's remaining cells */
	uint16_t vci;
	uint32_t detail;	/* the effective address, index, ip or field that failed */
	uint8_t cell[CELL_SIZE];
};

struct dart_ep {
	uint8_t *base;
	uint32_t size;		/* bounds: a multiple of 32 */
	uint8_t used, prot;
	uint16_t users;		/* open connections on it */
	/*
	 * Page protection inside the endpoint (3.2: "the host virtual memory
	 * page protection can be used within endpoints"): set, its pages'
	 * rights are the host's page tables' (dart_pages), checked on every
	 * page a cell's data touches; clear, every page has the endpoint's.
	 */
	uint8_t paged;
};

/*
 * The host's page protection: the rights (DART_EP_*) of the page at va,
 * and setting those of [va, va+len) (whole pages).  The kernel's are its
 * page tables (kernel/vm.h); host tests give their own.  NULL: there is
 * none (dart_ep_protect says -ENOSYS).
 */
struct dart_pages {
	int (*rights)(uintptr_t va);
	int (*protect)(uintptr_t va, size_t len, int prot);
};
extern struct dart_pages dart_pages;

/* Receive states of a connection (DART 6.2: "control cell or data cell"). */
enum { RX_CONTROL = 0, RX_BLOCK, RX_SKIP };

struct dart_conn {
	uint8_t state;		/* enum dart_state */
	uint8_t flags;
	uint8_t rx;		/* RX_CONTROL, RX_BLOCK, RX_SKIP (discarding a block's rest) */
	uint8_t retry;		/* replay: the exception's cell comes first */
	uint8_t exc_stale;	/* the exception's cell is from a peer that rebooted since */
	uint8_t flow_stop;	/* the held cells reached the stop mark: the sender is to stop (sink flow) */
	uint16_t peer, ep;
	int16_t reply;		/* reply connection, or -1 */
	uint64_t group;		/* multicast (3.2): the nodes a cell sent on it goes to; 0: peer alone */
	uint16_t reg_base, reg_count, ip_base, ip_count;
	/* block transfer in progress (rx == RX_BLOCK) */
	uint32_t blk_next, blk_len, blk_crc;
	uint8_t blk_intr;
	struct dart_event blk_ev;
	/* exception state (6.4) and the cells held behind it */
	struct dart_exc exc;
	struct cell *hold;
	uint16_t hold_cap, hold_head, hold_n;
	uint16_t sp_n;		/* held past the hold queue: a list in the spill pool, sp_head to sp_tail */
	uint32_t hold_full;	/* refusals (back-pressure) of a cell: hold queue and spill were full */
	/* send side: control header of this VCI, precomputed */
	uint8_t tx_hdr[CELL_HDR_LEN];
	uint16_t sp_head, sp_tail;
	uint64_t cells, exceptions, discarded;
};

/* 192 bytes (3 x 64): conn[vci] is cheap index arithmetic on the receive path (200 cost a deposit 2 instructions). */
_Static_assert(sizeof(struct dart_conn) == 192, "struct dart_conn grew: place new fields in its holes");

struct dart_instr {
	struct cell_ctl ctl;	/* the operation, in the cell's control format (6.5) */
	uint8_t flags;		/* DART_I_ENTRY */
	uint16_t next;		/* the sequencer: the next instruction's window ip + 1, 0 none */
};

/* The operation logic's counters (kernel/counters.h): each with the label it is printed with. */
#define DART_COUNTERS(X) \
	X(LINE, "rx") \
	X(ONE, frames, "frames") \
	X(ONE, cells, "cells")			/* cells accepted for a connection */ \
	X(PART, "; applied") \
	X(EACH, applied, 0, CK_NKINDS, dart_kind_names)	/* control cells committed, by kind */ \
	X(ONE, data_cells, "aal5 cells") \
	X(ONE, blocks, "blocks")		/* AAL5 cells committed, blocks completed */ \
	/* instructions run by the sequencer after a cell's first */ \
	X(ONE, sequenced, "instructions sequenced") \
	X(ONE, interrupts, "interrupts") \
	X(ONE, replies, "replies") \
	X(LINE, "refused") \
	X(ONE, bad_hec, "bad_hec") \
	X(ONE, bad_header, "bad_header") \
	X(ONE, no_conn, "no_connection") \
	X(ONE, wrong_peer, "wrong_peer") \
	X(LINE, "exceptions") \
	X(EACH, exc, DEX_NONE + 1, DEX_N, dart_exc_names)	/* faults by class (discarded ones too) */ \
	X(LINE, "cells") \
	X(ONE, discarded, "discarded")		/* faulting cells discarded (DART_DISCARD) */ \
	X(ONE, held, "held")			/* held behind an exception */ \
	X(ONE, spilled, "spilled")		/* ... of them held in the spill pool, past a hold queue */ \
	X(ONE, hold_full, "hold_full")		/* refused: the hold queues full */ \
	X(ONE, skipped, "skipped")		/* exception cells skipped */ \
	X(ONE, block_skipped, "block_skipped")	/* block cells after them */ \
	X(ONE, busy, "busy")			/* a request found no room for its reply */ \
	/* ... and waited on its own connection (DC_WAIT), the frame going on */ \
	X(ONE, reply_waits, "reply_waits") \
	/* a rebooted peer's unfinished blocks; held cells */ \
	X(ONE, reset_blocks, "reset_blocks") \
	X(ONE, reset_cells, "reset_cells") \
	/* a connection asked its sender to stop; to go on */ \
	X(ONE, flow_stops, "flow stops") \
	X(ONE, flow_goes, "goes")

extern const char *const dart_kind_names[CK_NKINDS];

struct dart_counters {
	DART_COUNTERS(COUNTER_FIELD)
};

struct dart {
	struct dart_conn conn[DART_MAX_CONN];
	struct dart_ep ep[DART_MAX_EP];
	uint32_t reg[DART_NREGS];
	uint8_t reg_prot[DART_NREGS];
	struct dart_instr imem[DART_NINSTR];
	struct dart_counters ctr;
	/* the spill pool (dart_spill_init): held cells past their hold queues */
	struct dart_spill *spill;
	uint16_t spill_cap, spill_free, spill_used, spill_conn_max;
	/*
	 * The frame dart_input takes lies in memory other nodes write (the
	 * shared-memory link's ring): every byte of it is read once.  A cell
	 * applied alone is copied first and read from the copy; a run of a
	 * block's data cells has each header compared once, each payload
	 * copied once into the endpoint, and the CRC taken there.
	 */
	uint8_t rx_shared;
};

/* A held cell in the spill pool: the next of its connection's, or of the free ones. */
struct dart_spill {
	struct cell cell;
	uint16_t next;
};
#define DART_SPILL_NIL 0xffff

/* What the operation logic needs from its environment. */
struct dart_sink {
	void *ctx;
	/*
	 * Can one reply cell go to peer now?  1 yes, 0 not now (the request
	 * waits: -EBUSY), negative never (peer is dead: DEX_NOREPLY).
	 */
	int (*can_reply)(void *ctx, int peer);
	/*
	 * Send a reply cell (only after can_reply said yes for this cell),
	 * before the request commits: 0 sent; -EHOSTDOWN peer is dead
	 * (DEX_NOREPLY); any other negative errno: not now (-EBUSY).  A
	 * request whose reply did not go changes nothing.
	 */
	int (*reply)(void *ctx, int peer, const struct cell *c);
	/* A conditional interrupt, at the end of the compound operation. */
	void (*intr)(void *ctx, const struct dart_event *ev);
	/* Connection vci entered the exception state (its record is in the table). */
	void (*exception)(void *ctx, int vci);
	/*
	 * Flow control per connection (6.4): connection vci holds so many
	 * cells that its sender is to stop sending on it (stop 1), or it
	 * holds none again and is open (stop 0).  Optional (NULL).
	 */
	void (*flow)(void *ctx, int vci, int stop);
};

struct dart_conn_cfg {
	int peer;		/* the node at the other end */
	int ep;			/* the endpoint cells deposit into / are sent from */
	int flags;		/* DART_RX, DART_TX, DART_IPONLY, DART_DISCARD */
	int reply;		/* VCI for answers to READ and FETCH, or -1 */
	uint32_t reg_base, reg_count;	/* address-register window */
	uint32_t ip_base, ip_count;	/* instruction-memory window */
	/*
	 * Multicast (3.2): bit n set for each node a cell sent on this VCI
	 * goes to (peer among them); a multicast connection only sends
	 * (DART_TX alone).  Each member opens its receiving end with this
	 * node as its peer, as for any connection.  0: peer alone.
	 */
	uint64_t group;
};

/* Empty tables; every register 0 and destination-only. */
void dart_init(struct dart *d);

/*
 * The spill pool: n cells (at most 0xfffe) shared by every connection, at
 * most per_conn of them a connection's, for the cells held behind an
 * exception or a reply wait once the connection's own hold queue is full
 * (6.4: "per connection buffering ... at the destination").  Without one
 * (dart_init alone) a full hold queue refuses the cell.  Call before any
 * connection opens.
 */
void dart_spill_init(struct dart *d, struct dart_spill *pool, unsigned n, unsigned per_conn);

/*
 * Endpoint [base, base+size) with protection DART_EP_*: size a non-zero
 * multiple of 32, below 4 GiB; base page-aligned (hybrid deposit 3.2).
 * Endpoints may overlap.  Return the endpoint number, -EINVAL or -ENOSPC.
 */
int dart_ep_create(struct dart *d, void *base, size_t size, int prot);

/*
 * Page protection inside endpoint ep (hybrid deposit 3.2: "the host
 * virtual memory page protection can be used within endpoints"): the pages
 * of [off, off + len) (off and len multiples of DART_PAGE, within the
 * endpoint) get prot, a subset of the endpoint's DART_EP_* (0: no access),
 * in the host's page tables (dart_pages): the host's own accesses obey
 * them too, and so does every endpoint over the same pages.  A deposit
 * (WRITE, BLOCK and its AAL5 cells) needs DART_EP_WRITE on every page its
 * data touches, a READ needs DART_EP_READ, else the page-fault exception
 * (DEX_PAGE, 6.5), nothing changed; a send needs DART_EP_READ on the pages
 * it reads (dart_send_prepare: -EFAULT).  Setting the endpoint's own
 * protection over a range gives it back.  0, -EBADF, -EINVAL, -ENOSYS (no
 * page protection here), or the host's error.
 */
int dart_ep_protect(struct dart *d, int ep, uint32_t off, uint32_t len, int prot);

/* Do the pages of [off, off + len) of endpoint ep all allow need (DART_EP_*)?  off + len within it. */
int dart_ep_pages_allow(const struct dart_ep *ep, uint32_t off, uint32_t len, int need);


/* Remove an endpoint no connection uses: 0, -EBADF, -EBUSY. */
int dart_ep_destroy(struct dart *d, int ep);

/*
 * Open connection vci as cfg says, holding up to hold_cap cells (in hold,
 * which the caller provides and keeps until close) behind an exception,
 * and as many more in the spill pool as it grants (none if hold_cap is 0).
 * Once it holds hold_cap / 2 (at least 1), the sink's flow asks its
 * sender to stop; once it holds none and is open again, to go on.
 * Return 0, -EINVAL (a field out of range, no direction), -EBADF (no such
 * endpoint), -EBUSY (vci open already).
 */
int dart_conn_open(struct dart *d, int vci, const struct dart_conn_cfg *cfg, struct cell *hold,
		   unsigned hold_cap);

/* Close: held cells and exception state go; later cells for it are refused.  0 or -EBADF. */
int dart_conn_close(struct dart *d, int vci);

/*
 * Apply the cells [*next, n) of one frame from src (n cells of CELL_SIZE
 * bytes at cells).  A READ or FETCH whose reply has no room now waits on
 * its own connection: it becomes the first of its held cells, the
 * connection DC_WAIT until dart_resume(DART_CONTINUE), and the frame goes
 * on (counted in reply_waits).  Return 0 with *next = n; or, with *next
 * at a cell that changed nothing and is to be offered again from there
 * later: -EBUSY, it needs room for a reply and its connection has no hold
 * queue to wait in;
 * -ENOBUFS, its connection is blocked by an exception and its hold queue
 * and its part of the spill pool are full (DART 6.4's flow control behind
 * an exception: a sender that did not stop when asked), so it waits until
 * the connection is re-enabled or closed.  d->rx_shared: the frame lies in
 * shared memory (see struct dart).
 */
int dart_input(struct dart *d, int src, const uint8_t *cells, size_t n, size_t *next,
	       const struct dart_sink *s);

/*
 * The peer node rebooted (a new incarnation is bound; net/fabric/member.h):
 * nothing of the old one may act after it.  On each connection to peer,
 * a block it left unfinished is aborted (the new one's cells would
 * otherwise continue it), the cells held behind an exception are
 * discarded, a replay in progress ends, and the exception's own cell can
 * no longer be retried (DART_RETRY skips it: its reply would reach the new
 * incarnation).  Counted in reset_blocks and reset_cells.  Return the
 * connections touched.
 */
int dart_peer_reset(struct dart *d, int peer);

/*
 * Re-enable a connection (6.4).  how: DART_RETRY applies the exception's
 * cell again (the host fixed what it needed), DART_SKIP discards it (and
 * the rest of its block); then the held cells are applied in order.
 * DART_CONTINUE only goes on with a replay that waited for reply room.
 * Return 0 (open again), DART_BLOCKED (a cell faulted again: a new
 * exception), -EAGAIN (waiting for reply room: call with DART_CONTINUE),
 * -EINVAL (not in an exception), -EBADF.
 */
enum { DART_RETRY = 0, DART_SKIP = 1, DART_CONTINUE = 2 };
#define DART_BLOCKED 1
int dart_resume(struct dart *d, int vci, int how, const struct dart_sink *s);

/*
 * The destination's own register operation (the host's access to the
 * address registers, 6.2): register r <- alu(<r>, operand) as a cell's
 * register operation would do it.  0 with *newval, or -EINVAL.
 */
int dart_reg_op(struct dart *d, unsigned r, unsigned alu, uint32_t operand, uint32_t *newval);

/* --- send side (DART 6.3) ---------------------------------------------------- */

/*
 * The six send registers of a connection, as an app sees them.  Writing
 * go (dep_go) sends: the control cell is formed from opcode, operand and
 * index, its data is the 32-byte block at offset go of the connection's
 * endpoint; size > 2 makes it a block transfer of size 16-byte blocks.
 */
struct dart_sendregs {
	uint64_t opcode;	/* DART_OPC(opcode, ro1, ro2, cond) */
	uint32_t operand;
	uint32_t index;		/* DART_IDX(a, b, c, mask) */
	uint32_t go;		/* the value last written to go */
	uint32_t size;		/* 16-byte blocks (minimum 2; 0 means 2); 0 after the last cell went */
	uint32_t mode;		/* DART_MODE_* */
};

enum {
	DART_MODE_GO_OPERAND = 1,	/* the operand is the value written to go */
	DART_MODE_STATUS_EXC = 2,	/* sending while the status is non-zero is an exception */
};

#define DART_OPC(opcode, ro1, ro2, cond) \
	((uint64_t)(uint16_t)(opcode) | (uint64_t)(uint8_t)(ro1) << 16 | \
	 (uint64_t)(uint8_t)(ro2) << 24 | (uint64_t)(uint8_t)(cond) << 32)
#define DART_IDX(a, b, c, mask) \
	((uint32_t)(uint8_t)(a) | (uint32_t)(uint8_t)(b) << 8 | (uint32_t)(uint8_t)(c) << 16 | \
	 (uint32_t)(uint8_t)(mask) << 24)

/* What writing go sends. */
struct dart_send {
	int peer;
	uint64_t group;		/* multicast: every node whose bit is set; 0: peer alone */
	int block;		/* AAL5 cells follow the control cell */
	struct cell_seg seg;	/* block: the AAL5 cells */
};

/*
 * Form what writing value to r's go register sends on vci (DART 6.3): the
 * control cell into *first and, for a block, the segmentation in out.
 * Sets r->go (and, in DART_MODE_GO_OPERAND, r->operand).  Return 0;
 * -EBADF (vci not open for sending, or no endpoint); -EIO (status
 * non-zero in DART_MODE_STATUS_EXC); -EINVAL (offset not 32-aligned, size
 * 1, or a block whose opcode is not a WRITE, a BLOCK or an instruction
 * pointer); -ERANGE
 * (beyond the endpoint); -EMSGSIZE (longer than AAL5 carries).
 */
int dart_send_prepare(struct dart *d, int vci, struct dart_sendregs *r, uint32_t value,
		      struct cell *first, struct dart_send *out);

/* The 13 control bytes of a reply (the data of a READ or FETCH request). */
void dart_reply_ctl(uint8_t out[CELL_CTL_LEN], uint64_t opcode, uint32_t operand, uint32_t index);

#endif
