/*
 * fabric-junk: hostile frames must be counted and dropped, never trusted.
 *
 * Node 0 sends node 1, straight through the NIC driver, frames of every
 * bad kind: too short for Ethernet, an Ethernet header alone, a truncated
 * fabric header, a payload length longer than the frame, a bad CRC, an
 * unknown frame type, a bad version, a source node outside the cluster,
 * node 1 as its own source, a frame for another node, a spoofed source
 * MAC, data with no protocol, an unknown EtherType, a HELLO without an
 * incarnation, and a HELLO claiming a new incarnation of node 0 that never
 * completes the handshake (node 1 must not bind it: no rebinding, the
 * channel goes on).  Then it tells
 * node 1 over the reliable channel how many of each it sent; node 1
 * checks that every one landed in the right counter, and that the
 * channel still works.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "apps/app.h"
#include "kernel/sync.h"
#include "kernel/thread.h"
#include "kernel/x86.h"
#include "net/call/barrier.h"
#include "net/fabric/fabric.h"
#include "net/net.h"
#include "tests/apps/protos.h"

enum kind {
	K_SHORT, K_ETH_ONLY, K_TRUNC_HDR, K_LEN, K_CRC, K_TYPE, K_VERSION, K_NODE, K_SELF,
	K_NOTME, K_SPOOF, K_STALE, K_PROTO0, K_ETHERTYPE, K_HELLO_NOINC, K_HELLO_CLAIM, NKIND
};

static const char *const kind_names[NKIND] = {
	"short", "eth_only", "truncated_header", "bad_length", "bad_crc", "bad_type",
	"bad_version", "foreign_node", "self_source", "not_for_me", "spoofed_mac",
	"stale_session", "no_protocol", "unknown_ethertype", "hello_without_incarnation",
	"hello_new_incarnation",
};

/*
 * The receive counter each kind must land in.  Frames shorter than 60
 * bytes leave the sending NIC zero-padded to 60, so a 10-byte frame
 * arrives with EtherType 0, an Ethernet header alone arrives with fabric
 * version 0, and a truncated fabric header arrives claiming more payload
 * than the padded frame holds.
 */
enum counter { C_UNKNOWN_TYPE, C_VERSION, C_LEN, C_CRC, C_TYPE, C_NODE, C_NOTME, C_FOREIGN_MAC,
	       C_STALE, C_FIELD, C_HELLO_BAD, C_REBINDS, NCOUNTER };

static const char *const counter_names[NCOUNTER] = {
	"unknown ethertype", "bad_version", "bad_length", "bad_crc", "bad_type", "bad_node",
	"not_for_me", "foreign mac", "stale session", "bad_field", "hello without or with a past incarnation",
	"rebinds",
};

static const enum counter lands_in[NKIND] = {
	[K_SHORT] = C_UNKNOWN_TYPE, [K_ETH_ONLY] = C_VERSION, [K_TRUNC_HDR] = C_LEN,
	[K_LEN] = C_LEN, [K_CRC] = C_CRC, [K_TYPE] = C_TYPE, [K_VERSION] = C_VERSION,
	[K_NODE] = C_NODE, [K_SELF] = C_NODE, [K_NOTME] = C_NOTME, [K_SPOOF] = C_FOREIGN_MAC,
	[K_STALE] = C_STALE, [K_PROTO0] = C_FIELD, [K_ETHERTYPE] = C_UNKNOWN_TYPE,
	[K_HELLO_NOINC] = C_HELLO_BAD,
	/* Heard, answered, never bound: it must count as no rebinding. */
	[K_HELLO_CLAIM] = C_REBINDS,
};

#define PER_KIND 20

struct report {
	uint32_t sent[NKIND];
} __attribute__((packed));

static volatile int got_report;
static struct report report;
static struct waitq wq = WAITQ_INIT;

