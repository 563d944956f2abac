#include <stdarg.h>
#include <stdio.h>

#include "apps/app.h"
#include "net/call/barrier.h"
#include "tests/apps/check.h"

volatile int check_count, check_failures;

void check_failed(int line, const char *cond, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	__atomic_fetch_add(&check_failures, 1, __ATOMIC_RELAXED);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	printf("%s: FAILED (line %d): %s: %s\n", current_app ? current_app->name : "?", line, cond, msg);
}

int check_barrier(const char *where, uint64_t ns)
{
	int r = cluster_barrier(ns);

	if (r < 0)
		printf("%s: barrier %s failed: %d\n", current_app ? current_app->name : "?", where, r);
	return r;
}

int check_result(void)
{
	result("checks=%d failed=%d", check_count, check_failures);
	return check_failures ? 1 : 0;
}
