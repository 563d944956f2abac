/*
 * Keyvals and attributes (MPI-3.1 §6.7) of communicators, datatypes and
 * windows.
 *
 * A keyval is counted (§6.7.2): the program's reference until it frees
 * the keyval, and one per attribute using it; it lives, its handle valid,
 * until the last goes, so an attribute whose keyval the program freed
 * still has its callbacks run.
 *
 * An object's attributes are a list, newest first: MPI_Comm_free and
 * MPI_Finalize delete them in that order, the reverse of their setting
 * (§8.7.1 wants it for MPI_COMM_SELF), and a dup copies them in it.
 *
 * The predefined attributes of a communicator (§8.1.2) are not on any
 * list: MPI_Comm_get_attr answers them from this file's variables.
 */
#include <stdlib.h>

#include "lib/mpi/mpiimpl.h"

struct keyval {
	int refs;
	int freed;			/* the program's reference is gone */
	int kind;			/* NOW_MPI_KCOMM, _KTYPE or _KWIN */
	int handle;
	/* The three kinds' callbacks differ only in the object handle's type, an int for all. */
	MPI_Comm_copy_attr_function *copy;
	MPI_Comm_delete_attr_function *del;
	void *extra;
};

struct mpi_attr {
	struct mpi_attr *next;
	struct keyval *kv;
	void *val;
};

/* --- the predefined callbacks ----------------------------------------------------------- */

int now_mpi_null_copy_fn(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
	(void)comm, (void)keyval, (void)extra, (void)in, (void)out;
	*flag = 0;
	return MPI_SUCCESS;
}

int now_mpi_dup_fn(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
	(void)comm, (void)keyval, (void)extra;
	*(void **)out = in;
	*flag = 1;
	return MPI_SUCCESS;
}

int now_mpi_null_delete_fn(MPI_Comm comm, int keyval, void *val, void *extra)
{
	(void)comm, (void)keyval, (void)val, (void)extra;
	return MPI_SUCCESS;
}

/* --- the predefined attributes of a communicator ---------------------------------------- */

static int tag_ub = MPII_TAG_UB;
static int host = MPI_PROC_NULL;	/* no rank is a host apart from the others */
/*
 * No rank can do I/O through MPI-IO (no file can be opened on a node),
 * so none is named.
 */
static int io = MPI_PROC_NULL;
/* Each node's clock is its own TSC, not synchronized with the others'. */
static int wtime_is_global;
static int universe_size, appnum, lastusedcode;

/* The value of a predefined key, or NULL if keyval is none. */
static int *predefined(int keyval)
{
	switch (keyval) {
	case MPI_TAG_UB:
		return &tag_ub;
	case MPI_HOST:
		return &host;
	case MPI_IO:
		return &io;
	case MPI_WTIME_IS_GLOBAL:
		return &wtime_is_global;
	case MPI_UNIVERSE_SIZE:
		/* Every node booted is in the job: no more processes can come. */
		universe_size = mpii_world_size;
		return &universe_size;
	case MPI_APPNUM:
		return &appnum;
	case MPI_LASTUSEDCODE:
		lastusedcode = mpii_err_lastused();
		return &lastusedcode;
	}
	return NULL;
}

static int win_predefined(int keyval)
{
	return keyval == MPI_WIN_BASE || keyval == MPI_WIN_SIZE || keyval == MPI_WIN_DISP_UNIT ||
	       keyval == MPI_WIN_CREATE_FLAVOR || keyval == MPI_WIN_MODEL;
}

/* --- keyvals ------------------------------------------------------------------------------ */

