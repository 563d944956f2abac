/*
 * Host unit tests of MPI's reduction operations (lib/mpi/op.c): which
 * types each predefined operation takes (MPI-3.1 §5.9.2 and the extra
 * ones MPICH's tests expect), its results on each kind of type, MINLOC
 * and MAXLOC on every pair type (ties keep the lower index), derived
 * types both contiguous and with holes, users' operations and their
 * lifetime, MPI_Reduce_local's argument checks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tests/lib/mpi/host_mpi.h"

static int setup(void **state)
{
	(void)state;
	static int done;
	if (!done)
		assert_int_equal(mpii_op_init(), MPI_SUCCESS);
	done = 1;
	host_errs = 0;
	return 0;
}

/* --- which types -------------------------------------------------------------------------------- */

static void test_type_table(void **state)
{
	(void)state;
	static const MPI_Datatype ints[] = { MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_SHORT,
					     MPI_UNSIGNED_SHORT, MPI_INT, MPI_UNSIGNED, MPI_LONG,
					     MPI_UNSIGNED_LONG, MPI_LONG_LONG, MPI_UNSIGNED_LONG_LONG,
					     MPI_INT8_T, MPI_INT16_T, MPI_INT32_T, MPI_INT64_T, MPI_UINT8_T,
					     MPI_UINT16_T, MPI_UINT32_T, MPI_UINT64_T, MPI_AINT, MPI_OFFSET,
					     MPI_COUNT, MPI_INTEGER, MPI_INTEGER1, MPI_INTEGER2, MPI_INTEGER4,
					     MPI_INTEGER8, MPI_CHARACTER };
	static const MPI_Datatype floats[] = { MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE, MPI_REAL,
					       MPI_DOUBLE_PRECISION, MPI_REAL4, MPI_REAL8 };
	static const MPI_Datatype complexes[] = { MPI_C_COMPLEX, MPI_C_DOUBLE_COMPLEX, MPI_C_LONG_DOUBLE_COMPLEX,
						  MPI_COMPLEX, MPI_DOUBLE_COMPLEX, MPI_COMPLEX8, MPI_COMPLEX16,
						  MPI_CXX_FLOAT_COMPLEX, MPI_CXX_DOUBLE_COMPLEX,
						  MPI_CXX_LONG_DOUBLE_COMPLEX };
	static const MPI_Datatype logicals[] = { MPI_C_BOOL, MPI_CXX_BOOL, MPI_LOGICAL };
	static const MPI_Datatype pairs[] = { MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT, MPI_SHORT_INT, MPI_2INT,
					      MPI_LONG_DOUBLE_INT, MPI_2INTEGER, MPI_2REAL, MPI_2DOUBLE_PRECISION };
	static const MPI_Datatype none[] = { MPI_WCHAR, MPI_PACKED, MPI_LB, MPI_UB };
	/* Rows: MAX MIN SUM PROD LAND BAND LOR BOR LXOR BXOR MINLOC MAXLOC, as ops 1..12. */
	static const char *want_int = "111111111100", *want_float = "111110101000", *want_cplx = "001100000000",
			  *want_log = "000010101000", *want_pair = "000000000011", *want_byte = "000001010100",
			  *want_none = "000000000000";
	struct {
		const MPI_Datatype *t;
		size_t n;
		const char *want;
	} groups[] = {
		{ ints, sizeof ints / sizeof *ints, want_int },
		{ floats, sizeof floats / sizeof *floats, want_float },
		{ complexes, sizeof complexes / sizeof *complexes, want_cplx },
		{ logicals, sizeof logicals / sizeof *logicals, want_log },
		{ pairs, sizeof pairs / sizeof *pairs, want_pair },
		{ (const MPI_Datatype[]){ MPI_BYTE }, 1, want_byte },
		{ none, sizeof none / sizeof *none, want_none },
	};

	for (size_t g = 0; g < sizeof groups / sizeof *groups; g++)
		for (size_t i = 0; i < groups[g].n; i++)
			for (int op = 1; op <= 12; op++) {
				int ok = mpii_op_type_ok(NOW_MPI_H(NOW_MPI_KOP, op), groups[g].t[i]);
				if (ok != (groups[g].want[op - 1] == '1'))
					fail_msg("op %d on type index %u: %d", op, MPII_INDEX(groups[g].t[i]), ok);
			}
	/* REPLACE and NO_OP take anything (accumulate). */
	assert_true(mpii_op_type_ok(MPI_REPLACE, MPI_PACKED));
	assert_true(mpii_op_type_ok(MPI_NO_OP, MPI_DOUBLE_INT));
	assert_false(mpii_op_type_ok(MPI_OP_NULL, MPI_INT));
	/* An invalid op fails, and the apply says so. */
	int a = 1, b = 2;
	assert_int_equal(mpii_op_apply(MPI_MAX, &a, &b, 1, MPI_BYTE), MPI_ERR_OP);
	assert_int_equal(mpii_op_apply(MPI_OP_NULL, &a, &b, 1, MPI_INT), MPI_ERR_OP);
}

