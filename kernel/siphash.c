/*
 * SipHash-2-4; see siphash.h.  The paper's section 2 in order: the state
 * is the key XOR the four constants, each 8-byte little-endian block m is
 * XORed into v3, taken through c = 2 SipRounds and XORed into v0; the last
 * block holds the remaining bytes and the message length mod 256 in its
 * top byte; finalization XORs 0xff into v2, runs d = 4 SipRounds and
 * returns v0 ^ v1 ^ v2 ^ v3.
 */
#include <string.h>

#include "kernel/siphash.h"

static inline uint64_t rotl(uint64_t x, int b)
{
	return (x << b) | (x >> (64 - b));
}

#define SIPROUND(s)                                                                    \
	do {                                                                           \
		(s)->v0 += (s)->v1; (s)->v1 = rotl((s)->v1, 13); (s)->v1 ^= (s)->v0;   \
		(s)->v0 = rotl((s)->v0, 32);                                           \
		(s)->v2 += (s)->v3; (s)->v3 = rotl((s)->v3, 16); (s)->v3 ^= (s)->v2;   \
		(s)->v0 += (s)->v3; (s)->v3 = rotl((s)->v3, 21); (s)->v3 ^= (s)->v0;   \
		(s)->v2 += (s)->v1; (s)->v1 = rotl((s)->v1, 17); (s)->v1 ^= (s)->v2;   \
		(s)->v2 = rotl((s)->v2, 32);                                           \
	} while (0)

static inline void compress(struct siphash *s, uint64_t m)
{
	s->v3 ^= m;
	SIPROUND(s);
	SIPROUND(s);
	s->v0 ^= m;
}

void siphash_init(struct siphash *s, const struct sipkey *k)
{
	s->v0 = k->k0 ^ 0x736f6d6570736575ULL;	/* "somepseudorandomlygeneratedbytes" */
	s->v1 = k->k1 ^ 0x646f72616e646f6dULL;
	s->v2 = k->k0 ^ 0x6c7967656e657261ULL;
	s->v3 = k->k1 ^ 0x7465646279746573ULL;
	s->tail = 0;
	s->ntail = 0;
	s->total = 0;
}

void siphash_update(struct siphash *s, const void *buf, size_t n)
{
	const uint8_t *p = buf;

	s->total += n;
	/* Fill a partial block first. */
	while (s->ntail && n) {
		s->tail |= (uint64_t)*p++ << (8 * s->ntail);
		n--;
		if (++s->ntail == 8) {
			compress(s, s->tail);
			s->tail = 0;
			s->ntail = 0;
		}
	}
	/* Whole blocks (x86 is little-endian: a load is the block). */
	for (; n >= 8; p += 8, n -= 8) {
		uint64_t m;
		memcpy(&m, p, 8);
		compress(s, m);
	}
	for (; n; n--)
		s->tail |= (uint64_t)*p++ << (8 * s->ntail++);
}

uint64_t siphash_final(struct siphash *s)
{
	compress(s, s->tail | s->total << 56);
	s->v2 ^= 0xff;
	SIPROUND(s);
	SIPROUND(s);
	SIPROUND(s);
	SIPROUND(s);
	return s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
}

/*
 * One shot, the state in registers: the message is buf's n bytes, then,
 * with one_more, the 8 bytes of word (little-endian).  The same function
 * as init, update and final; it reads the message a word at a time.
 */
static inline __attribute__((always_inline)) uint64_t oneshot(const struct sipkey *k, const void *buf,
							       size_t n, int one_more, uint64_t word)
{
	uint64_t v0 = k->k0 ^ 0x736f6d6570736575ULL, v1 = k->k1 ^ 0x646f72616e646f6dULL;
	uint64_t v2 = k->k0 ^ 0x6c7967656e657261ULL, v3 = k->k1 ^ 0x7465646279746573ULL;
	const uint8_t *p = buf;
	uint64_t m, total = n + (one_more ? 8 : 0), tail = 0;
	size_t left = n & 7;

#define ROUND()                                                        	do {                                                           		v0 += v1; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32); 		v2 += v3; v3 = rotl(v3, 16); v3 ^= v2;                 		v0 += v3; v3 = rotl(v3, 21); v3 ^= v0;                 		v2 += v1; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32); 	} while (0)
#define BLOCK(x)                                                       	do {                                                           		m = (x);                                               		v3 ^= m;                                               		ROUND();                                               		ROUND();                                               		v0 ^= m;                                               	} while (0)

	for (const uint8_t *end = p + (n & ~(size_t)7); p < end; p += 8) {
		memcpy(&m, p, 8);
		BLOCK(m);
	}
	/* The bytes after the last whole block, then the extra word across them. */
	for (size_t i = 0; i < left; i++)
		tail |= (uint64_t)p[i] << (8 * i);
	if (one_more) {
		if (left) {
			BLOCK(tail | word << (8 * left));
			tail = word >> (64 - 8 * left);
		} else {
			BLOCK(word);
		}
	}
	BLOCK(tail | total << 56);
	v2 ^= 0xff;
	ROUND();
	ROUND();
	ROUND();
	ROUND();
#undef BLOCK
#undef ROUND
	return v0 ^ v1 ^ v2 ^ v3;
}

uint64_t siphash(const struct sipkey *k, const void *buf, size_t n)
{
	return oneshot(k, buf, n, 0, 0);
}

uint64_t siphash_word(const struct sipkey *k, const void *buf, size_t n, uint64_t word)
{
	return oneshot(k, buf, n, 1, word);
}
