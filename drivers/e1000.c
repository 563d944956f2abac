/*
 * Intel gigabit Ethernet with legacy descriptors: the 82540EM (QEMU
 * "e1000", 8086:100e) and the 82574L (QEMU "e1000e", 8086:10d3).  One
 * receive and one transmit ring of 256 descriptors each.
 *
 * Receive: every RX descriptor always holds a pktbuf.  The interrupt
 * handler reads ICR (which acknowledges the device) and harvests up to
 * RX_BUDGET frames, handing each up with netdev_input() and re-arming its
 * slot with a fresh pktbuf; the NIC writes at most 2048 bytes into a
 * buffer, so a slot is armed with pb->buf (the whole 2 KiB buffer, no
 * headroom) and RCTL.BSIZE = 2048, and a received frame starts at pb->buf.
 * When the pool is empty the frame is dropped and its own buffer re-armed
 * (rx_no_buffer): a slot is never left empty, so no timer is needed to
 * refill it, and the stack, which then holds the whole pool, is what gets
 * the back-pressure.
 *
 * Transmit: one legacy descriptor per frame (EOP|IFCS|RS); completed
 * descriptors are reclaimed in transmit(), poll() and the interrupt
 * handler.  The TXDW interrupt is enabled only while a sender waits for
 * a full ring (QEMU completes a descriptor at the TDT write, so there it
 * never is; real hardware completes later).
 *
 * The 82574L, as far as this driver goes, is an 82540EM with: GIO master
 * disable before reset and NVM auto-read after it; EERD with DONE at bit 1
 * and the word address at bit 2; TXDCTL bit 22 that must be set; MSI (and
 * MSI-X, unused); ICR bit 31 (INT_ASSERTED).  Its legacy descriptor
 * formats, ring registers (queue 0) and RCTL/TCTL bits are those of the
 * 8254x.
 *
 * QEMU's e1000 holds back received frames for about 1 s after any RCTL
 * write, so RCTL is written exactly once, at the end of e1000_probe().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/e1000_regs.h"
#include "drivers/intel_nic.h"
#include "drivers/netdev.h"
#include "drivers/pci.h"
#include "drivers/pktbuf.h"
#include "kernel/apic.h"
#include "kernel/console.h"
#include "kernel/mem.h"
#include "kernel/trap.h"
#include "kernel/trace.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"

#define E1000_DEBUG 0		/* 1: LTRACEF prints */
#define LTRACEF(...) \
	do { if (E1000_DEBUG) kprintf("e1000: " __VA_ARGS__); } while (0)

#define NRDESC 256			/* multiple of 8: RDLEN is 128-byte aligned */
/*
 * Re-armed RX slots are handed back to the NIC (an RDT write) in batches of
 * this many, as Linux's e1000 does: every RDT write is an MMIO access, and
 * in QEMU 7.2 each one also wakes the emulator's main loop
 * (set_rdt -> qemu_flush_queued_packets -> qemu_notify_event), which cost
 * 17-39 us per frame with the cluster on one host CPU.  The NIC still has
 * NRDESC - 1 - RX_POST_BATCH buffers at worst.
 */
#define RX_POST_BATCH 16
#define NTDESC 256
#define RX_BUDGET 64			/* frames per interrupt */
#define RX_BUF_SIZE 2048		/* RCTL.BSIZE */
#define MAX_FRAME (ETH_MAX_FRAME + 4)	/* 802.1Q tag, no FCS (RCTL.SECRC) */
/*
 * Long packets (RCTL.LPE, 8254x SDM 13.4.22: up to 16384 bytes): 9000 bytes
 * of payload, received over several 2 KiB buffers and gathered
 * (inic_rx_part), sent from one large buffer in one descriptor: ETH_JUMBO_FRAME.
 */
#define LINK_WAIT_NS 3000000000ULL	/* autonegotiation takes ~2 s on copper */

/* Receive interrupts; irq_enable() turns these off for polling mode. */
#define RX_INTS (IntRxt0 | IntRxdmt0 | IntRxo)

_Static_assert(PKT_BUF_SIZE >= RX_BUF_SIZE, "a pktbuf must hold a whole RX buffer");
_Static_assert(MAX_FRAME <= RX_BUF_SIZE, "a frame must fit in one RX buffer");

