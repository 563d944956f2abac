/*
 * Host unit tests of MPI's datatypes (lib/mpi/datatype.c): the predefined
 * types' sizes, extents and names; bounds of nested types with MPI-1's
 * MPI_LB/MPI_UB markers, resized types and negative strides (the values
 * of MPICH's lbub, typelb, indexed_misc, pairtype_size_extent and
 * dataalign2 tests); pack and unpack checked byte for byte against hand
 * computed layouts, subarrays and darrays; get_envelope/get_contents and
 * the references they hand out; element counts of partial messages;
 * external32's bytes; the errors each call reports.
 *
 * Then random nestings of every constructor, each packed, unpacked (whole
 * and cut short), counted and asked whether it is contiguous, all against
 * a reference that flattens the type from its get_contents alone.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/host/unit.h"

#include "lib/mpi/mpiimpl.h"

#define MIN(a, b) ((a) < (b) ? (a) : (b))

/* --- what datatype.c needs from the rest of the library -------------------------------- */

static int last_err;		/* the class of the last error reported */
static char last_msg[256];

int mpii_err(struct mpi_comm *c, int cls, const char *fn, const char *fmt, ...)
{
	va_list ap;
	int n;

	(void)c;
	n = snprintf(last_msg, sizeof last_msg, "%s: ", fn);
	va_start(ap, fmt);
	vsnprintf(last_msg + n, sizeof last_msg - n, fmt, ap);
	va_end(ap);
	last_err = cls;
	return cls;
}

int mpii_err_raise(struct mpi_comm *c, int code)
{
	(void)c;
	last_err = code;
	return code;
}

int mpii_check_comm(MPI_Comm h, const char *fn, struct mpi_comm **out)
{
	*out = NULL;
	if (h != MPI_COMM_WORLD && h != MPI_COMM_SELF)
		return mpii_err(NULL, MPI_ERR_COMM, fn, "bad communicator");
	return MPI_SUCCESS;
}

/* Attributes: count the calls; dup_fail makes the copy callback fail. */
static int dup_calls, free_calls, dup_fail;

int mpii_attr_dup_all(struct mpi_attr **dst, struct mpi_attr *src, int kind, int oldh, int newh)
{
	(void)dst, (void)src, (void)oldh;
	assert_int_equal(kind, NOW_MPI_KTYPE);
	assert_true(mpii_type_valid(newh));
	dup_calls++;
	return dup_fail ? MPI_ERR_OTHER : MPI_SUCCESS;
}

int mpii_attr_free_all(struct mpi_attr **list, int kind, int h)
{
	(void)list, (void)h;
	assert_int_equal(kind, NOW_MPI_KTYPE);
	free_calls++;
	return MPI_SUCCESS;
}

static int setup(void **state)
{
	(void)state;
	return mpii_type_init();
}

/* --- helpers --------------------------------------------------------------------------- */

static void check_bounds(MPI_Datatype t, int size, MPI_Aint lb, MPI_Aint extent, MPI_Aint tlb, MPI_Aint text)
{
	int s;
	MPI_Aint a, b;

	assert_int_equal(MPI_Type_size(t, &s), MPI_SUCCESS);
	assert_int_equal(s, size);
	assert_int_equal(MPI_Type_get_extent(t, &a, &b), MPI_SUCCESS);
	assert_int_equal(a, lb);
	assert_int_equal(b, extent);
	assert_int_equal(MPI_Type_get_true_extent(t, &a, &b), MPI_SUCCESS);
	assert_int_equal(a, tlb);
	assert_int_equal(b, text);
}

static void tfree(MPI_Datatype *t)
{
	assert_int_equal(MPI_Type_free(t), MPI_SUCCESS);
	assert_int_equal(*t, MPI_DATATYPE_NULL);
}

/* t's envelope: combiner comb, and ni integers, na addresses, nd types (each not checked if -1). */
static void envelope_is(MPI_Datatype t, int comb, int ni, int na, int nd)
{
	int n[3], c;

	MPI_Type_get_envelope(t, &n[0], &n[1], &n[2], &c);
	assert_int_equal(c, comb);
	if (ni >= 0)
		assert_int_equal(n[0], ni);
	if (na >= 0)
		assert_int_equal(n[1], na);
	if (nd >= 0)
		assert_int_equal(n[2], nd);
}

/* Pack count elements of t at buf, check the stream is want (n ints). */
static void pack_ints(const void *buf, int count, MPI_Datatype t, const int *want, int n)
{
	int out[256], pos = 0;

	assert_true(n <= 256);
	assert_int_equal(MPI_Pack(buf, count, t, out, sizeof out, &pos, MPI_COMM_WORLD), MPI_SUCCESS);
	assert_int_equal(pos, n * (int)sizeof(int));
	assert_memory_equal(out, want, n * sizeof(int));
}

/* --- predefined types ------------------------------------------------------------------ */

static void test_predefined(void **state)
{
	static const struct {
		MPI_Datatype t;
		int size;
		MPI_Aint extent;
		const char *name;
	} v[] = {
		{ MPI_CHAR, 1, 1, "MPI_CHAR" }, { MPI_WCHAR, 4, 4, "MPI_WCHAR" },
		{ MPI_SHORT, 2, 2, "MPI_SHORT" }, { MPI_INT, 4, 4, "MPI_INT" },
		{ MPI_LONG, 8, 8, "MPI_LONG" }, { MPI_LONG_LONG, 8, 8, "MPI_LONG_LONG_INT" },
		{ MPI_FLOAT, 4, 4, "MPI_FLOAT" }, { MPI_DOUBLE, 8, 8, "MPI_DOUBLE" },
		{ MPI_LONG_DOUBLE, 16, 16, "MPI_LONG_DOUBLE" }, { MPI_C_BOOL, 1, 1, "MPI_C_BOOL" },
		{ MPI_AINT, 8, 8, "MPI_AINT" }, { MPI_OFFSET, 8, 8, "MPI_OFFSET" },
		{ MPI_COUNT, 8, 8, "MPI_COUNT" },
		{ MPI_C_FLOAT_COMPLEX, 8, 8, "MPI_C_COMPLEX" },
		{ MPI_C_LONG_DOUBLE_COMPLEX, 32, 32, "MPI_C_LONG_DOUBLE_COMPLEX" },
		{ MPI_PACKED, 1, 1, "MPI_PACKED" }, { MPI_LB, 0, 0, "MPI_LB" }, { MPI_UB, 0, 0, "MPI_UB" },
		{ MPI_FLOAT_INT, 8, 8, "MPI_FLOAT_INT" }, { MPI_DOUBLE_INT, 12, 16, "MPI_DOUBLE_INT" },
		{ MPI_LONG_INT, 12, 16, "MPI_LONG_INT" }, { MPI_SHORT_INT, 6, 8, "MPI_SHORT_INT" },
		{ MPI_2INT, 8, 8, "MPI_2INT" }, { MPI_LONG_DOUBLE_INT, 20, 32, "MPI_LONG_DOUBLE_INT" },
		{ MPI_CHARACTER, 1, 1, "MPI_CHARACTER" }, { MPI_LOGICAL, 4, 4, "MPI_LOGICAL" },
		{ MPI_INTEGER, 4, 4, "MPI_INTEGER" }, { MPI_DOUBLE_PRECISION, 8, 8, "MPI_DOUBLE_PRECISION" },
		{ MPI_COMPLEX, 8, 8, "MPI_COMPLEX" }, { MPI_DOUBLE_COMPLEX, 16, 16, "MPI_DOUBLE_COMPLEX" },
		{ MPI_2INTEGER, 8, 8, "MPI_2INTEGER" }, { MPI_2DOUBLE_PRECISION, 16, 16, "MPI_2DOUBLE_PRECISION" },
		{ MPI_INTEGER8, 8, 8, "MPI_INTEGER8" }, { MPI_COMPLEX16, 16, 16, "MPI_COMPLEX16" },
		{ MPI_CXX_BOOL, 1, 1, "MPI_CXX_BOOL" },
		{ MPI_CXX_LONG_DOUBLE_COMPLEX, 32, 32, "MPI_CXX_LONG_DOUBLE_COMPLEX" },
	};
	char name[MPI_MAX_OBJECT_NAME];
	int len, ni, na, nd, comb;
	MPI_Aint lb, ext;

	(void)state;
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		int s;

		assert_int_equal(MPI_Type_size(v[i].t, &s), MPI_SUCCESS);
		assert_int_equal(s, v[i].size);
		assert_int_equal(MPI_Type_get_extent(v[i].t, &lb, &ext), MPI_SUCCESS);
		assert_int_equal(lb, 0);
		assert_int_equal(ext, v[i].extent);
		assert_int_equal(MPI_Type_get_name(v[i].t, name, &len), MPI_SUCCESS);
		assert_string_equal(name, v[i].name);
		assert_int_equal(len, strlen(v[i].name));
		assert_int_equal(MPI_Type_get_envelope(v[i].t, &ni, &na, &nd, &comb), MPI_SUCCESS);
		assert_int_equal(comb, MPI_COMBINER_NAMED);
		assert_int_equal(ni + na + nd, 0);
		assert_true(mpii_type_committed(v[i].t));
	}
	/* Every predefined handle names a type, with a name. */
	for (int i = 1; i < NOW_MPI_NPREDEF_TYPES; i++) {
		assert_true(mpii_type_valid(NOW_MPI_H(NOW_MPI_KTYPE, i)));
		assert_true(strncmp(mpii_type_name(NOW_MPI_H(NOW_MPI_KTYPE, i)), "MPI_", 4) == 0);
	}
	assert_false(mpii_type_valid(MPI_DATATYPE_NULL));
	assert_false(mpii_type_valid(MPI_COMM_WORLD));
	assert_int_equal(mpii_type_basic(MPI_DOUBLE_INT), MPI_DOUBLE_INT);
	assert_int_equal(mpii_type_basic(MPI_INT), MPI_INT);
	assert_int_equal(mpii_type_elements(MPI_DOUBLE_INT, 12), 2);
	assert_int_equal(mpii_type_elements(MPI_DOUBLE_INT, 8), 1);
	assert_int_equal(mpii_type_elements(MPI_DOUBLE_INT, 10), -1);

	/* A name set on a predefined type sticks. */
	assert_int_equal(MPI_Type_set_name(MPI_SHORT, "short"), MPI_SUCCESS);
	MPI_Type_get_name(MPI_SHORT, name, &len);
	assert_string_equal(name, "short");
	MPI_Type_set_name(MPI_SHORT, "MPI_SHORT");
}

