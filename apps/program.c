/*
 * The app "program": a user's own C program, linked into an image of its
 * own by boot/mpicc, run as C runs a program: main(argc, argv) with its
 * environment, exit(main's value), so that atexit handlers run and an
 * exit(3) anywhere is the node's status 3.  This file is linked only into
 * such images (never build/now.elf), and it is their only app.
 *
 * boot/mpirun hands every node the program's arguments and environment as
 * two files beside the command line (kernel/bootinfo.h: bootinfo_file):
 *   opt/now/argv   argv[0], argv[1], ... each ended by a NUL byte
 *   opt/now/env    NAME=VALUE, ... each ended by a NUL byte
 * and boots it with stdio=tagged, which marks the program's output lines
 * (kernel/console.h) so that mpirun shows them apart from the kernel's.
 * Both files are untrusted like the command line: a missing final NUL, too
 * many words or a file too large are reported and the node does not start
 * the program.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/app.h"
#include "kernel/bootinfo.h"
#include "kernel/console.h"
#include "kernel/thread.h"

#define FILE_MAX 16384
#define WORDS_MAX 512

/* The program's own main, from its object files. */
extern int main(int argc, char **argv);
extern char **environ;

static char argbuf[FILE_MAX], envbuf[FILE_MAX];
static char *argv_tab[WORDS_MAX + 1], *env_tab[WORDS_MAX + 1];
static char progname[] = "program";

/*
 * Split the NUL-ended words of the file name into tab; their count, or -1
 * after saying what is wrong.  A missing file is no words.
 */
static int words(const char *name, char *buf, char **tab)
{
	long n = bootinfo_file(name, buf, FILE_MAX);
	int k = 0;

	if (n == -ENOENT)
		n = 0;
	if (n < 0) {
		if (n == -E2BIG)
			printf("program: %s: larger than %d bytes\n", name, FILE_MAX);
		else
			printf("program: %s: cannot be read (error %ld)\n", name, n);
		return -1;
	}
	if (n > 0 && buf[n - 1] != '\0') {
		printf("program: %s: the last word has no NUL end\n", name);
		return -1;
	}
	for (long i = 0; i < n; i += (long)strlen(buf + i) + 1) {
		if (k == WORDS_MAX) {
			printf("program: %s: more than %d words\n", name, WORDS_MAX);
			return -1;
		}
		tab[k++] = buf + i;
	}
	tab[k] = NULL;
	return k;
}

static int program_main(void)
{
	const char *stdio = arg_str("stdio", "plain");
	int argc, nenv;

	if (strcmp(stdio, "plain") != 0 && strcmp(stdio, "tagged") != 0) {
		printf("program: stdio=%s: plain or tagged\n", stdio);
		return EXIT_FAILURE;
	}
	if ((argc = words("opt/now/argv", argbuf, argv_tab)) < 0 ||
	    (nenv = words("opt/now/env", envbuf, env_tab)) < 0)
		return EXIT_FAILURE;
	if (argc == 0) {
		argv_tab[0] = progname;
		argv_tab[1] = NULL;
		argc = 1;
	}
	environ = env_tab;
	console_tagged = strcmp(stdio, "tagged") == 0;
	thread_current()->conprog = 1;
	exit(main(argc, argv_tab));
}

static const struct argspec program_args[] = {
	{ "stdio", ARG_STR, 0, 0, "plain (default) or tagged: the program's output lines marked for boot/mpirun" },
	{ NULL, 0, 0, 0, NULL },
};

APP(program_app, "program",
    "the program boot/mpicc linked into this image: its main(argc, argv)",
    program_main, program_args, 0);
