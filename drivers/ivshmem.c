/*
 * The shared-memory link: a NIC made of QEMU's ivshmem-doorbell device
 * (PCI 1af4:1110; QEMU docs/specs/ivshmem-spec) for nodes on one host.
 * BAR0 holds the registers (IntrMask, IntrStatus, IVPosition, Doorbell),
 * BAR1 the MSI-X table, BAR2 the memory every node shares, laid out as
 * drivers/shm_ring.h says: a ring per ordered pair of nodes.
 *
 * To the layers above it is an Ethernet NIC like the others (netdev.h):
 * node i's MAC is 02:4e:4f:57:hi:lo (hilo = i), as the launcher gives the
 * other NICs, and frames shorter than 60 bytes arrive padded to 60.  Transmit copies a frame into the ring from this node to the
 * node its destination MAC names (to every other node's ring for a
 * broadcast) and rings that node's doorbell only if it is armed (waiting
 * for one); a frame for a MAC that is no node's goes nowhere, as on a
 * switch that never learned it.  A unicast frame may also be built in
 * place in its slot (tx_begin/tx_commit): no buffer and no copy (the
 * fabric's unkeyed frames: a keyed one is sealed in memory of the node's
 * own, where no other process can change it before its tag is made).
 *
 * Receive copies each frame out of this node's rings into memory of the
 * driver's own and hands it up with netdev_input_frame.  The copy is
 * deliberate: a frame parsed in place could still be rewritten by its
 * producer (another QEMU, maybe buggy) between a layer's check of a field
 * and its use of it, so the layers above would have to read every field
 * of shared memory exactly once; a private copy makes the checks hold.
 * Only where the layer above asks for it (rx_shared: the fabric,
 * unkeyed) does a long frame go up where it lies, and that layer then
 * reads its header once and copies every frame but the few it takes
 * there (net/fabric/rx.c).
 * It also frees the slot at once, whatever the layers above keep (lwIP
 * holds frames for long; a held slot would stop the ring behind it): a
 * layer that keeps a frame copies it into a pktbuf.  One that needs a
 * pktbuf and finds none leaves the frame in its ring, and its producer
 * finds the ring full: back-pressure, not loss.
 *
 * Waiting: in interrupt mode this node is armed while it has nothing to
 * read; a doorbell arrives as MSI-X entry 0, the handler disarms, drains
 * every ring, re-arms and looks once more.  The timer tick also looks, so
 * that a frame whose doorbell came before this node was ready is not left
 * behind.  When the node has nothing to run it waits as shm_wait= says:
 * halt (armed, until a doorbell), adaptive (disarmed, polling its rings
 * for up to shm_spin_us, then armed and halting) or spin (polling until a
 * thread can run).  Polling shared RAM does not take QEMU's lock, unlike
 * polling a NIC's registers, so a spinning node costs only its own host
 * CPU; and a producer rings no doorbell (an exit into QEMU) for a node
 * that polls.  In polling mode (netdev_set_polling) the node never arms
 * and never takes the interrupt; netdev_poll() drains.
 *
 * The ivshmem ID (IVPosition) must be this node's id: boot/cluster gives
 * node i its own server socket, whose clients get ID i, so that the
 * doorbell of node j is ID j.  With node=auto nodes=N (one menu for every
 * PC of a netbooted room) the node takes that ID as its id.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/netdev.h"
#include "drivers/pci.h"
#include "drivers/pktbuf.h"
#include "drivers/shm_ring.h"
#include "kernel/cmdline.h"
#include "kernel/counters.h"
#include "kernel/init.h"
#include "kernel/node.h"
#include "kernel/thread.h"
#include "kernel/timer.h"
#include "kernel/trace.h"
#include "kernel/tsc.h"
#include "kernel/trap.h"
#include "kernel/x86.h"

enum {				/* BAR0 registers (ivshmem-spec, "PCI device registers") */
	IntrMask = 0x00,
	IntrStatus = 0x04,
	IVPosition = 0x08,
	Doorbell = 0x0c,
	RegsLen = 0x100,
};

#define RX_BUDGET 64
/*
 * Frames this long or longer go up where they lie when the layer above
 * asks (nd->rx_shared set): the copy they would cost is what bulk transfers pay
 * most; a shorter one is copied as it costs little.
 */
#define SHM_IN_PLACE_MIN 2048

/* netdev_input_frame for a frame where it lies in the ring (nd->rx_shared set). */
static __attribute__((noinline)) int netdev_input_shared(struct netdev *nd, uint8_t *frame, size_t len)
{
	int r = nd->rx_shared(nd, frame, len);

	if (r < 0) {
		nd->stats.rx_no_buffer++;
	} else {
		nd->stats.rx_frames++;
		nd->stats.rx_bytes += len;
	}
	trace_point(TS_RX_DONE);
	return r;
}
/*
 * Adaptive waiting polls this long before halting.  Measured with 2 nodes
 * (reliable 64-byte round trip, median/p99): 10 us misses the answer
 * (115/203 us: halts, woken by the doorbell), 50 us 9.0/59, 200 us 8.8/33;
 * a 16-node fabric-stress on 2 host CPUs takes as long with 200 as with 0.
 */
#define SPIN_US_DEFAULT 200
#define WINDOW_NS 50000		/* a spinning node lets interrupts in this often */