static void test_commutative(void **state)
{
	(void)state;
	int flag = -1;

	for (int op = 1; op <= 12; op++) {
		assert_int_equal(MPI_Op_commutative(NOW_MPI_H(NOW_MPI_KOP, op), &flag), MPI_SUCCESS);
		assert_int_equal(flag, 1);
	}
	assert_int_equal(MPI_Op_commutative(MPI_OP_NULL, &flag), MPI_ERR_OP);
	assert_int_equal(MPI_Op_commutative(MPI_SUM, NULL), MPI_ERR_ARG);
}

/* --- results ----------------------------------------------------------------------------------- */

static void test_integers(void **state)
{
	(void)state;
	int a[4] = { 3, -7, 0, 5 }, b[4];
	static const struct {
		MPI_Op op;
		int want[4];
	} cases[] = {
		{ MPI_MAX, { 3, 2, 2, 5 } },	 { MPI_MIN, { 2, -7, 0, 2 } }, { MPI_SUM, { 5, -5, 2, 7 } },
		{ MPI_PROD, { 6, -14, 0, 10 } }, { MPI_LAND, { 1, 1, 0, 1 } }, { MPI_LOR, { 1, 1, 1, 1 } },
		{ MPI_LXOR, { 0, 0, 1, 0 } },	 { MPI_BAND, { 2, 0, 0, 0 } }, { MPI_BOR, { 3, -5, 2, 7 } },
		{ MPI_BXOR, { 1, -5, 2, 7 } },	 { MPI_REPLACE, { 3, -7, 0, 5 } }, { MPI_NO_OP, { 2, 2, 2, 2 } },
	};

	for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
		for (int i = 0; i < 4; i++)
			b[i] = 2;
		assert_int_equal(mpii_op_apply(cases[k].op, a, b, 4, MPI_INT), MPI_SUCCESS);
		assert_memory_equal(b, cases[k].want, sizeof b);
	}
	/* Signed sums wrap (MPICH's behaviour), with no undefined overflow. */
	int64_t x = INT64_MAX, y = 1;
	assert_int_equal(mpii_op_apply(MPI_SUM, &x, &y, 1, MPI_INT64_T), MPI_SUCCESS);
	assert_true(y == INT64_MIN);
	signed char c = 100, d = 100;
	assert_int_equal(mpii_op_apply(MPI_SUM, &c, &d, 1, MPI_SIGNED_CHAR), MPI_SUCCESS);
	assert_int_equal(d, (signed char)200);
	unsigned char u = 0xf0, v = 0x3c;
	assert_int_equal(mpii_op_apply(MPI_BXOR, &u, &v, 1, MPI_BYTE), MPI_SUCCESS);
	assert_int_equal(v, 0xcc);
	/* MPI_CHAR as an integer (MPICH's opsum, opmax). */
	char e = -3, f = 4;
	assert_int_equal(mpii_op_apply(MPI_MIN, &e, &f, 1, MPI_CHAR), MPI_SUCCESS);
	assert_int_equal(f, -3);
	unsigned long long g = 3, h = ~0ull;
	assert_int_equal(mpii_op_apply(MPI_MAX, &g, &h, 1, MPI_UNSIGNED_LONG_LONG), MPI_SUCCESS);
	assert_true(h == ~0ull);
}

