/*
 * deposit-test's parts (deposit_test*.c): the connections,
 * node 0's endpoints and registers, and what the parts share.  See
 * deposit_test.c for what the test does.
 */
#ifndef TESTS_NET_DEPOSIT_DEPOSIT_TEST_H
#define TESTS_NET_DEPOSIT_DEPOSIT_TEST_H

#include <stddef.h>
#include <stdint.h>

#include "net/deposit/deposit.h"

#define PG 4096
#define WAIT_NS 60000000000ULL
#define FIRST_WAIT_NS 240000000000ULL
#define BARRIER_NS 300000000000ULL
#define MAX_TEST_NODES 8
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

#define ARENA0 (12 * PG)
/* Other nodes: guard | mine (2 pages) | guard | B | guard. */
#define MINE_AT PG
#define MINE_LEN (2 * PG)
#define BAR_AT (4 * PG)
#define ARENA1 (6 * PG)
/* Node 0's registers: the windows. */
#define R_P 0			/* V_P, V_P_REQ: 0..31, readable and writable */
#define R_IP 64			/* V_P_IP: 64..79, destination-only */
#define R_H 100			/* the hostile connections: 100..115 */
#define R_BY 116		/* V_H_BY: 116..131 */
#define R_CNT 200		/* fetch-and-increment counter; 201: CAS counter; 202 + n: n's staging */
#define R_BAR 300		/* every node: B0, B1, full, zero */
#define R_SEQ 500		/* V_S: a (where), b (stride), c (count), destination-only */
#define P_IPQUEUE 3328		/* the priority queue through an instruction pointer */
#define R_STORM 400		/* node 1: counts the read storm's replies */
#define R_MC 600		/* every member: the multicast increments it took */
#define C_ITERS_DEFAULT 100
#define S_AT 7168		/* in node 0's P endpoint: where the sequenced deposits go */
#define S_CELLS 4

/* deposit_test_common.c: the arena, the patterns, connections, exceptions, requests */
extern const size_t dt_ep_at[NEP];
extern const size_t dt_ep_len[NEP];
extern uint8_t *dt_arena;
extern size_t dt_arena_len;
extern uint8_t *dt_mine, *dt_epb;
extern int dt_ep_mine, dt_ep_bar;
extern int dt_ep0[NEP];
extern int dt_hostile, dt_prim;
extern uint64_t dt_seen[DART_MAX_CONN];
extern volatile uint32_t dt_intr_ops[DART_MAX_CONN][8];
extern volatile unsigned dt_intr_n[DART_MAX_CONN];
extern struct dart_exc dt_last_exc[DART_MAX_CONN];
extern volatile unsigned dt_exc_count[DART_MAX_CONN], dt_exc_by_class[DEX_N], dt_unexpected_exc;
extern const uint64_t dt_write_intr;
uint8_t dt_pat(size_t i);
uint32_t dt_reg_pat(unsigned r);
void dt_fill(uint8_t *p, uint8_t f);
int dt_is_fill(const uint8_t *p, uint8_t f, uint8_t mask);
int dt_open_conn(int vci, int peer, int ep, int flags, int reply, unsigned rb, unsigned rn, unsigned ib,
		     unsigned in, unsigned hold);
int dt_vci_bar(int a, int b);
void dt_record_intr(void *arg, const struct dart_event *ev);
void dt_on_exception(void *arg, const struct dart_exc *e);
int dt_wait_exc(int vci, uint64_t timeout_ns);
int dt_wait_for(int (*cond)(void *), void *arg, uint64_t timeout_ns);
int dt_request(int vci, int rvci, uint64_t opc, uint32_t operand, uint32_t index, void *out);
int dt_rread(uint32_t off, uint8_t mask, uint8_t out[CELL_DATA]);
int dt_rfetch(int vci, uint16_t flags, uint8_t ro1, uint8_t ro2, uint8_t cond, uint32_t operand, uint8_t a,
		  uint8_t b, uint8_t c, uint8_t mask, uint32_t w[8]);
int dt_send(int vci, uint64_t opc, uint32_t operand, uint32_t index, uint32_t src);
void dt_rload(int vci, uint8_t i, uint32_t v);

/* deposit_test_prim.c: node 1, every primitive */
void dt_primitives(void);
void dt_primitives_check(void);

/* deposit_test_hostile.c: the hostile node, and node 0's checks of what it did */
void dt_on_status(void *arg, const struct dart_exc *e);
void dt_hostile_run(void);
void dt_hostile_check(void);

/* deposit_test_group.c: contention, the barrier, multicast, the sequencer */
extern int dt_c_iters;
extern const uint32_t dt_s_stride[S_CELLS];
void dt_contend(void);
void dt_contend_local(void);
void dt_on_barrier(void *arg, const struct dart_event *ev);
void dt_barrier_rounds(int rounds);
void dt_multicast_open(void);
void dt_multicast_run(void);
void dt_multicast_stop(void);
void dt_sequencer_open(void);
void dt_sequencer_run(void);

#endif