static int report_handler(int src, const uint8_t *p, size_t len, struct pktbuf *pb)
{
	(void)src;
	(void)pb;
	if (len == sizeof report) {
		memcpy(&report, p, sizeof report);
		got_report = 1;
		waitq_wake_all(&wq);
	}
	return 0;
}

/* A well-formed DATA frame to node 1, then spoiled according to k. */
static size_t craft(uint8_t *f, enum kind k, const uint8_t *my_mac, const uint8_t *peer_mac)
{
	struct fab_hdr h = { 0 };
	size_t n;

	h.type = FAB_DATA;
	h.proto = APP_PROTO_TEST;
	h.src = 0;
	h.dst = 1;
	h.seq = 0x7fff0000u;	/* far outside any window, should it get through */
	h.len = 40;
	h.session = k == K_STALE ? (uint16_t)(fabric_tag(1) + 1) : fabric_tag(1);
	memset(f + FAB_ETH_HLEN + FAB_HDR_LEN, 0xee, 40);
	if (k == K_HELLO_NOINC || k == K_HELLO_CLAIM) {
		struct fab_hello hl = { 0 };
		h.type = FAB_HELLO;
		h.proto = 0;
		h.seq = 0;
		h.session = 0;
		h.len = sizeof hl;
		hl.nodes = (uint16_t)num_nodes;
		memcpy(hl.mac, my_mac, 6);
		/* The echo is no challenge node 1 sent: the handshake stays open. */
		static uint64_t claims;
		/* Each claim another incarnation: each asks for an answer. */
		hl.inc = k == K_HELLO_CLAIM ? 0x5eed5eed00000000ULL + (fabric_incarnation() | 1) + 2 * claims++
					    : 0;
		hl.echo = fabric_incarnation();
		hl.flags = FAB_HELLO_BOUND;
		memcpy(f + FAB_ETH_HLEN + FAB_HDR_LEN, &hl, sizeof hl);
	}
	switch (k) {
	case K_TYPE: h.type = 77; break;
	case K_NODE: h.src = 200; break;
	case K_SELF: h.src = 1; break;
	case K_NOTME: h.dst = 0; break;
	case K_PROTO0: h.proto = 0; break;
	default: break;
	}
	n = fab_build(f, peer_mac, my_mac, &h);
	switch (k) {
	case K_SHORT: return 10;
	case K_ETH_ONLY: return FAB_ETH_HLEN;
	case K_TRUNC_HDR: return FAB_ETH_HLEN + FAB_HDR_LEN - 5;
	case K_LEN: return n - 20;		/* claims 40 payload bytes, has 20 */
	case K_CRC: f[n - 1] ^= 0x40; return n;
	case K_VERSION: f[FAB_ETH_HLEN] = 9; fab_reseal(f); return n;
	case K_SPOOF:
		/*
		 * A source MAC of no node (nodes are 02:4e:4f:57:hi:lo, fewer
		 * than 256 of them).  Not a neighbour's: the switch would learn
		 * that MAC on our port and send the neighbour's frames here.
		 */
		f[6 + 4] ^= 0xa5;
		return n;
	case K_ETHERTYPE: f[12] = 0x12; f[13] = 0x34; return n;
	default: return n;
	}
}

static int send_junk(void)
{
	struct report r = { { 0 } };
	const uint8_t *peer_mac = fabric_peer_mac(1);

	for (int k = 0; k < NKIND; k++) {
		for (int i = 0; i < PER_KIND; i++) {
			struct pktbuf *pb = pkt_get();
			if (!pb)
				return 1;
			pb->len = (uint16_t)craft(pb->data, (enum kind)k, net_mac(), peer_mac);
			int e = net_transmit(pb);
			pkt_put(pb);
			if (e == 0)
				r.sent[k]++;
			else if (i == 0)
				printf("fabric-junk: the driver refused a %s frame (%d)\n", kind_names[k], e);
			/*
			 * Paced, so that the virtual switch drops nothing; but HELLO
			 * claims in a burst, more than node 1 may answer at once.
			 */
			if (k != K_HELLO_CLAIM)
				thread_sleep_ns(300000);
		}
	}
	if (fabric_send(1, APP_PROTO_TEST, &r, sizeof r, NULL, 0, 0) < 0)
		return 1;
	return fabric_flush(1, 10000000000ULL) < 0;
}

