/*
 * Host unit tests of kernel/acpi_s5.c: the \_S5 package found in AML as
 * firmware writes it (QEMU's, and the other encodings ACPI allows for
 * constants), and nothing found in what only looks like it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tests/host/unit.h"

#include "kernel/acpi.h"

static int find(const uint8_t *aml, size_t n, uint8_t *a, uint8_t *b)
{
	*a = *b = 0x55;
	return acpi_find_s5(aml, n, a, b);
}

static void encodings(void **state)
{
	uint8_t a, b;
	/* QEMU's pc DSDT: Name (_S5, Package (0x04) { Zero, Zero, Zero, Zero }). */
	static const uint8_t qemu[] = { 0x10, 0x08, 0x08, '_', 'S', '5', '_', 0x12, 0x06, 0x04,
					0x00, 0x00, 0x00, 0x00 };
	/* A root prefix and byte constants: Name (\_S5, Package () { 0x05, 0x07 }). */
	static const uint8_t bytes[] = { 0x08, '\\', '_', 'S', '5', '_', 0x12, 0x07, 0x02,
					 0x0a, 0x05, 0x0a, 0x07 };
	/* One and Ones, and a two-byte PkgLength. */
	static const uint8_t ones[] = { 0x08, '_', 'S', '5', '_', 0x12, 0x40, 0x00, 0x02,
					0x01, 0xff };

	(void)state;
	assert_int_equal(find(qemu, sizeof qemu, &a, &b), 0);
	assert_int_equal(a, 0);
	assert_int_equal(b, 0);
	assert_int_equal(find(bytes, sizeof bytes, &a, &b), 0);
	assert_int_equal(a, 5);
	assert_int_equal(b, 7);
	assert_int_equal(find(ones, sizeof ones, &a, &b), 0);
	assert_int_equal(a, 1);
	assert_int_equal(b, 0xff);
}

static void lookalikes(void **state)
{
	uint8_t a, b;
	/* The name inside a string, a method of that name, a package of computed values. */
	static const uint8_t str[] = { 0x0d, '_', 'S', '5', '_', 0x12, 0x06, 0x04, 0, 0 };
	static const uint8_t method[] = { 0x14, 0x08, '_', 'S', '5', '_', 0x00, 0xa4, 0x00 };
	static const uint8_t computed[] = { 0x08, '_', 'S', '5', '_', 0x12, 0x06, 0x02,
					    0x70, 0x01, 0x60, 0x00 };
	/* Cut short anywhere: never a read past the end, never a value. */
	static const uint8_t whole[] = { 0x08, '_', 'S', '5', '_', 0x12, 0x07, 0x02,
					 0x0a, 0x05, 0x0a, 0x07 };

	(void)state;
	assert_int_equal(find(str, sizeof str, &a, &b), -1);
	assert_int_equal(find(method, sizeof method, &a, &b), -1);
	assert_int_equal(find(computed, sizeof computed, &a, &b), -1);
	for (size_t n = 0; n < sizeof whole; n++)
		assert_int_equal(find(whole, n, &a, &b), -1);
	assert_int_equal(find(whole, sizeof whole, &a, &b), 0);
}

UNIT_MAIN("tests", NULL, NULL,
	  cmocka_unit_test(encodings),
	  cmocka_unit_test(lookalikes))
