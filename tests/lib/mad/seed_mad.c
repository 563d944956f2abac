/*
 * Seeds for fuzz_mad: well-formed messages as mad.c's sender lays them
 * out (EXPRESS data in the header, EXPRESS beyond it in the body, CHEAPER
 * data, empty packs, the most packs), received by a handler that mirrors
 * every pack and calls receive_data; the same served as RPCs (a known and
 * an unknown service); and misuse (a wrong length, the other mode, a pack
 * too many, receive_data missing or twice, a nested receive); and messages
 * of data only (no descriptor, section 2.1.2), unpacked as sent, with a
 * wrong length, and as an RPC.
 * Usage: seed_mad <dir>
 */
#include <stdint.h>
#include <string.h>

#include "lib/mad.h"
#include "tests/host/seed_common.h"

#define DESC(mode, len) ((uint32_t)(mode) << 24 | (uint32_t)(len))
#define EXP (MAD_SND_SAFER | MAD_RECV_EXPRESS)
#define CHP MAD_SND_CHEAPER

/*
 * One message: its header from the packs (with their descriptor, as the
 * debug mode sends it; DATA_ONLY in rpc: without), then the handler's steps.
 */
#define DATA_ONLY 0x100

static void message(int rpc, int n, const int *mode, const uint32_t *len, const uint8_t *steps, int nsteps)
{
	uint8_t hdr[MAD_HDR_MAX];
	int described = !(rpc & DATA_ONLY);
	struct mad_wire_hdr h = { MAD_MAGIC, described ? (uint16_t)n : 0, 1, 0, 0 };
	size_t d = sizeof h + 4u * h.npacks;

	rpc &= ~DATA_ONLY;
	uint8_t flags = rpc != 0;
	for (int i = 0; i < n; i++) {
		int inhdr = (mode[i] & MAD_RECV_EXPRESS) && h.express_len + len[i] <= MAD_EXPRESS_MAX;
		uint32_t w = DESC(mode[i] | ((mode[i] & MAD_RECV_EXPRESS) && !inhdr ? MAD_DESC_INBODY : 0), len[i]);
		if (described)
			memcpy(hdr + sizeof h + 4 * i, &w, 4);
		if (inhdr) {
			for (uint32_t k = 0; k < len[i]; k++)
				hdr[d + h.express_len + k] = (uint8_t)(k + 1);
			h.express_len += len[i];
		} else {
			h.body_len += len[i];
		}
	}
	if (rpc && n && len[0] == 4)
		memcpy(hdr + d, rpc == 1 ? "\3\0\0\0" : "\x09\0\0\0", 4);
	memcpy(hdr, &h, sizeof h);
	uint16_t hl = (uint16_t)(d + h.express_len);
	put(&flags, 1);
	put(&hl, 2);
	put(hdr, hl);
	uint8_t ns = (uint8_t)nsteps;
	put(&ns, 1);
	put(steps, (size_t)nsteps);
}

