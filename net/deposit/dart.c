/*
 * DART's tables, the per-cell receive dispatch with exception blocking
 * and re-enable (DART 6.4), and the send side's forming of cells from the
 * send registers (DART 6.3); the operation logic is in dart_op.c.  See
 * dart.h.
 */
#include <errno.h>
#include <string.h>

#include "kernel/crc.h"
#include "net/deposit/dart.h"
#include "net/deposit/dart_op.h"

const char *const dart_kind_names[CK_NKINDS] = {
	[CK_NOP] = "nop",
	[CK_WRITE] = "write",
	[CK_READ] = "read",
	[CK_FETCH] = "fetch",
	[CK_BLOCK] = "block",
	[CK_SWEXC] = "software",
};

const char *const dart_exc_names[DEX_N] = {
	[DEX_NONE] = "none",
	[DEX_CHECK] = "check",
	[DEX_CRC] = "crc",
	[DEX_BOUNDS] = "bounds",
	[DEX_ALIGN] = "align",
	[DEX_PROT] = "protection",
	[DEX_UNIMPL] = "unimplemented",
	[DEX_NOREPLY] = "no_reply_connection",
	[DEX_SOFTWARE] = "software",
	[DEX_STATUS] = "send_status",
	[DEX_PAGE] = "page_fault",
};

void dart_init(struct dart *d)
{
	memset(d, 0, sizeof *d);
	crc_cell_tables();
}

void dart_spill_init(struct dart *d, struct dart_spill *pool, unsigned n, unsigned per_conn)
{
	if (n >= DART_SPILL_NIL)
		n = DART_SPILL_NIL - 1;
	d->spill = pool;
	d->spill_cap = (uint16_t)n;
	d->spill_conn_max = (uint16_t)(per_conn < n ? per_conn : n);
	d->spill_used = 0;
	d->spill_free = n ? 0 : DART_SPILL_NIL;
	for (unsigned i = 0; i < n; i++)
		pool[i].next = (uint16_t)(i + 1 < n ? i + 1 : DART_SPILL_NIL);
}

/* The oldest held cell of c: its hold queue's first, else its first in the spill pool. */
static const struct cell *backlog_head(const struct dart *d, const struct dart_conn *c)
{
	return c->hold_n ? &c->hold[c->hold_head] : &d->spill[c->sp_head].cell;
}

static void backlog_pop(struct dart *d, struct dart_conn *c)
{
	if (c->hold_n) {
		c->hold_head = (uint16_t)(c->hold_head + 1 == c->hold_cap ? 0 : c->hold_head + 1);
		c->hold_n--;
		return;
	}
	uint16_t at = c->sp_head;
	c->sp_head = d->spill[at].next;
	c->sp_n--;
	d->spill[at].next = d->spill_free;
	d->spill_free = at;
	d->spill_used--;
}

/* Every held cell of c goes; counted in reset_cells if reset. */
static void backlog_clear(struct dart *d, struct dart_conn *c, int reset)
{
	if (reset)
		d->ctr.reset_cells += c->hold_n + c->sp_n;
	c->hold_n = 0;
	c->hold_head = 0;
	while (c->sp_n)
		backlog_pop(d, c);
}

/* --- tables ----------------------------------------------------------------- */

int dart_ep_create(struct dart *d, void *base, size_t size, int prot)
{
	if (!base || ((uintptr_t)base & 4095) || size == 0 || (size & (CELL_DATA - 1)) ||
	    size > UINT32_MAX - CELL_DATA || (prot & ~(DART_EP_READ | DART_EP_WRITE)))
		return -EINVAL;
	for (int i = 0; i < DART_MAX_EP; i++) {
		struct dart_ep *ep = &d->ep[i];
		if (ep->used)
			continue;
		ep->base = base;
		ep->size = (uint32_t)size;
		ep->prot = (uint8_t)prot;
		ep->users = 0;
		ep->paged = 0;
		ep->used = 1;
		return i;
	}
	return -ENOSPC;
}

