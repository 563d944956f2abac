/*
 * The node's configuration from the kernel command line: node=, nodes=,
 * app=, and each subsystem's and the app's own keys.
 */
#ifndef KERNEL_CONFIG_H
#define KERNEL_CONFIG_H

#include "kernel/cmdline.h"

#define MAX_NODES 64
#define DEFAULT_APP "hello"

extern struct cmdline boot_cmdline;

/* Parse and check the command line; on any problem print them all and return -1. */
int config_init(const char *cmdline);

#endif
