/*
 * Intel 82576 gigabit Ethernet (QEMU "igb", 8086:10c9) with advanced
 * descriptors; the I350, I210 and I211 are recognised by id (see
 * drivers/README.md for what differs and what is untested).  One receive
 * and one transmit queue (queue 0) of 256 descriptors each.  Sections are
 * those of the 82576 datasheet (82576 DS; drivers/igb_regs.h).
 *
 * Receive (82576 DS 7.1): every RX descriptor always holds a pktbuf, as
 * in drivers/e1000.c: SRRCTL gives the queue 2048-byte buffers and
 * advanced one-buffer descriptors; a slot is armed with pb->buf, and a
 * received frame starts there.  When the pool is empty the frame is
 * dropped and its own buffer re-armed (rx_no_buffer): a slot is never
 * left empty.  Re-armed slots go back to the NIC INIC_RX_POST_BATCH at a
 * time.
 *
 * Transmit (82576 DS 7.2): one advanced data descriptor per frame
 * (EOP|IFCS|RS); completed descriptors are reclaimed in transmit(),
 * poll() and the interrupt handlers.  The transmit interrupt is on only
 * while a sender waits for a full ring.
 *
 * Interrupts (82576 DS 7.3): with MSI-X, three of the function's vectors:
 * 0 for receive queue 0, 2 for transmit queue 0 (masked unless a sender
 * waits), both to one handler that reads no register (EIAC clears their
 * causes as the message goes out), and 1 for the other causes (link
 * status), whose handler reads ICR.  With INTx (the key igb_irq=intx, or
 * a function without MSI-X), one handler reads ICR, which acknowledges
 * and deasserts, as the e1000's does; the queues are mapped through IVAR
 * in that mode too, as the 82576 wants (7.3.1).
 *
 * Counters: the NIC's own counts of frames it dropped (MPC: no room in
 * its FIFO; RQDPC: queue 0 had no descriptor, SRRCTL.DROP_EN) are read,
 * and cleared by the reading, when the statistics are printed
 * (82576 DS 8.19).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/igb_regs.h"
#include "drivers/intel_nic.h"
#include "drivers/netdev.h"
#include "drivers/pci.h"
#include "drivers/pktbuf.h"
#include "kernel/apic.h"
#include "kernel/console.h"
#include "kernel/mem.h"
#include "kernel/node.h"
#include "kernel/trap.h"
#include "kernel/trace.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"

#define IGB_DEBUG 0			/* 1: LTRACEF prints */
#define LTRACEF(...) \
	do { if (IGB_DEBUG) kprintf("igb: " __VA_ARGS__); } while (0)

/* The rings' sizes, RDT batching and the interrupt's budget: drivers/intel_nic.h. */
#define NRDESC INIC_NRDESC
#define NTDESC INIC_NTDESC
#define RX_BUF_SIZE 2048		/* SRRCTL.BSIZEPKT */
#define MAX_FRAME INIC_MAX_FRAME	/* 802.1Q tag, no FCS (RCTL.SECRC) */
/*
 * Jumbo frames (RCTL.LPE with RLPML, 82576 DS 8.10.1 and 8.10.4): 9000
 * bytes of payload, received over several 2 KiB buffers and gathered
 * (inic_rx_part), sent from one large buffer in one descriptor: ETH_JUMBO_FRAME.
 */

/* MSI-X vectors (the IVAR entries and the EICR/EIMS bits are these numbers). */
enum { VecRx = 0, VecOther = 1, VecTx = 2, NVEC = 3 };
#define EIC(v) (1u << (v))

/* Receive interrupts in INTx mode; irq_enable() turns these off for polling. */
#define RX_INTS (IgbIntRxdw | IgbIntRxo)

_Static_assert(PKT_BUF_SIZE >= RX_BUF_SIZE, "a pktbuf must hold a whole RX buffer");
_Static_assert(MAX_FRAME <= RX_BUF_SIZE, "a frame must fit in one RX buffer");

enum { Is82576, IsI350, IsI210 };

