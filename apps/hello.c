/* hello: say who this node is and how fast its clock runs. */
#include <stdio.h>

#include "apps/app.h"
#include "kernel/tsc.h"

static int hello_main(void)
{
	printf("hello from node %d of %d, tsc %lu.%03lu MHz\n", node_id, num_nodes,
	       tsc_hz / 1000000, (tsc_hz / 1000) % 1000);
	result("node=%d nodes=%d tsc_hz=%lu", node_id, num_nodes, tsc_hz);
	return 0;
}

APP(hello, "hello",
    "print node id, cluster size and the calibrated TSC frequency",
    hello_main, NULL, 0);
