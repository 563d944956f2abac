/*
 * Host unit tests of DART (net/deposit/dart.c, net/deposit/dart_op.c): every primitive
 * of hybrid deposit Fig. 2 and the compound operations of 3.4 (strided
 * deposit, priority queueing, fetch-and-increment, compare-and-swap), the
 * instruction-pointer variant (6.5), protection (3.5), every exception
 * class of 6.4 with its rollback (memory and registers byte for byte as
 * before, the connection blocked, other connections going on), holding,
 * retry, skip, back-pressure when the hold queue is full, discard, AAL5 blocks, header refusals, remote
 * reads that wait for reply room, and the send side (6.3).
 *
 * Node layout: this DART is node 0; node 1 (SRC) and node 2 (OTHER) send.
 * Endpoint RW is guarded by pattern pages; RO is read-only, WO write-only.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/host/unit.h"

#include "kernel/crc.h"
#include "net/deposit/cell.h"
#include "net/deposit/dart.h"
#include "net/deposit/deposit.h"

#define PG 4096
#define ARENA (6 * PG)		/* guard | RW | guard | RO | WO | guard */
#define SRC 1
#define OTHER 2

enum { V = 5, W = 6, X = 7, IPC = 8, NORE = 9, TXONLY = 10, DISC = 11, REPLYV = 12, SMALL = 13 };

static struct dart D;
static uint8_t *arena;
static int ep_rw, ep_ro, ep_wo;
static uint8_t *rw, *ro, *wo;
static struct cell hold[16][64];

/* The sink: what the DART asked for. */
static int room = 1;		/* can_reply: 1 yes, 0 not now, < 0 the node is gone */
static int reply_err;		/* what reply returns: 0 sent, or why it did not go */
static struct cell replies[64];
static int reply_peer[64], nreply;
static struct dart_event intrs[64];
static int nintr, excs[64], nexc;

static int s_can_reply(void *ctx, int peer)
{
	(void)ctx;
	(void)peer;
	return room;
}

static int s_reply(void *ctx, int peer, const struct cell *c)
{
	(void)ctx;
	assert_true(room > 0);
	if (reply_err)
		return reply_err;
	assert_true(nreply < 64);
	reply_peer[nreply] = peer;
	replies[nreply++] = *c;
	return 0;
}

static void s_intr(void *ctx, const struct dart_event *ev)
{
	(void)ctx;
	intrs[nintr++ % 64] = *ev;
}

static void s_exc(void *ctx, int vci)
{
	(void)ctx;
	assert_true(nexc < 64);
	excs[nexc++] = vci;
}

static const struct dart_sink sink = { NULL, s_can_reply, s_reply, s_intr, s_exc, NULL };

/* The same, telling flow control (6.4) apart. */
static int flows[16], nflow;
static void s_flow(void *ctx, int vci, int stop)
{
	(void)ctx;
	assert_true(nflow < 16);
	flows[nflow++] = stop ? vci : -vci;
}
static const struct dart_sink fsink = { NULL, s_can_reply, s_reply, s_intr, s_exc, s_flow };

static uint8_t pat(size_t i)
{
	return (uint8_t)(i * 13 + 7);
}

static void open_conn(int vci, int peer, int ep, int flags, int reply, unsigned rb, unsigned rn,
		      unsigned ib, unsigned in, unsigned holdn)
{
	struct dart_conn_cfg cfg = { peer, ep, flags, reply, rb, rn, ib, in, 0 };
	assert_int_equal(dart_conn_open(&D, vci, &cfg, hold[vci - V], holdn), 0);
}

/*
 * The host's page tables, as DART sees them (dart_pages): the rights of
 * each page of the arena and of the sender's buffer, every other page
 * read and write.  setup() gives every page both.
 */
static uint8_t page_rights[ARENA / PG], sbuf_rights;
static uint8_t *sbuf;

static uint8_t *rights_of(uintptr_t va)
{
	if (arena && va >= (uintptr_t)arena && va < (uintptr_t)arena + ARENA)
		return &page_rights[(va - (uintptr_t)arena) / PG];
	if (sbuf && va >= (uintptr_t)sbuf && va < (uintptr_t)sbuf + PG)
		return &sbuf_rights;
	return NULL;
}

static int fake_rights(uintptr_t va)
{
	uint8_t *r = rights_of(va);

	return r ? *r : DART_EP_READ | DART_EP_WRITE;
}

static int fake_protect(uintptr_t va, size_t len, int prot)
{
	for (uintptr_t a = va; a < va + len; a += PG) {
		uint8_t *r = rights_of(a);
		if (!r)
			return -EINVAL;
		*r = (uint8_t)prot;
	}
	return 0;
}

static int setup(void **state)
{
	(void)state;
	memset(page_rights, DART_EP_READ | DART_EP_WRITE, sizeof page_rights);
	sbuf_rights = DART_EP_READ | DART_EP_WRITE;
	dart_pages.rights = fake_rights;
	dart_pages.protect = fake_protect;
	if (!arena)
		arena = aligned_alloc(PG, ARENA);
	for (size_t i = 0; i < ARENA; i++)
		arena[i] = pat(i);
	rw = arena + PG;
	ro = arena + 3 * PG;
	wo = arena + 4 * PG;
	dart_init(&D);
	ep_rw = dart_ep_create(&D, rw, PG, DART_EP_READ | DART_EP_WRITE);
	ep_ro = dart_ep_create(&D, ro, PG, DART_EP_READ);
	ep_wo = dart_ep_create(&D, wo, PG, DART_EP_WRITE);
	assert_true(ep_rw >= 0 && ep_ro >= 0 && ep_wo >= 0);
	/* Registers 0..15: V's window; 16..31: W's; 32..47 IPC's; all readable/writable at first. */
	for (int r = 0; r < 64; r++) {
		D.reg[r] = 0;
		D.reg_prot[r] = DART_REG_R | DART_REG_W;
	}
	open_conn(V, SRC, ep_rw, DART_RX | DART_TX, V, 0, 16, 0, 0, 64);
	open_conn(W, SRC, ep_rw, DART_RX, -1, 16, 16, 0, 0, 64);
	open_conn(X, OTHER, ep_rw, DART_RX | DART_TX, X, 0, 16, 0, 0, 64);
	open_conn(IPC, SRC, ep_rw, DART_RX | DART_IPONLY, -1, 32, 16, 8, 8, 64);
	open_conn(NORE, SRC, ep_rw, DART_RX, -1, 0, 16, 0, 0, 64);
	open_conn(TXONLY, SRC, ep_rw, DART_TX, -1, 0, 0, 0, 0, 0);
	open_conn(DISC, SRC, ep_rw, DART_RX | DART_DISCARD, -1, 0, 16, 0, 0, 64);
	open_conn(REPLYV, OTHER, ep_ro, DART_RX | DART_TX, REPLYV, 0, 16, 0, 0, 64);
	open_conn(SMALL, SRC, ep_rw, DART_RX, -1, 0, 16, 0, 0, 4);
	room = 1;
	reply_err = 0;
	nreply = nintr = nexc = 0;
	return 0;
}

/* --- building and feeding cells ------------------------------------------ */

static struct cell mk(int vci, uint16_t opcode, uint8_t ro1, uint8_t ro2, uint8_t cond, uint32_t operand,
		      uint8_t a, uint8_t b, uint8_t c, uint8_t mask, uint8_t fill)
{
	struct cell_ctl ctl = { opcode, ro1, ro2, cond, operand, { a, b, c }, mask };
	uint8_t data[CELL_DATA];
	struct cell out;

	for (int i = 0; i < CELL_DATA; i++)
		data[i] = (uint8_t)(fill + i);
	cell_build(&out, (uint16_t)vci, &ctl, data);
	return out;
}

static struct cell write_direct(int vci, uint32_t off, uint8_t fill)
{
	return mk(vci, CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0, off, 0, 0, 0, 0xff, fill);
}

static int feed_from(int src, const struct cell *cells, size_t n)
{
	size_t next = 0;
	return dart_input(&D, src, (const uint8_t *)cells, n, &next, &sink);
}

static int feed(const struct cell *c)
{
	return feed_from(SRC, c, 1);
}

/* Everything a cell could change, to compare before and after. */
struct snap {
	uint8_t mem[ARENA];
	uint32_t reg[DART_NREGS];
};
static struct snap before;

static void snap_take(struct snap *s)
{
	memcpy(s->mem, arena, ARENA);
	memcpy(s->reg, D.reg, sizeof D.reg);
}

static void assert_unchanged(void)
{
	assert_memory_equal(before.mem, arena, ARENA);
	assert_memory_equal(before.reg, D.reg, sizeof D.reg);
}

/* Bytes outside [lo, hi) of the RW endpoint still hold the pattern. */
static void assert_only_changed(size_t lo, size_t hi)
{
	for (size_t i = 0; i < ARENA; i++) {
		if (i >= PG + lo && i < PG + hi)
			continue;
		if (arena[i] != pat(i))
			fail_msg("byte %zu (endpoint offset %ld) changed", i, (long)i - PG);
	}
}

static void assert_block(const uint8_t *p, uint8_t fill, uint8_t mask)
{
	for (int i = 0; i < CELL_DATA; i++)
		if (mask & (1u << (i / 4)))
			assert_int_equal(p[i], (uint8_t)(fill + i));
}

/* --- primitives ------------------------------------------------------------ */

static void test_direct_write_and_mask(void **state)
{
	(void)state;
	struct cell c = write_direct(V, 64, 0x10);
	assert_int_equal(feed(&c), 0);
	assert_block(rw + 64, 0x10, 0xff);
	/* Mask: words 0, 2, 7 only; the others keep the pattern. */
	c = mk(V, CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0, 128, 0, 0, 0, 0x85, 0x40);
	assert_int_equal(feed(&c), 0);
	assert_block(rw + 128, 0x40, 0x85);
	for (int i = 0; i < CELL_DATA; i++)
		if (!(0x85 & (1u << (i / 4))))
			assert_int_equal(rw[128 + i], pat(PG + 128 + i));
	assert_only_changed(64, 160);
	assert_int_equal(D.ctr.applied[CK_WRITE], 2);
	assert_int_equal(nintr, 0);
	assert_int_equal(D.conn[V].state, DC_OPEN);
}

static void test_indirect_indexed_and_strided(void **state)
{
	(void)state;
	/* Store indirect with postincrement: DMA with stride 48 (3.4). */
	D.reg[0] = 256;
	for (int k = 0; k < 4; k++) {
		struct cell c = mk(V, CELL_OP(CK_WRITE, CA_INDIRECT), CELL_RO(ALU_ADD, CS_A, CSRC_OPERAND), 0,
				   0, 48, 0, 0, 0, 0xff, (uint8_t)(k * 32));
		assert_int_equal(feed(&c), 0);
	}
	for (int k = 0; k < 4; k++)
		assert_block(rw + 256 + 48 * k, (uint8_t)(k * 32), 0xff);
	assert_int_equal(D.reg[0], 256 + 4 * 48);
	/* Variable stride from a register: <a> <- <a> + <b>. */
	D.reg[0] = 1024;
	D.reg[1] = 100;
	for (int k = 0; k < 3; k++) {
		struct cell c = mk(V, CELL_OP(CK_WRITE, CA_INDIRECT), CELL_RO(ALU_ADD, CS_A, CSRC_B),
				   CELL_RO(ALU_ADD, CS_B, CSRC_OPERAND), 0, 4, 0, 1, 0, 0xff, (uint8_t)k);
		assert_int_equal(feed(&c), 0);
	}
	/* Strides 100, 104: blocks at 1024, 1124, 1228. */
	assert_block(rw + 1024, 0, 0xff);
	assert_block(rw + 1124, 1, 0xff);
	assert_block(rw + 1228, 2, 0xff);
	assert_int_equal(D.reg[0], 1024 + 100 + 104 + 108);
	/* Indexed, and pre-increment (address generation after the register operation). */
	D.reg[2] = 2000;
	struct cell c = mk(V, CELL_OP(CK_WRITE, CA_INDEXED), 0, 0, 0, 48, 2, 0, 0, 0xff, 0x77);
	assert_int_equal(feed(&c), 0);
	assert_block(rw + 2048, 0x77, 0xff);
	c = mk(V, CELL_OP(CK_WRITE, CA_INDIRECT) | CO_AGEN_AFTER, CELL_RO(ALU_ADD, CS_A, CSRC_OPERAND), 0, 0,
	       96, 2, 0, 0, 0xff, 0x99);
	assert_int_equal(feed(&c), 0);
	assert_block(rw + 2096, 0x99, 0xff);
	assert_int_equal(D.reg[2], 2096);
}

