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
};

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
