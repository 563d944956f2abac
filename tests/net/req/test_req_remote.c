/*
 * Host unit tests of the remote half of REQ (net/req/remote.c) on the
 * fake fabric boundary (tests/host/host_fabric.c): a handle names a queue
 * of one incarnation of its node; once that node was bound again (it
 * rebooted), the handle sends nothing, asynchronous or not, and the check
 * holds where the frame is queued, not only where the call began.
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

#include "kernel/init.h"
#include "kernel/page.h"
#include "kernel/sync.h"
#include "kernel/thread.h"
#include "net/call/call.h"
#include "net/fabric/fabric.h"
#include "net/req/req.h"
#include "tests/host/host_fabric.h"

#define PEER 2
#define REQ_PROTO_NUM 5		/* only used to make a sink; any protocol number */

/* --- what the kernel provides, for one host thread ------------------------ */

void fabric_resume(void) { }
void thread_nopreempt_begin(void) { }
void thread_nopreempt_end(void) { }
void mutex_init(struct mutex *m, int recursive) { memset(m, 0, sizeof *m); (void)recursive; }
void mutex_lock(struct mutex *m) { (void)m; }
void mutex_unlock(struct mutex *m) { (void)m; }
int page_order(size_t bytes)
{
	int o = 0;
	while ((4096UL << o) < bytes)
		o++;
	return o;
}
void *page_alloc(int order) { return aligned_alloc(4096, 4096UL << order); }
void page_free(void *p, int order) { (void)order; free(p); }

/* --- tests ------------------------------------------------------------------ */

static int group_setup(void **state)
{
	(void)state;
	host_rmem_reset(0, 4);
	return host_run_init_hooks(INIT_SUBSYS_4);
}

static void drain(void)
{
	struct host_frame f;
	while (host_frame_take(&f) == 0)
		;
}

/* A handle of the old incarnation: every enqueue refused, nothing sent. */
static void handle_of_a_rebooted_node_sends_nothing(void **state)
{
	(void)state;
	host_epoch[PEER] = 1;
	int rq = req_handle(PEER, 0x1000, 1);
	assert_true(rq >= 0);
	assert_int_equal(req_enqueue(rq, 42, 0), 0);
	assert_int_equal(host_frames(), 1);
	drain();
	host_epoch[PEER] = 2;
	assert_int_equal(req_enqueue(rq, 43, 0), -ECONNRESET);
	assert_int_equal(req_enqueue(rq, 44, 1), -ECONNRESET);
	assert_int_equal(host_frames(), 0);
	/* A handle made now is the new incarnation's. */
	int rq2 = req_handle(PEER, 0x1000, 1);
	assert_true(rq2 >= 0);
	assert_int_equal(req_enqueue(rq2, 45, 0), 0);
	assert_int_equal(host_frames(), 1);
	drain();
}

/*
 * The send itself carries the sink's epoch: a node bound again after the
 * handle's check (while the sender waited for window space) gets nothing.
 */
static void sink_send_goes_only_to_its_incarnation(void **state)
{
	(void)state;
	host_epoch[PEER] = 5;
	int s = call_sink_new(REQ_PROTO_NUM, PEER);
	assert_true(s >= 0);
	assert_int_equal(call_sink_send(s, REQ_PROTO_NUM, "x", 1, NULL, 0, 0), 0);
	assert_int_equal(host_frames(), 1);
	drain();
	host_epoch[PEER] = 6;
	assert_int_equal(call_sink_send(s, REQ_PROTO_NUM, "x", 1, NULL, 0, 0), -ECONNRESET);
	assert_int_equal(call_sink_send(s, REQ_PROTO_NUM, "x", 1, NULL, 0, CALL_RAW), -ECONNRESET);
	assert_int_equal(host_frames(), 0);
	assert_int_equal(call_sink_send(-1, REQ_PROTO_NUM, "x", 1, NULL, 0, 0), -EBADF);
	call_sink_free(s);
}

UNIT_MAIN("tests", group_setup, NULL,
	  cmocka_unit_test(handle_of_a_rebooted_node_sends_nothing),
	  cmocka_unit_test(sink_send_goes_only_to_its_incarnation))
