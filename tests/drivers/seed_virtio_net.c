/*
 * Seeds for fuzz_virtio_net: frames of 60, 13, 14, 0 and the largest
 * size and one byte more, harvested by a poll and by the interrupt work;
 * more frames than the ring holds; a hook holding buffers until the pool
 * is empty, then letting them go and the refill timer firing.
 * Usage: seed_virtio_net <dir>
 */
#include "tests/drivers/nic_seed.h"
#include "drivers/pktbuf.h"

static void frame(int hold, unsigned len) { b(0 | hold << 3); b((int)(len & 0xff)); b((int)(len >> 8)); }

int main(int argc, char **argv)
{
	static const unsigned lens[] = { 60, 13, 14, 0, PKT_MAX_FRAME, PKT_MAX_FRAME + 1 };
	int bad = 0, i = 0;

	if (argc != 2)
		return 2;
	for (unsigned k = 0; k < sizeof lens / sizeof lens[0]; k++)
		frame(0, lens[k]);
	b(1);
	frame(0, 100);
	b(2);
	bad |= save(argv[1], i++);
	for (int k = 0; k < 300; k++)
		b(5);
	b(2); b(1); b(1); b(1); b(1); b(1);
	bad |= save(argv[1], i++);
	for (int k = 0; k < 6; k++)
		frame(3, 200);
	b(1 | 3 << 3); b(2 | 3 << 3); b(3); b(4); frame(0, 200); b(1);
	bad |= save(argv[1], i++);
	return bad;
}