/* A struct of the two members a C compiler lays out (pairtype_size_extent, dataalign2). */
static void test_struct_padding(void **state)
{
	static const struct {
		MPI_Datatype t;
		MPI_Aint disp, sizeof_c;
	} v[] = {
		{ MPI_CHAR, 1, 2 }, { MPI_SHORT, 2, 4 }, { MPI_INT, 4, 8 }, { MPI_LONG, 8, 16 },
		{ MPI_FLOAT, 4, 8 }, { MPI_DOUBLE, 8, 16 }, { MPI_LONG_DOUBLE, 16, 32 },
		{ MPI_C_COMPLEX, 4, 12 }, { MPI_C_DOUBLE_COMPLEX, 8, 24 }, { MPI_C_LONG_DOUBLE_COMPLEX, 16, 48 },
		{ MPI_C_BOOL, 1, 2 }, { MPI_INT64_T, 8, 16 },
	};
	int blk[2] = { 1, 1 };
	MPI_Aint disp[2] = { 0, 0 }, lb, ext;
	MPI_Datatype types[2] = { MPI_CHAR, 0 }, t;

	(void)state;
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		disp[1] = v[i].disp;
		assert_int_equal(MPI_Type_dup(v[i].t, &types[1]), MPI_SUCCESS);
		assert_int_equal(MPI_Type_create_struct(2, blk, disp, types, &t), MPI_SUCCESS);
		MPI_Type_get_extent(t, &lb, &ext);
		assert_int_equal(ext, v[i].sizeof_c);
		tfree(&t);
		tfree(&types[1]);
	}

	/* struct { long double; int; } hand-built matches MPI_LONG_DOUBLE_INT. */
	types[0] = MPI_LONG_DOUBLE;
	types[1] = MPI_INT;
	disp[1] = 16;
	MPI_Type_create_struct(2, blk, disp, types, &t);
	check_bounds(t, 20, 0, 32, 0, 20);
	tfree(&t);

	/* dataalign: struct { int; char; } has the C extent 8; contiguous(10) of it 80. */
	types[1] = MPI_CHAR;
	disp[1] = 4;
	types[0] = MPI_INT;
	MPI_Type_create_struct(2, blk, disp, types, &t);
	check_bounds(t, 5, 0, 8, 0, 5);
	{
		MPI_Datatype c;

		MPI_Type_contiguous(10, t, &c);
		check_bounds(c, 50, 0, 80, 0, 77);
		tfree(&c);
	}
	tfree(&t);
}

/* --- bounds ---------------------------------------------------------------------------- */

/* MPICH's lbub.c: a 4-byte type given bounds (-3, 9) or (6, -9), then repeated. */
static void test_lbub(void **state)
{
	MPI_Datatype four, pos, neg, t;

	(void)state;
	MPI_Type_contiguous(4, MPI_BYTE, &four);
	MPI_Type_create_resized(four, -3, 9, &pos);
	MPI_Type_create_resized(four, 6, -9, &neg);
	check_bounds(pos, 4, -3, 9, 0, 4);
	check_bounds(neg, 4, 6, -9, 0, 4);

	MPI_Type_contiguous(3, pos, &t);
	check_bounds(t, 12, -3, 27, 0, 22);
	tfree(&t);
	MPI_Type_contiguous(3, neg, &t);
	check_bounds(t, 12, -12, 9, -18, 22);
	tfree(&t);
	MPI_Type_vector(3, 1, 1, pos, &t);
	check_bounds(t, 12, -3, 27, 0, 22);
	tfree(&t);
	MPI_Type_vector(3, 4, 1, pos, &t);
	check_bounds(t, 48, -3, 54, 0, 49);
	tfree(&t);
	MPI_Type_vector(3, 4, 5, pos, &t);
	check_bounds(t, 48, -3, 126, 0, 121);
	tfree(&t);
	MPI_Type_vector(3, 4, -5, pos, &t);
	check_bounds(t, 48, -93, 126, -90, 121);
	tfree(&t);
	MPI_Type_vector(3, 4, 5, neg, &t);
	check_bounds(t, 48, -111, 108, -117, 121);
	tfree(&t);
	MPI_Type_vector(3, 4, -5, neg, &t);
	check_bounds(t, 48, -21, 108, -27, 121);
	tfree(&t);
	tfree(&four);
	tfree(&pos);
	tfree(&neg);
}

/* MPI-1's markers: struct { LB at -4, int at 0, UB at 12 } and what is made of it. */
static void test_markers(void **state)
{
	int blk[3] = { 1, 1, 1 }, src[16], dst[16];
	MPI_Aint disp[3] = { -4, 0, 12 }, a;
	MPI_Datatype types[3] = { MPI_LB, MPI_INT, MPI_UB }, t, c, s, lbonly;

	(void)state;
	assert_int_equal(MPI_Type_struct(3, blk, disp, types, &t), MPI_SUCCESS);
	check_bounds(t, 4, -4, 16, 0, 4);
	MPI_Type_lb(t, &a);
	assert_int_equal(a, -4);
	MPI_Type_ub(t, &a);
	assert_int_equal(a, 12);
	MPI_Type_extent(t, &a);
	assert_int_equal(a, 16);

	/* The markers stick: contiguous(2) places the next at 16 bytes, and its ub is 28. */
	MPI_Type_contiguous(2, t, &c);
	check_bounds(c, 8, -4, 32, 0, 20);
	for (int i = 0; i < 16; i++)
		src[i] = i;
	MPI_Type_commit(&c);
	pack_ints(src, 1, c, (int[]){ 0, 4 }, 2);
	pack_ints(src + 1, 2, c, (int[]){ 1, 5, 9, 13 }, 4);

	/* A struct holding it keeps its markers over the struct's own padding. */
	{
		int b2[2] = { 1, 1 };
		MPI_Aint d2[2] = { 0, 20 };
		MPI_Datatype t2[2] = { t, MPI_DOUBLE };

		MPI_Type_create_struct(2, b2, d2, t2, &s);
		check_bounds(s, 12, -4, 16, 0, 28);
		tfree(&s);
	}

	/* struct_no_real_types: only an LB marker at 10: extent -10. */
	{
		int one = 1;
		MPI_Aint ten = 10;
		MPI_Datatype lb = MPI_LB;

		MPI_Type_create_struct(1, &one, &ten, &lb, &lbonly);
		check_bounds(lbonly, 0, 10, -10, 0, 0);
		tfree(&lbonly);
	}
	memset(dst, 0, sizeof dst);
	{
		int pos = 0, packed[4] = { 100, 101, 102, 103 };

		assert_int_equal(MPI_Unpack(packed, sizeof packed, &pos, dst + 1, 2, c, MPI_COMM_WORLD),
				 MPI_SUCCESS);
		assert_int_equal(pos, 16);
		assert_int_equal(dst[1], 100);
		assert_int_equal(dst[5], 101);
		assert_int_equal(dst[9], 102);
		assert_int_equal(dst[13], 103);
		assert_int_equal(dst[2] | dst[3] | dst[4] | dst[6] | dst[10], 0);
	}
	tfree(&c);
	tfree(&t);
}

/* Zero blocks, zero counts and huge displacements of empty blocks play no part (indexed_misc, zeroblks). */
static void test_zero_blocks(void **state)
{
	MPI_Datatype t;
	int len[3], disp[3], blks0[3] = { 0, 0, 0 };
	MPI_Aint ad[3] = { LONG_MAX, 8, LONG_MAX };

	(void)state;
	len[0] = 0, len[1] = 1, len[2] = 1;
	disp[0] = 0, disp[1] = 1, disp[2] = 4;
	MPI_Type_indexed(3, len, disp, MPI_INT, &t);
	check_bounds(t, 8, 4, 16, 4, 16);
	tfree(&t);
	len[0] = 1, len[1] = 1, len[2] = 0;
	disp[0] = 1, disp[1] = 4, disp[2] = 8;
	MPI_Type_indexed(3, len, disp, MPI_INT, &t);
	check_bounds(t, 8, 4, 16, 4, 16);
	tfree(&t);
	len[0] = 0, len[1] = 4, len[2] = 0;
	assert_int_equal(MPI_Type_create_hindexed(3, len, ad, MPI_INT, &t), MPI_SUCCESS);
	check_bounds(t, 16, 8, 16, 8, 16);
	tfree(&t);

	assert_int_equal(MPI_Type_contiguous(0, MPI_INT, &t), MPI_SUCCESS);
	check_bounds(t, 0, 0, 0, 0, 0);
	tfree(&t);
	assert_int_equal(MPI_Type_create_struct(0, NULL, NULL, NULL, &t), MPI_SUCCESS);
	check_bounds(t, 0, 0, 0, 0, 0);
	tfree(&t);
	assert_int_equal(MPI_Type_create_indexed_block(0, 0, NULL, MPI_INT, &t), MPI_SUCCESS);
	check_bounds(t, 0, 0, 0, 0, 0);
	MPI_Type_commit(&t);
	{
		MPI_Status st;
		int n;
		const void *start;

		assert_true(mpii_type_contig(&n, 5, t, &start));
		MPI_Status_set_elements(&st, t, 3);
		MPI_Get_count(&st, t, &n);
		assert_int_equal(n, 0);
		MPI_Get_elements(&st, t, &n);
		assert_int_equal(n, 0);
	}
	tfree(&t);
	assert_int_equal(MPI_Type_create_hindexed(3, blks0, ad, MPI_INT, &t), MPI_SUCCESS);
	check_bounds(t, 0, 0, 0, 0, 0);
	tfree(&t);
}

/* typelb.c: hindexed of hindexed keeps the inner displacement. */
static void test_typelb(void **state)
{
	int one = 1;
	MPI_Aint three = 3, onea = 1;
	MPI_Datatype a, b;

	(void)state;
	MPI_Type_create_hindexed(1, &one, &three, MPI_BYTE, &a);
	MPI_Type_create_hindexed(1, &one, &onea, a, &b);
	check_bounds(b, 1, 4, 1, 4, 1);
	tfree(&a);
	tfree(&b);
}

/* --- pack and unpack by hand ----------------------------------------------------------- */

