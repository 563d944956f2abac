/*
 * pktbufs for host tests: malloc'ed, with the same contract as
 * drivers/pktbuf.c (and its count of what each consumer holds), plus a
 * leak and double-free check.  Tests whose code charges buffers to a
 * share build net/pktshare.c with it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/pktbuf.h"

int pkt_held_bufs[PKT_MAX_CONSUMERS];
static int live, limit = -1;

int pkt_pool_init(int n)
{
	limit = n;
	return 0;
}

struct pktbuf *pkt_get(void)
{
	struct pktbuf *pb;

	if (limit >= 0 && live >= limit)
		return NULL;
	pb = calloc(1, sizeof *pb);
	pb->buf = calloc(1, PKT_BUF_SIZE);
	pb->data = pb->buf + PKT_HEADROOM;
	pb->refs = 1;
	live++;
	return pb;
}

static uint32_t large_frame;

int pkt_large_init(int n, uint32_t frame)
{
	(void)n;
	if (frame > large_frame)
		large_frame = frame;
	return 0;
}

struct pktbuf *pkt_get_len(size_t len)
{
	struct pktbuf *pb;

	if (len <= PKT_MAX_FRAME)
		return pkt_get();
	if (len > large_frame || (limit >= 0 && live >= limit))
		return NULL;
	pb = calloc(1, sizeof *pb);
	pb->buf = calloc(1, PKT_HEADROOM + large_frame);
	pb->data = pb->buf + PKT_HEADROOM;
	pb->refs = 1;
	pb->large = 1;
	live++;
	return pb;
}

uint32_t pkt_large_room(const struct pktbuf *pb)
{
	(void)pb;
	return PKT_HEADROOM + large_frame;
}

int pkt_free_len(size_t len)
{
	return len <= PKT_MAX_FRAME || len <= large_frame ? pkt_free_count() : 0;
}

int pkt_total_len(size_t len)
{
	(void)len;
	return limit >= 0 ? limit : PKT_LARGE_BUFS;
}

void pkt_ref(struct pktbuf *pb)
{
	if (pb->refs <= 0)
		abort();
	pb->refs++;
}

void pkt_put(struct pktbuf *pb)
{
	if (pb->refs <= 0) {
		fprintf(stderr, "pkt_put: double free\n");
		abort();
	}
	if (--pb->refs == 0) {
		pkt_uncharge(pb);
		free(pb->buf);
		free(pb);
		live--;
	}
}

int pkt_free_count(void)
{
	return limit >= 0 ? limit - live : 1 << 20;
}

int pkt_total(void)
{
	return limit;
}

int pkt_low_water(void)
{
	return 0;
}

/* Buffers not yet returned (tests assert 0 at the end). */
int host_pkt_live(void)
{
	return live;
}