static const struct argspec shm_args[] = {
	{ "shm_wait", ARG_STR, 0, 0, "shared-memory link, idle node: halt, adaptive (default) or spin" },
	{ "shm_spin_us", ARG_INT, 0, 10000000, "adaptive: poll this long before halting (default 200)" },
	{ NULL, 0, 0, 0, NULL },
};

static int wait_mode(const char *v)
{
	return !v ? NETDEV_WAIT_ADAPTIVE : strcmp(v, "halt") == 0 ? NETDEV_WAIT_HALT :
	       strcmp(v, "adaptive") == 0 ? NETDEV_WAIT_ADAPTIVE :
	       strcmp(v, "spin") == 0 ? NETDEV_WAIT_SPIN : -1;
}

static int shm_check_args(const struct cmdline *c, char *err, size_t errlen)
{
	const char *v = cmdline_get(c, "shm_wait");

	if (v && wait_mode(v) < 0) {
		snprintf(err, errlen, "shm_wait=%s: not halt, adaptive or spin", v);
		return -EINVAL;
	}
	return 0;
}

static const struct arg_table shm_argtab = { "ivshmem", shm_args, shm_check_args };
ARGS_REGISTER(shm_argtab);

/* The link's counters (kernel/counters.h): each with the label it is printed with. */
#define SHM_COUNTERS(X) \
	X(LINE, "") \
	X(ONE, doorbells, "doorbells rung") \
	X(ONE, doorbells_spared, "spared (one on its way)") \
	/* frames that came while a thread sent (shm_busy), taken when it stopped: none rang */ \
	X(ONE, busy_taken, "taken after a send") \
	X(ONE, ring_full, "ring full") \
	X(ONE, no_dest, "frames for no node") \
	X(ONE, pin_full, "full at a pinned frame")	/* rings full at a pin */ \
	X(ONE, pin_unknown, "unpins of no pin") \
	X(LINE, "rejected:") \
	X(ONE, bad_counts, "bad counts")	/* a peer wrote a head beyond our tail */ \
	X(ONE, bad_lengths, "bad lengths") \
	X(ONE, slots_skipped, "damaged slots skipped")	/* shm_repair */ \
	X(ONE, heads_restored, "heads put back") \
	X(ONE, drain_bounded, "drains cut short")	/* drains that stopped at DRAIN_MAX, the rest left */ \
	/* the most bad slots one shm_poll took (its budget, RX_BUDGET, bounds it) */ \
	X(ONE, bad_run_most, "most bad slots in one poll (its budget " BUDGET_TEXT(RX_BUDGET) ")")
#define BUDGET_TEXT(n) BUDGET_TEXT_(n)
#define BUDGET_TEXT_(n) #n

struct shm_counters {
	SHM_COUNTERS(COUNTER_FIELD)
};

struct shm {
	struct netdev nd;
	struct pci_dev *pci;
	volatile uint8_t *regs;
	uint8_t *mem;			/* BAR2 */
	uint64_t size;
	int me, nodes;
	struct shm_geom g;		/* slot bytes and slots a ring (shm_ring.h) */
	struct pci_msix msix;
	int vector;
	uint32_t tx_tail[MAX_NODES];	/* what this node published to each node */
	/*
	 * Per node, the count this node's writes must stay within a ring of:
	 * its head as last read, or the oldest frame pinned if that is older.
	 * Only ever behind the truth (a pin let go, a head moved on): free_slot
	 * looks again when it seems full.
	 */
	uint32_t tx_head[MAX_NODES];
	uint32_t rx_head[MAX_NODES];	/* what it took from each node */
	uint32_t suspect[MAX_NODES];	/* shm_repair: where it would go on from (bit 31 set), */
	uint32_t suspect_at[MAX_NODES];	/* from which head */
	struct shm_ring *tx_ring[MAX_NODES];	/* this node's ring to each node */
	struct shm_ring *rx_ring[MAX_NODES];	/* each node's ring to this one */
	int peer[MAX_NODES];		/* the other nodes, ascending */
	int npeers;
	int next_src;			/* the index in peer[] the next drain starts at */
	uint64_t window_cyc;		/* WINDOW_NS in TSC cycles */
	uint64_t spin_cyc;		/* nd.spin_us in TSC cycles */
	uint64_t tick_cyc;		/* a tick in TSC cycles (shm_poll_wait) */
	struct shm_counters ctr;
	/*
	 * Frames pinned in the ring to each node (tx_commit_pinned): their
	 * counts, oldest first, a FIFO of pin_n from pin_first.  No slot is
	 * written while its frame is pinned: the ring is full at the oldest.
	 */
	uint32_t pin[MAX_NODES][SHM_SLOTS_MAX];
	uint8_t pin_first[MAX_NODES], pin_n[MAX_NODES];
	int tx_dst;			/* tx_begin's node, until tx_commit */
	struct shm_slot *tx_slot;	/* and its slot */
	int in_rx;			/* a frame is being handed up from rx_frame */
	struct thread *busy;		/* a thread that sends and looks at the rings when it stops (shm_busy) */
	char model[128];
	uint8_t rx_frame[SHM_FRAME_LIMIT];	/* the frame handed up */
};

static struct shm *the_shm;

static volatile struct shm_ctl *my_ctl(struct shm *sc)
{
	return shm_ctl(sc->mem, sc->me);
}

