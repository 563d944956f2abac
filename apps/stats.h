/*
 * Latency samples: collect TSC cycle counts, then report order statistics.
 */
#ifndef APPS_STATS_H
#define APPS_STATS_H

#include <stddef.h>
#include <stdint.h>

struct samples {
	uint64_t *v;
	size_t n, cap;
};

/* 0, or -1 if memory ran out. */
int samples_init(struct samples *s, size_t cap);
void samples_free(struct samples *s);

static inline void samples_add(struct samples *s, uint64_t c)
{
	if (s->n < s->cap)
		s->v[s->n++] = c;
}

/* Sort, then the q-th quantile (0..1) in cycles; 0 if empty. */
uint64_t samples_quantile(struct samples *s, double q);

/* Format cycles as microseconds with 2 decimals into buf. */
const char *fmt_us(char *buf, size_t len, uint64_t cycles);

#endif