enum { Is82540, Is82574 };

struct model {
	uint16_t device;
	const char *name;
	int kind;
};

static const struct model models[] = {
	{ 0x100e, "82540EM", Is82540 },
	{ 0x10d3, "82574L", Is82574 },
	/*
	 * The 82583V: the 82574L's sibling (the same register set, descriptors and
	 * EEPROM-less start-up that this driver uses).  QEMU has no model of it:
	 * recognised by id, not tested here.
	 */
	{ 0x150c, "82583V", Is82574 },
};

struct ctlr {
	struct netdev nd;
	struct pci_dev *pci;
	const struct model *model;
	volatile uint32_t *regs;
	int vector;
	int msi;			/* else INTx on gsi */
	uint32_t gsi;

	volatile struct e1000_rdesc *rdba;
	struct pktbuf *rxpb[NRDESC];	/* the buffer armed in each slot */
	unsigned rx_next;		/* next slot to harvest */
	unsigned rx_unposted;		/* re-armed slots behind RDT, < RX_POST_BATCH */
	struct inic_rx rx;		/* a frame that spans descriptors */
	unsigned max_frame;		/* the longest frame sent or taken: MAX_FRAME, or frame_max */

	volatile struct e1000_tdesc *tdba;
	struct pktbuf *txpb[NTDESC];	/* NULL when the slot is free */
	unsigned tx_clean;		/* oldest descriptor not reclaimed */
	unsigned tx_next;		/* next descriptor to fill (== TDT) */
	int txdw_armed;			/* IMS.TXDW on: a sender waits for space */
};

static inline uint32_t csr32r(struct ctlr *c, int reg)
{
	return inic_r(c->regs, reg);
}

static inline void csr32w(struct ctlr *c, int reg, uint32_t v)
{
	inic_w(c->regs, reg, v);
}

static int csr_wait(struct ctlr *c, int reg, uint32_t mask, uint32_t want, uint64_t timeout_ns)
{
	return inic_wait(c->regs, reg, mask, want, timeout_ns);
}

static const struct model *model_of(const struct pci_dev *d)
{
	if (d->vendor != 0x8086)
		return NULL;
	for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
		if (models[i].device == d->device)
			return &models[i];
	return NULL;
}

/*
 * Software reset with every interrupt masked; 8254x SDM 14.3 (and, for
 * the 82574, GIO master disable first).  Return 0 or -ETIMEDOUT.
 */
static int e1000_reset(struct ctlr *c)
{
	csr32w(c, Imc, ~0u);
	csr32w(c, Tctl, 0);
	if (c->model->kind == Is82574) {
		csr32w(c, Ctrl, csr32r(c, Ctrl) | CtrlGioMasterDisable);
		if (csr_wait(c, Status, StatusGioMasterEnable, 0, 10000000) < 0)
			LTRACEF("GIO master still enabled; resetting anyway\n");
	}
	csr32w(c, Ctrl, csr32r(c, Ctrl) | CtrlRst);
	delay_ns(10000000);
	if (csr_wait(c, Ctrl, CtrlRst, 0, 100000000) < 0)
		return -ETIMEDOUT;
	if (c->model->kind == Is82574 && csr_wait(c, Eecd, EecdAutoRd, EecdAutoRd, 10000000) < 0)
		LTRACEF("NVM auto-read not done\n");
	csr32w(c, Imc, ~0u);
	(void)csr32r(c, Icr);
	return 0;
}

/* Read EEPROM word through EERD; 8254x SDM 13.4.4.  0 or -ETIMEDOUT. */
static int eeprom_read(struct ctlr *c, int word, uint16_t *val)
{
	int is82574 = c->model->kind == Is82574;
	uint32_t done = is82574 ? Eerd82574Done : EerdDone;
	int shift = is82574 ? Eerd82574AddrShift : EerdAddrShift;

	csr32w(c, Eerd, EerdStart | ((uint32_t)word << shift));
	for (int i = 0; i < 1000; i++) {
		uint32_t v = csr32r(c, Eerd);
		if (v & done) {
			*val = (uint16_t)(v >> EerdDataShift);
			return 0;
		}
		delay_ns(5000);
	}
	return -ETIMEDOUT;
}

