/*
 * virtio-net (virtio 1.0 §5.1) on the virtio PCI transport (virtio.c):
 * one receive and one transmit queue, features VERSION_1, MAC, STATUS and
 * MRG_RXBUF, so every frame starts with a 12-byte struct virtio_net_hdr;
 * one longer than a buffer (to ETH_LONGEST_FRAME, 64 KiB: a bridge with
 * ports of that MTU passes it, and where what lies between passes less the
 * fabric's probes step down to 9014 and then to Ethernet's) spans several,
 * gathered by rx_merge into a large pktbuf.
 *
 * Receive: every RX descriptor is one pktbuf, the header in its headroom
 * just in front of pb->data; a filled one goes up to netdev_input() as it
 * is (no copy) and a fresh pktbuf takes its slot.  Transmit: the header is
 * written in front of the caller's frame and the pktbuf posted as one
 * descriptor; the driver holds a reference until the device is done.
 *
 * Interrupts: MSI-X, entry 0 for configuration changes (link), entry 1 for
 * both queues; INTx through the I/O APIC if MSI-X is missing.  Received
 * frames are handed up from the interrupt handler (by design: the layers
 * above run their receive half there), with the receive interrupt
 * suppressed while the handler harvests.  The transmit queue interrupts
 * only while a transmit waits for ring space: otherwise completed TX
 * buffers are reclaimed by the next transmit or poll, saving an interrupt
 * per frame.  Polling mode (irq_enable(nd, 0)) suppresses the receive
 * interrupt in the device and ignores received frames in the handler.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/netdev.h"
#include "drivers/pci.h"
#include "drivers/pktbuf.h"
#include "drivers/virtio.h"
#include "kernel/init.h"
#include "kernel/panic.h"
#include "kernel/timer.h"
#include "kernel/trap.h"
#include "kernel/trace.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"

#define VNET_RING_MAX 256		/* entries per queue, at most */
#define VNET_IRQ_BUDGET 64		/* frames per poll from the interrupt handler */
#define VNET_REFILL_RETRY_NS 1000000	/* pool empty: try to refill RX again after 1 ms */

enum {				/* PCI device ids, §4.1.2 */
	VirtioNetTransitional = 0x1000,
	VirtioNetModern = 0x1041,
};

enum {				/* virtqueues, §5.1.2 */
	RxQueue = 0,
	TxQueue = 1,
};

/* Feature bits, §5.1.3. */
#define VIRTIO_NET_F_MAC (1ULL << 5)
#define VIRTIO_NET_F_MRG_RXBUF (1ULL << 15)
#define VIRTIO_NET_F_STATUS (1ULL << 16)

enum {				/* struct virtio_net_config, §5.1.4 */
	NetCfgMac = 0,		/* u8 mac[6], with VIRTIO_NET_F_MAC */
	NetCfgStatus = 6,	/* le16, with VIRTIO_NET_F_STATUS */
};

enum {				/* NetCfgStatus */
	NetStatusLinkUp = 1,
	NetStatusAnnounce = 2,
};

enum {				/* MSI-X table entries we use */
	MsixConfigEntry = 0,
	MsixQueueEntry = 1,
	MsixEntries = 2,
};

/*
 * §5.1.6: in front of every frame, both directions.  With VERSION_1 and
 * no offloads every field is zero on transmit; on receive num_buffers is
 * the buffers the frame fills (1 but for a long one, with MRG_RXBUF).
 */
struct virtio_net_hdr {
	uint8_t flags;
	uint8_t gso_type;
	uint16_t hdr_len;
	uint16_t gso_size;
	uint16_t csum_start;
	uint16_t csum_offset;
	uint16_t num_buffers;
};
_Static_assert(sizeof(struct virtio_net_hdr) == 12, "virtio_net_hdr is 12 bytes (virtio 1.0 §5.1.6)");
_Static_assert(sizeof(struct virtio_net_hdr) <= PKT_HEADROOM, "the header lives in the pktbuf headroom");

#define VNET_HDR ((uint32_t)sizeof(struct virtio_net_hdr))

struct vnet {
	struct netdev nd;		/* what the layers above see; nd.softc is this */
	struct virtio_dev vd;
	struct virtq rxq, txq;
	int rx_intr;			/* receive interrupt on (irq_enable) */
	int mrg;			/* VIRTIO_NET_F_MRG_RXBUF: a frame may span buffers */
	int tx_intr;			/* transmit interrupt on: a sender waits for space */
	struct ktimer refill;		/* retries the RX refill when the pool was empty */
	struct ktimer resched;		/* continues a long receive after an interrupt */
	char model[96];
};