static const struct inic_model models[] = {
	{ 0x10c9, "82576", Is82576 },
	{ 0x10e6, "82576 fiber", Is82576 },
	{ 0x10e7, "82576 serdes", Is82576 },
	{ 0x10e8, "82576 quad copper", Is82576 },
	{ 0x1526, "82576 quad copper ET2", Is82576 },
	{ 0x150a, "82576NS", Is82576 },
	{ 0x1518, "82576NS serdes", Is82576 },
	{ 0x150d, "82576 serdes quad", Is82576 },
	/* Recognised by id; QEMU has no model of these (drivers/README.md). */
	{ 0x1521, "I350 copper", IsI350 },
	{ 0x1522, "I350 fiber", IsI350 },
	{ 0x1523, "I350 serdes", IsI350 },
	{ 0x1524, "I350 sgmii", IsI350 },
	{ 0x1533, "I210 copper", IsI210 },
	{ 0x1536, "I210 fiber", IsI210 },
	{ 0x1537, "I210 serdes", IsI210 },
	{ 0x1538, "I210 sgmii", IsI210 },
	{ 0x157b, "I210 copper flashless", IsI210 },
	{ 0x1539, "I211 copper", IsI210 },
};

static const struct argspec igb_args[] = {
	{ "igb_irq", ARG_STR, 0, 0, "igb NIC interrupts: msix (default where the NIC has it) or intx" },
	{ NULL, 0, 0, 0, NULL },
};

static int igb_check_args(const struct cmdline *cl, char *err, size_t errlen)
{
	const char *v = cmdline_get(cl, "igb_irq");

	if (v && strcmp(v, "msix") != 0 && strcmp(v, "intx") != 0) {
		snprintf(err, errlen, "igb_irq=%s: not msix or intx", v);
		return -EINVAL;
	}
	return 0;
}

static const struct arg_table igb_argtab = { "igb", igb_args, igb_check_args };
ARGS_REGISTER(igb_argtab);

struct ctlr {
	struct inic n;			/* first: what drivers/e1000.c keeps too; n.vector the queues' (MSI-X) or the one (INTx) */
	int msix;			/* else INTx on n.gsi */
	struct pci_msix msixtab;
	int other_vector;		/* MSI-X: link and the other ICR causes */
	volatile union igb_rdesc *rdba;
	volatile struct igb_tdesc *tdba;
};

static inline uint32_t csr32r(struct ctlr *c, int reg)
{
	return inic_r(c->n.regs, reg);
}

static inline void csr32w(struct ctlr *c, int reg, uint32_t v)
{
	inic_w(c->n.regs, reg, v);
}

static int csr_wait(struct ctlr *c, int reg, uint32_t mask, uint32_t want, uint64_t timeout_ns)
{
	return inic_wait(c->n.regs, reg, mask, want, timeout_ns);
}

static const struct inic_model *model_of(const struct pci_dev *d)
{
	return inic_model_of(models, sizeof models / sizeof models[0], d);
}

/* Every interrupt masked, in both the legacy and the extended registers. */
static void irqs_off(struct ctlr *c)
{
	csr32w(c, IgbImc, ~0u);
	csr32w(c, IgbEimc, ~0u);
}

/*
 * Software reset, 82576 DS 4.3.1 and 4.5.2: stop DMA (GIO master
 * disable), CTRL.RST, wait for the NVM auto-read, interrupts masked
 * before and after.  Return 0 or -ETIMEDOUT.
 */
static int igb_reset(struct ctlr *c)
{
	irqs_off(c);
	csr32w(c, IgbRctl, 0);
	csr32w(c, IgbTctl, 0);
	/* GIO master disable, CTRL.RST, 1 ms, RST clear, EEC.AUTO_RD. */
	if (inic_reset(&c->n, 1, 1000000, 1) < 0)
		return -ETIMEDOUT;
	irqs_off(c);
	(void)csr32r(c, IgbIcr);
	return 0;
}

/* Write PHY register reg through MDIC; 82576 DS 8.2.4.  0, -EIO or -ETIMEDOUT. */
static int phy_write(struct ctlr *c, int reg, uint16_t val)
{
	csr32w(c, IgbMdic, val | (uint32_t)reg << IgbMdicRegShift |
				   (uint32_t)IGB_PHY_ADDR << IgbMdicPhyShift | IgbMdicOpWrite);
	for (int i = 0; i < 1000; i++) {
		uint32_t v = csr32r(c, IgbMdic);
		if (v & IgbMdicReady)
			return (v & IgbMdicError) ? -EIO : 0;
		delay_ns(10000);
	}
	return -ETIMEDOUT;
}

