/*
 * Host unit tests of lib/mpi/errors.c: classes, codes and their messages
 * (the ring of recent ones), classes and codes a program adds, error
 * handlers (predefined, the program's, on files), and the argument checks,
 * as MPICH's errhan tests and its harness's MTestPrintError use them.  A
 * world of 4 where this process is rank 0; nothing is sent.
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

static struct mpi_comm *world;

static int setup(void **state)
{
	(void)state;
	if (host_mpi_init(0, 4) != MPI_SUCCESS)
		return -1;
	world = mpii_comm_get(MPI_COMM_WORLD);
	return MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

static int class_of(int code)
{
	int cls = -1;

	assert_int_equal(MPI_Error_class(code, &cls), MPI_SUCCESS);
	return cls;
}

static const char *string_of(int code)
{
	static char s[MPI_MAX_ERROR_STRING];
	int len;

	assert_int_equal(MPI_Error_string(code, s, &len), MPI_SUCCESS);
	assert_int_equal(len, (int)strlen(s));
	return s;
}

static void test_classes(void **state)
{
	(void)state;
	assert_int_equal(class_of(MPI_ERR_RANK), MPI_ERR_RANK);
	assert_string_equal(string_of(MPI_ERR_RANK), "Invalid rank");
	assert_string_equal(string_of(MPI_SUCCESS), "No MPI error");
	assert_string_equal(string_of(MPI_ERR_PROC_FAILED), "Process failed");
	/* Numbers that are no code are an error of the call (class 54 is unused). */
	int c;
	assert_int_equal(class_of(MPI_Error_class(54, &c)), MPI_ERR_ARG);
	assert_int_equal(class_of(MPI_Error_class(-3, &c)), MPI_ERR_ARG);
	assert_int_equal(class_of(MPI_Error_class(4000, &c)), MPI_ERR_ARG);
}

static void test_checks(void **state)
{
	(void)state;
	int e = mpii_check_rank(world, 7, 0, "MPI_Send");
	assert_int_equal(class_of(e), MPI_ERR_RANK);
	assert_true(e != MPI_ERR_RANK && e <= MPI_ERR_LASTCODE);
	assert_string_equal(string_of(e), "MPI_Send: Invalid rank has value 7 but must be nonnegative and less than 4");
	assert_int_equal(mpii_check_rank(world, MPI_PROC_NULL, 0, "MPI_Send"), MPI_SUCCESS);
	assert_int_equal(mpii_check_rank(world, MPI_ANY_SOURCE, 1, "MPI_Recv"), MPI_SUCCESS);
	assert_int_equal(class_of(mpii_check_rank(world, MPI_ANY_SOURCE, 0, "MPI_Send")), MPI_ERR_RANK);
	e = mpii_check_count(world, -1, "MPI_Send");
	assert_string_equal(string_of(e), "MPI_Send: Negative count, value is -1");
	assert_int_equal(mpii_check_count(world, 0, "MPI_Send"), MPI_SUCCESS);
	assert_int_equal(class_of(mpii_check_tag(world, -5, 1, "MPI_Recv")), MPI_ERR_TAG);
	assert_int_equal(class_of(mpii_check_tag(world, MPI_ANY_TAG, 0, "MPI_Send")), MPI_ERR_TAG);
	assert_int_equal(mpii_check_tag(world, MPI_ANY_TAG, 1, "MPI_Recv"), MPI_SUCCESS);
	assert_int_equal(mpii_check_tag(world, MPII_TAG_UB, 0, "MPI_Send"), MPI_SUCCESS);
	assert_int_equal(class_of(mpii_check_type(world, MPI_DATATYPE_NULL, "MPI_Send")), MPI_ERR_TYPE);
	assert_int_equal(class_of(mpii_check_type(world, MPI_COMM_WORLD, "MPI_Send")), MPI_ERR_TYPE);
	assert_int_equal(mpii_check_type(world, MPI_INT, "MPI_Send"), MPI_SUCCESS);
	assert_int_equal(class_of(mpii_check_buf(world, NULL, 1, MPI_INT, "MPI_Send")), MPI_ERR_BUFFER);
	assert_int_equal(mpii_check_buf(world, NULL, 0, MPI_INT, "MPI_Send"), MPI_SUCCESS);
	assert_int_equal(class_of(mpii_check_root(world, 4, "MPI_Bcast")), MPI_ERR_ROOT);
	assert_int_equal(class_of(mpii_check_root(world, MPI_ROOT, "MPI_Bcast")), MPI_ERR_ROOT);
	assert_int_equal(mpii_check_root(world, 3, "MPI_Bcast"), MPI_SUCCESS);
	assert_int_equal(class_of(mpii_check_op(world, MPI_OP_NULL, "MPI_Reduce")), MPI_ERR_OP);
	assert_int_equal(class_of(mpii_check_op(world, MPI_INT, "MPI_Reduce")), MPI_ERR_OP);
	assert_int_equal(mpii_check_op(world, MPI_SUM, "MPI_Reduce"), MPI_SUCCESS);
	struct mpi_comm *c;
	e = mpii_check_comm(MPI_COMM_NULL, "MPI_Send", &c);
	assert_null(c);
	assert_int_equal(class_of(e), MPI_ERR_COMM);
	assert_int_equal(class_of(mpii_check_comm(MPI_INT, "MPI_Send", &c)), MPI_ERR_COMM);
}

