/*
 * Intel 8254x / 82574 gigabit Ethernet: the registers, bits and legacy
 * descriptors this driver uses.  Sections are those of the PCI/PCI-X
 * Family of Gigabit Ethernet Controllers Software Developer's Manual
 * (8254x SDM, 317453); where the 82574 differs it says so.
 */
#ifndef DRIVERS_E1000_REGS_H
#define DRIVERS_E1000_REGS_H

#include <stdint.h>

enum {					/* registers; 8254x SDM 13.4 */
	Ctrl = 0x0000,			/* Device Control */
	Status = 0x0008,		/* Device Status */
	Eecd = 0x0010,			/* EEPROM/Flash Control/Data */
	Eerd = 0x0014,			/* EEPROM Read */
	Fcal = 0x0028,			/* Flow Control Address Low */
	Fcah = 0x002c,			/* Flow Control Address High */
	Fct = 0x0030,			/* Flow Control Type */
	Icr = 0x00c0,			/* Interrupt Cause Read (clears on read) */
	Itr = 0x00c4,			/* Interrupt Throttling Rate */
	Ics = 0x00c8,			/* Interrupt Cause Set */
	Ims = 0x00d0,			/* Interrupt Mask Set/Read */
	Imc = 0x00d8,			/* Interrupt Mask Clear */
	Rctl = 0x0100,			/* Receive Control */
	Fcttv = 0x0170,			/* Flow Control Transmit Timer Value */
	Tctl = 0x0400,			/* Transmit Control */
	Tipg = 0x0410,			/* Transmit Inter-Packet Gap */
	Rdbal = 0x2800,			/* Receive Descriptor Base Address Low */
	Rdbah = 0x2804,			/* Receive Descriptor Base Address High */
	Rdlen = 0x2808,			/* Receive Descriptor Length (bytes) */
	Rdh = 0x2810,			/* Receive Descriptor Head */
	Rdt = 0x2818,			/* Receive Descriptor Tail */
	Rdtr = 0x2820,			/* Receive Delay Timer */
	Radv = 0x282c,			/* Receive Interrupt Absolute Delay */
	Tdbal = 0x3800,			/* Transmit Descriptor Base Address Low */
	Tdbah = 0x3804,			/* Transmit Descriptor Base Address High */
	Tdlen = 0x3808,			/* Transmit Descriptor Length (bytes) */
	Tdh = 0x3810,			/* Transmit Descriptor Head */
	Tdt = 0x3818,			/* Transmit Descriptor Tail */
	Tidv = 0x3820,			/* Transmit Interrupt Delay Value */
	Txdctl = 0x3828,		/* Transmit Descriptor Control */
	Tadv = 0x382c,			/* Transmit Interrupt Absolute Delay */
	Mta = 0x5200,			/* Multicast Table Array, 128 words */
	Ral0 = 0x5400,			/* Receive Address Low, entry 0 */
	Rah0 = 0x5404,			/* Receive Address High, entry 0 */
};

#define MTA_WORDS 128

enum {					/* Ctrl; 8254x SDM 13.4.1 */
	CtrlFd = 1 << 0,		/* full duplex */
	CtrlGioMasterDisable = 1 << 2,	/* 82574: stop issuing DMA */
	CtrlLrst = 1 << 3,		/* link reset */
	CtrlAsde = 1 << 5,		/* auto-speed detection enable */
	CtrlSlu = 1 << 6,		/* set link up */
	CtrlIlos = 1 << 7,		/* invert loss-of-signal */
	CtrlFrcspd = 1 << 11,		/* force speed */
	CtrlFrcdplx = 1 << 12,		/* force duplex */
	CtrlRst = 1 << 26,		/* device reset (self-clearing) */
	CtrlVme = 1 << 30,		/* VLAN mode enable */
	CtrlPhyRst = 1u << 31,		/* PHY reset */
};

enum {					/* Status; 8254x SDM 13.4.2 */
	StatusFd = 1 << 0,		/* full duplex */
	StatusLu = 1 << 1,		/* link up */
	StatusGioMasterEnable = 1 << 19, /* 82574: DMA requests still pending */
};

enum {					/* Eecd */
	EecdAutoRd = 1 << 9,		/* 82574: NVM auto-read done */
};

enum {					/* Eerd; 8254x SDM 13.4.4 */
	EerdStart = 1 << 0,
	EerdDone = 1 << 4,		/* 82574: bit 1 */
	EerdAddrShift = 8,		/* 82574: 2 */
	EerdDataShift = 16,
	Eerd82574Done = 1 << 1,
	Eerd82574AddrShift = 2,
};

enum {					/* Icr, Ics, Ims, Imc; 8254x SDM 13.4.17 */
	IntTxdw = 1 << 0,		/* transmit descriptor written back */
	IntTxqe = 1 << 1,		/* transmit queue empty */
	IntLsc = 1 << 2,		/* link status change */
	IntRxseq = 1 << 3,		/* receive sequence error */
	IntRxdmt0 = 1 << 4,		/* receive descriptors below threshold */
	IntRxo = 1 << 6,		/* receiver overrun */
	IntRxt0 = 1 << 7,		/* receiver timer (a frame arrived) */
	IntAsserted = 1u << 31,		/* 82574: an interrupt is asserted */
};

