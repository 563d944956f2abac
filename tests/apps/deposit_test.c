/*
 * deposit-test: hybrid deposit (hybrid-deposit paper 3, 4, DART 6) across
 * the cluster.
 *
 *  - Node 1 runs every primitive against node 0 and checks each by remote
 *    READ or FETCH: direct, masked, indirect and indexed deposits; store
 *    indirect with postincrement as strided DMA, with fixed and variable
 *    strides; every register operation; every comparison and position of
 *    the conditional and the guard; remote reads answered on the same and
 *    on another reply connection; fetch-and-increment; compare-and-swap;
 *    AAL5 blocks of several sizes; both send-register modes; the priority
 *    queueing of 3.4 with conditional interrupts, sender-named and through
 *    an instruction pointer with destination-only registers (3.5, 6.5).
 *  - Node 2 (node 1 with two nodes) is hostile: for each exception class
 *    (bad check, data CRC, AAL5 CRC and length, bounds of address,
 *    register index, instruction pointer and block, alignment, register
 *    and endpoint protection, IP-only and entry points, unimplemented
 *    operations, no reply connection, software exception) it sends a
 *    faulting cell, then a deposit on another connection from the same
 *    node, then one on the faulted connection.  Node 0's exception handler
 *    sees each; node 0 checks that its endpoints and registers are byte
 *    for byte what the granted operations alone made them, that the other
 *    connection went on and the faulted one held its cell, then re-enables
 *    (skip, or retry after fixing the cause) and sees the held cell land.
 *    Also: back-pressure when the hold queue is full, the discard option, cells that belong
 *    to no connection (bad HEC, header, closed or foreign VCI, another
 *    node's connection, a torn frame), and the send side's status mode.
 *  - Every node: fetch-and-increment and compare-and-swap on node 0's
 *    registers under contention; a barrier built from register operations
 *    and conditional interrupts (3.4), checked round by round; a multicast
 *    connection (3.2) from node 0 to all the others, a cell and a block
 *    on it landing at every member.
 *  - Node 1 to node 0: instruction-pointer cells each running three
 *    instructions through the sequencer (6.5); then one whose deposit
 *    falls on a page node 0 made read-only inside its endpoint (3.2):
 *    refused with nothing of the sequence changed, and retried once the
 *    page is writable again.
 *
 * Node 0's endpoints sit between patterned guard pages; every byte is
 * checked at the end.  Each failed check prints one line; the app ends
 * with RESULT deposit-test checks=.. failed=.. and fails if any did.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/app.h"
#include "kernel/crc.h"
#include "kernel/mem.h"
#include "kernel/sync.h"
#include "kernel/thread.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"
#include "net/call/barrier.h"
#include "net/deposit/deposit.h"
#include "net/fabric/fabric.h"
#include "tests/apps/check.h"

#define PG 4096
#define WAIT_NS 60000000000ULL
#define FIRST_WAIT_NS 240000000000ULL
#define BARRIER_NS 300000000000ULL
#define MAX_TEST_NODES 8

/* --- connections, endpoints, registers ---------------------------------------- */

enum {
	V_P = 10,		/* node 1 <-> 0: the primitives */
	V_P_REQ = 11,		/* node 1 -> 0: requests answered on V_P_REPLY */
	V_P_REPLY = 12,		/* node 0 -> 1 */
	V_P_IP = 13,		/* node 1 -> 0: instruction pointers only */
	V_H = 20,		/* hostile node <-> 0: the victim */
	V_H_BY = 21,		/* hostile -> 0: a bystander from the same node */
	V_H_ACK = 22,		/* 0 -> hostile: "go on" */
	V_H_NOREPLY = 23,	/* no reply connection */
	V_H_IPONLY = 24,
	V_H_SMALL = 25,		/* hold queue of 4 cells */
	V_H_DISCARD = 26,
	V_H_STATUS = 27,	/* 0 <-> hostile: the send side's status */
	V_H_WO = 28,		/* into a write-only endpoint */
	V_C = 30,		/* + node: contention, node <-> 0 */
	V_B = 40,		/* + 8 min + max: the barrier, between every pair */
	V_M = 90,		/* 0 -> every other node: a multicast connection (3.2) */
	V_S = 91,		/* node 1 -> 0: instruction sequences (the sequencer, 6.5) */
	V_NONE = 99,		/* never opened */
};

/* Node 0's arena: guard | P (2 pages) | guard | H | guard | WO | guard | C | guard | B | guard. */
enum { E_P, E_H, E_WO, E_C, E_B, NEP };
static const size_t ep_at[NEP] = { 1 * PG, 4 * PG, 6 * PG, 8 * PG, 10 * PG };
static const size_t ep_len[NEP] = { 2 * PG, PG, PG, PG, PG };
#define ARENA0 (12 * PG)
/* Other nodes: guard | mine (2 pages) | guard | B | guard. */
#define MINE_AT PG
#define MINE_LEN (2 * PG)
#define BAR_AT (4 * PG)
#define ARENA1 (6 * PG)

static uint8_t *arena;
static size_t arena_len;
static uint8_t *mine, *epb;		/* node >= 1: its endpoint; every node: barrier endpoint */
static int ep_mine = -1, ep_bar = -1;
static int ep0[NEP];
static int hostile, prim;		/* node ids of the hostile and the primitive sender */

static uint8_t pat(size_t i)
{
	return (uint8_t)(i * 29 + 11);
}

static uint32_t reg_pat(unsigned r)
{
	return 0xa5000000u + r * 7;
}

/* Node 0's registers: the windows. */
#define R_P 0			/* V_P, V_P_REQ: 0..31, readable and writable */
#define R_IP 64			/* V_P_IP: 64..79, destination-only */
#define R_H 100			/* the hostile connections: 100..115 */
#define R_BY 116		/* V_H_BY: 116..131 */
#define R_CNT 200		/* fetch-and-increment counter; 201: CAS counter; 202 + n: n's staging */
#define R_BAR 300		/* every node: B0, B1, full, zero */
#define R_SEQ 500		/* V_S: a (where), b (stride), c (count), destination-only */

static void fill(uint8_t *p, uint8_t f)
{
	for (int i = 0; i < CELL_DATA; i++)
		p[i] = (uint8_t)(f + i);
}

static int is_fill(const uint8_t *p, uint8_t f, uint8_t mask)
{
	for (int i = 0; i < CELL_DATA; i++)
		if ((mask & (1u << (i / 4))) && p[i] != (uint8_t)(f + i))
			return 0;
	return 1;
}

static int open_conn(int vci, int peer, int ep, int flags, int reply, unsigned rb, unsigned rn, unsigned ib,
		     unsigned in, unsigned hold)
{
	struct dep_conn_cfg cfg = { peer, ep, flags, reply, rb, rn, ib, in, hold, 0 };
	int r = dep_conn_open(vci, &cfg);

	EXPECT(r == 0, "open connection %d to node %d: %d", vci, peer, r);
	return r;
}

static int vci_bar(int a, int b)
{
	return V_B + 8 * (a < b ? a : b) + (a < b ? b : a);
}

/* --- interrupts and exceptions ------------------------------------------------- */

static uint64_t seen[DART_MAX_CONN];		/* interrupts consumed, per connection */
static volatile uint32_t intr_ops[DART_MAX_CONN][8];	/* node 0: operands of the last interrupts */
static volatile unsigned intr_n[DART_MAX_CONN];

static void record_intr(void *arg, const struct dart_event *ev)
{
	(void)arg;
	intr_ops[ev->vci][intr_n[ev->vci]++ % 8] = ev->operand;
}

/* Exceptions the handlers saw. */
static struct dart_exc last_exc[DART_MAX_CONN];
static volatile unsigned exc_count[DART_MAX_CONN], exc_by_class[DEX_N], unexpected_exc;
static struct waitq exc_wq = WAITQ_INIT;

static void on_exception(void *arg, const struct dart_exc *e)
{
	irqflags_t f = irq_save();
	last_exc[e->vci] = *e;
	exc_count[e->vci]++;
	exc_by_class[e->cls]++;
	if (arg)
		unexpected_exc++;
	waitq_wake_all(&exc_wq);
	irq_restore(f);
	if (arg)
		printf("deposit-test: unexpected %s exception on connection %d (detail %#x)\n",
		       dart_exc_names[e->cls], e->vci, e->detail);
}

/* Wait for the next exception of connection vci not yet waited for. */
static unsigned exc_consumed[DART_MAX_CONN];

static int wait_exc(int vci, uint64_t timeout_ns)
{
	uint64_t end = cycles() + ns_to_cycles(timeout_ns);
	irqflags_t f = irq_save();

	while (exc_count[vci] <= exc_consumed[vci] && cycles() < end)
		waitq_wait_timeout(&exc_wq, 100000000);
	int r = exc_count[vci] > exc_consumed[vci];
	if (r)
		exc_consumed[vci]++;
	irq_restore(f);
	return r;
}

/* Poll cond() (every ms) for up to timeout_ns. */
static int wait_for(int (*cond)(void *), void *arg, uint64_t timeout_ns)
{
	uint64_t end = cycles() + ns_to_cycles(timeout_ns);

	while (!cond(arg)) {
		if (cycles() >= end)
			return 0;
		thread_sleep_ns(1000000);
	}
	return 1;
}

/* --- requests: a READ or FETCH whose reply raises an interrupt here ------------- */

#define CTL_AT 7936		/* in my endpoint: the reply's control */
#define REPLY_AT 7680		/* where the reply lands */

static const uint64_t write_intr =
	DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT) | CO_INTR, 0, 0, CELL_COND(CMP_ALWAYS, 0, 0));

/* Send one request on vci (opcode opc) and wait for its reply on rvci; 32 bytes into out. */
static int request(int vci, int rvci, uint64_t opc, uint32_t operand, uint32_t index, void *out)
{
	struct dart_sendregs *sr = dep_sendregs(vci);

	dart_reply_ctl(mine + CTL_AT, write_intr, REPLY_AT, DART_IDX(0, 0, 0, 0xff));
	memset(mine + REPLY_AT, 0xee, CELL_DATA);
	if (!sr || dep_send(sr, opc, operand, index, CTL_AT) < 0)
		return -1;
	if (dep_intr_wait(rvci, &seen[rvci], WAIT_NS) < 0)
		return -1;
	memcpy(out, mine + REPLY_AT, CELL_DATA);
	return 0;
}

/* READ 32 bytes at off of node 0's endpoint (words in mask) on V_P. */
static int rread(uint32_t off, uint8_t mask, uint8_t out[CELL_DATA])
{
	return request(V_P, V_P, DART_OPC(CELL_OP(CK_READ, CA_DIRECT), 0, 0, 0), off, DART_IDX(0, 0, 0, mask), out);
}

/* FETCH on vci with the given operations; w gets the reply's eight words. */
static int rfetch(int vci, uint16_t flags, uint8_t ro1, uint8_t ro2, uint8_t cond, uint32_t operand, uint8_t a,
		  uint8_t b, uint8_t c, uint8_t mask, uint32_t w[8])
{
	return request(vci, vci, DART_OPC(CELL_OP(CK_FETCH, CA_NONE) | flags, ro1, ro2, cond), operand,
		       DART_IDX(a, b, c, mask), w);
}

/* Send one cell on vci: data from my endpoint at src. */
static int send(int vci, uint64_t opc, uint32_t operand, uint32_t index, uint32_t src)
{
	struct dart_sendregs *sr = dep_sendregs(vci);
	int r = sr ? dep_send(sr, opc, operand, index, src) : -EBADF;

	EXPECT(r == 0, "send on %d: %d", vci, r);
	return r;
}

/* Register i of node 0's window on V_P <- v. */
static void rload(int vci, uint8_t i, uint32_t v)
{
	send(vci, DART_OPC(CELL_OP(CK_NOP, CA_NONE), CELL_RO(ALU_LOAD, CS_A, CSRC_OPERAND), 0, 0), v,
	     DART_IDX(i, 0, 0, 0), 0);
}

/* --- node 1: every primitive ------------------------------------------------------- */

