/*
 * Local APIC and I/O APIC (Intel SDM vol. 3 chapter 10; 82093AA I/O APIC
 * data sheet), 8259A PIC remap and mask.
 */
#include <errno.h>
#include <stdio.h>

#include "kernel/acpi.h"
#include "kernel/apic.h"
#include "kernel/panic.h"
#include "kernel/trap.h"
#include "kernel/x86.h"

enum {				/* LAPIC registers, byte offsets */
	LapicId = 0x020,
	LapicEoi = 0x0b0,
	LapicSvr = 0x0f0,
	LapicLvtTimer = 0x320,
	LapicLvtLint0 = 0x350,
	LapicLvtLint1 = 0x360,
	LapicLvtError = 0x370,
	LapicTimerInit = 0x380,
	LapicTimerCur = 0x390,
	LapicTimerDiv = 0x3e0,
};

enum {				/* LapicSvr */
	SvrEnable = 1 << 8,
};

enum {				/* LVT entries */
	LvtMasked = 1 << 16,
	LvtOneShot = 0 << 17,
	LvtNmi = 4 << 8,		/* delivery mode NMI (SDM 10.5.1) */
};

enum {				/* LapicTimerDiv */
	TimerDiv1 = 0xb,
};

enum {				/* I/O APIC */
	IoapicRegsel = 0x00,
	IoapicWin = 0x10,
	IoapicVer = 0x01,
	IoapicRedTbl = 0x10,
};

enum {				/* redirection entry, low word */
	RteLevel = 1 << 15,
	RteActiveLow = 1 << 13,
	RteMasked = 1 << 16,
};

static volatile uint32_t *lapic;

struct ioapic {
	volatile uint32_t *base;
	uint32_t gsi_base;
	uint32_t count;
};
static struct ioapic ioapics[ACPI_MAX_IOAPIC];
static int nioapic;

static inline uint32_t lapic_read(int reg) { return lapic[reg / 4]; }
static inline void lapic_write(int reg, uint32_t v) { lapic[reg / 4] = v; (void)lapic[LapicId / 4]; }

static uint32_t ioapic_read(struct ioapic *io, uint32_t reg)
{
	io->base[IoapicRegsel / 4] = reg;
	return io->base[IoapicWin / 4];
}

static void ioapic_write(struct ioapic *io, uint32_t reg, uint32_t v)
{
	io->base[IoapicRegsel / 4] = reg;
	io->base[IoapicWin / 4] = v;
}

static void pic_disable(void)
{
	/* ICW1-4: remap master to VEC_PIC_BASE, slave to +8, then mask all. */
	outb(0x20, 0x11);
	outb(0xa0, 0x11);
	outb(0x21, VEC_PIC_BASE);
	outb(0xa1, VEC_PIC_BASE + 8);
	outb(0x21, 4);
	outb(0xa1, 2);
	outb(0x21, 1);
	outb(0xa1, 1);
	outb(0x21, 0xff);
	outb(0xa1, 0xff);
}

