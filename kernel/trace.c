#include <string.h>

#include "kernel/init.h"
#include "kernel/panic.h"
#include "kernel/trace.h"

volatile int trace_on;
struct trace_rec trace_cur;

/* The stages' names, as their layers registered them (TRACE_STAGE). */
extern const struct trace_stage_name __tracestages_start[], __tracestages_end[];

TRACE_STAGE(TS_APP_CALL, "app_call");
TRACE_STAGE(TS_APP_WAKE, "app_wake");
TRACE_STAGE(TS_APP_RETURN, "app_return");
TRACE_STAGE(TS_WAIT, "wait");

/* Every name for a stage of its own, below TS_N: two layers that took one number stop the boot. */
static int trace_names_check(void)
{
	for (const struct trace_stage_name *a = __tracestages_start; a < __tracestages_end; a++) {
		if (a->stage >= TS_N)
			panic("trace: stage %d (%s) is not below TS_N (%d)", a->stage, a->name, TS_N);
		for (const struct trace_stage_name *b = a + 1; b < __tracestages_end; b++)
			if (b->stage == a->stage)
				panic("trace: stage %d named twice: %s and %s", a->stage, a->name, b->name);
	}
	return 0;
}
INIT_HOOK(INIT_SUBSYS_1, trace_names, trace_names_check);

const char *trace_name(int s)
{
	for (const struct trace_stage_name *n = __tracestages_start; n < __tracestages_end; n++)
		if (n->stage == s)
			return n->name;
	return "?";
}

/* Out of line: a stamp's cost where tracing is off stays a load and a branch. */
void trace_mark(trace_stage_t s)
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