static void test_vector_pack(void **state)
{
	int src[32], dst[32], pos;
	MPI_Datatype v, neg, vv;
	const void *start;

	(void)state;
	for (int i = 0; i < 32; i++)
		src[i] = i;
	MPI_Type_vector(3, 2, 4, MPI_INT, &v);
	check_bounds(v, 24, 0, 40, 0, 40);
	assert_int_equal(MPI_Pack(src, 1, v, dst, sizeof dst, &(int){ 0 }, MPI_COMM_WORLD), MPI_ERR_TYPE);
	MPI_Type_commit(&v);
	pack_ints(src, 1, v, (int[]){ 0, 1, 4, 5, 8, 9 }, 6);
	pack_ints(src, 2, v, (int[]){ 0, 1, 4, 5, 8, 9, 10, 11, 14, 15, 18, 19 }, 12);
	assert_false(mpii_type_contig(src, 1, v, &start));

	/* Unpack touches only the type's ints. */
	memset(dst, 0xff, sizeof dst);
	pos = 0;
	assert_int_equal(MPI_Unpack((int[]){ 10, 11, 12, 13, 14, 15 }, 24, &pos, dst, 1, v, MPI_COMM_WORLD),
			 MPI_SUCCESS);
	assert_int_equal(pos, 24);
	assert_int_equal(dst[0], 10);
	assert_int_equal(dst[1], 11);
	assert_int_equal(dst[2], -1);
	assert_int_equal(dst[3], -1);
	assert_int_equal(dst[4], 12);
	assert_int_equal(dst[9], 15);
	assert_int_equal(dst[10], -1);

	/* unusual_noncontigs: a negative stride walks backwards. */
	MPI_Type_vector(2, 1, -1, MPI_INT, &neg);
	check_bounds(neg, 8, -4, 8, -4, 8);
	MPI_Type_commit(&neg);
	pack_ints(src + 2, 2, neg, (int[]){ 2, 1, 4, 3 }, 4);

	/* Vector of vectors: the corners of a 3x3 matrix. */
	{
		MPI_Datatype in;

		MPI_Type_vector(2, 1, 2, MPI_INT, &in);
		MPI_Type_vector(2, 1, 2, in, &vv);
		tfree(&in);
		MPI_Type_commit(&vv);
		check_bounds(vv, 16, 0, 36, 0, 36);
		pack_ints(src, 1, vv, (int[]){ 0, 2, 6, 8 }, 4);
		tfree(&vv);
	}

	/* vector(10, 2, 2) is 20 contiguous ints: one run. */
	MPI_Type_vector(10, 2, 2, MPI_INT, &vv);
	MPI_Type_commit(&vv);
	assert_true(mpii_type_contig(src, 3, vv, &start));
	assert_ptr_equal(start, src);
	tfree(&vv);
	tfree(&v);
	tfree(&neg);
}

/* The forms of contiguity mpii_type_contig must see, and those it must not. */
static void test_contig(void **state)
{
	int buf[8] = { 0 }, blk[2] = { 1, 1 };
	MPI_Aint disp[2] = { 0, 4 };
	MPI_Datatype types[2] = { MPI_INT, MPI_FLOAT }, s, r, r2, sc;
	const void *start;

	(void)state;
	assert_true(mpii_type_contig(buf, 4, MPI_INT, &start));
	assert_ptr_equal(start, buf);
	assert_true(mpii_type_contig(buf, 1, MPI_SHORT_INT, &start) == 0);
	assert_true(mpii_type_contig(buf, 1, MPI_DOUBLE_INT, &start));
	assert_false(mpii_type_contig(buf, 2, MPI_DOUBLE_INT, &start));
	assert_true(mpii_type_contig(buf, 2, MPI_2INT, &start));

	/* A struct whose blocks abut, extent equal to size. */
	MPI_Type_create_struct(2, blk, disp, types, &s);
	assert_true(mpii_type_contig(buf, 3, s, &start));
	assert_int_equal(mpii_type_basic(s), MPI_DATATYPE_NULL);
	/* Resized to 12: one is a run, two are not. */
	MPI_Type_create_resized(s, 0, 12, &r);
	assert_true(mpii_type_contig(buf, 1, r, &start));
	assert_false(mpii_type_contig(buf, 2, r, &start));
	/* Resized with a negative lb: the run starts where the data does. */
	MPI_Type_create_resized(MPI_INT, -4, 8, &r2);
	assert_true(mpii_type_contig(buf + 2, 1, r2, &start));
	assert_ptr_equal(start, buf + 2);
	/* A struct of two copies of the first at 0 and 8: 16 contiguous bytes. */
	{
		MPI_Datatype t2[2] = { s, s };
		MPI_Aint d2[2] = { 0, 8 };

		MPI_Type_create_struct(2, blk, d2, t2, &sc);
		assert_true(mpii_type_contig(buf, 2, sc, &start));
		tfree(&sc);
		/* In the other order the stream is not memory's. */
		d2[0] = 8;
		d2[1] = 0;
		MPI_Type_create_struct(2, blk, d2, t2, &sc);
		assert_false(mpii_type_contig(buf, 1, sc, &start));
		tfree(&sc);
	}
	tfree(&s);
	tfree(&r);
	tfree(&r2);
}

/* struct_pack.c's struct of structs resized to 10, and struct_empty_el. */
static void test_struct_pack(void **state)
{
	char buf[50], buf2[50], packed[64];
	int blks[2] = { 2, 1 }, pos = 0, size;
	MPI_Aint disps[2] = { 0, 3 };
	MPI_Datatype types[2], ch, tile1, tile2, tmp, fin;

	(void)state;
	MPI_Type_contiguous(1, MPI_CHAR, &ch);
	types[0] = MPI_CHAR;
	types[1] = ch;
	MPI_Type_create_struct(2, blks, disps, types, &tile1);
	MPI_Type_create_struct(2, blks, disps, types, &tile2);
	disps[1] = 5;
	blks[0] = blks[1] = 1;
	types[0] = tile1;
	types[1] = tile2;
	MPI_Type_create_struct(2, blks, disps, types, &tmp);
	MPI_Type_create_resized(tmp, 0, 10, &fin);
	MPI_Type_commit(&fin);
	tfree(&ch);
	tfree(&tile1);
	tfree(&tile2);
	tfree(&tmp);
	check_bounds(fin, 6, 0, 10, 0, 9);
	MPI_Pack_size(5, fin, MPI_COMM_WORLD, &size);
	assert_int_equal(size, 30);
	for (int i = 0; i < 50; i++)
		buf[i] = (char)i;
	assert_int_equal(MPI_Pack(buf, 5, fin, packed, sizeof packed, &pos, MPI_COMM_WORLD), MPI_SUCCESS);
	assert_int_equal(pos, 30);
	for (int j = 0; j < 5; j++) {
		const char want[6] = { 0, 1, 3, 5, 6, 8 };

		for (int i = 0; i < 6; i++)
			assert_int_equal(packed[6 * j + i], 10 * j + want[i]);
	}
	memset(buf2, 0, sizeof buf2);
	pos = 0;
	MPI_Unpack(packed, 30, &pos, buf2, 5, fin, MPI_COMM_WORLD);
	for (int i = 0; i < 50; i++) {
		int k = i % 10, in = k == 0 || k == 1 || k == 3 || k == 5 || k == 6 || k == 8;

		assert_int_equal(buf2[i], in ? buf[i] : 0);
	}
	tfree(&fin);
}

/* unpack.c: indexed of indexed of chars. */
static void test_indexed_of_indexed(void **state)
{
	static const char want[] = "a_bc____d_efg_hij_kl____m_nop_qr";
	int blk[2] = { 1, 2 }, dsp[2] = { 0, 2 }, pos = 0;
	char mem[32], in[18];
	MPI_Datatype t, m;
	MPI_Aint lb, ext;

	(void)state;
	MPI_Type_indexed(2, blk, dsp, MPI_CHAR, &t);
	MPI_Type_indexed(2, blk, dsp, t, &m);
	tfree(&t);
	MPI_Type_commit(&m);
	MPI_Type_get_extent(m, &lb, &ext);
	assert_int_equal(ext, 16);
	memset(mem, '_', sizeof mem);
	/* 9 chars an element. */
	for (int i = 0; i < 18; i++)
		in[i] = (char)('a' + i);
	assert_int_equal(MPI_Unpack(in, 18, &pos, mem, 2, m, MPI_COMM_WORLD), MPI_SUCCESS);
	assert_int_equal(pos, 18);
	assert_memory_equal(mem, want, 32);
	tfree(&m);
}

/* vecblklen.c: a vector whose blocks tile memory with a type that has a hole. */
static void test_vecblklen(void **state)
{
	MPI_Datatype dt, dt2, v;
	signed char *in, *out, *pk;
	int pos = 0, psize;

	(void)state;
	MPI_Type_contiguous(59, MPI_CHAR, &dt);
	MPI_Type_create_resized(dt, 0, 64, &dt2);
	MPI_Type_vector(16, 16, 16, dt2, &v);
	MPI_Type_commit(&v);
	in = malloc(16 * 16 * 64);
	out = malloc(16 * 16 * 64);
	for (int i = 0; i < 16 * 16 * 64; i++) {
		in[i] = (signed char)(i % 64);
		out[i] = -1;
	}
	MPI_Pack_size(1, v, MPI_COMM_WORLD, &psize);
	assert_int_equal(psize, 16 * 16 * 59);
	pk = malloc(psize);
	MPI_Pack(in, 1, v, pk, psize, &pos, MPI_COMM_WORLD);
	pos = 0;
	MPI_Unpack(pk, psize, &pos, out, 1, v, MPI_COMM_WORLD);
	for (int i = 0; i < 16 * 16 * 64; i++)
		assert_int_equal(out[i], i % 64 < 59 ? i % 64 : -1);
	free(in);
	free(out);
	free(pk);
	tfree(&dt);
	tfree(&dt2);
	tfree(&v);
}

/* A short message fills the first elements, byte for byte (lots_of_types, struct_empty_el). */
static void test_partial_unpack(void **state)
{
	int blks[1024], disps[1024], recv[4096], blk3[3] = { 0, 1, 2 };
	MPI_Aint d3[3] = { 8, 0, 8 };
	MPI_Datatype t, types3[3] = { MPI_FLOAT, MPI_INT, MPI_INT };
	MPI_Status st;
	int n;

	(void)state;
	disps[0] = 0;
	blks[0] = 4;
	for (int j = 1; j < 1024; j++) {
		disps[j] = 4 * j;
		blks[j] = j % 3 + 1;
	}
	MPI_Type_indexed(1024, blks, disps, MPI_INT, &t);
	MPI_Type_commit(&t);
	memset(recv, 0xff, sizeof recv);
	mpii_unpack((int[]){ 1, 2, 3, 4, 5 }, 14, recv, 1, t);
	assert_int_equal(recv[0], 1);
	assert_int_equal(recv[2], 3);
	assert_int_equal(recv[3] & 0xffff, 4);
	assert_int_equal((unsigned)recv[3] >> 16, 0xffff);
	assert_int_equal(recv[4], -1);
	mpii_status_set_bytes(&st, 16);
	MPI_Get_count(&st, t, &n);
	assert_int_equal(n, MPI_UNDEFINED);
	MPI_Get_elements(&st, t, &n);
	assert_int_equal(n, 4);
	tfree(&t);

	/* A struct whose first block is empty: ints at 0, 8, 12 of each 16. */
	MPI_Type_create_struct(3, blk3, d3, types3, &t);
	check_bounds(t, 12, 0, 16, 0, 16);
	MPI_Type_commit(&t);
	memset(recv, 0xff, sizeof recv);
	mpii_unpack((int[]){ 1, 2, 3, 4, 5, 6 }, 24, recv, 2, t);
	assert_int_equal(recv[0], 1);
	assert_int_equal(recv[1], -1);
	assert_int_equal(recv[2], 2);
	assert_int_equal(recv[3], 3);
	assert_int_equal(recv[4], 4);
	assert_int_equal(recv[6], 5);
	assert_int_equal(recv[7], 6);
	mpii_status_set_bytes(&st, 24);
	MPI_Get_count(&st, t, &n);
	assert_int_equal(n, 2);
	MPI_Get_elements(&st, t, &n);
	assert_int_equal(n, 6);
	tfree(&t);
}

