/*
 * apps/: the bundled parallel apps, each selectable at boot with app=.
 * An app is a file here that defines a struct app and registers it with
 * APP (kernel/init.h); the kernel runs it and exits with its
 * status.  The test and bench apps (under tests/, tests/README.md) register
 * the same way, into the test image (build/now-test.elf).  Apps use the kernel, net/ (the fabric, the
 * mechanisms, the raw link) and lib/ (Madeleine, RPC); never drivers/.
 */
#ifndef APPS_APP_H
#define APPS_APP_H

#include "kernel/cmdline.h"
#include "kernel/init.h"
#include "kernel/node.h"

/*
 * Print a machine-readable result line: "RESULT <app> key=value ...".
 * fmt gives the key=value part.
 */
__attribute__((format(printf, 1, 2))) void result(const char *fmt, ...);

#endif
