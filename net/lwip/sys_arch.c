/*
 * lwIP port: the operating system layer (lwIP's sys_arch.c) on kernel
 * threads.  The contracts are lwIP's (lwip/sys.h); what this port adds:
 *
 *  - Semaphores, mutexes and thread creation may only be used from threads.
 *  - sys_mbox_trypost and sys_mbox_trypost_fromisr may be called from
 *    interrupt handlers: they take no lock but interrupts-off, never sleep
 *    and never allocate.  The receive path uses them (through
 *    tcpip_input) for every frame.
 *  - A wakeup that makes a higher-priority thread ready (the tcpip thread
 *    is PRIO_HIGH) preempts the caller at once when called from a thread;
 *    the kernel's sem_post and mutex_unlock wake inside their own critical
 *    section and would otherwise leave the preemption to the next tick.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernel/panic.h"
#include "kernel/sync.h"
#include "kernel/thread.h"
#include "kernel/trap.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"
#include "lwip/api.h"
#include "lwip/opt.h"
#include "lwip/priv/sockets_priv.h"
#include "lwip/sys.h"
#include "lwip/tcp.h"
#include "lwip/tcpip.h"
#include "net/lwip/lwip_port.h"

/* The port's counters (lwip_port.h): the netif's and this layer's. */
struct lwip_port_stats lwip_port_stats;

#define NS_PER_MS 1000000ULL

/*
 * A mailbox: a bounded ring of pointers, guarded by interrupts-off, with
 * a wait queue for readers (ring empty) and one for writers (ring full).
 * Wait queues rather than two counting semaphores because the interrupt
 * side must try to take a slot without blocking, which struct sem cannot.
 */
struct sys_mbox {
	void **ring;
	int size, head, count;
	struct waitq readers, writers;
};

void sys_init(void)
{
}

u32_t sys_now(void)
{
	return (u32_t)(now_ns() / NS_PER_MS);
}

/* xorshift64*, seeded from the TSC: lwIP's first ephemeral ports. */
unsigned int lwip_port_rand(void)
{
	static uint64_t x;
	irqflags_t f = irq_save();

	if (!x)
		x = rdtsc() | 1;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	uint64_t r = x * 0x2545f4914f6cdd1dULL;
	irq_restore(f);
	return (unsigned int)(r >> 32);
}

/* Milliseconds since t0 (a TSC value), never SYS_ARCH_TIMEOUT. */
static u32_t ms_since(uint64_t t0)
{
	uint64_t ms = cycles_to_ns(cycles() - t0) / NS_PER_MS;
	return ms >= SYS_ARCH_TIMEOUT ? SYS_ARCH_TIMEOUT - 1 : (u32_t)ms;
}

/* --- semaphores ------------------------------------------------------------ */

err_t sys_sem_new(sys_sem_t *sem, u8_t count)
{
	sem_init(&sem->s, count);
	sem->valid = 1;
	return ERR_OK;
}

void sys_sem_free(sys_sem_t *sem)
{
	KASSERT(sem->s.wq.head == NULL);
}

void sys_sem_signal(sys_sem_t *sem)
{
	sem_post(&sem->s);
}

/*
 * One thread's select may be cut short (lwip_select_kick): while that
 * thread waits in sys_arch_sem_wait (select's only wait: its semaphore is
 * made for the call and freed after it), a kick signals the semaphore it
 * waits on, and a kick that came before the wait ends the next wait at
 * once.  lwip_select then scans again and returns 0 when nothing is
 * ready.  One CPU: interrupts off orders the kicker and the waiter.
 */
static struct thread *kick_thread;
static sys_sem_t *kick_sem;
static int kick_pending;

void lwip_select_kickable(int on)
{
	kick_thread = on ? thread_current() : NULL;
}

void lwip_select_kick(void)
{
	irqflags_t f = irq_save();

	kick_pending = 1;
	if (kick_sem)
		sem_post(&kick_sem->s);
	irq_restore(f);
}

static u32_t sem_wait_ms(sys_sem_t *sem, u32_t timeout_ms)
{
	uint64_t t0 = cycles();

	if (timeout_ms == 0)
		sem_wait(&sem->s);
	else if (sem_wait_timeout(&sem->s, timeout_ms * NS_PER_MS) < 0)
		return SYS_ARCH_TIMEOUT;
	return ms_since(t0);
}

