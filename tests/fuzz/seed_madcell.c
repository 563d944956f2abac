/*
 * Seeds for fuzz_madcell: messages from both nodes, small and of several
 * chunks, EXPRESS and CHEAPER, received one by one and in bulk, enough of
 * them to wrap the buffer (padding, credit); then the same with node 2
 * writing a chunk header of its own (a wrong number, a padding chunk, a
 * length beyond the buffer) and raising events for it.
 * Usage: seed_madcell <dir>
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static uint8_t out[8192];
static size_t olen;

static void b(int v) { out[olen++] = (uint8_t)v; }
static void w16(unsigned v) { b((int)(v & 0xff)); b((int)(v >> 8)); }
/* Node k sends n packs of (mode 0..3, len). */
static void send(int k, int n, const unsigned *mode, const unsigned *len)
{
	b((k - 1) << 2);
	b(n - 1);
	for (int i = 0; i < n; i++)
		w16(mode[i] | len[i] << 2);
}
static void recv1(void) { b(2); }
static void hostile(int k, unsigned off, int len, const uint8_t *bytes, unsigned ea, unsigned el)
{
	b(1 | (k - 1) << 2);
	w16(off);
	b(len);
	for (int i = 0; i < len; i++)
		b(bytes[i]);
	w16(ea);
	w16(el);
}

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
	static const unsigned m4[] = { 1, 0, 3, 2 }, l4[] = { 4, 4000, 100, 4096 };
	static const unsigned m1[] = { 0 }, l1[] = { 16 };
	/* chunk headers: len, seq, flags, pad */
	static const uint8_t wrong_seq[32] = { 16, 0, 0, 0, 9, 0, 0, 0 };
	static const uint8_t pad[32] = { 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0 };
	static const uint8_t huge[32] = { 0, 0, 1, 0, 0, 0, 0, 0 };
	int bad = 0, i = 0;

	if (argc != 2)
		return 2;
	send(1, 4, m4, l4); send(2, 1, m1, l1); recv1(); recv1(); recv1();
	bad |= save(argv[1], i++);
	for (int k = 0; k < 20; k++) {
		send(1, 4, m4, l4);
		send(2, 1, m1, l1);
		recv1();
		recv1();
	}
	bad |= save(argv[1], i++);
	send(1, 4, m4, l4); hostile(2, 0, 32, wrong_seq, 0, 64); send(1, 1, m1, l1); recv1(); recv1();
	bad |= save(argv[1], i++);
	send(2, 1, m1, l1); hostile(2, 64, 32, pad, 64, 32); send(1, 1, m1, l1); recv1(); recv1(); recv1();
	bad |= save(argv[1], i++);
	hostile(2, 0, 32, huge, 0, 65535); send(1, 4, m4, l4); recv1(); recv1();
	bad |= save(argv[1], i++);
	return bad;
}