/*
 * The station address: receive address 0 as the reset's EEPROM load left
 * it, else EEPROM words 0-2 (8254x SDM 5.6.1), then written back to
 * RAL0/RAH0.  Return 0 or -EIO.
 */
static int e1000_read_mac(struct ctlr *c, uint8_t *mac)
{
	if (inic_mac_get(c->regs, Ral0, mac))
		return 0;
	for (int w = 0; w < 3; w++) {
		uint16_t v;
		if (eeprom_read(c, w, &v) < 0)
			return -EIO;
		mac[2 * w] = (uint8_t)v;
		mac[2 * w + 1] = (uint8_t)(v >> 8);
	}
	if (!inic_mac_ok(mac))
		return -EIO;
	inic_mac_set(c->regs, Ral0, mac);
	return 0;
}

/* Arm RX slot i with pb: the NIC fills pb->buf (RX_BUF_SIZE bytes). */
static void rx_arm(struct ctlr *c, unsigned i, struct pktbuf *pb)
{
	volatile struct e1000_rdesc *d = &c->rdba[i];

	c->rxpb[i] = pb;
	d->addr = (uintptr_t)pb->buf;
	d->length = 0;
	d->errors = 0;
	d->status = 0;
}

/*
 * The receive ring, every slot armed, all but one given to the NIC;
 * 8254x SDM 14.4 (RCTL is written later, once).  0 or -ENOMEM.
 */
static int rx_init(struct ctlr *c)
{
	c->rdba = page_alloc_zeroed(NRDESC * sizeof(struct e1000_rdesc));
	if (!c->rdba)
		return -ENOMEM;
	for (unsigned i = 0; i < NRDESC; i++) {
		struct pktbuf *pb = pkt_get();
		if (!pb)
			return -ENOMEM;
		rx_arm(c, i, pb);
	}
	c->rx_next = 0;
	c->rx_unposted = 0;
	csr32w(c, Rdbal, (uint32_t)(uintptr_t)c->rdba);
	csr32w(c, Rdbah, (uint32_t)((uintptr_t)c->rdba >> 32));
	csr32w(c, Rdlen, NRDESC * sizeof(struct e1000_rdesc));
	csr32w(c, Rdh, 0);
	csr32w(c, Rdt, NRDESC - 1);
	return 0;
}

/* The transmit ring and the transmitter; 8254x SDM 14.5.  0 or -ENOMEM. */
static int tx_init(struct ctlr *c)
{
	c->tdba = page_alloc_zeroed(NTDESC * sizeof(struct e1000_tdesc));
	if (!c->tdba)
		return -ENOMEM;
	c->tx_clean = c->tx_next = 0;
	csr32w(c, Tdbal, (uint32_t)(uintptr_t)c->tdba);
	csr32w(c, Tdbah, (uint32_t)((uintptr_t)c->tdba >> 32));
	csr32w(c, Tdlen, NTDESC * sizeof(struct e1000_tdesc));
	csr32w(c, Tdh, 0);
	csr32w(c, Tdt, 0);
	if (c->model->kind == Is82574) {
		/* 82574 datasheet: TXDCTL bit 22 reserved, must be 1. */
		csr32w(c, Txdctl, csr32r(c, Txdctl) | Txdctl82574Must);
		/* IEEE 802.3 IPG: the 82574's reset value. */
		csr32w(c, Tipg, 8 << TipgIpgtShift | 8 << TipgIpgr1Shift | 6 << TipgIpgr2Shift);
	} else {
		/* 8254x SDM 13.4.34: IPGT 10 for copper, IPGR1 8, IPGR2 6. */
		csr32w(c, Tipg, 10 << TipgIpgtShift | 8 << TipgIpgr1Shift | 6 << TipgIpgr2Shift);
	}
	/* Full-duplex collision distance: the link partner is a switch. */
	csr32w(c, Tctl, TctlEn | TctlPsp | TCTL_CT << TctlCtShift | TCTL_COLD_FD << TctlColdShift);
	return 0;
}

