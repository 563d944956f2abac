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
#include "kernel/vm.h"
#include "kernel/x86.h"
#include "net/call/barrier.h"
#include "net/deposit/deposit.h"
#include "net/fabric/fabric.h"
#include "tests/apps/check.h"
#include "tests/net/deposit/deposit_test.h"

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
		EXPECT(r == dt_vci_bar(0, m), "node %d's bar0: %d, expected VCI %d", m, r, dt_vci_bar(0, m));
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
	dt_arena_len = node_id == 0 ? ARENA0 : ARENA1;
	dt_arena = page_alloc_zeroed(dt_arena_len);
	if (!dt_arena)
		return -1;
	for (size_t i = 0; i < dt_arena_len; i++)
		dt_arena[i] = dt_pat(i);
	for (unsigned r = 0; r < DART_NREGS; r++) {
		dep_reg_set(r, dt_reg_pat(r));
		dep_reg_protect(r, 0);
	}
	dep_on_exception(-1, dt_on_exception, (void *)1);
	/* The barrier: B0, B1 (sender-writable), full, zero (readable), between every pair. */
	dt_epb = dt_arena + (node_id == 0 ? dt_ep_at[E_B] : BAR_AT);
	dt_ep_bar = dep_endpoint_create(dt_epb, PG, DART_EP_WRITE);
	dep_reg_set(R_BAR, 0);
	dep_reg_set(R_BAR + 1, 0);
	dep_reg_set(R_BAR + 2, (uint32_t)((1u << num_nodes) - 1));
	dep_reg_set(R_BAR + 3, 0);
	for (int i = 0; i < 4; i++)
		dep_reg_protect(R_BAR + (unsigned)i, i < 2 ? DART_REG_R | DART_REG_W : DART_REG_R);
	for (int m = 0; m < num_nodes; m++) {
		if (m == node_id)
			continue;
		if (dt_open_conn(dt_vci_bar(node_id, m), m, dt_ep_bar, DART_RX | DART_TX, -1, R_BAR, 4, 0, 0, 0) < 0 ||
		    dep_on_intr(dt_vci_bar(node_id, m), dt_on_barrier, NULL) < 0)
			return -1;
		/* Named for the name service: "bar<m>" is this node's connection with m. */
		char name[16];
		snprintf(name, sizeof name, "bar%d", m);
		EXPECT(dep_conn_export(dt_vci_bar(node_id, m), name) == 0, "export %s", name);
	}
	if (num_nodes > 2 && node_id == 0)
		EXPECT(dep_conn_export(dt_vci_bar(0, 2), "bar1") == -EEXIST, "a name names one connection");
	if (node_id != 0) {
		dt_mine = dt_arena + MINE_AT;
		dt_ep_mine = dep_endpoint_create(dt_mine, MINE_LEN, DART_EP_READ | DART_EP_WRITE);
		if (dt_ep_mine < 0)
			return -1;
		dt_open_conn(V_C + node_id, 0, dt_ep_mine, DART_RX | DART_TX, V_C + node_id, 0, 0, 0, 0, 0);
		if (node_id == dt_prim) {
			dep_reg_set(R_STORM, 0);
			dep_reg_protect(R_STORM, DART_REG_R | DART_REG_W);
			dt_open_conn(V_P, 0, dt_ep_mine, DART_RX | DART_TX, V_P, R_STORM, 1, 0, 0, 0);
			dt_open_conn(V_P_REQ, 0, dt_ep_mine, DART_TX, -1, 0, 0, 0, 0, 0);
			dt_open_conn(V_P_REPLY, 0, dt_ep_mine, DART_RX, -1, 0, 0, 0, 0, 0);
			dt_open_conn(V_P_IP, 0, dt_ep_mine, DART_TX, -1, 0, 0, 0, 0, 0);
		}
		if (node_id == dt_hostile) {
			static const int tx[] = { V_H, V_H_BY, V_H_NOREPLY, V_H_IPONLY, V_H_SMALL, V_H_DISCARD, V_H_WO };
			for (size_t i = 0; i < sizeof tx / sizeof tx[0]; i++)
				dt_open_conn(tx[i], 0, dt_ep_mine, tx[i] == V_H ? DART_RX | DART_TX : DART_TX, -1, 0, 0, 0, 0, 0);
			dt_open_conn(V_H_ACK, 0, dt_ep_mine, DART_RX, -1, 0, 0, 0, 0, 0);
			dt_open_conn(V_H_STATUS, 0, dt_ep_mine, DART_RX | DART_TX, -1, 0, 0, 0, 0, 0);
			dep_on_exception(V_H_STATUS, dt_on_status, NULL);
		}
		return 0;
	}

	/* Node 0: endpoints, registers, instructions, connections. */
	for (int e = 0; e < NEP; e++) {
		if (e == E_B) {
			dt_ep0[e] = dt_ep_bar;
			continue;
		}
		dt_ep0[e] = dep_endpoint_create(dt_arena + dt_ep_at[e], dt_ep_len[e],
					     e == E_WO ? DART_EP_WRITE : DART_EP_READ | DART_EP_WRITE);
		EXPECT(dt_ep0[e] >= 0, "endpoint %d: %d", e, dt_ep0[e]);
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
		dt_open_conn(V_C + n, n, dt_ep0[E_C], DART_RX | DART_TX, V_C + n, R_CNT, 2 + (unsigned)n, 0, 0, 0);
		dep_on_exception(V_C + n, dt_on_exception, (void *)1);
	}
	dt_open_conn(V_P, dt_prim, dt_ep0[E_P], DART_RX | DART_TX, V_P, R_P, 32, 0, 0, 0);
	dt_open_conn(V_P_REQ, dt_prim, dt_ep0[E_P], DART_RX, V_P_REPLY, R_P, 32, 0, 0, 0);
	dt_open_conn(V_P_REPLY, dt_prim, dt_ep0[E_P], DART_TX, -1, 0, 0, 0, 0, 0);
	dt_open_conn(V_P_IP, dt_prim, dt_ep0[E_P], DART_RX | DART_IPONLY, -1, R_IP, 16, 8, 4, 0);
	dep_on_intr(V_P, dt_record_intr, NULL);
	dep_on_intr(V_P_IP, dt_record_intr, NULL);
	dt_open_conn(V_H, dt_hostile, dt_ep0[E_H], DART_RX | DART_TX, V_H, R_H, 16, 0, 4, 0);
	dt_open_conn(V_H_BY, dt_hostile, dt_ep0[E_H], DART_RX, -1, R_BY, 16, 0, 0, 0);
	dt_open_conn(V_H_ACK, dt_hostile, dt_ep0[E_H], DART_TX, -1, 0, 0, 0, 0, 0);
	dt_open_conn(V_H_NOREPLY, dt_hostile, dt_ep0[E_H], DART_RX, -1, R_H, 16, 0, 0, 0);
	dt_open_conn(V_H_IPONLY, dt_hostile, dt_ep0[E_H], DART_RX | DART_IPONLY, -1, R_H, 16, 0, 4, 0);
	dt_open_conn(V_H_SMALL, dt_hostile, dt_ep0[E_H], DART_RX, -1, R_H, 16, 0, 0, 4);
	dt_open_conn(V_H_DISCARD, dt_hostile, dt_ep0[E_H], DART_RX | DART_DISCARD, -1, R_H, 16, 0, 0, 0);
	dt_open_conn(V_H_STATUS, dt_hostile, dt_ep0[E_H], DART_RX | DART_TX, -1, R_H, 16, 0, 0, 0);
	dt_open_conn(V_H_WO, dt_hostile, dt_ep0[E_WO], DART_RX, V_H_ACK, R_H, 16, 0, 0, 0);
	static const int victims[] = { V_H, V_H_NOREPLY, V_H_IPONLY, V_H_SMALL, V_H_WO };
	for (size_t i = 0; i < sizeof victims / sizeof victims[0]; i++)
		dep_on_exception(victims[i], dt_on_exception, NULL);
	return check_failures ? -1 : 0;
}