/* --- subarrays and darrays ------------------------------------------------------------- */

static void test_subarray(void **state)
{
	int sizes[3] = { 4, 3, 5 }, sub[3] = { 2, 2, 3 }, starts[3] = { 1, 0, 2 }, src[60], out[12], pos;
	MPI_Datatype t;
	int ints[11];
	MPI_Datatype old;

	(void)state;
	for (int i = 0; i < 60; i++)
		src[i] = i;
	/* C order: the last index is fastest. */
	MPI_Type_create_subarray(3, sizes, sub, starts, MPI_ORDER_C, MPI_INT, &t);
	MPI_Type_commit(&t);
	check_bounds(t, 48, 0, 240, 4 * (15 + 2), 4 * (2 * 15 + 1 * 5 + 5 - 17));
	{
		int want[12], k = 0;

		for (int a = 1; a < 3; a++)
			for (int b = 0; b < 2; b++)
				for (int c = 2; c < 5; c++)
					want[k++] = a * 15 + b * 5 + c;
		pack_ints(src, 1, t, want, 12);
	}
	envelope_is(t, MPI_COMBINER_SUBARRAY, 11, 0, 1);
	MPI_Type_get_contents(t, 11, 0, 1, ints, NULL, &old);
	assert_int_equal(ints[0], 3);
	assert_int_equal(ints[4], 2);
	assert_int_equal(ints[9], 2);
	assert_int_equal(ints[10], MPI_ORDER_C);
	assert_int_equal(old, MPI_INT);
	tfree(&t);

	/* Fortran order: the first index is fastest. */
	MPI_Type_create_subarray(3, sizes, sub, starts, MPI_ORDER_FORTRAN, MPI_INT, &t);
	MPI_Type_commit(&t);
	{
		int want[12], k = 0;

		for (int c = 2; c < 5; c++)
			for (int b = 0; b < 2; b++)
				for (int a = 1; a < 3; a++)
					want[k++] = a + b * 4 + c * 12;
		pack_ints(src, 1, t, want, 12);
	}
	memset(out, 0, sizeof out);
	pos = 0;
	assert_int_equal(MPI_Pack(src, 1, t, out, sizeof out, &pos, MPI_COMM_WORLD), MPI_SUCCESS);
	tfree(&t);

	/* A 1-D subarray of doubles is a contiguous piece of the array. */
	{
		int s1 = 10, ss1 = 4, st1 = 3;
		const void *start;
		double d[10];

		MPI_Type_create_subarray(1, &s1, &ss1, &st1, MPI_ORDER_C, MPI_DOUBLE, &t);
		check_bounds(t, 32, 0, 80, 24, 32);
		assert_true(mpii_type_contig(d, 1, t, &start));
		assert_ptr_equal(start, d + 3);
		tfree(&t);
	}
	assert_int_equal(MPI_Type_create_subarray(3, sizes, sub, (int[]){ 3, 0, 0 }, MPI_ORDER_C, MPI_INT, &t),
			 MPI_ERR_ARG);
	assert_int_equal(MPI_Type_create_subarray(3, sizes, sub, starts, 7, MPI_INT, &t), MPI_ERR_ARG);
}

/* Pack with darray t, unpack into a zeroed copy: what survives is rank's part. */
static void darray_roundtrip(MPI_Datatype t, int *a, int n)
{
	int size, pos = 0, *pk;

	MPI_Type_commit(&t);
	MPI_Type_size(t, &size);
	pk = malloc(size + 1);
	for (int i = 0; i < n; i++)
		a[i] = i;
	assert_int_equal(MPI_Pack(a, 1, t, pk, size, &pos, MPI_COMM_SELF), MPI_SUCCESS);
	memset(a, 0, n * sizeof *a);
	pos = 0;
	assert_int_equal(MPI_Unpack(pk, size, &pos, a, 1, t, MPI_COMM_SELF), MPI_SUCCESS);
	free(pk);
}

static void test_darray(void **state)
{
	int a[72], gs[4], dist[4], darg[4], ps[4], size;
	MPI_Datatype t;
	MPI_Aint lb, ext;

	(void)state;
	/* darray_pack: 3x3 blocks on 3x3 processes, one int each. */
	gs[0] = gs[1] = 3;
	dist[0] = dist[1] = MPI_DISTRIBUTE_BLOCK;
	darg[0] = darg[1] = MPI_DISTRIBUTE_DFLT_DARG;
	ps[0] = ps[1] = 3;
	for (int r = 0; r < 9; r++) {
		assert_int_equal(MPI_Type_create_darray(9, r, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t),
				 MPI_SUCCESS);
		check_bounds(t, 4, 0, 36, 4 * r, 4);
		darray_roundtrip(t, a, 9);
		for (int i = 0; i < 9; i++)
			assert_int_equal(a[i], i == r ? r : 0);
		tfree(&t);
	}
	/* 6x3x2x2, the last two not distributed: rank r has ints 4r..4r+3. */
	gs[0] = 6, gs[1] = 3, gs[2] = 2, gs[3] = 2;
	dist[2] = dist[3] = MPI_DISTRIBUTE_NONE;
	darg[2] = darg[3] = MPI_DISTRIBUTE_DFLT_DARG;
	ps[0] = 6, ps[1] = 3, ps[2] = 1, ps[3] = 1;
	for (int r = 0; r < 18; r++) {
		MPI_Type_create_darray(18, r, 4, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t);
		MPI_Type_size(t, &size);
		assert_int_equal(size, 16);
		darray_roundtrip(t, a, 72);
		for (int i = 0; i < 72; i++)
			assert_int_equal(a[i], i / 4 == r ? i : 0);
		tfree(&t);
	}
	/* darray_cyclic on 4 processes: cyclic(1) and cyclic(2) of 1-D arrays. */
	for (int r = 0; r < 4; r++) {
		int g = 12, d = MPI_DISTRIBUTE_CYCLIC, k = 1, p = 4;
		int out[4], pos = 0, src[16];

		for (int i = 0; i < 16; i++)
			src[i] = i;
		MPI_Type_create_darray(4, r, 1, &g, &d, &k, &p, MPI_ORDER_C, MPI_INT, &t);
		MPI_Type_commit(&t);
		MPI_Type_get_extent(t, &lb, &ext);
		assert_int_equal(lb, 0);
		assert_int_equal(ext, 48);
		MPI_Pack(src, 1, t, out, sizeof out, &pos, MPI_COMM_SELF);
		assert_int_equal(pos, 12);
		for (int i = 0; i < 3; i++)
			assert_int_equal(out[i], r + 4 * i);
		tfree(&t);
		g = 16;
		k = 2;
		pos = 0;
		MPI_Type_create_darray(4, r, 1, &g, &d, &k, &p, MPI_ORDER_C, MPI_INT, &t);
		MPI_Type_commit(&t);
		MPI_Pack(src, 1, t, out, sizeof out, &pos, MPI_COMM_SELF);
		for (int i = 0; i < 2; i++)
			for (int j = 0; j < 2; j++)
				assert_int_equal(out[2 * i + j], 2 * r + 8 * i + j);
		tfree(&t);
	}
	/* Cyclic(2)/cyclic(3) on a 2x2 grid of a 8x12 array, C order (darray_cyclic's last case). */
	{
		int nx = 12, ny = 8, px = 2, py = 2, bx = 3, by = 2;
		int g2[2] = { ny, nx }, d2[2] = { MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_CYCLIC };
		int k2[2] = { by, bx }, p2[2] = { py, px }, src[96], out[24];

		for (int i = 0; i < 96; i++)
			src[i] = i;
		for (int r = 0; r < 4; r++) {
			int rx = r % px, ry = r / px, pos = 0, loc = 0;

			MPI_Type_create_darray(4, r, 2, g2, d2, k2, p2, MPI_ORDER_C, MPI_INT, &t);
			MPI_Type_commit(&t);
			MPI_Pack(src, 1, t, out, sizeof out, &pos, MPI_COMM_SELF);
			assert_int_equal(pos, 96);
			for (int j = 0; j < 4 / by; j++) {
				for (int jj = 0; jj < by; jj++) {
					int row = (j * by * py + jj + ry * by) * nx;

					for (int i = 0; i < 6 / bx; i++)
						for (int ii = 0; ii < bx; ii++)
							assert_int_equal(out[loc++], row + rx * bx + i * bx * px + ii);
				}
			}
			tfree(&t);
		}
	}
	/* A last block cut short: 10 ints in blocks of 4 over 3 processes. */
	{
		int g = 10, d = MPI_DISTRIBUTE_BLOCK, k = 4, p = 3, src[10];

		for (int i = 0; i < 10; i++)
			src[i] = i;
		MPI_Type_create_darray(3, 2, 1, &g, &d, &k, &p, MPI_ORDER_FORTRAN, MPI_INT, &t);
		MPI_Type_commit(&t);
		check_bounds(t, 8, 0, 40, 32, 8);
		pack_ints(src, 1, t, (int[]){ 8, 9 }, 2);
		tfree(&t);
		d = MPI_DISTRIBUTE_CYCLIC;
		k = 3;
		MPI_Type_create_darray(3, 0, 1, &g, &d, &k, &p, MPI_ORDER_FORTRAN, MPI_INT, &t);
		MPI_Type_commit(&t);
		pack_ints(src, 1, t, (int[]){ 0, 1, 2, 9 }, 4);
		tfree(&t);
		/* Blocks of 3 do not cover 10 on 3 processes. */
		d = MPI_DISTRIBUTE_BLOCK;
		assert_int_equal(MPI_Type_create_darray(3, 0, 1, &g, &d, &k, &p, MPI_ORDER_C, MPI_INT, &t),
				 MPI_ERR_ARG);
		assert_int_equal(MPI_Type_create_darray(4, 0, 1, &g, &d, &darg[0], &p, MPI_ORDER_C, MPI_INT, &t),
				 MPI_ERR_ARG);
	}
}

