/*
 * selftest: in-kernel tests of the core (page allocator, heap, threads,
 * preemption, priorities, do-not-preempt-me, wait queues, mutexes,
 * semaphores, timers, per-thread errno and SSE state).
 *
 * Each test prints "selftest: <name> ok" or "selftest: <name> FAILED: why";
 * the app ends with "RESULT selftest passed=N failed=M" and fails if any did.
 * only=<name> runs one test.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/app.h"
#include "apps/selftest.h"
#include "kernel/machine.h"
#include "kernel/mem.h"
#include "kernel/page.h"
#include "kernel/sync.h"
#include "kernel/thread.h"
#include "kernel/timer.h"
#include "kernel/tsc.h"
#include "kernel/vm.h"
#include "kernel/x86.h"

extern const struct selftest __selftests_start[], __selftests_end[];

/* Spin until cond or timeout_ms passes; return cond. Yields never. */
#define SPIN_UNTIL(cond, timeout_ms)                                              \
	({                                                                        \
		uint64_t end_ = cycles() + ns_to_cycles((uint64_t)(timeout_ms) * 1000000); \
		while (!(cond) && cycles() < end_)                                \
			cpu_relax();                                              \
		(cond);                                                           \
	})

SELFTEST(page_alloc_orders)
{
	size_t before = page_free_pages();
	void *blocks[PAGE_MAX_ORDER + 1];

	for (int o = 0; o <= 6; o++) {
		blocks[o] = page_alloc(o);
		CHECK(blocks[o] != NULL);
		CHECK(((uintptr_t)blocks[o] & ((PAGE_SIZE << o) - 1)) == 0);
		memset(blocks[o], 0xa5, PAGE_SIZE << o);
	}
	/* No two blocks overlap. */
	for (int a = 0; a <= 6; a++)
		for (int b = a + 1; b <= 6; b++) {
			uintptr_t x = (uintptr_t)blocks[a], y = (uintptr_t)blocks[b];
			CHECK(x + (PAGE_SIZE << a) <= y || y + (PAGE_SIZE << b) <= x);
		}
	for (int o = 0; o <= 6; o++)
		page_free(blocks[o], o);
	CHECK(page_free_pages() == before);
	return NULL;
}

SELFTEST(page_alloc_exhaust)
{
	/* Take every order-0 page there is, then give them all back. */
	size_t before = page_free_pages(), n = 0;
	void **list = NULL;
	void *p;

	while ((p = page_alloc(0)) != NULL) {
		*(void **)p = list;
		list = p;
		n++;
	}
	CHECK(n == before);
	CHECK(page_free_pages() == 0);
	while (list) {
		void **next = *list;
		page_free(list, 0);
		list = next;
	}
	CHECK(page_free_pages() == before);
	/* Everything merged back: a maximal block is available again. */
	p = page_alloc(PAGE_MAX_ORDER);
	CHECK(p != NULL);
	page_free(p, PAGE_MAX_ORDER);
	return NULL;
}

SELFTEST(heap_malloc)
{
	enum { N = 200 };
	unsigned char *p[N];

	for (int i = 0; i < N; i++) {
		size_t sz = (size_t)(i * 37 % 4000) + 1;
		p[i] = malloc(sz);
		CHECK(p[i] != NULL);
		CHECK(((uintptr_t)p[i] & 7) == 0);
		memset(p[i], i & 0xff, sz);
	}
	for (int i = 0; i < N; i++) {
		size_t sz = (size_t)(i * 37 % 4000) + 1;
		for (size_t j = 0; j < sz; j++)
			CHECK(p[i][j] == (i & 0xff));
		free(p[i]);
	}
	unsigned char *z = calloc(1000, 4);
	CHECK(z != NULL);
	for (int i = 0; i < 4000; i++)
		CHECK(z[i] == 0);
	z = realloc(z, 100000);
	CHECK(z != NULL);
	free(z);
	/* A request larger than the heap fails cleanly. */
	CHECK(malloc(heap_end - heap_start + 1) == NULL);
	CHECK(errno == ENOMEM);
	return NULL;
}

static void *add_one(void *arg)
{
	return (void *)((uintptr_t)arg + 1);
}

SELFTEST(thread_create_join)
{
	struct thread *t[8];
	int before = thread_count();

	for (uintptr_t i = 0; i < 8; i++) {
		t[i] = thread_create("st-add", add_one, (void *)i, PRIO_NORMAL, 0);
		CHECK(t[i] != NULL);
	}
	for (uintptr_t i = 0; i < 8; i++)
		CHECK(thread_join(t[i]) == (void *)(i + 1));
	CHECK(thread_count() == before);
	return NULL;
}

