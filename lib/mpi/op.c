/*
 * Reduction operations (MPI-3.1 §5.9): the predefined operations on every
 * type they are defined on, users' operations, MPI_Reduce_local.
 *
 * The types an operation takes are MPICH's (its test suite checks them):
 * MPI-3.1 §5.9.2's groups, plus MPI_CHAR and MPI_CHARACTER as integers,
 * and the floating point types for the logical operations.  MPI_REPLACE
 * and MPI_NO_OP take any type (accumulate, §11.3.4).
 *
 * A predefined operation on a derived type made of one predefined type
 * works element by element on that type: in place when both buffers are
 * one contiguous run, else on packed copies.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/mpi/mpiimpl.h"

struct mpi_op {
	int refs;			/* the handle, plus pending operations */
	int freed;			/* MPI_Op_free called */
	int commute;
	MPI_User_function *fn;		/* NULL: predefined */
};

static struct mpi_op predef[NOW_MPI_NPREDEF_OPS];

/* What an element is: the kernels below, one per kind. */
enum kind {
	K_NONE,
	K_I8, K_U8, K_I16, K_U16, K_I32, K_U32, K_I64, K_U64,
	K_F32, K_F64, K_F80,
	K_C32, K_C64, K_C80,		/* complex: a pair of reals */
	K_BOOL,				/* C _Bool, C++ bool: one byte */
	K_LOGICAL,			/* Fortran LOGICAL: an int */
	K_BYTE,
	/* MINLOC/MAXLOC pairs: a value, then its index */
	K_FLOAT_INT, K_DOUBLE_INT, K_LONG_INT, K_SHORT_INT, K_2INT, K_LDOUBLE_INT,
	K_2FLOAT, K_2DOUBLE,		/* Fortran's MPI_2REAL, MPI_2DOUBLE_PRECISION */
};

/* Which operations a kind takes: classes of kinds. */
enum {
	C_INT = 1 << 0,
	C_FLOAT = 1 << 1,
	C_COMPLEX = 1 << 2,
	C_LOGICAL = 1 << 3,
	C_BYTE = 1 << 4,
	C_PAIR = 1 << 5,
};

#define TYPE_INDEX(dt) MPII_INDEX(dt)