static void kv_unref(struct keyval *kv)
{
	if (__atomic_sub_fetch(&kv->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		mpii_obj_free(NOW_MPI_KKEYVAL, kv->handle);
		free(kv);
	}
}

static const char *kind_name(int kind)
{
	return kind == NOW_MPI_KCOMM ? "communicator" : kind == NOW_MPI_KTYPE ? "datatype" : "window";
}

static int keyval_create(int kind, MPI_Comm_copy_attr_function *copy, MPI_Comm_delete_attr_function *del,
			 int *keyval, void *extra, const char *fn)
{
	if (!keyval)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Null pointer in parameter keyval");
	struct keyval *kv = malloc(sizeof *kv);
	int h = kv ? mpii_obj_new(NOW_MPI_KKEYVAL, kv) : -1;
	if (h < 0) {
		free(kv);
		return mpii_err(NULL, MPI_ERR_NO_MEM, fn, "no memory for a keyval");
	}
	kv->refs = 1;
	kv->freed = 0;
	kv->kind = kind;
	kv->handle = h;
	kv->copy = copy;
	kv->del = del;
	kv->extra = extra;
	*keyval = h;
	return MPI_SUCCESS;
}

/* The keyval of kind behind h, or NULL with the error reported on c. */
static struct keyval *keyval_arg(struct mpi_comm *c, int kind, int h, const char *fn, int *err)
{
	struct keyval *kv = mpii_obj_get(NOW_MPI_KKEYVAL, h);

	if (!kv)
		*err = mpii_err(c, MPI_ERR_KEYVAL, fn, "Invalid keyval %#x", h);
	else if (kv->kind != kind)
		*err = mpii_err(c, MPI_ERR_KEYVAL, fn, "Keyval %#x was made for a %s, not a %s", h, kind_name(kv->kind),
				kind_name(kind));
	else
		return kv;
	return NULL;
}

static int keyval_free(int kind, int *keyval, const char *fn)
{
	int err;

	if (!keyval)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Null pointer in parameter keyval");
	if ((kind == NOW_MPI_KCOMM && predefined(*keyval)) || (kind == NOW_MPI_KWIN && win_predefined(*keyval)))
		return mpii_err(NULL, MPI_ERR_KEYVAL, fn, "Keyval %#x is predefined: it cannot be freed", *keyval);
	struct keyval *kv = keyval_arg(NULL, kind, *keyval, fn, &err);
	if (!kv)
		return err;
	/*
	 * Freeing again while attributes keep the keyval is harmless, as in
	 * MPICH (a delete callback that frees its keyval: attr/keyval_double_free).
	 */
	if (!__atomic_exchange_n(&kv->freed, 1, __ATOMIC_ACQ_REL))
		kv_unref(kv);
	*keyval = MPI_KEYVAL_INVALID;
	return MPI_SUCCESS;
}

/* --- attribute lists ------------------------------------------------------------------------- */

/* A callback's failure as a code of the class it returned (MPI_ERR_UNKNOWN for a value that is none). */
static int callback_error(int rc, const char *what, const struct keyval *kv, const char *fn)
{
	return mpii_errcode(mpii_err_class(rc), fn, "The attribute %s callback of keyval %#x returned %d", what,
			    kv->handle, rc);
}

static int call_delete(struct mpi_attr *a, int h, const char *fn)
{
	if (!a->kv->del)
		return MPI_SUCCESS;
	int rc = a->kv->del(h, a->kv->handle, a->val, a->kv->extra);
	return rc == MPI_SUCCESS ? MPI_SUCCESS : callback_error(rc, "delete", a->kv, fn);
}

static struct mpi_attr *find(struct mpi_attr *list, const struct keyval *kv)
{
	while (list && list->kv != kv)
		list = list->next;
	return list;
}

/* Set, get and delete on one object's list; errors are reported on c (NULL: COMM_WORLD). */
static int set_attr(struct mpi_attr **list, struct keyval *kv, int h, void *val, struct mpi_comm *c, const char *fn)
{
	struct mpi_attr *a = find(*list, kv);

	if (a) {
		/* The old value goes through its delete callback first (§6.7.2); if that fails it stays. */
		int err = call_delete(a, h, fn);
		if (err)
			return mpii_err_raise(c, err);
		a->val = val;
		return MPI_SUCCESS;
	}
	if (!(a = malloc(sizeof *a)))
		return mpii_err(c, MPI_ERR_NO_MEM, fn, "no memory for an attribute");
	a->kv = kv;
	a->val = val;
	a->next = *list;
	__atomic_add_fetch(&kv->refs, 1, __ATOMIC_RELAXED);
	*list = a;
	return MPI_SUCCESS;
}

static int get_attr(struct mpi_attr *list, struct keyval *kv, void *val, int *flag, struct mpi_comm *c,
		    const char *fn)
{
	if (!val || !flag)
		return mpii_err(c, MPI_ERR_ARG, fn, "Null pointer in parameter %s", val ? "flag" : "attribute_val");
	struct mpi_attr *a = find(list, kv);
	*flag = a != NULL;
	if (a)
		*(void **)val = a->val;
	return MPI_SUCCESS;
}

static int delete_attr(struct mpi_attr **list, struct keyval *kv, int h, struct mpi_comm *c, const char *fn)
{
	struct mpi_attr *a = find(*list, kv);

	if (!a)
		return mpii_err(c, MPI_ERR_KEYVAL, fn, "No attribute for keyval %#x", kv->handle);
	/* A delete callback that fails keeps the attribute (MPICH's attr/attrerr). */
	int err = call_delete(a, h, fn);
	if (err)
		return mpii_err_raise(c, err);
	for (struct mpi_attr **p = list; *p; p = &(*p)->next)
		if (*p == a) {
			*p = a->next;
			break;
		}
	kv_unref(a->kv);
	free(a);
	return MPI_SUCCESS;
}

int mpii_attr_dup_all(struct mpi_attr **dst, struct mpi_attr *src, int kind, int oldh, int newh)
{
	const char *fn = kind == NOW_MPI_KTYPE ? "MPI_Type_dup" : "MPI_Comm_dup";
	struct mpi_attr **tail = dst;

	/* A copy callback is told the old object only (MPI-3.1 §6.7.2). */
	(void)newh;
	while (*tail)
		tail = &(*tail)->next;
	for (struct mpi_attr *a = src; a; a = a->next) {
		void *out = NULL;
		int flag = 0;
		if (!a->kv->copy)
			continue;
		int rc = a->kv->copy(oldh, a->kv->handle, a->kv->extra, a->val, &out, &flag);
		if (rc != MPI_SUCCESS)
			return callback_error(rc, "copy", a->kv, fn);
		if (!flag)
			continue;
		struct mpi_attr *n = malloc(sizeof *n);
		if (!n)
			return mpii_errcode(MPI_ERR_NO_MEM, fn, "no memory for an attribute");
		n->kv = a->kv;
		n->val = out;
		n->next = NULL;
		__atomic_add_fetch(&a->kv->refs, 1, __ATOMIC_RELAXED);
		*tail = n;
		tail = &n->next;
	}
	return MPI_SUCCESS;
}

int mpii_attr_free_all(struct mpi_attr **list, int kind, int h)
{
	const char *fn = kind == NOW_MPI_KCOMM ? "MPI_Comm_free" : kind == NOW_MPI_KTYPE ? "MPI_Type_free" : "MPI_Win_free";
	struct mpi_attr *a = *list, **kept = list;
	int first = MPI_SUCCESS;

	/*
	 * Off the object first: a callback may look at or change the object's
	 * attributes meanwhile.  An attribute whose callback fails goes back.
	 */
	*list = NULL;
	while (a) {
		struct mpi_attr *next = a->next;
		int err = call_delete(a, h, fn);
		if (err) {
			if (first == MPI_SUCCESS)
				first = err;
			while (*kept)
				kept = &(*kept)->next;
			a->next = NULL;
			*kept = a;
		} else {
			kv_unref(a->kv);
			free(a);
		}
		a = next;
	}
	return first;
}

/* --- communicators ------------------------------------------------------------------------------ */

int MPI_Comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
			   MPI_Comm_delete_attr_function *comm_delete_attr_fn, int *comm_keyval, void *extra_state)
{
	return keyval_create(NOW_MPI_KCOMM, comm_copy_attr_fn, comm_delete_attr_fn, comm_keyval, extra_state,
			     "MPI_Comm_create_keyval");
}

int MPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval, void *extra_state)
{
	return keyval_create(NOW_MPI_KCOMM, copy_fn, delete_fn, keyval, extra_state, "MPI_Keyval_create");
}

int MPI_Comm_free_keyval(int *comm_keyval)
{
	return keyval_free(NOW_MPI_KCOMM, comm_keyval, "MPI_Comm_free_keyval");
}

int MPI_Keyval_free(int *keyval)
{
	return keyval_free(NOW_MPI_KCOMM, keyval, "MPI_Keyval_free");
}

static int comm_set(MPI_Comm comm, int keyval, void *val, const char *fn)
{
	struct mpi_comm *c;
	struct keyval *kv;
	int err;

	if ((err = mpii_check_comm(comm, fn, &c)))
		return err;
	if (predefined(keyval))
		return mpii_err(c, MPI_ERR_KEYVAL, fn, "Keyval %#x is predefined: its attribute cannot be set", keyval);
	if (!(kv = keyval_arg(c, NOW_MPI_KCOMM, keyval, fn, &err)))
		return err;
	return set_attr(&c->attrs, kv, comm, val, c, fn);
}

static int comm_get(MPI_Comm comm, int keyval, void *val, int *flag, const char *fn)
{
	struct mpi_comm *c;
	struct keyval *kv;
	int err, *p;

	if ((err = mpii_check_comm(comm, fn, &c)))
		return err;
	if ((p = predefined(keyval))) {
		if (!val || !flag)
			return mpii_err(c, MPI_ERR_ARG, fn, "Null pointer in parameter %s", val ? "flag" : "attribute_val");
		/* MPI-3.1 §8.1.2: a pointer to the value. */
		*(int **)val = p;
		*flag = 1;
		return MPI_SUCCESS;
	}
	if (!(kv = keyval_arg(c, NOW_MPI_KCOMM, keyval, fn, &err)))
		return err;
	return get_attr(c->attrs, kv, val, flag, c, fn);
}

