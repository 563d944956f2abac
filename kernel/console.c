/*
 * Console: picolibc's tinystdio streams on every backend that registered
 * itself (console.h: CONSOLE_BACKEND) and started.
 */
#include <stdio.h>
#include <string.h>

#include "kernel/console.h"
#include "kernel/thread.h"
#include "kernel/x86.h"

extern const struct console_backend *const __consoles_start[], *const __consoles_end[];

/* The backends that started, in rank order. */
#define CONSOLE_MAX 8
static const struct console_backend *on[CONSOLE_MAX];
static int non;

static void console_write(const char *s, size_t n)
{
	irqflags_t f = irq_save();
	for (int i = 0; i < non; i++)
		on[i]->write(s, n);
	irq_restore(f);
}

static void start_stage(int stage)
{
	for (const struct console_backend *const *b = __consoles_start; b < __consoles_end; b++)
		if ((*b)->stage == stage && non < CONSOLE_MAX && (*b)->start() == 0)
			on[non++] = *b;
}

void console_init(void)
{
	start_stage(CONSOLE_EARLY);
}

void console_start_late(void)
{
	start_stage(CONSOLE_LATE);
}

int console_active(const char *name)
{
	for (int i = 0; i < non; i++)
		if (strcmp(on[i]->name, name) == 0)
			return 1;
	return 0;
}

int console_tagged;
volatile int console_raw;

/*
 * The calling thread's assembled output.  A program's line (console.h:
 * console_tagged) goes out as STX, its stream's letter (capital when the
 * program's own text ended the line, small when the line continues), the
 * text and a newline, written with interrupts off: nothing lands between.
 */
static void flush_thread(struct thread *t, int complete)
{
	if (!t->conlen)
		return;
	if (t->conprog && console_tagged) {
		char tag[2] = { CONSOLE_TAG, (char)(complete ? t->constream : t->constream + ('a' - 'A')) };
		irqflags_t f = irq_save();
		console_write(tag, sizeof tag);
		console_write(t->conbuf, (size_t)t->conlen - (complete ? 1 : 0));
		console_write("\n", 1);
		irq_restore(f);
	} else {
		console_write(t->conbuf, (size_t)t->conlen);
	}
	t->conlen = 0;
}

void console_flush(void)
{
	struct thread *t = thread_current();

	if (t)
		flush_thread(t, 0);
}

void console_drain(void)
{
	console_flush();
	for (int i = 0; i < non; i++)
		if (on[i]->drain)
			on[i]->drain();
}

static int console_putc(char c, FILE *f)
{
	struct thread *t = thread_current();
	char stream = f == stderr ? 'E' : 'O';

	if (!t || console_raw) {
		console_write(&c, 1);
		return (unsigned char)c;
	}
	/* A line holds one stream's text: a switch ends the other's part. */
	if (t->conlen && t->constream != stream)
		flush_thread(t, 0);
	t->constream = stream;
	t->conbuf[t->conlen++] = c;
	if (c == '\n')
		flush_thread(t, 1);
	else if (t->conlen == THREAD_CONBUF)
		flush_thread(t, 0);
	return (unsigned char)c;
}

static int console_getc(FILE *f)
{
	(void)f;
	return EOF;
}

static int console_fflush(FILE *f)
{
	(void)f;
	console_flush();
	return 0;
}

/* Two streams on one console, told apart only in a program's tagged lines. */
static FILE console_stream = FDEV_SETUP_STREAM(console_putc, console_getc, console_fflush, _FDEV_SETUP_RW);
static FILE console_errstream = FDEV_SETUP_STREAM(console_putc, console_getc, console_fflush, _FDEV_SETUP_RW);

FILE *const stdin = &console_stream;
FILE *const stdout = &console_stream;
FILE *const stderr = &console_errstream;

void kvprintf(const char *fmt, va_list ap)
{
	char buf[256];
	int n = vsnprintf(buf, sizeof buf, fmt, ap);

	if (n < 0)
		return;
	if ((size_t)n >= sizeof buf)
		n = sizeof buf - 1;
	console_write(buf, (size_t)n);
}

void kprintf(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	kvprintf(fmt, ap);
	va_end(ap);
}
