/*
 * Errors (MPI-3.1 §8.3-8.5): classes, codes and their messages, error
 * handlers, and the argument checks every call makes.
 *
 * A code is its class in bits 0..11 and where its text is above:
 *   bit 30 clear: bits 12..29 name a slot of a ring of recent messages (0:
 *       none, the code is the bare class).  MPI_Error_string gives
 *       "<call>: <message>" while the slot still holds that code's
 *       message, the class's text once newer messages took the slot over.
 *   bit 30 set: a code MPI_Add_error_code made; bits 12..29 number it.
 * So every code the library makes is at most MPI_ERR_LASTCODE and every
 * added one above it, which is what MPI_LASTUSEDCODE must be (§8.5: at
 * least MPI_ERR_LASTCODE).  Classes 0..NOW_MPI_ERR_LASTCLASS are MPI's,
 * MPI_Add_error_class hands out the rest up to 4095.
 *
 * Locking: a mutex of this file's over the ring and the added classes and
 * codes, never held while a handler runs; any thread raises errors, the
 * receive thread among them (a status's MPI_ERROR) with mpii_lock held.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/sync.h"
#include "lib/mpi/mpiimpl.h"

#define CLASS_MASK 0xfff
#define MAX_CLASS 4095
#define SLOT_SHIFT 12
#define SLOT_MASK 0x3ffff
#define ADDED 0x40000000

#define RING 64
#define FN_LEN 64
#define MSG_LEN (MPI_MAX_ERROR_STRING - FN_LEN)

static const char *const class_text[NOW_MPI_ERR_LASTCLASS + 1] = {
	[MPI_SUCCESS] = "No MPI error",
	[MPI_ERR_BUFFER] = "Invalid buffer pointer",
	[MPI_ERR_COUNT] = "Invalid count",
	[MPI_ERR_TYPE] = "Invalid datatype",
	[MPI_ERR_TAG] = "Invalid tag",
	[MPI_ERR_COMM] = "Invalid communicator",
	[MPI_ERR_RANK] = "Invalid rank",
	[MPI_ERR_ROOT] = "Invalid root",
	[MPI_ERR_GROUP] = "Invalid group",
	[MPI_ERR_OP] = "Invalid MPI_Op",
	[MPI_ERR_TOPOLOGY] = "Invalid topology",
	[MPI_ERR_DIMS] = "Invalid dimension argument",
	[MPI_ERR_ARG] = "Invalid argument",
	[MPI_ERR_UNKNOWN] = "Unknown error",
	[MPI_ERR_TRUNCATE] = "Message truncated",
	[MPI_ERR_OTHER] = "Other MPI error",
	[MPI_ERR_INTERN] = "Internal MPI error",
	[MPI_ERR_IN_STATUS] = "See the MPI_ERROR field in MPI_Status for the error code",
	[MPI_ERR_PENDING] = "Pending request (no error)",
	[MPI_ERR_REQUEST] = "Invalid MPI_Request",
	[MPI_ERR_ACCESS] = "Permission denied",
	[MPI_ERR_AMODE] = "Invalid amode value in MPI_File_open",
	[MPI_ERR_BAD_FILE] = "Invalid file name",
	[MPI_ERR_CONVERSION] = "An error occurred in a user-defined data conversion function",
	[MPI_ERR_DUP_DATAREP] = "A conversion function is already registered for this data representation",
	[MPI_ERR_FILE_EXISTS] = "File exists",
	[MPI_ERR_FILE_IN_USE] = "File in use by some process",
	[MPI_ERR_FILE] = "Invalid MPI_File",
	[MPI_ERR_INFO] = "Invalid MPI_Info",
	[MPI_ERR_INFO_KEY] = "Invalid key for MPI_Info",
	[MPI_ERR_INFO_VALUE] = "Invalid MPI_Info value",
	[MPI_ERR_INFO_NOKEY] = "MPI_Info key is not defined",
	[MPI_ERR_IO] = "Other I/O error",
	[MPI_ERR_NAME] = "Invalid service name",
	[MPI_ERR_NO_MEM] = "Unable to allocate memory",
	[MPI_ERR_NOT_SAME] = "Collective argument not identical on all processes",
	[MPI_ERR_NO_SPACE] = "Not enough space for file",
	[MPI_ERR_NO_SUCH_FILE] = "File does not exist",
	[MPI_ERR_PORT] = "Invalid port",
	[MPI_ERR_QUOTA] = "Quota exceeded for files",
	[MPI_ERR_READ_ONLY] = "Read-only file or filesystem name",
	[MPI_ERR_SERVICE] = "Attempt to lookup an unknown service name",
	[MPI_ERR_SPAWN] = "Error in spawn call",
	[MPI_ERR_UNSUPPORTED_DATAREP] = "Unsupported data representation",
	[MPI_ERR_UNSUPPORTED_OPERATION] = "Operation not supported",
	[MPI_ERR_WIN] = "Invalid MPI_Win",
	[MPI_ERR_BASE] = "Invalid base address",
	[MPI_ERR_LOCKTYPE] = "Invalid lock type",
	[MPI_ERR_KEYVAL] = "Invalid keyval",
	[MPI_ERR_RMA_CONFLICT] = "Conflicting accesses to window",
	[MPI_ERR_RMA_SYNC] = "Wrong synchronization of RMA calls",
	[MPI_ERR_SIZE] = "Invalid size",
	[MPI_ERR_DISP] = "Invalid displacement argument",
	[MPI_ERR_ASSERT] = "Invalid assert argument",
	[MPI_ERR_RMA_RANGE] = "Target memory is not part of the window",
	[MPI_ERR_RMA_ATTACH] = "Memory cannot be attached",
	[MPI_ERR_RMA_SHARED] = "Memory cannot be shared",
	[MPI_ERR_RMA_FLAVOR] = "Passed window has the wrong flavor for the called function",
	[MPI_ERR_SESSION] = "Invalid MPI_Session",
	[MPI_ERR_PROC_ABORTED] = "Process aborted",
	[MPI_ERR_VALUE_TOO_LARGE] = "Value is too large to store",
	[MPI_ERR_PROC_FAILED] = "Process failed",
};

/* One recent message. */
struct slot {
	int code;			/* the code whose message this is */
	char fn[FN_LEN];
	char msg[MSG_LEN];
};

