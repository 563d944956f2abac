/*
 * Host unit tests of Madeleine's generic layer (lib/mad.c) over a loopback
 * driver: the header check, pack/unpack matching, the send and receive
 * modes of the madeleine paper 2.1.1 and 2.1.2, EXPRESS data beyond the
 * header, misuse detection and the stream staying in step after it, RPC
 * dispatch, and the vector cursor the drivers share.  The tests of
 * misuse run in the debug mode (messages carry their pack descriptor);
 * the tests of good messages run in both, and messages of data only
 * (section 2.1.2) are checked to carry no descriptor, with the misuse
 * their lengths show still refused.
 *
 * The loopback driver plays node 1: what node 0 sends to it comes back
 * as a message from node 1, byte for byte.  It checks that the generic
 * layer never reads a header while a body is still unread, and never
 * reads more body than the message has.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/host/unit.h"

#include "kernel/sync.h"
#include "lib/mad.h"
#include "lib/mad_drv.h"
#include "tests/lib/mad/mad_host.h"

/* --- what lib/mad.c needs from the kernel --------------------------------- */

int node_id = 0, num_nodes = 2;

/* malloc (linked with --wrap=malloc): fails while fail_malloc is set. */
static int fail_malloc;
void *__real_malloc(size_t n);
void *__wrap_malloc(size_t n)
{
	return fail_malloc ? NULL : __real_malloc(n);
}

/* --- the loopback driver ---------------------------------------------------- */

#define QMAX 64

struct rec {
	uint8_t *bytes;
	size_t hdr_len, len;
};

static struct rec q[QMAX];
static int qhead, qtail, sends;
static size_t body_off;		/* into the record being received */
static int in_body;		/* a header was taken and its body is not all read */
static int stream_errors;

static int lb_init(int nodes, int self)
{
	(void)nodes, (void)self;
	return 0;
}

static void lb_exit(void) {}

static int busy_posts;		/* send_post answers -EAGAIN this many times first */
static int waits;		/* send_wait calls */

static int lb_send_post(int dest, const struct mad_iovec *iov, int count)
{
	struct iovcur c;
	struct rec *r = &q[qtail % QMAX];

	if (busy_posts > 0) {
		busy_posts--;
		return -EAGAIN;		/* another message to dest under way: nothing taken */
	}

	assert_int_equal(dest, 1);
	r->len = iov_total(iov, count);
	r->hdr_len = iov[0].len;
	r->bytes = malloc(r->len + 1);
	iovcur_init(&c, iov, count);
	assert_int_equal(iovcur_gather(&c, r->bytes, r->len), r->len);
	qtail++;
	sends++;
	return 0;
}

static int lb_send_poll(int dest)
{
	(void)dest;
	return 1;
}

static int lb_recv_header_post(void)
{
	return 0;
}

static int lb_recv_header_poll(int *src, void *hdr, size_t max, size_t *len)
{
	if (in_body) {
		stream_errors++;	/* the previous body was left unread */
		in_body = 0;
		free(q[qhead % QMAX].bytes);
		qhead++;
	}
	if (qhead == qtail)
		return 0;
	struct rec *r = &q[qhead % QMAX];
	assert_true(r->hdr_len <= max);
	memcpy(hdr, r->bytes, r->hdr_len);
	*len = r->hdr_len;
	*src = 1;
	body_off = r->hdr_len;
	if (body_off == r->len) {
		free(r->bytes);
		qhead++;
	} else {
		in_body = 1;
	}
	return 1;
}

static int lb_recv_body_post(int src, const struct mad_iovec *iov, int count)
{
	struct rec *r = &q[qhead % QMAX];
	struct iovcur c;
	size_t n = iov_total(iov, count);

	assert_int_equal(src, 1);
	if (!in_body || body_off + n > r->len) {
		stream_errors++;
		return -EPROTO;
	}
	iovcur_init(&c, iov, count);
	iovcur_scatter(&c, r->bytes + body_off, n);
	body_off += n;
	if (body_off == r->len) {
		in_body = 0;
		free(r->bytes);
		qhead++;
	}
	return 0;
}

static int lb_recv_body_poll(int src)
{
	(void)src;
	return 1;
}

static void lb_wait(uint64_t ns)
{
	(void)ns;
}

static void lb_send_wait(int dest)
{
	(void)dest;
	waits++;
}

static const struct mad_driver mad_driver_tcp = {
	.name = "tcp",
	.init = lb_init,
	.exit = lb_exit,
	.send_post = lb_send_post,
	.send_poll = lb_send_poll,
	.send_wait = lb_send_wait,
	.recv_header_post = lb_recv_header_post,
	.recv_header_poll = lb_recv_header_poll,
	.recv_body_post = lb_recv_body_post,
	.recv_body_poll = lb_recv_body_poll,
	.wait = lb_wait,
};
MAD_DRIVER_REGISTER(mad_driver_tcp);

static int setup(void **state)
{
	(void)state;
	mad_set_debug(1);
	qhead = qtail = sends = 0;
	in_body = 0;
	stream_errors = 0;
	return mad_init("tcp");
}

/* Messages of data only: no pack descriptor (the default off the tests). */
static int setup_data_only(void **state)
{
	int r = setup(state);

	mad_set_debug(0);
	return r;
}

