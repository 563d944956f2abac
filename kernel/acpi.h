/*
 * The ACPI tables the kernel needs: MADT (interrupt controllers and ISA
 * interrupt overrides), HPET, and the FADT and DSDT for soft-off (S5).
 * No AML interpreter: the S5 package is found by its encoding.
 */
#ifndef KERNEL_ACPI_H
#define KERNEL_ACPI_H

#include <stddef.h>
#include <stdint.h>

#define ACPI_MAX_IOAPIC 4

struct acpi_ioapic {
	uint8_t id;
	uint32_t addr;
	uint32_t gsi_base;
};

struct acpi_iso {		/* interrupt source override for an ISA IRQ */
	int present;
	uint32_t gsi;
	int level;		/* level-triggered */
	int active_low;
};

struct acpi_info {
	int found;		/* RSDP found and checksummed */
	uint64_t lapic_addr;
	int nioapic;
	struct acpi_ioapic ioapic[ACPI_MAX_IOAPIC];
	struct acpi_iso iso[16];
	uint64_t hpet_addr;	/* 0 if no HPET table */
	/* Soft-off (FADT, ACPI 6.4 5.2.9; \_S5 from the DSDT): s5 set when all were found. */
	int s5;
	uint16_t pm1a_cnt, pm1b_cnt;	/* PM1 control ports (0: none) */
	uint8_t slp_typ_a, slp_typ_b;
	uint32_t smi_cmd;		/* where to write acpi_enable to enter ACPI mode */
	uint8_t acpi_enable;
	char oem[7];
};

extern struct acpi_info acpi;

/* Find and read the tables; rsdp_hint is the loader's RSDP address or 0. */
void acpi_init(uint64_t rsdp_hint);

/*
 * Turn the machine off (S5): returns only if it could not (no FADT, no
 * \_S5 the kernel understands, or the write did nothing).  Interrupts off.
 */
void acpi_poweroff(void);

/* The \_S5 package's SLP_TYPa and SLP_TYPb in AML bytes: 0, or -1 if not found. */
int acpi_find_s5(const uint8_t *aml, size_t n, uint8_t *slp_typ_a, uint8_t *slp_typ_b);

#endif