int dart_ep_protect(struct dart *d, int ep, uint32_t off, uint32_t len, int prot)
{
	struct dart_ep *e;

	if (ep < 0 || ep >= DART_MAX_EP || !d->ep[ep].used)
		return -EBADF;
	e = &d->ep[ep];
	/*
	 * Whole pages of the endpoint: a page cut short by the endpoint's end
	 * holds memory that is not the endpoint's, which the page's entry
	 * would protect as well.
	 */
	if (len == 0 || (off % DART_PAGE) || (len % DART_PAGE) || off >= e->size || len > e->size - off ||
	    (prot & ~e->prot))
		return -EINVAL;
	if (!dart_pages.protect || !dart_pages.rights)
		return -ENOSYS;
	int r = dart_pages.protect((uintptr_t)e->base + off, len, prot);
	if (r == 0)
		e->paged = 1;		/* checked by page from now on */
	return r;
}

int dart_ep_destroy(struct dart *d, int ep)
{
	if (ep < 0 || ep >= DART_MAX_EP || !d->ep[ep].used)
		return -EBADF;
	if (d->ep[ep].users)
		return -EBUSY;
	d->ep[ep].used = 0;
	return 0;
}

int dart_conn_open(struct dart *d, int vci, const struct dart_conn_cfg *cfg, struct cell *hold,
		   unsigned hold_cap)
{
	struct dart_conn *c;

	if (vci < 0 || vci >= DART_MAX_CONN)
		return -EINVAL;
	c = &d->conn[vci];
	if (c->state != DC_FREE)
		return -EBUSY;
	if (cfg->peer < 0 || cfg->peer >= DART_MAX_PEER || !(cfg->flags & (DART_RX | DART_TX)) ||
	    (cfg->flags & ~(DART_RX | DART_TX | DART_IPONLY | DART_DISCARD)) ||
	    cfg->reg_base > DART_NREGS || cfg->reg_count > DART_NREGS - cfg->reg_base ||
	    cfg->ip_base > DART_NINSTR || cfg->ip_count > DART_NINSTR - cfg->ip_base ||
	    cfg->reply < -1 || cfg->reply >= DART_MAX_CONN || hold_cap > 0xffff || (hold_cap && !hold))
		return -EINVAL;
	/* A multicast connection sends only, to its members, its peer among them. */
	if (cfg->group && (cfg->flags != DART_TX || !(cfg->group >> cfg->peer & 1)))
		return -EINVAL;
	if (cfg->ep < 0 || cfg->ep >= DART_MAX_EP || !d->ep[cfg->ep].used)
		return -EBADF;
	memset(c, 0, sizeof *c);
	c->flags = (uint8_t)cfg->flags;
	c->peer = (uint16_t)cfg->peer;
	c->group = cfg->group;
	c->ep = (uint16_t)cfg->ep;
	c->reply = (int16_t)cfg->reply;
	c->reg_base = (uint16_t)cfg->reg_base;
	c->reg_count = (uint16_t)cfg->reg_count;
	c->ip_base = (uint16_t)cfg->ip_base;
	c->ip_count = (uint16_t)cfg->ip_count;
	c->hold = hold;
	c->hold_cap = (uint16_t)hold_cap;
	cell_hdr_build(c->tx_hdr, (uint16_t)vci, 0);
	d->ep[cfg->ep].users++;
	c->state = DC_OPEN;
	return 0;
}

int dart_conn_close(struct dart *d, int vci)
{
	struct dart_conn *c;

	if (vci < 0 || vci >= DART_MAX_CONN || d->conn[vci].state == DC_FREE)
		return -EBADF;
	c = &d->conn[vci];
	d->ep[c->ep].users--;
	backlog_clear(d, c, 0);
	memset(c, 0, sizeof *c);
	return 0;
}

/* --- receive ---------------------------------------------------------------- */

static inline uint8_t cell_pt(const struct cell *cell)
{
	return (uint8_t)((cell->hdr[3] >> 1) & 7);
}

/* The connection goes on after dropping its exception's cell (skip or discard). */
static void drop_fault(struct dart_conn *c, const struct dart_exc *e)
{
	c->rx = e->skip_block ? RX_SKIP : RX_CONTROL;
}

/*
 * Apply one cell to open connection vci.  A fault blocks the connection
 * (or, with DART_DISCARD, drops the cell) and is 0: the cell is
 * consumed into the exception record.
 */