/* The node a unicast MAC names, or -1. */
static int mac_node(const struct shm *sc, const uint8_t *mac)
{
	uint32_t prefix;
	int n;

	memcpy(&prefix, mac, 4);	/* 02:4e:4f:57 in one compare */
	if (prefix != (0x02u | 0x4eu << 8 | 0x4fu << 16 | 0x57u << 24))
		return -1;
	n = mac[4] << 8 | mac[5];
	return n < sc->nodes ? n : -1;
}

/*
 * The free slot of the ring to dst, or NULL if it is full.  dst's head
 * (a line dst writes) is read only when the ring looks full by the head
 * read last.  (irq off)
 */
static struct shm_slot *free_slot(struct shm *sc, int dst)
{
	struct shm_ring *r = sc->tx_ring[dst];
	uint32_t t = sc->tx_tail[dst];

	if (__builtin_expect(t - sc->tx_head[dst] >= sc->g.slots, 0)) {
		uint32_t h = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
		if (t - h > sc->g.slots) {
			sc->ctr.bad_counts++;	/* dst wrote a head beyond our tail */
			sc->ctr.ring_full++;
			return NULL;
		}
		sc->tx_head[dst] = h;
		if (t - h == sc->g.slots) {
			sc->ctr.ring_full++;
			return NULL;
		}
		/* The slot of a frame still pinned: full until it is let go. */
		if (sc->pin_n[dst]) {
			uint32_t p = sc->pin[dst][sc->pin_first[dst]];
			if ((int32_t)(p - h) < 0)
				sc->tx_head[dst] = p;
			if (t - p >= sc->g.slots) {
				sc->ctr.pin_full++;
				return NULL;
			}
		}
	}
	return shm_slot(r, sc->g, t);
}

/* Publish the frame of len bytes in dst's free slot s; ring dst's doorbell if it waits.  (irq off) */
static void publish(struct shm *sc, int dst, struct shm_slot *s, uint32_t len)
{
	struct shm_ring *r = sc->tx_ring[dst];
	uint32_t t = sc->tx_tail[dst] + 1;

	/* Padded to Ethernet's minimum, as a NIC would: the layers above see the same frames. */
	if (len < ETH_MIN_FRAME) {
		memset(s->frame + len, 0, ETH_MIN_FRAME - len);
		len = ETH_MIN_FRAME;
	}
	/* The stamp last: the frame is there once it is. */
	__atomic_store_n(&s->stamp, shm_stamp(t, len), __ATOMIC_RELEASE);
	sc->tx_tail[dst] = t;
	__atomic_store_n(&r->tail, t, __ATOMIC_RELAXED);
	/* The stamp must be visible before armed is read (a store then a load). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (shm_ctl(sc->mem, dst)->armed) {
		/* One doorbell per drain: the one rung before wakes dst to this frame too (shm_ring.h). */
		uint32_t rung = r->rung;
		if (rung != r->heard) {
			sc->ctr.doorbells_spared++;
			return;
		}
		r->rung = rung + 1;
		*(volatile uint32_t *)(sc->regs + Doorbell) = (uint32_t)dst << 16;
		sc->ctr.doorbells++;
	}
}

/* Copy a frame of len (14 or more) bytes: Ethernet's inline, a long one by memcpy (it knows QEMU's TLB). */
static inline void copy_frame(uint8_t *d, const uint8_t *s, uint32_t len)
{
	if (__builtin_expect(len <= ETH_MAX_FRAME, 1))
		memcpy_words(d, s, len);
	else
		memcpy(d, s, len);
}

/* Copy one frame into the ring to dst.  (irq off) */
static inline int put_frame(struct shm *sc, int dst, const uint8_t *frame, uint16_t len)
{
	struct shm_slot *s = free_slot(sc, dst);

	if (!s)
		return -EAGAIN;
	copy_frame(s->frame, frame, len);
	publish(sc, dst, s, len);
	return 0;
}

/* netdev ops->tx_begin: the slot a unicast frame to another node is built in. */
static uint8_t *shm_tx_begin(struct netdev *nd, const uint8_t dst[ETH_ALEN], size_t len)
{
	struct shm *sc = nd->softc;
	int d = mac_node(sc, dst);

	if (d < 0 || d == sc->me || len < SHM_FRAME_MIN || len > sc->nd.frame_max ||
	    !(sc->tx_slot = free_slot(sc, d)))
		return NULL;
	sc->tx_dst = d;
	return sc->tx_slot->frame;
}

static void shm_tx_commit(struct netdev *nd, size_t len)
{
	struct shm *sc = nd->softc;

	publish(sc, sc->tx_dst, sc->tx_slot, (uint32_t)len);
	nd->stats.tx_frames++;
	nd->stats.tx_bytes += len;
}

/* ops->tx_commit_pinned: the frame's count joins its node's pins before it goes. */
static void shm_tx_commit_pinned(struct netdev *nd, size_t len)
{
	struct shm *sc = nd->softc;
	int d = sc->tx_dst;

	/* free_slot keeps the pins within a ring's slots: there is room. */
	sc->pin[d][(sc->pin_first[d] + sc->pin_n[d]) & (SHM_SLOTS_MAX - 1)] = sc->tx_tail[d];
	sc->pin_n[d]++;
	shm_tx_commit(nd, len);
}

