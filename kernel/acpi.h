/*
 * The ACPI tables the kernel needs: MADT (interrupt controllers and ISA
 * interrupt overrides) and HPET.  No AML.
 */
#ifndef KERNEL_ACPI_H
#define KERNEL_ACPI_H

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
	char oem[7];
};

extern struct acpi_info acpi;

/* Find and read the tables; rsdp_hint is the loader's RSDP address or 0. */
void acpi_init(uint64_t rsdp_hint);

#endif
