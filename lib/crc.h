/*
 * CRCs: CRC-32C (Castagnoli) for fabric frames, using the SSE4.2 crc32
 * instruction when the CPU has it; CRC-32 (IEEE 802.3, as AAL5 uses) and
 * CRC-8 (ATM HEC, ITU-T I.432) come later with the cells.  Pure functions.
 */
#ifndef LIB_CRC_H
#define LIB_CRC_H

#include <stddef.h>
#include <stdint.h>

/* CRC-32C of n bytes, continuing from crc (start with 0). */
uint32_t crc32c(uint32_t crc, const void *buf, size_t n);

/* The table-driven CRC-32C, for tests against the instruction. */
uint32_t crc32c_sw(uint32_t crc, const void *buf, size_t n);

#endif
