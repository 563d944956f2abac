/*
 * libFuzzer target: Madeleine's receive side (lib/mad.c) as a stream
 * driver feeds it: the wire header and its pack descriptor (debug mode;
 * none: a message of data only) from any peer, then a receiving handler
 * that mirrors the packs or misuses the interface, plain or through RPC
 * dispatch.  A message of data only has nothing to mirror: its handler
 * unpacks any modes and lengths, and the model places each where the
 * sender's rule puts such a pack and says whether the message has it.
 *
 * The fake transport (this file) delivers each message's header bytes as
 * the input gives them (up to MAD_HDR_MAX) and, for a header that is
 * valid by an independent model of mad.h's wire format, a body of
 * body_len bytes whose byte i is a function of i and the message number,
 * through the shared receive bookkeeping of mad_drv.h.
 *
 * Input, repeated: flags (bit 0: serve it as an RPC), a 16-bit header
 * length and the header bytes, the length of the handler's steps and the
 * steps: each one byte (bits 0-1: mirror the next pack / wrong length / other
 * receive mode / any mode and length; bit 2: receive_data after it;
 * bit 3: through unpack_int or unpack_u64 where the length allows; bit 4:
 * a NULL destination; bit 5: a nested receive first), some with operands.
 *
 * Checked, __builtin_trap() on a broken promise:
 *  - a header is accepted exactly when the model accepts it, and a refused
 *    one runs no handler and reads no body;
 *  - the stream stays in step: after every receive, whatever the handler
 *    did, exactly the message's body was read, never a byte more;
 *  - EXPRESS data is there when its unpack returns, CHEAPER data after
 *    receive_data, each equal to what the message carried;
 *  - a receive whose handler mirrored every pack and then called
 *    receive_data returns 0; any misuse returns -EPROTO (-ENOSYS for an
 *    unknown service) and counts in mad_stats; destinations are exactly
 *    the unpack's length (AddressSanitizer sees a byte beyond).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/sync.h"
#include "lib/mad.h"
#include "lib/mad_drv.h"
#include "tests/lib/mad/mad_host.h"
#include "tests/host/quiet.h"	/* the generic layer reports misuse on the console */

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)
#define BODY_MAX (1u << 16)		/* the fake transport's largest body */
#define SERVICE 3
#define SRC 1

/* --- what lib/mad.c needs from the kernel --------------------------------- */

int node_id = 0, num_nodes = 2;

/* --- the input ---------------------------------------------------------------- */

struct cursor {
	const uint8_t *p;
	size_t left;
};

static struct cursor in, prog;		/* the whole input; this message's handler steps */

/* nbytes little-endian from c; zeros past its end. */
static unsigned take_from(struct cursor *c, unsigned nbytes)
{
	unsigned v = 0;

	for (unsigned i = 0; i < nbytes; i++) {
		v |= (unsigned)(c->left ? *c->p : 0) << (8 * i);
		if (c->left) {
			c->p++;
			c->left--;
		}
	}
	return v;
}

static unsigned take(unsigned nbytes)
{
	return take_from(&in, nbytes);
}

static unsigned take_op(unsigned nbytes)
{
	return take_from(&prog, nbytes);
}

/* --- the model of the wire format (mad.h) ---------------------------------------- */

static uint8_t body_byte(unsigned msg, size_t i)
{
	return (uint8_t)(i * 7 + msg * 13 + (i >> 8) + (i >> 16));
}

static int model_hdr(const uint8_t *b, size_t len, struct mad_wire_hdr *out)
{
	struct mad_wire_hdr h;
	uint64_t ex = 0, body = 0;

	if (len < sizeof h)
		return 0;
	memcpy(&h, b, sizeof h);
	if (h.magic != MAD_MAGIC || h.npacks > MAD_MAX_PACKS || h.express_len > MAD_EXPRESS_MAX ||
	    len != sizeof h + 4u * h.npacks + h.express_len)
		return 0;
	if (h.npacks == 0) {		/* data only: any lengths */
		*out = h;
		return 1;
	}
	for (unsigned i = 0; i < h.npacks; i++) {
		uint32_t w;
		memcpy(&w, b + sizeof h + 4 * i, 4);
		unsigned mode = w >> 24, snd = mode & 0x0f, rcv = mode & 0x70;
		if (mode & 0x0c || snd == 3 || (rcv != 0 && rcv != 0x10))
			return 0;
		if ((mode & 0x80) && rcv != 0x10)
			return 0;
		if (rcv == 0x10 && !(mode & 0x80))
			ex += w & 0xffffff;
		else
			body += w & 0xffffff;
	}
	*out = h;
	return ex == h.express_len && body == h.body_len;
}

/* --- the fake transport --------------------------------------------------------- */