#define P_BLOCK_SRC 4096	/* in node 1's endpoint: block data, byte i = blk(i) */
#define P_BLOCK_DST 4096	/* in node 0's P endpoint */
#define P_QUEUE 3072		/* the priority queue (direct) */
#define P_IPQUEUE 3328		/* the priority queue through an instruction pointer */
#define P_MAILBOX 8160		/* node 1's count of interrupts it raised on V_P */
static const uint32_t p_blocks[] = { 3, 5, 8, 64, 130 };	/* in 16-byte blocks */
static const uint32_t p_prio[] = { 1u << 2, 1u << 1, 1u << 5, 1u << 3, 1u << 6, 1u << 0 };
static const uint32_t p_ipprio[] = { 1u << 1, 1u << 0, 1u << 3, 1u << 2 };

static uint8_t blk(size_t i)
{
	return (uint8_t)(i * 7 + 3);
}

/*
 * The register operations of hybrid deposit Fig. 2, "addreg_i <- unary-op
 * {<addreg_j> or operand}" and "addreg_i <- <addreg_i> binary-op
 * {<addreg_j> or operand}", with the operations this project encodes
 * (net/deposit/cell.h: LOAD, NOT, NEG unary; ADD, SUB, AND, OR, XOR, ANDN,
 * SHL, SHR binary; 32-bit registers, arithmetic wraps, shifts by the
 * source's low five bits, SHR logical).  Each expected value is worked out
 * by hand, not computed by code: an oracle that shares the code's
 * arithmetic would share its mistakes.  The values catch a swapped
 * operand order (SUB), sign extension (SHR, NEG), a shift count not
 * masked (32, 33, 36) and a missing wrap (ADD).
 */
static const struct {
	uint8_t op;
	uint32_t old, operand, want;
} alu_cases[] = {
	{ ALU_LOAD, 0x80001235u, 0x0ff0f00fu, 0x0ff0f00fu },
	{ ALU_LOAD, 0xffffffffu, 0, 0 },
	{ ALU_NOT, 0x12345678u, 0x0ff0f00fu, 0xf00f0ff0u },
	{ ALU_NOT, 0x12345678u, 0, 0xffffffffu },
	{ ALU_NEG, 0x12345678u, 1, 0xffffffffu },
	{ ALU_NEG, 0x12345678u, 0x80000000u, 0x80000000u },
	{ ALU_NEG, 5, 0, 0 },
	{ ALU_ADD, 0x80001234u, 0x0ff0f00fu, 0x8ff10243u },
	{ ALU_ADD, 0xfffffffeu, 3, 1 },
	{ ALU_SUB, 0x80001234u, 0x0ff0f00fu, 0x700f2225u },
	{ ALU_SUB, 5, 7, 0xfffffffeu },
	{ ALU_AND, 0xf0f0f0f0u, 0xff00ff00u, 0xf000f000u },
	{ ALU_OR, 0xf0f0f0f0u, 0x0f0f0000u, 0xfffff0f0u },
	{ ALU_XOR, 0xffff0000u, 0xff00ff00u, 0x00ffff00u },
	{ ALU_XOR, 0x5a5a5a5au, 0x5a5a5a5au, 0 },
	{ ALU_ANDN, 0xffffffffu, 0x0000ff00u, 0xffff00ffu },
	{ ALU_ANDN, 0x0f0f0f0fu, 0xffffffffu, 0 },
	{ ALU_SHL, 1, 31, 0x80000000u },
	{ ALU_SHL, 1, 32, 1 },
	{ ALU_SHL, 0x80000001u, 33, 2 },
	{ ALU_SHL, 0xffffffffu, 0, 0xffffffffu },
	{ ALU_SHR, 0x80000000u, 31, 1 },
	{ ALU_SHR, 0x80000000u, 1, 0x40000000u },
	{ ALU_SHR, 0xf0000000u, 36, 0x0f000000u },
	{ ALU_SHR, 7, 32, 7 },
};

#define R_STORM 400		/* node 1: counts the read storm's replies */
#define STORM_FRAMES 16

static unsigned storm_count(void)
{
	uint32_t v = 0;
	dep_reg_get(R_STORM, &v);
	return v;
}

static int storm_done(void *arg)
{
	(void)arg;
	return storm_count() >= STORM_FRAMES * DEP_CELLS_PER_FRAME;
}

