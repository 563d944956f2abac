#include <stdio.h>
#include <string.h>

#include "kernel/crc.h"
#include "kernel/scrypt.h"
#include "net/fabric/wire.h"

const char *const fab_err_names[FAB_NERR] = {
	[FAB_OK] = "ok",
	[FAB_E_SHORT] = "short",
	[FAB_E_VERSION] = "bad_version",
	[FAB_E_TYPE] = "bad_type",
	[FAB_E_LEN] = "bad_length",
	[FAB_E_CRC] = "bad_crc",
	[FAB_E_NODE] = "bad_node",
	[FAB_E_NOTME] = "not_for_me",
	[FAB_E_FIELD] = "bad_field",
	[FAB_E_KEY] = "key_mismatch",
	[FAB_E_MAC] = "bad_mac",
	[FAB_E_REPLAY] = "replay",
};

static uint32_t frame_crc(const uint8_t *fh, size_t len)
{
	static const uint8_t zero[4];
	uint32_t c;

	/* The header with its crc field taken as zero, then the payload. */
	c = crc32c(0, fh, offsetof(struct fab_hdr, crc));
	c = crc32c(c, zero, 4);
	return crc32c(c, fh + FAB_HDR_LEN, len);
}

/* The checks every frame takes first: its size, then a copy of the header and its version. */
static inline __attribute__((always_inline)) enum fab_err parse_head(const uint8_t *frame, size_t n,
								      struct fab_hdr *h)
{
	if (n < FAB_ETH_HLEN + FAB_HDR_LEN)
		return FAB_E_SHORT;
	if (n > FAB_FRAME_LIMIT)
		return FAB_E_LEN;
	memcpy(h, frame + FAB_ETH_HLEN, sizeof *h);
	if (h->version != FAB_VERSION)
		return FAB_E_VERSION;
	return FAB_OK;
}

enum fab_err fab_parse(const uint8_t *frame, size_t n, int me, int nodes, struct fab_hdr *h,
		       const uint8_t **payload)
{
	return fab_parse_link(frame, n, me, nodes, 0, 0, h, payload);
}

/* Every check of fab_parse_full after parse_head's. */
static enum fab_err parse_checks(const uint8_t *frame, size_t n, int me, int nodes, int lossless,
				 int keyed, struct fab_hdr *h, const uint8_t **payload)
{
	const uint8_t *fh = frame + FAB_ETH_HLEN;
	int nocrc_ok;

	if (h->type < FAB_DATA || h->type > FAB_PROBE)
		return FAB_E_TYPE;
	/* Ethernet pads short frames: the payload may end before the frame. */
	if ((size_t)h->len > n - FAB_ETH_HLEN - FAB_HDR_LEN)
		return FAB_E_LEN;
	/* Keyed nodes take only keyed frames, and the others none. */
	if (!keyed != !(h->flags & FAB_F_MAC))
		return FAB_E_KEY;
	nocrc_ok = h->type == FAB_RAW || (lossless && h->type != FAB_HELLO);
	if (keyed) {
		/* The tag replaces the CRC: fab_unseal checks it. */
		if ((size_t)h->len + FAB_TRAILER_LEN > n - FAB_ETH_HLEN - FAB_HDR_LEN)
			return FAB_E_LEN;
		if (h->flags & FAB_F_NOCRC)
			return FAB_E_FIELD;
	} else if (!(h->flags & FAB_F_NOCRC) || !nocrc_ok) {
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
		if (frame_crc(fh, h->len) != h->crc)
			return FAB_E_CRC;
#else
		/* Fuzzing: let mutated frames past the CRC to reach the logic behind it. */
		(void)frame_crc(fh, h->len);
#endif
	}
	if (h->flags & ~(FAB_F_NOCRC | FAB_F_ACKNOW | FAB_F_MAC))
		return FAB_E_FIELD;
	if ((h->flags & FAB_F_NOCRC) && !nocrc_ok)
		return FAB_E_FIELD;
	if (h->src >= nodes || h->src == me)
		return FAB_E_NODE;
	if (h->dst == FAB_BROADCAST) {
		if (h->type != FAB_HELLO)
			return FAB_E_FIELD;
	} else if (h->dst >= nodes) {
		return FAB_E_NODE;
	} else if (h->dst != me) {
		return FAB_E_NOTME;
	}
	switch (h->type) {
	case FAB_ACK:
	case FAB_PROBE:
		if (h->len != 0)
			return FAB_E_FIELD;
		break;
	case FAB_HELLO:
		/* A unicast one may be padded (the path's probe, wire.h). */
		if (h->len < sizeof(struct fab_hello) ||
		    (h->len > sizeof(struct fab_hello) && h->dst == FAB_BROADCAST))
			return FAB_E_FIELD;
		break;
	case FAB_DATA:
	case FAB_RAW:
		if (h->proto == 0)
			return FAB_E_FIELD;
		break;
	}
	*payload = fh + FAB_HDR_LEN;
	return FAB_OK;
}