u32_t sys_arch_sem_wait(sys_sem_t *sem, u32_t timeout_ms)
{
	if (!kick_thread || kick_thread != thread_current())
		return sem_wait_ms(sem, timeout_ms);
	/* The kickable thread: a kick before the wait ends it at once, one during it posts sem. */
	irqflags_t f = irq_save();
	if (kick_pending) {
		kick_pending = 0;
		irq_restore(f);
		return 0;
	}
	kick_sem = sem;
	irq_restore(f);
	u32_t r = sem_wait_ms(sem, timeout_ms);
	f = irq_save();
	kick_sem = NULL;
	kick_pending = 0;
	irq_restore(f);
	return r;
}

/* --- mutexes --------------------------------------------------------------- */

err_t sys_mutex_new(sys_mutex_t *mu)
{
	mutex_init(&mu->m, 0);
	mu->valid = 1;
	return ERR_OK;
}

void sys_mutex_free(sys_mutex_t *mu)
{
	KASSERT(mu->m.owner == NULL);
}

void sys_mutex_lock(sys_mutex_t *mu)
{
	mutex_lock(&mu->m);
}

void sys_mutex_unlock(sys_mutex_t *mu)
{
	mutex_unlock(&mu->m);
}

/*
 * LWIP_ASSERT_CORE_LOCKED: the core may be entered only by the thread
 * holding the core lock, never from an interrupt handler.  Not checked
 * before tcpip_init has made the lock (lwip_init runs single-threaded).
 */
void sys_check_core_locking(void)
{
	if (in_irq)
		panic("lwip: core entered from interrupt context");
	if (sys_mutex_valid(&lock_tcpip_core) && lock_tcpip_core.m.owner != thread_current())
		panic("lwip: core entered by '%s' without the core lock", thread_current()->name);
}

/* --- mailboxes ------------------------------------------------------------- */

/*
 * The first mailbox made is tcpip_init's (lwip_port_init calls it before
 * anything else of lwIP's), which asserts if it cannot have one: it comes
 * from here, so that no shortage of memory at boot stops the node.
 */
static struct sys_mbox tcpip_box;
static void *tcpip_ring[TCPIP_MBOX_SIZE];
static int tcpip_box_used;

err_t sys_mbox_new(sys_mbox_t *mbox, int size)
{
	struct sys_mbox *mb;

	if (size <= 0)
		panic("lwip: mailbox of size %d (a *_MBOX_SIZE is missing from lwipopts.h)", size);
	if (!tcpip_box_used && size == TCPIP_MBOX_SIZE) {
		tcpip_box_used = 1;
		tcpip_box.ring = tcpip_ring;
		tcpip_box.size = size;
		*mbox = &tcpip_box;
		return ERR_OK;
	}
	mb = calloc(1, sizeof *mb);
	if (!mb)
		goto err;
	mb->ring = calloc((size_t)size, sizeof *mb->ring);
	if (!mb->ring)
		goto free;
	mb->size = size;
	*mbox = mb;
	return ERR_OK;
free:
	free(mb);
err:
	*mbox = NULL;
	return ERR_MEM;
}

void sys_mbox_free(sys_mbox_t *mbox)
{
	struct sys_mbox *mb = *mbox;

	KASSERT(mb->readers.head == NULL && mb->writers.head == NULL);
	if (mb == &tcpip_box)
		return;
	free(mb->ring);
	free(mb);
}

/* Append msg; interrupts off and room in the ring. */
static void mbox_push(struct sys_mbox *mb, void *msg)
{
	mb->ring[(mb->head + mb->count) % mb->size] = msg;
	mb->count++;
	waitq_wake_one(&mb->readers);
}

/* Take the oldest message; interrupts off and the ring not empty. */
static void *mbox_pop(struct sys_mbox *mb)
{
	void *msg = mb->ring[mb->head];

	mb->head = (mb->head + 1) % mb->size;
	mb->count--;
	waitq_wake_one(&mb->writers);
	return msg;
}

void sys_mbox_post(sys_mbox_t *mbox, void *msg)
{
	struct sys_mbox *mb = *mbox;
	irqflags_t f = irq_save();

	while (mb->count == mb->size)
		waitq_wait(&mb->writers);
	mbox_push(mb, msg);
	irq_restore(f);
	sched_maybe_preempt();
}