static int teardown(void **state)
{
	(void)state;
	assert_int_equal(qhead, qtail);		/* every message was read */
	assert_int_equal(stream_errors, 0);
	mad_exit();
	return 0;
}

static int receive(int (*h)(int))
{
	return mad_recvbuf_receive_timeout(h, 1000);
}

/* --- the header check and the matching --------------------------------------- */

static size_t make_hdr(uint8_t *b, int npacks, const uint32_t *desc, uint32_t ex, uint32_t body)
{
	struct mad_wire_hdr h = { MAD_MAGIC, (uint16_t)npacks, 1, ex, body };

	memcpy(b, &h, sizeof h);
	memcpy(b + sizeof h, desc, 4u * (unsigned)npacks);
	memset(b + sizeof h + 4 * npacks, 0xab, ex);
	return sizeof h + 4u * (unsigned)npacks + ex;
}

#define DESC(mode, len) ((uint32_t)(mode) << 24 | (uint32_t)(len))

static void test_hdr_check(void **state)
{
	uint8_t b[MAD_HDR_MAX + 64];
	uint32_t d[3] = { DESC(MAD_SND_SAFER | MAD_RECV_EXPRESS, 4), DESC(MAD_SND_CHEAPER, 100),
			  DESC(MAD_SND_LATER | MAD_RECV_EXPRESS | MAD_DESC_INBODY, 2000) };
	size_t n;

	(void)state;
	n = make_hdr(b, 3, d, 4, 2100);
	assert_int_equal(mad_hdr_check(b, n), 0);
	assert_int_equal(mad_hdr_check(b, n - 1), -EPROTO);	/* short */
	assert_int_equal(mad_hdr_check(b, 10), -EPROTO);
	n = make_hdr(b, 3, d, 4, 2099);				/* sums disagree */
	assert_int_equal(mad_hdr_check(b, n), -EPROTO);
	n = make_hdr(b, 3, d, 5, 2100);
	assert_int_equal(mad_hdr_check(b, n), -EPROTO);
	d[1] = DESC(0x03, 100);					/* SND_SAFER|SND_LATER */
	n = make_hdr(b, 3, d, 4, 2100);
	assert_int_equal(mad_hdr_check(b, n), -EPROTO);
	d[1] = DESC(MAD_SND_CHEAPER | MAD_DESC_INBODY, 100);	/* INBODY without EXPRESS */
	n = make_hdr(b, 3, d, 4, 2100);
	assert_int_equal(mad_hdr_check(b, n), -EPROTO);
	d[1] = DESC(0x40, 100);					/* unknown receive mode */
	n = make_hdr(b, 3, d, 4, 2100);
	assert_int_equal(mad_hdr_check(b, n), -EPROTO);
	d[1] = DESC(MAD_SND_CHEAPER, 100);
	n = make_hdr(b, 3, d, 4, 2100);
	struct mad_wire_hdr h;
	memcpy(&h, b, sizeof h);
	h.magic ^= 1;
	memcpy(b, &h, sizeof h);
	assert_int_equal(mad_hdr_check(b, n), -EPROTO);
	h.magic ^= 1;
	h.npacks = MAD_MAX_PACKS + 1;
	memcpy(b, &h, sizeof h);
	assert_int_equal(mad_hdr_check(b, n), -EPROTO);
	h.npacks = 3;
	h.express_len = MAD_EXPRESS_MAX + 1;
	memcpy(b, &h, sizeof h);
	assert_int_equal(mad_hdr_check(b, n), -EPROTO);
}

static void test_match_unpack(void **state)
{
	uint8_t b[MAD_HDR_MAX];
	uint32_t d[2] = { DESC(MAD_SND_SAFER | MAD_RECV_EXPRESS, 4), DESC(MAD_SND_CHEAPER, 100) };
	char err[160];

	(void)state;
	make_hdr(b, 2, d, 4, 100);
	assert_int_equal(mad_match_unpack(b, 0, MAD_SND_SAFER | MAD_RECV_EXPRESS, 4, err, sizeof err), 0);
	assert_int_equal(mad_match_unpack(b, 1, MAD_SND_CHEAPER | MAD_RECV_CHEAPER, 100, err, sizeof err), 0);
	assert_int_equal(mad_match_unpack(b, 1, MAD_SND_CHEAPER, 99, err, sizeof err), -EPROTO);
	assert_non_null(strstr(err, "99 bytes"));
	assert_non_null(strstr(err, "100 bytes"));
	assert_int_equal(mad_match_unpack(b, 0, MAD_SND_CHEAPER | MAD_RECV_EXPRESS, 4, err, sizeof err), -EPROTO);
	assert_non_null(strstr(err, "SND_SAFER|RECV_EXPRESS"));
	assert_int_equal(mad_match_unpack(b, 2, MAD_SND_CHEAPER, 1, err, sizeof err), -EPROTO);
	assert_non_null(strstr(err, "only 2 packs"));
}

/* --- Figures 4 and 5 ------------------------------------------------------------ */

static char *received[2];
static const char *const strs[2] = { "a first string of some length", "and a second, longer than the first one" };