static void primitives(void)
{
	uint8_t got[CELL_DATA];
	uint32_t w[8];
	unsigned intrs = 0;		/* interrupts raised at node 0 on V_P */

	/* Direct deposit, read back. */
	fill(mine, 0x11);
	send(V_P, DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0), 0, DART_IDX(0, 0, 0, 0xff), 0);
	EXPECT(rread(0, 0xff, got) == 0 && is_fill(got, 0x11, 0xff), "direct write read back");
	/* The word mask: over a full block, a masked one. */
	fill(mine + 32, 0x22);
	fill(mine + 64, 0x33);
	send(V_P, DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0), 64, DART_IDX(0, 0, 0, 0xff), 32);
	send(V_P, DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0), 64, DART_IDX(0, 0, 0, 0x5a), 64);
	EXPECT(rread(64, 0xff, got) == 0 && is_fill(got, 0x33, 0x5a) && is_fill(got, 0x22, 0xa5),
	       "masked write: words 1, 3, 4, 6 new, the others old");
	/* A masked READ: the words left out come back 0. */
	EXPECT(rread(0, 0x0f, got) == 0 && is_fill(got, 0x11, 0x0f) && got[16] == 0 && got[31] == 0,
	       "masked read");
	/* Indirect and indexed. */
	rload(V_P, 0, 512);
	fill(mine + 96, 0x44);
	send(V_P, DART_OPC(CELL_OP(CK_WRITE, CA_INDIRECT), 0, 0, 0), 0, DART_IDX(0, 0, 0, 0xff), 96);
	EXPECT(rread(512, 0xff, got) == 0 && is_fill(got, 0x44, 0xff), "indirect write");
	send(V_P, DART_OPC(CELL_OP(CK_WRITE, CA_INDEXED), 0, 0, 0), 32, DART_IDX(0, 0, 0, 0xff), 0);
	EXPECT(rread(544, 0xff, got) == 0 && is_fill(got, 0x11, 0xff), "indexed write");

	/* Store indirect with postincrement: strided DMA, stride 48 (3.4). */
	rload(V_P, 1, 1024);
	for (int j = 0; j < 8; j++) {
		fill(mine + 128 + 32 * j, (uint8_t)(0x50 + j));
		send(V_P, DART_OPC(CELL_OP(CK_WRITE, CA_INDIRECT), CELL_RO(ALU_ADD, CS_A, CSRC_OPERAND), 0, 0), 48,
		     DART_IDX(1, 0, 0, 0xff), 128 + 32 * (uint32_t)j);
	}
	int ok = 1;
	for (int j = 0; j < 8; j++)
		if (rread(1024 + 48 * (uint32_t)j, 0xff, got) < 0 || !is_fill(got, (uint8_t)(0x50 + j), 0xff))
			ok = 0;
	EXPECT(ok, "strided deposits at 1024 + 48 j");
	EXPECT(rfetch(V_P, 0, 0, 0, 0, 0, 1, 0, 0, 0x01, w) == 0 && w[0] == 1024 + 8 * 48,
	       "the pointer after 8 postincrements: %u", w[0]);
	/* Variable stride: <a> += <b>, <b> += 8 (strides 40, 48, 56). */
	rload(V_P, 2, 1536);
	rload(V_P, 3, 40);
	for (int j = 0; j < 4; j++)
		send(V_P, DART_OPC(CELL_OP(CK_WRITE, CA_INDIRECT), CELL_RO(ALU_ADD, CS_A, CSRC_B),
				   CELL_RO(ALU_ADD, CS_B, CSRC_OPERAND), 0),
		     8, DART_IDX(2, 3, 0, 0xff), 128 + 32 * (uint32_t)j);
	static const uint32_t vat[4] = { 1536, 1576, 1624, 1680 };
	ok = 1;
	for (int j = 0; j < 4; j++)
		if (rread(vat[j], 0xff, got) < 0 || !is_fill(got, (uint8_t)(0x50 + j), 0xff))
			ok = 0;
	EXPECT(ok, "variable-stride deposits");

	/* Every register operation (Fig. 2), old and new value by FETCH. */
	unsigned ops_seen = 0;
	for (size_t k = 0; k < sizeof alu_cases / sizeof alu_cases[0]; k++) {
		uint8_t op = alu_cases[k].op;
		rload(V_P, 4, alu_cases[k].old);
		int r = rfetch(V_P, 0, CELL_RO(op, CS_A, CSRC_OPERAND), 0, 0, alu_cases[k].operand, 4, 0, 0, 0x09, w);
		EXPECT(r == 0 && w[0] == alu_cases[k].old && w[3] == alu_cases[k].want,
		       "alu %u: %#x with %#x: old %#x new %#x, expected %#x", op, alu_cases[k].old,
		       alu_cases[k].operand, w[0], w[3], alu_cases[k].want);
		ops_seen |= 1u << op;
	}
	EXPECT(ops_seen == ((1u << ALU_N) - 1) - 1, "every operation 1..%d has a case: %#x", ALU_N - 1, ops_seen);
	/* Unary from a register, binary with a register: a <- ~<b>; a -= <c>. */
	rload(V_P, 5, 0x1234);
	EXPECT(rfetch(V_P, 0, CELL_RO(ALU_NOT, CS_A, CSRC_B), CELL_RO(ALU_SUB, CS_A, CSRC_C), 0, 0, 4, 5, 5, 0x08,
		      w) == 0 && w[3] == (uint32_t)~0x1234u - 0x1234u, "register sources: %#x", w[3]);

	/* Every comparison, interrupting at node 0 when true; the outcome comes back too. */
	static const struct {
		uint8_t cmp;
		uint32_t l, r;
		uint32_t want;
	} cmps[] = {
		{ CMP_EQ, 4, 4, 1 }, { CMP_EQ, 4, 5, 0 }, { CMP_NE, 4, 5, 1 }, { CMP_LT, 4, 5, 1 },
		{ CMP_LT, 5, 5, 0 }, { CMP_LE, 5, 5, 1 }, { CMP_GT, 0xffffffffu, 1, 1 }, { CMP_GE, 1, 2, 0 },
		{ CMP_ALLSET, 7, 5, 1 }, { CMP_ALLSET, 3, 5, 0 }, { CMP_ANYSET, 2, 6, 1 }, { CMP_ANYSET, 1, 6, 0 },
		{ CMP_ALWAYS, 0, 0, 1 },
	};
	for (size_t i = 0; i < sizeof cmps / sizeof cmps[0]; i++) {
		rload(V_P, 6, cmps[i].l);
		uint8_t cond = cmps[i].cmp == CMP_ALWAYS ? CELL_COND(CMP_ALWAYS, 0, 0)
							 : CELL_COND(cmps[i].cmp, CS_A, CSRC_OPERAND);
		int r = rfetch(V_P, CO_INTR, 0, 0, cond, cmps[i].r, 6, 0, 0, 0x40, w);
		EXPECT(r == 0 && w[6] == cmps[i].want, "compare %u: %u vs %u gave %u", cmps[i].cmp, cmps[i].l,
		       cmps[i].r, w[6]);
		intrs += cmps[i].want;
	}
	/* Where the conditional is tested: a += 1 twice; a == pos holds before, between, after. */
	for (int pos = CP_FIRST; pos <= CP_LAST; pos++) {
		rload(V_P, 6, 0);
		rload(V_P, 7, (uint32_t)pos);
		int r = rfetch(V_P, CO_INTR | CELL_POS(pos), CELL_RO(ALU_ADD, CS_A, CSRC_OPERAND),
			       CELL_RO(ALU_ADD, CS_A, CSRC_OPERAND), CELL_COND(CMP_EQ, CS_A, CSRC_B), 1, 6, 7, 0, 0x48, w);
		EXPECT(r == 0 && w[6] == 1 && w[3] == 2, "condition at position %d: %u, a = %u", pos, w[6], w[3]);
		intrs++;
	}
	/* The guard: register operation 2 happens only if the condition holds. */
	rload(V_P, 8, 1);
	rload(V_P, 9, 2);
	EXPECT(rfetch(V_P, CO_GUARD, 0, CELL_RO(ALU_LOAD, CS_A, CSRC_OPERAND), CELL_COND(CMP_EQ, CS_A, CSRC_B), 99, 8,
		      9, 0, 0x48, w) == 0 && w[6] == 0 && w[3] == 1, "guard, false: a = %u", w[3]);
	rload(V_P, 9, 1);
	EXPECT(rfetch(V_P, CO_GUARD, 0, CELL_RO(ALU_LOAD, CS_A, CSRC_OPERAND), CELL_COND(CMP_EQ, CS_A, CSRC_B), 99, 8,
		      9, 0, 0x48, w) == 0 && w[6] == 1 && w[3] == 99, "guard, true: a = %u", w[3]);

	/* Fetch-and-increment. */
	rload(V_P, 10, 100);
	ok = 1;
	for (uint32_t j = 0; j < 5; j++)
		if (rfetch(V_P, 0, CELL_RO(ALU_ADD, CS_A, CSRC_OPERAND), 0, 0, 1, 10, 0, 0, 0x01, w) < 0 || w[0] != 100 + j)
			ok = 0;
	EXPECT(ok, "fetch-and-increment gives 100..104");
	/* Compare-and-swap: b <- new; FETCH: if <a> == expected then a <- <b>. */
	rload(V_P, 11, 7);
	rload(V_P, 12, 8);
	EXPECT(rfetch(V_P, CO_GUARD, 0, CELL_RO(ALU_LOAD, CS_A, CSRC_B), CELL_COND(CMP_EQ, CS_A, CSRC_OPERAND), 6, 11,
		      12, 0, 0x49, w) == 0 && w[0] == 7 && w[6] == 0 && w[3] == 7, "failing compare-and-swap");
	EXPECT(rfetch(V_P, CO_GUARD, 0, CELL_RO(ALU_LOAD, CS_A, CSRC_B), CELL_COND(CMP_EQ, CS_A, CSRC_OPERAND), 7, 11,
		      12, 0, 0x49, w) == 0 && w[0] == 7 && w[6] == 1 && w[3] == 8, "compare-and-swap 7 -> 8");

	/* A read answered on another connection (reply connection V_P_REPLY). */
	EXPECT(request(V_P_REQ, V_P_REPLY, DART_OPC(CELL_OP(CK_READ, CA_DIRECT), 0, 0, 0), 0,
		       DART_IDX(0, 0, 0, 0xff), got) == 0 && is_fill(got, 0x11, 0xff),
	       "read answered on the reply connection");

	/* AAL5 blocks; the last raises an interrupt at node 0 after its last cell. */
	for (size_t i = 0; i < 2200; i++)
		mine[P_BLOCK_SRC + i] = blk(i);
	struct dart_sendregs *sr = dep_sendregs(V_P);
	uint32_t dst = P_BLOCK_DST;
	for (size_t b = 0; b < sizeof p_blocks / sizeof p_blocks[0]; b++) {
		int last = b + 1 == sizeof p_blocks / sizeof p_blocks[0];
		sr->size = p_blocks[b];
		int r = dep_send(sr, last ? write_intr : DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0), dst,
				 DART_IDX(0, 0, 0, 0xff), P_BLOCK_SRC);
		EXPECT(r == 0 && sr->size == 0, "block of %u x 16 bytes: %d", p_blocks[b], r);
		intrs += last;
		/* First, middle and last 32 bytes. */
		uint32_t len = p_blocks[b] * 16, at[3] = { 0, (len / 2) & ~31u, len - 32 };
		for (int k = 0; k < 3; k++) {
			int good = rread(dst + at[k], 0xff, got) == 0;
			for (int i = 0; good && i < CELL_DATA; i++)
				good = got[i] == blk(at[k] + (size_t)i);
			EXPECT(good, "block %zu read back at +%u", b, at[k]);
		}
		dst += len;
	}
	/* Send-register modes: the operand is the value written to go. */
	fill(mine + 2560, 0x66);
	sr->mode = DART_MODE_GO_OPERAND;
	sr->opcode = DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0);
	sr->index = DART_IDX(0, 0, 0, 0xff);
	EXPECT(dep_go(sr, 2560) == 0 && sr->operand == 2560, "go with the operand from go");
	sr->mode = 0;
	EXPECT(rread(2560, 0xff, got) == 0 && is_fill(got, 0x66, 0xff), "deposited at the offset written to go");

	/* Priority queueing (3.4), the sender naming p, s, i (registers 13, 14, 15). */
	rload(V_P, 13, P_QUEUE);
	rload(V_P, 14, 32);
	rload(V_P, 15, 0);
	uint32_t level = 0;
	for (size_t k = 0; k < sizeof p_prio / sizeof p_prio[0]; k++) {
		fill(mine + 32 * k, (uint8_t)(0xa0 + k));
		send(V_P, DART_OPC(CELL_OP(CK_WRITE, CA_INDIRECT) | CO_INTR | CELL_POS(CP_MIDDLE),
				   CELL_RO(ALU_ADD, CS_A, CSRC_B), CELL_RO(ALU_OR, CS_C, CSRC_OPERAND),
				   CELL_COND(CMP_LT, CS_C, CSRC_OPERAND)),
		     p_prio[k], DART_IDX(13, 14, 15, 0xff), 32 * (uint32_t)k);
		intrs += p_prio[k] > level;
		level |= p_prio[k];
	}
	EXPECT(rfetch(V_P, 0, 0, 0, 0, 0, 13, 14, 15, 0x07, w) == 0 && w[0] == P_QUEUE + 32 * 6 && w[2] == level,
	       "priority queue: p %u level %#x", w[0], w[2]);
	ok = 1;
	for (size_t k = 0; k < sizeof p_prio / sizeof p_prio[0]; k++)
		if (rread(P_QUEUE + 32 * (uint32_t)k, 0xff, got) < 0 || !is_fill(got, (uint8_t)(0xa0 + k), 0xff))
			ok = 0;
	EXPECT(ok, "priority queue entries in arrival order");
	/* Through an instruction pointer: only the priority and the data are the sender's. */
	for (size_t k = 0; k < sizeof p_ipprio / sizeof p_ipprio[0]; k++) {
		fill(mine + 32 * k, (uint8_t)(0xc0 + k));
		send(V_P_IP, DART_OPC(CELL_IP | 0, 0, 0, 0), p_ipprio[k], 0, 32 * (uint32_t)k);
	}
	/*
	 * A read storm: frames of 27 READs whose replies each add 1 to register
	 * R_STORM here.  Node 0's window fills with replies, so a READ waits
	 * for reply room on its own connection, the READs behind it held, and
	 * with that hold queue full the frame waits too, resumed where it
	 * stopped: the count comes out exact, no reply lost and none applied
	 * twice.
	 */
	static struct cell storm[DEP_CELLS_PER_FRAME];
	uint8_t rctl[CELL_DATA] = { 0 };
	dart_reply_ctl(rctl, DART_OPC(CELL_OP(CK_NOP, CA_NONE), CELL_RO(ALU_ADD, CS_A, CSRC_OPERAND), 0, 0), 1,
		       DART_IDX(0, 0, 0, 0));
	struct cell_ctl rd = { CELL_OP(CK_READ, CA_DIRECT), 0, 0, 0, 0, { 0, 0, 0 }, 0xff };
	for (int i = 0; i < DEP_CELLS_PER_FRAME; i++)
		cell_build(&storm[i], V_P, &rd, rctl);
	for (int f = 0; f < STORM_FRAMES; f++)
		EXPECT(dep_test_send_raw(0, storm, sizeof storm) == 0, "storm frame %d", f);
	EXPECT(wait_for(storm_done, NULL, WAIT_NS), "read storm: %u replies", storm_count());
	thread_sleep_ns(100000000);
	EXPECT(storm_count() == STORM_FRAMES * DEP_CELLS_PER_FRAME, "read storm: %u replies, expected %d",
	       storm_count(), STORM_FRAMES * DEP_CELLS_PER_FRAME);

	/* Tell node 0 how many interrupts V_P should have raised. */
	memset(mine, 0, 32);
	memcpy(mine, &intrs, 4);
	send(V_P, DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0), P_MAILBOX, DART_IDX(0, 0, 0, 0x01), 0);
	/* Everything arrived before this answer (in order). */
	EXPECT(rread(P_MAILBOX, 0x01, got) == 0 && memcmp(got, &intrs, 4) == 0, "mailbox");
}

/* Node 0's part of the primitives, after they ran. */
static void primitives_check(void)
{
	uint8_t *p = arena + ep_at[E_P];
	uint32_t v, want_intrs;

	memcpy(&want_intrs, p + P_MAILBOX, 4);
	EXPECT(intr_n[V_P] == want_intrs, "interrupts on V_P: %u, node 1 raised %u", intr_n[V_P], want_intrs);
	/* Blocks, byte for byte. */
	uint32_t dst = P_BLOCK_DST;
	for (size_t b = 0; b < sizeof p_blocks / sizeof p_blocks[0]; b++) {
		uint32_t len = p_blocks[b] * 16, bad = 0;
		for (uint32_t i = 0; i < len; i++)
			bad += p[dst + i] != blk(i);
		EXPECT(bad == 0, "block %zu: %u bytes wrong", b, bad);
		dst += len;
	}
	EXPECT(p[dst] == pat(ep_at[E_P] + dst), "the byte after the last block");
	/* The IP priority queue: registers the sender could not name. */
	uint32_t level = 0;
	unsigned want = 0;
	for (size_t k = 0; k < sizeof p_ipprio / sizeof p_ipprio[0]; k++) {
		want += p_ipprio[k] > level;
		level |= p_ipprio[k];
		EXPECT(is_fill(p + P_IPQUEUE + 32 * k, (uint8_t)(0xc0 + k), 0xff), "IP queue entry %zu", k);
	}
	dep_reg_get(R_IP, &v);
	EXPECT(v == P_IPQUEUE + 32 * 4, "IP queue pointer %u", v);
	dep_reg_get(R_IP + 2, &v);
	EXPECT(v == level, "IP queue level %#x", v);
	EXPECT(intr_n[V_P_IP] == want, "interrupts through the instruction: %u, want %u", intr_n[V_P_IP], want);
	EXPECT(intr_n[V_P_IP] >= 1 && intr_ops[V_P_IP][0] == p_ipprio[0], "the first interrupt's priority");
}

/* --- the hostile node and node 0's checks -------------------------------------------- */

#define H_HELD 0		/* + 32 k: the cell held behind case k */
#define H_BY 1024		/* + 32 k: the bystander's deposit */
#define H_BLK 2048		/* + 64 (k - 18): a faulting block's control cell */
#define H_RETRY 3072
#define H_OVR 3200		/* 8 x 32 */
#define H_DISC 3520
#define H_STATUS 3584
#define H_WOULD 2304		/* + 32 k: where faulting writes aim */
#define H_ACK_AT 4000		/* in the hostile node's endpoint */
#define H_SRC 0			/* in the hostile node's endpoint: data to send */

struct hcase {
	const char *name;
	int vci;
	int cls;
	int retry;		/* node 0 fixes the cause and retries */
};

static const struct hcase hcases[] = {
	{ "bad check", V_H, DEX_CHECK, 0 },
	{ "bad data CRC", V_H, DEX_CRC, 0 },
	{ "write past the endpoint", V_H, DEX_BOUNDS, 0 },
	{ "register index past the window", V_H, DEX_BOUNDS, 0 },
	{ "misaligned address", V_H, DEX_ALIGN, 0 },
	{ "write to a read-only register", V_H, DEX_PROT, 0 },
	{ "address from a write-only register", V_H, DEX_PROT, 0 },
	{ "fetch of a destination-only register", V_H, DEX_PROT, 0 },
	{ "read of a write-only endpoint", V_H_WO, DEX_PROT, 0 },
	{ "direct cell on an IP-only connection", V_H_IPONLY, DEX_PROT, 0 },
	{ "instruction that is no entry point", V_H, DEX_PROT, 0 },
	{ "instruction pointer past the window", V_H, DEX_BOUNDS, 0 },
	{ "unimplemented register operation", V_H, DEX_UNIMPL, 0 },
	{ "unimplemented kind", V_H, DEX_UNIMPL, 0 },
	{ "unimplemented condition position", V_H, DEX_UNIMPL, 0 },
	{ "read without a reply connection", V_H_NOREPLY, DEX_NOREPLY, 0 },
	{ "software exception", V_H, DEX_SOFTWARE, 0 },
	{ "address register out of bounds, fixed and retried", V_H, DEX_BOUNDS, 1 },
	{ "AAL5 CRC-32", V_H, DEX_CRC, 0 },
	{ "AAL5 length", V_H, DEX_CRC, 0 },
	{ "block running off the endpoint", V_H, DEX_BOUNDS, 0 },
};
#define NHCASES (int)(sizeof hcases / sizeof hcases[0])