static void test_register_operations(void **state)
{
	static const struct {
		uint8_t alu;
		uint32_t a, operand, want;
	} t[] = {
		{ ALU_LOAD, 5, 77, 77 },	{ ALU_NOT, 5, 0x0f0f0f0f, 0xf0f0f0f0 },
		{ ALU_NEG, 5, 1, 0xffffffff },	{ ALU_ADD, 0xfffffffe, 3, 1 },
		{ ALU_SUB, 2, 3, 0xffffffff },	{ ALU_AND, 0xff00ff00, 0x0ff00ff0, 0x0f000f00 },
		{ ALU_OR, 0x10, 0x01, 0x11 },	{ ALU_XOR, 0xff, 0x0f, 0xf0 },
		{ ALU_ANDN, 0xff, 0x0f, 0xf0 }, { ALU_SHL, 1, 35, 8 },
		{ ALU_SHR, 0x80000000, 31, 1 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		D.reg[3] = t[i].a;
		struct cell c = mk(V, CELL_OP(CK_NOP, CA_NONE), CELL_RO(t[i].alu, CS_A, CSRC_OPERAND), 0, 0,
				   t[i].operand, 3, 0, 0, 0, 0);
		assert_int_equal(feed(&c), 0);
		assert_int_equal(D.reg[3], t[i].want);
	}
	/* Unary from a register: <a> <- ~<b>; binary with a register source. */
	D.reg[4] = 0x1234;
	struct cell c = mk(V, CELL_OP(CK_NOP, CA_NONE), CELL_RO(ALU_NOT, CS_A, CSRC_B),
			   CELL_RO(ALU_SUB, CS_A, CSRC_C), 0, 0, 3, 4, 4, 0, 0);
	assert_int_equal(feed(&c), 0);
	assert_int_equal(D.reg[3], (uint32_t)~0x1234u - 0x1234u);
	/* Two slots naming one register see each other's writes. */
	D.reg[5] = 10;
	c = mk(V, CELL_OP(CK_NOP, CA_NONE), CELL_RO(ALU_ADD, CS_A, CSRC_OPERAND),
	       CELL_RO(ALU_ADD, CS_B, CSRC_C), 0, 1, 5, 5, 5, 0, 0);
	assert_int_equal(feed(&c), 0);
	assert_int_equal(D.reg[5], 22);
	assert_only_changed(0, 0);
}

static void test_conditionals(void **state)
{
	static const struct {
		uint8_t cmp;
		uint32_t l, r;
		int want;
	} t[] = {
		{ CMP_EQ, 4, 4, 1 },	  { CMP_EQ, 4, 5, 0 },	   { CMP_NE, 4, 5, 1 },
		{ CMP_LT, 4, 5, 1 },	  { CMP_LT, 5, 5, 0 },	   { CMP_LE, 5, 5, 1 },
		{ CMP_GT, 0xffffffff, 1, 1 }, { CMP_GE, 1, 2, 0 }, { CMP_ALLSET, 0x7, 0x5, 1 },
		{ CMP_ALLSET, 0x3, 0x5, 0 }, { CMP_ANYSET, 0x2, 0x6, 1 }, { CMP_ANYSET, 0x1, 0x6, 0 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		int n = nintr;
		D.reg[6] = t[i].l;
		struct cell c = mk(V, CELL_OP(CK_NOP, CA_NONE) | CO_INTR, 0, 0,
				   CELL_COND(t[i].cmp, CS_A, CSRC_OPERAND), t[i].r, 6, 0, 0, 0, 0);
		assert_int_equal(feed(&c), 0);
		assert_int_equal(nintr - n, t[i].want);
	}
	/* Where it is tested: before, between, after the register operations. */
	for (int pos = CP_FIRST; pos <= CP_LAST; pos++) {
		int n = nintr;
		D.reg[6] = 0;
		/* ro1: a += 1, ro2: a += 1; cond: a == pos. */
		struct cell c = mk(V, CELL_OP(CK_NOP, CA_NONE) | CO_INTR | CELL_POS(pos),
				   CELL_RO(ALU_ADD, CS_A, CSRC_OPERAND), CELL_RO(ALU_ADD, CS_A, CSRC_OPERAND),
				   CELL_COND(CMP_EQ, CS_A, CSRC_B), 1, 6, 7, 0, 0, 0);
		D.reg[7] = (uint32_t)pos;
		assert_int_equal(feed(&c), 0);
		assert_int_equal(nintr - n, 1);
		assert_int_equal(intrs[(nintr - 1) % 64].vci, V);
		assert_int_equal(D.reg[6], 2);
	}
	/* Without CO_INTR a true condition raises nothing; CMP_ALWAYS always does. */
	int n = nintr;
	struct cell c = mk(V, CELL_OP(CK_NOP, CA_NONE), 0, 0, CELL_COND(CMP_EQ, CS_A, CSRC_A), 0, 6, 0, 0, 0, 0);
	assert_int_equal(feed(&c), 0);
	c = mk(V, CELL_OP(CK_WRITE, CA_DIRECT) | CO_INTR, 0, 0, CELL_COND(CMP_ALWAYS, 0, 0), 96, 0, 0, 0, 0xff, 1);
	assert_int_equal(feed(&c), 0);
	assert_int_equal(nintr - n, 1);
	assert_int_equal(intrs[(nintr - 1) % 64].effaddr, 96);
	assert_int_equal(intrs[(nintr - 1) % 64].len, 32);
	/* The conditional guards register operation 2. */
	D.reg[8] = 1;
	c = mk(V, CELL_OP(CK_NOP, CA_NONE) | CO_GUARD, 0, CELL_RO(ALU_LOAD, CS_A, CSRC_OPERAND),
	       CELL_COND(CMP_EQ, CS_A, CSRC_B), 99, 8, 9, 0, 0, 0);
	D.reg[9] = 2;
	assert_int_equal(feed(&c), 0);
	assert_int_equal(D.reg[8], 1);
	D.reg[9] = 1;
	assert_int_equal(feed(&c), 0);
	assert_int_equal(D.reg[8], 99);
}

/* Priority queueing with conditional interrupts, as hybrid deposit 3.4 writes it. */
static uint16_t prio_op(void)
{
	return CELL_OP(CK_WRITE, CA_INDIRECT) | CO_INTR | CELL_POS(CP_MIDDLE);
}

static void test_priority_queue_example(void **state)
{
	(void)state;
	/* p = reg 0 (the queue's end), s = reg 1 (message size), i = reg 2 (priority level). */
	D.reg[0] = 512;
	D.reg[1] = 32;
	D.reg[2] = 0;
	static const uint32_t prio[5] = { 1u << 2, 1u << 1, 1u << 5, 1u << 3, 1u << 5 };
	static const int want_intr[5] = { 1, 0, 1, 0, 0 };
	for (int k = 0; k < 5; k++) {
		int n = nintr;
		struct cell c = mk(V, prio_op(), CELL_RO(ALU_ADD, CS_A, CSRC_B), CELL_RO(ALU_OR, CS_C, CSRC_OPERAND),
				   CELL_COND(CMP_LT, CS_C, CSRC_OPERAND), prio[k], 0, 1, 2, 0xff, (uint8_t)(k * 40));
		assert_int_equal(feed(&c), 0);
		assert_int_equal(nintr - n, want_intr[k]);
		if (want_intr[k])
			assert_int_equal(intrs[(nintr - 1) % 64].operand, prio[k]);
	}
	for (int k = 0; k < 5; k++)
		assert_block(rw + 512 + 32 * k, (uint8_t)(k * 40), 0xff);
	assert_int_equal(D.reg[0], 512 + 5 * 32);
	assert_int_equal(D.reg[2], 0x2e);
	/* The variation: the top bit of i set blocks every interrupt; i collects the queues used. */
	D.reg[2] = 0x80000000u;
	int n = nintr;
	for (int k = 0; k < 3; k++) {
		/* "if (operand greater than <i>)" is <i> < operand: never, with i's top bit set. */
		struct cell c = mk(V, prio_op(), CELL_RO(ALU_ADD, CS_A, CSRC_B), CELL_RO(ALU_OR, CS_C, CSRC_OPERAND),
				   CELL_COND(CMP_LT, CS_C, CSRC_OPERAND), 1u << k, 0, 1, 2, 0xff, 0);
		assert_int_equal(feed(&c), 0);
	}
	assert_int_equal(nintr, n);
	assert_int_equal(D.reg[2], 0x80000007u);
}

/* The same through an instruction pointer: p, s, i destination-only (3.5, 6.5). */
static void test_instruction_pointer(void **state)
{
	(void)state;
	struct cell_ctl ins = { prio_op() | CO_OPERAND_MSG, CELL_RO(ALU_ADD, CS_A, CSRC_B),
				CELL_RO(ALU_OR, CS_C, CSRC_OPERAND), CELL_COND(CMP_LT, CS_C, CSRC_OPERAND), 0,
				{ 0, 1, 2 }, 0xff };
	D.imem[8 + 3].ctl = ins;
	D.imem[8 + 3].flags = DART_I_ENTRY;
	D.imem[8 + 4].ctl = ins;	/* not an entry point */
	for (int r = 32; r < 48; r++)
		D.reg_prot[r] = 0;	/* destination-only */
	D.reg[32] = 64;
	D.reg[33] = 32;
	D.reg[34] = 0;
	struct cell c = mk(IPC, CELL_IP | 3, 0, 0, 0, 4, 0, 0, 0, 0, 0x30);
	assert_int_equal(feed(&c), 0);
	assert_block(rw + 64, 0x30, 0xff);
	assert_int_equal(D.reg[32], 96);
	assert_int_equal(D.reg[34], 4);
	assert_int_equal(nintr, 1);
	/* The IP-only connection refuses a direct cell; non-entry and out-of-window ips fault. */
	struct {
		struct cell c;
		int cls;
	} bad[] = {
		{ write_direct(IPC, 0, 1), DEX_PROT },
		{ mk(IPC, CELL_IP | 4, 0, 0, 0, 4, 0, 0, 0, 0, 0), DEX_PROT },
		{ mk(IPC, CELL_IP | 8, 0, 0, 0, 4, 0, 0, 0, 0, 0), DEX_BOUNDS },
		{ mk(IPC, CELL_IP | 3, 1, 0, 0, 4, 0, 0, 0, 0, 0), DEX_UNIMPL },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snap_take(&before);
		assert_int_equal(feed(&bad[i].c), 0);
		assert_unchanged();
		assert_int_equal(D.conn[IPC].state, DC_EXCEPTION);
		assert_int_equal(D.conn[IPC].exc.cls, bad[i].cls);
		assert_int_equal(dart_resume(&D, IPC, DART_SKIP, &sink), 0);
	}
	/* An instruction that takes its indices from the message: the bits apply again. */
	D.imem[8 + 5].ctl = ins;
	D.imem[8 + 5].ctl.opcode |= CO_INDEX_MSG;
	D.imem[8 + 5].flags = DART_I_ENTRY;
	c = mk(IPC, CELL_IP | 5, 0, 0, 0, 4, 0, 1, 2, 0, 0);
	snap_take(&before);
	assert_int_equal(feed(&c), 0);
	assert_unchanged();
	assert_int_equal(D.conn[IPC].exc.cls, DEX_PROT);
}

/*
 * The sequencer (6.5): one cell steps the destination through several
 * instructions.  Here a store indirect with postincrement whose stride is
 * computed first: NOP b <- <b> + operand (the message's), NOP c <- <c> + 1
 * with an interrupt, then WRITE at <a>, a <- <a> + <b>.  A fault in the
 * last changes nothing the first ones computed; chains too long, out of
 * the window, or with data before the last fault too.
 */
static void test_sequencer(void **state)
{
	(void)state;
	struct cell_ctl add_b = { CELL_OP(CK_NOP, CA_NONE) | CO_OPERAND_MSG, CELL_RO(ALU_ADD, CS_B, CSRC_OPERAND),
				  0, 0, 0, { 0, 1, 2 }, 0 };
	struct cell_ctl inc_c = { CELL_OP(CK_NOP, CA_NONE) | CO_INTR, CELL_RO(ALU_ADD, CS_C, CSRC_OPERAND), 0,
				  CELL_COND(CMP_ALWAYS, 0, 0), 1, { 0, 1, 2 }, 0 };
	struct cell_ctl store = { CELL_OP(CK_WRITE, CA_INDIRECT), CELL_RO(ALU_ADD, CS_A, CSRC_B), 0, 0, 0,
				  { 0, 1, 2 }, 0xff };
	for (int r = 32; r < 48; r++)
		D.reg_prot[r] = 0;	/* destination-only: only the instructions name them */
	D.imem[8 + 0].ctl = add_b;
	D.imem[8 + 0].flags = DART_I_ENTRY;
	D.imem[8 + 0].next = 1 + 1;
	D.imem[8 + 1].ctl = inc_c;
	D.imem[8 + 1].next = 2 + 1;
	D.imem[8 + 2].ctl = store;
	D.reg[32] = 128;	/* a: where the next deposit goes */
	D.reg[33] = 0;		/* b: the stride */
	D.reg[34] = 0;		/* c: cells counted */
	struct cell c = mk(IPC, CELL_IP | 0, 0, 0, 0, 64, 0, 0, 0, 0, 0x21);
	assert_int_equal(feed(&c), 0);
	assert_block(rw + 128, 0x21, 0xff);
	assert_int_equal(D.reg[33], 64);
	assert_int_equal(D.reg[32], 128 + 64);	/* the last saw the stride the first computed */
	assert_int_equal(D.reg[34], 1);
	assert_int_equal(nintr, 1);
	assert_int_equal(D.ctr.sequenced, 2);
	c = mk(IPC, CELL_IP | 0, 0, 0, 0, 32, 0, 0, 0, 0, 0x22);
	assert_int_equal(feed(&c), 0);
	assert_block(rw + 192, 0x22, 0xff);
	assert_int_equal(D.reg[32], 192 + 96);
	assert_int_equal(D.reg[34], 2);
	/* The last instruction faults (its address past the endpoint): nothing of the sequence lands. */
	D.reg[32] = PG - 16;
	snap_take(&before);
	int ni = nintr;
	assert_int_equal(feed(&c), 0);
	assert_unchanged();
	assert_int_equal(nintr, ni);
	assert_int_equal(D.conn[IPC].exc.cls, DEX_BOUNDS);
	assert_int_equal(dart_resume(&D, IPC, DART_SKIP, &sink), 0);
	D.reg[32] = 128;
	/* Data before the last, a chain longer than DART_SEQ_MAX, or one leaving the window: faults. */
	D.imem[8 + 0].next = 2 + 1;		/* entry -> store -> (store names another) */
	D.imem[8 + 2].next = 1 + 1;
	snap_take(&before);
	assert_int_equal(feed(&c), 0);
	assert_unchanged();
	assert_int_equal(D.conn[IPC].exc.cls, DEX_UNIMPL);
	assert_int_equal(dart_resume(&D, IPC, DART_SKIP, &sink), 0);
	D.imem[8 + 2].next = 0;
	D.imem[8 + 0].next = 0 + 1;		/* a loop: the entry names itself */
	snap_take(&before);
	assert_int_equal(feed(&c), 0);
	assert_unchanged();
	assert_int_equal(D.conn[IPC].exc.cls, DEX_BOUNDS);
	assert_int_equal(dart_resume(&D, IPC, DART_SKIP, &sink), 0);
	D.imem[8 + 0].next = 8 + 1;		/* past the window of 8 */
	snap_take(&before);
	assert_int_equal(feed(&c), 0);
	assert_unchanged();
	assert_int_equal(D.conn[IPC].exc.cls, DEX_BOUNDS);
	assert_int_equal(dart_resume(&D, IPC, DART_SKIP, &sink), 0);
}

/* --- reads and fetches ------------------------------------------------------ */

static void test_remote_read(void **state)
{
	(void)state;
	/* The request's data holds the reply's control: WRITE direct at 800 of the requester, interrupt. */
	uint8_t req[CELL_DATA] = { 0 };
	dart_reply_ctl(req, DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT) | CO_INTR, 0, 0, CELL_COND(CMP_ALWAYS, 0, 0)),
		       800, DART_IDX(0, 0, 0, 0xff));
	struct cell_ctl ctl = { CELL_OP(CK_READ, CA_DIRECT), 0, 0, 0, 1000, { 0, 0, 0 }, 0x0f };
	struct cell c;
	cell_build(&c, V, &ctl, req);
	assert_int_equal(feed(&c), 0);
	assert_int_equal(nreply, 1);
	assert_int_equal(reply_peer[0], SRC);
	const struct cell *r = &replies[0];
	uint16_t vci;
	uint8_t pt;
	assert_int_equal(cell_hdr_parse(r->hdr, &vci, &pt), CELL_HDR_OK);
	assert_int_equal(vci, V);
	assert_memory_equal(r->ctl, req, CELL_CTL_LEN);
	assert_int_equal(r->check, cell_check(r));
	assert_int_equal(cell_get16(r->crc), cell_data_crc(r));
	assert_memory_equal(r->data, rw + 1000, 16);	/* words 0..3 */
	for (int i = 16; i < CELL_DATA; i++)
		assert_int_equal(r->data[i], 0);	/* words the mask left out */
	/* The reply at the requester (this DART plays it, from OTHER on X's reply...): feed it on V from SRC. */
	assert_int_equal(feed(r), 0);
	assert_memory_equal(rw + 800, rw + 1000, 16);
	assert_int_equal(nintr, 1);

	/*
	 * No room for the reply: the READ waits on its own connection (DC_WAIT),
	 * the cell after it on V is held behind it, and the frame goes on: a
	 * cell of connection W in the same frame lands now (6.4: other
	 * connections' cells are processed).  Once there is room, V goes on in
	 * order, each cell applied once.
	 */
	D.reg[0] = 2048;
	struct cell f[4] = {
		mk(V, CELL_OP(CK_WRITE, CA_INDIRECT), CELL_RO(ALU_ADD, CS_A, CSRC_OPERAND), 0, 0, 32, 0, 0, 0, 0xff, 1),
		c,
		mk(V, CELL_OP(CK_WRITE, CA_INDIRECT), CELL_RO(ALU_ADD, CS_A, CSRC_OPERAND), 0, 0, 32, 0, 0, 0, 0xff, 2),
		write_direct(W, 3008, 3),
	};
	room = 0;
	size_t next = 0;
	assert_int_equal(dart_input(&D, SRC, (const uint8_t *)f, 4, &next, &sink), 0);
	assert_int_equal(next, 4);
	assert_int_equal(D.reg[0], 2048 + 32);
	assert_int_equal(D.conn[V].state, DC_WAIT);
	assert_int_equal(D.conn[V].hold_n, 2);
	assert_block(rw + 3008, 3, 0xff);		/* W's cell did not wait for V's reply */
	assert_int_equal(D.ctr.reply_waits, 1);
	snap_take(&before);
	assert_int_equal(dart_resume(&D, V, DART_CONTINUE, &sink), -EAGAIN);	/* still no room */
	assert_unchanged();
	room = 1;
	assert_int_equal(dart_resume(&D, V, DART_CONTINUE, &sink), 0);
	assert_int_equal(D.conn[V].state, DC_OPEN);
	assert_int_equal(D.reg[0], 2048 + 64);
	assert_int_equal(nreply, 2);
	assert_block(rw + 2048, 1, 0xff);
	assert_block(rw + 2080, 2, 0xff);

	/* A READ needs the endpoint's read right; the reply goes on the reply connection. */
	struct cell rr = c;
	memcpy(rr.hdr, D.conn[REPLYV].tx_hdr, CELL_HDR_LEN);
	assert_int_equal(feed_from(OTHER, &rr, 1), 0);
	assert_int_equal(nreply, 3);
	assert_int_equal(reply_peer[2], OTHER);
	assert_memory_equal(replies[2].data, ro + 1000, 16);
	/* X's endpoint is RW; WO has no read right: make X's endpoint WO for a moment. */
	D.conn[X].ep = (uint16_t)ep_wo;
	memcpy(rr.hdr, D.conn[X].tx_hdr, CELL_HDR_LEN);
	snap_take(&before);
	assert_int_equal(feed_from(OTHER, &rr, 1), 0);
	assert_unchanged();
	assert_int_equal(D.conn[X].exc.cls, DEX_PROT);
	D.conn[X].ep = (uint16_t)ep_rw;
}

