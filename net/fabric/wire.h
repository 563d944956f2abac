/*
 * The fabric's frame format (EtherType 0x88B5), little-endian:
 *
 *   Ethernet header (14 bytes)
 *   fabric header (32 bytes, struct fab_hdr)
 *   payload (len bytes, at most FAB_MTU)
 *   with a cluster key (FAB_F_MAC): a 12-byte trailer, the low 32 bits of
 *   the sender's frame counter and the SipHash-2-4 tag (struct fab_trailer)
 *
 * Every frame carries the sender's view of the reverse direction (ack,
 * sack, limit), so data frames piggyback acknowledgements and credit.
 * A CRC-32C over header and payload catches corruption the Ethernet FCS
 * would have (QEMU strips it; fault injection corrupts after it).  Raw
 * frames may go without it, and so may every unicast frame between two
 * nodes that agreed (by HELLO) that their link is lossless.
 *
 * With a cluster key (key= on the command line) every frame carries,
 * instead of the CRC, a SipHash-2-4 tag over header, payload and the
 * sender's 64-bit frame counter, under a key of the pair's two
 * incarnations (fab_pair_key): a station without the cluster key can
 * neither make a frame nor reuse one of another pair or another boot.
 * The counter, one per direction and incarnation pair, counts every frame
 * sent (retransmissions too); the receiver keeps a window of the last 64
 * (RFC 4303's anti-replay window, with its extended sequence numbers: only
 * the low 32 bits travel, the tag covers all 64), so no frame is taken
 * twice.  HELLOs carry a tag under the cluster key itself (there is no
 * pair yet) and the sender's HELLO counter; member.h says why replaying
 * one of a past boot gains nothing, and the receiver keeps the same window
 * over the HELLOs of each peer's bound boot (discovery.c), so a replayed
 * one of that boot draws no answer either.
 *
 * fab_parse() is the one place a received frame is validated; it trusts
 * nothing and is what the fuzz target drives.  Pure logic.
 */
#ifndef NET_FABRIC_WIRE_H
#define NET_FABRIC_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "kernel/siphash.h"

#define FAB_VERSION 3
#define FAB_HDR_LEN 32
#define FAB_ETH_HLEN 14
#define FAB_FRAME_MAX 1514		/* Ethernet's: every link carries these */
#define FAB_FRAME_LIMIT 65535		/* the longest any link may carry (a 16-bit length) */
/*
 * Where a path that passes no frame of a pair's longest tries next, before
 * Ethernet's: the NICs' jumbo frames (9000 bytes of payload), which a
 * switch or bridge that passes no 64 KiB frame often does pass.
 */
#define FAB_FRAME_STEP 9014
#define FAB_TRAILER_LEN 12
/* Room for the trailer in every frame, keyed or not: one MTU for both. */
#define FAB_MTU (FAB_FRAME_MAX - FAB_ETH_HLEN - FAB_HDR_LEN - FAB_TRAILER_LEN)	/* 1456 */

/* The payload of a frame of frame bytes (at least FAB_FRAME_MAX), keyed or not. */
static inline size_t fab_payload_max(uint32_t frame)
{
	return (size_t)frame - FAB_ETH_HLEN - FAB_HDR_LEN - FAB_TRAILER_LEN;
}
#define FAB_BROADCAST 0xffff
#define FAB_MAX_NODES 64

enum fab_type {
	FAB_DATA = 1,		/* reliable, sequenced */
	FAB_ACK = 2,		/* acknowledgement / credit only */
	FAB_RAW = 3,		/* unreliable, unsequenced: the floor */
	FAB_HELLO = 4,		/* discovery, broadcast or unicast */
	FAB_PROBE = 5,		/* zero-window probe: answer with an ACK */
	FAB_AUTO = 6,		/* node=auto: stations agreeing on ids (fab_parse_auto) */
	FAB_MCAST = 7,		/* one DATA frame for a group of peers (fab_parse_mcast) */
};

enum {				/* fab_hdr.flags */
	FAB_F_NOCRC = 0x01,	/* crc not computed: raw frames, or a lossless link */
	FAB_F_ACKNOW = 0x02,	/* the sender wants an ACK at once */
	FAB_F_MAC = 0x04,	/* keyed: a trailer follows the payload; no CRC */
};