/* --- contents and references ----------------------------------------------------------- */

static void test_contents(void **state)
{
	int ints[16], ni, na, nd, comb, bl[3] = { 3, 2, 1 }, dp[3] = { 10, 20, 30 };
	MPI_Aint addrs[8], ad[3] = { 0, 8, 16 };
	MPI_Datatype types[4], in, out, t;

	(void)state;
	MPI_Type_vector(2, 1, 2, MPI_INT, &in);
	MPI_Type_vector(2, 1, 2, in, &out);
	envelope_is(out, MPI_COMBINER_VECTOR, 3, 0, 1);
	assert_int_equal(MPI_Type_get_contents(out, 3, 0, 1, ints, addrs, types), MPI_SUCCESS);
	assert_int_equal(ints[0], 2);
	assert_int_equal(ints[1], 1);
	assert_int_equal(ints[2], 2);
	assert_int_equal(types[0], in);
	/* The handle returned is the user's to free, as is the original. */
	tfree(&types[0]);
	tfree(&in);
	tfree(&out);

	MPI_Type_indexed(3, bl, dp, MPI_INT, &t);
	envelope_is(t, MPI_COMBINER_INDEXED, 7, -1, -1);
	MPI_Type_get_contents(t, 7, 0, 1, ints, addrs, types);
	assert_memory_equal(ints, ((int[]){ 3, 3, 2, 1, 10, 20, 30 }), 7 * sizeof(int));
	assert_int_equal(MPI_Type_get_contents(t, 6, 0, 1, ints, addrs, types), MPI_ERR_ARG);
	tfree(&t);

	MPI_Type_create_hindexed_block(3, 2, ad, MPI_INT, &t);
	envelope_is(t, MPI_COMBINER_HINDEXED_BLOCK, 2, 3, -1);
	MPI_Type_get_contents(t, 2, 3, 1, ints, addrs, types);
	assert_int_equal(ints[0], 3);
	assert_int_equal(ints[1], 2);
	assert_int_equal(addrs[2], 16);
	assert_int_equal(types[0], MPI_INT);
	tfree(&t);

	MPI_Type_create_hindexed(3, bl, ad, MPI_INT, &t);
	envelope_is(t, MPI_COMBINER_HINDEXED, 4, 3, -1);
	tfree(&t);
	MPI_Type_create_indexed_block(3, 2, dp, MPI_INT, &t);
	envelope_is(t, MPI_COMBINER_INDEXED_BLOCK, 5, -1, -1);
	tfree(&t);
	MPI_Type_hvector(3, 2, 40, MPI_INT, &t);
	envelope_is(t, MPI_COMBINER_HVECTOR, 2, 1, -1);
	MPI_Type_get_contents(t, 2, 1, 1, ints, addrs, types);
	assert_int_equal(addrs[0], 40);
	tfree(&t);
	MPI_Type_create_resized(MPI_INT, -4, 12, &t);
	envelope_is(t, MPI_COMBINER_RESIZED, -1, -1, -1);
	MPI_Type_get_contents(t, 0, 2, 1, NULL, addrs, types);
	assert_int_equal(addrs[0], -4);
	assert_int_equal(addrs[1], 12);
	tfree(&t);
	MPI_Type_contiguous(5, MPI_DOUBLE_INT, &t);
	envelope_is(t, MPI_COMBINER_CONTIGUOUS, -1, -1, -1);
	assert_int_equal(mpii_type_basic(t), MPI_DOUBLE_INT);
	tfree(&t);

	/* A struct of a derived type: freed first by the user, alive in the struct. */
	{
		int b2[2] = { 1, 2 };
		MPI_Aint d2[2] = { 0, 16 };
		MPI_Datatype t2[2];

		MPI_Type_contiguous(3, MPI_INT, &in);
		t2[0] = in;
		t2[1] = MPI_DOUBLE;
		MPI_Type_create_struct(2, b2, d2, t2, &t);
		tfree(&in);
		check_bounds(t, 28, 0, 32, 0, 32);
		envelope_is(t, MPI_COMBINER_STRUCT, 3, 2, 2);
		MPI_Type_get_contents(t, 3, 2, 2, ints, addrs, types);
		assert_int_equal(types[1], MPI_DOUBLE);
		check_bounds(types[0], 12, 0, 12, 0, 12);
		tfree(&types[0]);
		tfree(&t);
	}

	/* Dup copies the layout and the attributes, and keeps the committed state. */
	MPI_Type_contiguous(2, MPI_INT, &in);
	MPI_Type_commit(&in);
	dup_calls = free_calls = 0;
	assert_int_equal(MPI_Type_dup(in, &t), MPI_SUCCESS);
	assert_int_equal(dup_calls, 1);
	assert_true(mpii_type_committed(t));
	MPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
	assert_int_equal(comb, MPI_COMBINER_DUP);
	assert_int_equal(ni + na, 0);
	assert_int_equal(nd, 1);
	assert_int_equal(MPI_Type_get_contents(MPI_INT, 0, 0, 0, NULL, NULL, NULL), MPI_ERR_TYPE);
	tfree(&t);
	assert_int_equal(free_calls, 1);
	dup_fail = 1;
	t = MPI_INT;
	assert_int_equal(MPI_Type_dup(in, &t), MPI_ERR_OTHER);
	assert_int_equal(t, MPI_DATATYPE_NULL);
	dup_fail = 0;
	tfree(&in);
}

/* A type a pending operation holds outlives MPI_Type_free (tfree.c). */
static void test_refs(void **state)
{
	MPI_Datatype t, keep, other[64];

	(void)state;
	MPI_Type_vector(128, 1, 8, MPI_INT, &t);
	MPI_Type_commit(&t);
	keep = t;
	mpii_type_ref(keep);
	tfree(&t);
	assert_false(mpii_type_valid(keep));		/* the user's handle is gone ... */
	assert_int_equal(MPI_Type_commit(&keep), MPI_ERR_TYPE);
	for (int i = 0; i < 64; i++) {
		MPI_Type_vector(128, 1, 1, MPI_INT, &other[i]);
		assert_int_not_equal(other[i], keep);
	}
	assert_int_equal(mpii_type_size(keep), 512);	/* ... the operation's is not */
	assert_int_equal(mpii_type_extent(keep), 4 * (127 * 8 + 1));
	assert_true(mpii_type_committed(keep));
	mpii_type_unref(keep);
	assert_null(mpii_obj_get(NOW_MPI_KTYPE, keep));
	for (int i = 0; i < 64; i++)
		tfree(&other[i]);
	assert_int_equal(MPI_Type_free(&(MPI_Datatype){ MPI_INT }), MPI_ERR_TYPE);
}

/* --- element counts -------------------------------------------------------------------- */

static void test_elements(void **state)
{
	int blk[2] = { 1, 1 }, n, c;
	MPI_Aint disp[2] = { 0, 8 };
	MPI_Datatype types[2] = { MPI_INT, MPI_DOUBLE }, s, ia, pe;
	MPI_Status st;
	MPI_Count x;

	(void)state;
	/* struct { int; double; } x 2: 4 elements in 24 bytes. */
	MPI_Type_create_struct(2, blk, disp, types, &s);
	check_bounds(s, 12, 0, 16, 0, 16);
	MPI_Status_set_elements(&st, s, 2);
	MPI_Get_elements(&st, s, &n);
	assert_int_equal(n, 4);
	MPI_Get_count(&st, s, &c);
	assert_int_equal(c, 2);
	for (int bytes = 0; bytes <= 24; bytes++) {
		static const int want[25] = { 0, -1, -1, -1, 1, -1, -1, -1, -1, -1, -1, -1, 2,
					      -1, -1, -1, 3, -1, -1, -1, -1, -1, -1, -1, 4 };

		mpii_status_set_bytes(&st, bytes);
		MPI_Get_elements(&st, s, &n);
		assert_int_equal(n, want[bytes] < 0 ? MPI_UNDEFINED : want[bytes]);
		MPI_Get_count(&st, s, &c);
		assert_int_equal(c, bytes % 12 ? MPI_UNDEFINED : bytes / 12);
	}
	tfree(&s);

	/* getcnterr: 33 bytes are not whole elements of contiguous(4, DOUBLE_INT). */
	MPI_Type_contiguous(4, MPI_DOUBLE_INT, &ia);
	mpii_status_set_bytes(&st, 33);
	MPI_Get_elements(&st, ia, &n);
	assert_int_equal(n, MPI_UNDEFINED);
	mpii_status_set_bytes(&st, 32);
	MPI_Get_elements(&st, ia, &n);
	assert_int_equal(n, 5);
	tfree(&ia);

	/* getpartelm: struct { int; 256 chars; } receiving 4 + 17 bytes: 18 elements. */
	blk[1] = 256;
	disp[1] = 4;
	types[1] = MPI_CHAR;
	MPI_Type_create_struct(2, blk, disp, types, &pe);
	mpii_status_set_bytes(&st, 21);
	MPI_Get_elements(&st, pe, &n);
	assert_int_equal(n, 18);
	MPI_Get_elements_x(&st, pe, &x);
	assert_int_equal(x, 18);
	MPI_Get_count(&st, pe, &c);
	assert_int_equal(c, MPI_UNDEFINED);
	tfree(&pe);

	/* get_elements_pairtype: {double, int, double, int} as 2 DOUBLE_INT: 4 elements. */
	mpii_status_set_bytes(&st, 24);
	MPI_Get_elements(&st, MPI_DOUBLE_INT, &n);
	assert_int_equal(n, 4);
	assert_int_equal(MPI_Get_count(MPI_STATUS_IGNORE, MPI_INT, &c), MPI_ERR_ARG);
}