static void test_fetch_and_increment_and_cas(void **state)
{
	(void)state;
	uint8_t req[CELL_DATA] = { 0 };
	dart_reply_ctl(req, DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0), 1536, DART_IDX(0, 0, 0, 0xff));
	D.reg[10] = 41;
	struct cell_ctl ctl = { CELL_OP(CK_FETCH, CA_NONE), CELL_RO(ALU_ADD, CS_A, CSRC_OPERAND), 0, 0, 1,
				{ 10, 0, 0 }, 0x09 };
	struct cell c;
	cell_build(&c, V, &ctl, req);
	for (int k = 0; k < 3; k++) {
		assert_int_equal(feed(&c), 0);
		uint32_t w[8];
		memcpy(w, replies[nreply - 1].data, sizeof w);
		assert_int_equal(w[0], 41 + k);		/* old a */
		assert_int_equal(w[3], 42 + k);		/* new a */
		assert_int_equal(w[1] | w[2] | w[4] | w[5] | w[6] | w[7], 0);
	}
	assert_int_equal(D.reg[10], 44);
	/* Compare-and-swap: NOP b <- new, then FETCH: if <a> == expect, a <- b (guarded). */
	ctl = (struct cell_ctl){ CELL_OP(CK_NOP, CA_NONE), CELL_RO(ALU_LOAD, CS_B, CSRC_OPERAND), 0, 0, 100,
				 { 10, 11, 0 }, 0 };
	struct cell load;
	cell_build(&load, V, &ctl, NULL);
	ctl = (struct cell_ctl){ CELL_OP(CK_FETCH, CA_NONE) | CO_GUARD, 0, CELL_RO(ALU_LOAD, CS_A, CSRC_B),
				 CELL_COND(CMP_EQ, CS_A, CSRC_OPERAND), 43, { 10, 11, 0 }, 0x41 };
	cell_build(&c, V, &ctl, req);
	struct cell pair[2] = { load, c };
	assert_int_equal(feed_from(SRC, pair, 2), 0);
	uint32_t w[8];
	memcpy(w, replies[nreply - 1].data, sizeof w);
	assert_int_equal(w[0], 44);	/* old: not 43 */
	assert_int_equal(w[6], 0);	/* failed */
	assert_int_equal(D.reg[10], 44);
	ctl.operand = 44;
	cell_build(&pair[1], V, &ctl, req);
	assert_int_equal(feed_from(SRC, pair, 2), 0);
	memcpy(w, replies[nreply - 1].data, sizeof w);
	assert_int_equal(w[0], 44);
	assert_int_equal(w[6], 1);
	assert_int_equal(D.reg[10], 100);
}

/* --- exceptions (6.4) -------------------------------------------------------- */

struct bad {
	const char *what;
	struct cell c;
	int cls;
};