/* --- page protection inside an endpoint (3.2, 3.5) ------------------------------------------------ */

/* Node 0: the page the sequences deposit into becomes read-only; their exceptions are expected. */
static void protect_open(void)
{
	if (node_id != 0)
		return;
	EXPECT(dep_on_exception(V_S, dt_on_exception, NULL) == 0, "V_S exception handler");
	EXPECT(dep_endpoint_protect(dt_ep0[E_P], 100, PG, DART_EP_READ) == -EINVAL, "a range not on a page");
	EXPECT(dep_endpoint_protect(dt_ep0[E_P], PG, PG, DART_EP_READ) == 0, "page 1 of P read-only");
}

/*
 * Node 1 first sends from a page of its own endpoint it made no-access:
 * the send is refused (-EFAULT) and raises the page-fault exception at
 * node 1 (the source pages are checked as a READ's, 3.2).  Then it sends
 * one more sequence; at node 0 its deposit would fall on the read-only
 * page: the page-fault exception (6.5), the sequence's registers and the
 * page as they were.  Node 0 makes the page writable again and retries:
 * the cell lands.  The pages' rights are their page-table entries.
 */
static void protect_run(void)
{
	if (node_id == 1) {
		struct dart_sendregs *sr = dep_sendregs(V_S);
		dt_fill(dt_mine + 1024, 0x70);
		EXPECT(dep_on_exception(V_S, dt_on_exception, NULL) == 0, "V_S exception handler at the sender");
		if (sr) {
			EXPECT(dep_endpoint_protect(dt_ep_mine, 0, PG, 0) == 0, "page 0 of node 1's endpoint no-access");
			EXPECT(vm_rights((uintptr_t)dt_mine) == 0, "its page-table entry: rights %d", vm_rights((uintptr_t)dt_mine));
			sr->size = 0;
			int r = dep_send(sr, DART_OPC(CELL_IP | 0, 0, 0, 0), 32, 0, 1024);
			EXPECT(dep_endpoint_protect(dt_ep_mine, 0, PG, DART_EP_READ | DART_EP_WRITE) == 0,
			       "page 0 of node 1's endpoint readable again");
			EXPECT(r == -EFAULT, "a send from a page the sender may not read: %d", r);
			EXPECT(dt_wait_exc(V_S, WAIT_NS) && dt_last_exc[V_S].cls == DEX_PAGE && dt_last_exc[V_S].detail == 1024,
			       "the sender's page fault: %s at %#x", dart_exc_names[dt_last_exc[V_S].cls],
			       dt_last_exc[V_S].detail);
			if (r == -EFAULT && dt_last_exc[V_S].cls == DEX_PAGE)
				printf("deposit-test: a send from a page the sender may not read was refused: "
				       "a page fault at the sender\n");
			sr->size = 0;
			r = dep_send(sr, DART_OPC(CELL_IP | 0, 0, 0, 0), 32, 0, 1024);
			EXPECT(r == 0, "the sequence into the protected page: %d", r);
		}
		return;
	}
	if (node_id != 0)
		return;
	uint32_t at = S_AT, a, b, c;
	for (int k = 0; k < S_CELLS; k++)
		at += dt_s_stride[k];
	EXPECT(dt_wait_exc(V_S, WAIT_NS), "no exception from the protected page");
	struct dep_conn_info ci;
	dep_conn_info(V_S, &ci);
	dep_reg_get(R_SEQ, &a);
	dep_reg_get(R_SEQ + 1, &b);
	dep_reg_get(R_SEQ + 2, &c);
	EXPECT(ci.state == DC_EXCEPTION && dt_last_exc[V_S].cls == DEX_PAGE && dt_last_exc[V_S].detail == at,
	       "exception %s at %#x, state %d (expected page_fault at %#x)", dart_exc_names[dt_last_exc[V_S].cls],
	       dt_last_exc[V_S].detail, ci.state, at);
	EXPECT(vm_rights((uintptr_t)dt_arena + dt_ep_at[E_P] + PG) == DART_EP_READ,
	       "the read-only page's entry: rights %d", vm_rights((uintptr_t)dt_arena + dt_ep_at[E_P] + PG));
	EXPECT(a == at && b == dt_s_stride[S_CELLS - 1] && c == S_CELLS && !dt_is_fill(dt_arena + dt_ep_at[E_P] + at, 0x70, 0xff),
	       "a refused sequence changed something: a %u b %u c %u", a, b, c);
	EXPECT(dep_endpoint_protect(dt_ep0[E_P], PG, PG, DART_EP_READ | DART_EP_WRITE) == 0, "page 1 writable again");
	uint64_t dt_seen = 0;
	dep_intr_wait(V_S, &dt_seen, 0);		/* the interrupts so far */
	EXPECT(dep_conn_resume(V_S, DART_RETRY) == 0, "retry the sequence");
	dep_reg_get(R_SEQ, &a);
	dep_reg_get(R_SEQ + 2, &c);
	EXPECT(a == at + 32 && c == S_CELLS + 1 && dt_is_fill(dt_arena + dt_ep_at[E_P] + at, 0x70, 0xff),
	       "the retried sequence: a %u c %u", a, c);
	if (a == at + 32 && c == S_CELLS + 1)
		printf("deposit-test: a deposit into a read-only page was refused (a page fault), and landed once it "
		       "was writable\n");
}

