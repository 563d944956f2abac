#include <errno.h>
/* Host unit tests of the kernel command-line parser (kernel/cmdline.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "tests/host/unit.h"

#include "kernel/cmdline.h"

static const struct argspec kernel_keys[] = {
	{ "node", ARG_INT, 0, 63, "" },
	{ "nodes", ARG_INT, 1, 64, "" },
	{ "app", ARG_STR, 0, 0, "" },
	{ NULL, 0, 0, 0, NULL },
};

static const struct argspec app_keys[] = {
	{ "grid", ARG_INT, 4, 4096, "" },
	{ "verbose", ARG_BOOL, 0, 0, "" },
	{ NULL, 0, 0, 0, NULL },
};

static const struct argspec *const tables[] = { kernel_keys, app_keys, NULL };

static void parses_key_values(void **state)
{
	struct cmdline c;
	char err[256];

	(void)state;
	assert_int_equal(cmdline_parse("  node=2\tnodes=4 app=ising grid=0x50  ", &c, err, sizeof err), 0);
	assert_string_equal(err, "");
	assert_int_equal(c.n, 4);
	assert_string_equal(cmdline_get(&c, "node"), "2");
	assert_string_equal(cmdline_get(&c, "app"), "ising");
	assert_string_equal(cmdline_get(&c, "grid"), "0x50");
	assert_null(cmdline_get(&c, "missing"));
	assert_int_equal(cmdline_check(&c, tables, err, sizeof err), 0);
}

static void empty_line_is_fine(void **state)
{
	struct cmdline c;
	char err[64];

	(void)state;
	assert_int_equal(cmdline_parse("", &c, err, sizeof err), 0);
	assert_int_equal(c.n, 0);
	assert_int_equal(cmdline_parse("   \n", &c, err, sizeof err), 0);
	assert_int_equal(c.n, 0);
}

static void rejects_malformed_words(void **state)
{
	struct cmdline c;
	char err[1024];

	(void)state;
	assert_int_equal(cmdline_parse("node=1 bare =5 Key=1 k= a=b=c", &c, err, sizeof err), 4);
	assert_non_null(strstr(err, "malformed argument 'bare'"));
	assert_non_null(strstr(err, "empty key"));
	assert_non_null(strstr(err, "malformed key 'Key'"));
	assert_non_null(strstr(err, "key 'k' has an empty value"));
	/* The value may contain '=' (fault=drop:0.1 style values use ':' and ','). */
	assert_string_equal(cmdline_get(&c, "a"), "b=c");
	assert_string_equal(cmdline_get(&c, "node"), "1");
}

static void rejects_duplicates(void **state)
{
	struct cmdline c;
	char err[256];

	(void)state;
	assert_int_equal(cmdline_parse("nodes=2 node=0 nodes=3", &c, err, sizeof err), 1);
	assert_non_null(strstr(err, "'nodes' is given more than once"));
	assert_string_equal(cmdline_get(&c, "nodes"), "2");
}

static void rejects_overlong(void **state)
{
	struct cmdline c;
	char err[512], line[600], key[64];

	(void)state;
	memset(key, 'k', sizeof key);
	key[40] = '\0';
	snprintf(line, sizeof line, "%s=1", key);
	assert_int_equal(cmdline_parse(line, &c, err, sizeof err), 1);
	assert_non_null(strstr(err, "too long"));

	memset(line, 'v', sizeof line);
	memcpy(line, "app=", 4);
	line[CMDLINE_VAL_MAX + 10] = '\0';
	assert_int_equal(cmdline_parse(line, &c, err, sizeof err), 1);
	assert_non_null(strstr(err, "value of 'app' is too long"));
}

static void rejects_too_many(void **state)
{
	struct cmdline c;
	char err[256], line[2048] = "";

	(void)state;
	for (int i = 0; i < CMDLINE_MAX_ARGS + 3; i++) {
		char w[32];
		snprintf(w, sizeof w, "k%d=1 ", i);
		strcat(line, w);
	}
	assert_true(cmdline_parse(line, &c, err, sizeof err) >= 1);
	assert_non_null(strstr(err, "too many arguments"));
	assert_int_equal(c.n, CMDLINE_MAX_ARGS);
}

static void check_names_unknown_keys(void **state)
{
	struct cmdline c;
	char err[512];

	(void)state;
	assert_int_equal(cmdline_parse("node=1 colour=red grd=80", &c, err, sizeof err), 0);
	assert_int_equal(cmdline_check(&c, tables, err, sizeof err), 2);
	assert_non_null(strstr(err, "unknown key 'colour'"));
	assert_non_null(strstr(err, "unknown key 'grd'"));
}

static void check_types_and_ranges(void **state)
{
	struct cmdline c;
	char err[512];

	(void)state;
	assert_int_equal(cmdline_parse("node=x nodes=65 grid=3 verbose=maybe", &c, err, sizeof err), 0);
	assert_int_equal(cmdline_check(&c, tables, err, sizeof err), 4);
	assert_non_null(strstr(err, "node=x: not an integer"));
	assert_non_null(strstr(err, "nodes=65: out of range (1..64)"));
	assert_non_null(strstr(err, "grid=3: out of range"));
	assert_non_null(strstr(err, "verbose=maybe: not a boolean"));
}

