/*
 * Intel 82576 gigabit Ethernet (and the I350, I210, I211 where they are
 * the same): the registers, bits and advanced descriptors drivers/igb.c
 * uses.  Sections are those of the Intel 82576EB Gigabit Ethernet
 * Controller Datasheet ("82576 DS"): chapter 4 (initialization), 7.1
 * (receive), 7.2 (transmit), 7.3 (interrupts), 8 (registers).
 *
 * Queue 0's ring registers are at their 82576 addresses (0xc000/0xe000;
 * 0x2800/0x3800 are aliases of them); the I350 and I210 keep them there.
 */
#ifndef DRIVERS_IGB_REGS_H
#define DRIVERS_IGB_REGS_H

#include <stdint.h>

enum {					/* registers; 82576 DS 8.1 (the register summary) */
	IgbCtrl = 0x0000,		/* Device Control */
	IgbStatus = 0x0008,		/* Device Status */
	IgbEec = 0x0010,		/* EEPROM/Flash Control */
	IgbEerd = 0x0014,		/* EEPROM Read */
	IgbCtrlExt = 0x0018,		/* Extended Device Control */
	IgbMdic = 0x0020,		/* MDI Control: the PHY's registers */
	IgbIcr = 0x00c0,		/* Interrupt Cause Read */
	IgbIcs = 0x00c8,		/* Interrupt Cause Set */
	IgbIms = 0x00d0,		/* Interrupt Mask Set/Read */
	IgbImc = 0x00d8,		/* Interrupt Mask Clear */
	IgbIam = 0x00e0,		/* Interrupt Acknowledge Auto Mask */
	IgbRctl = 0x0100,		/* Receive Control */
	IgbTctl = 0x0400,		/* Transmit Control */
	IgbGpie = 0x1514,		/* General Purpose Interrupt Enable */
	IgbEics = 0x1520,		/* Extended Interrupt Cause Set */
	IgbEims = 0x1524,		/* Extended Interrupt Mask Set/Read */
	IgbEimc = 0x1528,		/* Extended Interrupt Mask Clear */
	IgbEiac = 0x152c,		/* Extended Interrupt Auto Clear */
	IgbEiam = 0x1530,		/* Extended Interrupt Auto Mask */
	IgbEicr = 0x1580,		/* Extended Interrupt Cause Read */
	IgbEitr0 = 0x1680,		/* Extended Interrupt Throttle, vector 0 (+4 each) */
	IgbIvar0 = 0x1700,		/* Interrupt Vector Allocation, queues 0 and 8 */
	IgbIvarMisc = 0x1740,		/* Interrupt Vector Allocation, other causes */
	IgbCrcerrs = 0x4000,		/* CRC Error Count */
	IgbRlpml = 0x5004,		/* Receive Long Packet Maximum Length (with RCTL.LPE) */
	IgbMpc = 0x4010,		/* Missed Packets Count (no room in the FIFO) */
	IgbGprc = 0x4074,		/* Good Packets Received Count */
	IgbGptc = 0x4080,		/* Good Packets Transmitted Count */
	IgbRnbc = 0x40a0,		/* Receive No Buffers Count */
	IgbRuc = 0x40a4,		/* Receive Undersize Count */
	IgbRoc = 0x40ac,		/* Receive Oversize Count */
	IgbRxcsum = 0x5000,		/* Receive Checksum Control */
	IgbMta = 0x5200,		/* Multicast Table Array, 128 words */
	IgbRal0 = 0x5400,		/* Receive Address Low, entry 0 */
	IgbRah0 = 0x5404,		/* Receive Address High, entry 0 */
	IgbRdbal0 = 0xc000,		/* queue 0: Receive Descriptor Base Low */
	IgbRdbah0 = 0xc004,		/* Receive Descriptor Base High */
	IgbRdlen0 = 0xc008,		/* Receive Descriptor Length (bytes) */
	IgbSrrctl0 = 0xc00c,		/* Split and Replication Receive Control */
	IgbRdh0 = 0xc010,		/* Receive Descriptor Head */
	IgbRdt0 = 0xc018,		/* Receive Descriptor Tail */
	IgbRxdctl0 = 0xc028,		/* Receive Descriptor Control */
	IgbRqdpc0 = 0xc030,		/* Receive Queue Drop Packet Count */
	IgbTdbal0 = 0xe000,		/* queue 0: Transmit Descriptor Base Low */
	IgbTdbah0 = 0xe004,		/* Transmit Descriptor Base High */
	IgbTdlen0 = 0xe008,		/* Transmit Descriptor Length (bytes) */
	IgbTdh0 = 0xe010,		/* Transmit Descriptor Head */
	IgbTdt0 = 0xe018,		/* Transmit Descriptor Tail */
	IgbTxdctl0 = 0xe028,		/* Transmit Descriptor Control */
};

