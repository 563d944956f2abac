/*
 * What the Intel NIC drivers (drivers/e1000.c, drivers/igb.c) need from
 * the kernel besides nic_stubs.h's, for fuzz_e1000 and fuzz_igb, which
 * include a driver whole:
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
#include "tests/drivers/nic_stubs.h"

void kprintf(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}
void delay_ns(uint64_t ns) { (void)ns; }
uint64_t now_ns(void) { return 0; }
int pci_intx_route(struct pci_dev *d, int vector, uint32_t *gsi)
{
	(void)d, (void)vector, (void)gsi;
	return -ENODEV;
}
void msi_compose(int vector, uint64_t *addr, uint32_t *data)
{
	(void)vector;
	*addr = 0;
	*data = 0;
}
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
void pci_write32(const struct pci_dev *d, int off, uint32_t v) { (void)d, (void)off, (void)v; }

#endif
