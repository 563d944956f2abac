/*
 * virtio 1.0 PCI transport (§4.1) and split virtqueues (§2.4, §3.2).
 *
 * Memory: the rings live in page_alloc_zeroed() memory, ordinary
 * write-back RAM shared with the device; the kernel is identity-mapped, so
 * a virtual address is the guest-physical one the device wants.  On x86
 * stores are seen in program order and loads are not reordered with older
 * loads, so the write and read barriers the spec asks for are compiler
 * barriers; the one full barrier (a store then a load that must not pass
 * it) is virtio_mb().
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/pci.h"
#include "drivers/virtio.h"
#include "kernel/apic.h"
#include "kernel/mem.h"
#include "kernel/panic.h"
#include "kernel/vm.h"
#include "kernel/x86.h"

#define DMA_ADDR(p) ((uint64_t)(uintptr_t)(p))	/* identity-mapped */

/* Order a store before a later load (x86 may reorder those two). */
static inline void virtio_mb(void) { __asm__ volatile("mfence" ::: "memory"); }
/* Order stores, and loads, among themselves: free on x86 but for the compiler. */
static inline void virtio_wmb(void) { barrier(); }
static inline void virtio_rmb(void) { barrier(); }

/* struct virtio_pci_cap, §4.1.4: a vendor capability in PCI config space. */
struct virtio_pci_cap {
	uint8_t cap_vndr;		/* PciCapVendor */
	uint8_t cap_next;
	uint8_t cap_len;
	uint8_t cfg_type;
	uint8_t bar;
	uint8_t padding[3];
	uint32_t offset;		/* within the BAR */
	uint32_t length;
};
_Static_assert(sizeof(struct virtio_pci_cap) == 16, "virtio_pci_cap is 16 bytes (virtio 1.0 §4.1.4)");

enum {				/* virtio_pci_cap offsets in config space */
	CapCfgType = 3,
	CapBar = 4,
	CapOffset = 8,
	CapLength = 12,
	CapNotifyMult = 16,	/* virtio_pci_notify_cap only, §4.1.4.4 */
};

enum {				/* cfg_type */
	CapCommon = 1,
	CapNotify = 2,
	CapIsr = 3,
	CapDevice = 4,
	CapPci = 5,
};

enum {				/* struct virtio_pci_common_cfg, §4.1.4.3 */
	DevFeatureSel = 0x00,
	DevFeature = 0x04,
	DrvFeatureSel = 0x08,
	DrvFeature = 0x0c,
	MsixConfig = 0x10,
	NumQueues = 0x12,
	DeviceStatus = 0x14,
	ConfigGeneration = 0x15,
	QueueSelect = 0x16,
	QueueSize = 0x18,
	QueueMsixVector = 0x1a,
	QueueEnable = 0x1c,
	QueueNotifyOff = 0x1e,
	QueueDesc = 0x20,	/* 64-bit fields: written as two 32-bit halves */
	QueueDriver = 0x28,
	QueueDevice = 0x30,
	CommonCfgLen = 0x38,
};

/* Common configuration accessors: each field at its natural width (§4.1.3.1). */
static inline uint8_t cc_read8(struct virtio_dev *vd, int r) { return vd->common[r]; }
static inline uint16_t cc_read16(struct virtio_dev *vd, int r)
{
	return *(volatile uint16_t *)(vd->common + r);
}
static inline uint32_t cc_read32(struct virtio_dev *vd, int r)
{
	return *(volatile uint32_t *)(vd->common + r);
}
static inline void cc_write8(struct virtio_dev *vd, int r, uint8_t v) { vd->common[r] = v; }
static inline void cc_write16(struct virtio_dev *vd, int r, uint16_t v)
{
	*(volatile uint16_t *)(vd->common + r) = v;
}
static inline void cc_write32(struct virtio_dev *vd, int r, uint32_t v)
{
	*(volatile uint32_t *)(vd->common + r) = v;
}
static inline void cc_write64(struct virtio_dev *vd, int r, uint64_t v)
{
	cc_write32(vd, r, (uint32_t)v);
	cc_write32(vd, r + 4, (uint32_t)(v >> 32));
}

