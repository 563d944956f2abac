/*
 * Intel gigabit Ethernet with legacy descriptors: the 82540EM (QEMU
 * "e1000", 8086:100e) and the 82574L (QEMU "e1000e", 8086:10d3).  One
 * receive and one transmit ring of 256 descriptors each.
 *
 * Receive: every RX descriptor always holds a pktbuf.  The interrupt
 * handler reads ICR (which acknowledges the device) and harvests up to
 * INIC_RX_BUDGET frames, handing each up with netdev_input() and re-arming its
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

/* The rings' sizes, RDT batching and the interrupt's budget: drivers/intel_nic.h. */
#define NRDESC INIC_NRDESC
#define NTDESC INIC_NTDESC
#define RX_BUF_SIZE 2048		/* RCTL.BSIZE */
#define MAX_FRAME INIC_MAX_FRAME	/* 802.1Q tag, no FCS (RCTL.SECRC) */
/*
 * Long packets (RCTL.LPE, 8254x SDM 13.4.22: up to 16384 bytes): 9000 bytes
 * of payload, received over several 2 KiB buffers and gathered
 * (inic_rx_part), sent from one large buffer in one descriptor: ETH_JUMBO_FRAME.
 */

/* Receive interrupts; irq_enable() turns these off for polling mode. */
#define RX_INTS (IntRxt0 | IntRxdmt0 | IntRxo)

_Static_assert(PKT_BUF_SIZE >= RX_BUF_SIZE, "a pktbuf must hold a whole RX buffer");
_Static_assert(MAX_FRAME <= RX_BUF_SIZE, "a frame must fit in one RX buffer");

enum { Is82540, Is82574 };

static const struct inic_model models[] = {
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
	struct inic n;			/* first: what drivers/igb.c keeps too */
	int msi;			/* else INTx on n.gsi */
	volatile struct e1000_rdesc *rdba;
	volatile struct e1000_tdesc *tdba;
};

static inline uint32_t csr32r(struct ctlr *c, int reg)
{
	return inic_r(c->n.regs, reg);
}

static inline void csr32w(struct ctlr *c, int reg, uint32_t v)
{
	inic_w(c->n.regs, reg, v);
}

static const struct inic_model *model_of(const struct pci_dev *d)
{
	return inic_model_of(models, sizeof models / sizeof models[0], d);
}

/*
 * Software reset with every interrupt masked; 8254x SDM 14.3 (and, for
 * the 82574, GIO master disable first and the NVM auto-read after).
 * Return 0 or -ETIMEDOUT.
 */
static int e1000_reset(struct ctlr *c)
{
	int is82574 = c->n.model->kind == Is82574;

	csr32w(c, Imc, ~0u);
	csr32w(c, Tctl, 0);
	if (inic_reset(&c->n, is82574, 10000000, is82574) < 0)
		return -ETIMEDOUT;
	csr32w(c, Imc, ~0u);
	(void)csr32r(c, Icr);
	return 0;
}

/*
 * The station address: receive address 0 as the reset's EEPROM load left
 * it, else EEPROM words 0-2 (8254x SDM 5.6.1) through EERD (13.4.4; the
 * 82574's done bit and word address elsewhere), then written back to
 * RAL0/RAH0.  Return 0 or -EIO.
 */
static int e1000_read_mac(struct ctlr *c)
{
	static const struct inic_nvm eerd = { EerdDone, EerdAddrShift };
	static const struct inic_nvm eerd82574 = { Eerd82574Done, Eerd82574AddrShift };

	return inic_read_mac(&c->n, c->n.model->kind == Is82574 ? &eerd82574 : &eerd);
}

/* Arm RX slot i with pb: the NIC fills pb->buf (RX_BUF_SIZE bytes). */
static void rx_arm(struct ctlr *c, unsigned i, struct pktbuf *pb)
{
	volatile struct e1000_rdesc *d = &c->rdba[i];

	c->n.rxpb[i] = pb;
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
	if (!c->rdba || inic_rx_fill(&c->n) < 0)
		return -ENOMEM;
	for (unsigned i = 0; i < NRDESC; i++)
		rx_arm(c, i, c->n.rxpb[i]);
	/* Rdbal, Rdbah, Rdlen, Rdh 0, Rdt. */
	inic_ring_regs(&c->n, Rdbal, c->rdba, NRDESC * sizeof(struct e1000_rdesc), NRDESC - 1);
	return 0;
}

