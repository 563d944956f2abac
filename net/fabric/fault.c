#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "net/fabric/fault.h"

/* Parse a probability "0", "1", "0.05", ".5" (at most 9 decimals). */
static int parse_rate(const char *s, size_t n, uint32_t *out)
{
	uint64_t num = 0, den = 1;
	size_t i = 0;
	int digits = 0;

	while (i < n && s[i] >= '0' && s[i] <= '9') {
		num = num * 10 + (uint64_t)(s[i] - '0');
		if (num > 1)
			return -EINVAL;
		i++;
		digits++;
	}
	if (i < n && s[i] == '.') {
		i++;
		int frac = 0;
		while (i < n && s[i] >= '0' && s[i] <= '9') {
			if (++frac > 9)
				return -EINVAL;
			num = num * 10 + (uint64_t)(s[i] - '0');
			den *= 10;
			i++;
			digits++;
		}
	}
	if (i != n || digits == 0 || num > den)
		return -EINVAL;
	/* num/den in [0, 1] as a fraction of 2^32, 1.0 saturating. */
	uint64_t v = (num << 32) / den;
	*out = v > 0xffffffffULL ? 0xffffffffu : (uint32_t)v;
	return 0;
}

int fault_parse(const char *spec, struct fault_cfg *f, char *err, size_t errlen)
{
	static const char *const names[] = { "drop", "dup", "reorder", "corrupt" };
	const char *p = spec;

	memset(f, 0, sizeof *f);
	if (!*p) {
		snprintf(err, errlen, "fault=: empty");
		return -EINVAL;
	}
	while (*p) {
		const char *end = strchr(p, ','), *colon;
		size_t n = end ? (size_t)(end - p) : strlen(p);
		uint32_t *slot = NULL, rate;

		colon = memchr(p, ':', n);
		if (!colon) {
			snprintf(err, errlen, "fault=%s: item '%.*s' is not kind:rate", spec, (int)n, p);
			return -EINVAL;
		}
		for (int i = 0; i < 4; i++) {
			if ((size_t)(colon - p) == strlen(names[i]) && memcmp(p, names[i], (size_t)(colon - p)) == 0)
				slot = i == 0 ? &f->drop : i == 1 ? &f->dup : i == 2 ? &f->reorder : &f->corrupt;
		}
		if (!slot) {
			snprintf(err, errlen, "fault=%s: unknown kind '%.*s' (drop, dup, reorder, corrupt)", spec,
				 (int)(colon - p), p);
			return -EINVAL;
		}
		if (parse_rate(colon + 1, n - (size_t)(colon - p) - 1, &rate) < 0) {
			snprintf(err, errlen, "fault=%s: rate '%.*s' is not a probability between 0 and 1", spec,
				 (int)(n - (size_t)(colon - p) - 1), colon + 1);
			return -EINVAL;
		}
		*slot = rate;
		f->any |= rate != 0;
		p += n;
		if (*p == ',') {
			p++;
			if (!*p) {
				snprintf(err, errlen, "fault=%s: trailing comma", spec);
				return -EINVAL;
			}
		}
	}
	return 0;
}

static unsigned permille(uint32_t r)
{
	return (unsigned)(((uint64_t)r * 1000 + (1ULL << 31)) >> 32);
}

void fault_format(const struct fault_cfg *f, char *buf, size_t len)
{
	snprintf(buf, len, "drop %u.%03u dup %u.%03u reorder %u.%03u corrupt %u.%03u",
		 permille(f->drop) / 1000, permille(f->drop) % 1000, permille(f->dup) / 1000,
		 permille(f->dup) % 1000, permille(f->reorder) / 1000, permille(f->reorder) % 1000,
		 permille(f->corrupt) / 1000, permille(f->corrupt) % 1000);
}