/* The virtual address of [offset, offset+length) in memory BAR bar, mapped; NULL if bad. */
void virtio_reset(struct virtio_dev *vd)
{
	/* §4.1.4.3: writing 0 resets; the reset is over when 0 reads back. */
	cc_write8(vd, DeviceStatus, 0);
	for (int i = 0; i < 1000000 && cc_read8(vd, DeviceStatus) != 0; i++)
		cpu_relax();
}

static void status_set(struct virtio_dev *vd, uint8_t bits)
{
	cc_write8(vd, DeviceStatus, cc_read8(vd, DeviceStatus) | bits);
}

void virtio_fail(struct virtio_dev *vd)
{
	status_set(vd, VirtioStatusFailed);
}

int virtio_pci_attach(struct virtio_dev *vd, struct pci_dev *d)
{
	int have = 0;

	memset(vd, 0, sizeof *vd);
	vd->pci = d;
	/* §4.1.4.1: take the first capability of each type we can use. */
	for (int off = pci_find_cap(d, PciCapVendor, 0); off; off = pci_find_cap(d, PciCapVendor, off)) {
		uint8_t type = pci_read8(d, off + CapCfgType);
		uint8_t bar = pci_read8(d, off + CapBar);
		uint32_t offset = pci_read32(d, off + CapOffset);
		uint32_t length = pci_read32(d, off + CapLength);

		if (type < CapCommon || type > CapDevice || (have & (1 << type)))
			continue;
		volatile uint8_t *p = pci_map_bar(d, bar, offset, length);
		if (!p)
			continue;	/* §4.1.4.1: ignore what cannot be used */
		switch (type) {
		case CapCommon:
			if (length < CommonCfgLen)
				continue;
			vd->common = p;
			break;
		case CapNotify:
			vd->notify_base = p;
			vd->notify_len = length;
			vd->notify_mult = pci_read32(d, off + CapNotifyMult);
			break;
		case CapIsr:
			vd->isr = p;
			break;
		case CapDevice:
			vd->devcfg = p;
			vd->devcfg_len = length;
			break;
		}
		have |= 1 << type;
	}
	if (!vd->common || !vd->notify_base)
		return -ENODEV;
	pci_enable(d);
	/* §3.1.1 steps 1-3. */
	virtio_reset(vd);
	status_set(vd, VirtioStatusAck);
	status_set(vd, VirtioStatusDriver);
	return 0;
}

int virtio_negotiate(struct virtio_dev *vd, uint64_t wanted, uint64_t required)
{
	uint64_t dev, drv;

	/* §3.1.1 steps 4-6, §4.1.4.3: 32 feature bits per select value. */
	cc_write32(vd, DevFeatureSel, 0);
	dev = cc_read32(vd, DevFeature);
	cc_write32(vd, DevFeatureSel, 1);
	dev |= (uint64_t)cc_read32(vd, DevFeature) << 32;
	if ((dev & required) != required)
		return -ENODEV;
	drv = dev & (wanted | required);
	cc_write32(vd, DrvFeatureSel, 0);
	cc_write32(vd, DrvFeature, (uint32_t)drv);
	cc_write32(vd, DrvFeatureSel, 1);
	cc_write32(vd, DrvFeature, (uint32_t)(drv >> 32));
	status_set(vd, VirtioStatusFeaturesOk);
	if (!(cc_read8(vd, DeviceStatus) & VirtioStatusFeaturesOk))
		return -ENODEV;
	vd->features = drv;
	return 0;
}

int virtio_msix_init(struct virtio_dev *vd, int entries)
{
	int r = pci_msix_enable(vd->pci, entries, &vd->msix);

	if (r < 0)
		return r;
	vd->msix_entries = entries;
	return 0;
}

void virtio_msix_route(struct virtio_dev *vd, int entry, int vector)
{
	pci_msix_route(&vd->msix, entry, vector);
}

void virtio_msix_mask(struct virtio_dev *vd, int entry, int masked)
{
	pci_msix_mask(&vd->msix, entry, masked);
}

int virtio_config_vector(struct virtio_dev *vd, uint16_t entry)
{
	/* §4.1.5.1.2: the device answers VIRTIO_NO_VECTOR if it cannot. */
	cc_write16(vd, MsixConfig, entry);
	return cc_read16(vd, MsixConfig) == entry ? 0 : -EIO;
}

