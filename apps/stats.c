#include <stdio.h>
#include <stdlib.h>

#include "apps/stats.h"
#include "kernel/tsc.h"

int samples_init(struct samples *s, size_t cap)
{
	s->v = malloc(cap * sizeof *s->v);
	s->n = 0;
	s->cap = s->v ? cap : 0;
	if (!s->v)
		printf("samples: no memory for %zu samples (%zu KiB): ask for fewer iterations\n", cap,
		       cap * sizeof *s->v / 1024);
	return s->v ? 0 : -1;
}

void samples_free(struct samples *s)
{
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

uint64_t samples_quantile(struct samples *s, double q)
{
	size_t i;

	if (s->n == 0)
		return 0;
	qsort(s->v, s->n, sizeof *s->v, cmp_u64);
	i = (size_t)(q * (double)(s->n - 1) + 0.5);
	return s->v[i < s->n ? i : s->n - 1];
}

const char *fmt_us(char *buf, size_t len, uint64_t c)
{
	uint64_t ns = cycles_to_ns(c);
	snprintf(buf, len, "%lu.%02lu", ns / 1000, (ns % 1000) / 10);
	return buf;
}
