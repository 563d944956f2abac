#include <stdlib.h>
#include <string.h>

#include "apps/ising_core.h"

/* A 64-bit mix of the coordinates (splitmix64's finalizer). */
static uint64_t mix(uint32_t seed, int n, int r, int c, int what)
{
	uint64_t x = (uint64_t)seed * 0x9e3779b97f4a7c15ULL ^ (uint64_t)(uint32_t)n << 40 ^
		     (uint64_t)(uint32_t)r << 20 ^ (uint64_t)(uint32_t)c ^ (uint64_t)what << 60;

	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

double ising_bond(uint32_t seed, int n, int r, int c, int vertical)
{
	/* Uniform in [-1, 1), exactly representable: 53 random bits. */
	return (double)(mix(seed, n, r, c, 1 + vertical) >> 11) * (1.0 / 4503599627370496.0) - 1.0;
}

int8_t ising_spin0(uint32_t seed, int n, int r, int c)
{
	return (mix(seed, n, r, c, 3) >> 63) ? 1 : -1;
}

int ising_part_init(struct ising_part *p, int n, uint32_t seed, int r0, int r1)
{
	int rows = r1 - r0;

	memset(p, 0, sizeof *p);
	p->n = n;
	p->seed = seed;
	p->r0 = r0;
	p->r1 = r1;
	p->s = malloc((size_t)(rows + 4) * (size_t)n);
	p->jh = malloc(sizeof(double) * (size_t)(rows + 2) * (size_t)n);
	p->jv = malloc(sizeof(double) * (size_t)(rows + 3) * (size_t)n);
	if (!p->s || !p->jh || !p->jv) {
		ising_part_free(p);
		return -1;
	}
	for (int r = r0 - 2; r <= r1 + 1; r++) {
		int rr = ((r % n) + n) % n;
		for (int c = 0; c < n; c++) {
			ising_row(p, r)[c] = ising_spin0(seed, n, rr, c);
			if (r >= r0 - 1 && r <= r1)
				p->jh[(size_t)(r - r0 + 1) * (size_t)n + (size_t)c] = ising_bond(seed, n, rr, c, 0);
			if (r <= r1)
				p->jv[(size_t)(r - r0 + 2) * (size_t)n + (size_t)c] = ising_bond(seed, n, rr, c, 1);
		}
	}
	return 0;
}

void ising_part_free(struct ising_part *p)
{
	free(p->s);
	free(p->jh);
	free(p->jv);
	p->s = NULL;
	p->jh = p->jv = NULL;
}

void ising_wrap(struct ising_part *p)
{
	memcpy(ising_row(p, p->r0 - 1), ising_row(p, p->r1 - 1), (size_t)p->n);
	memcpy(ising_row(p, p->r1), ising_row(p, p->r0), (size_t)p->n);
}

static void note(struct ising_span *sp, int c)
{
	if (sp->lo >= sp->hi) {
		sp->lo = c;
		sp->hi = c + 1;
		return;
	}
	if (c < sp->lo)
		sp->lo = c;
	if (c + 1 > sp->hi)
		sp->hi = c + 1;
}

int ising_half_sweep_rows(struct ising_part *p, int color, int ra, int rb, struct ising_span ch[4])
{
	const int n = p->n;
	int flips = 0;

	for (int r = ra; r < rb; r++) {
		int8_t *up = ising_row(p, r - 1), *row = ising_row(p, r), *down = ising_row(p, r + 1);
		const double *jh = p->jh + (size_t)(r - p->r0 + 1) * (size_t)n;
		const double *jvu = p->jv + (size_t)(r - p->r0 + 1) * (size_t)n;	/* bonds to the row above */
		const double *jvd = jvu + n;						/* bonds to the row below */
		int own = r >= p->r0 && r < p->r1;
		for (int c = (r + color) & 1; c < n; c += 2) {
			int cl = c == 0 ? n - 1 : c - 1, cr = c == n - 1 ? 0 : c + 1;
			double h = jh[cl] * row[cl] + jh[c] * row[cr] + jvu[c] * up[c] + jvd[c] * down[c];
			if (row[c] * h < 0) {
				row[c] = (int8_t)-row[c];
				if (!own)
					continue;
				flips++;
				if (!ch)
					continue;
				if (r == p->r0)
					note(&ch[0], c);
				if (r == p->r0 + 1)
					note(&ch[1], c);
				if (r == p->r1 - 2)
					note(&ch[2], c);
				if (r == p->r1 - 1)
					note(&ch[3], c);
			}
		}
	}
	return flips;
}

int ising_sweep_part(struct ising_part *p, struct ising_span ch[4])
{
	int flips;

	for (int i = 0; i < 4; i++)
		ch[i].lo = ch[i].hi = 0;
	flips = ising_half_sweep_rows(p, 0, p->r0 - 1, p->r1 + 1, ch);
	return flips + ising_half_sweep_rows(p, 1, p->r0, p->r1, ch);
}

double ising_row_energy(const struct ising_part *p, int r)
{
	const int n = p->n;
	const int8_t *row = ising_row(p, r), *down = ising_row(p, r + 1);
	const double *jh = p->jh + (size_t)(r - p->r0 + 1) * (size_t)n;
	const double *jvd = p->jv + (size_t)(r - p->r0 + 2) * (size_t)n;
	double e = 0;

	for (int c = 0; c < n; c++) {
		int cr = c == n - 1 ? 0 : c + 1;
		e -= jh[c] * row[c] * row[cr];
		e -= jvd[c] * row[c] * down[c];
	}
	return e;
}
