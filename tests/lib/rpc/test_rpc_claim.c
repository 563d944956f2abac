/*
 * Host unit tests of the RPC client's stack claim for a call
 * (lib/rpc_client.c, rpc_stack_claim) over the kernel's remote memory and request/answer
 * code on the fake fabric boundary of host_fabric.c.  This process is
 * node 0 and plays the server, node 2, too: the two argument stacks
 * "rpc.svc.0" and "rpc.svc.1" are exported here for node 2, and every
 * frame this node sends to node 2 (name lookups, CASes, their answers)
 * goes back to this node's own receive code as node 2's, in order.
 *
 * The defect: a CAS whose answer comes late may still land.  The client
 * used to take a late answer as "not claimed", let the stack go and claim
 * the next one: the first stays claimed by nobody who knows it, forever.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kernel/init.h"
#include "lib/rpc.h"
#include "lib/rpc_wire.h"
#include "net/rmem/internal.h"
#include "net/rmem/proto.h"
#include "net/rmem/rmem.h"
#include "tests/host/host_fabric.h"

#define SELF 0
#define PEER 2
#define TOKEN 0x0000000100000042ULL

static _Alignas(8) uint8_t stack0[256], stack1[256];

/*
 * The network while the client waits.  With hold_first, the answer to the
 * first CAS is held back (the CAS itself is served: it lands) until the
 * next request to node 2 has been served, as a slow network would do; the
 * client's wait for it runs out first.
 */
static int hold_first, cas_seen;
static struct host_frame held;
static int have_held;

static void pass(struct host_frame *f)
{
	fabric_handler_t h = host_handler(f->proto, f->raw);

	assert_non_null(h);
	h(PEER, f->data, f->len, NULL);
}

static void pump(void)
{
	struct host_frame f;

	while (host_frame_take(&f) == 0) {
		struct rmem_msg m;
		int is_rmem = f.proto == RMEM_PROTO && f.len >= sizeof m;
		if (is_rmem)
			memcpy(&m, f.data, sizeof m);
		if (is_rmem && m.op == RM_ATOMIC_RESP && hold_first && !have_held && cas_seen == 1) {
			held = f;
			have_held = 1;
			continue;
		}
		if (is_rmem && m.op == RM_CAS)
			cas_seen++;
		pass(&f);
		if (have_held && cas_seen >= 2) {
			have_held = 0;
			hold_first = 0;
			pass(&held);
		}
	}
}

static int setup(void **state)
{
	(void)state;
	host_rmem_reset(SELF, 4);
	memset(stack0, 0, sizeof stack0);
	memset(stack1, 0, sizeof stack1);
	assert_true(seg_export_for("rpc.svc.0", stack0, sizeof stack0, PEER, RMEM_ALL) >= 0);
	assert_true(seg_export_for("rpc.svc.1", stack1, sizeof stack1, PEER, RMEM_ALL) >= 0);
	hold_first = cas_seen = have_held = 0;
	host_pump = pump;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	host_pump = NULL;
	return 0;
}

static uint64_t owner(const uint8_t *stack)
{
	uint64_t w;

	memcpy(&w, stack + CTL_OFF, 8);
	return w;
}

/* A binding to node 2's two stacks, as rpc_bind imports them. */
static void binding(struct rpc_binding *b)
{
	memset(b, 0, sizeof *b);
	b->local = rpc_local_get(PEER, "svc");
	assert_non_null(b->local);
	b->local->busy = 0;
	b->server = PEER;
	for (int k = 0; k < 2; k++) {
		char name[RMEM_NAME_MAX];
		snprintf(name, sizeof name, "rpc.svc.%d", k);
		b->rd[k] = rmem_import(PEER, name);
		assert_true(b->rd[k] >= 0);
	}
	b->nstacks = 2;
}

static void unbinding(struct rpc_binding *b)
{
	for (int k = 0; k < b->nstacks; k++)
		rmem_release(b->rd[k]);
}

/* The claim as it should go: the first free stack is ours, and the next call tries the next. */
static void claim_takes_the_first_free_stack(void **state)
{
	struct rpc_binding b;

	(void)state;
	binding(&b);
	assert_int_equal(rpc_stack_claim(&b, TOKEN), 0);
	assert_true(owner(stack0) == TOKEN);
	assert_true(owner(stack1) == 0);
	assert_int_equal(b.hint, 1);
	assert_int_equal(rpc_stack_claim(&b, TOKEN + 1), 1);
	assert_true(owner(stack1) == TOKEN + 1);
	/* Both held by this node's calls: -EBUSY without asking the server. */
	assert_int_equal(b.local->busy, 3);
	assert_int_equal(rpc_stack_claim(&b, TOKEN + 2), -EBUSY);
	assert_int_equal(b.stats.claims_lost, 0);
	unbinding(&b);
}

/* A taken stack is passed over. */
static void claim_passes_a_taken_stack(void **state)
{
	struct rpc_binding b;
	uint64_t other = 0x0000000300000007ULL;

	(void)state;
	binding(&b);
	memcpy(stack0 + CTL_OFF, &other, 8);
	assert_int_equal(rpc_stack_claim(&b, TOKEN), 1);
	assert_true(owner(stack0) == other);
	assert_true(owner(stack1) == TOKEN);
	assert_int_equal(b.stats.claims_lost, 1);
	assert_int_equal(b.local->busy, 2);	/* the lost one is not held here */
	unbinding(&b);
}

/*
 * The first CAS lands but its answer comes after the client stopped
 * waiting: the client must find out that stack 0 is its own, and must
 * not claim stack 1 as well.
 */
static void late_answer_keeps_the_claim(void **state)
{
	struct rpc_binding b;

	(void)state;
	binding(&b);
	hold_first = 1;
	assert_int_equal(rpc_stack_claim(&b, TOKEN), 0);
	assert_true(owner(stack0) == TOKEN);
	assert_true(owner(stack1) == 0);
	assert_int_equal(cas_seen, 2);
	assert_int_equal(have_held, 0);
	unbinding(&b);
}

int main(void)
{
	/* The kernel's own registrations: rmem's handlers, the call facility, the name service. */
	host_fabric_reset(SELF, 4);
	if (host_run_init_hooks(INIT_SUBSYS_4) < 0)
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(claim_takes_the_first_free_stack, setup, teardown),
		cmocka_unit_test_setup_teardown(claim_passes_a_taken_stack, setup, teardown),
		cmocka_unit_test_setup_teardown(late_answer_keeps_the_claim, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