static uint8_t msg_hdr[MAD_HDR_MAX];
static size_t msg_hdr_len;
static int msg_ready;			/* a message waits for recv_header_poll */
static int msg_valid;
static struct mad_wire_hdr msg_h;
static unsigned msg_no;
static struct mad_rxbody rx;
static size_t headers_read;

static int fz_init(int nodes, int self)
{
	(void)nodes, (void)self;
	return 0;
}

static void fz_exit(void) {}

static int fz_send_post(int dest, const struct mad_iovec *iov, int count)
{
	(void)dest, (void)iov, (void)count;
	return -ENOTSUP;
}

static int fz_send_poll(int dest)
{
	(void)dest;
	return 1;
}

static int fz_recv_header_post(void)
{
	CHECK(!rx.open);		/* the last body was read to its end */
	return 0;
}

static int fz_recv_header_poll(int *src, void *hdr, size_t hdr_max, size_t *hdr_len)
{
	CHECK(!rx.open);
	if (!msg_ready)
		return 0;
	msg_ready = 0;
	CHECK(hdr_max >= msg_hdr_len);
	memcpy(hdr, msg_hdr, msg_hdr_len);
	*hdr_len = msg_hdr_len;
	*src = SRC;
	headers_read++;
	/* A real stream driver checks the header before it trusts body_len. */
	rxbody_start(&rx, SRC, msg_valid ? msg_h.body_len : 0);
	return 1;
}

static void pull(void)
{
	while (rx.part_left) {
		uint8_t *dst = NULL;
		size_t n = iovcur_peek(&rx.cur, &dst, rx.part_left);
		CHECK(n > 0);
		for (size_t i = 0; i < n; i++)
			dst[i] = body_byte(msg_no, rx.body_got + i);
		rxbody_took(&rx, n);
	}
	rxbody_settle(&rx);
}

static int fz_recv_body_post(int src, const struct mad_iovec *iov, int count)
{
	int r = rxbody_post(&rx, src, iov, count);

	CHECK(r == 0);			/* never more than the message has, never out of turn */
	pull();
	return 0;
}

static int never_dead(int node)
{
	(void)node;
	return 0;
}

static int fz_recv_body_poll(int src)
{
	(void)src;
	return rxbody_poll(&rx, pull, never_dead);
}

static void fz_wait(uint64_t ns)
{
	(void)ns;
}

static const struct mad_driver mad_driver_req = {
	"req", fz_init, fz_exit, fz_send_post, fz_send_poll, fz_recv_header_post,
	fz_recv_header_poll, fz_recv_body_post, fz_recv_body_poll, fz_wait, NULL,
};
MAD_DRIVER_REGISTER(mad_driver_req);

/* --- the receiving handler ------------------------------------------------------ */

struct pending {			/* CHEAPER data, checked after receive_data */
	uint8_t *buf;
	size_t len, body_off;
};

static struct {
	unsigned idx;			/* next pack of the descriptor */
	size_t ex_off, body_off;	/* where the next pack's data lies */
	int faithful;			/* every unpack so far mirrored its pack */
	int data_done, data_ok;
	struct pending pend[MAD_MAX_PACKS + 8];
	unsigned npend;
	void *bufs[256];
	unsigned nbufs;
} hs;

static void *buf_new(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		abort();
	CHECK(hs.nbufs < sizeof hs.bufs / sizeof hs.bufs[0]);
	hs.bufs[hs.nbufs++] = p;
	return p;
}

static uint32_t desc(unsigned i)
{
	uint32_t w;

	memcpy(&w, msg_hdr + sizeof(struct mad_wire_hdr) + 4 * i, 4);
	return w;
}

static struct mad_channel *chan;

static int nested(int src)
{
	(void)src;
	__builtin_trap();		/* a nested receive never runs a handler */
}

/* One of the six modes (mad.h): a send mode of 0-2, a receive mode of 0 or EXPRESS. */
static int model_mode_ok(int mode)
{
	return (mode & ~(0x03 | MAD_RECV_EXPRESS)) == 0 && (mode & 3) != 3;
}

static int unpack_as(unsigned op, int mode, uint8_t *dst, size_t n)
{
	if (op & 0x10 && n)
		return mad_recvbuf_unpack_byte(mode, NULL, n);
	if (op & 8 && n % 8 == 0)
		return mad_recvbuf_unpack_u64(mode, (uint64_t *)dst, n / 8);
	if (op & 8 && n % 4 == 0)
		return mad_recvbuf_unpack_int(mode, (int *)dst, n / 4);
	return mad_recvbuf_unpack_byte(mode, dst, n);
}

/*
 * A message of data only: the unpack of mode and n lies where the sender
 * put such a pack (EXPRESS in the header while the header's EXPRESS data
 * stays within MAD_EXPRESS_MAX, else the body), and is refused exactly
 * when the message has not that much left there.
 */
