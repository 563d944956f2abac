/*
 * The app's watchdog; see watchdog.h.  A one-second timer (interrupt
 * context) compares the watched thread's count of switches with the last
 * one it saw.
 */
#include <stdio.h>

#include "kernel/console.h"
#include "kernel/node.h"
#include "kernel/thread.h"
#include "kernel/timer.h"
#include "kernel/trap.h"
#include "kernel/tsc.h"
#include "kernel/watchdog.h"

#define WATCHDOG_S_DEFAULT 120
#define CHECK_NS 1000000000ULL

static const struct argspec watchdog_args[] = {
	{ "watchdog_s", ARG_INT, 0, 86400, "say where this node stands when its app thread has not "
	  "run for this long (default 120; 0: never)" },
	{ NULL, 0, 0, 0, NULL },
};
static const struct arg_table watchdog_argtab = { "watchdog", watchdog_args, NULL };
ARGS_REGISTER(watchdog_argtab);

static struct ktimer check_timer;
static struct thread *watched;
static uint64_t seen_switches, quiet_since, limit_ns;
static int said;

static void check(void *arg)
{
	(void)arg;
	if (!watched)
		return;
	uint64_t now = now_ns();
	if (watched->state == THREAD_RUNNING || watched->switches != seen_switches) {
		seen_switches = watched->switches;
		quiet_since = now;
		said = 0;
	} else if (!said && now - quiet_since >= limit_ns) {
		said = 1;
		char why[96];
		snprintf(why, sizeof why, "watchdog: the app thread '%s' has not run for %lu s",
			 watched->name, (unsigned long)((now - quiet_since) / 1000000000ULL));
		node_dump(why, (uint64_t)__builtin_return_address(0), (uint64_t)__builtin_frame_address(0));
	}
	timer_arm(&check_timer, cycles() + ns_to_cycles(CHECK_NS), check, NULL);
}

void watchdog_watch(struct thread *t)
{
	irqflags_t f = irq_save();

	watched = NULL;
	limit_ns = (uint64_t)arg_int("watchdog_s", WATCHDOG_S_DEFAULT) * 1000000000ULL;
	if (t && limit_ns) {
		watched = t;
		seen_switches = t->switches;
		quiet_since = now_ns();
		said = 0;
		timer_arm(&check_timer, cycles() + ns_to_cycles(CHECK_NS), check, NULL);
	}
	irq_restore(f);
}