static void test_floats(void **state)
{
	(void)state;
	double a[3] = { 1.5, 0, -2 }, b[3] = { 2, 3, 0 };
	assert_int_equal(mpii_op_apply(MPI_PROD, a, b, 3, MPI_DOUBLE), MPI_SUCCESS);
	assert_true(b[0] == 3 && b[1] == 0 && b[2] == 0);
	float fa[3] = { 1, 0, 2 }, fb[3] = { 1, 1, 0 };
	assert_int_equal(mpii_op_apply(MPI_LXOR, fa, fb, 3, MPI_FLOAT), MPI_SUCCESS);
	assert_true(fb[0] == 0 && fb[1] == 1 && fb[2] == 1);
	long double la[2] = { 1e300L, -1 }, lb[2] = { 1e300L, 4 };
	assert_int_equal(mpii_op_apply(MPI_SUM, la, lb, 2, MPI_LONG_DOUBLE), MPI_SUCCESS);
	assert_true(lb[0] == 2e300L && lb[1] == 3);	/* beyond double's range: x87 long double */
	assert_int_equal(mpii_op_apply(MPI_MAX, la, lb, 2, MPI_LONG_DOUBLE), MPI_SUCCESS);
	assert_true(lb[0] == 2e300L && lb[1] == 3);
	double r[2] = { 4, 5 }, s[2] = { 1, 9 };
	assert_int_equal(mpii_op_apply(MPI_MIN, r, s, 2, MPI_REAL8), MPI_SUCCESS);
	assert_true(s[0] == 1 && s[1] == 5);
}

static void test_complex(void **state)
{
	(void)state;
	/* (1 + 2i)(3 - i) = 5 + 5i */
	double a[2] = { 1, 2 }, b[2] = { 3, -1 };
	assert_int_equal(mpii_op_apply(MPI_PROD, a, b, 1, MPI_C_DOUBLE_COMPLEX), MPI_SUCCESS);
	assert_true(b[0] == 5 && b[1] == 5);
	float fa[4] = { 1, 1, 0, 1 }, fb[4] = { 1, -1, 0, 1 };
	assert_int_equal(mpii_op_apply(MPI_PROD, fa, fb, 2, MPI_COMPLEX), MPI_SUCCESS);
	assert_true(fb[0] == 2 && fb[1] == 0 && fb[2] == -1 && fb[3] == 0);
	long double la[2] = { 1, 2 }, lb[2] = { 10, 20 };
	assert_int_equal(mpii_op_apply(MPI_SUM, la, lb, 1, MPI_C_LONG_DOUBLE_COMPLEX), MPI_SUCCESS);
	assert_true(lb[0] == 11 && lb[1] == 22);
	double da[2] = { 1, -1 }, db[2] = { 0, 1 };
	assert_int_equal(mpii_op_apply(MPI_SUM, da, db, 1, MPI_DOUBLE_COMPLEX), MPI_SUCCESS);
	assert_true(db[0] == 1 && db[1] == 0);
}

static void test_logical(void **state)
{
	(void)state;
	_Bool a[4] = { 0, 0, 1, 1 }, b[4] = { 0, 1, 0, 1 };
	_Bool land[4] = { 0, 0, 0, 1 }, lor[4] = { 0, 1, 1, 1 }, lxor[4] = { 0, 1, 1, 0 };
	_Bool t[4];

	memcpy(t, b, sizeof t);
	assert_int_equal(mpii_op_apply(MPI_LAND, a, t, 4, MPI_C_BOOL), MPI_SUCCESS);
	assert_memory_equal(t, land, sizeof t);
	memcpy(t, b, sizeof t);
	assert_int_equal(mpii_op_apply(MPI_LOR, a, t, 4, MPI_C_BOOL), MPI_SUCCESS);
	assert_memory_equal(t, lor, sizeof t);
	memcpy(t, b, sizeof t);
	assert_int_equal(mpii_op_apply(MPI_LXOR, a, t, 4, MPI_CXX_BOOL), MPI_SUCCESS);
	assert_memory_equal(t, lxor, sizeof t);
	int fa[2] = { 7, 0 }, fb[2] = { 1, 5 };
	assert_int_equal(mpii_op_apply(MPI_LAND, fa, fb, 2, MPI_LOGICAL), MPI_SUCCESS);
	assert_true(fb[0] == 1 && fb[1] == 0);
	assert_int_equal(mpii_op_apply(MPI_SUM, fa, fb, 2, MPI_LOGICAL), MPI_ERR_OP);
}

/* --- MINLOC and MAXLOC ------------------------------------------------------------------------- */

