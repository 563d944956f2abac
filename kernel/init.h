/*
 * What the kernel starts without naming it: init hooks, exit hooks and
 * apps, each registered by its own file in a linker section
 * (linker/kernel.ld), the pattern PCI drivers (drivers/pci.h), benches
 * and selftests (apps/) follow too.  Adding a mechanism or an app edits
 * no kernel file.
 *
 * Init hooks run in the boot thread, interrupts on, in the order of
 * their level and then their name.  A hook returns 0, -ENODEV when
 * something it needs is absent (a NIC, the fabric: nothing is printed, the
 * node goes on without it), or another negative errno (the kernel prints
 * "<name>: cannot start" and goes on).  Levels below INIT_CONFIG run
 * before the command line is read.
 *
 * Exit hooks run in the app's thread after the app returned and before
 * the node stops: "nothing this node sent may be lost because it stopped".
 */
#ifndef KERNEL_INIT_H
#define KERNEL_INIT_H

#include "kernel/cmdline.h"

/*
 * Levels: two digits, so that the linker's sort by name is by level.  The
 * kernel names none of the layers above it: a subsystem takes the level
 * after those it uses (net/README.md says which the network layers take).
 */
#define INIT_BUS 10		/* enumerate buses (PCI) */
#define INIT_CONFIG 20		/* (the command line is read here) */
#define INIT_POOLS 30		/* buffer pools */
#define INIT_DEVICES 35		/* device drivers */
#define INIT_SUBSYS_1 40	/* subsystems, each on those of lower levels */
#define INIT_SUBSYS_2 45
#define INIT_SUBSYS_3 50
#define INIT_SUBSYS_4 60
#define INIT_START 70		/* every handler is registered: start delivering */
#define INIT_LATE 80		/* what needs everything above running */

struct init_hook {
	const char *name;
	int level;
	int (*fn)(void);
};

/* Register fn as the init hook `name` at level (one of INIT_*). */
#define INIT_HOOK(level, name, fn) INIT_HOOK_(level, name, fn)
#ifndef HOST_TEST
#define INIT_HOOK_(level, name, fn)                                                     \
	static const struct init_hook inithook_##name = { #name, level, fn };                \
	static const struct init_hook *const inithook_ptr_##name                        \
		__attribute__((used, section(".inithooks." #level "." #name))) = &inithook_##name
#else
/*
 * Host tests that build kernel files run their hooks themselves: each
 * hook is listed at program start (tests/host/host_fabric.c runs them).
 */
void host_init_hook_add(const struct init_hook *h);
#define INIT_HOOK_(level, name, fn)                                                     \
	static const struct init_hook inithook_##name = { #name, level, fn };                \
	__attribute__((constructor)) static void inithook_ctor_##name(void)                \
	{                                                                               \
		host_init_hook_add(&inithook_##name);                                    \
	}
#endif

/* Register fn(void) to run when the app has finished (in the order of names). */
#define EXIT_HOOK(name, fn)                                                             \
	static void (*const exithook_ptr_##name)(void)                                  \
		__attribute__((used, section(".exithooks." #name))) = (fn)

/*
 * Register fn(void) to say where this node stands when the launcher asks
 * (an NMI: boot/cluster sends one to each node its --timeout is about to
 * kill).  fn runs in the NMI handler, after the kernel's own list of
 * threads and their stacks: it may only read its state and print it
 * (printf goes straight to the console there), never block, take a lock
 * or change anything the interrupted code may be in the middle of.
 */
#define DUMP_HOOK(name, fn)                                                             \
	static void (*const dumphook_ptr_##name)(void)                                  \
		__attribute__((used, section(".dumphooks." #name))) = (fn)

/*
 * An app: a file in apps/ defines a struct app and registers it with
 * APP_REGISTER (both at once: APP); the kernel runs the one named by app= on the command line
 * in the thread "main" and exits with its return value (0 = success).  Its
 * arguments are key=value words on the same line, declared in its args
 * table so that the kernel rejects unknown keys and bad values first.
 */
struct app {
	const char *name;
	const char *summary;
	int (*main)(void);
	const struct argspec *args;	/* NULL or a table ended by {NULL} */
	int min_nodes;			/* 0 or 1: any */
};

#define APP_REGISTER(a) \
	static const struct app *const app_ptr_##a __attribute__((used, section(".apps." #a))) = &(a)

/* Define and register an app: APP(ident, "name", "summary", main, args or NULL, min_nodes). */
#define APP(id, name_, summary_, main_, args_, min_nodes_)                                      \
	static const struct app id = { .name = name_, .summary = summary_, .main = main_,       \
				       .args = args_, .min_nodes = min_nodes_ };                 \
	APP_REGISTER(id)

/* The app named, or NULL; the running app. */
const struct app *app_find(const char *name);
extern const struct app *current_app;

/* Print every app and its arguments. */
void app_list(void);

/*
 * The app is done with status (its main returned, or the program called
 * exit()): what it printed is flushed, the exit hooks run, and the node
 * stops with that status.
 */
__attribute__((noreturn)) void app_finish(int status);

#endif
