/*
 * libFuzzer target: the hybrid-deposit receive path (net/deposit/dart.c,
 * net/deposit/dart_op.c, net/deposit/cell.c) as net/deposit/deposit.c drives it, on node 0, with
 * seven connections from nodes 1, 2 and 5 over overlapping endpoints in a
 * guarded arena, registers of every protection, and instruction memory.
 * The input is a sequence of chunks:
 *
 *   src (< 0xf0), flags, n cells of 53 bytes
 *       a frame from node 1, 2 or 5 (src % 3); flags & 31 is n (at most
 *       27); flags & 0x20 recomputes every cell's HEC, flags & 0x40 its
 *       check and data CRC, so that mutations reach the operation logic
 *   0xf0 | cmd, vci, arg
 *       resume (retry, skip, continue), cycle room for replies (yes, not
 *       now, the node is dead), close and reopen a connection, set a
 *       register, cycle what sending a reply returns (sent, no buffer,
 *       the node is dead)
 *
 * Cells go in one at a time.  After each (and each command), abort() if:
 * a byte of the arena changed outside the endpoint of the cell's
 * connection, or in an endpoint without write permission; a register
 * changed outside that connection's window; anything changed although no
 * cell was applied (a fault, a discard, a hold, a refusal, a wait for
 * reply room must change nothing); another connection's state changed; a
 * reply is malformed, goes to the wrong node or VCI, or was sent without
 * room; a cell whose reply did not go changed anything; dart_input
 * refuses a cell other than with -EBUSY or -ENOBUFS, or consumes a
 * refused one; an interrupt or exception names another connection.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/crc.h"
#include "net/deposit/cell.h"
#include "net/deposit/dart.h"

#define PG 4096
#define ARENA (8 * PG)
#define NCONN 8			/* VCIs 0..7; 1..7 open */

static uint8_t *arena, image[ARENA], pattern[ARENA];
static struct dart D;
static struct cell holdbuf[NCONN][8];
static int room, reply_fail, reply_failed, cur_vci;
static uint64_t applied_before;

static const struct epdef {
	uint32_t at, size;
	int prot;
} eps[] = {
	{ 1 * PG, 2 * PG, DART_EP_READ | DART_EP_WRITE },	/* 0 */
	{ 4 * PG, PG, DART_EP_READ },				/* 1: read-only */
	{ 5 * PG, PG, DART_EP_WRITE },				/* 2: write-only */
	{ 2 * PG, PG - 64, DART_EP_READ | DART_EP_WRITE },	/* 3: inside 0 */
};

static const struct conndef {
	int peer, ep, flags, reply;
	unsigned rb, rn, ib, in, hold;
} conns[NCONN] = {
	[1] = { 1, 0, DART_RX | DART_TX, 1, 0, 16, 0, 4, 8 },
	[2] = { 1, 1, DART_RX, 3, 8, 16, 2, 2, 8 },
	[3] = { 2, 2, DART_RX | DART_TX, 3, 32, 8, 0, 0, 2 },
	[4] = { 1, 3, DART_RX | DART_IPONLY, -1, 40, 8, 4, 4, 4 },
	[5] = { 2, 0, DART_RX | DART_DISCARD, 1, 0, 8, 0, 0, 0 },
	[6] = { 1, 0, DART_TX, -1, 0, 0, 0, 0, 0 },
	[7] = { 5, 3, DART_RX | DART_TX, 7, 48, 16, 0, 8, 1 },
};

static void open_one(int v)
{
	const struct conndef *c = &conns[v];
	struct dart_conn_cfg cfg = { c->peer, c->ep, c->flags, c->reply, c->rb, c->rn, c->ib, c->in, 0 };
	if (dart_conn_open(&D, v, &cfg, holdbuf[v], c->hold) != 0)
		abort();
}

/* --- the sink: every reply and event checked ------------------------------------ */

static int s_can_reply(void *ctx, int peer)
{
	(void)ctx;
	(void)peer;
	return room;
}

static int s_reply(void *ctx, int peer, const struct cell *c)
{
	uint16_t vci;
	uint8_t pt;
	int rv = D.conn[cur_vci].reply;

	(void)ctx;
	if (room <= 0 || rv < 0 || D.conn[rv].state == DC_FREE || !(D.conn[rv].flags & DART_TX))
		abort();
	if (peer != D.conn[rv].peer || cell_hdr_parse(c->hdr, &vci, &pt) != CELL_HDR_OK || vci != rv || pt)
		abort();
	if (c->check != cell_check(c) || cell_get16(c->crc) != cell_data_crc(c))
		abort();
	if (reply_fail) {
		reply_failed = 1;
		return reply_fail;
	}
	return 0;
}

static void s_intr(void *ctx, const struct dart_event *ev)
{
	(void)ctx;
	if (ev->vci != cur_vci)
		abort();
}

static void s_exc(void *ctx, int vci)
{
	(void)ctx;
	if (vci != cur_vci || D.conn[vci].state != DC_EXCEPTION || D.conn[vci].exc.vci != vci)
		abort();
}

