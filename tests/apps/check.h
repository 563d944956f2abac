/*
 * The test apps' one check: EXPECT(cond, fmt, ...) counts a check, and if
 * cond is false counts a failure and prints
 *
 *	<app>: FAILED (line N): <cond>: <message>
 *
 * Several threads may check at once.  An app ends with its counts in its
 * RESULT line and fails if check_failures is not 0.
 */
#ifndef TESTS_APPS_CHECK_H
#define TESTS_APPS_CHECK_H

#include <stdint.h>

extern volatile int check_count, check_failures;

__attribute__((format(printf, 3, 4))) void check_failed(int line, const char *cond, const char *fmt,
							  ...);

#define EXPECT(cond, ...)                                                               \
	do {                                                                            \
		__atomic_fetch_add(&check_count, 1, __ATOMIC_RELAXED);                  \
		if (!(cond))                                                            \
			check_failed(__LINE__, #cond, __VA_ARGS__);                     \
	} while (0)

/*
 * A barrier of every node (cluster_barrier, at most ns): 0, or its error,
 * said as "<app>: barrier <where> failed: <error>".
 */
int check_barrier(const char *where, uint64_t ns);

/* The app's RESULT line of its counts alone, "checks=N failed=N"; its status: 1 if a check failed. */
int check_result(void);

#endif
