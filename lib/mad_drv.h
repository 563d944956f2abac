/*
 * Helpers the Madeleine drivers share (not part of the interface).
 */
#ifndef LIB_MAD_DRV_H
#define LIB_MAD_DRV_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lib/mad.h"

/*
 * A cursor over a vector list: the byte stream a message (or the part of
 * it a receiver posted) makes, walked piece by piece.
 */
struct iovcur {
	const struct mad_iovec *iov;
	int count, i;
	size_t off;			/* into iov[i] */
};

static inline void iovcur_init(struct iovcur *c, const struct mad_iovec *iov, int count)
{
	c->iov = iov;
	c->count = count;
	c->i = 0;
	c->off = 0;
	while (c->i < c->count && c->iov[c->i].len == 0)
		c->i++;
}

/* The next contiguous piece of at most max bytes; its length (0 at the end). */
static inline size_t iovcur_peek(const struct iovcur *c, uint8_t **p, size_t max)
{
	if (c->i >= c->count)
		return 0;
	size_t n = c->iov[c->i].len - c->off;
	*p = (uint8_t *)c->iov[c->i].base + c->off;
	return n < max ? n : max;
}

static inline void iovcur_skip(struct iovcur *c, size_t n)
{
	while (n && c->i < c->count) {
		size_t k = c->iov[c->i].len - c->off;
		if (n < k) {
			c->off += n;
			return;
		}
		n -= k;
		c->i++;
		c->off = 0;
	}
	while (c->i < c->count && c->iov[c->i].len == c->off) {
		c->i++;
		c->off = 0;
	}
}

/* Copy n bytes out of the stream into dst; return how many there were. */
static inline size_t iovcur_gather(struct iovcur *c, void *dst, size_t n)
{
	uint8_t *d = dst, *p;
	size_t done = 0, k;

	while (done < n && (k = iovcur_peek(c, &p, n - done)) > 0) {
		memcpy(d + done, p, k);
		iovcur_skip(c, k);
		done += k;
	}
	return done;
}

/* Copy n bytes from src into the stream; return how many fitted. */
static inline size_t iovcur_scatter(struct iovcur *c, const void *src, size_t n)
{
	const uint8_t *s = src;
	uint8_t *p;
	size_t done = 0, k;

	while (done < n && (k = iovcur_peek(c, &p, n - done)) > 0) {
		memcpy(p, s + done, k);
		iovcur_skip(c, k);
		done += k;
	}
	return done;
}

static inline size_t iov_total(const struct mad_iovec *iov, int count)
{
	size_t t = 0;

	for (int i = 0; i < count; i++)
		t += iov[i].len;
	return t;
}

/* How long a driver waits on a peer before it calls it gone. */
#define MAD_PEER_TIMEOUT_NS 30000000000ULL

#endif
