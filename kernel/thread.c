/*
 * Threads and the scheduler: per-priority FIFO run queues, round-robin by
 * the timer tick, strict priority between levels, and the REQ paper's
 * do-not-preempt-me flag.  See thread.h for the contract.
 */
#include <stdio.h>
#include <string.h>

#include "kernel/console.h"
#include "kernel/page.h"
#include "kernel/panic.h"
#include "kernel/sync.h"
#include "kernel/thread.h"
#include "kernel/trace.h"
#include "kernel/timer.h"
#include "kernel/trap.h"
#include "kernel/tsc.h"
#include "kernel/vm.h"
#include "kernel/x86.h"

_Static_assert(offsetof(struct thread, rsp) == 0, "swtch expects rsp first");
_Static_assert(offsetof(struct thread, fpu) == 8, "swtch expects fpu second");

#define STACK_CANARY 0x6e6f772d73746b21ULL	/* "now-stk!" */
#define FPU_AREA 512

struct thread *curthread;
static struct thread boot_thread;
static uint8_t boot_fpu[FPU_AREA] __attribute__((aligned(64)));
static struct thread *idle_thread;
static struct thread *runq_head[NPRIO], *runq_tail[NPRIO];
static unsigned runq_mask;	/* bit p: runq_head[p] holds a thread */
_Static_assert(NPRIO <= 32, "a run queue's bit in runq_mask");
static volatile int need_resched;
static struct thread *all_threads;
static struct thread *zombies;		/* exited detached threads to free */
static int next_id;
static int nthreads;
static void (*idle_hooks[4])(void);

extern void swtch(struct thread *prev, struct thread *next);
extern void thread_start(void);

/* TLS template (linker/kernel.ld): picolibc's errno and friends. */
extern char __tdata_start[], __tdata_end[], __tbss_start[], __tbss_end[];
extern char __tls_align[];

/*
 * An initialized thread-local keeps .tdata non-empty, so that the TLS
 * segment starts at __tdata_start; the selftest checks each thread sees it.
 */
__thread uint32_t thread_tls_probe = 0x4e4f5721;

static size_t tls_offset(void)
{
	size_t align = (size_t)__tls_align ? (size_t)__tls_align : 8;
	uintptr_t end = (uintptr_t)__tbss_end > (uintptr_t)__tdata_end ? (uintptr_t)__tbss_end
								      : (uintptr_t)__tdata_end;
	size_t memsz = end - (uintptr_t)__tdata_start;
	return (memsz + align - 1) & ~(align - 1);
}

/* Bytes of a TLS block: the variables, then the TCB (a self pointer). */
static size_t tls_block_size(void)
{
	return tls_offset() + 64;
}

/* Fill a TLS block; return the thread pointer to load into FS. */
static uint64_t tls_setup(void *block)
{
	uint8_t *b = block;
	size_t tdata = (size_t)(__tdata_end - __tdata_start);
	uint64_t tp = (uintptr_t)b + tls_offset();

	memcpy(b, __tdata_start, tdata);
	memset(b + tdata, 0, tls_offset() - tdata);
	*(uint64_t *)tp = tp;		/* x86-64 ABI: %fs:0 holds the TCB address */
	return tp;
}

/*
 * The FS base (each thread's TLS) is loaded on every switch: with
 * wrfsbase where the CPU has it (CPUID.7.0:EBX bit 0, enabled by
 * CR4.FSGSBASE), with wrmsr otherwise; wrmsr costs several times more
 * under QEMU's TCG.
 */
static int have_fsgsbase;

static void fsbase_init(void)
{
	uint32_t a, b, c, d;

	cpuid(0, 0, &a, &b, &c, &d);
	if (a < 7)
		return;
	cpuid(7, 0, &a, &b, &c, &d);
	if (b & 1) {
		write_cr4(read_cr4() | (1UL << 16));
		have_fsgsbase = 1;
	}
}

static inline void set_fsbase(uint64_t v)
{
	if (have_fsgsbase)
		__asm__ volatile("wrfsbase %0" : : "r"(v) : "memory");
	else
		wrmsr(MSR_FS_BASE, v);
}