enum fab_err fab_parse_full(const uint8_t *frame, size_t n, int me, int nodes, int lossless,
			    int keyed, struct fab_hdr *h, const uint8_t **payload)
{
	enum fab_err e = parse_head(frame, n, h);

	return e != FAB_OK ? e : parse_checks(frame, n, me, nodes, lossless, keyed, h, payload);
}

void fab_mcast_mac(uint8_t mac[6], uint64_t group)
{
	uint32_t g = (uint32_t)(group ^ group >> 32);

	/* Locally administered, multicast; the group folded into the last three bytes. */
	mac[0] = 0x03;
	mac[1] = 0x4e;
	mac[2] = 0x4f;
	mac[3] = (uint8_t)(g ^ g >> 24);
	mac[4] = (uint8_t)(g >> 8);
	mac[5] = (uint8_t)(g >> 16 ^ g);
}

size_t fab_build_mcast(uint8_t *frame, const uint8_t src_mac[6], uint64_t group, int src, uint8_t proto,
		       const struct fab_mcast_member *m, unsigned n, size_t len)
{
	uint8_t *fh = frame + FAB_ETH_HLEN;
	struct fab_mcast_head mh = { (uint8_t)n, 0, (uint16_t)len };
	size_t plen = sizeof mh + n * sizeof *m + len;
	struct fab_hdr h = { 0 };

	fab_mcast_mac(frame, group);
	memcpy(frame + 6, src_mac, 6);
	frame[12] = 0x88;
	frame[13] = 0xb5;
	h.version = FAB_VERSION;
	h.type = FAB_MCAST;
	h.proto = proto;
	h.src = (uint16_t)src;
	h.dst = FAB_BROADCAST;
	h.len = (uint16_t)plen;
	memcpy(fh + FAB_HDR_LEN, &mh, sizeof mh);
	memcpy(fh + FAB_HDR_LEN + sizeof mh, m, n * sizeof *m);
	memcpy(fh, &h, sizeof h);
	h.crc = frame_crc(fh, plen);
	memcpy(fh, &h, sizeof h);
	return FAB_ETH_HLEN + FAB_HDR_LEN + plen;
}

enum fab_err fab_parse_mcast(const uint8_t *frame, size_t n, int me, int nodes, struct fab_hdr *h,
			     const uint8_t **msg)
{
	const uint8_t *fh = frame + FAB_ETH_HLEN;
	struct fab_mcast_head mh;
	struct fab_hdr w;
	enum fab_err e = parse_head(frame, n, &w);

	if (e != FAB_OK)
		return e;
	if (w.type != FAB_MCAST)
		return FAB_E_TYPE;
	if ((size_t)w.len > n - FAB_ETH_HLEN - FAB_HDR_LEN || w.len < sizeof mh)
		return FAB_E_LEN;
	if (w.flags & FAB_F_MAC)
		return FAB_E_KEY;
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	if (frame_crc(fh, w.len) != w.crc)
		return FAB_E_CRC;
#endif
	if (w.flags || w.dst != FAB_BROADCAST || w.session || w.seq || w.ack || w.sack || w.limit ||
	    w.proto == 0 || !(frame[0] & 1))
		return FAB_E_FIELD;
	if (w.src >= nodes || w.src == me)
		return FAB_E_NODE;
	memcpy(&mh, fh + FAB_HDR_LEN, sizeof mh);
	if (mh.n == 0 || mh.n > FAB_MAX_NODES ||
	    (size_t)w.len != sizeof mh + mh.n * sizeof(struct fab_mcast_member) + mh.len)
		return FAB_E_LEN;
	for (unsigned i = 0; i < mh.n; i++) {
		struct fab_mcast_member m;
		memcpy(&m, fh + FAB_HDR_LEN + sizeof mh + i * sizeof m, sizeof m);
		if (m.node != me)
			continue;
		*h = w;
		h->type = FAB_DATA;
		h->dst = (uint16_t)me;
		h->session = m.session;
		h->seq = m.seq;
		h->ack = m.ack;
		h->sack = m.sack;
		h->limit = m.limit;
		h->len = mh.len;
		h->crc = 0;
		*msg = fh + FAB_HDR_LEN + sizeof mh + mh.n * sizeof m;
		return FAB_OK;
	}
	return FAB_E_NOTME;
}