/* Threads that cannot be: refused (NULL), never a stopped node, nothing leaked. */
SELFTEST(thread_create_refused)
{
	int before = thread_count();
	size_t pages = page_free_pages();

	CHECK(thread_create("st-idle", add_one, NULL, PRIO_IDLE, 0) == NULL);
	CHECK(thread_create("st-none", add_one, NULL, NPRIO, 0) == NULL);
	CHECK(thread_create("st-neg", add_one, NULL, -1, 0) == NULL);
	CHECK(thread_create("st-huge", add_one, NULL, PRIO_NORMAL, (size_t)1 << 40) == NULL);
	/* Fewer or as many (an exited thread may be reaped meanwhile), never more. */
	CHECK(thread_count() <= before);
	CHECK(page_free_pages() >= pages);
	return NULL;
}

static volatile int flag_a, flag_b;

static void *spin_set_b(void *arg)
{
	(void)arg;
	flag_b = 1;
	/* Spin without yielding until the main thread answers. */
	SPIN_UNTIL(flag_a, 5000);
	return (void *)(uintptr_t)flag_a;
}

SELFTEST(preemption_round_robin)
{
	/*
	 * Two threads of one priority, neither yielding: each waits for the
	 * other's flag.  Only the timer tick can make both progress.
	 */
	flag_a = flag_b = 0;
	struct thread *t = thread_create("st-spin", spin_set_b, NULL, PRIO_NORMAL, 0);
	CHECK(t != NULL);
	CHECK(SPIN_UNTIL(flag_b, 5000));
	flag_a = 1;
	CHECK(thread_join(t) == (void *)1);
	return NULL;
}

static struct waitq prio_wq = WAITQ_INIT;
static volatile uint64_t high_ran_at;

static void *high_waiter(void *arg)
{
	irqflags_t f = irq_save();
	while (!flag_a)
		waitq_wait(&prio_wq);
	irq_restore(f);
	high_ran_at = cycles();
	return NULL;
}

SELFTEST(priority_preempts)
{
	/* A high-priority thread woken from here runs before this call returns. */
	flag_a = 0;
	high_ran_at = 0;
	struct thread *t = thread_create("st-high", high_waiter, NULL, PRIO_HIGH, 0);
	CHECK(t != NULL);
	thread_sleep_ns(1000000);
	flag_a = 1;
	waitq_wake_one(&prio_wq);
	uint64_t after = cycles();
	CHECK(high_ran_at != 0 && high_ran_at <= after);
	thread_join(t);
	return NULL;
}

static volatile uint64_t other_count;
static volatile int other_stop;

static void *counter(void *arg)
{
	(void)arg;
	while (!other_stop)
		other_count++;
	return NULL;
}

SELFTEST(nopreempt_flag)
{
	/*
	 * With the flag set, an equal-priority ready thread does not run for
	 * several ticks; once cleared, it does.
	 */
	other_count = 0;
	other_stop = 0;
	struct thread *t = thread_create("st-count", counter, NULL, PRIO_NORMAL, 0);
	CHECK(t != NULL);
	thread_yield();			/* let it start counting */
	CHECK(SPIN_UNTIL(other_count > 0, 5000));

	thread_nopreempt_begin();
	uint64_t start = other_count, t0 = ticks;
	while (ticks < t0 + 5)		/* five ticks with interrupts on */
		cpu_relax();
	uint64_t during = other_count - start;
	thread_nopreempt_end();		/* the pending preemption happens here */

	uint64_t mark = other_count;
	t0 = ticks;
	while (ticks < t0 + 5)
		cpu_relax();
	uint64_t after = other_count - mark;
	other_stop = 1;
	thread_join(t);
	CHECK(during == 0);
	CHECK(after > 0);
	return NULL;
}

static struct waitq pc_wq = WAITQ_INIT;
static volatile int pc_items;

static void *producer(void *arg)
{
	for (int i = 0; i < 100; i++) {
		irqflags_t f = irq_save();
		pc_items++;
		irq_restore(f);
		waitq_wake_one(&pc_wq);
		if (i % 10 == 0)
			thread_yield();
	}
	return arg;
}

