/*
 * The virtio 1.x PCI transport and split virtqueues, for any virtio device
 * type (STYLE.md 4: the transport apart from the device, as OpenBSD's
 * virtio.c and if_vio.c).  A device driver:
 *
 *	virtio_pci_attach()		find the modern capabilities, reset
 *	virtio_negotiate()		features (§3.1.1 steps 4-6)
 *	virtio_msix_init() or virtio_intx_init()
 *	virtq_init() per queue		(§4.1.5.1.3)
 *	virtio_driver_ok()
 *
 * and then moves buffers with virtq_add(), virtq_kick() and virtq_get().
 *
 * Section numbers are those of the virtio 1.0 specification (OASIS, 2016);
 * virtio 1.1 keeps the PCI ones (§4.1) and moves the split ring to §2.6.
 *
 * Locking: none inside.  One CPU: the device driver calls the virtq_*
 * functions with interrupts off whenever its interrupt handler may touch
 * the same queue.
 *
 * Only the modern (virtio 1.x) interface is driven; a legacy-only device
 * (no virtio vendor capabilities) is refused by virtio_pci_attach().
 */
#ifndef DRIVERS_VIRTIO_H
#define DRIVERS_VIRTIO_H

#include <stdint.h>

#include "drivers/pci.h"

#define VIRTIO_PCI_VENDOR 0x1af4

enum {				/* device status, §2.1 */
	VirtioStatusAck = 1,
	VirtioStatusDriver = 2,
	VirtioStatusDriverOk = 4,
	VirtioStatusFeaturesOk = 8,
	VirtioStatusNeedsReset = 64,
	VirtioStatusFailed = 128,
};

/* Reserved feature bits, §6. */
#define VIRTIO_F_VERSION_1 (1ULL << 32)

#define VIRTIO_NO_VECTOR 0xffff	/* §4.1.5.1.2 */

/* Split virtqueue, §2.4: descriptor table (§2.4.5). */
struct virtq_desc {
	uint64_t addr;			/* guest-physical */
	uint32_t len;
	uint16_t flags;
	uint16_t next;
};
_Static_assert(sizeof(struct virtq_desc) == 16, "virtq_desc is 16 bytes (virtio 1.0 §2.4.5)");

enum {				/* virtq_desc.flags */
	VirtqDescNext = 1,
	VirtqDescWrite = 2,		/* device writes (otherwise reads) */
	VirtqDescIndirect = 4,
};

/* Available ring, §2.4.6: written by the driver only. */
struct virtq_avail {
	uint16_t flags;
	uint16_t idx;
	uint16_t ring[];		/* then used_event, without EVENT_IDX unused */
};
_Static_assert(sizeof(struct virtq_avail) == 4, "virtq_avail header is 4 bytes (virtio 1.0 §2.4.6)");

enum {				/* virtq_avail.flags, §2.4.7 */
	VirtqAvailNoInterrupt = 1,
};

/* Used ring, §2.4.8: written by the device only. */
struct virtq_used_elem {
	uint32_t id;			/* head of the descriptor chain */
	uint32_t len;			/* bytes the device wrote into it */
};
_Static_assert(sizeof(struct virtq_used_elem) == 8, "virtq_used_elem is 8 bytes (virtio 1.0 §2.4.8)");

struct virtq_used {
	uint16_t flags;
	uint16_t idx;
	struct virtq_used_elem ring[];	/* then avail_event, unused */
};
_Static_assert(sizeof(struct virtq_used) == 4, "virtq_used header is 4 bytes (virtio 1.0 §2.4.8)");

enum {				/* virtq_used.flags, §2.4.9 */
	VirtqUsedNoNotify = 1,
};

/* The driver's view of one virtqueue. */
struct virtq {
	struct virtio_dev *vd;
	uint16_t index;			/* queue number on the device */
	uint16_t size;			/* entries, a power of two */
	uint16_t num_free;		/* free descriptors */
	uint16_t free_head;		/* first free descriptor (chained by next) */
	uint16_t avail_idx;		/* our copy of avail->idx */
	uint16_t last_used;		/* next used->ring entry to read */
	volatile struct virtq_desc *desc;
	volatile struct virtq_avail *avail;
	volatile struct virtq_used *used;
	volatile uint16_t *notify;	/* where to write index to notify */
	void **cookie;			/* per head descriptor: the caller's token */
	void *mem;			/* the rings, for freeing */
	uint64_t mem_bytes;
	uint64_t kicks;			/* notifications actually written */
	uint64_t bad_used;		/* used entries naming no buffer in flight: skipped */
};

/* One piece of a buffer for virtq_add(). */
struct virtq_sg {
	uint64_t addr;			/* guest-physical (== virtual here) */
	uint32_t len;
	int device_writes;
};

/* A virtio PCI function (the transport); embed it in the device's softc. */
struct virtio_dev {
	struct pci_dev *pci;
	volatile uint8_t *common;	/* struct virtio_pci_common_cfg */
	volatile uint8_t *notify_base;
	uint32_t notify_len;
	uint32_t notify_mult;		/* notify_off_multiplier */
	volatile uint8_t *isr;
	volatile uint8_t *devcfg;	/* device-specific configuration */
	uint32_t devcfg_len;
	uint64_t features;		/* negotiated */
	int msix_entries;		/* MSI-X entries enabled, 0 with INTx */
	struct pci_msix msix;
	uint32_t intx_gsi;
};

