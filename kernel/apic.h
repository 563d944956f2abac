/*
 * Local APIC (timer, EOI) and I/O APIC (device interrupt routing).
 * The legacy 8259 PICs are remapped out of the exception range and masked.
 */
#ifndef KERNEL_APIC_H
#define KERNEL_APIC_H

#include <stdint.h>

void apic_init(void);

/* End of interrupt for the current vector (irq). */
void lapic_eoi(void);

uint32_t lapic_id(void);

/* LAPIC timer: one-shot count in timer ticks, with the divider set at init. */
void lapic_timer_oneshot(uint32_t count);
void lapic_timer_stop(void);
uint32_t lapic_timer_current(void);
void lapic_timer_setup(int vector);

/*
 * Route global system interrupt gsi to vector on this CPU.  level/active_low
 * describe the line (PCI INTx: level, active low unless ACPI says otherwise).
 * Return 0, or -ENODEV if no I/O APIC serves gsi.
 */
int ioapic_route(uint32_t gsi, int vector, int level, int active_low);
void ioapic_mask(uint32_t gsi, int masked);

/* The GSI and polarity of an ISA IRQ after ACPI overrides. */
uint32_t isa_irq_gsi(int irq, int *level, int *active_low);

/* Compose an MSI address/data pair that delivers vector to this CPU. */
void msi_compose(int vector, uint64_t *addr, uint32_t *data);

#endif