static struct cell ctl_cell(int vci, uint16_t opcode, uint8_t ro1, uint8_t ro2, uint8_t cond, uint32_t operand,
			    uint8_t a, uint8_t b, uint8_t c, uint8_t mask, uint8_t f)
{
	struct cell_ctl ctl = { opcode, ro1, ro2, cond, operand, { a, b, c }, mask };
	uint8_t data[CELL_DATA];
	struct cell out;

	fill(data, f);
	cell_build(&out, (uint16_t)vci, &ctl, data);
	return out;
}

/* A block: control cell at off, then AAL5 cells for len bytes; into c, returns the count. */
static int block_cells(struct cell *c, int vci, uint32_t off, uint32_t len, uint8_t f)
{
	static uint8_t data[256];
	struct cell_seg seg;
	int n = 1;

	c[0] = ctl_cell(vci, CELL_OP(CK_BLOCK, CA_DIRECT), 0, 0, 0, off, 0, 0, 0, 0xff, f);
	for (size_t i = 0; i < sizeof data; i++)
		data[i] = (uint8_t)(f + 32 + i);
	cell_seg_start(&seg, (uint16_t)vci, data, len);
	while (cell_seg_next(&seg, (struct cell_aal5 *)&c[n++]) == 1)
		;
	return n;
}

/* The faulting cells of case k. */
static int hostile_cells(int k, struct cell *c)
{
	uint32_t would = H_WOULD + 32 * (uint32_t)k;
	const uint16_t wd = CELL_OP(CK_WRITE, CA_DIRECT);
	int n;

	switch (k) {
	case 0:
		c[0] = ctl_cell(V_H, wd, 0, 0, 0, would, 0, 0, 0, 0xff, 1);
		c[0].check ^= 0x5a;
		return 1;
	case 1:
		c[0] = ctl_cell(V_H, wd, 0, 0, 0, would, 0, 0, 0, 0xff, 1);
		c[0].data[9] ^= 0x04;
		return 1;
	case 2:
		c[0] = ctl_cell(V_H, wd, CELL_RO(ALU_ADD, CS_A, CSRC_OPERAND), 0, 0, PG - 16, 0, 0, 0, 0xff, 1);
		return 1;
	case 3:
		c[0] = ctl_cell(V_H, CELL_OP(CK_NOP, CA_NONE), CELL_RO(ALU_LOAD, CS_A, CSRC_OPERAND), 0, 0, 1, 16, 0, 0,
				0, 0);
		return 1;
	case 4:
		c[0] = ctl_cell(V_H, wd, 0, 0, 0, would + 2, 0, 0, 0, 0xff, 1);
		return 1;
	case 5:		/* idx 8: readable only */
		c[0] = ctl_cell(V_H, CELL_OP(CK_NOP, CA_NONE), CELL_RO(ALU_ADD, CS_B, CSRC_OPERAND),
				CELL_RO(ALU_LOAD, CS_A, CSRC_OPERAND), 0, 1, 8, 0, 0, 0, 0);
		return 1;
	case 6:		/* idx 9: writable only */
		c[0] = ctl_cell(V_H, CELL_OP(CK_WRITE, CA_INDIRECT), CELL_RO(ALU_ADD, CS_B, CSRC_OPERAND), 0, 0, 4, 9,
				0, 0, 0xff, 1);
		return 1;
	case 7:		/* idx 10: destination-only */
		c[0] = ctl_cell(V_H, CELL_OP(CK_FETCH, CA_NONE), 0, 0, 0, 0, 10, 0, 0, 0x01, 0);
		return 1;
	case 8:
		c[0] = ctl_cell(V_H_WO, CELL_OP(CK_READ, CA_DIRECT), 0, 0, 0, 0, 0, 0, 0, 0xff, 0);
		return 1;
	case 9:
		c[0] = ctl_cell(V_H_IPONLY, wd, 0, 0, 0, would, 0, 0, 0, 0xff, 1);
		return 1;
	case 10:
		c[0] = ctl_cell(V_H, CELL_IP | 1, 0, 0, 0, would, 0, 0, 0, 0, 1);
		return 1;
	case 11:
		c[0] = ctl_cell(V_H, CELL_IP | 4, 0, 0, 0, would, 0, 0, 0, 0, 1);
		return 1;
	case 12:
		c[0] = ctl_cell(V_H, CELL_OP(CK_NOP, CA_NONE), 0xc0, 0, 0, 0, 0, 0, 0, 0, 0);
		return 1;
	case 13:
		c[0] = ctl_cell(V_H, CELL_OP(7, CA_NONE), 0, 0, 0, 0, 0, 0, 0, 0, 0);
		return 1;
	case 14:
		c[0] = ctl_cell(V_H, CELL_OP(CK_NOP, CA_NONE) | CELL_POS(3), 0, 0, CELL_COND(CMP_ALWAYS, 0, 0), 0, 0, 0,
				0, 0, 0);
		return 1;
	case 15:
		c[0] = ctl_cell(V_H_NOREPLY, CELL_OP(CK_READ, CA_DIRECT), 0, 0, 0, 0, 0, 0, 0, 0xff, 0);
		return 1;
	case 16:
		c[0] = ctl_cell(V_H, CELL_OP(CK_SWEXC, CA_NONE), 0, 0, 0, 0x5157, 0, 0, 0, 0, 0);
		return 1;
	case 17:	/* idx 2 holds an address past the endpoint until node 0 fixes it */
		c[0] = ctl_cell(V_H, CELL_OP(CK_WRITE, CA_INDIRECT), CELL_RO(ALU_ADD, CS_A, CSRC_OPERAND), 0, 0, 32, 2,
				0, 0, 0xff, 0x17);
		return 1;
	case 18: {	/* a 32-byte AAL5 PDU whose CRC is wrong */
		n = block_cells(c, V_H, H_BLK + 64 * (uint32_t)(k - 18), 32, (uint8_t)k);
		c[n - 1].data[CELL_DATA - 1] ^= 0x01;	/* the CRC's last byte, at the cell's end */
		return n;
	}
	case 19: {	/* the trailer claims 48 bytes where 32 came, with a CRC that matches it */
		n = block_cells(c, V_H, H_BLK + 64 * (uint32_t)(k - 18), 32, (uint8_t)k);
		struct cell_aal5 *last = (struct cell_aal5 *)&c[n - 1];
		last->payload[CELL_PAYLOAD - 6] = 0;
		last->payload[CELL_PAYLOAD - 5] = 48;
		cell_put32(last->payload + CELL_PAYLOAD - 4, crc32_aal5(0, last->payload, CELL_PAYLOAD - 4));
		return n;
	}
	case 20:	/* 32 bytes at the endpoint's last 64, then 96 more: the first AAL5 cell crosses */
		return block_cells(c, V_H, PG - 64, 96, (uint8_t)k);
	}
	return 0;
}

/* Bytes a faulting case legitimately deposits before its fault (a block's control cell). */
static uint32_t hcase_legit(int k, uint8_t *fillv)
{
	*fillv = (uint8_t)k;
	if (k == 18 || k == 19)
		return H_BLK + 64 * (uint32_t)(k - 18);
	if (k == 20)
		return PG - 64;
	return UINT32_MAX;
}

static uint8_t by_fill(int k) { return (uint8_t)(0x40 + 3 * k); }
static uint8_t held_fill(int k) { return (uint8_t)(0x80 + 5 * k); }

/* The hostile node: wait for node 0's "go on" (an interrupt on V_H_ACK). */
static int wait_ack(void)
{
	return dep_intr_wait(V_H_ACK, &seen[V_H_ACK], WAIT_NS) >= 0;
}

/* The cell held behind case k: a deposit of held_fill(k) at H_HELD + 32 k on the victim. */
static void send_held(int vci, int k)
{
	fill(mine + H_SRC + 32, held_fill(k));
	if (vci == V_H_IPONLY)
		send(vci, DART_OPC(CELL_IP | 0, 0, 0, 0), H_HELD + 32 * (uint32_t)k, 0, H_SRC + 32);
	else
		send(vci, DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0), H_HELD + 32 * (uint32_t)k,
		     DART_IDX(0, 0, 0, 0xff), H_SRC + 32);
}

/*
 * The flood: FLOOD cells on V_H_SMALL, sent with dep_go, from a thread of
 * their own while the connection is blocked at node 0.  Cell k: if a == k
 * then a += c (1); b += k always; so a ends at FLOOD only if every cell
 * was applied, in order, and b at the sum of 0..FLOOD-1 only if none
 * twice.  Node 0 tells this node to stop sending on it (flow control per
 * connection, 6.4): dep_go waits for the go, and this node's other
 * connections go on meanwhile.
 */
#define FLOOD 300
static volatile int flood_err, flood_done;

static void *flood(void *arg)
{
	struct dart_sendregs *sr = dep_sendregs(V_H_SMALL);
	const uint64_t opc = DART_OPC(CELL_OP(CK_NOP, CA_NONE) | CO_GUARD, CELL_RO(ALU_ADD, CS_B, CSRC_OPERAND),
				      CELL_RO(ALU_ADD, CS_A, CSRC_C), CELL_COND(CMP_EQ, CS_A, CSRC_OPERAND));

	(void)arg;
	for (uint32_t k = 0; k < FLOOD && sr; k++) {
		int r = dep_send(sr, opc, k, DART_IDX(13, 14, 15, 0), H_SRC);
		if (r < 0 && !flood_err)
			flood_err = r;
	}
	if (!sr)
		flood_err = -EBADF;
	flood_done = 1;
	return NULL;
}

static struct dart_exc status_exc;
static volatile int status_seen;

static void on_status(void *arg, const struct dart_exc *e)
{
	(void)arg;
	if (e->cls == DEX_STATUS)
		status_seen++;
	else
		status_exc = *e;
}

static int blocked_27(void *arg)
{
	struct dep_conn_info ci;
	(void)arg;
	return dep_conn_info(V_H_STATUS, &ci) == 0 && ci.state == DC_EXCEPTION;
}

static int status_reported(void *arg)
{
	(void)arg;
	return status_seen > 0;
}

