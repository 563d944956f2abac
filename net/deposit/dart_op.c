/*
 * The DART operation logic; see dart_op.h and, for the control format,
 * cell.h.
 *
 * A control cell is one compound operation: at most one address
 * generation, two register operations and one conditional (DART 6.5), in
 * the order its opcode gives.  Every check comes before the first change
 * (DART 6.4: state "does not get updated until after the point of the last
 * possible exception for that cell"): the register operations run on
 * copies of the registers the cell names (the address-register write cache
 * of DART 6.5), the effective address, its bounds and the reply's room are
 * worked out, and only then are the registers written back, the data
 * deposited, the reply sent and the interrupt raised.  So a cell that
 * faults has changed nothing, and retrying it after the host fixed the
 * cause is exactly as if it had not faulted.
 *
 * Protection (hybrid deposit 3.5): a register the *message* names (a
 * direct cell, or an instruction that takes its indices from the message)
 * may be read only if marked DART_REG_R and written only if DART_REG_W;
 * "read" is any use of its value (address generation, an operand, the
 * left side of a binary operation, a comparison, a FETCH).  Registers an
 * instruction names itself are the destination's own choice and are not
 * checked against these bits: that is how instruction pointers isolate
 * destination state from senders.  Every register a cell uses, whoever
 * names it, must lie in the connection's window.
 */
#include <errno.h>
#include <string.h>

#include "kernel/crc.h"
#include "net/deposit/dart_op.h"

struct dart_pages dart_pages;

/* Do the pages of [off, off+len) of ep all allow need (dart.h)?  Their rights are the host's. */
int dart_ep_pages_allow(const struct dart_ep *ep, uint32_t off, uint32_t len, int need)
{
	if (!len)
		return 1;
	if (!dart_pages.rights)
		return 1;
	for (uint32_t p = off / DART_PAGE; p <= (off + len - 1) / DART_PAGE; p++)
		if ((dart_pages.rights((uintptr_t)ep->base + (uintptr_t)p * DART_PAGE) & need) != need)
			return 0;
	return 1;
}

/* The registers one operation names, cached (DART 6.5). */
struct regs {
	uint32_t v[3];		/* by canonical slot */
	uint32_t old[3];	/* as they were before the operation */
	uint16_t abs[3];	/* absolute register numbers, by slot */
	uint8_t m[3];		/* slot -> canonical slot: two slots naming one register share */
	uint8_t written;	/* canonical slots written (bit per slot) */
};

/*
 * The sequencer's write cache (DART 6.5): registers the instructions of a
 * cell before its last wrote, seen by the ones after, written back when
 * the last commits; and their interrupts, raised then.
 */
struct seq {
	int n, nev, steps;
	uint16_t abs[3 * DART_SEQ_MAX];
	uint32_t v[3 * DART_SEQ_MAX];
	struct dart_event ev[DART_SEQ_MAX];
};

static uint32_t seq_read(const struct dart *d, const struct seq *q, unsigned abs)
{
	for (int i = 0; i < q->n; i++)
		if (q->abs[i] == abs)
			return q->v[i];
	return d->reg[abs];
}

static inline uint32_t reg_read(const struct dart *d, const struct seq *q, unsigned abs)
{
	return __builtin_expect(q == NULL, 1) ? d->reg[abs] : seq_read(d, q, abs);
}

static void seq_write(struct seq *q, unsigned abs, uint32_t v)
{
	int i = 0;

	while (i < q->n && q->abs[i] != abs)
		i++;
	q->abs[i] = (uint16_t)abs;
	q->v[i] = v;
	if (i == q->n)
		q->n++;
}

static int fault(struct dart_exc *e, int cls, uint32_t detail)
{
	e->cls = (uint8_t)cls;
	e->detail = detail;
	return -EFAULT;
}

/* Registers a register-operation byte reads and writes, by slot; -1 if unimplemented. */
static int ro_use(uint8_t ro, uint8_t use[3])
{
	unsigned op = ro >> 4, dst = (ro >> 2) & 3, src = ro & 3;

	if (op == ALU_NONE)
		return ro ? -1 : 0;
	if (op >= ALU_N || dst > CS_C)
		return -1;
	use[dst] |= DART_REG_W;
	if (op >= ALU_ADD)
		use[dst] |= DART_REG_R;
	if (src != CSRC_OPERAND)
		use[src - 1] |= DART_REG_R;
	return 0;
}

