/*
 * Kernel threads and the scheduler.
 *
 * One CPU per node.  Threads are preempted by the timer tick and scheduled
 * round-robin within a priority; a higher priority always runs first.  A
 * thread may set its do-not-preempt-me flag (REQ paper, "Dequeuing and Queue
 * Handling in the Receiver Software"): while set, the tick and wakeups of
 * other threads do not take the CPU from it; a preemption that came due is
 * taken when the flag is cleared.  The flag does not mask interrupts, so the
 * NIC's receive path still runs; it only checks the flag.
 *
 * Locking: one CPU, so a critical section is interrupts off (irq_save).
 * Functions marked "irq" may be called from interrupt handlers.
 */
#ifndef KERNEL_THREAD_H
#define KERNEL_THREAD_H

#include <stddef.h>
#include <stdint.h>

enum thread_prio {
	PRIO_IDLE = 0,		/* the idle loop only */
	PRIO_LOW = 1,		/* background work */
	PRIO_NORMAL = 2,	/* apps */
	PRIO_HIGH = 3,		/* network receive and protocol threads */
	NPRIO
};

enum thread_state {
	THREAD_READY,
	THREAD_RUNNING,
	THREAD_BLOCKED,
	THREAD_DEAD,
};

#define THREAD_NAME_MAX 24
/*
 * A thread's console line, assembled and written whole, so that nothing
 * another thread or an interrupt prints lands inside it: as long as the
 * longest line the kernel and its apps print (a stages MARKS line, the
 * fabric's counters); a longer one goes in parts.
 */
#define THREAD_CONBUF 2560
#define THREAD_STACK_DEFAULT (64 * 1024)

struct waitq;

struct thread {
	uint64_t rsp;			/* saved by swtch; must stay first */
	uint8_t *fpu;			/* 512-byte fxsave area, 16-aligned */
	uint64_t fsbase;		/* TLS thread pointer (picolibc errno) */
	enum thread_state state;
	int prio;
	int id;
	volatile int nopreempt;		/* do-not-preempt-me */
	volatile int preempt_pending;	/* a preemption waited for the flag */
	int wake_reason;		/* WAKE_* result of the last block */
	struct thread *next;		/* run queue or wait queue link */
	struct waitq *waiting_on;
	struct thread *all_next;	/* all threads, for listings */
	void *stack;			/* bottom (lowest address) */
	size_t stack_size;
	void *tls;
	void *(*fn)(void *);
	void *arg;
	void *retval;
	int detached;
	struct waitq *joiners;
	uint64_t switches;
	uint64_t cycles;		/* TSC cycles spent running */
	uint64_t last_in;
	char name[THREAD_NAME_MAX];
	int conlen;			/* console line being assembled */
	char constream;			/* its stream: 'O' stdout, 'E' stderr */
	char conprog;			/* the thread writes a program's output (console.h) */
	char conbuf[THREAD_CONBUF];
};

enum { WAKE_SIGNAL = 0, WAKE_TIMEOUT = 1 };

extern struct thread *curthread;

static inline struct thread *thread_current(void) { return curthread; }

/* The thread the CPU switches to next if the current one blocks (NULL: none is ready).  (irq off) */
struct thread *thread_next_ready(void);

/* Initialized thread-local (0x4e4f5721) to check TLS setup. */
extern __thread uint32_t thread_tls_probe;

/* Turn the boot context into the first thread; call once, early. */
void thread_init_boot(void);

/*
 * Create a ready thread running fn(arg) at prio with a stack of stack_size
 * bytes (0 = default).  Return NULL if memory ran out or prio is no
 * priority a thread may have (PRIO_IDLE < prio < NPRIO).
 */
struct thread *thread_create(const char *name, void *(*fn)(void *), void *arg,
			     int prio, size_t stack_size);

/* Wait for t to exit and return its result; t is freed. */
void *thread_join(struct thread *t);

/* Let t free itself on exit; it cannot be joined afterwards. */
void thread_detach(struct thread *t);

/* End the calling thread. */
__attribute__((noreturn)) void thread_exit(void *retval);

/* Give the CPU to another ready thread of the same or higher priority. */
void thread_yield(void);

/* Sleep at least ns nanoseconds. */
void thread_sleep_ns(uint64_t ns);

/* Make ready a thread that was blocked (irq).  reason goes to wake_reason. */
void thread_wake(struct thread *t, int reason);

/*
 * Block the calling thread until thread_wake().  Must be called with
 * interrupts disabled; returns with them disabled.
 */
void thread_block(void);

/* The do-not-preempt-me flag (REQ paper). Nests. */
void thread_nopreempt_begin(void);
void thread_nopreempt_end(void);

/* Is a thread other than the idle thread ready to run?  (interrupts off) */
int thread_runnable(void);

/*
 * Call fn each time the CPU is about to halt, interrupts off (at most 4):
 * work that should wait until nothing else wants the CPU.  A hook may
 * open interrupts briefly; the CPU halts after the hooks only if no
 * thread became ready meanwhile.
 */
void thread_add_idle_hook(void (*fn)(void));

/* Become the idle loop; the boot context calls this last.  Never returns. */
__attribute__((noreturn)) void thread_idle_loop(void);

/* Called at the end of every interrupt (interrupts off): take a due preemption. */
void sched_irq_exit(void);

/* Take a preemption that a wakeup from thread context made due. */
void sched_maybe_preempt(void);

/* Ask for a reschedule at the next interrupt exit or nopreempt_end (irq). */
void sched_request(void);

/* The timer tick: rotate the current priority level (irq). */
void sched_tick(void);

/*
 * Print every thread with kprintf, each with its stack on one line; the
 * running one's from (rip, rbp), the others' from where they switched
 * away.  Reads only: an NMI's dump (kernel/trap.c) calls it.
 */
void thread_dump(uint64_t rip, uint64_t rbp);

/* Number of threads currently existing (for tests). */
int thread_count(void);

#endif
