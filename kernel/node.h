/*
 * The node's identity and its command-line arguments: what every layer
 * above the kernel may ask of the kernel about "who am I".
 *
 * node=, nodes= and app= are the kernel's keys.  Any other layer that
 * takes keys registers its table with ARGS_REGISTER (a linker section, as
 * apps, PCI drivers and init hooks do), so the kernel names none of them:
 * before anything starts, every key on the command line is checked against
 * every registered table, and each table's check function (if any) sees
 * the whole line; one bad key stops the node with a message naming it.
 */
#ifndef KERNEL_NODE_H
#define KERNEL_NODE_H

#include <stddef.h>

#include "kernel/cmdline.h"

#define MAX_NODES 64

/* This node's id (0..num_nodes-1) and the cluster's size. */
extern int node_id, num_nodes;

/*
 * node=auto: this node's id and (with nodes=auto) the cluster's size are
 * not known until the nodes on the segment agree on them at boot
 * (net/fabric/auto.c, between the NIC and the fabric).  node_auto() says
 * whether that is still to be done, and the count nodes= expects (0 for
 * nodes=auto); node_set_identity() records the outcome, once, and checks
 * it as config_init checks a typed one: 0, or -EINVAL with a message.
 */
int node_auto(int *expect);
int node_set_identity(int id, int nodes);

/* A key's value, already checked against its table; def if absent. */
const char *arg_str(const char *key, const char *def);

/*
 * Take a secret's text out of memory once its owner has derived what it
 * needs: the value of key zeroed in the parsed command line and in the
 * boot's copy of the line (arg_str gives "" from then on).
 */
void arg_forget(const char *key);
long arg_int(const char *key, long def);
int arg_bool(const char *key, int def);

/*
 * A layer's keys.  check (may be NULL) validates what the types and
 * ranges of the table cannot: 0, or -EINVAL with a message in err.
 */
struct arg_table {
	const char *owner;		/* "fabric": printed before its keys */
	const struct argspec *spec;	/* ended by { NULL } */
	int (*check)(const struct cmdline *c, char *err, size_t errlen);
};

#define ARGS_REGISTER(t) \
	static const struct arg_table *const argtab_ptr_##t \
		__attribute__((used, section(".argtabs." #t))) = &(t)

#endif
