/*
 * scrypt (RFC 7914): a passphrase-based key derivation that costs memory
 * as well as time, N blocks of 128 r bytes held at once, so that guessing
 * passphrases in parallel (GPUs, custom hardware) costs that memory per
 * guess.  With SHA-256 (FIPS 180-4) beside it.  Pure functions.
 */
#ifndef KERNEL_SCRYPT_H
#define KERNEL_SCRYPT_H

#include <stddef.h>
#include <stdint.h>

/* SHA-256 of n bytes. */
void sha256(const void *data, size_t n, uint8_t out[32]);

/*
 * outlen bytes of scrypt(pw, salt, N = n, r, p): 0, or -1 if the
 * parameters are not scrypt's (n a power of two, 2 or more; r, p at least
 * 1) or the 128 r (n + p + 2) bytes it needs could not be had.
 */
int scrypt(const void *pw, size_t pwlen, const void *salt, size_t slen, uint64_t n, unsigned r,
	   unsigned p, uint8_t *out, size_t outlen);

#endif