static void rx_refill(struct vnet *sc);

/* Post pb as one device-writable RX buffer: header, then up to PKT_MAX_FRAME. */
static void rx_post(struct vnet *sc, struct pktbuf *pb)
{
	struct virtq_sg sg = {
		.addr = (uint64_t)(uintptr_t)(pb->data - VNET_HDR),
		.len = VNET_HDR + PKT_MAX_FRAME,
		.device_writes = 1,
	};

	/* §5.1.6.3; a free descriptor exists: the caller took one out. */
	if (virtq_add(&sc->rxq, &sg, 1, pb) < 0)
		panic("virtio-net: RX ring has no free descriptor");
}

static void refill_timer(void *arg)
{
	rx_refill(arg);
}

/*
 * Fill every empty RX slot without telling the device; return buffers
 * posted.  If the pool runs dry, retry from a timer so that no slot stays
 * empty for ever.  Interrupts off.
 */
static int rx_fill(struct vnet *sc)
{
	int posted = 0;

	while (sc->rxq.num_free) {
		struct pktbuf *pb = pkt_get();
		if (!pb) {
			timer_arm(&sc->refill, cycles() + ns_to_cycles(VNET_REFILL_RETRY_NS),
				  refill_timer, sc);
			break;
		}
		rx_post(sc, pb);
		posted++;
	}
	return posted;
}

/* rx_fill(), and tell the device.  Interrupts off. */
static void rx_refill(struct vnet *sc)
{
	if (rx_fill(sc))
		virtq_kick(&sc->rxq);
}

/*
 * A frame of nb buffers (MRG_RXBUF, §5.1.6.4.1), first the one with the
 * header (len bytes with it): the rest are the next nb - 1 used ones,
 * each without a header.  Gathered into a large buffer up to frame_max
 * and handed up; every buffer goes back to its slot.  Dropped and counted
 * where it is longer, no large buffer is free, or the device gave fewer
 * buffers than it said.  Return the frames handed up (0 or 1).
 */
static __attribute__((noinline)) int rx_merge(struct vnet *sc, struct pktbuf *first, uint32_t len,
					      unsigned nb, int *posted)
{
	struct netdev *nd = &sc->nd;
	struct pktbuf *big = NULL, *pb = first;
	uint32_t have = 0, l = len - VNET_HDR;
	uint8_t *from = first->data;
	int ok = nb > 1 && nd->frame_max > ETH_MAX_FRAME;
	/* The most nb buffers hold (the first with the header): a 4 KiB frame takes a jumbo pktbuf, not 64 KiB. */
	uint32_t most = (uint32_t)nb * (VNET_HDR + PKT_MAX_FRAME) - VNET_HDR;

	if (nb == 0)
		nb = 1;			/* no such frame: this buffer alone, dropped */
	if (most > nd->frame_max)
		most = nd->frame_max;
	if (ok && !(big = pkt_get_len(most))) {
		nd->stats.rx_no_buffer++;
		ok = 0;
	} else if (!ok) {
		nd->stats.rx_errors++;
	}
	for (unsigned k = 0;;) {
		if (ok && have + l > most) {
			nd->stats.rx_errors++;
			ok = 0;
		}
		if (ok)
			memcpy(big->data + have, from, l);
		have += l;
		rx_post(sc, pb);
		(*posted)++;
		if (++k == nb)
			break;
		if (!(pb = virtq_get(&sc->rxq, &l))) {
			if (ok)
				nd->stats.rx_errors++;
			ok = 0;
			break;
		}
		if (l > VNET_HDR + PKT_MAX_FRAME) {
			if (ok)
				nd->stats.rx_errors++;
			l = 0;
			ok = 0;
		}
		from = pb->data - VNET_HDR;
	}
	if (!ok || have < ETH_HLEN) {
		if (big)
			pkt_put(big);
		return 0;
	}
	big->len = (uint16_t)have;
	netdev_input(nd, big);
	return 1;
}

/*
 * Hand up to budget received frames to netdev_input and put fresh buffers
 * in their slots.  Return frames handed up.  Interrupts off.
 */
