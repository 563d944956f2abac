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

/*
 * Read the fw_cfg file name (QEMU's -fw_cfg name=...,file=...) into buf:
 * its size, -ENOENT (no such file, or not under QEMU), -E2BIG (larger
 * than max; nothing read) or -EIO (a directory that makes no sense).
 */
long qemu_fwcfg_file(const char *name, void *buf, size_t max);

#endif