int virtio_intx_init(struct virtio_dev *vd, int vector)
{
	struct pci_dev *d = vd->pci;
	int level, active_low;

	if (!d->irq_pin || d->irq_line == 0 || d->irq_line >= 16)
		return -ENODEV;
	/*
	 * The firmware routed INTx to ISA IRQ irq_line through the PIIX PIRQ
	 * links; QEMU's ACPI describes those links as level-triggered, active
	 * high, whatever an ISA override says for the pin.
	 */
	vd->intx_gsi = isa_irq_gsi(d->irq_line, &level, &active_low);
	if (ioapic_route(vd->intx_gsi, vector, 1, 0) < 0)
		return -ENODEV;
	pci_write16(d, PciCommand, pci_read16(d, PciCommand) & ~PciCmdIntxDisable);
	return 0;
}

uint8_t virtio_isr(struct virtio_dev *vd)
{
	return vd->isr ? *vd->isr : 0;
}

int virtq_init(struct virtq *vq, struct virtio_dev *vd, uint16_t index, uint16_t max_size,
	       uint16_t msix)
{
	uint16_t size;

	memset(vq, 0, sizeof *vq);
	/* §4.1.5.1.3 */
	cc_write16(vd, QueueSelect, index);
	size = cc_read16(vd, QueueSize);
	if (size == 0 || cc_read16(vd, QueueEnable))
		return -ENOENT;
	/* A split ring's size is a power of two (§2.4); ours is also at most max_size. */
	if (size > max_size)
		size = max_size;
	while (size & (size - 1))
		size &= (uint16_t)(size - 1);	/* down to the highest power of two */
	if (size == 0)
		return -ENOENT;
	cc_write16(vd, QueueSize, size);
	cc_write16(vd, QueueMsixVector, msix);
	if (cc_read16(vd, QueueMsixVector) != msix)
		return -EIO;

	/*
	 * §2.4: descriptors (16-byte aligned), the available ring (2), the used
	 * ring (4); the used ring, which the device writes, on its own page.
	 */
	uint64_t desc_bytes = 16ULL * size;
	uint64_t avail_bytes = 6 + 2ULL * size;
	uint64_t used_off = (desc_bytes + avail_bytes + 4095) & ~4095ULL;
	uint64_t used_bytes = 6 + 8ULL * size;
	vq->mem_bytes = (used_off + used_bytes + 4095) & ~4095ULL;
	vq->mem = page_alloc_zeroed(vq->mem_bytes);
	vq->cookie = calloc(size, sizeof *vq->cookie);
	if (!vq->mem || !vq->cookie) {
		virtq_free(vq);
		return -ENOMEM;
	}
	vq->vd = vd;
	vq->index = index;
	vq->size = size;
	vq->desc = vq->mem;
	vq->avail = (volatile struct virtq_avail *)((uint8_t *)vq->mem + desc_bytes);
	vq->used = (volatile struct virtq_used *)((uint8_t *)vq->mem + used_off);
	for (uint16_t i = 0; i < size; i++)
		vq->desc[i].next = (uint16_t)(i + 1);
	vq->num_free = size;
	vq->free_head = 0;

	cc_write64(vd, QueueDesc, DMA_ADDR(vq->desc));
	cc_write64(vd, QueueDriver, DMA_ADDR(vq->avail));
	cc_write64(vd, QueueDevice, DMA_ADDR(vq->used));
	/* §4.1.4.4: queue_notify_off scaled by notify_off_multiplier. */
	uint64_t notify_off = (uint64_t)cc_read16(vd, QueueNotifyOff) * vd->notify_mult;
	if (notify_off + 2 > vd->notify_len) {
		virtq_free(vq);
		return -EIO;
	}
	vq->notify = (volatile uint16_t *)(vd->notify_base + notify_off);
	cc_write16(vd, QueueEnable, 1);
	return 0;
}

void virtq_free(struct virtq *vq)
{
	if (vq->mem)
		page_free_bytes(vq->mem, vq->mem_bytes);
	free(vq->cookie);
	vq->mem = NULL;
	vq->cookie = NULL;
}

void *virtq_detach(struct virtq *vq)
{
	for (uint16_t i = 0; vq->cookie && i < vq->size; i++) {
		void *c = vq->cookie[i];
		if (c) {
			vq->cookie[i] = NULL;
			return c;
		}
	}
	return NULL;
}