/* ops->tx_unpin: the n oldest pins to dst go. */
static void shm_tx_unpin(struct netdev *nd, const uint8_t dst[ETH_ALEN], unsigned n)
{
	struct shm *sc = nd->softc;
	int d = mac_node(sc, dst);

	if (d < 0 || n > sc->pin_n[d]) {
		sc->ctr.pin_unknown++;	/* a caller's bug: let go what there is */
		if (d < 0)
			return;
		n = sc->pin_n[d];
	}
	sc->pin_first[d] = (uint8_t)((sc->pin_first[d] + n) & (SHM_SLOTS_MAX - 1));
	sc->pin_n[d] = (uint8_t)(sc->pin_n[d] - n);
}

/* netdev ops->transmit. */
static int shm_transmit(struct netdev *nd, struct pktbuf *pb)
{
	struct shm *sc = nd->softc;
	const uint8_t *dmac = pb->data;
	int r = 0, dst;

	if (pb->len < SHM_FRAME_MIN || pb->len > sc->nd.frame_max)
		return -EINVAL;
	if (dmac[0] & 1) {
		/* Broadcast and multicast: every other node. */
		for (int i = 0; i < sc->nodes; i++)
			if (i != sc->me && put_frame(sc, i, pb->data, pb->len) < 0)
				r = -EAGAIN;
		if (r < 0)
			nd->stats.tx_ring_full++;
		r = 0;			/* what reached the others went */
	} else if ((dst = mac_node(sc, dmac)) >= 0 && dst != sc->me) {
		r = put_frame(sc, dst, pb->data, pb->len);
		if (r < 0) {
			nd->stats.tx_ring_full++;
			return r;
		}
	} else {
		sc->ctr.no_dest++;		/* a station no ring leads to */
	}
	nd->stats.tx_frames++;
	nd->stats.tx_bytes += pb->len;
	return r;
}

/* The stamp of the next frame from src, whether or not it is there yet. */
static inline uint32_t next_stamp(struct shm *sc, int src)
{
	return __atomic_load_n(&shm_slot(sc->rx_ring[src], sc->g, sc->rx_head[src])->stamp,
			       __ATOMIC_ACQUIRE);
}

/* Frames waiting in any of this node's rings?  (irq off) */
static int pending(struct shm *sc)
{
	for (int i = 0; i < sc->npeers; i++) {
		int src = sc->peer[i];
		if (shm_stamp_is(next_stamp(sc, src), sc->rx_head[src] + 1))
			return 1;
	}
	return 0;
}

/*
 * A slot whose length no frame has: counted, skipped, and its stamp made
 * one no count near this one has (unless the producer wrote the slot
 * meanwhile), so that it is not taken again.  Otherwise, when the repair
 * puts this node's head back to the producer's count, a stamp another
 * process wrote there for that count is taken again at every poll, and
 * the head the producer reads stays past its tail for good.  Cold: the
 * poll loop keeps its registers.
 */
static __attribute__((cold, noinline)) void bad_slot(struct shm *sc, struct shm_slot *s, uint32_t stamp,
						      uint32_t count)
{
	sc->ctr.bad_lengths++;
	sc->nd.stats.rx_errors++;
	__atomic_compare_exchange_n(&s->stamp, &stamp, shm_stamp(count - 0x8000, 0), 0, __ATOMIC_RELAXED,
				    __ATOMIC_RELAXED);
}

/* A poll that took bad slots: the most one took, for the exit line (tests check the bound). */
static __attribute__((cold, noinline)) void bad_run(struct shm *sc, uint64_t n)
{
	if (n > sc->ctr.bad_run_most)
		sc->ctr.bad_run_most = n;
}

/* The rings in turn, up to budget frames and bad slots (shm_poll's body). */
static inline __attribute__((always_inline)) int shm_poll_rings(struct shm *sc, int budget)
{
	struct netdev *nd = &sc->nd;
	int n = 0;

	/* The other nodes in turn, from next_src. */
	for (int k = 0; k < sc->npeers && n < budget; k++) {
		int i = sc->next_src + k;
		if (i >= sc->npeers)
			i -= sc->npeers;
		int src = sc->peer[i];
		struct shm_ring *r = sc->rx_ring[src];
		uint32_t h = sc->rx_head[src];
		while (n < budget) {
			struct shm_slot *s = shm_slot(r, sc->g, h);
			uint32_t stamp = __atomic_load_n(&s->stamp, __ATOMIC_ACQUIRE);
			if (!shm_stamp_is(stamp, h + 1))
				break;
			trace_point(TS_NIC_RX);
			uint32_t len = stamp & 0xffff;
			if (len >= SHM_FRAME_MIN && len <= sc->nd.frame_max) {
				int r2;
				sc->in_rx = 1;
				if (__builtin_expect(len >= SHM_IN_PLACE_MIN, 0) && nd->rx_shared) {
					/* Where it lies: the layer above copies what it reads twice. */
					r2 = netdev_input_shared(nd, s->frame, len);
				} else {
					copy_frame(sc->rx_frame, s->frame, len);
					r2 = netdev_input_frame(nd, sc->rx_frame, len);
				}
				sc->in_rx = 0;
				if (r2 < 0) {
					/* Left in the ring: its producer waits (back-pressure, not loss). */
					sc->next_src = i;
					return n;
				}
				n++;
			} else {
				/* Counted against the budget too: a writer stamping bad slots ahead cannot hold us here. */
				bad_slot(sc, s, stamp, h + 1);
				n++;
			}
			h++;
			sc->rx_head[src] = h;
			__atomic_store_n(&r->head, h, __ATOMIC_RELEASE);
		}
	}
	if (++sc->next_src >= sc->npeers)
		sc->next_src = 0;
	return n;
}

