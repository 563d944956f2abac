/*
 * Host unit tests of the fabric frame format (net/fabric/wire.c), the
 * CRC-32C, SipHash-2-4 and keyed frames (the tag, the replay window) and
 * the fault= parser (net/fabric/fault.c).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "tests/host/unit.h"

#include "kernel/crc.h"
#include "kernel/siphash.h"
#include "kernel/scrypt.h"
#include "net/fabric/wire.h"
#include "net/fabric/fault.h"

static const uint8_t mac_a[6] = { 2, 0x4e, 0x4f, 0x57, 0, 0 };
static const uint8_t mac_b[6] = { 2, 0x4e, 0x4f, 0x57, 0, 1 };

static size_t build(uint8_t *frame, uint8_t type, uint16_t src, uint16_t dst, size_t len)
{
	struct fab_hdr h = { 0 };

	h.type = type;
	h.proto = 3;
	h.src = src;
	h.dst = dst;
	h.seq = 77;
	h.len = (uint16_t)len;
	for (size_t i = 0; i < len; i++)
		frame[FAB_ETH_HLEN + FAB_HDR_LEN + i] = (uint8_t)i;
	return fab_build(frame, mac_b, mac_a, &h);
}

static void crc32c_known_values(void **state)
{
	(void)state;
	/* RFC 3720 B.4 check value and test vectors. */
	assert_int_equal(crc32c(0, "123456789", 9), 0xe3069283u);
	assert_int_equal(crc32c_sw(0, "123456789", 9), 0xe3069283u);
	uint8_t zeros[32] = { 0 }, ones[32];
	memset(ones, 0xff, sizeof ones);
	assert_int_equal(crc32c(0, zeros, 32), 0x8a9136aau);
	assert_int_equal(crc32c(0, ones, 32), 0x62a8ab43u);
	/* Incremental equals one-shot, and hardware equals software. */
	uint8_t buf[1000];
	for (int i = 0; i < 1000; i++)
		buf[i] = (uint8_t)(i * 31 + 7);
	assert_int_equal(crc32c(crc32c(0, buf, 333), buf + 333, 667), crc32c(0, buf, 1000));
	for (size_t n = 0; n < 40; n++) {
		assert_int_equal(crc32c(0, buf + 3, n), crc32c_sw(0, buf + 3, n));
		assert_int_equal(crc32c_hw_checked(0, buf + 3, n), crc32c_sw(0, buf + 3, n));
	}
	assert_int_equal(crc32c_sw(0, buf, 1000), crc32c_hw_checked(0, buf, 1000));
	assert_true(strncmp(crc32c_impl(), "tables", 6) == 0 || strcmp(crc32c_impl(), "sse4.2") == 0 ||
		    strncmp(crc32c_impl(), "pclmul", 6) == 0);
}

/* PCLMULQDQ folding (kernel/crc.c) against the tables: every length to 2 KiB, odd offsets, other CRCs. */
static void crc32c_folding_agrees(void **state)
{
	static uint8_t buf[2048 + 16];
	uint32_t x = 12345;

	(void)state;
	if (!crc32c_clmul_present())
		skip();
	for (size_t i = 0; i < sizeof buf; i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = (uint8_t)(x >> 16);
	}
	for (size_t n = 0; n <= 2048; n++)
		for (size_t off = 0; off < 16; off += 5) {
			uint32_t init = n & 1 ? 0 : 0x9e3779b9u * (uint32_t)(n + off);
			assert_int_equal(crc32c_clmul_checked(init, buf + off, n), crc32c_sw(init, buf + off, n));
		}
	/* A frame's worth in pieces, and a single bit moved anywhere in it changes the CRC. */
	assert_int_equal(crc32c_clmul_checked(crc32c_clmul_checked(0, buf, 700), buf + 700, 1300),
			 crc32c_sw(0, buf, 2000));
	uint32_t whole = crc32c_clmul_checked(0, buf, 1408);
	for (size_t bit = 0; bit < 1408 * 8; bit += 37) {
		buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		assert_int_not_equal(crc32c_clmul_checked(0, buf, 1408), whole);
		buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	}
}

