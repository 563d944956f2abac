/*
 * libFuzzer target: the virtio-net driver's receive queue
 * (drivers/virtio_net.c built whole, over the real split-ring code of
 * drivers/virtio.c) against a fake device: the driver's virtq_init sets up
 * its queues in a fake common configuration, its rx_fill posts buffers,
 * and the fake device (this file) takes them from the available ring in
 * order, writes a virtio-net header and a frame of any length into each
 * (a frame longer than the buffer is dropped, as the device does) and
 * returns them on the used ring; the driver harvests by netdev_poll and by
 * its interrupt work (vnet_service), into a hook that can hold buffers
 * until the pool is empty; the refill and resched timers fire when the
 * input says.
 *
 * Input: operations, each one byte (bits 0-2) and operands:
 *   0 a frame: length (16 bits), 1 netdev_poll, 2 the interrupt work,
 *   3 the hook's buffers go back, 4 the timers that are armed fire,
 *   5 a frame of the largest size, 6 as 1, 7 as 2.  Bits 3-4: buffers the hook holds.
 *
 * Checked, __builtin_trap() on a broken promise (a panic traps too):
 *  - the device finds only buffers the driver posted, device-writable,
 *    of header + PKT_MAX_FRAME bytes, each a pktbuf's headroom onwards;
 *  - a frame goes up exactly when it is 14..PKT_MAX_FRAME bytes, with its
 *    bytes, in order; a shorter one counts in rx_errors; a good frame
 *    whose slot gets no fresh buffer counts in rx_no_buffer;
 *  - no slot stays empty for ever: once buffers are back and the timers
 *    fired, every descriptor is posted again; no buffer is lost.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/virtio_net.c"
#include "kernel/trace.h"
#include "tests/host/input.h"
#include "tests/drivers/nic_fake.h"
#include "tests/drivers/nic_stubs.h"

#define RING 256

/* --- what the drivers need from the kernel ------------------------------------------ */

void panic(const char *fmt, ...)
{
	(void)fmt;
	__builtin_trap();
}
int ioapic_route(uint32_t gsi, int vector, int level, int active_low)
{
	(void)gsi, (void)vector, (void)level, (void)active_low;
	return -ENODEV;
}
uint32_t isa_irq_gsi(int irq, int *level, int *active_low)
{
	(void)irq, (void)level, (void)active_low;
	return 0;
}
void pci_msix_mask(struct pci_msix *m, int entry, int masked) { (void)m, (void)entry, (void)masked; }
uint8_t pci_read8(const struct pci_dev *d, int off)
{
	(void)d, (void)off;
	return 0;
}
uint32_t pci_read32(const struct pci_dev *d, int off)
{
	(void)d, (void)off;
	return 0;
}

/* Timers: armed ones fire when the input says. */
static struct ktimer *armed[4];
static void (*armed_fn[4])(void *);
static void *armed_arg[4];

void timer_arm(struct ktimer *t, uint64_t deadline, void (*fn)(void *), void *arg)
{
	(void)deadline;
	for (int i = 0; i < 4; i++)
		if (armed[i] == t || !armed[i]) {
			armed[i] = t;
			armed_fn[i] = fn;
			armed_arg[i] = arg;
			return;
		}
	__builtin_trap();
}
int timer_cancel(struct ktimer *t)
{
	for (int i = 0; i < 4; i++)
		if (armed[i] == t) {
			armed[i] = NULL;
			return 1;
		}
	return 0;
}

static void timers_fire(void)
{
	for (int i = 0; i < 4; i++)
		if (armed[i]) {
			armed[i] = NULL;
			armed_fn[i](armed_arg[i]);
		}
}

/* --- the fake device -------------------------------------------------------------------- */

static struct vnet *sc;
static uint8_t *common, *notify;
static uint16_t dev_avail;		/* the next available entry the device takes */
static unsigned frames_in;

struct pending {			/* a frame the device returned, not yet harvested */
	unsigned frame, len;
};
static struct pending used_rec[RING];

