/*
 * CRCs: CRC-32C (Castagnoli) for fabric frames, with the SSE4.2 crc32
 * instruction where the CPU has it and is not QEMU's TCG, under TCG by
 * PCLMULQDQ folding, else tables; and for the
 * hybrid-deposit cells (net/deposit/cell.h) the ATM header error control (CRC-8,
 * ITU-T I.432), CRC-16/CCITT over a cell's data, and CRC-32 as AAL5 uses
 * it (ITU-T I.363.5).  Pure functions.
 */
#ifndef KERNEL_CRC_H
#define KERNEL_CRC_H

#include <stddef.h>
#include <stdint.h>

/* CRC-32C of n bytes, continuing from crc (start with 0). */
uint32_t crc32c(uint32_t crc, const void *buf, size_t n);

/*
 * Each implementation, for tests: tables; the crc32 instruction (SSE4.2)
 * and PCLMULQDQ folding (tables under 256 bytes) if present, else tables.
 */
uint32_t crc32c_sw(uint32_t crc, const void *buf, size_t n);
uint32_t crc32c_hw_checked(uint32_t crc, const void *buf, size_t n);
int crc32c_hw_present(void);
uint32_t crc32c_clmul_checked(uint32_t crc, const void *buf, size_t n);
int crc32c_clmul_present(void);

/*
 * Which implementation crc32c() chose on this CPU: "sse4.2" on hardware;
 * under QEMU's TCG (its crc32 instruction a helper call) "pclmul ..."
 * where the CPU has PCLMULQDQ, else "tables ..."; "tables" on a CPU with
 * neither.
 */
const char *crc32c_impl(void);

/*
 * CRC-8 with the ATM polynomial x^8 + x^2 + x + 1, most significant bit
 * first, no final XOR, continuing from crc (start with 0).
 */
uint8_t crc8_atm(uint8_t crc, const void *buf, size_t n);

/*
 * The HEC of a 4-byte ATM cell header (ITU-T I.432 4.3.2): crc8_atm of the
 * header, XOR 0x55 (the coset).  An idle cell (00 00 00 01) gets 0x52.
 */
uint8_t atm_hec(const uint8_t hdr[4]);

/*
 * CRC-16/CCITT (ITU-T V.41 polynomial 0x1021, most significant bit first,
 * no final XOR), continuing from crc: start with CRC16_INIT.  Check value:
 * "123456789" -> 0x29B1.
 */
#define CRC16_INIT 0xffffu
uint16_t crc16_ccitt(uint16_t crc, const void *buf, size_t n);

/*
 * CRC-32 as AAL5 computes it (ITU-T I.363.5: the IEEE 802.3 polynomial
 * 0x04C11DB7, most significant bit first, preset to all ones, complemented),
 * continuing from crc (start with 0).  Check value: "123456789" ->
 * 0xFC891918.
 */
uint32_t crc32_aal5(uint32_t crc, const void *buf, size_t n);

/*
 * crc32_aal5 of count 48-byte cell payloads, the first at first and each
 * stride bytes after the one before (CELL_SIZE where they lie in cells):
 * the same result as crc32_aal5 over them laid end to end.  By PCLMULQDQ
 * folding where the CPU has it, else the tables (_tables: always them).
 */
uint32_t crc32_aal5_cells(uint32_t crc, const void *first, size_t stride, size_t count);
uint32_t crc32_aal5_cells_tables(uint32_t crc, const void *first, size_t stride, size_t count);

/*
 * Copy count 48-byte cell payloads from src (each sstride bytes after the
 * one before) to dst (each dstride after), and return crc32_aal5_cells of
 * them continuing from crc: each byte read once, the CRC of the bytes
 * stored (src may be memory that others write meanwhile).
 */
uint32_t crc32_aal5_cells_copy(uint32_t crc, void *dst, size_t dstride, const void *src, size_t sstride,
			       size_t count);

/* Build the cell CRCs' tables now (they are built on first use otherwise). */
void crc_cell_tables(void);

#endif