static void build_then_parse(void **state)
{
	uint8_t frame[FAB_FRAME_MAX];
	struct fab_hdr h;
	const uint8_t *p;

	(void)state;
	size_t n = build(frame, FAB_DATA, 0, 1, 100);
	assert_int_equal(n, FAB_ETH_HLEN + FAB_HDR_LEN + 100);
	assert_int_equal(frame[12], 0x88);
	assert_int_equal(frame[13], 0xb5);
	assert_int_equal(fab_parse(frame, n, 1, 4, &h, &p), FAB_OK);
	assert_int_equal(h.seq, 77);
	assert_int_equal(h.len, 100);
	assert_ptr_equal(p, frame + FAB_ETH_HLEN + FAB_HDR_LEN);
	/* Ethernet padding after the payload is fine. */
	n = build(frame, FAB_ACK, 2, 1, 0);
	assert_int_equal(fab_parse(frame, 60, 1, 4, &h, &p), FAB_OK);
}

static void every_bit_flip_is_caught(void **state)
{
	uint8_t frame[FAB_FRAME_MAX];
	struct fab_hdr h;
	const uint8_t *p;

	(void)state;
	size_t n = build(frame, FAB_DATA, 0, 1, 64);
	for (size_t byte = FAB_ETH_HLEN; byte < n; byte++) {
		for (int bit = 0; bit < 8; bit++) {
			frame[byte] ^= (uint8_t)(1 << bit);
			assert_int_not_equal(fab_parse(frame, n, 1, 4, &h, &p), FAB_OK);
			frame[byte] ^= (uint8_t)(1 << bit);
		}
	}
	assert_int_equal(fab_parse(frame, n, 1, 4, &h, &p), FAB_OK);
}

static void rejects_bad_frames(void **state)
{
	static uint8_t frame[FAB_FRAME_LIMIT + 10];
	struct fab_hdr h;
	const uint8_t *p;
	size_t n;

	(void)state;
	n = build(frame, FAB_DATA, 0, 1, 64);
	assert_int_equal(fab_parse(frame, 20, 1, 4, &h, &p), FAB_E_SHORT);
	assert_int_equal(fab_parse(frame, n - 1, 1, 4, &h, &p), FAB_E_LEN);	/* truncated */
	/* Longer than any link's frame; one longer than Ethernet's is a link's business (padding here). */
	assert_int_equal(fab_parse(frame, FAB_FRAME_LIMIT + 1, 1, 4, &h, &p), FAB_E_LEN);
	assert_int_equal(fab_parse(frame, FAB_FRAME_MAX + 1, 1, 4, &h, &p), FAB_OK);
	assert_int_equal(fab_parse(frame, n, 2, 4, &h, &p), FAB_E_NOTME);	/* for node 1 */
	assert_int_equal(fab_parse(frame, n, 1, 1, &h, &p), FAB_E_NODE);	/* 1-node cluster */
	n = build(frame, FAB_DATA, 5, 1, 64);
	assert_int_equal(fab_parse(frame, n, 1, 4, &h, &p), FAB_E_NODE);	/* foreign node */
	n = build(frame, FAB_DATA, 1, 1, 64);
	assert_int_equal(fab_parse(frame, n, 1, 4, &h, &p), FAB_E_NODE);	/* from myself */
	n = build(frame, 9, 0, 1, 64);
	assert_int_equal(fab_parse(frame, n, 1, 4, &h, &p), FAB_E_TYPE);
	n = build(frame, FAB_ACK, 0, 1, 8);
	assert_int_equal(fab_parse(frame, n, 1, 4, &h, &p), FAB_E_FIELD);	/* ACK with payload */
	n = build(frame, FAB_DATA, 0, FAB_BROADCAST, 8);
	assert_int_equal(fab_parse(frame, n, 1, 4, &h, &p), FAB_E_FIELD);	/* broadcast data */
	n = build(frame, FAB_HELLO, 0, FAB_BROADCAST, 3);
	assert_int_equal(fab_parse(frame, n, 1, 4, &h, &p), FAB_E_FIELD);	/* short hello */
	n = build(frame, FAB_DATA, 0, 1, 8);
	frame[FAB_ETH_HLEN] = FAB_VERSION + 1;	/* version */
	assert_int_equal(fab_parse(frame, n, 1, 4, &h, &p), FAB_E_VERSION);
}

