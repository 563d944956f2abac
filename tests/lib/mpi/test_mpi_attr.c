/*
 * Host unit tests of lib/mpi/attr.c: keyvals and their reference counts
 * (MPI-3.1 §6.7), the copy and delete callbacks on MPI_Comm_dup,
 * MPI_Comm_free and MPI_Finalize (COMM_SELF's, last set first), failing
 * callbacks, the predefined attributes of COMM_WORLD, datatype and
 * window attributes, as MPICH's attr and init tests use them.  A world of
 * one process: duplicates agree on their context with nobody else.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tests/host/unit.h"

#include "lib/mpi/mpiimpl.h"
#include "tests/lib/mpi/host_mpi_comm.h"

static int setup(void **state)
{
	(void)state;
	if (host_mpi_init(0, 1) != MPI_SUCCESS)
		return -1;
	return MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

static int class_of(int code)
{
	int cls = -1;

	assert_int_equal(MPI_Error_class(code, &cls), MPI_SUCCESS);
	return cls;
}

/* MPICH's attr/baseattrcomm and baseattr2: pointers to ints. */
static void test_predefined(void **state)
{
	int *v, flag;

	(void)state;
	assert_int_equal(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag), MPI_SUCCESS);
	assert_true(flag);
	assert_int_equal(*v, MPII_TAG_UB);
	MPI_Attr_get(MPI_COMM_WORLD, MPI_HOST, &v, &flag);
	assert_true(flag);
	assert_int_equal(*v, MPI_PROC_NULL);
	MPI_Attr_get(MPI_COMM_WORLD, MPI_IO, &v, &flag);
	assert_true(flag);
	assert_int_equal(*v, MPI_PROC_NULL);
	MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &v, &flag);
	assert_true(flag && *v == 0);
	MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &v, &flag);
	assert_true(flag && *v == 1);
	MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &v, &flag);
	assert_true(flag && *v == 0);
	MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &v, &flag);
	assert_true(flag && *v >= MPI_ERR_LASTCODE);
	assert_int_equal(class_of(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, NULL)), MPI_ERR_KEYVAL);
	assert_int_equal(class_of(MPI_Comm_delete_attr(MPI_COMM_WORLD, MPI_HOST)), MPI_ERR_KEYVAL);
	int k = MPI_TAG_UB;
	assert_int_equal(class_of(MPI_Comm_free_keyval(&k)), MPI_ERR_KEYVAL);
	assert_int_equal(class_of(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, &v, &flag)), MPI_ERR_KEYVAL);
}

/* MPICH's attr/attrordercomm: any order of setting and deleting. */
static void test_set_get_delete(void **state)
{
	int key[3], val[3] = { 0, 1024, 2048 }, *p, flag;
	int orders[3][3] = { { 2, 1, 0 }, { 1, 2, 0 }, { 0, 1, 2 } };
	int dels[3][3] = { { 0, 1, 2 }, { 2, 1, 0 }, { 1, 2, 0 } };

	(void)state;
	for (int i = 0; i < 3; i++)
		assert_int_equal(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &key[i], NULL),
				 MPI_SUCCESS);
	for (int o = 0; o < 3; o++) {
		for (int i = 0; i < 3; i++)
			assert_int_equal(MPI_Comm_set_attr(MPI_COMM_WORLD, key[orders[o][i]], &val[orders[o][i]]),
					 MPI_SUCCESS);
		for (int i = 0; i < 3; i++) {
			assert_int_equal(MPI_Comm_get_attr(MPI_COMM_WORLD, key[i], &p, &flag), MPI_SUCCESS);
			assert_true(flag);
			assert_ptr_equal(p, &val[i]);
		}
		for (int i = 0; i < 3; i++)
			assert_int_equal(MPI_Comm_delete_attr(MPI_COMM_WORLD, key[dels[o][i]]), MPI_SUCCESS);
		for (int i = 0; i < 3; i++) {
			MPI_Comm_get_attr(MPI_COMM_WORLD, key[i], &p, &flag);
			assert_false(flag);
		}
	}
	assert_int_equal(class_of(MPI_Comm_delete_attr(MPI_COMM_WORLD, key[0])), MPI_ERR_KEYVAL);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(MPI_Comm_free_keyval(&key[i]), MPI_SUCCESS);
		assert_int_equal(key[i], MPI_KEYVAL_INVALID);
	}
}

