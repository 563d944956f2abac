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
 *
 * A part of the grid keeps two ghost rows on each side.  A sweep computes
 * the red half on its own rows and on the nearer ghost row of each side
 * (what the neighbour computes for that row too, from the same values),
 * so that the black half on its own rows sees every red spin it needs:
 * neighbours need to exchange, and to synchronize, once per sweep only.
 */
#ifndef APPS_ISING_CORE_H
#define APPS_ISING_CORE_H

#include <stddef.h>
#include <stdint.h>

struct ising_part {
	int n;				/* grid side, even */
	uint32_t seed;
	int r0, r1;			/* rows [r0, r1) */
	int8_t *s;			/* (r1 - r0 + 4) * n: two ghost rows above, the rows, two below */
	double *jh;			/* (r1 - r0 + 2) * n: bond (r, c)-(r, c+1), from row r0-1 */
	double *jv;			/* (r1 - r0 + 3) * n: bond (r, c)-(r+1, c), from row r0-2 */
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

/* Row r (r0-2 .. r1+1, the ghosts included) of the part. */
static inline int8_t *ising_row(const struct ising_part *p, int r)
{
	return p->s + (size_t)(r - p->r0 + 2) * (size_t)p->n;
}

/* With the whole grid in one part: copy the wrapped rows into the ghosts. */
void ising_wrap(struct ising_part *p);

/*
 * One half-sweep, colour 0 or 1 ((r + c) % 2), over rows [ra, rb) of the
 * part (ghost rows allowed, as long as their neighbours are there), with
 * the other rows as they are.  Return the number of flips in the part's
 * own rows.  If ch is not NULL, ch[0..3] grow by the columns changed in
 * rows r0, r0+1, r1-2 and r1-1.
 */
int ising_half_sweep_rows(struct ising_part *p, int color, int ra, int rb, struct ising_span ch[4]);

/* A half-sweep over the part's own rows (the one-part run). */
static inline int ising_half_sweep(struct ising_part *p, int color)
{
	return ising_half_sweep_rows(p, color, p->r0, p->r1, NULL);
}

/*
 * A whole sweep of a part with neighbours: red on the rows and on the
 * nearer ghosts, black on the rows.  Needs two rows or more.  ch as above,
 * reset first.  Return the flips in the part's rows.
 */
int ising_sweep_part(struct ising_part *p, struct ising_span ch[4]);

/* The energy of the bonds right of and below the cells of row r (ghost below used). */
double ising_row_energy(const struct ising_part *p, int r);

#endif
