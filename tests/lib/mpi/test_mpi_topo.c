/*
 * Host unit tests of lib/mpi/topo.c: MPI_Dims_create's grids (MPICH's
 * topo/dims1-5 checks them against MPICH's own answers; a sample of those
 * is here), and Cartesian communicators on worlds of forked processes as
 * MPICH's topo/cart* tests make them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "tests/host/unit.h"

#include "lib/mpi/mpiimpl.h"
#include "tests/lib/mpi/host_mpi_comm.h"
#include "tests/lib/mpi/rank_check.h"

static int class_of(int code)
{
	int cls = -1;

	assert_int_equal(MPI_Error_class(code, &cls), MPI_SUCCESS);
	return cls;
}

static void expect_dims(int nnodes, int ndims, const int *given, const int *want)
{
	int d[20];

	memcpy(d, given, (size_t)ndims * sizeof *d);
	assert_int_equal(MPI_Dims_create(nnodes, ndims, d), MPI_SUCCESS);
	for (int i = 0; i < ndims; i++)
		assert_int_equal(d[i], want[i]);
}

static void test_dims(void **state)
{
	static const int z[20];

	(void)state;
	assert_int_equal(host_mpi_init(0, 1), MPI_SUCCESS);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	/* MPICH's answers (topo/baddims.h): least spread, then the largest small factors. */
	expect_dims(72, 2, z, (int[]){ 9, 8 });
	expect_dims(1323, 2, z, (int[]){ 49, 27 });
	expect_dims(590520, 4, z, (int[]){ 38, 37, 21, 20 });
	expect_dims(712656, 5, z, (int[]){ 101, 14, 9, 8, 7 });
	expect_dims(70416, 4, z, (int[]){ 163, 9, 8, 6 });
	expect_dims(228072, 3, z, (int[]){ 86, 52, 51 });
	expect_dims(1620, 3, z, (int[]){ 15, 12, 9 });
	/* topo/dims4: a billion in three. */
	expect_dims(1000 * 1000 * 1000, 3, z, (int[]){ 1000, 1000, 1000 });
	expect_dims(11, 2, z, (int[]){ 11, 1 });
	expect_dims(64, 4, z, (int[]){ 4, 4, 2, 2 });
	/* topo/dims2: dimensions given stay, the others share the rest. */
	expect_dims(16, 4, (int[]){ 0, 8, 0, 2 }, (int[]){ 1, 8, 1, 2 });
	expect_dims(32, 2, (int[]){ 0, 32 }, (int[]){ 1, 32 });
	expect_dims(24, 3, (int[]){ 0, 3, 0 }, (int[]){ 4, 3, 2 });
	expect_dims(8, 2, (int[]){ 2, 4 }, (int[]){ 2, 4 });
	/* topo/dims0 and cartzero: nothing to do. */
	assert_int_equal(MPI_Dims_create(1, 0, NULL), MPI_SUCCESS);
	int d[3] = { 0, 5, 0 };
	assert_int_equal(class_of(MPI_Dims_create(12, 3, d)), MPI_ERR_DIMS);
	d[1] = -1;
	assert_int_equal(class_of(MPI_Dims_create(12, 3, d)), MPI_ERR_DIMS);
	assert_int_equal(class_of(MPI_Dims_create(0, 1, d)), MPI_ERR_ARG);
	assert_int_equal(class_of(MPI_Dims_create(2, 0, NULL)), MPI_ERR_DIMS);
}