static int comm_delete(MPI_Comm comm, int keyval, const char *fn)
{
	struct mpi_comm *c;
	struct keyval *kv;
	int err;

	if ((err = mpii_check_comm(comm, fn, &c)))
		return err;
	if (predefined(keyval))
		return mpii_err(c, MPI_ERR_KEYVAL, fn, "Keyval %#x is predefined: its attribute cannot be deleted",
				keyval);
	if (!(kv = keyval_arg(c, NOW_MPI_KCOMM, keyval, fn, &err)))
		return err;
	return delete_attr(&c->attrs, kv, comm, c, fn);
}

int MPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void *attribute_val)
{
	return comm_set(comm, comm_keyval, attribute_val, "MPI_Comm_set_attr");
}

int MPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val)
{
	return comm_set(comm, keyval, attribute_val, "MPI_Attr_put");
}

int MPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag)
{
	return comm_get(comm, comm_keyval, attribute_val, flag, "MPI_Comm_get_attr");
}

int MPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
	return comm_get(comm, keyval, attribute_val, flag, "MPI_Attr_get");
}

int MPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval)
{
	return comm_delete(comm, comm_keyval, "MPI_Comm_delete_attr");
}

int MPI_Attr_delete(MPI_Comm comm, int keyval)
{
	return comm_delete(comm, keyval, "MPI_Attr_delete");
}

/* --- datatypes ---------------------------------------------------------------------------------- */

/* The attribute list and keyval of a datatype call, or NULL with the error reported. */
static struct mpi_attr **type_args(MPI_Datatype dt, int keyval, struct keyval **kv, const char *fn, int *err)
{
	struct mpi_attr **list = mpii_type_attrs(dt);

	if (!list) {
		*err = mpii_err(NULL, MPI_ERR_TYPE, fn, dt == MPI_DATATYPE_NULL ? "Datatype is MPI_DATATYPE_NULL" :
										   "Invalid datatype %#x", dt);
		return NULL;
	}
	return (*kv = keyval_arg(NULL, NOW_MPI_KTYPE, keyval, fn, err)) ? list : NULL;
}

int MPI_Type_create_keyval(MPI_Type_copy_attr_function *type_copy_attr_fn,
			   MPI_Type_delete_attr_function *type_delete_attr_fn, int *type_keyval, void *extra_state)
{
	return keyval_create(NOW_MPI_KTYPE, type_copy_attr_fn, type_delete_attr_fn, type_keyval, extra_state,
			     "MPI_Type_create_keyval");
}

int MPI_Type_free_keyval(int *type_keyval)
{
	return keyval_free(NOW_MPI_KTYPE, type_keyval, "MPI_Type_free_keyval");
}

int MPI_Type_set_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val)
{
	static const char fn[] = "MPI_Type_set_attr";
	struct keyval *kv;
	int err;
	struct mpi_attr **list = type_args(datatype, type_keyval, &kv, fn, &err);

	return list ? set_attr(list, kv, datatype, attribute_val, NULL, fn) : err;
}

