/* QEMU's fw_cfg signature and isa-debug-exit device. */
#ifndef DRIVERS_QEMU_H
#define DRIVERS_QEMU_H

/* Nonzero when running under QEMU (fw_cfg answers with its signature). */
int qemu_detect(void);

/*
 * Leave QEMU with status through isa-debug-exit (iobase 0xf4): QEMU exits
 * with (status << 1) | 1.  Returns only if the device is absent.
 */
void qemu_exit(int status);

#endif