static void fpu_setup(uint8_t *area)
{
	memset(area, 0, FPU_AREA);
	*(uint16_t *)(area + 0) = 0x037f;	/* FCW: default x87 control word */
	*(uint32_t *)(area + 24) = 0x1f80;	/* MXCSR: all exceptions masked */
}

static void runq_push(struct thread *t)
{
	int p = t->prio;

	t->next = NULL;
	if (runq_tail[p])
		runq_tail[p]->next = t;
	else
		runq_head[p] = t;
	runq_tail[p] = t;
	runq_mask |= 1u << p;
}

/* The run queues above the idle level. */
#define RUNQ_ABOVE_IDLE (~0u << (PRIO_IDLE + 1))

static struct thread *runq_pop(void)
{
	unsigned m = runq_mask & RUNQ_ABOVE_IDLE;

	if (!m)
		return idle_thread;
	int p = 31 - __builtin_clz(m);	/* the highest priority with a thread */
	struct thread *t = runq_head[p];
	runq_head[p] = t->next;
	if (!runq_head[p]) {
		runq_tail[p] = NULL;
		runq_mask &= ~(1u << p);
	}
	t->next = NULL;
	return t;
}

struct thread *thread_next_ready(void)
{
	unsigned m = runq_mask & RUNQ_ABOVE_IDLE;

	return m ? runq_head[31 - __builtin_clz(m)] : NULL;
}

/* A thread of priority prio or above (never the idle level) is ready. */
static int ready_at_or_above(int prio)
{
	return (runq_mask & RUNQ_ABOVE_IDLE & (~0u << prio)) != 0;
}

/* The lowest page of a stack is an unmapped guard; the canary sits above it. */
static uint64_t *stack_canary(struct thread *t)
{
	return (uint64_t *)((uint8_t *)t->stack + PAGE_SIZE);
}

static void check_stack(struct thread *t)
{
	if (t->stack && *stack_canary(t) != STACK_CANARY)
		panic("stack overflow in thread '%s' (stack %p, %zu bytes)", t->name, t->stack,
		      t->stack_size);
}

/* Switch to the best ready thread.  Interrupts off. */
static void schedule(void)
{
	struct thread *prev = curthread, *next;
	uint64_t now;

	need_resched = 0;
	prev->preempt_pending = 0;
	if (prev->state == THREAD_RUNNING && prev != idle_thread) {
		prev->state = THREAD_READY;
		runq_push(prev);
	}
	next = runq_pop();
	if (next == prev) {
		prev->state = THREAD_RUNNING;
		return;
	}
	check_stack(prev);
	now = rdtsc();
	prev->cycles += now - prev->last_in;
	next->last_in = now;
	next->state = THREAD_RUNNING;
	next->switches++;
	curthread = next;
	set_fsbase(next->fsbase);
	swtch(prev, next);
	/* Running as prev again. */
}

void thread_init_boot(void)
{
	static uint8_t boot_tls[4096] __attribute__((aligned(64)));
	struct thread *t = &boot_thread;

	t->fpu = boot_fpu;
	t->state = THREAD_RUNNING;
	t->prio = PRIO_NORMAL;
	t->id = next_id++;
	strcpy(t->name, "boot");
	if (tls_block_size() > sizeof boot_tls)
		for (;;)
			hlt();		/* cannot even print yet */
	t->tls = boot_tls;
	t->fsbase = tls_setup(boot_tls);
	fsbase_init();
	set_fsbase(t->fsbase);
	t->all_next = all_threads;
	all_threads = t;
	nthreads = 1;
	curthread = t;
	t->last_in = rdtsc();
}

/*
 * A thread's memory: one page block for the stack, one for the thread
 * structure, its fxsave area and its TLS block.
 */
static size_t control_bytes(void)
{
	return ((sizeof(struct thread) + 63) & ~63UL) + FPU_AREA + tls_block_size();
}

static void free_thread(struct thread *t)
{
	vm_remap_page((uintptr_t)t->stack);
	page_free(t->stack, page_order(t->stack_size));
	page_free(t, page_order(control_bytes()));
}