static void hostile_run(void)
{
	static struct cell c[16];

	for (int k = 0; k < NHCASES; k++) {
		int n = hostile_cells(k, c);
		int r = dep_test_send_raw(0, c, (size_t)n * CELL_SIZE);
		EXPECT(r == 0, "case %s: send: %d", hcases[k].name, r);
		fill(mine + H_SRC, by_fill(k));
		send(V_H_BY, DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0), H_BY + 32 * (uint32_t)k,
		     DART_IDX(0, 0, 0, 0xff), H_SRC);
		send_held(hcases[k].vci, k);
		EXPECT(wait_ack(), "no go-ahead from node 0 after case %s", hcases[k].name);
	}
	/* A full hold queue: a fault, then 8 cells where 4 can be held; the frame waits, nothing is lost. */
	c[0] = ctl_cell(V_H_SMALL, CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0, H_OVR, 0, 0, 0, 0xff, 1);
	c[0].check ^= 1;
	for (int j = 0; j < 8; j++)
		c[1 + j] = ctl_cell(V_H_SMALL, CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0, H_OVR + 32 * (uint32_t)j, 0, 0, 0,
				    0xff, (uint8_t)(0x30 + j));
	EXPECT(dep_test_send_raw(0, c, 9 * CELL_SIZE) == 0, "overrun cells");
	/* The flood behind them; meanwhile a cell on another connection from this node. */
	struct thread *ft = thread_create("flood", flood, NULL, PRIO_NORMAL, 0);
	EXPECT(ft != NULL, "flood thread");
	thread_sleep_ns(300000000);
	fill(mine + H_SRC + 64, 0x5a);
	send(V_H_BY, DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0), H_BY + 32 * 30, DART_IDX(0, 0, 0, 0xff),
	     H_SRC + 64);
	EXPECT(wait_ack(), "no go-ahead after the overrun");
	if (ft)
		thread_join(ft);
	EXPECT(flood_done && flood_err == 0, "flood: dep_go gave %d", flood_err);
	struct dep_counters fc;
	deposit_counters(&fc);
	EXPECT(fc.flow_rx >= 2 && fc.flow_waits >= 1, "flood: %lu stop/go messages taken, %lu sends waited",
	       fc.flow_rx, fc.flow_waits);
	/* Discard: the fault goes, the next cell lands, no exception. */
	c[0] = ctl_cell(V_H_DISCARD, CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0, H_DISC, 0, 0, 0, 0xff, 1);
	c[0].data[0] ^= 1;
	c[1] = ctl_cell(V_H_DISCARD, CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0, H_DISC, 0, 0, 0, 0xff, 0x61);
	EXPECT(dep_test_send_raw(0, c, 2 * CELL_SIZE) == 0, "discard cells");
	EXPECT(wait_ack(), "no go-ahead after discard");
	/* Cells of no connection: bad HEC, VPI, OAM, closed VCI, VCI past the table, another node's. */
	int nc = 0;
	c[nc] = ctl_cell(V_H, CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0, 0, 0, 0, 0, 0xff, 1);
	c[nc++].hdr[4] ^= 0x01;
	c[nc] = ctl_cell(V_H, CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0, 0, 0, 0, 0, 0xff, 1);
	c[nc].hdr[0] = 0x01;
	c[nc].hdr[4] = atm_hec(c[nc].hdr);
	nc++;
	c[nc] = ctl_cell(V_H, CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0, 0, 0, 0, 0, 0xff, 1);
	c[nc].hdr[3] |= PT_OAM << 1;
	c[nc].hdr[4] = atm_hec(c[nc].hdr);
	nc++;
	c[nc++] = ctl_cell(V_NONE, CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0, 0, 0, 0, 0, 0xff, 1);
	c[nc++] = ctl_cell(300, CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0, 0, 0, 0, 0, 0xff, 1);
	if (node_id != prim)
		c[nc++] = ctl_cell(V_P, CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0, 0, 0, 0, 0, 0xff, 1);
	EXPECT(dep_test_send_raw(0, c, (size_t)nc * CELL_SIZE) == 0, "cells of no connection");
	EXPECT(dep_test_send_raw(0, c, 60) == 0, "a torn frame");
	fill(mine + H_SRC, 0x7e);
	send(V_H_BY, DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0), H_BY + 32 * 31, DART_IDX(0, 0, 0, 0xff), H_SRC);
	EXPECT(wait_ack(), "no go-ahead after the cells of no connection");
	/* Status (6.3): node 0 blocks our end of V_H_STATUS; sending with STATUS_EXC is an exception. */
	EXPECT(wait_for(blocked_27, NULL, WAIT_NS), "V_H_STATUS never blocked here");
	struct dart_sendregs *sr = dep_sendregs(V_H_STATUS);
	fill(mine + H_SRC, 0x27);
	sr->mode = DART_MODE_STATUS_EXC;
	sr->opcode = DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0);
	sr->operand = H_STATUS;
	sr->index = DART_IDX(0, 0, 0, 0xff);
	EXPECT(dep_go(sr, H_SRC) == -EIO, "go while the status is non-zero");
	EXPECT(wait_for(status_reported, NULL, WAIT_NS), "no DEX_STATUS exception reported");
	EXPECT(status_exc.cls == DEX_CHECK, "the cell that blocked us: %s", dart_exc_names[status_exc.cls]);
	sr->mode = 0;
	EXPECT(dep_go(sr, H_SRC) == 0, "go without the status mode");
	EXPECT(dep_conn_resume(V_H_STATUS, DART_SKIP) == 0, "re-enable V_H_STATUS");
}

/* Node 0: the expected image of its hostile-facing endpoints and registers. */
static uint8_t expect_h[PG], expect_wo[PG];
static uint32_t expect_reg[DART_NREGS];

static void expect_fill(uint8_t *img, uint32_t off, uint8_t f)
{
	fill(img + off, f);
}

/* Node 0's endpoints H and WO, and every register, are exactly as expected. */
static int image_ok(const char *when)
{
	const uint8_t *h = arena + ep_at[E_H], *wo = arena + ep_at[E_WO];
	int ok = memcmp(h, expect_h, PG) == 0 && memcmp(wo, expect_wo, PG) == 0;
	unsigned badregs = 0;

	for (unsigned r = 0; r < DART_NREGS; r++) {
		uint32_t v;
		dep_reg_get(r, &v);
		if (r >= R_H && r < R_BY && v != expect_reg[r])
			badregs++;
	}
	EXPECT(ok && badregs == 0, "%s: endpoint bytes or %u registers not as expected", when, badregs);
	return ok && badregs == 0;
}

struct landed {
	const uint8_t *p;
	uint8_t f;
};

static int has_landed(void *arg)
{
	struct landed *l = arg;
	return is_fill(l->p, l->f, 0xff);
}

struct heldn {
	int vci;
	unsigned held, hold_full;
};

static int held_n(void *arg)
{
	struct heldn *h = arg;
	struct dep_conn_info ci;
	return dep_conn_info(h->vci, &ci) == 0 && ci.held >= h->held && ci.hold_full >= h->hold_full;
}

static uint32_t flood_reg(unsigned i)
{
	uint32_t v = 0;
	dep_reg_get(R_H + i, &v);
	return v;
}

static int flood_landed(void *arg)
{
	(void)arg;
	return flood_reg(13) == FLOOD;
}

static void ack(void)
{
	send(V_H_ACK, write_intr, H_ACK_AT, DART_IDX(0, 0, 0, 0x01), 0);
}

static void hostile_check(void)
{
	uint8_t *h = arena + ep_at[E_H], *wo = arena + ep_at[E_WO];
	struct dep_counters c0, c1;
	struct dep_conn_info ci;

	memcpy(expect_h, h, PG);
	memcpy(expect_wo, wo, PG);
	for (unsigned r = 0; r < DART_NREGS; r++)
		dep_reg_get(r, &expect_reg[r]);
	for (int k = 0; k < NHCASES; k++) {
		const struct hcase *hc = &hcases[k];
		uint8_t lf;
		uint32_t legit = hcase_legit(k, &lf);
		uint8_t *held_img = hc->vci == V_H_WO ? expect_wo : expect_h;
		uint8_t *held_mem = hc->vci == V_H_WO ? wo : h;
		if (!wait_exc(hc->vci, k == 0 ? FIRST_WAIT_NS : WAIT_NS)) {
			EXPECT(0, "case %s: no exception", hc->name);
			return;
		}
		const struct dart_exc *e = &last_exc[hc->vci];
		EXPECT(e->cls == hc->cls, "case %s: exception %s, expected %s", hc->name, dart_exc_names[e->cls],
		       dart_exc_names[hc->cls]);
		if (legit != UINT32_MAX)
			expect_fill(expect_h, legit, lf);
		/* The bystander from the same node lands; the victim holds its cell. */
		struct landed by = { h + H_BY + 32 * k, by_fill(k) };
		EXPECT(wait_for(has_landed, &by, WAIT_NS), "case %s: the other connection stalled", hc->name);
		expect_fill(expect_h, H_BY + 32 * (uint32_t)k, by_fill(k));
		/* Held: the cells after the fault in its frame (a block's rest), then the deposit. */
		int vci = hc->vci;
		struct heldn hn = { vci, k == 20 ? 3 : 1, 0 };
		EXPECT(wait_for(held_n, &hn, WAIT_NS), "case %s: not all held", hc->name);
		EXPECT(dep_conn_info(vci, &ci) == 0 && ci.state == DC_EXCEPTION, "case %s: state %d", hc->name, ci.state);
		image_ok(hc->name);
		if (hc->retry) {
			/* The host fixes the address register and retries the cell (6.4). */
			dep_reg_set(R_H + 2, H_RETRY);
			EXPECT(dep_conn_resume(vci, DART_RETRY) == 0, "case %s: retry", hc->name);
			expect_fill(expect_h, H_RETRY, 0x17);
			expect_reg[R_H + 2] = H_RETRY + 32;
		} else {
			EXPECT(dep_conn_resume(vci, DART_SKIP) == 0, "case %s: skip", hc->name);
		}
		expect_fill(held_img, H_HELD + 32 * (uint32_t)k, held_fill(k));
		EXPECT(is_fill(held_mem + H_HELD + 32 * k, held_fill(k), 0xff), "case %s: held cell not applied", hc->name);
		image_ok(hc->name);
		ack();
	}
	EXPECT(unexpected_exc == 0, "%u unexpected exceptions", unexpected_exc);

	/*
	 * Past the hold queue: 4 held in it, the rest of the frame and the
	 * flood in the spill pool, nothing refused, the sender told to stop;
	 * and the same node's other connection goes on meanwhile (6.4: "cells
	 * belonging to other connections can be processed").
	 */
	int failed_before = check_failures;
	struct heldn hn = { V_H_SMALL, 8, 0 };
	EXPECT(wait_exc(V_H_SMALL, WAIT_NS) && wait_for(held_n, &hn, WAIT_NS), "hold full: not 8 held");
	struct landed byf = { h + H_BY + 32 * 30, 0x5a };
	EXPECT(wait_for(has_landed, &byf, WAIT_NS), "hold full: the same node's other connection stalled");
	expect_fill(expect_h, H_BY + 32 * 30, 0x5a);
	EXPECT(dep_conn_info(V_H_SMALL, &ci) == 0 && ci.state == DC_EXCEPTION && ci.held >= 8 && ci.hold_full == 0 &&
		       ci.held - ci.spilled == 4 && ci.flow_stop,
	       "hold full: state %d held %u (%u spilled) refused %u, stop %d", ci.state, ci.held, ci.spilled,
	       ci.hold_full, ci.flow_stop);
	unsigned held_past = ci.held - 4;
	deposit_counters(&c0);
	EXPECT(c0.flow_tx >= 1 && c0.dart.flow_stops >= 1, "hold full: %lu stops, %lu flow messages sent",
	       c0.dart.flow_stops, c0.flow_tx);
	image_ok("hold full");
	EXPECT(dep_conn_resume(V_H_SMALL, DART_SKIP) == 0, "hold full: re-enable");
	for (int j = 0; j < 8; j++)
		expect_fill(expect_h, H_OVR + 32 * (uint32_t)j, (uint8_t)(0x30 + j));
	struct landed ovr = { h + H_OVR + 32 * 7, 0x37 };
	EXPECT(wait_for(has_landed, &ovr, WAIT_NS), "hold full: the held cells never landed");
	EXPECT(wait_for(flood_landed, NULL, WAIT_NS), "flood: a = %u of %d", flood_reg(13), FLOOD);
	expect_reg[R_H + 13] = FLOOD;
	expect_reg[R_H + 14] = FLOOD * (FLOOD - 1) / 2;
	EXPECT(dep_conn_info(V_H_SMALL, &ci) == 0 && ci.state == DC_OPEN && ci.held == 0 && !ci.flow_stop &&
		       ci.hold_full == 0, "after the flood: state %d held %u stop %d refused %u", ci.state, ci.held,
	       ci.flow_stop, ci.hold_full);
	if (image_ok("after the full hold queue and the flood") && check_failures == failed_before)
		printf("deposit-test: a blocked connection held %u cells past its queue of 4, its sender stopped, "
		       "the node's other connection went on; %d flood cells landed in order\n", held_past, FLOOD);
	ack();
	/* Discard. */
	struct landed d = { h + H_DISC, 0x61 };
	EXPECT(wait_for(has_landed, &d, WAIT_NS), "discard: the next cell never landed");
	expect_fill(expect_h, H_DISC, 0x61);
	EXPECT(dep_conn_info(V_H_DISCARD, &ci) == 0 && ci.state == DC_OPEN && ci.discarded == 1 &&
		       exc_count[V_H_DISCARD] == 0, "discard: state %d discarded %lu handler calls %u", ci.state,
	       ci.discarded, exc_count[V_H_DISCARD]);
	image_ok("discard");
	deposit_counters(&c0);
	ack();
	/* Cells of no connection: counted, nothing changes, nothing blocks. */
	struct landed m = { h + H_BY + 32 * 31, 0x7e };
	EXPECT(wait_for(has_landed, &m, WAIT_NS), "the marker after the cells of no connection never landed");
	expect_fill(expect_h, H_BY + 32 * 31, 0x7e);
	deposit_counters(&c1);
	EXPECT(c1.dart.bad_hec - c0.dart.bad_hec == 1 && c1.dart.bad_header - c0.dart.bad_header == 2 &&
		       c1.dart.no_conn - c0.dart.no_conn == 2 && c1.bad_frames - c0.bad_frames == 1 &&
		       c1.dart.wrong_peer - c0.dart.wrong_peer == (hostile != prim),
	       "refusals: hec %lu header %lu no_conn %lu bad_frame %lu wrong_peer %lu",
	       c1.dart.bad_hec - c0.dart.bad_hec, c1.dart.bad_header - c0.dart.bad_header,
	       c1.dart.no_conn - c0.dart.no_conn, c1.bad_frames - c0.bad_frames, c1.dart.wrong_peer - c0.dart.wrong_peer);
	image_ok("cells of no connection");
	static const int conns[] = { V_P, V_H, V_H_BY, V_H_NOREPLY, V_H_IPONLY, V_H_SMALL, V_H_DISCARD, V_H_WO };
	/*
	 * None blocked by an exception.  V_P may be waiting for reply room
	 * (DC_WAIT) or going on after it (DC_REPLAY): node 1's read storm runs
	 * meanwhile, and such a READ waits on its own connection.
	 */
	for (size_t i = 0; i < sizeof conns / sizeof conns[0]; i++)
		EXPECT(dep_conn_info(conns[i], &ci) == 0 &&
			       (ci.state == DC_OPEN || (conns[i] == V_P && (ci.state == DC_WAIT || ci.state == DC_REPLAY))),
		       "connection %d not open (state %d)", conns[i], ci.state);
	ack();
	/* Status: block the hostile node's end of V_H_STATUS with a bad cell. */
	struct cell bad = ctl_cell(V_H_STATUS, CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0, 0, 0, 0, 0, 0xff, 1);
	bad.check ^= 0x33;
	EXPECT(dep_test_send_raw(hostile, &bad, CELL_SIZE) == 0, "send the status blocker");
	struct landed s = { h + H_STATUS, 0x27 };
	EXPECT(wait_for(has_landed, &s, WAIT_NS), "the deposit after the status exception never landed");
	expect_fill(expect_h, H_STATUS, 0x27);
	image_ok("end of the hostile cases");
	/* Every class was raised and handled. */
	for (int cls = DEX_CHECK; cls <= DEX_SOFTWARE; cls++)
		EXPECT(exc_by_class[cls] > 0, "no %s exception seen", dart_exc_names[cls]);
}