static int run_cart(void)
{
	int n = mpii_world_size, r = mpii_world_rank, src, dst, t, nd, rank, size, result;
	int dims[2] = { n, 0 }, periods[2] = { 1, 0 }, coords[2], remain[2];
	MPI_Comm c, d, s;

	MPI_Topo_test(MPI_COMM_WORLD, &t);
	CHECK(t == MPI_UNDEFINED);
	/* topo/cartshift1: a ring, then a line. */
	for (int p = 1; p >= 0; p--) {
		periods[0] = p;
		CHECK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &c) == MPI_SUCCESS);
		MPI_Topo_test(c, &t);
		CHECK(t == MPI_CART);
		MPI_Cart_shift(c, 0, 1, &src, &dst);
		CHECK(src == (p ? (r - 1 + n) % n : r > 0 ? r - 1 : MPI_PROC_NULL));
		CHECK(dst == (p ? (r + 1) % n : r < n - 1 ? r + 1 : MPI_PROC_NULL));
		MPI_Cart_shift(c, 0, 0, &src, &dst);
		CHECK(src == r && dst == r);
		MPI_Cart_shift(c, 0, -1, &src, &dst);
		CHECK(dst == (p ? (r - 1 + n) % n : r > 0 ? r - 1 : MPI_PROC_NULL));
		/* topo/cartsuball: no dimension left is one point, rank 0's. */
		remain[0] = 0;
		CHECK(MPI_Cart_sub(c, remain, &s) == MPI_SUCCESS);
		CHECK((s != MPI_COMM_NULL) == (r == 0));
		if (s != MPI_COMM_NULL) {
			MPI_Comm_compare(MPI_COMM_SELF, s, &result);
			CHECK(result == MPI_CONGRUENT);
			MPI_Cartdim_get(s, &nd);
			CHECK(nd == 0);
			MPI_Comm_free(&s);
		}
		MPI_Comm_free(&c);
	}
	/* topo/topodup: a 2-D grid and its duplicate. */
	dims[0] = dims[1] = 0;
	MPI_Dims_create(n, 2, dims);
	periods[0] = 0;
	periods[1] = 1;
	CHECK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &c) == MPI_SUCCESS);
	CHECK(MPI_Comm_dup(c, &d) == MPI_SUCCESS);
	int od[2], op[2];
	CHECK(MPI_Cart_get(d, 2, od, op, coords) == MPI_SUCCESS);
	CHECK(od[0] == dims[0] && od[1] == dims[1] && op[0] == 0 && op[1] == 1);
	CHECK(coords[0] == r / dims[1] && coords[1] == r % dims[1]);
	CHECK(MPI_Cart_rank(d, coords, &rank) == MPI_SUCCESS && rank == r);
	int wrap[2] = { coords[0], coords[1] + dims[1] };
	CHECK(MPI_Cart_rank(d, wrap, &rank) == MPI_SUCCESS && rank == r);
	for (int i = 0; i < n; i++) {
		int cc[2];
		MPI_Cart_coords(d, i, 2, cc);
		CHECK(cc[0] * dims[1] + cc[1] == i);
	}
	/* Rows of the grid: the second dimension stays. */
	remain[0] = 0;
	remain[1] = 1;
	CHECK(MPI_Cart_sub(d, remain, &s) == MPI_SUCCESS);
	MPI_Comm_size(s, &size);
	MPI_Comm_rank(s, &rank);
	CHECK(size == dims[1] && rank == coords[1]);
	MPI_Cartdim_get(s, &nd);
	CHECK(nd == 1);
	MPI_Cart_get(s, 1, od, op, coords);
	CHECK(od[0] == dims[1] && op[0] == 1);
	MPI_Comm_free(&s);
	MPI_Comm_free(&d);
	MPI_Comm_free(&c);
	/* topo/cartcreates and cartzero: a grid smaller than the world. */
	dims[0] = n > 1 ? n - 1 : 1;
	periods[0] = 1;
	CHECK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &c) == MPI_SUCCESS);
	CHECK((c != MPI_COMM_NULL) == (r < dims[0]));
	if (c != MPI_COMM_NULL)
		MPI_Comm_free(&c);
	CHECK(MPI_Cart_create(MPI_COMM_WORLD, 0, NULL, NULL, 0, &c) == MPI_SUCCESS);
	CHECK((c != MPI_COMM_NULL) == (r == 0));
	if (c != MPI_COMM_NULL) {
		CHECK(MPI_Cart_get(c, 0, NULL, NULL, NULL) == MPI_SUCCESS);
		CHECK(MPI_Cart_rank(c, NULL, &rank) == MPI_SUCCESS && rank == 0);
		CHECK(MPI_Cart_coords(c, 0, 0, NULL) == MPI_SUCCESS);
		CHECK(MPI_Cart_sub(c, NULL, &s) == MPI_SUCCESS);
		MPI_Cartdim_get(s, &nd);
		CHECK(nd == 0);
		MPI_Comm_free(&s);
		MPI_Comm_free(&c);
	}
	/* Errors. */
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	int cls, big[1] = { n + 1 }, zero[1] = { 0 };
	MPI_Error_class(MPI_Cart_create(MPI_COMM_WORLD, 1, big, periods, 0, &c), &cls);
	CHECK(cls == MPI_ERR_ARG);
	MPI_Error_class(MPI_Cart_create(MPI_COMM_WORLD, 1, zero, periods, 0, &c), &cls);
	CHECK(cls == MPI_ERR_DIMS);
	MPI_Error_class(MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &src, &dst), &cls);
	CHECK(cls == MPI_ERR_TOPOLOGY);
	dims[0] = n;
	periods[0] = 0;
	MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &c);
	MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
	MPI_Error_class(MPI_Cart_shift(c, 1, 1, &src, &dst), &cls);
	CHECK(cls == MPI_ERR_ARG);
	int out[1] = { n };
	MPI_Error_class(MPI_Cart_rank(c, out, &rank), &cls);
	CHECK(cls == MPI_ERR_ARG);
	MPI_Comm_free(&c);
	return errs;
}

static void test_cart(void **state)
{
	(void)state;
	for (int n = 1; n <= 6; n++)
		assert_int_equal(host_mpi_run(n, run_cart), 0);
}

UNIT_MAIN("tests", NULL, NULL,
	  cmocka_unit_test(test_dims),
	  cmocka_unit_test(test_cart))
