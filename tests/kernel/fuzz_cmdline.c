/*
 * libFuzzer target: the kernel command line as the boot thread reads it
 * (kernel/cmdline.c, kernel/config.c), with the argument tables of the
 * kernel, of registered layers (one whose check function is the fabric's
 * real fault= parser, net/fabric/fault.c) and of apps.
 *
 * Input: one flag byte (bit 0..1: the size of the caller's error buffer,
 * down to none), then the line itself (up to the first NUL).
 *
 * Checked, __builtin_trap() on a broken promise:
 *  - cmdline_parse splits exactly as an independent model of the syntax
 *    does (words, key=value, key characters and lengths, duplicates, the
 *    argument limit) and counts the same problems; the error text stays
 *    inside the buffer and is NUL-terminated; what it kept parses again,
 *    joined by spaces, to the same thing with no problem;
 *  - cmdline_check counts as a model of the integer, boolean and range
 *    rules does; cmdline_parse_int agrees with a model of strict decimal
 *    and 0x numbers that fit a long;
 *  - config_init returns 0 or -EINVAL, and on 0 the node is inside the
 *    cluster, the app exists and runs on that many nodes, and every key of
 *    every table reads back within its range through arg_int/arg_bool.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/cmdline.h"
#include "kernel/config.h"
#include "kernel/init.h"
#include "kernel/node.h"
#include "net/fabric/fault.h"
#include "tests/host/quiet.h"	/* config_init prints its problems */

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

/* --- what the linker sections hold in the kernel ----------------------------- */

extern const struct app *current_app;

static int no_main(void) { return 0; }

static const struct argspec calc_args[] = {
	{ "iters", ARG_INT, 1, 1000000, "" },
	{ "delta", ARG_INT, -5, 5, "" },
	{ "verbose", ARG_BOOL, 0, 0, "" },
	{ "name", ARG_STR, 0, 0, "" },
	{ NULL, 0, 0, 0, NULL },
};
static const struct app app_hello = { "hello", "", no_main, NULL, 0 };
static const struct app app_calc = { "calc", "", no_main, calc_args, 2 };

const struct app *const __apps_start[] = { &app_hello, &app_calc };
__asm__(".globl __apps_end\n.set __apps_end, __apps_start + 2 * 8");

static const struct argspec link_args[] = {
	{ "fault", ARG_STR, 0, 0, "" },
	{ "peer_timeout_ms", ARG_INT, 100, 3600000, "" },
	{ "seed", ARG_INT, 0, 0x7fffffff, "" },
	{ NULL, 0, 0, 0, NULL },
};
static const struct argspec wide_args[] = {
	{ "any", ARG_INT, LONG_MIN, LONG_MAX, "" },
	{ "neg", ARG_INT, LONG_MIN, -1, "" },
	{ "on", ARG_BOOL, 0, 0, "" },
	{ NULL, 0, 0, 0, NULL },
};

/* The fabric's check: fault= through the real parser. */
static int link_check(const struct cmdline *c, char *err, size_t errlen)
{
	const char *f = cmdline_get(c, "fault");
	struct fault_cfg tmp;

	if (f && fault_parse(f, &tmp, err, errlen) < 0)
		return -EINVAL;
	return 0;
}

static const struct arg_table link_tab = { "link", link_args, link_check };
static const struct arg_table wide_tab = { "wide", wide_args, NULL };
const struct arg_table *const __argtabs_start[] = { &link_tab, &wide_tab };
__asm__(".globl __argtabs_end\n.set __argtabs_end, __argtabs_start + 2 * 8");

static const struct argspec kernel_model[] = {
	{ "node", ARG_INT, 0, MAX_NODES - 1, "" },
	{ "nodes", ARG_INT, 1, MAX_NODES, "" },
	{ "app", ARG_STR, 0, 0, "" },
	{ NULL, 0, 0, 0, NULL },
};

/* --- models ------------------------------------------------------------------- */

static int model_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