static int copies, deletes;

static int copy_inc(MPI_Comm old, int keyval, void *extra, void *in, void *out, int *flag)
{
	(void)old, (void)keyval, (void)extra;
	copies++;
	*(void **)out = in;
	(*(int *)in)++;
	*flag = 1;
	return MPI_SUCCESS;
}

static int delete_dec(MPI_Comm comm, int keyval, void *val, void *extra)
{
	(void)comm, (void)keyval, (void)extra;
	deletes++;
	(*(int *)val)--;
	return MPI_SUCCESS;
}

/* MPICH's attr/fkeyvalcomm and attrt: a freed keyval still copies and deletes its attributes. */
static void test_dup_free(void **state)
{
	int k, k3, count = 1, *p, flag;
	MPI_Comm c, d;

	(void)state;
	MPI_Comm_dup(MPI_COMM_SELF, &c);
	MPI_Comm_create_keyval(copy_inc, delete_dec, &k, NULL);
	MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &k3, NULL);
	MPI_Comm_set_attr(c, k, &count);
	MPI_Attr_put(c, k3, NULL);
	assert_int_equal(MPI_Comm_free_keyval(&k), MPI_SUCCESS);
	assert_int_equal(MPI_Comm_dup(c, &d), MPI_SUCCESS);
	assert_int_equal(count, 2);
	MPI_Attr_get(d, k3, &p, &flag);
	assert_false(flag);
	assert_int_equal(MPI_Comm_free(&d), MPI_SUCCESS);
	assert_int_equal(count, 1);
	assert_int_equal(MPI_Comm_free(&c), MPI_SUCCESS);
	assert_int_equal(count, 0);
	MPI_Keyval_free(&k3);
	/* MPI_COMM_DUP_FN copies the value itself. */
	int v = 7;
	MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &k, NULL);
	MPI_Comm_dup(MPI_COMM_SELF, &c);
	MPI_Comm_set_attr(c, k, &v);
	MPI_Comm_dup(c, &d);
	assert_int_equal(MPI_Comm_get_attr(d, k, &p, &flag), MPI_SUCCESS);
	assert_true(flag);
	assert_ptr_equal(p, &v);
	MPI_Comm_free(&c);
	MPI_Comm_free(&d);
	MPI_Comm_free_keyval(&k);
}

static int fail_delete;

static int copy_bomb(MPI_Comm old, int keyval, void *extra, void *in, void *out, int *flag)
{
	(void)old, (void)keyval, (void)extra, (void)in, (void)out;
	*flag = 1;
	return MPI_ERR_OTHER;
}

static int delete_bomb(MPI_Comm comm, int keyval, void *val, void *extra)
{
	(void)comm, (void)keyval, (void)val, (void)extra;
	return fail_delete ? MPI_ERR_OTHER : MPI_SUCCESS;
}