/* Node 0, at the end: the guards, and registers no window reaches. */
static void final_check(void)
{
	size_t bad = 0;

	for (size_t i = 0; i < dt_arena_len; i++) {
		int inside = 0;
		for (int e = 0; e < NEP; e++)
			if (i >= dt_ep_at[e] && i < dt_ep_at[e] + dt_ep_len[e])
				inside = 1;
		if (!inside && dt_arena[i] != dt_pat(i))
			bad++;
	}
	EXPECT(bad == 0, "%zu guard bytes changed", bad);
	/* The contention endpoint takes no data at all. */
	bad = 0;
	for (size_t i = dt_ep_at[E_C]; i < dt_ep_at[E_C] + PG; i++)
		bad += dt_arena[i] != dt_pat(i);
	EXPECT(bad == 0, "%zu bytes of the contention endpoint changed", bad);
	unsigned badregs = 0;
	for (unsigned r = 0; r < DART_NREGS; r++) {
		uint32_t v;
		int in_window = r < R_P + 32 || (r >= R_IP && r < R_IP + 16) || (r >= R_H && r < R_BY + 16) ||
				(r >= R_CNT && r < R_CNT + 2 + MAX_TEST_NODES) || (r >= R_BAR && r < R_BAR + 4) ||
				(r >= R_SEQ && r < R_SEQ + 3);
		dep_reg_get(r, &v);
		if (!in_window && v != dt_reg_pat(r))
			badregs++;
	}
	EXPECT(badregs == 0, "%u registers outside every window changed", badregs);
}

