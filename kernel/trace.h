/*
 * Stage stamps: where one operation's time goes, stage by stage, from the
 * app's call through the mechanism, the fabric and the NIC on one node to
 * the NIC, the fabric, the mechanism and the waiting app on the other.
 *
 * Every layer marks its stages with trace_point(); while tracing is off
 * (always, but for a traced run) that costs one load and a branch that is
 * not taken.  trace_start() clears this node's record and turns tracing
 * on; each stage keeps the TSC of its first mark after that, so a record
 * describes the first operation that passed.  The stages app (apps/
 * stages.c) arms both nodes, runs one WRITE or READ, aligns the two
 * nodes' TSCs and prints the stages' durations.
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
	TS_NIC_RX,		/* the NIC hands a received frame up */
	TS_FABRIC_RX,		/* the fabric's receive path has it */
	TS_MECH_RX,		/* the mechanism's receive half has it */
	TS_MECH_DONE,		/* the mechanism applied it (memory written, answer sent) */
	TS_APP_WAKE,		/* the waiting app runs again */
	TS_N
};

struct trace_rec {
	uint64_t t[TS_N];	/* TSC at each stage's first mark; 0 if none */
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

static inline void trace_point(enum trace_stage s)
{
	if (LOCAL_TRACE && __builtin_expect(trace_on, 0) && !trace_cur.t[s])
		trace_cur.t[s] = rdtsc();
}

/* Clear this node's record and trace; stop and copy the record out. */
void trace_start(void);
void trace_stop(struct trace_rec *out);

#endif
