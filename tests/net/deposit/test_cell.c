/*
 * Host unit tests of the hybrid-deposit cell (net/deposit/cell.c) and its CRCs
 * (kernel/crc.c): the HEC of ITU-T I.432 against a bit-serial reference and
 * its known values, its detection of every single-bit header error; the
 * data CRC-16 and the AAL5 CRC-32 against their check values and the
 * examples of ITU-T I.363.5; header and control encoding; AAL5
 * segmentation of every block length.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tests/host/unit.h"

#include "kernel/crc.h"
#include "net/deposit/cell.h"

/* Bit by bit, straight from the polynomial: the reference the tables must match. */
static uint8_t hec_reference(const uint8_t h[4])
{
	uint8_t crc = 0;

	for (int i = 0; i < 4; i++) {
		crc ^= h[i];
		for (int k = 0; k < 8; k++)
			crc = (uint8_t)(crc & 0x80 ? (crc << 1) ^ 0x07 : crc << 1);	/* x^8+x^2+x+1 */
	}
	return crc ^ 0x55;
}

static void test_hec_known_values(void **state)
{
	(void)state;
	/* I.432: the idle cell header 00 00 00 01 has HEC 0x52; all zeros 0x55 (the coset). */
	const uint8_t idle[4] = { 0, 0, 0, 1 }, zero[4] = { 0 };
	assert_int_equal(atm_hec(idle), 0x52);
	assert_int_equal(atm_hec(zero), 0x55);
	/* The unassigned cell (00 00 00 00) and a VCI 5 header, by the reference. */
	for (uint32_t v = 0; v < 70000; v += 7) {
		uint8_t h[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v };
		assert_int_equal(atm_hec(h), hec_reference(h));
	}
}

static void test_hec_catches_every_single_bit_error(void **state)
{
	uint8_t hdr[CELL_HDR_LEN];
	uint16_t vci;
	uint8_t pt;

	(void)state;
	for (unsigned v = 0; v < 256; v += 37) {
		cell_hdr_build(hdr, (uint16_t)v, PT_AUU);
		assert_int_equal(cell_hdr_parse(hdr, &vci, &pt), CELL_HDR_OK);
		for (int bit = 0; bit < 40; bit++) {
			uint8_t bad[CELL_HDR_LEN];
			memcpy(bad, hdr, sizeof bad);
			bad[bit / 8] ^= (uint8_t)(0x80 >> (bit % 8));
			assert_int_equal(cell_hdr_parse(bad, &vci, &pt), CELL_HDR_HEC);
		}
	}
}

/* CRC-16/CCITT bit by bit. */
static uint16_t crc16_reference(const uint8_t *p, size_t n)
{
	uint16_t crc = 0xffff;

	while (n--) {
		crc ^= (uint16_t)(*p++ << 8);
		for (int k = 0; k < 8; k++)
			crc = (uint16_t)(crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1);
	}
	return crc;
}

/* CRC-8/ATM (HEC polynomial) bit by bit. */
static uint8_t crc8_reference(uint8_t crc, const uint8_t *p, size_t n)
{
	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (uint8_t)(crc & 0x80 ? (crc << 1) ^ 0x07 : crc << 1);
	}
	return crc;
}

static void test_crc16_and_crc8_check_values(void **state)
{
	uint8_t buf[77];

	(void)state;
	/* Every length, every alignment of the 8- and 4-byte steps, against the bitwise references. */
	for (size_t i = 0; i < sizeof buf; i++)
		buf[i] = (uint8_t)(i * 151 + 17);
	for (size_t off = 0; off < 8; off++)
		for (size_t n = 0; n + off <= sizeof buf; n++) {
			assert_int_equal(crc16_ccitt(CRC16_INIT, buf + off, n), crc16_reference(buf + off, n));
			assert_int_equal(crc8_atm(0, buf + off, n), crc8_reference(0, buf + off, n));
			assert_int_equal(crc8_atm(0x5a, buf + off, n), crc8_reference(0x5a, buf + off, n));
		}
	assert_int_equal(crc16_ccitt(CRC16_INIT, "123456789", 9), 0x29b1);
	assert_int_equal(crc8_atm(0, "123456789", 9), 0xf4);
	/* Continuation gives the same as one pass. */
	uint16_t c = crc16_ccitt(CRC16_INIT, "1234", 4);
	assert_int_equal(crc16_ccitt(c, "56789", 5), 0x29b1);
}

