/*
 * apps/: the bundled parallel apps, tests and benchmarks, each selectable
 * at boot with app=.  An app is a file here that defines a struct app and
 * registers it with APP_REGISTER (kernel/init.h); the kernel runs it and
 * exits with its status.  Apps use the kernel, net/ (the fabric, the
 * mechanisms, the raw link) and lib/ (Madeleine, RPC); never drivers/.
 */
#ifndef APPS_APP_H
#define APPS_APP_H

#include "kernel/cmdline.h"
#include "kernel/init.h"
#include "kernel/node.h"

/*
 * Fabric protocol numbers of the test apps, in the range the fabric keeps
 * for them (net/fabric/fabric.h: FP_APP_FIRST..).
 */
enum {
	APP_PROTO_TEST = 16,		/* fabric-stress, fabric-junk, peer-timeout */
	APP_PROTO_PING = 17,		/* pingpong (raw and reliable) */
	APP_PROTO_STAGES = 18,		/* stages (raw) */
	APP_PROTO_OPS = 19,		/* apps/ops.c: the raw and reliable operations */
};

/*
 * Print a machine-readable result line: "RESULT <app> key=value ...".
 * fmt gives the key=value part.
 */
__attribute__((format(printf, 1, 2))) void result(const char *fmt, ...);

#endif