static void step_data_only(unsigned op)
{
	static const int modes6[6] = { 0, 1, 2, MAD_RECV_EXPRESS, MAD_RECV_EXPRESS | 1, MAD_RECV_EXPRESS | 2 };
	int mode = (op & 3) == 3 ? (int)take_op(1) : modes6[take_op(1) % 6];
	size_t n = (op & 3) == 0 ? take_op(1) : take_op(2);
	uint8_t *dst = buf_new(n);
	int r = unpack_as(op, mode, dst, n);

	/* No more unpacks than a message has packs at most (MAD_MAX_PACKS). */
	if (!hs.faithful || hs.data_done || (op & 0x10 && n) || !model_mode_ok(mode) || hs.idx >= MAD_MAX_PACKS) {
		CHECK(r < 0);
		hs.faithful = 0;
		return;
	}
	if ((mode & MAD_RECV_EXPRESS) && hs.ex_off + n <= MAD_EXPRESS_MAX) {
		if (n > msg_h.express_len - hs.ex_off) {
			CHECK(r == -EPROTO);
			hs.faithful = 0;
			return;
		}
		CHECK(r == 0);
		CHECK(memcmp(dst, msg_hdr + sizeof msg_h + hs.ex_off, n) == 0);
		hs.ex_off += n;
		hs.idx++;
		return;
	}
	if (n > msg_h.body_len - hs.body_off) {
		CHECK(r == -EPROTO);
		hs.faithful = 0;
		return;
	}
	CHECK(r == 0);
	if (mode & MAD_RECV_EXPRESS)
		for (size_t i = 0; i < n; i++)
			CHECK(dst[i] == body_byte(msg_no, hs.body_off + i));
	hs.pend[hs.npend++] = (struct pending){ dst, n, hs.body_off };
	hs.body_off += n;
	hs.idx++;
}

static void step(void)
{
	unsigned op = take_op(1);
	int mode, r;
	size_t n;
	int mirror = 0;
	uint32_t w = hs.idx < msg_h.npacks ? desc(hs.idx) : 0;

	if (op & 0x20) {
		size_t before = headers_read;
		CHECK(mad_recvbuf_receive_on(chan, nested, 10) == -EPROTO);
		CHECK(headers_read == before);
		hs.faithful = 0;
	}
	if (msg_h.npacks == 0) {
		step_data_only(op);
		goto data;
	}
	switch (op & 3) {
	case 0:
		mode = (int)(w >> 24) & ~MAD_DESC_INBODY;
		n = w & 0xffffff;
		mirror = hs.idx < msg_h.npacks;
		break;
	case 1:
		mode = (int)(w >> 24) & ~MAD_DESC_INBODY;
		n = (w & 0xffffff) + (size_t)(int8_t)take_op(1);
		n = n > BODY_MAX ? 1 : n;	/* below zero: one byte, not 16 MiB */
		mirror = hs.idx < msg_h.npacks && n == (w & 0xffffff);
		break;
	case 2:
		mode = ((int)(w >> 24) & ~MAD_DESC_INBODY) ^ MAD_RECV_EXPRESS;
		n = w & 0xffffff;
		break;
	default:
		mode = (int)take_op(1);
		n = take_op(2);
		mirror = hs.idx < msg_h.npacks && n == (w & 0xffffff) &&
			 mode == ((int)(w >> 24) & ~MAD_DESC_INBODY);
		break;
	}
	if (hs.data_done || (op & 0x10 && n))
		mirror = 0;
	uint8_t *dst = buf_new(n);
	r = unpack_as(op, mode, dst, n);
	if (!mirror) {
		hs.faithful = 0;
	} else if (hs.faithful) {
		CHECK(r == 0);
		if ((mode & MAD_RECV_EXPRESS) && !((w >> 24) & MAD_DESC_INBODY)) {
			/* In the header: here as the unpack returns. */
			CHECK(memcmp(dst, msg_hdr + sizeof msg_h + 4u * msg_h.npacks + hs.ex_off, n) == 0);
			hs.ex_off += n;
		} else {
			if (mode & MAD_RECV_EXPRESS)	/* in the body: here as the unpack returns */
				for (size_t i = 0; i < n; i++)
					CHECK(dst[i] == body_byte(msg_no, hs.body_off + i));
			hs.pend[hs.npend++] = (struct pending){ dst, n, hs.body_off };
			hs.body_off += n;
		}
		hs.idx++;
	}
data:
	if (op & 4 && !hs.data_done) {
		/* Described: every pack mirrored; data only: every byte of the message taken. */
		int faithful = hs.faithful && (msg_h.npacks ? hs.idx == msg_h.npacks :
					       hs.ex_off == msg_h.express_len && hs.body_off == msg_h.body_len);
		r = mad_recvbuf_receive_data();
		hs.data_done = 1;
		hs.data_ok = r == 0;
		if (faithful) {
			CHECK(r == 0);
			for (unsigned i = 0; i < hs.npend; i++)
				for (size_t k = 0; k < hs.pend[i].len; k++)
					CHECK(hs.pend[i].buf[k] == body_byte(msg_no, hs.pend[i].body_off + k));
		} else {
			hs.faithful = 0;
			CHECK(r == -EPROTO);
		}
	}
}