/* A code MPI_Add_error_code made. */
struct added_code {
	int cls;
	char *text;			/* MPI_Add_error_string's, or NULL */
};

static struct mutex err_lock = MUTEX_INIT;
static struct slot ring[RING];
static unsigned last_slot;
static int last_class = NOW_MPI_ERR_LASTCLASS;
static char *class_str[MAX_CLASS + 1];		/* added classes' strings */
static struct added_code *codes;		/* index 1.. (0 unused) */
static int ncodes, codes_cap;

/* --- error handlers --------------------------------------------------------------------- */

enum errh_kind { EH_ANY, EH_COMM, EH_WIN, EH_FILE };

struct mpi_errh {
	int refs;			/* its handle's and every holder's */
	enum errh_kind kind;
	MPI_Errhandler handle;		/* the predefined ones' */
	union {
		MPI_Comm_errhandler_function *comm;	/* a window's too: called with the window's handle */
		MPI_File_errhandler_function *file;
	} fn;
};

static struct mpi_errh predefined[3] = {
	{ 1, EH_ANY, MPI_ERRORS_ARE_FATAL, { NULL } },
	{ 1, EH_ANY, MPI_ERRORS_RETURN, { NULL } },
	{ 1, EH_ANY, MPI_ERRORS_ABORT, { NULL } },
};

/* The handler MPI_FILE_NULL holds: every file's, as no file can be opened (MPI-3.1 §13.7). */
static MPI_Errhandler file_errh = MPI_ERRORS_RETURN;

static int is_predefined(MPI_Errhandler h)
{
	return h == MPI_ERRORS_ARE_FATAL || h == MPI_ERRORS_RETURN || h == MPI_ERRORS_ABORT;
}