/* CRC-32/AAL5 bit by bit. */
static uint32_t crc32_reference(const uint8_t *p, size_t n)
{
	uint32_t crc = 0xffffffffu;

	while (n--) {
		crc ^= (uint32_t)*p++ << 24;
		for (int k = 0; k < 8; k++)
			crc = crc & 0x80000000u ? (crc << 1) ^ 0x04c11db7u : crc << 1;
	}
	return ~crc;
}

static void test_crc32_aal5_vectors(void **state)
{
	uint8_t pdu[48], buf[131];

	(void)state;
	/* Every length, every alignment of the 8-byte steps, against the bitwise reference. */
	for (size_t i = 0; i < sizeof buf; i++)
		buf[i] = (uint8_t)(i * 97 + 31);
	for (size_t off = 0; off < 8; off++)
		for (size_t n = 0; n + off <= sizeof buf; n++)
			assert_int_equal(crc32_aal5(0, buf + off, n), crc32_reference(buf + off, n));
	assert_int_equal(crc32_aal5(0, "123456789", 9), 0xfc891918u);
	assert_int_equal(crc32_aal5(crc32_aal5(0, "1234", 4), "56789", 5), 0xfc891918u);
	/* ITU-T I.363.5 examples: 40 data bytes, UU 0, CPI 0, length 40. */
	static const uint32_t want[3] = { 0x864d7f99u, 0xc55e457au, 0xbf671ed0u };
	for (int v = 0; v < 3; v++) {
		for (int i = 0; i < 40; i++)
			pdu[i] = (uint8_t)(v == 0 ? 0 : v == 1 ? 0xff : i + 1);
		pdu[40] = 0;
		pdu[41] = 0;
		pdu[42] = 0;
		pdu[43] = 40;
		assert_int_equal(crc32_aal5(0, pdu, 44), want[v]);
	}
}

/*
 * crc32_aal5_cells (PCLMULQDQ folding where the CPU has it) against the
 * tables, payloads laid end to end and where they lie in cells: every
 * count to 40, other starting CRCs, odd alignments; a bit moved anywhere
 * in a payload changes it, and a byte between payloads does not count.
 * crc32_aal5_cells_copy gives the same CRC and lays the payloads where it
 * is told, touching nothing between them or after the last.
 */
static void test_crc32_aal5_cells(void **state)
{
	static uint8_t buf[41 * CELL_SIZE + 8], flat[41 * CELL_PAYLOAD];
	uint32_t x = 777;

	(void)state;
	for (size_t i = 0; i < sizeof buf; i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = (uint8_t)(x >> 16);
	}
	for (size_t count = 0; count <= 40; count++)
		for (size_t off = 0; off < 8; off += 3) {
			uint32_t init = count & 1 ? 0 : 0x9e3779b9u * (uint32_t)(count + off + 1);
			const uint8_t *first = buf + off + CELL_HDR_LEN;
			for (size_t k = 0; k < count; k++)
				memcpy(flat + k * CELL_PAYLOAD, first + k * CELL_SIZE, CELL_PAYLOAD);
			uint32_t want = crc32_aal5(init, flat, count * CELL_PAYLOAD);
			assert_int_equal(crc32_aal5_cells(init, first, CELL_SIZE, count), want);
			assert_int_equal(crc32_aal5_cells_tables(init, first, CELL_SIZE, count), want);
			assert_int_equal(crc32_aal5_cells(init, flat, CELL_PAYLOAD, count), want);
			/* Copied as the CRC goes: out of cells into a flat area, and back into cells. */
			static uint8_t to_flat[41 * CELL_PAYLOAD + 8], to_cells[41 * CELL_SIZE + 8];
			memset(to_flat, 0xa5, sizeof to_flat);
			assert_int_equal(crc32_aal5_cells_copy(init, to_flat + off, CELL_PAYLOAD, first, CELL_SIZE, count),
					 want);
			assert_memory_equal(to_flat + off, flat, count * CELL_PAYLOAD);
			assert_int_equal(to_flat[off + count * CELL_PAYLOAD], 0xa5);	/* nothing past the last */
			memset(to_cells, 0x5a, sizeof to_cells);
			assert_int_equal(crc32_aal5_cells_copy(init, to_cells + CELL_HDR_LEN, CELL_SIZE, flat, CELL_PAYLOAD,
							       count), want);
			for (size_t k = 0; k < count; k++) {
				assert_memory_equal(to_cells + CELL_HDR_LEN + k * CELL_SIZE, flat + k * CELL_PAYLOAD,
						    CELL_PAYLOAD);
				assert_int_equal(to_cells[k * CELL_SIZE], 0x5a);	/* the gaps between untouched */
			}
		}
	uint32_t whole = crc32_aal5_cells(0, buf + CELL_HDR_LEN, CELL_SIZE, 27);
	for (size_t bit = 0; bit < 27 * CELL_PAYLOAD * 8; bit += 29) {
		uint8_t *b = buf + CELL_HDR_LEN + bit / 8 / CELL_PAYLOAD * CELL_SIZE + bit / 8 % CELL_PAYLOAD;
		*b ^= (uint8_t)(1u << (bit % 8));
		assert_int_not_equal(crc32_aal5_cells(0, buf + CELL_HDR_LEN, CELL_SIZE, 27), whole);
		*b ^= (uint8_t)(1u << (bit % 8));
	}
	buf[CELL_SIZE] ^= 0xff;		/* the second cell's header: not in the CRC */
	assert_int_equal(crc32_aal5_cells(0, buf + CELL_HDR_LEN, CELL_SIZE, 27), whole);
	buf[CELL_SIZE] ^= 0xff;
}

