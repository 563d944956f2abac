#include <errno.h>
#include <stddef.h>

#include "kernel/panic.h"
#include "kernel/sync.h"
#include "kernel/thread.h"
#include "kernel/timer.h"
#include "kernel/trap.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"

static void enqueue(struct waitq *wq, struct thread *t)
{
	t->next = NULL;
	t->waiting_on = wq;
	if (wq->tail)
		wq->tail->next = t;
	else
		wq->head = t;
	wq->tail = t;
}

/* Remove t from wq if it is still there; return 1 if it was. */
static int dequeue(struct waitq *wq, struct thread *t)
{
	struct thread *prev = NULL;

	for (struct thread *p = wq->head; p; prev = p, p = p->next) {
		if (p != t)
			continue;
		if (prev)
			prev->next = p->next;
		else
			wq->head = p->next;
		if (wq->tail == p)
			wq->tail = prev;
		p->next = NULL;
		p->waiting_on = NULL;
		return 1;
	}
	return 0;
}

void waitq_wait(struct waitq *wq)
{
	KASSERT(!irq_enabled());
	KASSERT(!in_irq);
	enqueue(wq, curthread);
	thread_block();
}

struct wait_timeout {
	struct waitq *wq;
	struct thread *t;
};

static void wait_timeout_fire(void *arg)
{
	struct wait_timeout *w = arg;

	if (dequeue(w->wq, w->t))
		thread_wake(w->t, WAKE_TIMEOUT);
}

int waitq_wait_timeout(struct waitq *wq, uint64_t timeout_ns)
{
	struct ktimer tm = { 0 };
	struct wait_timeout w = { wq, curthread };

	KASSERT(!irq_enabled());
	KASSERT(!in_irq);
	enqueue(wq, curthread);
	timer_arm(&tm, cycles() + ns_to_cycles(timeout_ns), wait_timeout_fire, &w);
	thread_block();
	timer_cancel(&tm);
	return curthread->wake_reason;
}

/*
 * An empty queue is left at once: a waiter enqueues itself and blocks with
 * interrupts off, after testing its condition, so a queue seen empty holds
 * no thread that this wakeup is for.
 */
int waitq_wake_one(struct waitq *wq)
{
	if (!wq->head)
		return 0;
	irqflags_t f = irq_save();
	struct thread *t = wq->head;

	if (t) {
		dequeue(wq, t);
		thread_wake(t, WAKE_SIGNAL);
	}
	irq_restore(f);
	sched_maybe_preempt();
	return t != NULL;
}

int waitq_wake_all(struct waitq *wq)
{
	if (!wq->head)
		return 0;
	irqflags_t f = irq_save();
	int n = 0;

	while (wq->head) {
		struct thread *t = wq->head;
		dequeue(wq, t);
		thread_wake(t, WAKE_SIGNAL);
		n++;
	}
	irq_restore(f);
	sched_maybe_preempt();
	return n;
}

void mutex_init(struct mutex *m, int recursive)
{
	m->owner = NULL;
	m->depth = 0;
	m->recursive = recursive;
	m->wq.head = m->wq.tail = NULL;
}

/*
 * A mutex nobody holds is taken, and one nobody waits for given back,
 * without masking interrupts: the node has one CPU, so a compare-exchange
 * is atomic against any thread that preempts this one, and a thread that
 * goes to wait does so with interrupts off, between two instructions of
 * the holder's (mutex_unlock clears the owner, then looks for waiters).
 * Masking costs little on hardware, but under QEMU's TCG each popf that
 * restores the interrupt flag ends a translation block.
 */
void mutex_lock(struct mutex *m)
{
	struct thread *none = NULL;

	if (__atomic_compare_exchange_n(&m->owner, &none, curthread, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
		m->depth = 1;
		return;
	}
	irqflags_t f = irq_save();

	if (m->owner == curthread) {
		if (!m->recursive)
			panic("mutex %p: thread '%s' locks it twice", (void *)m, curthread->name);
		m->depth++;
		irq_restore(f);
		return;
	}
	while (m->owner)
		waitq_wait(&m->wq);
	m->owner = curthread;
	m->depth = 1;
	irq_restore(f);
}

int mutex_trylock(struct mutex *m)
{
	irqflags_t f = irq_save();
	int r = -EBUSY;

	if (!m->owner) {
		m->owner = curthread;
		m->depth = 1;
		r = 0;
	} else if (m->owner == curthread && m->recursive) {
		m->depth++;
		r = 0;
	}
	irq_restore(f);
	return r;
}

void mutex_unlock(struct mutex *m)
{
	if (m->owner != curthread)
		panic("mutex %p: unlocked by '%s', which does not hold it", (void *)m, curthread->name);
	if (--m->depth)
		return;
	__atomic_store_n(&m->owner, NULL, __ATOMIC_RELEASE);
	/* The owner cleared before the waiters are looked at (see mutex_lock). */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&m->wq.head, __ATOMIC_RELAXED))
		return;
	irqflags_t f = irq_save();
	int woke = waitq_wake_one(&m->wq);
	irq_restore(f);
	/* The wakeup above ran with interrupts off: take its preemption now. */
	if (woke)
		sched_maybe_preempt();
}

void sem_init(struct sem *s, int64_t count)
{
	s->count = count;
	s->wq.head = s->wq.tail = NULL;
}

void sem_wait(struct sem *s)
{
	irqflags_t f = irq_save();

	while (s->count <= 0)
		waitq_wait(&s->wq);
	s->count--;
	irq_restore(f);
}

int sem_wait_timeout(struct sem *s, uint64_t timeout_ns)
{
	irqflags_t f = irq_save();
	uint64_t deadline = cycles() + ns_to_cycles(timeout_ns);

	while (s->count <= 0) {
		uint64_t now = cycles();
		if (now >= deadline) {
			irq_restore(f);
			return -ETIMEDOUT;
		}
		waitq_wait_timeout(&s->wq, cycles_to_ns(deadline - now));
	}
	s->count--;
	irq_restore(f);
	return 0;
}

void sem_post(struct sem *s)
{
	irqflags_t f = irq_save();

	s->count++;
	waitq_wake_one(&s->wq);
	irq_restore(f);
	sched_maybe_preempt();
}