static void raw_frames_may_skip_the_crc(void **state)
{
	uint8_t frame[FAB_FRAME_MAX];
	struct fab_hdr h = { 0 };
	const uint8_t *p;

	(void)state;
	h.type = FAB_RAW;
	h.proto = 2;
	h.flags = FAB_F_NOCRC;
	h.src = 0;
	h.dst = 1;
	h.len = 50;
	size_t n = fab_build(frame, mac_b, mac_a, &h);
	assert_int_equal(fab_parse(frame, n, 1, 2, &h, &p), FAB_OK);
	/* NOCRC on anything but RAW is refused (after the CRC check fails). */
	h.type = FAB_DATA;
	n = fab_build(frame, mac_b, mac_a, &h);
	assert_int_not_equal(fab_parse(frame, n, 1, 2, &h, &p), FAB_OK);
}

/* On a lossless link every unicast frame may skip the CRC; a HELLO never. */
static void lossless_link_frames_may_skip_the_crc(void **state)
{
	uint8_t frame[FAB_FRAME_MAX];
	struct fab_hdr h = { 0 }, out;
	const uint8_t *p;
	static const uint8_t types[] = { FAB_DATA, FAB_ACK, FAB_PROBE };

	(void)state;
	for (size_t i = 0; i < sizeof types; i++) {
		memset(&h, 0, sizeof h);
		h.type = types[i];
		h.proto = types[i] == FAB_DATA ? 3 : 0;
		h.flags = FAB_F_NOCRC;
		h.dst = 1;
		h.len = types[i] == FAB_DATA ? 40 : 0;
		size_t n = fab_build(frame, mac_b, mac_a, &h);
		assert_int_equal(fab_parse_link(frame, n, 1, 2, 1, 0, &out, &p), FAB_OK);
		assert_int_equal(out.flags, FAB_F_NOCRC);
		assert_int_not_equal(fab_parse_link(frame, n, 1, 2, 0, 0, &out, &p), FAB_OK);
		/* With a CRC it parses either way, and a flipped bit is still caught. */
		h.flags = 0;
		n = fab_build(frame, mac_b, mac_a, &h);
		assert_int_equal(fab_parse_link(frame, n, 1, 2, 1, 0, &out, &p), FAB_OK);
		frame[FAB_ETH_HLEN + 8] ^= 1;
		assert_int_equal(fab_parse_link(frame, n, 1, 2, 1, 0, &out, &p), FAB_E_CRC);
	}
	memset(&h, 0, sizeof h);
	h.type = FAB_HELLO;
	h.flags = FAB_F_NOCRC;
	h.dst = FAB_BROADCAST;
	h.len = sizeof(struct fab_hello);
	size_t n = fab_build(frame, mac_b, mac_a, &h);
	assert_int_not_equal(fab_parse_link(frame, n, 1, 2, 1, 0, &out, &p), FAB_OK);
}

/*
 * fab_parse_link's shortcut for the frames of a lossless stream gives
 * what every check (fab_parse_full) gives: frames built valid, then
 * every header byte set to values near the ones that matter, on lossless
 * and lossy links, keyed and not, at every length around the payload's.
 */
static void shortcut_agrees_with_every_check(void **state)
{
	static const uint8_t vals[] = { 0, 1, 2, 3, 4, 5, 6, 7, 0x40, 0xff };
	uint8_t frame[FAB_FRAME_MAX], copy[FAB_FRAME_MAX];
	unsigned long compared = 0, accepted = 0;

	(void)state;
	for (int type = FAB_DATA; type <= FAB_PROBE; type++) {
		struct fab_hdr h = { 0 };
		h.type = (uint8_t)type;
		h.proto = type == FAB_DATA || type == FAB_RAW ? 3 : 0;
		h.flags = FAB_F_NOCRC;
		h.src = 0;
		h.dst = type == FAB_HELLO ? FAB_BROADCAST : 1;
		h.len = type == FAB_HELLO ? sizeof(struct fab_hello) : type == FAB_ACK || type == FAB_PROBE ? 0 : 40;
		memset(frame + FAB_ETH_HLEN + FAB_HDR_LEN, 0x5a, h.len);
		size_t n = fab_build(frame, (const uint8_t *)"\2NOW\0\1", (const uint8_t *)"\2NOW\0\0", &h);
		for (size_t off = 0; off < 16; off++) {
			for (size_t v = 0; v < sizeof vals; v++) {
				memcpy(copy, frame, n);
				copy[FAB_ETH_HLEN + off] = vals[v];
				for (int mode = 0; mode < 4; mode++) {
					for (size_t len = n - 1; len <= n + 1; len++) {
						struct fab_hdr a, b;
						const uint8_t *pa = NULL, *pb = NULL;
						enum fab_err ea = fab_parse_link(copy, len, 1, 4, mode & 1, mode >> 1, &a, &pa);
						enum fab_err eb = fab_parse_full(copy, len, 1, 4, mode & 1, mode >> 1, &b, &pb);
						assert_int_equal(ea, eb);
						if (ea == FAB_OK) {
							assert_ptr_equal(pa, pb);
							accepted++;
						}
						compared++;
					}
				}
			}
		}
	}
	assert_true(compared > 5000 && accepted > 100);
}

