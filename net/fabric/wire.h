/*
 * The fabric's frame format (EtherType 0x88B5), little-endian:
 *
 *   Ethernet header (14 bytes)
 *   fabric header (32 bytes, struct fab_hdr)
 *   payload (len bytes, at most FAB_MTU)
 *
 * Every frame carries the sender's view of the reverse direction (ack,
 * sack, limit), so data frames piggyback acknowledgements and credit.
 * A CRC-32C over header and payload catches corruption the Ethernet FCS
 * would have (QEMU strips it; fault injection corrupts after it).  Raw
 * frames may go without it, and so may every unicast frame between two
 * nodes that agreed (by HELLO) that their link is lossless.
 *
 * fab_parse() is the one place a received frame is validated; it trusts
 * nothing and is what the fuzz target drives.  Pure logic.
 */
#ifndef NET_FABRIC_WIRE_H
#define NET_FABRIC_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define FAB_VERSION 2
#define FAB_HDR_LEN 32
#define FAB_ETH_HLEN 14
#define FAB_FRAME_MAX 1514
#define FAB_MTU (FAB_FRAME_MAX - FAB_ETH_HLEN - FAB_HDR_LEN)	/* 1468 */
#define FAB_BROADCAST 0xffff
#define FAB_MAX_NODES 64

enum fab_type {
	FAB_DATA = 1,		/* reliable, sequenced */
	FAB_ACK = 2,		/* acknowledgement / credit only */
	FAB_RAW = 3,		/* unreliable, unsequenced: the floor */
	FAB_HELLO = 4,		/* discovery, broadcast or unicast */
	FAB_PROBE = 5,		/* zero-window probe: answer with an ACK */
};

enum {				/* fab_hdr.flags */
	FAB_F_NOCRC = 0x01,	/* crc not computed: raw frames, or a lossless link */
	FAB_F_ACKNOW = 0x02,	/* the sender wants an ACK at once */
};

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
 * incarnation): A's HELLO carries inc = A's incarnation; B's answer
 * echoes it (echo = the incarnation B last heard from A); A binds B once
 * B's HELLO echoes A's own incarnation, and says so with
 * FAB_HELLO_BOUND in its next HELLO to B.  A broadcast HELLO echoes
 * nothing (echo = 0); every node answers one with a unicast HELLO.
 */
struct fab_hello {
	uint16_t nodes;		/* cluster size the sender was told */
	uint16_t flags;		/* FAB_HELLO_* */
	uint8_t mac[6];
	uint16_t pad;
	uint64_t known;		/* bit i: the sender has bound node i */
	uint64_t lossless;	/* bit i: node i said lossless, and so does the sender */
	uint64_t inc;		/* the sender's incarnation (never 0) */
	uint64_t echo;		/* the receiver's incarnation as the sender heard it; 0: none */
} __attribute__((packed));
_Static_assert(sizeof(struct fab_hello) == 44, "hello payload layout");

enum {				/* fab_hello.flags */
	/*
	 * The sender's link neither drops, corrupts nor reorders (the link
	 * says so, and no fault= is set): it takes frames without a CRC.
	 */
	FAB_HELLO_LOSSLESS = 1,
	/* The sender has bound the receiver with incarnation echo. */
	FAB_HELLO_BOUND = 2,
};

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
	FAB_NERR
};

extern const char *const fab_err_names[FAB_NERR];

/*
 * Validate a received frame (Ethernet header included) for node me in a
 * cluster of nodes.  On FAB_OK, *hdr is a copy of the header and *payload
 * points at len bytes inside frame.  Only raw frames may come without a
 * CRC; with lossless, every unicast frame may (the caller then checks
 * that its sender agreed to it).
 */
enum fab_err fab_parse(const uint8_t *frame, size_t n, int me, int nodes, struct fab_hdr *hdr,
		       const uint8_t **payload);
enum fab_err fab_parse_link(const uint8_t *frame, size_t n, int me, int nodes, int lossless,
			    struct fab_hdr *hdr, const uint8_t **payload);

/*
 * Write the Ethernet and fabric headers in front of a payload already at
 * frame + FAB_ETH_HLEN + FAB_HDR_LEN, and the CRC unless FAB_F_NOCRC.
 * Return the frame length.
 */
size_t fab_build(uint8_t *frame, const uint8_t dst_mac[6], const uint8_t src_mac[6],
		 const struct fab_hdr *hdr);

/* Recompute the CRC of a built frame after changing header fields. */
void fab_reseal(uint8_t *frame);

/* Sequence arithmetic modulo 2^32. */
static inline int seq_lt(uint32_t a, uint32_t b) { return (int32_t)(a - b) < 0; }
static inline int seq_le(uint32_t a, uint32_t b) { return (int32_t)(a - b) <= 0; }

#endif