/* --- contention and the barrier ----------------------------------------------------------- */

#define C_ITERS_DEFAULT 100
static int c_iters;

static void contend(void)
{
	int vci = V_C + node_id, bad = 0;
	uint32_t w[8], last = 0, guess = 0;
	uint8_t stage = (uint8_t)(1 + node_id);

	for (int i = 0; i < c_iters; i++) {
		/* Fetch-and-increment of register R_CNT. */
		if (rfetch(vci, 0, CELL_RO(ALU_ADD, CS_A, CSRC_OPERAND), 0, 0, 1, 0, 0, 0, 0x01, w) < 0) {
			bad++;
			break;
		}
		if (i > 0 && w[0] <= last)
			bad++;
		last = w[0];
		/* Compare-and-swap increment of R_CNT + 1 through this node's staging register. */
		for (int tries = 0; tries < 10000; tries++) {
			rload(vci, stage, guess + 1);
			if (rfetch(vci, CO_GUARD, 0, CELL_RO(ALU_LOAD, CS_A, CSRC_B), CELL_COND(CMP_EQ, CS_A, CSRC_OPERAND),
				   guess, 1, stage, 0, 0x41, w) < 0) {
				bad++;
				break;
			}
			if (w[6]) {
				guess++;
				break;
			}
			guess = w[0];
		}
	}
	EXPECT(bad == 0, "%d fetch-and-increment/compare-and-swap failures", bad);
}

static void contend_local(void)
{
	for (int i = 0; i < c_iters; i++) {
		dep_reg_op(R_CNT, ALU_ADD, 1, NULL);
		dep_reg_op(R_CNT + 1, ALU_ADD, 1, NULL);
		if (i % 8 == 0)
			thread_sleep_ns(1000000);
	}
}

static volatile uint64_t bar_intrs;
static struct waitq bar_wq = WAITQ_INIT;

static void on_barrier(void *arg, const struct dart_event *ev)
{
	(void)arg;
	(void)ev;
	bar_intrs++;
	waitq_wake_all(&bar_wq);
}

/*
 * The barrier of 3.4: toggle this node's bit in register B of every node,
 * each toggle a cell whose conditional interrupts when all bits are set
 * (or cleared); wait for that interrupt (or complete it locally).  B
 * alternates between two registers by round, so that a fast node's next
 * round cannot touch a register a slow node's round still uses.
 */
static int dep_barrier(int round)
{
	uint32_t full = (uint32_t)((1u << num_nodes) - 1), target = (round >> 1) & 1 ? 0 : full, v;
	uint8_t breg = (uint8_t)(round & 1), treg = target ? 2 : 3;
	uint64_t end = cycles() + ns_to_cycles(BARRIER_NS);

	/* First this round's number into my slot at every node, then the toggles (in order per pair). */
	memcpy(epb + 1024, &round, 4);
	for (int m = 0; m < num_nodes; m++)
		if (m != node_id)
			send(vci_bar(node_id, m), DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0), 32 * (uint32_t)node_id,
			     DART_IDX(0, 0, 0, 0x01), 1024);
	irqflags_t f = irq_save();
	uint64_t seen_b = bar_intrs;
	dep_reg_op(R_BAR + breg, ALU_XOR, 1u << node_id, &v);
	irq_restore(f);
	int done = v == target;
	for (int m = 0; m < num_nodes; m++)
		if (m != node_id)
			send(vci_bar(node_id, m),
			     DART_OPC(CELL_OP(CK_NOP, CA_NONE) | CO_INTR | CELL_POS(CP_MIDDLE),
				      CELL_RO(ALU_XOR, CS_A, CSRC_OPERAND), 0, CELL_COND(CMP_EQ, CS_A, CSRC_B)),
			     1u << node_id, DART_IDX(breg, treg, 0, 0), 0);
	f = irq_save();
	while (!done && bar_intrs == seen_b && cycles() < end)
		waitq_wait_timeout(&bar_wq, 100000000);
	done = done || bar_intrs != seen_b;
	irq_restore(f);
	return done ? 0 : -ETIMEDOUT;
}

static void barrier_rounds(int rounds)
{
	int bad = 0;

	for (int r = 0; r < rounds; r++) {
		if (dep_barrier(r) < 0) {
			EXPECT(0, "barrier round %d timed out", r);
			return;
		}
		/* Every peer has reached round r; one may already be in round r + 1. */
		for (int m = 0; m < num_nodes; m++) {
			int32_t got;
			memcpy(&got, epb + 32 * m, 4);
			if (m != node_id && (got < r || got > r + 1))
				bad++;
		}
	}
	EXPECT(bad == 0, "%d slots not in round r or r + 1 after barrier r", bad);
	uint32_t b0, b1;
	dep_reg_get(R_BAR, &b0);
	dep_reg_get(R_BAR + 1, &b1);
	printf("deposit-test: %d barrier rounds over %d nodes, B0 %#x B1 %#x\n", rounds, num_nodes, b0, b1);
}

/* --- setup --------------------------------------------------------------------------- */

/*
 * The name service finds connections (net/call/call.h): node 0 asks
 * every node m for "bar0", its end of their barrier connection, and gets
 * the VCI both opened; a name that is not there, and a connection of m
 * with a third node, are refused.
 */
static void names_check(void)
{
	for (int m = 1; m < num_nodes; m++) {
		int r = dep_conn_lookup(m, "bar0", 10000000000ULL);
		EXPECT(r == vci_bar(0, m), "node %d's bar0: %d, expected VCI %d", m, r, vci_bar(0, m));
		r = dep_conn_lookup(m, "no-such-connection", 10000000000ULL);
		EXPECT(r == -ENOENT, "node %d, a name it never exported: %d", m, r);
		if (num_nodes > 2) {
			r = dep_conn_lookup(m, m == 1 ? "bar2" : "bar1", 10000000000ULL);
			EXPECT(r == -EACCES, "node %d's connection with a third node: %d", m, r);
		}
	}
}

