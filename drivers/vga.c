/*
 * VGA text console: 80x25 cells of (character, attribute) at 0xb8000, as a
 * BIOS leaves it for a multiboot2 kernel that asks for no framebuffer.
 * Scrolls; no cursor updates (the CRTC is left alone).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "kernel/bootinfo.h"
#include "kernel/console.h"

#define VGA_COLS 80
#define VGA_ROWS 25
#define VGA_ATTR 0x0700		/* light grey on black */

static volatile uint16_t *const vga = (volatile uint16_t *)0xb8000;
static int col, row;

/* A BIOS leaves VGA's text mode; UEFI has none; a framebuffer drawn on replaces it. */
static int vga_start(void)
{
	if (!bootinfo.vga_text || console_active("framebuffer"))
		return -ENODEV;
	for (int i = 0; i < VGA_COLS * VGA_ROWS; i++)
		vga[i] = VGA_ATTR | ' ';
	col = row = 0;
	return 0;
}

static void scroll(void)
{
	for (int i = 0; i < VGA_COLS * (VGA_ROWS - 1); i++)
		vga[i] = vga[i + VGA_COLS];
	for (int i = 0; i < VGA_COLS; i++)
		vga[VGA_COLS * (VGA_ROWS - 1) + i] = VGA_ATTR | ' ';
	row = VGA_ROWS - 1;
}

static void vga_write(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '\n') {
			col = 0;
			if (++row == VGA_ROWS)
				scroll();
			continue;
		}
		if (c == '\r')
			continue;
		vga[row * VGA_COLS + col] = VGA_ATTR | (uint8_t)c;
		if (++col == VGA_COLS) {
			col = 0;
			if (++row == VGA_ROWS)
				scroll();
		}
	}
}

static const struct console_backend vga_console = {
	.name = "vga",
	.stage = CONSOLE_LATE,
	.start = vga_start,
	.write = vga_write,
};
CONSOLE_BACKEND(30, vga_console);