static int rx_harvest(struct vnet *sc, int budget)
{
	struct pktbuf *pb;
	uint32_t len;
	int n = 0, seen = 0, posted = 0;

	/* §5.1.6.4 */
	while (seen < budget && (pb = virtq_get(&sc->rxq, &len)) != NULL) {
		seen++;
		trace_point(TS_NIC_RX);
		if (len < VNET_HDR + ETH_HLEN || len > VNET_HDR + PKT_MAX_FRAME) {
			sc->nd.stats.rx_errors++;
			rx_post(sc, pb);	/* the same buffer back in its slot */
			posted++;
			continue;
		}
		if (sc->mrg) {
			uint16_t nb = ((const struct virtio_net_hdr *)(pb->data - VNET_HDR))->num_buffers;
			if (__builtin_expect(nb != 1, 0)) {
				n += rx_merge(sc, pb, len, nb, &posted);
				continue;
			}
		}
		pb->len = (uint16_t)(len - VNET_HDR);
		netdev_input(&sc->nd, pb);
		n++;
		pb = pkt_get();
		if (!pb) {
			sc->nd.stats.rx_no_buffer++;
			continue;	/* rx_fill() below retries, then a timer */
		}
		rx_post(sc, pb);
		posted++;
	}
	if (sc->rxq.num_free)
		posted += rx_fill(sc);
	if (posted)
		virtq_kick(&sc->rxq);	/* §3.2.1.4: once for the batch */
	return n;
}

/* Drop our references on transmitted frames; wake senders.  Interrupts off. */
static void tx_reclaim(struct vnet *sc)
{
	struct pktbuf *pb;
	uint32_t len;
	int freed = 0;

	while ((pb = virtq_get(&sc->txq, &len)) != NULL) {
		pkt_put(pb);
		freed++;
	}
	if (!freed)
		return;
	if (sc->tx_intr) {
		sc->tx_intr = 0;
		virtq_intr_disable(&sc->txq);
	}
	netdev_tx_space(&sc->nd);
}

static int vnet_transmit(struct netdev *nd, struct pktbuf *pb)
{
	struct vnet *sc = nd->softc;
	uint32_t len = pb->len < ETH_MIN_FRAME ? ETH_MIN_FRAME : pb->len;
	uint8_t *hdr = pb->data - VNET_HDR;

	if (hdr < pb->buf || pb->data + len > pkt_buf_end(pb) ||
	    pb->len < ETH_HLEN || pb->len > nd->frame_max)
		return -EINVAL;

	irqflags_t f = irq_save();
	tx_reclaim(sc);
	if (sc->txq.num_free == 0) {
		/*
		 * Full: ask for the TX interrupt, whose handler reclaims and
		 * wakes the waiters, and look once more in case the device
		 * finished before it saw the request (§2.4.7).
		 */
		if (!sc->tx_intr) {
			sc->tx_intr = 1;
			if (virtq_intr_enable(&sc->txq))
				tx_reclaim(sc);
		}
		if (sc->txq.num_free == 0) {
			nd->stats.tx_ring_full++;
			irq_restore(f);
			return -EAGAIN;
		}
	}
	/* §5.1.6.2: no offloads, so an all-zero header. */
	memset(hdr, 0, VNET_HDR);
	if (pb->len < ETH_MIN_FRAME)
		memset(pb->data + pb->len, 0, ETH_MIN_FRAME - pb->len);
	pkt_ref(pb);
	struct virtq_sg sg = { .addr = (uint64_t)(uintptr_t)hdr, .len = VNET_HDR + len };
	virtq_add(&sc->txq, &sg, 1, pb);
	virtq_kick(&sc->txq);
	nd->stats.tx_frames++;
	nd->stats.tx_bytes += pb->len;
	irq_restore(f);
	return 0;
}

static int vnet_poll(struct netdev *nd, int budget)
{
	struct vnet *sc = nd->softc;
	int n = rx_harvest(sc, budget);

	tx_reclaim(sc);
	return n;
}

static void vnet_service(struct vnet *sc);

static void resched_timer(void *arg)
{
	vnet_service(arg);
}

/*
 * The queue interrupt's work: reclaim TX, and with the receive interrupt
 * on, take every frame received (with it off, polling mode, frames wait
 * for netdev_poll() even when the TX interrupt fires).  Interrupts off.
 */