static uint8_t frame_byte(unsigned frame, unsigned i)
{
	return (uint8_t)(frame * 31 + i + (i >> 8));
}

static void device_receive(unsigned len)
{
	struct virtq *vq = &sc->rxq;
	unsigned f = frames_in++;

	if (dev_avail == vq->avail->idx)
		return;				/* no buffer: dropped */
	if ((uint16_t)(vq->used->idx - vq->last_used) >= vq->size)
		return;				/* its used ring is full (of its lies): dropped */
	uint16_t head = vq->avail->ring[dev_avail & (vq->size - 1)];
	CHECK(head < vq->size);
	volatile struct virtq_desc *d = &vq->desc[head];
	struct pktbuf *pb = vq->cookie[head];
	CHECK(pb && (d->flags & VirtqDescWrite) && !(d->flags & VirtqDescNext));
	CHECK(d->len == VNET_HDR + PKT_MAX_FRAME && d->addr == (uintptr_t)(pb->data - VNET_HDR));
	if (len > PKT_MAX_FRAME)
		return;				/* does not fit the buffer: dropped */
	dev_avail++;
	uint8_t *buf = (uint8_t *)(uintptr_t)d->addr;
	memset(buf, 0, VNET_HDR);
	for (unsigned i = 0; i < len; i++)
		buf[VNET_HDR + i] = frame_byte(f, i);
	uint16_t u = vq->used->idx;
	vq->used->ring[u & (vq->size - 1)].id = head;
	vq->used->ring[u & (vq->size - 1)].len = VNET_HDR + len;
	used_rec[u & (vq->size - 1)] = (struct pending){ f, len };
	vq->used->idx = (uint16_t)(u + 1);
}

/*
 * A device that lies: a used entry naming a descriptor beyond the table.
 * The driver must skip it, count it in bad_used, and hand nobody a buffer
 * for it.  (An entry naming a descriptor not in flight is skipped the same
 * way, but a fuzzer cannot make one that stays so: the driver may post a
 * buffer on that descriptor before it reads the entry, and then the lie
 * cannot be told from a completion.)
 */
#define BOGUS_LEN 0xffffffffu
static unsigned bogus_made;

static void device_bogus(unsigned v)
{
	struct virtq *vq = &sc->rxq;
	uint32_t id = vq->size + v % 65536;
	uint16_t u = vq->used->idx;

	/* The used ring has room for it beside every buffer the device may still return. */
	if ((uint16_t)(u - vq->last_used) + (uint16_t)(vq->avail->idx - dev_avail) >= vq->size)
		return;
	vq->used->ring[u & (vq->size - 1)].id = id;
	vq->used->ring[u & (vq->size - 1)].len = VNET_HDR + 64;
	used_rec[u & (vq->size - 1)] = (struct pending){ 0, BOGUS_LEN };
	vq->used->idx = (uint16_t)(u + 1);
	bogus_made++;
}

/* --- the receive hook (its buffers: tests/drivers/nic_fake.h) ----------------------------- */

static void hook(struct netdev *nd, struct pktbuf *pb)
{
	const struct pending *p = &used_rec[(uint16_t)(sc->rxq.last_used - 1) & (sc->rxq.size - 1)];

	CHECK(nd == &sc->nd);
	CHECK(p->len >= ETH_HLEN && pb->len == p->len);
	for (unsigned i = 0; i < pb->len; i++)
		CHECK(pb->data[i] == frame_byte(p->frame, i));
	hook_keep(pb);
}

/* Every buffer is a posted one, the hook's, or free; the count of live ones adds up. */
static void sound(void)
{
	unsigned posted = (unsigned)(sc->rxq.size - sc->rxq.num_free);

	CHECK(pkt_free_count() == RING + POOL_EXTRA - (int)(posted + nheld));
}

