/*
 * The console: picolibc's stdout/stderr on every backend that started (the
 * serial port; a framebuffer or VGA's text screen on a PC).
 *
 * Each thread assembles its output a line at a time and writes the whole
 * line with interrupts off, so lines from different threads never mix (the
 * cluster launcher and tests match on whole lines).  kprintf() bypasses the
 * line buffers: for interrupt handlers, exceptions and panics.
 */
#ifndef KERNEL_CONSOLE_H
#define KERNEL_CONSOLE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A console backend: a driver that shows the console registers itself
 * with CONSOLE_BACKEND(rank, backend), as PCI drivers and apps do; the
 * kernel names none.  console_init() starts every backend of stage
 * CONSOLE_EARLY (it needs nothing: the serial port), console_start_late()
 * those of CONSOLE_LATE once the loader's information is read (bootinfo:
 * a framebuffer, VGA's text mode), each in the order of its rank (two
 * digits).  start returns 0 if the backend shows the console from then
 * on, or a negative errno (not on this machine: the backend stays off).
 * write is called with interrupts off and must not block; drain (or NULL)
 * waits, bounded, until every byte written has left the device.
 */
struct console_backend {
	const char *name;
	int stage;
	int (*start)(void);
	void (*write)(const char *s, size_t n);
	void (*drain)(void);
};

enum { CONSOLE_EARLY, CONSOLE_LATE };

#define CONSOLE_BACKEND(rank, b)                                                       \
	static const struct console_backend *const conback_ptr_##b                      \
		__attribute__((used, section(".consoles." #rank "." #b))) = &(b)

/* Start the early backends; start the late ones (after bootinfo_parse). */
void console_init(void);
void console_start_late(void);

/* Whether the backend called name started. */
int console_active(const char *name);

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

#endif