/* netdev ops->poll: take up to budget frames (and bad slots), the rings in turn.  (irq off) */
static int shm_poll(struct netdev *nd, int budget)
{
	struct shm *sc = nd->softc;
	uint64_t bad = sc->ctr.bad_lengths;
	int n;

	if (sc->in_rx)
		return 0;	/* called from a handler of the frame in rx_frame: not now */
	n = shm_poll_rings(sc, budget);
	if (__builtin_expect(sc->ctr.bad_lengths != bad, 0))
		bad_run(sc, sc->ctr.bad_lengths - bad);
	return n;
}

/*
 * Disarm, drain, re-arm, and look once more: bounded work.  At most
 * DRAIN_MAX frames a call, and a pass that takes nothing (the frame at a
 * ring's head waits for a packet buffer) ends it: a peer that keeps
 * writing, good frames or bad, cannot hold the node in interrupt context.
 * What is left is taken at the next doorbell or tick (shm_tick looks).
 * (irq off)
 */
#define DRAIN_MAX (8 * RX_BUDGET)

/*
 * Armed, as it should be before thread t runs (the one interrupted, or
 * the next): not for the thread in shm_busy, which looks at the rings
 * itself.  (irq off)
 */
static inline int arm_for(const struct shm *sc, const struct thread *t)
{
	return !sc->busy || sc->busy != t;
}

/* Every peer's doorbells so far heard: each may ring again (shm_ring.h).  (irq off) */
static inline void hear_doorbells(struct shm *sc)
{
	for (int i = 0; i < sc->npeers; i++) {
		struct shm_ring *r = sc->rx_ring[sc->peer[i]];
		uint32_t rung = r->rung;
		if (r->heard != rung)
			r->heard = rung;
	}
}

static void drain(struct shm *sc, int arm)
{
	int left = DRAIN_MAX;

	hear_doorbells(sc);
	for (;;) {
		int pass = 0, got;

		my_ctl(sc)->armed = 0;
		do {
			got = shm_poll(&sc->nd, left < RX_BUDGET ? left : RX_BUDGET);
			pass += got;
			left -= got;
		} while (got == RX_BUDGET && left > 0);
		if (!arm)
			break;		/* a sending thread looks again when it stops (shm_busy) */
		my_ctl(sc)->armed = 1;
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		/* A frame published before we re-armed rang no doorbell: look again, within the bound. */
		if (left <= 0 || pass == 0 || !pending(sc))
			break;
	}
	if (left <= 0)
		sc->ctr.drain_bounded++;
	/* Frames went out of this node's rings: a peer waiting for ring space may go on. */
	netdev_tx_space(&sc->nd);
}

/* MSI-X entry 0: a peer rang the doorbell. */
static void shm_intr(void *arg)
{
	struct shm *sc = arg;

	sc->nd.stats.irqs++;
	if (!sc->nd.polling)
		drain(sc, arm_for(sc, thread_current()));
}

/*
 * The shared memory is writable by any process that can open it: at every
 * tick, put back what another may have changed in this node's rings.  The
 * head this node published (the producer reads it for space) is written
 * again if it moved.  Where the producer's tail and this node's head
 * disagree with the stamps in the same way at two ticks in a row (never
 * for longer than the producer takes between its stamp and its tail):
 * a slot published whose stamp is wrong was damaged, and is skipped; a
 * producer more than a ring ahead wrote over slots not taken (a moved
 * head let it), and reading goes on from its oldest; a producer behind
 * this node's head means the head was wrong, and reading goes back to
 * the producer's count.  The channel sends again what was lost when the
 * hole shows (channel.h).  (irq off)
 */
static void shm_repair(struct shm *sc)
{
	for (int i = 0; i < sc->npeers; i++) {
		int src = sc->peer[i];
		struct shm_ring *r = sc->rx_ring[src];
		uint32_t h = sc->rx_head[src], t, ahead, to;

		if (__atomic_load_n(&r->head, __ATOMIC_RELAXED) != h) {
			__atomic_store_n(&r->head, h, __ATOMIC_RELEASE);
			sc->ctr.heads_restored++;
		}
		t = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
		ahead = t - h;		/* frames published and not taken, by the producer's count */
		if (ahead == 0 || (ahead <= sc->g.slots && shm_stamp_is(next_stamp(sc, src), h + 1))) {
			sc->suspect[src] = 0;	/* nothing wrong: empty, or the next frame is there */
			continue;
		}
		/*
		 * Where to go on from, should this still be so at the next tick:
		 * past a damaged slot; to the producer's oldest slot if it wrote
		 * over slots not taken (a moved head let it); back to its count
		 * if this node is ahead of it.
		 */
		to = ahead <= sc->g.slots ? h + 1 : ahead < 0x80000000u ? t - sc->g.slots : t;
		if (sc->suspect[src] != (to | 1u << 31) || sc->suspect_at[src] != h) {
			sc->suspect[src] = to | 1u << 31;
			sc->suspect_at[src] = h;
			continue;
		}
		sc->suspect[src] = 0;
		sc->ctr.slots_skipped += ahead <= 0x80000000u ? to - h : 0;
		sc->nd.stats.rx_errors++;
		sc->rx_head[src] = to;
		__atomic_store_n(&r->head, to, __ATOMIC_RELEASE);
	}
}

