/*
 * mad-test: the Madeleine interface (lib/mad.h) on the driver named by
 * driver=tcp|rmem|req|cell, the same source for every driver.
 *
 * Every node runs a server thread that receives RPCs (madeleine paper
 * 2.1.4: the service number EXPRESS in the header, arguments unpacked
 * where the handler chooses) and checks each message it gets.  The main
 * thread sends to every other node:
 *  - the two-strings message of Figures 4 and 5, exactly as written there;
 *  - for each of the six mode pairs (SND_SAFER, SND_LATER, SND_CHEAPER x
 *    RECV_EXPRESS, RECV_CHEAPER) messages of 0 bytes up to 70 KB, and to
 *    the next node one of 1 MiB (big=): SND_SAFER data is changed after
 *    the pack and must arrive as packed; SND_LATER data is changed after
 *    the pack and must arrive as changed; RECV_EXPRESS data is checked
 *    right after its unpack returns, before receive_data;
 *  - messages of many packs of mixed modes and sizes;
 *  - messages the receiver deliberately unpacks wrongly (wrong length,
 *    wrong mode, too few unpacks, an unpack after receive_data): each
 *    must be refused with -EPROTO, and the next message must be intact.
 *    Messages carry their pack descriptor here (Madeleine's debug mode,
 *    on unless mad_debug=0 is given), so a wrong length or mode is refused
 *    at its unpack; with mad_debug=0 they carry data only (section
 *    2.1.2) and the same misuse is refused at receive_data, where the
 *    lengths unpacked fall short of the message's;
 *  - one message packed once and sent to every other node (SND_LATER to
 *    many, paper 2.1.1), its SND_LATER word set to each destination before
 *    its send (mad_sendbuf_resend);
 *  - a last message with the number it sent, which the receiver compares
 *    with the number it got (none lost, none doubled).
 * With forge=1 (driver=req, 3 nodes or more) node 2 first tries to import
 * node 1's notification queue for node 0 (granted to node 0 alone: it must
 * get -EACCES), then enqueues into its own queue at node 1 a word that
 * names node 0 as its sender and announces 64 bytes: node 1 must refuse it
 * (and say so), and node 0's messages to node 1 must still arrive intact.
 * It also checks the sending-side misuse errors locally.  Every node ends
 * with
 *	RESULT mad-test driver=.. messages=.. bytes=.. failures=.. misuse=..
 * and exits 0 only if nothing failed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/app.h"
#include "kernel/thread.h"
#include "kernel/tsc.h"
#include "lib/mad.h"
#include "lwip/sockets.h"
#include "net/call/barrier.h"
#include "net/call/call.h"
#include "net/fabric/fabric.h"
#include "net/lwip/lwip_port.h"
#include "net/req/req.h"
#include "net/rmem/rmem.h"
#include "tests/apps/check.h"

enum { SVC_STRINGS = 1, SVC_MODES = 2, SVC_MULTI = 3, SVC_MISUSE = 4, SVC_DONE = 5, SVC_LATER = 6 };

static volatile int done_from, expect_misuse;
static int debug_on;			/* messages carry their descriptor (mad_set_debug) */
static int got_from[64];
static int misuse_seen;
static volatile int expect_aborted, aborted_seen;
static volatile uint32_t last_strings;	/* the number of the last strings message taken whole */

static const int modes[6] = {
	MAD_SND_SAFER | MAD_RECV_EXPRESS,   MAD_SND_SAFER | MAD_RECV_CHEAPER,
	MAD_SND_LATER | MAD_RECV_EXPRESS,   MAD_SND_LATER | MAD_RECV_CHEAPER,
	MAD_SND_CHEAPER | MAD_RECV_EXPRESS, MAD_SND_CHEAPER | MAD_RECV_CHEAPER,
};
static const size_t sizes[] = { 0, 1, 3, 64, 1000, 1025, 1408, 4096, 20000, 70000 };
#define NSIZES (sizeof sizes / sizeof sizes[0])

