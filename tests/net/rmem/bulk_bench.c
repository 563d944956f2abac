/*
 * Bulk rows: bandwidth as the papers and users measure it, beside the
 * memory's own in the same run.
 *
 *   write-bw-<size>   rmem_write_block of <size> bytes, again and again
 *                     (8 MiB in all, at least two blocks), then rmem_sync:
 *                     the block WRITE one way, until the target applied it
 *   read-bw-<size>    the same bytes by READ: pieces of rmem_max_xfer (one
 *                     frame: 1408 bytes, 63 KiB on shm's large slots), up to
 *                     READ_DEPTH in flight, into a local segment; the last
 *                     block compared with what node 1 holds
 *   block-4k          the remote-memory paper's 2.3: 4 KiB block transfers
 *                     (one rmem_write_block each), 256 KiB in all
 *   block-4k-cells    the same bytes as 40-byte WRITEs, the paper's cell-size
 *                     remote writes (its 34.7 Mb/s beside 35.4 for blocks)
 *   memcpy-4m         node 0 copies 4 MiB in its own memory: the floor of
 *                     the shared-memory link, whose every byte is a copy
 *   memcpy-4m-aligned the same between two 4 MiB-aligned blocks (see
 *                     memcpy_row: QEMU's TLB)
 *
 * Sizes 4 KiB to 4 MiB.  Every row prints
 *   RESULT bench row=<name> nic=<nic> bytes=B ms=T mb_per_s=M base=-
 * (MB: 10^6 bytes).  Timing is reported, never asserted.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "apps/app.h"
#include "kernel/mem.h"
#include "kernel/tsc.h"
#include "net/net.h"
#include "net/rmem/rmem.h"
#include "tests/bench/bench.h"

#define BULK (4u << 20)			/* each node's segment */
#define TOTAL (8u << 20)		/* bytes a write-bw or read-bw row moves */
#define READ_DEPTH 32			/* READs in flight */
#define WAIT_NS 60000000000ULL

static uint8_t *buf;			/* this node's exported "bulk" segment */
static uint8_t *src;			/* node 0: what it writes, and memcpy-4m's source */
static int bseg = -1, peer_rd = -1;

static int setup(void)
{
	buf = page_alloc_zeroed(BULK);
	if (!buf || (node_id == 0 && !(src = page_alloc_zeroed(BULK)))) {
		printf("bench: bulk: node %d has no free 4 MiB block of pages\n", node_id);
		return -1;
	}
	bseg = seg_export("bulk", buf, BULK, RMEM_ALL);
	if (bseg < 0) {
		printf("bench: bulk: node %d could not export its segment (%d)\n", node_id, bseg);
		return -1;
	}
	/* The peer exports when it gets here; a busy host may keep it a while. */
	peer_rd = rmem_import_wait(1 - node_id, "bulk", 30000000000ULL);
	if (peer_rd < 0)
		printf("bench: bulk: node %d found no segment \"bulk\" on node %d (%d)\n", node_id, 1 - node_id,
		       peer_rd);
	return peer_rd < 0 ? -1 : 0;
}

static void report(const char *row, uint64_t bytes, uint64_t ns)
{
	bench_rate(row, bytes, ns, NULL, "mb_per_s", "-");
}

static const size_t sizes[] = { 4096, 16384, 65536, 262144, 1u << 20, 4u << 20 };

static int write_curve(void)
{
	char row[32], sz[8];

	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		size_t size = sizes[k], total = TOTAL > 2 * size ? TOTAL : 2 * size;
		uint64_t t0 = cycles();
		for (size_t done = 0; done < total; done += size) {
			uint32_t off = (uint32_t)(done % BULK);
			int r = rmem_write_block(peer_rd, off, src + off, size, 0);
			if (r < 0) {
				printf("bench: write-bw: rmem_write_block of %zu bytes failed (%d)\n", size, r);
				return -1;
			}
		}
		int r = rmem_sync(peer_rd, WAIT_NS);
		uint64_t ns = cycles_to_ns(cycles() - t0);
		if (r < 0) {
			printf("bench: write-bw: rmem_sync failed (%d)\n", r);
			return -1;
		}
		snprintf(row, sizeof row, "write-bw-%s", bench_size_name(size, sz, sizeof sz));
		report(row, total, ns);
	}
	return 0;
}

/* READ count bytes at off of node 1's segment into the same place of ours, READ_DEPTH at a time. */
static int read_block(uint32_t off, size_t count)
{
	int h[READ_DEPTH];
	const uint32_t piece = rmem_max_xfer(peer_rd);
	size_t issued = 0, waited = 0, n = (count + piece - 1) / piece;

	while (waited < n) {
		while (issued < n && issued - waited < READ_DEPTH) {
			uint32_t at = (uint32_t)(issued * piece);
			uint32_t c = count - at > piece ? piece : (uint32_t)(count - at);
			int x = rmem_read(peer_rd, off + at, c, bseg, off + at, 0);
			if (x == -EAGAIN && issued > waited)
				break;		/* no call left: wait for one first */
			if (x < 0)
				return x;
			h[issued++ % READ_DEPTH] = x;
		}
		int r = rmem_read_wait(h[waited++ % READ_DEPTH], WAIT_NS);
		if (r < 0)
			return r;
	}
	return 0;
}

