/*
 * Host unit tests of lib/mpi/group.c: MPI's group algebra (MPI-3.1 §6.3)
 * as MPICH's group tests use it, on a world of 8 where this process is
 * rank 3.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tests/host/unit.h"

#include "lib/mpi/mpi.h"
#include "tests/lib/mpi/host_mpi_comm.h"

static MPI_Group world;

static int setup(void **state)
{
	(void)state;
	if (host_mpi_init(3, 8) != MPI_SUCCESS)
		return -1;
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	return MPI_Comm_group(MPI_COMM_WORLD, &world);
}

static void expect_members(MPI_Group g, int n, const int *members)
{
	int size, in[8], out[8];

	assert_int_equal(MPI_Group_size(g, &size), MPI_SUCCESS);
	assert_int_equal(size, n);
	for (int i = 0; i < n; i++)
		in[i] = i;
	assert_int_equal(MPI_Group_translate_ranks(g, n, in, world, out), MPI_SUCCESS);
	for (int i = 0; i < n; i++)
		assert_int_equal(out[i], members[i]);
}

static int class_of(int code)
{
	int cls = -1;

	assert_int_equal(MPI_Error_class(code, &cls), MPI_SUCCESS);
	return cls;
}

static void test_world(void **state)
{
	int size, rank;

	(void)state;
	assert_int_equal(MPI_Group_size(world, &size), MPI_SUCCESS);
	assert_int_equal(MPI_Group_rank(world, &rank), MPI_SUCCESS);
	assert_int_equal(size, 8);
	assert_int_equal(rank, 3);
}

static void test_incl_excl(void **state)
{
	int r[] = { 6, 3, 0 }, m[] = { 1, 2, 4, 5, 7 }, rank;
	MPI_Group a, b;

	(void)state;
	assert_int_equal(MPI_Group_incl(world, 3, r, &a), MPI_SUCCESS);
	expect_members(a, 3, r);
	MPI_Group_rank(a, &rank);
	assert_int_equal(rank, 1);
	assert_int_equal(MPI_Group_excl(world, 3, r, &b), MPI_SUCCESS);
	expect_members(b, 5, m);
	MPI_Group_rank(b, &rank);
	assert_int_equal(rank, MPI_UNDEFINED);
	MPI_Group_free(&a);
	MPI_Group_free(&b);
	assert_int_equal(a, MPI_GROUP_NULL);
}

/* MPICH's group/grouptest and groupnullincl: an empty result is MPI_GROUP_EMPTY itself. */
static void test_empty(void **state)
{
	int all[8] = { 0, 1, 2, 3, 4, 5, 6, 7 }, result;
	MPI_Group g;

	(void)state;
	assert_int_equal(MPI_Group_excl(world, 8, all, &g), MPI_SUCCESS);
	assert_int_equal(g, MPI_GROUP_EMPTY);
	assert_int_equal(MPI_Group_incl(world, 0, NULL, &g), MPI_SUCCESS);
	assert_int_equal(g, MPI_GROUP_EMPTY);
	assert_int_equal(MPI_Group_compare(g, MPI_GROUP_EMPTY, &result), MPI_SUCCESS);
	assert_int_equal(result, MPI_IDENT);
	assert_int_equal(MPI_Group_compare(MPI_GROUP_EMPTY, world, &result), MPI_SUCCESS);
	assert_int_equal(result, MPI_UNEQUAL);
	/* Freeing the predefined empty group only clears the handle. */
	assert_int_equal(MPI_Group_free(&g), MPI_SUCCESS);
	assert_int_equal(g, MPI_GROUP_NULL);
	assert_int_equal(MPI_Group_size(MPI_GROUP_EMPTY, &result), MPI_SUCCESS);
	assert_int_equal(result, 0);
}

