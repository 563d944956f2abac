/*
 * Host unit tests of Madeleine's TCP driver under a cluster key
 * (lib/mad_tcp.c, built here whole, over sockets faked as byte streams):
 * both ends derive the same pair of keys, one per direction, from the two
 * challenges; a message goes through with its two tags; a byte changed in
 * its header or its body, a message replayed, two swapped, or one
 * injected without the key (a station that relayed the set-up's
 * challenges could write any of these into the stream) is refused with
 * -EBADMSG and its connection closed.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tests/host/unit.h"

#include "lib/mad_tcp.c"
#include "tests/lib/mad/mad_tcp_host.h"

#define NODES 3
#define STREAM_MAX (512 * 1024)

/* --- the kernel, for one thread ------------------------------------------------------- */

int node_id = 0, num_nodes = NODES;
int fabric_keyed(void) { return 1; }
int fabric_wait_path(uint64_t timeout_ns) { (void)timeout_ns; return 0; }

static const struct sipkey cluster = { 0x0123456789abcdefULL, 0xfedcba9876543210ULL };

/* As net/fabric/fabric.c computes it, under the test's cluster key. */
int fabric_key_tag(const char *domain, const void *msg, size_t n, uint64_t *t)
{
	struct siphash st;

	siphash_init(&st, &cluster);
	siphash_update(&st, domain, strlen(domain) + 1);
	siphash_update(&st, msg, n);
	*t = siphash_final(&st);
	return 0;
}

static uint64_t rnd = 0x9e3779b97f4a7c15ULL;
uint64_t random64(void) { return rnd += 0x9e3779b97f4a7c15ULL; }

/* --- sockets: fd 100 + k is the stream from node k; what is sent to k comes back from k --- */

#include "tests/lib/mad/mad_tcp_sockets.h"

static void feed(int k, const void *p, size_t n)
{
	assert_true(tail_[k] + n <= STREAM_MAX);
	memcpy(stream[k] + tail_[k], p, n);
	tail_[k] += n;
}

static ssize_t take_bytes(int k, void *buf, size_t n)
{
	if (n > avail(k))
		n = avail(k);
	memcpy(buf, stream[k] + head[k], n);
	head[k] += n;
	return (ssize_t)n;
}

ssize_t lwip_recv(int s, void *mem, size_t len, int flags)
{
	(void)flags;
	return node_of(s) < 0 ? -1 : take_bytes(node_of(s), mem, len);
}

ssize_t lwip_readv(int s, const struct iovec *iov, int iovcnt)
{
	ssize_t got = 0;

	for (int i = 0; i < iovcnt; i++) {
		ssize_t n = take_bytes(node_of(s), iov[i].iov_base, iov[i].iov_len);
		got += n;
		if ((size_t)n < iov[i].iov_len)
			break;
	}
	return got;
}

/*
 * As lwIP's: it takes at most writev_room bytes a call (what its send
 * buffer holds), and an element longer than 0xffff bytes is one lwIP 2.2.1
 * can loop on for ever (mad_tcp.c, writev_bounded): counted.
 */
static size_t writev_room = (size_t)-1;
static int writev_calls, writev_too_long;

ssize_t lwip_writev(int s, const struct iovec *iov, int iovcnt)
{
	size_t n = 0;

	writev_calls++;
	for (int i = 0; i < iovcnt && n < writev_room; i++) {
		size_t take = iov[i].iov_len;
		if (take > 0xffff)
			writev_too_long++;
		if (take > writev_room - n)
			take = writev_room - n;
		feed(node_of(s), iov[i].iov_base, take);
		n += take;
	}
	return (ssize_t)n;
}

ssize_t lwip_send(int s, const void *data, size_t size, int flags)
{
	(void)flags;
	feed(node_of(s), data, size);
	return (ssize_t)size;
}

int lwip_accept(int s, struct sockaddr *a, socklen_t *l) { (void)s; (void)a; (void)l; return -1; }

/* --- the tests ------------------------------------------------------------------------ */

/*
 * Node 1's connection, looped back: what this node sends to node 1 is what
 * it then receives from node 1, under one key both ways.
 */
static void loopback(void)
{
	memset(head, 0, sizeof head);
	memset(tail_, 0, sizeof tail_);
	nnodes = NODES;
	me = 0;
	for (int k = 0; k < MAX_NODES; k++) {
		socks[k] = -1;
		lost[k] = 0;
		auth[k].on = 0;
	}
	socks[1] = 101;
	assert_int_equal(session_keys(&auth[1], 1, 1, 0, 0x1111, 0x2222), 0);
	auth[1].rx = auth[1].tx;
}

static uint8_t sent_hdr[MAD_HDR_MAX], sent_body[2][300];