static void test_header_fields(void **state)
{
	uint8_t hdr[CELL_HDR_LEN];
	uint16_t vci;
	uint8_t pt;

	(void)state;
	for (unsigned v = 0; v <= CELL_MAX_VCI; v += 255) {
		cell_hdr_build(hdr, (uint16_t)v, 0);
		assert_int_equal(cell_hdr_parse(hdr, &vci, &pt), CELL_HDR_OK);
		assert_int_equal(vci, v);
		assert_int_equal(pt, 0);
	}
	cell_hdr_build(hdr, 77, PT_AUU);
	assert_int_equal(cell_hdr_parse(hdr, &vci, &pt), CELL_HDR_OK);
	assert_int_equal(pt, PT_AUU);
	/* Non-zero VPI or GFC, or an OAM payload type, with a correct HEC: refused. */
	const uint8_t bad[3][4] = { { 0x00, 0x10, 0x04, 0xd0 }, { 0x10, 0x00, 0x04, 0xd0 },
				    { 0x00, 0x00, 0x04, 0xd8 } };
	for (int i = 0; i < 3; i++) {
		memcpy(hdr, bad[i], 4);
		hdr[4] = atm_hec(hdr);
		assert_int_equal(cell_hdr_parse(hdr, &vci, &pt), CELL_HDR_FIELD);
	}
	/* EFCI (congestion, set by switches) is ignored. */
	cell_hdr_build(hdr, 77, PT_EFCI);
	assert_int_equal(cell_hdr_parse(hdr, &vci, &pt), CELL_HDR_OK);
}

