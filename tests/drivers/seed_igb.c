/*
 * Seeds for fuzz_igb, each in INTx and in MSI-X mode: frames of 60, 1514,
 * 1518 and 1519 bytes, of 13 and 14, of 0, one of 2048 and one over three
 * buffers, one with a CRC error and one with only checksum bits set,
 * harvested by polls and by the interrupt handler; the ring filled to RDT
 * and drained; a hook holding buffers until the pool is empty, then
 * letting them go (intel_seeds, tests/drivers/nic_seed.h).  A frame carries
 * 8 bytes more: the write-back's first 8.
 * Usage: seed_igb <dir>
 */
#define NIC_SEED_JUNK 8
#include "tests/drivers/nic_seed.h"

int main(int argc, char **argv)
{
	int bad = 0, i = 0;

	if (argc != 2)
		return 2;
	for (int msix = 0; msix < 2; msix++)
		bad |= intel_seeds(argv[1], &i, msix);
	return bad;
}
