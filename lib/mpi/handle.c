/*
 * The object tables behind MPI's handles (mpiimpl.h): one growing array
 * of pointers per kind; the index freed last is the next one used, as
 * MPICH does (programs written against it, MPICH's own tests among them,
 * pass a handle just freed to the next constructor and expect it to name
 * the new object: datatype/indexed_misc).
 */
#include <stdlib.h>
#include <string.h>

#include "lib/mpi/mpiimpl.h"

#ifndef HOST_TEST
#include "kernel/sync.h"
/* Any thread may make or free a handle (the receive thread, a collective's worker). */
static struct mutex tab_lock = MUTEX_INIT;
#define TAB_LOCK() mutex_lock(&tab_lock)
#define TAB_UNLOCK() mutex_unlock(&tab_lock)
#else
#define TAB_LOCK() ((void)0)
#define TAB_UNLOCK() ((void)0)
#endif

#define NKINDS 16
#define FREE_SLOT ((void *)1)	/* freed, waiting to be used again */

struct table {
	void **obj;
	unsigned n, cap;	/* indices in use so far (high mark), capacity */
	unsigned *freelist;	/* freed indices, a stack */
	unsigned nfree, fcap;
};

static struct table tabs[NKINDS];

static int grow(struct table *t, unsigned want)
{
	if (want <= t->cap)
		return 0;
	unsigned cap = t->cap ? t->cap : 64;
	while (cap < want)
		cap *= 2;
	if (cap > 0xffffff)
		return -1;
	void **o = realloc(t->obj, cap * sizeof *o);
	if (!o)
		return -1;
	memset(o + t->cap, 0, (cap - t->cap) * sizeof *o);
	t->obj = o;
	t->cap = cap;
	return 0;
}

int mpii_obj_set(int kind, unsigned index, void *obj)
{
	struct table *t = &tabs[kind];
	int r = -1;

	if (kind <= 0 || kind >= NKINDS)
		return -1;
	TAB_LOCK();
	if (grow(t, index + 1) == 0) {
		t->obj[index] = obj;
		if (index >= t->n)
			t->n = index + 1;
		r = 0;
	}
	TAB_UNLOCK();
	return r;
}

int mpii_obj_new(int kind, void *obj)
{
	struct table *t = &tabs[kind];
	unsigned i;

	if (kind <= 0 || kind >= NKINDS)
		return -1;
	TAB_LOCK();
	if (t->nfree) {
		i = t->freelist[--t->nfree];
	} else {
		if (t->n == 0)
			t->n = 1;		/* index 0 is the null handle */
		if (grow(t, t->n + 1) < 0) {
			TAB_UNLOCK();
			return -1;
		}
		i = t->n++;
	}
	t->obj[i] = obj;
	TAB_UNLOCK();
	return NOW_MPI_H(kind, i);
}

void *mpii_obj_get(int kind, int h)
{
	struct table *t = &tabs[kind];
	unsigned i = MPII_INDEX(h);

	if (kind <= 0 || kind >= NKINDS || (int)MPII_KIND(h) != kind || (unsigned)h >> 30)
		return NULL;
	void *o = NULL;
	TAB_LOCK();
	if (i != 0 && i < t->n && t->obj[i] != FREE_SLOT)
		o = t->obj[i];
	TAB_UNLOCK();
	return o;
}

void mpii_obj_free(int kind, int h)
{
	struct table *t = &tabs[kind];
	unsigned i = MPII_INDEX(h);

	if (!mpii_obj_get(kind, h))
		return;
	TAB_LOCK();
	t->obj[i] = FREE_SLOT;
	if (t->nfree == t->fcap) {
		unsigned cap = t->fcap ? t->fcap * 2 : 64;
		unsigned *f = realloc(t->freelist, cap * sizeof *f);
		if (!f) {
			TAB_UNLOCK();
			return;		/* the index is not used again: harmless */
		}
		t->freelist = f;
		t->fcap = cap;
	}
	t->freelist[t->nfree++] = i;
	TAB_UNLOCK();
}
