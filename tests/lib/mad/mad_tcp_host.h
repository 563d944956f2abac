/*
 * The kernel as lib/mad_tcp.c sees it, for one host thread: the host
 * builds that include the driver whole (tests/lib/mad/fuzz_madtcp.c,
 * tests/lib/mad/test_mad_tcp.c) include this after it.  Locks only count
 * (tests/lib/mad/mad_host.h), sleeps return at once, a thread runs to its
 * end when created (the driver's provers) and is joined at once.  Each
 * build gives the rest (node_id, the key, the sockets) itself.
 */
#ifndef TESTS_LIB_MAD_MAD_TCP_HOST_H
#define TESTS_LIB_MAD_MAD_TCP_HOST_H

#include "tests/lib/mad/mad_host.h"

void thread_sleep_ns(uint64_t ns) { (void)ns; }
int lwip_socket_abort(int s) { (void)s; return 0; }
/* No link to poll: nothing is taken between a long message's calls. */
int net_busy_begin(void) { return 0; }
void net_busy_look_now(void) {}
void net_busy_stop(void) {}
static char a_thread;
struct thread *thread_create(const char *name, void *(*fn)(void *), void *arg, int prio, size_t stack)
{
	(void)name; (void)prio; (void)stack;
	fn(arg);
	return (struct thread *)&a_thread;
}
void *thread_join(struct thread *t) { (void)t; return NULL; }
int waitq_wait_timeout(struct waitq *wq, uint64_t ns) { (void)wq; (void)ns; return 0; }
int waitq_wake_all(struct waitq *wq) { (void)wq; return 0; }

#endif
