/*
 * The app's watchdog: a node whose app thread has not run for watchdog_s=
 * seconds (blocked, or ready and never given the CPU) says so and prints
 * where it stands, as the launcher's NMI makes it before a --timeout: the
 * timers, every thread with its backtrace, and each DUMP_HOOK's state.  A
 * hang then names itself, on a PC's screen too, with no launcher to ask.
 * Once per stall: the thread's next run re-arms it.  watchdog_s=0 turns it
 * off.  A thread that runs (even one that only polls) is never reported.
 */
#ifndef KERNEL_WATCHDOG_H
#define KERNEL_WATCHDOG_H

struct thread;

/* Watch t (the app thread), or nothing (NULL: the app is finishing). */
void watchdog_watch(struct thread *t);

#endif