static void siphash_known_values(void **state)
{
	uint8_t key[16], m[64];
	struct sipkey k;
	struct siphash st;

	(void)state;
	for (int i = 0; i < 16; i++)
		key[i] = (uint8_t)i;
	for (int i = 0; i < 64; i++)
		m[i] = (uint8_t)i;
	memcpy(&k.k0, key, 8);
	memcpy(&k.k1, key + 8, 8);
	/* The SipHash paper's appendix A (15 bytes) and its reference vector for no bytes. */
	assert_true(siphash(&k, m, 15) == 0xa129ca6149be45e5ULL);
	assert_true(siphash(&k, m, 0) == 0x726fdb47dd0e0e31ULL);
	/* Incremental updates of any split give the one-shot value. */
	for (size_t n = 0; n <= 64; n += 7) {
		for (size_t cut = 0; cut <= n; cut += 3) {
			siphash_init(&st, &k);
			siphash_update(&st, m, cut);
			siphash_update(&st, m + cut, n - cut);
			assert_true(siphash_final(&st) == siphash(&k, m, n));
		}
	}
	/* The one shot with a word after the bytes (the frame tag's), at every length mod 8. */
	for (size_t n = 0; n <= 56; n++) {
		uint64_t w = 0x0123456789abcdefULL ^ n;
		siphash_init(&st, &k);
		siphash_update(&st, m, n);
		siphash_update(&st, &w, sizeof w);
		assert_true(siphash_final(&st) == siphash_word(&k, m, n, w));
	}
}

static size_t build_sealed(uint8_t *frame, struct fab_seal *seal, uint8_t type, size_t len)
{
	struct fab_hdr h = { 0 };

	h.type = type;
	h.proto = type == FAB_DATA || type == FAB_RAW ? 3 : 0;
	h.src = 0;
	h.dst = 1;
	h.seq = 5;
	h.len = (uint16_t)len;
	for (size_t i = 0; i < len; i++)
		frame[FAB_ETH_HLEN + FAB_HDR_LEN + i] = (uint8_t)(i * 7);
	return fab_build_sealed(frame, mac_b, mac_a, &h, seal);
}