/* MPICH's attr/attrerrcomm: failing callbacks fail the call, of class MPI_ERR_OTHER, and keep the attribute. */
static void test_callback_errors(void **state)
{
	MPI_Comm c, d = MPI_COMM_WORLD;
	int k, *p, flag, e;

	(void)state;
	MPI_Comm_dup(MPI_COMM_SELF, &c);
	MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
	MPI_Comm_create_keyval(copy_bomb, delete_bomb, &k, NULL);
	fail_delete = 1;
	assert_int_equal(MPI_Comm_set_attr(c, k, (void *)1), MPI_SUCCESS);
	e = MPI_Comm_set_attr(c, k, (void *)2);
	assert_int_equal(class_of(e), MPI_ERR_OTHER);
	MPI_Comm_get_attr(c, k, &p, &flag);
	assert_true(flag);
	assert_ptr_equal(p, (void *)1);
	assert_int_equal(class_of(MPI_Comm_delete_attr(c, k)), MPI_ERR_OTHER);
	MPI_Comm_get_attr(c, k, &p, &flag);
	assert_true(flag);
	e = MPI_Comm_dup(c, &d);
	assert_int_equal(class_of(e), MPI_ERR_OTHER);
	assert_int_equal(d, MPI_COMM_NULL);
	/* A failing delete keeps the communicator too. */
	assert_int_equal(class_of(MPI_Comm_free(&c)), MPI_ERR_OTHER);
	assert_true(c != MPI_COMM_NULL);
	fail_delete = 0;
	assert_int_equal(MPI_Comm_free(&c), MPI_SUCCESS);
	MPI_Comm_free_keyval(&k);
}

static int delete_frees_keyval(MPI_Comm comm, int keyval, void *val, void *extra)
{
	(void)comm, (void)val, (void)extra;
	return MPI_Comm_free_keyval(&keyval);
}

/* MPICH's attr/keyval_double_free_comm: freeing a keyval again while attributes hold it is harmless. */
static void test_double_free(void **state)
{
	MPI_Comm d;
	int k, copy, saved;

	(void)state;
	MPI_Comm_dup(MPI_COMM_SELF, &d);
	MPI_Comm_create_keyval(MPI_NULL_COPY_FN, delete_frees_keyval, &k, NULL);
	copy = saved = k;
	MPI_Comm_set_attr(MPI_COMM_WORLD, k, NULL);
	MPI_Comm_set_attr(d, k, NULL);
	assert_int_equal(MPI_Comm_free(&d), MPI_SUCCESS);
	assert_int_equal(MPI_Comm_free_keyval(&k), MPI_SUCCESS);
	assert_int_equal(MPI_Comm_free_keyval(&copy), MPI_SUCCESS);
	/* The last attribute gone, the keyval is too. */
	assert_int_equal(MPI_Comm_delete_attr(MPI_COMM_WORLD, saved), MPI_SUCCESS);
	assert_int_equal(class_of(MPI_Comm_free_keyval(&saved)), MPI_ERR_KEYVAL);
}

static MPI_Comm deleting;
static int get_ok;

static int delete_gets(MPI_Comm comm, int keyval, void *val, void *extra)
{
	void *p;
	int flag;

	(void)val, (void)extra;
	get_ok = comm == deleting && MPI_Comm_get_attr(comm, keyval, &p, &flag) == MPI_SUCCESS;
	return MPI_SUCCESS;
}

/* MPICH's attr/attrdeleteget: the delete callback may use the communicator being freed. */
static void test_delete_get(void **state)
{
	int k;

	(void)state;
	MPI_Comm_dup(MPI_COMM_SELF, &deleting);
	MPI_Comm_create_keyval(MPI_NULL_COPY_FN, delete_gets, &k, NULL);
	MPI_Comm_set_attr(deleting, k, &k);
	MPI_Comm d = deleting;
	assert_int_equal(MPI_Comm_free(&d), MPI_SUCCESS);
	assert_true(get_ok);
	MPI_Comm_free_keyval(&k);
}

static int type_copies;

static int type_copy(MPI_Datatype t, int keyval, void *extra, void *in, void *out, int *flag)
{
	(void)t, (void)keyval, (void)extra;
	type_copies++;
	*(void **)out = in;
	*flag = 1;
	return MPI_SUCCESS;
}