static void harvest(int by_interrupt)
{
	uint16_t from = sc->rxq.last_used;
	uint64_t err0 = sc->nd.stats.rx_errors, nobuf0 = sc->nd.stats.rx_no_buffer;
	unsigned handed0 = handed, good = 0, bad = 0;

	if (by_interrupt)
		vnet_service(sc);
	else
		CHECK(netdev_poll(&sc->nd) >= 0);
	for (uint16_t u = from; u != sc->rxq.last_used; u++) {
		const struct pending *p = &used_rec[u & (sc->rxq.size - 1)];
		if (p->len == BOGUS_LEN)
			continue;
		good += p->len >= ETH_HLEN;
		bad += p->len < ETH_HLEN;
	}
	CHECK(sc->nd.stats.rx_errors - err0 == bad);
	CHECK(handed - handed0 == good);
	CHECK(sc->nd.stats.rx_no_buffer - nobuf0 <= good);
	sound();
}

/* --- the input ---------------------------------------------------------------------------- */

/* in, in_left and take(): tests/host/input.h */

static int queue_init(struct virtq *vq, uint16_t index)
{
	*(uint16_t *)(common + 0x18) = RING;	/* QueueSize */
	*(uint16_t *)(common + 0x1c) = 0;	/* QueueEnable */
	*(uint16_t *)(common + 0x1e) = 0;	/* QueueNotifyOff */
	return virtq_init(vq, &sc->vd, index, VNET_RING_MAX, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	CHECK(pkt_pool_init(RING + POOL_EXTRA) == 0);
	sc = calloc(1, sizeof *sc);
	common = calloc(1, 4096);
	notify = calloc(1, 4096);
	CHECK(sc && common && notify);
	sc->vd.common = common;
	sc->vd.notify_base = notify;
	sc->vd.notify_len = 4096;
	sc->nd.name = "virtio-net";
	sc->nd.ops = &vnet_ops;
	sc->nd.softc = sc;
	CHECK(queue_init(&sc->rxq, 0) == 0 && queue_init(&sc->txq, 1) == 0);
	CHECK(sc->rxq.size == RING);
	rx_refill(sc);
	netdev_set_rx(&sc->nd, hook, NULL);
	vnet_irq_enable(&sc->nd, 1);
	memset(armed, 0, sizeof armed);
	dev_avail = 0;
	frames_in = handed = nheld = hold = bogus_made = 0;
	sound();

	in = data;
	in_left = size;
	for (int n = 0; in_left && n < 2048; n++) {
		unsigned op = take(1);
		hold = (op >> 3) & 3;
		switch (op & 7) {
		case 0:
			device_receive(take(2) % (PKT_MAX_FRAME + 64));
			break;
		case 1:
		case 6:
			harvest(0);
			break;
		case 2:
		case 7:
			harvest(1);
			break;
		case 3:
			release();
			sound();
			break;
		case 4:
			timers_fire();
			sound();
			break;
		default:
			if (op & 0x20)
				device_bogus(take(2));
			else
				device_receive(PKT_MAX_FRAME);
			break;
		}
	}
	/* In the end every frame is taken and every slot filled again. */
	for (int k = 0; k < 8 && sc->rxq.last_used != sc->rxq.used->idx; k++)
		harvest(0);
	CHECK(sc->rxq.last_used == sc->rxq.used->idx);
	CHECK(sc->rxq.bad_used == bogus_made);
	release();
	timers_fire();
#ifdef FZ_DEBUG
	fprintf(stderr, "frames %u handed %u rx_errors %lu no_buffer %lu\n", frames_in, handed,
		sc->nd.stats.rx_errors, sc->nd.stats.rx_no_buffer);
#endif
	CHECK(sc->rxq.num_free == 0);
	sound();
	for (struct pktbuf *pb; (pb = virtq_detach(&sc->rxq)) != NULL;)
		pkt_put(pb);
	virtq_free(&sc->rxq);
	virtq_free(&sc->txq);
	free(sc);
	free(common);
	free(notify);
	CHECK(pkt_free_count() == RING + POOL_EXTRA);
	return 0;
}
