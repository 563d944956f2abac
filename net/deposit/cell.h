/*
 * The 53-byte ATM cell of the hybrid deposit model (hybrid deposit 4,
 * Fig. 3), and AAL5 cells for multi-cell block transfer.  Pure: host unit
 * tests and the fuzz target use it as it is.
 *
 * A cell is a 5-byte header and a 48-byte payload:
 *
 *   off len field
 *     0   4 GFC(4) VPI(8) VCI(16) PT(3) CLP(1)      ATM UNI header (ITU-T I.361)
 *     4   1 HEC: CRC-8 of bytes 0..3 ^ 0x55          ITU-T I.432
 *     5   2 opcode, or CELL_IP | instruction pointer  \
 *     7   1 register operation 1                      |
 *     8   1 register operation 2                      | the control fields:
 *     9   1 conditional                               | 13 bytes
 *    10   4 operand (32-bit immediate)                |
 *    14   3 register indices a, b, c                  |
 *    17   1 word mask (bit i: data word i moves)     /
 *    18   1 check: CRC-8 of bytes 5..17 ^ 0x55
 *    19  32 data (eight 4-byte words)
 *    51   2 CRC-16/CCITT of the data
 *
 * so the payload is 32 data bytes and 16 control bytes (the 13 control
 * fields, their check, and the data CRC).  The control fields come first
 * and carry their own check "so that decoding of these fields can begin
 * before the entire cell arrives" (Fig. 3 text); the data CRC follows the
 * data, where hardware has it as the last data byte passes.  Multi-byte
 * fields are big-endian (network order, as ATM and AAL5 are); data bytes
 * are memory bytes and have no byte order.
 *
 * The opcode field (16 bits) of a direct cell says which primitive
 * operations of Fig. 2 the cell performs and in what order (DART 6.5: one
 * address generation, two register operations and one conditional):
 *
 *   15     CELL_IP: the rest is an instruction pointer (DART 6.5)
 *   14..12 kind: what happens to the data (enum cell_kind)
 *   11..10 address generation (enum cell_agen), from register a
 *    9     address generation after the register operations (pre-modify)
 *    8..7  where the conditional is tested (enum cell_cond_pos)
 *    6     the conditional raises an interrupt at the end when true
 *    5     the conditional guards register operation 2
 *    4..2  instructions only: operand, indices, mask from the message
 *    1..0  reserved, zero
 *
 * A register operation byte is alu(7..4) dst(3..2) src(1..0): dst names
 * slot a, b or c; src is the operand or slot a, b or c.  The conditional
 * byte is cmp(7..4) lhs(3..2) rhs(1..0), likewise.  Slots name registers
 * by the indices of bytes 14..16, relative to the connection's register
 * window.
 *
 * AAL5 (ITU-T I.363.5): a block's data after its control cell is a
 * CPCS-PDU: the data, padding, and an 8-byte trailer (UU, CPI, length,
 * CRC-32) at the end of its last cell, which has PT's AUU bit set.  Block
 * lengths are multiples of 16 bytes (hybrid deposit 4), so the last cell
 * holds 0, 16 or 32 data bytes.
 */
#ifndef NET_CELL_H
#define NET_CELL_H

#include <stddef.h>
#include <stdint.h>

#define CELL_SIZE 53
#define CELL_HDR_LEN 5
#define CELL_PAYLOAD 48
#define CELL_DATA 32
#define CELL_WORDS 8
#define CELL_CTL_LEN 13		/* the control fields the check covers */
#define CELL_MAX_VCI 0xffff
#define AAL5_TRAILER 8
#define AAL5_MAX_LEN 65535	/* the trailer's length field */

struct cell {
	uint8_t hdr[CELL_HDR_LEN];	/* GFC/VPI, VPI/VCI, VCI, VCI/PT/CLP, HEC */
	uint8_t ctl[CELL_CTL_LEN];	/* the control fields, at enum cell_ctl_off */
	uint8_t check;			/* cell_check() */
	uint8_t data[CELL_DATA];
	uint8_t crc[2];			/* big-endian crc16_ccitt of data */
} __attribute__((packed));
_Static_assert(sizeof(struct cell) == CELL_SIZE, "an ATM cell is 53 bytes");
_Static_assert(__builtin_offsetof(struct cell, data) == CELL_HDR_LEN + 14, "data after control");

/* The control fields: offsets in cell.ctl. */
enum cell_ctl_off {
	CTL_OPCODE = 0,		/* 2 bytes, big-endian */
	CTL_RO1 = 2,
	CTL_RO2 = 3,
	CTL_COND = 4,
	CTL_OPERAND = 5,	/* 4 bytes, big-endian */
	CTL_INDEX = 9,		/* a, b, c */
	CTL_MASK = 12,
};

