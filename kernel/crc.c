/*
 * CRC-32C: polynomial 0x1EDC6F41 (reflected 0x82F63B78), initial value and
 * final XOR 0xFFFFFFFF (RFC 3720 B.4).  Check value: "123456789" -> 0xE3069283.
 *
 * Three implementations give the same result: the SSE4.2 crc32
 * instruction, "slicing-by-8" tables (eight bytes per step, Intel's 2008
 * method), and folding by carry-less multiplication (PCLMULQDQ, below).
 * The instruction wherever CPUID says the CPU has it, except under QEMU's
 * TCG: fewest instructions (96 bytes in about 40) and on hardware the
 * fastest by far, but TCG emulates it through a helper call, 8 ns a byte
 * against the tables' 1.8.  TCG emulates PCLMULQDQ in a helper too, but
 * folding 64 bytes costs 8 of them and about 20 other instructions: 0.86
 * ns a byte here over 8 KiB (the cost app's crc32c_clmul_8192, against
 * crc32c_tables_8192's 1.77; 1408 bytes 1.3 us against 2.6), and about the
 * tables' time at 256 bytes; so under TCG long frames fold and short ones
 * (headers, acknowledgements, small messages) take the tables.
 * TCG says what it is in CPUID's hypervisor leaf ("TCGTCGTCGTCG" at
 * 0x40000000), so the choice is fixed per platform: the same on every node
 * of a cluster, and instruction counts under -icount stay exact.
 * (Choosing by timing made nodes of one run differ, and a busy host decide.)
 */
#include <string.h>

#include "kernel/crc.h"
#include "kernel/machine.h"

static uint32_t table[8][256];
static int table_ready;
static uint32_t (*impl)(uint32_t, const void *, size_t);
static const char *impl_name = "none";

static void make_table(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0x82f63b78u : c >> 1;
		table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xff];
	table_ready = 1;
}

