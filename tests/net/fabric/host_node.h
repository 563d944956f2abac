/*
 * One node's whole fabric on the host: the kernel's own net/fabric files
 * (fabric.c's start-up and EtherType input, rx.c, discovery.c, send.c,
 * barrier.c, the channel, membership and the wire format) as node 1 of a
 * cluster of HN_NODES, with the other nodes simulated here.
 *
 * A simulated peer is what a real node looks like on the wire: a MAC, an
 * incarnation, a membership state of its own (member.c) that answers the
 * node's HELLOs, and a real channel (channel.c) toward the node, sealed
 * with the pair's key when the cluster is keyed.  What the peers send to
 * the node waits in a queue (the wire) until the test delivers, drops,
 * repeats or damages it; what the node sends goes to the peers at
 * hn_flush().  Time is virtual: hn_advance() moves it and runs the
 * node's tick and timers and the peers' channel timers.
 *
 * Used by the host unit test test_fabric_rx.c (CRCs and tags checked) and
 * by the fuzz target fuzz_fabric_rx.c (built in fuzzing mode: CRCs and
 * tags are computed but not checked, so that damaged frames go deep).
 */
#ifndef TESTS_NET_FABRIC_HOST_NODE_H
#define TESTS_NET_FABRIC_HOST_NODE_H

#include <stddef.h>
#include <stdint.h>

#define HN_NODES 4
#define HN_ME 1			/* the node under test */
#define HN_PROTO 16		/* the app protocol the node's handler takes */
#define HN_LATE_PROTO 17	/* an app protocol the node registers only at hn_register_late() */
#define HN_WIRE 512		/* frames waiting toward the node */
#define HN_KEY "host-node-test-cluster-key"

struct hn_stats {
	uint64_t delivered[HN_NODES];	/* app messages the node's handler took, by sender */
	uint64_t good[HN_NODES];	/* ... that were a peer's own, intact */
	uint64_t garbage;		/* ... that were not (only after damaged frames) */
	uint64_t out_of_order;		/* a peer's own messages not in its order */
	uint64_t raw[HN_NODES];		/* raw frames the node's raw handler took */
	uint64_t peer_got[HN_NODES];	/* the node's messages a peer's channel delivered */
	uint64_t damaged;		/* frames the test changed before delivering */
	int late_n;			/* HN_LATE_PROTO's messages taken, their tags in order: */
	uint8_t late_tags[64];
	int late_refuse;		/* the test's: its handler refuses (-EBUSY) while set */
};

extern struct hn_stats hn;

/* A fresh node (keyed or not, with a peer timeout) and fresh peers; the old ones are freed. */
void hn_reset(int keyed, unsigned peer_timeout_ms);
/*
 * The same, but the kernel's protocols not yet all registered (INIT_START
 * not run: the node holds what comes for any protocol); hn_start runs it,
 * with a tick taken at its first read of the clock if tick_inside.
 */
void hn_reset_unstarted(int keyed, unsigned peer_timeout_ms);
void hn_start(int tick_inside);

/* Free everything; 0 if every packet buffer came back. */
int hn_teardown(void);

/* Peer k broadcasts a HELLO, or (unicast) answers the node with its state. */
void hn_hello(int k, int broadcast);

/* Run the handshake until every peer is bound both ways; 0 or -1. */
int hn_discover(void);

/* Peer k sends an app message of len bytes on its channel (queued on the wire). */
int hn_send(int k, size_t len);

/* Peer k sends a message on HN_LATE_PROTO, every byte tag (queued). */
int hn_send_late(int k, uint8_t tag, size_t len);

/* The node's app registers HN_LATE_PROTO now; fabric_register's result. */
int hn_register_late(void);

/* Peer k sends a raw frame of len bytes (queued). */
int hn_raw(int k, size_t len);

/* Peer k sends a barrier message (kind 'A' or 'R', generation) on its channel. */
int hn_barrier_msg(int k, char kind, uint32_t gen);

/* Peer k reboots: a new incarnation, a fresh channel and membership. */
void hn_reboot(int k, uint64_t inc);

/* The wire toward the node: frames waiting; deliver, drop or damage the i-th. */
int hn_waiting(void);
void hn_deliver(int i);
void hn_drop(int i);
void hn_damage(int i, size_t off, uint8_t xor);

/* A frame heard before (the n-th, modulo history), delivered to the node again. */
void hn_replay(unsigned n);

/* Any bytes, delivered to the node as a frame (Ethernet header included). */
void hn_inject(const uint8_t *bytes, size_t len);

/* Deliver everything waiting, in order, and the node's frames to the peers, until quiet. */
void hn_settle(void);

/* The node's frames to the peers: HELLOs to their membership, the rest to their channels. */
void hn_flush(void);

/* Move virtual time by ms and run timers. */
void hn_advance(unsigned ms);

/* The node sends len bytes to peer k (fabric_send, FABRIC_NOWAIT) or a raw frame. */
int hn_node_send(int k, size_t len, int raw);

/* What the node thinks of peer k: bound (and with which incarnation), dead. */
int hn_bound(int k, uint64_t *inc);
int hn_dead(int k);
uint64_t hn_peer_inc(int k);

/* The node's fabric counters (fabric_counters). */
struct fabric_counters;
void hn_counters(struct fabric_counters *c);

#endif