static inline uint32_t src_val(const struct regs *r, unsigned src, uint32_t operand)
{
	return src == CSRC_OPERAND ? operand : r->v[r->m[src - 1]];
}

/* dst op src: load, unary or binary (hybrid deposit Fig. 2). */
static uint32_t alu(unsigned op, uint32_t v, uint32_t s)
{
	switch (op) {
	case ALU_LOAD: return s;
	case ALU_NOT: return ~s;
	case ALU_NEG: return 0u - s;
	case ALU_ADD: return v + s;
	case ALU_SUB: return v - s;
	case ALU_AND: return v & s;
	case ALU_OR: return v | s;
	case ALU_XOR: return v ^ s;
	case ALU_ANDN: return v & ~s;
	case ALU_SHL: return v << (s & 31);
	case ALU_SHR: return v >> (s & 31);
	}
	return v;
}

/* One register operation on the cache. */
static void ro_run(struct regs *r, uint8_t ro, uint32_t operand)
{
	unsigned dst = r->m[(ro >> 2) & 3];

	if ((ro >> 4) == ALU_NONE)
		return;
	r->v[dst] = alu(ro >> 4, r->v[dst], src_val(r, ro & 3, operand));
	r->written |= (uint8_t)(1u << dst);
}

int dart_reg_op(struct dart *d, unsigned r, unsigned op, uint32_t operand, uint32_t *newval)
{
	if (r >= DART_NREGS || op == ALU_NONE || op >= ALU_N)
		return -EINVAL;
	d->reg[r] = alu(op, d->reg[r], operand);
	if (newval)
		*newval = d->reg[r];
	return 0;
}

/* The conditional: <lhs> compare-op (operand or <rhs>) (hybrid deposit Fig. 2). */
static int cond_run(const struct regs *r, uint8_t cond, uint32_t operand)
{
	unsigned cmp = cond >> 4;
	uint32_t l, rv;

	if (cmp == CMP_ALWAYS)
		return 1;
	l = r->v[r->m[(cond >> 2) & 3]];
	rv = src_val(r, cond & 3, operand);
	switch (cmp) {
	case CMP_EQ: return l == rv;
	case CMP_NE: return l != rv;
	case CMP_LT: return l < rv;
	case CMP_LE: return l <= rv;
	case CMP_GT: return l > rv;
	case CMP_GE: return l >= rv;
	case CMP_ALLSET: return (l & rv) == rv;
	case CMP_ANYSET: return (l & rv) != 0;
	}
	return 0;
}

/* Address generation: direct, indirect, indexed (hybrid deposit Fig. 2); 64 bits, never wraps. */
static inline uint64_t agen_run(const struct regs *r, unsigned agen, uint32_t operand)
{
	switch (agen) {
	case CA_DIRECT: return operand;
	case CA_INDIRECT: return r->v[r->m[CS_A]];
	case CA_INDEXED: return (uint64_t)r->v[r->m[CS_A]] + operand;	/* no wrap */
	}
	return 0;
}

/* Copy the words of a 32-byte block that mask selects. */
static void move_masked(uint8_t *dst, const uint8_t *src, uint8_t mask)
{
	if (mask == 0xff) {
		memcpy(dst, src, CELL_DATA);
		return;
	}
	for (int i = 0; i < CELL_WORDS; i++)
		if (mask & (1u << i))
			memcpy(dst + 4 * i, src + 4 * i, 4);
}

/*
 * Send the reply cell on the reply connection, its control from the
 * request's data (hybrid deposit 4): 0 sent, -EBUSY not now, -EFAULT the
 * reply connection's node is gone (DEX_NOREPLY in e).
 */