/* The tick: a frame whose doorbell never came, and senders waiting for ring space. */
static void shm_tick(void)
{
	struct shm *sc = the_shm;

	if (!sc)
		return;
	shm_repair(sc);
	hear_doorbells(sc);	/* one that rang and never came (a node restarted) holds no producer back */
	if (!sc->nd.polling && pending(sc))
		drain(sc, arm_for(sc, thread_current()));
	else if (sc->nd.tx_waiters.head)
		netdev_tx_space(&sc->nd);
}

static void shm_irq_enable(struct netdev *nd, int on)
{
	struct shm *sc = nd->softc;

	pci_msix_mask(&sc->msix, 0, !on);
	my_ctl(sc)->armed = on;
	if (on)
		drain(sc, 1);
}

/*
 * Poll the rings disarmed (interrupts off) until *flag is set (if flag),
 * a thread can run, or span TSC cycles have passed (SPAN_FOREVER: never);
 * with extend, each frame handled starts the wait again.  Every WINDOW_NS
 * the node re-arms and lets interrupts in for a moment (the tick, a
 * wakeup), so that it is armed whenever anything else may run.  Armed
 * again on return.
 */
#define SPAN_FOREVER (~0ULL)

static int poll_disarmed(struct shm *sc, volatile int *flag, uint64_t span, int extend)
{
	uint64_t now = cycles(), window = now + sc->window_cyc;
	uint64_t until = span == SPAN_FOREVER ? SPAN_FOREVER : now + span;

	my_ctl(sc)->armed = 0;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	while (!thread_runnable() && !(flag && *flag)) {
		trace_point(TS_WAIT);
		/*
		 * One pass of at most RX_BUDGET frames, then the clock: a flood,
		 * or a frame that waits for a packet buffer, neither keeps the
		 * interrupt window shut nor holds the loop past its span.
		 */
		if (pending(sc) && shm_poll(&sc->nd, RX_BUDGET) > 0) {
			/* Handled in the receive path, nothing to run: the wait starts again. */
			if (extend)
				until = cycles() + span;
			if (thread_runnable() || (flag && *flag))
				break;
		}
		now = cycles();
		if (now >= until)
			break;
		if (now >= window) {
			my_ctl(sc)->armed = 1;
			sti();
			/*
			 * The instruction after sti runs with interrupts still
			 * held (its shadow), and QEMU's TCG looks for them only
			 * where a block of code begins: the jump starts one.
			 */
			__asm__ volatile("pause\n\tjmp 1f\n1:\tpause" ::: "memory");
			cli();
			my_ctl(sc)->armed = 0;
			window = now + sc->window_cyc;
		}
		/*
		 * No pause here: under QEMU's TCG it leaves the translated code
		 * for the emulator's loop, about 250 ns, which a frame arriving
		 * then waits out; under KVM a pause loop ends in a VM exit.
		 */
		barrier();
	}
	/*
	 * Armed again before anything else runs, or the CPU halts; the loop
	 * has just looked, so the rings are drained only if a frame came
	 * before the arming was visible.  Not where the thread that runs next
	 * is one in shm_busy (it waited in the middle of a send): it looks
	 * itself when it stops.
	 */
	int arm = arm_for(sc, flag ? thread_current() : thread_next_ready());
	my_ctl(sc)->armed = arm;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (pending(sc))
		drain(sc, arm);
	else
		netdev_tx_space(&sc->nd);
	return flag ? *flag : 0;
}

/*
 * The CPU is about to halt (interrupts off): in adaptive and spin mode,
 * poll the rings disarmed first, until a thread can run (frames handled
 * in the receive path start the wait again).
 */
static void shm_idle(void)
{
	struct shm *sc = the_shm;

	if (!sc)
		return;
	if (sc->nd.polling || sc->nd.wait == NETDEV_WAIT_HALT) {
		if (sc->busy)
			my_ctl(sc)->armed = 1;	/* the mode changed under a send that waits: halting */
		return;
	}
	if (sc->nd.wait == NETDEV_WAIT_SPIN)
		poll_disarmed(sc, NULL, SPAN_FOREVER, 0);
	else
		poll_disarmed(sc, NULL, sc->spin_cyc, 1);
}

/*
 * netdev ops->poll_wait: a thread waits for *flag, polling as the idle CPU
 * would.  A spinning node's idle CPU polls on where the thread stops and
 * sleeps, so there the thread polls up to a tick: each stop arms the node
 * for the few microseconds until the idle loop polls, and a peer that
 * sent then rang (once a message longer than the spin time, in a
 * Madeleine bandwidth run).
 */
static int shm_poll_wait(struct netdev *nd, volatile int *flag)
{
	struct shm *sc = nd->softc;
	int tick = sc->nd.wait == NETDEV_WAIT_SPIN && sc->tick_cyc > sc->spin_cyc;

	return poll_disarmed(sc, flag, tick ? sc->tick_cyc : sc->spin_cyc, 0);
}

