/*
 * Write seed inputs for fuzz_cell in its format: frames (src selector,
 * flags with the cell count, cells) and commands (0xf0 | cmd, vci, arg).
 * The cells are valid for the connections fuzz_cell.c sets up on node 0:
 *
 *   VCI 1 from node 1: endpoint 0 (8 KiB, RW), registers 0..15, ip 0..3
 *   VCI 2 from node 1: endpoint 1 (read-only), registers 8..23, ip 2..3, replies on 3
 *   VCI 3 from node 2: endpoint 2 (write-only), registers 32..39, hold 2
 *   VCI 4 from node 1: IP only, endpoint 3 (inside 0), registers 40..47, ip 4..7
 *   VCI 5 from node 2: discard, endpoint 0, registers 0..7
 *   VCI 7 from node 5: endpoint 3, registers 48..63, ip 0..7, hold 1
 *
 * and each seed mixes deposits, register operations, conditionals,
 * reads, fetches, blocks, instruction pointers, faults and re-enables,
 * replies that cannot go, and a hold queue that fills.
 * Usage: seed_cell <dir>
 */
#include <string.h>

#include "net/deposit/cell.h"
#include "net/deposit/dart.h"
#include "tests/host/seed_common.h"

static int sel(int peer)
{
	return peer == 1 ? 0 : peer == 2 ? 1 : 2;
}

static void frame(int peer, const struct cell *c, int k)
{
	b(sel(peer));
	b(k);
	put(c, (size_t)k * CELL_SIZE);
}

static void cmd(int c, int vci, int arg)
{
	b(0xf0 | c);
	b(vci);
	b(arg);
}

static struct cell mk(int vci, uint16_t opcode, uint8_t ro1, uint8_t ro2, uint8_t cond, uint32_t operand,
		      uint8_t a, uint8_t b, uint8_t c, uint8_t mask, const uint8_t *data)
{
	struct cell_ctl ctl = { opcode, ro1, ro2, cond, operand, { a, b, c }, mask };
	struct cell out;

	cell_build(&out, (uint16_t)vci, &ctl, data);
	return out;
}

static void one(int peer, struct cell c)
{
	frame(peer, &c, 1);
}

/* A block: control cell and AAL5 cells for len bytes, as one frame. */
static void block(int peer, int vci, uint32_t off, uint32_t len)
{
	static uint8_t data[1024];
	struct cell c[27];
	struct cell_seg s;
	int k = 1;

	for (size_t i = 0; i < sizeof data; i++)
		data[i] = (uint8_t)(i * 3);
	c[0] = mk(vci, CELL_OP(CK_BLOCK, CA_DIRECT) | CO_INTR, 0, 0, CELL_COND(CMP_ALWAYS, 0, 0), off, 0, 0, 0, 0xff,
		  data);
	cell_seg_start(&s, (uint16_t)vci, data, len);
	while (k < 27 && cell_seg_next(&s, (struct cell_aal5 *)&c[k++]) == 1)
		;
	frame(peer, c, k);
}

