/*
 * Included first in every file of the kernel image (the Makefile's
 * -include).  The kernel is built -ffreestanding, which also keeps the
 * compiler from taking memcpy, memset and memcmp for what they are: every
 * copy of a 6-byte MAC or a 32-byte header became a call to picolibc's
 * general routine (about 30 instructions for 6 bytes, measured by make
 * cost).  Named as builtins, small copies of a known size are a few moves
 * inline, and the rest are still calls to picolibc.
 */
#ifndef KERNEL_BUILTINS_H
#define KERNEL_BUILTINS_H

#include <string.h>

#define memcpy(d, s, n) __builtin_memcpy((d), (s), (n))
#define memset(d, c, n) __builtin_memset((d), (c), (n))
#define memcmp(a, b, n) __builtin_memcmp((a), (b), (n))

#endif