/*
 * netdev ops->busy: a thread sends (net_busy_begin) and looks at the rings
 * itself between its frames (NETDEV_BUSY_LOOK) and when it stops: no peer
 * need ring this node meanwhile.  A doorbell is an exit into QEMU for the
 * node that rings (16-90 us under TCG here, the host's CPUs shared), and
 * it wakes a host thread that takes a CPU from a node: a node that sent a
 * block was rung for the acknowledgements of its own frames, and in a
 * Madeleine message for its READY, each time it had taken the one before.
 * Disarmed while busy; an interrupt or tick that drains meanwhile leaves
 * it so, and so does the idle loop where the thread waited in the middle
 * of its send (arm_for).  At the end, armed again, then what came
 * meanwhile is taken.  (irq off)
 */
static void shm_busy(struct netdev *nd, int how)
{
	struct shm *sc = nd->softc;

	if (how == NETDEV_BUSY_START) {
		sc->busy = thread_current();
		my_ctl(sc)->armed = 0;
		return;
	}
	if (!sc->busy)
		return;
	if (how == NETDEV_BUSY_LOOK) {
		my_ctl(sc)->armed = 0;	/* an idle loop it waited in may have armed it */
		if (pending(sc)) {
			sc->ctr.busy_taken++;
			drain(sc, 0);
		}
		return;
	}
	sc->busy = NULL;
	my_ctl(sc)->armed = 1;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (pending(sc)) {
		sc->ctr.busy_taken++;
		drain(sc, 1);
	}
}

static int shm_set_wait(struct netdev *nd, int mode, unsigned spin_us)
{
	if (mode < NETDEV_WAIT_HALT || mode > NETDEV_WAIT_SPIN)
		return -EINVAL;
	nd->wait = mode;
	nd->spin_us = spin_us;
	((struct shm *)nd->softc)->spin_cyc = ns_to_cycles(spin_us * 1000ULL);
	return 0;
}

static void shm_link_check(struct netdev *nd)
{
	nd->link_up = 1;
}

static const struct netdev_ops shm_ops = {
	.transmit = shm_transmit,
	.poll = shm_poll,
	.irq_enable = shm_irq_enable,
	.link_check = shm_link_check,
	.set_wait = shm_set_wait,
	.poll_wait = shm_poll_wait,
	.busy = shm_busy,
	.tx_begin = shm_tx_begin,
	.tx_commit = shm_tx_commit,
	.tx_commit_pinned = shm_tx_commit_pinned,
	.tx_unpin = shm_tx_unpin,
};

static int shm_match(const struct pci_dev *d)
{
	return d->vendor == 0x1af4 && d->device == 0x1110;
}

