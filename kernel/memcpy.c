/*
 * memcpy for the node, in place of picolibc's x86-64 one.  picolibc copies
 * anything below 16 bytes, and the last 1 to 7 bytes of anything longer,
 * with rep movsb, and QEMU's TCG spends about as long on an iteration of a
 * rep as on a whole word move: 8 bytes took 16 ns, 12 took 21.  Headers,
 * envelopes and descriptors are such lengths, and the fabric copies each a
 * few times.  Here up to 32 bytes are two or four overlapping moves, and
 * longer copies rep movsq for the words, then one word move for the tail
 * (under TCG an unrolled copy of 33 to 64 bytes was slower than rep movsq).
 * Measured on a node, each call through a pointer, less the loop's own
 * 25 ns (picolibc's in brackets): 8 bytes 3 ns (16), 12: 1 (23), 28: 6
 * (17), 40: 11 (12), 100: 26 (37), 1500: 400 (455).  Under -icount the
 * count grows (two to four moves where rep movsb counted one instruction
 * an iteration) as the time falls.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define MEMCPY_BLOCKS_MIN 256

static inline uint64_t ld8(const uint8_t *p)
{
	uint64_t v;

	__builtin_memcpy(&v, p, 8);
	return v;
}

static inline void st8(uint8_t *p, uint64_t v)
{
	__builtin_memcpy(p, &v, 8);
}

/*
 * QEMU's TCG looks guest addresses up in a direct-mapped TLB indexed by
 * the virtual page number (64 entries at least, a power of two, resized
 * as it goes).  Source and destination pages of the same number modulo
 * its size take the same entry: each access of rep movsq's evicts the
 * other side's, and the copy runs at about 100 MB/s against 1.5 GB/s.
 * Blocks of the buddy allocator are aligned to their size, so two large
 * ones are such twins.  For them the copy goes by 256-byte blocks, all
 * of a block's loads (sixteen xmm registers) before its stores: two
 * misses a block instead of two a word, 7-8 times faster measured; for
 * other copies rep movsq stays.  On hardware the two are alike.  The
 * interrupt entry saves the SSE state (trapasm.S).
 *
 * memcpy_tlb_pages is the TLB's size as far as the kernel knows: QEMU's
 * least until vm_tlb_grow has grown it (kernel/vm.c), then what it grew
 * to, which nothing shrinks.  Pages twins modulo 64 are no longer twins
 * modulo 32768, and the block copy costs them much: two 4 MiB blocks of
 * the allocator (twins modulo 1024) were copied at 2.2 GB/s by blocks
 * against 3.9 GB/s by rep movsq, under TCG on this host (the cost app's
 * 64 KiB copies; make bench's memcpy-4m-aligned beside memcpy-4m).
 */
size_t memcpy_tlb_pages = 64;

static inline int tlb_twins(const void *d, const void *s)
{
	return ((((uintptr_t)d >> 12) - ((uintptr_t)s >> 12)) & (memcpy_tlb_pages - 1)) == 0;
}

typedef char v16 __attribute__((vector_size(16), aligned(1)));

static __attribute__((noinline)) void *copy_blocks(uint8_t *d, const uint8_t *s, size_t n, void *dst)
{
	while (n >= 256) {
		v16 a0 = *(const v16 *)s, a1 = *(const v16 *)(s + 16), a2 = *(const v16 *)(s + 32),
		    a3 = *(const v16 *)(s + 48), a4 = *(const v16 *)(s + 64), a5 = *(const v16 *)(s + 80),
		    a6 = *(const v16 *)(s + 96), a7 = *(const v16 *)(s + 112), a8 = *(const v16 *)(s + 128),
		    a9 = *(const v16 *)(s + 144), a10 = *(const v16 *)(s + 160), a11 = *(const v16 *)(s + 176),
		    a12 = *(const v16 *)(s + 192), a13 = *(const v16 *)(s + 208), a14 = *(const v16 *)(s + 224),
		    a15 = *(const v16 *)(s + 240);
		/* Every load done before the first store. */
		__asm__("" : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3), "+x"(a4), "+x"(a5), "+x"(a6), "+x"(a7));
		__asm__("" : "+x"(a8), "+x"(a9), "+x"(a10), "+x"(a11), "+x"(a12), "+x"(a13), "+x"(a14),
			"+x"(a15));
		*(v16 *)d = a0;
		*(v16 *)(d + 16) = a1;
		*(v16 *)(d + 32) = a2;
		*(v16 *)(d + 48) = a3;
		*(v16 *)(d + 64) = a4;
		*(v16 *)(d + 80) = a5;
		*(v16 *)(d + 96) = a6;
		*(v16 *)(d + 112) = a7;
		*(v16 *)(d + 128) = a8;
		*(v16 *)(d + 144) = a9;
		*(v16 *)(d + 160) = a10;
		*(v16 *)(d + 176) = a11;
		*(v16 *)(d + 192) = a12;
		*(v16 *)(d + 208) = a13;
		*(v16 *)(d + 224) = a14;
		*(v16 *)(d + 240) = a15;
		s += 256;
		d += 256;
		n -= 256;
	}
	while (n >= 16) {
		v16 a = *(const v16 *)s;
		*(v16 *)d = a;
		s += 16;
		d += 16;
		n -= 16;
	}
	if (n) {
		/* The last 1 to 15 bytes: the 16 that end there (the copy is at least 256 long). */
		v16 a = *(const v16 *)(s + n - 16);
		*(v16 *)(d + n - 16) = a;
	}
	return dst;
}

__attribute__((externally_visible)) void *(memcpy)(void *restrict dst, const void *restrict src, size_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src;

	if (n < 8) {
		if (n >= 4) {
			uint32_t a, b;
			__builtin_memcpy(&a, s, 4);
			__builtin_memcpy(&b, s + n - 4, 4);
			__builtin_memcpy(d, &a, 4);
			__builtin_memcpy(d + n - 4, &b, 4);
		} else if (n) {
			/* 1 to 3 bytes: first, middle, last (some the same byte). */
			uint8_t a = s[0], b = s[n / 2], c = s[n - 1];
			d[0] = a;
			d[n / 2] = b;
			d[n - 1] = c;
		}
		return dst;
	}
	if (n <= 16) {
		uint64_t a = ld8(s), b = ld8(s + n - 8);
		st8(d, a);
		st8(d + n - 8, b);
		return dst;
	}
	if (n <= 32) {
		uint64_t a = ld8(s), b = ld8(s + 8), c = ld8(s + n - 16), e = ld8(s + n - 8);
		st8(d, a);
		st8(d + 8, b);
		st8(d + n - 16, c);
		st8(d + n - 8, e);
		return dst;
	}
	if (n >= MEMCPY_BLOCKS_MIN && tlb_twins(d, s))
		return copy_blocks(d, s, n, dst);
	/* The whole words, then the last eight bytes (read first: the two may overlap in dst only). */
	uint64_t tail = ld8(s + n - 8);
	size_t words = n / 8;

	__asm__ volatile("rep movsq" : "+D"(d), "+S"(s), "+c"(words) : : "memory");
	st8((uint8_t *)dst + n - 8, tail);
	return dst;
}