static void keyed_frames(void **state)
{
	uint8_t frame[FAB_FRAME_MAX], plain[FAB_FRAME_MAX];
	struct sipkey cluster, other;
	struct fab_seal seal = { 0 };
	struct fab_unseal u = { 0 }, wrong = { 0 };
	struct fab_hdr h;
	const uint8_t *p;
	size_t n, m;

	(void)state;
	assert_int_equal(fab_key_from_text(&cluster, "sixteen-chars-ok", NULL), 0);
	assert_int_equal(fab_key_from_text(&other, "sixteen-chars-oj", NULL), 0);
	assert_true(cluster.k0 != other.k0 && cluster.k1 != other.k1);
	/* The same text, the same key: scrypt's of the text, salted with the default name. */
	assert_int_equal(fab_key_from_text(&wrong.key, "sixteen-chars-ok", FAB_CLUSTER_DEFAULT), 0);
	assert_true(wrong.key.k0 == cluster.k0 && wrong.key.k1 == cluster.k1);
	uint8_t want[16];
	assert_int_equal(scrypt("sixteen-chars-ok", 16, "NOW cluster key: now", 20, FAB_KEY_N, FAB_KEY_R, 1,
				want, sizeof want), 0);
	assert_memory_equal(&cluster.k0, want, 8);
	assert_memory_equal(&cluster.k1, want + 8, 8);
	/* Another cluster's name, another key from the same passphrase. */
	assert_int_equal(fab_key_from_text(&other, "sixteen-chars-ok", "lab-3"), 0);
	assert_true(other.k0 != cluster.k0 && other.k1 != cluster.k1);
	fab_pair_key(&seal.key, &cluster, 0, 111, 1, 222);
	fab_pair_key(&u.key, &cluster, 0, 111, 1, 222);
	/* Another incarnation of either side, or the other direction, is another key. */
	fab_pair_key(&wrong.key, &cluster, 0, 112, 1, 222);
	assert_true(wrong.key.k0 != u.key.k0);
	fab_pair_key(&wrong.key, &cluster, 1, 222, 0, 111);
	assert_true(wrong.key.k0 != u.key.k0);

	/* A keyed frame parses only keyed, an unkeyed one only unkeyed. */
	n = build_sealed(frame, &seal, FAB_DATA, 100);
	assert_int_equal(n, FAB_ETH_HLEN + FAB_HDR_LEN + 100 + FAB_TRAILER_LEN);
	assert_int_equal(fab_parse_link(frame, n, 1, 2, 0, 1, &h, &p), FAB_OK);
	assert_true(h.flags & FAB_F_MAC);
	assert_int_equal(fab_parse_link(frame, n, 1, 2, 0, 0, &h, &p), FAB_E_KEY);
	m = build_sealed(plain, NULL, FAB_DATA, 100);
	assert_int_equal(fab_parse_link(plain, m, 1, 2, 0, 1, &h, &p), FAB_E_KEY);
	/* Without room for its trailer a keyed frame is short. */
	assert_int_equal(fab_parse_link(frame, n - 1, 1, 2, 0, 1, &h, &p), FAB_E_LEN);

	/* Taken once; the same frame again is a replay; another key's tag is wrong. */
	assert_int_equal(fab_parse_link(frame, n, 1, 2, 0, 1, &h, &p), FAB_OK);
	assert_int_equal(fab_unseal(&wrong, frame, &h, 1), FAB_E_MAC);
	assert_int_equal(fab_unseal(&u, frame, &h, 1), FAB_OK);
	assert_int_equal(fab_unseal(&u, frame, &h, 1), FAB_E_REPLAY);

	/* Every bit of header, payload and trailer is covered. */
	for (size_t bit = 0; bit < 8 * (n - FAB_ETH_HLEN); bit++) {
		uint8_t copy[FAB_FRAME_MAX];
		struct fab_unseal fresh = { .key = u.key };
		memcpy(copy, frame, n);
		copy[FAB_ETH_HLEN + bit / 8] ^= (uint8_t)(1u << (bit % 8));
		if (fab_parse_link(copy, n, 1, 2, 0, 1, &h, &p) == FAB_OK)
			assert_int_equal(fab_unseal(&fresh, copy, &h, 1), FAB_E_MAC);
	}

	/* The window: later frames in any order within 64, never one twice, none older. */
	uint8_t f[70][128];
	size_t len[70];
	for (int i = 0; i < 70; i++)
		len[i] = build_sealed(f[i], &seal, FAB_ACK, 0);
	for (int i = 69; i >= 6; i--) {
		assert_int_equal(fab_parse_link(f[i], len[i], 1, 2, 0, 1, &h, &p), FAB_OK);
		assert_int_equal(fab_unseal(&u, f[i], &h, 1), FAB_OK);
	}
	for (int i = 69; i >= 6; i -= 9) {
		fab_parse_link(f[i], len[i], 1, 2, 0, 1, &h, &p);
		assert_int_equal(fab_unseal(&u, f[i], &h, 1), FAB_E_REPLAY);
	}
	for (int i = 0; i < 6; i++) {	/* 64 or more behind the top */
		fab_parse_link(f[i], len[i], 1, 2, 0, 1, &h, &p);
		assert_int_equal(fab_unseal(&u, f[i], &h, 1), FAB_E_REPLAY);
	}
	/* Without the window (HELLOs) only the tag is checked. */
	fab_parse_link(f[69], len[69], 1, 2, 0, 1, &h, &p);
	assert_int_equal(fab_unseal(&u, f[69], &h, 0), FAB_OK);

	/* The counter's high half is never sent but is in the tag: wrapping 2^32 works... */
	seal.ctr = 0xfffffff0ULL;
	u.top = 0xfffffff0ULL;
	u.seen = 1;
	for (int i = 0; i < 40; i++) {
		n = build_sealed(frame, &seal, FAB_ACK, 0);
		assert_int_equal(fab_parse_link(frame, n, 1, 2, 0, 1, &h, &p), FAB_OK);
		assert_int_equal(fab_unseal(&u, frame, &h, 1), FAB_OK);
	}
	assert_true(u.top == 0x100000018ULL);
	/* ...and a frame from 2^32 counters ago, same low bits, fails the tag. */
	struct fab_seal old = seal;
	old.ctr -= 0x100000000ULL;
	n = build_sealed(frame, &old, FAB_ACK, 0);
	fab_parse_link(frame, n, 1, 2, 0, 1, &h, &p);
	assert_int_equal(fab_unseal(&u, frame, &h, 1), FAB_E_MAC);
}

