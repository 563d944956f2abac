/*
 * The kernel command line: space-separated key=value words.
 *
 * Everything on it is untrusted.  cmdline_parse() checks the syntax (every
 * word is key=value, keys are [a-z0-9_.-], no key twice, lengths bounded);
 * cmdline_check() checks every key against tables of known keys and their
 * types and ranges.  Both report every problem they find, naming the key.
 * Pure logic: host unit tests build this file as it is.
 */
#ifndef KERNEL_CMDLINE_H
#define KERNEL_CMDLINE_H

#include <stddef.h>

#define CMDLINE_MAX_ARGS 32
#define CMDLINE_KEY_MAX 32
#define CMDLINE_VAL_MAX 256

struct cmdline_arg {
	char key[CMDLINE_KEY_MAX];
	char val[CMDLINE_VAL_MAX];
};

struct cmdline {
	int n;
	struct cmdline_arg a[CMDLINE_MAX_ARGS];
};

enum arg_type {
	ARG_INT,	/* decimal or 0x hex, within [min, max] */
	ARG_INT_AUTO,	/* as ARG_INT, or the word "auto" */
	ARG_STR,	/* any non-empty text; the owner validates it */
	ARG_SECRET,	/* as ARG_STR, never printed (config_redact, error messages) */
	ARG_BOOL,	/* 0/1, on/off, yes/no, true/false */
};

struct argspec {
	const char *key;	/* NULL ends a table */
	enum arg_type type;
	long min, max;		/* ARG_INT and ARG_INT_AUTO only */
	const char *help;
};

/*
 * Split s into c.  Return the number of problems found (0 = good); each is
 * appended to err as one line (err is always NUL-terminated; with errlen 0
 * nothing is written there).
 */
int cmdline_parse(const char *s, struct cmdline *c, char *err, size_t errlen);

/*
 * As cmdline_parse, for a line where the value of the key named secret
 * (NULL: none) must not be shown: a malformed word that follows it (the
 * rest of a value that had spaces in it) is reported without its text.
 */
int cmdline_parse_secret(const char *s, const char *secret, struct cmdline *c, char *err,
			 size_t errlen);

/*
 * Check every key of c against the NULL-terminated list of NULL-terminated
 * spec tables.  Return the number of problems, described in err as above.
 */
int cmdline_check(const struct cmdline *c, const struct argspec *const *tables, char *err,
		  size_t errlen);

/* The value of key, or NULL. */
const char *cmdline_get(const struct cmdline *c, const char *key);

/*
 * Strict integer parse of all of s: [-] then decimal digits, or 0x and hex
 * digits, within a long.  Return 0 and set *out, or -EINVAL.
 */
int cmdline_parse_int(const char *s, long *out);

/*
 * Copy the command line s to out (n bytes, NUL-terminated, truncated to
 * fit) with the value of every word key=... replaced by "(hidden)", and
 * every word without '=' after it too (the rest of a value with spaces in
 * it, which the parser splits off): a secret (the cluster key) never
 * reaches the console or a log.  Words are split as the parser splits
 * them (space, tab, CR, LF).
 */
void cmdline_redact(const char *s, const char *key, char *out, size_t n);

/* Boolean parse; return 0 and set *out to 0/1, or -EINVAL. */
int cmdline_parse_bool(const char *s, int *out);

#endif
