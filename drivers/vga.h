/* VGA text mode (80x25 at 0xb8000): a console mirror for hardware boots. */
#ifndef DRIVERS_VGA_H
#define DRIVERS_VGA_H

#include <stddef.h>

void vga_init(void);
void vga_write(const char *s, size_t n);

#endif