#define IGB_MTA_WORDS 128

enum {					/* IgbCtrl; 82576 DS 8.2.1 */
	IgbCtrlFd = 1 << 0,		/* full duplex */
	IgbCtrlGioMasterDisable = 1 << 2, /* stop issuing DMA */
	IgbCtrlLrst = 1 << 3,		/* link reset */
	IgbCtrlSlu = 1 << 6,		/* set link up */
	IgbCtrlIlos = 1 << 7,		/* invert loss-of-signal */
	IgbCtrlFrcspd = 1 << 11,	/* force speed */
	IgbCtrlFrcdplx = 1 << 12,	/* force duplex */
	IgbCtrlRfce = 1 << 27,		/* receive flow control */
	IgbCtrlTfce = 1 << 28,		/* transmit flow control */
	IgbCtrlRst = 1 << 26,		/* device reset (self-clearing) */
	IgbCtrlVme = 1 << 30,		/* VLAN mode */
	IgbCtrlPhyRst = 1u << 31,	/* PHY reset */
};

enum {					/* IgbStatus; 82576 DS 8.2.2 */
	IgbStatusLu = 1 << 1,		/* link up */
	IgbStatusGioMasterEnable = 1 << 19, /* DMA requests still pending */
};

enum {					/* IgbEec; 82576 DS 8.4.1 */
	IgbEecAutoRd = 1 << 9,		/* NVM auto-read done */
};

enum {					/* IgbEerd; 82576 DS 8.4.2 */
	IgbEerdStart = 1 << 0,
	IgbEerdDone = 1 << 1,
	IgbEerdAddrShift = 2,
	IgbEerdDataShift = 16,
};

enum {					/* IgbMdic; 82576 DS 8.2.4 */
	IgbMdicRegShift = 16,		/* PHY register */
	IgbMdicPhyShift = 21,		/* PHY address: the internal PHY is 1 */
	IgbMdicOpWrite = 1 << 26,
	IgbMdicOpRead = 2 << 26,
	IgbMdicReady = 1 << 28,
	IgbMdicError = 1 << 30,
};

#define IGB_PHY_ADDR 1

enum {					/* the PHY's control register (IEEE 802.3 22.2.4.1) */
	PhyBmcr = 0,
	PhyBmcrSpeed1000 = 1 << 6,
	PhyBmcrFd = 1 << 8,
	PhyBmcrAnRestart = 1 << 9,
	PhyBmcrAnEnable = 1 << 12,
};

enum {					/* IgbIcr, Ics, Ims, Imc; 82576 DS 8.8.1 */
	IgbIntTxdw = 1 << 0,		/* transmit descriptor written back */
	IgbIntLsc = 1 << 2,		/* link status change */
	IgbIntRxdmt0 = 1 << 4,		/* receive descriptors below threshold */
	IgbIntRxo = 1 << 6,		/* receiver overrun (no descriptors) */
	IgbIntRxdw = 1 << 7,		/* receive descriptor written back */
	IgbIntAsserted = 1u << 31,	/* an interrupt is asserted */
};

enum {					/* IgbGpie; 82576 DS 8.8.14 */
	IgbGpieNsicr = 1 << 0,		/* ICR read clears it in every mode */
	IgbGpieMsix = 1 << 4,		/* MSI-X mode: causes go through IVAR to vectors */
	IgbGpieEiame = 1 << 30,		/* extended interrupt auto mask */
	IgbGpiePba = 1u << 31,		/* pending bit array support */
};

enum {					/* IVAR entries; 82576 DS 8.8.15 */
	IgbIvarValid = 0x80,		/* an entry's bit 7: it is in use */
	IgbIvarRx0Shift = 0,		/* IVAR0 bits 7:0: receive queue 0 */
	IgbIvarTx0Shift = 8,		/* IVAR0 bits 15:8: transmit queue 0 */
	IgbIvarOtherShift = 8,		/* IVAR_MISC bits 15:8: the other causes (ICR) */
};

enum {					/* IgbRctl; 82576 DS 8.10.1 */
	IgbRctlEn = 1 << 1,		/* receiver enable */
	IgbRctlUpe = 1 << 3,		/* unicast promiscuous */
	IgbRctlMpe = 1 << 4,		/* multicast promiscuous */
	IgbRctlLpe = 1 << 5,		/* long packet enable */
	IgbRctlBam = 1 << 15,		/* accept broadcast */
	IgbRctlSecrc = 1 << 26,		/* strip the Ethernet CRC */
};