/* A standard AAL5 cell: the header and 48 payload bytes. */
struct cell_aal5 {
	uint8_t hdr[CELL_HDR_LEN];
	uint8_t payload[CELL_PAYLOAD];
} __attribute__((packed));
_Static_assert(sizeof(struct cell_aal5) == CELL_SIZE, "an AAL5 cell is 53 bytes");

/* The CPCS-PDU trailer, the last 8 bytes of the last cell (I.363.5). */
struct aal5_trailer {
	uint8_t uu;		/* CPCS user-to-user indication: passed, unused */
	uint8_t cpi;		/* common part indicator: 0 */
	uint8_t len[2];		/* big-endian: data bytes in the PDU */
	uint8_t crc[4];		/* big-endian crc32_aal5 of the PDU up to here */
} __attribute__((packed));
_Static_assert(sizeof(struct aal5_trailer) == AAL5_TRAILER, "AAL5 trailer is 8 bytes");

/* Payload type bits (PT, 3 bits). */
enum cell_pt {
	PT_AUU = 1,		/* ATM-user-to-ATM-user: the last cell of an AAL5 PDU */
	PT_EFCI = 2,		/* congestion experienced: set by switches, ignored */
	PT_OAM = 4,		/* not user data (OAM, resource management): refused */
};

/* What happens to a control cell's data (opcode bits 14..12). */
enum cell_kind {
	CK_NOP = 0,		/* register operations and conditional only */
	CK_WRITE = 1,		/* deposit the data at effaddr (word mask) */
	CK_READ = 2,		/* reply with the 32 bytes at effaddr; data = reply control */
	CK_FETCH = 3,		/* reply with register values; data = reply control */
	CK_BLOCK = 4,		/* WRITE, then AAL5 cells deposit after it (DART 6.2) */
	CK_SWEXC = 5,		/* software exception: the host handles the cell (DART 6.5) */
	CK_NKINDS		/* 6, 7: unimplemented */
};

/* Address generation (Fig. 2), opcode bits 11..10. */
enum cell_agen {
	CA_NONE = 0,
	CA_DIRECT = 1,		/* effaddr = operand */
	CA_INDIRECT = 2,	/* effaddr = <a> */
	CA_INDEXED = 3,		/* effaddr = <a> + operand */
};

/* Where the conditional is tested, opcode bits 8..7. */
enum cell_cond_pos {
	CP_FIRST = 0,		/* before register operation 1 */
	CP_MIDDLE = 1,		/* between the register operations */
	CP_LAST = 2,		/* after register operation 2 (3: unimplemented) */
};

/* Opcode field (16 bits). */
enum {
	CELL_IP = 0x8000,		/* instruction pointer message (DART 6.5) */
	CELL_IP_MASK = 0x7fff,
	CO_KIND_SHIFT = 12,
	CO_KIND_MASK = 0x7000,
	CO_AGEN_SHIFT = 10,
	CO_AGEN_MASK = 0x0c00,
	CO_AGEN_AFTER = 0x0200,
	CO_POS_SHIFT = 7,
	CO_POS_MASK = 0x0180,
	CO_INTR = 0x0040,
	CO_GUARD = 0x0020,
	CO_OPERAND_MSG = 0x0010,	/* instructions: operand from the message */
	CO_INDEX_MSG = 0x0008,		/* instructions: indices from the message */
	CO_MASK_MSG = 0x0004,		/* instructions: mask from the message */
	CO_RESERVED = 0x0003,
};

#define CELL_OP(kind, agen) ((uint16_t)((kind) << CO_KIND_SHIFT | (agen) << CO_AGEN_SHIFT))
#define CELL_POS(pos) ((uint16_t)((pos) << CO_POS_SHIFT))

/* Register slots and operand sources. */
enum cell_slot { CS_A = 0, CS_B = 1, CS_C = 2 };
enum cell_src { CSRC_OPERAND = 0, CSRC_A = 1, CSRC_B = 2, CSRC_C = 3 };

/* Register operations (Fig. 2): load, unary, binary. */
enum cell_alu {
	ALU_NONE = 0,		/* the byte must be 0 */
	ALU_LOAD = 1,		/* dst <- src */
	ALU_NOT = 2,		/* dst <- ~src */
	ALU_NEG = 3,		/* dst <- -src */
	ALU_ADD = 4,		/* dst <- <dst> + src */
	ALU_SUB = 5,		/* dst <- <dst> - src */
	ALU_AND = 6,
	ALU_OR = 7,
	ALU_XOR = 8,
	ALU_ANDN = 9,		/* dst <- <dst> & ~src: clear bits */
	ALU_SHL = 10,		/* by src & 31 */
	ALU_SHR = 11,		/* logical (zero-filling), by src & 31 */
	ALU_N			/* 12..15: unimplemented */
};