static void fault_spec_parsing(void **state)
{
	struct fault_cfg f;
	char err[200];

	(void)state;
	assert_int_equal(fault_parse("drop:0.05,dup:0.01,reorder:0.01,corrupt:0.01", &f, err, sizeof err), 0);
	assert_true(f.any);
	assert_true(f.drop > 214000000u && f.drop < 215000000u);	/* 0.05 * 2^32 */
	assert_int_equal(fault_parse("drop:1", &f, err, sizeof err), 0);
	assert_int_equal(f.drop, 0xffffffffu);
	assert_int_equal(fault_parse("drop:0", &f, err, sizeof err), 0);
	assert_false(f.any);
	assert_int_equal(fault_parse("drop:.5", &f, err, sizeof err), 0);
	assert_int_equal(fault_parse("lose:0.1", &f, err, sizeof err), -EINVAL);
	assert_non_null(strstr(err, "unknown kind 'lose'"));
	assert_int_equal(fault_parse("drop:1.5", &f, err, sizeof err), -EINVAL);
	assert_non_null(strstr(err, "rate '1.5'"));
	assert_int_equal(fault_parse("drop:abc", &f, err, sizeof err), -EINVAL);
	assert_int_equal(fault_parse("drop", &f, err, sizeof err), -EINVAL);
	assert_non_null(strstr(err, "not kind:rate"));
	assert_int_equal(fault_parse("drop:0.1,", &f, err, sizeof err), -EINVAL);
	assert_int_equal(fault_parse("drop:-0.1", &f, err, sizeof err), -EINVAL);
	assert_int_equal(fault_parse("", &f, err, sizeof err), -EINVAL);
}

/* An AUTO frame from mac_a: searching (nview 0) or with a view of n members. */
static size_t build_auto(uint8_t *frame, struct fab_auto *a, struct fab_seal *seal)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	struct fab_hdr h = { 0 };

	h.type = FAB_AUTO;
	h.src = FAB_BROADCAST;
	h.dst = FAB_BROADCAST;
	h.len = sizeof *a;
	memcpy(frame + FAB_ETH_HLEN + FAB_HDR_LEN, a, sizeof *a);
	return fab_build_sealed(frame, bcast, mac_a, &h, seal);
}

