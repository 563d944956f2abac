/*
 * ACPI table discovery (ACPI 6.4 sections 5.2.5 RSDP, 5.2.7 RSDT, 5.2.8
 * XSDT, 5.2.12 MADT) and the HPET description table (IA-PC HPET spec 3.2.4).
 */
#include <stdio.h>
#include <string.h>

#include "boot/boot.h"
#include "kernel/acpi.h"
#include "kernel/x86.h"

struct acpi_info acpi;

struct rsdp {
	char sig[8];
	uint8_t checksum;
	char oem[6];
	uint8_t revision;
	uint32_t rsdt;
	uint32_t length;	/* revision >= 2 */
	uint64_t xsdt;
	uint8_t xchecksum;
	uint8_t reserved[3];
} __attribute__((packed));
_Static_assert(sizeof(struct rsdp) == 36, "RSDP layout");

struct sdt_header {
	char sig[4];
	uint32_t length;
	uint8_t revision;
	uint8_t checksum;
	char oem[6];
	char oem_table[8];
	uint32_t oem_rev;
	uint32_t creator;
	uint32_t creator_rev;
} __attribute__((packed));
_Static_assert(sizeof(struct sdt_header) == 36, "SDT header layout");

struct madt {
	struct sdt_header h;
	uint32_t lapic_addr;
	uint32_t flags;
} __attribute__((packed));

struct hpet_table {
	struct sdt_header h;
	uint32_t block_id;
	uint8_t space_id;	/* 0 = system memory */
	uint8_t bit_width;
	uint8_t bit_offset;
	uint8_t access_size;
	uint64_t address;
	uint8_t number;
	uint16_t min_tick;
	uint8_t attributes;
} __attribute__((packed));

enum { MADT_LAPIC = 0, MADT_IOAPIC = 1, MADT_ISO = 2, MADT_LAPIC_OVERRIDE = 5 };

static int checksum_ok(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint8_t s = 0;

	for (size_t i = 0; i < n; i++)
		s += b[i];
	return s == 0;
}

static const struct rsdp *rsdp_scan(uint64_t start, uint64_t len)
{
	for (uint64_t a = start; a + sizeof(struct rsdp) <= start + len; a += 16) {
		const struct rsdp *r = (const void *)(uintptr_t)a;
		if (memcmp(r->sig, "RSD PTR ", 8) == 0 && checksum_ok(r, 20))
			return r;
	}
	return NULL;
}

static void parse_madt(const struct madt *m)
{
	const uint8_t *p = (const uint8_t *)(m + 1), *end = (const uint8_t *)m + m->h.length;

	acpi.lapic_addr = m->lapic_addr;
	while (p + 2 <= end && p[1] >= 2 && p + p[1] <= end) {
		switch (p[0]) {
		case MADT_IOAPIC:
			if (p[1] >= 12 && acpi.nioapic < ACPI_MAX_IOAPIC) {
				struct acpi_ioapic *io = &acpi.ioapic[acpi.nioapic++];
				io->id = p[2];
				memcpy(&io->addr, p + 4, 4);
				memcpy(&io->gsi_base, p + 8, 4);
			}
			break;
		case MADT_ISO:
			if (p[1] >= 10 && p[3] < 16) {
				struct acpi_iso *iso = &acpi.iso[p[3]];
				uint16_t flags;
				memcpy(&iso->gsi, p + 4, 4);
				memcpy(&flags, p + 8, 2);
				iso->present = 1;
				iso->active_low = (flags & 3) == 3;
				iso->level = ((flags >> 2) & 3) == 3;
			}
			break;
		case MADT_LAPIC_OVERRIDE:
			if (p[1] >= 12)
				memcpy(&acpi.lapic_addr, p + 4, 8);
			break;
		}
		p += p[1];
	}
}

/* Tables above the boot identity map are ignored rather than faulted on. */
static int mapped(uint64_t a)
{
	return a != 0 && a < BOOT_MAPPED_BYTES - 65536;
}