enum {					/* IgbSrrctl0; 82576 DS 8.10.2 */
	IgbSrrctlBsizepkt2k = 2 << 0,	/* packet buffer 2 KiB (1 KiB units) */
	IgbSrrctlAdvOneBuf = 1 << 25,	/* advanced descriptors, one buffer */
	IgbSrrctlDropEn = 1u << 31,	/* drop (and count) when the queue has no descriptor */
};

enum {					/* IgbRxdctl0, IgbTxdctl0; 82576 DS 8.10.10, 8.12.13 */
	IgbQueueEnable = 1 << 25,
};

enum {					/* IgbRxcsum; 82576 DS 8.10.8 */
	IgbRxcsumIpofld = 1 << 8,	/* IP checksum offload */
	IgbRxcsumTuofld = 1 << 9,	/* TCP/UDP checksum offload */
};

enum {					/* IgbTctl; 82576 DS 8.12.1 */
	IgbTctlEn = 1 << 1,		/* transmitter enable */
	IgbTctlPsp = 1 << 3,		/* pad short packets */
	IgbTctlCtShift = 4,		/* collision threshold */
	IgbTctlColdShift = 12,		/* collision distance */
};

#define IGB_TCTL_CT 0x0f		/* 82576 DS 4.5.10: recommended */
#define IGB_TCTL_COLD_FD 0x40		/* full duplex */

/*
 * Advanced receive descriptor; 82576 DS 7.1.5.  The driver writes the read
 * format (the buffer's address, no header buffer); the NIC overwrites it
 * with the write-back format, whose status word lies where hdr_addr was,
 * so writing hdr_addr = 0 also clears DD.
 */
union igb_rdesc {
	struct {
		uint64_t pkt_addr;	/* packet buffer */
		uint64_t hdr_addr;	/* header buffer: 0, none */
	} read;
	struct {
		uint32_t info;		/* packet type, header length (unused) */
		uint32_t rss;		/* RSS hash or IP id (unused) */
		uint32_t status_error;	/* extended status (15:0) and errors (31:20) */
		uint16_t length;	/* bytes written into the buffer */
		uint16_t vlan;		/* VLAN tag (unused) */
	} wb;
};
_Static_assert(sizeof(union igb_rdesc) == 16, "advanced RX descriptor is 16 bytes");

enum {					/* wb.status_error; 82576 DS 7.1.5.2 */
	IgbRdDd = 1 << 0,		/* descriptor done */
	IgbRdEop = 1 << 1,		/* end of packet */
	IgbRdCe = 1 << 24,		/* CRC error */
	IgbRdSe = 1 << 25,		/* symbol error */
	IgbRdSeq = 1 << 26,		/* sequence error */
	IgbRdCxe = 1 << 28,		/* carrier extension error */
	IgbRdTcpe = 1 << 29,		/* TCP/UDP checksum error */
	IgbRdIpe = 1 << 30,		/* IP checksum error */
	IgbRdRxe = 1u << 31,		/* RX data error */
	/* Errors that make the frame itself bad (the checksums are not ours). */
	IgbRdFrameErrors = IgbRdCe | IgbRdSe | IgbRdSeq | IgbRdCxe | IgbRdRxe,
};

/* Advanced transmit data descriptor; 82576 DS 7.2.2.3. */
struct igb_tdesc {
	uint64_t addr;			/* buffer */
	uint32_t cmd_type_len;		/* length (15:0), type, command */
	uint32_t olinfo_status;		/* PAYLEN (31:14); written back: status (DD) */
};
_Static_assert(sizeof(struct igb_tdesc) == 16, "advanced TX descriptor is 16 bytes");

enum {					/* igb_tdesc.cmd_type_len; 82576 DS 7.2.2.3 */
	IgbTdTypeData = 3 << 20,	/* DTYP: advanced data descriptor */
	IgbTdEop = 1 << 24,		/* end of packet */
	IgbTdIfcs = 1 << 25,		/* insert FCS */
	IgbTdRs = 1 << 27,		/* report status (write back DD) */
	IgbTdDext = 1 << 29,		/* descriptor extension: advanced */
	IgbTdPaylenShift = 14,		/* olinfo_status: the frame's length */
	IgbTdDd = 1 << 0,		/* olinfo_status written back: done */
};

#endif
