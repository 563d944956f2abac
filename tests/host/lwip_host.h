/*
 * Included first in every file of the host build of lwIP (fuzz_lwip):
 * what picolibc's headers give the kernel's build and glibc's do not.
 */
#ifndef TESTS_HOST_LWIP_HOST_H
#define TESTS_HOST_LWIP_HOST_H

#include <stdint.h>

/* picolibc's <sys/types.h> has it, and the port's cc.h says so. */
typedef uint32_t in_addr_t;

#endif