void mpii_errh_ref(MPI_Errhandler h)
{
	struct mpi_errh *e = mpii_obj_get(NOW_MPI_KERRH, h);

	if (e && !is_predefined(h))
		__atomic_add_fetch(&e->refs, 1, __ATOMIC_RELAXED);
}

void mpii_errh_unref(MPI_Errhandler h)
{
	struct mpi_errh *e = mpii_obj_get(NOW_MPI_KERRH, h);

	if (!e || is_predefined(h))
		return;
	if (__atomic_sub_fetch(&e->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		mpii_obj_free(NOW_MPI_KERRH, h);
		free(e);
	}
}

int mpii_err_init(void)
{
	for (int i = 0; i < 3; i++)
		if (mpii_obj_set(NOW_MPI_KERRH, MPII_INDEX(predefined[i].handle), &predefined[i]) < 0)
			return MPI_ERR_NO_MEM;
	return MPI_SUCCESS;
}

/* --- codes ------------------------------------------------------------------------------ */

static int class_valid(int cls)
{
	if (cls < 0 || cls > MAX_CLASS)
		return 0;
	if (cls <= NOW_MPI_ERR_LASTCLASS)
		return class_text[cls] != NULL;
	return cls <= __atomic_load_n(&last_class, __ATOMIC_ACQUIRE);
}

/* Is code one this process can name?  Its class, or -1. */
static int code_class(int code)
{
	if (code < 0)
		return -1;
	if (code & ADDED) {
		int n = (code >> SLOT_SHIFT) & SLOT_MASK, cls = -1;
		mutex_lock(&err_lock);
		if (n >= 1 && n <= ncodes && codes[n].cls == (code & CLASS_MASK))
			cls = codes[n].cls;
		mutex_unlock(&err_lock);
		return cls;
	}
	return class_valid(code & CLASS_MASK) ? code & CLASS_MASK : -1;
}

int mpii_err_class(int code)
{
	int cls = code_class(code);

	return cls < 0 ? MPI_ERR_UNKNOWN : cls;
}

int mpii_err_lastused(void)
{
	int last = MPI_ERR_LASTCODE;

	mutex_lock(&err_lock);
	if (ncodes)
		last = ADDED | ncodes << SLOT_SHIFT | codes[ncodes].cls;
	mutex_unlock(&err_lock);
	return last;
}

static int vcode(int cls, const char *fn, const char *fmt, va_list ap)
{
	cls = mpii_err_class(cls);
	if (cls == MPI_SUCCESS)
		return MPI_SUCCESS;
	mutex_lock(&err_lock);
	if (++last_slot > SLOT_MASK)
		last_slot = 1;
	int code = cls | (int)(last_slot << SLOT_SHIFT);
	struct slot *s = &ring[last_slot % RING];
	s->code = code;
	snprintf(s->fn, sizeof s->fn, "%s", fn);
	vsnprintf(s->msg, sizeof s->msg, fmt, ap);
	mutex_unlock(&err_lock);
	return code;
}

int mpii_errcode(int cls, const char *fn, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	int code = vcode(cls, fn, fmt, ap);
	va_end(ap);
	return code;
}

/*
 * What MPI_Error_string says of a code: "<call>: <message>" (fn and msg
 * apart, for the fatal handler's line), or a text alone (fn empty).
 */
static void describe(int code, char *fn, char *msg)
{
	int cls = code & CLASS_MASK, n = (code >> SLOT_SHIFT) & SLOT_MASK;
	const char *t = "Unknown error code";

	fn[0] = msg[0] = 0;
	mutex_lock(&err_lock);
	if (code & ADDED) {
		if (n >= 1 && n <= ncodes)
			t = codes[n].text ? codes[n].text : "";
	} else if (n && ring[n % RING].code == code) {
		memcpy(fn, ring[n % RING].fn, FN_LEN);
		t = ring[n % RING].msg;
	} else if (cls > NOW_MPI_ERR_LASTCLASS) {
		t = class_str[cls] ? class_str[cls] : "";
	} else if (class_text[cls]) {
		t = class_text[cls];
	}
	snprintf(msg, MPI_MAX_ERROR_STRING, "%s", t);
	mutex_unlock(&err_lock);
}

static const char *class_name(int cls)
{
	return cls <= NOW_MPI_ERR_LASTCLASS ? class_text[cls] : "User-defined error class";
}

/*
 * Run handler h on code for the object whose handle is obj (a
 * communicator's, or a file's when file).  caller names the call when the
 * code carries no message of its own.
 */
static int run_handler(MPI_Errhandler h, void *obj, int code, const char *caller)
{
	if (h == MPI_ERRORS_RETURN)
		return code;
	if (h == MPI_ERRORS_ARE_FATAL || h == MPI_ERRORS_ABORT) {
		char fn[FN_LEN], msg[MPI_MAX_ERROR_STRING], why[FN_LEN + 2 * MPI_MAX_ERROR_STRING];
		int cls = mpii_err_class(code);

		describe(code, fn, msg);
		if (fn[0])
			snprintf(why, sizeof why, "Fatal error in %s: %s: %s", fn, class_name(cls), msg);
		else
			snprintf(why, sizeof why, "Fatal error in %s: %s", caller, msg[0] ? msg : class_name(cls));
		fprintf(stderr, "%s\n", why);
		/* The kernel's line names it too, for boot/mpirun's summary. */
		mpii_abort(1, why);
	}
	struct mpi_errh *e = mpii_obj_get(NOW_MPI_KERRH, h);
	if (!e)
		return code;
	if (e->kind == EH_FILE)
		e->fn.file(obj, &code);
	else
		e->fn.comm(obj, &code);
	return code;
}

/* Errors of calls with no valid object go to MPI_COMM_WORLD's handler (MPI-3.1 §8.3). */
static int raise_on(struct mpi_comm *c, int code, const char *caller)
{
	MPI_Comm h = MPI_COMM_WORLD;
	MPI_Errhandler eh = MPI_ERRORS_ARE_FATAL;

	if (!c)
		c = mpii_comm_get(MPI_COMM_WORLD);
	if (c) {
		h = c->win ? c->win : c->handle;	/* a window's error: its handler gets the window */
		eh = __atomic_load_n(&c->errh, __ATOMIC_ACQUIRE);
	}
	/* The handler may call MPI and free the handler: keep it meanwhile. */
	mpii_errh_ref(eh);
	code = run_handler(eh, &h, code, caller);
	mpii_errh_unref(eh);
	return code;
}

int mpii_err_raise(struct mpi_comm *c, int code)
{
	if (code == MPI_SUCCESS)
		return MPI_SUCCESS;
	return raise_on(c, code, "MPI");
}

int mpii_err(struct mpi_comm *c, int cls, const char *fn, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	int code = vcode(cls, fn, fmt, ap);
	va_end(ap);
	return raise_on(c, code, fn);
}

/* No window is valid yet: such an error goes where one without a valid object goes. */
int mpii_err_win(MPI_Win win, int cls, const char *fn, const char *fmt, ...)
{
	va_list ap;

	(void)win;
	va_start(ap, fmt);
	int code = vcode(cls, fn, fmt, ap);
	va_end(ap);
	return raise_on(NULL, code, fn);
}

static int file_raise(MPI_File fh, int code, const char *fn)
{
	MPI_Errhandler eh = __atomic_load_n(&file_errh, __ATOMIC_ACQUIRE);

	mpii_errh_ref(eh);
	code = run_handler(eh, &fh, code, fn);
	mpii_errh_unref(eh);
	return code;
}

/* --- MPI_Error_*, MPI_Add_error_* ------------------------------------------------------------ */

int MPI_Error_class(int errorcode, int *errorclass)
{
	static const char fn[] = "MPI_Error_class";
	int cls = code_class(errorcode);

	if (cls < 0)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Invalid error code %d", errorcode);
	if (!errorclass)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Null pointer in parameter errorclass");
	*errorclass = cls;
	return MPI_SUCCESS;
}

int MPI_Error_string(int errorcode, char *string, int *resultlen)
{
	static const char fn[] = "MPI_Error_string";
	char f[FN_LEN], msg[MPI_MAX_ERROR_STRING];

	if (code_class(errorcode) < 0)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Invalid error code %d", errorcode);
	if (!string || !resultlen)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Null pointer in parameter %s", string ? "resultlen" : "string");
	describe(errorcode, f, msg);
	int n = f[0] ? snprintf(string, MPI_MAX_ERROR_STRING, "%s: %s", f, msg)
		     : snprintf(string, MPI_MAX_ERROR_STRING, "%s", msg);
	*resultlen = n < MPI_MAX_ERROR_STRING ? n : MPI_MAX_ERROR_STRING - 1;
	return MPI_SUCCESS;
}

int MPI_Add_error_class(int *errorclass)
{
	static const char fn[] = "MPI_Add_error_class";

	if (!errorclass)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Null pointer in parameter errorclass");
	mutex_lock(&err_lock);
	int cls = last_class < MAX_CLASS ? last_class + 1 : -1;
	if (cls > 0)
		__atomic_store_n(&last_class, cls, __ATOMIC_RELEASE);
	mutex_unlock(&err_lock);
	if (cls < 0)
		return mpii_err(NULL, MPI_ERR_OTHER, fn, "All %d error classes are in use", MAX_CLASS + 1);
	*errorclass = cls;
	return MPI_SUCCESS;
}

int MPI_Add_error_code(int errorclass, int *errorcode)
{
	static const char fn[] = "MPI_Add_error_code";

	if (!class_valid(errorclass))
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Invalid error class %d", errorclass);
	if (!errorcode)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Null pointer in parameter errorcode");
	mutex_lock(&err_lock);
	int n = -1;
	if (ncodes + 1 >= codes_cap && codes_cap <= SLOT_MASK) {
		int cap = codes_cap ? codes_cap * 2 : 64;
		struct added_code *c = realloc(codes, (size_t)cap * sizeof *c);
		if (c) {
			codes = c;
			codes_cap = cap;
		}
	}
	if (ncodes + 1 < codes_cap && ncodes < SLOT_MASK) {
		n = ++ncodes;
		codes[n].cls = errorclass;
		codes[n].text = NULL;
	}
	mutex_unlock(&err_lock);
	if (n < 0)
		return mpii_err(NULL, MPI_ERR_OTHER, fn, "No room for another error code");
	*errorcode = ADDED | n << SLOT_SHIFT | errorclass;
	return MPI_SUCCESS;
}

int MPI_Add_error_string(int errorcode, const char *string)
{
	static const char fn[] = "MPI_Add_error_string";
	int cls = code_class(errorcode);

	if (!string)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Null pointer in parameter string");
	/* MPI-3.1 §8.5: only the codes and classes the program added take a string. */
	if (cls < 0 || (!(errorcode & ADDED) && (errorcode != cls || cls <= NOW_MPI_ERR_LASTCLASS)))
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Error code %d was not added by the program", errorcode);
	char *t = strndup(string, MPI_MAX_ERROR_STRING - 1);
	if (!t)
		return mpii_err(NULL, MPI_ERR_NO_MEM, fn, "no memory for the string");
	mutex_lock(&err_lock);
	char **slot = errorcode & ADDED ? &codes[(errorcode >> SLOT_SHIFT) & SLOT_MASK].text : &class_str[cls];
	char *old = *slot;
	*slot = t;
	mutex_unlock(&err_lock);
	free(old);
	return MPI_SUCCESS;
}

/* --- error handlers ---------------------------------------------------------------------------- */

static int errh_create(enum errh_kind kind, void (*fn)(void), MPI_Errhandler *errhandler, const char *name)
{
	if (!fn)
		return mpii_err(NULL, MPI_ERR_ARG, name, "Null function pointer in parameter function");
	if (!errhandler)
		return mpii_err(NULL, MPI_ERR_ARG, name, "Null pointer in parameter errhandler");
	struct mpi_errh *e = calloc(1, sizeof *e);
	int h = e ? mpii_obj_new(NOW_MPI_KERRH, e) : -1;
	if (h < 0) {
		free(e);
		return mpii_err(NULL, MPI_ERR_NO_MEM, name, "no memory for an error handler");
	}
	e->refs = 1;
	e->kind = kind;
	/* The three function types differ only in their first argument's pointer type. */
	e->fn.comm = (MPI_Comm_errhandler_function *)fn;
	*errhandler = h;
	return MPI_SUCCESS;
}

/* An error handler a kind's object may hold: a predefined one or one made for that kind. */
static int errh_fits(MPI_Errhandler h, enum errh_kind kind)
{
	struct mpi_errh *e = mpii_obj_get(NOW_MPI_KERRH, h);

	return e && (e->kind == EH_ANY || e->kind == kind);
}

static int comm_set(MPI_Comm comm, MPI_Errhandler errhandler, const char *fn)
{
	struct mpi_comm *c;
	int err = mpii_check_comm(comm, fn, &c);

	if (err)
		return err;
	if (!errh_fits(errhandler, EH_COMM))
		return mpii_err(c, MPI_ERR_ARG, fn, "Invalid error handler %#x for a communicator", errhandler);
	mpii_errh_ref(errhandler);
	mpii_errh_unref(__atomic_exchange_n(&c->errh, errhandler, __ATOMIC_ACQ_REL));
	return MPI_SUCCESS;
}

static int comm_get(MPI_Comm comm, MPI_Errhandler *errhandler, const char *fn)
{
	struct mpi_comm *c;
	int err = mpii_check_comm(comm, fn, &c);

	if (err)
		return err;
	if (!errhandler)
		return mpii_err(c, MPI_ERR_ARG, fn, "Null pointer in parameter errhandler");
	/* The caller gets a reference of its own, to free (MPI-3.1 §8.3.1). */
	*errhandler = __atomic_load_n(&c->errh, __ATOMIC_ACQUIRE);
	mpii_errh_ref(*errhandler);
	return MPI_SUCCESS;
}

int MPI_Comm_create_errhandler(MPI_Comm_errhandler_function *fn, MPI_Errhandler *errhandler)
{
	return errh_create(EH_COMM, (void (*)(void))fn, errhandler, "MPI_Comm_create_errhandler");
}

int MPI_Errhandler_create(MPI_Handler_function *fn, MPI_Errhandler *errhandler)
{
	return errh_create(EH_COMM, (void (*)(void))fn, errhandler, "MPI_Errhandler_create");
}

int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
	return comm_set(comm, errhandler, "MPI_Comm_set_errhandler");
}

int MPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler)
{
	return comm_set(comm, errhandler, "MPI_Errhandler_set");
}

int MPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
	return comm_get(comm, errhandler, "MPI_Comm_get_errhandler");
}

int MPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler)
{
	return comm_get(comm, errhandler, "MPI_Errhandler_get");
}

int MPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
	static const char fn[] = "MPI_Comm_call_errhandler";
	struct mpi_comm *c;
	int err = mpii_check_comm(comm, fn, &c);

	if (err)
		return err;
	raise_on(c, errorcode, fn);
	/* MPI-3.1 §8.3.4: the handler ran and returned. */
	return MPI_SUCCESS;
}

int MPI_Errhandler_free(MPI_Errhandler *errhandler)
{
	static const char fn[] = "MPI_Errhandler_free";

	if (!errhandler)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Null pointer in parameter errhandler");
	if (!mpii_obj_get(NOW_MPI_KERRH, *errhandler))
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Invalid error handler %#x", *errhandler);
	/* The objects holding it keep it until they let it go. */
	mpii_errh_unref(*errhandler);
	*errhandler = MPI_ERRHANDLER_NULL;
	return MPI_SUCCESS;
}

int MPI_Win_create_errhandler(MPI_Win_errhandler_function *fn, MPI_Errhandler *errhandler)
{
	return errh_create(EH_WIN, (void (*)(void))fn, errhandler, "MPI_Win_create_errhandler");
}