/* large_count.c: sizes beyond an int, in types that hold no memory of their count. */
static void test_large_count(void **state)
{
	MPI_Datatype imax, four, big, rsz;
	MPI_Count sx, lbx, ex, el;
	MPI_Aint lb, e;
	MPI_Status st;
	int s, n, c;
	const MPI_Count true_ext = 3LL * 16 * (INT_MAX / 2 - 1) + 16;

	(void)state;
	MPI_Type_contiguous(INT_MAX, MPI_CHAR, &imax);
	MPI_Type_contiguous(4, MPI_INT, &four);
	MPI_Type_vector(INT_MAX / 2, 1, 3, four, &big);
	MPI_Type_create_resized(big, INT_MAX, -1024, &rsz);
	MPI_Type_size(imax, &s);
	assert_int_equal(s, INT_MAX);
	MPI_Type_size(big, &s);
	assert_int_equal(s, MPI_UNDEFINED);
	MPI_Type_size_x(rsz, &sx);
	assert_int_equal(sx, 16LL * (INT_MAX / 2));
	MPI_Type_get_extent(big, &lb, &e);
	assert_int_equal(e, true_ext);
	MPI_Type_get_extent_x(rsz, &lbx, &ex);
	assert_int_equal(lbx, INT_MAX);
	assert_int_equal(ex, -1024);
	MPI_Type_get_true_extent_x(rsz, &lbx, &ex);
	assert_int_equal(lbx, 0);
	assert_int_equal(ex, true_ext);

	MPI_Status_set_elements_x(&st, big, 1);
	MPI_Get_elements(&st, big, &n);
	assert_int_equal(n, MPI_UNDEFINED);
	MPI_Get_elements_x(&st, big, &el);
	assert_int_equal(el, 4LL * (INT_MAX / 2));
	MPI_Get_count(&st, big, &c);
	assert_int_equal(c, 1);
	MPI_Status_set_elements(&st, imax, 1);
	MPI_Get_elements(&st, imax, &n);
	assert_int_equal(n, INT_MAX);
	MPI_Status_set_elements(&st, MPI_INT, 10);
	MPI_Get_count(&st, MPI_INT, &c);
	assert_int_equal(c, 10);
	assert_int_equal(MPI_Pack_size(1, big, MPI_COMM_WORLD, &s), MPI_ERR_ARG);
	tfree(&imax);
	tfree(&four);
	tfree(&big);
	tfree(&rsz);
}

/* --- external32 ------------------------------------------------------------------------ */

static void check_external(MPI_Datatype t, const void *data, int count, const unsigned char *want, int n)
{
	unsigned char out[64], back[128];
	MPI_Aint size, pos = 0;
	int tsize;

	assert_int_equal(MPI_Pack_external_size("external32", count, t, &size), MPI_SUCCESS);
	assert_int_equal(size, n);
	assert_int_equal(MPI_Pack_external("external32", data, count, t, out, sizeof out, &pos), MPI_SUCCESS);
	assert_int_equal(pos, n);
	assert_memory_equal(out, want, n);
	pos = 0;
	memset(back, 0, sizeof back);
	assert_int_equal(MPI_Unpack_external("external32", out, n, &pos, back, count, t), MPI_SUCCESS);
	assert_int_equal(pos, n);
	MPI_Type_size(t, &tsize);
	if (t == MPI_LONG_DOUBLE)
		assert_true(((long double *)back)[0] == ((const long double *)data)[0] &&
			    ((long double *)back)[1] == ((const long double *)data)[1]);
	else
		assert_memory_equal(back, data, count * tsize);
}

static void test_external32(void **state)
{
	static const int ints[2] = { 1, -2 };
	static const long longs[2] = { 1, -2 };
	static const long long lls[2] = { 1, -2 };
	static const float floats[2] = { 1.0f, 2.0f };
	static const long double ldbl[2] = { 1.0L, 2.0L };
	static const float cplx[4] = { 1.0f, 0.0f, 2.0f, 1.0f };
	static const int wch[2] = { 0x41, 0x263a };
	static const unsigned short us[2] = { 0x1234, 0xfffe };
	static const unsigned char int_x[8] = { 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe };
	static const unsigned char ll_x[16] = { 0, 0, 0, 0, 0, 0, 0, 1,
						0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe };
	static const unsigned char float_x[8] = { 0x3f, 0x80, 0, 0, 0x40, 0, 0, 0 };
	static const unsigned char ldbl_x[32] = { 0x3f, 0xff, [16] = 0x40 };
	static const unsigned char cplx_x[16] = { 0x3f, 0x80, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0, 0x3f, 0x80, 0, 0 };
	static const unsigned char wch_x[4] = { 0, 0x41, 0x26, 0x3a };
	static const unsigned char us_x[4] = { 0x12, 0x34, 0xff, 0xfe };
	static const struct {
		MPI_Datatype t;
		int size;
	} sizes[] = {
		{ MPI_PACKED, 1 }, { MPI_WCHAR, 2 }, { MPI_LONG, 4 }, { MPI_UNSIGNED_LONG, 4 },
		{ MPI_LONG_DOUBLE, 16 }, { MPI_C_BOOL, 1 }, { MPI_AINT, 8 }, { MPI_C_LONG_DOUBLE_COMPLEX, 32 },
		{ MPI_LOGICAL, 4 }, { MPI_DOUBLE_COMPLEX, 16 }, { MPI_LONG_INT, 8 }, { MPI_LONG_DOUBLE_INT, 20 },
		{ MPI_SHORT_INT, 6 },
	};
	MPI_Aint size, pos;
	unsigned char buf[8];

	(void)state;
	check_external(MPI_INT, ints, 2, int_x, 8);
	check_external(MPI_LONG, longs, 2, int_x, 8);
	check_external(MPI_LONG_LONG, lls, 2, ll_x, 16);
	check_external(MPI_FLOAT, floats, 2, float_x, 8);
	check_external(MPI_LONG_DOUBLE, ldbl, 2, ldbl_x, 32);
	check_external(MPI_C_COMPLEX, cplx, 2, cplx_x, 16);
	check_external(MPI_WCHAR, wch, 2, wch_x, 4);
	check_external(MPI_UNSIGNED_SHORT, us, 2, us_x, 4);
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		MPI_Pack_external_size("external32", 3, sizes[i].t, &size);
		assert_int_equal(size, 3 * sizes[i].size);
	}

	/* A vector of vectors of ints, and a struct { short; long; } with its hole. */
	{
		static const int m[9] = { 1, -1, 2, -2, -3, -4, 3, -5, 4 };
		static const unsigned char vx[16] = { 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4 };
		struct {
			short s;
			long l;
		} sl[2] = { { 0x0102, 0x0a0b0c0d }, { -1, -3 } };
		/* short 2 bytes, long 4, no padding in external32. */
		static const unsigned char slx[12] = { 1, 2, 0x0a, 0x0b, 0x0c, 0x0d,
						       0xff, 0xff, 0xff, 0xff, 0xff, 0xfd };
		int blk[2] = { 1, 1 };
		MPI_Aint disp[2] = { 0, 8 };
		MPI_Datatype in, out, types[2] = { MPI_SHORT, MPI_LONG }, st;
		unsigned char o[32];
		int back[9] = { 0 };

		MPI_Type_vector(2, 1, 2, MPI_INT, &in);
		MPI_Type_vector(2, 1, 2, in, &out);
		MPI_Type_commit(&out);
		pos = 0;
		MPI_Pack_external("external32", m, 1, out, o, sizeof o, &pos);
		assert_int_equal(pos, 16);
		assert_memory_equal(o, vx, 16);
		pos = 0;
		MPI_Unpack_external("external32", o, 16, &pos, back, 1, out);
		assert_memory_equal(back, ((int[]){ 1, 0, 2, 0, 0, 0, 3, 0, 4 }), sizeof back);
		tfree(&in);
		tfree(&out);

		MPI_Type_create_struct(2, blk, disp, types, &st);
		MPI_Type_commit(&st);
		pos = 0;
		MPI_Pack_external("external32", sl, 2, st, o, sizeof o, &pos);
		assert_int_equal(pos, 12);
		assert_memory_equal(o, slx, 12);
		memset(sl, 0, sizeof sl);
		pos = 0;
		MPI_Unpack_external("external32", o, 12, &pos, sl, 2, st);
		assert_int_equal(sl[0].s, 0x0102);
		assert_int_equal(sl[0].l, 0x0a0b0c0d);
		assert_int_equal(sl[1].s, -1);
		assert_int_equal(sl[1].l, -3);
		tfree(&st);
	}
	pos = 4;
	assert_int_equal(MPI_Pack_external("external32", ints, 2, MPI_INT, buf, 8, &pos), MPI_ERR_TRUNCATE);
	assert_int_equal(MPI_Pack_external("native", ints, 1, MPI_INT, buf, 8, &pos), MPI_ERR_UNSUPPORTED_DATAREP);
}

/* --- errors ---------------------------------------------------------------------------- */