static void test_translate(void **state)
{
	int r[] = { 5, 0, 3 }, in[] = { MPI_PROC_NULL, 1, 2, MPI_PROC_NULL }, out[4], wr[8], wo[8];
	MPI_Group g, self;

	(void)state;
	MPI_Group_incl(world, 3, r, &g);
	assert_int_equal(MPI_Group_translate_ranks(g, 4, in, world, out), MPI_SUCCESS);
	assert_int_equal(out[0], MPI_PROC_NULL);
	assert_int_equal(out[1], 0);
	assert_int_equal(out[2], 3);
	assert_int_equal(out[3], MPI_PROC_NULL);
	/* World against self (MPICH's group/gtranks): only this process translates. */
	MPI_Comm_group(MPI_COMM_SELF, &self);
	for (int i = 0; i < 8; i++)
		wr[i] = i;
	assert_int_equal(MPI_Group_translate_ranks(world, 8, wr, self, wo), MPI_SUCCESS);
	for (int i = 0; i < 8; i++)
		assert_int_equal(wo[i], i == 3 ? 0 : MPI_UNDEFINED);
	in[0] = 3;
	assert_int_equal(class_of(MPI_Group_translate_ranks(g, 1, in, world, out)), MPI_ERR_RANK);
	MPI_Group_free(&g);
	MPI_Group_free(&self);
}

static void test_set_ops(void **state)
{
	int ra[] = { 1, 4, 6, 2 }, rb[] = { 6, 7, 1, 0 };
	int un[] = { 1, 4, 6, 2, 7, 0 }, in[] = { 1, 6 }, df[] = { 4, 2 };
	MPI_Group a, b, g;

	(void)state;
	MPI_Group_incl(world, 4, ra, &a);
	MPI_Group_incl(world, 4, rb, &b);
	assert_int_equal(MPI_Group_union(a, b, &g), MPI_SUCCESS);
	expect_members(g, 6, un);
	MPI_Group_free(&g);
	assert_int_equal(MPI_Group_intersection(a, b, &g), MPI_SUCCESS);
	expect_members(g, 2, in);
	MPI_Group_free(&g);
	assert_int_equal(MPI_Group_difference(a, b, &g), MPI_SUCCESS);
	expect_members(g, 2, df);
	MPI_Group_free(&g);
	assert_int_equal(MPI_Group_difference(a, a, &g), MPI_SUCCESS);
	assert_int_equal(g, MPI_GROUP_EMPTY);
	MPI_Group_free(&a);
	MPI_Group_free(&b);
}

static void test_compare(void **state)
{
	int rev[] = { 7, 6, 5, 4, 3, 2, 1, 0 }, same[] = { 0, 1, 2, 3, 4, 5, 6, 7 }, part[] = { 0, 1 }, result;
	MPI_Group r, s, p;

	(void)state;
	MPI_Group_incl(world, 8, rev, &r);
	MPI_Group_incl(world, 8, same, &s);
	MPI_Group_incl(world, 2, part, &p);
	MPI_Group_compare(world, s, &result);
	assert_int_equal(result, MPI_IDENT);
	MPI_Group_compare(world, r, &result);
	assert_int_equal(result, MPI_SIMILAR);
	MPI_Group_compare(world, p, &result);
	assert_int_equal(result, MPI_UNEQUAL);
	MPI_Group_free(&r);
	MPI_Group_free(&s);
	MPI_Group_free(&p);
}

static void test_ranges(void **state)
{
	int odd_desc[] = { 7, 5, 3, 1 }, even[] = { 0, 2, 4, 6 };
	int ranges[2][3] = { { 7, 1, -2 } };
	MPI_Group g;

	(void)state;
	/* MPICH's comm/commcreate1: first 2 * (size / 2) - 1, last 1, stride -2. */
	assert_int_equal(MPI_Group_range_incl(world, 1, ranges, &g), MPI_SUCCESS);
	expect_members(g, 4, odd_desc);
	MPI_Group_free(&g);
	assert_int_equal(MPI_Group_range_excl(world, 1, ranges, &g), MPI_SUCCESS);
	expect_members(g, 4, even);
	MPI_Group_free(&g);
	/* A stride past last stops before it; two triplets concatenate. */
	int two[2][3] = { { 0, 2, 1 }, { 6, 3, -2 } };
	int expect2[] = { 0, 1, 2, 6, 4 };
	assert_int_equal(MPI_Group_range_incl(world, 2, two, &g), MPI_SUCCESS);
	expect_members(g, 5, expect2);
	MPI_Group_free(&g);
	int onepoint[1][3] = { { 5, 5, -3 } };
	assert_int_equal(MPI_Group_range_incl(world, 1, onepoint, &g), MPI_SUCCESS);
	expect_members(g, 1, (int[]){ 5 });
	MPI_Group_free(&g);
	int excl2[2][3] = { { 2, 3, 1 }, { 7, 5, -1 } };
	assert_int_equal(MPI_Group_range_excl(world, 2, excl2, &g), MPI_SUCCESS);
	expect_members(g, 3, (int[]){ 0, 1, 4 });
	MPI_Group_free(&g);
	/* Everything excluded by range: MPI_GROUP_EMPTY (MPICH's group/grouptest2). */
	int all[1][3] = { { 0, 7, 1 } };
	assert_int_equal(MPI_Group_range_excl(world, 1, all, &g), MPI_SUCCESS);
	assert_int_equal(g, MPI_GROUP_EMPTY);
}

