/*
 * fault: fail on purpose, to show (and test) what a failure looks like.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "apps/app.h"
#include "kernel/panic.h"
#include "kernel/thread.h"

static const struct argspec fault_args[] = {
	{ "kind", ARG_STR, 0, 0,
	  "pagefault (default), ud, div0, gp, panic, stack, assert, hang, return (status 1)" },
	{ NULL, 0, 0, 0, NULL },
};

#pragma GCC diagnostic ignored "-Winfinite-recursion"
__attribute__((noinline)) static int recurse(volatile int depth)
{
	volatile char pad[512];

	pad[0] = (char)depth;
	return recurse(depth + 1) + pad[0];
}

__attribute__((noinline)) static void do_fault(const char *kind)
{
	if (strcmp(kind, "pagefault") == 0) {
		/* Above the 4 GiB the kernel maps. */
		*(volatile uint64_t *)0x4000000000ULL = 1;
	} else if (strcmp(kind, "ud") == 0) {
		__asm__ volatile("ud2");
	} else if (strcmp(kind, "div0") == 0) {
		/* In assembly: gcc turns 1/x into a compare, which never traps. */
		__asm__ volatile("xorl %%ecx, %%ecx; movl $7, %%eax; cltd; idivl %%ecx" ::: "eax", "ecx", "edx");
	} else if (strcmp(kind, "gp") == 0) {
		__asm__ volatile("movq %0, %%rax; movq (%%rax), %%rax" : : "r"(0x8000000000000000ULL) : "rax");
	} else if (strcmp(kind, "panic") == 0) {
		panic("fault app: deliberate panic");
	} else if (strcmp(kind, "stack") == 0) {
		recurse(0);
	} else if (strcmp(kind, "assert") == 0) {
		KASSERT(kind[0] == 'x');
	} else if (strcmp(kind, "hang") == 0) {
		for (;;)
			thread_sleep_ns(1000000000ULL);	/* never returns; the launcher's timeout ends it */
	}
}

static int fault_main(void)
{
	const char *kind = arg_str("kind", "pagefault");

	if (strcmp(kind, "return") == 0) {
		printf("fault: returning failure status 1\n");
		return 1;
	}
	printf("fault: causing '%s' now\n", kind);
	do_fault(kind);
	printf("fault: kind '%s' is unknown\n", kind);
	return 1;
}

APP(fault, "fault",
    "fail on purpose (exception, panic or failure status)",
    fault_main, fault_args, 0);