void apic_init(void)
{
	uint64_t base = rdmsr(MSR_APIC_BASE);

	pic_disable();
	/* Enable the xAPIC globally (bit 11) at the address the MSR holds. */
	wrmsr(MSR_APIC_BASE, base | (1 << 11));
	lapic = (volatile uint32_t *)(uintptr_t)(base & ~0xfffULL);
	lapic_write(LapicSvr, SvrEnable | VEC_SPURIOUS);
	lapic_write(LapicLvtTimer, LvtMasked);
	lapic_write(LapicLvtLint0, LvtMasked);
	/*
	 * LINT1 is the PC's NMI line (as ACPI's MADT names it on every PC and
	 * QEMU wires it): an NMI, such as QEMU's monitor command `nmi` that
	 * boot/cluster sends before a timeout kills the node, makes it print
	 * where it stands (kernel/trap.c), then go on.
	 */
	lapic_write(LapicLvtLint1, LvtNmi);
	lapic_write(LapicLvtError, LvtMasked);
	lapic_write(LapicEoi, 0);

	for (int i = 0; i < acpi.nioapic; i++) {
		struct ioapic *io = &ioapics[nioapic];
		io->base = (volatile uint32_t *)(uintptr_t)acpi.ioapic[i].addr;
		io->gsi_base = acpi.ioapic[i].gsi_base;
		io->count = ((ioapic_read(io, IoapicVer) >> 16) & 0xff) + 1;
		for (uint32_t j = 0; j < io->count; j++) {
			ioapic_write(io, IoapicRedTbl + 2 * j, RteMasked);
			ioapic_write(io, IoapicRedTbl + 2 * j + 1, 0);
		}
		nioapic++;
	}
	if (nioapic == 0 && !acpi.found) {
		/* No ACPI: assume the standard PC I/O APIC address. */
		struct ioapic *io = &ioapics[nioapic++];
		io->base = (volatile uint32_t *)0xfec00000;
		io->gsi_base = 0;
		io->count = ((ioapic_read(io, IoapicVer) >> 16) & 0xff) + 1;
	}
}

void lapic_eoi(void)
{
	lapic[LapicEoi / 4] = 0;
}

uint32_t lapic_id(void)
{
	return lapic_read(LapicId) >> 24;
}

void lapic_timer_setup(int vector)
{
	lapic_write(LapicTimerDiv, TimerDiv1);
	lapic_write(LapicLvtTimer, LvtOneShot | (uint32_t)vector);
}

void lapic_timer_oneshot(uint32_t count)
{
	lapic_write(LapicTimerInit, count ? count : 1);
}

void lapic_timer_stop(void)
{
	lapic_write(LapicTimerInit, 0);
}

uint32_t lapic_timer_current(void)
{
	return lapic_read(LapicTimerCur);
}

static struct ioapic *ioapic_for(uint32_t gsi)
{
	for (int i = 0; i < nioapic; i++)
		if (gsi >= ioapics[i].gsi_base && gsi < ioapics[i].gsi_base + ioapics[i].count)
			return &ioapics[i];
	return NULL;
}

int ioapic_route(uint32_t gsi, int vector, int level, int active_low)
{
	struct ioapic *io = ioapic_for(gsi);
	uint32_t pin, lo;

	if (!io)
		return -ENODEV;
	pin = gsi - io->gsi_base;
	lo = (uint32_t)vector | (level ? RteLevel : 0) | (active_low ? RteActiveLow : 0);
	irqflags_t f = irq_save();
	ioapic_write(io, IoapicRedTbl + 2 * pin + 1, lapic_id() << 24);
	ioapic_write(io, IoapicRedTbl + 2 * pin, lo);
	irq_restore(f);
	return 0;
}

void ioapic_mask(uint32_t gsi, int masked)
{
	struct ioapic *io = ioapic_for(gsi);
	uint32_t pin, lo;

	if (!io)
		return;
	pin = gsi - io->gsi_base;
	irqflags_t f = irq_save();
	lo = ioapic_read(io, IoapicRedTbl + 2 * pin);
	lo = masked ? (lo | RteMasked) : (lo & ~(uint32_t)RteMasked);
	ioapic_write(io, IoapicRedTbl + 2 * pin, lo);
	irq_restore(f);
}

uint32_t isa_irq_gsi(int irq, int *level, int *active_low)
{
	if (irq >= 0 && irq < 16 && acpi.iso[irq].present) {
		*level = acpi.iso[irq].level;
		*active_low = acpi.iso[irq].active_low;
		return acpi.iso[irq].gsi;
	}
	*level = 0;
	*active_low = 0;
	return (uint32_t)irq;
}

void msi_compose(int vector, uint64_t *addr, uint32_t *data)
{
	/* SDM vol. 3, 10.11: fixed delivery, edge, physical destination. */
	*addr = 0xfee00000ULL | ((uint64_t)lapic_id() << 12);
	*data = (uint32_t)vector;
}