static void test_control_roundtrip_and_seal(void **state)
{
	struct cell c;
	struct cell_ctl in = { CELL_OP(CK_WRITE, CA_INDEXED) | CO_INTR | CELL_POS(CP_MIDDLE),
			       CELL_RO(ALU_ADD, CS_A, CSRC_B), CELL_RO(ALU_OR, CS_C, CSRC_OPERAND),
			       CELL_COND(CMP_LT, CS_C, CSRC_OPERAND), 0xdeadbeef, { 1, 2, 3 }, 0x5a };
	struct cell_ctl out;
	uint8_t data[CELL_DATA];

	(void)state;
	for (int i = 0; i < CELL_DATA; i++)
		data[i] = (uint8_t)(i * 11);
	cell_build(&c, 42, &in, data);
	/* Big-endian on the wire. */
	assert_int_equal(c.ctl[CTL_OPERAND], 0xde);
	assert_int_equal(c.ctl[CTL_OPERAND + 3], 0xef);
	assert_int_equal(c.ctl[CTL_OPCODE] << 8 | c.ctl[CTL_OPCODE + 1], in.opcode);
	cell_ctl_get(c.ctl, &out);
	assert_int_equal(out.opcode, in.opcode);
	assert_int_equal(out.ro1, in.ro1);
	assert_int_equal(out.ro2, in.ro2);
	assert_int_equal(out.cond, in.cond);
	assert_int_equal(out.operand, in.operand);
	assert_memory_equal(out.idx, in.idx, 3);
	assert_int_equal(out.mask, in.mask);
	assert_memory_equal(c.data, data, CELL_DATA);
	assert_int_equal(c.check, cell_check(&c));
	assert_int_equal(cell_get16(c.crc), cell_data_crc(&c));
	/* Any single-bit change of the control fields changes the check. */
	for (int bit = 0; bit < CELL_CTL_LEN * 8; bit++) {
		struct cell d = c;
		d.ctl[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		assert_int_not_equal(d.check, cell_check(&d));
	}
	/* An all-zero cell does not pass its check (the coset). */
	memset(&c, 0, sizeof c);
	assert_int_not_equal(c.check, cell_check(&c));
}

/* Reassemble what cell_seg produces, checking the AAL5 rules on the way. */
static void test_segmentation_every_length(void **state)
{
	static uint8_t data[4096 + 64], back[4096 + 64];
	struct cell_seg s;
	struct cell_aal5 cells[100];

	(void)state;
	for (size_t i = 0; i < sizeof data; i++)
		data[i] = (uint8_t)(i * 7 + 3);
	for (uint32_t len = 0; len <= 4096; len += 16) {
		int n = 0, r;
		cell_seg_start(&s, 300, data, len);
		do {
			assert_true(n < 100);
			r = cell_seg_next(&s, &cells[n++]);
		} while (r == 1);
		assert_int_equal(r, 0);
		assert_int_equal(cell_seg_next(&s, &cells[0]), -1);
		assert_int_equal((uint32_t)n, aal5_cells(len));
		uint32_t crc = 0, got = 0;
		for (int i = 0; i < n; i++) {
			uint16_t vci;
			uint8_t pt;
			assert_int_equal(cell_hdr_parse(cells[i].hdr, &vci, &pt), CELL_HDR_OK);
			assert_int_equal(vci, 300);
			assert_int_equal(pt, i == n - 1 ? PT_AUU : 0);
			if (i < n - 1) {
				memcpy(back + got, cells[i].payload, CELL_PAYLOAD);
				got += CELL_PAYLOAD;
				crc = crc32_aal5(crc, cells[i].payload, CELL_PAYLOAD);
			}
		}
		const uint8_t *last = cells[n - 1].payload;
		const struct aal5_trailer *t = aal5_trailer_of(last);
		uint32_t rest = len - got;
		assert_true(rest == 0 || rest == 16 || rest == 32);
		assert_int_equal(cell_get16(t->len), len);
		assert_int_equal(t->cpi, 0);
		assert_int_equal(cell_get32(t->crc), crc32_aal5(crc, last, CELL_PAYLOAD - 4));
		memcpy(back + got, last, rest);
		assert_memory_equal(back, data, len);
		/* cell_seg_fill writes the same cells, in pieces of any size, where they lie in a frame. */
		static uint8_t frame[100 * CELL_SIZE];
		for (size_t piece = 1; piece <= 30; piece += 7) {
			size_t at = 0, w;
			cell_seg_start(&s, 300, data, len);
			while ((w = cell_seg_fill(&s, frame + at * CELL_SIZE, piece)) > 0)
				at += w;
			assert_int_equal(at, (size_t)n);
			assert_int_equal(cell_seg_cells_left(&s), 0);
			for (int i = 0; i < n; i++)
				assert_memory_equal(frame + (size_t)i * CELL_SIZE, &cells[i], CELL_SIZE);
		}
	}
}

UNIT_MAIN("tests", NULL, NULL,
	  cmocka_unit_test(test_hec_known_values),
	  cmocka_unit_test(test_hec_catches_every_single_bit_error),
	  cmocka_unit_test(test_crc16_and_crc8_check_values),
	  cmocka_unit_test(test_crc32_aal5_vectors),
	  cmocka_unit_test(test_crc32_aal5_cells),
	  cmocka_unit_test(test_header_fields),
	  cmocka_unit_test(test_control_roundtrip_and_seal),
	  cmocka_unit_test(test_segmentation_every_length))