int fab_auto_find(const uint8_t (*view)[6], int n, const uint8_t mac[6])
{
	for (int i = 0; i < n; i++)
		if (memcmp(view[i], mac, 6) == 0)
			return i;
	return -1;
}

enum fab_err fab_parse_auto(const uint8_t *frame, size_t n, int keyed, struct fab_hdr *h,
			    struct fab_auto *a)
{
	const uint8_t *fh = frame + FAB_ETH_HLEN;
	size_t room;
	enum fab_err e = parse_head(frame, n, h);

	if (e != FAB_OK)
		return e;
	if (h->type != FAB_AUTO)
		return FAB_E_TYPE;
	room = n - FAB_ETH_HLEN - FAB_HDR_LEN;
	if (h->len != sizeof *a || h->len > room)
		return FAB_E_LEN;
	if (!keyed != !(h->flags & FAB_F_MAC))
		return FAB_E_KEY;
	if (keyed && (size_t)h->len + FAB_TRAILER_LEN > room)
		return FAB_E_LEN;
	if (h->flags & ~FAB_F_MAC)
		return FAB_E_FIELD;
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	if (!keyed && frame_crc(fh, h->len) != h->crc)
		return FAB_E_CRC;
#endif
	if (h->src != FAB_BROADCAST || h->dst != FAB_BROADCAST || h->session != 0 || h->proto != 0)
		return FAB_E_FIELD;
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	if (memcmp(frame, bcast, 6) != 0)
		return FAB_E_FIELD;
	memcpy(a, fh + FAB_HDR_LEN, sizeof *a);
	if (memcmp(a->mac, frame + 6, 6) != 0 || (a->mac[0] & 1))
		return FAB_E_FIELD;
	if (a->expect > FAB_MAX_NODES || a->nview > FAB_MAX_NODES || a->heard > FAB_MAX_NODES ||
	    (a->expect && a->nview && a->nview != a->expect) || a->inc == 0 || a->nonce == 0 ||
	    a->necho > FAB_MAX_NODES)
		return FAB_E_FIELD;
	for (int i = 0; i < a->nview; i++) {
		if (a->view[i][0] & 1)
			return FAB_E_FIELD;
		if (i && memcmp(a->view[i - 1], a->view[i], 6) >= 0)
			return FAB_E_FIELD;
	}
	if (a->nview && fab_auto_find((const uint8_t (*)[6])a->view, a->nview, a->mac) < 0)
		return FAB_E_FIELD;
	return FAB_OK;
}

/* The tag of a keyed frame: header (as sent, crc 0), payload, the 64-bit counter. */
static uint64_t frame_tag(const struct sipkey *k, const uint8_t *fh, size_t len, uint64_t ctr)
{
	return siphash_word(k, fh, FAB_HDR_LEN + len, ctr);
}

size_t fab_build(uint8_t *frame, const uint8_t dst_mac[6], const uint8_t src_mac[6],
		 const struct fab_hdr *hdr)
{
	return fab_build_sealed(frame, dst_mac, src_mac, hdr, NULL);
}

size_t fab_build_sealed(uint8_t *frame, const uint8_t dst_mac[6], const uint8_t src_mac[6],
			const struct fab_hdr *hdr, struct fab_seal *seal)
{
	uint8_t *fh = frame + FAB_ETH_HLEN;
	struct fab_hdr h = *hdr;

	memcpy(frame, dst_mac, 6);
	memcpy(frame + 6, src_mac, 6);
	frame[12] = 0x88;
	frame[13] = 0xb5;
	h.version = FAB_VERSION;
	h.crc = 0;
	if (seal) {
		struct fab_trailer t;

		h.flags = (uint8_t)((h.flags & ~FAB_F_NOCRC) | FAB_F_MAC);
		memcpy(fh, &h, sizeof h);
		t.ctr = (uint32_t)++seal->ctr;
		t.tag = frame_tag(&seal->key, fh, h.len, seal->ctr);
		memcpy(fh + FAB_HDR_LEN + h.len, &t, sizeof t);
		return FAB_ETH_HLEN + FAB_HDR_LEN + h.len + FAB_TRAILER_LEN;
	}
	h.flags &= (uint8_t)~FAB_F_MAC;
	memcpy(fh, &h, sizeof h);
	if (!(h.flags & FAB_F_NOCRC)) {
		h.crc = frame_crc(fh, h.len);
		memcpy(fh + offsetof(struct fab_hdr, crc), &h.crc, 4);
	}
	return FAB_ETH_HLEN + FAB_HDR_LEN + h.len;
}