/* The tables' CRC without the inversions: state c, n bytes. */
static uint32_t sw_raw(uint32_t crc, const uint8_t *p, size_t n)
{
	while (n >= 8) {
		uint32_t lo, hi;
		memcpy(&lo, p, 4);
		memcpy(&hi, p + 4, 4);
		lo ^= crc;
		crc = table[7][lo & 0xff] ^ table[6][(lo >> 8) & 0xff] ^ table[5][(lo >> 16) & 0xff] ^
		      table[4][lo >> 24] ^ table[3][hi & 0xff] ^ table[2][(hi >> 8) & 0xff] ^
		      table[1][(hi >> 16) & 0xff] ^ table[0][hi >> 24];
		p += 8;
		n -= 8;
	}
	while (n--)
		crc = table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

uint32_t crc32c_sw(uint32_t crc, const void *buf, size_t n)
{
	if (!table_ready)
		make_table();
	return ~sw_raw(~crc, buf, n);
}

/*
 * Folding with carry-less multiplication (PCLMULQDQ; Gopal et al., "Fast
 * CRC Computation for Generic Polynomials Using PCLMULQDQ", Intel 2009):
 * four 128-bit lanes of the message, each multiplied forward by x^512
 * modulo P and added to the lane 64 bytes on, then the four folded into
 * one (x^128), and that one into each 16 bytes left.  The CRC of a string
 * depends only on its polynomial modulo P, and folding keeps that: what
 * remains is a 16-byte string with the same CRC as everything before it,
 * which the tables finish with the bytes short of 16.
 *
 * Bit order is reflected: a little-endian load puts x^63 at bit 0 of a
 * quadword.  A lane's low quadword H stands for H(x) x^64 and its high one
 * L for L(x); the product of H with a constant K whose bit j is the
 * coefficient of x^(63-j) lands in the lane D bits on as H(x) K(x) x^(1-D),
 * so K = x^(D+63) mod P for H and x^(D-1) mod P for L (P is CRC-32C's
 * 0x1EDC6F41).  tests/net/fabric/test_wire.c holds this against the
 * tables at every length to 2 KiB, at odd offsets and from other CRCs.
 */
typedef long long v2di __attribute__((vector_size(16)));
static const v2di fold512 = { 0x1c19243b00000000ll, 0x75bba45b00000000ll };	/* x^575, x^511 */
static const v2di fold128 = { 0x3743f7bd00000000ll, 0x3171d43000000000ll };	/* x^191, x^127 */

__attribute__((target("pclmul,sse2"))) static inline v2di fold(v2di x, v2di k)
{
	return __builtin_ia32_pclmulqdq128(x, k, 0x00) ^ __builtin_ia32_pclmulqdq128(x, k, 0x11);
}

static inline v2di load16(const uint8_t *p)
{
	v2di v;
	memcpy(&v, p, 16);
	return v;
}

/* Under this length the tables: the folds' fixed cost (the last lane's 16 bytes) is not won back. */
#define CLMUL_MIN 256

/* An AAL5 cell's payload: 48 bytes, three 16-byte blocks. */
#define CELL_AAL5_PAYLOAD 48

__attribute__((target("pclmul,sse2"), noinline)) static uint32_t crc32c_clmul(uint32_t crc, const void *buf, size_t n)
{
	const uint8_t *p = buf;

	if (n < CLMUL_MIN)
		return ~sw_raw(~crc, p, n);
	v2di x0 = load16(p), x1 = load16(p + 16), x2 = load16(p + 32), x3 = load16(p + 48);
	x0 ^= (v2di){ (long long)(uint32_t)~crc, 0 };
	for (p += 64, n -= 64; n >= 64; p += 64, n -= 64) {
		x0 = fold(x0, fold512) ^ load16(p);
		x1 = fold(x1, fold512) ^ load16(p + 16);
		x2 = fold(x2, fold512) ^ load16(p + 32);
		x3 = fold(x3, fold512) ^ load16(p + 48);
	}
	x1 ^= fold(x0, fold128);
	x2 ^= fold(x1, fold128);
	x3 ^= fold(x2, fold128);
	for (; n >= 16; p += 16, n -= 16)
		x3 = fold(x3, fold128) ^ load16(p);
	uint8_t last[16];
	memcpy(last, &x3, 16);
	return ~sw_raw(sw_raw(0, last, 16), p, n);
}

__attribute__((target("sse4.2"))) static uint32_t crc32c_hw(uint32_t crc, const void *buf, size_t n)
{
	const uint8_t *p = buf;
	uint64_t c = ~crc;

	/* 32 bytes a turn: the loop's own instructions four times fewer. */
	for (const uint8_t *end = p + (n & ~(size_t)31); p < end; p += 32) {
		uint64_t a, b, d, e;
		memcpy(&a, p, 8);
		memcpy(&b, p + 8, 8);
		memcpy(&d, p + 16, 8);
		memcpy(&e, p + 24, 8);
		c = __builtin_ia32_crc32di(c, a);
		c = __builtin_ia32_crc32di(c, b);
		c = __builtin_ia32_crc32di(c, d);
		c = __builtin_ia32_crc32di(c, e);
	}
	n &= 31;
	while (n >= 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		c = __builtin_ia32_crc32di(c, v);
		p += 8;
		n -= 8;
	}
	uint32_t c32 = (uint32_t)c;
	while (n--)
		c32 = __builtin_ia32_crc32qi(c32, *p++);
	return ~c32;
}

static int cpu_has_sse42(void)
{
	uint32_t a, b, c, d;

	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(1), "c"(0));
	return (c >> 20) & 1;
}

static int cpu_has_pclmul(void)
{
	uint32_t a, b, c, d;

	__asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(1), "c"(0));
	return (c >> 1) & 1;
}

static void choose(void)
{
	make_table();
	impl = crc32c_sw;
	impl_name = "tables";
	if (cpu_is_tcg()) {
		if (cpu_has_pclmul()) {
			impl = crc32c_clmul;
			impl_name = "pclmul folding from 256 bytes, tables below (QEMU TCG: its crc32 "
				    "instruction is a helper call)";
		} else if (cpu_has_sse42()) {
			impl_name = "tables (QEMU TCG: its crc32 instruction is a helper call)";
		}
	} else if (cpu_has_sse42()) {
		impl = crc32c_hw;
		impl_name = "sse4.2";
	}
}