static void snapshot(uint64_t got[NCOUNTER], struct fabric_counters *c)
{
	fabric_counters(c);
	got[C_UNKNOWN_TYPE] = net_stats.unknown_type;
	got[C_VERSION] = c->rx_rejected[FAB_E_VERSION];
	got[C_LEN] = c->rx_rejected[FAB_E_LEN] + c->rx_rejected[FAB_E_SHORT];
	got[C_CRC] = c->rx_rejected[FAB_E_CRC];
	got[C_TYPE] = c->rx_rejected[FAB_E_TYPE];
	got[C_NODE] = c->rx_rejected[FAB_E_NODE];
	got[C_NOTME] = c->rx_rejected[FAB_E_NOTME];
	got[C_FOREIGN_MAC] = c->rx_foreign_mac;
	got[C_STALE] = c->rx_stale_session;
	got[C_FIELD] = c->rx_rejected[FAB_E_FIELD];
	got[C_HELLO_BAD] = c->hello_bad;
	got[C_REBINDS] = c->rebinds;
}

/* Counters at the start barrier: whatever arrived during boot is not junk. */
static uint64_t before[NCOUNTER], before_limited;

static int check_junk(void)
{
	struct fabric_counters c;
	uint64_t got[NCOUNTER], want[NCOUNTER] = { 0 };
	int bad = 0;

	irqflags_t f = irq_save();
	for (int s = 0; !got_report && s < 60; s++)
		waitq_wait_timeout(&wq, 1000000000ULL);
	irq_restore(f);
	if (!got_report) {
		printf("fabric-junk: FAILED: no report from node 0 in 60 s\n");
		return 1;
	}
	snapshot(got, &c);
	for (int i = 0; i < NCOUNTER; i++)
		got[i] -= before[i];
	for (int k = 0; k < NKIND; k++)
		if (k != K_HELLO_CLAIM)
			want[lands_in[k]] += report.sent[k];
	for (int i = 0; i < NCOUNTER; i++) {
		if (got[i] != want[i]) {
			printf("fabric-junk: %s: expected %lu, counted %lu\n", counter_names[i], want[i], got[i]);
			bad++;
		}
	}
	/* A burst of claims, each asking for an answer: most are held back. */
	if (c.hello_limited == before_limited) {
		printf("fabric-junk: %u HELLO claims in a burst, every one answered\n",
		       report.sent[K_HELLO_CLAIM]);
		bad++;
	}
	if (c.delivered == 0 || c.rx_dead_peer || c.rx_unknown_proto) {
		printf("fabric-junk: the channel misbehaved after the junk\n");
		bad++;
	}
	fabric_print_stats();
	result("kinds=%d per_kind=%d mismatches=%d", NKIND, PER_KIND, bad);
	return bad ? 1 : 0;
}

static int junk_main(void)
{
	if (!net_up() || !fabric_ready()) {
		printf("fabric-junk: no network\n");
		return 1;
	}
	fabric_register(APP_PROTO_TEST, report_handler);
	if (fabric_wait_peers(30000000000ULL) < 0)
		return 1;
	if (node_id == 1) {
		struct fabric_counters c;
		snapshot(before, &c);
		before_limited = c.hello_limited;
	}
	if (cluster_barrier(30000000000ULL) < 0)
		return 1;
	if (node_id == 0)
		return send_junk();
	if (node_id == 1)
		return check_junk();
	return 0;
}

APP(fabric_junk, "fabric-junk",
    "hostile frames to node 1: each must be counted and dropped",
    junk_main, NULL, 2);