static int model_keych(char ch)
{
	return strchr("abcdefghijklmnopqrstuvwxyz0123456789_-.", ch) != NULL && ch;
}

/* The syntax of cmdline.h, from scratch: the problems counted, the args kept. */
static int model_parse(const char *s, struct cmdline *c)
{
	size_t len = strlen(s), i = 0;
	int bad = 0;

	c->n = 0;
	while (i < len) {
		while (i < len && model_space(s[i]))
			i++;
		if (i == len)
			break;
		size_t w = i;
		while (i < len && !model_space(s[i]))
			i++;
		const char *word = s + w, *eq = memchr(word, '=', i - w);
		size_t wl = i - w;
		if (!eq || eq == word) {
			bad++;
			continue;
		}
		size_t kl = (size_t)(eq - word), vl = wl - kl - 1;
		int ok = kl < CMDLINE_KEY_MAX && vl > 0 && vl < CMDLINE_VAL_MAX;
		for (size_t k = 0; ok && k < kl; k++)
			ok = model_keych(word[k]);
		for (int k = 0; ok && k < c->n; k++)
			ok = !(strlen(c->a[k].key) == kl && memcmp(c->a[k].key, word, kl) == 0);
		if (!ok) {
			bad++;
			continue;
		}
		if (c->n == CMDLINE_MAX_ARGS) {
			bad++;
			break;
		}
		memcpy(c->a[c->n].key, word, kl);
		c->a[c->n].key[kl] = 0;
		memcpy(c->a[c->n].val, eq + 1, vl);
		c->a[c->n].val[vl] = 0;
		c->n++;
	}
	return bad;
}

static int digit(char ch, int base)
{
	int d = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 :
		ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : 99;
	return d < base ? d : -1;
}

/* Strict numbers: [-](0x hex | decimal), all of it, within a long. */
static int model_int(const char *s, long *out)
{
	int neg = *s == '-', base = 10;
	unsigned __int128 v = 0;

	s += neg;
	if (*s == '0' && (s[1] == 'x' || s[1] == 'X') && digit(s[2], 16) >= 0) {
		base = 16;
		s += 2;
	}
	if (digit(*s, base) < 0)
		return -EINVAL;
	for (; *s; s++) {
		int d = digit(*s, base);
		if (d < 0)
			return -EINVAL;
		v = v * (unsigned)base + (unsigned)d;
		if (v > (unsigned __int128)LONG_MAX + 1)
			return -EINVAL;
	}
	if (!neg && v > LONG_MAX)
		return -EINVAL;
	*out = neg ? (long)(0 - (unsigned long)v) : (long)v;
	return 0;
}

static int model_bool(const char *s)
{
	static const char *const words[] = { "1", "on", "yes", "true", "0", "off", "no", "false" };

	for (int i = 0; i < 8; i++)
		if (strcmp(s, words[i]) == 0)
			return i < 4;
	return -1;
}

static const struct argspec *model_find(const struct argspec *const *t, const char *key)
{
	for (; *t; t++)
		for (const struct argspec *s = *t; s->key; s++)
			if (strcmp(s->key, key) == 0)
				return s;
	return NULL;
}

static int model_check(const struct cmdline *c, const struct argspec *const *tables)
{
	int bad = 0;

	for (int i = 0; i < c->n; i++) {
		const struct argspec *s = model_find(tables, c->a[i].key);
		long v;
		if (!s)
			bad++;
		else if (s->type == ARG_INT)
			bad += model_int(c->a[i].val, &v) < 0 || v < s->min || v > s->max;
		else if (s->type == ARG_BOOL)
			bad += model_bool(c->a[i].val) < 0;
	}
	return bad;
}

/* --- the target --------------------------------------------------------------- */

static void same(const struct cmdline *a, const struct cmdline *b)
{
	CHECK(a->n == b->n);
	for (int i = 0; i < a->n; i++) {
		CHECK(strcmp(a->a[i].key, b->a[i].key) == 0);
		CHECK(strcmp(a->a[i].val, b->a[i].val) == 0);
	}
}

