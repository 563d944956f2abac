/*
 * Seeds for fuzz_lwip: a client (10.0.0.2) talking to the node
 * (10.0.0.1): ARP, ping, UDP, TCP handshakes (the fuzzing build's ISN
 * is 0x1000) with data in and out of order, to the echoing port 7 and the
 * port 9 that reads nothing, and IP fragments.  Checksums are left zero:
 * the fuzzing build does not check them.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tests/host/seed_common.h"

static const unsigned char node_mac[6] = { 2, 0x4e, 0x4f, 0x57, 0, 0 };
static const unsigned char cli_mac[6] = { 2, 0x4e, 0x4f, 0x57, 0, 1 };

static void frame(const unsigned char *f, size_t n)
{
	b((int)(n & 0xff));
	b((int)(n >> 8));
	put(f, n);
}

static void timers(unsigned n)
{
	b(0xff);
	b(0xff);
	b((int)(n & 0xff));
}

static size_t eth(unsigned char *f, uint16_t type)
{
	memcpy(f, node_mac, 6);
	memcpy(f + 6, cli_mac, 6);
	f[12] = (unsigned char)(type >> 8);
	f[13] = (unsigned char)type;
	return 14;
}

/* An IPv4 header at f (20 bytes), protocol p, payload len, fragment field. */
static size_t ip(unsigned char *f, unsigned char p, size_t len, uint16_t frag)
{
	memset(f, 0, 20);
	f[0] = 0x45;
	f[2] = (unsigned char)((20 + len) >> 8);
	f[3] = (unsigned char)(20 + len);
	f[4] = 0x12;
	f[5] = 0x34;
	f[6] = (unsigned char)(frag >> 8);
	f[7] = (unsigned char)frag;
	f[8] = 64;
	f[9] = p;
	f[12] = 10; f[15] = 2;
	f[16] = 10; f[19] = 1;
	return 20;
}

static void tcp(uint16_t port, uint32_t seq, uint32_t ack, unsigned char flags, const char *data)
{
	unsigned char f[1514];
	size_t dl = data ? strlen(data) : 0, n = eth(f, 0x0800);

	n += ip(f + n, 6, 20 + dl, 0x4000);
	memset(f + n, 0, 20);
	f[n] = 0x9c; f[n + 1] = 0x40;			/* port 40000 */
	f[n + 2] = (unsigned char)(port >> 8); f[n + 3] = (unsigned char)port;
	for (int i = 0; i < 4; i++) {
		f[n + 4 + i] = (unsigned char)(seq >> (24 - 8 * i));
		f[n + 8 + i] = (unsigned char)(ack >> (24 - 8 * i));
	}
	f[n + 12] = 0x50;
	f[n + 13] = flags;
	f[n + 14] = 0xff; f[n + 15] = 0xff;
	if (dl)
		memcpy(f + n + 20, data, dl);
	frame(f, n + 20 + dl);
}

int main(int argc, char **argv)
{
	unsigned char f[1514];
	size_t n;

	if (!seed_args(argc, argv))
		return 2;
	/* ARP: who has 10.0.0.1?  Then a ping. */
	n = eth(f, 0x0806);
	memcpy(f, "\xff\xff\xff\xff\xff\xff", 6);
	memcpy(f + n, "\x00\x01\x08\x00\x06\x04\x00\x01", 8);
	memcpy(f + n + 8, cli_mac, 6);
	memcpy(f + n + 14, "\x0a\x00\x00\x02", 4);
	memset(f + n + 18, 0, 6);
	memcpy(f + n + 24, "\x0a\x00\x00\x01", 4);
	frame(f, n + 28);
	n = eth(f, 0x0800);
	n += ip(f + n, 1, 16, 0);
	memcpy(f + n, "\x08\x00\x00\x00\x00\x01\x00\x01pingping", 16);
	frame(f, n + 16);
	if (save_as(argv[1], "arp-ping"))
		return 1;
	/* UDP to port 7, whole and in two fragments. */
	n = eth(f, 0x0800);
	n += ip(f + n, 17, 8 + 16, 0);
	memcpy(f + n, "\x9c\x40\x00\x07\x00\x18\x00\x00sixteen bytes!!!", 24);
	frame(f, n + 24);
	n = eth(f, 0x0800);
	n += ip(f + n, 17, 16, 0x2000);
	memcpy(f + n, "\x9c\x40\x00\x07\x00\x18\x00\x00sixteen ", 16);
	frame(f, n + 16);
	n = eth(f, 0x0800);
	n += ip(f + n, 17, 8, 2);
	memcpy(f + n, "bytes!!!", 8);
	frame(f, n + 8);
	timers(2);
	if (save_as(argv[1], "udp-fragments"))
		return 1;
	/* TCP to the echo port: handshake, data, a segment out of order, FIN. */
	tcp(7, 100, 0, 0x02, NULL);
	tcp(7, 101, 0x1001, 0x10, NULL);
	tcp(7, 101, 0x1001, 0x18, "hello");
	tcp(7, 116, 0x1001, 0x18, "later");
	tcp(7, 106, 0x1001, 0x18, "0123456789");
	timers(3);
	tcp(7, 121, 0x1001, 0x11, NULL);
	timers(4);
	if (save_as(argv[1], "tcp-echo"))
		return 1;
	/* TCP to port 9, which reads nothing: its window fills. */
	tcp(9, 500, 0, 0x02, NULL);
	tcp(9, 501, 0x1001, 0x10, NULL);
	for (int i = 0; i < 12; i++)
		tcp(9, 501 + 10 * (uint32_t)i, 0x1001, 0x18, "abcdefghij");
	tcp(9, 700, 0x1001, 0x18, "far ahead!");
	timers(10);
	tcp(9, 621, 0x1001, 0x04, NULL);
	if (save_as(argv[1], "tcp-hold"))
		return 1;
	return 0;
}
