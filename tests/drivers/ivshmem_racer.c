/*
 * A co-resident writer of the shared-memory link, for tests: what another
 * guest on the same ivshmem server, or any process that opens the memory,
 * could do to the nodes' rings (drivers/shm_ring.h), at the host's full
 * speed, which a Python thread cannot reach.  boot/tools/ivshmem-server runs it
 * (--racer) once every node is connected, with the memory as fd 3:
 *
 *   ivshmem-racer stamps SIZE NODES SRC DST MS
 *
 * For MS milliseconds, keeps every slot of the ring from SRC to DST
 * stamped, ahead of DST's head, as a frame of length 5 (shorter than any
 * Ethernet frame): DST's driver must skip each and count it against its
 * polling budget, or a writer this fast would hold it in its drain with
 * interrupts off for as long as it keeps writing.  Frames SRC publishes
 * meanwhile are destroyed with the rest (the fabric sends them again).
 * Then, or at SIGTERM (the server stops it when the nodes are done
 * sooner), it stops and prints
 *
 *   ivshmem-racer: stamped N slots ahead of node DST's head in MS ms
 *
 * Host C, no dependency beyond libc.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "drivers/shm_ring.h"

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int usage(void)
{
	fprintf(stderr, "usage: ivshmem-racer stamps SIZE NODES SRC DST MS  (the memory as fd 3)\n");
	return 2;
}

static volatile sig_atomic_t stopped;

static void on_term(int sig)
{
	(void)sig;
	stopped = 1;
}

int main(int argc, char **argv)
{
	signal(SIGTERM, on_term);	/* first: stopped at any point, it still says what it did */
	if (argc != 7 || strcmp(argv[1], "stamps") != 0)
		return usage();
	uint64_t size = strtoull(argv[2], NULL, 0);
	int nodes = atoi(argv[3]), src = atoi(argv[4]), dst = atoi(argv[5]);
	uint64_t ms = strtoull(argv[6], NULL, 0);
	if (nodes < 2 || nodes > 64 || src < 0 || src >= nodes || dst < 0 || dst >= nodes || src == dst ||
	    size < 4096 || ms == 0) {
		fprintf(stderr, "ivshmem-racer: bad arguments\n");
		return usage();
	}
	void *base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, 3, 0);
	if (base == MAP_FAILED) {
		perror("ivshmem-racer: mmap fd 3");
		return 1;
	}
	struct shm_geom g = shm_geom(size, nodes);
	if (!g.slots) {
		fprintf(stderr, "ivshmem-racer: no rings fit %llu bytes for %d nodes\n",
			(unsigned long long)size, nodes);
		return 1;
	}
	struct shm_ring *r = shm_ring(base, nodes, g, src, dst);
	uint64_t start = now_ms(), end = start + ms, stamped = 0;

	while (!stopped && now_ms() < end) {
		for (int k = 0; k < 4096; k++) {
			uint32_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
			for (uint32_t n = head; n != head + g.slots; n++) {
				struct shm_slot *s = shm_slot(r, g, n);
				__atomic_store_n(&s->stamp, shm_stamp(n + 1, 5), __ATOMIC_RELEASE);
			}
			stamped += g.slots;
		}
	}
	printf("ivshmem-racer: stamped %llu slots ahead of node %d's head in %llu ms\n",
	       (unsigned long long)stamped, dst, (unsigned long long)(now_ms() - start));
	return 0;
}
