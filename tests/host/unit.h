/*
 * A unit test's main: the cmocka group of its tests, run in order, with a
 * setup and teardown for the group (NULL: none).
 *
 *	UNIT_MAIN("rmem", setup, NULL,
 *		  cmocka_unit_test(test_bounds),
 *		  cmocka_unit_test(test_revoke))
 */
#ifndef TESTS_HOST_UNIT_H
#define TESTS_HOST_UNIT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#define UNIT_MAIN(name, setup, teardown, ...)                                      \
	int main(void)                                                             \
	{                                                                          \
		const struct CMUnitTest tests[] = { __VA_ARGS__ };                 \
		return cmocka_run_group_tests_name(name, tests, setup, teardown);  \
	}

#endif