static void test_every_exception_changes_nothing(void **state)
{
	(void)state;
	D.reg[0] = 4000;	/* indirect: in bounds only for 3 more words */
	D.reg[1] = 2;		/* misaligned */
	D.reg_prot[12] = DART_REG_R;	/* read-only */
	D.reg_prot[13] = DART_REG_W;	/* write-only */
	D.reg_prot[14] = 0;		/* destination-only */
	struct cell crc = write_direct(V, 0, 1), chk = write_direct(V, 0, 1);
	crc.data[5] ^= 1;
	chk.check ^= 0x10;
	uint8_t req[CELL_DATA] = { 0 };
	struct cell_ctl rd = { CELL_OP(CK_READ, CA_DIRECT), CELL_RO(ALU_ADD, CS_A, CSRC_OPERAND), 0, 0, 64,
			       { 3, 0, 0 }, 0xff };
	struct cell noreply;
	cell_build(&noreply, NORE, &rd, req);
	struct bad t[] = {
		{ "check", chk, DEX_CHECK },
		{ "data crc", crc, DEX_CRC },
		/* Register operations that would have run before each fault must not show. */
		{ "bounds, direct", mk(V, CELL_OP(CK_WRITE, CA_DIRECT), CELL_RO(ALU_ADD, CS_A, CSRC_OPERAND), 0, 0,
				       PG - 16, 3, 0, 0, 0xff, 1), DEX_BOUNDS },
		{ "bounds, indexed past 2^32", mk(V, CELL_OP(CK_WRITE, CA_INDEXED), 0, 0, 0, 0xfffffff0u, 0, 0, 0,
						   0xff, 1), DEX_BOUNDS },
		{ "bounds, after postincrement", mk(V, CELL_OP(CK_WRITE, CA_INDIRECT) | CO_AGEN_AFTER,
						     CELL_RO(ALU_ADD, CS_A, CSRC_OPERAND), 0, 0, 96, 0, 0, 0, 0xff, 1),
		  DEX_BOUNDS },
		{ "bounds, register index", mk(V, CELL_OP(CK_NOP, CA_NONE), CELL_RO(ALU_ADD, CS_A, CSRC_OPERAND), 0,
					       0, 1, 16, 0, 0, 0, 0), DEX_BOUNDS },
		{ "align", mk(V, CELL_OP(CK_WRITE, CA_INDIRECT), CELL_RO(ALU_ADD, CS_B, CSRC_OPERAND), 0, 0, 1, 1, 3,
			      0, 0xff, 1), DEX_ALIGN },
		{ "protection, write read-only register", mk(V, CELL_OP(CK_NOP, CA_NONE),
							     CELL_RO(ALU_ADD, CS_B, CSRC_OPERAND),
							     CELL_RO(ALU_LOAD, CS_A, CSRC_OPERAND), 0, 1, 12, 3, 0, 0, 0),
		  DEX_PROT },
		{ "protection, read write-only register", mk(V, CELL_OP(CK_NOP, CA_NONE),
							     CELL_RO(ALU_LOAD, CS_A, CSRC_B), 0, 0, 0, 3, 13, 0, 0, 0),
		  DEX_PROT },
		{ "protection, add into write-only register", mk(V, CELL_OP(CK_NOP, CA_NONE),
								 CELL_RO(ALU_ADD, CS_A, CSRC_OPERAND), 0, 0, 1, 13, 0,
								 0, 0, 0), DEX_PROT },
		{ "protection, indirect through destination-only", mk(V, CELL_OP(CK_WRITE, CA_INDIRECT), 0, 0, 0, 0,
								       14, 0, 0, 0xff, 1), DEX_PROT },
		{ "protection, compare destination-only", mk(V, CELL_OP(CK_NOP, CA_NONE) | CO_INTR, 0, 0,
							     CELL_COND(CMP_EQ, CS_A, CSRC_OPERAND), 0, 14, 0, 0, 0, 0),
		  DEX_PROT },
		{ "unimplemented alu", mk(V, CELL_OP(CK_NOP, CA_NONE), 0xc0, 0, 0, 0, 0, 0, 0, 0, 0), DEX_UNIMPL },
		{ "unimplemented kind", mk(V, CELL_OP(6, CA_NONE), 0, 0, 0, 0, 0, 0, 0, 0, 0), DEX_UNIMPL },
		{ "unimplemented compare", mk(V, CELL_OP(CK_NOP, CA_NONE) | CO_INTR, 0, 0, 0xa0, 0, 0, 0, 0, 0, 0),
		  DEX_UNIMPL },
		{ "condition position 3", mk(V, CELL_OP(CK_NOP, CA_NONE) | CELL_POS(3), 0, 0, 0x10, 0, 0, 0, 0, 0, 0),
		  DEX_UNIMPL },
		{ "guard after ro2", mk(V, CELL_OP(CK_NOP, CA_NONE) | CO_GUARD | CELL_POS(CP_LAST), 0, 0, 0x10, 0, 0,
					0, 0, 0, 0), DEX_UNIMPL },
		{ "reserved opcode bits", mk(V, CELL_OP(CK_WRITE, CA_DIRECT) | 1, 0, 0, 0, 0, 0, 0, 0, 0xff, 1),
		  DEX_UNIMPL },
		{ "write without address", mk(V, CELL_OP(CK_WRITE, CA_NONE), 0, 0, 0, 0, 0, 0, 0, 0xff, 1),
		  DEX_UNIMPL },
		{ "instruction bits in a direct cell", mk(V, CELL_OP(CK_NOP, CA_NONE) | CO_INDEX_MSG, 0, 0, 0, 0, 0,
							  0, 0, 0, 0), DEX_UNIMPL },
		{ "dst slot 3", mk(V, CELL_OP(CK_NOP, CA_NONE), CELL_RO(ALU_LOAD, 3, CSRC_OPERAND), 0, 0, 0, 0, 0, 0,
				   0, 0), DEX_UNIMPL },
		{ "software exception", mk(V, CELL_OP(CK_SWEXC, CA_NONE), 0, 0, 0, 1234, 0, 0, 0, 0, 0),
		  DEX_SOFTWARE },
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		int n = nexc;
		snap_take(&before);
		assert_int_equal(feed(&t[i].c), 0);
		if (D.conn[V].state != DC_EXCEPTION || D.conn[V].exc.cls != t[i].cls)
			fail_msg("%s: state %d class %d", t[i].what, D.conn[V].state, D.conn[V].exc.cls);
		assert_unchanged();
		assert_int_equal(nexc, n + 1);
		assert_int_equal(excs[n], V);
		assert_memory_equal(D.conn[V].exc.cell, &t[i].c, CELL_SIZE);
		assert_int_equal(dart_resume(&D, V, DART_SKIP, &sink), 0);
		assert_int_equal(D.conn[V].state, DC_OPEN);
	}
	/* No reply connection: a READ on NORE. */
	snap_take(&before);
	assert_int_equal(feed(&noreply), 0);
	assert_unchanged();
	assert_int_equal(D.conn[NORE].exc.cls, DEX_NOREPLY);
	assert_int_equal(nreply, 0);
	/* A WRITE into a read-only endpoint. */
	D.conn[W].ep = (uint16_t)ep_ro;
	struct cell wro = write_direct(W, 0, 1);
	snap_take(&before);
	assert_int_equal(feed(&wro), 0);
	assert_unchanged();
	assert_int_equal(D.conn[W].exc.cls, DEX_PROT);
	assert_int_equal(D.ctr.exc[DEX_PROT], 6);
}

static void test_blocking_is_per_connection(void **state)
{
	(void)state;
	/* V faults (bounds through a register the host can fix). */
	D.reg[0] = PG;
	D.reg[16] = 0;
	struct cell bad = mk(V, CELL_OP(CK_WRITE, CA_INDIRECT), CELL_RO(ALU_ADD, CS_A, CSRC_OPERAND), 0, 0, 32, 0,
			     0, 0, 0xff, 0x50);
	assert_int_equal(feed(&bad), 0);
	assert_int_equal(D.conn[V].state, DC_EXCEPTION);
	/* In one frame: V's cells are held, W's (same sender) and X's (other sender) go on. */
	struct cell f[4] = {
		mk(V, CELL_OP(CK_WRITE, CA_INDIRECT), CELL_RO(ALU_ADD, CS_A, CSRC_OPERAND), 0, 0, 32, 0, 0, 0, 0xff, 0x60),
		mk(W, CELL_OP(CK_WRITE, CA_INDIRECT), CELL_RO(ALU_ADD, CS_A, CSRC_OPERAND), 0, 0, 32, 0, 0, 0, 0xff, 0x70),
		mk(V, CELL_OP(CK_WRITE, CA_INDIRECT), CELL_RO(ALU_ADD, CS_A, CSRC_OPERAND), 0, 0, 32, 0, 0, 0, 0xff, 0x80),
		mk(W, CELL_OP(CK_WRITE, CA_INDIRECT), CELL_RO(ALU_ADD, CS_A, CSRC_OPERAND), 0, 0, 32, 0, 0, 0, 0xff, 0x90),
	};
	assert_int_equal(feed_from(SRC, f, 4), 0);
	struct cell xw = write_direct(X, 3072, 0xa0);
	assert_int_equal(feed_from(OTHER, &xw, 1), 0);
	assert_block(rw + 0, 0x70, 0xff);
	assert_block(rw + 32, 0x90, 0xff);
	assert_block(rw + 3072, 0xa0, 0xff);
	assert_int_equal(D.reg[16], 64);
	assert_int_equal(D.reg[0], PG);		/* V: nothing applied */
	assert_int_equal(D.conn[V].hold_n, 2);
	assert_int_equal(rw[1024], pat(PG + 1024));
	/* Still blocked: re-enabling without fixing faults again at once. */
	assert_int_equal(dart_resume(&D, V, DART_CONTINUE, &sink), DART_BLOCKED);
	assert_int_equal(dart_resume(&D, V, DART_RETRY, &sink), DART_BLOCKED);
	assert_int_equal(D.conn[V].hold_n, 2);
	/* The host fixes the register and retries: the cell, then the held ones, in order. */
	D.reg[0] = 1024;
	assert_int_equal(dart_resume(&D, V, DART_RETRY, &sink), 0);
	assert_block(rw + 1024, 0x50, 0xff);
	assert_block(rw + 1056, 0x60, 0xff);
	assert_block(rw + 1088, 0x80, 0xff);
	assert_int_equal(D.reg[0], 1024 + 96);
	assert_int_equal(D.conn[V].state, DC_OPEN);
	assert_int_equal(dart_resume(&D, V, DART_SKIP, &sink), -EINVAL);

	/* A held cell that faults stops the replay; the rest stay held. */
	struct cell chk = write_direct(V, 0, 1);
	chk.check ^= 1;
	struct cell g[4] = { chk, write_direct(V, 1200, 0x11), chk, write_direct(V, 1232, 0x22) };
	assert_int_equal(feed_from(SRC, g, 4), 0);
	assert_int_equal(D.conn[V].hold_n, 3);
	assert_int_equal(dart_resume(&D, V, DART_SKIP, &sink), DART_BLOCKED);
	assert_block(rw + 1200, 0x11, 0xff);
	assert_int_equal(D.conn[V].hold_n, 1);
	assert_int_equal(dart_resume(&D, V, DART_SKIP, &sink), 0);
	assert_block(rw + 1232, 0x22, 0xff);

	/* SMALL holds 4; two more are refused (back-pressure) and counted, and taken once it is re-enabled. */
	struct cell s0 = write_direct(SMALL, 0, 1);
	s0.check ^= 1;
	assert_int_equal(feed(&s0), 0);
	for (int k = 0; k < 6; k++) {
		struct cell s = write_direct(SMALL, 2000 + 32 * (uint32_t)k, (uint8_t)k);
		assert_int_equal(feed(&s), k < 4 ? 0 : -ENOBUFS);
	}
	assert_int_equal(D.conn[SMALL].hold_n, 4);
	assert_int_equal(D.conn[SMALL].hold_full, 2);
	assert_int_equal(D.ctr.hold_full, 2);
	assert_int_equal(dart_resume(&D, SMALL, DART_SKIP, &sink), 0);
	for (int k = 0; k < 4; k++)
		assert_block(rw + 2000 + 32 * k, (uint8_t)k, 0xff);
	assert_int_equal(rw[2000 + 32 * 4], pat(PG + 2000 + 32 * 4));
	for (int k = 4; k < 6; k++) {
		struct cell s = write_direct(SMALL, 2000 + 32 * (uint32_t)k, (uint8_t)k);
		assert_int_equal(feed(&s), 0);
		assert_block(rw + 2000 + 32 * k, (uint8_t)k, 0xff);
	}

	/* A held READ waiting for reply room: DC_WAIT; cells arriving meanwhile are held after it. */
	uint8_t req[CELL_DATA] = { 0 };
	struct cell_ctl rd = { CELL_OP(CK_READ, CA_DIRECT), 0, 0, 0, 64, { 0, 0, 0 }, 0xff };
	struct cell rc;
	cell_build(&rc, V, &rd, req);
	struct cell h[2] = { chk, rc };
	assert_int_equal(feed_from(SRC, h, 2), 0);
	room = 0;
	assert_int_equal(dart_resume(&D, V, DART_SKIP, &sink), -EAGAIN);
	assert_int_equal(D.conn[V].state, DC_WAIT);
	struct cell late = write_direct(V, 1300, 0x33);
	assert_int_equal(feed(&late), 0);
	assert_int_equal(D.conn[V].hold_n, 2);
	assert_int_equal(dart_resume(&D, V, DART_CONTINUE, &sink), -EAGAIN);
	room = 1;
	assert_int_equal(dart_resume(&D, V, DART_CONTINUE, &sink), 0);
	assert_int_equal(nreply, 1);
	assert_block(rw + 1300, 0x33, 0xff);
}

static void test_discard_option(void **state)
{
	(void)state;
	struct cell chk = write_direct(DISC, 0, 1);
	chk.check ^= 1;
	struct cell f[3] = { chk, write_direct(DISC, 64, 0x21), mk(DISC, CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0,
								   PG, 0, 0, 0, 0xff, 1) };
	assert_int_equal(feed_from(SRC, f, 3), 0);
	assert_int_equal(D.conn[DISC].state, DC_OPEN);
	assert_int_equal(D.conn[DISC].discarded, 2);
	assert_int_equal(D.ctr.discarded, 2);
	assert_int_equal(nexc, 0);
	assert_block(rw + 64, 0x21, 0xff);
	assert_only_changed(64, 96);
	/* A software exception is a request to the host: it is not discarded. */
	struct cell sw = mk(DISC, CELL_OP(CK_SWEXC, CA_NONE), 0, 0, 0, 0, 0, 0, 0, 0, 0);
	assert_int_equal(feed(&sw), 0);
	assert_int_equal(D.conn[DISC].state, DC_EXCEPTION);
	assert_int_equal(nexc, 1);
}

