/*
 * The PC's CMOS memory (the RTC's battery-backed bytes, kept across a
 * reset) and resetting the machine: what a test needs to reboot a node
 * and let its next boot know it is the next one.
 */
#ifndef KERNEL_CMOS_H
#define KERNEL_CMOS_H

#include <stdint.h>

/* Bytes 0x40..0x7f hold no clock or BIOS setting the kernel relies on. */
#define CMOS_USER_FIRST 0x40
#define CMOS_USER_LAST 0x7f

/* Read or write CMOS byte idx (CMOS_USER_FIRST..CMOS_USER_LAST); -EINVAL otherwise. */
int cmos_read(unsigned idx);
int cmos_write(unsigned idx, uint8_t v);

/*
 * The real-time clock's date and time, as seconds since 1970-01-01 UTC
 * (the PC's clock is taken to keep UTC, as QEMU's does by default), or
 * -EIO if it reads as no valid date.
 */
int64_t cmos_rtc_seconds(void);

/*
 * Reset the machine: the reset control register (port 0xcf9), then the
 * keyboard controller's pulse, then a triple fault.  Does not return.
 */
void machine_reset(void) __attribute__((noreturn));

#endif