/* Close every connection and remove the endpoints (3.2: kernel calls tear them down). */
static void teardown(void)
{
	int closed = 0, bad = 0, ep = node_id == 0 ? dt_ep0[E_P] : dt_ep_mine;

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
			EXPECT(dep_endpoint_destroy(dt_ep0[e]) == 0, "remove endpoint %d", e);
	} else {
		EXPECT(dep_endpoint_destroy(dt_ep_mine) == 0 && dep_endpoint_destroy(dt_ep_bar) == 0, "remove endpoints");
	}
}

static const struct argspec deposit_test_args[] = {
	{ "iters", ARG_INT, 1, 100000, "fetch-and-increments and compare-and-swaps per node (default 100)" },
	{ "rounds", ARG_INT, 1, 100000, "rounds of the register-operation barrier (default 20)" },
	{ "mcast_stop", ARG_BOOL, 0, 0, "3 nodes or more: the last member of the multicast connection stops "
	  "it behind an exception; the others must get the cells first (default off)" },
	{ NULL, 0, 0, 0, NULL },
};

static int deposit_test_main(void)
{
	int rounds = (int)arg_int("rounds", 20);

	dt_c_iters = (int)arg_int("iters", C_ITERS_DEFAULT);
	if (num_nodes > MAX_TEST_NODES) {
		printf("deposit-test: at most %d nodes\n", MAX_TEST_NODES);
		return 1;
	}
	dt_prim = 1;
	dt_hostile = num_nodes > 2 ? 2 : 1;
	if (!fabric_ready() || fabric_wait_peers(60000000000ULL) < 0) {
		printf("deposit-test: no network\n");
		return 1;
	}
	if (setup() < 0) {
		printf("deposit-test: setup failed\n");
		return 1;
	}
	if (check_barrier("after setup", BARRIER_NS) < 0)
		return 1;
	if (node_id == 0)
		names_check();

	/* Operations and exceptions. */
	if (node_id == dt_prim)
		dt_primitives();
	if (node_id == dt_hostile)
		dt_hostile_run();
	if (node_id == 0)
		dt_hostile_check();
	if (check_barrier("after operations", BARRIER_NS) < 0)
		return 1;
	if (node_id == 0) {
		dt_primitives_check();
		struct dep_counters dc;
		deposit_counters(&dc);
		printf("deposit-test: node 0: %lu requests found no room for their reply, %lu of them waited on "
		       "their own connection\n", dc.dart.busy, dc.dart.reply_waits);
	}

	/* Contention on node 0's registers. */
	if (check_barrier("before contention", BARRIER_NS) < 0)
		return 1;
	uint64_t t0 = cycles();
	if (node_id == 0)
		dt_contend_local();
	else
		dt_contend();
	uint64_t ms = cycles_to_ns(cycles() - t0) / 1000000;
	if (check_barrier("after contention", BARRIER_NS) < 0)
		return 1;
	if (node_id == 0) {
		uint32_t fai, cas, want = (uint32_t)(num_nodes * dt_c_iters);
		dep_reg_get(R_CNT, &fai);
		dep_reg_get(R_CNT + 1, &cas);
		EXPECT(fai == want && cas == want, "counters %u and %u, expected %u", fai, cas, want);
		printf("deposit-test: counters %u and %u after %d nodes x %d increments (%lu ms)\n", fai, cas,
		       num_nodes, dt_c_iters, ms);
	}

	/* The barrier built from register operations. */
	if (check_barrier("before the barrier", BARRIER_NS) < 0)
		return 1;
	dt_barrier_rounds(rounds);
	if (check_barrier("after the barrier", BARRIER_NS) < 0)
		return 1;

	/* A multicast connection from node 0 to every other node; sequences of instructions. */
	dt_multicast_open();
	dt_sequencer_open();
	if (check_barrier("before multicast", BARRIER_NS) < 0)
		return 1;
	dt_multicast_run();
	if (arg_bool("mcast_stop", 0) && num_nodes >= 3)
		dt_multicast_stop();
	dt_sequencer_run();
	if (check_barrier("after multicast", BARRIER_NS) < 0)
		return 1;
	protect_open();
	if (check_barrier("before page protection", BARRIER_NS) < 0)
		return 1;
	protect_run();
	if (check_barrier("after page protection", BARRIER_NS) < 0)
		return 1;
	if (node_id == 0)
		final_check();
	deposit_print_stats();
	teardown();
	if (node_id == 0)
		fabric_print_stats();
	return check_result();
}

APP(deposit_test, "deposit-test",
    "hybrid deposit: every primitive, every exception class, contention, a register barrier",
    deposit_test_main, deposit_test_args, 2);
