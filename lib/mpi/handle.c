/*
 * The object tables behind MPI's handles (mpiimpl.h): per kind, chunks of
 * CHUNK slots found through a directory, so that a chunk never moves once
 * made and a handle is looked up without a lock (every call of every
 * program does it, several times).  Making and freeing handles takes the
 * table's lock.  The index freed last is the next one used, as MPICH
 * does: programs written against it, MPICH's own tests among them, pass a
 * handle just freed to the next constructor and expect it to name the new
 * object (datatype/indexed_misc).
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
#define CHUNK 1024
#define CHUNKS 1024		/* a million handles of each kind */
#define FREE_SLOT ((void *)1)	/* freed, waiting to be used again */

struct table {
	void **dir[CHUNKS];
	volatile unsigned n;	/* indices in use so far (high mark) */
	unsigned *freelist;	/* freed indices, a stack */
	unsigned nfree, fcap;
};

static struct table tabs[NKINDS];

/* The slot of index i, its chunk made if need be (lock held); NULL: no memory or no room. */
static void **slot(struct table *t, unsigned i)
{
	unsigned c = i / CHUNK;

	if (c >= CHUNKS)
		return NULL;
	if (!t->dir[c]) {
		void **chunk = calloc(CHUNK, sizeof *chunk);
		if (!chunk)
			return NULL;
		__atomic_store_n(&t->dir[c], chunk, __ATOMIC_RELEASE);
	}
	return &t->dir[c][i % CHUNK];
}

int mpii_obj_set(int kind, unsigned index, void *obj)
{
	struct table *t = &tabs[kind];
	void **s;

	if (kind <= 0 || kind >= NKINDS)
		return -1;
	TAB_LOCK();
	s = slot(t, index);
	if (s) {
		*s = obj;
		if (index >= t->n)
			t->n = index + 1;
	}
	TAB_UNLOCK();
	return s ? 0 : -1;
}

int mpii_obj_new(int kind, void *obj)
{
	struct table *t = &tabs[kind];
	unsigned i;
	void **s;

	if (kind <= 0 || kind >= NKINDS)
		return -1;
	TAB_LOCK();
	if (t->nfree) {
		i = t->freelist[--t->nfree];
	} else {
		/* Index 0 is the null handle; a message's 1 is MPI_MESSAGE_NO_PROC. */
		i = t->n ? t->n : kind == NOW_MPI_KMSG ? 2 : 1;
		if (!slot(t, i)) {
			TAB_UNLOCK();
			return -1;
		}
		t->n = i + 1;
	}
	s = slot(t, i);
	__atomic_store_n(s, obj, __ATOMIC_RELEASE);
	TAB_UNLOCK();
	return NOW_MPI_H(kind, i);
}

void *mpii_obj_get(int kind, int h)
{
	unsigned i = MPII_INDEX(h);

	if (kind <= 0 || kind >= NKINDS || (int)MPII_KIND(h) != kind || (unsigned)h >> 30)
		return NULL;
	struct table *t = &tabs[kind];
	if (i == 0 || i >= t->n)
		return NULL;
	void **chunk = __atomic_load_n(&t->dir[i / CHUNK], __ATOMIC_ACQUIRE);
	if (!chunk)
		return NULL;
	void *o = __atomic_load_n(&chunk[i % CHUNK], __ATOMIC_ACQUIRE);
	return o == FREE_SLOT ? NULL : o;
}

void mpii_obj_free(int kind, int h)
{
	struct table *t = &tabs[kind];
	unsigned i = MPII_INDEX(h);

	if (!mpii_obj_get(kind, h))
		return;
	TAB_LOCK();
	__atomic_store_n(slot(t, i), FREE_SLOT, __ATOMIC_RELEASE);
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