#define LOC_CASE(S, T, V, I)									\
	do {											\
		struct S { V v; I i; };								\
		struct S in[4] = { { 1, 5 }, { 3, 5 }, { 2, 1 }, { 2, 7 } };			\
		struct S io[4] = { { 2, 0 }, { 3, 2 }, { 2, 4 }, { 2, 3 } };			\
		struct S mn[4] = { { 1, 5 }, { 3, 2 }, { 2, 1 }, { 2, 3 } };			\
		struct S mx[4] = { { 2, 0 }, { 3, 2 }, { 2, 1 }, { 2, 3 } };			\
		struct S t[4];									\
		memcpy(t, io, sizeof t);							\
		assert_int_equal(mpii_op_apply(MPI_MINLOC, in, t, 4, T), MPI_SUCCESS);		\
		for (int k = 0; k < 4; k++)							\
			assert_true(t[k].v == mn[k].v && t[k].i == mn[k].i);			\
		memcpy(t, io, sizeof t);							\
		assert_int_equal(mpii_op_apply(MPI_MAXLOC, in, t, 4, T), MPI_SUCCESS);		\
		for (int k = 0; k < 4; k++)							\
			assert_true(t[k].v == mx[k].v && t[k].i == mx[k].i);			\
	} while (0)

static void test_loc(void **state)
{
	(void)state;
	LOC_CASE(fi, MPI_FLOAT_INT, float, int);
	LOC_CASE(di, MPI_DOUBLE_INT, double, int);
	LOC_CASE(li, MPI_LONG_INT, long, int);
	LOC_CASE(si, MPI_SHORT_INT, short, int);
	LOC_CASE(ii, MPI_2INT, int, int);
	LOC_CASE(ldi, MPI_LONG_DOUBLE_INT, long double, int);
	LOC_CASE(ii2, MPI_2INTEGER, int, int);
	LOC_CASE(ff, MPI_2REAL, float, float);
	LOC_CASE(dd, MPI_2DOUBLE_PRECISION, double, double);
}

/* --- derived types ------------------------------------------------------------------------------ */

static MPI_Datatype vec_int, contig_int, vec_pair, vec_shortint, vec_mixed;

static void test_derived(void **state)
{
	(void)state;
	/* Two elements of { int, hole, int } (extent 3 ints): the holes stay as they were. */
	int a[8] = { 1, 100, 2, 3, 100, 4, 100, 100 }, b[8] = { 10, -1, 20, 30, -1, 40, -1, -1 };
	int want[8] = { 11, -1, 22, 33, -1, 44, -1, -1 };
	assert_int_equal(mpii_op_apply(MPI_SUM, a, b, 2, vec_int), MPI_SUCCESS);
	assert_memory_equal(b, want, sizeof b);
	/* A contiguous derived type, straight on the buffers; its displacement honoured. */
	int c[7] = { 0, 1, 2, 3, 4, 5, 6 }, d[7] = { 9, 3, 3, 3, 3, 3, 3 };
	int wantd[7] = { 9, 3, 3, 3, 4, 5, 6 };
	assert_int_equal(mpii_op_apply(MPI_MAX, c, d, 2, contig_int), MPI_SUCCESS);
	assert_memory_equal(d, wantd, sizeof d);
	/* MAXLOC on a vector of padded pairs: the packed pairs have no padding. */
	struct di { double v; int i; } pa[4] = { { 5, 1 }, { 0, 0 }, { 2, 3 }, { 0, 0 } },
				       pb[4] = { { 5, 0 }, { -1, -1 }, { 7, 2 }, { -1, -1 } };
	assert_int_equal(mpii_op_apply(MPI_MAXLOC, pa, pb, 1, vec_pair), MPI_SUCCESS);
	assert_true(pb[0].v == 5 && pb[0].i == 0 && pb[2].v == 7 && pb[2].i == 2);
	assert_true(pb[1].v == -1 && pb[1].i == -1 && pb[3].v == -1 && pb[3].i == -1);
	struct si { short v; int i; } sa[2] = { { 4, 9 }, { 1, 1 } }, sb[2] = { { 4, 3 }, { 2, 0 } };
	assert_int_equal(mpii_op_apply(MPI_MINLOC, sa, sb, 1, vec_shortint), MPI_SUCCESS);
	assert_true(sb[0].v == 4 && sb[0].i == 3 && sb[1].v == 1 && sb[1].i == 1);
	/* REPLACE on a derived type writes the data, not the holes. */
	int r[8] = { 0 };
	assert_int_equal(mpii_op_apply(MPI_REPLACE, a, r, 2, vec_int), MPI_SUCCESS);
	int wantr[8] = { 1, 0, 2, 3, 0, 4, 0, 0 };
	assert_memory_equal(r, wantr, sizeof r);
	/* A type of several predefined types: REPLACE only (MPI_Accumulate's). */
	int m[8] = { 0 };
	assert_int_equal(mpii_op_apply(MPI_REPLACE, a, m, 2, vec_mixed), MPI_SUCCESS);
	assert_memory_equal(m, wantr, sizeof m);
	assert_false(mpii_op_type_ok(MPI_SUM, vec_mixed));
	assert_true(mpii_op_type_ok(MPI_REPLACE, vec_mixed));
	assert_int_equal(mpii_op_apply(MPI_SUM, a, m, 2, vec_mixed), MPI_ERR_OP);
	/* An op its basic type does not take. */
	assert_false(mpii_op_type_ok(MPI_BAND, vec_pair));
	assert_int_equal(mpii_op_apply(MPI_BAND, pa, pb, 1, vec_pair), MPI_ERR_OP);
}