/* A keyed frame's trailer, right after its payload (unaligned). */
struct fab_trailer {
	uint32_t ctr;		/* low 32 bits of the sender's frame counter */
	uint64_t tag;		/* SipHash-2-4 of header, payload and the 64-bit counter */
} __attribute__((packed));
_Static_assert(sizeof(struct fab_trailer) == FAB_TRAILER_LEN, "trailer layout");

/* The sending half of a keyed direction: its key and its frame counter. */
struct fab_seal {
	struct sipkey key;
	uint64_t ctr;		/* the last counter sent (the first frame carries 1) */
};

/* The receiving half: the key and the anti-replay window. */
struct fab_unseal {
	struct sipkey key;
	uint64_t top;		/* the highest counter taken (0: none yet) */
	uint64_t seen;		/* bit i: counter top - i was taken */
};

/*
 * The cluster key from the text of key= (any length; the MAC is as strong
 * as the text is hard to guess) and the cluster's name (cluster=; NULL:
 * FAB_CLUSTER_DEFAULT), and the key of one direction of a pair: from node
 * src with incarnation src_inc to node dst with dst_inc.  The cluster key
 * is scrypt's (RFC 7914, kernel/scrypt.h) of the text, salted with the
 * cluster's name: each guess of a passphrase from a sniffed HELLO costs
 * FAB_KEY_N blocks of 128 FAB_KEY_R bytes (4 MiB) and the time to fill and
 * read them twice, and two clusters of different names share no key, nor
 * any table made to guess one.  0, or -1 if the memory could not be had.
 */
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define FAB_KEY_N 4096
#define FAB_KEY_R 8
#else
#define FAB_KEY_N 2	/* fuzzers derive a key per input: scrypt's cost is not what they test */
#define FAB_KEY_R 1
#endif
#define FAB_CLUSTER_DEFAULT "now"
#define FAB_CLUSTER_MAX 64
int fab_key_from_text(struct sipkey *k, const char *text, const char *cluster);
void fab_pair_key(struct sipkey *out, const struct sipkey *cluster, int src, uint64_t src_inc,
		  int dst, uint64_t dst_inc);

struct fab_hdr {
	uint8_t version;
	uint8_t type;
	uint8_t proto;		/* DATA/RAW: the protocol the payload is for */
	uint8_t flags;
	uint16_t src;		/* node ids */
	uint16_t dst;		/* or FAB_BROADCAST for HELLO */
	uint32_t seq;		/* DATA: this frame's sequence number */
	uint32_t ack;		/* next seq the sender expects from the receiver */
	uint32_t sack;		/* bit i: seq ack+1+i received (beyond a gap) */
	uint32_t limit;		/* the receiver may send seq < limit (credit) */
	uint16_t len;		/* payload bytes */
	uint16_t session;	/* the pair's tag (fab_pair_tag); HELLO: 0 */
	uint32_t crc;		/* CRC-32C of header (crc = 0) and payload */
} __attribute__((packed));
_Static_assert(sizeof(struct fab_hdr) == FAB_HDR_LEN, "fabric header is 32 bytes");

/*
 * HELLO payload: who I am, which boot of me this is, and whom I have
 * bound.  The handshake (net/fabric/member.h) binds (node id, MAC,
 * incarnation): A's unicast HELLO to B carries inc = A's incarnation and
 * nonce = a random challenge A drew when it first heard this claim of
 * B's; B's answer echoes it (echo = the challenge B last heard from A)
 * and carries B's own challenge; A binds B once B's HELLO echoes A's
 * current challenge, and says so with FAB_HELLO_BOUND in its next HELLO
 * to B.  A broadcast HELLO echoes nothing and challenges nothing (echo
 * = nonce = 0); every node answers one with a unicast HELLO.
 */
struct fab_hello {
	uint16_t nodes;		/* cluster size the sender was told */
	uint16_t flags;		/* FAB_HELLO_* */
	uint8_t mac[6];
	uint16_t frame;		/* the longest frame the sender's NIC takes; 0: FAB_FRAME_MAX */
	uint64_t known;		/* bit i: the sender has bound node i */
	uint64_t lossless;	/* bit i: node i said lossless, and so does the sender */
	uint64_t inc;		/* the sender's incarnation (never 0) */
	uint64_t echo;		/* the receiver's challenge as the sender heard it; 0: none */
	uint64_t nonce;		/* the sender's challenge to the receiver (member.h); 0: broadcast */
	uint16_t heard;		/* unicast: the longest frame the sender took intact from the receiver */
} __attribute__((packed));
_Static_assert(sizeof(struct fab_hello) == 54, "hello payload layout");

