#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/cmdline.h"

/* Append one line to err; with errlen 0 there is no buffer to read or write. */
static void report(char *err, size_t errlen, const char *fmt, ...)
{
	size_t used;
	va_list ap;

	if (errlen == 0)
		return;
	used = strnlen(err, errlen);
	if (used + 1 >= errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err + used, errlen - used, fmt, ap);
	va_end(ap);
	used = strlen(err);
	if (used + 1 < errlen) {
		err[used] = '\n';
		err[used + 1] = '\0';
	}
}

static int key_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' ||
	       ch == '.';
}

static int is_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

int cmdline_parse(const char *s, struct cmdline *c, char *err, size_t errlen)
{
	return cmdline_parse_secret(s, NULL, c, err, errlen);
}

/* Is the word w (n bytes) secret=...? */
static int is_secret_word(const char *w, size_t n, const char *secret)
{
	size_t k = secret ? strlen(secret) : 0;

	return secret && n > k && memcmp(w, secret, k) == 0 && w[k] == '=';
}

int cmdline_parse_secret(const char *s, const char *secret, struct cmdline *c, char *err,
			 size_t errlen)
{
	int bad = 0, after_secret = 0;

	c->n = 0;
	if (errlen)
		err[0] = '\0';
	while (*s) {
		const char *w, *eq = NULL, *end;
		size_t klen, vlen;

		while (is_space(*s))
			s++;
		if (!*s)
			break;
		w = s;
		while (*s && !is_space(*s)) {
			if (*s == '=' && !eq)
				eq = s;
			s++;
		}
		end = s;
		if (!eq && after_secret) {
			report(err, errlen, "malformed argument after %s=: a %s cannot contain spaces "
			       "(the word is not shown)", secret, secret);
			bad++;
			continue;
		}
		after_secret = is_secret_word(w, (size_t)(end - w), secret);
		if (!eq) {
			report(err, errlen, "malformed argument '%.*s': expected key=value", (int)(end - w), w);
			bad++;
			continue;
		}
		klen = (size_t)(eq - w);
		vlen = (size_t)(end - eq - 1);
		if (klen == 0) {
			report(err, errlen, "malformed argument '%.*s': empty key", (int)(end - w), w);
			bad++;
			continue;
		}
		if (klen >= CMDLINE_KEY_MAX) {
			report(err, errlen, "key '%.*s...' is too long (at most %d characters)", 16, w,
			       CMDLINE_KEY_MAX - 1);
			bad++;
			continue;
		}
		int badchar = 0;
		for (size_t i = 0; i < klen; i++)
			badchar |= !key_char(w[i]);
		if (badchar) {
			report(err, errlen, "malformed key '%.*s': use lowercase letters, digits, '_', '-', '.'",
			       (int)klen, w);
			bad++;
			continue;
		}
		if (vlen == 0) {
			report(err, errlen, "key '%.*s' has an empty value", (int)klen, w);
			bad++;
			continue;
		}
		if (vlen >= CMDLINE_VAL_MAX) {
			report(err, errlen, "value of '%.*s' is too long (at most %d characters)", (int)klen, w,
			       CMDLINE_VAL_MAX - 1);
			bad++;
			continue;
		}
		int dup = 0;
		for (int i = 0; i < c->n; i++)
			if (strlen(c->a[i].key) == klen && memcmp(c->a[i].key, w, klen) == 0)
				dup = 1;
		if (dup) {
			report(err, errlen, "key '%.*s' is given more than once", (int)klen, w);
			bad++;
			continue;
		}
		if (c->n == CMDLINE_MAX_ARGS) {
			report(err, errlen, "too many arguments (at most %d)", CMDLINE_MAX_ARGS);
			bad++;
			break;
		}
		memcpy(c->a[c->n].key, w, klen);
		c->a[c->n].key[klen] = '\0';
		memcpy(c->a[c->n].val, eq + 1, vlen);
		c->a[c->n].val[vlen] = '\0';
		c->n++;
	}
	return bad;
}