static int read_curve(void)
{
	char row[32], sz[8];

	/* Node 1's segment holds what write_curve wrote (src); ours is cleared, so a READ shows. */
	memset(buf, 0, BULK);
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		size_t size = sizes[k], total = TOTAL > 2 * size ? TOTAL : 2 * size, last = 0;
		uint64_t t0 = cycles();
		for (size_t done = 0; done < total; done += size) {
			last = done % BULK;
			int r = read_block((uint32_t)last, size);
			if (r < 0) {
				printf("bench: read-bw: READ of %zu bytes failed (%d)\n", size, r);
				return -1;
			}
		}
		uint64_t ns = cycles_to_ns(cycles() - t0);
		/* The last block READ must be what node 1 holds. */
		if (memcmp(buf + last, src + last, size) != 0) {
			printf("bench: read-bw: a %zu-byte READ brought other bytes than node 1 holds\n", size);
			return -1;
		}
		snprintf(row, sizeof row, "read-bw-%s", bench_size_name(size, sz, sizeof sz));
		report(row, total, ns);
		memset(buf, 0, BULK);	/* cleared again for the next size's check */
	}
	return 0;
}

/* The paper's 2.3: 4 KiB blocks, and the same bytes as cell-size (40-byte) WRITEs. */
static int block_rows(void)
{
	const size_t total = 256u << 10, block = 4096, cell = 40;
	uint64_t t0 = cycles();
	int r = 0;

	for (size_t done = 0; done < total && r == 0; done += block)
		r = rmem_write_block(peer_rd, (uint32_t)done, src + done, block, 0);
	if (r == 0)
		r = rmem_sync(peer_rd, WAIT_NS);
	if (r < 0)
		return -1;
	report("block-4k", total, cycles_to_ns(cycles() - t0));
	t0 = cycles();
	for (size_t done = 0; done < total && r == 0; done += block)
		for (size_t c = 0; c < block && r == 0; c += cell) {
			uint32_t n = block - c < cell ? (uint32_t)(block - c) : (uint32_t)cell;
			r = rmem_write(peer_rd, (uint32_t)(done + c), src + done + c, n, 0);
		}
	if (r == 0)
		r = rmem_sync(peer_rd, WAIT_NS);
	if (r < 0)
		return -1;
	report("block-4k-cells", total, cycles_to_ns(cycles() - t0));
	return 0;
}

/*
 * memcpy-4m: 4 MiB less 64 KiB, from 32 KiB into one 4 MiB block to the
 * start of another.  memcpy-4m-aligned: the whole of one block to the
 * other.  QEMU's TCG keeps its TLB direct-mapped by virtual page number:
 * two blocks of the buddy allocator are aligned to their 4 MiB, so their
 * pages fall on the same entries of a TLB of 1024 entries or fewer, and
 * rep movsq between them misses on every access (measured: 100-160 MB/s
 * against 1.5-2.4 GB/s); the node's memcpy copies such twins by blocks
 * instead (kernel/memcpy.c).  Once the kernel has grown the TLB past them
 * (vm_tlb_grow) they are twins no longer and go by rep movsq as the other
 * row does.  Both rows, so that a difference shows.
 */
static int memcpy_row(void)
{
	const int reps = 8;
	const size_t skew = 32u << 10, n = BULK - 2 * skew;
	uint64_t t0 = cycles();

	for (int i = 0; i < reps; i++) {
		memcpy(buf, src + skew, n);
		__asm__ volatile("" ::: "memory");	/* every copy happens */
	}
	report("memcpy-4m", (uint64_t)reps * n, cycles_to_ns(cycles() - t0));
	t0 = cycles();
	for (int i = 0; i < reps / 4; i++) {
		memcpy(buf, src, BULK);
		__asm__ volatile("" ::: "memory");
	}
	report("memcpy-4m-aligned", (uint64_t)(reps / 4) * BULK, cycles_to_ns(cycles() - t0));
	return 0;
}

static int time_bulk(const struct bench_opts *o, struct samples *s)
{
	(void)o;
	(void)s;
	for (size_t i = 0; i < BULK; i++)
		src[i] = (uint8_t)(i * 13 + 5);
	if (memcpy_row() < 0 || write_curve() < 0 || read_curve() < 0 || block_rows() < 0)
		return -1;
	return 0;
}

static const struct bench_pair bulk_pair = { setup, NULL, time_bulk, NULL };

static const struct bench bulk = {
	.name = "bulk", .summary = "bandwidth: block WRITE and READ 4 KiB to 4 MiB, the paper's 2.3, memcpy-4m",
	.run_pair = &bulk_pair, .bulk = 1,
};
BENCH_REGISTER(bulk, 68_bulk);
