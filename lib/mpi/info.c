/*
 * Info objects (MPI-3.1 §9): (key, value) strings in the order they were
 * set, which MPI_Info_get_nthkey follows.  They work before MPI_Init and
 * after MPI_Finalize, as MPI-4.0 allows (MPICH's info/info_no_init): they
 * need nothing but the handle table.
 *
 * MPI_INFO_ENV (§10.2) holds what a node knows of how the job started:
 * its "maxprocs", the world's size, once MPI_Init has run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/sync.h"
#include "lib/mpi/mpiimpl.h"

struct entry {
	struct entry *next;
	char *key, *value;
};

struct mpi_info {
	struct entry *head, **tail;
	int n;
};

static struct mpi_info env = { NULL, &env.head, 0 };
static struct mutex env_lock = MUTEX_INIT;
static int env_registered, env_maxprocs;

static struct entry *lookup(const struct mpi_info *in, const char *key)
{
	struct entry *e = in->head;

	while (e && strcmp(e->key, key) != 0)
		e = e->next;
	return e;
}

/* Set key to value (copied).  0, or -1: no memory. */
static int put(struct mpi_info *in, const char *key, const char *value)
{
	struct entry *e = lookup(in, key);
	char *v = strdup(value);

	if (!v)
		return -1;
	if (e) {
		free(e->value);
		e->value = v;
		return 0;
	}
	if (!(e = malloc(sizeof *e)) || !(e->key = strdup(key))) {
		free(e);
		free(v);
		return -1;
	}
	e->value = v;
	e->next = NULL;
	*in->tail = e;
	in->tail = &e->next;
	in->n++;
	return 0;
}

/*
 * MPI_INFO_ENV takes its fixed handle before any info is made (the table
 * would give its index to the first MPI_Info_create, which may come before
 * MPI_Init); its "maxprocs" comes once MPI_Init knows the world.
 */
static void env_setup(void)
{
	mutex_lock(&env_lock);
	if (!env_registered)
		env_registered = mpii_obj_set(NOW_MPI_KINFO, MPII_INDEX(MPI_INFO_ENV), &env) == 0;
	if (mpii_world_size > 0 && !env_maxprocs) {
		char n[16];
		snprintf(n, sizeof n, "%d", mpii_world_size);
		env_maxprocs = put(&env, "maxprocs", n) == 0;
	}
	mutex_unlock(&env_lock);
}

static struct mpi_info *info_arg(MPI_Info h, const char *fn, int *err)
{
	env_setup();
	struct mpi_info *in = mpii_obj_get(NOW_MPI_KINFO, h);
	if (!in)
		*err = mpii_err(NULL, MPI_ERR_INFO, fn, h == MPI_INFO_NULL ? "Null MPI_Info" : "Invalid MPI_Info %#x", h);
	return in;
}

/* An info the call may change (not MPI_INFO_ENV). */
static struct mpi_info *info_mutable(MPI_Info h, const char *fn, int *err)
{
	struct mpi_info *in = info_arg(h, fn, err);

	if (in == &env) {
		*err = mpii_err(NULL, MPI_ERR_INFO, fn, "MPI_INFO_ENV cannot be changed");
		return NULL;
	}
	return in;
}

static int key_check(const char *key, const char *fn)
{
	if (!key)
		return mpii_err(NULL, MPI_ERR_INFO_KEY, fn, "Null key");
	size_t n = strlen(key);
	if (n == 0)
		return mpii_err(NULL, MPI_ERR_INFO_KEY, fn, "Empty key");
	if (n >= MPI_MAX_INFO_KEY)
		return mpii_err(NULL, MPI_ERR_INFO_KEY, fn, "Key of %zu characters, more than MPI_MAX_INFO_KEY (%d) - 1",
				n, MPI_MAX_INFO_KEY);
	return MPI_SUCCESS;
}

/* A new empty info and its handle in *h, or NULL with the error reported. */
static struct mpi_info *info_new(MPI_Info *h, const char *fn, int *err)
{
	struct mpi_info *in = calloc(1, sizeof *in);

	env_setup();
	if (!in || (*h = mpii_obj_new(NOW_MPI_KINFO, in)) < 0) {
		free(in);
		*h = MPI_INFO_NULL;
		*err = mpii_err(NULL, MPI_ERR_NO_MEM, fn, "no memory for an info object");
		return NULL;
	}
	in->tail = &in->head;
	return in;
}

static void clear(struct mpi_info *in)
{
	struct entry *e = in->head;

	while (e) {
		struct entry *next = e->next;
		free(e->key);
		free(e->value);
		free(e);
		e = next;
	}
	in->head = NULL;
	in->tail = &in->head;
	in->n = 0;
}

int MPI_Info_create(MPI_Info *info)
{
	int err = MPI_SUCCESS;

	if (!info)
		return mpii_err(NULL, MPI_ERR_ARG, "MPI_Info_create", "Null pointer in parameter info");
	info_new(info, "MPI_Info_create", &err);
	return err;
}

int MPI_Info_free(MPI_Info *info)
{
	static const char fn[] = "MPI_Info_free";
	int err;

	if (!info)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Null pointer in parameter info");
	struct mpi_info *in = info_mutable(*info, fn, &err);
	if (!in)
		return err;
	clear(in);
	mpii_obj_free(NOW_MPI_KINFO, *info);
	free(in);
	*info = MPI_INFO_NULL;
	return MPI_SUCCESS;
}

