/*
 * 16550 UART (National Semiconductor PC16550D data sheet), polled transmit.
 * The console only writes; input is not used.
 */
#include <errno.h>
#include <stdint.h>

#include "kernel/console.h"
#include "kernel/x86.h"

#define COM1 0x3f8

enum {			/* registers, offsets from the base port */
	Thr = 0,	/* transmit holding (DLAB=0) */
	Dll = 0,	/* divisor latch low (DLAB=1) */
	Ier = 1,	/* interrupt enable (DLAB=0) */
	Dlm = 1,	/* divisor latch high (DLAB=1) */
	Fcr = 2,	/* FIFO control */
	Lcr = 3,	/* line control */
	Mcr = 4,	/* modem control */
	Lsr = 5,	/* line status */
};

enum {			/* Lcr */
	Lcr8N1 = 0x03,
	LcrDlab = 0x80,
};

enum {			/* Fcr */
	FcrEnable = 0x01,
	FcrClear = 0x06,
	FcrTrig14 = 0xc0,
};

enum {			/* Mcr */
	McrDtr = 0x01,
	McrRts = 0x02,
};

enum {			/* Lsr */
	LsrThre = 0x20,	/* transmit holding register empty */
	LsrTemt = 0x40,	/* transmitter empty: every byte written has left */
};

static int uart_present;

static int uart_start(void)
{
	outb(COM1 + Ier, 0);
	outb(COM1 + Lcr, LcrDlab);
	outb(COM1 + Dll, 1);		/* 115200 baud: divisor 1 */
	outb(COM1 + Dlm, 0);
	outb(COM1 + Lcr, Lcr8N1);
	outb(COM1 + Fcr, FcrEnable | FcrClear | FcrTrig14);
	outb(COM1 + Mcr, McrDtr | McrRts);
	/* A missing UART reads back 0xff from every register. */
	uart_present = inb(COM1 + Lsr) != 0xff;
	return uart_present ? 0 : -ENODEV;
}

static void uart_putc(char c)
{
	/* Bounded wait so that a dead UART on real hardware cannot hang us. */
	for (int i = 0; i < 100000 && !(inb(COM1 + Lsr) & LsrThre); i++)
		cpu_relax();
	outb(COM1 + Thr, (uint8_t)c);
}

static void uart_write(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\n')
			uart_putc('\r');
		uart_putc(s[i]);
	}
}

static void uart_drain(void)
{
	for (int i = 0; i < 1000000 && !(inb(COM1 + Lsr) & LsrTemt); i++)
		cpu_relax();
}

static const struct console_backend uart = {
	.name = "serial",
	.stage = CONSOLE_EARLY,
	.start = uart_start,
	.write = uart_write,
	.drain = uart_drain,
};
CONSOLE_BACKEND(10, uart);