/* The transmit ring and the transmitter; 8254x SDM 14.5.  0 or -ENOMEM. */
static int tx_init(struct ctlr *c)
{
	c->tdba = page_alloc_zeroed(NTDESC * sizeof(struct e1000_tdesc));
	if (!c->tdba)
		return -ENOMEM;
	c->n.tx_clean = c->n.tx_next = 0;
	/* Tdbal, Tdbah, Tdlen, Tdh 0, Tdt 0. */
	inic_ring_regs(&c->n, Tdbal, c->tdba, NTDESC * sizeof(struct e1000_tdesc), 0);
	if (c->n.model->kind == Is82574) {
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
	inic_free(&c->n, c->rdba, NRDESC * sizeof(struct e1000_rdesc), c->tdba,
		  NTDESC * sizeof(struct e1000_tdesc));
}

/*
 * The descriptor steps of the rings' hot path (drivers/intel_nic.h).
 * Receive, 8254x SDM 3.2.3: slot i's descriptor, if written back (DD),
 * taken and its slot re-armed.
 */
static inline int rx_take(struct inic *n, unsigned i, struct pktbuf **up)
{
	struct ctlr *c = (struct ctlr *)n;
	volatile struct e1000_rdesc *d = &c->rdba[i];
	uint8_t status = d->status;

	if (!(status & RdDd))
		return 0;
	trace_point(TS_NIC_RX);
	rx_arm(c, i, inic_rx_one(&n->nd, &n->rx, n->rxpb[i], status & RdEop, d->errors & RdFrameErrors,
				 d->length, n->max_frame, RX_BUF_SIZE, up));
	return 1;
}

/* A frame waits in the slot to harvest next. */
static inline int rx_ready(struct inic *n)
{
	struct ctlr *c = (struct ctlr *)n;
	return c->rdba[n->rx_next].status & RdDd;
}

/* The receive interrupt again, at once (ICS). */
static inline void rx_kick(struct inic *n)
{
	inic_w(n->regs, Ics, IntRxt0);
}

/* Transmit descriptor i written back (DD): the NIC is done with it. */
static inline int tx_done(struct inic *n, unsigned i)
{
	return ((struct ctlr *)n)->tdba[i].status & TdDd;
}

/* Transmit descriptor i, legacy (8254x SDM 3.3.3): pb's len bytes, one descriptor (EOP|IFCS|RS). */
static inline void tx_put(struct inic *n, unsigned i, struct pktbuf *pb, unsigned len)
{
	volatile struct e1000_tdesc *d = &((struct ctlr *)n)->tdba[i];

	d->addr = (uintptr_t)pb->data;
	d->length = (uint16_t)len;
	d->cso = 0;
	d->cmd = TdEop | TdIfcs | TdRs;
	d->status = 0;
	d->css = 0;
	d->special = 0;
}

/* IMS.TXDW on: a sender waits for space. */
static inline void tx_wait(struct inic *n)
{
	n->txdw_armed = 1;
	inic_w(n->regs, Ims, IntTxdw);
}

/* netdev ops->transmit (inic_transmit; QEMU's e1000 ignores TCTL.PSP, so short frames are padded). */
static int e1000_transmit(struct netdev *nd, struct pktbuf *pb)
{
	return inic_transmit(nd, pb, Tdt, tx_done, tx_put, tx_wait);
}

/* netdev ops->poll (inic_poll).  Interrupts off.  Return the frames handed up. */
static int e1000_poll(struct netdev *nd, int budget)
{
	return inic_poll(nd, budget, Rdt, rx_take, tx_done);
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
	if (rx_ready(&c->n))
		rx_kick(&c->n);
}

/*
 * The interrupt handler (interrupts off; EOI follows).  Reading ICR
 * deasserts INTx; frames left over after INIC_RX_BUDGET raise the interrupt
 * again through ICS rather than holding the CPU here.
 */
static void e1000_intr(void *arg)
{
	struct ctlr *c = arg;
	uint32_t icr;

	c->n.nd.stats.irqs++;
	icr = csr32r(c, Icr);
	LTRACEF("icr %#x\n", icr);
	if (icr & IntLsc)
		inic_link_changed(&c->n);
	if ((icr & IntTxdw) && c->n.txdw_armed) {
		c->n.txdw_armed = 0;
		csr32w(c, Imc, IntTxdw);
	}
	inic_queue_work(&c->n, Rdt, rx_take, rx_ready, rx_kick, tx_done);
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
	c->n.vector = irq_alloc(e1000_intr, c);
	if (c->n.vector < 0)
		return -EBUSY;
	if (msi_setup(c->n.pci, c->n.vector) == 0) {
		c->msi = 1;
		return 0;
	}
	return pci_intx_route(c->n.pci, c->n.vector, &c->n.gsi);
}

static const struct netdev_ops e1000_ops = {
	.transmit = e1000_transmit,
	.poll = e1000_poll,
	.irq_enable = e1000_irq_enable,
	.link_check = inic_link_check,
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
	struct inic *n;
	struct ctlr *c;
	int r;

	if ((r = inic_attach(d, model_of(d), "e1000", sizeof *c, &n)) < 0)
		return r;
	c = (struct ctlr *)n;
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
	if ((r = e1000_read_mac(c)) < 0)
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

	/* Wait for the link, say the NIC, register it; long packets where there are buffers. */
	char irq[32];
	snprintf(irq, sizeof irq, "msi vector %#x", c->n.vector);
	if ((r = inic_up(&c->n, &e1000_ops, c->msi ? irq : NULL)) < 0)
		goto quiet;

	csr32w(c, Ims, RX_INTS | IntLsc);
	/*
	 * 8254x SDM 14.4; the only RCTL write (see the top of this file).
	 * Multicast frames all taken (MPE): the fabric's group frames, whose
	 * addresses the layer above chooses, are sorted there.
	 */
	csr32w(c, Rctl, RctlEn | RctlBam | RctlMpe | RctlSecrc | RctlBsize2048 | RctlRdmtsHalf | RctlLbmNone |
				RctlMo36 | RctlDtypLegacy | (c->n.nd.frame_max > ETH_MAX_FRAME ? RctlLpe : 0));
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
