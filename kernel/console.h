/*
 * The console: picolibc's stdout/stderr on the serial port.
 *
 * Each thread assembles its output a line at a time and writes the whole
 * line with interrupts off, so lines from different threads never mix (the
 * cluster launcher and tests match on whole lines).  kprintf() bypasses the
 * line buffers: for interrupt handlers, exceptions and panics.
 */
#ifndef KERNEL_CONSOLE_H
#define KERNEL_CONSOLE_H

#include <stdarg.h>
#include <stdint.h>

void console_init(void);

/*
 * A program's output (boot/mpirun).  With console_tagged set, every line a
 * thread marked conprog (kernel/thread.h) writes goes to the console as
 * CONSOLE_TAG, then 'O' (stdout) or 'E' (stderr), the text, a newline;
 * 'o' or 'e' instead when the program's line goes on in the next one (a
 * line longer than a thread's buffer, or flushed before its end).  The
 * kernel never writes CONSOLE_TAG, so a reader tells the program's lines
 * from the kernel's, and its stdout from its stderr, exactly.
 */
#define CONSOLE_TAG '\x02'
extern int console_tagged;

/*
 * Set: printf writes each character straight to the console, past the
 * running thread's line buffer (an NMI's dump, which must not touch the
 * line the interrupted thread is assembling).
 */
extern volatile int console_raw;

/* Write the calling thread's partial line, if any. */
void console_flush(void);

/* Flush, then wait (bounded) until the serial port has sent every byte. */
void console_drain(void);

/* Immediate formatted output, callable from any context. */
__attribute__((format(printf, 1, 2))) void kprintf(const char *fmt, ...);
void kvprintf(const char *fmt, va_list ap);

/* Mirror the console on the VGA text screen (hardware boots). */
void console_enable_vga(void);
/* Mirror the console on a 32-bit linear framebuffer (UEFI PCs): 0, or -EINVAL. */
int console_enable_fb(uint64_t addr, uint32_t pitch, uint32_t width, uint32_t height,
		      uint8_t bpp, uint32_t fg);
int console_fb_active(void);

#endif
