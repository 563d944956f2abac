/*
 * deposit-test, node 1: every primitive against node 0, each checked by
 * remote READ or FETCH (see deposit_test.c).
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
#include "tests/net/deposit/deposit_test.h"

/* --- node 1: every primitive ------------------------------------------------------- */

#define P_BLOCK_SRC 4096	/* in node 1's endpoint: block data, byte i = blk(i) */
#define P_BLOCK_DST 4096	/* in node 0's P endpoint */
#define P_QUEUE 3072		/* the priority queue (direct) */
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

void dt_primitives(void)
{
	uint8_t got[CELL_DATA];
	uint32_t w[8];
	unsigned intrs = 0;		/* interrupts raised at node 0 on V_P */

	/* Direct deposit, read back. */
	dt_fill(dt_mine, 0x11);
	dt_send(V_P, DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0), 0, DART_IDX(0, 0, 0, 0xff), 0);
	EXPECT(dt_rread(0, 0xff, got) == 0 && dt_is_fill(got, 0x11, 0xff), "direct write read back");
	/* The word mask: over a full block, a masked one. */
	dt_fill(dt_mine + 32, 0x22);
	dt_fill(dt_mine + 64, 0x33);
	dt_send(V_P, DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0), 64, DART_IDX(0, 0, 0, 0xff), 32);
	dt_send(V_P, DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0), 64, DART_IDX(0, 0, 0, 0x5a), 64);
	EXPECT(dt_rread(64, 0xff, got) == 0 && dt_is_fill(got, 0x33, 0x5a) && dt_is_fill(got, 0x22, 0xa5),
	       "masked write: words 1, 3, 4, 6 new, the others old");
	/* A masked READ: the words left out come back 0. */
	EXPECT(dt_rread(0, 0x0f, got) == 0 && dt_is_fill(got, 0x11, 0x0f) && got[16] == 0 && got[31] == 0,
	       "masked read");
	/* Indirect and indexed. */
	dt_rload(V_P, 0, 512);
	dt_fill(dt_mine + 96, 0x44);
	dt_send(V_P, DART_OPC(CELL_OP(CK_WRITE, CA_INDIRECT), 0, 0, 0), 0, DART_IDX(0, 0, 0, 0xff), 96);
	EXPECT(dt_rread(512, 0xff, got) == 0 && dt_is_fill(got, 0x44, 0xff), "indirect write");
	dt_send(V_P, DART_OPC(CELL_OP(CK_WRITE, CA_INDEXED), 0, 0, 0), 32, DART_IDX(0, 0, 0, 0xff), 0);
	EXPECT(dt_rread(544, 0xff, got) == 0 && dt_is_fill(got, 0x11, 0xff), "indexed write");

	/* Store indirect with postincrement: strided DMA, stride 48 (3.4). */
	dt_rload(V_P, 1, 1024);
	for (int j = 0; j < 8; j++) {
		dt_fill(dt_mine + 128 + 32 * j, (uint8_t)(0x50 + j));
		dt_send(V_P, DART_OPC(CELL_OP(CK_WRITE, CA_INDIRECT), CELL_RO(ALU_ADD, CS_A, CSRC_OPERAND), 0, 0), 48,
		     DART_IDX(1, 0, 0, 0xff), 128 + 32 * (uint32_t)j);
	}
	int ok = 1;
	for (int j = 0; j < 8; j++)
		if (dt_rread(1024 + 48 * (uint32_t)j, 0xff, got) < 0 || !dt_is_fill(got, (uint8_t)(0x50 + j), 0xff))
			ok = 0;
	EXPECT(ok, "strided deposits at 1024 + 48 j");
	EXPECT(dt_rfetch(V_P, 0, 0, 0, 0, 0, 1, 0, 0, 0x01, w) == 0 && w[0] == 1024 + 8 * 48,
	       "the pointer after 8 postincrements: %u", w[0]);
	/* Variable stride: <a> += <b>, <b> += 8 (strides 40, 48, 56). */
	dt_rload(V_P, 2, 1536);
	dt_rload(V_P, 3, 40);
	for (int j = 0; j < 4; j++)
		dt_send(V_P, DART_OPC(CELL_OP(CK_WRITE, CA_INDIRECT), CELL_RO(ALU_ADD, CS_A, CSRC_B),
				   CELL_RO(ALU_ADD, CS_B, CSRC_OPERAND), 0),
		     8, DART_IDX(2, 3, 0, 0xff), 128 + 32 * (uint32_t)j);
	static const uint32_t vat[4] = { 1536, 1576, 1624, 1680 };
	ok = 1;
	for (int j = 0; j < 4; j++)
		if (dt_rread(vat[j], 0xff, got) < 0 || !dt_is_fill(got, (uint8_t)(0x50 + j), 0xff))
			ok = 0;
	EXPECT(ok, "variable-stride deposits");

	/* Every register operation (Fig. 2), old and new value by FETCH. */
	unsigned ops_seen = 0;
	for (size_t k = 0; k < sizeof alu_cases / sizeof alu_cases[0]; k++) {
		uint8_t op = alu_cases[k].op;
		dt_rload(V_P, 4, alu_cases[k].old);
		int r = dt_rfetch(V_P, 0, CELL_RO(op, CS_A, CSRC_OPERAND), 0, 0, alu_cases[k].operand, 4, 0, 0, 0x09, w);
		EXPECT(r == 0 && w[0] == alu_cases[k].old && w[3] == alu_cases[k].want,
		       "alu %u: %#x with %#x: old %#x new %#x, expected %#x", op, alu_cases[k].old,
		       alu_cases[k].operand, w[0], w[3], alu_cases[k].want);
		ops_seen |= 1u << op;
	}
	EXPECT(ops_seen == ((1u << ALU_N) - 1) - 1, "every operation 1..%d has a case: %#x", ALU_N - 1, ops_seen);
	/* Unary from a register, binary with a register: a <- ~<b>; a -= <c>. */
	dt_rload(V_P, 5, 0x1234);
	EXPECT(dt_rfetch(V_P, 0, CELL_RO(ALU_NOT, CS_A, CSRC_B), CELL_RO(ALU_SUB, CS_A, CSRC_C), 0, 0, 4, 5, 5, 0x08,
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
		dt_rload(V_P, 6, cmps[i].l);
		uint8_t cond = cmps[i].cmp == CMP_ALWAYS ? CELL_COND(CMP_ALWAYS, 0, 0)
							 : CELL_COND(cmps[i].cmp, CS_A, CSRC_OPERAND);
		int r = dt_rfetch(V_P, CO_INTR, 0, 0, cond, cmps[i].r, 6, 0, 0, 0x40, w);
		EXPECT(r == 0 && w[6] == cmps[i].want, "compare %u: %u vs %u gave %u", cmps[i].cmp, cmps[i].l,
		       cmps[i].r, w[6]);
		intrs += cmps[i].want;
	}
	/* Where the conditional is tested: a += 1 twice; a == pos holds before, between, after. */
	for (int pos = CP_FIRST; pos <= CP_LAST; pos++) {
		dt_rload(V_P, 6, 0);
		dt_rload(V_P, 7, (uint32_t)pos);
		int r = dt_rfetch(V_P, CO_INTR | CELL_POS(pos), CELL_RO(ALU_ADD, CS_A, CSRC_OPERAND),
			       CELL_RO(ALU_ADD, CS_A, CSRC_OPERAND), CELL_COND(CMP_EQ, CS_A, CSRC_B), 1, 6, 7, 0, 0x48, w);
		EXPECT(r == 0 && w[6] == 1 && w[3] == 2, "condition at position %d: %u, a = %u", pos, w[6], w[3]);
		intrs++;
	}
	/* The guard: register operation 2 happens only if the condition holds. */
	dt_rload(V_P, 8, 1);
	dt_rload(V_P, 9, 2);
	EXPECT(dt_rfetch(V_P, CO_GUARD, 0, CELL_RO(ALU_LOAD, CS_A, CSRC_OPERAND), CELL_COND(CMP_EQ, CS_A, CSRC_B), 99, 8,
		      9, 0, 0x48, w) == 0 && w[6] == 0 && w[3] == 1, "guard, false: a = %u", w[3]);
	dt_rload(V_P, 9, 1);
	EXPECT(dt_rfetch(V_P, CO_GUARD, 0, CELL_RO(ALU_LOAD, CS_A, CSRC_OPERAND), CELL_COND(CMP_EQ, CS_A, CSRC_B), 99, 8,
		      9, 0, 0x48, w) == 0 && w[6] == 1 && w[3] == 99, "guard, true: a = %u", w[3]);

	/* Fetch-and-increment. */
	dt_rload(V_P, 10, 100);
	ok = 1;
	for (uint32_t j = 0; j < 5; j++)
		if (dt_rfetch(V_P, 0, CELL_RO(ALU_ADD, CS_A, CSRC_OPERAND), 0, 0, 1, 10, 0, 0, 0x01, w) < 0 || w[0] != 100 + j)
			ok = 0;
	EXPECT(ok, "fetch-and-increment gives 100..104");
	/* Compare-and-swap: b <- new; FETCH: if <a> == expected then a <- <b>. */
	dt_rload(V_P, 11, 7);
	dt_rload(V_P, 12, 8);
	EXPECT(dt_rfetch(V_P, CO_GUARD, 0, CELL_RO(ALU_LOAD, CS_A, CSRC_B), CELL_COND(CMP_EQ, CS_A, CSRC_OPERAND), 6, 11,
		      12, 0, 0x49, w) == 0 && w[0] == 7 && w[6] == 0 && w[3] == 7, "failing compare-and-swap");
	EXPECT(dt_rfetch(V_P, CO_GUARD, 0, CELL_RO(ALU_LOAD, CS_A, CSRC_B), CELL_COND(CMP_EQ, CS_A, CSRC_OPERAND), 7, 11,
		      12, 0, 0x49, w) == 0 && w[0] == 7 && w[6] == 1 && w[3] == 8, "compare-and-swap 7 -> 8");

	/* A read answered on another connection (reply connection V_P_REPLY). */
	EXPECT(dt_request(V_P_REQ, V_P_REPLY, DART_OPC(CELL_OP(CK_READ, CA_DIRECT), 0, 0, 0), 0,
		       DART_IDX(0, 0, 0, 0xff), got) == 0 && dt_is_fill(got, 0x11, 0xff),
	       "read answered on the reply connection");

	/* AAL5 blocks; the last raises an interrupt at node 0 after its last cell. */
	for (size_t i = 0; i < 2200; i++)
		dt_mine[P_BLOCK_SRC + i] = blk(i);
	struct dart_sendregs *sr = dep_sendregs(V_P);
	uint32_t dst = P_BLOCK_DST;
	for (size_t b = 0; b < sizeof p_blocks / sizeof p_blocks[0]; b++) {
		int last = b + 1 == sizeof p_blocks / sizeof p_blocks[0];
		struct dep_counters c0, c1;
		sr->size = p_blocks[b];
		deposit_counters(&c0);
		int r = dep_send(sr, last ? dt_write_intr : DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0), dst,
				 DART_IDX(0, 0, 0, 0xff), P_BLOCK_SRC);
		deposit_counters(&c1);
		EXPECT(r == 0 && sr->size == 0, "block of %u x 16 bytes: %d", p_blocks[b], r);
		/*
		 * As many cells to a frame as the pair's frames hold (27 in
		 * Ethernet's): the block's cells are its first (24 bytes of data)
		 * and the AAL5 cells of the rest and the trailer.  Cells another
		 * thread sent meanwhile went one to a frame.
		 */
		uint64_t len16 = p_blocks[b] * 16;
		uint64_t cells = 1 + (len16 - 24 + AAL5_TRAILER + CELL_PAYLOAD - 1) / CELL_PAYLOAD;
		uint64_t others = c1.tx_cells - c0.tx_cells - cells, frames = c1.tx_frames - c0.tx_frames - others;
		uint64_t per = fabric_mtu(0) / CELL_SIZE > DEP_CELLS_PER_FRAME ? fabric_mtu(0) / CELL_SIZE
									    : DEP_CELLS_PER_FRAME;
		EXPECT(c1.tx_cells - c0.tx_cells >= cells && frames == (cells + per - 1) / per,
		       "block of %u x 16 bytes: %lu cells in %lu frames, %lu a frame (want %lu cells)", p_blocks[b],
		       (unsigned long)(c1.tx_cells - c0.tx_cells), (unsigned long)(c1.tx_frames - c0.tx_frames),
		       (unsigned long)per, (unsigned long)cells);
		if (last)
			printf("deposit-test: a block of %lu cells went in %lu frames of up to %lu cells\n",
			       (unsigned long)cells, (unsigned long)frames, (unsigned long)per);
		intrs += last;
		/* First, middle and last 32 bytes. */
		uint32_t len = p_blocks[b] * 16, at[3] = { 0, (len / 2) & ~31u, len - 32 };
		for (int k = 0; k < 3; k++) {
			int good = dt_rread(dst + at[k], 0xff, got) == 0;
			for (int i = 0; good && i < CELL_DATA; i++)
				good = got[i] == blk(at[k] + (size_t)i);
			EXPECT(good, "block %zu read back at +%u", b, at[k]);
		}
		dst += len;
	}
	/* Send-register modes: the operand is the value written to go. */
	dt_fill(dt_mine + 2560, 0x66);
	sr->mode = DART_MODE_GO_OPERAND;
	sr->opcode = DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0);
	sr->index = DART_IDX(0, 0, 0, 0xff);
	EXPECT(dep_go(sr, 2560) == 0 && sr->operand == 2560, "go with the operand from go");
	sr->mode = 0;
	EXPECT(dt_rread(2560, 0xff, got) == 0 && dt_is_fill(got, 0x66, 0xff), "deposited at the offset written to go");

	/* Priority queueing (3.4), the sender naming p, s, i (registers 13, 14, 15). */
	dt_rload(V_P, 13, P_QUEUE);
	dt_rload(V_P, 14, 32);
	dt_rload(V_P, 15, 0);
	uint32_t level = 0;
	for (size_t k = 0; k < sizeof p_prio / sizeof p_prio[0]; k++) {
		dt_fill(dt_mine + 32 * k, (uint8_t)(0xa0 + k));
		dt_send(V_P, DART_OPC(CELL_OP(CK_WRITE, CA_INDIRECT) | CO_INTR | CELL_POS(CP_MIDDLE),
				   CELL_RO(ALU_ADD, CS_A, CSRC_B), CELL_RO(ALU_OR, CS_C, CSRC_OPERAND),
				   CELL_COND(CMP_LT, CS_C, CSRC_OPERAND)),
		     p_prio[k], DART_IDX(13, 14, 15, 0xff), 32 * (uint32_t)k);
		intrs += p_prio[k] > level;
		level |= p_prio[k];
	}
	EXPECT(dt_rfetch(V_P, 0, 0, 0, 0, 0, 13, 14, 15, 0x07, w) == 0 && w[0] == P_QUEUE + 32 * 6 && w[2] == level,
	       "priority queue: p %u level %#x", w[0], w[2]);
	ok = 1;
	for (size_t k = 0; k < sizeof p_prio / sizeof p_prio[0]; k++)
		if (dt_rread(P_QUEUE + 32 * (uint32_t)k, 0xff, got) < 0 || !dt_is_fill(got, (uint8_t)(0xa0 + k), 0xff))
			ok = 0;
	EXPECT(ok, "priority queue entries in arrival order");
	/* Through an instruction pointer: only the priority and the data are the sender's. */
	for (size_t k = 0; k < sizeof p_ipprio / sizeof p_ipprio[0]; k++) {
		dt_fill(dt_mine + 32 * k, (uint8_t)(0xc0 + k));
		dt_send(V_P_IP, DART_OPC(CELL_IP | 0, 0, 0, 0), p_ipprio[k], 0, 32 * (uint32_t)k);
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
	EXPECT(dt_wait_for(storm_done, NULL, WAIT_NS), "read storm: %u replies", storm_count());
	thread_sleep_ns(100000000);
	EXPECT(storm_count() == STORM_FRAMES * DEP_CELLS_PER_FRAME, "read storm: %u replies, expected %d",
	       storm_count(), STORM_FRAMES * DEP_CELLS_PER_FRAME);

	/* Tell node 0 how many interrupts V_P should have raised. */
	memset(dt_mine, 0, 32);
	memcpy(dt_mine, &intrs, 4);
	dt_send(V_P, DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0), P_MAILBOX, DART_IDX(0, 0, 0, 0x01), 0);
	/* Everything arrived before this answer (in order). */
	EXPECT(dt_rread(P_MAILBOX, 0x01, got) == 0 && memcmp(got, &intrs, 4) == 0, "mailbox");
}