/* Every key of every table that is on the line reads back within its rules. */
static void args_read_back(const struct cmdline *c, const struct argspec *const *tables)
{
	for (; *tables; tables++) {
		for (const struct argspec *s = *tables; s->key; s++) {
			const char *v = cmdline_get(c, s->key);
			CHECK(!v || strcmp(arg_str(s->key, NULL), v) == 0);
			if (v && s->type == ARG_INT) {
				long x = arg_int(s->key, 0), y = arg_int(s->key, 1);
				CHECK(x == y && x >= s->min && x <= s->max);
			}
			if (v && s->type == ARG_BOOL)
				CHECK(arg_bool(s->key, 7) == model_bool(v));
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cmdline c, m, again;
	static const size_t errlens[] = { 0, 1, 40, 1024 };
	char *line, *err, *join;
	size_t errlen, jl = 0;

	if (size < 1)
		return 0;
	errlen = errlens[data[0] & 3];
	line = malloc(size);
	err = malloc(errlen ? errlen : 1);
	join = malloc(CMDLINE_MAX_ARGS * (CMDLINE_KEY_MAX + CMDLINE_VAL_MAX + 1) + 1);
	if (!line || !err || !join)
		abort();
	memcpy(line, data + 1, size - 1);
	line[size - 1] = 0;
	memset(err, 'x', errlen ? errlen : 1);

	/* The syntax. */
	int bad = cmdline_parse(line, &c, err, errlen);
	CHECK(bad == model_parse(line, &m));
	same(&c, &m);
	CHECK(errlen == 0 || memchr(err, 0, errlen));
	CHECK(bad == 0 || errlen < 2 || err[0]);
	for (int i = 0; i < c.n; i++) {
		CHECK(strcmp(cmdline_get(&c, c.a[i].key), c.a[i].val) == 0);
		jl += (size_t)sprintf(join + jl, "%s%s=%s", i ? " " : "", c.a[i].key, c.a[i].val);
	}
	join[jl] = 0;
	CHECK(cmdline_parse(join, &again, err, errlen) == 0);
	same(&c, &again);

	/* Integers, booleans, ranges. */
	for (int i = 0; i < c.n; i++) {
		long v = 0x5a5a, w = 0x5a5a;
		int r = cmdline_parse_int(c.a[i].val, &v), mr = model_int(c.a[i].val, &w);
		CHECK(r == mr && (r < 0 || v == w));
		CHECK(r == 0 || r == -EINVAL);
	}
	const struct argspec *tables[] = { kernel_model, link_args, wide_args, calc_args, NULL };
	memset(err, 'x', errlen ? errlen : 1);
	CHECK(cmdline_check(&c, tables, err, errlen) == model_check(&c, tables));
	CHECK(errlen == 0 || memchr(err, 0, errlen));

	/* The whole boot-time configuration. */
	node_id = 0;
	num_nodes = 1;
	current_app = NULL;
	int r = config_init(line);
	CHECK(r == 0 || r == -EINVAL);
	if (r == 0) {
		CHECK(bad == 0);
		CHECK(num_nodes >= 1 && num_nodes <= MAX_NODES && node_id >= 0 && node_id < num_nodes);
		CHECK(current_app && current_app->min_nodes <= num_nodes);
		CHECK(strcmp(current_app->name, arg_str("app", DEFAULT_APP)) == 0);
		const struct argspec *mine[] = { kernel_model, link_args, wide_args, current_app->args, NULL };
		CHECK(model_check(&c, mine) == 0);
		args_read_back(&c, mine);
		const char *f = cmdline_get(&c, "fault");
		struct fault_cfg fc;
		char ferr[8];
		CHECK(!f || fault_parse(f, &fc, ferr, sizeof ferr) == 0);
	}
	free(join);
	free(err);
	free(line);
	return 0;
}