static int fig5_handler(int src)
{
	int i, size;

	assert_int_equal(src, 1);
	for (i = 0; i < 2; i++) {
		assert_int_equal(mad_recvbuf_unpack_int(MAD_RECV_EXPRESS | MAD_SND_SAFER, &size, 1), 0);
		assert_int_equal(size, (int)strlen(strs[i]) + 1);	/* available immediately */
		received[i] = malloc((size_t)size);
		assert_int_equal(mad_recvbuf_unpack_byte(MAD_RECV_CHEAPER | MAD_SND_CHEAPER, received[i],
							 (size_t)size), 0);
	}
	return mad_recvbuf_receive_data();
}

static void test_two_strings(void **state)
{
	int i, size;

	(void)state;
	assert_int_equal(mad_sendbuf_init(1), 0);
	for (i = 0; i < 2; i++) {
		const char *data = strs[i];
		size = (int)strlen(data) + 1;
		assert_int_equal(mad_sendbuf_pack_int(MAD_SND_SAFER | MAD_RECV_EXPRESS, &size, 1), 0);
		assert_int_equal(mad_sendbuf_pack_byte(MAD_SND_CHEAPER | MAD_RECV_CHEAPER, data, (size_t)size), 0);
	}
	size = -1;	/* SAFER: the message keeps the sizes it was given */
	assert_int_equal(mad_sendbuf_send(), 0);
	assert_int_equal(receive(fig5_handler), 0);
	assert_string_equal(received[0], strs[0]);
	assert_string_equal(received[1], strs[1]);
	free(received[0]);
	free(received[1]);
}

/*
 * SND_LATER to many (paper 2.1.1): a message packed once goes again after
 * a change of its SND_LATER value; each copy carries the value of its own
 * send, the SND_SAFER value stays what was packed.
 */
static int later_val, safer_val, got_later, got_safer;

static int empty_handler(int src)
{
	(void)src;
	return mad_recvbuf_receive_data();
}

static int later_handler(int src)
{
	(void)src;
	assert_int_equal(mad_recvbuf_unpack_int(MAD_SND_LATER | MAD_RECV_EXPRESS, &got_later, 1), 0);
	assert_int_equal(mad_recvbuf_unpack_int(MAD_SND_SAFER | MAD_RECV_CHEAPER, &got_safer, 1), 0);
	return mad_recvbuf_receive_data();
}

static void test_later_to_many(void **state)
{
	(void)state;
	/* A resend while a message is being built is misuse: that message is not sent. */
	assert_int_equal(mad_sendbuf_init(1), 0);
	assert_int_equal(mad_sendbuf_resend(1), -EPROTO);
	assert_int_equal(mad_sendbuf_send(), -EPROTO);
	assert_int_equal(mad_sendbuf_resend(1), -EPROTO);	/* it never went */
	assert_int_equal(mad_sendbuf_init(1), 0);
	later_val = 10;
	safer_val = 77;
	assert_int_equal(mad_sendbuf_pack_int(MAD_SND_LATER | MAD_RECV_EXPRESS, &later_val, 1), 0);
	assert_int_equal(mad_sendbuf_pack_int(MAD_SND_SAFER | MAD_RECV_CHEAPER, &safer_val, 1), 0);
	safer_val = 78;
	later_val = 11;
	assert_int_equal(mad_sendbuf_send(), 0);
	assert_int_equal(receive(later_handler), 0);
	assert_int_equal(got_later, 11);
	assert_int_equal(got_safer, 77);
	for (int v = 12; v < 15; v++) {
		later_val = v;
		assert_int_equal(mad_sendbuf_resend(1), 0);
		assert_int_equal(receive(later_handler), 0);
		assert_int_equal(got_later, v);
		assert_int_equal(got_safer, 77);
	}
	assert_int_equal(mad_sendbuf_resend(0), -EINVAL);	/* itself */
	assert_int_equal(mad_sendbuf_resend(2), -EINVAL);	/* no such node */
	/* A new message ends the old one's resends. */
	assert_int_equal(mad_sendbuf_init(1), 0);
	assert_int_equal(mad_sendbuf_send(), 0);
	assert_int_equal(receive(empty_handler), 0);
}

/* --- the modes ------------------------------------------------------------------- */

static int cur_mode;
static size_t cur_len;
static uint8_t *got, want_byte;
static int express_ok;

static int mode_handler(int src)
{
	(void)src;
	int r = mad_recvbuf_unpack_byte(cur_mode, got, cur_len);
	assert_int_equal(r, 0);
	if (cur_mode & MAD_RECV_EXPRESS) {
		/* EXPRESS: the data is here as soon as the unpack returned. */
		express_ok = 1;
		for (size_t i = 0; i < cur_len; i++)
			if (got[i] != want_byte)
				express_ok = 0;
	}
	return mad_recvbuf_receive_data();
}

static void one_mode(int mode, size_t len)
{
	uint8_t *buf = malloc(len + 1);
	int snd = mode & MAD_SND_MASK;

	got = calloc(1, len + 1);
	cur_mode = mode;
	cur_len = len;
	memset(buf, 0x11, len);
	assert_int_equal(mad_sendbuf_init(1), 0);
	assert_int_equal(mad_sendbuf_pack_byte(mode, buf, len), 0);
	memset(buf, 0x22, len);		/* changed between the pack and the send */
	assert_int_equal(mad_sendbuf_send(), 0);
	/* SAFER: the value at pack time; LATER (and, here, CHEAPER): at send time. */
	want_byte = snd == MAD_SND_SAFER ? 0x11 : 0x22;
	express_ok = 0;
	assert_int_equal(receive(mode_handler), 0);
	for (size_t i = 0; i < len; i++)
		assert_int_equal(got[i], want_byte);
	if (mode & MAD_RECV_EXPRESS)
		assert_true(express_ok || len == 0);
	free(buf);
	free(got);
}