static const unsigned char type_kind[NOW_MPI_NPREDEF_TYPES] = {
	[TYPE_INDEX(MPI_CHAR)] = K_I8,
	[TYPE_INDEX(MPI_SIGNED_CHAR)] = K_I8,
	[TYPE_INDEX(MPI_UNSIGNED_CHAR)] = K_U8,
	[TYPE_INDEX(MPI_BYTE)] = K_BYTE,
	[TYPE_INDEX(MPI_SHORT)] = K_I16,
	[TYPE_INDEX(MPI_UNSIGNED_SHORT)] = K_U16,
	[TYPE_INDEX(MPI_INT)] = K_I32,
	[TYPE_INDEX(MPI_UNSIGNED)] = K_U32,
	[TYPE_INDEX(MPI_LONG)] = K_I64,
	[TYPE_INDEX(MPI_UNSIGNED_LONG)] = K_U64,
	[TYPE_INDEX(MPI_LONG_LONG_INT)] = K_I64,
	[TYPE_INDEX(MPI_UNSIGNED_LONG_LONG)] = K_U64,
	[TYPE_INDEX(MPI_FLOAT)] = K_F32,
	[TYPE_INDEX(MPI_DOUBLE)] = K_F64,
	[TYPE_INDEX(MPI_LONG_DOUBLE)] = K_F80,
	[TYPE_INDEX(MPI_C_BOOL)] = K_BOOL,
	[TYPE_INDEX(MPI_INT8_T)] = K_I8,
	[TYPE_INDEX(MPI_INT16_T)] = K_I16,
	[TYPE_INDEX(MPI_INT32_T)] = K_I32,
	[TYPE_INDEX(MPI_INT64_T)] = K_I64,
	[TYPE_INDEX(MPI_UINT8_T)] = K_U8,
	[TYPE_INDEX(MPI_UINT16_T)] = K_U16,
	[TYPE_INDEX(MPI_UINT32_T)] = K_U32,
	[TYPE_INDEX(MPI_UINT64_T)] = K_U64,
	[TYPE_INDEX(MPI_AINT)] = K_I64,
	[TYPE_INDEX(MPI_OFFSET)] = K_I64,
	[TYPE_INDEX(MPI_COUNT)] = K_I64,
	[TYPE_INDEX(MPI_C_COMPLEX)] = K_C32,
	[TYPE_INDEX(MPI_C_DOUBLE_COMPLEX)] = K_C64,
	[TYPE_INDEX(MPI_C_LONG_DOUBLE_COMPLEX)] = K_C80,
	[TYPE_INDEX(MPI_FLOAT_INT)] = K_FLOAT_INT,
	[TYPE_INDEX(MPI_DOUBLE_INT)] = K_DOUBLE_INT,
	[TYPE_INDEX(MPI_LONG_INT)] = K_LONG_INT,
	[TYPE_INDEX(MPI_SHORT_INT)] = K_SHORT_INT,
	[TYPE_INDEX(MPI_2INT)] = K_2INT,
	[TYPE_INDEX(MPI_LONG_DOUBLE_INT)] = K_LDOUBLE_INT,
	[TYPE_INDEX(MPI_CHARACTER)] = K_I8,
	[TYPE_INDEX(MPI_LOGICAL)] = K_LOGICAL,
	[TYPE_INDEX(MPI_INTEGER)] = K_I32,
	[TYPE_INDEX(MPI_REAL)] = K_F32,
	[TYPE_INDEX(MPI_DOUBLE_PRECISION)] = K_F64,
	[TYPE_INDEX(MPI_COMPLEX)] = K_C32,
	[TYPE_INDEX(MPI_DOUBLE_COMPLEX)] = K_C64,
	[TYPE_INDEX(MPI_2INTEGER)] = K_2INT,
	[TYPE_INDEX(MPI_2REAL)] = K_2FLOAT,
	[TYPE_INDEX(MPI_2DOUBLE_PRECISION)] = K_2DOUBLE,
	[TYPE_INDEX(MPI_INTEGER1)] = K_I8,
	[TYPE_INDEX(MPI_INTEGER2)] = K_I16,
	[TYPE_INDEX(MPI_INTEGER4)] = K_I32,
	[TYPE_INDEX(MPI_INTEGER8)] = K_I64,
	[TYPE_INDEX(MPI_REAL4)] = K_F32,
	[TYPE_INDEX(MPI_REAL8)] = K_F64,
	[TYPE_INDEX(MPI_COMPLEX8)] = K_C32,
	[TYPE_INDEX(MPI_COMPLEX16)] = K_C64,
	[TYPE_INDEX(MPI_CXX_BOOL)] = K_BOOL,
	[TYPE_INDEX(MPI_CXX_FLOAT_COMPLEX)] = K_C32,
	[TYPE_INDEX(MPI_CXX_DOUBLE_COMPLEX)] = K_C64,
	[TYPE_INDEX(MPI_CXX_LONG_DOUBLE_COMPLEX)] = K_C80,
};

static unsigned kind_class(enum kind k)
{
	if (k >= K_I8 && k <= K_U64)
		return C_INT;
	if (k >= K_F32 && k <= K_F80)
		return C_FLOAT;
	if (k >= K_C32 && k <= K_C80)
		return C_COMPLEX;
	if (k == K_BOOL || k == K_LOGICAL)
		return C_LOGICAL;
	if (k == K_BYTE)
		return C_BYTE;
	if (k >= K_FLOAT_INT)
		return C_PAIR;
	return 0;
}

/* The classes each predefined operation takes (MPICH's groups, see the top). */
static const unsigned op_classes[NOW_MPI_NPREDEF_OPS] = {
	[MPII_INDEX(MPI_MAX)] = C_INT | C_FLOAT,
	[MPII_INDEX(MPI_MIN)] = C_INT | C_FLOAT,
	[MPII_INDEX(MPI_SUM)] = C_INT | C_FLOAT | C_COMPLEX,
	[MPII_INDEX(MPI_PROD)] = C_INT | C_FLOAT | C_COMPLEX,
	[MPII_INDEX(MPI_LAND)] = C_INT | C_FLOAT | C_LOGICAL,
	[MPII_INDEX(MPI_LOR)] = C_INT | C_FLOAT | C_LOGICAL,
	[MPII_INDEX(MPI_LXOR)] = C_INT | C_FLOAT | C_LOGICAL,
	[MPII_INDEX(MPI_BAND)] = C_INT | C_BYTE,
	[MPII_INDEX(MPI_BOR)] = C_INT | C_BYTE,
	[MPII_INDEX(MPI_BXOR)] = C_INT | C_BYTE,
	[MPII_INDEX(MPI_MINLOC)] = C_PAIR,
	[MPII_INDEX(MPI_MAXLOC)] = C_PAIR,
};