/*
 * The station address: receive address 0 as the reset's NVM load left it
 * (82576 DS 4.5.2), else NVM words 0-2 (82576 DS 6.2.1) through EERD
 * (8.4.2; not on the I210 and I211, whose flash-less NVM only loads
 * RAL0/RAH0), then written back to RAL0/RAH0.  Return 0 or -EIO.
 */
static int igb_read_mac(struct ctlr *c)
{
	static const struct inic_nvm eerd = { IgbEerdDone, IgbEerdAddrShift };

	return inic_read_mac(&c->n, c->n.model->kind == IsI210 ? NULL : &eerd);
}

/* Arm RX slot i with pb: the read format, which also clears DD. */
static void rx_arm(struct ctlr *c, unsigned i, struct pktbuf *pb)
{
	volatile union igb_rdesc *d = &c->rdba[i];

	c->n.rxpb[i] = pb;
	d->read.pkt_addr = (uintptr_t)pb->buf;
	d->read.hdr_addr = 0;
}

/*
 * The receive ring, every slot armed, all but one given to the NIC, and
 * queue 0 enabled; 82576 DS 4.5.9 (RCTL is written last, in igb_probe).
 * 0, -ENOMEM or -ETIMEDOUT.
 */
static int rx_init(struct ctlr *c)
{
	c->rdba = page_alloc_zeroed(NRDESC * sizeof(union igb_rdesc));
	if (!c->rdba || inic_rx_fill(&c->n) < 0)
		return -ENOMEM;
	for (unsigned i = 0; i < NRDESC; i++)
		rx_arm(c, i, c->n.rxpb[i]);
	csr32w(c, IgbRxdctl0, 0);
	/* Rdbal0, Rdbah0, Rdlen0, Rdh0 0, Rdt0 0 (the queue is off). */
	inic_ring_regs(&c->n, IgbRdbal0, c->rdba, NRDESC * sizeof(union igb_rdesc), 0);
	/* 2 KiB buffers, advanced one-buffer descriptors, drop (and count) when full. */
	csr32w(c, IgbSrrctl0, IgbSrrctlBsizepkt2k | IgbSrrctlAdvOneBuf | IgbSrrctlDropEn);
	csr32w(c, IgbRxdctl0, IgbQueueEnable);
	if (csr_wait(c, IgbRxdctl0, IgbQueueEnable, IgbQueueEnable, 10000000) < 0)
		return -ETIMEDOUT;
	/* 82576 DS 4.5.9: the tail is written once the queue is enabled. */
	csr32w(c, IgbRdt0, NRDESC - 1);
	/* No checksum offload: the layers above check what they need. */
	csr32w(c, IgbRxcsum, 0);
	return 0;
}

/* The transmit ring, queue 0 and the transmitter; 82576 DS 4.5.10.  0, -ENOMEM or -ETIMEDOUT. */
static int tx_init(struct ctlr *c)
{
	c->tdba = page_alloc_zeroed(NTDESC * sizeof(struct igb_tdesc));
	if (!c->tdba)
		return -ENOMEM;
	c->n.tx_clean = c->n.tx_next = 0;
	csr32w(c, IgbTxdctl0, 0);
	/* Tdbal0, Tdbah0, Tdlen0, Tdh0 0, Tdt0 0. */
	inic_ring_regs(&c->n, IgbTdbal0, c->tdba, NTDESC * sizeof(struct igb_tdesc), 0);
	csr32w(c, IgbTxdctl0, IgbQueueEnable);
	if (csr_wait(c, IgbTxdctl0, IgbQueueEnable, IgbQueueEnable, 10000000) < 0)
		return -ETIMEDOUT;
	/* Full-duplex collision distance: the link partner is a switch. */
	csr32w(c, IgbTctl, IgbTctlEn | IgbTctlPsp | IGB_TCTL_CT << IgbTctlCtShift |
				   IGB_TCTL_COLD_FD << IgbTctlColdShift);
	return 0;
}

/* Free what igb_probe() allocated before the device was live. */
static void igb_free(struct ctlr *c)
{
	inic_free(&c->n, c->rdba, NRDESC * sizeof(union igb_rdesc), c->tdba,
		  NTDESC * sizeof(struct igb_tdesc));
}

