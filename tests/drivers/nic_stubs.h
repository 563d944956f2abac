/*
 * What every NIC driver's fuzz target (fuzz_e1000, fuzz_igb through
 * intel_stubs.h, fuzz_virtio_net) gives its driver alike: no trace, no
 * interrupts or MSI-X, a PCI device of zeros, pages from the heap, wake-ups
 * that wake nobody.  Included once, after the driver.
 */
#ifndef TESTS_DRIVERS_NIC_STUBS_H
#define TESTS_DRIVERS_NIC_STUBS_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "drivers/pci.h"
#include "kernel/apic.h"
#include "kernel/trace.h"

volatile int trace_on;
struct trace_rec trace_cur;
void trace_mark(trace_stage_t s) { (void)s; }
uint64_t ns_to_cycles(uint64_t ns) { return ns; }
int irq_alloc(irq_handler_t fn, void *arg)
{
	(void)fn, (void)arg;
	return -ENODEV;
}
int pci_msix_enable(struct pci_dev *d, int entries, struct pci_msix *m)
{
	(void)d, (void)entries, (void)m;
	return -ENODEV;
}
void pci_msix_route(struct pci_msix *m, int entry, int vector) { (void)m, (void)entry, (void)vector; }
void pci_enable(const struct pci_dev *d) { (void)d; }
int pci_find_cap(const struct pci_dev *d, uint8_t id, int start)
{
	(void)d, (void)id, (void)start;
	return 0;
}
uint16_t pci_read16(const struct pci_dev *d, int off)
{
	(void)d, (void)off;
	return 0;
}
void pci_write16(const struct pci_dev *d, int off, uint16_t v) { (void)d, (void)off, (void)v; }
volatile uint8_t *pci_map_bar(struct pci_dev *d, int bar, uint32_t offset, uint32_t length)
{
	(void)d, (void)bar, (void)offset, (void)length;
	return NULL;
}
void *page_alloc_zeroed(size_t bytes) { return calloc(1, bytes); }
void page_free_bytes(void *p, size_t bytes)
{
	(void)bytes;
	free(p);
}
int waitq_wake_all(struct waitq *wq)
{
	(void)wq;
	return 0;
}

#endif
