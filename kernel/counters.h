/*
 * Counters declared once.  A module lists its counters in one X-macro;
 * from that list come both its struct's fields and the table that
 * counters_print() reads, so a counter is named in one place and every
 * module's are printed by one routine, in one form:
 *
 *	rmem: applied write 3, read 0, atomic 1; refused bad_segment 0, ...
 *
 * The list's entries, each X(kind, ...), the first a LINE or LINE_IF:
 *	X(LINE, "head")			a new line: "<module>: head"
 *	X(LINE_IF, "head")		the same, printed only if one of its counters is not 0
 *	X(ONE, field, "label")		uint64_t field, printed "label <value>"
 *	X(EACH, field, first, n, names)	uint64_t field[n], each from field[first] on printed
 *					"names[i] <value>" (names: const char *const[n])
 *	X(PART, "text")			text between two counters of a line ("; refused")
 *
 * So:
 *	#define RMEM_COUNTERS(X) X(LINE, "") X(ONE, applied_write, "applied write") ...
 *	struct rmem_counters { RMEM_COUNTERS(COUNTER_FIELD) };
 *	static const struct counter_row rmem_rows[] = { RMEM_COUNTERS(COUNTER_ROW_OF(struct rmem_counters)) };
 *	counters_print("rmem", rmem_rows, COUNTER_ROWS(rmem_rows), &snapshot);
 */
#ifndef KERNEL_COUNTERS_H
#define KERNEL_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

enum counter_kind { CTR_LINE, CTR_LINE_IF, CTR_ONE, CTR_EACH, CTR_PART };

struct counter_row {
	uint8_t kind;			/* enum counter_kind */
	uint16_t n;			/* CTR_EACH: how many are printed */
	uint32_t off;			/* the (first printed) counter's offset in its struct */
	const char *text;		/* its label, a line's head, or a part's text */
	const char *const *names;	/* CTR_EACH: the first printed one's label, then each next */
};

/* The struct's fields. */
#define COUNTER_FIELD(kind, ...) COUNTER_FIELD_##kind(__VA_ARGS__)
#define COUNTER_FIELD_LINE(head)
#define COUNTER_FIELD_LINE_IF(head)
#define COUNTER_FIELD_PART(text)
#define COUNTER_FIELD_ONE(f, label) uint64_t f;
#define COUNTER_FIELD_EACH(f, first, n, names) uint64_t f[n];

/* The table's rows, for counters in a struct of type COUNTER_TYPE (define it first). */
#define COUNTER_ROW(kind, ...) COUNTER_ROW_##kind(__VA_ARGS__)
#define COUNTER_ROW_LINE(head) { .kind = CTR_LINE, .text = head },
#define COUNTER_ROW_LINE_IF(head) { .kind = CTR_LINE_IF, .text = head },
#define COUNTER_ROW_PART(t) { .kind = CTR_PART, .text = t },
#define COUNTER_ROW_ONE(f, label) { .kind = CTR_ONE, .off = offsetof(COUNTER_TYPE, f), .text = label },
#define COUNTER_ROW_EACH(f, first, cnt, nm) \
	{ .kind = CTR_EACH, .n = (cnt) - (first), .off = offsetof(COUNTER_TYPE, f) + (first) * sizeof(uint64_t), \
	  .names = (nm) + (first) },

#define COUNTER_ROWS(rows) ((int)(sizeof(rows) / sizeof((rows)[0])))

/*
 * Print the counters of c (a struct the rows describe) on the console:
 * each line "<module>: <head> <label> <value>, <label> <value>...", a
 * LINE_IF line only where one of its counters is not 0.
 */
void counters_print(const char *module, const struct counter_row *rows, int nrows, const void *c);

#endif
