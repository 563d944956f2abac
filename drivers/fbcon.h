/*
 * A text console drawn on a linear framebuffer (16, 24 or 32 bits a pixel), for PCs
 * that boot by UEFI and have no VGA text mode: 8x16 glyphs of GRUB's ASCII
 * font (Debian's grub-common, turned into a header under build/ at build
 * time), light grey on black, scrolling.  A console mirror, like vga.c.
 */
#ifndef DRIVERS_FBCON_H
#define DRIVERS_FBCON_H

#include <stddef.h>
#include <stdint.h>

/*
 * Take the framebuffer at addr (already mapped), pitch bytes a line.
 * 0, or -EINVAL for a format it does not draw (another depth, or too
 * small for one line of text).  fg is the text's pixel value.  Clears it.
 */
int fbcon_init(uint64_t addr, uint32_t pitch, uint32_t width, uint32_t height, uint8_t bpp,
	       uint32_t fg);
void fbcon_write(const char *s, size_t n);
/* The text grid, for the boot line. */
int fbcon_cols(void);
int fbcon_rows(void);

#endif