/* A message lasts while the ring holds it; later the code still names its class. */
static void test_ring(void **state)
{
	(void)state;
	int old = mpii_errcode(MPI_ERR_TRUNCATE, "MPI_Recv", "Message truncated; %d bytes received", 12);
	assert_string_equal(string_of(old), "MPI_Recv: Message truncated; 12 bytes received");
	for (int i = 0; i < 200; i++)
		mpii_errcode(MPI_ERR_OTHER, "MPI_Test", "filler %d", i);
	assert_int_equal(class_of(old), MPI_ERR_TRUNCATE);
	assert_string_equal(string_of(old), "Message truncated");
	assert_int_equal(mpii_errcode(MPI_SUCCESS, "MPI_Recv", "nothing"), MPI_SUCCESS);
	assert_int_equal(mpii_err_class(123456789), MPI_ERR_UNKNOWN);
}

/* MPICH's errhan/adderr, errstring2, dynamic_errcode_predefined_errclass; attr/baseattr2's LASTUSEDCODE. */
static void test_added(void **state)
{
	int cls[3], code[3][2], c, *last, flag;
	char s[64];

	(void)state;
	for (int i = 0; i < 3; i++) {
		assert_int_equal(MPI_Add_error_class(&cls[i]), MPI_SUCCESS);
		assert_true(cls[i] > NOW_MPI_ERR_LASTCLASS);
		assert_string_equal(string_of(cls[i]), "");
		for (int j = 0; j < 2; j++) {
			assert_int_equal(MPI_Add_error_code(cls[i], &code[i][j]), MPI_SUCCESS);
			snprintf(s, sizeof s, "code for class %d code %d\n", i, j);
			assert_int_equal(MPI_Add_error_string(code[i][j], s), MPI_SUCCESS);
		}
	}
	for (int i = 0; i < 3; i++) {
		assert_int_equal(class_of(cls[i]), cls[i]);
		for (int j = 0; j < 2; j++) {
			assert_int_equal(class_of(code[i][j]), cls[i]);
			snprintf(s, sizeof s, "code for class %d code %d\n", i, j);
			assert_string_equal(string_of(code[i][j]), s);
		}
	}
	assert_int_equal(MPI_Add_error_string(cls[1], "a class of mine"), MPI_SUCCESS);
	assert_string_equal(string_of(cls[1]), "a class of mine");
	assert_int_equal(MPI_Add_error_code(MPI_ERR_ARG, &c), MPI_SUCCESS);
	assert_int_equal(class_of(c), MPI_ERR_ARG);
	assert_int_equal(class_of(MPI_Add_error_string(MPI_ERR_ARG, "mine")), MPI_ERR_ARG);
	assert_int_equal(class_of(MPI_Add_error_code(cls[2] + 1, &c)), MPI_ERR_ARG);
	assert_int_equal(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag), MPI_SUCCESS);
	assert_true(flag);
	assert_true(*last >= MPI_ERR_LASTCODE);
	assert_int_equal(*last, c);
}

