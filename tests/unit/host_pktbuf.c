/*
 * pktbufs for host tests: malloc'ed, with the same contract as
 * drivers/pktbuf.c, plus a leak and double-free check.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/pktbuf.h"

static int live, limit = -1;
static int held[PKT_MAX_CONSUMERS], share[PKT_MAX_CONSUMERS];
static unsigned long refused[PKT_MAX_CONSUMERS];
static const char *names[PKT_MAX_CONSUMERS];
static int nconsumers;

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
		if (pb->charged)
			held[pb->charged - 1]--;
		free(pb->buf);
		free(pb);
		live--;
	}
}

int pkt_consumer_find(const char *name)
{
	for (int c = 0; c < nconsumers; c++)
		if (strcmp(names[c], name) == 0)
			return c;
	return -ENOENT;
}

int pkt_consumer(const char *name, int n)
{
	int c = pkt_consumer_find(name);

	if (n < 0 || (limit >= 0 && n > limit))
		return -EINVAL;
	if (c < 0) {
		if (nconsumers == PKT_MAX_CONSUMERS)
			return -ENOSPC;
		c = nconsumers;
		names[c] = name;
	}
	share[c] = n;
	if (c == nconsumers)
		nconsumers++;	/* last: a charge that checks c < nconsumers sees it whole */
	return c;
}

int pkt_charge(struct pktbuf *pb, int c)
{
	if (c < 0 || c >= nconsumers || pb->charged)
		return -EINVAL;
	if (held[c] >= share[c]) {
		refused[c]++;
		return -ENOBUFS;
	}
	held[c]++;
	pb->charged = (uint8_t)(c + 1);
	return 0;
}

struct pktbuf *pkt_get_for(int c)
{
	struct pktbuf *pb;

	if (c < 0 || c >= nconsumers || !(pb = pkt_get()))
		return NULL;
	if (pkt_charge(pb, c) < 0) {
		pkt_put(pb);
		return NULL;
	}
	return pb;
}

int pkt_share_set(int c, int n)
{
	if (c < 0 || c >= nconsumers || n < 0)
		return -EINVAL;
	share[c] = n;
	return 0;
}

int pkt_held(int c)
{
	return c >= 0 && c < nconsumers ? held[c] : 0;
}

int pkt_share(int c)
{
	return c >= 0 && c < nconsumers ? share[c] : 0;
}

unsigned long pkt_refused(int c)
{
	return c >= 0 && c < nconsumers ? refused[c] : 0;
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