int cmdline_parse_int(const char *s, long *out)
{
	const char *digits = s && *s == '-' ? s + 1 : s;
	char *end;
	long v;

	if (!s || !*s)
		return -EINVAL;
	/* Decimal, or hex after 0x; a leading zero is not octal. */
	errno = 0;
	v = strtol(s, &end, digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X') ? 16 : 10);
	if (errno || *end != '\0')
		return -EINVAL;
	/* strtol accepts leading spaces and a sign before 0x; be strict. */
	if (!(s[0] == '-' || (s[0] >= '0' && s[0] <= '9')))
		return -EINVAL;
	*out = v;
	return 0;
}

int cmdline_parse_bool(const char *s, int *out)
{
	static const char *const yes[] = { "1", "on", "yes", "true" };
	static const char *const no[] = { "0", "off", "no", "false" };

	for (size_t i = 0; i < 4; i++) {
		if (strcmp(s, yes[i]) == 0) {
			*out = 1;
			return 0;
		}
		if (strcmp(s, no[i]) == 0) {
			*out = 0;
			return 0;
		}
	}
	return -EINVAL;
}

static const struct argspec *find_spec(const struct argspec *const *tables, const char *key)
{
	for (; *tables; tables++)
		for (const struct argspec *s = *tables; s->key; s++)
			if (strcmp(s->key, key) == 0)
				return s;
	return NULL;
}

int cmdline_check(const struct cmdline *c, const struct argspec *const *tables, char *err,
		  size_t errlen)
{
	int bad = 0;

	if (errlen)
		err[0] = '\0';
	for (int i = 0; i < c->n; i++) {
		const struct cmdline_arg *a = &c->a[i];
		const struct argspec *s = find_spec(tables, a->key);
		long v;
		int b;

		if (!s) {
			report(err, errlen, "unknown key '%s'", a->key);
			bad++;
			continue;
		}
		switch (s->type) {
		case ARG_INT_AUTO:
			if (strcmp(a->val, "auto") == 0)
				break;
			/* fall through */
		case ARG_INT:
			if (cmdline_parse_int(a->val, &v) < 0) {
				report(err, errlen, "%s=%s: not an integer%s", a->key, a->val,
				       s->type == ARG_INT_AUTO ? " (nor auto)" : "");
				bad++;
			} else if (v < s->min || v > s->max) {
				report(err, errlen, "%s=%s: out of range (%ld..%ld)", a->key, a->val, s->min,
				       s->max);
				bad++;
			}
			break;
		case ARG_BOOL:
			if (cmdline_parse_bool(a->val, &b) < 0) {
				report(err, errlen, "%s=%s: not a boolean (use 0/1, on/off, yes/no)", a->key,
				       a->val);
				bad++;
			}
			break;
		case ARG_STR:
		case ARG_SECRET:
			break;
		}
	}
	return bad;
}

const char *cmdline_get(const struct cmdline *c, const char *key)
{
	for (int i = 0; i < c->n; i++)
		if (strcmp(c->a[i].key, key) == 0)
			return c->a[i].val;
	return NULL;
}

void cmdline_redact(const char *s, const char *key, char *out, size_t n)
{
	size_t o = 0;
	int hiding = 0;

	if (n == 0)
		return;
	while (*s && o + 1 < n) {
		const char *w = s, *e = s;
		int has_eq;

		if (is_space(*s)) {
			out[o++] = *s++;
			continue;
		}
		while (*e && !is_space(*e))
			e++;
		has_eq = memchr(w, '=', (size_t)(e - w)) != NULL;
		if (is_secret_word(w, (size_t)(e - w), key)) {
			const char *h = "(hidden)";
			for (size_t i = 0; i <= strlen(key) && o + 1 < n; i++)
				out[o++] = w[i];
			while (*h && o + 1 < n)
				out[o++] = *h++;
			hiding = 1;
		} else if (hiding && !has_eq) {
			/* The rest of the secret, had it spaces: shown as nothing. */
			while (o > 0 && is_space(out[o - 1]))
				o--;
		} else {
			hiding = 0;
			while (w < e && o + 1 < n)
				out[o++] = *w++;
		}
		s = e;
	}
	out[o] = '\0';
}
