/*
 * The boot's incarnation; see incarnation.h.
 */
#include "kernel/incarnation.h"
#include "kernel/node.h"
#include "kernel/siphash.h"
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

int incarnation_value_ok(uint64_t v, uint64_t before)
{
	return v != 0 && v != ~0ULL && v != before;
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

/*
 * A hardware value that passes the checks a faulty DRNG fails: never 0,
 * never all ones (the known RDRAND fault of some CPUs, which then reports
 * success), never the value drawn before.  Intel's DRNG guide 5.2.1:
 * retry a failed RDRAND up to 10 times; RDSEED may be empty for a while.
 */
static uint64_t last_hw;
static int hw_refused;

static int hw_ok(uint64_t v)
{
	if (!incarnation_value_ok(v, last_hw)) {
		hw_refused++;
		return 0;
	}
	last_hw = v;
	return 1;
}

static int has_rdseed, has_rdrand, probed;

static void probe(void)
{
	uint32_t a, b, c, d, max;

	probed = 1;
	cpuid(0, 0, &max, &b, &c, &d);
	if (max >= 7) {
		cpuid(7, 0, &a, &b, &c, &d);
		has_rdseed = (b & (1u << 18)) != 0;	/* CPUID.(EAX=7,ECX=0):EBX.RDSEED */
	}
	cpuid(1, 0, &a, &b, &c, &d);
	has_rdrand = (c & (1u << 30)) != 0;		/* CPUID.01H:ECX.RDRAND */
}

/* One 64-bit value and where it came from. */
static uint64_t draw(const char **from)
{
	uint64_t v = 0;

	if (!probed)
		probe();
	for (int i = 0; has_rdseed && i < RDSEED_TRIES; i++) {
		if (rdseed64(&v) && hw_ok(v)) {
			*from = "rdseed";
			return v;
		}
		cpu_relax();
	}
	for (int i = 0; has_rdrand && i < RDRAND_TRIES; i++) {
		if (rdrand64(&v) && hw_ok(v)) {
			*from = "rdrand";
			return v;
		}
	}
	*from = "tsc jitter";
	return jitter() ^ v;
}

uint64_t incarnation(void)
{
	if (!inc) {
		irqflags_t f = irq_save();
		if (!inc) {
			uint64_t v = draw(&source);
			inc = v ? v : 1;
		}
		irq_restore(f);
	}
	return inc;
}

/*
 * random64: SipHash-2-4 of a counter under a 128-bit key drawn at the
 * first call from the same sources as the incarnation (a second and third
 * draw, so that the incarnation, which HELLOs publish, says nothing of it).
 */
static struct sipkey rkey;
static uint64_t rctr;
static int rkeyed;

uint64_t random64(void)
{
	irqflags_t f = irq_save();
	const char *from;
	uint64_t v;

	if (!rkeyed) {
		incarnation();
		rkey.k0 = draw(&from);
		rkey.k1 = draw(&from) ^ rdtsc();
		rkeyed = 1;
	}
	v = siphash_word(&rkey, NULL, 0, ++rctr);
	irq_restore(f);
	return v ? v : 1;
}

int incarnation_refused(void)
{
	return hw_refused;
}

const char *incarnation_source(void)
{
	incarnation();
	return source;
}
#endif
