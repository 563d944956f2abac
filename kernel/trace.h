/*
 * Stage stamps: where one operation's time goes, stage by stage, from the
 * app's call through the mechanism, the fabric and the NIC on one node to
 * the NIC, the fabric, the mechanism and the waiting app on the other.
 *
 * Every layer marks its stages with trace_point(); while tracing is off
 * (always, but for a traced run) that costs one load and a branch that is
 * not taken.  trace_start() clears this node's record and turns tracing
 * on.  A record keeps two things:
 *
 *  - t[stage]: the TSC of each stage's first mark, so that a record
 *    describes the first operation that passed (the stages app aligns
 *    two nodes' records and prints the steps between them);
 *  - log[]: every mark in order, up to TRACE_LOG of them, so that an
 *    operation that passes a stage more than once (a round trip, an RPC,
 *    a message in several frames) is described whole.  Under QEMU's
 *    -icount the TSC counts instructions, and the log is then what each
 *    step of the operation cost this node in instructions (make cost).
 *
 * TS_WAIT marks where this node starts waiting (the idle loop, a thread
 * polling for an answer): the step from a TS_WAIT to the next mark is
 * time spent waiting, not work.  Consecutive TS_WAIT marks are logged
 * once, so that a polling loop can mark every turn.
 */
#ifndef KERNEL_TRACE_H
#define KERNEL_TRACE_H

#include <stdint.h>

#include "kernel/x86.h"

/*
 * Stages are numbers 0..TS_N-1, in the order an operation passes them.
 * Each layer that stamps defines its own stages' numbers in its header
 * and names them with TRACE_STAGE (a linker section: kernel/trace.c
 * finds the names there, and refuses two names for one number); the
 * kernel owns the app's and waiting's:
 *
 *   0 app_call     1 mech_send   2 fabric_tx   3 nic_tx
 *   4 nic_rx       5 fabric_rx   6 mech_rx     7 mech_done
 *   8 app_wake     9 app_return 10 rx_done    11 wait
 *
 * (the drivers' in drivers/netdev.h, the fabric's in net/fabric/fabric.h,
 * the mechanisms' in net/net.h).
 */
typedef int trace_stage_t;		/* as an enum was: no widening in trace_mark */
#define TS_N 12
#define TS_APP_CALL 0		/* the app calls the mechanism */
#define TS_APP_WAKE 8		/* the waiting app runs again */
#define TS_APP_RETURN 9		/* the app's call returned */
#define TS_WAIT 11		/* this node starts waiting: the next step is not work */

struct trace_stage_name {
	uint8_t stage;
	const char *name;
};

/* Name stage s (one of this layer's numbers) "name" in traces and make cost's tables. */
#define TRACE_STAGE(s, nm)                                                                   \
	static const struct trace_stage_name tsname_##s                                     \
		__attribute__((used, section(".tracestages"), aligned(8))) = { (s), (nm) }

/* The name of stage s, or "?" if no layer named it. */
const char *trace_name(int s);

#define TRACE_LOG 96

struct trace_rec {
	uint64_t t[TS_N];	/* TSC at each stage's first mark; 0 if none */
	uint32_t n;		/* marks in the log (at most TRACE_LOG) */
	uint32_t lost;		/* marks beyond the log's room */
	uint8_t s[TRACE_LOG];	/* the stages, in order */
	uint64_t at[TRACE_LOG];	/* their TSC */
};

extern volatile int trace_on;
extern struct trace_rec trace_cur;

/*
 * A per-file switch (STYLE: LK's LOCAL_TRACE): a file that defines
 * LOCAL_TRACE 0 before including this header compiles its stamps out, and
 * `make TRACE=0` compiles every file's out.  In, a stamp costs a load and
 * a branch not taken while tracing is off.
 */
#ifndef LOCAL_TRACE
#define LOCAL_TRACE 1
#endif

void trace_mark(trace_stage_t s);

static inline void trace_point(trace_stage_t s)
{
	if (LOCAL_TRACE && __builtin_expect(trace_on, 0))
		trace_mark(s);
}

/* Clear this node's record and trace; stop and copy the record out. */
void trace_start(void);
void trace_stop(struct trace_rec *out);

/*
 * What one mark costs between two others (the instructions of trace_mark
 * and its call): a step between two marks includes one mark's cost, which
 * a count of instructions subtracts.  Measured once, on this CPU.
 */
uint64_t trace_mark_cost(void);

#endif