enum {					/* Rctl; 8254x SDM 13.4.22 */
	RctlEn = 1 << 1,		/* receiver enable */
	RctlSbp = 1 << 2,		/* store bad packets */
	RctlUpe = 1 << 3,		/* unicast promiscuous */
	RctlMpe = 1 << 4,		/* multicast promiscuous */
	RctlLpe = 1 << 5,		/* long packet enable (> 1522 bytes) */
	RctlLbmNone = 0 << 6,		/* no loopback */
	RctlRdmtsHalf = 0 << 8,		/* RXDMT0 at 1/2 of the ring free */
	RctlDtypLegacy = 0 << 10,	/* 82574: legacy descriptors */
	RctlMo36 = 0 << 12,		/* multicast offset: bits 47:36 */
	RctlBam = 1 << 15,		/* accept broadcast */
	RctlBsize2048 = 0 << 16,	/* buffer size 2048 (with BSEX 0) */
	RctlBsize1024 = 1 << 16,
	RctlVfe = 1 << 18,		/* VLAN filter enable */
	RctlBsex = 1 << 25,		/* buffer size extension (x16) */
	RctlSecrc = 1 << 26,		/* strip the Ethernet CRC */
};

enum {					/* Tctl; 8254x SDM 13.4.33 */
	TctlEn = 1 << 1,		/* transmitter enable */
	TctlPsp = 1 << 3,		/* pad short packets */
	TctlCtShift = 4,		/* collision threshold */
	TctlColdShift = 12,		/* collision distance */
	TctlRtlc = 1 << 24,		/* re-transmit on late collision */
};

#define TCTL_CT 0x0f			/* 8254x SDM 14.5: recommended */
#define TCTL_COLD_FD 0x40		/* 8254x SDM 14.5: full duplex */

enum {					/* Tipg; 8254x SDM 13.4.34 */
	TipgIpgtShift = 0,
	TipgIpgr1Shift = 10,
	TipgIpgr2Shift = 20,
};

enum {					/* Txdctl */
	Txdctl82574Must = 1 << 22,	/* 82574: reserved, must be 1 */
};

enum {					/* Rah0 */
	RahAv = 1u << 31,		/* address valid */
};

/* Legacy receive descriptor; 8254x SDM 3.2.3. */
struct e1000_rdesc {
	uint64_t addr;			/* buffer address */
	uint16_t length;		/* bytes DMAed into the buffer */
	uint16_t csum;			/* packet checksum (unused) */
	uint8_t status;
	uint8_t errors;
	uint16_t special;		/* VLAN tag (unused) */
};
_Static_assert(sizeof(struct e1000_rdesc) == 16, "legacy RX descriptor is 16 bytes");

enum {					/* e1000_rdesc.status; 8254x SDM 3.2.3.1 */
	RdDd = 1 << 0,			/* descriptor done */
	RdEop = 1 << 1,			/* end of packet */
	RdIxsm = 1 << 2,		/* ignore checksum indication */
	RdVp = 1 << 3,			/* 802.1Q packet */
};

enum {					/* e1000_rdesc.errors; 8254x SDM 3.2.3.2 */
	RdCe = 1 << 0,			/* CRC or alignment error */
	RdSe = 1 << 1,			/* symbol error */
	RdSeq = 1 << 2,			/* sequence error */
	RdCxe = 1 << 4,			/* carrier extension error */
	RdTcpe = 1 << 5,		/* TCP/UDP checksum error */
	RdIpe = 1 << 6,			/* IP checksum error */
	RdRxe = 1 << 7,			/* RX data error */
	/* Errors that make the frame itself bad (the checksums are not ours). */
	RdFrameErrors = RdCe | RdSe | RdSeq | RdCxe | RdRxe,
};

/* Legacy transmit descriptor; 8254x SDM 3.3.3. */
struct e1000_tdesc {
	uint64_t addr;			/* buffer address */
	uint16_t length;		/* bytes to send from the buffer */
	uint8_t cso;			/* checksum offset (unused) */
	uint8_t cmd;
	uint8_t status;
	uint8_t css;			/* checksum start (unused) */
	uint16_t special;		/* VLAN tag (unused) */
};
_Static_assert(sizeof(struct e1000_tdesc) == 16, "legacy TX descriptor is 16 bytes");

enum {					/* e1000_tdesc.cmd; 8254x SDM 3.3.3.1 */
	TdEop = 1 << 0,			/* end of packet */
	TdIfcs = 1 << 1,		/* insert FCS */
	TdIc = 1 << 2,			/* insert checksum */
	TdRs = 1 << 3,			/* report status (write back DD) */
	TdDext = 1 << 5,		/* extension: 0 = legacy descriptor */
	TdVle = 1 << 6,			/* VLAN packet enable */
	TdIde = 1 << 7,			/* interrupt delay enable */
};

enum {					/* e1000_tdesc.status; 8254x SDM 3.3.3.2 */
	TdDd = 1 << 0,			/* descriptor done */
};

#endif
