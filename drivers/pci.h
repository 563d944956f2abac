/*
 * PCI configuration space (mechanism #1, ports 0xcf8/0xcfc), bus
 * enumeration, BARs, capabilities, and the table drivers register in.
 */
#ifndef DRIVERS_PCI_H
#define DRIVERS_PCI_H

#include <stdint.h>

#define PCI_MAX_DEVICES 64

struct pci_dev {
	uint8_t bus, dev, fn;
	uint16_t vendor, device;
	uint8_t class, subclass, progif, revision;
	uint8_t header_type;
	uint8_t irq_line, irq_pin;
	uint16_t subsys_vendor, subsys_id;
	const char *driver;		/* name of the driver that claimed it */
	uint8_t bars_said;		/* BARs whose place above 4 GiB was printed */
	void *softc;
};

struct pci_bar {
	uint64_t addr;
	uint64_t size;
	int io;				/* I/O port BAR */
	int is64;
};

/*
 * A driver: match() says whether it takes a device; probe() sets it up and
 * returns 0, or a negative error (the device is then left unclaimed).
 */
struct pci_driver {
	const char *name;
	int (*match)(const struct pci_dev *d);
	int (*probe)(struct pci_dev *d);
};

#define PCI_DRIVER(drv) \
	static const struct pci_driver *const pcidrv_ptr_##drv \
		__attribute__((used, section(".pcidrv." #drv))) = &(drv)

extern struct pci_dev pci_devices[PCI_MAX_DEVICES];
extern int pci_ndevices;

uint32_t pci_read32(const struct pci_dev *d, int off);
uint16_t pci_read16(const struct pci_dev *d, int off);
uint8_t pci_read8(const struct pci_dev *d, int off);
void pci_write32(const struct pci_dev *d, int off, uint32_t v);
void pci_write16(const struct pci_dev *d, int off, uint16_t v);
void pci_write8(const struct pci_dev *d, int off, uint8_t v);

/* Decode BAR i (sizing it); return 0, or -ENODEV if it is unimplemented. */
int pci_bar(const struct pci_dev *d, int i, struct pci_bar *bar);

/* Offset of the first capability with id at or after start (0 = first); 0 if none. */
int pci_find_cap(const struct pci_dev *d, uint8_t id, int start);

/*
 * Map memory BAR bar (uncached) wherever the firmware put it, above 4 GiB
 * included, and return the address of its byte at offset.  NULL if the BAR
 * is not memory, [offset, offset+length) lies outside it, or it cannot be
 * mapped (said on the console).
 */
volatile uint8_t *pci_map_bar(struct pci_dev *d, int bar, uint32_t offset, uint32_t length);

/* MSI-X (PCI 3.0 §6.8.2): a function's table, mapped. */
struct pci_msix {
	volatile uint32_t *table;
	int size;			/* entries the function has */
};

/*
 * Enable MSI-X on d with every entry masked, INTx off; the driver then
 * routes and unmasks the entries it uses (at least `entries` must exist).
 * 0, or -ENODEV (no MSI-X, too few entries, table unmappable).
 */
int pci_msix_enable(struct pci_dev *d, int entries, struct pci_msix *m);

/* Send entry's messages to this CPU's vector, and unmask it. */
void pci_msix_route(struct pci_msix *m, int entry, int vector);
void pci_msix_mask(struct pci_msix *m, int entry, int masked);

/*
 * Route d's INTx to this CPU's vector through the I/O APIC and enable it:
 * level-triggered, with the polarity ACPI gives the ISA IRQ the firmware
 * routed it to (irq_line; QEMU: active high).  The GSI in *gsi.  0, or
 * -ENODEV (no pin, no routed line, no I/O APIC input for it).
 */
int pci_intx_route(struct pci_dev *d, int vector, uint32_t *gsi);

/* Enable memory and I/O decoding and bus mastering. */
void pci_enable(const struct pci_dev *d);

enum {				/* configuration space offsets */
	PciVendor = 0x00,
	PciDevice = 0x02,
	PciCommand = 0x04,
	PciStatus = 0x06,
	PciRevision = 0x08,
	PciHeaderType = 0x0e,
	PciBar0 = 0x10,
	PciSubsysVendor = 0x2c,
	PciSubsysId = 0x2e,
	PciCapPtr = 0x34,
	PciIrqLine = 0x3c,
	PciIrqPin = 0x3d,
	PciSecondaryBus = 0x19,
};

enum {				/* PciCommand */
	PciCmdIo = 1 << 0,
	PciCmdMem = 1 << 1,
	PciCmdMaster = 1 << 2,
	PciCmdIntxDisable = 1 << 10,
};

enum {				/* PciStatus */
	PciStatusCaps = 1 << 4,
};

enum {				/* capability ids */
	PciCapMsi = 0x05,
	PciCapVendor = 0x09,
	PciCapMsix = 0x11,
};

#endif
