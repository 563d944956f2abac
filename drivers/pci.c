/*
 * PCI Local Bus Specification 3.0: configuration mechanism #1 (3.2.2.3.2),
 * header type 0/1 layouts (6.1), BAR sizing (6.2.5.1), capability list (6.7).
 */
#include <errno.h>
#include <stdio.h>

#include "drivers/pci.h"
#include "kernel/apic.h"
#include "kernel/init.h"
#include "kernel/vm.h"
#include "kernel/x86.h"

#define PCI_ADDR 0xcf8
#define PCI_DATA 0xcfc

struct pci_dev pci_devices[PCI_MAX_DEVICES];
int pci_ndevices;

extern const struct pci_driver *const __pcidrv_start[], *const __pcidrv_end[];

static uint32_t cfg_addr(int bus, int dev, int fn, int off)
{
	return 0x80000000u | ((uint32_t)bus << 16) | ((uint32_t)dev << 11) | ((uint32_t)fn << 8) |
	       ((uint32_t)off & 0xfc);
}

static uint32_t raw_read32(int bus, int dev, int fn, int off)
{
	irqflags_t f = irq_save();
	outl(PCI_ADDR, cfg_addr(bus, dev, fn, off));
	uint32_t v = inl(PCI_DATA);
	irq_restore(f);
	return v;
}

uint32_t pci_read32(const struct pci_dev *d, int off)
{
	return raw_read32(d->bus, d->dev, d->fn, off);
}

uint16_t pci_read16(const struct pci_dev *d, int off)
{
	return (uint16_t)(pci_read32(d, off & ~3) >> ((off & 2) * 8));
}

uint8_t pci_read8(const struct pci_dev *d, int off)
{
	return (uint8_t)(pci_read32(d, off & ~3) >> ((off & 3) * 8));
}

void pci_write32(const struct pci_dev *d, int off, uint32_t v)
{
	irqflags_t f = irq_save();
	outl(PCI_ADDR, cfg_addr(d->bus, d->dev, d->fn, off));
	outl(PCI_DATA, v);
	irq_restore(f);
}

void pci_write16(const struct pci_dev *d, int off, uint16_t v)
{
	irqflags_t f = irq_save();
	outl(PCI_ADDR, cfg_addr(d->bus, d->dev, d->fn, off));
	outw(PCI_DATA + (off & 2), v);
	irq_restore(f);
}

void pci_write8(const struct pci_dev *d, int off, uint8_t v)
{
	irqflags_t f = irq_save();
	outl(PCI_ADDR, cfg_addr(d->bus, d->dev, d->fn, off));
	outb(PCI_DATA + (off & 3), v);
	irq_restore(f);
}

static const char *class_name(uint8_t class, uint8_t sub)
{
	switch (class) {
	case 0x01: return sub == 0x01 ? "IDE controller" : "storage controller";
	case 0x02: return "ethernet controller";
	case 0x03: return "display controller";
	case 0x06:
		switch (sub) {
		case 0x00: return "host bridge";
		case 0x01: return "ISA bridge";
		case 0x04: return "PCI bridge";
		default: return "bridge";
		}
	case 0x0c: return "serial bus controller";
	default: return "device";
	}
}

static void scan_bus(int bus, int depth);

static void scan_fn(int bus, int dev, int fn, int depth)
{
	uint32_t id = raw_read32(bus, dev, fn, PciVendor);
	struct pci_dev *d;

	if ((id & 0xffff) == 0xffff)
		return;
	if (pci_ndevices == PCI_MAX_DEVICES) {
		printf("pci: more than %d functions; ignoring %02x:%02x.%d\n", PCI_MAX_DEVICES, bus, dev, fn);
		return;
	}
	d = &pci_devices[pci_ndevices++];
	d->bus = (uint8_t)bus;
	d->dev = (uint8_t)dev;
	d->fn = (uint8_t)fn;
	d->vendor = (uint16_t)id;
	d->device = (uint16_t)(id >> 16);
	uint32_t cls = pci_read32(d, PciRevision);
	d->revision = (uint8_t)cls;
	d->progif = (uint8_t)(cls >> 8);
	d->subclass = (uint8_t)(cls >> 16);
	d->class = (uint8_t)(cls >> 24);
	d->header_type = pci_read8(d, PciHeaderType) & 0x7f;
	d->irq_line = pci_read8(d, PciIrqLine);
	d->irq_pin = pci_read8(d, PciIrqPin);
	if (d->header_type == 0) {
		d->subsys_vendor = pci_read16(d, PciSubsysVendor);
		d->subsys_id = pci_read16(d, PciSubsysId);
	}
	printf("pci: %02x:%02x.%d %04x:%04x %s", bus, dev, fn, d->vendor, d->device,
	       class_name(d->class, d->subclass));
	if (d->irq_pin)
		printf(" irq %d (INT%c)", d->irq_line, 'A' + d->irq_pin - 1);
	printf("\n");
	if (d->header_type == 1 && depth < 8)
		scan_bus(pci_read8(d, PciSecondaryBus), depth + 1);
}