/*
 * A unicast HELLO may be longer than struct fab_hello: zeros after it, up
 * to a frame of the pair's agreed length.  That is the probe of the path
 * between them (discovery.c): frames longer than Ethernet's go to a peer
 * only once its HELLO says (heard) that one of that length reached it
 * intact, so a switch between that truncates or drops them costs the pair
 * its long frames, never its messages.
 */

enum {				/* fab_hello.flags */
	/*
	 * The sender's link neither drops, corrupts nor reorders (the link
	 * says so, and no fault= is set): it takes frames without a CRC.
	 */
	FAB_HELLO_LOSSLESS = 1,
	/* The sender has bound the receiver (whose challenge it echoes). */
	FAB_HELLO_BOUND = 2,
};

/*
 * AUTO payload (node=auto, net/fabric/auto.c and autoview.h).  A station
 * that has no id yet broadcasts one every 50 ms with nview 0: its MAC,
 * incarnation, the cluster size it expects, the nonce it drew at boot and
 * the nonces it heard from the others (echo[]: a station counts another
 * only once that one echoes its nonce).  Once the cluster is agreed, its
 * members broadcast the view: every member's MAC, ascending, a node's id
 * being its MAC's index.  The Ethernet destination is broadcast, the
 * header's src and dst are FAB_BROADCAST, session 0; keyed, the trailer
 * is under the cluster key, as a HELLO's.
 */
struct fab_auto_echo {
	uint8_t mac[6];
	uint16_t pad;
	uint64_t nonce;		/* the nonce the sender last heard from mac */
} __attribute__((packed));

struct fab_auto {
	uint16_t expect;	/* the sender's nodes=; 0: nodes=auto */
	uint16_t nview;		/* 0: still without an id; else the members in view[] */
	uint16_t heard;		/* stations live for the sender, itself included */
	uint16_t necho;		/* entries in echo[] */
	uint8_t mac[6];		/* the sender's (the frame's source) */
	uint16_t pad2;
	uint64_t inc;		/* the sender's incarnation */
	uint64_t nonce;		/* drawn at the sender's boot; never 0 */
	uint8_t view[FAB_MAX_NODES][6];
	struct fab_auto_echo echo[FAB_MAX_NODES];
} __attribute__((packed));
_Static_assert(sizeof(struct fab_auto) == 1440, "auto payload layout");
_Static_assert(sizeof(struct fab_auto) <= FAB_MTU, "an AUTO frame fits");

/*
 * Validate a received AUTO frame: the checks of fab_parse_link that apply,
 * the Ethernet destination broadcast (every station sees the same
 * frames), src and dst FAB_BROADCAST, then the payload: its MAC is the frame's
 * source, unicast; expect and nview at most FAB_MAX_NODES, nview equal to
 * a non-zero expect; the view strictly ascending, unicast MACs, the
 * sender's among them.  FAB_OK with *a a copy of the payload; the caller
 * checks a keyed frame's tag (fab_unseal, window 0).
 */
enum fab_err fab_parse_auto(const uint8_t *frame, size_t n, int keyed, struct fab_hdr *h,
			    struct fab_auto *a);

/* The index of mac in the first n entries of view, or -1. */
int fab_auto_find(const uint8_t (*view)[6], int n, const uint8_t mac[6]);

/*
 * The tag every frame from a node with incarnation src_inc to one with
 * dst_inc carries in fab_hdr.session: frames of a pair's earlier channel
 * (either side rebooted since) carry another tag and are dropped.  Never 0.
 */
uint16_t fab_pair_tag(uint64_t src_inc, uint64_t dst_inc);

