/*
 * The set-up the Intel gigabit drivers (drivers/e1000.c, drivers/igb.c)
 * share, once per NIC and off the hot path: the probe's first steps and
 * its last (the link wait, the boot line, netdev_register), the reset's
 * common core, the station address from receive address 0 or the NVM, the
 * rings' buffers and registers, the link's state, and freeing what a probe
 * that failed allocated.  Sections: 8254x SDM (drivers/e1000_regs.h) and
 * 82576 DS (drivers/igb_regs.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/intel_nic.h"
#include "drivers/netdev.h"
#include "drivers/pci.h"
#include "drivers/pktbuf.h"
#include "kernel/console.h"
#include "kernel/mem.h"
#include "kernel/tsc.h"

#define INIC_DEBUG 0			/* 1: LTRACEF prints */
#define LTRACEF(n, ...) \
	do { if (INIC_DEBUG) { kprintf("%s: ", (n)->nd.name); kprintf(__VA_ARGS__); } } while (0)

#define INIC_COLD __attribute__((cold, noinline))

/* models[0..n): the one that is d, or NULL. */
INIC_COLD const struct inic_model *inic_model_of(const struct inic_model *models, size_t n,
						 const struct pci_dev *d)
{
	if (d->vendor != 0x8086)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (models[i].device == d->device)
			return &models[i];
	return NULL;
}

/*
 * A probe's first steps: room in netdev for it, BAR 0 (memory) mapped, the
 * driver's state (size bytes, zeroed, struct inic first) with d, model, the
 * registers and name, the function enabled.  0 and *out, or -EBUSY (netdev
 * has its NIC), -ENODEV or -ENOMEM.
 */
INIC_COLD int inic_attach(struct pci_dev *d, const struct inic_model *model, const char *name,
			  size_t size, struct inic **out)
{
	struct pci_bar bar;
	struct inic *n;

	if (netdev_get())
		return -EBUSY;		/* netdev has room for one NIC */
	if (pci_bar(d, 0, &bar) < 0 || bar.io || bar.size > UINT32_MAX)
		return -ENODEV;
	volatile uint8_t *regs = pci_map_bar(d, 0, 0, (uint32_t)bar.size);
	if (!regs)
		return -ENOMEM;
	n = calloc(1, size);
	if (!n)
		return -ENOMEM;
	n->pci = d;
	n->model = model;
	n->regs = (volatile uint32_t *)regs;
	n->nd.name = name;
	pci_enable(d);
	*out = n;
	return 0;
}

/*
 * A software reset's core (8254x SDM 14.3; 82576 DS 4.3.1, 4.5.2), the
 * caller's interrupts masked: where gio, DMA stopped first (GIO master
 * disable, up to 10 ms for it to take); CTRL.RST, settle_ns, up to 100 ms
 * for RST to clear; where autord, up to 10 ms for the NVM auto-read.  0 or
 * -ETIMEDOUT.
 */
INIC_COLD int inic_reset(struct inic *n, int gio, uint64_t settle_ns, int autord)
{
	volatile uint32_t *regs = n->regs;

	if (gio) {
		inic_w(regs, InicCtrl, inic_r(regs, InicCtrl) | InicCtrlGioMasterDisable);
		if (inic_wait(regs, InicStatus, InicStatusGioMasterEnable, 0, 10000000) < 0)
			LTRACEF(n, "GIO master still enabled; resetting anyway\n");
	}
	inic_w(regs, InicCtrl, inic_r(regs, InicCtrl) | InicCtrlRst);
	delay_ns(settle_ns);
	if (inic_wait(regs, InicCtrl, InicCtrlRst, 0, 100000000) < 0)
		return -ETIMEDOUT;
	if (autord && inic_wait(regs, InicEec, InicEecAutoRd, InicEecAutoRd, 10000000) < 0)
		LTRACEF(n, "NVM auto-read not done\n");
	return 0;
}

/* Read NVM word through EERD (8254x SDM 13.4.4; 82576 DS 8.4.2).  0 or -ETIMEDOUT. */
static int nvm_read(struct inic *n, const struct inic_nvm *nvm, int word, uint16_t *val)
{
	inic_w(n->regs, InicEerd, InicEerdStart | ((uint32_t)word << nvm->addr_shift));
	for (int i = 0; i < 1000; i++) {
		uint32_t v = inic_r(n->regs, InicEerd);
		if (v & nvm->done) {
			*val = (uint16_t)(v >> InicEerdDataShift);
			return 0;
		}
		delay_ns(5000);
	}
	return -ETIMEDOUT;
}

/*
 * The station address into nd.mac: receive address 0 as the reset's NVM
 * load left it, else (where nvm, the NIC's EERD) NVM words 0-2 (8254x SDM
 * 5.6.1; 82576 DS 6.2.1), then written back to RAL0/RAH0.  0 or -EIO.
 */