static int step(struct dart *d, int vci, const struct cell *cell,
			  const struct dart_sink *s)
{
	struct dart_conn *c = &d->conn[vci];
	struct dart_exc e;
	int r = dart_exec(d, vci, cell, cell_pt(cell), s, &e);

	if (r != -EFAULT)
		return r;
	d->ctr.exc[e.cls]++;
	c->exceptions++;
	if ((c->flags & DART_DISCARD) && e.cls != DEX_SOFTWARE) {
		/* "Error traps can also be configured to discard the offending cell" (6.4). */
		d->ctr.discarded++;
		c->discarded++;
		drop_fault(c, &e);
		return 0;
	}
	e.vci = (uint16_t)vci;
	memcpy(e.cell, cell, CELL_SIZE);
	c->exc = e;
	c->state = DC_EXCEPTION;
	s->exception(s->ctx, vci);
	return 0;
}

/*
 * Keep a cell behind an exception, in arrival order: 0, or -ENOBUFS if
 * the hold queue and the connection's part of the spill pool are full.
 * DART 6.4 retains the cells in the input FIFO and assumes "per
 * connection buffering and flow control at the destination" behind them:
 * the cells go to the connection's own hold queue, then to the spill
 * pool (the queue's cells stay older than the pool's: a cell joins the
 * queue only while the pool holds none of the connection's); at the stop
 * mark the sink's flow asks the sender to stop sending on it; and a cell
 * past all that (its sender did not stop) is refused, the caller's flow
 * control keeping it, rather than dropped.
 */
static __attribute__((cold, noinline)) int hold(struct dart *d, struct dart_conn *c, int vci, const struct cell *cell,
						const struct dart_sink *s)
{
	if (c->sp_n == 0 && c->hold_n < c->hold_cap) {
		unsigned at = c->hold_head + c->hold_n;
		if (at >= c->hold_cap)
			at -= c->hold_cap;
		memcpy(&c->hold[at], cell, CELL_SIZE);
		c->hold_n++;
	} else if (c->hold_cap && c->sp_n < d->spill_conn_max && d->spill_free != DART_SPILL_NIL) {
		uint16_t at = d->spill_free;
		d->spill_free = d->spill[at].next;
		d->spill_used++;
		memcpy(&d->spill[at].cell, cell, CELL_SIZE);
		d->spill[at].next = DART_SPILL_NIL;
		if (c->sp_n)
			d->spill[c->sp_tail].next = at;
		else
			c->sp_head = at;
		c->sp_tail = at;
		c->sp_n++;
		d->ctr.spilled++;
	} else {
		c->hold_full++;
		d->ctr.hold_full++;
		return -ENOBUFS;
	}
	d->ctr.held++;
	if (!c->flow_stop && c->hold_n + c->sp_n >= (c->hold_cap > 1 ? c->hold_cap / 2u : 1u)) {
		c->flow_stop = 1;
		d->ctr.flow_stops++;
		if (s->flow)
			s->flow(s->ctx, vci, 1);
	}
	return 0;
}

/* c holds nothing and is open: its sender may go on, if it was told to stop. */
static void flow_go(struct dart *d, struct dart_conn *c, int vci, const struct dart_sink *s)
{
	if (!c->flow_stop)
		return;
	c->flow_stop = 0;
	d->ctr.flow_goes++;
	if (s->flow)
		s->flow(s->ctx, vci, 0);
}

