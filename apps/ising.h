/*
 * The Ising optimizer as a function, for the app and the tour.
 */
#ifndef APPS_ISING_H
#define APPS_ISING_H

#include <stdint.h>

struct ising_result {
	double energy;			/* node 0: the parallel run's */
	double seq_energy;		/* node 0: the one-node check's */
	long flips, seq_flips;		/* node 0: over all nodes; the check's */
	uint64_t ns, seq_ns;		/* node 0: parallel run, check run */
	uint64_t writes;		/* boundary WRITEs this node sent */
	uint64_t comp_ns, cas_ns, wait_ns;	/* this node's time in each part of the sweeps */
	int energy_match, grid_match;	/* node 0: bit for bit */
};

/*
 * Run the optimizer on an n x n grid over every node (every node calls
 * it).  0, or a negative error (printed).
 */
int ising_run(int n, int sweeps, uint32_t instance, struct ising_result *out);

#endif
