/*
 * Host unit tests of the Ising optimizer's core (apps/ising_core.c): the
 * energy against a direct sum over bonds, the greedy half-sweep never
 * raising it, and the row split of the app simulated on the host: parts
 * that sweep with the red half on their nearer ghost rows too and pass
 * each other, once a sweep, only the spans of their two boundary rows on
 * each side that changed must end with exactly the one-part result, bit
 * for bit.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/host/unit.h"

#include "apps/ising_core.h"

static int8_t spin(const struct ising_part *p, int r, int c)
{
	return ising_row(p, (r + p->n) % p->n)[(c + p->n) % p->n];
}

/* E = -sum J s s over every bond once, straight from the definition. */
static double direct_energy(const struct ising_part *p)
{
	double e = 0;

	for (int r = 0; r < p->n; r++)
		for (int c = 0; c < p->n; c++) {
			e -= ising_bond(p->seed, p->n, r, c, 0) * spin(p, r, c) * spin(p, r, c + 1);
			e -= ising_bond(p->seed, p->n, r, c, 1) * spin(p, r, c) * spin(p, r + 1, c);
		}
	return e;
}

static double energy(const struct ising_part *p)
{
	double e = 0;

	for (int r = p->r0; r < p->r1; r++)
		e += ising_row_energy(p, r);
	return e;
}

static void test_bonds(void **state)
{
	(void)state;
	for (int r = 0; r < 50; r++)
		for (int c = 0; c < 50; c++) {
			double j = ising_bond(7, 50, r, c, r & 1);
			assert_true(j >= -1.0 && j < 1.0);
			assert_true(j == ising_bond(7, 50, r, c, r & 1));
			int8_t s = ising_spin0(7, 50, r, c);
			assert_true(s == 1 || s == -1);
		}
	assert_true(ising_bond(7, 50, 1, 2, 0) != ising_bond(8, 50, 1, 2, 0));
	assert_true(ising_bond(7, 50, 1, 2, 0) != ising_bond(7, 50, 1, 2, 1));
}

static void test_energy_and_descent(void **state)
{
	struct ising_part p;

	(void)state;
	assert_int_equal(ising_part_init(&p, 12, 3, 0, 12), 0);
	ising_wrap(&p);
	assert_true(fabs(energy(&p) - direct_energy(&p)) < 1e-9);
	double e = energy(&p);
	int total = 0;
	for (int s = 0; s < 20; s++)
		for (int color = 0; color < 2; color++) {
			total += ising_half_sweep(&p, color);
			ising_wrap(&p);
			double e2 = energy(&p);
			assert_true(e2 <= e);		/* greedy: never up */
			assert_true(fabs(e2 - direct_energy(&p)) < 1e-9);
			e = e2;
		}
	assert_true(total > 0);
	/* At the end no single flip lowers the energy: a local minimum. */
	assert_int_equal(ising_half_sweep(&p, 0), 0);
	assert_int_equal(ising_half_sweep(&p, 1), 0);
	ising_part_free(&p);
}

/* Copy what changed of rows row, row+1 (spans a, b) of part from into part to at row to_row. */
static void pass_rows(struct ising_part *to, int to_row, const struct ising_part *from, int row,
		      const struct ising_span *a, const struct ising_span *b)
{
	int n = from->n, lo, hi;

	if (a->lo >= a->hi && b->lo >= b->hi)
		return;
	lo = a->lo < a->hi ? a->lo : n + b->lo;
	hi = b->lo < b->hi ? n + b->hi : a->hi;
	memcpy(ising_row(to, to_row) + lo, ising_row(from, row) + lo, (size_t)(hi - lo));
}

/* The app's row split, on the host: P parts, changed spans copied across once a sweep. */
static void split_run(int n, int parts, int sweeps, uint32_t seed)
{
	struct ising_part whole, pp[16];
	struct ising_span ch[16][4];
	long fw = 0, fp = 0;

	assert_int_equal(ising_part_init(&whole, n, seed, 0, n), 0);
	for (int s = 0; s < sweeps; s++)
		for (int color = 0; color < 2; color++) {
			fw += ising_half_sweep(&whole, color);
			ising_wrap(&whole);
		}
	for (int i = 0; i < parts; i++)
		assert_int_equal(ising_part_init(&pp[i], n, seed, i * n / parts, (i + 1) * n / parts), 0);
	for (int s = 0; s < sweeps; s++) {
		for (int i = 0; i < parts; i++)
			fp += ising_sweep_part(&pp[i], ch[i]);
		for (int i = 0; i < parts; i++) {
			struct ising_part *up = &pp[(i + parts - 1) % parts], *down = &pp[(i + 1) % parts];
			struct ising_part *me = &pp[i];
			/* My two first rows are up's lower ghosts; my two last rows down's upper ghosts. */
			pass_rows(up, up->r1, me, me->r0, &ch[i][0], &ch[i][1]);
			pass_rows(down, down->r0 - 2, me, me->r1 - 2, &ch[i][2], &ch[i][3]);
		}
	}
	assert_int_equal(fp, fw);
	double e = 0;
	for (int i = 0; i < parts; i++) {
		for (int r = pp[i].r0; r < pp[i].r1; r++) {
			e += ising_row_energy(&pp[i], r);
			assert_memory_equal(ising_row(&pp[i], r), ising_row(&whole, r), (size_t)n);
		}
	}
	double ew = energy(&whole);
	assert_memory_equal(&e, &ew, sizeof e);		/* bit for bit */
	for (int i = 0; i < parts; i++)
		ising_part_free(&pp[i]);
	ising_part_free(&whole);
}

static void test_split(void **state)
{
	(void)state;
	for (int parts = 2; parts <= 8; parts++) {
		split_run(20, parts, 30, 1);
		split_run(40, parts, 30, 2);
		split_run(80, parts, 10, 3);
	}
	split_run(10, 5, 20, 9);	/* two rows per part */
	split_run(14, 4, 20, 4);	/* three and four rows */
	split_run(8, 2, 20, 5);		/* both neighbours the same part */
}

UNIT_MAIN("tests", NULL, NULL,
	  cmocka_unit_test(test_bonds),
	  cmocka_unit_test(test_energy_and_descent),
	  cmocka_unit_test(test_split))