static void integer_parsing_is_strict(void **state)
{
	long v;

	(void)state;
	assert_int_equal(cmdline_parse_int("42", &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(cmdline_parse_int("0x10", &v), 0);
	assert_int_equal(v, 16);
	assert_int_equal(cmdline_parse_int("-3", &v), 0);
	assert_int_equal(v, -3);
	assert_int_equal(cmdline_parse_int("12abc", &v), -EINVAL);
	assert_int_equal(cmdline_parse_int(" 1", &v), -EINVAL);
	assert_int_equal(cmdline_parse_int("+1", &v), -EINVAL);
	assert_int_equal(cmdline_parse_int("", &v), -EINVAL);
	assert_int_equal(cmdline_parse_int("99999999999999999999999", &v), -EINVAL);
	/* Decimal or 0x hex, as cmdline.h says: a leading zero is not octal. */
	assert_int_equal(cmdline_parse_int("010", &v), 0);
	assert_int_equal(v, 10);
	assert_int_equal(cmdline_parse_int("-09", &v), 0);
	assert_int_equal(v, -9);
	assert_int_equal(cmdline_parse_int("-0x1F", &v), 0);
	assert_int_equal(v, -31);
	assert_int_equal(cmdline_parse_int("0x", &v), -EINVAL);
	assert_int_equal(cmdline_parse_int("0x-1", &v), -EINVAL);
	assert_int_equal(cmdline_parse_int("-", &v), -EINVAL);
}

static void bool_parsing(void **state)
{
	int b;

	(void)state;
	assert_int_equal(cmdline_parse_bool("on", &b), 0);
	assert_int_equal(b, 1);
	assert_int_equal(cmdline_parse_bool("false", &b), 0);
	assert_int_equal(b, 0);
	assert_int_equal(cmdline_parse_bool("2", &b), -EINVAL);
}

static void small_error_buffer_is_safe(void **state)
{
	struct cmdline c;
	char err[8];

	(void)state;
	assert_int_equal(cmdline_parse("a b c d e f", &c, err, sizeof err), 6);
	assert_true(strlen(err) < sizeof err);
}

/* No error buffer at all (errlen 0): problems are counted, nothing is written or read there. */
static void no_error_buffer_is_untouched(void **state)
{
	static const struct argspec *const none[] = { NULL };
	struct cmdline c;
	char err[4] = { 'x', 'x', 'x', 'x' };

	(void)state;
	assert_int_equal(cmdline_parse("a =1 b=", &c, err, 0), 3);
	assert_int_equal(cmdline_parse("k=1", &c, err, 0), 0);
	assert_int_equal(cmdline_check(&c, none, err, 0), 1);
	assert_memory_equal(err, "xxxx", 4);
}

static void redact_hides_the_key(void **state)
{
	char out[128];

	(void)state;
	cmdline_redact("node=0 key=s3cret-s3cret-s3cret app=hello", "key", out, sizeof out);
	assert_string_equal(out, "node=0 key=(hidden) app=hello");
	cmdline_redact("key=abc", "key", out, sizeof out);
	assert_string_equal(out, "key=(hidden)");
	/* Only the word named key: not monkey=, not a value that says key=. */
	cmdline_redact("monkey=1 x=key=2 key=zz", "key", out, sizeof out);
	assert_string_equal(out, "monkey=1 x=key=2 key=(hidden)");
	/* Truncated to fit, always terminated, never a byte of the secret. */
	cmdline_redact("node=0 key=abcdefgh", "key", out, 12);
	assert_string_equal(out, "node=0 key=");
	cmdline_redact("node=0 key=abcdefgh", "key", out, 15);
	assert_string_equal(out, "node=0 key=(hi");
	cmdline_redact("anything", "key", out, 1);
	assert_string_equal(out, "");
	/* Words split as the parser splits them: tab, CR and LF too. */
	cmdline_redact("node=1\tkey=s3cret-s3cret-s3cret\rapp=x", "key", out, sizeof out);
	assert_string_equal(out, "node=1\tkey=(hidden)\rapp=x");
	cmdline_redact("key=s3cret-s3cret\nnode=1", "key", out, sizeof out);
	assert_string_equal(out, "key=(hidden)\nnode=1");
	/* A key with spaces: its later words (no '=') are hidden too. */
	cmdline_redact("node=0 key=correct horse  battery staple app=hello", "key", out, sizeof out);
	assert_string_equal(out, "node=0 key=(hidden) app=hello");
	assert_null(strstr(out, "horse"));
}

static void parse_errors_never_show_a_secret(void **state)
{
	struct cmdline c;
	char err[512];

	(void)state;
	assert_int_equal(cmdline_parse_secret("node=0 key=correct horse battery app=hello", "key", &c,
					      err, sizeof err), 2);
	assert_null(strstr(err, "horse"));
	assert_null(strstr(err, "battery"));
	assert_non_null(strstr(err, "cannot contain spaces"));
	/* Without the secret's name, the word is shown as before. */
	assert_int_equal(cmdline_parse("node=0 key=correct horse", &c, err, sizeof err), 1);
	assert_non_null(strstr(err, "horse"));
	/* A malformed word elsewhere is still named. */
	assert_int_equal(cmdline_parse_secret("oops key=abc node=1", "key", &c, err, sizeof err), 1);
	assert_non_null(strstr(err, "oops"));
}

UNIT_MAIN("cmdline", NULL, NULL,
	  cmocka_unit_test(parses_key_values),
	  cmocka_unit_test(parse_errors_never_show_a_secret),
	  cmocka_unit_test(empty_line_is_fine),
	  cmocka_unit_test(rejects_malformed_words),
	  cmocka_unit_test(rejects_duplicates),
	  cmocka_unit_test(rejects_overlong),
	  cmocka_unit_test(rejects_too_many),
	  cmocka_unit_test(check_names_unknown_keys),
	  cmocka_unit_test(check_types_and_ranges),
	  cmocka_unit_test(integer_parsing_is_strict),
	  cmocka_unit_test(bool_parsing),
	  cmocka_unit_test(small_error_buffer_is_safe),
	  cmocka_unit_test(no_error_buffer_is_untouched),
	  cmocka_unit_test(redact_hides_the_key))