static int is_predef_type(MPI_Datatype dt)
{
	return MPII_KIND(dt) == NOW_MPI_KTYPE && TYPE_INDEX(dt) > 0 && TYPE_INDEX(dt) < NOW_MPI_NPREDEF_TYPES;
}

static int is_predef_op(MPI_Op op)
{
	return MPII_KIND(op) == NOW_MPI_KOP && MPII_INDEX(op) > 0 && MPII_INDEX(op) < NOW_MPI_NPREDEF_OPS;
}

/* --- kernels: b[i] = a[i] op b[i] over n elements --------------------------------------- */

/*
 * Signed sums and products wrap as MPICH's do, computed on the unsigned
 * type so that overflow is defined; the types narrower than int are
 * promoted and wrap on the store.
 */
#define INT_KERNEL(name, T, UT)								\
	static void name(int op, const void *va, void *vb, size_t n)			\
	{										\
		const T *a = va;							\
		T *b = vb;								\
		size_t i;								\
		switch (op) {								\
		case MPII_INDEX(MPI_MAX):						\
			for (i = 0; i < n; i++)						\
				b[i] = a[i] > b[i] ? a[i] : b[i];			\
			break;								\
		case MPII_INDEX(MPI_MIN):						\
			for (i = 0; i < n; i++)						\
				b[i] = a[i] < b[i] ? a[i] : b[i];			\
			break;								\
		case MPII_INDEX(MPI_SUM):						\
			for (i = 0; i < n; i++)						\
				b[i] = (T)((UT)a[i] + (UT)b[i]);			\
			break;								\
		case MPII_INDEX(MPI_PROD):						\
			for (i = 0; i < n; i++)						\
				b[i] = (T)((UT)a[i] * (UT)b[i]);			\
			break;								\
		case MPII_INDEX(MPI_LAND):						\
			for (i = 0; i < n; i++)						\
				b[i] = a[i] && b[i];					\
			break;								\
		case MPII_INDEX(MPI_LOR):						\
			for (i = 0; i < n; i++)						\
				b[i] = a[i] || b[i];					\
			break;								\
		case MPII_INDEX(MPI_LXOR):						\
			for (i = 0; i < n; i++)						\
				b[i] = !a[i] != !b[i];					\
			break;								\
		case MPII_INDEX(MPI_BAND):						\
			for (i = 0; i < n; i++)						\
				b[i] = a[i] & b[i];					\
			break;								\
		case MPII_INDEX(MPI_BOR):						\
			for (i = 0; i < n; i++)						\
				b[i] = a[i] | b[i];					\
			break;								\
		case MPII_INDEX(MPI_BXOR):						\
			for (i = 0; i < n; i++)						\
				b[i] = a[i] ^ b[i];					\
			break;								\
		}									\
	}

INT_KERNEL(op_i8, int8_t, uint8_t)
INT_KERNEL(op_u8, uint8_t, uint8_t)
INT_KERNEL(op_i16, int16_t, uint16_t)
INT_KERNEL(op_u16, uint16_t, uint16_t)
INT_KERNEL(op_i32, int32_t, uint32_t)
INT_KERNEL(op_u32, uint32_t, uint32_t)
INT_KERNEL(op_i64, int64_t, uint64_t)
INT_KERNEL(op_u64, uint64_t, uint64_t)

/* MPI_C_BOOL and Fortran's LOGICAL: the logical operations only. */
#define LOGIC_KERNEL(name, T)								\
	static void name(int op, const void *va, void *vb, size_t n)			\
	{										\
		const T *a = va;							\
		T *b = vb;								\
		size_t i;								\
		switch (op) {								\
		case MPII_INDEX(MPI_LAND):						\
			for (i = 0; i < n; i++)						\
				b[i] = a[i] && b[i];					\
			break;								\
		case MPII_INDEX(MPI_LOR):						\
			for (i = 0; i < n; i++)						\
				b[i] = a[i] || b[i];					\
			break;								\
		case MPII_INDEX(MPI_LXOR):						\
			for (i = 0; i < n; i++)						\
				b[i] = !a[i] != !b[i];					\
			break;								\
		}									\
	}