static void auto_frames(void **state)
{
	uint8_t frame[FAB_FRAME_MAX];
	struct fab_auto a, got;
	struct fab_hdr h;
	struct fab_seal seal = { 0 };
	struct fab_unseal un = { 0 };
	size_t n;

	(void)state;
	memset(&a, 0, sizeof a);
	a.expect = 2;
	a.heard = 1;
	a.inc = 0x1234;
	memcpy(a.mac, mac_a, 6);
	/* A nonce is required, and an echo list of at most FAB_MAX_NODES. */
	n = build_auto(frame, &a, NULL);
	assert_int_equal(fab_parse_auto(frame, n, 0, &h, &got), FAB_E_FIELD);
	a.nonce = 0x5678;
	a.necho = FAB_MAX_NODES + 1;
	n = build_auto(frame, &a, NULL);
	assert_int_equal(fab_parse_auto(frame, n, 0, &h, &got), FAB_E_FIELD);
	a.necho = 1;
	memcpy(a.echo[0].mac, mac_b, 6);
	a.echo[0].nonce = 0x9abc;
	n = build_auto(frame, &a, NULL);
	assert_int_equal(fab_parse_auto(frame, n, 0, &h, &got), FAB_OK);
	assert_memory_equal(got.mac, mac_a, 6);
	assert_int_equal(got.echo[0].nonce, 0x9abc);
	/* Broadcast only: a frame sent to one station could tell it a view the others never see. */
	memcpy(frame, mac_b, 6);
	assert_int_equal(fab_parse_auto(frame, n, 0, &h, &got), FAB_E_FIELD);
	n = build_auto(frame, &a, NULL);
	/* Not a frame for the node's own parser. */
	assert_int_equal(fab_parse(frame, n, 0, 4, &h, (const uint8_t **)&(const uint8_t *){ 0 }),
			 FAB_E_TYPE);
	/* A view: ascending, the sender in it, as many as expected. */
	a.nview = 2;
	memcpy(a.view[0], mac_a, 6);
	memcpy(a.view[1], mac_b, 6);
	n = build_auto(frame, &a, NULL);
	assert_int_equal(fab_parse_auto(frame, n, 0, &h, &got), FAB_OK);
	assert_int_equal(fab_auto_find((const uint8_t (*)[6])got.view, got.nview, mac_b), 1);
	/* Damaged anywhere: the CRC. */
	frame[FAB_ETH_HLEN + FAB_HDR_LEN + 40] ^= 1;
	assert_int_equal(fab_parse_auto(frame, n, 0, &h, &got), FAB_E_CRC);
	/* Views that could mislead: out of order, without the sender, a size nodes= does not say. */
	memcpy(a.view[0], mac_b, 6);
	memcpy(a.view[1], mac_a, 6);
	n = build_auto(frame, &a, NULL);
	assert_int_equal(fab_parse_auto(frame, n, 0, &h, &got), FAB_E_FIELD);
	memcpy(a.view[0], mac_b, 6);
	a.nview = 1;
	a.expect = 1;
	n = build_auto(frame, &a, NULL);
	assert_int_equal(fab_parse_auto(frame, n, 0, &h, &got), FAB_E_FIELD);
	memcpy(a.view[0], mac_a, 6);
	memcpy(a.view[1], mac_b, 6);
	a.nview = 2;
	a.expect = 3;
	n = build_auto(frame, &a, NULL);
	assert_int_equal(fab_parse_auto(frame, n, 0, &h, &got), FAB_E_FIELD);
	a.expect = 0;
	a.nview = 65;
	n = build_auto(frame, &a, NULL);
	assert_int_equal(fab_parse_auto(frame, n, 0, &h, &got), FAB_E_FIELD);
	a.nview = 2;
	/* The payload's MAC is the frame's source, and unicast. */
	a.mac[5] = 9;
	n = build_auto(frame, &a, NULL);
	assert_int_equal(fab_parse_auto(frame, n, 0, &h, &got), FAB_E_FIELD);
	memcpy(a.mac, mac_a, 6);
	/* A frame truncated, or addressed to a node. */
	n = build_auto(frame, &a, NULL);
	assert_int_equal(fab_parse_auto(frame, n - 1, 0, &h, &got), FAB_E_LEN);
	frame[FAB_ETH_HLEN + 6] = 1;	/* dst */
	assert_int_equal(fab_parse_auto(frame, n, 0, &h, &got), FAB_E_CRC);
	/* Keyed: only keyed, and the tag under the cluster key. */
	seal.key.k0 = 1;
	seal.key.k1 = 2;
	un.key = seal.key;
	n = build_auto(frame, &a, &seal);
	assert_int_equal(fab_parse_auto(frame, n, 0, &h, &got), FAB_E_KEY);
	assert_int_equal(fab_parse_auto(frame, n, 1, &h, &got), FAB_OK);
	assert_int_equal(fab_unseal(&un, frame, &h, 0), FAB_OK);
	un.key.k1 = 3;
	assert_int_equal(fab_unseal(&un, frame, &h, 0), FAB_E_MAC);
	n = build_auto(frame, &a, NULL);
	assert_int_equal(fab_parse_auto(frame, n, 1, &h, &got), FAB_E_KEY);
}