static int shm_probe(struct pci_dev *d)
{
	struct pci_bar mem;
	struct shm *sc;
	int r = -ENODEV;

	if (netdev_get())
		return -EBUSY;
	sc = calloc(1, sizeof *sc);
	if (!sc)
		return -ENOMEM;
	sc->pci = d;
	pci_enable(d);
	sc->regs = pci_map_bar(d, 0, 0, RegsLen);
	if (pci_bar(d, 2, &mem) < 0 || mem.io || mem.size > UINT32_MAX)
		mem.size = 0;
	sc->mem = mem.size ? (uint8_t *)pci_map_bar(d, 2, 0, (uint32_t)mem.size) : NULL;
	if (!sc->regs || !sc->mem) {
		printf("ivshmem: %02x:%02x.%d: registers or shared memory cannot be mapped\n", d->bus,
		       d->dev, d->fn);
		goto free;
	}
	sc->size = mem.size;
	int id = (int)*(volatile uint32_t *)(sc->regs + IVPosition), expect;
	if (node_auto(&expect)) {
		/*
		 * The slots are the nodes' ids and the server's peer ids match them
		 * (boot/cluster gives node i the socket whose peers get ID i): with
		 * node=auto the id is the device's own, the count the one given.
		 */
		if (!expect) {
			printf("ivshmem: node=auto on the shared-memory link takes its id from the "
			       "server (ID %d) but needs nodes=<count>, not nodes=auto\n", id);
			r = -EINVAL;
			goto free;
		}
		if ((r = node_set_identity(id, expect)) < 0)
			goto free;
		printf("auto: node %d of %d (the shared-memory server's peer id)\n", id, expect);
	}
	sc->me = node_id;
	sc->nodes = num_nodes;
	if (id != sc->me) {
		printf("ivshmem: this device has ID %d but the node is %d: each node needs its own "
		       "server socket (boot/cluster --nic shm)\n", id, sc->me);
		r = -EINVAL;
		goto free;
	}
	sc->g = shm_geom(sc->size, sc->nodes);
	if (!sc->g.slots) {
		printf("ivshmem: %lu bytes of shared memory hold no rings for %d nodes (need %lu)\n",
		       sc->size, sc->nodes,
		       shm_bytes(sc->nodes, (struct shm_geom){ SHM_SLOT_MIN, SHM_SLOTS_MIN }));
		r = -ENOSPC;
		goto free;
	}
	/* Ethernet's frames in the smallest slots, as on any NIC; the slot's room in larger ones. */
	sc->nd.frame_max = sc->g.slot > SHM_SLOT_MIN ? shm_frame_max(sc->g) : ETH_MAX_FRAME;
	if (pci_msix_enable(d, 1, &sc->msix) < 0) {
		printf("ivshmem: no MSI-X: the device must be ivshmem-doorbell with vectors=1\n");
		goto free;
	}
	if ((sc->vector = irq_alloc(shm_intr, sc)) < 0) {
		r = sc->vector;
		goto free;
	}
	/* This node's consumer side starts where the ring is: a peer may have published already. */
	for (int src = 0; src < sc->nodes; src++) {
		struct shm_ring *ring = shm_ring(sc->mem, sc->nodes, sc->g, src, sc->me);
		sc->rx_ring[src] = ring;
		sc->rx_head[src] = ring->head;
		struct shm_ring *out = shm_ring(sc->mem, sc->nodes, sc->g, sc->me, src);
		sc->tx_ring[src] = out;
		sc->tx_tail[src] = out->tail;
		sc->tx_head[src] = out->head;
		/* A frame whose stamp went out just before a reboot, but not its tail, may be taken already. */
		if (out->head - out->tail - 1 < sc->g.slots)
			sc->tx_tail[src] = out->head;
		if (src != sc->me)
			sc->peer[sc->npeers++] = src;
	}
	sc->window_cyc = ns_to_cycles(WINDOW_NS);
	sc->tick_cyc = ns_to_cycles(1000000000ULL / TICK_HZ);
	sc->nd.name = "ivshmem";
	sc->nd.model = sc->model;
	sc->nd.ops = &shm_ops;
	sc->nd.softc = sc;
	sc->nd.link_up = 1;
	sc->nd.flags = NETDEV_LOSSLESS;
	_Static_assert(SHM_LINES == NETDEV_LINES && SHM_CTL == NETDEV_LINE, "the lines netdev.h names");
	sc->nd.lines = sc->mem + shm_lines(sc->nodes);
	shm_set_wait(&sc->nd, wait_mode(arg_str("shm_wait", NULL)),
		     (unsigned)arg_int("shm_spin_us", SPIN_US_DEFAULT));
	sc->nd.mac[0] = 0x02;
	sc->nd.mac[1] = 0x4e;
	sc->nd.mac[2] = 0x4f;
	sc->nd.mac[3] = 0x57;
	sc->nd.mac[4] = (uint8_t)(sc->me >> 8);
	sc->nd.mac[5] = (uint8_t)sc->me;
	snprintf(sc->model, sizeof sc->model,
		 "pci %02x:%02x.%d, %lu MiB shared, %u slots of %u KiB a ring, frames to %u bytes, msi-x",
		 d->bus, d->dev, d->fn, sc->size >> 20, sc->g.slots, sc->g.slot >> 10, sc->nd.frame_max);
	irqflags_t f = irq_save();
	pci_msix_route(&sc->msix, 0, sc->vector);
	my_ctl(sc)->armed = 1;
	the_shm = sc;
	irq_restore(f);
	d->softc = sc;
	timer_add_tick_hook(shm_tick);
	thread_add_idle_hook(shm_idle);
	if ((r = netdev_register(&sc->nd)) < 0)
		return r;
	return 0;
free:
	free(sc);
	return r;
}

/* At exit: what the rings refused and how often this node rang a doorbell. */
#define COUNTER_TYPE struct shm_counters
static const struct counter_row shm_rows[] = { SHM_COUNTERS(COUNTER_ROW) };
#undef COUNTER_TYPE

static void shm_exit(void)
{
	struct shm *sc = the_shm;

	if (sc)
		counters_print("ivshmem", shm_rows, COUNTER_ROWS(shm_rows), &sc->ctr);
}
EXIT_HOOK(ivshmem, shm_exit);

/*
 * In an NMI's dump (boot/cluster's --timeout): the exit line, then each
 * ring as both ends count it: to a peer, this node's tail and the head it
 * last read of the peer's; from a peer, the peer's tail, this node's head
 * (and the one it published, which another process may have moved), the
 * next slot's stamp and what the repair would do at the next tick.
 */
static void shm_dump(void)
{
	struct shm *sc = the_shm;

	if (!sc)
		return;
	shm_exit();
	for (int i = 0; i < sc->npeers; i++) {
		int p = sc->peer[i];
		printf("ivshmem: to n%d tail %u head %u (read %u); from n%d tail %u head %u (published %u), "
		       "next stamp %#x, repair %s%#x\n", p, sc->tx_tail[p],
		       __atomic_load_n(&sc->tx_ring[p]->head, __ATOMIC_RELAXED), sc->tx_head[p], p,
		       __atomic_load_n(&sc->rx_ring[p]->tail, __ATOMIC_RELAXED), sc->rx_head[p],
		       __atomic_load_n(&sc->rx_ring[p]->head, __ATOMIC_RELAXED), next_stamp(sc, p),
		       sc->suspect[p] ? "pending, to " : "none ", sc->suspect[p] & ~(1u << 31));
	}
}
DUMP_HOOK(ivshmem, shm_dump);

static const struct pci_driver ivshmem_driver = {
	.name = "ivshmem",
	.match = shm_match,
	.probe = shm_probe,
};
PCI_DRIVER(ivshmem_driver);
