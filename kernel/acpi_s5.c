/*
 * The sleep type of S5 (soft off) from the DSDT, without an AML
 * interpreter: firmware declares it as a package of constants,
 *
 *   Name (\_S5, Package () { SLP_TYPa, SLP_TYPb, ... })
 *
 * (ACPI 6.4 7.4.2, "\_Sx System States"), which AML encodes as NameOp
 * (0x08), the name "_S5_" (maybe after a root prefix '\'), PackageOp
 * (0x12), a PkgLength, NumElements, then each element as ZeroOp (0x00),
 * OneOp (0x01), OnesOp (0xff) or BytePrefix (0x0a) and a byte (ACPI 6.4
 * 20.2.3 and 20.2.4).  Anything else (a method computing the values) is
 * not understood, and the caller halts instead.  Pure logic: a host unit
 * test drives it.
 */
#include <string.h>

#include "kernel/acpi.h"

/* One package element at aml[*i]: its value, or -1. */
static int element(const uint8_t *aml, size_t n, size_t *i)
{
	if (*i >= n)
		return -1;
	switch (aml[*i]) {
	case 0x00:
	case 0x01:
		return aml[(*i)++];
	case 0xff:
		(*i)++;
		return 0xff;
	case 0x0a:
		if (*i + 1 >= n)
			return -1;
		*i += 2;
		return aml[*i - 1];
	}
	return -1;
}

int acpi_find_s5(const uint8_t *aml, size_t n, uint8_t *slp_typ_a, uint8_t *slp_typ_b)
{
	for (size_t at = 1; at + 4 < n; at++) {
		size_t i;
		int a, b;

		if (memcmp(aml + at, "_S5_", 4) != 0)
			continue;
		if (!(aml[at - 1] == 0x08 || (at >= 2 && aml[at - 1] == '\\' && aml[at - 2] == 0x08)))
			continue;
		i = at + 4;
		if (i >= n || aml[i] != 0x12)
			continue;
		i++;
		if (i >= n)
			return -1;
		i += 1 + (aml[i] >> 6);		/* PkgLength: its lead byte says how many follow */
		if (i >= n || aml[i] < 2)	/* NumElements */
			continue;
		i++;
		a = element(aml, n, &i);
		b = element(aml, n, &i);
		if (a < 0 || b < 0)
			continue;
		*slp_typ_a = (uint8_t)a;
		*slp_typ_b = (uint8_t)b;
		return 0;
	}
	return -1;
}
