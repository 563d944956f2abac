/*
 * deposit-test, every node: fetch-and-increment and compare-and-swap under
 * contention, the barrier built from register operations, the multicast
 * connection and the sequencer (see deposit_test.c).
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

/* --- contention and the barrier ----------------------------------------------------------- */

int dt_c_iters;

void dt_contend(void)
{
	int vci = V_C + node_id, bad = 0;
	uint32_t w[8], last = 0, guess = 0;
	uint8_t stage = (uint8_t)(1 + node_id);

	for (int i = 0; i < dt_c_iters; i++) {
		/* Fetch-and-increment of register R_CNT. */
		if (dt_rfetch(vci, 0, CELL_RO(ALU_ADD, CS_A, CSRC_OPERAND), 0, 0, 1, 0, 0, 0, 0x01, w) < 0) {
			bad++;
			break;
		}
		if (i > 0 && w[0] <= last)
			bad++;
		last = w[0];
		/* Compare-and-swap increment of R_CNT + 1 through this node's staging register. */
		for (int tries = 0; tries < 10000; tries++) {
			dt_rload(vci, stage, guess + 1);
			if (dt_rfetch(vci, CO_GUARD, 0, CELL_RO(ALU_LOAD, CS_A, CSRC_B), CELL_COND(CMP_EQ, CS_A, CSRC_OPERAND),
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

void dt_contend_local(void)
{
	for (int i = 0; i < dt_c_iters; i++) {
		dep_reg_op(R_CNT, ALU_ADD, 1, NULL);
		dep_reg_op(R_CNT + 1, ALU_ADD, 1, NULL);
		if (i % 8 == 0)
			thread_sleep_ns(1000000);
	}
}

static volatile uint64_t bar_intrs;
static struct waitq bar_wq = WAITQ_INIT;

void dt_on_barrier(void *arg, const struct dart_event *ev)
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
	memcpy(dt_epb + 1024, &round, 4);
	for (int m = 0; m < num_nodes; m++)
		if (m != node_id)
			dt_send(dt_vci_bar(node_id, m), DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0), 32 * (uint32_t)node_id,
			     DART_IDX(0, 0, 0, 0x01), 1024);
	irqflags_t f = irq_save();
	uint64_t seen_b = bar_intrs;
	dep_reg_op(R_BAR + breg, ALU_XOR, 1u << node_id, &v);
	irq_restore(f);
	int done = v == target;
	for (int m = 0; m < num_nodes; m++)
		if (m != node_id)
			dt_send(dt_vci_bar(node_id, m),
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

void dt_barrier_rounds(int rounds)
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
			memcpy(&got, dt_epb + 32 * m, 4);
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

/* --- multicast (3.2) ------------------------------------------------------------------------ */

#define M_CELL_AT (MINE_LEN - 256)	/* where the multicast cell lands in each member's endpoint */
#define M_BLOCK_AT (MINE_LEN - 192)	/* and the block after it: 80 bytes, one control and one AAL5 cell */
#define M_SRC_CELL 512			/* their source: node 0's contention endpoint, which holds its pattern */
#define M_SRC_BLOCK 1024
#define M_BLOCK_LEN 80

#define M_INCS 200			/* multicast cells that each add 1 to R_MC at every member */

/* Every node but 0: its end of the multicast connection from node 0 (register R_MC its window). */
void dt_multicast_open(void)
{
	if (node_id != 0) {
		dep_reg_set(R_MC, 0);
		dep_reg_protect(R_MC, DART_REG_R | DART_REG_W);
		dt_open_conn(V_M, 0, dt_ep_mine, DART_RX, -1, R_MC, 1, 0, 0, 0);
		EXPECT(dep_on_intr(V_M, NULL, NULL) == 0, "interrupts on the multicast connection");
		return;
	}
	uint64_t others = ((1ULL << num_nodes) - 1) & ~1ULL;
	struct dep_conn_cfg bad = { 1, dt_ep0[E_C], DART_TX, -1, 0, 0, 0, 0, 0, others | 1 };
	EXPECT(dep_conn_open(V_M, &bad) == -EINVAL, "a multicast group with this node in it was opened");
	bad.group = others;
	bad.flags = DART_RX | DART_TX;
	EXPECT(dep_conn_open(V_M, &bad) == -EINVAL, "a multicast connection that receives was opened");
	struct dep_conn_cfg cfg = { 1, dt_ep0[E_C], DART_TX, -1, 0, 0, 0, 0, 0, others };
	EXPECT(dep_conn_open(V_M, &cfg) == 0, "open the multicast connection");
}

/*
 * Node 0 sends one cell and one block on it; every member finds both, each
 * after its interrupt.  Then M_INCS cells that each add 1 to the member's
 * register: one frame for the group each (hybrid deposit 3.2), and under
 * dropped and doubled frames every member's register ends at exactly
 * M_INCS (each cell's register operation applied once per member).
 */
static int mc_done(void *arg)
{
	uint32_t v = 0;

	(void)arg;
	dep_reg_get(R_MC, &v);
	return v >= M_INCS;
}

/* n cells on the multicast connection, each adding 1 to register A of every member; none after one refused. */
static void mc_increments(struct dart_sendregs *sr, int n, const char *where)
{
	int r = 0;

	for (int i = 0; i < n && r == 0; i++) {
		sr->size = 0;
		r = dep_send(sr, DART_OPC(CELL_OP(CK_NOP, CA_NONE), CELL_RO(ALU_ADD, CS_A, CSRC_OPERAND), 0, 0), 1,
			     DART_IDX(0, 0, 0, 0), M_SRC_CELL);
		EXPECT(r == 0, "multicast increment %d%s: %d", i, where, r);
	}
}

void dt_multicast_run(void)
{
	if (node_id == 0) {
		struct dart_sendregs *sr = dep_sendregs(V_M);
		EXPECT(sr != NULL, "send registers of the multicast connection");
		if (!sr)
			return;
		sr->size = 0;
		int r = dep_send(sr, dt_write_intr, M_CELL_AT, DART_IDX(0, 0, 0, 0xff), M_SRC_CELL);
		EXPECT(r == 0, "multicast cell: %d", r);
		sr->size = M_BLOCK_LEN / 16;
		r = dep_send(sr, dt_write_intr, M_BLOCK_AT, DART_IDX(0, 0, 0, 0xff), M_SRC_BLOCK);
		EXPECT(r == 0, "multicast block: %d", r);
		if (r == 0)
			mc_increments(sr, M_INCS, "");
		return;
	}
	uint64_t dt_seen = 0;
	long n = 0;
	uint64_t end = cycles() + ns_to_cycles(WAIT_NS);
	while (n < 2 && cycles() < end)
		n = dep_intr_wait(V_M, &dt_seen, WAIT_NS);
	EXPECT(n >= 2, "node %d: %ld multicast interrupts, expected 2", node_id, n);
	int bad = 0;
	for (int i = 0; i < 32; i++)
		bad += dt_mine[M_CELL_AT + i] != dt_pat(dt_ep_at[E_C] + M_SRC_CELL + (size_t)i);
	for (int i = 0; i < M_BLOCK_LEN; i++)
		bad += dt_mine[M_BLOCK_AT + i] != dt_pat(dt_ep_at[E_C] + M_SRC_BLOCK + (size_t)i);
	EXPECT(bad == 0, "node %d: %d bytes of the multicast cell and block wrong", node_id, bad);
	uint32_t v = 0;
	dt_wait_for(mc_done, NULL, WAIT_NS);
	thread_sleep_ns(100000000);		/* a doubled cell would land by now */
	dep_reg_get(R_MC, &v);
	EXPECT(v == M_INCS, "node %d: the multicast increments left %u in its register, not %d", node_id, v, M_INCS);
	if (bad == 0 && v == M_INCS) {
		struct fabric_counters fc;
		fabric_counters(&fc);
		printf("deposit-test: node %d got the multicast cell and block, and %d increments once each "
		       "(multicast frames taken: %lu)\n", node_id, M_INCS, (unsigned long)fc.rx_mcast);
	}
}

/*
 * A stop from one member holds that member only (6.4 with 3.2): the last
 * node makes page 0 of its endpoint read-only; node 0 sends a WRITE there
 * (an exception at the last node, which holds what follows behind it) and
 * M_STOPS increments.  Once the last node holds half its queue it says
 * stop; node 0's next cells go to the other members at once and to the
 * last node when it says go, which it does once it has made the page
 * writable again and retried the WRITE.  Every member ends with the
 * WRITE's data and every increment once.
 */
#define M_STOPS 100
#define M_STOP_AT 3072			/* on page 0 of each member's endpoint */

static int stop_done(void *arg)
{
	uint32_t v = 0;

	(void)arg;
	dep_reg_get(R_MC, &v);
	return v >= M_INCS + M_STOPS;
}

static int said_stop(void *arg)
{
	struct dep_conn_info ci;

	(void)arg;
	return dep_conn_info(V_M, &ci) == 0 && ci.flow_stop;
}

void dt_multicast_stop(void)
{
	int last = num_nodes - 1;

	if (node_id == last) {
		EXPECT(dep_on_exception(V_M, dt_on_exception, NULL) == 0, "V_M exception handler");
		EXPECT(dep_endpoint_protect(dt_ep_mine, 0, PG, DART_EP_READ) == 0, "page 0 read-only");
	}
	EXPECT(cluster_barrier(60000000000ULL) == 0, "barrier before the multicast stop");
	if (node_id == 0) {
		struct dart_sendregs *sr = dep_sendregs(V_M);
		struct dep_counters c0, c1;
		int r;
		deposit_counters(&c0);
		sr->size = 0;
		r = dep_send(sr, DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT), 0, 0, 0), M_STOP_AT, DART_IDX(0, 0, 0, 0xff),
			     M_SRC_CELL);
		EXPECT(r == 0, "the WRITE the last member refuses: %d", r);
		if (r == 0)
			mc_increments(sr, M_STOPS, " behind the stop");
		deposit_counters(&c1);
		EXPECT(c1.mcast_held > c0.mcast_held, "no multicast cell went to the others before the stopped member");
		if (c1.mcast_held > c0.mcast_held)
			printf("deposit-test: node %d said stop: %lu multicast cells went to the other members first, "
			       "and to it at its go\n", last, (unsigned long)(c1.mcast_held - c0.mcast_held));
		return;
	}
	if (node_id == last) {
		EXPECT(dt_wait_exc(V_M, WAIT_NS), "no exception from the read-only page");
		EXPECT(dt_wait_for(said_stop, NULL, WAIT_NS), "the connection never said stop");
		thread_sleep_ns(300000000);		/* node 0 meanwhile sends to the others */
		EXPECT(dep_endpoint_protect(dt_ep_mine, 0, PG, DART_EP_READ | DART_EP_WRITE) == 0, "page 0 writable");
		int r = dep_conn_resume(V_M, DART_RETRY);
		EXPECT(r == 0 || r == -EAGAIN, "retry the WRITE: %d", r);
	}
	uint32_t v = 0;
	EXPECT(dt_wait_for(stop_done, NULL, WAIT_NS), "node %d: the increments behind the stop never came", node_id);
	thread_sleep_ns(100000000);
	dep_reg_get(R_MC, &v);
	int bad = 0;
	for (int i = 0; i < 32; i++)
		bad += dt_mine[M_STOP_AT + i] != dt_pat(dt_ep_at[E_C] + M_SRC_CELL + (size_t)i);
	EXPECT(v == M_INCS + M_STOPS && bad == 0, "node %d after the stop: register %u (not %d), %d bytes wrong",
	       node_id, v, M_INCS + M_STOPS, bad);
	if (v == M_INCS + M_STOPS && bad == 0)
		printf("deposit-test: node %d has the WRITE and the %d increments sent behind the stop, once each\n",
		       node_id, M_STOPS);
}

/* --- the sequencer (6.5) --------------------------------------------------------------------- */

#define S_IP 200		/* V_S's instruction window: 200..203 */
const uint32_t dt_s_stride[S_CELLS] = { 32, 64, 32, 96 };

/*
 * Node 0: V_S from node 1, IP-only, three instructions run by one cell:
 * b <- the message's operand (the stride); c <- c + 1; WRITE at <a>,
 * a <- a + b, an interrupt.  The registers are the destination's alone.
 */
void dt_sequencer_open(void)
{
	if (node_id == 1) {
		dt_open_conn(V_S, 0, dt_ep_mine, DART_TX, -1, 0, 0, 0, 0, 0);
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
	dt_open_conn(V_S, 1, dt_ep0[E_P], DART_RX | DART_IPONLY, -1, R_SEQ, 3, S_IP, 4, 0);
	EXPECT(dep_on_intr(V_S, NULL, NULL) == 0, "interrupts on V_S");
}

/* Node 1 sends S_CELLS instruction-pointer cells; node 0 checks what the sequences did. */
void dt_sequencer_run(void)
{
	if (node_id == 1) {
		struct dart_sendregs *sr = dep_sendregs(V_S);
		EXPECT(sr != NULL, "V_S send registers");
		for (int k = 0; sr && k < S_CELLS; k++) {
			dt_fill(dt_mine + 512 + 32 * k, (uint8_t)(0x60 + k));
			sr->size = 0;
			int r = dep_send(sr, DART_OPC(CELL_IP | 0, 0, 0, 0), dt_s_stride[k], 0, 512 + 32 * (uint32_t)k);
			EXPECT(r == 0, "sequenced cell %d: %d", k, r);
		}
		return;
	}
	if (node_id != 0)
		return;
	uint64_t dt_seen = 0, end = cycles() + ns_to_cycles(WAIT_NS);
	long n = 0;
	while (n < S_CELLS && cycles() < end)
		n = dep_intr_wait(V_S, &dt_seen, WAIT_NS);
	EXPECT(n >= S_CELLS, "%ld interrupts from the sequences, expected %d", n, S_CELLS);
	uint32_t a, b, c, at = S_AT;
	dep_reg_get(R_SEQ, &a);
	dep_reg_get(R_SEQ + 1, &b);
	dep_reg_get(R_SEQ + 2, &c);
	int bad = 0;
	for (int k = 0; k < S_CELLS; k++) {
		bad += !dt_is_fill(dt_arena + dt_ep_at[E_P] + at, (uint8_t)(0x60 + k), 0xff);
		at += dt_s_stride[k];
	}
	EXPECT(c == S_CELLS && b == dt_s_stride[S_CELLS - 1] && a == at && bad == 0,
	       "sequences: a %u (expected %u), b %u, c %u, %d deposits wrong", a, at, b, c, bad);
	struct dep_counters dc;
	deposit_counters(&dc);
	EXPECT(dc.dart.sequenced >= 2 * S_CELLS, "sequenced %lu instructions", dc.dart.sequenced);
	if (c == S_CELLS && bad == 0)
		printf("deposit-test: %d cells ran %d instructions each through the sequencer\n", S_CELLS, 3);
}