static int reply_send(struct dart *d, int16_t rvci, const struct cell *req,
		      const uint8_t data[CELL_DATA], const struct dart_sink *s, struct dart_exc *e)
{
	const struct dart_conn *rc = &d->conn[rvci];
	struct cell r;
	int err;

	memcpy(r.hdr, rc->tx_hdr, CELL_HDR_LEN);
	memcpy(r.ctl, req->data, CELL_CTL_LEN);
	memcpy(r.data, data, CELL_DATA);
	cell_seal(&r);
	err = s->reply(s->ctx, rc->peer, &r);
	if (err == -EHOSTDOWN)
		return fault(e, DEX_NOREPLY, (uint32_t)rvci);
	if (err < 0)
		return -EBUSY;
	d->ctr.replies++;
	return 0;
}

/*
 * One compound operation x on connection c.  named: the message named the
 * registers (protection applies).  q: the sequencer's cache, or NULL for a
 * cell of one operation; with q, last says whether x is the cell's last
 * instruction (which commits the sequence) or one before it (a NOP, whose
 * register writes and interrupt go into q).
 */
static inline __attribute__((always_inline)) int execute(struct dart *d, int vci, const struct cell *cell,
							  const struct cell_ctl *x, int named,
							  const struct dart_sink *s, struct dart_exc *e,
							  struct seq *q, int last)
{
	struct dart_conn *c = &d->conn[vci];
	uint16_t op = x->opcode;
	unsigned kind = (op & CO_KIND_MASK) >> CO_KIND_SHIFT;
	unsigned agen = (op & CO_AGEN_MASK) >> CO_AGEN_SHIFT;
	unsigned pos = (op & CO_POS_MASK) >> CO_POS_SHIFT;
	unsigned cmp = x->cond >> 4;
	uint8_t use[3] = { 0, 0, 0 };
	struct regs r;
	struct dart_conn *rc = NULL;
	struct dart_ep *ep = NULL;
	uint64_t ea = 0;
	int t = 0;

	/* Decode: every field must name something implemented. */
	if (op & CO_RESERVED)
		return fault(e, DEX_UNIMPL, op);
	if (kind >= CK_NKINDS)
		return fault(e, DEX_UNIMPL, op);
	e->skip_block = kind == CK_BLOCK;
	if (kind == CK_SWEXC)
		return fault(e, DEX_SOFTWARE, x->operand);
	if ((agen != CA_NONE) != (kind == CK_WRITE || kind == CK_READ || kind == CK_BLOCK))
		return fault(e, DEX_UNIMPL, op);
	if (agen >= CA_INDIRECT)
		use[CS_A] |= DART_REG_R;
	if (ro_use(x->ro1, use) < 0)
		return fault(e, DEX_UNIMPL, x->ro1);
	if (ro_use(x->ro2, use) < 0)
		return fault(e, DEX_UNIMPL, x->ro2);
	if (cmp == CMP_NONE) {
		if (x->cond || (op & (CO_INTR | CO_GUARD | CO_POS_MASK)))
			return fault(e, DEX_UNIMPL, op);
	} else {
		unsigned lhs = (x->cond >> 2) & 3, rhs = x->cond & 3;
		if (cmp >= CMP_N || pos > CP_LAST || ((op & CO_GUARD) && pos == CP_LAST))
			return fault(e, DEX_UNIMPL, x->cond);
		if (cmp == CMP_ALWAYS) {
			if (x->cond & 0x0f)
				return fault(e, DEX_UNIMPL, x->cond);
		} else {
			if (lhs > CS_C)
				return fault(e, DEX_UNIMPL, x->cond);
			use[lhs] |= DART_REG_R;
			if (rhs != CSRC_OPERAND)
				use[rhs - 1] |= DART_REG_R;
		}
	}
	if (kind == CK_FETCH)
		for (int i = 0; i < 3; i++)
			if (x->mask & (0x9u << i))	/* words i (old) and 3 + i (new) */
				use[i] |= DART_REG_R;

