/*
 * nictest: exercise the NIC driver with raw frames between node 0 and 1.
 *
 * Node 0 sends frames of every size from 60 to 1514 bytes (EtherType
 * 0x88b6, broadcast) one at a time; node 1 echoes each back to its sender.
 * Node 0 checks every echo byte for byte, retrying a frame the network
 * lost (raw Ethernet may drop).  Then a burst of back-to-back frames fills
 * the TX ring to check that transmit waits for space and that the driver
 * reclaims completed descriptors.  Both nodes print the driver's counters.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "apps/app.h"
#include "kernel/sync.h"
#include "kernel/thread.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"
#include "net/net.h"

#define ETHERTYPE_NICTEST 0x88b6

static struct waitq rx_wq = WAITQ_INIT;
static struct pktbuf *rx_head, *rx_tail;
static volatile int rx_count;

static void nictest_input(struct pktbuf *pb)
{
	pb->next = NULL;
	if (rx_tail)
		rx_tail->next = pb;
	else
		rx_head = pb;
	rx_tail = pb;
	rx_count++;
	waitq_wake_one(&rx_wq);
}

/* Next received frame, or NULL after timeout_ns. */
static struct pktbuf *rx_wait(uint64_t timeout_ns)
{
	irqflags_t f = irq_save();
	struct pktbuf *pb;
	uint64_t end = cycles() + ns_to_cycles(timeout_ns);

	while (!rx_head) {
		uint64_t now = cycles();
		if (now >= end)
			break;
		waitq_wait_timeout(&rx_wq, cycles_to_ns(end - now));
	}
	pb = rx_head;
	if (pb) {
		rx_head = pb->next;
		if (!rx_head)
			rx_tail = NULL;
	}
	irq_restore(f);
	return pb;
}

/* Transmit, waiting for ring space as long as it takes. */
static int send_frame(struct pktbuf *pb)
{
	int r;

	while ((r = net_transmit_wait(pb, 1000000000ULL, NULL)) == -ETIMEDOUT)
		;
	return r;
}

static void fill(struct pktbuf *pb, const uint8_t *dst, const uint8_t *src, uint32_t seq, int len)
{
	memcpy(pb->data, dst, 6);
	memcpy(pb->data + 6, src, 6);
	put_be16(pb->data + 12, ETHERTYPE_NICTEST);
	put_be32(pb->data + 14, seq);
	for (int i = 18; i < len; i++)
		pb->data[i] = (uint8_t)(seq * 7 + i);
	pb->len = (uint16_t)len;
}

static int sender(int count, int burst)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	int retries = 0, bad = 0;

	for (int s = 0; s < count; s++) {
		int len = ETH_MIN_FRAME + s % (ETH_MAX_FRAME - ETH_MIN_FRAME + 1);
		int tries;
		for (tries = 0; tries < 20; tries++) {
			struct pktbuf *pb = pkt_get(), *r;
			if (!pb) {
				printf("nictest: out of packet buffers\n");
				return 1;
			}
			fill(pb, bcast, net_mac(), (uint32_t)s, len);
			send_frame(pb);
			pkt_put(pb);
			while ((r = rx_wait(200000000)) != NULL) {
				uint32_t seq = get_be32(r->data + 14);
				int ok = seq == (uint32_t)s && r->len == len;
				for (int i = 18; ok && i < len; i++)
					ok = r->data[i] == (uint8_t)(seq * 7 + i);
				if (seq == (uint32_t)s && !ok)
					bad++;
				pkt_put(r);
				if (seq == (uint32_t)s)
					break;
			}
			if (r)
				break;
			retries++;
		}
		if (tries == 20) {
			printf("nictest: frame %d (len %d) never came back\n", s, len);
			return 1;
		}
	}
	printf("nictest: %d echoes checked, %d retries, %d corrupted\n", count, retries, bad);

	/* Burst: more frames than any TX ring holds, back to back. */
	uint64_t t0 = cycles();
	for (int s = 0; s < burst; s++) {
		struct pktbuf *pb = pkt_get();
		if (!pb)
			return 1;
		fill(pb, bcast, net_mac(), 0x80000000u | (uint32_t)s, ETH_MAX_FRAME);
		send_frame(pb);
		pkt_put(pb);
	}
	uint64_t us = cycles_to_ns(cycles() - t0) / 1000;
	printf("nictest: burst of %d full frames sent in %lu us\n", burst, us);
	/* Tell node 1 we are done (retry: it may be lost). */
	struct pktbuf *r;
	int got_bye = 0;
	for (int i = 0; i < 50 && !got_bye; i++) {
		struct pktbuf *pb = pkt_get();
		fill(pb, bcast, net_mac(), 0xffffffffu, 60);
		send_frame(pb);
		pkt_put(pb);
		while ((r = rx_wait(100000000)) != NULL) {
			got_bye |= get_be32(r->data + 14) == 0xfffffffeu;
			pkt_put(r);
			if (got_bye)
				break;
		}
	}
	result("role=sender nic=%s echoes=%d retries=%d corrupted=%d burst=%d", net_nic_name(), count,
	       retries, bad, burst);
	return bad || !got_bye ? 1 : 0;
}