void virtio_driver_ok(struct virtio_dev *vd)
{
	status_set(vd, VirtioStatusDriverOk);
}

void virtio_config_read(struct virtio_dev *vd, uint32_t off, void *buf, uint32_t len)
{
	volatile uint8_t *p = vd->devcfg + off;
	uint8_t gen;

	KASSERT(vd->devcfg && off + len <= vd->devcfg_len);
	do {
		gen = cc_read8(vd, ConfigGeneration);
		if (len == 2 && !(off & 1)) {
			uint16_t v = *(volatile uint16_t *)p;
			memcpy(buf, &v, 2);
		} else if (len == 4 && !(off & 3)) {
			uint32_t v = *(volatile uint32_t *)p;
			memcpy(buf, &v, 4);
		} else {
			for (uint32_t i = 0; i < len; i++)
				((uint8_t *)buf)[i] = p[i];
		}
	} while (cc_read8(vd, ConfigGeneration) != gen);
}

int virtq_add(struct virtq *vq, const struct virtq_sg *sg, int n, void *cookie)
{
	uint16_t head = vq->free_head, i = head;

	if (n < 1 || n > vq->num_free)
		return -ENOSPC;
	/* §3.2.1.1: free descriptors are chained by next, so a chain is a prefix. */
	for (int k = 0; k < n; k++) {
		volatile struct virtq_desc *d = &vq->desc[i];
		d->addr = sg[k].addr;
		d->len = sg[k].len;
		d->flags = (uint16_t)((sg[k].device_writes ? VirtqDescWrite : 0) |
				      (k + 1 < n ? VirtqDescNext : 0));
		i = d->next;
	}
	vq->free_head = i;
	vq->num_free = (uint16_t)(vq->num_free - n);
	vq->cookie[head] = cookie;
	/* §3.2.1.2-3: the ring entry, then (write barrier) the index. */
	vq->avail->ring[vq->avail_idx & (vq->size - 1)] = head;
	virtio_wmb();
	vq->avail->idx = ++vq->avail_idx;
	return 0;
}

void virtq_kick(struct virtq *vq)
{
	/*
	 * §3.2.1.4, §2.4.7: the new idx must be visible before we read the
	 * device's flags, or we could miss that it wants a notification.
	 */
	virtio_mb();
	if (!(vq->used->flags & VirtqUsedNoNotify)) {
		*vq->notify = vq->index;	/* §4.1.5.2 */
		vq->kicks++;
	}
}

/*
 * The next buffer the device used, or NULL.  The device is not trusted
 * more than a frame is: a used entry that names a descriptor beyond the
 * table, or one that is not in flight (never given, or given back
 * already), is counted (bad_used) and skipped; freeing it would corrupt
 * the free list and hand one descriptor to two buffers.
 */
void *virtq_get(struct virtq *vq, uint32_t *len)
{
	while (vq->used->idx != vq->last_used) {
		uint16_t id, i, n = 1;
		void *cookie;

		virtio_rmb();	/* §3.2.2: read idx before the entry it covers */
		volatile struct virtq_used_elem *e = &vq->used->ring[vq->last_used & (vq->size - 1)];
		uint32_t id32 = e->id;
		*len = e->len;
		vq->last_used++;
		if (id32 >= vq->size || !vq->cookie[id32]) {
			vq->bad_used++;
			continue;
		}
		id = (uint16_t)id32;
		/* The chain is ours (virtq_add wrote it), at most size long. */
		for (i = id; (vq->desc[i].flags & VirtqDescNext) && n < vq->size; i = vq->desc[i].next)
			n++;
		vq->desc[i].next = vq->free_head;
		vq->free_head = id;
		vq->num_free = (uint16_t)(vq->num_free + n);
		cookie = vq->cookie[id];
		vq->cookie[id] = NULL;
		return cookie;
	}
	return NULL;
}

void virtq_intr_disable(struct virtq *vq)
{
	vq->avail->flags = VirtqAvailNoInterrupt;
}

int virtq_intr_enable(struct virtq *vq)
{
	vq->avail->flags = 0;
	/* The flag store must not pass the load of used->idx (§2.4.7). */
	virtio_mb();
	return virtq_pending(vq);
}
