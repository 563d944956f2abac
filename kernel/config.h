/*
 * The node's configuration from the kernel command line: node=, nodes=,
 * app=, and the keys of every registered table (kernel/node.h) and of the
 * app.
 */
#ifndef KERNEL_CONFIG_H
#define KERNEL_CONFIG_H

#define DEFAULT_APP "hello"

/* Parse and check the command line; on any problem print them all and return -EINVAL. */
int config_init(const char *cmdline);

#endif
