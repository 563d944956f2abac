/*
 * The Ethernet frames a NIC carries: their sizes, for the drivers
 * (drivers/netdev.h includes this) and for the network above them
 * (net/net.h), one definition for both.
 */
#ifndef DRIVERS_ETH_H
#define DRIVERS_ETH_H

#define ETH_ALEN 6
#define ETH_HLEN 14
#define ETH_MIN_FRAME 60		/* without FCS */
#define ETH_MAX_FRAME 1514		/* without FCS */
#define ETH_JUMBO_FRAME (9000 + ETH_HLEN)	/* the NICs' long frames: 9000 bytes of payload */
#define ETH_LONGEST_FRAME 65535		/* a 16-bit length's: virtio-net's with merged receive buffers */

#endif
