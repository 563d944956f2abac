/*
 * The fabric: the link layer between the nodes of the cluster.
 *
 * For every pair of nodes, a reliable, in-order, flow-controlled channel
 * (net/fabric/channel.h) carries messages of up to fabric_mtu(dst) bytes (FAB_MTU,
 * more on a link of longer frames) for a protocol
 * (the mechanisms register one each).  A raw mode sends single frames with
 * no sequencing or retransmission: the floor the benchmarks compare with.
 * Nodes find each other at boot by broadcasting HELLO frames; a node's
 * MAC address is learned, not assumed, and bound with its id and its
 * boot's incarnation by a handshake (net/fabric/member.h).  A node that
 * reboots is bound again: its channel starts afresh, and whatever was in
 * flight to its old incarnation fails with -ECONNRESET.
 *
 * Receive handlers run in the NIC's interrupt path, serialized: they must
 * be short and must not sleep.  A reliable handler that cannot take a
 * message now returns -EBUSY; the fabric keeps it (and, once the
 * window fills, stops the sender) and offers it again when the protocol
 * calls fabric_resume(), when the refusing peer's acknowledgement makes
 * room to answer it, and at every tick.  Nothing is dropped.
 *
 * Receive fault injection (fault= on the command line) applies to every
 * fabric frame this node receives.
 */
#ifndef NET_FABRIC_H
#define NET_FABRIC_H

#include <stddef.h>
#include <stdint.h>

#include "kernel/counters.h"

#include "drivers/pktbuf.h"
#include "net/fabric/wire.h"

/* The fabric's stages (kernel/trace.h): a frame handed to the NIC, a frame taken from it. */
#define TS_FABRIC_TX 2
#define TS_FABRIC_RX 5

/*
 * Protocol numbers (fab_hdr.proto).  A protocol claims its number where it
 * registers (fabric_register refuses one already taken) and defines it in
 * its own header: the fabric numbers none but its own.  The kernel's
 * protocols take 1..FP_KERNEL_LAST; FP_APP_FIRST..FP_MAX-1 are kept for
 * test apps (apps/app.h).
 */
#define FP_KERNEL_LAST 15
#define FP_APP_FIRST 16
#define FP_MAX 32


/* key= (net/fabric/wire.h): its length in characters. */
#define FABRIC_KEY_MIN 16
#define FABRIC_KEY_MAX 128

/*
 * fn(node) runs (interrupts off) each time a new incarnation of node is
 * bound in place of one bound before (it rebooted), after the pair's
 * channel was reset and its calls failed: the protocol forgets what it
 * kept of the old incarnation.  0, or -ENOSPC beyond FABRIC_RESET_HOOKS.
 */
#define FABRIC_RESET_HOOKS 8
int fabric_on_peer_reset(void (*fn)(int node));

/* Has this node a cluster key (every frame sealed)? */
int fabric_keyed(void);

/*
 * A tag under the cluster key for what travels outside the fabric's frames
 * (Madeleine's TCP set-up): SipHash-2-4 of domain (with its NUL) then the
 * n bytes of msg.  Each use names its own domain, so that no tag of one
 * passes for another's.  0 and *tag, or -ENOENT without a key.
 */
int fabric_key_tag(const char *domain, const void *msg, size_t n, uint64_t *tag);

enum {				/* fabric_send flags */
	FABRIC_NOWAIT = 1,	/* never sleep: -EAGAIN when the queue is full */
	FABRIC_ACKNOW = 2,	/* ask the receiver to acknowledge at once */
};

/*
 * A message handler: src node, payload, and the pktbuf holding it (take
 * pkt_ref(pb) to keep the payload after returning 0).  Interrupt context.
 */
typedef int (*fabric_handler_t)(int src, const uint8_t *payload, size_t len, struct pktbuf *pb);

/*
 * The fabric starts itself at boot (an init hook, after the NIC), and
 * delivers to protocols once the kernel's have registered (INIT_START):
 * until then a message for a protocol without a handler is held, not
 * dropped, as a peer that booted first may already be talking to it.
 * Its command-line keys (fault=, peer_timeout_ms=, seed=) are registered
 * with the kernel's argument check.
 */