/* Free what e1000_probe() allocated before the device was live. */
static void e1000_free(struct ctlr *c)
{
	if (c->rx.big)
		pkt_put(c->rx.big);
	if (c->rdba) {
		for (unsigned i = 0; i < NRDESC; i++)
			if (c->rxpb[i])
				pkt_put(c->rxpb[i]);
		page_free_bytes((void *)c->rdba, NRDESC * sizeof(struct e1000_rdesc));
	}
	if (c->tdba)
		page_free_bytes((void *)c->tdba, NTDESC * sizeof(struct e1000_tdesc));
	free(c);
}

/* Reclaim completed TX descriptors.  Interrupts off.  Return how many. */
static int tx_reclaim(struct ctlr *c)
{
	unsigned i = c->tx_clean;
	int n = 0;

	while (i != c->tx_next && (c->tdba[i].status & TdDd)) {
		pkt_put(c->txpb[i]);
		c->txpb[i] = NULL;
		i = (i + 1) % NTDESC;
		n++;
	}
	c->tx_clean = i;
	return n;
}

/*
 * netdev ops->transmit.  Frames shorter than ETH_MIN_FRAME go out padded
 * (inic_tx_len: QEMU's e1000 ignores TCTL.PSP).  0, -EAGAIN (ring full)
 * or -EINVAL (bad length).
 */
static int e1000_transmit(struct netdev *nd, struct pktbuf *pb)
{
	struct ctlr *c = nd->softc;
	int len = inic_tx_len(pb, c->max_frame);

	if (len < 0)
		return len;

	irqflags_t f = irq_save();
	if (tx_reclaim(c))
		netdev_tx_space(nd);
	unsigned i = c->tx_next, next = (i + 1) % NTDESC;
	if (next == c->tx_clean) {
		/* Full (one slot stays empty: TDT == TDH means idle). */
		nd->stats.tx_ring_full++;
		if (!c->txdw_armed) {
			c->txdw_armed = 1;
			csr32w(c, Ims, IntTxdw);
		}
		irq_restore(f);
		return -EAGAIN;
	}
	pkt_ref(pb);
	c->txpb[i] = pb;
	volatile struct e1000_tdesc *d = &c->tdba[i];
	d->addr = (uintptr_t)pb->data;
	d->length = (uint16_t)len;
	d->cso = 0;
	d->cmd = TdEop | TdIfcs | TdRs;
	d->status = 0;
	d->css = 0;
	d->special = 0;
	c->tx_next = next;
	csr32w(c, Tdt, next);
	nd->stats.tx_frames++;
	nd->stats.tx_bytes += len;
	irq_restore(f);
	return 0;
}

/*
 * Harvest up to budget RX descriptors (8254x SDM 3.2.3), handing good
 * frames up and counting them in *frames, re-arm their slots and give
 * them back to the NIC with one RDT write.  Interrupts off.  Return the
 * descriptors taken.
 */
static int rx_harvest(struct ctlr *c, int budget, int *frames)
{
	struct netdev *nd = &c->nd;
	unsigned i = c->rx_next;
	int n;

	for (n = 0; n < budget; n++) {
		volatile struct e1000_rdesc *d = &c->rdba[i];
		uint8_t status = d->status;
		if (!(status & RdDd))
			break;
		trace_point(TS_NIC_RX);
		struct pktbuf *up;
		rx_arm(c, i, inic_rx_one(nd, &c->rx, c->rxpb[i], status & RdEop, d->errors & RdFrameErrors,
					 d->length, c->max_frame, RX_BUF_SIZE, &up));
		i = (i + 1) % NRDESC;
		c->rx_next = i;
		if (up) {
			netdev_input(nd, up);
			(*frames)++;
		}
	}
	c->rx_unposted += (unsigned)n;
	if (c->rx_unposted >= RX_POST_BATCH) {
		csr32w(c, Rdt, (i + NRDESC - 1) % NRDESC);
		c->rx_unposted = 0;
	}
	return n;
}

/* netdev ops->poll.  Interrupts off.  Return the frames handed up. */
static int e1000_poll(struct netdev *nd, int budget)
{
	struct ctlr *c = nd->softc;
	int frames = 0;

	rx_harvest(c, budget, &frames);
	if (tx_reclaim(c))
		netdev_tx_space(nd);
	return frames;
}

/* netdev ops->link_check: STATUS.LU into nd->link_up. */
static void e1000_link_check(struct netdev *nd)
{
	struct ctlr *c = nd->softc;
	nd->link_up = (csr32r(c, Status) & StatusLu) != 0;
}