int main(int argc, char **argv)
{
	static const int m3[] = { EXP, CHP, MAD_SND_LATER | MAD_RECV_EXPRESS };
	static const uint32_t l3[] = { 4, 100, 16 };
	static const int m4[] = { EXP, EXP, CHP, EXP };
	static const uint32_t l4[] = { 4, 1000, 3000, 200 };	/* the last two EXPRESS in the body */
	static const int mz[] = { CHP, EXP, CHP };
	static const uint32_t lz[] = { 0, 0, 8 };
	static const uint8_t all3[] = { 0, 0, 4 }, all4[] = { 0, 8, 0, 4 }, all3i[] = { 8, 0, 8 | 4 };
	static const uint8_t wrong_len[] = { 0, 1, 5, 0, 4 }, flipped[] = { 0, 2, 0, 4 };
	static const uint8_t extra[] = { 0, 0, 0, 0, 4 }, nodata[] = { 0, 0, 0 };
	static const uint8_t twice[] = { 0, 0, 4, 4 | 0x20 }, nested[] = { 0x20, 0, 0, 4 }, null[] = { 0x10, 0, 4 };
	static const uint8_t any[] = { 3, EXP, 4, 0, 3, CHP, 100, 0, 3, EXP, 16, 0 | 4 };
	static const uint8_t svc[] = { 0, 4 }, svc4[] = { 0, 0, 4 };
	int mm[MAD_MAX_PACKS];
	uint32_t ml[MAD_MAX_PACKS];
	uint8_t mall[MAD_MAX_PACKS];
	int bad = 0, i = 0;

	if (argc != 2)
		return 2;
	message(0, 3, m3, l3, all3, 3);
	bad |= save(argv[1], i++);
	message(0, 4, m4, l4, all4, 4);
	bad |= save(argv[1], i++);
	message(0, 3, m3, l3, all3i, 3);
	bad |= save(argv[1], i++);
	message(0, 3, mz, lz, all3, 3);
	bad |= save(argv[1], i++);
	message(0, 3, m3, l3, wrong_len, 5);
	message(0, 3, m3, l3, all3, 3);			/* the next message reads right */
	bad |= save(argv[1], i++);
	message(0, 3, m3, l3, flipped, 4);
	message(0, 4, m4, l4, all4, 4);
	bad |= save(argv[1], i++);
	message(0, 3, m3, l3, extra, 5);
	bad |= save(argv[1], i++);
	message(0, 3, m3, l3, nodata, 3);
	message(0, 3, m3, l3, twice, 4);
	message(0, 3, m3, l3, nested, 4);
	message(0, 3, m3, l3, null, 3);
	bad |= save(argv[1], i++);
	message(0, 3, m3, l3, any, (int)sizeof any);
	bad |= save(argv[1], i++);
	message(1, 3, m3, l3, svc, 2);			/* service 3: the rest mirrored */
	message(2, 3, m3, l3, svc, 2);			/* service 9: unknown */
	message(1, 4, m4, l4, svc4, 3);
	bad |= save(argv[1], i++);
	for (int k = 0; k < MAD_MAX_PACKS; k++) {
		mm[k] = k % 3 ? CHP : EXP;
		ml[k] = (uint32_t)(k * 5 % 40);
		mall[k] = k == MAD_MAX_PACKS - 1 ? 4 : 0;
	}
	message(0, MAD_MAX_PACKS, mm, ml, mall, MAD_MAX_PACKS);
	bad |= save(argv[1], i++);
	/*
	 * Data only: each step an op, the mode's index in fuzz_mad's six (0-2
	 * the send modes, 3-5 the same EXPRESS), its length (one byte after
	 * op 0, two after the others).
	 */
	static const uint8_t d3[] = { 0, 4, 4, 0, 0, 100, 4, 5, 16 };
	static const uint8_t d4[] = { 1, 4, 4, 0, 1, 4, 0xe8, 0x03, 1, 0, 0xb8, 0x0b, 5, 4, 200, 0 };
	static const uint8_t d3short[] = { 0, 4, 4, 0, 0, 99, 4, 5, 16 };
	static const uint8_t d3long[] = { 0, 4, 4, 0, 0, 101, 4, 5, 16 };
	static const uint8_t d3svc[] = { 0, 0, 100, 4, 5, 16 };
	message(DATA_ONLY, 3, m3, l3, d3, (int)sizeof d3);
	message(DATA_ONLY, 4, m4, l4, d4, (int)sizeof d4);
	bad |= save(argv[1], i++);
	message(DATA_ONLY, 3, m3, l3, d3short, (int)sizeof d3short);
	message(DATA_ONLY, 3, m3, l3, d3long, (int)sizeof d3long);
	message(DATA_ONLY, 3, m3, l3, d3, (int)sizeof d3);
	bad |= save(argv[1], i++);
	message(DATA_ONLY | 1, 3, m3, l3, d3svc, (int)sizeof d3svc);
	message(DATA_ONLY | 2, 3, m3, l3, d3svc, (int)sizeof d3svc);
	bad |= save(argv[1], i++);
	return bad;
}