/*
 * A driver's post that would have to wait for the destination says
 * -EAGAIN instead (madeleine paper 2.2: post "returns without blocking");
 * the generic layer waits in send_wait and posts again: the message goes
 * once, whole, and the deferrals are counted.
 */
static int got_v;

static int v_handler(int src)
{
	(void)src;
	assert_int_equal(mad_recvbuf_unpack_int(MAD_SND_SAFER | MAD_RECV_EXPRESS, &got_v, 1), 0);
	return mad_recvbuf_receive_data();
}

static void test_post_deferred(void **state)
{
	struct mad_stats st0, st;
	int v = 42;

	(void)state;
	mad_stats(&st0);
	busy_posts = 3;
	waits = 0;
	int before = sends;
	assert_int_equal(mad_sendbuf_init(1), 0);
	assert_int_equal(mad_sendbuf_pack_int(MAD_SND_SAFER | MAD_RECV_EXPRESS, &v, 1), 0);
	assert_int_equal(mad_sendbuf_send(), 0);
	assert_int_equal(sends, before + 1);
	assert_int_equal(waits, 3);
	mad_stats(&st);
	assert_int_equal(st.send_deferred - st0.send_deferred, 3);
	got_v = 0;
	assert_int_equal(receive(v_handler), 0);
	assert_int_equal(got_v, 42);
}

static void test_modes(void **state)
{
	static const size_t lens[] = { 0, 1, 100, 1024, 1025, 5000, 100000 };
	static const int modes[] = { MAD_SND_SAFER, MAD_SND_LATER, MAD_SND_CHEAPER };

	(void)state;
	for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++)
		for (int m = 0; m < 3; m++)
			for (int e = 0; e < 2; e++)
				one_mode(modes[m] | (e ? MAD_RECV_EXPRESS : MAD_RECV_CHEAPER), lens[l]);
}

/* EXPRESS beyond the header: still there when its unpack returns, in order. */
static uint8_t big_a[3000], big_b[700], small_c[100];

static int express_body_handler(int src)
{
	uint8_t a[3000], b[700], c[100];

	(void)src;
	assert_int_equal(mad_recvbuf_unpack_byte(MAD_SND_CHEAPER | MAD_RECV_CHEAPER, c, sizeof c), 0);
	assert_int_equal(mad_recvbuf_unpack_byte(MAD_SND_CHEAPER | MAD_RECV_EXPRESS, b, sizeof b), 0);
	assert_memory_equal(b, big_b, sizeof b);	/* in the header */
	assert_int_equal(mad_recvbuf_unpack_byte(MAD_SND_CHEAPER | MAD_RECV_EXPRESS, a, sizeof a), 0);
	assert_memory_equal(a, big_a, sizeof a);	/* in the body, received now */
	assert_memory_equal(c, small_c, sizeof c);	/* the CHEAPER pack before it came too */
	return mad_recvbuf_receive_data();
}

static void test_express_in_body(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof big_a; i++)
		big_a[i] = (uint8_t)(i * 7);
	memset(big_b, 0x5c, sizeof big_b);
	memset(small_c, 0x3e, sizeof small_c);
	assert_int_equal(mad_sendbuf_init(1), 0);
	assert_int_equal(mad_sendbuf_pack_byte(MAD_SND_CHEAPER | MAD_RECV_CHEAPER, small_c, sizeof small_c), 0);
	assert_int_equal(mad_sendbuf_pack_byte(MAD_SND_CHEAPER | MAD_RECV_EXPRESS, big_b, sizeof big_b), 0);
	assert_int_equal(mad_sendbuf_pack_byte(MAD_SND_CHEAPER | MAD_RECV_EXPRESS, big_a, sizeof big_a), 0);
	assert_int_equal(mad_sendbuf_send(), 0);
	assert_int_equal(receive(express_body_handler), 0);
}

/* --- misuse -------------------------------------------------------------------------- */

static int variant;