uint32_t crc32c(uint32_t crc, const void *buf, size_t n)
{
	if (__builtin_expect(impl == crc32c_hw, 1))
		return crc32c_hw(crc, buf, n);	/* direct calls: inlined */
	/* Under TCG the short ones (headers, small frames) in the tables, inlined as before. */
	if (__builtin_expect(impl == crc32c_clmul, 1) && n >= CLMUL_MIN)
		return crc32c_clmul(crc, buf, n);
	if (__builtin_expect(impl != NULL, 1))
		return crc32c_sw(crc, buf, n);	/* impl is crc32c_sw or crc32c_clmul */
	choose();
	return impl(crc, buf, n);
}

uint32_t crc32c_clmul_checked(uint32_t crc, const void *buf, size_t n)
{
	if (!table_ready)
		make_table();
	return cpu_has_pclmul() ? crc32c_clmul(crc, buf, n) : crc32c_sw(crc, buf, n);
}

int crc32c_clmul_present(void)
{
	return cpu_has_pclmul();
}

uint32_t crc32c_hw_checked(uint32_t crc, const void *buf, size_t n)
{
	return cpu_has_sse42() ? crc32c_hw(crc, buf, n) : crc32c_sw(crc, buf, n);
}

int crc32c_hw_present(void)
{
	return cpu_has_sse42();
}

const char *crc32c_impl(void)
{
	if (!impl)
		choose();
	return impl_name;
}

/*
 * The cell CRCs (net/deposit/cell.h): one 256-entry table each, most significant
 * bit first.  Built on first use; deposit_init() calls crc_cell_tables()
 * at boot so that the receive path never builds them.
 */
static uint8_t t8[4][256];	/* [k][i]: byte i followed by k zero bytes (slicing-by-4) */
static uint16_t t16[8][256];	/* [k][i]: byte i followed by k zero bytes (slicing-by-8) */
static uint32_t t32[8][256];	/* [k][i]: byte i followed by k zero bytes (slicing-by-8) */
static volatile int cell_tables_ready;
static int aal5_clmul;	/* crc32_aal5_cells folds (PCLMULQDQ): the same on every node of a platform */

__attribute__((cold, noinline)) void crc_cell_tables(void)
{
	if (cell_tables_ready)
		return;
	aal5_clmul = cpu_has_pclmul();
	for (uint32_t i = 0; i < 256; i++) {
		uint8_t c8 = (uint8_t)i;
		uint16_t c16 = (uint16_t)(i << 8);
		uint32_t c32 = i << 24;
		for (int k = 0; k < 8; k++) {
			c8 = (uint8_t)((c8 & 0x80) ? (c8 << 1) ^ 0x07 : c8 << 1);
			c16 = (uint16_t)((c16 & 0x8000) ? (c16 << 1) ^ 0x1021 : c16 << 1);
			c32 = (c32 & 0x80000000u) ? (c32 << 1) ^ 0x04c11db7u : c32 << 1;
		}
		t8[0][i] = c8;
		t16[0][i] = c16;
		t32[0][i] = c32;
	}
	for (int k = 1; k < 4; k++)
		for (uint32_t i = 0; i < 256; i++)
			t8[k][i] = t8[0][t8[k - 1][i]];
	for (int k = 1; k < 8; k++)
		for (uint32_t i = 0; i < 256; i++)
			t16[k][i] = (uint16_t)((t16[k - 1][i] << 8) ^ t16[0][t16[k - 1][i] >> 8]);
	for (int k = 1; k < 8; k++)
		for (uint32_t i = 0; i < 256; i++)
			t32[k][i] = (t32[k - 1][i] << 8) ^ t32[0][t32[k - 1][i] >> 24];
	cell_tables_ready = 1;
}

