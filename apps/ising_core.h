/*
 * The Ising optimizer of the remote-memory paper, section 3.2.1, as pure
 * logic shared by the `ising` app and its host unit test.
 *
 * An n x n lattice of spins (+1/-1) on a torus; each atom interacts with
 * its four nearest neighbours through a coefficient J of the bond; the
 * lattice energy is E = -sum over bonds of J * s_a * s_b.  The optimizer
 * sweeps the grid and flips a spin when that lowers the energy (when
 * s * h < 0, h being the sum of J * s over its neighbours), in two red/
 * black half-sweeps: cells of one colour only have neighbours of the
 * other, so a half-sweep gives the same result whatever the order of its
 * cells or the split of its rows among nodes.  Bonds and the starting
 * spins are drawn from the seed by a hash of their coordinates, so every
 * node computes exactly the coefficients of its own rows.
 */
#ifndef APPS_ISING_CORE_H
#define APPS_ISING_CORE_H

#include <stddef.h>
#include <stdint.h>

struct ising_part {
	int n;				/* grid side, even */
	uint32_t seed;
	int r0, r1;			/* rows [r0, r1) */
	int8_t *s;			/* (r1 - r0 + 2) * n: a ghost row above, the rows, one below */
	double *jh;			/* (r1 - r0) * n: bond (r, c)-(r, c+1) */
	double *jv;			/* (r1 - r0 + 1) * n: bond (r, c)-(r+1, c), from row r0-1 */
};

/* Columns changed in a row during a half-sweep: [lo, hi), empty if lo >= hi. */
struct ising_span {
	int lo, hi;
};

double ising_bond(uint32_t seed, int n, int r, int c, int vertical);
int8_t ising_spin0(uint32_t seed, int n, int r, int c);

/* Allocate and fill the part of rows [r0, r1) with the seed's spins and bonds. 0 or -1. */
int ising_part_init(struct ising_part *p, int n, uint32_t seed, int r0, int r1);
void ising_part_free(struct ising_part *p);

/* Row r (r0-1 .. r1, the ghosts included) of the part. */
static inline int8_t *ising_row(const struct ising_part *p, int r)
{
	return p->s + (size_t)(r - p->r0 + 1) * (size_t)p->n;
}

/* With the whole grid in one part: copy the wrapped rows into the ghosts. */
void ising_wrap(struct ising_part *p);

/*
 * One half-sweep over the part's rows, colour 0 or 1 ((r + c) % 2), with
 * the ghost rows as they are.  Return the number of flips; *first and
 * *last get the columns changed in the first and the last row.
 */
int ising_half_sweep(struct ising_part *p, int color, struct ising_span *first, struct ising_span *last);

/* The energy of the bonds right of and below the cells of row r (ghost below used). */
double ising_row_energy(const struct ising_part *p, int r);

#endif