static uint32_t rnd(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static void fill(uint8_t *b, size_t n, uint32_t seed)
{
	uint32_t s = seed * 2654435761u | 1;

	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(rnd(&s) >> 24);
}

/* Index of the first byte that differs from fill(seed), or -1. */
static long check_fill(const uint8_t *b, size_t n, uint32_t seed)
{
	uint32_t s = seed * 2654435761u | 1;

	for (size_t i = 0; i < n; i++)
		if (b[i] != (uint8_t)(rnd(&s) >> 24))
			return (long)i;
	return -1;
}

/* The i-th string of message seq from node src: of unpredictable length. */
static char *generate_str(int src, uint32_t seq, int i)
{
	uint32_t s = (uint32_t)(src * 7919 + (int)seq * 31 + i + 1);
	size_t len = 1 + rnd(&s) % 3000;
	char *p = malloc(len + 1);

	for (size_t k = 0; k < len; k++)
		p[k] = (char)('a' + rnd(&s) % 26);
	p[len] = 0;
	return p;
}

/* --- the services (server thread) ------------------------------------------- */

struct modes_desc {
	uint32_t seq, size, mode, seed;
};

/* Figure 5. */
static int svc_strings(int src)
{
	char *data[2];
	int i, size;
	uint32_t seq;
	int r = 0;

	r |= mad_recvbuf_unpack_byte(MAD_RECV_EXPRESS | MAD_SND_SAFER, &seq, sizeof seq);
	for (i = 0; i < 2; i++) {
		r |= mad_recvbuf_unpack_int(MAD_RECV_EXPRESS | MAD_SND_SAFER, &size, 1);
		/* 'size' is available immediately */
		EXPECT(size > 0 && size <= 3001, "string size %d", size);
		data[i] = malloc(size > 0 && size <= 3001 ? (size_t)size : 1);
		r |= mad_recvbuf_unpack_byte(MAD_RECV_CHEAPER | MAD_SND_CHEAPER, data[i],
					     size > 0 && size <= 3001 ? (size_t)size : 0);
		/* Caution: data is *not* yet available here. */
	}
	r |= mad_recvbuf_receive_data();
	if (r == -ECONNABORTED && expect_aborted) {
		aborted_seen++;		/* abandoned_body(): its sender gave it up */
		free(data[0]);
		free(data[1]);
		return 0;
	}
	EXPECT(r == 0, "unpacking the strings: %d", r);
	if (r == 0)
		last_strings = seq;
	for (i = 0; i < 2 && r == 0; i++) {
		char *want = generate_str(src, seq, i);
		EXPECT(strcmp(data[i], want) == 0, "string %d of message %u from node %d differs from the one sent",
		       i, seq, src);
		free(want);
	}
	if (seq == 0 && src == (node_id + num_nodes - 1) % num_nodes)
		printf("mad-test: I received the strings: %.12s... and %.12s...\n", data[0], data[1]);
	free(data[0]);
	free(data[1]);
	return 0;
}

static int svc_modes(int src)
{
	struct modes_desc d;
	uint8_t *buf;
	long bad;
	int r;

	r = mad_recvbuf_unpack_byte(MAD_SND_SAFER | MAD_RECV_EXPRESS, &d, sizeof d);
	if (r < 0 || d.size > (64u << 20)) {
		EXPECT(0, "modes header from node %d: %d", src, r);
		mad_recvbuf_receive_data();
		return -EINVAL;
	}
	buf = malloc(d.size ? d.size : 1);
	r = mad_recvbuf_unpack_byte((int)d.mode, buf, d.size);
	EXPECT(r == 0, "unpack %u bytes mode %#x from node %d: %d", d.size, d.mode, src, r);
	if (r == 0 && (d.mode & MAD_RECV_EXPRESS)) {
		/* EXPRESS: here as soon as the unpack returned. */
		bad = check_fill(buf, d.size, d.seed);
		EXPECT(bad < 0, "EXPRESS data of message %u (%u bytes, mode %#x) from node %d wrong at %ld before receive_data",
		       d.seq, d.size, d.mode, src, bad);
	}
	int rd = mad_recvbuf_receive_data();
	EXPECT(rd == 0, "receive_data: %d", rd);
	/* Data that came in full is checked; a refused message's is not there to check. */
	if (r == 0 && rd == 0) {
		bad = check_fill(buf, d.size, d.seed);
		EXPECT(bad < 0, "data of message %u (%u bytes, mode %#x) from node %d wrong at byte %ld", d.seq,
		       d.size, d.mode, src, bad);
	}
	free(buf);
	return 0;
}

/* A message of many packs: both sides derive the packs from the seed. */
struct multi {
	int n;
	int mode[MAD_MAX_PACKS];
	size_t len[MAD_MAX_PACKS];
};

static void multi_plan(struct multi *m, uint32_t seed)
{
	uint32_t s = seed | 1;

	m->n = 1 + (int)(rnd(&s) % (MAD_MAX_PACKS - 2));
	for (int i = 0; i < m->n; i++) {
		m->mode[i] = modes[rnd(&s) % 6];
		m->len[i] = rnd(&s) % 4 == 0 ? rnd(&s) % 6000 : rnd(&s) % 200;
	}
}

static int svc_multi(int src)
{
	struct multi m;
	uint32_t seed;
	uint8_t *bufs[MAD_MAX_PACKS] = { 0 };
	int r = mad_recvbuf_unpack_byte(MAD_SND_SAFER | MAD_RECV_EXPRESS, &seed, sizeof seed);

	multi_plan(&m, seed);
	for (int i = 0; i < m.n && r == 0; i++) {
		bufs[i] = malloc(m.len[i] + 1);
		r = mad_recvbuf_unpack_byte(m.mode[i], bufs[i], m.len[i]);
		if (r == 0 && (m.mode[i] & MAD_RECV_EXPRESS))
			EXPECT(check_fill(bufs[i], m.len[i], seed + (uint32_t)i) < 0,
			       "EXPRESS pack %d of multi %u from node %d", i, seed, src);
	}
	int rd = mad_recvbuf_receive_data();
	EXPECT(r == 0 && rd == 0, "multi %u (%d packs) from node %d: unpack %d, receive_data %d", seed,
	       m.n, src, r, rd);
	for (int i = 0; i < m.n; i++) {
		if (r == 0 && rd == 0)
			EXPECT(check_fill(bufs[i], m.len[i], seed + (uint32_t)i) < 0,
			       "pack %d (%zu bytes) of multi %u from node %d", i, m.len[i], seed, src);
		free(bufs[i]);
	}
	return 0;
}

/*
 * Packs: EXPRESS int, 300 bytes CHEAPER, 8 bytes EXPRESS.  The handler
 * unpacks it wrongly on purpose, in the way the message's variant says.
 */
static int svc_misuse(int src)
{
	int variant = -1, r1 = 0, r2 = 0, r3 = 0, rd;
	uint8_t body[300];
	uint64_t tail;

	r1 = mad_recvbuf_unpack_int(MAD_SND_SAFER | MAD_RECV_EXPRESS, &variant, 1);
	switch (variant) {
	case 0:		/* wrong length */
		r2 = mad_recvbuf_unpack_byte(MAD_SND_CHEAPER | MAD_RECV_CHEAPER, body, 200);
		break;
	case 1:		/* wrong mode */
		r2 = mad_recvbuf_unpack_byte(MAD_SND_SAFER | MAD_RECV_CHEAPER, body, sizeof body);
		break;
	case 2:		/* too few unpacks */
		break;
	case 3:		/* an unpack after receive_data */
		r2 = mad_recvbuf_unpack_byte(MAD_SND_CHEAPER | MAD_RECV_CHEAPER, body, sizeof body);
		r3 = mad_recvbuf_unpack_u64(MAD_SND_CHEAPER | MAD_RECV_EXPRESS, &tail, 1);
		rd = mad_recvbuf_receive_data();
		EXPECT(r2 == 0 && r3 == 0 && rd == 0, "misuse variant 3 from node %d: %d %d %d", src, r2,
		       r3, rd);
		EXPECT(check_fill(body, sizeof body, 77) < 0 && tail == 0x1122334455667788ULL,
		       "misuse variant 3 data from node %d", src);
		r3 = mad_recvbuf_unpack_u64(MAD_SND_CHEAPER | MAD_RECV_EXPRESS, &tail, 1);
		EXPECT(r3 == -EPROTO, "unpack after receive_data gave %d", r3);
		misuse_seen++;
		return 0;
	}
	rd = mad_recvbuf_receive_data();
	EXPECT(r1 == 0 && variant >= 0 && variant <= 2, "misuse variant %d from node %d (%d)", variant,
	       src, r1);
	/* With a descriptor the wrong unpack is refused; without, the lengths at receive_data show it. */
	if ((variant == 0 || variant == 1) && debug_on)
		EXPECT(r2 == -EPROTO, "variant %d: the wrong unpack gave %d", variant, r2);
	else if (variant == 0 || variant == 1)
		EXPECT(r2 == 0, "variant %d without a descriptor: the wrong unpack gave %d", variant, r2);
	EXPECT(rd == -EPROTO, "variant %d: receive_data after misuse gave %d", variant, rd);
	misuse_seen++;
	return 0;
}

static int svc_done(int src)
{
	uint32_t sent = 0;
	int r = mad_recvbuf_unpack_byte(MAD_SND_SAFER | MAD_RECV_EXPRESS, &sent, sizeof sent);

	r |= mad_recvbuf_receive_data();
	EXPECT(r == 0, "done from node %d: %d", src, r);
	/* The done message itself is not counted by its sender. */
	EXPECT((int)sent == got_from[src], "node %d sent %u messages, %d arrived", src, sent,
	       got_from[src]);
	__atomic_fetch_add(&done_from, 1, __ATOMIC_RELAXED);
	return 0;
}

/*
 * SND_LATER to many (paper 2.1.1): one message packed once and sent to
 * every other node, its SND_LATER word changed to the destination before
 * each send (mad_sendbuf_resend); each receiver must find its own id there,
 * and the SND_SAFER and SND_CHEAPER data as packed.
 */
enum { LATER_BODY = 2000 };
static volatile int later_seen;

static int svc_later(int src)
{
	uint32_t to = ~0u, from = ~0u;
	static uint8_t body[LATER_BODY];
	int r = mad_recvbuf_unpack_byte(MAD_SND_LATER | MAD_RECV_EXPRESS, &to, sizeof to);

	r |= mad_recvbuf_unpack_byte(MAD_SND_SAFER | MAD_RECV_EXPRESS, &from, sizeof from);
	r |= mad_recvbuf_unpack_byte(MAD_SND_CHEAPER | MAD_RECV_CHEAPER, body, sizeof body);
	r |= mad_recvbuf_receive_data();
	EXPECT(r == 0 && to == (uint32_t)node_id && from == (uint32_t)src &&
		       check_fill(body, sizeof body, 4242u + (uint32_t)src) < 0,
	       "SND_LATER message from node %d: %d, to %u, from %u", src, r, to, from);
	later_seen++;
	return 0;
}

static int send_later_to_all(uint32_t *sent)
{
	static uint32_t to, from;
	static uint8_t body[LATER_BODY];
	int first = (node_id + 1) % num_nodes, r;

	from = (uint32_t)node_id;
	fill(body, sizeof body, 4242u + (uint32_t)node_id);
	to = (uint32_t)first;
	r = mad_rpc_begin(first, SVC_LATER);
	r |= mad_sendbuf_pack_byte(MAD_SND_LATER | MAD_RECV_EXPRESS, &to, sizeof to);
	r |= mad_sendbuf_pack_byte(MAD_SND_SAFER | MAD_RECV_EXPRESS, &from, sizeof from);
	r |= mad_sendbuf_pack_byte(MAD_SND_CHEAPER | MAD_RECV_CHEAPER, body, sizeof body);
	from = ~0u;			/* SND_SAFER: the value packed goes, not this one */
	r |= mad_sendbuf_send();
	sent[first]++;
	for (int k = 2; k < num_nodes && r == 0; k++) {
		int dest = (node_id + k) % num_nodes;
		to = (uint32_t)dest;	/* SND_LATER: read again by each send */
		r = mad_sendbuf_resend(dest);
		sent[dest]++;
	}
	return r;
}

static int last_svc;

/* Count every message but the last per source (dispatch is the library's). */
static void counted(int src)
{
	got_from[src]++;
}

static int s_strings(int src) { counted(src); last_svc = SVC_STRINGS; return svc_strings(src); }
static int s_modes(int src) { counted(src); last_svc = SVC_MODES; return svc_modes(src); }
static int s_multi(int src) { counted(src); last_svc = SVC_MULTI; return svc_multi(src); }
static int s_misuse(int src) { counted(src); last_svc = SVC_MISUSE; return svc_misuse(src); }
static int s_done(int src) { last_svc = SVC_DONE; return svc_done(src); }
static int s_later(int src) { counted(src); last_svc = SVC_LATER; return svc_later(src); }

static volatile int stop_server, server_hold, server_held;

static void *server(void *arg)
{
	(void)arg;
	while (!stop_server) {
		server_held = server_hold;
		if (server_hold) {
			thread_sleep_ns(10000000);
			continue;
		}
		last_svc = 0;
		int r = mad_rpc_serve_one(200000000ULL);
		if (r == -ETIMEDOUT)
			continue;
		/* A misuse message ends in -EPROTO by design; its handler checked it. */
		if (r == -EPROTO && last_svc == SVC_MISUSE)
			continue;
		/* So does the message its sender gave up (abandoned_body), counted by its handler. */
		if (r == -ECONNABORTED && expect_aborted && last_svc == SVC_STRINGS)
			continue;
		EXPECT(r == 0, "serving a message (service %d): %d", last_svc, r);
	}
	return NULL;
}

/* --- the sending side (main thread) -------------------------------------------- */

static uint64_t bytes_sent;

/* Figure 4. */
static int send_strings(int dest_node, uint32_t seq)
{
	char *data;
	int i, size, r = 0;

	r |= mad_rpc_begin(dest_node, SVC_STRINGS);
	r |= mad_sendbuf_pack_byte(MAD_SND_SAFER | MAD_RECV_EXPRESS, &seq, sizeof seq);
	char *strs[2];
	for (i = 0; i < 2; i++) {
		strs[i] = data = generate_str(node_id, seq, i);
		size = (int)strlen(data) + 1;
		r |= mad_sendbuf_pack_int(MAD_SND_SAFER | MAD_RECV_EXPRESS, &size, 1);
		r |= mad_sendbuf_pack_byte(MAD_SND_CHEAPER | MAD_RECV_CHEAPER, data, (size_t)size);
		bytes_sent += (size_t)size;
	}
	r |= mad_sendbuf_send();
	free(strs[0]);
	free(strs[1]);
	return r;
}

static int send_modes(int dest, uint32_t seq, int mode, size_t size)
{
	struct modes_desc d = { seq, (uint32_t)size, (uint32_t)mode, seq * 131u + (uint32_t)mode };
	uint8_t *buf = malloc(size ? size : 1);
	int snd = mode & MAD_SND_MASK, r;

	if (!buf)
		return -ENOMEM;
	/* SND_LATER: what is there at send time counts, so fill it later. */
	fill(buf, size, snd == MAD_SND_LATER ? d.seed ^ 0x5a5a5a5a : d.seed);
	r = mad_rpc_begin(dest, SVC_MODES);
	if (r == 0)
		r = mad_sendbuf_pack_byte(MAD_SND_SAFER | MAD_RECV_EXPRESS, &d, sizeof d);
	if (r == 0)
		r = mad_sendbuf_pack_byte(mode, buf, size);
	if (snd == MAD_SND_SAFER)
		fill(buf, size, d.seed ^ 0xa5a5a5a5);	/* the copy taken at pack time must go */
	else if (snd == MAD_SND_LATER)
		fill(buf, size, d.seed);		/* the value at send time must go */
	if (r == 0)
		r = mad_sendbuf_send();
	else
		mad_sendbuf_send();
	free(buf);
	bytes_sent += size;
	return r;
}

static int send_multi(int dest, uint32_t seed)
{
	struct multi m;
	uint8_t *bufs[MAD_MAX_PACKS];
	int r;

	multi_plan(&m, seed);
	r = mad_rpc_begin(dest, SVC_MULTI);
	r |= mad_sendbuf_pack_byte(MAD_SND_SAFER | MAD_RECV_EXPRESS, &seed, sizeof seed);
	for (int i = 0; i < m.n; i++) {
		bufs[i] = malloc(m.len[i] + 1);
		fill(bufs[i], m.len[i], seed + (uint32_t)i);
		r |= mad_sendbuf_pack_byte(m.mode[i], bufs[i], m.len[i]);
		bytes_sent += m.len[i];
	}
	r |= mad_sendbuf_send();
	for (int i = 0; i < m.n; i++)
		free(bufs[i]);
	return r;
}

static int send_misuse(int dest, int variant)
{
	uint8_t body[300];
	uint64_t tail = 0x1122334455667788ULL;
	int r;

	fill(body, sizeof body, 77);
	r = mad_rpc_begin(dest, SVC_MISUSE);
	r |= mad_sendbuf_pack_int(MAD_SND_SAFER | MAD_RECV_EXPRESS, &variant, 1);
	r |= mad_sendbuf_pack_byte(MAD_SND_CHEAPER | MAD_RECV_CHEAPER, body, sizeof body);
	r |= mad_sendbuf_pack_u64(MAD_SND_CHEAPER | MAD_RECV_EXPRESS, &tail, 1);
	r |= mad_sendbuf_send();
	return r;
}

static int send_done(int dest, uint32_t sent)
{
	int r = mad_rpc_begin(dest, SVC_DONE);

	r |= mad_sendbuf_pack_byte(MAD_SND_SAFER | MAD_RECV_EXPRESS, &sent, sizeof sent);
	r |= mad_sendbuf_send();
	return r;
}

/* Misuse on the sending side and outside handlers: every one refused. */
static void local_misuse(void)
{
	int x = 1, other = (node_id + 1) % num_nodes;

	EXPECT(mad_sendbuf_pack_int(MAD_SND_SAFER, &x, 1) == -EPROTO, "pack without sendbuf_init");
	EXPECT(mad_sendbuf_send() == -EPROTO, "send without sendbuf_init");
	EXPECT(mad_sendbuf_init(node_id) == -EINVAL, "a message to oneself");
	EXPECT(mad_sendbuf_init(num_nodes) == -EINVAL, "a message to a node that does not exist");
	EXPECT(mad_sendbuf_init(other) == 0, "sendbuf_init");
	EXPECT(mad_sendbuf_init(other) == -EPROTO, "a second sendbuf_init in the same thread");
	EXPECT(mad_sendbuf_pack_int(0x33, &x, 1) == -EPROTO, "an invalid mode");
	EXPECT(mad_sendbuf_pack_byte(MAD_SND_CHEAPER, NULL, 4) == -EPROTO, "a NULL pointer");
	EXPECT(mad_sendbuf_send() == -EPROTO, "sending a misused message must fail (and send nothing)");
	EXPECT(mad_recvbuf_unpack_int(MAD_SND_SAFER, &x, 1) == -EPROTO, "unpack outside a handler");
	EXPECT(mad_recvbuf_receive_data() == -EPROTO, "receive_data outside a handler");
}

/* forge=1: node 2 claims, on its own notification queue at node 1, to be node 0. */
static void forge_word(void)
{
	if (node_id == 2) {
		int other = req_import(1, "mad.n.0");
		EXPECT(other == -EACCES, "import node 1's queue for node 0 from node 2: %d, not -EACCES", other);
		int rq = req_import(1, "mad.n.2");
		EXPECT(rq >= 0, "import node 1's notification queue: %d", rq);
		if (rq >= 0)
			EXPECT(req_enqueue(rq, (uint32_t)0 << 24 | 64, 1) == 0, "forged word enqueued");
	}
	/* Nobody sends before node 1 holds the forged word. */
	EXPECT(cluster_barrier(60000000000ULL) == 0, "barrier after the forged word");
}

static const struct argspec mad_test_args[] = {
	{ "driver", ARG_STR, 0, 0, "tcp (default), rmem, req or cell" },
	{ "big", ARG_INT, 0, 16 << 20, "size of the largest message, to the next node (default 1 MiB)" },
	{ "rounds", ARG_INT, 1, 1000, "times the whole set is sent (default 1)" },
	{ "forge", ARG_INT, 0, 1, "1: node 2 forges a REQ word naming node 0 (driver=req, 3+ nodes)" },
	{ "refuse", ARG_BOOL, 0, 0, "driver=req: at the end node 1 refuses node 0's next chunk "
	  "(its ring write-inhibited): never announced, and node 0's next send says so" },
	{ "abandon", ARG_BOOL, 0, 0, "driver=rmem: at the end node 0 gives up a message node 1 does not "
	  "take in time: node 1 must fail it, not wait for its body, and take the next" },
	{ "bad_eager", ARG_BOOL, 0, 0, "driver=rmem: at the end node 0 sends a body whose header claims "
	  "more early bytes than the eager area holds: node 1 must drop it, node 0's send fail, the next "
	  "message come whole" },
	{ "export_gap_ms", ARG_INT, 0, 60000, "driver=rmem: node 0's set-up pauses this long after "
	  "exporting its segments, node 1 reaching them meanwhile (default 0)" },
	{ "intrude", ARG_INT, 0, 10, "driver=tcp: the last node first opens N silent connections to "
	  "node 0's port and one claiming node 1, none proving anything (default 0: none)" },
	{ NULL, 0, 0, 0, NULL },
};

/*
 * intrude=N: N + 1 connections to node 0's Madeleine TCP port (lib/mad_tcp.c's
 * MAD_TCP_PORT) before this node's own set-up: N that say nothing, one
 * that claims to be node 1 without proving it.  Node 0 must close them all
 * and go on with the real ones; this node's own connection, queued behind
 * them, must not wait for them in turn (node 0 lets them prove themselves
 * at once).  The sockets stay open until the node stops.
 */
static void intrude(int silent)
{
	struct sockaddr_in to = { 0 };
	struct timeval tv = { 20, 0 };
	int s[11], n = silent + 1;

	to.sin_family = AF_INET;
	to.sin_port = htons(5555);
	to.sin_addr.s_addr = htonl(0x0a000001u);
	for (int k = 0; k < n; k++) {
		s[k] = -1;
		for (int t = 0; t < 120 && s[k] < 0; t++) {
			int fd = socket(AF_INET, SOCK_STREAM, 0);
			if (fd >= 0 && connect(fd, (struct sockaddr *)&to, sizeof to) == 0) {
				s[k] = fd;
				break;
			}
			if (fd >= 0)
				closesocket(fd);
			thread_sleep_ns(500000000ULL);
		}
	}
	int claim = s[n - 1];
	printf("mad-test: intruding with connections %d (silent%s) and %d (claims node 1)\n", s[0],
	       silent > 1 ? ", the first of them" : "", claim);
	if (claim < 0)
		return;
	setsockopt(claim, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	if (fabric_keyed()) {
		uint64_t chal, msg[3] = { 1, 0x1111, 0x2222 };	/* a tag it cannot make */
		if (recv(claim, &chal, sizeof chal, 0) == sizeof chal)
			send(claim, msg, sizeof msg, 0);
	} else {
		uint32_t id = 1;
		send(claim, &id, sizeof id, 0);
	}
}

/*
 * refuse=1: node 1 write-inhibits the ring node 0 deposits into, and node
 * 0 sends a message.  Its chunk's WRITEs are refused, so its word is
 * refused too: node 1 takes no word, and no message that was not written
 * reaches its server.  Node 0's next send reports the refusal.  The pair's
 * stream is broken from then on: this is the last thing node 0 sends to
 * node 1.
 */
static void refused_chunk(void)
{
	long words = node_id == 1 ? mad_req_test_words(0) : 0;
	int got = got_from[0];

	if (node_id == 1)
		EXPECT(mad_req_test_inhibit(0, 1) == 0, "inhibit node 0's ring");
	EXPECT(cluster_barrier(60000000000ULL) == 0, "barrier before the refused chunk");
	if (node_id == 0) {
		EXPECT(send_strings(1, 5000) == 0, "the message whose chunk is refused goes");
		/* Everything sent to node 1 taken, its refusals back here. */
		EXPECT(call_fence(1, 30000000000ULL) == 0, "fence to node 1");
		int r = send_strings(1, 5001);
		EXPECT(r == -ENODATA || r == -EROFS, "the next send to node 1: %d, not the refusal", r);
	}
	EXPECT(cluster_barrier(60000000000ULL) == 0, "barrier after the refused chunk");
	if (node_id == 1) {
		thread_sleep_ns(200000000);	/* the server takes whatever came */
		EXPECT(mad_req_test_words(0) == words, "%ld words taken for a refused chunk",
		       mad_req_test_words(0) - words);
		EXPECT(got_from[0] == got, "%d messages from node 0 after its refused chunk",
		       got_from[0] - got);
		printf("mad-test: node 0's refused chunk: no word taken, no message\n");
	}
}

/*
 * abandon=1: node 1's server stops taking messages, and node 0 sends one
 * whose body waits for node 1's READY, waiting 0.5 s for it (a test hook;
 * MAD_PEER_TIMEOUT_NS otherwise): its send fails with -ETIMEDOUT.  Node
 * 1's server then takes the header: the message must fail there
 * (-ECONNABORTED: its sender gave it up), not wait for a body that will
 * not come, and node 0's next message must arrive whole.
 */
static void abandoned_body(void)
{
	if (node_id == 1) {
		server_hold = 1;
		while (!server_held)
			thread_sleep_ns(1000000);
		expect_aborted = 1;
	}
	EXPECT(cluster_barrier(60000000000ULL) == 0, "barrier before the abandoned message");
	if (node_id == 0) {
		mad_rmem_test_ready_wait(500000000ULL);
		int r = send_strings(1, 6000);
		mad_rmem_test_ready_wait(0);
		EXPECT(r == -ETIMEDOUT, "a message node 1 does not take in time: %d, not -ETIMEDOUT", r);
	}
	EXPECT(cluster_barrier(60000000000ULL) == 0, "barrier after the abandoned message");
	if (node_id == 1)
		server_hold = 0;
	if (node_id == 0)
		EXPECT(send_strings(1, 6001) == 0, "the message after the abandoned one");
	if (node_id == 1) {
		uint64_t end = cycles() + ns_to_cycles(30000000000ULL);
		while ((last_strings != 6001 || !aborted_seen) && cycles() < end)
			thread_sleep_ns(10000000);
		EXPECT(aborted_seen == 1, "%d messages failed as given up by node 0, 1 expected", aborted_seen);
		EXPECT(last_strings == 6001, "the message after the abandoned one did not come whole");
		printf("mad-test: node 0's abandoned message failed here, not waited for; the next came whole\n");
	}
	EXPECT(cluster_barrier(60000000000ULL) == 0, "barrier after the next message");
}

/*
 * bad_eager=1: node 0's next body with an early part says, in its header
 * slot, more early bytes than node 1's eager area holds (a test hook).
 * Node 1 must drop that slot as malformed and refuse the message, which
 * reaches no handler; node 0's send fails with -EPROTO; node 0's next
 * message, which has an early part too, comes whole.
 */
static void bad_eager_body(void)
{
	struct mad_rmem_counts c0, c1;

	mad_rmem_counts(&c0);
	EXPECT(cluster_barrier(60000000000ULL) == 0, "barrier before the bad eager header");
	if (node_id == 0) {
		mad_rmem_test_bad_eager();
		int r = send_modes(1, 7000, MAD_SND_CHEAPER | MAD_RECV_CHEAPER, 1 << 20);
		EXPECT(r == -EPROTO, "a header claiming too many early bytes: %d, not -EPROTO", r);
		r = send_modes(1, 7001, MAD_SND_CHEAPER | MAD_RECV_CHEAPER, 1 << 20);
		EXPECT(r == 0, "the message after the refused one: %d", r);
		mad_rmem_counts(&c1);
		EXPECT(c1.early == c0.early + 2, "%lu bodies sent early, 2 expected",
		       (unsigned long)(c1.early - c0.early));
	}
	EXPECT(cluster_barrier(60000000000ULL) == 0, "barrier after the bad eager header");
	if (node_id == 1) {
		mad_rmem_counts(&c1);
		EXPECT(c1.bad_slots == c0.bad_slots + 1, "%lu header slots dropped, 1 expected",
		       (unsigned long)(c1.bad_slots - c0.bad_slots));
		printf("mad-test: node 0's header claiming too many early bytes dropped here; the next came "
		       "whole\n");
	}
}

static int mad_test_main(void)
{
	const char *drvname = arg_str("driver", "tcp");
	size_t big = (size_t)arg_int("big", 1 << 20);
	int rounds = (int)arg_int("rounds", 1);
	uint32_t sent[64] = { 0 };
	struct mad_stats st;
	struct thread *srv;
	uint64_t t0 = cycles();
	int r;

	if (num_nodes < 2) {
		printf("mad-test: needs at least 2 nodes\n");
		return 2;
	}
	if (fabric_wait_peers(60000000000ULL) < 0)
		return 1;
	if (arg_int("intrude", 0) && node_id == num_nodes - 1 && node_id != 0)
		intrude((int)arg_int("intrude", 0));
	if (node_id == 0 && arg_int("export_gap_ms", 0))
		mad_rmem_test_export_gap((uint64_t)arg_int("export_gap_ms", 0) * 1000000ULL);
	if ((r = mad_init(drvname)) < 0)
		return 2;
	/* A test: descriptors on (the debug mode) unless the command line says mad_debug=0. */
	debug_on = arg_str("mad_debug", NULL) ? arg_bool("mad_debug", 0) : 1;
	mad_set_debug(debug_on);
	printf("mad-test: node %d of %d on driver %s, %s\n", node_id, num_nodes, mad_driver_name(),
	       debug_on ? "messages with their pack descriptor (mad_debug)" : "messages of data only");
	mad_rpc_register(SVC_STRINGS, s_strings);
	mad_rpc_register(SVC_MODES, s_modes);
	mad_rpc_register(SVC_MULTI, s_multi);
	mad_rpc_register(SVC_MISUSE, s_misuse);
	mad_rpc_register(SVC_DONE, s_done);
	mad_rpc_register(SVC_LATER, s_later);
	srv = thread_create("mad-server", server, NULL, PRIO_NORMAL, 0);
	local_misuse();
	if (arg_int("forge", 0) && num_nodes >= 3)
		forge_word();

	for (int round = 0; round < rounds; round++) {
		uint32_t seq = (uint32_t)round * 1000;
		/* Interleave destinations so that every node receives from all at once. */
		for (int k = 1; k < num_nodes; k++) {
			int dest = (node_id + k) % num_nodes;
			EXPECT(send_strings(dest, seq) == 0, "strings to node %d", dest);
			sent[dest]++;
		}
		for (size_t si = 0; si < NSIZES; si++) {
			for (int m = 0; m < 6; m++) {
				for (int k = 1; k < num_nodes; k++) {
					int dest = (node_id + k) % num_nodes;
					r = send_modes(dest, seq + (uint32_t)(si * 6 + (size_t)m), modes[m], sizes[si]);
					EXPECT(r == 0, "%zu bytes mode %#x to node %d: %d", sizes[si], modes[m], dest, r);
					sent[dest]++;
				}
			}
		}
		for (int k = 1; k < num_nodes; k++) {
			int dest = (node_id + k) % num_nodes;
			for (int v = 0; v < 4; v++) {
				EXPECT(send_misuse(dest, v) == 0, "misuse message %d to node %d", v, dest);
				sent[dest]++;
				/* The next message must come through intact after each. */
				EXPECT(send_multi(dest, seq * 7 + (uint32_t)(node_id * 100 + v)) == 0, "multi to node %d", dest);
				sent[dest]++;
			}
		}
		if (big) {
			int dest = (node_id + 1) % num_nodes;
			EXPECT(send_modes(dest, seq + 900, MAD_SND_CHEAPER | MAD_RECV_CHEAPER, big) == 0,
			       "%zu bytes to node %d", big, dest);
			EXPECT(send_modes(dest, seq + 901, MAD_SND_LATER | MAD_RECV_EXPRESS, big) == 0,
			       "%zu bytes EXPRESS to node %d", big, dest);
			sent[dest] += 2;
		}
	}
	EXPECT(send_later_to_all(sent) == 0, "one SND_LATER message to every node");
	int unreached = 0;
	for (int k = 1; k < num_nodes; k++) {
		int dest = (node_id + k) % num_nodes;
		r = send_done(dest, sent[dest]);
		EXPECT(r == 0, "done to node %d: %d", dest, r);
		unreached += r != 0;
	}
	/* Wait for everyone's last message (not from a node this one can no longer reach). */
	uint64_t end = cycles() + ns_to_cycles(300000000000ULL);
	while (done_from + unreached < num_nodes - 1 && cycles() < end)
		thread_sleep_ns(10000000);
	EXPECT(done_from == num_nodes - 1, "only %d of %d nodes finished sending", done_from, num_nodes - 1);
	EXPECT(misuse_seen == 4 * (num_nodes - 1) * rounds, "%d misuse messages handled, %d expected",
	       misuse_seen, 4 * (num_nodes - 1) * rounds);
	EXPECT(later_seen == num_nodes - 1, "%d SND_LATER messages, %d expected", later_seen,
	       num_nodes - 1);
	if (arg_bool("refuse", 0) && strcmp(mad_driver_name(), "req") == 0)
		refused_chunk();
	if (arg_bool("abandon", 0) && strcmp(mad_driver_name(), "rmem") == 0)
		abandoned_body();
	if (arg_bool("bad_eager", 0) && strcmp(mad_driver_name(), "rmem") == 0)
		bad_eager_body();
	stop_server = 1;
	thread_join(srv);
	/* No node withdraws its driver while another may still write into it. */
	EXPECT(cluster_barrier(120000000000ULL) == 0, "final barrier");
	mad_stats(&st);
	if (strcmp(mad_driver_name(), "req") == 0) {
		struct rmem_counters rc;
		rmem_counters(&rc);
		printf("mad-test: node %d: %lu chunk WRITEs found no room to queue and went again later\n",
		       node_id, (unsigned long)rc.fifo_overflows);
	}
	if (strcmp(mad_driver_name(), "rmem") == 0) {
		/* Every body here had a half of the eager area free, but after a message given up. */
		struct mad_rmem_counts c;
		mad_rmem_counts(&c);
		printf("mad-test: node %d: rmem bodies sent with an early part %lu, all by READY %lu\n", node_id,
		       (unsigned long)c.early, (unsigned long)c.by_ready);
		EXPECT(c.early > 0 && c.by_ready <= (uint64_t)arg_bool("abandon", 0),
		       "rmem bodies: %lu early, %lu all by READY", (unsigned long)c.early, (unsigned long)c.by_ready);
	}
	if (strcmp(mad_driver_name(), "tcp") == 0)
		/* Fixed at each connection's SYN: the long frames' once fabric_wait_path saw them pass. */
		printf("mad-test: node %d: the shortest segment size of a TCP connection: %u bytes\n", node_id,
		       (unsigned)lwip_port_mss_least);
	const char *used = mad_driver_name();
	mad_exit();
	double secs = (double)cycles_to_ns(cycles() - t0) / 1e9;
	printf("mad-test: node %d: %lu messages sent, %lu received, %d checks, %d failures, %.1f s\n",
	       node_id, (unsigned long)st.sent, (unsigned long)st.received, check_count, check_failures, secs);
	result("driver=%s messages=%lu bytes=%lu failures=%d misuse=%lu send_pending=%lu send_deferred=%lu", used,
	       (unsigned long)st.received, (unsigned long)st.bytes_received, check_failures,
	       (unsigned long)st.misuse, (unsigned long)st.send_pending, (unsigned long)st.send_deferred);
	return check_failures ? 1 : 0;
}

APP(mad_test_app, "mad-test",
    "Madeleine interface on a driver: Figures 4/5, every mode, 0 B to 1 MiB, misuse",
    mad_test_main, mad_test_args, 2);