static void vnet_service(struct vnet *sc)
{
	if (!sc->rx_intr) {
		tx_reclaim(sc);
		return;
	}
	/*
	 * No RX interrupts while we harvest anyway (§2.4.7): frames that
	 * come meanwhile are taken by this loop, not by another interrupt.
	 */
	virtq_intr_disable(&sc->rxq);
	for (int i = 0; i <= sc->rxq.size / VNET_IRQ_BUDGET; i++) {
		int n = vnet_poll(&sc->nd, VNET_IRQ_BUDGET);
		if (!sc->rx_intr)
			return;		/* polling mode began meanwhile: stay off */
		if (n == VNET_IRQ_BUDGET)
			continue;
		if (!virtq_intr_enable(&sc->rxq))
			return;
		virtq_intr_disable(&sc->rxq);
	}
	/*
	 * More than a ring's worth in one go: bound the time spent here and
	 * come back from the timer interrupt, the receive interrupt still off.
	 */
	timer_arm(&sc->resched, cycles(), resched_timer, sc);
}

static void vnet_link_check(struct netdev *nd)
{
	struct vnet *sc = nd->softc;
	uint16_t status = NetStatusLinkUp;

	/* §5.1.4: without VIRTIO_NET_F_STATUS the link is assumed up. */
	if (sc->vd.features & VIRTIO_NET_F_STATUS)
		virtio_config_read(&sc->vd, NetCfgStatus, &status, sizeof status);
	nd->link_up = (status & NetStatusLinkUp) != 0;
}

static void vnet_irq_enable(struct netdev *nd, int on)
{
	struct vnet *sc = nd->softc;
	irqflags_t f = irq_save();

	if (!on) {
		sc->rx_intr = 0;
		virtq_intr_disable(&sc->rxq);
	} else if (!sc->rx_intr) {
		sc->rx_intr = 1;
		/* Frames that came while it was off raise no interrupt: take them now. */
		if (virtq_intr_enable(&sc->rxq))
			vnet_service(sc);
	}
	irq_restore(f);
}

/* MSI-X entry MsixQueueEntry: both queues. */
static void vnet_intr(void *arg)
{
	struct vnet *sc = arg;

	sc->nd.stats.irqs++;
	vnet_service(sc);
}

/* MSI-X entry MsixConfigEntry: the device configuration changed (§4.1.5.4). */
static void vnet_config_intr(void *arg)
{
	struct vnet *sc = arg;

	sc->nd.stats.irqs++;
	vnet_link_check(&sc->nd);
}

/* INTx: one line for everything; the ISR register says what (§4.1.4.5). */
static void vnet_intx(void *arg)
{
	struct vnet *sc = arg;
	uint8_t isr = virtio_isr(&sc->vd);

	if (!isr)
		return;		/* a line shared with another device */
	sc->nd.stats.irqs++;
	if (isr & VirtioIsrConfig)
		vnet_link_check(&sc->nd);
	if (isr & VirtioIsrQueue)
		vnet_service(sc);
}

static struct vnet *the_vnet;

/*
 * At exit: the notifications this node wrote; the device asked for none
 * the rest of the time (§2.7.10).  Each is an exit into QEMU that waits
 * for QEMU's I/O thread: measured at 13-32 us each during a bulk transfer
 * here, its transmit work going on under the same lock.
 */
static void vnet_exit(void)
{
	struct vnet *sc = the_vnet;

	if (sc)
		printf("virtio-net: notifications written: tx %lu (for %lu frames), rx %lu\n",
		       (unsigned long)sc->txq.kicks, (unsigned long)sc->nd.stats.tx_frames,
		       (unsigned long)sc->rxq.kicks);
}
EXIT_HOOK(virtio_net, vnet_exit);

static const struct netdev_ops vnet_ops = {
	.transmit = vnet_transmit,
	.poll = vnet_poll,
	.irq_enable = vnet_irq_enable,
	.link_check = vnet_link_check,
};

static int vnet_match(const struct pci_dev *d)
{
	return d->vendor == VIRTIO_PCI_VENDOR &&
	       (d->device == VirtioNetTransitional || d->device == VirtioNetModern);
}