/* A message of two packs (their bytes from seed) to node 1. */
static int send_msg(uint8_t seed)
{
	struct mad_wire_hdr h = { MAD_MAGIC, 2, 0, 0, sizeof sent_body };
	struct mad_iovec iov[3];
	uint32_t len = sizeof sent_body[0];

	memcpy(sent_hdr, &h, sizeof h);
	memcpy(sent_hdr + sizeof h, &len, 4);
	memcpy(sent_hdr + sizeof h + 4, &len, 4);
	assert_int_equal(mad_hdr_check(sent_hdr, sizeof h + 8), 0);
	for (int p = 0; p < 2; p++)
		for (uint32_t j = 0; j < len; j++)
			sent_body[p][j] = (uint8_t)(seed + j * 7 + p);
	iov[0] = (struct mad_iovec){ sent_hdr, sizeof h + 8 };
	iov[1] = (struct mad_iovec){ sent_body[0], len };
	iov[2] = (struct mad_iovec){ sent_body[1], len };
	return tcp_send_post(1, iov, 3);
}

/* Receive one message: 1 and its bytes checked against seed, or the error. */
static int recv_msg(uint8_t seed)
{
	uint8_t hdr[MAD_HDR_MAX], body[2][300];
	size_t hlen;
	int src, r = tcp_recv_header_poll(&src, hdr, sizeof hdr, &hlen);

	if (r <= 0)
		return r;
	assert_int_equal(src, 1);
	/* The body in two posts, as Madeleine's unpacks make them. */
	struct mad_iovec a = { body[0], sizeof body[0] }, b = { body[1], sizeof body[1] };
	if ((r = tcp_recv_body_post(src, &a, 1)) < 0 || (r = tcp_recv_body_post(src, &b, 1)) < 0)
		return r;
	for (int p = 0; p < 2; p++)
		for (size_t j = 0; j < sizeof body[p]; j++)
			assert_int_equal(body[p][j], (uint8_t)(seed + j * 7 + p));
	return 1;
}

static void both_ends_derive_the_same_keys(void **state)
{
	struct tcp_auth c, s, other;

	(void)state;
	assert_int_equal(session_keys(&c, 1, 2, 0, 0xaaaa, 0xbbbb), 0);
	assert_int_equal(session_keys(&s, 0, 2, 0, 0xaaaa, 0xbbbb), 0);
	assert_memory_equal(&c.tx, &s.rx, sizeof c.tx);
	assert_memory_equal(&c.rx, &s.tx, sizeof c.rx);
	assert_memory_not_equal(&c.tx, &c.rx, sizeof c.tx);
	/* Another set-up (a challenge of its own): other keys. */
	assert_int_equal(session_keys(&other, 1, 2, 0, 0xaaaa, 0xbbbc), 0);
	assert_memory_not_equal(&c.tx, &other.tx, sizeof c.tx);
	assert_memory_not_equal(&c.rx, &other.rx, sizeof c.rx);
}

static void messages_go_with_their_tags(void **state)
{
	(void)state;
	loopback();
	for (int i = 0; i < 5; i++) {
		size_t before = tail_[1];
		assert_int_equal(send_msg((uint8_t)i), 0);
		/* Header, its tag, two packs, the message's tag. */
		assert_int_equal(tail_[1] - before, sizeof(struct mad_wire_hdr) + 8 + 8 + 600 + 8);
		assert_int_equal(recv_msg((uint8_t)i), 1);
	}
	assert_int_equal(avail(1), 0);
	assert_int_equal(socks[1], 101);
}

/*
 * A body of 128 KiB (a multiple of 64 KiB) through a send buffer that takes
 * 50000 bytes a call: lwIP is never handed an element longer than 0xffff
 * bytes, and the message arrives whole, its tags good.
 */
static void a_long_body_goes_in_pieces_lwip_can_take(void **state)
{
	static uint8_t body[128 * 1024], got[128 * 1024];
	uint8_t hdr[MAD_HDR_MAX];
	struct mad_wire_hdr h = { MAD_MAGIC, 1, 0, 0, sizeof body };
	uint32_t len = sizeof body;
	size_t hlen;
	int src;

	(void)state;
	loopback();
	memcpy(hdr, &h, sizeof h);
	memcpy(hdr + sizeof h, &len, 4);
	assert_int_equal(mad_hdr_check(hdr, sizeof h + 4), 0);
	for (size_t j = 0; j < sizeof body; j++)
		body[j] = (uint8_t)(j * 13 + 5);
	struct mad_iovec iov[2] = { { hdr, sizeof h + 4 }, { body, sizeof body } };
	writev_room = 50000;
	writev_calls = writev_too_long = 0;
	assert_int_equal(tcp_send_post(1, iov, 2), 0);
	writev_room = (size_t)-1;
	assert_int_equal(writev_too_long, 0);
	assert_true(writev_calls >= 3);
	assert_int_equal(tcp_recv_header_poll(&src, hdr, sizeof hdr, &hlen), 1);
	assert_int_equal(src, 1);
	struct mad_iovec v = { got, sizeof got };
	assert_true(tcp_recv_body_post(1, &v, 1) >= 0);
	assert_memory_equal(got, body, sizeof body);
	assert_int_equal(avail(1), 0);
}

