/*
 * cost: what the kernel's primitives cost on this CPU, or under this
 * emulator.  Under QEMU's TCG some instructions that are cheap on
 * hardware leave the translated code (pause, sti, wrmsr) or run as long
 * helpers (fxsave, fxrstor), and that decides where a microsecond goes;
 * this app measures them so that the bench's figures can be read.  Node 0
 * runs every probe `iters` times (default 20000) and prints
 *
 *	RESULT cost op=<name> ns=<mean per operation> cycles=<TSC cycles, the same>
 *
 * Under QEMU's -icount (make cost) the cycles are instructions, the
 * loop's own (a few) included.
 *
 * The other nodes do nothing.  Timing only: nothing is asserted.
 */
#include <stdio.h>
#include <string.h>

#include "apps/app.h"
#include "kernel/crc.h"
#include "kernel/siphash.h"
#include "kernel/sync.h"
#include "kernel/thread.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"
#include "net/net.h"

static uint8_t bufa[2048], bufb[8192], bufc[171 * 53 + 8], bufd[171 * 48];
static uint8_t fxarea[512] __attribute__((aligned(16)));
static struct sem ping, pong;
static int iters;

static void *partner(void *arg)
{
	(void)arg;
	for (int i = 0; i < iters; i++) {
		sem_wait(&ping);
		sem_post(&pong);
	}
	return NULL;
}

static void report(const char *name, uint64_t cycles, int per)
{
	uint64_t n = (uint64_t)iters * per;

	result("op=%s ns=%lu cycles=%lu", name, cycles_to_ns(cycles) / n, (cycles + n / 2) / n);
}

#define MEASURE(name, per, body)                            \
	do {                                                \
		uint64_t t0_ = rdtsc();                     \
		for (int i_ = 0; i_ < iters; i_++) {        \
			body;                               \
		}                                           \
		report(name, rdtsc() - t0_, per);           \
	} while (0)

static int cost_main(void)
{
	volatile uint64_t sink = 0;
	struct pktbuf *pb;
	struct thread *t;
	uint64_t fsb;

	iters = (int)arg_int("iters", 20000);
	if (node_id != 0)
		return 0;
	MEASURE("rdtsc", 1, sink += rdtsc());
	MEASURE("irq_save_restore", 1, {
		irqflags_t f = irq_save();
		irq_restore(f);
	});
	MEASURE("pause", 1, cpu_relax());
	MEASURE("add_x100", 1, {
		for (int j = 0; j < 100; j++)
			sink += (uint64_t)j;
	});
	MEASURE("memcpy_64", 1, {
		memcpy(bufa, bufb, 64);
		barrier();
	});
	MEASURE("memcpy_1500", 1, {
		memcpy(bufa, bufb, 1500);
		barrier();
	});
	MEASURE("pkt_get_put", 1, pkt_put(pkt_get()));
	/* What a keyed frame adds on each side: its header and 64 bytes of payload, and the counter. */
	MEASURE("crc32c_96", 1, sink += crc32c(0, bufb, 96));
	/* Both implementations, whichever crc32c() chose: under TCG the instruction is a helper call. */
	MEASURE("crc32c_tables_96", 1, sink += crc32c_sw(0, bufb, 96));
	MEASURE("crc32c_tables_1408", 1, sink += crc32c_sw(0, bufb, 1408));
	if (crc32c_hw_present()) {
		MEASURE("crc32c_sse42_96", 1, sink += crc32c_hw_checked(0, bufb, 96));
		MEASURE("crc32c_sse42_1408", 1, sink += crc32c_hw_checked(0, bufb, 1408));
	}
	/* PCLMULQDQ folding, a helper call under TCG too: where it starts (256 bytes), a frame, and 8 KiB. */
	if (crc32c_clmul_present()) {
		MEASURE("crc32c_clmul_256", 1, sink += crc32c_clmul_checked(0, bufb, 256));
		MEASURE("crc32c_tables_256", 1, sink += crc32c_sw(0, bufb, 256));
		MEASURE("crc32c_clmul_1408", 1, sink += crc32c_clmul_checked(0, bufb, 1408));
		MEASURE("crc32c_clmul_8192", 1, sink += crc32c_clmul_checked(0, bufb, 8192));
		MEASURE("crc32c_tables_8192", 1, sink += crc32c_sw(0, bufb, 8192));
	}
	/* The hybrid-deposit cells' AAL5 CRC-32 (tables): one cell's payload, and 1408 bytes as for CRC-32C above. */
	MEASURE("crc32_aal5_48", 1, sink += crc32_aal5(0, bufb, 48));
	MEASURE("crc32_aal5_1408", 1, sink += crc32_aal5(0, bufb, 1408));
	/*
	 * The CRC of a frame's cells where they lie (payloads 53 bytes apart): one Ethernet
	 * frame's 27 and 8 KiB of a block's 171, PCLMULQDQ folding
	 * where the CPU has it (crc32_aal5_cells) and the tables.
	 */
	MEASURE("crc32_aal5_cells_27", 1, sink += crc32_aal5_cells(0, bufb + 5, 53, 27));
	MEASURE("crc32_aal5_cells_tables_27", 1, sink += crc32_aal5_cells_tables(0, bufb + 5, 53, 27));
	MEASURE("crc32_aal5_cells_171", 1, sink += crc32_aal5_cells(0, bufc + 5, 53, 171));
	MEASURE("crc32_aal5_cells_tables_171", 1, sink += crc32_aal5_cells_tables(0, bufc + 5, 53, 171));
	/*
	 * As the hybrid deposit takes them: a block's payloads copied into its cells as the CRC
	 * goes (the sender), and out of a frame's cells into the endpoint (the receiver).
	 */
	MEASURE("crc32_aal5_cells_copy_171", 1, sink += crc32_aal5_cells_copy(0, bufd, 48, bufc + 5, 53, 171));
	struct sipkey key;
	key.k0 = 1;
	key.k1 = 2;
	MEASURE("siphash_104", 1, sink += siphash(&key, bufb, 104));
	MEASURE("fxsave_fxrstor", 1, {
		__asm__ volatile("fxsave64 %0" : "=m"(fxarea));
		__asm__ volatile("fxrstor64 %0" : : "m"(fxarea));
	});
	fsb = rdmsr(MSR_FS_BASE);
	MEASURE("wrmsr_fs_base", 1, wrmsr(MSR_FS_BASE, fsb));
	MEASURE("thread_yield_alone", 1, thread_yield());
	/* Two threads handing a semaphore back and forth: two switches a round. */
	sem_init(&ping, 0);
	sem_init(&pong, 0);
	if (!(t = thread_create("cost-partner", partner, NULL, PRIO_NORMAL, 0)))
		return 1;
	MEASURE("thread_switch", 2, {
		sem_post(&ping);
		sem_wait(&pong);
	});
	thread_join(t);
	/* A frame to a station nobody is: the driver's transmit path without a receiver. */
	if ((pb = pkt_get()) != NULL) {
		memset(pb->data, 0, 64);
		memcpy(pb->data, "\x02\xff\xff\xff\xff\xfe", 6);
		pb->len = 64;
		MEASURE("net_transmit_nobody", 1, net_transmit(pb));
		pkt_put(pb);
	}
	return 0;
}

static const struct argspec cost_args[] = {
	{ "iters", ARG_INT, 1, 10000000, "repetitions of each probe (default 20000)" },
	{ NULL, 0, 0, 0, NULL },
};

APP(cost, "cost",
    "what kernel primitives cost here (pause, fxsave, a thread switch, ...)",
    cost_main, cost_args, 0);