enum fab_err {
	FAB_OK = 0,
	FAB_E_SHORT,		/* shorter than the headers */
	FAB_E_VERSION,		/* unknown version */
	FAB_E_TYPE,		/* unknown frame type */
	FAB_E_LEN,		/* payload length disagrees with the frame */
	FAB_E_CRC,		/* checksum mismatch */
	FAB_E_NODE,		/* source or destination not a valid node */
	FAB_E_NOTME,		/* addressed to another node */
	FAB_E_FIELD,		/* a field invalid for this frame type */
	FAB_E_KEY,		/* keyed frame on an unkeyed node, or the reverse */
	FAB_E_MAC,		/* the tag does not match: forged, corrupted or another key */
	FAB_E_REPLAY,		/* a counter already taken, or older than the window */
	FAB_NERR
};

extern const char *const fab_err_names[FAB_NERR];

/*
 * Validate a received frame (Ethernet header included) for node me in a
 * cluster of nodes.  On FAB_OK, *hdr is a copy of the header and *payload
 * points at len bytes inside frame.  Only raw frames may come without a
 * CRC; with lossless, every unicast frame may (the caller then checks
 * that its sender agreed to it).  keyed: this node has a cluster key, and
 * every frame must have FAB_F_MAC and room for its trailer (the caller
 * then checks the tag with fab_unseal, knowing the sender); unkeyed, no
 * frame may.  fab_parse_link settles the frames of a stream in one test
 * (fab_parse_stream), inline, and takes every other to fab_parse_full,
 * every check in turn, which gives the same verdict on those too (a unit
 * test compares them).
 */
enum fab_err fab_parse(const uint8_t *frame, size_t n, int me, int nodes, struct fab_hdr *hdr,
		       const uint8_t **payload);
enum fab_err fab_parse_full(const uint8_t *frame, size_t n, int me, int nodes, int lossless,
			    int keyed, struct fab_hdr *hdr, const uint8_t **payload);

/*
 * The frames of a stream on a lossless link, unkeyed (data, raw, an
 * acknowledgement), accepted in one test of the fields that make them
 * valid: 1 with *h a copy of the header (payload at frame + FAB_ETH_HLEN
 * + FAB_HDR_LEN), or 0.  fab_stream_ok is that test on a header already
 * copied, of a frame of n bytes (n checked by the caller).
 */
static inline int fab_stream_ok(const struct fab_hdr *h, size_t n, int me, int nodes, int lossless)
{
	return h->version == FAB_VERSION && (h->flags & ~FAB_F_ACKNOW) == FAB_F_NOCRC &&
	       h->len <= n - FAB_ETH_HLEN - FAB_HDR_LEN && h->src < nodes && h->src != me && h->dst == me &&
	       (((h->type == FAB_DATA || h->type == FAB_RAW) && h->proto && (lossless || h->type == FAB_RAW)) ||
		(h->type == FAB_ACK && lossless && h->len == 0));
}

static inline int fab_parse_stream(const uint8_t *frame, size_t n, int me, int nodes, int lossless,
				   struct fab_hdr *h)
{
	if (n < FAB_ETH_HLEN + FAB_HDR_LEN || n > FAB_FRAME_MAX)
		return 0;
	__builtin_memcpy(h, frame + FAB_ETH_HLEN, sizeof *h);
	return fab_stream_ok(h, n, me, nodes, lossless);
}

static inline enum fab_err fab_parse_link(const uint8_t *frame, size_t n, int me, int nodes, int lossless,
					  int keyed, struct fab_hdr *h, const uint8_t **payload)
{
	if (!keyed && fab_parse_stream(frame, n, me, nodes, lossless, h)) {
		*payload = frame + FAB_ETH_HLEN + FAB_HDR_LEN;
		return FAB_OK;
	}
	return fab_parse_full(frame, n, me, nodes, lossless, keyed, h, payload);
}

/*
 * Write the Ethernet and fabric headers in front of a payload already at
 * frame + FAB_ETH_HLEN + FAB_HDR_LEN, and the CRC unless FAB_F_NOCRC.
 * Return the frame length.
 */
size_t fab_build(uint8_t *frame, const uint8_t dst_mac[6], const uint8_t src_mac[6],
		 const struct fab_hdr *hdr);

/*
 * fab_build, keyed when seal is not NULL: FAB_F_MAC instead of the CRC,
 * the next counter of seal and the tag in the trailer.
 */
size_t fab_build_sealed(uint8_t *frame, const uint8_t dst_mac[6], const uint8_t src_mac[6],
			const struct fab_hdr *hdr, struct fab_seal *seal);