LOGIC_KERNEL(op_bool, _Bool)
LOGIC_KERNEL(op_logical, int32_t)

#define FLOAT_KERNEL(name, T)								\
	static void name(int op, const void *va, void *vb, size_t n)			\
	{										\
		const T *a = va;							\
		T *b = vb;								\
		size_t i;								\
		switch (op) {								\
		case MPII_INDEX(MPI_MAX):						\
			for (i = 0; i < n; i++)						\
				b[i] = a[i] > b[i] ? a[i] : b[i];			\
			break;								\
		case MPII_INDEX(MPI_MIN):						\
			for (i = 0; i < n; i++)						\
				b[i] = a[i] < b[i] ? a[i] : b[i];			\
			break;								\
		case MPII_INDEX(MPI_SUM):						\
			for (i = 0; i < n; i++)						\
				b[i] = a[i] + b[i];					\
			break;								\
		case MPII_INDEX(MPI_PROD):						\
			for (i = 0; i < n; i++)						\
				b[i] = a[i] * b[i];					\
			break;								\
		case MPII_INDEX(MPI_LAND):						\
			for (i = 0; i < n; i++)						\
				b[i] = (T)(a[i] != 0 && b[i] != 0);			\
			break;								\
		case MPII_INDEX(MPI_LOR):						\
			for (i = 0; i < n; i++)						\
				b[i] = (T)(a[i] != 0 || b[i] != 0);			\
			break;								\
		case MPII_INDEX(MPI_LXOR):						\
			for (i = 0; i < n; i++)						\
				b[i] = (T)((a[i] != 0) != (b[i] != 0));			\
			break;								\
		}									\
	}

FLOAT_KERNEL(op_f32, float)
FLOAT_KERNEL(op_f64, double)
FLOAT_KERNEL(op_f80, long double)

/*
 * Complex numbers as pairs of reals (C99 §6.2.5: the layout of T[2]); the
 * product by the schoolbook formula, as MPICH computes it, without
 * libgcc's Annex G infinity recovery.
 */
#define COMPLEX_KERNEL(name, T)								\
	static void name(int op, const void *va, void *vb, size_t n)			\
	{										\
		const T *a = va;							\
		T *b = vb;								\
		size_t i;								\
		switch (op) {								\
		case MPII_INDEX(MPI_SUM):						\
			for (i = 0; i < 2 * n; i++)					\
				b[i] = a[i] + b[i];					\
			break;								\
		case MPII_INDEX(MPI_PROD):						\
			for (i = 0; i < 2 * n; i += 2) {				\
				T re = a[i] * b[i] - a[i + 1] * b[i + 1];		\
				T im = a[i] * b[i + 1] + a[i + 1] * b[i];		\
				b[i] = re;						\
				b[i + 1] = im;						\
			}								\
			break;								\
		}									\
	}

COMPLEX_KERNEL(op_c32, float)
COMPLEX_KERNEL(op_c64, double)
COMPLEX_KERNEL(op_c80, long double)

/*
 * MINLOC and MAXLOC (MPI-3.1 §5.9.4): the better value wins; equal values
 * keep the lower index.  A pair is a value of type V then an index of
 * type I at ioff, one pair every stride bytes: the C struct in a buffer
 * of the predefined type, or packed (no padding) in a derived type's
 * packed copy.  memcpy, because a packed pair's members are unaligned.
 */
#define LOC_KERNEL(name, V, I)								\
	static void name(int op, const void *va, void *vb, size_t n, size_t stride,	\
			 size_t ioff)							\
	{										\
		const char *a = va;							\
		char *b = vb;								\
		int max = op == MPII_INDEX(MPI_MAXLOC);					\
		for (size_t i = 0; i < n; i++, a += stride, b += stride) {		\
			V av, bv;							\
			I ai, bi;							\
			memcpy(&av, a, sizeof av);					\
			memcpy(&bv, b, sizeof bv);					\
			memcpy(&ai, a + ioff, sizeof ai);				\
			memcpy(&bi, b + ioff, sizeof bi);				\
			if (max ? av > bv : av < bv) {					\
				memcpy(b, &av, sizeof av);				\
				memcpy(b + ioff, &ai, sizeof ai);			\
			} else if (av == bv && ai < bi) {				\
				memcpy(b + ioff, &ai, sizeof ai);			\
			}								\
		}									\
	}

