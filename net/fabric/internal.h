/*
 * The fabric's shared state, for its own files only (fabric.c, start.c,
 * discovery.c, rx.c, inject.c, send.c, auto.c, clock.c): nothing outside
 * net/fabric includes this.  All of it is touched with interrupts off (see fabric.c).
 */
#ifndef NET_FABRIC_INTERNAL_H
#define NET_FABRIC_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "kernel/sync.h"
#include "net/fabric/channel.h"
#include "net/fabric/fabric.h"
#include "net/fabric/member.h"

struct peer {
	struct chan ch;
	struct member m;		/* its binding: id, MAC, incarnation */
	int known;			/* bound by the handshake (m.inc != 0) */
	uint16_t rx_tag;		/* the tag its frames to us carry */
	uint8_t mac[6];			/* its bound MAC */
	struct waitq senders;		/* threads waiting for window space or an ack */
	int reported_dead;
	int lossless;			/* its HELLO said lossless: it may send us no CRC */
	uint32_t frame;			/* the longest frame to send it: the shorter of its HELLO's and ours */
	uint32_t frame_ok;		/* the longest it said it took from us intact (its HELLO's heard) */
	uint32_t heard_long;		/* the longest frame we took from it intact (said in our HELLOs) */
	uint8_t probes;			/* padded HELLOs of p->frame bytes sent, not yet confirmed */
	uint32_t frame_cap;		/* 0, or FAB_FRAME_STEP once no probe of longer frames came through */
	struct fab_seal tx_seal;	/* keyed: our frames to it (the channel's and raw) */
	struct fab_unseal rx_seal;	/* keyed: its frames to us, and their replay window */
	unsigned hello_tokens;		/* unicast HELLOs we may still send it now */
	uint64_t hello_refill;		/* when they were last counted up */
	uint64_t hello_up_answer;	/* when we last answered its broadcast with the pair up */
	struct fab_unseal hello_rx;	/* keyed: the cluster key, and the window over its bound incarnation's HELLOs */
};

/* How long after start-up a message to an app protocol not registered yet waits for its handler (park.c). */
#define FAB_APP_GRACE_NS 20000000000ULL

struct fabric {
	struct peer *peers;		/* one per node, this node's unused */
	int me, nnodes;
	int ready;			/* up: fabric_init succeeded */
	int started;			/* the kernel's protocols are registered */
	int lossless;			/* the link is lossless and no fault= here */
	uint32_t frame_max;		/* the longest frame this node's NIC carries (net_frame_max, frame=) */
	int link_exact;			/* the NIC's link is its memory (shm): any frame it takes arrives */
	size_t mtu_max;			/* and the payload of one (fab_payload_max) */
	int inject;			/* fault= applies here (fab_inject_any(), read on every frame) */
	uint64_t inc;			/* this boot's incarnation */
	int keyed;			/* key= given: every frame sealed (wire.h) */
	struct sipkey key;		/* the cluster key */
	int key_state;			/* fab_cluster_key: 0 not read yet, 1 none, 2 derived */
	uint64_t key_ns;		/* how long its derivation took (scrypt) */
	struct fab_seal hello_seal;	/* HELLOs: under the cluster key itself */
	uint64_t peer_timeout_ns;
	fabric_handler_t handlers[FP_MAX], raw_handlers[FP_MAX];
	uint8_t in_place[FP_MAX];	/* its handler takes messages in shared memory (fabric_register_in_place) */
	int rx_shared;			/* the message being delivered lies there (fabric_rx_shared) */
	struct fabric_counters ctr;
	uint64_t app_grace_end;		/* until then an app protocol's messages wait for its handler */
	int pkt_tx;			/* the send queues' share of the packet pool (pktbuf.h) */
};

/* The send queues' default share: frames not yet acknowledged, 3/8 of the pool (fabric_tx_bufs=). */
#define FAB_PKT_SHARE (PKT_POOL_BUFS * 3 / 8)

extern struct fabric fab;