/*
 * Check a keyed frame that fab_parse_link accepted (h its header): the
 * tag under u's key, then u's replay window.  FAB_OK (and the counter is
 * taken: the same frame again is FAB_E_REPLAY), FAB_E_MAC or
 * FAB_E_REPLAY.  window 0: check the tag only (HELLO).
 */
enum fab_err fab_unseal(struct fab_unseal *u, const uint8_t *frame, const struct fab_hdr *h,
			int window);

/*
 * fab_unseal in two steps, for a receiver that may not take the frame
 * after all: check the tag and the window (FAB_OK with the frame's 64-bit
 * counter in *ctr, FAB_E_MAC or FAB_E_REPLAY), then, once the frame is
 * taken, mark its counter in the window.
 */
enum fab_err fab_unseal_check(const struct fab_unseal *u, const uint8_t *frame, const struct fab_hdr *h,
			      uint64_t *ctr);
void fab_unseal_take(struct fab_unseal *u, uint64_t ctr);

/*
 * For a frame whose tag fab_unseal (window 0) checked: its 64-bit counter
 * in *ctr, and 1 if u's window took it already or lies past it.
 */
int fab_unseal_seen(const struct fab_unseal *u, const uint8_t *frame, const struct fab_hdr *h, uint64_t *ctr);

/* Recompute the CRC of a built frame after changing header fields. */
void fab_reseal(uint8_t *frame);

/*
 * A multicast frame (hybrid deposit 3.2: a message to a group of nodes):
 * one frame, to the group's Ethernet multicast address, that is a DATA
 * frame of each member's own channel with this node.  Its header: type
 * FAB_MCAST, the message's proto, src this node, dst FAB_BROADCAST,
 * session, seq, ack, sack and limit 0, always a CRC (never keyed, never
 * on a lossless link's trust).  Its payload: struct fab_mcast_head, then
 * one struct fab_mcast_member per member (what the header of a DATA
 * frame to that member would carry), then the message.  A member takes
 * its entry and the message as that DATA frame; the others (and every
 * node the entry list does not name) drop the frame.  A member that
 * misses it gets the message again from its own channel, as a unicast
 * DATA frame of the same sequence number.
 */
struct fab_mcast_head {
	uint8_t n;		/* members, 1 to FAB_MAX_NODES */
	uint8_t pad;
	uint16_t len;		/* the message's bytes */
} __attribute__((packed));

struct fab_mcast_member {
	uint16_t node;
	uint16_t session;	/* the pair's tag, as a DATA frame's */
	uint32_t seq, ack, sack, limit;
} __attribute__((packed));
_Static_assert(sizeof(struct fab_mcast_head) == 4 && sizeof(struct fab_mcast_member) == 20,
	       "multicast payload layout");

/* Where the message of a multicast frame to n members starts in the frame. */
#define FAB_MCAST_MSG_OFF(n) \
	(FAB_ETH_HLEN + FAB_HDR_LEN + sizeof(struct fab_mcast_head) + (n) * sizeof(struct fab_mcast_member))

/* The Ethernet multicast address of the group whose members are the bits of group. */
void fab_mcast_mac(uint8_t mac[6], uint64_t group);

/*
 * Write the headers of a multicast frame around its message (len bytes,
 * already at FAB_MCAST_MSG_OFF(n)): the group's address, this node's, the
 * header, the member entries, the CRC.  Return the frame's length.
 */
size_t fab_build_mcast(uint8_t *frame, const uint8_t src_mac[6], uint64_t group, int src, uint8_t proto,
		       const struct fab_mcast_member *m, unsigned n, size_t len);

/*
 * Validate a received multicast frame for node me: on FAB_OK, *h is its
 * header as the DATA frame of me's entry would have it (type FAB_DATA,
 * dst me, that entry's session, seq, ack, sack and limit, len the
 * message's), and *msg the message.  FAB_E_NOTME if no entry names me.
 */
enum fab_err fab_parse_mcast(const uint8_t *frame, size_t n, int me, int nodes, struct fab_hdr *h,
			     const uint8_t **msg);

/* Sequence arithmetic modulo 2^32. */
static inline int seq_lt(uint32_t a, uint32_t b) { return (int32_t)(a - b) < 0; }
static inline int seq_le(uint32_t a, uint32_t b) { return (int32_t)(a - b) <= 0; }

#endif
