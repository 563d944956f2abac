/*
 * libFuzzer target: the stream of Madeleine's TCP driver (lib/mad_tcp.c,
 * built here whole): its connection set-up, which takes the connecting
 * node's id from the stream, and its receive side, which reads a
 * Madeleine header off a TCP stream, checks it (lib/mad.c) and reads or
 * skips the body, with the socket calls answering from the input: any
 * bytes, cut into any read sizes, ending anywhere.  What node 0 itself
 * sends to node 1 is looped back into node 1's stream, so the real
 * sender feeds the real receiver between the input's bytes.
 *
 * Input: one byte choosing the read size pattern, then operations, each
 * a byte and its operands:
 *   0 bytes for node k's stream: length (2 bytes), bytes
 *   1 node 0 sends a message to node 1: packs (1 byte), each a length byte
 *   2 receive one header (and its body) from whichever stream has data
 * At the end node 0 receives until the streams are dry.
 *
 * Checked (__builtin_trap): the sanitizers; a message node 0 sent arrives
 * whole, header and body, when nothing else was written into node 1's
 * stream; a malformed header is refused (-EPROTO) or skipped with its
 * body, never taken; the set-up takes each node's connection from its
 * own address only, whatever ids are said on the others.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/mad_tcp.c"
#include "tests/lib/mad/mad_tcp_host.h"
#include "tests/host/input.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)
#define NODES 3
#define STREAM_MAX 65536

/* --- the kernel, for one thread ------------------------------------------------------- */

int node_id = 0, num_nodes = NODES;
/* Unkeyed: the set-up takes an id from its node's address (the keyed proof is a unit of its own). */
int fabric_keyed(void) { return 0; }
int fabric_wait_path(uint64_t timeout_ns) { (void)timeout_ns; return 0; }
int fabric_key_tag(const char *d, const void *m, size_t n, uint64_t *t) { (void)d; (void)m; (void)n; (void)t; return -ENOENT; }
uint64_t random64(void) { return 0x1234567887654321ULL; }

/* --- sockets: fd 100 + k is the stream from node k; 99 the listener ------------------- */

#include "tests/lib/mad/mad_tcp_sockets.h"

static unsigned cut;			/* read sizes: 0 any, else at most this */
static int accepts;

static int dirty;

/* Append to node k's stream; what does not fit is lost (and a message cut so is not checked). */
static void feed(int k, const uint8_t *p, size_t n)
{
	if (head[k]) {
		memmove(stream[k], stream[k] + head[k], avail(k));
		tail_[k] -= head[k];
		head[k] = 0;
	}
	if (n > STREAM_MAX - tail_[k]) {
		n = STREAM_MAX - tail_[k];
		dirty = 1;
	}
	memcpy(stream[k] + tail_[k], p, n);
	tail_[k] += n;
}

static ssize_t take_bytes(int k, void *buf, size_t n)
{
	size_t a = avail(k);

	if (cut && n > cut)
		n = cut;
	if (n > a)
		n = a;
	memcpy(buf, stream[k] + head[k], n);
	head[k] += n;
	return (ssize_t)n;	/* 0: the peer closed (nothing more will come) */
}

ssize_t lwip_recv(int s, void *mem, size_t len, int flags)
{
	(void)flags;
	int k = node_of(s);
	if (k < 0) {
		errno = EBADF;
		return -1;
	}
	return take_bytes(k, mem, len);
}

ssize_t lwip_readv(int s, const struct iovec *iov, int iovcnt)
{
	int k = node_of(s);
	ssize_t got = 0;

	CHECK(k >= 0 && iovcnt > 0 && iovcnt <= MAD_MAX_PACKS);
	for (int i = 0; i < iovcnt; i++) {
		ssize_t n = take_bytes(k, iov[i].iov_base, iov[i].iov_len);
		got += n;
		if ((size_t)n < iov[i].iov_len)
			break;
	}
	return got;
}

/* Node 0's sends to node 1 land in node 1's stream, where node 0 also receives (looped back). */
ssize_t lwip_writev(int s, const struct iovec *iov, int iovcnt)
{
	int k = node_of(s);
	ssize_t n = 0;

	CHECK(k >= 0);
	for (int i = 0; i < iovcnt; i++) {
		feed(k, iov[i].iov_base, iov[i].iov_len);
		n += (ssize_t)iov[i].iov_len;
	}
	return n;
}

ssize_t lwip_send(int s, const void *data, size_t size, int flags)
{
	(void)s;
	(void)data;
	(void)flags;
	return (ssize_t)size;
}

/*
 * Connections to node 0, in turn from node 1 and node 2's addresses; each
 * says an id first, maybe another node's.
 */
int lwip_accept(int s, struct sockaddr *a, socklen_t *l)
{
	int k = 1 + accepts % 2;
	struct sockaddr_in from = { 0 };

	(void)s;
	CHECK(++accepts < 64);		/* every wrong hello makes it wait for another */
	from.sin_family = AF_INET;
	from.sin_addr.s_addr = htonl(0x0a000000u | (uint32_t)(k + 1));
	if (a && l && *l >= sizeof from)
		memcpy(a, &from, sizeof from);
	return 100 + k;
}