static void test_errors(void **state)
{
	int dup[] = { 1, 2, 1 }, out_of[] = { 8 }, neg[] = { -1 };
	int zero[1][3] = { { 0, 7, 0 } }, away[1][3] = { { 5, 2, 1 } }, beyond[1][3] = { { 0, 8, 1 } };
	int overlap[2][3] = { { 0, 3, 1 }, { 3, 5, 1 } };
	MPI_Group g = MPI_GROUP_NULL;
	char s[MPI_MAX_ERROR_STRING];
	int len, e;

	(void)state;
	assert_int_equal(class_of(MPI_Group_incl(world, 3, dup, &g)), MPI_ERR_RANK);
	assert_int_equal(class_of(MPI_Group_incl(world, 1, out_of, &g)), MPI_ERR_RANK);
	assert_int_equal(class_of(MPI_Group_excl(world, 1, neg, &g)), MPI_ERR_RANK);
	assert_int_equal(class_of(MPI_Group_incl(world, 9, dup, &g)), MPI_ERR_ARG);
	assert_int_equal(class_of(MPI_Group_range_incl(world, 1, zero, &g)), MPI_ERR_ARG);
	assert_int_equal(class_of(MPI_Group_range_incl(world, 1, away, &g)), MPI_ERR_ARG);
	assert_int_equal(class_of(MPI_Group_range_excl(world, 1, beyond, &g)), MPI_ERR_RANK);
	assert_int_equal(class_of(MPI_Group_range_incl(world, 2, overlap, &g)), MPI_ERR_RANK);
	assert_int_equal(g, MPI_GROUP_NULL);
	assert_int_equal(class_of(MPI_Group_size(MPI_GROUP_NULL, &len)), MPI_ERR_GROUP);
	assert_int_equal(class_of(MPI_Group_free(&g)), MPI_ERR_GROUP);
	/* The code names the call and says what was wrong. */
	e = MPI_Group_incl(world, 1, out_of, &g);
	assert_int_equal(MPI_Error_string(e, s, &len), MPI_SUCCESS);
	assert_string_equal(s, "MPI_Group_incl: Invalid rank in ranks[0] has value 8 but must be nonnegative and less "
			       "than 8");
	assert_int_equal(len, (int)strlen(s));
}

/* MPICH's group/groupcreate: 2048 groups at once. */
static void test_many(void **state)
{
	static MPI_Group g[2048];
	int all[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };

	(void)state;
	for (int i = 0; i < 2048; i++)
		assert_int_equal(MPI_Group_incl(world, 8, all, &g[i]), MPI_SUCCESS);
	for (int i = 0; i < 2048; i++)
		assert_int_equal(MPI_Group_free(&g[i]), MPI_SUCCESS);
}

UNIT_MAIN("tests", setup, NULL,
	  cmocka_unit_test(test_world),
	  cmocka_unit_test(test_incl_excl),
	  cmocka_unit_test(test_empty),
	  cmocka_unit_test(test_translate),
	  cmocka_unit_test(test_set_ops),
	  cmocka_unit_test(test_compare),
	  cmocka_unit_test(test_ranges),
	  cmocka_unit_test(test_errors),
	  cmocka_unit_test(test_many))
