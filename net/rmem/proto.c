#include <errno.h>
#include <string.h>

#include "net/rmem/proto.h"
#include "net/rmem/rmem.h"

const char *const rmem_status_names[RMS_NSTATUS] = {
	[RMS_OK] = "ok",
	[RMS_BAD_SEG] = "bad_segment",
	[RMS_STALE] = "stale_generation",
	[RMS_RIGHTS] = "no_rights",
	[RMS_BOUNDS] = "out_of_bounds",
	[RMS_INHIBIT] = "write_inhibited",
	[RMS_ALIGN] = "misaligned",
	[RMS_MALFORMED] = "malformed",
};

int rmem_parse(const uint8_t *p, size_t len, struct rmem_msg *m, const uint8_t **data,
	       size_t *dlen)
{
	if (len < RMEM_HDR_LEN)
		return RMS_MALFORMED;
	memcpy(m, p, sizeof *m);
	*data = p + RMEM_HDR_LEN;
	*dlen = len - RMEM_HDR_LEN;
	return rmem_parse_header(m, *dlen);
}

int rmem_parse_header(const struct rmem_msg *m, size_t dlen)
{
	size_t want;

	if (m->flags & ~(RM_F_INTR | RM_F_ACK | RM_F_RAW | RM_F_MARKED))
		return RMS_MALFORMED;
	switch (m->op) {
	case RM_WRITE:
	case RM_READ_RESP:
		if (m->count == 0 || m->count > RMEM_DATA_MAX)
			return RMS_MALFORMED;
		want = m->count;
		break;
	case RM_READ_REQ:
		if (m->count == 0 || m->count > RMEM_DATA_MAX)
			return RMS_MALFORMED;
		want = 0;
		break;
	case RM_CAS:
		if (m->count != 8)
			return RMS_MALFORMED;
		want = 16;
		break;
	case RM_FADD:
	case RM_ATOMIC_RESP:
		if (m->count != 8)
			return RMS_MALFORMED;
		want = 8;
		break;
	case RM_CAS_BLOCK:
		/* Whole words, their pairs in one message. */
		if (m->count == 0 || m->count % 8 || m->count > RMEM_DATA_MAX / 2)
			return RMS_MALFORMED;
		want = 2 * (size_t)m->count;
		break;
	case RM_STATUS:
		want = 0;
		break;
	default:
		return RMS_MALFORMED;
	}
	if (dlen != want)
		return RMS_MALFORMED;
	if ((m->op == RM_STATUS || m->op == RM_READ_RESP || m->op == RM_ATOMIC_RESP) &&
	    (m->status < 0 || m->status >= RMS_NSTATUS))
		return RMS_MALFORMED;
	return RMS_OK;
}

int rmem_check(const struct rmem_segview *sv, const struct rmem_msg *m)
{
	int need;

	switch (m->op) {
	case RM_WRITE:
		need = RMEM_W;
		break;
	case RM_READ_REQ:
		need = RMEM_R;
		break;
	case RM_CAS:
	case RM_FADD:
	case RM_CAS_BLOCK:
		need = RMEM_A;
		break;
	default:
		return RMS_MALFORMED;
	}
	if (!sv->exists)
		return RMS_BAD_SEG;
	if (sv->gen != m->gen)
		return RMS_STALE;
	if ((sv->rights & need) != need)
		return RMS_RIGHTS;
	/* 64-bit sum: a 32-bit off + count cannot wrap. */
	if ((uint64_t)m->off + m->count > sv->size)
		return RMS_BOUNDS;
	/* The word itself (a block's first) must be aligned, wherever the segment starts. */
	if (need == RMEM_A && ((sv->base + m->off) & 7))
		return RMS_ALIGN;
	/* Write inhibit makes the segment read-only: atomics change it too. */
	if (need != RMEM_R && sv->inhibit)
		return RMS_INHIBIT;
	return RMS_OK;
}

int rmem_status_errno(int status)
{
	switch (status) {
	case RMS_OK: return 0;
	case RMS_BAD_SEG: return -ENOENT;
	case RMS_STALE: return -ESTALE;
	case RMS_RIGHTS: return -EACCES;
	case RMS_BOUNDS: return -ERANGE;
	case RMS_INHIBIT: return -EROFS;
	case RMS_ALIGN: return -EINVAL;
	default: return -EPROTO;
	}
}
