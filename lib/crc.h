/*
 * CRCs: CRC-32C (Castagnoli) for fabric frames, with the SSE4.2 crc32
 * instruction or tables, whichever is faster on this CPU; CRC-32 (IEEE 802.3, as AAL5 uses) and
 * CRC-8 (ATM HEC, ITU-T I.432) come later with the cells.  Pure functions.
 */
#ifndef LIB_CRC_H
#define LIB_CRC_H

#include <stddef.h>
#include <stdint.h>

/* CRC-32C of n bytes, continuing from crc (start with 0). */
uint32_t crc32c(uint32_t crc, const void *buf, size_t n);

/* Each implementation, for tests: tables, and the instruction if present. */
uint32_t crc32c_sw(uint32_t crc, const void *buf, size_t n);
uint32_t crc32c_hw_checked(uint32_t crc, const void *buf, size_t n);

/* Which implementation crc32c() chose on this CPU: "sse4.2" or "tables". */
const char *crc32c_impl(void);

#endif