/* FADT (ACPI 6.4 5.2.9, Table 5.9): the fields soft-off needs, by offset. */
static void parse_fadt(const struct sdt_header *h)
{
	const uint8_t *f = (const uint8_t *)h;
	uint32_t dsdt32, pm1a, pm1b;
	uint64_t dsdt = 0;
	const struct sdt_header *d;

	if (h->length < 76)
		return;
	memcpy(&dsdt32, f + 40, 4);
	memcpy(&acpi.smi_cmd, f + 48, 4);
	acpi.acpi_enable = f[52];
	memcpy(&pm1a, f + 64, 4);
	memcpy(&pm1b, f + 68, 4);
	if (h->length >= 148)
		memcpy(&dsdt, f + 140, 8);	/* X_DSDT */
	if (!dsdt)
		dsdt = dsdt32;
	if (!pm1a || pm1a > 0xffff || pm1b > 0xffff || !mapped(dsdt))
		return;
	d = (const void *)(uintptr_t)dsdt;
	if (memcmp(d->sig, "DSDT", 4) != 0 || d->length < sizeof *d || !mapped(dsdt + d->length) ||
	    !checksum_ok(d, d->length))
		return;
	if (acpi_find_s5((const uint8_t *)(d + 1), d->length - sizeof *d, &acpi.slp_typ_a,
			 &acpi.slp_typ_b) < 0)
		return;
	acpi.pm1a_cnt = (uint16_t)pm1a;
	acpi.pm1b_cnt = (uint16_t)pm1b;
	acpi.s5 = 1;
}

#define PM1_SCI_EN 0x0001
#define PM1_SLP_EN 0x2000

void acpi_poweroff(void)
{
	if (!acpi.s5)
		return;
	/* Legacy mode: ask the firmware for ACPI mode first (ACPI 6.4 16.3.1). */
	if (!(inw(acpi.pm1a_cnt) & PM1_SCI_EN) && acpi.smi_cmd && acpi.smi_cmd <= 0xffff &&
	    acpi.acpi_enable) {
		outb((uint16_t)acpi.smi_cmd, acpi.acpi_enable);
		for (int i = 0; i < 3000000 && !(inw(acpi.pm1a_cnt) & PM1_SCI_EN); i++)
			cpu_relax();
	}
	outw(acpi.pm1a_cnt, (uint16_t)((acpi.slp_typ_a & 7) << 10 | PM1_SLP_EN));
	if (acpi.pm1b_cnt)
		outw(acpi.pm1b_cnt, (uint16_t)((acpi.slp_typ_b & 7) << 10 | PM1_SLP_EN));
	for (int i = 0; i < 30000000; i++)
		cpu_relax();	/* the machine goes off here */
}

static void visit(const struct sdt_header *h)
{
	if (!mapped((uintptr_t)h) || h->length < sizeof *h || !checksum_ok(h, h->length))
		return;
	if (memcmp(h->sig, "FACP", 4) == 0)
		parse_fadt(h);
	else if (memcmp(h->sig, "APIC", 4) == 0)
		parse_madt((const struct madt *)h);
	else if (memcmp(h->sig, "HPET", 4) == 0 && h->length >= sizeof(struct hpet_table)) {
		const struct hpet_table *t = (const void *)h;
		if (t->space_id == 0)
			acpi.hpet_addr = t->address;
	}
}

void acpi_init(uint64_t rsdp_hint)
{
	const struct rsdp *r = NULL;

	if (rsdp_hint) {
		r = (const void *)(uintptr_t)rsdp_hint;
		if (memcmp(r->sig, "RSD PTR ", 8) != 0 || !checksum_ok(r, 20))
			r = NULL;
	}
	if (!r) {
		/* ACPI 6.4 5.2.5.1: the first KiB of the EBDA, then the BIOS area. */
		volatile uint16_t *bda = (volatile uint16_t *)0x400;
		__asm__("" : "+r"(bda));	/* a real address, not a null pointer's offset */
		uint64_t ebda = (uint64_t)bda[7] << 4;	/* 0x40e: the EBDA segment */
		if (ebda >= 0x80000 && ebda < 0xa0000)
			r = rsdp_scan(ebda, 1024);
		if (!r)
			r = rsdp_scan(0xe0000, 0x20000);
	}
	if (!r)
		return;
	acpi.found = 1;
	memcpy(acpi.oem, r->oem, 6);
	if (r->revision >= 2 && mapped(r->xsdt) && checksum_ok(r, sizeof *r)) {
		const struct sdt_header *x = (const void *)(uintptr_t)r->xsdt;
		if (checksum_ok(x, x->length)) {
			size_t n = (x->length - sizeof *x) / 8;
			for (size_t i = 0; i < n; i++) {
				uint64_t a;
				memcpy(&a, (const uint8_t *)(x + 1) + 8 * i, 8);
				visit((const void *)(uintptr_t)a);
			}
			return;
		}
	}
	const struct sdt_header *rs = (const void *)(uintptr_t)r->rsdt;
	if (!mapped(r->rsdt) || !checksum_ok(rs, rs->length))
		return;
	size_t n = (rs->length - sizeof *rs) / 4;
	for (size_t i = 0; i < n; i++) {
		uint32_t a;
		memcpy(&a, (const uint8_t *)(rs + 1) + 4 * i, 4);
		visit((const void *)(uintptr_t)a);
	}
}
