/*
 * libFuzzer target: the fabric's receive path.  Each input is a sequence
 * of frames (2-byte length prefix each) arriving at node 1 of a 4-node
 * cluster; every frame goes through fab_parse() and, if it passes, into
 * the channel of the peer it claims to come from, exactly as net/fabric/rx.c
 * does.  The channel may transmit (frames are dropped) and deliver
 * (checked to be in order).  Sanitizers catch memory errors; the asserts
 * catch broken invariants; the buffer count catches leaks.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/fabric/channel.h"
#include "net/fabric/member.h"
#include "net/fabric/wire.h"

int host_pkt_live(void);

static uint32_t delivered[4];

#define MY_INC 0x1111222233334444ULL
static struct member mem[4];

static int xmit(void *ctx, struct pktbuf *pb)
{
	(void)ctx;
	/* Whatever the channel sends must itself parse at the peer. */
	struct fab_hdr h;
	const uint8_t *p;
	if (fab_parse(pb->data, pb->len, 0, 4, &h, &p) != FAB_OK &&
	    fab_parse(pb->data, pb->len, 2, 4, &h, &p) != FAB_OK &&
	    fab_parse(pb->data, pb->len, 3, 4, &h, &p) != FAB_OK)
		abort();
	return 0;
}

static int deliver(void *ctx, int peer, uint8_t proto, const uint8_t *p, size_t len,
		   struct pktbuf *pb)
{
	(void)ctx;
	(void)proto;
	(void)pb;
	if (len > FAB_MTU || peer < 0 || peer > 3 || peer == 1)
		abort();
	/* Touch every byte the channel claims is payload. */
	volatile uint8_t sink = 0;
	for (size_t i = 0; i < len; i++)
		sink ^= p[i];
	(void)sink;
	delivered[peer]++;
	return (len & 1) && (p[0] == 0xbb) ? -EBUSY : 0;
}

static struct pktbuf *alloc(void *ctx, size_t len)
{
	(void)ctx;
	return pkt_get_len(len);
}

static const struct chan_ops ops = { xmit, deliver, alloc, NULL };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct chan ch[4];
	uint64_t now = 1000000;

	memset(delivered, 0, sizeof delivered);
	memset(mem, 0, sizeof mem);
	for (int i = 0; i < 4; i++) {
		struct chan_cfg cfg = {
			.me = 1, .peer = i, .session = 7, .window = 8 + 8 * (unsigned)i,
			.rto_init_ns = 1000000, .rto_min_ns = 100000, .rto_max_ns = 10000000,
			.ack_delay_ns = 50000, .dead_ns = 50000000,
		};
		chan_init(&ch[i], &cfg, &ops, NULL);
	}
	while (size >= 2) {
		size_t n = (size_t)data[0] | (size_t)data[1] << 8;
		data += 2;
		size -= 2;
		if (n > size)
			n = size;
		struct pktbuf *pb = pkt_get();
		size_t copy = n < PKT_MAX_FRAME ? n : PKT_MAX_FRAME;
		memcpy(pb->data, data, copy);
		pb->len = (uint16_t)copy;
		data += n;
		size -= n;

		struct fab_hdr h;
		const uint8_t *payload;
		/* node=auto frames, keyed or not: what is accepted is a view one can take. */
		for (int keyed = 0; keyed < 2; keyed++) {
			struct fab_auto a;
			if (fab_parse_auto(pb->data, pb->len, keyed, &h, &a) != FAB_OK)
				continue;
			if (h.type != FAB_AUTO || a.nview > FAB_MAX_NODES || memcmp(a.mac, pb->data + 6, 6) ||
			    (a.nview && fab_auto_find((const uint8_t (*)[6])a.view, a.nview, a.mac) < 0) ||
			    (a.expect && a.nview && a.nview != a.expect))
				abort();
			for (int i = 1; i < a.nview; i++)
				if (memcmp(a.view[i - 1], a.view[i], 6) >= 0)
					abort();
		}
		if (fab_parse(pb->data, pb->len, 1, 4, &h, &payload) != FAB_OK) {
			pkt_put(pb);
			continue;
		}
		if (payload < pb->data || payload + h.len > pb->data + pb->len)
			abort();
		if (h.type == FAB_HELLO) {
			/* Membership as discovery.c runs it: a new incarnation resets the channel. */
			struct fab_hello hello;
			memcpy(&hello, payload, sizeof hello);
			struct member *m = &mem[h.src];
			uint32_t epoch = m->epoch;
			/* A fixed challenge, so that the fuzzer can answer it and reach binding
			 * (a binding answers the challenge in force, then kept as bound_chal). */
			unsigned r = member_hello(m, hello.inc, hello.nonce, hello.echo,
						  (hello.flags & FAB_HELLO_BOUND) != 0, pb->data + 6,
						  h.dst == FAB_BROADCAST, MY_INC);
			if ((r & MEMBER_BIND) && (m->inc != hello.inc || m->epoch != epoch + 1 ||
						  hello.echo != m->bound_chal || h.dst == FAB_BROADCAST))
				abort();
			if (!(r & MEMBER_BIND) && m->epoch != epoch)
				abort();
			if ((r & MEMBER_RESET) && !(r & MEMBER_BIND))
				abort();
			if (r & MEMBER_RESET)
				chan_reset(&ch[h.src], fab_pair_tag(MY_INC, m->inc), m->mac);
			pkt_put(pb);
			continue;
		}
		if (h.type == FAB_RAW) {
			pkt_put(pb);
			continue;
		}
		chan_input(&ch[h.src], &h, payload, pb, now);
		now += 10000 + (h.seq & 0xffff) * 100;
		for (int i = 0; i < 4; i++) {
			if (i == 1)
				continue;
			chan_timer(&ch[i], now);
			if (ch[i].blocked && (h.ack & 1))
				chan_resume(&ch[i], now);
			if (chan_outstanding(&ch[i]) > ch[i].sndq) {
				fprintf(stderr, "peer %d una %u nxt %u sndq %u dead %d\n", i, ch[i].snd_una, ch[i].snd_nxt, ch[i].sndq, ch[i].dead);
				abort();
			}
		}
		/* Send something now and then so acks have work to do. */
		if ((h.sack & 3) == 3) {
			struct pktbuf *out = pkt_get();
			if (chan_send(&ch[h.src], out, 9, h.len % 64, 0, now) < 0)
				pkt_put(out);
		}
	}
	for (int i = 0; i < 4; i++)
		chan_release(&ch[i]);
	if (host_pkt_live() != 0)
		abort();
	return 0;
}