int main(int argc, char **argv)
{
	uint8_t rctl[CELL_DATA] = { 0 };
	const uint16_t wd = CELL_OP(CK_WRITE, CA_DIRECT);

	if (argc != 2)
		return 2;
	dart_reply_ctl(rctl, DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT) | CO_INTR, 0, 0, CELL_COND(CMP_ALWAYS, 0, 0)), 64,
		       DART_IDX(0, 0, 0, 0xff));
	for (int s = 0; s < 8; s++) {
		switch (s) {
		case 0:	/* deposits and register operations */
			one(1, mk(1, wd, 0, 0, 0, 0, 0, 0, 0, 0xff, NULL));
			one(1, mk(1, wd, 0, 0, 0, 100, 0, 0, 0, 0x0f, NULL));
			one(1, mk(1, CELL_OP(CK_WRITE, CA_INDIRECT), CELL_RO(ALU_ADD, CS_A, CSRC_OPERAND), 0, 0, 48, 4, 0, 0,
				  0xff, NULL));
			one(1, mk(1, CELL_OP(CK_WRITE, CA_INDEXED) | CO_AGEN_AFTER, CELL_RO(ALU_ADD, CS_A, CSRC_B),
				  CELL_RO(ALU_SUB, CS_B, CSRC_OPERAND), 0, 4, 8, 12, 0, 0xff, NULL));
			for (int op = ALU_LOAD; op <= ALU_N; op++)
				one(1, mk(1, CELL_OP(CK_NOP, CA_NONE), CELL_RO(op, CS_A, CSRC_OPERAND), 0, 0, 7, 0, 0, 0, 0,
					  NULL));
			one(2, mk(5, wd, 0, 0, 0, 3, 0, 0, 0, 0xff, NULL));	/* misaligned: discarded */
			one(2, mk(5, wd, 0, 0, 0, 256, 0, 0, 0, 0xff, NULL));
			break;
		case 1:	/* conditionals and interrupts, priority queueing */
			for (int cmp = CMP_ALWAYS; cmp <= CMP_N; cmp++)
				one(1, mk(1, CELL_OP(CK_NOP, CA_NONE) | CO_INTR | CELL_POS(cmp % 3),
					  CELL_RO(ALU_ADD, CS_A, CSRC_OPERAND), CELL_RO(ALU_OR, CS_B, CSRC_C),
					  cmp == CMP_ALWAYS ? CELL_COND(CMP_ALWAYS, 0, 0) : CELL_COND(cmp, CS_A, CSRC_B),
					  (uint32_t)cmp, 0, 4, 8, 0, NULL));
			for (int k = 0; k < 4; k++)
				one(1, mk(1, CELL_OP(CK_WRITE, CA_INDIRECT) | CO_INTR | CELL_POS(CP_MIDDLE),
					  CELL_RO(ALU_ADD, CS_A, CSRC_B), CELL_RO(ALU_OR, CS_C, CSRC_OPERAND),
					  CELL_COND(CMP_LT, CS_C, CSRC_OPERAND), 1u << k, 0, 4, 8, 0xff, NULL));
			one(1, mk(1, CELL_OP(CK_NOP, CA_NONE) | CO_GUARD, 0, CELL_RO(ALU_LOAD, CS_A, CSRC_OPERAND),
				  CELL_COND(CMP_EQ, CS_A, CSRC_OPERAND), 0, 0, 0, 0, 0, NULL));
			break;
		case 2:	/* reads and fetches, with and without room */
			one(1, mk(1, CELL_OP(CK_READ, CA_DIRECT), 0, 0, 0, 32, 0, 0, 0, 0xff, rctl));
			one(1, mk(2, CELL_OP(CK_READ, CA_DIRECT), 0, 0, 0, 32, 0, 0, 0, 0x3c, rctl));
			one(1, mk(1, CELL_OP(CK_FETCH, CA_NONE), CELL_RO(ALU_ADD, CS_A, CSRC_OPERAND), 0, 0, 1, 0, 4, 8, 0x7f,
				  rctl));
			cmd(3, 0, 0);
			one(1, mk(1, CELL_OP(CK_READ, CA_DIRECT), 0, 0, 0, 0, 0, 0, 0, 0xff, rctl));
			cmd(3, 0, 0);
			one(1, mk(1, CELL_OP(CK_READ, CA_DIRECT), 0, 0, 0, 8192 - 32, 0, 0, 0, 0xff, rctl));
			one(5, mk(7, CELL_OP(CK_FETCH, CA_NONE) | CO_GUARD, 0, CELL_RO(ALU_LOAD, CS_A, CSRC_B),
				  CELL_COND(CMP_EQ, CS_A, CSRC_OPERAND), 0, 0, 1, 0, 0x49, rctl));
			break;
		case 3:	/* blocks, a block that runs off its endpoint, a fault in one */
			block(1, 1, 0, 96);
			block(1, 1, 1024, 1008);
			block(1, 1, 8192 - 64, 144);
			cmd(1, 1, 0);
			block(5, 7, 100, 32);
			cmd(1, 7, 0);
			break;
		case 4:	/* instruction pointers, IP-only, entry points */
			for (int ip = 0; ip < 5; ip++)
				one(1, mk(4, CELL_IP | ip, 0, 0, 0, 64 * (uint32_t)ip, 1, 2, 3, 0xff, rctl));
			one(1, mk(4, wd, 0, 0, 0, 0, 0, 0, 0, 0xff, NULL));
			one(1, mk(4, CELL_IP | 1, 0, 0, 0, 64, 0, 0, 0, 0, rctl));	/* a READ, no reply connection */
			cmd(1, 4, 0);
			one(1, mk(1, CELL_IP | 0, 0, 0, 0, 512, 0, 0, 0, 0, NULL));
			one(1, mk(1, CELL_IP | 3, 0, 0, 0, 512, 0, 0, 0, 0, NULL));
			cmd(1, 1, 0);
			cmd(1, 4, 0);
			break;
		case 5: {	/* exceptions, held cells, overrun, retry, skip, close, reopen */
			struct cell bad = mk(3, wd, 0, 0, 0, 0, 0, 0, 0, 0xff, NULL);
			bad.check ^= 1;
			one(2, bad);
			for (int k = 0; k < 4; k++)
				one(2, mk(3, wd, 0, 0, 0, 32 * (uint32_t)k, 0, 0, 0, 0xff, NULL));
			cmd(1, 3, 0);
			one(1, mk(1, CELL_OP(CK_WRITE, CA_INDIRECT), 0, 0, 0, 0, 1, 0, 0, 0xff, NULL));
			one(1, mk(1, CELL_OP(CK_SWEXC, CA_NONE), 0, 0, 0, 9, 0, 0, 0, 0, NULL));
			cmd(6, 1, 1);
			cmd(0, 1, 0);
			cmd(1, 1, 0);
			cmd(4, 2, 0);
			one(1, mk(2, wd, 0, 0, 0, 0, 0, 0, 0, 0xff, NULL));
			cmd(5, 2, 0);
			one(2, mk(1, wd, 0, 0, 0, 0, 0, 0, 0, 0xff, NULL));	/* wrong peer */
			break;
		}
		case 6:	/* replays that wait for reply room: a retried READ, then a held one */
			one(1, mk(1, CELL_OP(CK_READ, CA_INDIRECT), 0, 0, 0, 0, 9, 0, 0, 0xff, rctl));	/* <9> = 9000 */
			one(1, mk(1, CELL_OP(CK_READ, CA_DIRECT), 0, 0, 0, 64, 0, 0, 0, 0xff, rctl));
			cmd(6, 1, 9);		/* the host fixes register 9 */
			cmd(3, 0, 0);		/* no room */
			cmd(0, 1, 0);		/* retry: waits */
			cmd(2, 1, 0);
			cmd(3, 0, 0);
			cmd(3, 0, 0);		/* room again (past "node dead") */
			cmd(2, 1, 0);		/* goes on, and the held READ too */
			one(1, mk(1, CELL_OP(CK_SWEXC, CA_NONE), 0, 0, 0, 0, 0, 0, 0, 0, NULL));
			one(1, mk(1, CELL_OP(CK_READ, CA_DIRECT), 0, 0, 0, 96, 0, 0, 0, 0xff, rctl));
			cmd(3, 0, 0);
			cmd(1, 1, 0);		/* skip: the held READ waits */
			cmd(3, 0, 0);
			cmd(3, 0, 0);
			cmd(2, 1, 0);
			break;
		case 7:	/* reply node dead, reply sends that fail, a hold queue that fills behind a block */
			cmd(3, 0, 0);
			cmd(3, 0, 0);		/* the reply node is dead */
			one(1, mk(1, CELL_OP(CK_FETCH, CA_NONE), CELL_RO(ALU_ADD, CS_A, CSRC_OPERAND), 0, 0, 1, 0, 4, 8, 0x7f,
				  rctl));
			one(1, mk(1, CELL_OP(CK_READ, CA_DIRECT), 0, 0, 0, 64, 0, 0, 0, 0xff, rctl));
			cmd(3, 0, 0);		/* room */
			cmd(7, 0, 0);		/* sends find no buffer */
			cmd(0, 1, 0);
			cmd(7, 0, 0);		/* sends find the node dead */
			cmd(0, 1, 0);
			cmd(7, 0, 0);
			cmd(0, 1, 0);
			cmd(2, 1, 0);
			block(2, 3, 8192, 480);	/* VCI 3 holds 2: its block fills the queue */
			cmd(1, 3, 0);
			block(2, 3, 0, 480);
			break;
		}
		if (save(argv[1], s))
			return 1;
	}
	return 0;
}
