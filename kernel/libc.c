/*
 * picolibc's hooks into the kernel: the retargetable locks its malloc and
 * stdio take (sys/lock.h), and _exit.  Its stdout is in console.c, sbrk in
 * mem.c, and each thread's TLS block (errno) in thread.c.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/lock.h>

#include "kernel/console.h"
#include "kernel/init.h"
#include "kernel/panic.h"
#include "kernel/sync.h"
#include "kernel/thread.h"

struct __lock {
	struct mutex m;
};

/* The lock behind __LIBC_LOCK (malloc, atexit, ...): recursive. */
struct __lock __lock___libc_recursive_mutex = { { 0, 0, 1, WAITQ_INIT } };

/*
 * A lock that cannot be allocated is the libc lock itself: coarser, never
 * wrong (it is recursive, and one lock cannot be taken in two orders), and
 * no shortage of memory stops the node.
 */
static _LOCK_T lock_new(int recursive)
{
	_LOCK_T l = malloc(sizeof(struct __lock));

	if (!l)
		return &__lock___libc_recursive_mutex;
	mutex_init(&l->m, recursive);
	return l;
}

static void lock_free(_LOCK_T l)
{
	if (l != &__lock___libc_recursive_mutex)
		free(l);
}

void __retarget_lock_init(_LOCK_T *lock)
{
	*lock = lock_new(0);
}

void __retarget_lock_init_recursive(_LOCK_T *lock)
{
	*lock = lock_new(1);
}

void __retarget_lock_close(_LOCK_T lock)
{
	lock_free(lock);
}

void __retarget_lock_close_recursive(_LOCK_T lock)
{
	lock_free(lock);
}

void __retarget_lock_acquire(_LOCK_T lock)
{
	mutex_lock(&lock->m);
}

void __retarget_lock_acquire_recursive(_LOCK_T lock)
{
	mutex_lock(&lock->m);
}

void __retarget_lock_release(_LOCK_T lock)
{
	mutex_unlock(&lock->m);
}

void __retarget_lock_release_recursive(_LOCK_T lock)
{
	mutex_unlock(&lock->m);
}

/* exit() and abort() end here: as the app returning would (kernel/init.h). */
void _exit(int status)
{
	struct thread *t = thread_current();

	console_flush();
	if (t)
		t->conprog = 0;		/* what follows is the kernel's */
	if (status == 128 + SIGABRT)
		printf("now: the program called abort()\n");
	app_finish(status);
}

/*
 * fflush(NULL) flushes every output stream (C11 7.21.5.2); picolibc's
 * fflush reads the stream's flush function through the null pointer.
 * Here it flushes stdout and stderr, the streams a program's output
 * lines are on (a file's stream is flushed by its fclose, and by fflush
 * of that stream); any other stream as picolibc does (its stdio is
 * built without locking).
 */
__attribute__((externally_visible)) int fflush(FILE *f)
{
	if (!f) {
		int a = fflush(stdout), b = fflush(stderr);
		return a || b ? EOF : 0;
	}
	return f->flush ? f->flush(f) : 0;
}