/* The transmit interrupt on (a sender waits for space) or off. */
static void txint(struct ctlr *c, int on)
{
	if (c->msix)
		csr32w(c, on ? IgbEims : IgbEimc, EIC(VecTx));
	else
		csr32w(c, on ? IgbIms : IgbImc, IgbIntTxdw);
	c->n.txdw_armed = on;
}

/*
 * The descriptor steps of the rings' hot path (drivers/intel_nic.h).
 * Receive, 82576 DS 7.1.5.2: slot i's descriptor, if written back (DD),
 * taken and its slot re-armed.
 */
static inline int rx_take(struct inic *n, unsigned i, struct pktbuf **up)
{
	struct ctlr *c = (struct ctlr *)n;
	volatile union igb_rdesc *d = &c->rdba[i];
	uint32_t status = d->wb.status_error;

	if (!(status & IgbRdDd))
		return 0;
	trace_point(TS_NIC_RX);
	rx_arm(c, i, inic_rx_one(&n->nd, &n->rx, n->rxpb[i], status & IgbRdEop, status & IgbRdFrameErrors,
				 d->wb.length, n->max_frame, RX_BUF_SIZE, up));
	return 1;
}

/* A frame waits in the slot to harvest next. */
static inline int rx_ready(struct inic *n)
{
	struct ctlr *c = (struct ctlr *)n;
	return c->rdba[n->rx_next].wb.status_error & IgbRdDd;
}

/* Raise the receive interrupt again (a frame waits that no cause announces). */
static inline void rx_kick(struct inic *n)
{
	if (((struct ctlr *)n)->msix)
		inic_w(n->regs, IgbEics, EIC(VecRx));
	else
		inic_w(n->regs, IgbIcs, IgbIntRxdw);
}

/* Transmit descriptor i written back (DD): the NIC is done with it. */
static inline int tx_done(struct inic *n, unsigned i)
{
	return ((struct ctlr *)n)->tdba[i].olinfo_status & IgbTdDd;
}

/* Transmit descriptor i, one advanced data descriptor (82576 DS 7.2): pb's len bytes, EOP|IFCS|RS. */
static inline void tx_put(struct inic *n, unsigned i, struct pktbuf *pb, unsigned len)
{
	volatile struct igb_tdesc *d = &((struct ctlr *)n)->tdba[i];

	d->addr = (uintptr_t)pb->data;
	d->cmd_type_len = (uint32_t)len | IgbTdTypeData | IgbTdDext | IgbTdEop | IgbTdIfcs | IgbTdRs;
	d->olinfo_status = (uint32_t)len << IgbTdPaylenShift;
}

/* The transmit interrupt on: a sender waits for space. */
static inline void tx_wait(struct inic *n)
{
	txint((struct ctlr *)n, 1);
}

/* netdev ops->transmit (inic_transmit: short frames padded). */
static int igb_transmit(struct netdev *nd, struct pktbuf *pb)
{
	return inic_transmit(nd, pb, IgbTdt0, tx_done, tx_put, tx_wait);
}

/* netdev ops->poll (inic_poll).  Interrupts off.  Return the frames handed up. */
static int igb_poll(struct netdev *nd, int budget)
{
	return inic_poll(nd, budget, IgbRdt0, rx_take, tx_done);
}

/*
 * netdev ops->irq_enable.  Interrupts off.  Turning receive interrupts
 * back on raises one at once if a frame is waiting: its cause may already
 * have been cleared while the interrupt was off.
 */
static void igb_irq_enable(struct netdev *nd, int on)
{
	struct ctlr *c = nd->softc;

	if (c->msix)
		csr32w(c, on ? IgbEims : IgbEimc, EIC(VecRx));
	else
		csr32w(c, on ? IgbIms : IgbImc, RX_INTS);
	if (on && rx_ready(&c->n))
		rx_kick(&c->n);
}

/* netdev ops->read_counters: the NIC's own drop counters (clear on read). */
static void igb_read_counters(struct netdev *nd)
{
	struct ctlr *c = nd->softc;

	nd->stats.rx_nic_dropped += csr32r(c, IgbMpc) + csr32r(c, IgbRqdpc0);
}

/* The queues' work, from either handler: disarm TX, receive, reclaim. */
static void queue_work(struct ctlr *c)
{
	if (c->n.txdw_armed)
		txint(c, 0);
	inic_queue_work(&c->n, IgbRdt0, rx_take, rx_ready, rx_kick, tx_done);
}

