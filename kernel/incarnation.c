/*
 * The boot's incarnation; see incarnation.h.
 */
#include "kernel/incarnation.h"
#include "kernel/node.h"
#include "kernel/x86.h"

#define RDRAND_TRIES 10		/* Intel DRNG guide 5.2.1 */
#define RDSEED_TRIES 200	/* RDSEED may be empty for a while: retry with pause */
#define JITTER_SAMPLES 256

static inline uint64_t rotl(uint64_t x, int b) { return x << b | x >> (64 - b); }

uint64_t incarnation_fold(uint64_t s, uint64_t v)
{
	/* Two ARX rounds of SipHash's shape over (s, v), then the splitmix64 finisher. */
	uint64_t a = s ^ 0x736f6d6570736575ULL, b = v ^ 0x646f72616e646f6dULL;

	for (int i = 0; i < 2; i++) {
		a += b;
		b = rotl(b, 13) ^ a;
		a = rotl(a, 32);
		b += 0x9e3779b97f4a7c15ULL;
		a ^= rotl(b, 17);
	}
	a ^= a >> 30;
	a *= 0xbf58476d1ce4e5b9ULL;
	a ^= a >> 27;
	a *= 0x94d049bb133111ebULL;
	return a ^ (a >> 31);
}

#ifndef HOST_TEST
static uint64_t inc;
static const char *source;

static int rdrand64(uint64_t *v)
{
	uint8_t ok;

	__asm__ volatile("rdrand %0; setc %1" : "=r"(*v), "=qm"(ok) : : "cc");
	return ok;
}

static int rdseed64(uint64_t *v)
{
	uint8_t ok;

	__asm__ volatile("rdseed %0; setc %1" : "=r"(*v), "=qm"(ok) : : "cc");
	return ok;
}

static uint64_t jitter(void)
{
	uint64_t s = rdtsc() ^ (uint64_t)node_id << 48, prev = rdtsc();
	uint32_t a, b, c, d;

	for (int i = 0; i < JITTER_SAMPLES; i++) {
		/* CPUID and port I/O leave the guest (or enter SMM): their cost varies. */
		cpuid(0, 0, &a, &b, &c, &d);
		(void)inb(0x80);
		uint64_t t = rdtsc();
		s = incarnation_fold(s, (t - prev) ^ t << 17 ^ (uint64_t)i << 56);
		prev = t;
	}
	return s;
}

static void draw(void)
{
	uint32_t a, b, c, d, max;
	uint64_t v = 0;

	cpuid(0, 0, &max, &b, &c, &d);
	if (max >= 7) {
		cpuid(7, 0, &a, &b, &c, &d);
		if (b & (1u << 18)) {			/* CPUID.(EAX=7,ECX=0):EBX.RDSEED */
			for (int i = 0; i < RDSEED_TRIES && !source; i++) {
				if (rdseed64(&v) && v)
					source = "rdseed";
				else
					cpu_relax();
			}
		}
	}
	if (!source) {
		cpuid(1, 0, &a, &b, &c, &d);
		if (c & (1u << 30)) {			/* CPUID.01H:ECX.RDRAND */
			for (int i = 0; i < RDRAND_TRIES && !source; i++)
				if (rdrand64(&v) && v)
					source = "rdrand";
		}
	}
	if (!source) {
		v = jitter();
		source = "tsc jitter";
	}
	inc = v ? v : 1;
}

uint64_t incarnation(void)
{
	if (!inc) {
		irqflags_t f = irq_save();
		if (!inc)
			draw();
		irq_restore(f);
	}
	return inc;
}

const char *incarnation_source(void)
{
	incarnation();
	return source;
}
#endif
