/* 16550 UART on COM1: the node's console. */
#ifndef DRIVERS_UART_H
#define DRIVERS_UART_H

#include <stddef.h>

/* Program COM1 for 115200 8N1 with FIFOs; safe to call before anything else. */
void uart_init(void);

/* Write bytes, polling the transmitter; callable from any context. */
void uart_write(const char *s, size_t n);

/*
 * Wait (bounded) until every byte written has left the transmitter: QEMU
 * has then handed it to its character device, so an exit right after
 * loses none of it.
 */
void uart_drain(void);

#endif
