/*
 * Host unit tests of lib/mpi/info.c (MPI-3.1 §9, MPI-4.0's
 * MPI_Info_get_string), as MPICH's info tests use it: before MPI_Init
 * too, keys in the order set, values cut to the room given.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "tests/host/unit.h"

#include "lib/mpi/mpi.h"
#include "tests/lib/mpi/host_mpi_comm.h"

static int class_of(int code)
{
	int cls = -1;

	assert_int_equal(MPI_Error_class(code, &cls), MPI_SUCCESS);
	return cls;
}

/* MPICH's info/info_no_init: info objects need no MPI_Init (this runs first). */
static void test_before_init(void **state)
{
	MPI_Info in;
	char v[16];
	int flag;

	(void)state;
	assert_int_equal(MPI_Info_create(&in), MPI_SUCCESS);
	assert_true(in != MPI_INFO_ENV && in != MPI_INFO_NULL);
	assert_int_equal(MPI_Info_set(in, "key1", "value1"), MPI_SUCCESS);
	assert_int_equal(MPI_Info_get(in, "key1", 15, v, &flag), MPI_SUCCESS);
	assert_true(flag);
	assert_string_equal(v, "value1");
	assert_int_equal(MPI_Info_free(&in), MPI_SUCCESS);
	assert_int_equal(in, MPI_INFO_NULL);
	assert_int_equal(host_mpi_init(0, 3), MPI_SUCCESS);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

/* MPICH's info/infomany and infoorder: many keys, in the order set; a key set again keeps its place. */
static void test_order(void **state)
{
	MPI_Info in, d;
	char key[MPI_MAX_INFO_KEY], want[32], v[32];
	int n, flag;

	(void)state;
	MPI_Info_create(&in);
	for (int i = 0; i < 50; i++) {
		snprintf(key, sizeof key, "key%d", 49 - i);
		snprintf(v, sizeof v, "value%d", i);
		assert_int_equal(MPI_Info_set(in, key, v), MPI_SUCCESS);
	}
	MPI_Info_set(in, "key49", "again");
	assert_int_equal(MPI_Info_get_nkeys(in, &n), MPI_SUCCESS);
	assert_int_equal(n, 50);
	assert_int_equal(MPI_Info_dup(in, &d), MPI_SUCCESS);
	MPI_Info_free(&in);
	for (int i = 0; i < 50; i++) {
		assert_int_equal(MPI_Info_get_nthkey(d, i, key), MPI_SUCCESS);
		snprintf(want, sizeof want, "key%d", 49 - i);
		assert_string_equal(key, want);
		MPI_Info_get(d, key, sizeof v - 1, v, &flag);
		assert_true(flag);
		snprintf(want, sizeof want, "value%d", i);
		assert_string_equal(v, i ? want : "again");
	}
	assert_int_equal(class_of(MPI_Info_get_nthkey(d, 50, key)), MPI_ERR_ARG);
	assert_int_equal(MPI_Info_delete(d, "key0"), MPI_SUCCESS);
	assert_int_equal(MPI_Info_delete(d, "key49"), MPI_SUCCESS);
	MPI_Info_set(d, "last", "x");
	MPI_Info_get_nkeys(d, &n);
	assert_int_equal(n, 49);
	MPI_Info_get_nthkey(d, 0, key);
	assert_string_equal(key, "key48");
	MPI_Info_get_nthkey(d, 48, key);
	assert_string_equal(key, "last");
	assert_int_equal(class_of(MPI_Info_delete(d, "key0")), MPI_ERR_INFO_NOKEY);
	MPI_Info_free(&d);
}

/* MPICH's info/infovallen and infogetstring: lengths, and values cut to the room given. */
static void test_lengths(void **state)
{
	MPI_Info in;
	char v[MPI_MAX_INFO_VAL];
	int len, flag, buflen;

	(void)state;
	MPI_Info_create(&in);
	MPI_Info_set(in, "soft", "2:1000:4,3:1000:7");
	assert_int_equal(MPI_Info_get_valuelen(in, "soft", &len, &flag), MPI_SUCCESS);
	assert_true(flag);
	assert_int_equal(len, 17);
	MPI_Info_get_valuelen(in, "hard", &len, &flag);
	assert_false(flag);
	/* MPI_Info_get: valuelen leaves room for the null. */
	MPI_Info_get(in, "soft", 4, v, &flag);
	assert_string_equal(v, "2:10");
	/* MPI_Info_get_string: buflen counts the null, and comes back as the whole value's. */
	v[0] = 'Z';
	buflen = 0;
	assert_int_equal(MPI_Info_get_string(in, "soft", &buflen, v, &flag), MPI_SUCCESS);
	assert_true(flag);
	assert_int_equal(buflen, 18);
	assert_int_equal(v[0], 'Z');
	buflen = 2;
	MPI_Info_get_string(in, "soft", &buflen, v, &flag);
	assert_int_equal(buflen, 18);
	assert_string_equal(v, "2");
	buflen = 10;
	MPI_Info_get_string(in, "none", &buflen, v, &flag);
	assert_false(flag);
	assert_int_equal(buflen, 10);
	assert_string_equal(v, "2");
	MPI_Info_free(&in);
}

static void test_errors(void **state)
{
	MPI_Info in;
	char longkey[MPI_MAX_INFO_KEY + 2], v[8];
	int flag;

	(void)state;
	MPI_Info_create(&in);
	memset(longkey, 'k', sizeof longkey - 1);
	longkey[sizeof longkey - 1] = 0;
	assert_int_equal(class_of(MPI_Info_set(in, longkey, "v")), MPI_ERR_INFO_KEY);
	assert_int_equal(class_of(MPI_Info_set(in, "", "v")), MPI_ERR_INFO_KEY);
	assert_int_equal(class_of(MPI_Info_set(in, "k", "")), MPI_ERR_INFO_VALUE);
	assert_int_equal(class_of(MPI_Info_get(in, "k", -1, v, &flag)), MPI_ERR_ARG);
	assert_int_equal(class_of(MPI_Info_set(MPI_INFO_NULL, "k", "v")), MPI_ERR_INFO);
	assert_int_equal(class_of(MPI_Info_set(MPI_INFO_ENV, "k", "v")), MPI_ERR_INFO);
	MPI_Info_free(&in);
	assert_int_equal(class_of(MPI_Info_free(&in)), MPI_ERR_INFO);
}

/* MPI_INFO_ENV (MPI-3.1 §10.2): the world's size, once it is known. */
static void test_env(void **state)
{
	char v[16];
	int flag;

	(void)state;
	assert_int_equal(MPI_Info_get(MPI_INFO_ENV, "maxprocs", 15, v, &flag), MPI_SUCCESS);
	assert_true(flag);
	assert_string_equal(v, "3");
	MPI_Info_get(MPI_INFO_ENV, "command", 15, v, &flag);
	assert_false(flag);
}

UNIT_MAIN("tests", NULL, NULL,
	  cmocka_unit_test(test_before_init),
	  cmocka_unit_test(test_order),
	  cmocka_unit_test(test_lengths),
	  cmocka_unit_test(test_errors),
	  cmocka_unit_test(test_env))