int dart_input(struct dart *d, int src, const uint8_t *cells, size_t n, size_t *next,
	       const struct dart_sink *s)
{
	size_t i = *next, one_by_one = 0;

	if (i == 0)
		d->ctr.frames++;
	for (; i < n; i++) {
		const struct cell *cell = (const struct cell *)(cells + i * CELL_SIZE);
		struct cell mine;
		struct dart_conn *c;
		uint16_t vci;
		uint8_t pt;
		int plain = 0;

		if (d->rx_shared) {
			/* Its header is checked, and the cell applied, from a copy of this node's own. */
			memcpy(&mine, cell, CELL_SIZE);
			__asm__ volatile("" ::: "memory");
			cell = &mine;
		}
		/*
		 * Most cells carry exactly the header their connection sends with
		 * (PT 0): equal bytes are a valid header, HEC included.  Others are
		 * parsed and checked in full.
		 */
		vci = (uint16_t)((cell->hdr[1] & 0x0f) << 12 | cell->hdr[2] << 4 | cell->hdr[3] >> 4);
		if (vci < DART_MAX_CONN && memcmp(cell->hdr, d->conn[vci].tx_hdr, CELL_HDR_LEN) == 0) {
			plain = 1;
			goto header_ok;
		}
		switch (cell_hdr_parse(cell->hdr, &vci, &pt)) {
		case CELL_HDR_OK:
			break;
		case CELL_HDR_HEC:
			/* Whose cell it is cannot be trusted: it blocks nobody. */
			d->ctr.bad_hec++;
			continue;
		default:
			d->ctr.bad_header++;
			continue;
		}
header_ok:
		if (vci >= DART_MAX_CONN || d->conn[vci].state == DC_FREE || !(d->conn[vci].flags & DART_RX)) {
			d->ctr.no_conn++;
			continue;
		}
		c = &d->conn[vci];
		/* A connection joins two nodes: another node's cell on it is refused, and blocks nothing. */
		if (c->peer != src) {
			d->ctr.wrong_peer++;
			continue;
		}
		if (c->state != DC_OPEN) {
			if (hold(d, c, vci, cell, s) < 0) {
				*next = i;
				return -ENOBUFS;
			}
			c->cells++;
			d->ctr.cells++;
			continue;
		}
		/*
		 * A block's data cells one after another in the frame, each with
		 * the plain header (PT 0, not the last): taken together, their
		 * CRC in one pass (dart_exec_data_run); where one of them would
		 * fault, one by one as any cell.
		 */
		if (plain && c->rx == RX_BLOCK && i >= one_by_one) {
			size_t k = 1;
			while (i + k < n && memcmp(cells + (i + k) * CELL_SIZE, c->tx_hdr, CELL_HDR_LEN) == 0)
				k++;
			/* The first cell's payload from the copy, the others' each read once where they lie. */
			if (k > 1 && dart_exec_data_run(d, vci, cell, cells + (i + 1) * CELL_SIZE, k) == 0) {
				c->cells += k;
				d->ctr.cells += k;
				i += k - 1;
				continue;
			}
			one_by_one = i + k;
		}
		if (step(d, vci, cell, s) == -EBUSY) {
			d->ctr.busy++;
			/*
			 * No room for its reply now: the request waits on its own
			 * connection (6.4: "cells belonging to other connections can
			 * be processed"), first in its hold queue, which keeps the
			 * connection's later cells behind it; dart_resume
			 * (DART_CONTINUE) offers it again.  Only a connection with no
			 * hold queue holds the frame.
			 */
			if (c->hold_cap == 0 || hold(d, c, vci, cell, s) < 0) {
				*next = i;
				return -EBUSY;
			}
			c->state = DC_WAIT;
			d->ctr.reply_waits++;
		}
		c->cells++;
		d->ctr.cells++;
	}
	*next = n;
	return 0;
}

int dart_peer_reset(struct dart *d, int peer)
{
	int touched = 0;

	for (int vci = 0; vci < DART_MAX_CONN; vci++) {
		struct dart_conn *c = &d->conn[vci];

		if (c->state == DC_FREE || c->peer != peer)
			continue;
		touched++;
		if (c->rx == RX_BLOCK)
			d->ctr.reset_blocks++;
		c->rx = RX_CONTROL;
		c->blk_next = c->blk_len = c->blk_crc = 0;
		c->blk_intr = 0;
		memset(&c->blk_ev, 0, sizeof c->blk_ev);
		backlog_clear(d, c, 1);
		/* The new incarnation was never told to stop (the caller forgets what it told the old one). */
		c->flow_stop = 0;
		if (c->state == DC_EXCEPTION) {
			c->exc_stale = 1;
		} else if (c->state == DC_REPLAY || c->state == DC_WAIT) {
			/* What the replay had left to apply was the old incarnation's. */
			c->retry = 0;
			c->state = DC_OPEN;
		}
	}
	return touched;
}

