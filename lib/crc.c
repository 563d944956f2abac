/*
 * CRC-32C: polynomial 0x1EDC6F41 (reflected 0x82F63B78), initial value and
 * final XOR 0xFFFFFFFF (RFC 3720 B.4).  Check value: "123456789" -> 0xE3069283.
 *
 * Two implementations give the same result: the SSE4.2 crc32 instruction
 * and "slicing-by-8" tables (eight bytes per step, Intel's 2008 method).
 * The first call times both on this CPU and keeps the faster: on hardware
 * that is the instruction, but under QEMU's TCG, which emulates it through
 * a helper call, the tables win.
 */
#include <string.h>

#include "lib/crc.h"

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

uint32_t crc32c_sw(uint32_t crc, const void *buf, size_t n)
{
	const uint8_t *p = buf;

	if (!table_ready)
		make_table();
	crc = ~crc;
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
	return ~crc;
}

__attribute__((target("sse4.2"))) static uint32_t crc32c_hw(uint32_t crc, const void *buf, size_t n)
{
	const uint8_t *p = buf;
	uint64_t c = ~crc;

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

static inline uint64_t tsc(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

/* TSC cycles for 64 runs over a 64-byte frame-sized buffer. */
static uint64_t time_impl(uint32_t (*f)(uint32_t, const void *, size_t))
{
	static uint8_t buf[64];
	volatile uint32_t sink = 0;
	uint64_t t0 = tsc();

	for (int i = 0; i < 64; i++)
		sink += f(sink, buf, sizeof buf);
	return tsc() - t0;
}

static void choose(void)
{
	make_table();
	impl = crc32c_sw;
	impl_name = "tables";
	if (cpu_has_sse42()) {
		time_impl(crc32c_hw);		/* warm up both */
		time_impl(crc32c_sw);
		if (time_impl(crc32c_hw) < time_impl(crc32c_sw)) {
			impl = crc32c_hw;
			impl_name = "sse4.2";
		}
	}
}

uint32_t crc32c(uint32_t crc, const void *buf, size_t n)
{
	if (!impl)
		choose();
	return impl(crc, buf, n);
}

uint32_t crc32c_hw_checked(uint32_t crc, const void *buf, size_t n)
{
	return cpu_has_sse42() ? crc32c_hw(crc, buf, n) : crc32c_sw(crc, buf, n);
}

const char *crc32c_impl(void)
{
	if (!impl)
		choose();
	return impl_name;
}
