#include <string.h>

#include "kernel/trace.h"

volatile int trace_on;
struct trace_rec trace_cur;

const char *const trace_names[TS_N] = {
	[TS_APP_CALL] = "app_call",
	[TS_MECH_SEND] = "mech_send",
	[TS_FABRIC_TX] = "fabric_tx",
	[TS_NIC_TX] = "nic_tx",
	[TS_NIC_RX] = "nic_rx",
	[TS_FABRIC_RX] = "fabric_rx",
	[TS_MECH_RX] = "mech_rx",
	[TS_MECH_DONE] = "mech_done",
	[TS_APP_WAKE] = "app_wake",
	[TS_APP_RETURN] = "app_return",
	[TS_RX_DONE] = "rx_done",
	[TS_WAIT] = "wait",
};

/* Out of line: a stamp's cost where tracing is off stays a load and a branch. */
void trace_mark(enum trace_stage s)
{
	irqflags_t f = irq_save();
	uint64_t now = rdtsc();
	struct trace_rec *r = &trace_cur;

	if (!r->t[s])
		r->t[s] = now;
	if (s == TS_WAIT && r->n && r->s[r->n - 1] == TS_WAIT) {
		irq_restore(f);
		return;
	}
	if (r->n < TRACE_LOG) {
		r->s[r->n] = (uint8_t)s;
		r->at[r->n] = now;
		r->n++;
	} else {
		r->lost++;
	}
	irq_restore(f);
}

void trace_start(void)
{
	irqflags_t f = irq_save();
	memset(&trace_cur, 0, sizeof trace_cur);
	trace_on = 1;
	irq_restore(f);
}

void trace_stop(struct trace_rec *out)
{
	irqflags_t f = irq_save();
	trace_on = 0;
	if (out)
		*out = trace_cur;
	irq_restore(f);
}

uint64_t trace_mark_cost(void)
{
	static uint64_t cost;
	static struct trace_rec r;

	/* Interrupts off, so that nothing else marks between the two; the least of a few tries. */
	for (int i = 0; i < 8 && !cost; i++) {
		irqflags_t f = irq_save();
		trace_start();
		trace_point(TS_APP_CALL);
		trace_point(TS_APP_RETURN);
		trace_stop(&r);
		irq_restore(f);
		if (r.n == 2 && r.at[1] > r.at[0])
			cost = r.at[1] - r.at[0];
	}
	return cost;
}