/*
 * A window's errors go to the handler of its own communicator (win.c's dup,
 * which names the window: the handler is called with the window's handle).
 */
int MPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler)
{
	static const char fn[] = "MPI_Win_set_errhandler";
	struct mpi_comm *c = mpii_win_comm(win);

	if (!c)
		return mpii_err_win(win, MPI_ERR_WIN, fn, "Invalid window %#x", win);
	if (!errh_fits(errhandler, EH_WIN))
		return mpii_err(c, MPI_ERR_ARG, fn, "Invalid error handler %#x for a window", errhandler);
	mpii_errh_ref(errhandler);
	mpii_errh_unref(__atomic_exchange_n(&c->errh, errhandler, __ATOMIC_ACQ_REL));
	return MPI_SUCCESS;
}

int MPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler)
{
	static const char fn[] = "MPI_Win_get_errhandler";
	struct mpi_comm *c = mpii_win_comm(win);

	if (!c)
		return mpii_err_win(win, MPI_ERR_WIN, fn, "Invalid window %#x", win);
	if (!errhandler)
		return mpii_err(c, MPI_ERR_ARG, fn, "Null pointer in parameter errhandler");
	*errhandler = __atomic_load_n(&c->errh, __ATOMIC_ACQUIRE);
	mpii_errh_ref(*errhandler);	/* the caller frees it (MPI-3.1 §8.3.2) */
	return MPI_SUCCESS;
}

