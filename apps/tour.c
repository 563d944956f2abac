/*
 * tour: what `make run` shows by default, on every node of the cluster:
 * each node's id and calibrated TSC, then the Ising optimizer on a 40x40 grid with its speedup over the same
 * optimizer alone on node 0, then the circuit simulator on the 32-bit
 * adder; each checks its own answer against a sequential run, and the
 * tour fails if either does.
 */
#include <stdio.h>

#include "apps/app.h"
#include "apps/ising.h"
#include "kernel/tsc.h"
#include "net/fabric/fabric.h"

static int tour_main(void)
{
	struct ising_result res;
	const struct app *circuit = app_find("circuit");
	int failures = 0;

	printf("tour: node %d of %d, tsc %lu.%03lu MHz\n", node_id, num_nodes, tsc_hz / 1000000,
	       tsc_hz / 1000 % 1000);
	if (num_nodes > 1 && fabric_wait_peers(60000000000ULL) < 0)
		return 1;
	if (node_id == 0)
		printf("tour: %d nodes. 1: the Ising optimizer (remote-memory paper 3.2.1), 40x40 grid\n",
		       num_nodes);
	if (ising_run(40, 40, 1, &res) < 0) {
		failures++;
	} else if (node_id == 0) {
		int ok = res.energy_match && res.grid_match;
		double speedup = res.ns ? (double)res.seq_ns / (double)res.ns : 0;
		printf("tour: ising 40x40: energy %.17g, %s the one-node run\n", res.energy,
		       ok ? "bit for bit the same as" : "FAILED: not the same as");
		printf("tour: ising 40x40 on %d node%s: %lu.%03lu ms; alone on node 0: %lu.%03lu ms; "
		       "speedup %.2f\n",
		       num_nodes, num_nodes > 1 ? "s" : "", res.ns / 1000000, res.ns / 1000 % 1000,
		       res.seq_ns / 1000000, res.seq_ns / 1000 % 1000, speedup);
		result("part=ising nodes=%d grid=40 ms=%lu.%03lu seq_ms=%lu.%03lu ok=%d", num_nodes,
		       res.ns / 1000000, res.ns / 1000 % 1000, res.seq_ns / 1000000, res.seq_ns / 1000 % 1000, ok);
		failures += !ok;
	}
	if (!circuit) {
		printf("tour: the circuit simulator is not in this build\n");
		return 1;
	}
	if (node_id == 0)
		printf("tour: 2: the circuit simulator (remote-memory paper 3.2.2) on the 32-bit adder\n");
	if (circuit->main() != 0) {
		if (node_id == 0)
			printf("tour: FAILED: the circuit simulator\n");
		failures++;
	}
	if (node_id == 0)
		printf("tour: %s\n", failures ? "FAILED" : "every result checked");
	return failures ? 1 : 0;
}

static const struct app tour_app = {
	.name = "tour",
	.summary = "the default run: Ising 40x40 with its speedup, the circuit simulator on the 32-bit adder",
	.main = tour_main,
};
APP_REGISTER(tour_app);