static int program(int src)
{
	CHECK(src == SRC);
	for (unsigned i = 0; i < 80 && prog.left; i++)
		step();
	if (!hs.data_done)
		hs.faithful = 0;	/* the generic layer calls receive_data itself */
	return 0;
}

static int service(int src)
{
	hs.idx = 1;			/* dispatch took the service number */
	if (msg_h.npacks && desc(0) >> 24 & MAD_DESC_INBODY)
		hs.body_off = 4;
	else
		hs.ex_off = 4;
	return program(src);
}

/* --- the target ------------------------------------------------------------------- */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mad_channel *ch = chan;

	if (!ch) {
		ch = chan = mad_open("req");
		CHECK(ch);
		CHECK(mad_rpc_register(SERVICE, service) == 0);
	}
	in.p = data;
	in.left = size;
	for (msg_no = 0; in.left && msg_no < 32; msg_no++) {
		unsigned flags = take(1);
		size_t hl = take(2) % (MAD_HDR_MAX + 1);
		struct mad_stats before, after;
		int r;

		memset(msg_hdr, 0, sizeof msg_hdr);
		for (size_t i = 0; i < hl; i++)
			msg_hdr[i] = (uint8_t)take(1);
		msg_hdr_len = hl;
		prog.left = take(1);
		prog.p = in.p;
		prog.left = prog.left < in.left ? prog.left : in.left;
		in.p += prog.left;
		in.left -= prog.left;
		memset(&msg_h, 0, sizeof msg_h);
		msg_valid = model_hdr(msg_hdr, hl, &msg_h);
		if (msg_valid && msg_h.body_len > BODY_MAX)
			continue;		/* larger than this transport carries */
		msg_ready = 1;
		memset(&hs, 0, sizeof hs);
		hs.faithful = 1;
		size_t before_hdrs = headers_read;
		mad_stats(&before);
		int rpc = flags & 1;
		if (rpc) {
			r = mad_rpc_serve_one_on(ch, 1000);
		} else {
			r = mad_recvbuf_receive_on(ch, program, 1000);
		}
		mad_stats(&after);
#ifdef FZ_DEBUG
		fprintf(stderr, "msg %u valid %d rpc %d r %d faithful %d data_ok %d\n", msg_no, msg_valid, rpc, r,
			hs.faithful, hs.data_ok);
#endif
		CHECK(headers_read == before_hdrs + 1);
		CHECK(!msg_ready);
		CHECK(!rx.open);				/* the stream is in step */
		if (!msg_valid) {
			CHECK(r == -EPROTO && hs.nbufs == 0);	/* no handler ran */
			CHECK(after.misuse == before.misuse + 1);
		} else if (rpc) {
			uint32_t svc = 0;
			uint32_t w0 = msg_h.npacks ? desc(0) : 0;
			/* Data only: the 4 bytes are the header's first EXPRESS bytes, if it has them. */
			int svc_ok = msg_h.npacks ? (w0 & ~((uint32_t)MAD_DESC_INBODY << 24)) ==
							    ((uint32_t)(MAD_SND_SAFER | MAD_RECV_EXPRESS) << 24 | 4)
						  : msg_h.express_len >= 4;
			if (svc_ok && (w0 >> 24 & MAD_DESC_INBODY))
				for (int i = 0; i < 4; i++)
					svc |= (uint32_t)body_byte(msg_no, (size_t)i) << (8 * i);
			else if (svc_ok)
				memcpy(&svc, msg_hdr + sizeof msg_h + 4u * msg_h.npacks, 4);
			if (!svc_ok)
				CHECK(r == -EPROTO && hs.nbufs == 0);
			else if (svc != SERVICE)
				CHECK(r == -ENOSYS && hs.nbufs == 0);
			else
				CHECK(hs.faithful ? r == 0 : r == -EPROTO);
		} else {
			CHECK(hs.faithful ? r == 0 : r == -EPROTO);
		}
		CHECK(after.received == before.received + (unsigned)hs.data_ok);
		CHECK(r != 0 || hs.data_ok);
		CHECK(r == 0 || after.misuse > before.misuse);
		for (unsigned i = 0; i < hs.nbufs; i++)
			free(hs.bufs[i]);
		hs.nbufs = 0;
	}
	return 0;
}