int MPI_Win_call_errhandler(MPI_Win win, int errorcode)
{
	static const char fn[] = "MPI_Win_call_errhandler";
	struct mpi_comm *c = mpii_win_comm(win);

	if (!c)
		return mpii_err_win(win, MPI_ERR_WIN, fn, "Invalid window %#x", win);
	raise_on(c, errorcode, fn);
	/* MPI-3.1 §8.3.4: the handler ran and returned. */
	return MPI_SUCCESS;
}

int MPI_File_create_errhandler(MPI_File_errhandler_function *fn, MPI_Errhandler *errhandler)
{
	return errh_create(EH_FILE, (void (*)(void))fn, errhandler, "MPI_File_create_errhandler");
}

int MPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler)
{
	static const char fn[] = "MPI_File_set_errhandler";

	if (file != MPI_FILE_NULL)
		return file_raise(file, mpii_errcode(MPI_ERR_FILE, fn, "Invalid file (no file can be opened)"), fn);
	if (!errh_fits(errhandler, EH_FILE))
		return file_raise(file, mpii_errcode(MPI_ERR_ARG, fn, "Invalid error handler %#x for a file",
						     errhandler), fn);
	mpii_errh_ref(errhandler);
	mpii_errh_unref(__atomic_exchange_n(&file_errh, errhandler, __ATOMIC_ACQ_REL));
	return MPI_SUCCESS;
}