/* The channels' link: the NIC, the buffer pool and the protocols' handlers (fabric.c). */
extern const struct chan_ops fab_chan_ops;

/*
 * Messages for an app protocol not registered yet, kept aside so that the
 * sender's other protocols go on (park.c).  fab_park: 0, or -EBUSY (the
 * park full: the channel holds it).  fab_park_has: proto (< FP_MAX) has
 * messages parked or a handler waiting for them (fab_park_bind: the
 * fabric's handler table and counters, given at start-up; late: the
 * grace is over, fab_park_late()).  fab_park_register:
 * fabric_register's (0, or -EBUSY: one is waiting already); the handler
 * is installed once proto's parked messages are handed over.  fab_park_flush (fab_park_busy: anything to
 * do): hand over what can go, drop what the grace ended for.
 * fab_park_clear: everything goes.
 */
void fab_park_bind(fabric_handler_t *handlers, struct fabric_counters *ctr);
int fab_park(int src, uint8_t proto, const uint8_t *p, size_t len, struct pktbuf *pb);
int fab_park_has(uint8_t proto);
int fab_park_register(uint8_t proto, fabric_handler_t fn, int late);
int fab_park_busy(void);
void fab_park_flush(int late);
void fab_park_clear(void);

/* The grace of app protocols is over: what is parked for one with no handler goes as no one's. */
#define fab_park_late() (fab.started && now_ns() >= fab.app_grace_end)

/* Hand a built frame to the NIC; a full ring counts as tx_failed.  (irq off) */
int fab_xmit(struct pktbuf *pb);

/*
 * The cluster key of key= (fab_key_from_text), derived at the first call
 * and kept; the text is zeroed then (arg_forget).  1 and *k set, or 0
 * without a key.
 */
int fab_cluster_key(struct sipkey *k);

/* After any channel operation on p: resume, report a death, wake senders.  (irq off) */
void fab_after_chan_op_slow(struct peer *p);
static inline void fab_after_chan_op(struct peer *p)
{
	/* Usually there is nothing to do: nothing refused, nobody dead or waiting. */
	if (p->ch.blocked || p->ch.dead || p->senders.head)
		fab_after_chan_op_slow(p);
}

/* The protocols' fabric_on_peer_reset hooks. */
extern void (*fab_reset_hooks[FABRIC_RESET_HOOKS])(int node);

/* discovery.c: start broadcasting HELLO; a HELLO arrived. */
void fab_discovery_start(void);
/*
 * A HELLO that passed its tag (keyed: ctr its counter, seen: ctr is in
 * the sender's HELLO window already, or before it).
 */
void fab_hello_input(const struct fab_hdr *h, const uint8_t *payload, const uint8_t *src_mac, uint64_t ctr,
		     int seen);


/* auto.c: an AUTO frame (node=auto), owns pb (irq); its counters' line. */
void fab_auto_input(struct pktbuf *pb);
void fab_auto_print_stats(void);

/*
 * rx.c: one received fabric frame, after fault injection.  Owns pb.  (irq)
 * fab_process_frame: one in the NIC's own memory (net.h's frame handlers):
 * 0, or -ENOBUFS (left to the NIC: no buffer for what may be kept).
 * fab_receive: the checks and the hand-off of both, pb NULL for a frame
 * in place; 0, or -ENOBUFS from the channel (then pb is still the caller's).
 */
void fab_process(struct pktbuf *pb);
int fab_process_frame(uint8_t *frame, size_t len);
/* fab_process_frame for a long frame where it lies in the shared-memory link's ring (net_set_rx_shared). */
int fab_process_shared(uint8_t *frame, size_t len);
int fab_receive(uint8_t *frame, size_t len, struct pktbuf *pb);

/*
 * inject.c: set up receive faults from fault= and seed=, to apply to pb
 * on its way to deliver (fab_process); fab_inject_describe prints the rates.
 */
void fab_inject_init(void (*deliver)(struct pktbuf *pb));
int fab_inject_any(void);
void fab_inject(struct pktbuf *pb);
void fab_inject_describe(char *buf, size_t len);

#endif