static void test_refused_cells_block_nothing(void **state)
{
	(void)state;
	struct cell hec = write_direct(V, 0, 1), vpi = write_direct(V, 0, 1), oam = write_direct(V, 0, 1);
	hec.hdr[4] ^= 1;
	vpi.hdr[0] = 0x01;
	vpi.hdr[4] = atm_hec(vpi.hdr);
	oam.hdr[3] |= PT_OAM << 1;
	oam.hdr[4] = atm_hec(oam.hdr);
	struct cell f[7] = { hec, vpi, oam, write_direct(100, 0, 1), write_direct(TXONLY, 0, 1), write_direct(X, 0, 1),
			     write_direct(300, 0, 1) };
	snap_take(&before);
	assert_int_equal(feed_from(SRC, f, 7), 0);
	assert_unchanged();
	assert_int_equal(D.ctr.bad_hec, 1);
	assert_int_equal(D.ctr.bad_header, 2);
	assert_int_equal(D.ctr.no_conn, 3);
	assert_int_equal(D.ctr.wrong_peer, 1);
	assert_int_equal(nexc, 0);
	for (int v = V; v <= SMALL; v++)
		assert_true(D.conn[v].state == DC_OPEN);
	/* A closed connection refuses; its endpoint can go once nobody uses it. */
	assert_int_equal(dart_ep_destroy(&D, ep_ro), -EBUSY);
	assert_int_equal(dart_conn_close(&D, REPLYV), 0);
	assert_int_equal(dart_ep_destroy(&D, ep_ro), 0);
	struct cell rv = write_direct(REPLYV, 0, 1);
	assert_int_equal(feed_from(OTHER, &rv, 1), 0);
	assert_int_equal(D.ctr.no_conn, 4);
	assert_unchanged();
}

/* --- blocks (4, 6.2) and the send side (6.3) ----------------------------------- */

static struct dart S;		/* the sender's DART (node 1) */

/* Form what go sends on S's connection V, as a list of cells. */
static int form(struct dart_sendregs *r, uint32_t go, struct cell *out, int max)
{
	struct dart_send snd;
	int n = 0, more;

	if (dart_send_prepare(&S, V, r, go, &out[n++], &snd) < 0)
		return -1;
	if (!snd.block)
		return n;
	do {
		assert_true(n < max);
		more = cell_seg_next(&snd.seg, (struct cell_aal5 *)&out[n++]);
	} while (more == 1);
	return n;
}

static void sender_setup(void)
{
	struct dart_conn_cfg cfg = { 0, 0, DART_TX | DART_RX, V, 0, 16, 0, 0, 0 };
	if (!sbuf)
		sbuf = aligned_alloc(PG, PG);
	for (int i = 0; i < PG; i++)
		sbuf[i] = (uint8_t)(i * 3 + 1);
	dart_init(&S);
	assert_int_equal(dart_ep_create(&S, sbuf, PG, DART_EP_READ), 0);
	assert_int_equal(dart_conn_open(&S, V, &cfg, NULL, 0), 0);
}

/*
 * The sender set up (sender_setup) and its registers for a WRITE of the
 * cells' own data (CA_DIRECT, with the op's flags) under cond, every
 * index through, at operand: the size is the caller's.
 */
static struct dart_sendregs direct_write(uint16_t flags, uint8_t cond, uint32_t operand)
{
	struct dart_sendregs r = { 0 };

	sender_setup();
	r.opcode = DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT) | flags, 0, 0, cond);
	r.operand = operand;
	r.index = DART_IDX(0, 0, 0, 0xff);
	return r;
}

static void test_send_registers(void **state)
{
	struct dart_sendregs r = { 0 };
	struct cell c[100];

	(void)state;
	r = direct_write(0, 0, 96);
	assert_int_equal(form(&r, 64, c, 100), 1);
	assert_int_equal(r.go, 64);
	assert_memory_equal(c[0].data, sbuf + 64, CELL_DATA);
	assert_int_equal(feed(&c[0]), 0);
	assert_memory_equal(rw + 96, sbuf + 64, CELL_DATA);
	/* Mode: the operand is the value written to go. */
	r.mode = DART_MODE_GO_OPERAND;
	assert_int_equal(form(&r, 256, c, 100), 1);
	assert_int_equal(r.operand, 256);
	assert_int_equal(feed(&c[0]), 0);
	assert_memory_equal(rw + 256, sbuf + 256, CELL_DATA);
	/* Errors. */
	struct dart_send snd;
	r.mode = 0;
	assert_int_equal(dart_send_prepare(&S, V, &r, 16, &c[0], &snd), -EINVAL);	/* not 32-aligned */
	assert_int_equal(dart_send_prepare(&S, V, &r, PG, &c[0], &snd), -ERANGE);
	assert_int_equal(dart_send_prepare(&S, W, &r, 0, &c[0], &snd), -EBADF);
	r.size = 1;
	assert_int_equal(dart_send_prepare(&S, V, &r, 0, &c[0], &snd), -EINVAL);
	r.size = 4;
	r.opcode = DART_OPC(CELL_OP(CK_READ, CA_DIRECT), 0, 0, 0);
	assert_int_equal(dart_send_prepare(&S, V, &r, 0, &c[0], &snd), -EINVAL);	/* a block must be a WRITE */
	r.size = PG / 16 + 1;
	r.opcode = DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0);
	assert_int_equal(dart_send_prepare(&S, V, &r, 0, &c[0], &snd), -ERANGE);
	/* Status: while the connection is blocked, mode STATUS_EXC refuses. */
	r.size = 0;
	r.mode = DART_MODE_STATUS_EXC;
	S.conn[V].state = DC_EXCEPTION;
	assert_int_equal(dart_send_prepare(&S, V, &r, 0, &c[0], &snd), -EIO);
	r.mode = 0;
	assert_int_equal(dart_send_prepare(&S, V, &r, 0, &c[0], &snd), 0);
	S.conn[V].state = DC_OPEN;
}

static void test_blocks(void **state)
{
	struct dart_sendregs r = { 0 };
	static struct cell c[200];

	(void)state;
	r = direct_write(CO_INTR, CELL_COND(CMP_ALWAYS, 0, 0), 1024);
	/* Every size from 3 to 160 blocks of 16 bytes: all the data, one interrupt after the last cell. */
	for (uint32_t size = 3; size <= 160; size++) {
		r.size = size;
		r.operand = 1024;
		memset(rw + 1024, 0, 2600);
		int n = form(&r, 0, c, 200), ni = nintr;
		assert_int_equal(n, 1 + (int)aal5_cells(size * 16 - 32));
		for (int i = 0; i < n - 1; i++) {
			assert_int_equal(feed(&c[i]), 0);
			assert_int_equal(nintr, ni);
		}
		assert_int_equal(feed(&c[n - 1]), 0);
		assert_int_equal(nintr, ni + 1);
		assert_int_equal(intrs[(nintr - 1) % 64].len, size * 16);
		assert_int_equal(intrs[(nintr - 1) % 64].kind, CK_BLOCK);
		assert_memory_equal(rw + 1024, sbuf, size * 16);
		assert_int_equal(rw[1024 + size * 16], 0);
		assert_int_equal(D.conn[V].rx, RX_CONTROL);
	}
	/* A bad trailer CRC: exception on the last cell, whose data is not written. */
	r.size = 2 + 6;		/* 32 + 96: two full AAL5 cells and a trailer cell */
	memset(rw + 1024, 0, 256);
	int n = form(&r, 0, c, 200);
	assert_int_equal(n, 4);
	struct cell_aal5 *last = (struct cell_aal5 *)&c[n - 1];
	last->payload[47] ^= 1;
	assert_int_equal(feed_from(SRC, c, (size_t)n), 0);
	assert_int_equal(D.conn[V].state, DC_EXCEPTION);
	assert_int_equal(D.conn[V].exc.cls, DEX_CRC);
	assert_int_equal(D.conn[V].exc.data_cell, 1);
	assert_memory_equal(rw + 1024, sbuf, 128);	/* before it: deposited (cut-through) */
	assert_int_equal(dart_resume(&D, V, DART_SKIP, &sink), 0);
	assert_int_equal(D.conn[V].rx, RX_CONTROL);
	/* A block running off the endpoint's end: the data cell that would cross faults. */
	r.size = 2 + 12;
	r.operand = PG - 96;
	n = form(&r, 0, c, 200);
	assert_int_equal(n, 6);
	assert_int_equal(feed_from(SRC, c, (size_t)n), 0);
	assert_int_equal(D.conn[V].exc.cls, DEX_BOUNDS);
	assert_int_equal(D.conn[V].exc.data_cell, 1);
	assert_int_equal(D.conn[V].hold_n, (unsigned)n - 3);
	/* Skipping it discards the rest of the block; the next control cell works. */
	assert_int_equal(dart_resume(&D, V, DART_SKIP, &sink), 0);
	assert_int_equal(D.ctr.block_skipped, 3);
	assert_int_equal(D.conn[V].rx, RX_CONTROL);
	struct cell after = write_direct(V, 0, 0x5c);
	assert_int_equal(feed(&after), 0);
	assert_block(rw, 0x5c, 0xff);
	/* A BLOCK control cell that faults, discarded: its AAL5 cells are discarded too. */
	struct cell_seg seg;
	c[0] = mk(DISC, CELL_OP(CK_BLOCK, CA_DIRECT), 0, 0, 0, 3 /* misaligned */, 0, 0, 0, 0xff, 1);
	cell_seg_start(&seg, DISC, sbuf, 144);
	n = 1;
	while (cell_seg_next(&seg, (struct cell_aal5 *)&c[n++]) == 1)
		;
	assert_int_equal(n, 5);
	c[n] = write_direct(DISC, 512, 0x3c);
	uint64_t skipped = D.ctr.block_skipped;
	snap_take(&before);
	assert_int_equal(feed_from(SRC, c, (size_t)n), 0);
	assert_unchanged();
	assert_int_equal(D.conn[DISC].discarded, 1);
	assert_int_equal(D.ctr.block_skipped - skipped, 4);
	assert_int_equal(D.conn[DISC].rx, RX_CONTROL);
	assert_int_equal(feed(&c[n]), 0);
	assert_block(rw + 512, 0x3c, 0xff);
}

/*
 * A frame in shared memory (d->rx_shared, the shared-memory link's ring):
 * whole blocks in one frame, and a block behind a single cell, land as
 * they do from memory of the node's own, with the same interrupts and
 * counters; a bad trailer CRC faults the same way.
 */
static void test_shared_frame(void **state)
{
	struct dart_sendregs r = { 0 };
	static struct cell c[200];
	static uint8_t want[2600];

	(void)state;
	r = direct_write(CO_INTR, CELL_COND(CMP_ALWAYS, 0, 0), 1024);
	for (uint32_t size = 3; size <= 160; size += 7) {
		r.size = size;
		r.operand = 1024;
		int n = form(&r, 0, c, 200);
		uint64_t cells[2], blocks[2];
		int ni[2];
		for (int shared = 0; shared < 2; shared++) {
			memset(rw + 1024, 0, 2600);
			D.rx_shared = (uint8_t)shared;
			uint64_t c0 = D.ctr.data_cells, b0 = D.ctr.blocks;
			int i0 = nintr;
			assert_int_equal(feed_from(SRC, c, (size_t)n), 0);
			cells[shared] = D.ctr.data_cells - c0;
			blocks[shared] = D.ctr.blocks - b0;
			ni[shared] = nintr - i0;
			assert_int_equal(intrs[(nintr - 1) % 64].len, size * 16);
			if (!shared)
				memcpy(want, rw + 1024, sizeof want);
		}
		D.rx_shared = 0;
		assert_memory_equal(rw + 1024, want, sizeof want);
		assert_memory_equal(rw + 1024, sbuf, size * 16);
		assert_int_equal(cells[0], cells[1]);
		assert_int_equal(blocks[1], 1);
		assert_int_equal(ni[0], 1);
		assert_int_equal(ni[1], 1);
		assert_int_equal(D.conn[V].rx, RX_CONTROL);
	}
	/* A bad trailer CRC in a shared frame: the exception on the last cell, as from one's own. */
	r.size = 2 + 60;
	memset(rw + 1024, 0, 1024);
	int n = form(&r, 0, c, 200);
	((struct cell_aal5 *)&c[n - 1])->payload[47] ^= 1;
	D.rx_shared = 1;
	assert_int_equal(feed_from(SRC, c, (size_t)n), 0);
	D.rx_shared = 0;
	assert_int_equal(D.conn[V].state, DC_EXCEPTION);
	assert_int_equal(D.conn[V].exc.cls, DEX_CRC);
	assert_int_equal(D.conn[V].exc.data_cell, 1);
	assert_memory_equal(D.conn[V].exc.cell, &c[n - 1], CELL_SIZE);
	assert_int_equal(dart_resume(&D, V, DART_SKIP, &sink), 0);
	assert_int_equal(D.conn[V].rx, RX_CONTROL);
}

