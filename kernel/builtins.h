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

#ifdef HOST_TEST
/* Host unit tests and fuzzers: the C library's copy, which the sanitizers see. */
#define memcpy_words(d, s, n) memcpy((d), (s), (n))
#define memcpy_upto(d, s, n, max) memcpy((d), (s), (n))
#else
/*
 * A copy of n >= 8 bytes, inline: the whole words by rep movsq, then the
 * last eight (read first: they may overlap the words in dst only).
 */
static inline __attribute__((always_inline)) void memcpy_words(void *d, const void *s, size_t n)
{
	unsigned long tail, words = n / 8;
	void *dd = d;
	const void *ss = s;

	__builtin_memcpy(&tail, (const char *)s + n - 8, 8);
	__asm__ volatile("rep movsq" : "+D"(dd), "+S"(ss), "+c"(words) : : "memory");
	__builtin_memcpy((char *)d + n - 8, &tail, 8);
}

/*
 * A copy of n bytes that is most often at most max: inline up to max (as
 * the compiler copies what it knows to be short: rep movsq and the tail,
 * or a few moves), the general routine beyond.  For the copies of a
 * frame's bytes on paths that carry Ethernet's frames and, on the
 * shared-memory link, longer ones: the short ones keep the inline copy
 * they had when their length was bounded at compile time (make cost).
 */
static inline __attribute__((always_inline)) void memcpy_upto(void *d, const void *s, size_t n,
								 size_t max)
{
	if (__builtin_constant_p(n)) {
		__builtin_memcpy(d, s, n);	/* a known size: the compiler's own moves */
	} else if (__builtin_expect(n > max, 0)) {
		(memcpy)(d, s, n);
	} else if (n >= 8) {
		memcpy_words(d, s, n);
	} else if (n >= 4) {
		unsigned a, b;
		__builtin_memcpy(&a, s, 4);
		__builtin_memcpy(&b, (const char *)s + n - 4, 4);
		__builtin_memcpy(d, &a, 4);
		__builtin_memcpy((char *)d + n - 4, &b, 4);
	} else if (n) {
		/* 1 to 3 bytes: first, middle, last (some the same byte). */
		char a = ((const char *)s)[0], b = ((const char *)s)[n / 2], c = ((const char *)s)[n - 1];
		((char *)d)[0] = a;
		((char *)d)[n / 2] = b;
		((char *)d)[n - 1] = c;
	}
}
#endif

#endif