int MPI_File_get_errhandler(MPI_File file, MPI_Errhandler *errhandler)
{
	static const char fn[] = "MPI_File_get_errhandler";

	if (file != MPI_FILE_NULL)
		return file_raise(file, mpii_errcode(MPI_ERR_FILE, fn, "Invalid file (no file can be opened)"), fn);
	if (!errhandler)
		return file_raise(file, mpii_errcode(MPI_ERR_ARG, fn, "Null pointer in parameter errhandler"), fn);
	*errhandler = __atomic_load_n(&file_errh, __ATOMIC_ACQUIRE);
	mpii_errh_ref(*errhandler);
	return MPI_SUCCESS;
}

int MPI_File_call_errhandler(MPI_File fh, int errorcode)
{
	static const char fn[] = "MPI_File_call_errhandler";

	if (fh != MPI_FILE_NULL)
		return file_raise(fh, mpii_errcode(MPI_ERR_FILE, fn, "Invalid file (no file can be opened)"), fn);
	file_raise(fh, errorcode, fn);
	return MPI_SUCCESS;
}

/* --- argument checks ----------------------------------------------------------------------------- */

int mpii_check_comm(MPI_Comm h, const char *fn, struct mpi_comm **out)
{
	struct mpi_comm *c = mpii_comm_get(h);

	*out = c;
	if (c)
		return MPI_SUCCESS;
	/*
	 * The communicator cannot say how to report: COMM_WORLD's handler
	 * does.  Never MPI_SUCCESS, even if a handler of the program's cleared
	 * the code: the caller has no communicator to go on with.
	 */
	int e = h == MPI_COMM_NULL ? mpii_err(NULL, MPI_ERR_COMM, fn, "Null communicator")
				   : mpii_err(NULL, MPI_ERR_COMM, fn, "Invalid communicator %#x", h);
	return e != MPI_SUCCESS ? e : MPI_ERR_COMM;
}