static void reap(void)
{
	irqflags_t f = irq_save();
	struct thread *z = zombies;

	zombies = NULL;
	irq_restore(f);
	while (z) {
		struct thread *n = z->next;
		free_thread(z);
		z = n;
	}
}

static void unlink_all(struct thread *t)
{
	for (struct thread **pp = &all_threads; *pp; pp = &(*pp)->all_next) {
		if (*pp == t) {
			*pp = t->all_next;
			break;
		}
	}
	nthreads--;
}

void thread_entry(void)
{
	struct thread *t = curthread;

	sti();
	thread_exit(t->fn(t->arg));
}

struct thread *thread_create(const char *name, void *(*fn)(void *), void *arg, int prio,
			     size_t stack_size)
{
	struct thread *t;
	uint8_t *ctl;
	uint64_t *sp;
	int sorder;

	if (prio <= PRIO_IDLE || prio >= NPRIO) {
		printf("thread_create('%s'): bad priority %d\n", name, prio);
		return NULL;
	}
	reap();
	if (stack_size == 0)
		stack_size = THREAD_STACK_DEFAULT;
	sorder = page_order(stack_size + PAGE_SIZE);	/* one more for the guard */
	if (sorder < 0)
		return NULL;
	stack_size = PAGE_SIZE << sorder;
	ctl = page_alloc(page_order(control_bytes()));
	if (!ctl)
		return NULL;
	memset(ctl, 0, control_bytes());
	t = (struct thread *)ctl;
	t->stack = page_alloc(sorder);
	if (!t->stack) {
		page_free(ctl, page_order(control_bytes()));
		return NULL;
	}
	t->stack_size = stack_size;
	if (vm_unmap_page((uintptr_t)t->stack) < 0) {
		page_free(t->stack, sorder);
		page_free(ctl, page_order(control_bytes()));
		return NULL;
	}
	*stack_canary(t) = STACK_CANARY;
	t->fpu = ctl + ((sizeof(struct thread) + 63) & ~63UL);
	fpu_setup(t->fpu);
	t->tls = t->fpu + FPU_AREA;
	t->fsbase = tls_setup(t->tls);
	t->fn = fn;
	t->arg = arg;
	t->prio = prio;
	snprintf(t->name, sizeof t->name, "%s", name);

	/* The frame swtch pops: six callee-saved registers, then thread_start. */
	sp = (uint64_t *)((uint8_t *)t->stack + stack_size);
	*--sp = 0;
	*--sp = 0;
	*--sp = (uintptr_t)thread_start;
	for (int i = 0; i < 6; i++)
		*--sp = 0;
	t->rsp = (uintptr_t)sp;

	irqflags_t f = irq_save();
	t->id = next_id++;
	t->all_next = all_threads;
	all_threads = t;
	nthreads++;
	t->state = THREAD_READY;
	runq_push(t);
	if (t->prio > curthread->prio)
		need_resched = 1;
	irq_restore(f);
	if (need_resched && !in_irq && irq_enabled() && !curthread->nopreempt)
		thread_yield();
	return t;
}

void thread_exit(void *retval)
{
	struct thread *t = curthread;

	console_flush();
	cli();
	if (t == &boot_thread || t == idle_thread)
		panic("thread_exit from '%s'", t->name);
	if (t->nopreempt)
		panic("thread '%s' exits with do-not-preempt-me set", t->name);
	t->retval = retval;
	t->state = THREAD_DEAD;
	unlink_all(t);
	if (t->detached) {
		t->next = zombies;
		zombies = t;
	} else if (t->joiners) {
		waitq_wake_all(t->joiners);
	}
	schedule();
	panic("dead thread '%s' ran again", t->name);
}

void *thread_join(struct thread *t)
{
	struct waitq wq = WAITQ_INIT;
	void *r;

	irqflags_t f = irq_save();
	if (t->detached)
		panic("thread_join: '%s' is detached", t->name);
	while (t->state != THREAD_DEAD) {
		t->joiners = &wq;
		waitq_wait(&wq);
	}
	irq_restore(f);
	r = t->retval;
	free_thread(t);
	return r;
}