LOC_KERNEL(loc_float_int, float, int)
LOC_KERNEL(loc_double_int, double, int)
LOC_KERNEL(loc_long_int, long, int)
LOC_KERNEL(loc_short_int, short, int)
LOC_KERNEL(loc_2int, int, int)
LOC_KERNEL(loc_ldouble_int, long double, int)
LOC_KERNEL(loc_2float, float, float)
LOC_KERNEL(loc_2double, double, double)

/* The C structs of the predefined pair types (MPI-3.1 §5.9.4). */
struct float_int { float v; int i; };
struct double_int { double v; int i; };
struct long_int { long v; int i; };
struct short_int { short v; int i; };
struct ldouble_int { long double v; int i; };
struct int2 { int v; int i; };
struct float2 { float v; float i; };
struct double2 { double v; double i; };

/* Where a pair's index is: in memory (the struct), and packed (after the value). */
#define PAIR(k, S) [k] = { sizeof(S), offsetof(S, i), sizeof(((S *)0)->v) }
static const struct {
	unsigned char size, ioff, packed_ioff;
} pairs[] = {
	PAIR(K_FLOAT_INT, struct float_int),
	PAIR(K_DOUBLE_INT, struct double_int),
	PAIR(K_LONG_INT, struct long_int),
	PAIR(K_SHORT_INT, struct short_int),
	PAIR(K_2INT, struct int2),
	PAIR(K_LDOUBLE_INT, struct ldouble_int),
	PAIR(K_2FLOAT, struct float2),
	PAIR(K_2DOUBLE, struct double2),
};

/*
 * b = a op b over n elements of kind k.  A pair comes every stride bytes
 * packed (a derived type's packed copy, stride its packed size), or, with
 * stride 0, as the predefined type lays it out in memory.  The kind takes
 * the operation (checked by the caller).
 */
static void kernel(int op, enum kind k, const void *a, void *b, size_t n, size_t stride)
{
	size_t ioff = 0;

	if (kind_class(k) == C_PAIR) {
		/* A packed size that keeps the struct's padding keeps its layout. */
		ioff = stride && stride != pairs[k].size ? pairs[k].packed_ioff : pairs[k].ioff;
		stride = stride ? stride : pairs[k].size;
	}
	switch (k) {
	case K_I8: op_i8(op, a, b, n); break;
	case K_U8: case K_BYTE: op_u8(op, a, b, n); break;
	case K_I16: op_i16(op, a, b, n); break;
	case K_U16: op_u16(op, a, b, n); break;
	case K_I32: op_i32(op, a, b, n); break;
	case K_U32: op_u32(op, a, b, n); break;
	case K_I64: op_i64(op, a, b, n); break;
	case K_U64: op_u64(op, a, b, n); break;
	case K_F32: op_f32(op, a, b, n); break;
	case K_F64: op_f64(op, a, b, n); break;
	case K_F80: op_f80(op, a, b, n); break;
	case K_C32: op_c32(op, a, b, n); break;
	case K_C64: op_c64(op, a, b, n); break;
	case K_C80: op_c80(op, a, b, n); break;
	case K_BOOL: op_bool(op, a, b, n); break;
	case K_LOGICAL: op_logical(op, a, b, n); break;
	case K_FLOAT_INT: loc_float_int(op, a, b, n, stride, ioff); break;
	case K_DOUBLE_INT: loc_double_int(op, a, b, n, stride, ioff); break;
	case K_LONG_INT: loc_long_int(op, a, b, n, stride, ioff); break;
	case K_SHORT_INT: loc_short_int(op, a, b, n, stride, ioff); break;
	case K_2INT: loc_2int(op, a, b, n, stride, ioff); break;
	case K_LDOUBLE_INT: loc_ldouble_int(op, a, b, n, stride, ioff); break;
	case K_2FLOAT: loc_2float(op, a, b, n, stride, ioff); break;
	case K_2DOUBLE: loc_2double(op, a, b, n, stride, ioff); break;
	case K_NONE: break;
	}
}

