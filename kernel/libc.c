/*
 * picolibc's hooks into the kernel: the retargetable locks its malloc and
 * stdio take (sys/lock.h), and _exit.  Its stdout is in console.c, sbrk in
 * mem.c, and each thread's TLS block (errno) in thread.c.
 */
#include <stdlib.h>
#include <sys/lock.h>

#include "kernel/panic.h"
#include "kernel/sync.h"

struct __lock {
	struct mutex m;
};

/* The lock behind __LIBC_LOCK (malloc, atexit, ...): recursive. */
struct __lock __lock___libc_recursive_mutex = { { 0, 0, 1, WAITQ_INIT } };

void __retarget_lock_init(_LOCK_T *lock)
{
	*lock = malloc(sizeof(struct __lock));
	if (!*lock)
		panic("libc: out of memory for a lock");
	mutex_init(&(*lock)->m, 0);
}

void __retarget_lock_init_recursive(_LOCK_T *lock)
{
	*lock = malloc(sizeof(struct __lock));
	if (!*lock)
		panic("libc: out of memory for a lock");
	mutex_init(&(*lock)->m, 1);
}

void __retarget_lock_close(_LOCK_T lock)
{
	free(lock);
}

void __retarget_lock_close_recursive(_LOCK_T lock)
{
	free(lock);
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

void _exit(int status)
{
	kernel_exit(status);
}