static int calls;
static MPI_Comm seen_comm;
static int seen_code;

static void eh(MPI_Comm *comm, int *code, ...)
{
	calls++;
	seen_comm = *comm;
	seen_code = *code;
}

/* MPICH's errhan/commcall: the handler runs, a duplicate inherits it, and freeing it keeps it for its holders. */
static void test_user_handler(void **state)
{
	MPI_Errhandler h, got;
	MPI_Comm d, d2;

	(void)state;
	assert_int_equal(MPI_Comm_dup(MPI_COMM_SELF, &d), MPI_SUCCESS);
	assert_int_equal(MPI_Comm_create_errhandler(eh, &h), MPI_SUCCESS);
	assert_int_equal(MPI_Comm_set_errhandler(d, h), MPI_SUCCESS);
	calls = 0;
	assert_int_equal(MPI_Comm_call_errhandler(d, MPI_ERR_OTHER), MPI_SUCCESS);
	assert_int_equal(calls, 1);
	assert_int_equal(seen_comm, d);
	assert_int_equal(seen_code, MPI_ERR_OTHER);
	assert_int_equal(MPI_Errhandler_free(&h), MPI_SUCCESS);
	assert_int_equal(h, MPI_ERRHANDLER_NULL);
	assert_int_equal(MPI_Comm_dup(d, &d2), MPI_SUCCESS);
	assert_int_equal(MPI_Comm_call_errhandler(d2, MPI_ERR_OTHER), MPI_SUCCESS);
	assert_int_equal(calls, 2);
	assert_int_equal(seen_comm, d2);
	/* An error of a call goes to the communicator's handler with its code. */
	int e = mpii_check_rank(mpii_comm_get(d2), 5, 0, "MPI_Send");
	assert_int_equal(calls, 3);
	assert_int_equal(seen_code, e);
	assert_int_equal(MPI_Comm_get_errhandler(d2, &got), MPI_SUCCESS);
	MPI_Comm_set_errhandler(d, MPI_ERRORS_ARE_FATAL);
	MPI_Comm_free(&d);
	MPI_Comm_free(&d2);
	/* got still holds the handler: it can be set and called. */
	assert_int_equal(MPI_Comm_set_errhandler(MPI_COMM_SELF, got), MPI_SUCCESS);
	assert_int_equal(MPI_Comm_call_errhandler(MPI_COMM_SELF, MPI_ERR_TAG), MPI_SUCCESS);
	assert_int_equal(calls, 4);
	assert_int_equal(MPI_Errhandler_free(&got), MPI_SUCCESS);
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
	/* MPI-1's names do the same. */
	assert_int_equal(MPI_Errhandler_create(eh, &h), MPI_SUCCESS);
	assert_int_equal(MPI_Errhandler_set(MPI_COMM_SELF, h), MPI_SUCCESS);
	assert_int_equal(MPI_Errhandler_get(MPI_COMM_SELF, &got), MPI_SUCCESS);
	assert_int_equal(got, h);
	MPI_Errhandler_free(&got);
	MPI_Errhandler_free(&h);
	MPI_Comm_call_errhandler(MPI_COMM_SELF, MPI_ERR_TAG);
	assert_int_equal(calls, 5);
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
	/* A window's handler does not fit a communicator. */
	assert_int_equal(MPI_Win_create_errhandler((MPI_Win_errhandler_function *)eh, &h), MPI_SUCCESS);
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
	assert_int_equal(class_of(MPI_Comm_set_errhandler(MPI_COMM_SELF, h)), MPI_ERR_ARG);
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
	MPI_Errhandler_free(&h);
}