/*
 * Find the modern virtio capabilities of d (§4.1.4), map their BARs, enable
 * the function, reset the device and set ACKNOWLEDGE and DRIVER.
 * Return 0, -ENODEV for a device without them (legacy only), -ENOMEM if a
 * BAR cannot be mapped.
 */
int virtio_pci_attach(struct virtio_dev *vd, struct pci_dev *d);

/*
 * Offer the device's features that are in wanted and set FEATURES_OK
 * (§3.1.1).  Return 0 with vd->features set, -ENODEV if the device lacks a
 * feature in required or refuses the set.
 */
int virtio_negotiate(struct virtio_dev *vd, uint64_t wanted, uint64_t required);

/*
 * Enable MSI-X with entries table entries, all masked; the caller then
 * routes each with virtio_msix_route().  Return 0, or -ENODEV if the
 * function has no MSI-X or fewer entries.
 */
int virtio_msix_init(struct virtio_dev *vd, int entries);

/* Point MSI-X table entry at CPU vector and unmask it. */
void virtio_msix_route(struct virtio_dev *vd, int entry, int vector);

/* Mask or unmask one MSI-X table entry (its interrupt stays pending). */
void virtio_msix_mask(struct virtio_dev *vd, int entry, int masked);

/*
 * Set the MSI-X entry for configuration-change interrupts
 * (VIRTIO_NO_VECTOR for none).  Return 0, or -EIO if the device refused.
 */
int virtio_config_vector(struct virtio_dev *vd, uint16_t entry);

/*
 * Route the function's INTx line to vector through the I/O APIC (left
 * masked until virtio_intx_unmask()).  Return 0, or -ENODEV if it has none.
 */
int virtio_intx_init(struct virtio_dev *vd, int vector);
void virtio_intx_unmask(struct virtio_dev *vd);

enum {				/* virtio_isr() bits, §4.1.4.5 */
	VirtioIsrQueue = 1,
	VirtioIsrConfig = 2,
};

/* Read and clear the ISR status (deasserts INTx).  Not for MSI-X. */
uint8_t virtio_isr(struct virtio_dev *vd);

/*
 * Set up queue index with at most max_size entries (a power of two) and
 * MSI-X entry msix (VIRTIO_NO_VECTOR with INTx).  Return 0, -ENOENT if the
 * device has no such queue, -ENOMEM, or -EIO if it refused the vector or
 * gave a notification address outside its notify region.
 */
int virtq_init(struct virtq *vq, struct virtio_dev *vd, uint16_t index, uint16_t max_size,
	       uint16_t msix);

/*
 * Free a queue's memory (harmless on a queue virtq_init() failed or never
 * set up); the device must be reset first.
 */
void virtq_free(struct virtq *vq);

/*
 * After a reset: the cookie of one buffer still posted, forgetting it;
 * NULL when none is left.  For freeing what the queue held.
 */
void *virtq_detach(struct virtq *vq);

/* Set DRIVER_OK: the device is live (§3.1.1 step 8). */
void virtio_driver_ok(struct virtio_dev *vd);

/* Reset the device (§4.1.4.3); it forgets queues and features. */
void virtio_reset(struct virtio_dev *vd);

/* Tell the device the driver gave up (FAILED). */
void virtio_fail(struct virtio_dev *vd);

/*
 * Read len bytes of device-specific configuration at off, consistently
 * (config_generation, §2.3.1).  Fields up to 4 bytes wide are read with
 * their natural width (len 1, 2 or 4 at an aligned off).
 */
void virtio_config_read(struct virtio_dev *vd, uint32_t off, void *buf, uint32_t len);

/*
 * Post one buffer made of n pieces (device-readable ones first, §2.4.5)
 * with cookie, which virtq_get() returns when the device is done.
 * Return 0, or -ENOSPC if fewer than n descriptors are free.  The device
 * may see it at once; it is told only by virtq_kick().
 */
int virtq_add(struct virtq *vq, const struct virtq_sg *sg, int n, void *cookie);

/* Notify the device of new buffers unless it said it does not need it. */
void virtq_kick(struct virtq *vq);

/*
 * The cookie of the next buffer the device has finished, with *len the
 * bytes it wrote, freeing its descriptors; NULL if there is none.
 */
void *virtq_get(struct virtq *vq, uint32_t *len);

/* Nonzero if virtq_get() would return a buffer. */
static inline int virtq_pending(const struct virtq *vq)
{
	return vq->used->idx != vq->last_used;
}

/*
 * Ask the device not to interrupt for this queue (a hint to the device,
 * §2.4.7; QEMU honours it without EVENT_IDX).
 */
void virtq_intr_disable(struct virtq *vq);

/*
 * Ask for interrupts again.  Return nonzero if buffers were used while
 * they were off: those raise no interrupt and the caller must take them.
 */
int virtq_intr_enable(struct virtq *vq);

#endif