	/* Every register used: in the window, and allowed if the sender named it. */
	for (int i = 0; i < 3; i++) {
		r.m[i] = (uint8_t)i;
		if (!use[i])
			continue;
		if (x->idx[i] >= c->reg_count)
			return fault(e, DEX_BOUNDS, x->idx[i]);
		r.abs[i] = (uint16_t)(c->reg_base + x->idx[i]);
		if (named && (use[i] & ~d->reg_prot[r.abs[i]]))
			return fault(e, DEX_PROT, x->idx[i]);
		for (int j = 0; j < i; j++)
			if (use[j] && r.abs[j] == r.abs[i])
				r.m[i] = r.m[j];
		r.v[i] = r.old[i] = reg_read(d, q, r.abs[i]);
	}
	r.written = 0;

	/* The compound operation, on the cached registers. */
	if (!(op & CO_AGEN_AFTER))
		ea = agen_run(&r, agen, x->operand);
	if (cmp && pos == CP_FIRST)
		t = cond_run(&r, x->cond, x->operand);
	ro_run(&r, x->ro1, x->operand);
	if (cmp && pos == CP_MIDDLE)
		t = cond_run(&r, x->cond, x->operand);
	if (!(op & CO_GUARD) || t)
		ro_run(&r, x->ro2, x->operand);
	if (cmp && pos == CP_LAST)
		t = cond_run(&r, x->cond, x->operand);
	if (op & CO_AGEN_AFTER)
		ea = agen_run(&r, agen, x->operand);

	/* The data's place: endpoint rights, alignment, bounds. */
	if (agen != CA_NONE) {
		ep = &d->ep[c->ep];
		if (!ep->used || !(ep->prot & (kind == CK_READ ? DART_EP_READ : DART_EP_WRITE)))
			return fault(e, DEX_PROT, c->ep);
		if (ea & 3)
			return fault(e, DEX_ALIGN, (uint32_t)ea);
		if (ea + CELL_DATA > ep->size)
			return fault(e, DEX_BOUNDS, (uint32_t)ea);
		/* Page protection inside the endpoint (3.2, 3.5), on every page the data touches. */
		if (ep->paged && !dart_ep_pages_allow(ep, (uint32_t)ea, CELL_DATA,
						      kind == CK_READ ? DART_EP_READ : DART_EP_WRITE))
			return fault(e, DEX_PAGE, (uint32_t)ea);
	}
	/*
	 * Answers go on the reply connection (DART 6.1).  The reply is part
	 * of the cell's commit: it is sent before anything else changes, and
	 * a reply that cannot go leaves the cell uncommitted (6.4): not now,
	 * -EBUSY (the request waits in its frame); never, because the reply
	 * connection's node is dead, the no-reply exception, which blocks
	 * this connection only (6.4).
	 */
	if (kind == CK_READ || kind == CK_FETCH) {
		int ok, err;
		if (c->reply < 0 || d->conn[c->reply].state == DC_FREE || !(d->conn[c->reply].flags & DART_TX))
			return fault(e, DEX_NOREPLY, (uint32_t)c->reply);
		rc = &d->conn[c->reply];
		ok = s->can_reply(s->ctx, rc->peer);
		if (ok < 0)
			return fault(e, DEX_NOREPLY, (uint32_t)c->reply);
		if (!ok)
			return -EBUSY;
		if (kind == CK_READ) {
			uint8_t data[CELL_DATA] = { 0 };
			move_masked(data, ep->base + ea, x->mask);
			err = reply_send(d, c->reply, cell, data, s, e);
		} else {
			/* Words: old a, b, c; new a, b, c; the condition; 0 (host byte order). */
			uint32_t w[CELL_WORDS] = { 0 };
			for (int i = 0; i < 3; i++) {
				if (x->mask & (1u << i))
					w[i] = r.old[r.m[i]];
				if (x->mask & (8u << i))
					w[3 + i] = r.v[r.m[i]];
			}
			if (x->mask & 0x40)
				w[6] = (uint32_t)t;
			err = reply_send(d, c->reply, cell, (const uint8_t *)w, s, e);
		}
		if (err < 0)
			return err;
	}

