/*
 * Seeds for fuzz_net: frames before the demultiplexer is attached; IPv4,
 * ARP and fabric handlers and a frame of each, kept by its handler or
 * freed at once; a frame of 13 and of 14 bytes, one of the largest size,
 * an unknown type; a table filled to 8 types and a ninth refused; a type
 * registered twice, unregistered, and unregistered again.
 * Usage: seed_net <dir>
 */
#include <stdint.h>
#include <string.h>

#include "tests/host/seed_common.h"

static void reg(int h, int type) { b(h << 2); b(type & 0xff); b(type >> 8); }
static void unreg(int type) { b(1); b(type & 0xff); b(type >> 8); }
static void attach(void) { b(3); }
static void frame(int keep, int len, int type)
{
	b(2 | keep << 2);
	b(len & 0xff);
	b(len >> 8);
	for (int i = 0; i < len; i++)
		b(i == 12 ? type >> 8 : i == 13 ? type & 0xff : i);
}

int main(int argc, char **argv)
{
	int bad = 0, i = 0;

	if (argc != 2)
		return 2;
	frame(0, 60, 0x0800);
	bad |= save(argv[1], i++);
	attach(); reg(1, 0x0800); reg(2, 0x0806); reg(3, 0x88b5);
	frame(0, 60, 0x0800); frame(1, 42, 0x0806); frame(2, 1514, 0x88b5); frame(0, 13, 0x0800);
	frame(0, 14, 0x88b5); frame(3, 64, 0x86dd); frame(4, 0, 0);
	bad |= save(argv[1], i++);
	attach();
	for (int k = 0; k < 9; k++)
		reg(k, 0x9000 + k);
	reg(5, 0x9000); unreg(0x9003); unreg(0x9003); reg(4, 0x9003); frame(1, 20, 0x9003);
	frame(2, 20, 0x9008);
	bad |= save(argv[1], i++);
	return bad;
}
