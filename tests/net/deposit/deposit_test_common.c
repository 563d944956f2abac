/*
 * deposit-test, what every part uses: node 0's arena and registers, the
 * patterns, opening connections, interrupts and exceptions, and requests
 * whose reply raises an interrupt here (see deposit_test.c).
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

/* --- connections, endpoints, registers ---------------------------------------- */

const size_t dt_ep_at[NEP] = { 1 * PG, 4 * PG, 6 * PG, 8 * PG, 10 * PG };
const size_t dt_ep_len[NEP] = { 2 * PG, PG, PG, PG, PG };

uint8_t *dt_arena;
size_t dt_arena_len;
uint8_t *dt_mine, *dt_epb;		/* node >= 1: its endpoint; every node: barrier endpoint */
int dt_ep_mine = -1, dt_ep_bar = -1;
int dt_ep0[NEP];
int dt_hostile, dt_prim;		/* node ids of the hostile and the primitive sender */

uint8_t dt_pat(size_t i)
{
	return (uint8_t)(i * 29 + 11);
}

uint32_t dt_reg_pat(unsigned r)
{
	return 0xa5000000u + r * 7;
}

void dt_fill(uint8_t *p, uint8_t f)
{
	for (int i = 0; i < CELL_DATA; i++)
		p[i] = (uint8_t)(f + i);
}

int dt_is_fill(const uint8_t *p, uint8_t f, uint8_t mask)
{
	for (int i = 0; i < CELL_DATA; i++)
		if ((mask & (1u << (i / 4))) && p[i] != (uint8_t)(f + i))
			return 0;
	return 1;
}

int dt_open_conn(int vci, int peer, int ep, int flags, int reply, unsigned rb, unsigned rn, unsigned ib,
		     unsigned in, unsigned hold)
{
	struct dep_conn_cfg cfg = { peer, ep, flags, reply, rb, rn, ib, in, hold, 0 };
	int r = dep_conn_open(vci, &cfg);

	EXPECT(r == 0, "open connection %d to node %d: %d", vci, peer, r);
	return r;
}

int dt_vci_bar(int a, int b)
{
	return V_B + 8 * (a < b ? a : b) + (a < b ? b : a);
}

/* --- interrupts and exceptions ------------------------------------------------- */

uint64_t dt_seen[DART_MAX_CONN];		/* interrupts consumed, per connection */
volatile uint32_t dt_intr_ops[DART_MAX_CONN][8];	/* node 0: operands of the last interrupts */
volatile unsigned dt_intr_n[DART_MAX_CONN];

void dt_record_intr(void *arg, const struct dart_event *ev)
{
	(void)arg;
	dt_intr_ops[ev->vci][dt_intr_n[ev->vci]++ % 8] = ev->operand;
}

/* Exceptions the handlers saw. */
struct dart_exc dt_last_exc[DART_MAX_CONN];
volatile unsigned dt_exc_count[DART_MAX_CONN], dt_exc_by_class[DEX_N], dt_unexpected_exc;
static struct waitq exc_wq = WAITQ_INIT;

void dt_on_exception(void *arg, const struct dart_exc *e)
{
	irqflags_t f = irq_save();
	dt_last_exc[e->vci] = *e;
	dt_exc_count[e->vci]++;
	dt_exc_by_class[e->cls]++;
	if (arg)
		dt_unexpected_exc++;
	waitq_wake_all(&exc_wq);
	irq_restore(f);
	if (arg)
		printf("deposit-test: unexpected %s exception on connection %d (detail %#x)\n",
		       dart_exc_names[e->cls], e->vci, e->detail);
}

/* Wait for the next exception of connection vci not yet waited for. */
static unsigned exc_consumed[DART_MAX_CONN];

int dt_wait_exc(int vci, uint64_t timeout_ns)
{
	uint64_t end = cycles() + ns_to_cycles(timeout_ns);
	irqflags_t f = irq_save();

	while (dt_exc_count[vci] <= exc_consumed[vci] && cycles() < end)
		waitq_wait_timeout(&exc_wq, 100000000);
	int r = dt_exc_count[vci] > exc_consumed[vci];
	if (r)
		exc_consumed[vci]++;
	irq_restore(f);
	return r;
}

/* Poll cond() (every ms) for up to timeout_ns. */
int dt_wait_for(int (*cond)(void *), void *arg, uint64_t timeout_ns)
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

const uint64_t dt_write_intr =
	DART_OPC(CELL_OP(CK_WRITE, CA_DIRECT) | CO_INTR, 0, 0, CELL_COND(CMP_ALWAYS, 0, 0));

/* Send one request on vci (opcode opc) and wait for its reply on rvci; 32 bytes into out. */
int dt_request(int vci, int rvci, uint64_t opc, uint32_t operand, uint32_t index, void *out)
{
	struct dart_sendregs *sr = dep_sendregs(vci);

	dart_reply_ctl(dt_mine + CTL_AT, dt_write_intr, REPLY_AT, DART_IDX(0, 0, 0, 0xff));
	memset(dt_mine + REPLY_AT, 0xee, CELL_DATA);
	if (!sr || dep_send(sr, opc, operand, index, CTL_AT) < 0)
		return -1;
	if (dep_intr_wait(rvci, &dt_seen[rvci], WAIT_NS) < 0)
		return -1;
	memcpy(out, dt_mine + REPLY_AT, CELL_DATA);
	return 0;
}

/* READ 32 bytes at off of node 0's endpoint (words in mask) on V_P. */
int dt_rread(uint32_t off, uint8_t mask, uint8_t out[CELL_DATA])
{
	return dt_request(V_P, V_P, DART_OPC(CELL_OP(CK_READ, CA_DIRECT), 0, 0, 0), off, DART_IDX(0, 0, 0, mask), out);
}

/* FETCH on vci with the given operations; w gets the reply's eight words. */
int dt_rfetch(int vci, uint16_t flags, uint8_t ro1, uint8_t ro2, uint8_t cond, uint32_t operand, uint8_t a,
		  uint8_t b, uint8_t c, uint8_t mask, uint32_t w[8])
{
	return dt_request(vci, vci, DART_OPC(CELL_OP(CK_FETCH, CA_NONE) | flags, ro1, ro2, cond), operand,
		       DART_IDX(a, b, c, mask), w);
}

/* Send one cell on vci: data from my endpoint at src. */
int dt_send(int vci, uint64_t opc, uint32_t operand, uint32_t index, uint32_t src)
{
	struct dart_sendregs *sr = dep_sendregs(vci);
	int r = sr ? dep_send(sr, opc, operand, index, src) : -EBADF;

	EXPECT(r == 0, "send on %d: %d", vci, r);
	return r;
}

/* Register i of node 0's window on V_P <- v. */
void dt_rload(int vci, uint8_t i, uint32_t v)
{
	dt_send(vci, DART_OPC(CELL_OP(CK_NOP, CA_NONE), CELL_RO(ALU_LOAD, CS_A, CSRC_OPERAND), 0, 0), v,
	     DART_IDX(i, 0, 0, 0), 0);
}