	if (q && !last) {
		/* An instruction before the sequence's last: into the cache, nothing committed yet. */
		for (int i = 0; i < 3; i++)
			if (r.written & (1u << i))
				seq_write(q, r.abs[i], r.v[i]);
		if (t && (op & CO_INTR))
			q->ev[q->nev++] = (struct dart_event){ (uint16_t)vci, (uint8_t)kind, x->operand, 0, 0 };
		q->steps++;
		return 0;
	}

	/* Commit: nothing can fail from here on. */
	if (q) {
		/* The sequence's cached writes first; this instruction's own (made from them) after. */
		for (int i = 0; i < q->n; i++)
			d->reg[q->abs[i]] = q->v[i];
		for (int i = 0; i < q->nev; i++) {
			d->ctr.interrupts++;
			s->intr(s->ctx, &q->ev[i]);
		}
		d->ctr.sequenced += (uint64_t)q->steps;
		d->ctr.applied[CK_NOP] += (uint64_t)q->steps;
	}
	for (int i = 0; i < 3; i++)
		if (r.written & (1u << i))
			d->reg[r.abs[i]] = r.v[i];
	switch (kind) {
	case CK_WRITE:
		move_masked(ep->base + ea, cell->data, x->mask);
		break;
	case CK_BLOCK:
		move_masked(ep->base + ea, cell->data, x->mask);
		c->rx = RX_BLOCK;
		c->blk_next = (uint32_t)ea + CELL_DATA;
		c->blk_len = 0;
		c->blk_crc = 0;
		c->blk_intr = t && (op & CO_INTR);
		c->blk_ev = (struct dart_event){ (uint16_t)vci, CK_BLOCK, x->operand, (uint32_t)ea, CELL_DATA };
		break;
	case CK_READ:
	case CK_FETCH:
		break;		/* the reply went above */
	}
	d->ctr.applied[kind]++;
	if (t && (op & CO_INTR) && kind != CK_BLOCK) {
		/* The interrupt comes at the end of the compound operation (3.4). */
		struct dart_event ev = { (uint16_t)vci, (uint8_t)kind, x->operand, (uint32_t)ea,
					 agen != CA_NONE ? CELL_DATA : 0 };
		d->ctr.interrupts++;
		s->intr(s->ctx, &ev);
	}
	return 0;
}

/*
 * Does control x begin a block: a BLOCK, directly or through the
 * instruction it points at in the connection's window (whether or not
 * the sender may name it)?
 */
static __attribute__((noinline)) uint16_t ip_last_opcode(const struct dart *d, const struct dart_conn *c,
							 uint32_t ip)
{
	/* The sequence's last instruction decides (the sequencer, 6.5). */
	for (int step = 0;; step++) {
		if (ip >= c->ip_count || step >= DART_SEQ_MAX)
			return CELL_IP;
		const struct dart_instr *in = &d->imem[c->ip_base + ip];
		if (!in->next)
			return in->ctl.opcode;
		ip = in->next - 1u;
	}
}

static int starts_block(const struct dart *d, const struct dart_conn *c, const struct cell_ctl *x)
{
	uint16_t op = x->opcode;

	if (op & CELL_IP) {
		op = ip_last_opcode(d, c, op & CELL_IP_MASK);
		if (op & CELL_IP)
			return 0;
	}
	return (op & CO_KIND_MASK) >> CO_KIND_SHIFT == CK_BLOCK;
}