static int misuse_handler(int src)
{
	int x = 0;
	uint8_t b[64];

	(void)src;
	switch (variant) {
	case 0:		/* wrong length */
		assert_int_equal(mad_recvbuf_unpack_int(MAD_SND_SAFER | MAD_RECV_EXPRESS, &x, 1), 0);
		assert_int_equal(mad_recvbuf_unpack_byte(MAD_SND_CHEAPER, b, 63), -EPROTO);
		/* Once misused, every later unpack of the message fails as well. */
		assert_int_equal(mad_recvbuf_unpack_byte(MAD_SND_CHEAPER, b, 64), -EPROTO);
		break;
	case 1:		/* wrong send mode */
		assert_int_equal(mad_recvbuf_unpack_int(MAD_SND_CHEAPER | MAD_RECV_EXPRESS, &x, 1), -EPROTO);
		break;
	case 2:		/* wrong receive mode */
		assert_int_equal(mad_recvbuf_unpack_int(MAD_SND_SAFER, &x, 1), -EPROTO);
		break;
	case 3:		/* too many unpacks */
		assert_int_equal(mad_recvbuf_unpack_int(MAD_SND_SAFER | MAD_RECV_EXPRESS, &x, 1), 0);
		assert_int_equal(mad_recvbuf_unpack_byte(MAD_SND_CHEAPER, b, 64), 0);
		assert_int_equal(mad_recvbuf_unpack_byte(MAD_SND_CHEAPER, b, 1), -EPROTO);
		break;
	case 4:		/* too few */
		break;
	case 5:		/* no receive_data at all */
		return 0;
	case 6:		/* after receive_data */
		assert_int_equal(mad_recvbuf_unpack_int(MAD_SND_SAFER | MAD_RECV_EXPRESS, &x, 1), 0);
		assert_int_equal(mad_recvbuf_unpack_byte(MAD_SND_CHEAPER, b, 64), 0);
		assert_int_equal(mad_recvbuf_receive_data(), 0);
		assert_int_equal(mad_recvbuf_unpack_int(MAD_SND_SAFER | MAD_RECV_EXPRESS, &x, 1), -EPROTO);
		assert_int_equal(mad_recvbuf_receive_data(), -EPROTO);
		return 0;
	case 7:		/* a receive inside the handler */
		assert_int_equal(receive(misuse_handler), -EPROTO);
		break;
	}
	assert_int_equal(mad_recvbuf_receive_data(), -EPROTO);
	return 0;
}

static int good_handler(int src)
{
	int x = 0;
	uint8_t b[64];

	(void)src;
	assert_int_equal(mad_recvbuf_unpack_int(MAD_SND_SAFER | MAD_RECV_EXPRESS, &x, 1), 0);
	assert_int_equal(mad_recvbuf_unpack_byte(MAD_SND_CHEAPER, b, 64), 0);
	assert_int_equal(mad_recvbuf_receive_data(), 0);
	assert_int_equal(x, 4242);
	for (int i = 0; i < 64; i++)
		assert_int_equal(b[i], (uint8_t)(i + 1));
	return 0;
}

static void send_pair(void)
{
	int x = 4242;
	uint8_t b[64];

	for (int i = 0; i < 64; i++)
		b[i] = (uint8_t)(i + 1);
	assert_int_equal(mad_sendbuf_init(1), 0);
	assert_int_equal(mad_sendbuf_pack_int(MAD_SND_SAFER | MAD_RECV_EXPRESS, &x, 1), 0);
	assert_int_equal(mad_sendbuf_pack_byte(MAD_SND_CHEAPER, b, 64), 0);
	assert_int_equal(mad_sendbuf_send(), 0);
}

/*
 * Two pairs sent, the first message received by h (its status want), the
 * next read correctly (the stream stayed in step): the misuses counted.
 */
static uint64_t misuses(int (*h)(int), int want)
{
	struct mad_stats before, after;

	mad_stats(&before);
	send_pair();
	send_pair();
	assert_int_equal(receive(h), want);
	assert_int_equal(receive(good_handler), 0);
	mad_stats(&after);
	return after.misuse - before.misuse;
}

static void test_recv_misuse(void **state)
{
	(void)state;
	for (variant = 0; variant <= 7; variant++)
		assert_true(misuses(misuse_handler, -EPROTO) > 0);
	int x;
	assert_int_equal(mad_recvbuf_unpack_int(MAD_SND_SAFER, &x, 1), -EPROTO);
	assert_int_equal(mad_recvbuf_receive_data(), -EPROTO);
	assert_int_equal(receive(good_handler), -ETIMEDOUT);	/* nothing left */
}

/* Past the 20 said on the console, misuse is still refused and counted, one by one. */
static void test_misuse_counted_past_said(void **state)
{
	struct mad_stats before, after;
	int x;

	(void)state;
	mad_stats(&before);
	for (int i = 0; i < 50; i++)
		assert_int_equal(mad_recvbuf_unpack_int(MAD_SND_SAFER, &x, 1), -EPROTO);
	mad_stats(&after);
	assert_int_equal(after.misuse - before.misuse, 50);
}

