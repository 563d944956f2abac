/*
 * lwIP port: the compiler and C library (lwIP's arch/cc.h).
 *
 * The kernel builds with picolibc's headers, so lwIP uses them instead of
 * its private copies: errno, struct timeval, fd_set and the fcntl flags
 * are picolibc's, and an app may include those headers next to lwIP's
 * without two definitions of the same thing.
 */
#ifndef LWIP_ARCH_CC_H
#define LWIP_ARCH_CC_H

#include <fcntl.h>		/* O_NONBLOCK, F_GETFL: one value for lwIP and apps */
#include <limits.h>
#include <stdio.h>
#include <sys/time.h>		/* struct timeval, and fd_set via sys/_select.h */
#include <sys/types.h>		/* in_addr_t */

#include "kernel/panic.h"

/* errno is picolibc's (per thread, in TLS) and so are its E* values. */
#define LWIP_ERRNO_STDINCLUDE 1

/* picolibc has ssize_t (long) but no SSIZE_MAX, without which lwIP would
 * make its own ssize_t (int). */
#ifndef SSIZE_MAX
#define SSIZE_MAX LONG_MAX
#endif

/* picolibc's <sys/types.h> typedefs in_addr_t already. */
#define IN_ADDR_T_DEFINED 1

/*
 * x86-64 is little-endian (BYTE_ORDER comes from picolibc's
 * <machine/endian.h>); let the compiler swap bytes.
 */
#define lwip_htons(x) ((u16_t)__builtin_bswap16((u16_t)(x)))
#define lwip_htonl(x) ((u32_t)__builtin_bswap32((u32_t)(x)))

/* Diagnostics go to the console; a failed assertion stops the node. */
#define LWIP_PLATFORM_DIAG(x) do { printf x; } while (0)
#define LWIP_PLATFORM_ASSERT(x) panic("lwip: assertion \"%s\" failed at %s:%d", x, __FILE__, __LINE__)

/* The first ephemeral TCP and UDP ports, so a rebooted node does not
 * reuse the ports of its previous life (sys_arch.c). */
unsigned int lwip_port_rand(void);
#define LWIP_RAND() ((u32_t)lwip_port_rand())

#endif
