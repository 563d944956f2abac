/*
 * Remote memory's state for host tests that run the kernel's rmem code on
 * the fake fabric of host_fabric.c: a fresh start, as a boot would give.
 */
#include <string.h>

#include "kernel/incarnation.h"

#include "net/rmem/internal.h"
#include "tests/host/host_fabric.h"

void host_rmem_reset(int self, int nodes)
{
	host_fabric_reset(self, nodes);
	segtab_init(&rmem_segtab, self);
	memset(rmem_notes, 0, sizeof rmem_notes);
	memset(&rmem_ctr, 0, sizeof rmem_ctr);
	rmem_ready = 1;
}

/* The kernel's random64 (kernel/incarnation.c): distinct, never 0, the same every run. */
uint64_t random64(void)
{
	static uint64_t x = 0x2545f4914f6cdd1dULL;

	x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x | 1;
}
