/*
 * The node's configuration from the kernel command line: node=, nodes=,
 * app=, and the keys of every registered table (kernel/node.h) and of the
 * app.
 */
#ifndef KERNEL_CONFIG_H
#define KERNEL_CONFIG_H

#define DEFAULT_APP "hello"

#include <stddef.h>

/*
 * Parse and check the command line; on any problem print them all and
 * return -EINVAL.  The line stays where it is: arg_forget zeroes in it.
 */
int config_init(char *cmdline);

/*
 * The command line as it may be shown: every ARG_SECRET value of the
 * registered tables hidden (cmdline_redact).
 */
void config_redact(const char *line, char *out, size_t n);

#endif