/* --- users' operations --------------------------------------------------------------------------- */

static int calls, last_len;
static MPI_Datatype last_dt;

/* inout = in - inout: not commutative, so the order of the arguments shows. */
static void minus(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	calls++;
	last_len = *len;
	last_dt = *dt;
	for (int i = 0; i < *len; i++)
		((int *)inout)[i] = ((int *)in)[i] - ((int *)inout)[i];
}

static void test_user(void **state)
{
	(void)state;
	MPI_Op op;
	int flag, a[3] = { 10, 20, 30 }, b[3] = { 1, 2, 3 };

	assert_int_equal(MPI_Op_create(minus, 0, &op), MPI_SUCCESS);
	assert_true(mpii_op_valid(op));
	assert_int_equal(MPI_Op_commutative(op, &flag), MPI_SUCCESS);
	assert_int_equal(flag, 0);
	assert_true(mpii_op_type_ok(op, MPI_BYTE));
	calls = 0;
	assert_int_equal(mpii_op_apply(op, a, b, 3, MPI_INT), MPI_SUCCESS);
	assert_int_equal(calls, 1);
	assert_int_equal(last_len, 3);
	assert_int_equal(last_dt, MPI_INT);
	assert_true(b[0] == 9 && b[1] == 18 && b[2] == 27);
	/* The datatype as given, derived ones too. */
	assert_int_equal(mpii_op_apply(op, a, b, 1, contig_int), MPI_SUCCESS);
	assert_int_equal(last_dt, contig_int);
	assert_int_equal(last_len, 1);
	/* Nothing to do: no call. */
	assert_int_equal(mpii_op_apply(op, a, b, 0, MPI_INT), MPI_SUCCESS);
	assert_int_equal(calls, 2);

	/* A pending reduction keeps a freed op working until it lets go. */
	MPI_Op keep = op;
	mpii_op_ref(op);
	assert_int_equal(MPI_Op_free(&op), MPI_SUCCESS);
	assert_int_equal(op, MPI_OP_NULL);
	assert_false(mpii_op_valid(keep));
	assert_int_equal(mpii_op_apply(keep, a, b, 3, MPI_INT), MPI_SUCCESS);
	assert_int_equal(calls, 3);
	mpii_op_unref(keep);
	assert_null(mpii_obj_get(NOW_MPI_KOP, keep));
	assert_int_equal(mpii_op_apply(keep, a, b, 3, MPI_INT), MPI_ERR_OP);

	MPI_Op c;
	assert_int_equal(MPI_Op_create(minus, 1, &c), MPI_SUCCESS);
	assert_int_equal(MPI_Op_commutative(c, &flag), MPI_SUCCESS);
	assert_int_equal(flag, 1);
	assert_int_equal(MPI_Op_free(&c), MPI_SUCCESS);
	assert_int_equal(MPI_Op_free(&c), MPI_ERR_OP);
}

