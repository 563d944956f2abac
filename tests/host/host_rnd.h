/*
 * Repeatable pseudo-random numbers for the host tests: the C standard's
 * example linear congruential generator, its state a seed the test keeps.
 */
#ifndef TESTS_HOST_HOST_RND_H
#define TESTS_HOST_HOST_RND_H

/* The next number of the sequence in *rng, 24 bits. */
static inline unsigned host_rnd_next(unsigned *rng)
{
	*rng = *rng * 1103515245u + 12345u;
	return *rng >> 8;
}

/* The next number of the sequence in *rng, in [0, 1). */
static inline double host_rnd_unit(unsigned *rng)
{
	return (double)(host_rnd_next(rng) & 0xffffff) / 16777216.0;
}

#endif