/* --- the operations -------------------------------------------------------------------- */

static struct mpi_op *op_get(MPI_Op op)
{
	return mpii_obj_get(NOW_MPI_KOP, op);
}

/* The predefined type a type's elements are, or MPI_DATATYPE_NULL. */
static MPI_Datatype basic_of(MPI_Datatype dt)
{
	return is_predef_type(dt) ? dt : mpii_type_basic(dt);
}

static enum kind kind_of(MPI_Datatype basic)
{
	return is_predef_type(basic) ? (enum kind)type_kind[TYPE_INDEX(basic)] : K_NONE;
}

int mpii_op_valid(MPI_Op op)
{
	struct mpi_op *o = op_get(op);

	return o && !o->freed;
}

int mpii_op_commutative(MPI_Op op)
{
	struct mpi_op *o = op_get(op);

	return o && o->commute;
}

int mpii_op_type_ok(MPI_Op op, MPI_Datatype dt)
{
	struct mpi_op *o = op_get(op);

	if (!o)
		return 0;
	if (o->fn || op == MPI_REPLACE || op == MPI_NO_OP)
		return 1;
	return (kind_class(kind_of(basic_of(dt))) & op_classes[MPII_INDEX(op)]) != 0;
}

void mpii_op_ref(MPI_Op op)
{
	struct mpi_op *o = op_get(op);

	if (o && o->fn)
		__atomic_add_fetch(&o->refs, 1, __ATOMIC_RELAXED);
}