/* Thread or interrupt context. */
err_t sys_mbox_trypost(sys_mbox_t *mbox, void *msg)
{
	struct sys_mbox *mb = *mbox;
	irqflags_t f = irq_save();
	err_t r = ERR_MEM;

	if (mb->count < mb->size) {
		mbox_push(mb, msg);
		r = ERR_OK;
	}
	irq_restore(f);
	sched_maybe_preempt();		/* does nothing in interrupt context */
	return r;
}

err_t sys_mbox_trypost_fromisr(sys_mbox_t *mbox, void *msg)
{
	return sys_mbox_trypost(mbox, msg);
}

u32_t sys_arch_mbox_fetch(sys_mbox_t *mbox, void **msg, u32_t timeout_ms)
{
	struct sys_mbox *mb = *mbox;
	uint64_t t0 = cycles();
	uint64_t deadline = t0 + ns_to_cycles((uint64_t)timeout_ms * NS_PER_MS);
	irqflags_t f = irq_save();

	while (mb->count == 0) {
		uint64_t now = cycles();
		if (timeout_ms == 0) {
			waitq_wait(&mb->readers);
			continue;
		}
		if (now >= deadline) {
			irq_restore(f);
			return SYS_ARCH_TIMEOUT;
		}
		waitq_wait_timeout(&mb->readers, cycles_to_ns(deadline - now));
	}
	void *m = mbox_pop(mb);
	irq_restore(f);
	if (msg)
		*msg = m;
	sched_maybe_preempt();
	return ms_since(t0);
}

u32_t sys_arch_mbox_tryfetch(sys_mbox_t *mbox, void **msg)
{
	struct sys_mbox *mb = *mbox;
	irqflags_t f = irq_save();
	void *m;

	if (mb->count == 0) {
		irq_restore(f);
		return SYS_MBOX_EMPTY;
	}
	m = mbox_pop(mb);
	irq_restore(f);
	if (msg)
		*msg = m;
	sched_maybe_preempt();
	return 0;
}

/* --- threads --------------------------------------------------------------- */

struct thread_start {
	lwip_thread_fn fn;
	void *arg;
};

static void *thread_trampoline(void *p)
{
	struct thread_start ts = *(struct thread_start *)p;

	free(p);
	ts.fn(ts.arg);
	return NULL;
}

/*
 * A thread for lwIP or an app: NULL when memory or a stack of that size
 * is not to be had, or prio is no thread priority (counted in
 * lwip_port_stats.threads_failed), never a panic.  lwIP's only caller, tcpip_init, ignores the result:
 * lwip_port_init checks the count and keeps the stack down.
 */
sys_thread_t sys_thread_new(const char *name, lwip_thread_fn fn, void *arg, int stacksize,
			    int prio)
{
	struct thread_start *ts;
	struct thread *t;

	if (stacksize < 0 || prio <= PRIO_IDLE || prio >= NPRIO || !(ts = malloc(sizeof *ts)))
		goto fail;
	ts->fn = fn;
	ts->arg = arg;
	t = thread_create(name, thread_trampoline, ts, prio, (size_t)stacksize);
	if (!t) {
		free(ts);
		goto fail;
	}
	thread_detach(t);
	return t;
fail:
	printf("lwip: cannot start thread '%s' (priority %d, stack %d bytes)\n", name, prio, stacksize);
	__atomic_fetch_add(&lwip_port_stats.threads_failed, 1, __ATOMIC_RELAXED);
	return NULL;
}

/* In lwIP's thread: the connection's pcb, if it still has one, aborted (its error callback tells the netconn). */
static void socket_abort_in_tcpip(void *arg)
{
	struct netconn *c = arg;

	if (c->pcb.tcp)
		tcp_abort(c->pcb.tcp);
}

int lwip_socket_abort(int s)
{
	struct lwip_sock *sock = lwip_socket_dbg_get_socket(s);

	if (!sock || !sock->conn || NETCONNTYPE_GROUP(netconn_type(sock->conn)) != NETCONN_TCP)
		return -EBADF;
	return tcpip_callback(socket_abort_in_tcpip, sock->conn) == ERR_OK ? 0 : -ENOMEM;
}