/* An instruction-pointer cell (DART 6.5): the instructions it starts, through the sequencer. */
static __attribute__((noinline)) int exec_ip(struct dart *d, int vci, const struct cell *cell,
					     const struct cell_ctl *xm, const struct dart_sink *s, struct dart_exc *e)
{
	struct dart_conn *c = &d->conn[vci];
	struct cell_ctl x = *xm;
	int named;

	/* DART 6.5: the operation and (some) operands from instruction memory. */
	uint32_t ip = x.opcode & CELL_IP_MASK;
	const struct dart_instr *in;
	struct cell_ctl m = x;
	struct seq q;
	if (m.ro1 || m.ro2 || m.cond)
		return fault(e, DEX_UNIMPL, x.opcode);
	if (ip >= c->ip_count)
		return fault(e, DEX_BOUNDS, ip);
	in = &d->imem[c->ip_base + ip];
	if (!(in->flags & DART_I_ENTRY))
		return fault(e, DEX_PROT, ip);
	q.n = q.nev = q.steps = 0;
	/*
	 * The sequencer (6.5): the entry instruction, then each one it
	 * names, within the window, at most DART_SEQ_MAX; all but the
	 * last NOPs.  Each takes from the message what its opcode says.
	 */
	for (int step = 0;; step++) {
		int r;
		named = 1;
		x = in->ctl;
		if (x.opcode & CELL_IP)
			return fault(e, DEX_UNIMPL, ip);	/* an instruction is no pointer */
		if (x.opcode & CO_OPERAND_MSG)
			x.operand = m.operand;
		if (x.opcode & CO_INDEX_MSG)
			memcpy(x.idx, m.idx, 3);
		else
			named = 0;
		if (x.opcode & CO_MASK_MSG)
			x.mask = m.mask;
		x.opcode &= (uint16_t)~(CO_OPERAND_MSG | CO_INDEX_MSG | CO_MASK_MSG);
		if (!in->next)
			return execute(d, vci, cell, &x, named, s, e, step ? &q : NULL, 1);
		if (step + 1 >= DART_SEQ_MAX)
			return fault(e, DEX_BOUNDS, in->next - 1u);	/* too long a sequence */
		if ((x.opcode & CO_KIND_MASK) >> CO_KIND_SHIFT != CK_NOP)
			return fault(e, DEX_UNIMPL, ip);	/* data moves in the last only */
		if ((r = execute(d, vci, cell, &x, named, s, e, &q, 0)) != 0)
			return r;
		ip = in->next - 1u;
		if (ip >= c->ip_count)
			return fault(e, DEX_BOUNDS, ip);
		in = &d->imem[c->ip_base + ip];
	}
}

/* A control cell: check, data CRC, the instruction pointer variant, then the operation. */
static int exec_control(struct dart *d, int vci, const struct cell *cell,
				  const struct dart_sink *s, struct dart_exc *e)
{
	struct dart_conn *c = &d->conn[vci];
	struct cell_ctl x;
	int named = 1;

	/* The check first: nothing else in the control fields is trusted before it. */
	if (cell->check != cell_check(cell))
		return fault(e, DEX_CHECK, cell->check);
	cell_ctl_get(cell->ctl, &x);
	/*
	 * Whether AAL5 cells follow (hybrid deposit 4: a block's first cell
	 * is a control cell) is known once the check passed, before any other
	 * fault: a fault from here on takes the block's cells with it.
	 */
	e->skip_block = starts_block(d, c, &x);
	if (cell_get16(cell->crc) != cell_data_crc(cell))
		return fault(e, DEX_CRC, cell_get16(cell->crc));
	if (x.opcode & CELL_IP)
		return exec_ip(d, vci, cell, &x, s, e);
	{
		if (c->flags & DART_IPONLY)
			return fault(e, DEX_PROT, x.opcode);
		if (x.opcode & (CO_OPERAND_MSG | CO_INDEX_MSG | CO_MASK_MSG))
			return fault(e, DEX_UNIMPL, x.opcode);
	}
	return execute(d, vci, cell, &x, named, s, e, NULL, 1);
}

