/*
 * The hybrid-deposit cell and AAL5 segmentation; see cell.h.
 */
#include <string.h>

#include "kernel/crc.h"
#include "net/deposit/cell.h"

/* UNI header: GFC(4) VPI(8) VCI(16) PT(3) CLP(1), ITU-T I.361 2.2. */
void cell_hdr_build(uint8_t hdr[CELL_HDR_LEN], uint16_t vci, uint8_t pt)
{
	hdr[0] = 0;				/* GFC 0, VPI 7..4 */
	hdr[1] = (uint8_t)(vci >> 12);		/* VPI 3..0, VCI 15..12 */
	hdr[2] = (uint8_t)(vci >> 4);
	hdr[3] = (uint8_t)((vci & 0xf) << 4 | (pt & 7) << 1);
	hdr[4] = atm_hec(hdr);
}

enum cell_hdr_err cell_hdr_parse(const uint8_t hdr[CELL_HDR_LEN], uint16_t *vci, uint8_t *pt)
{
	if (atm_hec(hdr) != hdr[4])
		return CELL_HDR_HEC;
	/* One path per node pair (the fabric channel): VPI and GFC are 0. */
	if (hdr[0] != 0 || (hdr[1] & 0xf0) != 0)
		return CELL_HDR_FIELD;
	*pt = (uint8_t)((hdr[3] >> 1) & 7);
	if (*pt & PT_OAM)
		return CELL_HDR_FIELD;
	*vci = (uint16_t)((hdr[1] & 0x0f) << 12 | hdr[2] << 4 | hdr[3] >> 4);
	return CELL_HDR_OK;
}

uint8_t cell_check(const struct cell *c)
{
	return (uint8_t)(crc8_atm(0, c->ctl, CELL_CTL_LEN) ^ 0x55);
}

uint16_t cell_data_crc(const struct cell *c)
{
	return crc16_ccitt(CRC16_INIT, c->data, CELL_DATA);
}

void cell_ctl_put(uint8_t out[CELL_CTL_LEN], const struct cell_ctl *ctl)
{
	cell_put16(out + CTL_OPCODE, ctl->opcode);
	out[CTL_RO1] = ctl->ro1;
	out[CTL_RO2] = ctl->ro2;
	out[CTL_COND] = ctl->cond;
	cell_put32(out + CTL_OPERAND, ctl->operand);
	memcpy(out + CTL_INDEX, ctl->idx, 3);
	out[CTL_MASK] = ctl->mask;
}

void cell_ctl_get(const uint8_t in[CELL_CTL_LEN], struct cell_ctl *ctl)
{
	ctl->opcode = cell_get16(in + CTL_OPCODE);
	ctl->ro1 = in[CTL_RO1];
	ctl->ro2 = in[CTL_RO2];
	ctl->cond = in[CTL_COND];
	ctl->operand = cell_get32(in + CTL_OPERAND);
	memcpy(ctl->idx, in + CTL_INDEX, 3);
	ctl->mask = in[CTL_MASK];
}

void cell_seal(struct cell *c)
{
	c->check = cell_check(c);
	cell_put16(c->crc, cell_data_crc(c));
}

void cell_build(struct cell *c, uint16_t vci, const struct cell_ctl *ctl, const void *data)
{
	cell_hdr_build(c->hdr, vci, 0);
	cell_ctl_put(c->ctl, ctl);
	if (data)
		memcpy(c->data, data, CELL_DATA);
	else
		memset(c->data, 0, CELL_DATA);
	cell_seal(c);
}

void cell_seg_start(struct cell_seg *s, uint16_t vci, const void *data, uint32_t len)
{
	cell_hdr_build(s->hdr, vci, 0);
	cell_hdr_build(s->hdr_last, vci, PT_AUU);
	s->p = data;
	s->left = len;
	s->len = len;
	s->crc = 0;
	s->done = 0;
}

int cell_seg_next(struct cell_seg *s, struct cell_aal5 *out)
{
	uint32_t n;

	if (s->done)
		return -1;
	if (s->left > CELL_PAYLOAD - AAL5_TRAILER) {
		/* Not the last: all data (the trailer would not fit after what remains). */
		n = s->left < CELL_PAYLOAD ? s->left : CELL_PAYLOAD;
		if (n == CELL_PAYLOAD) {
			memcpy(out->hdr, s->hdr, CELL_HDR_LEN);
			memcpy(out->payload, s->p, CELL_PAYLOAD);
			s->crc = crc32_aal5(s->crc, out->payload, CELL_PAYLOAD);
			s->p += n;
			s->left -= n;
			return 1;
		}
		/* 41..47 bytes left: data and padding here, the trailer in one more cell. */
		memcpy(out->hdr, s->hdr, CELL_HDR_LEN);
		memcpy(out->payload, s->p, n);
		memset(out->payload + n, 0, CELL_PAYLOAD - n);
		s->crc = crc32_aal5(s->crc, out->payload, CELL_PAYLOAD);
		s->p += n;
		s->left = 0;
		return 1;
	}
	/* The last cell: the rest of the data, padding, the trailer. */
	n = s->left;
	memcpy(out->hdr, s->hdr_last, CELL_HDR_LEN);
	if (n)
		memcpy(out->payload, s->p, n);
	memset(out->payload + n, 0, CELL_PAYLOAD - AAL5_TRAILER - n);
	struct aal5_trailer *t = (struct aal5_trailer *)(out->payload + CELL_PAYLOAD - AAL5_TRAILER);
	t->uu = 0;
	t->cpi = 0;
	cell_put16(t->len, (uint16_t)s->len);
	s->crc = crc32_aal5(s->crc, out->payload, CELL_PAYLOAD - 4);
	cell_put32(t->crc, s->crc);
	s->left = 0;
	s->done = 1;
	return 0;
}

size_t cell_seg_fill(struct cell_seg *s, uint8_t *out, size_t n)
{
	size_t k = 0;

	/* Full data cells (not the last, all data): the headers, then the payloads copied as the CRC goes. */
	size_t full = s->done ? 0 : s->left / CELL_PAYLOAD;
	if (full > n)
		full = n;
	for (; k < full; k++)
		memcpy(out + k * CELL_SIZE, s->hdr, CELL_HDR_LEN);
	s->crc = crc32_aal5_cells_copy(s->crc, out + CELL_HDR_LEN, CELL_SIZE, s->p, CELL_PAYLOAD, k);
	s->p += k * CELL_PAYLOAD;
	s->left -= (uint32_t)(k * CELL_PAYLOAD);
	/* The PDU's end: a short cell, the trailer. */
	while (k < n && cell_seg_next(s, (struct cell_aal5 *)(out + k * CELL_SIZE)) >= 0)
		k++;
	return k;
}