static void test_errors(void **state)
{
	MPI_Datatype t, bad = NOW_MPI_H(NOW_MPI_KTYPE, 0xfffff);
	int b[2] = { 1, -1 }, d[2] = { 0, 1 }, pos, n, buf[4] = { 0 };
	MPI_Aint a;

	(void)state;
	assert_int_equal(MPI_Type_vector(3, 2, 3, MPI_INT, NULL), MPI_ERR_ARG);
	assert_int_equal(MPI_Type_contiguous(-1, MPI_INT, &t), MPI_ERR_COUNT);
	assert_int_equal(MPI_Type_contiguous(1, MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE);
	assert_int_equal(MPI_Type_contiguous(1, bad, &t), MPI_ERR_TYPE);
	assert_int_equal(MPI_Type_contiguous(1, MPI_COMM_WORLD, &t), MPI_ERR_TYPE);
	assert_int_equal(MPI_Type_vector(1, -2, 1, MPI_INT, &t), MPI_ERR_ARG);
	assert_int_equal(MPI_Type_indexed(2, b, d, MPI_INT, &t), MPI_ERR_ARG);
	assert_int_equal(MPI_Type_indexed(2, NULL, d, MPI_INT, &t), MPI_ERR_ARG);
	assert_int_equal(MPI_Type_create_struct(1, (int[]){ 1 }, (MPI_Aint[]){ 0 }, &bad, &t), MPI_ERR_TYPE);
	assert_int_equal(MPI_Type_hvector(2, 1, LONG_MAX, MPI_INT, &t), MPI_ERR_ARG);
	assert_int_equal(MPI_Type_size(MPI_INT, NULL), MPI_ERR_ARG);
	assert_int_equal(MPI_Type_size_x(MPI_INT, NULL), MPI_ERR_ARG);
	assert_int_equal(MPI_Type_get_extent(MPI_INT, NULL, &a), MPI_ERR_ARG);
	assert_int_equal(MPI_Type_get_true_extent(MPI_INT, &a, NULL), MPI_ERR_ARG);
	assert_int_equal(MPI_Type_get_true_extent_x(MPI_INT, NULL, NULL), MPI_ERR_ARG);
	assert_int_equal(MPI_Type_extent(MPI_INT, NULL), MPI_ERR_ARG);
	assert_int_equal(MPI_Type_lb(MPI_INT, NULL), MPI_ERR_ARG);
	assert_int_equal(MPI_Type_ub(MPI_INT, NULL), MPI_ERR_ARG);
	assert_int_equal(MPI_Type_size(bad, &n), MPI_ERR_TYPE);
	assert_int_equal(MPI_Type_commit(NULL), MPI_ERR_ARG);
	assert_int_equal(MPI_Type_free(&bad), MPI_ERR_TYPE);
	assert_int_equal(MPI_Get_address(buf, NULL), MPI_ERR_ARG);
	assert_int_equal(MPI_Type_match_size(MPI_TYPECLASS_REAL, 3, &t), MPI_ERR_ARG);
	assert_int_equal(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &t), MPI_SUCCESS);
	assert_int_equal(t, MPI_REAL8);
	assert_int_equal(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 16, &t), MPI_SUCCESS);
	MPI_Type_size(t, &n);
	assert_int_equal(n, 16);
	assert_int_equal(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 2, &t), MPI_SUCCESS);
	MPI_Type_size(t, &n);
	assert_int_equal(n, 2);

	/* Pack: the space, the position, the communicator, the count. */
	pos = 12;
	assert_int_equal(MPI_Pack(buf, 2, MPI_INT, buf, 16, &pos, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
	assert_int_equal(pos, 12);
	assert_true(strstr(last_msg, "MPI_Pack: ") == last_msg);
	assert_int_equal(MPI_Pack(buf, 1, MPI_INT, buf, 16, &pos, MPI_COMM_NULL), MPI_ERR_COMM);
	assert_int_equal(MPI_Pack(buf, -1, MPI_INT, buf, 16, &pos, MPI_COMM_WORLD), MPI_ERR_COUNT);
	assert_int_equal(MPI_Pack(buf, 1, MPI_INT, buf, 16, NULL, MPI_COMM_WORLD), MPI_ERR_ARG);
	pos = 8;
	assert_int_equal(MPI_Unpack(buf, 12, &pos, buf, 2, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
	MPI_Type_contiguous(2, MPI_INT, &t);
	assert_int_equal(MPI_Unpack(buf, 16, &pos, buf, 1, t, MPI_COMM_WORLD), MPI_ERR_TYPE);
	assert_int_equal(MPI_Pack_size(1, t, MPI_COMM_WORLD, &n), MPI_SUCCESS);
	assert_int_equal(n, 8);
	tfree(&t);
	assert_int_equal(MPI_Get_count(NULL, MPI_INT, &n), MPI_ERR_ARG);
	assert_int_equal(MPI_Status_set_elements(NULL, MPI_INT, 1), MPI_ERR_ARG);

	/* Get_address and the address arithmetic. */
	MPI_Get_address(&buf[1], &a);
	assert_int_equal(MPI_Aint_diff(a, (MPI_Aint)(uintptr_t)buf), 4);
	assert_int_equal(MPI_Aint_add(a, -4), (MPI_Aint)(uintptr_t)buf);
}

/* --- random nestings against a reference ----------------------------------------------- */

/* The reference: a type flattened from its contents into (displacement, size) of each basic element. */
struct ent {
	MPI_Aint disp;
	int size;
};

struct flat {
	struct ent *v;
	size_t n, cap;
};

static void flat_add(struct flat *f, MPI_Aint disp, int size)
{
	if (f->n == f->cap) {
		f->cap = f->cap ? 2 * f->cap : 64;
		f->v = realloc(f->v, f->cap * sizeof *f->v);
		assert_non_null(f->v);
	}
	f->v[f->n].disp = disp;
	f->v[f->n++].size = size;
}

static MPI_Aint ext_of(MPI_Datatype t)
{
	MPI_Aint lb, e;

	assert_int_equal(MPI_Type_get_extent(t, &lb, &e), MPI_SUCCESS);
	return e;
}

/* Row-major walk of an n-d index space, fastest dimension given by order. */
static void flat_subarray(struct flat *f, MPI_Datatype old, MPI_Aint base, const int *ints, int d, int *idx);

static void flatten(struct flat *f, MPI_Datatype t, MPI_Aint base)
{
	int ni, na, nd, comb, *ints;
	MPI_Aint *addrs, e;
	MPI_Datatype *types;

	MPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
	if (comb == MPI_COMBINER_NAMED) {
		static const struct {
			MPI_Datatype t;
			int a, boff, b;
		} pairs[] = {
			{ MPI_FLOAT_INT, 4, 4, 4 }, { MPI_DOUBLE_INT, 8, 8, 4 }, { MPI_SHORT_INT, 2, 4, 4 },
			{ MPI_2INT, 4, 4, 4 }, { MPI_LONG_DOUBLE_INT, 16, 16, 4 },
		};
		int s;

		for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
			if (pairs[i].t == t) {
				flat_add(f, base, pairs[i].a);
				flat_add(f, base + pairs[i].boff, pairs[i].b);
				return;
			}
		}
		MPI_Type_size(t, &s);
		if (s)
			flat_add(f, base, s);
		return;
	}
	ints = malloc((ni + 1) * sizeof *ints);
	addrs = malloc((na + 1) * sizeof *addrs);
	types = malloc((nd + 1) * sizeof *types);
	MPI_Type_get_contents(t, ni, na, nd, ints, addrs, types);
	e = ext_of(types[0]);
	switch (comb) {
	case MPI_COMBINER_DUP:
	case MPI_COMBINER_RESIZED:
		flatten(f, types[0], base);
		break;
	case MPI_COMBINER_CONTIGUOUS:
		for (int i = 0; i < ints[0]; i++)
			flatten(f, types[0], base + i * e);
		break;
	case MPI_COMBINER_VECTOR:
		for (int i = 0; i < ints[0]; i++)
			for (int j = 0; j < ints[1]; j++)
				flatten(f, types[0], base + ((MPI_Aint)i * ints[2] + j) * e);
		break;
	case MPI_COMBINER_HVECTOR:
		for (int i = 0; i < ints[0]; i++)
			for (int j = 0; j < ints[1]; j++)
				flatten(f, types[0], base + i * addrs[0] + j * e);
		break;
	case MPI_COMBINER_INDEXED:
		for (int k = 0; k < ints[0]; k++)
			for (int j = 0; j < ints[1 + k]; j++)
				flatten(f, types[0], base + ((MPI_Aint)ints[1 + ints[0] + k] + j) * e);
		break;
	case MPI_COMBINER_HINDEXED:
		for (int k = 0; k < ints[0]; k++)
			for (int j = 0; j < ints[1 + k]; j++)
				flatten(f, types[0], base + addrs[k] + j * e);
		break;
	case MPI_COMBINER_INDEXED_BLOCK:
		for (int k = 0; k < ints[0]; k++)
			for (int j = 0; j < ints[1]; j++)
				flatten(f, types[0], base + ((MPI_Aint)ints[2 + k] + j) * e);
		break;
	case MPI_COMBINER_HINDEXED_BLOCK:
		for (int k = 0; k < ints[0]; k++)
			for (int j = 0; j < ints[1]; j++)
				flatten(f, types[0], base + addrs[k] + j * e);
		break;
	case MPI_COMBINER_STRUCT:
		for (int k = 0; k < ints[0]; k++)
			for (int j = 0; j < ints[1 + k]; j++)
				flatten(f, types[k], base + addrs[k] + j * ext_of(types[k]));
		break;
	case MPI_COMBINER_SUBARRAY: {
		int idx[8];

		flat_subarray(f, types[0], base, ints, 0, idx);
		break;
	}
	default:
		fail_msg("combiner %d", comb);
	}
	for (int k = 0; k < nd; k++) {
		int ni2, na2, nd2, comb2;

		MPI_Type_get_envelope(types[k], &ni2, &na2, &nd2, &comb2);
		if (comb2 != MPI_COMBINER_NAMED)
			MPI_Type_free(&types[k]);
	}
	free(ints);
	free(addrs);
	free(types);
}

static void flat_subarray(struct flat *f, MPI_Datatype old, MPI_Aint base, const int *ints, int d, int *idx)
{
	int nd = ints[0], order = ints[1 + 3 * nd];
	int dim = order == MPI_ORDER_C ? d : nd - 1 - d;

	if (d == nd) {
		MPI_Aint off = 0, mult = 1;

		for (int i = 0; i < nd; i++) {
			int k = order == MPI_ORDER_C ? nd - 1 - i : i;

			off += (ints[1 + 2 * nd + k] + idx[k]) * mult;
			mult *= ints[1 + k];
		}
		flatten(f, old, base + off * ext_of(old));
		return;
	}
	for (idx[dim] = 0; idx[dim] < ints[1 + nd + dim]; idx[dim]++)
		flat_subarray(f, old, base, ints, d + 1, idx);
}

static uint64_t rng = 88172645463325252ULL;

static int rnd(int n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (int)(rng % (uint64_t)n);
}

static int rnd_range(int lo, int hi)
{
	return lo + rnd(hi - lo + 1);
}

/* A count: now and then zero, mostly not. */
static int rnd_count(int hi)
{
	return rnd(6) ? rnd_range(1, hi) : 0;
}

/* Every type made, to free at the end (the test frees them in any order). */
static MPI_Datatype made[4096];
static int nmade;

static MPI_Datatype keep(MPI_Datatype t)
{
	assert_true(nmade < 4096);
	made[nmade++] = t;
	return t;
}

static MPI_Datatype gen(int depth)
{
	static const MPI_Datatype basics[] = { MPI_INT, MPI_CHAR, MPI_DOUBLE, MPI_SHORT, MPI_DOUBLE_INT,
					       MPI_SHORT_INT, MPI_FLOAT, MPI_LONG_DOUBLE };
	MPI_Datatype old, t = MPI_DATATYPE_NULL;
	int n = rnd_count(3), bl[4], d[4], err = MPI_SUCCESS;
	MPI_Aint ad[4];

	if (depth == 0 || rnd(5) == 0)
		return basics[rnd(sizeof basics / sizeof basics[0])];
	old = gen(depth - 1);
	for (int k = 0; k < 4; k++) {
		bl[k] = rnd_count(3);
		d[k] = rnd_range(-6, 6);
		ad[k] = rnd_range(-48, 48);
	}
	switch (rnd(11)) {
	case 0:
		err = MPI_Type_contiguous(rnd_count(3), old, &t);
		break;
	case 1:
		err = MPI_Type_vector(n, bl[0], d[0], old, &t);
		break;
	case 2:
		err = MPI_Type_create_hvector(n, bl[0], ad[0], old, &t);
		break;
	case 3:
		err = MPI_Type_indexed(n, bl, d, old, &t);
		break;
	case 4:
		err = MPI_Type_create_hindexed(n, bl, ad, old, &t);
		break;
	case 5:
		err = MPI_Type_create_indexed_block(n, bl[0], d, old, &t);
		break;
	case 6:
		err = MPI_Type_create_hindexed_block(n, bl[0], ad, old, &t);
		break;
	case 7: {
		MPI_Datatype types[4] = { old, gen(depth - 1), gen(depth - 1), rnd(4) ? gen(depth - 1) : MPI_UB };

		err = MPI_Type_create_struct(n + 1, bl, ad, types, &t);
		break;
	}
	case 8:
		err = MPI_Type_create_resized(old, rnd_range(-16, 16), rnd_range(-8, 64), &t);
		break;
	case 9:
		err = MPI_Type_dup(old, &t);
		break;
	default: {
		int nd = rnd_range(1, 3), sizes[3], sub[3], starts[3];
		int order = rnd(2) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;

		for (int i = 0; i < nd; i++) {
			sizes[i] = rnd_range(1, 4);
			sub[i] = rnd(6) ? rnd_range(1, sizes[i]) : 0;
			starts[i] = rnd_range(0, sizes[i] - sub[i]);
		}
		err = MPI_Type_create_subarray(nd, sizes, sub, starts, order, old, &t);
	}
	}
	assert_int_equal(err, MPI_SUCCESS);
	return keep(t);
}

/* Pack, unpack (whole and cut), count and ask contiguity of count elements of t, against the reference. */
static void check_random(MPI_Datatype t, int count)
{
	struct flat f = { 0 };
	MPI_Aint lo = 0, hi = 0, ext = ext_of(t), tlb, text;
	MPI_Count size;
	unsigned char *mem, *base, *pk, *ref, *dst, *want;
	size_t total = 0;
	int pos = 0, contig = 1;
	const void *start;

	for (int i = 0; i < count; i++)
		flatten(&f, t, i * ext);
	MPI_Type_size_x(t, &size);
	for (size_t k = 0; k < f.n; k++) {
		if (!k || f.v[k].disp < lo)
			lo = f.v[k].disp;
		if (!k || f.v[k].disp + f.v[k].size > hi)
			hi = f.v[k].disp + f.v[k].size;
		if (k && f.v[k].disp != f.v[k - 1].disp + f.v[k - 1].size)
			contig = 0;
		total += f.v[k].size;
	}
	assert_int_equal(total, (size_t)size * count);
	if (count == 1) {
		MPI_Type_get_true_extent(t, &tlb, &text);
		assert_int_equal(tlb, f.n ? lo : 0);
		assert_int_equal(text, f.n ? hi - lo : 0);
	}
	mem = malloc(hi - lo + 1);
	dst = malloc(hi - lo + 1);
	want = malloc(hi - lo + 1);
	pk = malloc(total + 1);
	ref = malloc(total + 1);
	base = mem - lo;
	for (MPI_Aint i = 0; i < hi - lo; i++)
		mem[i] = (unsigned char)(i * 7 + 3);
	for (size_t k = 0, o = 0; k < f.n; o += f.v[k].size, k++)
		memcpy(ref + o, base + f.v[k].disp, f.v[k].size);

	MPI_Type_commit(&t);
	assert_int_equal(MPI_Pack(base, count, t, pk, (int)total, &pos, MPI_COMM_WORLD), MPI_SUCCESS);
	assert_int_equal(pos, total);
	assert_memory_equal(pk, ref, total);
	assert_int_equal(mpii_type_contig(base, count, t, &start), contig);
	if (contig && f.n)
		assert_ptr_equal(start, base + f.v[0].disp);

	/* Unpack whole, then cut at a few places: the writes the reference makes, in its order. */
	for (int cut = 0; cut < 4; cut++) {
		size_t n = cut == 0 ? total : (size_t)rnd((int)total + 1);

		memset(dst, 0xee, hi - lo);
		memset(want, 0xee, hi - lo);
		for (size_t k = 0, o = 0; k < f.n && o < n; o += f.v[k].size, k++)
			memcpy(want - lo + f.v[k].disp, ref + o, MIN((size_t)f.v[k].size, n - o));
		mpii_unpack(ref, n, dst - lo, count, t);
		assert_memory_equal(dst, want, hi - lo);
	}

	/* Element counts at every byte count. */
	for (size_t n = 0, k = 0, o = 0; n <= total; n++) {
		MPI_Count e = mpii_type_elements(t, n);

		while (k < f.n && o + f.v[k].size <= n)
			o += f.v[k++].size;
		assert_int_equal(e, o == n ? (MPI_Count)k : -1);
	}

	/* external32 gets back what it was given. */
	{
		MPI_Aint xs, xpos = 0;
		unsigned char *x;

		MPI_Pack_external_size("external32", count, t, &xs);
		x = malloc(xs + 1);
		assert_int_equal(MPI_Pack_external("external32", base, count, t, x, xs, &xpos), MPI_SUCCESS);
		assert_int_equal(xpos, xs);
		/*
		 * long double (the only 16-byte element here) carries 6 bytes of
		 * padding external32 does not keep, and an integer bit binary128
		 * implies from the exponent: random bytes are not all canonical.
		 * What comes back is the stream made canonical, unpacked.
		 */
		for (size_t k = 0, o = 0; k < f.n; o += f.v[k].size, k++) {
			unsigned char *x87 = ref + o;

			if (f.v[k].size != 16)
				continue;
			memset(x87 + 10, 0, 6);
			x87[7] = (unsigned char)((x87[7] & 0x7f) | ((x87[8] | (x87[9] & 0x7f)) ? 0x80 : 0));
		}
		memset(dst, 0xee, hi - lo);
		memset(want, 0xee, hi - lo);
		mpii_unpack(ref, total, want - lo, count, t);
		xpos = 0;
		assert_int_equal(MPI_Unpack_external("external32", x, xs, &xpos, dst - lo, count, t), MPI_SUCCESS);
		assert_int_equal(xpos, xs);
		assert_memory_equal(dst, want, hi - lo);
		free(x);
	}
	free(mem);
	free(dst);
	free(want);
	free(pk);
	free(ref);
	free(f.v);
}

static void test_random(void **state)
{
	(void)state;
	for (int iter = 0; iter < 10000; iter++) {
		MPI_Datatype t;

		nmade = 0;
		t = gen(rnd_range(1, 5));
		if (nmade == 0)
			continue;
		check_random(t, rnd_range(1, 3));
		/* Free in a random order: the types made of a freed one keep it alive. */
		for (int i = nmade - 1; i > 0; i--) {
			int j = rnd(i + 1);
			MPI_Datatype x = made[i];

			made[i] = made[j];
			made[j] = x;
		}
		for (int i = 0; i < nmade; i++)
			tfree(&made[i]);
	}
}

/* struct_verydeep: a deep nesting of resized vectors in structs, made and freed. */
static void test_verydeep(void **state)
{
	MPI_Datatype t = MPI_BYTE, next;
	int b = 1, s;
	MPI_Aint d = 20;

	(void)state;
	for (int i = 0; i < 64; i++) {
		if (i % 3 == 0)
			assert_int_equal(MPI_Type_vector(1, 2, 1, t, &next), MPI_SUCCESS);
		else if (i % 3 == 1)
			assert_int_equal(MPI_Type_create_struct(1, &b, &d, &t, &next), MPI_SUCCESS);
		else
			assert_int_equal(MPI_Type_create_resized(t, 0, 40, &next), MPI_SUCCESS);
		if (t != MPI_BYTE)
			tfree(&t);
		t = next;
	}
	MPI_Type_commit(&t);
	MPI_Type_size(t, &s);
	assert_int_equal(s, 1 << 22);
	tfree(&t);
}

/* The runs a window's target type is flattened to (win.c): in packed order, touching runs joined. */
static void test_runs(void **state)
{
	MPI_Datatype v, r, ix;
	struct mpii_run *runs;
	size_t n;

	(void)state;
	/* 3 blocks of 2 ints, stride 5 ints, extent 48: the first element's last block touches the second's first. */
	assert_int_equal(MPI_Type_vector(3, 2, 5, MPI_INT, &v), MPI_SUCCESS);
	MPI_Type_commit(&v);
	assert_int_equal(mpii_type_runs(2, v, &runs, &n), 0);
	assert_int_equal(n, 5);
	assert_int_equal(runs[0].off, 0);
	assert_int_equal(runs[1].off, 20);
	assert_int_equal(runs[2].off, 40);
	assert_int_equal(runs[2].len, 16);
	assert_int_equal(runs[4].off, 88);
	assert_int_equal(runs[4].len, 8);
	free(runs);
	/* Resized to an extent of 64: 6 runs of 8 bytes, the second element's from 64. */
	assert_int_equal(MPI_Type_create_resized(v, 0, 64, &r), MPI_SUCCESS);
	MPI_Type_commit(&r);
	assert_int_equal(mpii_type_runs(2, r, &runs, &n), 0);
	assert_int_equal(n, 6);
	for (size_t i = 0; i < 6; i++) {
		assert_int_equal(runs[i].off, (MPI_Aint)((i / 3) * 64 + (i % 3) * 20));
		assert_int_equal(runs[i].len, 8);
	}
	free(runs);
	/* Blocks out of address order stay in the packed stream's order; a negative displacement is below. */
	int bl[3] = { 1, 2, 1 }, dp[3] = { 4, -2, 0 };
	assert_int_equal(MPI_Type_indexed(3, bl, dp, MPI_INT, &ix), MPI_SUCCESS);
	MPI_Type_commit(&ix);
	assert_int_equal(mpii_type_runs(1, ix, &runs, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(runs[0].off, 16);
	assert_int_equal(runs[0].len, 4);
	assert_int_equal(runs[1].off, -8);
	assert_int_equal(runs[1].len, 12);	/* ints -2, -1 and 0 touch */
	free(runs);
	assert_int_equal(mpii_type_runs(0, ix, &runs, &n), 0);
	assert_int_equal(n, 0);
	tfree(&v);
	tfree(&r);
	tfree(&ix);
}

UNIT_MAIN("tests", setup, NULL,
	  cmocka_unit_test(test_runs),
	  cmocka_unit_test(test_predefined),
	  cmocka_unit_test(test_struct_padding),
	  cmocka_unit_test(test_lbub),
	  cmocka_unit_test(test_markers),
	  cmocka_unit_test(test_zero_blocks),
	  cmocka_unit_test(test_typelb),
	  cmocka_unit_test(test_vector_pack),
	  cmocka_unit_test(test_contig),
	  cmocka_unit_test(test_struct_pack),
	  cmocka_unit_test(test_indexed_of_indexed),
	  cmocka_unit_test(test_vecblklen),
	  cmocka_unit_test(test_partial_unpack),
	  cmocka_unit_test(test_subarray),
	  cmocka_unit_test(test_darray),
	  cmocka_unit_test(test_contents),
	  cmocka_unit_test(test_refs),
	  cmocka_unit_test(test_elements),
	  cmocka_unit_test(test_large_count),
	  cmocka_unit_test(test_external32),
	  cmocka_unit_test(test_errors),
	  cmocka_unit_test(test_random),
	  cmocka_unit_test(test_verydeep))