int mpii_check_count(struct mpi_comm *c, int count, const char *fn)
{
	if (count < 0)
		return mpii_err(c, MPI_ERR_COUNT, fn, "Negative count, value is %d", count);
	return MPI_SUCCESS;
}

int mpii_check_type(struct mpi_comm *c, MPI_Datatype dt, const char *fn)
{
	if (dt == MPI_DATATYPE_NULL)
		return mpii_err(c, MPI_ERR_TYPE, fn, "Datatype is MPI_DATATYPE_NULL");
	if (!mpii_type_valid(dt))
		return mpii_err(c, MPI_ERR_TYPE, fn, "Invalid datatype %#x", dt);
	if (!mpii_type_committed(dt))
		return mpii_err(c, MPI_ERR_TYPE, fn, "Datatype %#x has not been committed", dt);
	return MPI_SUCCESS;
}

int mpii_check_buf(struct mpi_comm *c, const void *buf, int count, MPI_Datatype dt, const char *fn)
{
	/*
	 * MPI_BOTTOM (NULL) is a valid buffer for a datatype of absolute
	 * addresses; with one whose data starts at its origin it is a null
	 * pointer.
	 */
	if (!buf && count > 0 && mpii_type_size(dt) > 0 && mpii_type_true_lb(dt) == 0)
		return mpii_err(c, MPI_ERR_BUFFER, fn, "Null buffer pointer");
	return MPI_SUCCESS;
}

int mpii_check_rank(struct mpi_comm *c, int rank, int any_ok, const char *fn)
{
	int n = mpii_comm_peers(c);

	if ((rank >= 0 && rank < n) || rank == MPI_PROC_NULL || (any_ok && rank == MPI_ANY_SOURCE))
		return MPI_SUCCESS;
	return mpii_err(c, MPI_ERR_RANK, fn, "Invalid rank has value %d but must be nonnegative and less than %d", rank,
			n);
}

int mpii_check_tag(struct mpi_comm *c, int tag, int any_ok, const char *fn)
{
	if ((tag >= 0 && tag <= MPII_TAG_UB) || (any_ok && tag == MPI_ANY_TAG))
		return MPI_SUCCESS;
	return mpii_err(c, MPI_ERR_TAG, fn, "Invalid tag, value is %d", tag);
}

int mpii_check_root(struct mpi_comm *c, int root, const char *fn)
{
	if (mpii_comm_inter(c)) {
		if (root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < c->rgroup->size))
			return MPI_SUCCESS;
	} else if (root >= 0 && root < c->size) {
		return MPI_SUCCESS;
	}
	return mpii_err(c, MPI_ERR_ROOT, fn, "Invalid root (value given was %d)", root);
}

int mpii_check_op(struct mpi_comm *c, MPI_Op op, const char *fn)
{
	if (op == MPI_OP_NULL)
		return mpii_err(c, MPI_ERR_OP, fn, "Null MPI_Op");
	if (!mpii_op_valid(op))
		return mpii_err(c, MPI_ERR_OP, fn, "Invalid MPI_Op %#x", op);
	return MPI_SUCCESS;
}