/* Nonzero once the fabric is up. */
int fabric_ready(void);

/*
 * Wait until every node is bound by the handshake and has bound this node
 * (again, after a node rebooted).  Return 0, or -ETIMEDOUT naming the
 * missing nodes on the console.
 */
int fabric_wait_peers(uint64_t timeout_ns);

/*
 * Wait as fabric_wait_peers, then until the length of this node's frames
 * to every peer is settled: a probe of the longer frames both NICs take
 * came through, or PROBE_TRIES of them did not (what lies between passes
 * no more), or there is nothing to probe (Ethernet's frames, the
 * shared-memory link).  A protocol beside the fabric that fixes its
 * packet size once (a TCP connection's MSS, at its SYN, from the MTU of
 * net_on_path_frame) waits here first.  0, or -ETIMEDOUT (said on the
 * console, as fabric_wait_peers; the path as it then stands).
 */
int fabric_wait_path(uint64_t timeout_ns);

/*
 * Claim a protocol number for a reliable or a raw handler.  0, or -EBUSY /
 * -EINVAL.  Reliable messages to an app's protocol (FP_APP_FIRST..) that
 * came before it registered wait for it up to 20 s after start-up, set
 * aside (the sender's other protocols go on; its order kept), then count
 * as unknown.
 */
int fabric_register(uint8_t proto, fabric_handler_t fn);
int fabric_register_raw(uint8_t proto, fabric_handler_t fn);

/*
 * proto's reliable handler takes a message where it lies in memory other
 * nodes write (the shared-memory link's ring, unkeyed), fabric_rx_shared()
 * saying so while it runs: it reads every field there once, copying first
 * what it reads twice.  Messages of every other protocol, and of this one
 * on a keyed fabric, arrive in memory of this node's own.  0 or -EINVAL.
 */
int fabric_register_in_place(uint8_t proto);
int fabric_rx_shared(void);

/*
 * Send a reliable message of hlen + dlen bytes (hdr then data) to dst.
 * Blocks while dst's window is full unless FABRIC_NOWAIT (required in
 * interrupt context).  Return 0 once queued; -EINVAL (bad dst), -EMSGSIZE,
 * -EAGAIN (NOWAIT and full), -ENOBUFS (no packet buffer and NOWAIT),
 * -EHOSTDOWN (dst stopped answering), -ETIMEDOUT (dst never appeared),
 * -ECONNRESET (dst rebooted while the sender waited for room).
 */
int fabric_send(int dst, uint8_t proto, const void *hdr, size_t hlen, const void *data,
		size_t dlen, int flags);

/*
 * The longest message to dst: FAB_MTU, or more where both nodes' NIC
 * carries longer frames (the shared-memory link's large slots: up to
 * 65477 bytes), as the pair agreed in its HELLOs.  It can change when dst
 * is bound again (it rebooted).
 */
size_t fabric_mtu(int dst);

/*
 * fabric_send to the binding epoch of dst (fabric_peer_epoch) only: if dst
 * has been bound again since (it rebooted), -ECONNRESET and nothing is
 * sent.  Epoch 0: any.
 */
int fabric_send_at(int dst, uint32_t epoch, uint8_t proto, const void *hdr, size_t hlen,
		   const void *data, size_t dlen, int flags);

/*
 * A message written where it goes: fabric_tx_begin gives in tx->payload
 * room for len bytes of a reliable message to dst (epoch as for
 * fabric_send_at), the caller writes them, and fabric_tx_end sends it.
 * On the shared-memory link, unkeyed, with credit and nothing queued, tx->payload
 * is the NIC's own transmit slot and the message costs no buffer and no
 * copy but the caller's; interrupts are then off from begin to end, so
 * write and end at once, never sleep in between (and always end: a frame
 * begun is sent).  Otherwise it is a pktbuf, and fabric_tx_end is
 * fabric_send_pb.  begin: 0, -EMSGSIZE or -ENOBUFS (FABRIC_NOWAIT); end:
 * fabric_send_at's.
 */
struct fabric_tx {
	uint8_t *payload;		/* where the message's len bytes go */
	/* the fabric's own */
	struct pktbuf *pb;		/* NULL: in the NIC's slot */
	uint8_t *frame;
	uint64_t irq;
	size_t len;
	uint32_t epoch;
	int dst, flags;
	uint8_t proto;
};