static void test_send_misuse(void **state)
{
	int x = 1;
	uint8_t b[8] = { 0 };

	(void)state;
	assert_int_equal(mad_sendbuf_pack_int(MAD_SND_SAFER, &x, 1), -EPROTO);
	assert_int_equal(mad_sendbuf_send(), -EPROTO);
	assert_int_equal(mad_sendbuf_init(0), -EINVAL);		/* to oneself */
	assert_int_equal(mad_sendbuf_init(2), -EINVAL);		/* no such node */
	assert_int_equal(mad_sendbuf_init(-1), -EINVAL);
	assert_int_equal(mad_sendbuf_init(1), 0);
	assert_int_equal(mad_sendbuf_init(1), -EPROTO);
	assert_int_equal(mad_sendbuf_send(), -EPROTO);		/* the misused message is not sent */
	assert_int_equal(mad_sendbuf_init(1), 0);
	assert_int_equal(mad_sendbuf_pack_byte(0x33, b, 1), -EPROTO);
	assert_int_equal(mad_sendbuf_send(), -EPROTO);
	assert_int_equal(mad_sendbuf_init(1), 0);
	assert_int_equal(mad_sendbuf_pack_byte(0x80, b, 1), -EPROTO);	/* not a mode bit */
	assert_int_equal(mad_sendbuf_send(), -EPROTO);
	assert_int_equal(mad_sendbuf_init(1), 0);
	assert_int_equal(mad_sendbuf_pack_byte(MAD_SND_CHEAPER, NULL, 1), -EPROTO);
	assert_int_equal(mad_sendbuf_send(), -EPROTO);
	assert_int_equal(mad_sendbuf_init(1), 0);
	for (int i = 0; i < MAD_MAX_PACKS; i++)
		assert_int_equal(mad_sendbuf_pack_byte(MAD_SND_CHEAPER, b, 1), 0);
	assert_int_equal(mad_sendbuf_pack_byte(MAD_SND_CHEAPER, b, 1), -EPROTO);
	assert_int_equal(mad_sendbuf_send(), -EPROTO);
	assert_int_equal(sends, 0);				/* none of them went */
	/* And a proper message still goes after all that. */
	send_pair();
	assert_int_equal(receive(good_handler), 0);
}

/*
 * SND_SAFER copies at pack time (paper 2.1.1); when that copy cannot be
 * taken the pack fails with -ENOMEM, the message cannot be sent (send
 * returns the same error and nothing goes), and the next message is whole.
 */
static void test_safer_nomem(void **state)
{
	static const int modes[] = { MAD_SND_SAFER | MAD_RECV_EXPRESS, MAD_SND_SAFER | MAD_RECV_CHEAPER };
	static uint8_t big[MAD_EXPRESS_MAX + 10];
	int x = 7;

	(void)state;
	for (int m = 0; m < 2; m++) {
		for (size_t len = 4; len <= sizeof big; len += sizeof big - 4) {
			assert_int_equal(mad_sendbuf_init(1), 0);
			assert_int_equal(mad_sendbuf_pack_int(MAD_SND_SAFER | MAD_RECV_EXPRESS, &x, 1), 0);
			fail_malloc = 1;
			assert_int_equal(mad_sendbuf_pack_byte(modes[m], big, len), -ENOMEM);
			fail_malloc = 0;
			/* Later packs of the message are refused too, and it is not sent. */
			assert_int_equal(mad_sendbuf_pack_byte(MAD_SND_CHEAPER, big, 8), -ENOMEM);
			assert_int_equal(mad_sendbuf_send(), -ENOMEM);
			assert_int_equal(sends, 0);
		}
	}
	send_pair();
	assert_int_equal(receive(good_handler), 0);
}

/* Sixty-four packs, zero-length ones among them, every mode. */
static int many_handler(int src)
{
	uint8_t b[MAD_MAX_PACKS][40];
	static const int modes[6] = { MAD_SND_SAFER, MAD_SND_LATER, MAD_SND_CHEAPER,
				      MAD_SND_SAFER | MAD_RECV_EXPRESS, MAD_SND_LATER | MAD_RECV_EXPRESS,
				      MAD_SND_CHEAPER | MAD_RECV_EXPRESS };

	(void)src;
	for (int i = 0; i < MAD_MAX_PACKS; i++)
		assert_int_equal(mad_recvbuf_unpack_byte(modes[i % 6], b[i], (size_t)(i % 5) * 10), 0);
	assert_int_equal(mad_recvbuf_receive_data(), 0);
	for (int i = 0; i < MAD_MAX_PACKS; i++)
		for (int k = 0; k < (i % 5) * 10; k++)
			assert_int_equal(b[i][k], (uint8_t)(i * 3 + k));
	return 0;
}

static void test_many_packs(void **state)
{
	static uint8_t b[MAD_MAX_PACKS][40];
	static const int modes[6] = { MAD_SND_SAFER, MAD_SND_LATER, MAD_SND_CHEAPER,
				      MAD_SND_SAFER | MAD_RECV_EXPRESS, MAD_SND_LATER | MAD_RECV_EXPRESS,
				      MAD_SND_CHEAPER | MAD_RECV_EXPRESS };

	(void)state;
	assert_int_equal(mad_sendbuf_init(1), 0);
	for (int i = 0; i < MAD_MAX_PACKS; i++) {
		for (int k = 0; k < 40; k++)
			b[i][k] = (uint8_t)(i * 3 + k);
		assert_int_equal(mad_sendbuf_pack_byte(modes[i % 6], b[i], (size_t)(i % 5) * 10), 0);
	}
	assert_int_equal(mad_sendbuf_send(), 0);
	assert_int_equal(receive(many_handler), 0);
}

/* --- RPC (2.1.4) ------------------------------------------------------------------------- */

static int served;
static uint8_t rpc_arg[5000];

static int echo_service(int src)
{
	uint32_t n;
	uint8_t *arg;

	(void)src;
	assert_int_equal(mad_recvbuf_unpack_byte(MAD_SND_SAFER | MAD_RECV_EXPRESS, &n, sizeof n), 0);
	arg = malloc(n);	/* memory the handler chooses, once it knows the size */
	assert_int_equal(mad_recvbuf_unpack_byte(MAD_SND_CHEAPER | MAD_RECV_CHEAPER, arg, n), 0);
	assert_int_equal(mad_recvbuf_receive_data(), 0);
	assert_memory_equal(arg, rpc_arg, n);
	free(arg);
	served++;
	return 7;
}