/* An AAL5 cell of the block in progress, deposited after the control cell's data (DART 6.2). */
static int exec_data(struct dart *d, int vci, const struct cell *cell, uint8_t pt,
			       const struct dart_sink *s, struct dart_exc *e)
{
	struct dart_conn *c = &d->conn[vci];
	const uint8_t *pl = ((const struct cell_aal5 *)cell)->payload;
	struct dart_ep *ep = &d->ep[c->ep];
	uint32_t len, r;

	e->data_cell = 1;
	e->skip_block = !(pt & PT_AUU);
	if (!ep->used || !(ep->prot & DART_EP_WRITE))
		return fault(e, DEX_PROT, c->ep);
	if (!(pt & PT_AUU)) {
		if (c->blk_len + CELL_PAYLOAD > AAL5_MAX_LEN)
			return fault(e, DEX_BOUNDS, c->blk_len);
		if ((uint64_t)c->blk_next + CELL_PAYLOAD > ep->size)
			return fault(e, DEX_BOUNDS, c->blk_next);
		if (ep->paged && !dart_ep_pages_allow(ep, c->blk_next, CELL_PAYLOAD, DART_EP_WRITE))
			return fault(e, DEX_PAGE, c->blk_next);
		memcpy(ep->base + c->blk_next, pl, CELL_PAYLOAD);
		c->blk_crc = crc32_aal5(c->blk_crc, pl, CELL_PAYLOAD);
		c->blk_next += CELL_PAYLOAD;
		c->blk_len += CELL_PAYLOAD;
		d->ctr.data_cells++;
		return 0;
	}
	/* The last cell: the rest of the data (0, 16 or 32 bytes), padding, trailer. */
	const struct aal5_trailer *tr = aal5_trailer_of(pl);
	len = cell_get16(tr->len);
	r = len - c->blk_len;
	if (tr->cpi != 0 || len < c->blk_len || r > CELL_PAYLOAD - AAL5_TRAILER || (r & 15))
		return fault(e, DEX_CRC, len);
	if (crc32_aal5(c->blk_crc, pl, CELL_PAYLOAD - 4) != cell_get32(tr->crc))
		return fault(e, DEX_CRC, cell_get32(tr->crc));
	if ((uint64_t)c->blk_next + r > ep->size)
		return fault(e, DEX_BOUNDS, c->blk_next);
	if (ep->paged && !dart_ep_pages_allow(ep, c->blk_next, r, DART_EP_WRITE))
		return fault(e, DEX_PAGE, c->blk_next);
	memcpy(ep->base + c->blk_next, pl, r);
	c->rx = RX_CONTROL;
	d->ctr.data_cells++;
	d->ctr.blocks++;
	if (c->blk_intr) {
		c->blk_ev.len = CELL_DATA + len;
		d->ctr.interrupts++;
		s->intr(s->ctx, &c->blk_ev);
	}
	return 0;
}

int dart_exec_data_run(struct dart *d, int vci, const struct cell *first, const uint8_t *rest, size_t count)
{
	struct dart_conn *c = &d->conn[vci];
	struct dart_ep *ep = &d->ep[c->ep];
	uint64_t len = (uint64_t)count * CELL_PAYLOAD;

	/* exec_data's checks, for the run at once: any that fails, and the cells go one by one. */
	if (c->rx != RX_BLOCK || !ep->used || !(ep->prot & DART_EP_WRITE) ||
	    c->blk_len + len > AAL5_MAX_LEN || c->blk_next + len > ep->size ||
	    (ep->paged && !dart_ep_pages_allow(ep, c->blk_next, (uint32_t)len, DART_EP_WRITE)))
		return -1;
	uint8_t *to = ep->base + c->blk_next;
	/* Each payload read once, and the CRC taken of the bytes deposited. */
	uint32_t crc = crc32_aal5_cells_copy(c->blk_crc, to, CELL_PAYLOAD, ((const struct cell_aal5 *)first)->payload,
					     CELL_PAYLOAD, 1);
	c->blk_crc = crc32_aal5_cells_copy(crc, to + CELL_PAYLOAD, CELL_PAYLOAD, rest + CELL_HDR_LEN, CELL_SIZE,
					   count - 1);
	c->blk_next += (uint32_t)len;
	c->blk_len += (uint32_t)len;
	d->ctr.data_cells += count;
	return 0;
}

int dart_exec(struct dart *d, int vci, const struct cell *cell, uint8_t pt,
			const struct dart_sink *s, struct dart_exc *e)
{
	struct dart_conn *c = &d->conn[vci];

	e->data_cell = 0;
	e->skip_block = 0;
	switch (c->rx) {
	case RX_BLOCK:
		return exec_data(d, vci, cell, pt, s, e);
	case RX_SKIP:
		/* The rest of a block whose earlier cell was skipped or discarded. */
		d->ctr.block_skipped++;
		if (pt & PT_AUU)
			c->rx = RX_CONTROL;
		return 0;
	}
	return exec_control(d, vci, cell, s, e);
}