void fab_reseal(uint8_t *frame)
{
	uint8_t *fh = frame + FAB_ETH_HLEN;
	struct fab_hdr h;
	uint32_t c;

	memcpy(&h, fh, sizeof h);
	if (h.flags & FAB_F_NOCRC)
		return;
	c = frame_crc(fh, h.len);
	memcpy(fh + offsetof(struct fab_hdr, crc), &c, 4);
}

uint16_t fab_pair_tag(uint64_t src_inc, uint64_t dst_inc)
{
	uint64_t x = src_inc * 0x9e3779b97f4a7c15ULL ^ (dst_inc + 0x632be59bd9b4e019ULL);
	uint16_t t;

	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 32;
	t = (uint16_t)(x ^ x >> 16 ^ x >> 48);
	return t ? t : 1;
}

/* The 64-bit counter nearest u's window top with the trailer's low bits (RFC 4303 A.2). */
static inline uint64_t trailer_ctr(const struct fab_unseal *u, const struct fab_trailer *t)
{
	return u->top + (uint64_t)(int64_t)(int32_t)(t->ctr - (uint32_t)u->top);
}

/* Was ctr taken already, or is it below u's window? */
static inline int window_seen(const struct fab_unseal *u, uint64_t ctr)
{
	uint64_t d;

	if (ctr > u->top)
		return 0;
	d = u->top - ctr;
	return d >= 64 || (u->seen >> d & 1);
}

enum fab_err fab_unseal_check(const struct fab_unseal *u, const uint8_t *frame, const struct fab_hdr *h,
			      uint64_t *ctr_out)
{
	const uint8_t *fh = frame + FAB_ETH_HLEN;
	struct fab_trailer t;
	uint64_t ctr;

	memcpy(&t, fh + FAB_HDR_LEN + h->len, sizeof t);
	ctr = trailer_ctr(u, &t);
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	if (frame_tag(&u->key, fh, h->len, ctr) != t.tag)
		return FAB_E_MAC;
#else
	/* Fuzzing: past the tag, as past the CRC, to reach the window and beyond. */
	(void)frame_tag(&u->key, fh, h->len, ctr);
#endif
	*ctr_out = ctr;
	return window_seen(u, ctr) ? FAB_E_REPLAY : FAB_OK;
}

__attribute__((cold, noinline)) int fab_unseal_seen(const struct fab_unseal *u, const uint8_t *frame,
						    const struct fab_hdr *h, uint64_t *ctr)
{
	struct fab_trailer t;

	memcpy(&t, frame + FAB_ETH_HLEN + FAB_HDR_LEN + h->len, sizeof t);
	*ctr = trailer_ctr(u, &t);
	return window_seen(u, *ctr);
}

void fab_unseal_take(struct fab_unseal *u, uint64_t ctr)
{
	uint64_t d;

	if (ctr > u->top) {
		d = ctr - u->top;
		u->seen = d >= 64 ? 1 : u->seen << d | 1;
		u->top = ctr;
		return;
	}
	d = u->top - ctr;
	if (d < 64)
		u->seen |= 1ULL << d;
}

enum fab_err fab_unseal(struct fab_unseal *u, const uint8_t *frame, const struct fab_hdr *h,
			int window)
{
	uint64_t ctr;
	enum fab_err e = fab_unseal_check(u, frame, h, &ctr);

	if (e == FAB_E_MAC || !window)
		return e == FAB_E_MAC ? e : FAB_OK;
	if (e == FAB_OK)
		fab_unseal_take(u, ctr);
	return e;
}

int fab_key_from_text(struct sipkey *k, const char *text, const char *cluster)
{
	char salt[32 + FAB_CLUSTER_MAX];
	uint8_t key[16];

	snprintf(salt, sizeof salt, "NOW cluster key: %s", cluster ? cluster : FAB_CLUSTER_DEFAULT);
	if (scrypt(text, strlen(text), salt, strlen(salt), FAB_KEY_N, FAB_KEY_R, 1, key, sizeof key) < 0)
		return -1;
	memcpy(&k->k0, key, 8);
	memcpy(&k->k1, key + 8, 8);
	memset(key, 0, sizeof key);
	return 0;
}

void fab_pair_key(struct sipkey *out, const struct sipkey *cluster, int src, uint64_t src_inc,
		  int dst, uint64_t dst_inc)
{
	uint64_t m[4] = { 0x2d72696170574f4eULL /* "NOWpair-" */,
			  (uint64_t)(uint16_t)src << 16 | (uint16_t)dst, src_inc, dst_inc };

	out->k0 = siphash(cluster, m, sizeof m);
	m[0] ^= 1;
	out->k1 = siphash(cluster, m, sizeof m);
}