/* Node 0's part of the primitives, after they ran. */
void dt_primitives_check(void)
{
	uint8_t *p = dt_arena + dt_ep_at[E_P];
	uint32_t v, want_intrs;

	memcpy(&want_intrs, p + P_MAILBOX, 4);
	EXPECT(dt_intr_n[V_P] == want_intrs, "interrupts on V_P: %u, node 1 raised %u", dt_intr_n[V_P], want_intrs);
	/* Blocks, byte for byte. */
	uint32_t dst = P_BLOCK_DST;
	for (size_t b = 0; b < sizeof p_blocks / sizeof p_blocks[0]; b++) {
		uint32_t len = p_blocks[b] * 16, bad = 0;
		for (uint32_t i = 0; i < len; i++)
			bad += p[dst + i] != blk(i);
		EXPECT(bad == 0, "block %zu: %u bytes wrong", b, bad);
		dst += len;
	}
	EXPECT(p[dst] == dt_pat(dt_ep_at[E_P] + dst), "the byte after the last block");
	/* The IP priority queue: registers the sender could not name. */
	uint32_t level = 0;
	unsigned want = 0;
	for (size_t k = 0; k < sizeof p_ipprio / sizeof p_ipprio[0]; k++) {
		want += p_ipprio[k] > level;
		level |= p_ipprio[k];
		EXPECT(dt_is_fill(p + P_IPQUEUE + 32 * k, (uint8_t)(0xc0 + k), 0xff), "IP queue entry %zu", k);
	}
	dep_reg_get(R_IP, &v);
	EXPECT(v == P_IPQUEUE + 32 * 4, "IP queue pointer %u", v);
	dep_reg_get(R_IP + 2, &v);
	EXPECT(v == level, "IP queue level %#x", v);
	EXPECT(dt_intr_n[V_P_IP] == want, "interrupts through the instruction: %u, want %u", dt_intr_n[V_P_IP], want);
	EXPECT(dt_intr_n[V_P_IP] >= 1 && dt_intr_ops[V_P_IP][0] == p_ipprio[0], "the first interrupt's priority");
}