static int echoer(void)
{
	int echoed = 0, burst_rx = 0;

	for (;;) {
		struct pktbuf *r = rx_wait(30000000000ULL);
		if (!r) {
			printf("nictest: nothing from node 0 for 30 s\n");
			return 1;
		}
		uint32_t seq = get_be32(r->data + 14);
		if (seq & 0x80000000u) {
			if (seq == 0xffffffffu) {
				/* Acknowledge the end; node 0 may repeat it. */
				struct pktbuf *pb = pkt_get();
				fill(pb, r->data + 6, net_mac(), 0xfffffffeu, 60);
				send_frame(pb);
				pkt_put(pb);
				pkt_put(r);
				/* Linger to answer repeats, then finish. */
				while ((r = rx_wait(500000000)) != NULL) {
					pb = pkt_get();
					fill(pb, r->data + 6, net_mac(), 0xfffffffeu, 60);
					send_frame(pb);
					pkt_put(pb);
					pkt_put(r);
				}
				break;
			}
			burst_rx++;
			pkt_put(r);
			continue;
		}
		/* Echo the same buffer back: swap the addresses. */
		uint8_t src[6];
		memcpy(src, r->data + 6, 6);
		memcpy(r->data, src, 6);
		memcpy(r->data + 6, net_mac(), 6);
		send_frame(r);
		pkt_put(r);
		echoed++;
	}
	printf("nictest: echoed %d frames, received %d burst frames\n", echoed, burst_rx);
	result("role=echoer nic=%s echoed=%d burst_received=%d", net_nic_name(), echoed, burst_rx);
	return 0;
}

static const struct argspec nictest_args[] = {
	{ "count", ARG_INT, 1, 1000000, "frames to echo (default 1455: every size once)" },
	{ "burst", ARG_INT, 0, 100000, "back-to-back frames at the end (default 1000)" },
	{ NULL, 0, 0, 0, NULL },
};

static int nictest_main(void)
{
	int rc;

	if (!net_up()) {
		printf("nictest: no NIC\n");
		return 1;
	}
	if (net_register(ETHERTYPE_NICTEST, nictest_input) < 0)
		return 1;
	if (node_id == 0)
		rc = sender((int)arg_int("count", ETH_MAX_FRAME - ETH_MIN_FRAME + 1),
			    (int)arg_int("burst", 1000));
	else if (node_id == 1)
		rc = echoer();
	else
		rc = 0;
	net_print_stats();
	net_unregister(ETHERTYPE_NICTEST);
	return rc;
}

APP(nictest, "nictest",
    "raw-frame echo and burst test of the NIC driver (nodes 0 and 1)",
    nictest_main, nictest_args, 2);