static void test_op_errors(void **state)
{
	(void)state;
	MPI_Op op = MPI_SUM;

	assert_int_equal(MPI_Op_free(&op), MPI_ERR_OP);
	assert_int_equal(op, MPI_SUM);
	assert_int_equal(MPI_Op_free(NULL), MPI_ERR_ARG);
	assert_int_equal(MPI_Op_create(NULL, 1, &op), MPI_ERR_ARG);
	assert_int_equal(MPI_Op_create(minus, 1, NULL), MPI_ERR_ARG);
	op = NOW_MPI_H(NOW_MPI_KOP, 4000);
	assert_int_equal(MPI_Op_free(&op), MPI_ERR_OP);
	op = MPI_INT;	/* a handle of another kind */
	assert_int_equal(MPI_Op_free(&op), MPI_ERR_OP);
}

/* MPICH's errors/coll/reduce_local.c and coll/reduce_local.c. */
static void test_reduce_local(void **state)
{
	(void)state;
	int in[4] = { 1, 2, 3, 4 }, io[4] = { 1, 1, 1, 1 };

	assert_int_equal(MPI_Reduce_local(in, io, 4, MPI_INT, MPI_SUM), MPI_SUCCESS);
	assert_true(io[0] == 2 && io[3] == 5);
	assert_int_equal(MPI_Reduce_local(MPI_IN_PLACE, io, 4, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
	assert_int_equal(MPI_Reduce_local(in, MPI_IN_PLACE, 4, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
	assert_int_equal(MPI_Reduce_local(io, io, 4, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
	assert_int_equal(MPI_Reduce_local(in, io, -1, MPI_INT, MPI_SUM), MPI_ERR_COUNT);
	assert_int_equal(MPI_Reduce_local(in, io, 4, MPI_DATATYPE_NULL, MPI_SUM), MPI_ERR_TYPE);
	assert_int_equal(MPI_Reduce_local(in, io, 4, MPI_INT, MPI_OP_NULL), MPI_ERR_OP);
	assert_int_equal(MPI_Reduce_local(in, io, 4, MPI_BYTE, MPI_MAX), MPI_ERR_OP);
	assert_int_equal(MPI_Reduce_local(NULL, io, 4, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
	/* Nothing to reduce: nothing checked beyond the arguments that say so. */
	assert_int_equal(MPI_Reduce_local(NULL, NULL, 0, MPI_INT, MPI_SUM), MPI_SUCCESS);
	MPI_Op op;
	assert_int_equal(MPI_Op_create(minus, 0, &op), MPI_SUCCESS);
	assert_int_equal(MPI_Reduce_local(in, io, 4, MPI_INT, op), MPI_SUCCESS);
	assert_true(io[0] == -1 && io[3] == -1);
	assert_int_equal(MPI_Op_free(&op), MPI_SUCCESS);
}

/* A long vector: the kernels' loops past any unrolling, on unaligned packed data too. */
static void test_long(void **state)
{
	(void)state;
	enum { N = 100003 };
	static double a[N], b[N];
	for (int i = 0; i < N; i++) {
		a[i] = i;
		b[i] = 2 * i;
	}
	assert_int_equal(mpii_op_apply(MPI_SUM, a, b, N, MPI_DOUBLE), MPI_SUCCESS);
	for (int i = 0; i < N; i++)
		if (b[i] != 3 * i)
			fail_msg("b[%d] = %g", i, b[i]);
}

int main(void)
{
	vec_int = host_type_vector(2, 1, 2, MPI_INT, 0);
	contig_int = host_type_vector(3, 1, 1, MPI_INT, 4);
	vec_pair = host_type_vector(2, 1, 2, MPI_DOUBLE_INT, 0);
	vec_shortint = host_type_vector(2, 1, 1, MPI_SHORT_INT, 0);
	vec_mixed = host_type_vector(2, 1, 2, MPI_INT, 0);
	host_type_mixed(vec_mixed);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_type_table, setup),
		cmocka_unit_test_setup(test_commutative, setup),
		cmocka_unit_test_setup(test_integers, setup),
		cmocka_unit_test_setup(test_floats, setup),
		cmocka_unit_test_setup(test_complex, setup),
		cmocka_unit_test_setup(test_logical, setup),
		cmocka_unit_test_setup(test_loc, setup),
		cmocka_unit_test_setup(test_derived, setup),
		cmocka_unit_test_setup(test_user, setup),
		cmocka_unit_test_setup(test_op_errors, setup),
		cmocka_unit_test_setup(test_reduce_local, setup),
		cmocka_unit_test_setup(test_long, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
