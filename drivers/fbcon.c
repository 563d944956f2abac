/*
 * Framebuffer text console, a console backend (kernel/console.h) on the
 * loader's linear framebuffer of 16, 24 or 32 bits a pixel.  Glyphs are 8 pixels wide, one
 * byte a row with the leftmost pixel in the top bit, 16 rows, for the
 * characters 0 to 127 (font8x16.h).  When the cursor passes the last row
 * the text moves up by a quarter of the screen at once: moving the whole
 * framebuffer costs the same for one line as for many.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "kernel/bootinfo.h"
#include "kernel/console.h"
#include "font8x16.h"		/* generated: ascii_bitmaps[128 * 16] */

#define GW 8
#define GH 16

static uint8_t *fb;
static uint32_t pitch, cols, rows, col, row, fg, bypp;

static int fbcon_init(uint64_t addr, uint32_t p, uint32_t width, uint32_t height, uint8_t bpp, uint32_t color)
{
	if ((bpp != 16 && bpp != 24 && bpp != 32) || width < GW || height < GH ||
	    p < width * (bpp / 8u) || !addr)
		return -EINVAL;
	bypp = bpp / 8u;
	fb = (uint8_t *)(uintptr_t)addr;
	pitch = p;
	cols = width / GW;
	rows = height / GH;
	fg = color;
	col = row = 0;
	for (uint32_t y = 0; y < height; y++)
		memset(fb + (size_t)y * pitch, 0, (size_t)width * bypp);
	return 0;
}

/* The loader's framebuffer (bootinfo), drawn in light grey in its own channel layout. */
static int fbcon_start(void)
{
	const struct bootinfo_fb *f = &bootinfo.fb;
	uint32_t grey = (0xaaU >> (8 - f->rsize)) << f->rpos | (0xaaU >> (8 - f->gsize)) << f->gpos |
			(0xaaU >> (8 - f->bsize)) << f->bpos;

	if (!f->drawable)
		return -ENODEV;
	return fbcon_init(f->addr, f->pitch, f->width, f->height, f->bpp, grey);
}

static void draw(uint32_t c, uint32_t r, unsigned char ch)
{
	const unsigned char *g = &ascii_bitmaps[(ch & 0x7f) * GH];

	for (int y = 0; y < GH; y++) {
		uint8_t *px = fb + (size_t)(r * GH + y) * pitch + (size_t)c * GW * bypp;
		if (bypp == 4) {
			for (int x = 0; x < GW; x++)
				((uint32_t *)px)[x] = (g[y] & (0x80 >> x)) ? fg : 0;
			continue;
		}
		for (int x = 0; x < GW; x++, px += bypp) {
			uint32_t v = (g[y] & (0x80 >> x)) ? fg : 0;
			px[0] = (uint8_t)v;	/* little-endian, bypp bytes */
			px[1] = (uint8_t)(v >> 8);
			if (bypp == 3)
				px[2] = (uint8_t)(v >> 16);
		}
	}
}

static void scroll(void)
{
	uint32_t by = rows / 4 ? rows / 4 : 1;
	size_t line = (size_t)GH * pitch;

	memmove(fb, fb + by * line, (rows - by) * line);
	memset(fb + (rows - by) * line, 0, by * line);
	row = rows - by;
}

static void fbcon_write(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '\n') {
			col = 0;
			row++;
		} else if (c == '\r') {
			col = 0;
		} else if (c == '\t') {
			col = (col + 8) & ~7u;
		} else if (c == '\b') {
			if (col)
				col--;
		} else {
			if (col >= cols) {
				col = 0;
				row++;
			}
			if (row >= rows)
				scroll();
			draw(col++, row, c < 32 || c > 126 ? '?' : c);
			continue;
		}
		if (col >= cols) {
			col = 0;
			row++;
		}
		if (row >= rows)
			scroll();
	}
}

static const struct console_backend fbcon = {
	.name = "framebuffer",
	.stage = CONSOLE_LATE,
	.start = fbcon_start,
	.write = fbcon_write,
};
CONSOLE_BACKEND(20, fbcon);
