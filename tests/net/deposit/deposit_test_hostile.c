/*
 * deposit-test, the hostile node: a faulting cell of every exception class,
 * and node 0's checks that each changed nothing and blocked only its own
 * connection (see deposit_test.c).
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
#define STOP_DEADLINE_NS 500000000ULL	/* the stop deadline of the last case (dep_stop_timeout) */

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

	dt_fill(data, f);
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
	return dep_intr_wait(V_H_ACK, &dt_seen[V_H_ACK], WAIT_NS) >= 0;
}

/* The cell held behind case k: a deposit of held_fill(k) at H_HELD + 32 k on the victim. */
static void send_held(int vci, int k)
{
	dt_fill(dt_mine + H_SRC + 32, held_fill(k));
	if (vci == V_H_IPONLY)
		dt_send(vci, DART_OPC(CELL_IP | 0, 0, 0, 0), H_HELD + 32 * (uint32_t)k, 0, H_SRC + 32);
	else
		dt_send(vci, DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0), H_HELD + 32 * (uint32_t)k,
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

void dt_on_status(void *arg, const struct dart_exc *e)
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

void dt_hostile_run(void)
{
	static struct cell c[16];

	for (int k = 0; k < NHCASES; k++) {
		int n = hostile_cells(k, c);
		int r = dep_test_send_raw(0, c, (size_t)n * CELL_SIZE);
		EXPECT(r == 0, "case %s: send: %d", hcases[k].name, r);
		dt_fill(dt_mine + H_SRC, by_fill(k));
		dt_send(V_H_BY, DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0), H_BY + 32 * (uint32_t)k,
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
	dt_fill(dt_mine + H_SRC + 64, 0x5a);
	dt_send(V_H_BY, DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0), H_BY + 32 * 30, DART_IDX(0, 0, 0, 0xff),
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
	if (node_id != dt_prim)
		c[nc++] = ctl_cell(V_P, CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0, 0, 0, 0, 0, 0xff, 1);
	EXPECT(dep_test_send_raw(0, c, (size_t)nc * CELL_SIZE) == 0, "cells of no connection");
	EXPECT(dep_test_send_raw(0, c, 60) == 0, "a torn frame");
	dt_fill(dt_mine + H_SRC, 0x7e);
	dt_send(V_H_BY, DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0), H_BY + 32 * 31, DART_IDX(0, 0, 0, 0xff), H_SRC);
	EXPECT(wait_ack(), "no go-ahead after the cells of no connection");
	/* Status (6.3): node 0 blocks our end of V_H_STATUS; sending with STATUS_EXC is an exception. */
	EXPECT(dt_wait_for(blocked_27, NULL, WAIT_NS), "V_H_STATUS never blocked here");
	struct dart_sendregs *sr = dep_sendregs(V_H_STATUS);
	dt_fill(dt_mine + H_SRC, 0x27);
	sr->mode = DART_MODE_STATUS_EXC;
	sr->opcode = DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0);
	sr->operand = H_STATUS;
	sr->index = DART_IDX(0, 0, 0, 0xff);
	EXPECT(dep_go(sr, H_SRC) == -EIO, "go while the status is non-zero");
	EXPECT(dt_wait_for(status_reported, NULL, WAIT_NS), "no DEX_STATUS exception reported");
	EXPECT(status_exc.cls == DEX_CHECK, "the cell that blocked us: %s", dart_exc_names[status_exc.cls]);
	sr->mode = 0;
	EXPECT(dep_go(sr, H_SRC) == 0, "go without the status mode");
	EXPECT(dep_conn_resume(V_H_STATUS, DART_SKIP) == 0, "re-enable V_H_STATUS");
	/*
	 * A stop no go follows: node 0 stops V_H_BY and lets it go only once
	 * told.  The send gives up at the stop deadline (-ETIMEDOUT), the
	 * node's other connection still goes (the marker), and after node 0's
	 * go the same send goes through.
	 */
	EXPECT(wait_ack(), "no go-ahead before the stop without a go");
	uint64_t was = dep_stop_timeout(STOP_DEADLINE_NS);
	struct dep_counters fb, fa;
	deposit_counters(&fb);
	dt_fill(dt_mine + H_SRC, 0x44);
	struct dart_sendregs *by = dep_sendregs(V_H_BY);
	int r = by ? dep_send(by, DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0), H_BY + 32 * 29,
			      DART_IDX(0, 0, 0, 0xff), H_SRC) : -EBADF;
	deposit_counters(&fa);
	EXPECT(r == -ETIMEDOUT && fa.flow_timeouts == fb.flow_timeouts + 1,
	       "a stop without a go: the send gave %d, %lu past the deadline", r, fa.flow_timeouts - fb.flow_timeouts);
	dep_stop_timeout(was);
	dt_fill(dt_mine + H_SRC + 32, 0x62);
	dt_send(V_H_DISCARD, DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0), H_DISC + 32, DART_IDX(0, 0, 0, 0xff),
		H_SRC + 32);
	EXPECT(wait_ack(), "no go from node 0 after the deadline");
	dt_send(V_H_BY, DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0), H_BY + 32 * 29, DART_IDX(0, 0, 0, 0xff),
		H_SRC);
}

