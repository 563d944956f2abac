/*
 * CRC-32C: polynomial 0x1EDC6F41 (reflected 0x82F63B78), initial value and
 * final XOR 0xFFFFFFFF (RFC 3720 B.4).  Check value: "123456789" -> 0xE3069283.
 */
#include <string.h>

#include "lib/crc.h"

static uint32_t table[256];
static int table_ready;
static int have_sse42 = -1;

static void make_table(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0x82f63b78u : c >> 1;
		table[i] = c;
	}
	table_ready = 1;
}

uint32_t crc32c_sw(uint32_t crc, const void *buf, size_t n)
{
	const uint8_t *p = buf;

	if (!table_ready)
		make_table();
	crc = ~crc;
	while (n--)
		crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
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

uint32_t crc32c(uint32_t crc, const void *buf, size_t n)
{
	if (have_sse42 < 0)
		have_sse42 = cpu_has_sse42();
	return have_sse42 ? crc32c_hw(crc, buf, n) : crc32c_sw(crc, buf, n);
}