int fabric_tx_begin(struct fabric_tx *tx, int dst, uint32_t epoch, uint8_t proto, size_t len,
		    int flags);
int fabric_tx_end(struct fabric_tx *tx);
/* A message begun and not to be sent after all: nothing goes, nothing is kept. */
void fabric_tx_drop(struct fabric_tx *tx);

/*
 * A buffer for fabric_send_pb of len payload bytes, one reference; NULL if
 * none is free, or if the frame needs one of the large pool and fewer than
 * half of it would be left: the channel keeps what it sends until it is
 * acknowledged, and the receive path (acknowledgements among what it takes
 * in) keeps that half.  Any fabric_send_pb of a long payload takes its
 * buffer here.  (irq)
 */
struct pktbuf *fabric_pb_get(size_t len);

/*
 * Zero-copy send: the caller wrote len payload bytes at fabric_payload(pb)
 * of a fabric_pb_get() buffer.  On success the fabric owns pb; on error the
 * caller still does.
 */
int fabric_send_pb(int dst, uint8_t proto, struct pktbuf *pb, size_t len, int flags);
static inline uint8_t *fabric_payload(struct pktbuf *pb) { return pb->data + FAB_ETH_HLEN + FAB_HDR_LEN; }

/*
 * Would a FABRIC_NOWAIT send to dst be queued now?  (irq) A receive
 * handler that must answer asks before it changes anything, and returns
 * -EBUSY if not, so that a retried message is never applied twice.
 */
int fabric_can_send(int dst);

/*
 * Node peer's TSC minus this node's, from probes round trips of raw
 * frames that peer's fabric answers at once with its TSC: the probe with
 * the shortest round trip gives the offset (its midpoint), and *error,
 * half that round trip, bounds how far off it can be (net/fabric/clock.c:
 * NTP's minimum-delay sample).  0, -ETIMEDOUT if no probe came back,
 * -EBUSY if another thread is probing, -EINVAL.  Thread context.
 */
int fabric_clock_offset(int peer, int probes, int64_t *offset, uint64_t *error);

/* Send one raw frame (unreliable); 0, -EAGAIN if the TX ring is full, or -errno. */
int fabric_raw_send(int dst, uint8_t proto, const void *data, size_t len);
/* The same, of hdr then data: on the unkeyed shared-memory link written where it goes (the slot). */
int fabric_raw_sendv(int dst, uint8_t proto, const void *hdr, size_t hlen, const void *data, size_t dlen);
int fabric_raw_send_pb(int dst, uint8_t proto, struct pktbuf *pb, size_t len);

/* Wait until everything sent to dst was acknowledged.  0, -EHOSTDOWN, -ETIMEDOUT. */
int fabric_flush(int dst, uint64_t timeout_ns);

/*
 * Before the node stops: wait (at most timeout_ns) until every message
 * sent was acknowledged, then keep answering for linger_ns so that peers
 * whose last acknowledgement was lost hear it again.  Return the number of
 * peers with messages still unacknowledged.
 */
int fabric_shutdown(uint64_t timeout_ns, uint64_t linger_ns);

/* A protocol that returned -EBUSY can take messages again. */
void fabric_resume(void);

/*
 * One message to every node whose bit is set in group (hybrid deposit
 * 3.2's multicast), as one frame where the link has group frames: a
 * FAB_MCAST frame (wire.h) to the group's Ethernet multicast address
 * (on the shared-memory link, the link's broadcast), which is for each
 * member the next DATA frame of its own channel with this node.  So each
 * member acknowledges it, a member that missed it gets it again alone,
 * in order with the rest of the pair's messages and exactly once.  The
 * members whose channels cannot take it now (no credit or window after a
 * while, FABRIC_NOWAIT: at once) and every member under a cluster key are
 * left in *rest: the caller sends them the message by fabric_send, each
 * as it can take it, so that none holds up the others.  flags as
 * fabric_send's.  0, or -EINVAL (*rest the whole group).
 */
int fabric_mcast(uint64_t group, uint8_t proto, const void *data, size_t len, int flags, uint64_t *rest);