/*
 * netdev ops->irq_enable.  Interrupts off.  Turning receive interrupts
 * back on raises one at once (ICS) if a frame is waiting: its RXT0 may
 * already have been cleared from ICR by another cause's interrupt.
 */
static void e1000_irq_enable(struct netdev *nd, int on)
{
	struct ctlr *c = nd->softc;

	if (!on) {
		csr32w(c, Imc, RX_INTS);
		return;
	}
	csr32w(c, Ims, RX_INTS);
	if (c->rdba[c->rx_next].status & RdDd)
		csr32w(c, Ics, IntRxt0);
}

/*
 * The interrupt handler (interrupts off; EOI follows).  Reading ICR
 * deasserts INTx; frames left over after RX_BUDGET raise the interrupt
 * again through ICS rather than holding the CPU here.
 */
static void e1000_intr(void *arg)
{
	struct ctlr *c = arg;
	struct netdev *nd = &c->nd;
	uint32_t icr;

	nd->stats.irqs++;
	icr = csr32r(c, Icr);
	LTRACEF("icr %#x\n", icr);
	if (icr & IntLsc) {
		int was = nd->link_up;
		e1000_link_check(nd);
		if (nd->link_up != was)
			kprintf("net: %s link %s\n", nd->name, nd->link_up ? "up" : "down");
	}
	if ((icr & IntTxdw) && c->txdw_armed) {
		c->txdw_armed = 0;
		csr32w(c, Imc, IntTxdw);
	}
	if (!nd->polling) {
		int frames = 0;
		if (rx_harvest(c, RX_BUDGET, &frames) == RX_BUDGET &&
		    (c->rdba[c->rx_next].status & RdDd))
			csr32w(c, Ics, IntRxt0);
	}
	if (tx_reclaim(c))
		netdev_tx_space(nd);
}

/* MSI with one vector; PCI 3.0 6.8.1.  0, or -ENODEV if no capability. */
static int msi_setup(struct pci_dev *d, int vector)
{
	int cap = pci_find_cap(d, PciCapMsi, 0);
	uint64_t addr;
	uint32_t data;

	if (!cap)
		return -ENODEV;
	uint16_t ctl = pci_read16(d, cap + 2);
	msi_compose(vector, &addr, &data);
	pci_write32(d, cap + 4, (uint32_t)addr);
	if (ctl & (1 << 7)) {		/* 64-bit address capable */
		pci_write32(d, cap + 8, (uint32_t)(addr >> 32));
		pci_write16(d, cap + 12, (uint16_t)data);
	} else {
		pci_write16(d, cap + 8, (uint16_t)data);
	}
	ctl &= ~(7 << 4);		/* Multiple Message Enable: one vector */
	pci_write16(d, cap + 2, ctl | 1);
	pci_write16(d, PciCommand, pci_read16(d, PciCommand) | PciCmdIntxDisable);
	return 0;
}

/*
 * A vector for e1000_intr, delivered by MSI where the function has it
 * (82574L) and otherwise by INTx through the I/O APIC (82540EM).  PCI
 * INTx is level-triggered; the polarity is ACPI's for the ISA IRQ the
 * firmware routed it to (QEMU: active high).  0, -EBUSY or -ENODEV.
 */
static int e1000_intr_setup(struct ctlr *c)
{
	c->vector = irq_alloc(e1000_intr, c);
	if (c->vector < 0)
		return -EBUSY;
	if (msi_setup(c->pci, c->vector) == 0) {
		c->msi = 1;
		return 0;
	}
	return pci_intx_route(c->pci, c->vector, &c->gsi);
}

static const struct netdev_ops e1000_ops = {
	.transmit = e1000_transmit,
	.poll = e1000_poll,
	.irq_enable = e1000_irq_enable,
	.link_check = e1000_link_check,
};

static int e1000_match(const struct pci_dev *d)
{
	return model_of(d) != NULL;
}

/*
 * Bring the NIC up (8254x SDM 14.3-14.5) and register it.  Return 0, or
 * a negative errno with the device left quiet.
 */
