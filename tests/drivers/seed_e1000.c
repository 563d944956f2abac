/*
 * Seeds for fuzz_e1000: frames of 60, 1514, 1518 and 1519 bytes, of 13 and
 * 14, of 0, one of 2048 and one over three buffers, one with a CRC error
 * and one with only checksum bits set, harvested by polls and by the
 * interrupt handler; the ring filled to RDT and drained; a hook holding
 * buffers until the pool is empty, then letting them go (intel_seeds,
 * tests/drivers/nic_seed.h).
 * Usage: seed_e1000 <dir>
 */
#define NIC_SEED_JUNK 0
#include "tests/drivers/nic_seed.h"

int main(int argc, char **argv)
{
	int i = 0;

	if (argc != 2)
		return 2;
	return intel_seeds(argv[1], &i, -1);
}
