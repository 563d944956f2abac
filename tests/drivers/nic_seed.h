/*
 * What the NIC drivers' seed programs share (seed_e1000, seed_igb,
 * seed_virtio_net): an input built a byte at a time (b) and saved as
 * <dir>/seed<i> (save).  With NIC_SEED_JUNK defined (the bytes a frame
 * operation carries after its error bits: 0 for fuzz_e1000, 8 for
 * fuzz_igb's write-back), the Intel targets' operations and their three
 * seeds (intel_seeds).
 */
#ifndef TESTS_DRIVERS_NIC_SEED_H
#define TESTS_DRIVERS_NIC_SEED_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static uint8_t out[8192];
static size_t olen;

static void b(int v) { out[olen++] = (uint8_t)v; }

/* The input so far into <dir>/seed<i>, and a new one begun.  0, or 1 on an error. */
static int save(const char *dir, int i)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof path, "%s/seed%d", dir, i);
	if (!(f = fopen(path, "wb")))
		return 1;
	fwrite(out, 1, olen, f);
	olen = 0;
	return fclose(f) != 0;
}

#ifdef NIC_SEED_JUNK

static void frame(int hold, unsigned len, int errors)
{
	b(0 | hold << 2);
	b((int)(len & 0xff));
	b((int)(len >> 8));
	b(errors);
	for (int k = 0; k < NIC_SEED_JUNK; k++)
		b(0xa5 ^ k);
}
static void poll_(int hold) { b(1 | hold << 2); }
static void intr(int hold) { b(2 | hold << 2); }
static void release(void) { b(3); }

/* A seed's start: its mode byte where the target takes one (mode >= 0). */
static void begin(int mode)
{
	if (mode >= 0)
		b(mode);
}

/*
 * The three seeds into <dir>/seed<*i>.. (*i moves on), each after the byte
 * mode where mode >= 0: frames of 60, 1514, 1518 and 1519 bytes, of 13
 * and 14, of 0, one of 2048 and one over three buffers, one with a CRC
 * error and one with only checksum bits set, harvested by polls and by the
 * interrupt handler; the ring filled to RDT and drained; a hook holding
 * buffers until the pool is empty, then letting them go.  0, or 1 on an error.
 */
static int intel_seeds(const char *dir, int *i, int mode)
{
	static const unsigned lens[] = { 60, 1514, 1518, 1519, 13, 14, 0, 2048, 5000 };
	int bad = 0;

	begin(mode);
	for (unsigned k = 0; k < sizeof lens / sizeof lens[0]; k++)
		frame(0, lens[k], 0);
	frame(0, 100, 0x01);		/* CE */
	frame(0, 100, 0x60);		/* TCPE, IPE */
	poll_(0);
	intr(0);
	bad |= save(dir, (*i)++);
	begin(mode);
	for (int k = 0; k < 300; k++)
		frame(0, 64, 0);
	poll_(0); poll_(0); poll_(0); intr(0); poll_(0);
	for (int k = 0; k < 40; k++)
		frame(0, 64, 0);
	poll_(0);
	bad |= save(dir, (*i)++);
	begin(mode);
	for (int k = 0; k < 6; k++)
		frame(3, 200, 0);
	poll_(3);
	release();
	frame(0, 200, 0);
	poll_(0);
	bad |= save(dir, (*i)++);
	return bad;
}

#endif
#endif