int dart_resume(struct dart *d, int vci, int how, const struct dart_sink *s)
{
	struct dart_conn *c;

	if (vci < 0 || vci >= DART_MAX_CONN || d->conn[vci].state == DC_FREE)
		return -EBADF;
	c = &d->conn[vci];
	switch (c->state) {
	case DC_OPEN:
		return how == DART_CONTINUE ? 0 : -EINVAL;
	case DC_EXCEPTION:
		if (how == DART_CONTINUE)
			return DART_BLOCKED;
		if (how == DART_RETRY && c->exc_stale)
			how = DART_SKIP;	/* its sender rebooted: the cell is not applied */
		c->exc_stale = 0;
		if (how == DART_SKIP) {
			d->ctr.skipped++;
			drop_fault(c, &c->exc);
		} else {
			c->retry = 1;
		}
		c->state = DC_REPLAY;
		break;
	case DC_WAIT:
		if (how != DART_CONTINUE)
			return -EINVAL;
		c->state = DC_REPLAY;
		break;
	default:
		return -EINVAL;
	}
	/* The cell kept in the exception record first, if retried; then the held cells in order. */
	if (c->retry) {
		struct cell cell;
		memcpy(&cell, c->exc.cell, CELL_SIZE);
		c->exc.cls = DEX_NONE;
		if (step(d, vci, &cell, s) == -EBUSY) {
			c->state = DC_WAIT;
			return -EAGAIN;
		}
		c->retry = 0;
		if (c->state == DC_EXCEPTION)
			return DART_BLOCKED;
	}
	while (c->hold_n || c->sp_n) {
		if (step(d, vci, backlog_head(d, c), s) == -EBUSY) {
			c->state = DC_WAIT;
			return -EAGAIN;
		}
		backlog_pop(d, c);
		if (c->state == DC_EXCEPTION)
			return DART_BLOCKED;
	}
	c->state = DC_OPEN;
	flow_go(d, c, vci, s);
	return 0;
}

/* --- send (DART 6.3) -------------------------------------------------------- */

void dart_reply_ctl(uint8_t out[CELL_CTL_LEN], uint64_t opcode, uint32_t operand, uint32_t index)
{
	struct cell_ctl ctl;

	ctl.opcode = (uint16_t)opcode;
	ctl.ro1 = (uint8_t)(opcode >> 16);
	ctl.ro2 = (uint8_t)(opcode >> 24);
	ctl.cond = (uint8_t)(opcode >> 32);
	ctl.operand = operand;
	ctl.idx[0] = (uint8_t)index;
	ctl.idx[1] = (uint8_t)(index >> 8);
	ctl.idx[2] = (uint8_t)(index >> 16);
	ctl.mask = (uint8_t)(index >> 24);
	cell_ctl_put(out, &ctl);
}

int dart_send_prepare(struct dart *d, int vci, struct dart_sendregs *r, uint32_t value,
		      struct cell *first, struct dart_send *out)
{
	struct dart_conn *c;
	struct dart_ep *ep;
	uint32_t size, bytes;
	uint64_t opc;

	if (vci < 0 || vci >= DART_MAX_CONN || d->conn[vci].state == DC_FREE || !(d->conn[vci].flags & DART_TX))
		return -EBADF;
	c = &d->conn[vci];
	ep = &d->ep[c->ep];
	if (!ep->used)
		return -EBADF;
	/* The status is the connection's state here: non-zero while it is blocked. */
	if ((r->mode & DART_MODE_STATUS_EXC) && c->state != DC_OPEN)
		return -EIO;
	r->go = value;
	if (r->mode & DART_MODE_GO_OPERAND)
		r->operand = value;
	size = r->size ? r->size : 2;
	if (size < 2 || (value & (CELL_DATA - 1)))
		return -EINVAL;
	if ((uint64_t)value + (uint64_t)size * 16 > ep->size)
		return -ERANGE;
	bytes = size * 16;
	/* The sender's source pages, as a READ's (3.2): a page it may not read is a page fault. */
	if (ep->paged && !dart_ep_pages_allow(ep, value, bytes, DART_EP_READ))
		return -EFAULT;
	opc = r->opcode;
	out->peer = c->peer;
	out->group = c->group;
	out->block = bytes > CELL_DATA;
	if (out->block) {
		uint16_t op = (uint16_t)opc;
		if (bytes - CELL_DATA > AAL5_MAX_LEN)
			return -EMSGSIZE;
		/* A block's control cell is a WRITE that AAL5 cells follow (DART 6.2). */
		if (!(op & CELL_IP)) {
			unsigned kind = (op & CO_KIND_MASK) >> CO_KIND_SHIFT;
			if (kind != CK_WRITE && kind != CK_BLOCK)
				return -EINVAL;
			opc = (opc & ~(uint64_t)CO_KIND_MASK) | CELL_OP(CK_BLOCK, 0);
		}
		cell_seg_start(&out->seg, (uint16_t)vci, ep->base + value + CELL_DATA, bytes - CELL_DATA);
	}
	memcpy(first->hdr, c->tx_hdr, CELL_HDR_LEN);
	dart_reply_ctl(first->ctl, opc, r->operand, r->index);
	memcpy(first->data, ep->base + value, CELL_DATA);
	cell_seal(first);
	return 0;
}