/* --- the test ------------------------------------------------------------------------- */

static uint8_t sent_hdr[MAD_HDR_MAX], sent_body[4096];
static size_t sent_hdr_len, sent_body_len;
static int pending;			/* a message of node 0's waits in node 1's stream */
/* dirty (above): node 1's stream held other bytes before it, got some after, or cut it. */

static void send_one(void)
{
	struct mad_wire_hdr h = { MAD_MAGIC, 0, 0, 0, 0 };
	struct mad_iovec iov[1 + MAD_MAX_PACKS];
	unsigned packs = take(1) % (MAD_MAX_PACKS + 1);
	uint8_t *hp = sent_hdr + sizeof h;

	sent_body_len = 0;
	for (unsigned i = 0; i < packs; i++) {
		uint32_t len = take(1) * 8;
		if (sent_body_len + len > sizeof sent_body)
			len = 0;
		memcpy(hp + 4 * i, &len, 4);
		for (uint32_t j = 0; j < len; j++)
			sent_body[sent_body_len + j] = (uint8_t)(j * 13 + i);
		iov[1 + i].base = sent_body + sent_body_len;
		iov[1 + i].len = len;
		sent_body_len += len;
	}
	h.npacks = (uint16_t)packs;
	h.body_len = (uint32_t)sent_body_len;
	memcpy(sent_hdr, &h, sizeof h);
	sent_hdr_len = sizeof h + 4 * packs;
	if (mad_hdr_check(sent_hdr, sent_hdr_len) < 0)
		return;		/* not a header node 0 would send */
	iov[0].base = sent_hdr;
	iov[0].len = sent_hdr_len;
	/* Checked only if it is the first thing in the stream when it arrives. */
	dirty = avail(1) != 0;
	CHECK(tcp_send_post(1, iov, 1 + (int)packs) == 0);
	pending = 1;
}

/* One header and body; 0 nothing, 1 one, < 0 the stream is out of step (it would close). */
static int recv_one(void)
{
	uint8_t hdr[MAD_HDR_MAX], body[STREAM_MAX];
	size_t hlen;
	int src, r = tcp_recv_header_poll(&src, hdr, sizeof hdr, &hlen);

	if (r <= 0)
		return r;
	CHECK(src > 0 && src < NODES && hlen <= sizeof hdr && mad_hdr_check(hdr, hlen) == 0);
	struct mad_wire_hdr h;
	memcpy(&h, hdr, sizeof h);
	size_t blen = h.body_len < sizeof body ? h.body_len : sizeof body;
	struct mad_iovec iov = { body, blen };
	r = blen ? tcp_recv_body_post(src, &iov, 1) : 0;
	if (src == 1 && pending) {
		/* Node 0's own message, alone in the stream: exactly what it sent. */
		if (!dirty) {
			CHECK(r == 0 && hlen == sent_hdr_len && memcmp(hdr, sent_hdr, hlen) == 0);
			CHECK(blen == sent_body_len && memcmp(body, sent_body, blen) == 0);
		}
		pending = 0;
	}
	return r < 0 ? r : 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t buf[STREAM_MAX];

	in = data;
	in_left = size;
	memset(head, 0, sizeof head);
	memset(tail_, 0, sizeof tail_);
	accepts = 0;
	pending = dirty = 0;
	cut = take(1) % 8;
	/* The set-up: node 0 accepts nodes 1 and 2, each saying its id (or lying). */
	for (int k = 1; k < NODES; k++) {
		uint32_t id = take(1) & 1 ? (uint32_t)k : take(4);
		feed(k, (const uint8_t *)&id, 4);
	}
	for (int k = 1; k < NODES; k++)
		for (int j = 0; j < 62; j++) {
			uint32_t id = (uint32_t)k;
			feed(k, (const uint8_t *)&id, 4);	/* the real hello, after any lie */
		}
	if (tcp_init(NODES, 0) < 0)
		return 0;
	for (int k = 0; k < NODES; k++) {
		CHECK(k == 0 ? socks[k] < 0 : socks[k] == 100 + k);
		head[k] = tail_[k] = 0;		/* what the set-up left unread is not the test's */
	}
	for (int ops = 0; in_left && ops < 500; ops++) {
		switch (take(1) % 3) {
		case 0: {
			int k = 1 + (int)(take(1) % (NODES - 1));
			size_t n = take(2) % sizeof buf;
			for (size_t i = 0; i < n; i++)
				buf[i] = (uint8_t)take(1);
			feed(k, buf, n);
			if (k == 1 && pending)
				dirty = 1;
			break;
		}
		case 1:
			if (!pending)
				send_one();
			break;
		case 2:
			if (recv_one() < 0)
				return 0;	/* out of step: the driver's caller closes the connection */
			break;
		}
	}
	for (int i = 0; i < 1000; i++)
		if (recv_one() <= 0)
			break;
	return 0;
}
