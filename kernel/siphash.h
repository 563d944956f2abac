/*
 * SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast short-input PRF",
 * 2012): a keyed 64-bit MAC of a message, two compression rounds per
 * 8-byte block and four finalization rounds.  The fabric's frames carry
 * it when the cluster has a key (net/fabric/wire.h).
 *
 * Incremental: siphash_init, any number of siphash_update, siphash_final.
 * Pure functions.
 */
#ifndef KERNEL_SIPHASH_H
#define KERNEL_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

struct sipkey {
	uint64_t k0, k1;	/* the 128-bit key, little-endian halves */
};

struct siphash {
	uint64_t v0, v1, v2, v3;
	uint64_t tail;		/* bytes not yet in a full block */
	unsigned ntail;
	uint64_t total;		/* message length so far */
};

void siphash_init(struct siphash *s, const struct sipkey *k);
void siphash_update(struct siphash *s, const void *buf, size_t n);
uint64_t siphash_final(struct siphash *s);

/* The MAC of one buffer. */
uint64_t siphash(const struct sipkey *k, const void *buf, size_t n);

/* The MAC of buf's n bytes followed by the 8 bytes of word, little-endian (one shot). */
uint64_t siphash_word(const struct sipkey *k, const void *buf, size_t n, uint64_t word);

#endif
