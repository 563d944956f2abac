/*
 * The receive demultiplexer: frames go by EtherType to the protocol that
 * registered it (IPv4 and ARP to lwIP, 0x88B5 to the fabric); anything
 * else is counted and dropped.
 */
#ifndef NET_NET_H
#define NET_NET_H

#include <stdint.h>

#include "net/netdev.h"

#define ETHERTYPE_IPV4 0x0800
#define ETHERTYPE_ARP 0x0806
#define ETHERTYPE_FABRIC 0x88b5

/* A handler owns pb (it must pkt_put it).  Runs in interrupt context. */
typedef void (*ethertype_handler_t)(struct netdev *nd, struct pktbuf *pb);

/* Register / remove the handler for an EtherType.  0, or -1 if taken/absent. */
int net_register(uint16_t ethertype, ethertype_handler_t fn);
int net_unregister(uint16_t ethertype);

struct net_stats {
	uint64_t short_frames;		/* shorter than an Ethernet header */
	uint64_t unknown_type;		/* no handler for the EtherType */
	uint64_t delivered;
};

extern struct net_stats net_stats;

/* Bring up the pktbuf pool and probe NIC drivers.  Return 0 if a NIC works. */
int net_init(void);

static inline uint16_t get_be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline void put_be16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static inline uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}

#endif
