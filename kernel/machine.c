/*
 * The machine a node runs on: the first registered one that detects
 * itself (machine.h).
 */
#include "kernel/machine.h"

extern const struct machine *const __machines_start[], *const __machines_end[];

const struct machine *machine(void)
{
	static const struct machine *found;
	static int asked;

	if (!asked) {
		asked = 1;
		for (const struct machine *const *m = __machines_start; m < __machines_end; m++)
			if ((*m)->detect()) {
				found = *m;
				break;
			}
	}
	return found;
}
