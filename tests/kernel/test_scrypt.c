/*
 * Host unit tests of kernel/scrypt.c: SHA-256 against FIPS 180-2's
 * examples, scrypt against RFC 7914 section 12's vectors and one of the
 * fabric's own parameters (computed with Python's hashlib.scrypt, which is
 * OpenSSL's), and its refusals of parameters that are not scrypt's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "tests/host/unit.h"

#include "kernel/scrypt.h"

static void hex(const char *h, uint8_t *out, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sscanf(h + 2 * i, "%2hhx", &out[i]);
}

static void sha256_examples(void **state)
{
	uint8_t got[32], want[32];
	static const char two[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";

	(void)state;
	sha256("abc", 3, got);
	hex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", want, 32);
	assert_memory_equal(got, want, 32);
	sha256(two, strlen(two), got);
	hex("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1", want, 32);
	assert_memory_equal(got, want, 32);
	sha256("", 0, got);
	hex("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", want, 32);
	assert_memory_equal(got, want, 32);
}

static void check(const char *pw, const char *salt, uint64_t n, unsigned r, unsigned p, const char *h)
{
	uint8_t got[64], want[64];
	size_t len = strlen(h) / 2;

	hex(h, want, len);
	assert_int_equal(scrypt(pw, strlen(pw), salt, strlen(salt), n, r, p, got, len), 0);
	assert_memory_equal(got, want, len);
}

static void rfc7914_vectors(void **state)
{
	(void)state;
	check("", "", 16, 1, 1,
	      "77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442"
	      "fcd0069ded0948f8326a753a0fc81f17e8d3e0fb2e0d3628cf35e20c38d18906");
	check("password", "NaCl", 1024, 8, 16,
	      "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b373162"
	      "2eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640");
	check("pleaseletmein", "SodiumChloride", 16384, 8, 1,
	      "7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2"
	      "d5432955613f0fcf62d49705242a9af9e61e85dc0d651e40dfcf017b45575887");
	/* The fabric's parameters (net/fabric/wire.h), as hashlib.scrypt computes them. */
	check("a cluster passphrase", "NOW cluster key: lab-3", 4096, 8, 1, "b40de8068ab433b0e3b01c940d2e963e");
}

static void parameters_not_scrypts_are_refused(void **state)
{
	uint8_t out[16];

	(void)state;
	assert_int_equal(scrypt("x", 1, "s", 1, 0, 1, 1, out, 16), -1);
	assert_int_equal(scrypt("x", 1, "s", 1, 1, 1, 1, out, 16), -1);
	assert_int_equal(scrypt("x", 1, "s", 1, 24, 1, 1, out, 16), -1);	/* not a power of two */
	assert_int_equal(scrypt("x", 1, "s", 1, 16, 0, 1, out, 16), -1);
	assert_int_equal(scrypt("x", 1, "s", 1, 16, 1, 0, out, 16), -1);
	assert_int_equal(scrypt("x", 1, "s", 1, 1ULL << 62, 8, 1, out, 16), -1);	/* no such memory */
}

UNIT_MAIN("tests", NULL, NULL,
	  cmocka_unit_test(sha256_examples),
	  cmocka_unit_test(rfc7914_vectors),
	  cmocka_unit_test(parameters_not_scrypts_are_refused))