/* A READ or FETCH whose reply connection leads to a dead node: DEX_NOREPLY on that connection only (6.4). */
static void test_reply_to_dead_node(void **state)
{
	(void)state;
	uint8_t req[CELL_DATA] = { 0 };
	dart_reply_ctl(req, DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0), 800, DART_IDX(0, 0, 0, 0xff));
	struct cell_ctl rd = { CELL_OP(CK_READ, CA_DIRECT), 0, 0, 0, 1000, { 0, 0, 0 }, 0xff };
	struct cell_ctl fi = { CELL_OP(CK_FETCH, CA_NONE), CELL_RO(ALU_ADD, CS_A, CSRC_OPERAND), 0, 0, 1,
			       { 10, 0, 0 }, 0x09 };
	struct cell f[3];
	cell_build(&f[0], V, &rd, req);
	f[1] = write_direct(W, 64, 0x41);
	cell_build(&f[2], V, &fi, req);
	D.reg[10] = 41;
	room = -EHOSTDOWN;
	size_t next = 0;
	assert_int_equal(dart_input(&D, SRC, (const uint8_t *)f, 3, &next, &sink), 0);
	assert_int_equal(next, 3);
	assert_int_equal(D.conn[V].state, DC_EXCEPTION);
	assert_int_equal(D.conn[V].exc.cls, DEX_NOREPLY);
	assert_int_equal(D.conn[V].exc.detail, V);
	assert_memory_equal(D.conn[V].exc.cell, &f[0], CELL_SIZE);
	assert_int_equal(nexc, 1);
	assert_int_equal(nreply, 0);
	assert_block(rw + 64, 0x41, 0xff);	/* the other connection went on */
	assert_int_equal(D.conn[V].hold_n, 1);	/* the FETCH waits behind the READ */
	/* Skipped, the FETCH faults the same way and changes nothing. */
	assert_int_equal(dart_resume(&D, V, DART_SKIP, &sink), DART_BLOCKED);
	assert_int_equal(D.conn[V].exc.cls, DEX_NOREPLY);
	assert_int_equal(D.reg[10], 41);
	assert_int_equal(D.ctr.exc[DEX_NOREPLY], 2);
	/* A reply that finds the node gone when it is sent: the same. */
	room = 1;
	reply_err = -EHOSTDOWN;
	assert_int_equal(dart_resume(&D, V, DART_RETRY, &sink), DART_BLOCKED);
	assert_int_equal(D.conn[V].exc.cls, DEX_NOREPLY);
	assert_int_equal(D.reg[10], 41);
	reply_err = 0;
	assert_int_equal(dart_resume(&D, V, DART_RETRY, &sink), 0);
	assert_int_equal(D.reg[10], 42);
	assert_int_equal(nreply, 1);
}

/* A reply that cannot go commits nothing: the FETCH is applied once, when its reply goes. */
static void test_reply_not_sent_commits_nothing(void **state)
{
	(void)state;
	uint8_t req[CELL_DATA] = { 0 };
	dart_reply_ctl(req, DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0), 1536, DART_IDX(0, 0, 0, 0xff));
	struct cell_ctl fi = { CELL_OP(CK_FETCH, CA_NONE) | CO_INTR, CELL_RO(ALU_ADD, CS_A, CSRC_OPERAND), 0,
			       CELL_COND(CMP_ALWAYS, 0, 0), 1, { 10, 0, 0 }, 0x09 };
	struct cell c;
	cell_build(&c, V, &fi, req);
	D.reg[10] = 41;
	reply_err = -ENOBUFS;	/* can_reply said yes; the send found no buffer */
	size_t next = 0;
	uint8_t mem0[PG];
	memcpy(mem0, rw, PG);
	assert_int_equal(dart_input(&D, SRC, (const uint8_t *)&c, 1, &next, &sink), 0);
	assert_int_equal(D.conn[V].state, DC_WAIT);
	assert_memory_equal(rw, mem0, PG);
	assert_int_equal(D.reg[10], 41);
	assert_int_equal(nreply, 0);
	assert_int_equal(nintr, 0);
	assert_int_equal(D.ctr.applied[CK_FETCH], 0);
	reply_err = -EAGAIN;
	assert_int_equal(dart_resume(&D, V, DART_CONTINUE, &sink), -EAGAIN);
	assert_int_equal(D.reg[10], 41);
	assert_int_equal(nreply, 0);
	reply_err = 0;
	assert_int_equal(dart_resume(&D, V, DART_CONTINUE, &sink), 0);
	assert_int_equal(D.reg[10], 42);
	assert_int_equal(nreply, 1);
	assert_int_equal(nintr, 1);
	uint32_t w[8];
	memcpy(w, replies[0].data, sizeof w);
	assert_int_equal(w[0], 41);
	assert_int_equal(w[3], 42);
	/* A connection with no hold queue has nowhere to wait: the frame itself waits, at that cell. */
	open_conn(16, SRC, ep_rw, DART_RX | DART_TX, 16, 0, 16, 0, 0, 0);
	cell_build(&c, 16, &fi, req);
	reply_err = -ENOBUFS;
	next = 0;
	assert_int_equal(dart_input(&D, SRC, (const uint8_t *)&c, 1, &next, &sink), -EBUSY);
	assert_int_equal(next, 0);
	assert_int_equal(D.conn[16].state, DC_OPEN);
	reply_err = 0;
	assert_int_equal(dart_input(&D, SRC, (const uint8_t *)&c, 1, &next, &sink), 0);
	assert_int_equal(D.reg[10], 43);
}

/*
 * Feed cells[*pos..n) in frames of 27 as the kernel does; stop at a
 * refusal (its code, *pos at the refused cell) or return 0 at the end.
 */
static int feed_frames(const struct cell *cells, size_t n, size_t *pos)
{
	while (*pos < n) {
		size_t len = n - *pos < 27 ? n - *pos : 27, next = 0;
		int r = dart_input(&D, SRC, (const uint8_t *)(cells + *pos), len, &next, &sink);
		*pos += next;
		if (r)
			return r;
	}
	return 0;
}

/*
 * Cell k of a numbered run on SMALL: a += 1 where a == k (register 10,
 * c = register 11 holding 1), so a ends at the count of cells applied in
 * order; b (register 12) += k counts every one applied, once.
 */
static struct cell numbered(uint32_t k)
{
	return mk(SMALL, CELL_OP(CK_NOP, CA_NONE) | CO_GUARD, CELL_RO(ALU_ADD, CS_B, CSRC_OPERAND),
		  CELL_RO(ALU_ADD, CS_A, CSRC_C), CELL_COND(CMP_EQ, CS_A, CSRC_OPERAND), k, 10, 12, 11, 0, 0);
}

static int feed_f(const struct cell *c)
{
	size_t next = 0;
	return dart_input(&D, SRC, (const uint8_t *)c, 1, &next, &fsink);
}

/*
 * Past its hold queue a blocked connection's cells go to the spill pool,
 * in order behind the queue's, up to its share; the sender is told to
 * stop at half the queue and to go on once all is replayed (6.4: "per
 * connection buffering and flow control at the destination").
 */
static void test_spill_and_flow(void **state)
{
	static struct dart_spill pool[8];
	(void)state;
	dart_spill_init(&D, pool, 8, 6);
	D.reg[10] = 0;
	D.reg[11] = 1;
	D.reg[12] = 0;
	nflow = 0;
	struct cell f = write_direct(SMALL, 0, 1);
	f.check ^= 1;
	assert_int_equal(feed_f(&f), 0);
	assert_int_equal(D.conn[SMALL].state, DC_EXCEPTION);
	/* 4 in the queue, 6 in the pool, the 11th refused: this connection's share is 6. */
	for (uint32_t k = 0; k < 11; k++) {
		struct cell c = numbered(k);
		assert_int_equal(feed_f(&c), k < 10 ? 0 : -ENOBUFS);
		if (k == 0)
			assert_int_equal(nflow, 0);
		if (k == 1) {
			assert_int_equal(nflow, 1);	/* 2 held: half of 4 */
			assert_int_equal(flows[0], SMALL);
		}
	}
	assert_int_equal(nflow, 1);
	assert_int_equal(D.conn[SMALL].hold_n, 4);
	assert_int_equal(D.conn[SMALL].sp_n, 6);
	assert_int_equal(D.spill_used, 6);
	assert_int_equal(D.ctr.spilled, 6);
	assert_int_equal(D.conn[SMALL].hold_full, 1);
	assert_int_equal(D.ctr.flow_stops, 1);
	/* Another blocked connection meanwhile: the 2 cells left in the pool, then refused. */
	struct cell g = write_direct(W, 0, 1);
	g.check ^= 1;
	assert_int_equal(feed_f(&g), 0);
	D.conn[W].hold_n = 0;
	D.conn[W].hold_cap = 1;
	for (int k = 0; k < 4; k++) {
		struct cell c = write_direct(W, 2400 + 32 * (uint32_t)k, (uint8_t)(0x50 + k));
		assert_int_equal(feed_f(&c), k < 3 ? 0 : -ENOBUFS);
	}
	assert_int_equal(D.conn[W].sp_n, 2);
	assert_int_equal(D.spill_used, 8);
	assert_int_equal(D.spill_free, DART_SPILL_NIL);
	assert_int_equal(nflow, 2);
	assert_int_equal(flows[1], W);
	/* Re-enabled: queue then pool, in order; the sender may go on; the pool's cells come back. */
	assert_int_equal(D.reg[10], 0);
	assert_int_equal(dart_resume(&D, SMALL, DART_SKIP, &fsink), 0);
	assert_int_equal(D.reg[10], 10);
	assert_int_equal(D.reg[12], 45);
	assert_int_equal(D.conn[SMALL].hold_n + D.conn[SMALL].sp_n, 0);
	assert_int_equal(nflow, 3);
	assert_int_equal(flows[2], -SMALL);
	assert_int_equal(D.spill_used, 2);
	struct cell c10 = numbered(10);
	assert_int_equal(feed_f(&c10), 0);
	assert_int_equal(D.reg[10], 11);
	/* W's pool cells are older than any later queue cell: the queue takes new ones only once the pool is empty. */
	assert_int_equal(dart_resume(&D, W, DART_SKIP, &fsink), 0);
	for (int k = 0; k < 3; k++)
		assert_block(rw + 2400 + 32 * k, (uint8_t)(0x50 + k), 0xff);
	assert_int_equal(D.spill_used, 0);
	assert_int_equal(D.ctr.flow_goes, 2);

	/* A replay that stops for reply room: cells arriving meanwhile go behind the pool's. */
	D.reg[10] = 0;
	D.reg[12] = 0;
	nflow = 0;
	assert_int_equal(feed_f(&f), 0);
	uint8_t req[CELL_DATA] = { 0 };
	struct cell_ctl rd = { CELL_OP(CK_READ, CA_DIRECT), 0, 0, 0, 64, { 0, 0, 0 }, 0xff };
	struct cell rc;
	for (uint32_t k = 0; k < 8; k++) {
		struct cell c = numbered(k);
		if (k == 2) {
			cell_build(&rc, SMALL, &rd, req);
			assert_int_equal(feed_f(&rc), 0);	/* SMALL has no reply connection: DEX_NOREPLY on replay */
		}
		assert_int_equal(feed_f(&c), 0);
	}
	assert_int_equal(D.conn[SMALL].hold_n, 4);
	assert_int_equal(D.conn[SMALL].sp_n, 5);
	assert_int_equal(dart_resume(&D, SMALL, DART_SKIP, &fsink), DART_BLOCKED);
	assert_int_equal(D.reg[10], 2);
	assert_int_equal(D.conn[SMALL].hold_n + D.conn[SMALL].sp_n, 6);
	struct cell c8 = numbered(8);
	assert_int_equal(feed_f(&c8), 0);
	assert_int_equal(D.conn[SMALL].sp_n, 6);	/* behind the pool's, not in the queue's free slot */
	assert_int_equal(nflow, 1);
	assert_int_equal(dart_resume(&D, SMALL, DART_SKIP, &fsink), 0);
	assert_int_equal(D.reg[10], 9);
	assert_int_equal(D.reg[12], 36);
	assert_int_equal(nflow, 2);

	/* A peer reset gives the pool back; close does too. */
	assert_int_equal(feed_f(&f), 0);
	for (uint32_t k = 0; k < 7; k++) {
		struct cell c = numbered(k);
		assert_int_equal(feed_f(&c), 0);
	}
	assert_int_equal(D.spill_used, 3);
	dart_peer_reset(&D, SRC);
	assert_int_equal(D.spill_used, 0);
	assert_int_equal(D.conn[SMALL].flow_stop, 0);
	assert_int_equal(dart_resume(&D, SMALL, DART_SKIP, &fsink), 0);
	assert_int_equal(feed_f(&f), 0);
	for (uint32_t k = 0; k < 7; k++) {
		struct cell c = numbered(k);
		assert_int_equal(feed_f(&c), 0);
	}
	assert_int_equal(D.spill_used, 3);
	assert_int_equal(dart_conn_close(&D, SMALL), 0);
	assert_int_equal(D.spill_used, 0);
	for (unsigned i = 0, at = D.spill_free; i < 8; i++, at = pool[at].next)
		assert_true(at < 8);
}