/* Datatype attributes on the list datatype.c keeps (here the host's), and the hooks Type_dup/free use. */
static void test_types(void **state)
{
	int k, kc, *p, flag, v = 5;
	struct mpi_attr *copy = NULL;

	(void)state;
	assert_int_equal(MPI_Type_create_keyval(type_copy, MPI_TYPE_NULL_DELETE_FN, &k, NULL), MPI_SUCCESS);
	assert_int_equal(MPI_Type_set_attr(MPI_INT, k, &v), MPI_SUCCESS);
	assert_int_equal(MPI_Type_get_attr(MPI_INT, k, &p, &flag), MPI_SUCCESS);
	assert_true(flag);
	assert_ptr_equal(p, &v);
	assert_int_equal(mpii_attr_dup_all(&copy, *mpii_type_attrs(MPI_INT), NOW_MPI_KTYPE, MPI_INT, MPI_DOUBLE),
			 MPI_SUCCESS);
	assert_int_equal(type_copies, 1);
	assert_non_null(copy);
	assert_int_equal(mpii_attr_free_all(&copy, NOW_MPI_KTYPE, MPI_DOUBLE), MPI_SUCCESS);
	assert_null(copy);
	/* A communicator's keyval is not a datatype's. */
	MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &kc, NULL);
	assert_int_equal(class_of(MPI_Type_set_attr(MPI_INT, kc, &v)), MPI_ERR_KEYVAL);
	assert_int_equal(class_of(MPI_Comm_set_attr(MPI_COMM_WORLD, k, &v)), MPI_ERR_KEYVAL);
	assert_int_equal(class_of(MPI_Type_set_attr(MPI_DATATYPE_NULL, k, &v)), MPI_ERR_TYPE);
	assert_int_equal(MPI_Type_delete_attr(MPI_INT, k), MPI_SUCCESS);
	MPI_Type_get_attr(MPI_INT, k, &p, &flag);
	assert_false(flag);
	MPI_Type_free_keyval(&k);
	MPI_Comm_free_keyval(&kc);
}

/* No window exists yet: their keyvals work, their attributes are MPI_ERR_WIN. */
static void test_windows(void **state)
{
	int k, flag;
	void *p;

	(void)state;
	assert_int_equal(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &k, NULL), MPI_SUCCESS);
	assert_int_equal(class_of(MPI_Win_set_attr(MPI_WIN_NULL, k, NULL)), MPI_ERR_WIN);
	assert_int_equal(class_of(MPI_Win_get_attr(MPI_WIN_NULL, MPI_WIN_BASE, &p, &flag)), MPI_ERR_WIN);
	assert_int_equal(class_of(MPI_Win_delete_attr(MPI_WIN_NULL, k)), MPI_ERR_WIN);
	assert_int_equal(MPI_Win_free_keyval(&k), MPI_SUCCESS);
	assert_int_equal(k, MPI_KEYVAL_INVALID);
}

static int order[20], norder;

static int delete_order(MPI_Comm comm, int keyval, void *val, void *extra)
{
	(void)comm, (void)keyval, (void)extra;
	order[norder++] = (int)(intptr_t)val;
	return MPI_SUCCESS;
}

/* MPICH's attr/attrend2 and init/attrself: MPI_Finalize deletes COMM_SELF's attributes, the last set first. */
static void test_finalize_order(void **state)
{
	int k[20];

	(void)state;
	for (int i = 0; i < 20; i++) {
		MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_order, &k[i], NULL);
		MPI_Comm_set_attr(MPI_COMM_SELF, k[i], (void *)(intptr_t)i);
	}
	for (int i = 0; i < 20; i++)
		MPI_Comm_free_keyval(&k[i]);
	mpii_comm_finalize();
	assert_int_equal(norder, 20);
	for (int i = 0; i < 20; i++)
		assert_int_equal(order[i], 19 - i);
}

UNIT_MAIN("tests", setup, NULL,
	  cmocka_unit_test(test_predefined),
	  cmocka_unit_test(test_set_get_delete),
	  cmocka_unit_test(test_dup_free),
	  cmocka_unit_test(test_callback_errors),
	  cmocka_unit_test(test_double_free),
	  cmocka_unit_test(test_delete_get),
	  cmocka_unit_test(test_types),
	  cmocka_unit_test(test_windows),
	  cmocka_unit_test(test_finalize_order))
