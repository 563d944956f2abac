/*
 * Wait queues, mutexes and counting semaphores on kernel threads.
 *
 * A wait queue is FIFO.  The usual pattern, with no lost wakeups:
 *	irqflags_t f = irq_save();
 *	while (!condition)
 *		waitq_wait(&wq);
 *	irq_restore(f);
 * and on the other side, from a thread or an interrupt handler:
 *	condition = 1; waitq_wake_one(&wq);
 */
#ifndef KERNEL_SYNC_H
#define KERNEL_SYNC_H

#include <stdint.h>

struct thread;

struct waitq {
	struct thread *head, *tail;
};

#define WAITQ_INIT { 0, 0 }

/* Block on wq; interrupts must be off, and are off again on return. */
void waitq_wait(struct waitq *wq);

/*
 * As waitq_wait, giving up after timeout_ns.  Return WAKE_SIGNAL or
 * WAKE_TIMEOUT.
 */
int waitq_wait_timeout(struct waitq *wq, uint64_t timeout_ns);

/*
 * Wake the first waiter / every waiter (irq).  Return how many woke.  A
 * woken thread of higher priority runs before these return when called
 * with interrupts on; a caller that wakes inside its own irq_save section
 * calls sched_maybe_preempt() after its irq_restore.
 */
int waitq_wake_one(struct waitq *wq);
int waitq_wake_all(struct waitq *wq);

/* A sleeping lock with an owner; recursive if made so. Not for interrupts. */
struct mutex {
	struct thread *owner;
	unsigned depth;
	int recursive;
	struct waitq wq;
};

#define MUTEX_INIT { 0, 0, 0, WAITQ_INIT }

void mutex_init(struct mutex *m, int recursive);
void mutex_lock(struct mutex *m);
/* Return 0 if taken, -EBUSY if held by another thread. */
int mutex_trylock(struct mutex *m);
void mutex_unlock(struct mutex *m);

/* Counting semaphore; sem_post may be called from interrupt handlers. */
struct sem {
	int64_t count;
	struct waitq wq;
};

void sem_init(struct sem *s, int64_t count);
void sem_wait(struct sem *s);
/* Return 0 when taken, -ETIMEDOUT on timeout. */
int sem_wait_timeout(struct sem *s, uint64_t timeout_ns);
void sem_post(struct sem *s);

#endif