/* MSI-X, vectors 0 and 2 (interrupts off; EOI follows).  No register read. */
static void igb_intr_queues(void *arg)
{
	struct ctlr *c = arg;

	c->n.nd.stats.irqs++;
	queue_work(c);
}

/* MSI-X, vector 1: the other causes.  ICR clears on read (GPIE.NSICR). */
static void igb_intr_other(void *arg)
{
	struct ctlr *c = arg;
	uint32_t icr = csr32r(c, IgbIcr);

	c->n.nd.stats.irqs++;
	LTRACEF("other icr %#x\n", icr);
	if (icr & IgbIntLsc)
		inic_link_changed(&c->n);
}

/*
 * INTx (interrupts off; EOI follows).  Reading ICR acknowledges and
 * deasserts; frames left over after INIC_RX_BUDGET raise the interrupt again
 * through ICS rather than holding the CPU here.
 */
static void igb_intr_intx(void *arg)
{
	struct ctlr *c = arg;
	uint32_t icr;

	c->n.nd.stats.irqs++;
	icr = csr32r(c, IgbIcr);
	LTRACEF("icr %#x\n", icr);
	if (icr & IgbIntLsc)
		inic_link_changed(&c->n);
	queue_work(c);
}

/*
 * MSI-X with NVEC vectors (82576 DS 7.3.1.3): the queues' two to one CPU
 * vector, the other causes to another; IVAR maps the causes, GPIE turns
 * on MSI-X mode, EIAC clears a vector's cause as its message goes out.
 * 0, -ENODEV (no MSI-X) or -EBUSY (no CPU vector).
 */
static int msix_setup(struct ctlr *c)
{
	if (pci_msix_enable(c->n.pci, NVEC, &c->msixtab) < 0)
		return -ENODEV;
	c->n.vector = irq_alloc(igb_intr_queues, c);
	c->other_vector = irq_alloc(igb_intr_other, c);
	if (c->n.vector < 0 || c->other_vector < 0)
		return -EBUSY;
	csr32w(c, IgbGpie, IgbGpieMsix | IgbGpiePba | IgbGpieNsicr);
	csr32w(c, IgbIvar0, (IgbIvarValid | VecRx) << IgbIvarRx0Shift |
				    (IgbIvarValid | VecTx) << IgbIvarTx0Shift);
	csr32w(c, IgbIvarMisc, (IgbIvarValid | VecOther) << IgbIvarOtherShift);
	csr32w(c, IgbEiac, EIC(VecRx) | EIC(VecTx) | EIC(VecOther));
	pci_msix_route(&c->msixtab, VecRx, c->n.vector);
	pci_msix_route(&c->msixtab, VecTx, c->n.vector);
	pci_msix_route(&c->msixtab, VecOther, c->other_vector);
	c->msix = 1;
	return 0;
}

/*
 * INTx through the I/O APIC: level-triggered, the polarity ACPI's for the
 * ISA IRQ the firmware routed it to.  The queues still go through IVAR
 * (to EICR bit 0), with GPIE in its non-MSI-X mode.  0, -EBUSY or -ENODEV.
 */
static int intx_setup(struct ctlr *c)
{
	c->n.vector = irq_alloc(igb_intr_intx, c);
	if (c->n.vector < 0)
		return -EBUSY;
	csr32w(c, IgbGpie, 0);
	csr32w(c, IgbIvar0, IgbIvarValid << IgbIvarRx0Shift | IgbIvarValid << IgbIvarTx0Shift);
	csr32w(c, IgbIvarMisc, 0);
	return pci_intx_route(c->n.pci, c->n.vector, &c->n.gsi);
}

/* MSI-X unless igb_irq=intx says INTx or the function has no MSI-X. */
static int igb_intr_setup(struct ctlr *c)
{
	const char *want = arg_str("igb_irq", NULL);
	int r;

	if (!want || strcmp(want, "intx") != 0) {
		r = msix_setup(c);
		if (r != -ENODEV)
			return r;
	}
	return intx_setup(c);
}

static const struct netdev_ops igb_ops = {
	.transmit = igb_transmit,
	.poll = igb_poll,
	.irq_enable = igb_irq_enable,
	.link_check = inic_link_check,
	.read_counters = igb_read_counters,
};

