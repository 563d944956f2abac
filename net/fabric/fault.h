/*
 * Fault injection for the fabric's receive path: `fault=drop:0.05,dup:0.01,
 * reorder:0.01,corrupt:0.01` on the kernel command line of the node that
 * should suffer them.  Rates are probabilities per received fabric frame.
 * Pure parsing here; inject.c applies them.
 */
#ifndef NET_FAULT_H
#define NET_FAULT_H

#include <stddef.h>
#include <stdint.h>

struct fault_cfg {
	uint32_t drop, dup, reorder, corrupt;	/* probability * 2^32 */
	int any;
};

/*
 * Parse spec into *f.  Return 0, or -EINVAL with a message naming the bad item
 * in err.
 */
int fault_parse(const char *spec, struct fault_cfg *f, char *err, size_t errlen);

/* Format rates back as "drop=0.050 ..." for the boot log. */
void fault_format(const struct fault_cfg *f, char *buf, size_t len);

#endif