/* Flow control (6.4): only the connection being fed, or re-enabled, asks for a stop or a go, once each way. */
static void s_flow(void *ctx, int vci, int stop)
{
	(void)ctx;
	if (vci != cur_vci || D.conn[vci].flow_stop != (stop != 0))
		abort();
	if (stop && D.conn[vci].hold_n + D.conn[vci].sp_n == 0)
		abort();
	if (!stop && (D.conn[vci].hold_n + D.conn[vci].sp_n != 0 || D.conn[vci].state != DC_OPEN))
		abort();
}

static const struct dart_sink sink = { NULL, s_can_reply, s_reply, s_intr, s_exc, s_flow };

/* A small spill pool, so that connections run out of it and share it. */
static struct dart_spill spill[12];

/* The pool's free cells and every connection's are all of it, each once; a connection holds at most its share. */
static void spill_check(void)
{
	uint8_t seen[12] = { 0 };
	unsigned nfree = 0, n = 0;

	for (uint16_t at = D.spill_free; at != DART_SPILL_NIL; at = spill[at].next, nfree++)
		if (at >= 12 || seen[at]++)
			abort();
	for (int v = 0; v < NCONN; v++) {
		const struct dart_conn *c = &D.conn[v];
		uint16_t at = c->sp_head;
		if (c->sp_n > D.spill_conn_max)
			abort();
		for (unsigned k = 0; k < c->sp_n; k++, at = spill[at].next, n++) {
			if (at >= 12 || seen[at]++)
				abort();
			if (k + 1 == c->sp_n && at != c->sp_tail)
				abort();
		}
	}
	if (nfree + n != 12 || D.spill_used != n)
		abort();
}

/* --- the invariants ----------------------------------------------------------------- */

static uint32_t regs_before[DART_NREGS];
static struct dart_conn conns_before[NCONN];

static uint64_t applied(void)
{
	uint64_t n = D.ctr.data_cells;
	for (int k = 0; k < CK_NKINDS; k++)
		n += D.ctr.applied[k];
	return n;
}

static void before(void)
{
	memcpy(image, arena, ARENA);
	memcpy(regs_before, D.reg, sizeof regs_before);
	memcpy(conns_before, D.conn, sizeof conns_before);
	applied_before = applied();
	reply_failed = 0;
}

/* What happened to connection vci (or to none, -1) is all that changed. */
static void after(int vci)
{
	int any = applied() != applied_before;

	/* A reply that did not go leaves its request uncommitted (DART 6.4). */
	if (reply_failed && any)
		abort();
	const struct dart_conn *c = vci >= 0 && vci < DART_MAX_CONN ? &D.conn[vci] : NULL;
	const struct dart_ep *ep = c && c->state != DC_FREE ? &D.ep[c->ep] : NULL;
	uintptr_t lo = 0, hi = 0;

	if (ep && (ep->prot & DART_EP_WRITE)) {
		lo = (uintptr_t)(ep->base - arena);
		hi = lo + ep->size;
	}
	/* Outside [lo, hi) nothing may change; inside, only if a cell was applied. */
	if (memcmp(arena, image, lo) != 0 || memcmp(arena + hi, image + hi, ARENA - hi) != 0 ||
	    (!any && memcmp(arena + lo, image + lo, hi - lo) != 0))
		abort();
	if (memcmp(D.reg, regs_before, sizeof regs_before) != 0) {
		for (unsigned r = 0; r < DART_NREGS; r++) {
			if (D.reg[r] == regs_before[r])
				continue;
			if (!any || !c || r < c->reg_base || r >= (unsigned)c->reg_base + c->reg_count)
				abort();
		}
	}
	for (int w = 0; w < NCONN; w++)
		if (w != vci && memcmp(&D.conn[w], &conns_before[w], sizeof D.conn[w]) != 0)
			abort();
	for (int w = NCONN; w < DART_MAX_CONN; w++)
		if (D.conn[w].state != DC_FREE)
			abort();
	spill_check();
}