/*
 * A group's frame (FAB_MCAST): each member finds its own entry as a DATA
 * frame's header; a node it does not name, a changed byte, a keyed or a
 * unicast frame, a wrong count or length, are refused.
 */
static void mcast_frames(void **state)
{
	static uint8_t f[2048];
	static const uint8_t mac[6] = { 2, 0, 0, 0, 0, 9 };
	struct fab_mcast_member m[3] = { { 1, 11, 100, 5, 0, 70 }, { 2, 12, 200, 6, 1, 80 }, { 5, 15, 300, 7, 0, 90 } };
	const uint8_t *msg;
	struct fab_hdr h;
	size_t n;

	(void)state;
	memset(f, 0, sizeof f);
	for (int i = 0; i < 40; i++)
		f[FAB_MCAST_MSG_OFF(3) + i] = (uint8_t)(i + 1);
	n = fab_build_mcast(f, mac, 0x26, 0, 6, m, 3, 40);
	assert_int_equal(n, FAB_MCAST_MSG_OFF(3) + 40);
	assert_true(f[0] & 1);				/* a group address */
	assert_int_equal(fab_parse_mcast(f, n, 2, 8, &h, &msg), FAB_OK);
	assert_int_equal(h.type, FAB_DATA);
	assert_int_equal(h.dst, 2);
	assert_int_equal(h.src, 0);
	assert_int_equal(h.proto, 6);
	assert_int_equal(h.session, 12);
	assert_int_equal(h.seq, 200);
	assert_int_equal(h.ack, 6);
	assert_int_equal(h.sack, 1);
	assert_int_equal(h.limit, 80);
	assert_int_equal(h.len, 40);
	assert_ptr_equal(msg, f + FAB_MCAST_MSG_OFF(3));
	assert_int_equal(fab_parse_mcast(f, n, 5, 8, &h, &msg), FAB_OK);
	assert_int_equal(h.seq, 300);
	assert_int_equal(fab_parse_mcast(f, n, 3, 8, &h, &msg), FAB_E_NOTME);
	assert_int_equal(fab_parse_mcast(f, n, 0, 8, &h, &msg), FAB_E_NODE);	/* from itself */
	assert_int_equal(fab_parse_mcast(f, n - 1, 2, 8, &h, &msg), FAB_E_LEN);
	/* Every byte after the Ethernet header is covered by the CRC or checked. */
	for (size_t i = FAB_ETH_HLEN; i < n; i++) {
		f[i] ^= 0x10;
		assert_int_not_equal(fab_parse_mcast(f, n, 2, 8, &h, &msg), FAB_OK);
		f[i] ^= 0x10;
	}
	f[0] &= (uint8_t)~1;				/* to one station: not a group's */
	assert_int_equal(fab_parse_mcast(f, n, 2, 8, &h, &msg), FAB_E_FIELD);
	f[0] |= 1;
	/* Ordinary frame parsing does not take it for any other type. */
	assert_int_not_equal(fab_parse_full(f, n, 2, 8, 0, 0, &h, &msg), FAB_OK);
}

UNIT_MAIN("wire", NULL, NULL,
	  cmocka_unit_test(mcast_frames),
	  cmocka_unit_test(crc32c_known_values),
	  cmocka_unit_test(crc32c_folding_agrees),
	  cmocka_unit_test(build_then_parse),
	  cmocka_unit_test(every_bit_flip_is_caught),
	  cmocka_unit_test(rejects_bad_frames),
	  cmocka_unit_test(raw_frames_may_skip_the_crc),
	  cmocka_unit_test(lossless_link_frames_may_skip_the_crc),
	  cmocka_unit_test(shortcut_agrees_with_every_check),
	  cmocka_unit_test(siphash_known_values),
	  cmocka_unit_test(keyed_frames),
	  cmocka_unit_test(fault_spec_parsing),
	  cmocka_unit_test(auto_frames))