static void test_rpc(void **state)
{
	uint32_t n = sizeof rpc_arg;

	(void)state;
	served = 0;
	for (size_t i = 0; i < sizeof rpc_arg; i++)
		rpc_arg[i] = (uint8_t)(i ^ 0x5a);
	assert_int_equal(mad_rpc_register(3, echo_service), 0);
	assert_int_equal(mad_rpc_register(64, echo_service), -EINVAL);
	assert_int_equal(mad_rpc_begin(1, 3), 0);
	assert_int_equal(mad_sendbuf_pack_byte(MAD_SND_SAFER | MAD_RECV_EXPRESS, &n, sizeof n), 0);
	assert_int_equal(mad_sendbuf_pack_byte(MAD_SND_CHEAPER | MAD_RECV_CHEAPER, rpc_arg, n), 0);
	assert_int_equal(mad_sendbuf_send(), 0);
	assert_int_equal(mad_rpc_serve_one(1000), 7);
	assert_int_equal(served, 1);
	/* An unknown service is refused and its message thrown away. */
	assert_int_equal(mad_rpc_begin(1, 9), 0);
	assert_int_equal(mad_sendbuf_pack_byte(MAD_SND_CHEAPER | MAD_RECV_CHEAPER, rpc_arg, 100), 0);
	assert_int_equal(mad_sendbuf_send(), 0);
	assert_true(mad_rpc_serve_one(1000) < 0);
	send_pair();
	assert_int_equal(receive(good_handler), 0);
}

/* --- messages of data only (section 2.1.2) ------------------------------------------------- */

/* What went on the wire: the header vector of the last message sent (npacks, its length). */
static void last_header(unsigned *npacks, size_t *hdr_len, size_t *len)
{
	struct rec *r = &q[(qtail - 1) % QMAX];
	struct mad_wire_hdr h;

	memcpy(&h, r->bytes, sizeof h);
	*npacks = h.npacks;
	*hdr_len = r->hdr_len;
	*len = r->len;
}

static void test_data_only_on_the_wire(void **state)
{
	unsigned npacks;
	size_t hl, len;

	(void)state;
	/* send_pair: an int EXPRESS, 64 bytes CHEAPER.  The header vector is Madeleine's 16 bytes and the int. */
	send_pair();
	last_header(&npacks, &hl, &len);
	assert_int_equal(npacks, 0);
	assert_int_equal(hl, sizeof(struct mad_wire_hdr) + 4);
	assert_int_equal(len, sizeof(struct mad_wire_hdr) + 4 + 64);
	assert_int_equal(receive(good_handler), 0);
	/* The debug mode adds one word per pack, and nothing else. */
	mad_set_debug(1);
	send_pair();
	last_header(&npacks, &hl, &len);
	assert_int_equal(npacks, 2);
	assert_int_equal(hl, sizeof(struct mad_wire_hdr) + 8 + 4);
	assert_int_equal(len, sizeof(struct mad_wire_hdr) + 8 + 4 + 64);
	assert_int_equal(receive(good_handler), 0);
	/* A receiver takes either, whatever its own mode. */
	mad_set_debug(0);
	send_pair();
	mad_set_debug(1);
	assert_int_equal(receive(good_handler), 0);
	send_pair();
	mad_set_debug(0);
	assert_int_equal(receive(good_handler), 0);
}

/*
 * Without a descriptor, misuse is refused where the lengths show it: an
 * unpack past the message's EXPRESS bytes or body at once, one that takes
 * less than the message at receive_data.  A mismatch of the same lengths
 * (a send mode) is the program's error, and passes: the debug mode is
 * what catches it (test_recv_misuse).  After each, the next message is
 * read whole.
 */