/* A full hold queue refuses the cell (back-pressure), loses nothing, and takes it once re-enabled. */
static void test_hold_full_refuses(void **state)
{
	(void)state;
	struct cell f[7];
	f[0] = write_direct(SMALL, 0, 1);
	f[0].check ^= 1;
	for (int k = 0; k < 6; k++)
		f[1 + k] = write_direct(SMALL, 2000 + 32 * (uint32_t)k, (uint8_t)k);
	size_t pos = 0;
	snap_take(&before);
	assert_int_equal(feed_frames(f, 7, &pos), -ENOBUFS);
	assert_int_equal(pos, 5);
	assert_unchanged();
	assert_int_equal(D.conn[SMALL].hold_n, 4);
	assert_int_equal(D.conn[SMALL].hold_full, 1);
	assert_int_equal(D.ctr.hold_full, 1);
	/* Offered again while still blocked: still refused, nothing changes. */
	assert_int_equal(feed_frames(f, 7, &pos), -ENOBUFS);
	assert_int_equal(pos, 5);
	assert_int_equal(D.conn[SMALL].hold_n, 4);
	assert_int_equal(dart_resume(&D, SMALL, DART_SKIP, &sink), 0);
	assert_int_equal(feed_frames(f, 7, &pos), 0);
	for (int k = 0; k < 6; k++)
		assert_block(rw + 2000 + 32 * k, (uint8_t)k, 0xff);
	assert_only_changed(2000, 2000 + 6 * 32);
	/* Blocked and full again: a frame's cells before the refused one go, those after wait. */
	assert_int_equal(feed(&f[0]), 0);
	for (int k = 0; k < 4; k++)
		assert_int_equal(feed(&f[1 + k]), 0);
	struct cell g[3] = { write_direct(W, 128, 0x51), f[5], write_direct(W, 160, 0x52) };
	size_t next = 0;
	assert_int_equal(dart_input(&D, SRC, (const uint8_t *)g, 3, &next, &sink), -ENOBUFS);
	assert_int_equal(next, 1);
	assert_block(rw + 128, 0x51, 0xff);
	assert_int_equal(rw[160], pat(PG + 160));
	assert_int_equal(D.conn[SMALL].hold_n, 4);
	assert_int_equal(D.conn[SMALL].hold_full, 3);
}

/*
 * A 4 KiB block (a control cell and 85 AAL5 cells) whose control cell
 * faults as a block, on a connection that holds 64 cells: nothing of it
 * is lost; skipped, all of it goes and the next control cell is one;
 * retried, all of it lands and the next control cell is one.
 */
/*
 * The sending node rebooted (dart_peer_reset): the block it left half
 * sent is aborted, so the new incarnation's first cell is a control cell
 * and not the old block's continuation; the cells held behind an
 * exception are discarded; the exception's cell is not retried; a
 * connection to another node is untouched.
 */
static void test_peer_reset(void **state)
{
	struct dart_sendregs r = { 0 };
	static struct cell c[200];

	(void)state;
	r = direct_write(CO_INTR, CELL_COND(CMP_ALWAYS, 0, 0), 1024);
	r.size = 40;
	int n = form(&r, 0, c, 200);
	assert_true(n > 4);
	for (int i = 0; i < 3; i++)
		assert_int_equal(feed(&c[i]), 0);
	assert_int_equal(D.conn[V].rx, RX_BLOCK);
	assert_int_equal(dart_peer_reset(&D, SRC), 7);	/* V W IPC NORE TXONLY DISC SMALL */
	assert_int_equal(D.conn[V].rx, RX_CONTROL);
	assert_int_equal(D.ctr.reset_blocks, 1);
	struct cell w = write_direct(V, 0, 0x6d);
	assert_int_equal(feed(&w), 0);
	assert_block(rw, 0x6d, 0xff);
	assert_int_equal(D.conn[V].state, DC_OPEN);

	/* Held behind an exception, then the sender reboots. */
	struct cell f[3];
	f[0] = write_direct(SMALL, 0, 1);
	f[0].check ^= 1;
	f[1] = write_direct(SMALL, 2000, 2);
	f[2] = write_direct(SMALL, 2032, 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(feed(&f[i]), 0);
	assert_int_equal(D.conn[SMALL].state, DC_EXCEPTION);
	assert_int_equal(D.conn[SMALL].hold_n, 2);
	uint64_t skipped = D.ctr.skipped;
	dart_peer_reset(&D, SRC);
	assert_int_equal(D.conn[SMALL].hold_n, 0);
	assert_int_equal(D.ctr.reset_cells, 2);
	/* Retried, the old incarnation's cell is skipped instead; the held cells are gone. */
	assert_int_equal(dart_resume(&D, SMALL, DART_RETRY, &sink), 0);
	assert_int_equal(D.ctr.skipped, skipped + 1);
	assert_int_equal(rw[2000], pat(PG + 2000));
	assert_int_equal(rw[2032], pat(PG + 2032));
	/* The new incarnation's cells apply. */
	struct cell g = write_direct(SMALL, 2064, 4);
	assert_int_equal(feed(&g), 0);
	assert_block(rw + 2064, 4, 0xff);
	/* Another node's connection: untouched by SRC's reset. */
	assert_int_equal(dart_peer_reset(&D, 63), 0);
}

static void test_long_block_behind_fault(void **state)
{
	struct dart_sendregs r = { 0 };
	static struct cell c[100];
	(void)state;
	sender_setup();
	for (int how = DART_RETRY; how <= DART_SKIP; how++) {
		r.opcode = DART_OPC(CELL_OP(CK_WRITE, CA_INDIRECT), 0, 0, 0);
		r.index = DART_IDX(0, 0, 0, 0xff);
		r.size = PG / 16;
		int n = form(&r, 0, c, 99);
		assert_int_equal(n, 86);
		c[n++] = write_direct(V, 64, 0x5c);
		for (size_t i = 0; i < ARENA; i++)
			arena[i] = pat(i);
		D.reg[0] = PG;		/* the block's address: out of bounds */
		size_t pos = 0;
		int res = feed_frames(c, (size_t)n, &pos);
		assert_int_equal(D.conn[V].state, DC_EXCEPTION);
		assert_int_equal(D.conn[V].exc.cls, DEX_BOUNDS);
		assert_int_equal(D.conn[V].exc.skip_block, 1);
		assert_int_equal(res, -ENOBUFS);
		assert_int_equal(pos, 65);
		assert_int_equal(D.conn[V].hold_n, 64);
		D.reg[0] = 0;
		assert_int_equal(dart_resume(&D, V, how, &sink), 0);
		assert_int_equal(feed_frames(c, (size_t)n, &pos), 0);
		assert_int_equal(D.conn[V].state, DC_OPEN);
		assert_int_equal(D.conn[V].rx, RX_CONTROL);
		assert_block(rw + 64, 0x5c, 0xff);
		if (how == DART_RETRY) {
			assert_memory_equal(rw, sbuf, 64);
			assert_memory_equal(rw + 96, sbuf + 96, PG - 96);
		} else {
			assert_only_changed(64, 96);
		}
	}
	assert_int_equal(D.ctr.blocks, 1);
	assert_int_equal(D.ctr.block_skipped, 85);
}

/*
 * One 64 KiB AAL5 block behind an exception, with the kernel's sizes (a
 * hold queue of DEP_HOLD_DEFAULT, the spill pool of DEP_SPILL_CELLS, at
 * most DEP_SPILL_PER_CONN a connection): every cell held on its own
 * connection, none refused (a refused frame holds the node pair's whole
 * channel); another connection of the same node goes on meanwhile; once
 * re-enabled (skipping the block) the write behind it lands.
 */
static void test_64k_block_behind_fault_holds_its_connection_only(void **state)
{
	enum { BLK = 65536 };
	static struct dart_spill pool[DEP_SPILL_CELLS];
	static struct cell c[BLK / CELL_PAYLOAD + 4];
	static struct dart Sx;
	struct dart_conn_cfg scfg = { 0, 0, DART_TX | DART_RX, V, 0, 16, 0, 0, 0 };
	struct dart_sendregs r = { 0 };
	struct dart_send snd;
	uint8_t *src = aligned_alloc(PG, BLK);
	int n = 0, more;

	(void)state;
	_Static_assert(DEP_HOLD_DEFAULT == sizeof hold[0] / sizeof hold[0][0], "V's hold queue is the kernel's");
	assert_non_null(src);
	memset(src, 0xa5, BLK);
	dart_init(&Sx);
	assert_int_equal(dart_ep_create(&Sx, src, BLK, DART_EP_READ), 0);
	assert_int_equal(dart_conn_open(&Sx, V, &scfg, NULL, 0), 0);
	r.opcode = DART_OPC(CELL_OP(CK_WRITE, CA_INDIRECT), 0, 0, 0);
	r.index = DART_IDX(0, 0, 0, 0xff);
	r.size = BLK / 16;
	assert_int_equal(dart_send_prepare(&Sx, V, &r, 0, &c[n++], &snd), 0);
	assert_true(snd.block);
	do
		more = cell_seg_next(&snd.seg, (struct cell_aal5 *)&c[n++]);
	while (more == 1);
	assert_int_equal(n, 1366);		/* the control cell and its AAL5 cells */
	c[n++] = write_direct(V, 64, 0x5c);

	dart_spill_init(&D, pool, DEP_SPILL_CELLS, DEP_SPILL_PER_CONN);
	D.reg[0] = PG;			/* the block's address: past the endpoint, its control cell faults */
	size_t pos = 0;
	assert_int_equal(feed_frames(c, (size_t)n, &pos), 0);
	assert_int_equal(pos, n);
	assert_int_equal(D.conn[V].state, DC_EXCEPTION);
	assert_int_equal(D.conn[V].exc.cls, DEX_BOUNDS);
	assert_int_equal(D.conn[V].hold_n + D.conn[V].sp_n, n - 1);
	assert_int_equal(D.conn[V].hold_full, 0);
	/* The same node's other connection goes on. */
	struct cell g = write_direct(W, 2048, 0x6d);
	assert_int_equal(feed(&g), 0);
	assert_block(rw + 2048, 0x6d, 0xff);
	/* Re-enabled past the block: its cells go, the write behind it lands, the pool is empty again. */
	assert_int_equal(dart_resume(&D, V, DART_SKIP, &sink), 0);
	assert_int_equal(D.conn[V].state, DC_OPEN);
	assert_block(rw + 64, 0x5c, 0xff);
	assert_int_equal(D.spill_used, 0);
	free(src);
}

/* A block's control cell that faults before its operation runs still takes its AAL5 cells with it. */
static void test_block_control_fault_early(void **state)
{
	struct dart_sendregs r = { 0 };
	static struct cell c[16];
	(void)state;
	r = direct_write(0, 0, 1024);
	r.size = 2 + 6;		/* the control cell and 3 AAL5 cells */
	for (int t = 0; t < 3; t++) {
		int vci = t == 0 ? V : t == 1 ? IPC : DISC;
		int n = form(&r, 0, c, 15);
		assert_int_equal(n, 4);
		for (int i = 0; i < n; i++) {
			memcpy(c[i].hdr, D.conn[vci].tx_hdr, CELL_HDR_LEN);
			if (i == n - 1) {	/* the last cell's header has AUU */
				cell_hdr_build(c[i].hdr, (uint16_t)vci, PT_AUU);
			}
		}
		if (t != 1)
			c[0].data[5] ^= 1;	/* bad data CRC */
		if (t != 1)		/* IPC takes instruction pointers only */
			c[n++] = write_direct(vci, 64, (uint8_t)(0x70 + t));
		int e0 = nexc;
		uint64_t sk = D.ctr.block_skipped;
		snap_take(&before);
		size_t pos = 0;
		assert_int_equal(feed_frames(c, (size_t)n, &pos), 0);
		if (t == 2) {
			/* Discarded: its AAL5 cells go with it, the next control cell lands. */
			assert_int_equal(nexc, e0);
			assert_int_equal(D.conn[vci].state, DC_OPEN);
		} else {
			assert_int_equal(D.conn[vci].state, DC_EXCEPTION);
			assert_int_equal(D.conn[vci].exc.cls, t == 0 ? DEX_CRC : DEX_PROT);
			assert_int_equal(D.conn[vci].exc.skip_block, 1);
			assert_unchanged();
			assert_int_equal(dart_resume(&D, vci, DART_SKIP, &sink), 0);
		}
		assert_int_equal(D.ctr.block_skipped - sk, 3);
		assert_int_equal(D.conn[vci].rx, RX_CONTROL);
		if (t == 1) {
			assert_unchanged();
			continue;
		}
		assert_block(rw + 64, (uint8_t)(0x70 + t), 0xff);
		assert_only_changed(64, 96);
		for (size_t i = 0; i < ARENA; i++)
			arena[i] = pat(i);
	}
}

/*
 * Page protection inside an endpoint (3.2, 3.5), in the host's page tables:
 * a deposit needs write on every page its data touches, a READ read; a
 * refused one changes nothing and raises the page-fault exception
 * (DEX_PAGE, 6.5); giving a range the endpoint's own protection back lifts
 * it.
 */
static void test_page_protection(void **state)
{
	enum { PP = 14 };
	int big = dart_ep_create(&D, arena, ARENA, DART_EP_READ | DART_EP_WRITE);
	struct cell c;

	(void)state;
	assert_true(big >= 0);
	open_conn(PP, SRC, big, DART_RX | DART_TX, PP, 0, 16, 0, 0, 64);
	/* Arguments: whole pages, within the endpoint, no more than it grants. */
	assert_int_equal(dart_ep_protect(&D, big, 100, PG, DART_EP_READ), -EINVAL);
	assert_int_equal(dart_ep_protect(&D, big, PG, 100, DART_EP_READ), -EINVAL);
	assert_int_equal(dart_ep_protect(&D, big, PG, ARENA, DART_EP_READ), -EINVAL);
	assert_int_equal(dart_ep_protect(&D, ep_ro, 0, PG, DART_EP_WRITE), -EINVAL);
	assert_int_equal(dart_ep_protect(&D, 63, 0, PG, 0), -EBADF);
	/* Page 1 read-only, page 2 write-only. */
	assert_int_equal(dart_ep_protect(&D, big, PG, PG, DART_EP_READ), 0);
	assert_int_equal(dart_ep_protect(&D, big, 2 * PG, PG, DART_EP_WRITE), 0);
	/* The rights are the page tables': the host sees them as DART does. */
	assert_int_equal(page_rights[1], DART_EP_READ);
	assert_int_equal(page_rights[2], DART_EP_WRITE);
	assert_int_equal(D.ep[big].paged, 1);
	snap_take(&before);
	c = write_direct(PP, PG + 64, 0x11);
	assert_int_equal(feed(&c), 0);
	assert_unchanged();
	assert_int_equal(D.conn[PP].state, DC_EXCEPTION);
	assert_int_equal(D.conn[PP].exc.cls, DEX_PAGE);
	assert_int_equal(D.conn[PP].exc.detail, PG + 64);
	assert_int_equal(dart_resume(&D, PP, DART_SKIP, &sink), 0);
	/* Astride pages 0 and 1: the read-only half refuses the whole cell. */
	c = write_direct(PP, PG - 16, 0x12);
	assert_int_equal(feed(&c), 0);
	assert_unchanged();
	assert_int_equal(D.conn[PP].exc.cls, DEX_PAGE);
	assert_int_equal(dart_resume(&D, PP, DART_SKIP, &sink), 0);
	/* Pages 0 and 2 take deposits. */
	c = write_direct(PP, 64, 0x13);
	assert_int_equal(feed(&c), 0);
	assert_block(arena + 64, 0x13, 0xff);
	c = write_direct(PP, 2 * PG + 64, 0x14);
	assert_int_equal(feed(&c), 0);
	assert_block(arena + 2 * PG + 64, 0x14, 0xff);
	assert_int_equal(D.conn[PP].state, DC_OPEN);
	/* A READ of the write-only page is refused, of the read-only one served. */
	c = mk(PP, CELL_OP(CK_READ, CA_DIRECT), 0, 0, 0, 2 * PG, 0, 0, 0, 0xff, 0);
	int nr = nreply;
	assert_int_equal(feed(&c), 0);
	assert_int_equal(D.conn[PP].exc.cls, DEX_PAGE);
	assert_int_equal(nreply, nr);
	assert_int_equal(dart_resume(&D, PP, DART_SKIP, &sink), 0);
	c = mk(PP, CELL_OP(CK_READ, CA_DIRECT), 0, 0, 0, PG, 0, 0, 0, 0xff, 0);
	assert_int_equal(feed(&c), 0);
	assert_int_equal(nreply, nr + 1);
	assert_int_equal(D.conn[PP].state, DC_OPEN);
	/* The endpoint's own protection back over page 1: deposits land there again. */
	assert_int_equal(dart_ep_protect(&D, big, PG, PG, DART_EP_READ | DART_EP_WRITE), 0);
	c = write_direct(PP, PG + 64, 0x15);
	assert_int_equal(feed(&c), 0);
	assert_block(arena + PG + 64, 0x15, 0xff);
	/* Nested: page 4 read-only inside pages 3..5 made no-access, the one set last winning. */
	assert_int_equal(dart_ep_protect(&D, big, 3 * PG, 3 * PG, 0), 0);
	assert_int_equal(dart_ep_protect(&D, big, 4 * PG, PG, DART_EP_READ), 0);
	assert_false(dart_ep_pages_allow(&D.ep[big], 3 * PG, 32, DART_EP_READ));
	assert_true(dart_ep_pages_allow(&D.ep[big], 4 * PG, 32, DART_EP_READ));
	assert_false(dart_ep_pages_allow(&D.ep[big], 4 * PG, 32, DART_EP_WRITE));
}

/* An AAL5 block whose cells run into a read-only page: the data cell that would cross faults. */
static void test_page_protection_block(void **state)
{
	struct dart_sendregs r = { 0 };
	static struct cell c[64];

	(void)state;
	sender_setup();
	int big = dart_ep_create(&D, arena, 3 * PG, DART_EP_READ | DART_EP_WRITE);
	assert_true(big >= 0);
	assert_int_equal(dart_conn_close(&D, V), 0);
	open_conn(V, SRC, big, DART_RX | DART_TX, V, 0, 16, 0, 0, 64);
	assert_int_equal(dart_ep_protect(&D, big, 2 * PG, PG, DART_EP_READ), 0);
	r.opcode = DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0);
	r.index = DART_IDX(0, 0, 0, 0xff);
	r.size = 2 + 12;		/* 32 + 192 bytes: the control cell and the first AAL5 cells fit page 1 */
	r.operand = 2 * PG - 128;
	int n = form(&r, 0, c, 64);
	assert_int_equal(n, 6);
	assert_int_equal(feed_from(SRC, c, (size_t)n), 0);
	assert_int_equal(D.conn[V].state, DC_EXCEPTION);
	assert_int_equal(D.conn[V].exc.cls, DEX_PAGE);
	assert_int_equal(D.conn[V].exc.data_cell, 1);
	assert_int_equal(D.conn[V].exc.detail, 2 * PG);	/* 2 PG - 128 + 32 + 48 + 48: the first cell on the page */
	for (int i = 2 * PG; i < 3 * PG; i++)
		if (arena[i] != pat((size_t)i))
			fail_msg("byte %d of the read-only page changed", i);
	assert_int_equal(dart_resume(&D, V, DART_SKIP, &sink), 0);
	assert_int_equal(D.conn[V].rx, RX_CONTROL);
}