static void setup(void)
{
	if (!arena) {
		arena = aligned_alloc(PG, ARENA);
		for (size_t i = 0; i < ARENA; i++)
			pattern[i] = (uint8_t)(i * 13 + 5);
	}
	memcpy(arena, pattern, ARENA);
	dart_init(&D);
	dart_spill_init(&D, spill, 12, 8);
	for (size_t e = 0; e < sizeof eps / sizeof eps[0]; e++)
		if (dart_ep_create(&D, arena + eps[e].at, eps[e].size, eps[e].prot) != (int)e)
			abort();
	for (unsigned r = 0; r < 64; r++) {
		D.reg[r] = (r * 1000u) % (3 * PG) & ~3u;
		D.reg_prot[r] = (uint8_t)(r % 4 == 0 ? DART_REG_R | DART_REG_W : r % 4 == 1 ? DART_REG_R
										 : r % 4 == 2 ? DART_REG_W : 0);
	}
	for (unsigned r = 64; r < DART_NREGS; r++)
		D.reg[r] = 0xdead0000u + r;
	/* Instructions: WRITE at the message's operand; priority enqueue; FETCH; one that chains; one bad. */
	static const struct cell_ctl ins[8] = {
		{ CELL_OP(CK_WRITE, CA_DIRECT) | CO_OPERAND_MSG, 0, 0, 0, 0, { 0, 0, 0 }, 0xff },
		{ CELL_OP(CK_WRITE, CA_INDIRECT) | CO_INTR | CELL_POS(CP_MIDDLE) | CO_OPERAND_MSG,
		  CELL_RO(ALU_ADD, CS_A, CSRC_B), CELL_RO(ALU_OR, CS_C, CSRC_OPERAND),
		  CELL_COND(CMP_LT, CS_C, CSRC_OPERAND), 0, { 0, 1, 3 }, 0xff },
		{ CELL_OP(CK_FETCH, CA_NONE) | CO_INDEX_MSG | CO_MASK_MSG, CELL_RO(ALU_ADD, CS_A, CSRC_OPERAND), 0, 0, 1,
		  { 0, 0, 0 }, 0 },
		{ CELL_IP | 1, 0, 0, 0, 0, { 0, 0, 0 }, 0 },
		{ CELL_OP(CK_NOP, CA_NONE), 0xf0, 0, 0, 0, { 0, 0, 0 }, 0 },
		{ CELL_OP(CK_READ, CA_INDEXED) | CO_OPERAND_MSG, 0, 0, 0, 0, { 2, 0, 0 }, 0x0f },
		{ CELL_OP(CK_BLOCK, CA_DIRECT) | CO_OPERAND_MSG, 0, 0, 0, 0, { 0, 0, 0 }, 0xff },
		{ CELL_OP(CK_NOP, CA_NONE) | CO_INTR, CELL_RO(ALU_XOR, CS_A, CSRC_OPERAND), 0,
		  CELL_COND(CMP_EQ, CS_A, CSRC_B), 0, { 4, 5, 0 }, 0 },
	};
	for (int i = 0; i < 8; i++) {
		D.imem[i].ctl = ins[i];
		D.imem[i].flags = i == 4 || i == 6 ? 0 : DART_I_ENTRY;
		D.imem[i].next = 0;
	}
	/* Sequences (6.5): 7 (a NOP) then 0 (a WRITE); 4 (a bad NOP) then 6 (a BLOCK). */
	D.imem[7].next = 0 + 1;
	D.imem[4].next = 6 + 1;
	for (int v = 1; v < NCONN; v++)
		open_one(v);
	room = 1;
	reply_fail = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int srcs[3] = { 1, 2, 5 };

	setup();
	while (size >= 3) {
		uint8_t op = data[0];
		if (op >= 0xf0) {
			int v = data[1] % NCONN, arg = data[2];
			data += 3;
			size -= 3;
			before();
			cur_vci = v;
			switch (op & 0x0f) {
			case 0:
			case 1:
			case 2:
				dart_resume(&D, v, op & 0x0f, &sink);
				break;
			case 3:
				room = room == 1 ? 0 : room == 0 ? -EHOSTDOWN : 1;
				break;
			case 7:
				reply_fail = reply_fail == 0 ? -ENOBUFS : reply_fail == -ENOBUFS ? -EHOSTDOWN : 0;
				break;
			case 4:
				if (D.conn[v].state != DC_FREE) {
					dart_conn_close(&D, v);
					memcpy(&conns_before[v], &D.conn[v], sizeof D.conn[v]);
				}
				break;
			case 5:
				if (v && D.conn[v].state == DC_FREE) {
					open_one(v);
					memcpy(&conns_before[v], &D.conn[v], sizeof D.conn[v]);
				}
				break;
			case 6:
				/* The host sets a register (as an exception handler would, to retry). */
				D.reg[arg % 64] = (uint32_t)arg * 52u;
				regs_before[arg % 64] = D.reg[arg % 64];
				break;
			}
			reply_failed = 0;	/* a replay applies several cells: some may commit before one waits */
			after(v);
			continue;
		}
		int src = srcs[op % 3];
		uint8_t flags = data[1];
		size_t n = flags & 31;
		data += 2;
		size -= 2;
		if (n > 27)
			n = 27;
		if (n * CELL_SIZE > size)
			n = size / CELL_SIZE;
		for (size_t i = 0; i < n; i++) {
			struct cell c;
			memcpy(&c, data + i * CELL_SIZE, CELL_SIZE);
			if (flags & 0x20)
				c.hdr[4] = atm_hec(c.hdr);
			if (flags & 0x40)
				cell_seal(&c);
			uint16_t vci;
			uint8_t pt;
			int v = cell_hdr_parse(c.hdr, &vci, &pt) == CELL_HDR_OK ? vci : -1;
			size_t next = 0;
			before();
			cur_vci = v;
			int r = dart_input(&D, src, (const uint8_t *)&c, 1, &next, &sink);
			if ((r != 0) != (next == 0) || (r != 0 && r != -EBUSY && r != -ENOBUFS))
				abort();
			if (v >= 0 && v < DART_MAX_CONN && D.conn[v].state != DC_FREE && D.conn[v].peer != src)
				after(-1);	/* another node's cell on it: nothing at all */
			else
				after(v);
		}
		data += n * CELL_SIZE;
		size -= n * CELL_SIZE;
	}
	return 0;
}
