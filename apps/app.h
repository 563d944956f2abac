/*
 * The app registry.  Each app is a file in apps/ that defines a struct app
 * and registers it with APP_REGISTER; the kernel runs the one named by
 * app= on the command line, in the thread "main", and exits with its return
 * value (0 = success).  An app's arguments are key=value words on the same
 * command line, declared in its args table so that the kernel rejects
 * unknown keys and bad values before the app starts.
 */
#ifndef APPS_APP_H
#define APPS_APP_H

#include "kernel/cmdline.h"

struct app {
	const char *name;
	const char *summary;
	int (*main)(void);
	const struct argspec *args;	/* NULL or a table ended by {NULL} */
	int min_nodes;			/* 0 or 1: any */
};

#define APP_REGISTER(a) \
	static const struct app *const app_ptr_##a __attribute__((used, section(".apps." #a))) = &(a)

const struct app *app_find(const char *name);

/* Print every app and its arguments. */
void app_list(void);

/* The node's place in the cluster and the running app (kernel/config.c). */
extern int node_id, num_nodes;
extern const struct app *current_app;

/* The app's arguments, already checked against its table. */
const char *arg_str(const char *key, const char *def);
long arg_int(const char *key, long def);
int arg_bool(const char *key, int def);

/*
 * Print a machine-readable result line: "RESULT <app> key=value ...".
 * fmt gives the key=value part.
 */
__attribute__((format(printf, 1, 2))) void result(const char *fmt, ...);

#endif