/* Node 0: the expected image of its hostile-facing endpoints and registers. */
static uint8_t expect_h[PG], expect_wo[PG];
static uint32_t expect_reg[DART_NREGS];

static void expect_fill(uint8_t *img, uint32_t off, uint8_t f)
{
	dt_fill(img + off, f);
}

/* Node 0's endpoints H and WO, and every register, are exactly as expected. */
static int image_ok(const char *when)
{
	const uint8_t *h = dt_arena + dt_ep_at[E_H], *wo = dt_arena + dt_ep_at[E_WO];
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
	return dt_is_fill(l->p, l->f, 0xff);
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
	dt_send(V_H_ACK, dt_write_intr, H_ACK_AT, DART_IDX(0, 0, 0, 0x01), 0);
}

void dt_hostile_check(void)
{
	uint8_t *h = dt_arena + dt_ep_at[E_H], *wo = dt_arena + dt_ep_at[E_WO];
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
		if (!dt_wait_exc(hc->vci, k == 0 ? FIRST_WAIT_NS : WAIT_NS)) {
			EXPECT(0, "case %s: no exception", hc->name);
			return;
		}
		const struct dart_exc *e = &dt_last_exc[hc->vci];
		EXPECT(e->cls == hc->cls, "case %s: exception %s, expected %s", hc->name, dart_exc_names[e->cls],
		       dart_exc_names[hc->cls]);
		if (legit != UINT32_MAX)
			expect_fill(expect_h, legit, lf);
		/* The bystander from the same node lands; the victim holds its cell. */
		struct landed by = { h + H_BY + 32 * k, by_fill(k) };
		EXPECT(dt_wait_for(has_landed, &by, WAIT_NS), "case %s: the other connection stalled", hc->name);
		expect_fill(expect_h, H_BY + 32 * (uint32_t)k, by_fill(k));
		/* Held: the cells after the fault in its frame (a block's rest), then the deposit. */
		int vci = hc->vci;
		struct heldn hn = { vci, k == 20 ? 3 : 1, 0 };
		EXPECT(dt_wait_for(held_n, &hn, WAIT_NS), "case %s: not all held", hc->name);
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
		EXPECT(dt_is_fill(held_mem + H_HELD + 32 * k, held_fill(k), 0xff), "case %s: held cell not applied", hc->name);
		image_ok(hc->name);
		ack();
	}
	EXPECT(dt_unexpected_exc == 0, "%u unexpected exceptions", dt_unexpected_exc);

	/*
	 * Past the hold queue: 4 held in it, the rest of the frame and the
	 * flood in the spill pool, nothing refused, the sender told to stop;
	 * and the same node's other connection goes on meanwhile (6.4: "cells
	 * belonging to other connections can be processed").
	 */
	int failed_before = check_failures;
	struct heldn hn = { V_H_SMALL, 8, 0 };
	EXPECT(dt_wait_exc(V_H_SMALL, WAIT_NS) && dt_wait_for(held_n, &hn, WAIT_NS), "hold full: not 8 held");
	struct landed byf = { h + H_BY + 32 * 30, 0x5a };
	EXPECT(dt_wait_for(has_landed, &byf, WAIT_NS), "hold full: the same node's other connection stalled");
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
	EXPECT(dt_wait_for(has_landed, &ovr, WAIT_NS), "hold full: the held cells never landed");
	EXPECT(dt_wait_for(flood_landed, NULL, WAIT_NS), "flood: a = %u of %d", flood_reg(13), FLOOD);
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
	EXPECT(dt_wait_for(has_landed, &d, WAIT_NS), "discard: the next cell never landed");
	expect_fill(expect_h, H_DISC, 0x61);
	EXPECT(dep_conn_info(V_H_DISCARD, &ci) == 0 && ci.state == DC_OPEN && ci.discarded == 1 &&
		       dt_exc_count[V_H_DISCARD] == 0, "discard: state %d discarded %lu handler calls %u", ci.state,
	       ci.discarded, dt_exc_count[V_H_DISCARD]);
	image_ok("discard");
	deposit_counters(&c0);
	ack();
	/* Cells of no connection: counted, nothing changes, nothing blocks. */
	struct landed m = { h + H_BY + 32 * 31, 0x7e };
	EXPECT(dt_wait_for(has_landed, &m, WAIT_NS), "the marker after the cells of no connection never landed");
	expect_fill(expect_h, H_BY + 32 * 31, 0x7e);
	deposit_counters(&c1);
	EXPECT(c1.dart.bad_hec - c0.dart.bad_hec == 1 && c1.dart.bad_header - c0.dart.bad_header == 2 &&
		       c1.dart.no_conn - c0.dart.no_conn == 2 && c1.bad_frames - c0.bad_frames == 1 &&
		       c1.dart.wrong_peer - c0.dart.wrong_peer == (dt_hostile != dt_prim),
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
	EXPECT(dep_test_send_raw(dt_hostile, &bad, CELL_SIZE) == 0, "send the status blocker");
	struct landed s = { h + H_STATUS, 0x27 };
	EXPECT(dt_wait_for(has_landed, &s, WAIT_NS), "the deposit after the status exception never landed");
	expect_fill(expect_h, H_STATUS, 0x27);
	image_ok("end of the hostile cases");
	/* A stop without a go (the hostile node's last case): its send must give up, not wait forever. */
	EXPECT(dep_test_send_flow(dt_hostile, V_H_BY, 1) == 0, "send the stop");
	ack();
	struct landed mk = { h + H_DISC + 32, 0x62 };
	EXPECT(dt_wait_for(has_landed, &mk, WAIT_NS), "the marker after the stop deadline never landed");
	expect_fill(expect_h, H_DISC + 32, 0x62);
	EXPECT(dep_test_send_flow(dt_hostile, V_H_BY, 0) == 0, "send the go");
	ack();
	struct landed after = { h + H_BY + 32 * 29, 0x44 };
	EXPECT(dt_wait_for(has_landed, &after, WAIT_NS), "the send after the go never landed");
	expect_fill(expect_h, H_BY + 32 * 29, 0x44);
	image_ok("after a stop without a go");
	/* Every class was raised and handled. */
	for (int cls = DEX_CHECK; cls <= DEX_SOFTWARE; cls++)
		EXPECT(dt_exc_by_class[cls] > 0, "no %s exception seen", dart_exc_names[cls]);
}