/* Node 1's connection is lost for good: nothing more sent to it nor read from it. */
static void gone(void)
{
	uint8_t hdr[MAD_HDR_MAX], b[8];
	size_t hlen, before = tail_[1];
	int src;
	struct mad_iovec v = { b, sizeof b };

	assert_true(lost[1]);
	assert_int_equal(send_msg(9), -ENOTCONN);
	assert_int_equal(tail_[1], before);
	assert_int_equal(tcp_recv_header_poll(&src, hdr, sizeof hdr, &hlen), 0);
	assert_int_equal(tcp_recv_body_post(1, &v, 1), -ENOTCONN);
}

/* A byte of message 2 changed at off (in the stream): refused, the connection closed. */
static void changed_at(size_t off, int in_header)
{
	loopback();
	assert_int_equal(send_msg(1), 0);
	assert_int_equal(recv_msg(1), 1);
	size_t start = tail_[1];
	assert_int_equal(send_msg(2), 0);
	stream[1][start + off] ^= 0x20;
	uint8_t hdr[MAD_HDR_MAX];
	size_t hlen;
	int src, r = tcp_recv_header_poll(&src, hdr, sizeof hdr, &hlen);
	if (in_header) {
		assert_int_equal(r, -EBADMSG);
	} else {
		assert_int_equal(r, 1);
		uint8_t body[600];
		struct mad_iovec v = { body, sizeof body };
		assert_int_equal(tcp_recv_body_post(src, &v, 1), -EBADMSG);
	}
	gone();
}

static void a_changed_byte_is_refused(void **state)
{
	(void)state;
	changed_at(13, 1);				/* the header's body length */
	changed_at(sizeof(struct mad_wire_hdr) + 9, 1);	/* the header's own tag */
	changed_at(sizeof(struct mad_wire_hdr) + 16 + 300, 0);	/* the second pack */
	changed_at(sizeof(struct mad_wire_hdr) + 16 + 600 + 3, 0);	/* the message's tag */
}

static void a_replayed_or_reordered_message_is_refused(void **state)
{
	uint8_t copy[2048];
	size_t n;

	(void)state;
	/* Replayed: message 1's bytes again after it. */
	loopback();
	assert_int_equal(send_msg(1), 0);
	n = avail(1);
	memcpy(copy, stream[1] + head[1], n);
	assert_int_equal(recv_msg(1), 1);
	feed(1, copy, n);
	assert_int_equal(recv_msg(1), -EBADMSG);

	/* Reordered: messages 1 and 2 swapped in the stream. */
	loopback();
	assert_int_equal(send_msg(1), 0);
	size_t one = avail(1);
	assert_int_equal(send_msg(2), 0);
	size_t two = avail(1) - one;
	memcpy(copy, stream[1] + one, two);
	memcpy(copy + two, stream[1], one);
	memcpy(stream[1], copy, one + two);
	assert_int_equal(recv_msg(2), -EBADMSG);

	/* Dropped: message 1 taken out, message 2 first. */
	loopback();
	assert_int_equal(send_msg(1), 0);
	head[1] = tail_[1];
	assert_int_equal(send_msg(2), 0);
	assert_int_equal(recv_msg(2), -EBADMSG);
}

/* A message written into the stream without the key (no tags, or tags under another key). */
static void an_injected_message_is_refused(void **state)
{
	(void)state;
	loopback();
	auth[1].on = 0;			/* sent as an unkeyed driver would */
	assert_int_equal(send_msg(3), 0);
	auth[1].on = 1;
	assert_true(recv_msg(3) < 0);
	gone();

	loopback();
	struct sipkey right = auth[1].tx;
	auth[1].tx.k0 ^= 1;		/* under a key of its own */
	assert_int_equal(send_msg(4), 0);
	auth[1].tx = right;
	assert_int_equal(recv_msg(4), -EBADMSG);
	gone();
}

UNIT_MAIN("tests", NULL, NULL,
	  cmocka_unit_test(both_ends_derive_the_same_keys),
	  cmocka_unit_test(messages_go_with_their_tags),
	  cmocka_unit_test(a_long_body_goes_in_pieces_lwip_can_take),
	  cmocka_unit_test(a_changed_byte_is_refused),
	  cmocka_unit_test(a_replayed_or_reordered_message_is_refused),
	  cmocka_unit_test(an_injected_message_is_refused))
