/*
 * Seeds for fuzz_igb, each in INTx and in MSI-X mode: frames of 60, 1514,
 * 1518 and 1519 bytes, of 13 and 14, of 0, one of 2048 and one over three
 * buffers, one with a CRC error and one with only checksum bits set,
 * harvested by polls and by the interrupt handler; the ring filled to RDT
 * and drained; a hook holding buffers until the pool is empty, then
 * letting them go.
 * Usage: seed_igb <dir>
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static uint8_t out[8192];
static size_t olen;

static void b(int v) { out[olen++] = (uint8_t)v; }
static void frame(int hold, unsigned len, int errors)
{
	b(0 | hold << 2);
	b((int)(len & 0xff));
	b((int)(len >> 8));
	b(errors);
	for (int k = 0; k < 8; k++)	/* the write-back's first 8 bytes */
		b(0xa5 ^ k);
}
static void poll_(int hold) { b(1 | hold << 2); }
static void intr(int hold) { b(2 | hold << 2); }
static void release(void) { b(3); }

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

int main(int argc, char **argv)
{
	static const unsigned lens[] = { 60, 1514, 1518, 1519, 13, 14, 0, 2048, 5000 };
	int bad = 0, i = 0;

	if (argc != 2)
		return 2;
	for (int msix = 0; msix < 2; msix++) {
	b(msix);
	for (unsigned k = 0; k < sizeof lens / sizeof lens[0]; k++)
		frame(0, lens[k], 0);
	frame(0, 100, 0x01);		/* CE */
	frame(0, 100, 0x60);		/* TCPE, IPE */
	poll_(0);
	intr(0);
	bad |= save(argv[1], i++);
	b(msix);
	for (int k = 0; k < 300; k++)
		frame(0, 64, 0);
	poll_(0); poll_(0); poll_(0); intr(0); poll_(0);
	for (int k = 0; k < 40; k++)
		frame(0, 64, 0);
	poll_(0);
	bad |= save(argv[1], i++);
	b(msix);
	for (int k = 0; k < 6; k++)
		frame(3, 200, 0);
	poll_(3);
	release();
	frame(0, 200, 0);
	poll_(0);
	bad |= save(argv[1], i++);
	}
	return bad;
}