/* Set up the device's interrupts (before DRIVER_OK); 0 or a negative errno. */
static int vnet_setup_irqs(struct vnet *sc)
{
	if (sc->vd.msix_entries) {
		int vq = irq_alloc(vnet_intr, sc);
		int vc = vq < 0 ? -1 : irq_alloc(vnet_config_intr, sc);
		if (vc < 0)
			return -EBUSY;
		virtio_msix_route(&sc->vd, MsixQueueEntry, vq);
		virtio_msix_route(&sc->vd, MsixConfigEntry, vc);
		return 0;
	}
	int v = irq_alloc(vnet_intx, sc);
	if (v < 0)
		return -EBUSY;
	return virtio_intx_init(&sc->vd, v);
}

static int vnet_probe(struct pci_dev *d)
{
	struct vnet *sc;
	uint16_t qvec = VIRTIO_NO_VECTOR;
	int r;

	if (netdev_get())
		return -EBUSY;		/* one NIC per node */
	sc = calloc(1, sizeof *sc);
	if (!sc)
		return -ENOMEM;
	r = virtio_pci_attach(&sc->vd, d);
	if (r < 0)
		goto free;		/* e.g. a legacy-only device: not supported */
	if (!sc->vd.devcfg) {
		r = -ENODEV;
		goto fail;
	}
	r = virtio_negotiate(&sc->vd, VIRTIO_NET_F_STATUS | VIRTIO_NET_F_MRG_RXBUF,
			     VIRTIO_F_VERSION_1 | VIRTIO_NET_F_MAC);
	if (r < 0)
		goto fail;
	sc->mrg = (sc->vd.features & VIRTIO_NET_F_MRG_RXBUF) != 0;
	if (virtio_msix_init(&sc->vd, MsixEntries) == 0) {
		qvec = MsixQueueEntry;
		r = virtio_config_vector(&sc->vd, MsixConfigEntry);
		if (r < 0)
			goto fail;
	}
	r = virtq_init(&sc->rxq, &sc->vd, RxQueue, VNET_RING_MAX, qvec);
	if (r < 0)
		goto fail;
	r = virtq_init(&sc->txq, &sc->vd, TxQueue, VNET_RING_MAX, qvec);
	if (r < 0)
		goto free_queues;
	virtq_intr_disable(&sc->txq);
	sc->rx_intr = 1;

	sc->nd.name = "virtio-net";
	sc->nd.model = sc->model;
	sc->nd.frame_max = sc->mrg ? ETH_LONGEST_FRAME : ETH_MAX_FRAME;
	sc->nd.ops = &vnet_ops;
	sc->nd.softc = sc;
	the_vnet = sc;
	virtio_config_read(&sc->vd, NetCfgMac, sc->nd.mac, ETH_ALEN);
	vnet_link_check(&sc->nd);
	if (sc->vd.msix_entries)
		snprintf(sc->model, sizeof sc->model, "pci %02x:%02x.%d %04x, queues %u+%u, msi-x",
			 d->bus, d->dev, d->fn, d->device, sc->rxq.size, sc->txq.size);
	else
		snprintf(sc->model, sizeof sc->model,
			 "pci %02x:%02x.%d %04x, queues %u+%u, intx irq %d",
			 d->bus, d->dev, d->fn, d->device, sc->rxq.size, sc->txq.size, d->irq_line);

	irqflags_t f = irq_save();
	rx_fill(sc);
	if (sc->rxq.num_free == sc->rxq.size) {
		irq_restore(f);
		r = -ENOMEM;
		goto free_queues;
	}
	r = vnet_setup_irqs(sc);
	if (r < 0) {
		irq_restore(f);
		goto free_queues;
	}
	/* §3.1.1: no notification before DRIVER_OK, so the RX kick comes after. */
	virtio_driver_ok(&sc->vd);
	virtq_kick(&sc->rxq);
	irq_restore(f);

	d->softc = sc;
	if (netdev_register(&sc->nd) < 0) {
		/* Cannot happen: checked above, and one CPU. */
		virtio_reset(&sc->vd);
		return -EBUSY;
	}
	return 0;

free_queues:
	timer_cancel(&sc->refill);
	virtio_reset(&sc->vd);		/* the device lets go of the rings */
	for (struct pktbuf *pb; (pb = virtq_detach(&sc->rxq)) != NULL;)
		pkt_put(pb);
	virtq_free(&sc->txq);
	virtq_free(&sc->rxq);
fail:
	virtio_fail(&sc->vd);
free:
	free(sc);
	return r;
}

static const struct pci_driver virtio_net_driver = {
	.name = "virtio-net",
	.match = vnet_match,
	.probe = vnet_probe,
};
PCI_DRIVER(virtio_net_driver);