void thread_detach(struct thread *t)
{
	irqflags_t f = irq_save();

	if (t->state == THREAD_DEAD) {
		irq_restore(f);
		free_thread(t);
		return;
	}
	t->detached = 1;
	irq_restore(f);
}

void thread_yield(void)
{
	irqflags_t f = irq_save();

	schedule();
	irq_restore(f);
}

void thread_block(void)
{
	KASSERT(!irq_enabled());
	curthread->state = THREAD_BLOCKED;
	schedule();
}

void thread_wake(struct thread *t, int reason)
{
	irqflags_t f = irq_save();

	if (t->state == THREAD_BLOCKED) {
		t->state = THREAD_READY;
		t->wake_reason = reason;
		runq_push(t);
		if (t->prio > curthread->prio)
			need_resched = 1;
	}
	irq_restore(f);
}

static void sleep_fire(void *arg)
{
	thread_wake(arg, WAKE_TIMEOUT);
}

void thread_sleep_ns(uint64_t ns)
{
	struct ktimer tm = { 0 };
	irqflags_t f = irq_save();

	curthread->state = THREAD_BLOCKED;
	timer_arm(&tm, cycles() + ns_to_cycles(ns), sleep_fire, curthread);
	schedule();
	irq_restore(f);
}

void thread_nopreempt_begin(void)
{
	curthread->nopreempt++;
	barrier();
}

void thread_nopreempt_end(void)
{
	barrier();
	if (curthread->nopreempt <= 0)
		panic("thread_nopreempt_end without begin in '%s'", curthread->name);
	if (--curthread->nopreempt == 0 && (curthread->preempt_pending || need_resched))
		thread_yield();
}

void sched_request(void)
{
	need_resched = 1;
}

void sched_tick(void)
{
	if (curthread == idle_thread || ready_at_or_above(curthread->prio))
		need_resched = 1;
}

void sched_irq_exit(void)
{
	if (!need_resched)
		return;
	if (curthread->nopreempt) {
		curthread->preempt_pending = 1;
		return;
	}
	schedule();
}

/* Take a preemption that a wakeup from thread context made due. */
void sched_maybe_preempt(void)
{
	if (need_resched && !in_irq && irq_enabled() && !curthread->nopreempt)
		thread_yield();
}

int thread_runnable(void)
{
	return ready_at_or_above(PRIO_LOW);
}

void thread_add_idle_hook(void (*fn)(void))
{
	for (int i = 0; i < 4; i++) {
		if (!idle_hooks[i]) {
			idle_hooks[i] = fn;
			return;
		}
	}
	panic("thread: more than 4 idle hooks");
}

void thread_idle_loop(void)
{
	struct thread *t = curthread;

	cli();
	t->prio = PRIO_IDLE;
	strcpy(t->name, "idle");
	idle_thread = t;
	for (;;) {
		reap();
		cli();
		trace_point(TS_WAIT);
		for (int i = 0; i < 4 && idle_hooks[i]; i++)
			idle_hooks[i]();
		if (ready_at_or_above(PRIO_LOW)) {
			schedule();
			continue;
		}
		sti_hlt();
	}
}

int thread_count(void)
{
	return nthreads;
}

void thread_dump(uint64_t rip, uint64_t rbp)
{
	static const char *const st[] = { "ready", "running", "blocked", "dead" };

	kprintf("threads:\n");
	for (struct thread *t = all_threads; t; t = t->all_next) {
		kprintf("  %3d %-16s prio %d %-8s switches %lu cpu %lu us%s: ", t->id, t->name,
			t->prio, st[t->state], t->switches, cycles_to_ns(t->cycles) / 1000,
			t->nopreempt ? " nopreempt" : "");
		if (t == curthread) {
			backtrace_short(rip, rbp);
		} else if (t->state == THREAD_DEAD || !t->rsp) {
			kprintf("-\n");
		} else {
			/* swtch's frame: r15 r14 r13 r12 rbx rbp, then its return address. */
			const uint64_t *f = (const uint64_t *)t->rsp;
			backtrace_short(f[6] - 1, f[5]);
		}
	}
}
