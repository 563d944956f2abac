/*
 * scrypt (RFC 7914), with the SHA-256, HMAC-SHA-256 (RFC 2104) and
 * PBKDF2-HMAC-SHA-256 (RFC 8018 5.2) it is built on.  Written from the
 * RFCs and FIPS 180-4; tests/kernel/test_scrypt.c checks it against RFC
 * 7914's own vectors and Python's hashlib.scrypt.  Pure functions.
 */
#include <stdlib.h>
#include <string.h>

#include "kernel/scrypt.h"

/* --- SHA-256 (FIPS 180-4, 6.2) ------------------------------------------------------- */

struct sha256 {
	uint32_t h[8];
	uint8_t buf[64];
	size_t nbuf;
	uint64_t len;		/* bytes so far */
};

static const uint32_t K256[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline uint32_t ror(uint32_t x, int n)
{
	return x >> n | x << (32 - n);
}

static inline uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void sha256_block(struct sha256 *s, const uint8_t *p)
{
	uint32_t w[64], a, b, c, d, e, f, g, h;

	for (int i = 0; i < 16; i++)
		w[i] = be32(p + 4 * i);
	for (int i = 16; i < 64; i++) {
		uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
		uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3];
	e = s->h[4], f = s->h[5], g = s->h[6], h = s->h[7];
	for (int i = 0; i < 64; i++) {
		uint32_t t1 = h + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + K256[i] + w[i];
		uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
		h = g, g = f, f = e, e = d + t1;
		d = c, c = b, b = a, a = t1 + t2;
	}
	s->h[0] += a, s->h[1] += b, s->h[2] += c, s->h[3] += d;
	s->h[4] += e, s->h[5] += f, s->h[6] += g, s->h[7] += h;
}

static void sha256_init(struct sha256 *s)
{
	static const uint32_t iv[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
					0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };

	memcpy(s->h, iv, sizeof iv);
	s->nbuf = 0;
	s->len = 0;
}

static void sha256_update(struct sha256 *s, const void *data, size_t n)
{
	const uint8_t *p = data;

	s->len += n;
	while (n) {
		size_t k = 64 - s->nbuf < n ? 64 - s->nbuf : n;
		memcpy(s->buf + s->nbuf, p, k);
		s->nbuf += k;
		p += k;
		n -= k;
		if (s->nbuf == 64) {
			sha256_block(s, s->buf);
			s->nbuf = 0;
		}
	}
}

static void sha256_final(struct sha256 *s, uint8_t out[32])
{
	uint64_t bits = s->len * 8;
	uint8_t pad = 0x80, zero = 0, lenb[8];

	sha256_update(s, &pad, 1);
	while (s->nbuf != 56)
		sha256_update(s, &zero, 1);
	for (int i = 0; i < 8; i++)
		lenb[i] = (uint8_t)(bits >> (56 - 8 * i));
	sha256_update(s, lenb, 8);
	for (int i = 0; i < 8; i++)
		put_be32(out + 4 * i, s->h[i]);
}

void sha256(const void *data, size_t n, uint8_t out[32])
{
	struct sha256 s;

	sha256_init(&s);
	sha256_update(&s, data, n);
	sha256_final(&s, out);
}

/* --- HMAC-SHA-256 and PBKDF2 ------------------------------------------------------------ */

struct hmac {
	struct sha256 inner, outer;
};

static void hmac_init(struct hmac *m, const uint8_t *key, size_t klen)
{
	uint8_t k[64] = { 0 }, pad[64];

	if (klen > 64)
		sha256(key, klen, k);
	else
		memcpy(k, key, klen);
	for (int i = 0; i < 64; i++)
		pad[i] = k[i] ^ 0x36;
	sha256_init(&m->inner);
	sha256_update(&m->inner, pad, 64);
	for (int i = 0; i < 64; i++)
		pad[i] = k[i] ^ 0x5c;
	sha256_init(&m->outer);
	sha256_update(&m->outer, pad, 64);
}

static void hmac_final(struct hmac *m, uint8_t out[32])
{
	uint8_t ih[32];

	sha256_final(&m->inner, ih);
	sha256_update(&m->outer, ih, 32);
	sha256_final(&m->outer, out);
}

/* PBKDF2-HMAC-SHA-256 with c iterations (scrypt uses c = 1). */
static void pbkdf2(const uint8_t *pw, size_t pwlen, const uint8_t *salt, size_t slen, unsigned c,
		   uint8_t *out, size_t outlen)
{
	struct hmac base, m;
	uint8_t u[32], t[32], ctr[4];

	hmac_init(&base, pw, pwlen);
	for (uint32_t i = 1; outlen; i++) {
		m = base;
		sha256_update(&m.inner, salt, slen);
		put_be32(ctr, i);
		sha256_update(&m.inner, ctr, 4);
		hmac_final(&m, u);
		memcpy(t, u, 32);
		for (unsigned j = 1; j < c; j++) {
			m = base;
			sha256_update(&m.inner, u, 32);
			hmac_final(&m, u);
			for (int k = 0; k < 32; k++)
				t[k] ^= u[k];
		}
		size_t k = outlen < 32 ? outlen : 32;
		memcpy(out, t, k);
		out += k;
		outlen -= k;
	}
}

/* --- scrypt (RFC 7914, 3 to 6) --------------------------------------------------------- */

static inline uint32_t rol(uint32_t x, int n)
{
	return x << n | x >> (32 - n);
}

/* Salsa20/8 core (RFC 7914 3): b = b + salsa rounds of b, 16 little-endian words. */
static void salsa8(uint32_t b[16])
{
	uint32_t x[16];

	memcpy(x, b, sizeof x);
	for (int i = 0; i < 8; i += 2) {
		x[4] ^= rol(x[0] + x[12], 7);   x[8] ^= rol(x[4] + x[0], 9);
		x[12] ^= rol(x[8] + x[4], 13);  x[0] ^= rol(x[12] + x[8], 18);
		x[9] ^= rol(x[5] + x[1], 7);    x[13] ^= rol(x[9] + x[5], 9);
		x[1] ^= rol(x[13] + x[9], 13);  x[5] ^= rol(x[1] + x[13], 18);
		x[14] ^= rol(x[10] + x[6], 7);  x[2] ^= rol(x[14] + x[10], 9);
		x[6] ^= rol(x[2] + x[14], 13);  x[10] ^= rol(x[6] + x[2], 18);
		x[3] ^= rol(x[15] + x[11], 7);  x[7] ^= rol(x[3] + x[15], 9);
		x[11] ^= rol(x[7] + x[3], 13);  x[15] ^= rol(x[11] + x[7], 18);
		x[1] ^= rol(x[0] + x[3], 7);    x[2] ^= rol(x[1] + x[0], 9);
		x[3] ^= rol(x[2] + x[1], 13);   x[0] ^= rol(x[3] + x[2], 18);
		x[6] ^= rol(x[5] + x[4], 7);    x[7] ^= rol(x[6] + x[5], 9);
		x[4] ^= rol(x[7] + x[6], 13);   x[5] ^= rol(x[4] + x[7], 18);
		x[11] ^= rol(x[10] + x[9], 7);  x[8] ^= rol(x[11] + x[10], 9);
		x[9] ^= rol(x[8] + x[11], 13);  x[10] ^= rol(x[9] + x[8], 18);
		x[12] ^= rol(x[15] + x[14], 7); x[13] ^= rol(x[12] + x[15], 9);
		x[14] ^= rol(x[13] + x[12], 13); x[15] ^= rol(x[14] + x[13], 18);
	}
	for (int i = 0; i < 16; i++)
		b[i] += x[i];
}

/* scryptBlockMix (RFC 7914 4): b of 2r 64-byte blocks, as words; y scratch of the same size. */
static void blockmix(uint32_t *b, uint32_t *y, unsigned r)
{
	uint32_t x[16];

	memcpy(x, b + (2 * r - 1) * 16, sizeof x);
	for (unsigned i = 0; i < 2 * r; i++) {
		for (int k = 0; k < 16; k++)
			x[k] ^= b[i * 16 + k];
		salsa8(x);
		/* Even blocks to the first half, odd ones to the second. */
		memcpy(y + ((i & 1) * r + i / 2) * 16, x, sizeof x);
	}
	memcpy(b, y, (size_t)128 * r);
}

/* scryptROMix (RFC 7914 5) on one 128 r byte block, in words; v: N blocks, y: one. */
static void romix(uint32_t *x, unsigned r, uint64_t n, uint32_t *v, uint32_t *y)
{
	size_t words = (size_t)32 * r;

	for (uint64_t i = 0; i < n; i++) {
		memcpy(v + i * words, x, words * 4);
		blockmix(x, y, r);
	}
	for (uint64_t i = 0; i < n; i++) {
		/* Integerify: the first word of the last 64-byte block, modulo N (a power of two). */
		uint64_t j = x[(2 * r - 1) * 16] & (n - 1);
		for (size_t k = 0; k < words; k++)
			x[k] ^= v[j * words + k];
		blockmix(x, y, r);
	}
}

int scrypt(const void *pw, size_t pwlen, const void *salt, size_t slen, uint64_t n, unsigned r,
	   unsigned p, uint8_t *out, size_t outlen)
{
	size_t blen = (size_t)128 * r;

	if (n < 2 || (n & (n - 1)) || r == 0 || p == 0 || n > (SIZE_MAX / blen) / 2)
		return -1;
	uint8_t *b = malloc(blen * p);
	uint32_t *v = malloc(blen * (size_t)n), *x = malloc(blen), *y = malloc(blen);
	if (!b || !v || !x || !y) {
		free(b), free(v), free(x), free(y);
		return -1;
	}
	pbkdf2(pw, pwlen, salt, slen, 1, b, blen * p);
	for (unsigned i = 0; i < p; i++) {
		uint8_t *bi = b + i * blen;
		for (size_t k = 0; k < blen / 4; k++)
			x[k] = (uint32_t)bi[4 * k] | (uint32_t)bi[4 * k + 1] << 8 |
			       (uint32_t)bi[4 * k + 2] << 16 | (uint32_t)bi[4 * k + 3] << 24;
		romix(x, r, n, v, y);
		for (size_t k = 0; k < blen / 4; k++) {
			bi[4 * k] = (uint8_t)x[k];
			bi[4 * k + 1] = (uint8_t)(x[k] >> 8);
			bi[4 * k + 2] = (uint8_t)(x[k] >> 16);
			bi[4 * k + 3] = (uint8_t)(x[k] >> 24);
		}
	}
	pbkdf2(pw, pwlen, b, blen * p, 1, out, outlen);
	memset(b, 0, blen * p);
	memset(v, 0, blen * (size_t)n);
	free(b), free(v), free(x), free(y);
	return 0;
}