static void scan_bus(int bus, int depth)
{
	for (int dev = 0; dev < 32; dev++) {
		uint32_t id = raw_read32(bus, dev, 0, PciVendor);
		if ((id & 0xffff) == 0xffff)
			continue;
		int multi = (raw_read32(bus, dev, 0, 0x0c) >> 16) & 0x80;
		for (int fn = 0; fn < (multi ? 8 : 1); fn++)
			scan_fn(bus, dev, fn, depth);
	}
}

/* Enumerate every bus, one line per function, before the command line is read. */
static int pci_init(void)
{
	scan_bus(0, 0);
	return 0;
}
INIT_HOOK(INIT_BUS, pci, pci_init);

/* Offer each device to the registered drivers. */
static int pci_probe_drivers(void)
{
	for (int i = 0; i < pci_ndevices; i++) {
		struct pci_dev *d = &pci_devices[i];
		int matched = 0;
		for (const struct pci_driver *const *p = __pcidrv_start; p < __pcidrv_end; p++) {
			if (!(*p)->match(d))
				continue;
			matched = 1;
			int r = (*p)->probe(d);
			if (r == 0) {
				d->driver = (*p)->name;
				break;
			}
			printf("pci: %02x:%02x.%d: driver %s failed (%d)\n", d->bus, d->dev, d->fn,
			       (*p)->name, r);
		}
		/* Said plainly: a NIC this kernel cannot use is not silence (drivers/README.md). */
		if (!matched && d->class == 0x02)
			printf("pci: %02x:%02x.%d %04x:%04x %s: no driver (this kernel drives "
			       "virtio-net, the 82540EM and the 82574L/82583V)\n", d->bus, d->dev, d->fn,
			       d->vendor, d->device, class_name(d->class, d->subclass));
	}
	return 0;
}
INIT_HOOK(INIT_DEVICES, pci_drivers, pci_probe_drivers);

int pci_bar(const struct pci_dev *d, int i, struct pci_bar *bar)
{
	int off = PciBar0 + 4 * i;
	uint32_t lo = pci_read32(d, off), szlo, hi = 0, szhi = 0;

	bar->io = lo & 1;
	bar->is64 = !bar->io && ((lo >> 1) & 3) == 2;
	/* Size the BAR with decoding off so the probe value never decodes. */
	uint16_t cmd = pci_read16(d, PciCommand);
	pci_write16(d, PciCommand, cmd & ~(PciCmdIo | PciCmdMem));
	pci_write32(d, off, 0xffffffffu);
	szlo = pci_read32(d, off);
	pci_write32(d, off, lo);
	if (bar->is64) {
		hi = pci_read32(d, off + 4);
		pci_write32(d, off + 4, 0xffffffffu);
		szhi = pci_read32(d, off + 4);
		pci_write32(d, off + 4, hi);
	}
	pci_write16(d, PciCommand, cmd);
	if (bar->io) {
		bar->addr = lo & ~3u;
		bar->size = (~(szlo & ~3u) + 1) & 0xffff;
	} else {
		uint64_t mask = ((uint64_t)(bar->is64 ? szhi : 0xffffffffu) << 32) | (szlo & ~0xfu);
		bar->addr = ((uint64_t)hi << 32) | (lo & ~0xfu);
		bar->size = ~mask + 1;
	}
	if (szlo == 0 || bar->size == 0)
		return -ENODEV;
	return 0;
}

int pci_find_cap(const struct pci_dev *d, uint8_t id, int start)
{
	int off, guard = 0;

	if (!(pci_read16(d, PciStatus) & PciStatusCaps))
		return 0;
	off = start ? pci_read8(d, start + 1) : pci_read8(d, PciCapPtr);
	while (off >= 0x40 && guard++ < 48) {
		off &= ~3;
		if (pci_read8(d, off) == id)
			return off;
		off = pci_read8(d, off + 1);
	}
	return 0;
}