/*
 * Multicast connections (3.2): sending only, the peer among the members;
 * what go sends names every member.
 */
static void test_multicast_connection(void **state)
{
	struct dart_conn_cfg cfg = { 1, 0, DART_TX, -1, 0, 0, 0, 0, (1u << 1) | (1u << 2) | (1u << 3) };
	struct dart_sendregs r = { 0 };
	struct dart_send snd;
	struct cell first;

	(void)state;
	sender_setup();
	cfg.flags = DART_TX | DART_RX;
	assert_int_equal(dart_conn_open(&S, 20, &cfg, NULL, 0), -EINVAL);	/* receives too */
	cfg.flags = DART_TX;
	cfg.peer = 4;
	assert_int_equal(dart_conn_open(&S, 20, &cfg, NULL, 0), -EINVAL);	/* peer not a member */
	cfg.peer = 1;
	assert_int_equal(dart_conn_open(&S, 20, &cfg, NULL, 0), 0);
	r.opcode = DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0);
	r.index = DART_IDX(0, 0, 0, 0xff);
	assert_int_equal(dart_send_prepare(&S, 20, &r, 64, &first, &snd), 0);
	assert_true(snd.group == ((1u << 1) | (1u << 2) | (1u << 3)));
	assert_int_equal(snd.block, 0);
	assert_int_equal(dart_send_prepare(&S, V, &r, 64, &first, &snd), 0);
	assert_true(snd.group == 0);		/* unicast */
}

/*
 * The page tables hold any number of protections, and endpoints over the
 * same pages share them (they are the host's); a page cut short by an
 * endpoint's end is not the endpoint's to protect; without page
 * protection at all, -ENOSYS.
 */
static void test_page_protection_pages(void **state)
{
	int big = dart_ep_create(&D, arena, ARENA, DART_EP_READ | DART_EP_WRITE);
	int part = dart_ep_create(&D, arena + PG, PG + 64, DART_EP_READ | DART_EP_WRITE);

	(void)state;
	assert_true(big >= 0 && part >= 0);
	for (int p = 0; p < ARENA / PG; p++)
		assert_int_equal(dart_ep_protect(&D, big, (uint32_t)p * PG, PG, p & 1 ? DART_EP_READ : DART_EP_WRITE), 0);
	for (int p = 0; p < ARENA / PG; p++)
		assert_int_equal(page_rights[p], p & 1 ? DART_EP_READ : DART_EP_WRITE);
	/* part's page 0 is big's page 1, read-only through either. */
	assert_false(dart_ep_pages_allow(&D.ep[part], 0, 32, DART_EP_WRITE));
	D.ep[part].paged = 1;
	assert_int_equal(dart_ep_protect(&D, part, PG, PG, DART_EP_READ), -EINVAL);	/* 64 bytes of it */
	assert_int_equal(dart_ep_protect(&D, part, 0, PG, DART_EP_READ | DART_EP_WRITE), 0);
	assert_true(dart_ep_pages_allow(&D.ep[big], PG, 32, DART_EP_WRITE));
	/* The whole endpoint back to its own protection. */
	assert_int_equal(dart_ep_protect(&D, big, 0, ARENA, DART_EP_READ | DART_EP_WRITE), 0);
	assert_true(dart_ep_pages_allow(&D.ep[big], 4 * PG, 32, DART_EP_WRITE));
	dart_pages.protect = NULL;
	assert_int_equal(dart_ep_protect(&D, big, 0, PG, DART_EP_READ), -ENOSYS);
	dart_pages.protect = fake_protect;
}

/* The sender's own source pages (3.2): a send that reads a page it may not read is refused, -EFAULT. */
static void test_page_protection_source(void **state)
{
	struct dart_sendregs r = { 0 };
	struct cell c[8];

	(void)state;
	r = direct_write(0, 0, 96);
	assert_int_equal(form(&r, 64, c, 8), 1);
	assert_int_equal(dart_ep_protect(&S, 0, 0, PG, 0), 0);
	assert_int_equal(sbuf_rights, 0);
	struct dart_send snd;
	assert_int_equal(dart_send_prepare(&S, V, &r, 64, &c[0], &snd), -EFAULT);
	assert_int_equal(dart_ep_protect(&S, 0, 0, PG, DART_EP_READ), 0);
	assert_int_equal(dart_send_prepare(&S, V, &r, 64, &c[0], &snd), 0);
	assert_memory_equal(c[0].data, sbuf + 64, CELL_DATA);
}

UNIT_MAIN("tests", NULL, NULL,
	  cmocka_unit_test_setup(test_direct_write_and_mask, setup),
	  cmocka_unit_test_setup(test_indirect_indexed_and_strided, setup),
	  cmocka_unit_test_setup(test_register_operations, setup),
	  cmocka_unit_test_setup(test_conditionals, setup),
	  cmocka_unit_test_setup(test_priority_queue_example, setup),
	  cmocka_unit_test_setup(test_instruction_pointer, setup),
	  cmocka_unit_test_setup(test_sequencer, setup),
	  cmocka_unit_test_setup(test_remote_read, setup),
	  cmocka_unit_test_setup(test_fetch_and_increment_and_cas, setup),
	  cmocka_unit_test_setup(test_every_exception_changes_nothing, setup),
	  cmocka_unit_test_setup(test_blocking_is_per_connection, setup),
	  cmocka_unit_test_setup(test_discard_option, setup),
	  cmocka_unit_test_setup(test_refused_cells_block_nothing, setup),
	  cmocka_unit_test_setup(test_send_registers, setup),
	  cmocka_unit_test_setup(test_blocks, setup),
	  cmocka_unit_test_setup(test_shared_frame, setup),
	  cmocka_unit_test_setup(test_reply_to_dead_node, setup),
	  cmocka_unit_test_setup(test_reply_not_sent_commits_nothing, setup),
	  cmocka_unit_test_setup(test_hold_full_refuses, setup),
	  cmocka_unit_test_setup(test_spill_and_flow, setup),
	  cmocka_unit_test_setup(test_64k_block_behind_fault_holds_its_connection_only, setup),
	  cmocka_unit_test_setup(test_peer_reset, setup),
	  cmocka_unit_test_setup(test_long_block_behind_fault, setup),
	  cmocka_unit_test_setup(test_block_control_fault_early, setup),
	  cmocka_unit_test_setup(test_page_protection, setup),
	  cmocka_unit_test_setup(test_page_protection_block, setup),
	  cmocka_unit_test_setup(test_page_protection_pages, setup),
	  cmocka_unit_test_setup(test_page_protection_source, setup),
	  cmocka_unit_test_setup(test_multicast_connection, setup))
