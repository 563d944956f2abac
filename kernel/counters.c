/*
 * One routine prints every module's counters (kernel/counters.h).  Only
 * for the console: none of it is on a hot path.
 */
#include <stdio.h>

#include "kernel/counters.h"

static uint64_t value(const void *c, const struct counter_row *r, int i)
{
	return ((const uint64_t *)((const char *)c + r->off))[i];
}

/* The rows of the line that starts at rows[0]: up to the next line's head. */
static int line_len(const struct counter_row *rows, int nrows)
{
	int n = 1;

	while (n < nrows && rows[n].kind != CTR_LINE && rows[n].kind != CTR_LINE_IF)
		n++;
	return n;
}

/* How many values row r stands for: 1 for a counter, n for an array, 0 for text. */
static int width(const struct counter_row *r)
{
	return r->kind == CTR_ONE ? 1 : r->kind == CTR_EACH ? r->n : 0;
}

static int any(const void *c, const struct counter_row *rows, int n)
{
	for (int k = 0; k < n; k++)
		for (int i = 0; i < width(&rows[k]); i++)
			if (value(c, &rows[k], i))
				return 1;
	return 0;
}

/* One line: its head, then each counter after a comma, each part's text as it is. */
static void print_line(const char *module, const struct counter_row *rows, int n, const void *c)
{
	const char *sep = " ";

	printf("%s:%s%s", module, rows[0].text[0] ? " " : "", rows[0].text);
	for (int k = 1; k < n; k++) {
		const struct counter_row *r = &rows[k];
		if (r->kind == CTR_PART) {
			printf("%s", r->text);
			sep = " ";
			continue;
		}
		for (int i = 0; i < width(r); i++) {
			const char *label = r->kind == CTR_ONE ? r->text : r->names[i];
			printf("%s%s %lu", sep, label, (unsigned long)value(c, r, i));
			sep = ", ";
		}
	}
	printf("\n");
}

void counters_print(const char *module, const struct counter_row *rows, int nrows, const void *c)
{
	for (int k = 0; k < nrows;) {
		int n = line_len(rows + k, nrows - k);
		if (rows[k].kind == CTR_LINE || (rows[k].kind == CTR_LINE_IF && any(c, rows + k + 1, n - 1)))
			print_line(module, rows + k, n, c);
		k += n;
	}
}