int MPI_Type_get_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val, int *flag)
{
	static const char fn[] = "MPI_Type_get_attr";
	struct keyval *kv;
	int err;
	struct mpi_attr **list = type_args(datatype, type_keyval, &kv, fn, &err);

	return list ? get_attr(*list, kv, attribute_val, flag, NULL, fn) : err;
}

int MPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval)
{
	static const char fn[] = "MPI_Type_delete_attr";
	struct keyval *kv;
	int err;
	struct mpi_attr **list = type_args(datatype, type_keyval, &kv, fn, &err);

	return list ? delete_attr(list, kv, datatype, NULL, fn) : err;
}

/* --- windows ------------------------------------------------------------------------------------ */

int MPI_Win_create_keyval(MPI_Win_copy_attr_function *win_copy_attr_fn,
			  MPI_Win_delete_attr_function *win_delete_attr_fn, int *win_keyval, void *extra_state)
{
	return keyval_create(NOW_MPI_KWIN, win_copy_attr_fn, win_delete_attr_fn, win_keyval, extra_state,
			     "MPI_Win_create_keyval");
}

int MPI_Win_free_keyval(int *win_keyval)
{
	return keyval_free(NOW_MPI_KWIN, win_keyval, "MPI_Win_free_keyval");
}

/*
 * Windows (win.c): the predefined attributes (MPI_WIN_BASE...) come from
 * the window itself; a keyval's own live on the window's list.
 */
static struct mpi_attr **win_args(MPI_Win win, int keyval, struct keyval **kv, struct mpi_comm **c,
				  const char *fn, int *err)
{
	struct mpi_attr **list = mpii_win_attrs(win);

	if (!list) {
		*err = mpii_err_win(win, MPI_ERR_WIN, fn, "Invalid window %#x", win);
		return NULL;
	}
	*c = mpii_win_comm(win);
	return (*kv = keyval_arg(*c, NOW_MPI_KWIN, keyval, fn, err)) ? list : NULL;
}

int MPI_Win_set_attr(MPI_Win win, int win_keyval, void *attribute_val)
{
	static const char fn[] = "MPI_Win_set_attr";
	struct keyval *kv;
	struct mpi_comm *c = NULL;
	int err;

	if (win_predefined(win_keyval) && mpii_win_comm(win))
		return mpii_err(mpii_win_comm(win), MPI_ERR_KEYVAL, fn,
				"Keyval %#x is predefined: its attribute cannot be set", win_keyval);
	struct mpi_attr **list = win_args(win, win_keyval, &kv, &c, fn, &err);
	return list ? set_attr(list, kv, win, attribute_val, c, fn) : err;
}

int MPI_Win_get_attr(MPI_Win win, int win_keyval, void *attribute_val, int *flag)
{
	static const char fn[] = "MPI_Win_get_attr";
	struct keyval *kv;
	struct mpi_comm *c = NULL;
	int err;

	if (!attribute_val || !flag)
		return mpii_err(mpii_win_comm(win), MPI_ERR_ARG, fn, "Null pointer argument");
	int r = mpii_win_attr(win, win_keyval, attribute_val, flag);
	if (r < 0)
		return mpii_err_win(win, MPI_ERR_WIN, fn, "Invalid window %#x", win);
	if (r > 0)
		return MPI_SUCCESS;
	struct mpi_attr **list = win_args(win, win_keyval, &kv, &c, fn, &err);
	return list ? get_attr(*list, kv, attribute_val, flag, c, fn) : err;
}

int MPI_Win_delete_attr(MPI_Win win, int win_keyval)
{
	static const char fn[] = "MPI_Win_delete_attr";
	struct keyval *kv;
	struct mpi_comm *c = NULL;
	int err;

	if (win_predefined(win_keyval) && mpii_win_comm(win))
		return mpii_err(mpii_win_comm(win), MPI_ERR_KEYVAL, fn,
				"Keyval %#x is predefined: its attribute cannot be deleted", win_keyval);
	struct mpi_attr **list = win_args(win, win_keyval, &kv, &c, fn, &err);
	return list ? delete_attr(list, kv, win, c, fn) : err;
}