/* Comparisons of the conditional (Fig. 2), unsigned. */
enum cell_cmp {
	CMP_NONE = 0,		/* the byte must be 0 */
	CMP_ALWAYS = 1,		/* true: no registers (lhs, rhs must be 0) */
	CMP_EQ = 2,
	CMP_NE = 3,
	CMP_LT = 4,		/* <lhs> < rhs */
	CMP_LE = 5,
	CMP_GT = 6,
	CMP_GE = 7,
	CMP_ALLSET = 8,		/* (<lhs> & rhs) == rhs */
	CMP_ANYSET = 9,		/* (<lhs> & rhs) != 0 */
	CMP_N			/* 10..15: unimplemented */
};

#define CELL_RO(alu, dst, src) ((uint8_t)((alu) << 4 | (dst) << 2 | (src)))
#define CELL_COND(cmp, lhs, rhs) ((uint8_t)((cmp) << 4 | (lhs) << 2 | (rhs)))

/* The control fields, decoded (host byte order). */
struct cell_ctl {
	uint16_t opcode;
	uint8_t ro1, ro2, cond;
	uint32_t operand;
	uint8_t idx[3];
	uint8_t mask;
};

/* Header verdicts. */
enum cell_hdr_err {
	CELL_HDR_OK = 0,
	CELL_HDR_HEC,		/* the HEC does not match: nothing in it can be trusted */
	CELL_HDR_FIELD,		/* GFC or VPI not 0, or PT says not user data */
};

/* Write a user-data header: VPI 0, GFC 0, PT (PT_AUU or 0), CLP 0, and its HEC. */
void cell_hdr_build(uint8_t hdr[CELL_HDR_LEN], uint16_t vci, uint8_t pt);

/* Check a header; on CELL_HDR_OK give its VCI and PT.  Never reads past 5 bytes. */
enum cell_hdr_err cell_hdr_parse(const uint8_t hdr[CELL_HDR_LEN], uint16_t *vci, uint8_t *pt);

/* The check byte of a control cell: CRC-8 of its 13 control bytes, ^ 0x55. */
uint8_t cell_check(const struct cell *c);

/* The CRC-16 of a cell's data. */
uint16_t cell_data_crc(const struct cell *c);

/* Pack the 13 control bytes (no check) from ctl. */
void cell_ctl_put(uint8_t out[CELL_CTL_LEN], const struct cell_ctl *ctl);

/* Unpack 13 control bytes. */
void cell_ctl_get(const uint8_t in[CELL_CTL_LEN], struct cell_ctl *ctl);

/*
 * A complete control cell: header for vci (PT 0), control fields, check,
 * data (32 bytes; NULL: zeros) and its CRC.
 */
void cell_build(struct cell *c, uint16_t vci, const struct cell_ctl *ctl, const void *data);

/* Seal a control cell whose fields were written in place: check and CRC. */
void cell_seal(struct cell *c);

/* --- AAL5 ------------------------------------------------------------------ */

/* Cells an AAL5 PDU of len data bytes takes. */
static inline uint32_t aal5_cells(uint32_t len)
{
	return (len + AAL5_TRAILER + CELL_PAYLOAD - 1) / CELL_PAYLOAD;
}

/* Segmentation of one PDU into AAL5 cells. */
struct cell_seg {
	uint8_t hdr[CELL_HDR_LEN];	/* PT 0 */
	uint8_t hdr_last[CELL_HDR_LEN];	/* PT_AUU */
	const uint8_t *p;
	uint32_t left;			/* data bytes still to go */
	uint32_t len;			/* the PDU's data bytes */
	uint32_t crc;			/* running crc32_aal5 */
	int done;
};

/* Start segmenting len bytes at data for vci.  len <= AAL5_MAX_LEN. */
void cell_seg_start(struct cell_seg *s, uint16_t vci, const void *data, uint32_t len);

/*
 * Write the next cell of the PDU into out.  Return 1 if more cells follow,
 * 0 if this was the last (trailer in it), -1 if the PDU was done already.
 */
int cell_seg_next(struct cell_seg *s, struct cell_aal5 *out);

/*
 * Write up to n cells of the PDU at out, CELL_SIZE bytes apart (a frame's
 * cells): the same cells as n calls of cell_seg_next, the full data cells'
 * CRC taken over them together once they are written (crc32_aal5_cells).
 * Return how many it wrote.
 */
size_t cell_seg_fill(struct cell_seg *s, uint8_t *out, size_t n);

/* Cells cell_seg_next has still to write: the data left and the trailer, in whole cells. */
static inline uint32_t cell_seg_cells_left(const struct cell_seg *s)
{
	return s->done ? 0 : (s->left + AAL5_TRAILER + CELL_PAYLOAD - 1) / CELL_PAYLOAD;
}

/* The trailer of a last cell's payload. */
static inline const struct aal5_trailer *aal5_trailer_of(const uint8_t payload[CELL_PAYLOAD])
{
	return (const struct aal5_trailer *)(payload + CELL_PAYLOAD - AAL5_TRAILER);
}

/* --- byte order ------------------------------------------------------------ */

static inline uint16_t cell_get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t cell_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline void cell_put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static inline void cell_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

#endif