/* Is dst declared dead? */
int fabric_peer_dead(int dst);

/*
 * How many times dst has been bound (0: not yet); it grows by one each
 * time dst comes back with a new incarnation.  (irq)
 */
uint32_t fabric_peer_epoch(int dst);

/* The counters (kernel/counters.h): each field with the label it is printed with. */
#define FABRIC_COUNTERS(X) \
	X(LINE, "rx") \
	X(ONE, rx_frames, "frames") \
	X(ONE, rx_data, "data") \
	X(ONE, delivered, "delivered") \
	X(ONE, rx_dup, "dup") \
	X(ONE, rx_ooo, "out-of-order") \
	X(ONE, busy, "busy") \
	X(ONE, rx_raw, "raw") \
	X(LINE, "tx") \
	X(ONE, tx_data, "data") \
	X(ONE, retransmits, "retransmits") \
	X(ONE, tx_acks, "acks") \
	X(ONE, tx_raw, "raw") \
	X(ONE, tx_failed, "failed") \
	X(ONE, send_waits, "sender waits for window")	/* a sender slept because a window was full */ \
	/* sends that found the send queues' pool share used up */ \
	X(ONE, send_no_share, "for pool share") \
	X(ONE, hello_tx, "hellos sent") \
	X(ONE, hello_rx, "heard") \
	/* long frames of the ring: taken where they lie, copied */ \
	X(LINE_IF, "long frames of the shared ring") \
	X(ONE, rx_in_place, "taken where they lie") \
	X(ONE, rx_copied, "copied first") \
	/* multicast (fabric_mcast): frames sent, members they carried, members sent to alone; taken */ \
	X(LINE_IF, "multicast") \
	X(ONE, tx_mcast, "frames sent") \
	X(ONE, tx_mcast_members, "members they carried") \
	X(ONE, tx_mcast_unicast, "members sent to alone") \
	X(ONE, rx_mcast, "taken") \
	X(LINE, "rejected:") \
	X(EACH, rx_rejected, 1, FAB_NERR, fab_err_names) \
	X(ONE, rx_stale_session, "stale session") \
	X(ONE, rx_foreign_mac, "foreign mac") \
	X(ONE, rx_unknown_proto, "unknown proto") \
	X(ONE, rx_dead_peer, "from dead peer") \
	X(ONE, rx_unbound, "unbound")		/* frames from a node not bound by the handshake */ \
	/* HELLOs without an incarnation, or of one replaced */ \
	X(ONE, hello_bad, "hello without or with a past incarnation") \
	/* keyed HELLOs of a bound incarnation taken before: dropped */ \
	X(ONE, hello_replayed, "hello replayed") \
	X(ONE, hello_limited, "hello answers held back")	/* not sent: too many asked for */ \
	/* peers whose long frames never came through (discovery.c) */ \
	X(ONE, probe_failed, "peers that took no long frame") \
	X(ONE, rebinds, "rebinds")		/* a node came back with a new incarnation */ \
	/* messages for an app protocol not registered yet (park.c): kept aside, handed over, */ \
	/* refused by it, the park full */ \
	X(LINE_IF, "messages for an app protocol not registered yet") \
	X(ONE, parked, "kept") \
	X(ONE, park_delivered, "handed over") \
	X(ONE, park_refused, "refused by it") \
	X(ONE, park_full, "park full") \
	X(LINE_IF, "injected") \
	X(ONE, fault_drop, "drop") \
	X(ONE, fault_dup, "dup") \
	X(ONE, fault_reorder, "reorder") \
	X(ONE, fault_corrupt, "corrupt")

/* Those of rx and tx from data to busy are summed over the channels. */
struct fabric_counters {
	FABRIC_COUNTERS(COUNTER_FIELD)
};

/* A snapshot of every counter. */
void fabric_counters(struct fabric_counters *out);

/* Print every counter on the console. */
void fabric_print_stats(void);

/* The tag this node's frames to dst carry (tests that craft frames need it). */
uint16_t fabric_tag(int dst);

/* This boot's incarnation. */
uint64_t fabric_incarnation(void);

/* This node's and dst's MAC as learned. */
const uint8_t *fabric_peer_mac(int dst);

#endif