static int igb_match(const struct pci_dev *d)
{
	return model_of(d) != NULL;
}

/* The interrupt causes the driver takes, unmasked. */
static void irqs_on(struct ctlr *c)
{
	for (int v = 0; v < NVEC; v++)
		csr32w(c, IgbEitr0 + 4 * v, 0);	/* no throttling: every frame at once */
	if (c->msix) {
		csr32w(c, IgbIms, IgbIntLsc);
		csr32w(c, IgbEims, EIC(VecRx) | EIC(VecOther));
	} else {
		csr32w(c, IgbIms, RX_INTS | IgbIntLsc);
	}
}

/*
 * Bring the NIC up (82576 DS 4.5) and register it.  Return 0, or a
 * negative errno with the device left quiet.
 */
static int igb_probe(struct pci_dev *d)
{
	struct inic *n;
	struct ctlr *c;
	int r;

	if ((r = inic_attach(d, model_of(d), "igb", sizeof *c, &n)) < 0)
		return r;
	c = (struct ctlr *)n;
	if ((r = igb_reset(c)) < 0)
		goto free;
	/*
	 * 82576 DS 4.5.7: the MAC takes the link the internal PHY negotiates
	 * (no flow control); the reset stopped the PHY's autonegotiation, so
	 * it is restarted.  A PHY that does not answer is named, not fatal:
	 * the link state then says what the PHY did by itself.
	 */
	uint32_t ctrl = csr32r(c, IgbCtrl);
	ctrl |= IgbCtrlSlu;
	ctrl &= ~(IgbCtrlLrst | IgbCtrlPhyRst | IgbCtrlIlos | IgbCtrlFrcspd | IgbCtrlFrcdplx |
		  IgbCtrlVme | IgbCtrlRfce | IgbCtrlTfce | IgbCtrlGioMasterDisable);
	csr32w(c, IgbCtrl, ctrl);
	if (phy_write(c, PhyBmcr, PhyBmcrAnEnable | PhyBmcrAnRestart | PhyBmcrFd |
					  PhyBmcrSpeed1000) < 0)
		printf("igb: %02x:%02x.%d: the PHY did not take the autonegotiation restart\n",
		       d->bus, d->dev, d->fn);
	if ((r = igb_read_mac(c)) < 0)
		goto free;
	for (int i = 0; i < IGB_MTA_WORDS; i++)
		csr32w(c, IgbMta + 4 * i, 0);
	if ((r = rx_init(c)) < 0 || (r = tx_init(c)) < 0)
		goto free;
	if ((r = igb_intr_setup(c)) < 0)
		goto quiet;		/* a vector cannot be given back */
	/* The counters start from this boot. */
	(void)csr32r(c, IgbMpc);
	(void)csr32r(c, IgbRqdpc0);

	/* Wait for the link, say the NIC, register it; long packets where there are buffers. */
	char irq[64];
	snprintf(irq, sizeof irq, "msi-x vectors %#x (queues) %#x (link)", c->n.vector, c->other_vector);
	if ((r = inic_up(&c->n, &igb_ops, c->msix ? irq : NULL)) < 0)
		goto quiet;
	/* RLPML counts the FCS. */
	if (c->n.nd.frame_max > ETH_MAX_FRAME)
		csr32w(c, IgbRlpml, c->n.nd.frame_max + 4);

	irqs_on(c);
	/*
	 * 82576 DS 4.5.9: the receiver last, with the queue ready.  Multicast
	 * frames all taken (MPE): the fabric's group frames, whose addresses
	 * the layer above chooses, are sorted there.
	 */
	csr32w(c, IgbRctl, IgbRctlEn | IgbRctlBam | IgbRctlMpe | IgbRctlSecrc |
				   (c->n.nd.frame_max > ETH_MAX_FRAME ? IgbRctlLpe : 0));
	return 0;

quiet:
	/* Interrupts masked and TX off; kept allocated for the handlers. */
	irqs_off(c);
	csr32w(c, IgbTctl, 0);
	return r;
free:
	csr32w(c, IgbTctl, 0);
	igb_free(c);
	return r;
}

static const struct pci_driver igb_driver = {
	.name = "igb",
	.match = igb_match,
	.probe = igb_probe,
};
PCI_DRIVER(igb_driver);