static int setup(void)
{
	arena_len = node_id == 0 ? ARENA0 : ARENA1;
	arena = page_alloc_zeroed(arena_len);
	if (!arena)
		return -1;
	for (size_t i = 0; i < arena_len; i++)
		arena[i] = pat(i);
	for (unsigned r = 0; r < DART_NREGS; r++) {
		dep_reg_set(r, reg_pat(r));
		dep_reg_protect(r, 0);
	}
	dep_on_exception(-1, on_exception, (void *)1);
	/* The barrier: B0, B1 (sender-writable), full, zero (readable), between every pair. */
	epb = arena + (node_id == 0 ? ep_at[E_B] : BAR_AT);
	ep_bar = dep_endpoint_create(epb, PG, DART_EP_WRITE);
	dep_reg_set(R_BAR, 0);
	dep_reg_set(R_BAR + 1, 0);
	dep_reg_set(R_BAR + 2, (uint32_t)((1u << num_nodes) - 1));
	dep_reg_set(R_BAR + 3, 0);
	for (int i = 0; i < 4; i++)
		dep_reg_protect(R_BAR + (unsigned)i, i < 2 ? DART_REG_R | DART_REG_W : DART_REG_R);
	for (int m = 0; m < num_nodes; m++) {
		if (m == node_id)
			continue;
		if (open_conn(vci_bar(node_id, m), m, ep_bar, DART_RX | DART_TX, -1, R_BAR, 4, 0, 0, 0) < 0 ||
		    dep_on_intr(vci_bar(node_id, m), on_barrier, NULL) < 0)
			return -1;
		/* Named for the name service: "bar<m>" is this node's connection with m. */
		char name[16];
		snprintf(name, sizeof name, "bar%d", m);
		EXPECT(dep_conn_export(vci_bar(node_id, m), name) == 0, "export %s", name);
	}
	if (num_nodes > 2 && node_id == 0)
		EXPECT(dep_conn_export(vci_bar(0, 2), "bar1") == -EEXIST, "a name names one connection");
	if (node_id != 0) {
		mine = arena + MINE_AT;
		ep_mine = dep_endpoint_create(mine, MINE_LEN, DART_EP_READ | DART_EP_WRITE);
		if (ep_mine < 0)
			return -1;
		open_conn(V_C + node_id, 0, ep_mine, DART_RX | DART_TX, V_C + node_id, 0, 0, 0, 0, 0);
		if (node_id == prim) {
			dep_reg_set(R_STORM, 0);
			dep_reg_protect(R_STORM, DART_REG_R | DART_REG_W);
			open_conn(V_P, 0, ep_mine, DART_RX | DART_TX, V_P, R_STORM, 1, 0, 0, 0);
			open_conn(V_P_REQ, 0, ep_mine, DART_TX, -1, 0, 0, 0, 0, 0);
			open_conn(V_P_REPLY, 0, ep_mine, DART_RX, -1, 0, 0, 0, 0, 0);
			open_conn(V_P_IP, 0, ep_mine, DART_TX, -1, 0, 0, 0, 0, 0);
		}
		if (node_id == hostile) {
			static const int tx[] = { V_H, V_H_BY, V_H_NOREPLY, V_H_IPONLY, V_H_SMALL, V_H_DISCARD, V_H_WO };
			for (size_t i = 0; i < sizeof tx / sizeof tx[0]; i++)
				open_conn(tx[i], 0, ep_mine, tx[i] == V_H ? DART_RX | DART_TX : DART_TX, -1, 0, 0, 0, 0, 0);
			open_conn(V_H_ACK, 0, ep_mine, DART_RX, -1, 0, 0, 0, 0, 0);
			open_conn(V_H_STATUS, 0, ep_mine, DART_RX | DART_TX, -1, 0, 0, 0, 0, 0);
			dep_on_exception(V_H_STATUS, on_status, NULL);
		}
		return 0;
	}

	/* Node 0: endpoints, registers, instructions, connections. */
	for (int e = 0; e < NEP; e++) {
		if (e == E_B) {
			ep0[e] = ep_bar;
			continue;
		}
		ep0[e] = dep_endpoint_create(arena + ep_at[e], ep_len[e],
					     e == E_WO ? DART_EP_WRITE : DART_EP_READ | DART_EP_WRITE);
		EXPECT(ep0[e] >= 0, "endpoint %d: %d", e, ep0[e]);
	}
	for (unsigned r = R_P; r < R_P + 32; r++) {
		dep_reg_set(r, 0);
		dep_reg_protect(r, DART_REG_R | DART_REG_W);
	}
	/* The IP priority queue: p, s, i destination-only; the instruction names them. */
	dep_reg_set(R_IP, P_IPQUEUE);
	dep_reg_set(R_IP + 1, 32);
	dep_reg_set(R_IP + 2, 0);
	struct cell_ctl prio = { CELL_OP(CK_WRITE, CA_INDIRECT) | CO_INTR | CELL_POS(CP_MIDDLE) | CO_OPERAND_MSG,
				 CELL_RO(ALU_ADD, CS_A, CSRC_B), CELL_RO(ALU_OR, CS_C, CSRC_OPERAND),
				 CELL_COND(CMP_LT, CS_C, CSRC_OPERAND), 0, { 0, 1, 2 }, 0xff };
	dep_instr_set(8, &prio, DART_I_ENTRY);
	/* The hostile window: 100..115; 102 points past the endpoint; 108 read-only, 109 write-only, 110 neither. */
	for (unsigned r = R_H; r < R_BY + 16; r++) {
		dep_reg_set(r, r < R_BY ? r - R_H : 0);
		dep_reg_protect(r, DART_REG_R | DART_REG_W);
	}
	dep_reg_set(R_H + 2, 0xf000);
	/* The flood on V_H_SMALL: a counts the cells applied in order, b sums their numbers, c is 1. */
	dep_reg_set(R_H + 13, 0);
	dep_reg_set(R_H + 14, 0);
	dep_reg_set(R_H + 15, 1);
	dep_reg_protect(R_H + 8, DART_REG_R);
	dep_reg_protect(R_H + 9, DART_REG_W);
	dep_reg_protect(R_H + 10, 0);
	/* Instruction 0 of the hostile windows: a direct WRITE at the message's operand; 1: not an entry. */
	struct cell_ctl wr = { CELL_OP(CK_WRITE, CA_DIRECT) | CO_OPERAND_MSG, 0, 0, 0, 0, { 0, 0, 0 }, 0xff };
	dep_instr_set(0, &wr, DART_I_ENTRY);
	dep_instr_set(1, &wr, 0);
	/* Contention: R_CNT, R_CNT + 1, staging R_CNT + 1 + n. */
	for (unsigned r = R_CNT; r < R_CNT + 2 + MAX_TEST_NODES; r++) {
		dep_reg_set(r, 0);
		dep_reg_protect(r, DART_REG_R | DART_REG_W);
	}

	for (int n = 1; n < num_nodes; n++) {
		open_conn(V_C + n, n, ep0[E_C], DART_RX | DART_TX, V_C + n, R_CNT, 2 + (unsigned)n, 0, 0, 0);
		dep_on_exception(V_C + n, on_exception, (void *)1);
	}
	open_conn(V_P, prim, ep0[E_P], DART_RX | DART_TX, V_P, R_P, 32, 0, 0, 0);
	open_conn(V_P_REQ, prim, ep0[E_P], DART_RX, V_P_REPLY, R_P, 32, 0, 0, 0);
	open_conn(V_P_REPLY, prim, ep0[E_P], DART_TX, -1, 0, 0, 0, 0, 0);
	open_conn(V_P_IP, prim, ep0[E_P], DART_RX | DART_IPONLY, -1, R_IP, 16, 8, 4, 0);
	dep_on_intr(V_P, record_intr, NULL);
	dep_on_intr(V_P_IP, record_intr, NULL);
	open_conn(V_H, hostile, ep0[E_H], DART_RX | DART_TX, V_H, R_H, 16, 0, 4, 0);
	open_conn(V_H_BY, hostile, ep0[E_H], DART_RX, -1, R_BY, 16, 0, 0, 0);
	open_conn(V_H_ACK, hostile, ep0[E_H], DART_TX, -1, 0, 0, 0, 0, 0);
	open_conn(V_H_NOREPLY, hostile, ep0[E_H], DART_RX, -1, R_H, 16, 0, 0, 0);
	open_conn(V_H_IPONLY, hostile, ep0[E_H], DART_RX | DART_IPONLY, -1, R_H, 16, 0, 4, 0);
	open_conn(V_H_SMALL, hostile, ep0[E_H], DART_RX, -1, R_H, 16, 0, 0, 4);
	open_conn(V_H_DISCARD, hostile, ep0[E_H], DART_RX | DART_DISCARD, -1, R_H, 16, 0, 0, 0);
	open_conn(V_H_STATUS, hostile, ep0[E_H], DART_RX | DART_TX, -1, R_H, 16, 0, 0, 0);
	open_conn(V_H_WO, hostile, ep0[E_WO], DART_RX, V_H_ACK, R_H, 16, 0, 0, 0);
	static const int victims[] = { V_H, V_H_NOREPLY, V_H_IPONLY, V_H_SMALL, V_H_WO };
	for (size_t i = 0; i < sizeof victims / sizeof victims[0]; i++)
		dep_on_exception(victims[i], on_exception, NULL);
	return check_failures ? -1 : 0;
}

/* --- multicast (3.2) ------------------------------------------------------------------------ */

#define M_CELL_AT (MINE_LEN - 256)	/* where the multicast cell lands in each member's endpoint */
#define M_BLOCK_AT (MINE_LEN - 192)	/* and the block after it: 80 bytes, one control and one AAL5 cell */
#define M_SRC_CELL 512			/* their source: node 0's contention endpoint, which holds its pattern */
#define M_SRC_BLOCK 1024
#define M_BLOCK_LEN 80

/* Every node but 0: its end of the multicast connection from node 0. */
static void multicast_open(void)
{
	if (node_id != 0) {
		open_conn(V_M, 0, ep_mine, DART_RX, -1, 0, 0, 0, 0, 0);
		EXPECT(dep_on_intr(V_M, NULL, NULL) == 0, "interrupts on the multicast connection");
		return;
	}
	uint64_t others = ((1ULL << num_nodes) - 1) & ~1ULL;
	struct dep_conn_cfg bad = { 1, ep0[E_C], DART_TX, -1, 0, 0, 0, 0, 0, others | 1 };
	EXPECT(dep_conn_open(V_M, &bad) == -EINVAL, "a multicast group with this node in it was opened");
	bad.group = others;
	bad.flags = DART_RX | DART_TX;
	EXPECT(dep_conn_open(V_M, &bad) == -EINVAL, "a multicast connection that receives was opened");
	struct dep_conn_cfg cfg = { 1, ep0[E_C], DART_TX, -1, 0, 0, 0, 0, 0, others };
	EXPECT(dep_conn_open(V_M, &cfg) == 0, "open the multicast connection");
}

/* Node 0 sends one cell and one block on it; every member finds both, each after its interrupt. */
static void multicast_run(void)
{
	if (node_id == 0) {
		struct dart_sendregs *sr = dep_sendregs(V_M);
		EXPECT(sr != NULL, "send registers of the multicast connection");
		if (!sr)
			return;
		sr->size = 0;
		int r = dep_send(sr, write_intr, M_CELL_AT, DART_IDX(0, 0, 0, 0xff), M_SRC_CELL);
		EXPECT(r == 0, "multicast cell: %d", r);
		sr->size = M_BLOCK_LEN / 16;
		r = dep_send(sr, write_intr, M_BLOCK_AT, DART_IDX(0, 0, 0, 0xff), M_SRC_BLOCK);
		EXPECT(r == 0, "multicast block: %d", r);
		return;
	}
	uint64_t seen = 0;
	long n = 0;
	uint64_t end = cycles() + ns_to_cycles(WAIT_NS);
	while (n < 2 && cycles() < end)
		n = dep_intr_wait(V_M, &seen, WAIT_NS);
	EXPECT(n >= 2, "node %d: %ld multicast interrupts, expected 2", node_id, n);
	int bad = 0;
	for (int i = 0; i < 32; i++)
		bad += mine[M_CELL_AT + i] != pat(ep_at[E_C] + M_SRC_CELL + (size_t)i);
	for (int i = 0; i < M_BLOCK_LEN; i++)
		bad += mine[M_BLOCK_AT + i] != pat(ep_at[E_C] + M_SRC_BLOCK + (size_t)i);
	EXPECT(bad == 0, "node %d: %d bytes of the multicast cell and block wrong", node_id, bad);
	if (bad == 0)
		printf("deposit-test: node %d got the multicast cell and block\n", node_id);
}

/* --- the sequencer (6.5) --------------------------------------------------------------------- */

#define S_IP 200		/* V_S's instruction window: 200..203 */
#define S_AT 7168		/* in node 0's P endpoint: where the sequenced deposits go */
#define S_CELLS 4
static const uint32_t s_stride[S_CELLS] = { 32, 64, 32, 96 };

/*
 * Node 0: V_S from node 1, IP-only, three instructions run by one cell:
 * b <- the message's operand (the stride); c <- c + 1; WRITE at <a>,
 * a <- a + b, an interrupt.  The registers are the destination's alone.
 */
static void sequencer_open(void)
{
	if (node_id == 1) {
		open_conn(V_S, 0, ep_mine, DART_TX, -1, 0, 0, 0, 0, 0);
		return;
	}
	if (node_id != 0)
		return;
	const struct cell_ctl load_b = { CELL_OP(CK_NOP, CA_NONE) | CO_OPERAND_MSG,
					 CELL_RO(ALU_LOAD, CS_B, CSRC_OPERAND), 0, 0, 0, { 0, 1, 2 }, 0 };
	const struct cell_ctl inc_c = { CELL_OP(CK_NOP, CA_NONE), CELL_RO(ALU_ADD, CS_C, CSRC_OPERAND), 0, 0, 1,
					{ 0, 1, 2 }, 0 };
	const struct cell_ctl store = { CELL_OP(CK_WRITE, CA_INDIRECT) | CO_INTR, CELL_RO(ALU_ADD, CS_A, CSRC_B), 0,
					CELL_COND(CMP_ALWAYS, 0, 0), 0, { 0, 1, 2 }, 0xff };
	EXPECT(dep_instr_set(S_IP, &load_b, DART_I_ENTRY | DART_I_NEXT(1)) == 0 &&
	       dep_instr_set(S_IP + 1, &inc_c, DART_I_NEXT(2)) == 0 && dep_instr_set(S_IP + 2, &store, 0) == 0,
	       "sequence instructions");
	EXPECT(dep_instr_set(S_IP + 3, &store, DART_I_NEXT(DART_NINSTR)) == -EINVAL, "a next past the memory");
	dep_reg_set(R_SEQ, S_AT);
	dep_reg_set(R_SEQ + 1, 0);
	dep_reg_set(R_SEQ + 2, 0);
	for (int i = 0; i < 3; i++)
		dep_reg_protect(R_SEQ + (unsigned)i, 0);
	open_conn(V_S, 1, ep0[E_P], DART_RX | DART_IPONLY, -1, R_SEQ, 3, S_IP, 4, 0);
	EXPECT(dep_on_intr(V_S, NULL, NULL) == 0, "interrupts on V_S");
}

