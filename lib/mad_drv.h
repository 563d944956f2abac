/*
 * Helpers the Madeleine drivers share (not part of the interface).
 */
#ifndef LIB_MAD_DRV_H
#define LIB_MAD_DRV_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kernel/sync.h"
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

/*
 * The message a stream driver is receiving: its source, how much of its
 * body came so far, and the part the receiver posted (recv_body_post),
 * filled as the stream brings it.
 */
struct mad_rxbody {
	int open, src;
	size_t body_len, body_got;
	struct mad_iovec iov[MAD_MAX_PACKS];
	struct iovcur cur;
	size_t part_left;
	int failed;			/* the driver lost part of the body: the error its posts and polls return */
};

/* A header from src announced body_len bytes. */
static inline void rxbody_start(struct mad_rxbody *rx, int src, size_t body_len)
{
	rx->src = src;
	rx->body_len = body_len;
	rx->body_got = 0;
	rx->open = body_len != 0;
	rx->failed = 0;
}

/* The message being received can never be whole (its stream broke): fail its body with err. */
static inline void rxbody_fail(struct mad_rxbody *rx, int err)
{
	rx->failed = err;
	rx->open = 0;
	rx->part_left = 0;
}

/* recv_header_poll's success: a header of full bytes from src, announcing body_len bytes.  1. */
static inline int rxbody_taken(struct mad_rxbody *rx, int src, size_t body_len, size_t full, int *srcp,
			       size_t *hdr_len)
{
	*hdr_len = full;
	*srcp = src;
	rxbody_start(rx, src, body_len);
	return 1;
}

/* recv_body_post: check the part against the message, and aim the cursor at it. */
static inline int rxbody_post(struct mad_rxbody *rx, int src, const struct mad_iovec *iov, int count)
{
	size_t len = iov_total(iov, count);

	if (rx->failed)
		return rx->failed;
	if (!rx->open || src != rx->src || count > MAD_MAX_PACKS || rx->body_got + len > rx->body_len)
		return -EINVAL;
	memcpy(rx->iov, iov, sizeof iov[0] * (size_t)count);
	iovcur_init(&rx->cur, rx->iov, count);
	rx->part_left = len;
	return 0;
}

/* n bytes went to the cursor's place. */
static inline void rxbody_took(struct mad_rxbody *rx, size_t n)
{
	iovcur_skip(&rx->cur, n);
	rx->part_left -= n;
	rx->body_got += n;
}

/* After a pull: the message ends once its whole body is in. */
static inline void rxbody_settle(struct mad_rxbody *rx)
{
	if (rx->body_got == rx->body_len && !rx->part_left)
		rx->open = 0;
}

/* recv_body_poll: 1 when the posted part is in, 0 if not yet, -EHOSTDOWN if it never will be. */
static inline int rxbody_poll(struct mad_rxbody *rx, void (*pull)(void), int (*peer_dead)(int))
{
	if (rx->part_left) {
		pull();
		if (rx->failed)
			return rx->failed;
		if (rx->part_left && peer_dead(rx->src)) {
			rx->open = 0;
			rx->part_left = 0;
			return -EHOSTDOWN;
		}
	}
	return rx->part_left == 0;
}

/*
 * recv_header_post, recv_body_post and recv_body_poll of a driver whose
 * body arrives as a byte stream: rx is its struct mad_rxbody, pull()
 * reads what arrived into the posted part.
 */
#define MAD_STREAM_BODY(prefix, rx, pull)                                                       \
	static int prefix##_recv_header_post(void)                                              \
	{                                                                                       \
		return (rx).open ? -EBUSY : 0;                                                  \
	}                                                                                       \
	static int prefix##_recv_body_post(int src, const struct mad_iovec *iov, int count)     \
	{                                                                                       \
		int r = rxbody_post(&(rx), src, iov, count);                                    \
		if (r == 0)                                                                     \
			pull();                                                                 \
		return r;                                                                       \
	}                                                                                       \
	static int prefix##_recv_body_poll(int src)                                             \
	{                                                                                       \
		(void)src;                                                                      \
		return rxbody_poll(&(rx), pull, fabric_peer_dead);                               \
	}

/*
 * A ring driver's start: make(i) for every other node i (what node i
 * sends into: allocated, exported), then, once every one is made,
 * join(i) (node i's, imported; join may be NULL).  The first error stops
 * it: stop() undoes what was done and the error is returned.  0 or
 * negative errno.
 */
int mad_peers_start(int nodes, int self, int (*make)(int peer), int (*join)(int peer), void (*stop)(void));

/* Every peer of the table tab (MAX_NODES entries): drop(p), and the entry cleared. */
#define MAD_PEERS_STOP(tab, drop)                                                          \
	do {                                                                               \
		for (int i_ = 0; i_ < MAX_NODES; i_++)                                     \
			if ((tab)[i_]) {                                                   \
				drop((tab)[i_]);                                           \
				(tab)[i_] = NULL;                                          \
			}                                                                  \
	} while (0)

/*
 * The two segments each end of a ring driver exports to the other (its
 * ring, its control) and the other's two it imports (lib/mad_stream.c).
 * Names are printf formats of one node number: the peer's when
 * exporting, our own when importing.  Errors: negative errno.
 */
struct mad_segpair {
	int ring_seg, ctl_seg;		/* ours, for the peer */
	int ring_rd, ctl_rd;		/* the peer's, for us */
};
void mad_segpair_init(struct mad_segpair *s);
int mad_segpair_export(struct mad_segpair *s, const char *ring_fmt, const char *ctl_fmt, int peer, void *ring,
		       size_t ring_len, void *ctl, size_t ctl_len);
int mad_segpair_import(struct mad_segpair *s, const char *ring_fmt, const char *ctl_fmt, int peer, int self);
void mad_segpair_release(struct mad_segpair *s);

/*
 * The receive side's wait: kick (from a notification) wakes it; sleep
 * returns once ready() holds, the link was polled and something came, or
 * after timeout_ns.  abort (a driver's kick, mad_recv_kick) makes the
 * sleep return at once, or the next one not wait if none is under way.
 */
struct mad_rxwait {
	struct waitq wq;
	volatile int kick;
	volatile int abort;
};
#define MAD_RXWAIT_INIT { WAITQ_INIT, 0, 0 }
static inline void mad_rxwait_kick(struct mad_rxwait *w)
{
	w->kick = 1;
	waitq_wake_all(&w->wq);
}
static inline void mad_rxwait_abort(struct mad_rxwait *w)
{
	w->abort = 1;
	mad_rxwait_kick(w);
}
void mad_rxwait_sleep(struct mad_rxwait *w, int (*ready)(void), uint64_t timeout_ns);

/* How long a driver waits on a peer before it calls it gone. */
#define MAD_PEER_TIMEOUT_NS 30000000000ULL

#endif