SELFTEST(waitq_producer_consumer)
{
	int got = 0;

	pc_items = 0;
	struct thread *t = thread_create("st-prod", producer, NULL, PRIO_NORMAL, 0);
	CHECK(t != NULL);
	while (got < 100) {
		irqflags_t f = irq_save();
		while (pc_items == 0)
			waitq_wait(&pc_wq);
		got += pc_items;
		pc_items = 0;
		irq_restore(f);
	}
	thread_join(t);
	CHECK(got == 100);
	return NULL;
}

SELFTEST(waitq_timeout)
{
	struct waitq wq = WAITQ_INIT;
	uint64_t t0 = cycles();

	irqflags_t f = irq_save();
	int r = waitq_wait_timeout(&wq, 15000000);
	irq_restore(f);
	CHECK(r == WAKE_TIMEOUT);
	CHECK(cycles_to_ns(cycles() - t0) >= 15000000);
	CHECK(wq.head == NULL);
	return NULL;
}

static struct mutex mtx = MUTEX_INIT;
static volatile int in_cs, cs_violations, shared_counter;

static void *mutex_worker(void *arg)
{
	for (int i = 0; i < 200; i++) {
		mutex_lock(&mtx);
		if (in_cs++)
			cs_violations++;
		int v = shared_counter;
		if (i % 7 == 0)
			thread_yield();		/* invite others into the section */
		shared_counter = v + 1;
		in_cs--;
		mutex_unlock(&mtx);
	}
	return arg;
}

SELFTEST(mutex_exclusion)
{
	struct thread *t[4];

	shared_counter = cs_violations = in_cs = 0;
	for (int i = 0; i < 4; i++) {
		t[i] = thread_create("st-mutex", mutex_worker, NULL, PRIO_NORMAL, 0);
		CHECK(t[i] != NULL);
	}
	for (int i = 0; i < 4; i++)
		thread_join(t[i]);
	CHECK(cs_violations == 0);
	CHECK(shared_counter == 800);
	CHECK(mutex_trylock(&mtx) == 0);
	mutex_unlock(&mtx);
	return NULL;
}

static struct sem sem_items;

static void *sem_poster(void *arg)
{
	for (int i = 0; i < 50; i++) {
		sem_post(&sem_items);
		if (i % 5 == 0)
			thread_sleep_ns(100000);
	}
	return arg;
}

SELFTEST(semaphore)
{
	sem_init(&sem_items, 0);
	CHECK(sem_wait_timeout(&sem_items, 2000000) == -ETIMEDOUT);
	struct thread *t = thread_create("st-sem", sem_poster, NULL, PRIO_NORMAL, 0);
	CHECK(t != NULL);
	for (int i = 0; i < 50; i++)
		CHECK(sem_wait_timeout(&sem_items, 5000000000ULL) == 0);
	thread_join(t);
	CHECK(sem_items.count == 0);
	return NULL;
}

struct fired {
	volatile int n;
	uint64_t at[3];
};

static void timer_fn(void *arg)
{
	struct fired *f = arg;
	f->at[f->n++] = cycles();
}

SELFTEST(timer_order_and_cancel)
{
	struct ktimer a = { 0 }, b = { 0 }, c = { 0 };
	struct fired f = { 0 };
	uint64_t now = cycles();
	uint64_t da = now + ns_to_cycles(12000000), db = now + ns_to_cycles(4000000);

	timer_arm(&a, da, timer_fn, &f);
	timer_arm(&b, db, timer_fn, &f);
	timer_arm(&c, now + ns_to_cycles(8000000), timer_fn, &f);
	CHECK(timer_cancel(&c) == 1);
	CHECK(timer_cancel(&c) == 0);
	thread_sleep_ns(30000000);
	CHECK(f.n == 2);
	CHECK(f.at[0] >= db);		/* never early */
	CHECK(f.at[1] >= da);
	CHECK(!a.armed && !b.armed);
	return NULL;
}

SELFTEST(sleep_and_ticks)
{
	uint64_t t0 = cycles(), k0 = ticks;

	thread_sleep_ns(50000000);
	CHECK(cycles_to_ns(cycles() - t0) >= 50000000);
	CHECK(ticks > k0);
	return NULL;
}

static volatile int errno_bad;

static void *errno_worker(void *arg)
{
	int mine = (int)(uintptr_t)arg;

	if (thread_tls_probe != 0x4e4f5721)
		errno_bad++;
	thread_tls_probe = (uint32_t)mine;
	for (int i = 0; i < 50; i++) {
		errno = mine;
		thread_yield();
		if (errno != mine || thread_tls_probe != (uint32_t)mine)
			errno_bad++;
	}
	return NULL;
}

