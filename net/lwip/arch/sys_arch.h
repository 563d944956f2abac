/*
 * lwIP port: the operating system (lwIP's arch/sys_arch.h), NO_SYS=0 on
 * kernel threads.  See sys_arch.c for the contracts.
 *
 * Semaphores and mutexes are the kernel's, held by value (a netconn embeds
 * its semaphore, so creating one allocates nothing).  A mailbox is a
 * pointer to a bounded ring made by sys_mbox_new.  A critical section
 * (SYS_ARCH_PROTECT) is interrupts off: one CPU, and the receive path that
 * calls into lwIP runs in interrupt context.
 */
#ifndef LWIP_ARCH_SYS_ARCH_H
#define LWIP_ARCH_SYS_ARCH_H

#include <stddef.h>

#include "kernel/sync.h"
#include "kernel/thread.h"
#include "kernel/x86.h"

typedef struct sys_sem {
	struct sem s;
	int valid;
} sys_sem_t;

typedef struct sys_mutex {
	struct mutex m;
	int valid;
} sys_mutex_t;

struct sys_mbox;
typedef struct sys_mbox *sys_mbox_t;

typedef struct thread *sys_thread_t;

#define SYS_MBOX_NULL NULL

#define sys_sem_valid(sem) ((sem) != NULL && (sem)->valid)
#define sys_sem_set_invalid(sem) do { if ((sem) != NULL) (sem)->valid = 0; } while (0)

#define sys_mutex_valid(mu) ((mu) != NULL && (mu)->valid)
#define sys_mutex_set_invalid(mu) do { if ((mu) != NULL) (mu)->valid = 0; } while (0)

#define sys_mbox_valid(mb) ((mb) != NULL && *(mb) != NULL)
#define sys_mbox_set_invalid(mb) do { if ((mb) != NULL) *(mb) = NULL; } while (0)
#define sys_mbox_valid_val(mb) ((mb) != NULL)
#define sys_mbox_set_invalid_val(mb) do { (mb) = NULL; } while (0)

/* Critical sections: interrupts off, nestable (the flags are saved). */
#define SYS_ARCH_DECL_PROTECT(lev) irqflags_t lev
#define SYS_ARCH_PROTECT(lev) do { (lev) = irq_save(); } while (0)
#define SYS_ARCH_UNPROTECT(lev) irq_restore(lev)

#endif