int MPI_Info_set(MPI_Info info, const char *key, const char *value)
{
	static const char fn[] = "MPI_Info_set";
	int err;
	struct mpi_info *in = info_mutable(info, fn, &err);

	if (!in)
		return err;
	if ((err = key_check(key, fn)))
		return err;
	if (!value)
		return mpii_err(NULL, MPI_ERR_INFO_VALUE, fn, "Null value");
	size_t n = strlen(value);
	if (n == 0 || n >= MPI_MAX_INFO_VAL)
		return mpii_err(NULL, MPI_ERR_INFO_VALUE, fn, "Value of %zu characters (1 to MPI_MAX_INFO_VAL - 1 = %d)", n,
				MPI_MAX_INFO_VAL - 1);
	if (put(in, key, value) < 0)
		return mpii_err(NULL, MPI_ERR_NO_MEM, fn, "no memory for key %s", key);
	return MPI_SUCCESS;
}

int MPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
	static const char fn[] = "MPI_Info_get";
	int err;
	struct mpi_info *in = info_arg(info, fn, &err);

	if (!in)
		return err;
	if ((err = key_check(key, fn)))
		return err;
	if (valuelen < 0)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Invalid argument valuelen, value is %d", valuelen);
	if (!value || !flag)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Null pointer in parameter %s", value ? "flag" : "value");
	struct entry *e = lookup(in, key);
	*flag = e != NULL;
	if (e) {
		/* MPI-3.1 §9: valuelen excludes the terminating null, which always follows. */
		size_t n = strlen(e->value);
		if (n > (size_t)valuelen)
			n = (size_t)valuelen;
		memcpy(value, e->value, n);
		value[n] = 0;
	}
	return MPI_SUCCESS;
}

int MPI_Info_get_string(MPI_Info info, const char *key, int *buflen, char *value, int *flag)
{
	static const char fn[] = "MPI_Info_get_string";
	int err;
	struct mpi_info *in = info_arg(info, fn, &err);

	if (!in)
		return err;
	if ((err = key_check(key, fn)))
		return err;
	if (!buflen || !flag || (*buflen > 0 && !value))
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Null pointer in parameter %s",
				!buflen ? "buflen" : !flag ? "flag" : "value");
	struct entry *e = lookup(in, key);
	*flag = e != NULL;
	if (!e)
		return MPI_SUCCESS;
	/* MPI-4.0 §10: buflen counts the null; on return it is the whole value's. */
	size_t n = strlen(e->value);
	if (*buflen > 0) {
		size_t k = n < (size_t)*buflen - 1 ? n : (size_t)*buflen - 1;
		memcpy(value, e->value, k);
		value[k] = 0;
	}
	*buflen = (int)n + 1;
	return MPI_SUCCESS;
}

int MPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag)
{
	static const char fn[] = "MPI_Info_get_valuelen";
	int err;
	struct mpi_info *in = info_arg(info, fn, &err);

	if (!in)
		return err;
	if ((err = key_check(key, fn)))
		return err;
	if (!valuelen || !flag)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Null pointer in parameter %s", valuelen ? "flag" : "valuelen");
	struct entry *e = lookup(in, key);
	*flag = e != NULL;
	if (e)
		*valuelen = (int)strlen(e->value);
	return MPI_SUCCESS;
}

int MPI_Info_delete(MPI_Info info, const char *key)
{
	static const char fn[] = "MPI_Info_delete";
	int err;
	struct mpi_info *in = info_mutable(info, fn, &err);

	if (!in)
		return err;
	if ((err = key_check(key, fn)))
		return err;
	for (struct entry **p = &in->head; *p; p = &(*p)->next) {
		struct entry *e = *p;
		if (strcmp(e->key, key) != 0)
			continue;
		*p = e->next;
		if (in->tail == &e->next)
			in->tail = p;
		in->n--;
		free(e->key);
		free(e->value);
		free(e);
		return MPI_SUCCESS;
	}
	return mpii_err(NULL, MPI_ERR_INFO_NOKEY, fn, "Key %s is not in the info", key);
}

int MPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
	static const char fn[] = "MPI_Info_get_nkeys";
	int err;
	struct mpi_info *in = info_arg(info, fn, &err);

	if (!in)
		return err;
	if (!nkeys)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Null pointer in parameter nkeys");
	*nkeys = in->n;
	return MPI_SUCCESS;
}

int MPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
	static const char fn[] = "MPI_Info_get_nthkey";
	int err;
	struct mpi_info *in = info_arg(info, fn, &err);

	if (!in)
		return err;
	if (n < 0 || n >= in->n)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Invalid key index %d: the info has %d keys", n, in->n);
	if (!key)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Null pointer in parameter key");
	struct entry *e = in->head;
	while (n--)
		e = e->next;
	strcpy(key, e->key);
	return MPI_SUCCESS;
}

int MPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
	static const char fn[] = "MPI_Info_dup";
	int err;
	struct mpi_info *in = info_arg(info, fn, &err), *out;

	if (!in)
		return err;
	if (!newinfo)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Null pointer in parameter newinfo");
	if (!(out = info_new(newinfo, fn, &err)))
		return err;
	for (struct entry *e = in->head; e; e = e->next)
		if (put(out, e->key, e->value) < 0) {
			clear(out);
			mpii_obj_free(NOW_MPI_KINFO, *newinfo);
			free(out);
			*newinfo = MPI_INFO_NULL;
			return mpii_err(NULL, MPI_ERR_NO_MEM, fn, "no memory for the copy");
		}
	return MPI_SUCCESS;
}