SELFTEST(errno_per_thread)
{
	struct thread *t[3];

	errno_bad = 0;
	for (int i = 0; i < 3; i++) {
		t[i] = thread_create("st-errno", errno_worker, (void *)(uintptr_t)(100 + i), PRIO_NORMAL, 0);
		CHECK(t[i] != NULL);
	}
	for (int i = 0; i < 3; i++)
		thread_join(t[i]);
	CHECK(errno_bad == 0);
	return NULL;
}

static volatile int fpu_bad;

static void *fpu_worker(void *arg)
{
	double x = (double)(uintptr_t)arg, acc = 0;
	uint64_t end = cycles() + ns_to_cycles(60000000);

	/* Long enough for several ticks to preempt us mid-computation. */
	while (cycles() < end) {
		acc = 0;
		for (int i = 1; i <= 1000; i++)
			acc += x * i;
		if (acc != x * 500500.0)
			fpu_bad++;
	}
	return NULL;
}

SELFTEST(sse_state_per_thread)
{
	struct thread *t[3];

	fpu_bad = 0;
	for (int i = 0; i < 3; i++) {
		t[i] = thread_create("st-fpu", fpu_worker, (void *)(uintptr_t)(i + 3), PRIO_NORMAL, 0);
		CHECK(t[i] != NULL);
	}
	for (int i = 0; i < 3; i++)
		thread_join(t[i]);
	CHECK(fpu_bad == 0);
	return NULL;
}

/*
 * A switch keeps only the floating-point control words (kernel/swtch.S):
 * each thread's rounding mode survives its sleeps while another thread
 * runs with its own, and a new thread starts with the defaults.
 */
static volatile int fpctl_bad;

static uint32_t get_mxcsr(void)
{
	uint32_t v;
	__asm__ volatile("stmxcsr %0" : "=m"(v));
	return v;
}

static uint16_t get_fcw(void)
{
	uint16_t v;
	__asm__ volatile("fnstcw %0" : "=m"(v));
	return v;
}

static void *fpctl_worker(void *arg)
{
	uint32_t rc = (uint32_t)(uintptr_t)arg;		/* MXCSR rounding control, 0..3 */
	uint32_t mx = (0x1f80 & ~0x6000u) | rc << 13;
	uint16_t cw = (uint16_t)((0x037f & ~0x0c00) | rc << 10);

	if (get_mxcsr() != 0x1f80 || get_fcw() != 0x037f)
		fpctl_bad++;
	__asm__ volatile("ldmxcsr %0" : : "m"(mx));
	__asm__ volatile("fldcw %0" : : "m"(cw));
	for (int i = 0; i < 50; i++) {
		if (i & 1)
			thread_yield();
		else
			thread_sleep_ns(100000);
		if (get_mxcsr() != mx || get_fcw() != cw)
			fpctl_bad++;
	}
	return NULL;
}

SELFTEST(fp_control_per_thread)
{
	struct thread *t[4];

	fpctl_bad = 0;
	for (int i = 0; i < 4; i++) {
		t[i] = thread_create("st-fpctl", fpctl_worker, (void *)(uintptr_t)i, PRIO_NORMAL, 0);
		CHECK(t[i] != NULL);
	}
	for (int i = 0; i < 4; i++)
		thread_join(t[i]);
	CHECK(fpctl_bad == 0);
	return NULL;
}

static const struct argspec selftest_args[] = {
	{ "only", ARG_STR, 0, 0, "run only the test with this name" },
	{ NULL, 0, 0, 0, NULL },
};

/*
 * Device memory above 4 GiB (a UEFI PC's 64-bit BARs): mapped where it is
 * below 2^47, at the top of the address space from 2^47 to 2^48, refused
 * past the CPU's physical address width.  Only the tables are looked at:
 * nothing answers at these addresses.
 */
