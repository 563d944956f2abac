/*
 * Write seed inputs for fuzz_fabric: sequences of valid frames (DATA, ACK,
 * PROBE, with SACK bits and credit) from peers 0, 2 and 3 to node 1, in
 * the fuzz target's format (2-byte little-endian length, then the frame).
 * Usage: seed_fabric <dir>
 */
#include <string.h>

#include "net/fabric/wire.h"
#include "tests/host/seed_common.h"

static const uint8_t mac_me[6] = { 2, 0x4e, 0x4f, 0x57, 0, 1 };

static size_t frame(uint8_t *out, uint8_t type, int src, uint32_t seq, uint32_t ack,
		    uint32_t sack, uint32_t limit, size_t len)
{
	struct fab_hdr h = { 0 };
	uint8_t mac_src[6] = { 2, 0x4e, 0x4f, 0x57, 0, (uint8_t)src };

	h.type = type;
	h.proto = type == FAB_DATA ? 9 : 0;
	h.src = (uint16_t)src;
	h.dst = 1;
	h.seq = seq;
	h.ack = ack;
	h.sack = sack;
	h.limit = limit;
	h.len = (uint16_t)len;
	h.session = 7;
	for (size_t i = 0; i < len; i++)
		out[2 + FAB_ETH_HLEN + FAB_HDR_LEN + i] = (uint8_t)(seq + i);
	size_t n = fab_build(out + 2, mac_me, mac_src, &h);
	out[0] = (uint8_t)n;
	out[1] = (uint8_t)(n >> 8);
	return n + 2;
}

/* fuzz_fabric's node 1 has this incarnation. */
#define MY_INC 0x1111222233334444ULL

/* A HELLO from src with incarnation inc, echoing node 1's. */
static size_t hello(uint8_t *out, int src, uint64_t inc, int bound)
{
	struct fab_hdr h = { 0 };
	struct fab_hello hl = { 0 };
	uint8_t mac_src[6] = { 2, 0x4e, 0x4f, 0x57, 0, (uint8_t)src };

	h.type = FAB_HELLO;
	h.src = (uint16_t)src;
	h.dst = 1;
	h.len = sizeof hl;
	hl.nodes = 4;
	hl.flags = bound ? FAB_HELLO_BOUND : 0;
	memcpy(hl.mac, mac_src, 6);
	hl.inc = inc;
	hl.echo = MY_INC;
	memcpy(out + 2 + FAB_ETH_HLEN + FAB_HDR_LEN, &hl, sizeof hl);
	size_t n = fab_build(out + 2, mac_me, mac_src, &h);
	out[0] = (uint8_t)n;
	out[1] = (uint8_t)(n >> 8);
	return n + 2;
}

/* A node=auto station of MAC ...:src: searching, or with a view of nview members (src among them). */
static size_t auto_frame(uint8_t *out, int src, int nview)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	struct fab_hdr h = { 0 };
	struct fab_auto a = { 0 };
	uint8_t mac_src[6] = { 2, 0x4e, 0x4f, 0x57, 0, (uint8_t)src };

	h.type = FAB_AUTO;
	h.src = FAB_BROADCAST;
	h.dst = FAB_BROADCAST;
	h.len = sizeof a;
	a.expect = (uint16_t)nview;
	a.nview = (uint16_t)nview;
	a.heard = 1;
	a.inc = 0x5555 + (uint64_t)src;
	memcpy(a.mac, mac_src, 6);
	for (int i = 0; i < nview; i++) {
		memcpy(a.view[i], mac_src, 6);
		a.view[i][5] = (uint8_t)i;
	}
	memcpy(out + 2 + FAB_ETH_HLEN + FAB_HDR_LEN, &a, sizeof a);
	size_t n = fab_build(out + 2, bcast, mac_src, &h);
	out[0] = (uint8_t)n;
	out[1] = (uint8_t)(n >> 8);
	return n + 2;
}

int main(int argc, char **argv)
{
	static uint8_t buf[65536];

	if (argc != 2)
		return 2;
	for (int s = 0; s < 6; s++) {
		size_t n = 0;
		for (uint32_t i = 0; i < 12; i++) {
			uint32_t seq = (s == 3) ? 11 - i : i;	/* reversed order in one seed */
			uint8_t type = (i % 5 == 4) ? FAB_ACK : (i % 7 == 6) ? FAB_PROBE : FAB_DATA;
			size_t len = type == FAB_DATA ? (i * 97 + (uint32_t)s * 13) % 200 : 0;
			n += frame(buf + n, type, (s % 3 == 1) ? 2 : (s % 3 == 2 ? 3 : 0), seq,
				   i / 2, s & 1 ? 0x5u : 0, 8 + i, len);
		}
		if (seed_write_nth(argv[1], s, buf, n))
			return 1;
	}
	/* A peer is bound, streams, reboots (a new incarnation resets its channel), streams again. */
	size_t n = hello(buf, 2, 0xaaaa, 1);
	for (uint32_t i = 0; i < 6; i++)
		n += frame(buf + n, FAB_DATA, 2, i, 0, 0, 8, 40);
	n += hello(buf + n, 2, 0xbbbb, 0);
	for (uint32_t i = 0; i < 6; i++)
		n += frame(buf + n, FAB_DATA, 2, i, 0, 0, 8, 40);
	if (seed_write(argv[1], "seed_rejoin", buf, n))
		return 1;
	/* node=auto stations: searching, then the view of four. */
	n = auto_frame(buf, 0, 0);
	n += auto_frame(buf + n, 2, 4);
	if (seed_write(argv[1], "seed_auto", buf, n))
		return 1;
	return 0;
}