uint8_t crc8_atm(uint8_t crc, const void *buf, size_t n)
{
	const uint8_t *p = buf;

	if (!cell_tables_ready)
		crc_cell_tables();
	/* Four bytes a step: a cell's 13 control bytes are three and one. */
	while (n >= 4) {
		uint32_t w;
		memcpy(&w, p, 4);	/* p[0] in the low byte */
		w ^= crc;
		crc = (uint8_t)(t8[3][w & 0xff] ^ t8[2][(w >> 8) & 0xff] ^ t8[1][(w >> 16) & 0xff] ^
				t8[0][w >> 24]);
		p += 4;
		n -= 4;
	}
	while (n--)
		crc = t8[0][crc ^ *p++];
	return crc;
}

uint8_t atm_hec(const uint8_t hdr[4])
{
	if (!cell_tables_ready)
		crc_cell_tables();
	return (uint8_t)(t8[3][hdr[0]] ^ t8[2][hdr[1]] ^ t8[1][hdr[2]] ^ t8[0][hdr[3]] ^ 0x55);
}

uint16_t crc16_ccitt(uint16_t crc, const void *buf, size_t n)
{
	const uint8_t *p = buf;

	if (!cell_tables_ready)
		crc_cell_tables();
	/* Eight bytes a step, read as one big-endian word: a cell's 32 data bytes are four. */
	while (n >= 8) {
		uint64_t x;
		memcpy(&x, p, 8);
		x = __builtin_bswap64(x) ^ (uint64_t)crc << 48;
		crc = (uint16_t)(t16[7][x >> 56] ^ t16[6][(x >> 48) & 0xff] ^ t16[5][(x >> 40) & 0xff] ^
				 t16[4][(x >> 32) & 0xff] ^ t16[3][(x >> 24) & 0xff] ^
				 t16[2][(x >> 16) & 0xff] ^ t16[1][(x >> 8) & 0xff] ^ t16[0][x & 0xff]);
		p += 8;
		n -= 8;
	}
	while (n--)
		crc = (uint16_t)((crc << 8) ^ t16[0][(crc >> 8) ^ *p++]);
	return crc;
}

/*
 * AAL5's CRC-32 of whole cells' payloads: count payloads of 48 bytes, each
 * stride bytes after the one before (53 where they lie in the cells of a
 * frame), as crc32_aal5 of them laid end to end.  Folding as crc32c_clmul
 * does, in one lane, in the plain bit order AAL5 uses: a 16-byte block
 * read big-endian is V = H(x) x^64 + L(x), H its first 8 bytes; moved 128
 * bits on it is congruent to H(x) (x^192 mod P) + L(x) (x^128 mod P), a
 * product of at most 95 bits, added to the next block (Gopal et al., as
 * above; P is 0x104C11DB7).  The CRC state goes into the first block's top
 * 32 bits; the last block's 16 bytes, congruent to everything, are
 * finished by the tables.  A cell's three blocks cost six multiplications
 * and a few other instructions: under TCG about half the tables' time
 * (the cost app's crc32_aal5_cells_* rows), and the tables where the CPU
 * has no PCLMULQDQ.
 */
static const v2di fold_be128 = { 0xe8a45605ll, 0xc5b9cd4cll };	/* x^128, x^192 mod P */

static inline v2di load16_be(const uint8_t *p)
{
	uint64_t hi, lo;

	memcpy(&hi, p, 8);
	memcpy(&lo, p + 8, 8);
	return (v2di){ (long long)__builtin_bswap64(lo), (long long)__builtin_bswap64(hi) };
}

__attribute__((target("pclmul,sse2"), noinline)) static uint32_t aal5_cells_clmul(uint32_t crc, const uint8_t *p,
										 size_t stride, size_t count)
{
	v2di x = load16_be(p) ^ (v2di){ 0, (long long)((uint64_t)~crc << 32) };

	for (size_t k = 0; k < count; k++, p += stride) {
		if (k)
			x = fold(x, fold_be128) ^ load16_be(p);
		x = fold(x, fold_be128) ^ load16_be(p + 16);
		x = fold(x, fold_be128) ^ load16_be(p + 32);
	}
	uint64_t last[2] = { __builtin_bswap64((uint64_t)x[1]), __builtin_bswap64((uint64_t)x[0]) };
	return crc32_aal5(0xffffffffu, last, 16);
}