SELFTEST(vm_map_above_4g)
{
	int bits = vm_phys_bits();
	uint64_t top = bits >= 64 ? ~0ULL : 1ULL << bits;
	/* Astride two 2 MiB pages, under a PML4 entry of its own from 512 GiB. */
	uint64_t phys = (top > (1ULL << 40) ? (1ULL << 40) : top) - 0x300000 + 0x123;
	volatile uint8_t *p = vm_map_mmio(phys, 0x200000);

	CHECK(p == (volatile uint8_t *)(uintptr_t)phys);
	CHECK(vm_translate((uintptr_t)p) == phys);
	CHECK(vm_translate((uintptr_t)p + 0x1fffff) == phys + 0x1fffff);
	CHECK(vm_map_mmio(phys, 0x200000) == p);		/* again: the same */
	CHECK(vm_map_mmio(top - 0x1000, 0x2000) == NULL);	/* past the CPU's width */
	CHECK(vm_map_mmio(VM_LOW_TOP - 0x1000, 0x2000) == NULL);	/* astride the halves */
	CHECK(vm_map_mmio(phys, 0) == NULL);
	CHECK(vm_map_mmio(~0ULL - 0xfff, 0x2000) == NULL);	/* wraps */
	CHECK(vm_map_mmio(0xfee00000, 0x1000) == (void *)0xfee00000);	/* mapped at boot */
	if (bits >= 48) {
		uint64_t hi = VM_LOW_TOP + 0x40000000 + 0x456;
		p = vm_map_mmio(hi, 0x1000);
		CHECK(p == (volatile uint8_t *)(uintptr_t)(hi + VM_HIGH_OFFSET));
		CHECK((uintptr_t)p >= 0xffff800000000000ULL);
		CHECK(vm_translate((uintptr_t)p) == hi);
	} else {
		CHECK(vm_map_mmio(VM_LOW_TOP + 0x40000000, 0x1000) == NULL);
	}
	return NULL;
}

/*
 * Under QEMU's TCG, RAM is mapped with 4 KiB pages, and device memory
 * above 4 GiB too, so that QEMU notes no large page where an invlpg
 * (a stack's guard page) would flush its whole TLB (kernel/vm.c); under
 * KVM and on hardware the 2 MiB pages of the boot map stay.
 */
static int selftest_main(void);

SELFTEST(vm_tcg_small_pages)
{
	int tcg = cpu_is_tcg();
	void *pg = page_alloc(0);

	CHECK(pg != NULL);
	/* Under TCG, RAM in 4 KiB pages: the heap, the page allocator's, the kernel, this stack. */
	CHECK(!tcg || vm_page_size((uintptr_t)pg) == PAGE_SIZE);
	page_free(pg, 0);
	CHECK(!tcg || vm_page_size(heap_start) == PAGE_SIZE);
	CHECK(!tcg || vm_page_size(heap_end - 1) == PAGE_SIZE);
	CHECK(!tcg || vm_page_size((uintptr_t)&selftest_main) == PAGE_SIZE);
	CHECK(!tcg || vm_page_size((uintptr_t)&pg) == PAGE_SIZE);
	CHECK(vm_page_size(0xfee00000) == 1ULL << 21);		/* the local APIC: a boot page */
	/* Above 4 GiB, under a PML4 entry of its own from 512 GiB (vm_map_above_4g). */
	int bits = vm_phys_bits();
	uint64_t top = bits >= 64 ? ~0ULL : 1ULL << bits;
	uint64_t phys = (top > (1ULL << 40) ? (1ULL << 40) : top) - 0x300000;
	CHECK(vm_map_mmio(phys, 0x1000) != NULL);
	CHECK(vm_page_size((uintptr_t)phys) == (tcg ? PAGE_SIZE : 1ULL << 21));
	CHECK(vm_page_size(VM_LOW_TOP - 0x1000) == 0);
	return NULL;
}

static int selftest_main(void)
{
	const char *only = arg_str("only", NULL);
	int passed = 0, failed = 0;

	for (const struct selftest *t = __selftests_start; t < __selftests_end; t++) {
		if (only && strcmp(only, t->name) != 0)
			continue;
		uint64_t t0 = cycles();
		const char *err = t->fn();
		uint64_t us = cycles_to_ns(cycles() - t0) / 1000;
		if (err) {
			printf("selftest: %s FAILED: %s\n", t->name, err);
			failed++;
		} else {
			printf("selftest: %s ok (%lu us)\n", t->name, us);
			passed++;
		}
	}
	if (passed + failed == 0) {
		printf("selftest: no test named '%s'\n", only ? only : "");
		return 1;
	}
	result("passed=%d failed=%d", passed, failed);
	return failed ? 1 : 0;
}

APP(selftest, "selftest",
    "in-kernel tests of the core: memory, threads, scheduling, sync, timers",
    selftest_main, selftest_args, 0);
