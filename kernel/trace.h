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

enum trace_stage {
	TS_APP_CALL,		/* the app calls the mechanism */
	TS_MECH_SEND,		/* the mechanism hands its message to the fabric */
	TS_FABRIC_TX,		/* the fabric hands the frame to the NIC */
	TS_NIC_TX,		/* the NIC has it (the driver's transmit returned) */
	TS_NIC_RX,		/* the driver found a received frame in its ring */
	TS_FABRIC_RX,		/* the fabric's receive path has it */
	TS_MECH_RX,		/* the mechanism's receive half has it */
	TS_MECH_DONE,		/* the mechanism applied it (memory written, answer sent) */
	TS_APP_WAKE,		/* the waiting app runs again */
	TS_APP_RETURN,		/* the app's call returned */
	TS_RX_DONE,		/* the driver is done with the received frame */
	TS_WAIT,		/* this node starts waiting: the next step is not work */
	TS_N
};

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
extern const char *const trace_names[TS_N];

/*
 * A per-file switch (STYLE: LK's LOCAL_TRACE): a file that defines
 * LOCAL_TRACE 0 before including this header compiles its stamps out, and
 * `make TRACE=0` compiles every file's out.  In, a stamp costs a load and
 * a branch not taken while tracing is off.
 */
#ifndef LOCAL_TRACE
#define LOCAL_TRACE 1
#endif

void trace_mark(enum trace_stage s);

static inline void trace_point(enum trace_stage s)
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
