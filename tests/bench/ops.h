/*
 * One operation of each kind between nodes 0 and 1, for the apps that
 * take one operation apart (stages: its time stage by stage across the
 * two nodes; under -icount, make cost: its instructions on each node).
 *
 * Node 0 issues every operation; node 1 is its target, and serves it in
 * its receive path or in threads started by the operation's setup.  Each
 * operation is the one its bench row times (the apps/ files named *_bench.c), once:
 *
 *   raw            a 64-byte raw frame, one way, to an app's raw handler
 *   reliable       a 64-byte message on the reliable channel, one way
 *   write          a 40-byte remote WRITE, one way
 *   read           a 40-byte remote READ into a local segment, round trip
 *   cas, fadd      compare-and-swap, fetch-and-add, round trip
 *   req            a REQ of one word, one way
 *   req-notify     a 40-byte message by WRITE, notified by a REQ, one way
 *   deposit        a 32-byte hybrid deposit, one way
 *   deposit-rtt    a 32-byte deposit echoed by node 1's thread, round trip
 *   rpc-simple     RPC Simple over remote memory (four integers, one result)
 *   mad-rmem, mad-req, mad-cell   a Madeleine null message, one way, to
 *                  node 1's receiving thread, on each driver
 *   tcp-1B         one byte through a TCP socket, one way, to node 1's
 *                  reading thread
 *
 * Node 1's receive handlers and threads mark TS_MECH_RX (the raw and
 * reliable handlers) and TS_APP_RETURN (a thread's receive returned).
 */
#ifndef TESTS_BENCH_OPS_H
#define TESTS_BENCH_OPS_H

#include <stdint.h>

#include "kernel/trace.h"

struct op {
	const char *name;
	/* Nodes 0 and 1, once, before they meet: what both ends need.  0 or -1. */
	int (*setup)(void);
	/* Node 0, after they met: import, bind, connect.  0 or -1. */
	int (*bind)(void);
	/* Node 0: one operation (number i).  0 or a negative errno. */
	int (*run)(uint32_t i);
	/* Node 1, after each operation passed: take what it left (queued words).  May be NULL. */
	void (*tidy)(void);
	/* The stages the first operation passes across the nodes, for the stages app; NULL: none. */
	const struct op_stage *path;
	int npath;
};

struct op_stage {
	int node;
	trace_stage_t stage;
};

extern const struct op ops[];
extern const int nops;

/* The operation called name, or NULL. */
const struct op *op_find(const char *name, int len);

/* The TCP operation lives apart (it needs lwIP's headers): apps/ops_tcp.c. */
int op_tcp_setup(void);
int op_tcp_bind(void);
int op_tcp_run(uint32_t i);

#endif