static int data_only_misuse_handler(int src)
{
	int x = 0;
	uint8_t b[80];

	(void)src;
	switch (variant) {
	case 0:		/* shorter than the pack: receive_data finds a byte left */
		assert_int_equal(mad_recvbuf_unpack_int(MAD_SND_SAFER | MAD_RECV_EXPRESS, &x, 1), 0);
		assert_int_equal(mad_recvbuf_unpack_byte(MAD_SND_CHEAPER, b, 63), 0);
		break;
	case 1:		/* longer than the body: refused at once */
		assert_int_equal(mad_recvbuf_unpack_int(MAD_SND_SAFER | MAD_RECV_EXPRESS, &x, 1), 0);
		assert_int_equal(mad_recvbuf_unpack_byte(MAD_SND_CHEAPER, b, 65), -EPROTO);
		assert_int_equal(mad_recvbuf_unpack_byte(MAD_SND_CHEAPER, b, 64), -EPROTO);
		break;
	case 2:		/* the EXPRESS int unpacked CHEAPER: from the body, and the header's left */
		assert_int_equal(mad_recvbuf_unpack_int(MAD_SND_SAFER, &x, 1), 0);
		assert_int_equal(mad_recvbuf_unpack_byte(MAD_SND_CHEAPER, b, 60), 0);
		break;
	case 3:		/* too many: past the body */
		assert_int_equal(mad_recvbuf_unpack_int(MAD_SND_SAFER | MAD_RECV_EXPRESS, &x, 1), 0);
		assert_int_equal(mad_recvbuf_unpack_byte(MAD_SND_CHEAPER, b, 64), 0);
		assert_int_equal(mad_recvbuf_unpack_byte(MAD_SND_CHEAPER, b, 1), -EPROTO);
		break;
	case 4:		/* past the header's EXPRESS bytes */
		assert_int_equal(mad_recvbuf_unpack_u64(MAD_SND_SAFER | MAD_RECV_EXPRESS, (uint64_t *)b, 1),
				 -EPROTO);
		break;
	case 5:		/* too few */
		break;
	case 6:		/* no such mode */
		assert_int_equal(mad_recvbuf_unpack_int(0x33, &x, 1), -EPROTO);
		break;
	case 8:		/* more unpacks than a message has packs at most */
		assert_int_equal(mad_recvbuf_unpack_int(MAD_SND_SAFER | MAD_RECV_EXPRESS, &x, 1), 0);
		for (int i = 1; i < MAD_MAX_PACKS; i++)
			assert_int_equal(mad_recvbuf_unpack_byte(MAD_SND_CHEAPER, b, 0), 0);
		assert_int_equal(mad_recvbuf_unpack_byte(MAD_SND_CHEAPER, b, 64), -EPROTO);
		break;
	case 7:		/* a send mode wrong, the lengths right: not seen without a descriptor */
		assert_int_equal(mad_recvbuf_unpack_int(MAD_SND_LATER | MAD_RECV_EXPRESS, &x, 1), 0);
		assert_int_equal(mad_recvbuf_unpack_byte(MAD_SND_SAFER, b, 64), 0);
		assert_int_equal(mad_recvbuf_receive_data(), 0);
		assert_int_equal(x, 4242);
		return 0;
	}
	assert_int_equal(mad_recvbuf_receive_data(), -EPROTO);
	return 0;
}

static void test_data_only_misuse(void **state)
{
	(void)state;
	for (variant = 0; variant <= 8; variant++)
		assert_int_equal(misuses(data_only_misuse_handler, variant == 7 ? 0 : -EPROTO), variant == 7 ? 0 : 1);
}

/* --- the vector cursor ------------------------------------------------------------------- */

static void test_iovcur(void **state)
{
	uint8_t a[5] = { 1, 2, 3, 4, 5 }, b[3] = { 6, 7, 8 }, out[8], *p;
	struct mad_iovec v[4] = { { a, 5 }, { NULL, 0 }, { b, 3 }, { NULL, 0 } };
	struct iovcur c;

	(void)state;
	assert_int_equal(iov_total(v, 4), 8);
	iovcur_init(&c, v, 4);
	assert_int_equal(iovcur_peek(&c, &p, 100), 5);
	assert_ptr_equal(p, a);
	iovcur_skip(&c, 3);
	assert_int_equal(iovcur_peek(&c, &p, 100), 2);
	assert_int_equal(iovcur_gather(&c, out, 4), 4);	/* across the empty vector */
	assert_int_equal(out[0], 4);
	assert_int_equal(out[1], 5);
	assert_int_equal(out[2], 6);
	assert_int_equal(out[3], 7);
	assert_int_equal(iovcur_gather(&c, out, 4), 1);	/* only one byte left */
	assert_int_equal(out[0], 8);
	assert_int_equal(iovcur_peek(&c, &p, 100), 0);
	iovcur_init(&c, v, 4);
	uint8_t src[8] = { 9, 9, 9, 9, 9, 9, 9, 9 };
	assert_int_equal(iovcur_scatter(&c, src, 8), 8);
	assert_int_equal(a[4], 9);
	assert_int_equal(b[2], 9);
}

/* A test on a fresh pair of nodes; the same on a pair that sends data only. */
#define PAIRED(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
#define DATA_ONLY(f) { #f "_data_only", f, setup_data_only, teardown, NULL }

UNIT_MAIN("tests", NULL, NULL,
	  cmocka_unit_test(test_hdr_check),
	  cmocka_unit_test(test_match_unpack),
	  PAIRED(test_two_strings),
	  PAIRED(test_post_deferred),
	  PAIRED(test_later_to_many),
	  PAIRED(test_modes),
	  PAIRED(test_express_in_body),
	  PAIRED(test_recv_misuse),
	  PAIRED(test_misuse_counted_past_said),
	  PAIRED(test_send_misuse),
	  PAIRED(test_safer_nomem),
	  PAIRED(test_many_packs),
	  PAIRED(test_rpc),
	  cmocka_unit_test_setup_teardown(test_data_only_on_the_wire, setup_data_only, teardown),
	  cmocka_unit_test_setup_teardown(test_data_only_misuse, setup_data_only, teardown),
	  /* Good messages of data only: each unpack finds its pack by the sender's rule. */
	  DATA_ONLY(test_two_strings),
	  DATA_ONLY(test_later_to_many),
	  DATA_ONLY(test_modes),
	  DATA_ONLY(test_express_in_body),
	  DATA_ONLY(test_many_packs),
	  DATA_ONLY(test_rpc),
	  cmocka_unit_test(test_iovcur))