void pci_enable(const struct pci_dev *d)
{
	uint16_t cmd = pci_read16(d, PciCommand);
	pci_write16(d, PciCommand, cmd | PciCmdIo | PciCmdMem | PciCmdMaster);
}

volatile uint8_t *pci_map_bar(struct pci_dev *d, int bar, uint32_t offset, uint32_t length)
{
	struct pci_bar b;

	if (bar < 0 || bar > 5 || pci_bar(d, bar, &b) < 0 || b.io || b.addr == 0)
		return NULL;
	if ((uint64_t)offset + length > b.size)
		return NULL;
	volatile uint8_t *p = vm_map_mmio(b.addr, b.size);
	/* Said once a BAR: where the firmware put it, when that is above 4 GiB or unmappable. */
	if ((!p || b.addr + b.size > (1ULL << 32)) && !(d->bars_said & (1 << bar))) {
		d->bars_said |= (uint8_t)(1 << bar);
		printf("pci: %02x:%02x.%d bar%d at %#lx, %lu KiB: %s\n", d->bus, d->dev, d->fn, bar,
		       b.addr, b.size >> 10, p ? "mapped above 4 GiB" :
		       "cannot be mapped (beyond the CPU's physical addresses or 256 TiB, "
		       "or no memory for page tables)");
	}
	return p ? p + offset : NULL;
}

enum {				/* MSI-X capability, PCI 3.0 §6.8.2 */
	MsixCtrl = 2,
	MsixTable = 4,
};

enum {				/* MsixCtrl */
	MsixCtrlSize = 0x7ff,	/* table entries - 1 */
	MsixCtrlMask = 1 << 14,	/* function mask */
	MsixCtrlEnable = 1 << 15,
};

enum {				/* an MSI-X table entry, in 32-bit words */
	MsixAddrLo = 0,
	MsixAddrHi = 1,
	MsixData = 2,
	MsixVecCtrl = 3,
	MsixEntryWords = 4,
};

enum {				/* MsixVecCtrl */
	MsixVecMasked = 1,
};

int pci_intx_route(struct pci_dev *d, int vector, uint32_t *gsi)
{
	int level, active_low;

	if (!d->irq_pin || d->irq_line == 0 || d->irq_line >= 16)
		return -ENODEV;
	*gsi = isa_irq_gsi(d->irq_line, &level, &active_low);
	if (ioapic_route(*gsi, vector, 1, active_low) < 0)
		return -ENODEV;
	pci_write16(d, PciCommand, pci_read16(d, PciCommand) & ~PciCmdIntxDisable);
	return 0;
}

int pci_msix_enable(struct pci_dev *d, int entries, struct pci_msix *m)
{
	int cap = pci_find_cap(d, PciCapMsix, 0);

	if (!cap)
		return -ENODEV;
	uint16_t ctrl = pci_read16(d, cap + MsixCtrl);
	uint32_t table = pci_read32(d, cap + MsixTable);
	int size = (ctrl & MsixCtrlSize) + 1;
	if (size < entries)
		return -ENODEV;
	volatile uint8_t *t = pci_map_bar(d, table & 7, table & ~7u, (uint32_t)size * 16);
	if (!t)
		return -ENODEV;
	m->table = (volatile uint32_t *)t;
	m->size = size;
	/* §6.8.2.3: enable under the function mask, mask every entry, unmask. */
	pci_write16(d, cap + MsixCtrl, ctrl | MsixCtrlEnable | MsixCtrlMask);
	for (int i = 0; i < size; i++)
		m->table[i * MsixEntryWords + MsixVecCtrl] = MsixVecMasked;
	pci_write16(d, cap + MsixCtrl, (ctrl | MsixCtrlEnable) & ~MsixCtrlMask);
	pci_write16(d, PciCommand, pci_read16(d, PciCommand) | PciCmdIntxDisable);
	return 0;
}

void pci_msix_route(struct pci_msix *m, int entry, int vector)
{
	volatile uint32_t *e = m->table + entry * MsixEntryWords;
	uint64_t addr;
	uint32_t data;

	msi_compose(vector, &addr, &data);
	e[MsixVecCtrl] = MsixVecMasked;
	e[MsixAddrLo] = (uint32_t)addr;
	e[MsixAddrHi] = (uint32_t)(addr >> 32);
	e[MsixData] = data;
	e[MsixVecCtrl] = 0;
}

void pci_msix_mask(struct pci_msix *m, int entry, int masked)
{
	m->table[entry * MsixEntryWords + MsixVecCtrl] = masked ? MsixVecMasked : 0;
}