/* Node 1 sends S_CELLS instruction-pointer cells; node 0 checks what the sequences did. */
static void sequencer_run(void)
{
	if (node_id == 1) {
		struct dart_sendregs *sr = dep_sendregs(V_S);
		EXPECT(sr != NULL, "V_S send registers");
		for (int k = 0; sr && k < S_CELLS; k++) {
			fill(mine + 512 + 32 * k, (uint8_t)(0x60 + k));
			sr->size = 0;
			int r = dep_send(sr, DART_OPC(CELL_IP | 0, 0, 0, 0), s_stride[k], 0, 512 + 32 * (uint32_t)k);
			EXPECT(r == 0, "sequenced cell %d: %d", k, r);
		}
		return;
	}
	if (node_id != 0)
		return;
	uint64_t seen = 0, end = cycles() + ns_to_cycles(WAIT_NS);
	long n = 0;
	while (n < S_CELLS && cycles() < end)
		n = dep_intr_wait(V_S, &seen, WAIT_NS);
	EXPECT(n >= S_CELLS, "%ld interrupts from the sequences, expected %d", n, S_CELLS);
	uint32_t a, b, c, at = S_AT;
	dep_reg_get(R_SEQ, &a);
	dep_reg_get(R_SEQ + 1, &b);
	dep_reg_get(R_SEQ + 2, &c);
	int bad = 0;
	for (int k = 0; k < S_CELLS; k++) {
		bad += !is_fill(arena + ep_at[E_P] + at, (uint8_t)(0x60 + k), 0xff);
		at += s_stride[k];
	}
	EXPECT(c == S_CELLS && b == s_stride[S_CELLS - 1] && a == at && bad == 0,
	       "sequences: a %u (expected %u), b %u, c %u, %d deposits wrong", a, at, b, c, bad);
	struct dep_counters dc;
	deposit_counters(&dc);
	EXPECT(dc.dart.sequenced >= 2 * S_CELLS, "sequenced %lu instructions", dc.dart.sequenced);
	if (c == S_CELLS && bad == 0)
		printf("deposit-test: %d cells ran %d instructions each through the sequencer\n", S_CELLS, 3);
}

/* --- page protection inside an endpoint (3.2, 3.5) ------------------------------------------------ */

/* Node 0: the page the sequences deposit into becomes read-only; their exceptions are expected. */
static void protect_open(void)
{
	if (node_id != 0)
		return;
	EXPECT(dep_on_exception(V_S, on_exception, NULL) == 0, "V_S exception handler");
	EXPECT(dep_endpoint_protect(ep0[E_P], 100, PG, DART_EP_READ) == -EINVAL, "a range not on a page");
	EXPECT(dep_endpoint_protect(ep0[E_P], PG, PG, DART_EP_READ) == 0, "page 1 of P read-only");
}

/*
 * Node 1 sends one more sequence; at node 0 its deposit would fall on the
 * read-only page: a protection exception, the sequence's registers and the
 * page as they were.  Node 0 makes the page writable again and retries:
 * the cell lands.
 */
static void protect_run(void)
{
	if (node_id == 1) {
		struct dart_sendregs *sr = dep_sendregs(V_S);
		fill(mine + 1024, 0x70);
		if (sr) {
			sr->size = 0;
			int r = dep_send(sr, DART_OPC(CELL_IP | 0, 0, 0, 0), 32, 0, 1024);
			EXPECT(r == 0, "the sequence into the protected page: %d", r);
		}
		return;
	}
	if (node_id != 0)
		return;
	uint32_t at = S_AT, a, b, c;
	for (int k = 0; k < S_CELLS; k++)
		at += s_stride[k];
	EXPECT(wait_exc(V_S, WAIT_NS), "no exception from the protected page");
	struct dep_conn_info ci;
	dep_conn_info(V_S, &ci);
	dep_reg_get(R_SEQ, &a);
	dep_reg_get(R_SEQ + 1, &b);
	dep_reg_get(R_SEQ + 2, &c);
	EXPECT(ci.state == DC_EXCEPTION && last_exc[V_S].cls == DEX_PROT && last_exc[V_S].detail == at,
	       "exception %s at %#x, state %d (expected protection at %#x)", dart_exc_names[last_exc[V_S].cls],
	       last_exc[V_S].detail, ci.state, at);
	EXPECT(a == at && b == s_stride[S_CELLS - 1] && c == S_CELLS && !is_fill(arena + ep_at[E_P] + at, 0x70, 0xff),
	       "a refused sequence changed something: a %u b %u c %u", a, b, c);
	EXPECT(dep_endpoint_protect(ep0[E_P], PG, PG, DART_EP_READ | DART_EP_WRITE) == 0, "page 1 writable again");
	uint64_t seen = 0;
	dep_intr_wait(V_S, &seen, 0);		/* the interrupts so far */
	EXPECT(dep_conn_resume(V_S, DART_RETRY) == 0, "retry the sequence");
	dep_reg_get(R_SEQ, &a);
	dep_reg_get(R_SEQ + 2, &c);
	EXPECT(a == at + 32 && c == S_CELLS + 1 && is_fill(arena + ep_at[E_P] + at, 0x70, 0xff),
	       "the retried sequence: a %u c %u", a, c);
	if (a == at + 32 && c == S_CELLS + 1)
		printf("deposit-test: a deposit into a read-only page was refused, and landed once it was writable\n");
}

/* Node 0, at the end: the guards, and registers no window reaches. */
static void final_check(void)
{
	size_t bad = 0;

	for (size_t i = 0; i < arena_len; i++) {
		int inside = 0;
		for (int e = 0; e < NEP; e++)
			if (i >= ep_at[e] && i < ep_at[e] + ep_len[e])
				inside = 1;
		if (!inside && arena[i] != pat(i))
			bad++;
	}
	EXPECT(bad == 0, "%zu guard bytes changed", bad);
	/* The contention endpoint takes no data at all. */
	bad = 0;
	for (size_t i = ep_at[E_C]; i < ep_at[E_C] + PG; i++)
		bad += arena[i] != pat(i);
	EXPECT(bad == 0, "%zu bytes of the contention endpoint changed", bad);
	unsigned badregs = 0;
	for (unsigned r = 0; r < DART_NREGS; r++) {
		uint32_t v;
		int in_window = r < R_P + 32 || (r >= R_IP && r < R_IP + 16) || (r >= R_H && r < R_BY + 16) ||
				(r >= R_CNT && r < R_CNT + 2 + MAX_TEST_NODES) || (r >= R_BAR && r < R_BAR + 4) ||
				(r >= R_SEQ && r < R_SEQ + 3);
		dep_reg_get(r, &v);
		if (!in_window && v != reg_pat(r))
			badregs++;
	}
	EXPECT(badregs == 0, "%u registers outside every window changed", badregs);
}

/* Close every connection and remove the endpoints (3.2: kernel calls tear them down). */
static void teardown(void)
{
	int closed = 0, bad = 0, ep = node_id == 0 ? ep0[E_P] : ep_mine;

	EXPECT(dep_endpoint_destroy(ep) == -EBUSY, "an endpoint in use was removed");
	for (int v = 0; v < DART_MAX_CONN; v++) {
		struct dep_conn_info ci;
		if (dep_conn_info(v, &ci) < 0)
			continue;
		if (ci.state != DC_OPEN)
			bad++;
		if (dep_conn_close(v) == 0)
			closed++;
	}
	EXPECT(bad == 0, "%d connections not open at the end", bad);
	EXPECT(closed > 0 && dep_conn_close(V_C + 1) == -EBADF, "closing: %d closed", closed);
	EXPECT(dep_sendregs(V_C + (node_id ? node_id : 1)) == NULL, "send registers of a closed connection");
	if (node_id == 0) {
		for (int e = 0; e < NEP; e++)
			EXPECT(dep_endpoint_destroy(ep0[e]) == 0, "remove endpoint %d", e);
	} else {
		EXPECT(dep_endpoint_destroy(ep_mine) == 0 && dep_endpoint_destroy(ep_bar) == 0, "remove endpoints");
	}
}

static int sync_all(const char *where)
{
	int r = cluster_barrier(BARRIER_NS);
	if (r < 0)
		printf("deposit-test: barrier %s failed: %d\n", where, r);
	return r;
}

static const struct argspec deposit_test_args[] = {
	{ "iters", ARG_INT, 1, 100000, "fetch-and-increments and compare-and-swaps per node (default 100)" },
	{ "rounds", ARG_INT, 1, 100000, "rounds of the register-operation barrier (default 20)" },
	{ NULL, 0, 0, 0, NULL },
};

static int deposit_test_main(void)
{
	int rounds = (int)arg_int("rounds", 20);

	c_iters = (int)arg_int("iters", C_ITERS_DEFAULT);
	if (num_nodes > MAX_TEST_NODES) {
		printf("deposit-test: at most %d nodes\n", MAX_TEST_NODES);
		return 1;
	}
	prim = 1;
	hostile = num_nodes > 2 ? 2 : 1;
	if (!fabric_ready() || fabric_wait_peers(60000000000ULL) < 0) {
		printf("deposit-test: no network\n");
		return 1;
	}
	if (setup() < 0) {
		printf("deposit-test: setup failed\n");
		return 1;
	}
	if (sync_all("after setup") < 0)
		return 1;
	if (node_id == 0)
		names_check();

	/* Operations and exceptions. */
	if (node_id == prim)
		primitives();
	if (node_id == hostile)
		hostile_run();
	if (node_id == 0)
		hostile_check();
	if (sync_all("after operations") < 0)
		return 1;
	if (node_id == 0) {
		primitives_check();
		struct dep_counters dc;
		deposit_counters(&dc);
		printf("deposit-test: node 0: %lu requests found no room for their reply, %lu of them waited on "
		       "their own connection\n", dc.dart.busy, dc.dart.reply_waits);
	}

	/* Contention on node 0's registers. */
	if (sync_all("before contention") < 0)
		return 1;
	uint64_t t0 = cycles();
	if (node_id == 0)
		contend_local();
	else
		contend();
	uint64_t ms = cycles_to_ns(cycles() - t0) / 1000000;
	if (sync_all("after contention") < 0)
		return 1;
	if (node_id == 0) {
		uint32_t fai, cas, want = (uint32_t)(num_nodes * c_iters);
		dep_reg_get(R_CNT, &fai);
		dep_reg_get(R_CNT + 1, &cas);
		EXPECT(fai == want && cas == want, "counters %u and %u, expected %u", fai, cas, want);
		printf("deposit-test: counters %u and %u after %d nodes x %d increments (%lu ms)\n", fai, cas,
		       num_nodes, c_iters, ms);
	}

	/* The barrier built from register operations. */
	if (sync_all("before the barrier") < 0)
		return 1;
	barrier_rounds(rounds);
	if (sync_all("after the barrier") < 0)
		return 1;

	/* A multicast connection from node 0 to every other node; sequences of instructions. */
	multicast_open();
	sequencer_open();
	if (sync_all("before multicast") < 0)
		return 1;
	multicast_run();
	sequencer_run();
	if (sync_all("after multicast") < 0)
		return 1;
	protect_open();
	if (sync_all("before page protection") < 0)
		return 1;
	protect_run();
	if (sync_all("after page protection") < 0)
		return 1;
	if (node_id == 0)
		final_check();
	deposit_print_stats();
	teardown();
	if (node_id == 0)
		fabric_print_stats();
	result("checks=%d failed=%d", check_count, check_failures);
	return check_failures ? 1 : 0;
}

static const struct app deposit_test = {
	.name = "deposit-test",
	.summary = "hybrid deposit: every primitive, every exception class, contention, a register barrier",
	.main = deposit_test_main,
	.args = deposit_test_args,
	.min_nodes = 2,
};
APP_REGISTER(deposit_test);