INIC_COLD int inic_read_mac(struct inic *n, const struct inic_nvm *nvm)
{
	uint8_t *mac = n->nd.mac;

	if (inic_mac_get(n->regs, InicRal0, mac))
		return 0;
	if (!nvm)
		return -EIO;
	for (int w = 0; w < 3; w++) {
		uint16_t v;
		if (nvm_read(n, nvm, w, &v) < 0)
			return -EIO;
		mac[2 * w] = (uint8_t)v;
		mac[2 * w + 1] = (uint8_t)(v >> 8);
	}
	if (!inic_mac_ok(mac))
		return -EIO;
	inic_mac_set(n->regs, InicRal0, mac);
	return 0;
}

/* A buffer for every receive slot (the driver arms them), harvesting from slot 0.  0 or -ENOMEM. */
INIC_COLD int inic_rx_fill(struct inic *n)
{
	for (unsigned i = 0; i < INIC_NRDESC; i++)
		if (!(n->rxpb[i] = pkt_get()))
			return -ENOMEM;
	n->rx_next = 0;
	n->rx_unposted = 0;
	return 0;
}

/*
 * A ring of bytes at ring into a queue's registers from its base address
 * low at bal: BAL, BAH, LEN, head (0) and tail, where both families put
 * them (8254x SDM 14.4, 14.5; 82576 DS 4.5.9, 4.5.10).
 */
INIC_COLD void inic_ring_regs(struct inic *n, int bal, volatile void *ring, size_t bytes,
			      unsigned tail)
{
	inic_w(n->regs, bal, (uint32_t)(uintptr_t)ring);
	inic_w(n->regs, bal + 0x04, (uint32_t)((uintptr_t)ring >> 32));
	inic_w(n->regs, bal + 0x08, (uint32_t)bytes);
	inic_w(n->regs, bal + 0x10, 0);
	inic_w(n->regs, bal + 0x18, tail);
}

/* Free what a probe allocated before the device was live: buffers, the rings (of their bytes), n. */
INIC_COLD void inic_free(struct inic *n, volatile void *rdba, size_t rbytes, volatile void *tdba,
			 size_t tbytes)
{
	if (n->rx.big)
		pkt_put(n->rx.big);
	for (unsigned i = 0; i < INIC_NRDESC; i++)
		if (n->rxpb[i])
			pkt_put(n->rxpb[i]);
	if (rdba)
		page_free_bytes((void *)rdba, rbytes);
	if (tdba)
		page_free_bytes((void *)tdba, tbytes);
	free(n);
}

/* netdev ops->link_check: STATUS.LU into nd->link_up. */
INIC_COLD void inic_link_check(struct netdev *nd)
{
	struct inic *n = nd->softc;

	nd->link_up = (inic_r(n->regs, InicStatus) & InicStatusLu) != 0;
}

/* The link's state from STATUS (a link status change), said when it changed. */
INIC_COLD void inic_link_changed(struct inic *n)
{
	struct netdev *nd = &n->nd;
	int was = nd->link_up;

	inic_link_check(nd);
	if (nd->link_up != was)
		kprintf("net: %s link %s\n", nd->name, nd->link_up ? "up" : "down");
}

/*
 * A probe's last steps, the device set up: the netdev (ops, the model's
 * name, jumbo frames asked for), up to INIC_LINK_WAIT_NS for the link,
 * the boot line (irq: how the NIC interrupts; NULL: INTx with gsi and
 * vector), netdev_register, and long frames where it found the buffers
 * for them.  0 or -EBUSY.
 */
INIC_COLD int inic_up(struct inic *n, const struct netdev_ops *ops, const char *irq)
{
	struct pci_dev *d = n->pci;

	n->nd.model = n->model->name;
	n->nd.frame_max = ETH_JUMBO_FRAME;
	n->max_frame = INIC_MAX_FRAME;
	n->nd.ops = ops;
	n->nd.softc = n;
	uint64_t end = now_ns() + INIC_LINK_WAIT_NS;
	while (!(inic_r(n->regs, InicStatus) & InicStatusLu) && now_ns() < end)
		delay_ns(10000000);
	inic_link_check(&n->nd);
	if (irq)
		printf("%s: %02x:%02x.%d %s, %s\n", n->nd.name, d->bus, d->dev, d->fn, n->model->name,
		       irq);
	else
		printf("%s: %02x:%02x.%d %s, intx gsi %u vector %#x\n", n->nd.name, d->bus, d->dev,
		       d->fn, n->model->name, n->gsi, n->vector);
	if (netdev_register(&n->nd) < 0)
		return -EBUSY;
	d->softc = n;
	/* Long packets where netdev_register found the buffers for them. */
	if (n->nd.frame_max > ETH_MAX_FRAME)
		n->max_frame = n->nd.frame_max;
	return 0;
}