/* An invalid communicator's error goes to COMM_WORLD's handler. */
static void test_invalid_comm(void **state)
{
	MPI_Errhandler h;
	int n;

	(void)state;
	MPI_Comm_create_errhandler(eh, &h);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, h);
	calls = 0;
	int e = MPI_Comm_size(MPI_COMM_NULL, &n);
	assert_int_equal(calls, 1);
	assert_int_equal(seen_comm, MPI_COMM_WORLD);
	assert_int_equal(class_of(e), MPI_ERR_COMM);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Errhandler_free(&h);
}

/* MPI_ERRORS_ARE_FATAL ends the job (MPICH's errhan/errfatal): mpii_abort runs. */
static void test_fatal(void **state)
{
	jmp_buf j;
	int cls, code;

	(void)state;
	MPI_Add_error_class(&cls);
	MPI_Add_error_code(cls, &code);
	MPI_Add_error_string(code, "MY ERROR");
	host_abort_jmp = &j;
	host_abort_code = 0;
	if (setjmp(j) == 0) {
		MPI_Comm_call_errhandler(MPI_COMM_SELF, code);
		fail_msg("MPI_ERRORS_ARE_FATAL returned");
	}
	assert_int_equal(host_abort_code, 1);
	host_abort_code = 0;
	if (setjmp(j) == 0) {
		mpii_err(mpii_comm_get(MPI_COMM_SELF), MPI_ERR_RANK, "MPI_Send", "Invalid rank %d", 9);
		fail_msg("MPI_ERRORS_ARE_FATAL returned");
	}
	assert_int_equal(host_abort_code, 1);
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ABORT);
	host_abort_code = 0;
	if (setjmp(j) == 0) {
		MPI_Comm_call_errhandler(MPI_COMM_SELF, MPI_ERR_OTHER);
		fail_msg("MPI_ERRORS_ABORT returned");
	}
	assert_int_equal(host_abort_code, 1);
	host_abort_jmp = NULL;
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
}

static void file_eh(MPI_File *f, int *code, ...)
{
	calls++;
	seen_code = *code;
	assert_null(*f);
}

/* Files: MPI_FILE_NULL's handler (ERRORS_RETURN at first) is every file's.  Windows: none exists. */
static void test_file_win(void **state)
{
	MPI_Errhandler h, got;

	(void)state;
	assert_int_equal(MPI_File_get_errhandler(MPI_FILE_NULL, &got), MPI_SUCCESS);
	assert_int_equal(got, MPI_ERRORS_RETURN);
	assert_int_equal(MPI_File_create_errhandler(file_eh, &h), MPI_SUCCESS);
	assert_int_equal(MPI_File_set_errhandler(MPI_FILE_NULL, h), MPI_SUCCESS);
	calls = 0;
	assert_int_equal(MPI_File_call_errhandler(MPI_FILE_NULL, MPI_ERR_IO), MPI_SUCCESS);
	assert_int_equal(calls, 1);
	assert_int_equal(seen_code, MPI_ERR_IO);
	/* A communicator's handler does not fit a file. */
	assert_int_equal(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN), MPI_SUCCESS);
	MPI_Comm_create_errhandler(eh, &got);
	assert_int_equal(class_of(MPI_File_set_errhandler(MPI_FILE_NULL, got)), MPI_ERR_ARG);
	MPI_Errhandler_free(&got);
	MPI_Errhandler_free(&h);
	assert_int_equal(class_of(MPI_Win_set_errhandler(MPI_WIN_NULL, MPI_ERRORS_RETURN)), MPI_ERR_WIN);
	assert_int_equal(class_of(MPI_Win_call_errhandler(NOW_MPI_H(NOW_MPI_KWIN, 1), MPI_ERR_OTHER)), MPI_ERR_WIN);
}

UNIT_MAIN("tests", setup, NULL,
	  cmocka_unit_test(test_classes),
	  cmocka_unit_test(test_checks),
	  cmocka_unit_test(test_ring),
	  cmocka_unit_test(test_added),
	  cmocka_unit_test(test_user_handler),
	  cmocka_unit_test(test_invalid_comm),
	  cmocka_unit_test(test_fatal),
	  cmocka_unit_test(test_file_win))