static int e1000_probe(struct pci_dev *d)
{
	struct pci_bar bar;
	struct ctlr *c;
	int r;

	if (netdev_get())
		return -EBUSY;		/* netdev has room for one NIC */
	if (pci_bar(d, 0, &bar) < 0 || bar.io || bar.size > UINT32_MAX)
		return -ENODEV;
	volatile uint8_t *regs = pci_map_bar(d, 0, 0, (uint32_t)bar.size);
	if (!regs)
		return -ENOMEM;
	c = calloc(1, sizeof *c);
	if (!c)
		return -ENOMEM;
	c->pci = d;
	c->model = model_of(d);
	c->regs = (volatile uint32_t *)regs;
	pci_enable(d);

	if ((r = e1000_reset(c)) < 0)
		goto free;
	/* 8254x SDM 14.3: link set up by the PHY's autonegotiation. */
	uint32_t ctrl = csr32r(c, Ctrl);
	ctrl |= CtrlSlu | CtrlAsde;
	ctrl &= ~(CtrlLrst | CtrlPhyRst | CtrlIlos | CtrlFrcspd | CtrlFrcdplx | CtrlVme |
		  CtrlGioMasterDisable);
	csr32w(c, Ctrl, ctrl);
	/* No flow control: its address, type and timer registers stay 0. */
	csr32w(c, Fcal, 0);
	csr32w(c, Fcah, 0);
	csr32w(c, Fct, 0);
	csr32w(c, Fcttv, 0);
	if ((r = e1000_read_mac(c, c->nd.mac)) < 0)
		goto free;
	for (int i = 0; i < MTA_WORDS; i++)
		csr32w(c, Mta + 4 * i, 0);
	/* No interrupt moderation: every frame interrupts at once. */
	csr32w(c, Itr, 0);
	csr32w(c, Rdtr, 0);
	csr32w(c, Radv, 0);
	csr32w(c, Tidv, 0);
	csr32w(c, Tadv, 0);
	if ((r = rx_init(c)) < 0 || (r = tx_init(c)) < 0)
		goto free;
	if ((r = e1000_intr_setup(c)) < 0)
		goto quiet;		/* the vector cannot be given back */

	c->nd.name = "e1000";
	c->nd.model = c->model->name;
	c->nd.frame_max = ETH_JUMBO_FRAME;
	c->max_frame = MAX_FRAME;
	c->nd.ops = &e1000_ops;
	c->nd.softc = c;
	uint64_t end = now_ns() + LINK_WAIT_NS;
	while (!(csr32r(c, Status) & StatusLu) && now_ns() < end)
		delay_ns(10000000);
	e1000_link_check(&c->nd);
	if (c->msi)
		printf("e1000: %02x:%02x.%d %s, msi vector %#x\n", d->bus, d->dev, d->fn,
		       c->model->name, c->vector);
	else
		printf("e1000: %02x:%02x.%d %s, intx gsi %u vector %#x\n", d->bus, d->dev, d->fn,
		       c->model->name, c->gsi, c->vector);
	if (netdev_register(&c->nd) < 0) {
		r = -EBUSY;
		goto quiet;
	}
	d->softc = c;
	/* Long packets where netdev_register found the buffers for them. */
	c->max_frame = c->nd.frame_max > ETH_MAX_FRAME ? c->nd.frame_max : MAX_FRAME;

	csr32w(c, Ims, RX_INTS | IntLsc);
	/*
	 * 8254x SDM 14.4; the only RCTL write (see the top of this file).
	 * Multicast frames all taken (MPE): the fabric's group frames, whose
	 * addresses the layer above chooses, are sorted there.
	 */
	csr32w(c, Rctl, RctlEn | RctlBam | RctlMpe | RctlSecrc | RctlBsize2048 | RctlRdmtsHalf | RctlLbmNone |
				RctlMo36 | RctlDtypLegacy | (c->nd.frame_max > ETH_MAX_FRAME ? RctlLpe : 0));
	return 0;

quiet:
	/* Interrupts masked and TX off; kept allocated for the handler. */
	csr32w(c, Imc, ~0u);
	csr32w(c, Tctl, 0);
	return r;
free:
	csr32w(c, Tctl, 0);
	e1000_free(c);
	return r;
}

static const struct pci_driver e1000_driver = {
	.name = "e1000",
	.match = e1000_match,
	.probe = e1000_probe,
};
PCI_DRIVER(e1000_driver);