void mpii_op_unref(MPI_Op op)
{
	struct mpi_op *o = op_get(op);

	if (!o || !o->fn || __atomic_sub_fetch(&o->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	mpii_obj_free(NOW_MPI_KOP, op);
	free(o);
}

/*
 * A predefined op on count elements of a derived type dt made of basic
 * (MPI_REPLACE: of any types): straight on the buffers when both are one
 * run of bytes, else on packed copies (the result unpacked into inout).
 */
static int apply_derived(int opi, enum kind k, const void *in, void *inout, int count, MPI_Datatype dt,
			 MPI_Datatype basic)
{
	int replace = opi == MPII_INDEX(MPI_REPLACE);
	size_t bytes = (size_t)count * mpii_type_size(dt);
	size_t esize = replace ? 1 : mpii_type_size(basic);
	const void *a;
	void *b;

	if (esize == 0 || bytes == 0)
		return MPI_SUCCESS;
	if (mpii_type_contig(in, count, dt, &a) && mpii_type_contig(inout, count, dt, (const void **)&b)) {
		if (replace)
			memmove(b, a, bytes);
		else
			kernel(opi, k, a, b, bytes / esize, esize);
		return MPI_SUCCESS;
	}
	char *pa = malloc(bytes), *pb = replace ? NULL : malloc(bytes);
	if (!pa || (!replace && !pb)) {
		free(pa);
		free(pb);
		return MPI_ERR_NO_MEM;
	}
	mpii_pack(in, count, dt, pa);
	if (!replace) {
		mpii_pack(inout, count, dt, pb);
		kernel(opi, k, pa, pb, bytes / esize, esize);
	}
	mpii_unpack(replace ? pa : pb, bytes, inout, count, dt);
	free(pa);
	free(pb);
	return MPI_SUCCESS;
}

int mpii_op_apply(MPI_Op op, const void *in, void *inout, int count, MPI_Datatype dt)
{
	struct mpi_op *o = op_get(op);

	if (!o)
		return MPI_ERR_OP;
	if (count <= 0)
		return MPI_SUCCESS;
	if (o->fn) {
		/* The user's function takes non-const buffers and its own copies of count and type. */
		int len = count;
		MPI_Datatype t = dt;
		o->fn((void *)in, inout, &len, &t);
		return MPI_SUCCESS;
	}
	int opi = MPII_INDEX(op);
	if (opi == MPII_INDEX(MPI_NO_OP))
		return MPI_SUCCESS;
	MPI_Datatype basic = basic_of(dt);
	enum kind k = kind_of(basic);
	if (opi != MPII_INDEX(MPI_REPLACE) && !(kind_class(k) & op_classes[opi]))
		return MPI_ERR_OP;
	if (!is_predef_type(dt))
		return apply_derived(opi, k, in, inout, count, dt, basic);
	if (opi == MPII_INDEX(MPI_REPLACE)) {
		memmove(inout, in, (size_t)count * mpii_type_extent(dt));
		return MPI_SUCCESS;
	}
	kernel(opi, k, in, inout, (size_t)count, 0);
	return MPI_SUCCESS;
}

int mpii_op_init(void)
{
	for (unsigned i = 1; i < NOW_MPI_NPREDEF_OPS; i++) {
		/* REPLACE and NO_OP keep an order: the result depends on which operand comes first. */
		predef[i].commute = i != MPII_INDEX(MPI_REPLACE) && i != MPII_INDEX(MPI_NO_OP);
		predef[i].refs = 1;
		if (mpii_obj_set(NOW_MPI_KOP, i, &predef[i]) < 0)
			return MPI_ERR_NO_MEM;
	}
	return MPI_SUCCESS;
}

/* --- the calls --------------------------------------------------------------------------- */

int MPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
	if (!user_fn)
		return mpii_err(NULL, MPI_ERR_ARG, "MPI_Op_create", "user_fn is NULL");
	if (!op)
		return mpii_err(NULL, MPI_ERR_ARG, "MPI_Op_create", "op is NULL");
	struct mpi_op *o = calloc(1, sizeof *o);
	if (!o)
		return mpii_err(NULL, MPI_ERR_NO_MEM, "MPI_Op_create", "no memory for an operation");
	o->refs = 1;
	o->commute = commute != 0;
	o->fn = user_fn;
	int h = mpii_obj_new(NOW_MPI_KOP, o);
	if (h < 0) {
		free(o);
		return mpii_err(NULL, MPI_ERR_NO_MEM, "MPI_Op_create", "no memory for a handle");
	}
	*op = h;
	return MPI_SUCCESS;
}

int MPI_Op_free(MPI_Op *op)
{
	if (!op)
		return mpii_err(NULL, MPI_ERR_ARG, "MPI_Op_free", "op is NULL");
	if (is_predef_op(*op))
		return mpii_err(NULL, MPI_ERR_OP, "MPI_Op_free", "a predefined operation cannot be freed");
	if (!mpii_op_valid(*op))
		return mpii_err(NULL, MPI_ERR_OP, "MPI_Op_free", "invalid operation %#x", (unsigned)*op);
	/* Reductions still running keep the object (and its handle) until they end. */
	op_get(*op)->freed = 1;
	mpii_op_unref(*op);
	*op = MPI_OP_NULL;
	return MPI_SUCCESS;
}

int MPI_Op_commutative(MPI_Op op, int *commute)
{
	if (!mpii_op_valid(op))
		return mpii_err(NULL, MPI_ERR_OP, "MPI_Op_commutative", "invalid operation %#x", (unsigned)op);
	if (!commute)
		return mpii_err(NULL, MPI_ERR_ARG, "MPI_Op_commutative", "commute is NULL");
	*commute = mpii_op_commutative(op);
	return MPI_SUCCESS;
}

int MPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype, MPI_Op op)
{
	static const char fn[] = "MPI_Reduce_local";
	int err;

	if ((err = mpii_check_count(NULL, count, fn)) || (err = mpii_check_type(NULL, datatype, fn)) ||
	    (err = mpii_check_op(NULL, op, fn)))
		return err;
	if (!mpii_op_type_ok(op, datatype))
		return mpii_err(NULL, MPI_ERR_OP, fn, "the operation is not defined on %s", mpii_type_name(datatype));
	if (count == 0)
		return MPI_SUCCESS;
	if (inbuf == MPI_IN_PLACE || inoutbuf == MPI_IN_PLACE)
		return mpii_err(NULL, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is not allowed");
	if (inbuf == inoutbuf)
		return mpii_err(NULL, MPI_ERR_BUFFER, fn, "inbuf and inoutbuf are the same buffer");
	if ((err = mpii_check_buf(NULL, inbuf, count, datatype, fn)) ||
	    (err = mpii_check_buf(NULL, inoutbuf, count, datatype, fn)))
		return err;
	err = mpii_op_apply(op, inbuf, inoutbuf, count, datatype);
	if (err)
		return mpii_err(NULL, err, fn, "cannot apply the operation");
	return MPI_SUCCESS;
}