/*
 * aal5_cells_clmul while copying: each 16-byte block loaded once, stored
 * at dst and folded from the same registers, so that the CRC is of the
 * bytes stored even where src is memory another node writes meanwhile.
 */
__attribute__((target("pclmul,sse2"), noinline)) static uint32_t aal5_cells_copy_clmul(uint32_t crc, uint8_t *d,
										      size_t dstride,
										      const uint8_t *s,
										      size_t sstride,
										      size_t count)
{
	v2di x = { 0, (long long)((uint64_t)~crc << 32) };

	for (size_t k = 0; k < count; k++, d += dstride, s += sstride)
		for (unsigned b = 0; b < CELL_AAL5_PAYLOAD; b += 16) {
			uint64_t hi, lo;
			memcpy(&hi, s + b, 8);
			memcpy(&lo, s + b + 8, 8);
			memcpy(d + b, &hi, 8);
			memcpy(d + b + 8, &lo, 8);
			v2di v = { (long long)__builtin_bswap64(lo), (long long)__builtin_bswap64(hi) };
			x = (k | b) ? fold(x, fold_be128) ^ v : x ^ v;
		}
	uint64_t last[2] = { __builtin_bswap64((uint64_t)x[1]), __builtin_bswap64((uint64_t)x[0]) };
	return crc32_aal5(0xffffffffu, last, 16);
}

uint32_t crc32_aal5_cells_copy(uint32_t crc, void *dst, size_t dstride, const void *src, size_t sstride,
			       size_t count)
{
	uint8_t *d = dst;
	const uint8_t *s = src;

	if (!cell_tables_ready)
		crc_cell_tables();
	if (aal5_clmul && count)
		return aal5_cells_copy_clmul(crc, d, dstride, s, sstride, count);
	for (size_t k = 0; k < count; k++, d += dstride, s += sstride) {
		memcpy(d, s, CELL_AAL5_PAYLOAD);
		crc = crc32_aal5(crc, d, CELL_AAL5_PAYLOAD);
	}
	return crc;
}

uint32_t crc32_aal5_cells_tables(uint32_t crc, const void *first, size_t stride, size_t count)
{
	const uint8_t *p = first;

	for (size_t k = 0; k < count; k++, p += stride)
		crc = crc32_aal5(crc, p, 48);
	return crc;
}

uint32_t crc32_aal5_cells(uint32_t crc, const void *first, size_t stride, size_t count)
{
	const uint8_t *p = first;

	if (!cell_tables_ready)
		crc_cell_tables();	/* at boot (deposit_init): it looks for PCLMULQDQ too */
	if (aal5_clmul && count)
		return aal5_cells_clmul(crc, p, stride, count);
	return crc32_aal5_cells_tables(crc, p, stride, count);
}

uint32_t crc32_aal5(uint32_t crc, const void *buf, size_t n)
{
	const uint8_t *p = buf;

	if (!cell_tables_ready)
		crc_cell_tables();
	crc = ~crc;
	/* Eight bytes a step: an AAL5 cell's 48 are six. */
	while (n >= 8) {
		uint32_t a = crc ^ ((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]);
		crc = t32[7][a >> 24] ^ t32[6][(a >> 16) & 0xff] ^ t32[5][(a >> 8) & 0xff] ^ t32[4][a & 0xff] ^
		      t32[3][p[4]] ^ t32[2][p[5]] ^ t32[1][p[6]] ^ t32[0][p[7]];
		p += 8;
		n -= 8;
	}
	while (n--)
		crc = (crc << 8) ^ t32[0][(crc >> 24) ^ *p++];
	return ~crc;
}
