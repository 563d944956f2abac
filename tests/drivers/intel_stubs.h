/*
 * What the Intel NIC drivers (drivers/e1000.c, drivers/igb.c) need from
 * the kernel, for fuzz_e1000 and fuzz_igb, which include a driver whole:
 * none of it is called on the receive path the targets fuzz.  Included
 * once, after the driver.
 */
#ifndef TESTS_DRIVERS_INTEL_STUBS_H
#define TESTS_DRIVERS_INTEL_STUBS_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "drivers/pci.h"
#include "kernel/apic.h"
#include "kernel/cmdline.h"
#include "kernel/node.h"
#include "kernel/trace.h"

volatile int trace_on;
struct trace_rec trace_cur;
void trace_mark(trace_stage_t s) { (void)s; }
void kprintf(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}
void delay_ns(uint64_t ns) { (void)ns; }
uint64_t now_ns(void) { return 0; }
uint64_t ns_to_cycles(uint64_t ns) { return ns; }
int pci_intx_route(struct pci_dev *d, int vector, uint32_t *gsi)
{
	(void)d, (void)vector, (void)gsi;
	return -ENODEV;
}
int irq_alloc(irq_handler_t fn, void *arg)
{
	(void)fn, (void)arg;
	return -ENODEV;
}
void msi_compose(int vector, uint64_t *addr, uint32_t *data)
{
	(void)vector;
	*addr = 0;
	*data = 0;
}
int pci_msix_enable(struct pci_dev *d, int entries, struct pci_msix *m)
{
	(void)d, (void)entries, (void)m;
	return -ENODEV;
}
void pci_msix_route(struct pci_msix *m, int entry, int vector) { (void)m, (void)entry, (void)vector; }
const char *arg_str(const char *key, const char *def)
{
	(void)key;
	return def;
}
const char *cmdline_get(const struct cmdline *c, const char *key)
{
	(void)c, (void)key;
	return NULL;
}
int pci_bar(const struct pci_dev *d, int i, struct pci_bar *bar)
{
	(void)d, (void)i, (void)bar;
	return -ENODEV;
}
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
void pci_write32(const struct pci_dev *d, int off, uint32_t v) { (void)d, (void)off, (void)v; }
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
