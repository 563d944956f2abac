/*
 * The NIC interface (STYLE.md 1-4): what every NIC driver provides and
 * the one thing above it that consumes it, the demultiplexer in net/.
 * A driver fills a struct netdev and registers it; nothing above knows
 * which NIC it runs on.  This header, drivers/pktbuf.h and drivers/eth.h
 * are all that the layers above see of drivers; drivers include nothing from above.
 *
 * Receive: the driver's interrupt handler (or ops->poll in polling mode)
 * takes filled RX descriptors and hands each frame to netdev_input(),
 * which passes it to the receive hook; the pktbuf then belongs to the
 * hook.  Exactly one hook is set, by the demultiplexer (net/net.c); a
 * frame that arrives before it is set is counted and dropped.  A received
 * frame may start at the very beginning of its buffer (pb->data ==
 * pb->buf: the e1000 uses all 2048 bytes), so nothing may prepend to it
 * in place.  The hook runs in interrupt context: short, never sleeping.
 *
 * A NIC whose receive ring is memory other machines write (the
 * shared-memory link) copies each frame out into memory of its own and
 * hands it up with netdev_input_frame(), valid until the call returns:
 * the hook above processes it where it lies and copies what it keeps, so
 * that no pool buffer is taken for a frame nobody keeps.  Where the layer
 * above asks for it (rx_shared set) and reads each field of shared memory
 * once, a long frame goes up where it lies in the ring, through that
 * hook instead: the layer above copies what it does not take from there.
 *
 * Transmit: ops->transmit() takes its own reference on the pktbuf and
 * posts it; the caller keeps (and may drop) its own.  The driver counts
 * tx_frames/tx_bytes (and tx_ring_full); netdev_input counts rx_frames/
 * bytes.  It never sleeps: with the TX ring full it returns -EAGAIN and
 * the caller retries after the tx-space waiters are woken (the driver
 * calls netdev_tx_space() when it reclaims completed descriptors).  A
 * NIC whose transmit ring is memory the CPU writes may also offer
 * ops->tx_begin/tx_commit: the frame is built in the ring itself, with
 * no buffer and no copy.
 */
#ifndef DRIVERS_NETDEV_H
#define DRIVERS_NETDEV_H

#include <stddef.h>
#include <stdint.h>

#include "kernel/counters.h"

#include "drivers/eth.h"
#include "drivers/pktbuf.h"
#include "kernel/sync.h"
#include "kernel/trace.h"

/* The drivers' stages (kernel/trace.h): a received frame found in the ring, and done with. */
#define TS_NIC_RX 4
#define TS_RX_DONE 10

struct netdev;

/* The receive hook: owns pb (it must pkt_put it).  Interrupt context. */
typedef void (*netdev_rx_fn)(struct netdev *nd, struct pktbuf *pb);

/*
 * The receive hook for a frame in the driver's own memory (len bytes at
 * frame, only this node writes them), valid until it returns; it may
 * change the bytes.  0: taken; -ENOBUFS: not taken now (it needed a
 * buffer and found none): the driver leaves the frame where it was and
 * offers it again later, so that a full pool is back-pressure, not loss.
 * Interrupt context.
 */
typedef int (*netdev_rx_frame_fn)(struct netdev *nd, uint8_t *frame, size_t len);

struct netdev_ops {
	/* Queue pb for transmission.  0, or -EAGAIN if the ring is full. */
	int (*transmit)(struct netdev *nd, struct pktbuf *pb);
	/*
	 * Harvest up to budget received frames (calling netdev_input for
	 * each) and reclaim finished TX descriptors.  Return frames harvested.
	 * Called with interrupts off.
	 */
	int (*poll)(struct netdev *nd, int budget);
	/* Enable or disable the receive interrupt (polling mode disables it). */
	void (*irq_enable)(struct netdev *nd, int on);
	/* Re-read the link state into nd->link_up. */
	void (*link_check)(struct netdev *nd);
	/*
	 * How the node waits for frames when it has nothing to run (enum
	 * netdev_wait; spin_us for NETDEV_WAIT_ADAPTIVE).  NULL for a NIC
	 * that can only halt (polling its registers would stall QEMU).
	 */
	int (*set_wait)(struct netdev *nd, int mode, unsigned spin_us);
	/*
	 * A thread waits for *flag: poll the rings (as the idle CPU would,
	 * without asking for an interrupt) until *flag is set, another thread
	 * can run or spin_us have passed; ask for interrupts again before
	 * returning.  Called with interrupts off.  NULL where polling is not
	 * cheap.  Return *flag.
	 */
	int (*poll_wait)(struct netdev *nd, volatile int *flag);
	/*
	 * Optional, where the node polls its link anyway: a thread starts
	 * sending (NETDEV_BUSY_START) and looks at the rings itself between
	 * its frames (NETDEV_BUSY_LOOK) and when it stops (NETDEV_BUSY_STOP):
	 * until then the driver asks for no interrupt; at each look it takes
	 * what came, at the stop it asks again and takes what came.  Called
	 * with interrupts off (netdev_busy).
	 */
	void (*busy)(struct netdev *nd, int how);
	/*
	 * Optional: build a frame in place in the transmit ring.  tx_begin
	 * returns where up to len bytes of one unicast frame to dst go, or
	 * NULL (no room now, or the NIC cannot: use transmit); tx_commit
	 * sends the len bytes written there.  Interrupts off from begin to
	 * commit, and nothing else transmitted in between.
	 */
	uint8_t *(*tx_begin)(struct netdev *nd, const uint8_t dst[ETH_ALEN], size_t len);
	void (*tx_commit)(struct netdev *nd, size_t len);
	/*
	 * Optional, with tx_begin: tx_commit_pinned sends as tx_commit does and
	 * leaves the slot as written until tx_unpin lets it go (pins to one
	 * node go in the order they were made; tx_unpin lets the n oldest go).
	 * A pinned slot is never written again: the ring is full at it.
	 */
	void (*tx_commit_pinned)(struct netdev *nd, size_t len);
	void (*tx_unpin)(struct netdev *nd, const uint8_t dst[ETH_ALEN], unsigned n);
	/*
	 * Optional: add the NIC's own counters of frames it dropped (registers
	 * that clear when read) into stats.rx_nic_dropped.  Interrupts off.
	 */
	void (*read_counters)(struct netdev *nd);
};

enum {				/* struct netdev.flags */
	/*
	 * A frame transmit() took arrives once, intact and in order, or
	 * transmit() said it could not take it; nothing is dropped on the way.
	 */
	NETDEV_LOSSLESS = 1,
};

#define NETDEV_LINES 2			/* struct netdev.lines */
#define NETDEV_LINE 64			/* bytes of a line */

enum netdev_wait {
	NETDEV_WAIT_HALT,		/* halt until the NIC's interrupt */
	NETDEV_WAIT_ADAPTIVE,		/* poll up to spin_us, then halt */
	NETDEV_WAIT_SPIN,		/* poll until a thread can run; never halt */
};

/* The NIC's counters (kernel/counters.h): each field with the label it is printed with. */
#define NETDEV_COUNTERS(X) \
	X(LINE, "rx") \
	X(ONE, rx_frames, "frames") \
	X(ONE, rx_bytes, "bytes") \
	X(ONE, rx_no_buffer, "no buffer")	/* a ring slot could not be refilled */ \
	X(ONE, rx_errors, "errors")		/* frames the NIC flagged bad, or bad lengths */ \
	/* arrived before the demultiplexer was attached */ \
	X(ONE, rx_no_hook, "before the receive hook") \
	X(PART, "; tx") \
	X(ONE, tx_frames, "frames") \
	X(ONE, tx_bytes, "bytes") \
	X(ONE, tx_ring_full, "ring full")	/* transmit() returned -EAGAIN */ \
	X(PART, ";") \
	X(ONE, irqs, "irqs") \
	/* dropped by the NIC itself, by its counters (read_counters) */ \
	X(LINE_IF, "dropped by the NIC (its own counters)") \
	X(ONE, rx_nic_dropped, "frames")

struct netdev_stats {
	NETDEV_COUNTERS(COUNTER_FIELD)
};

struct netdev {
	const char *name;		/* driver name: "virtio-net", "e1000" */
	const char *model;		/* device model, for the boot log */
	uint8_t mac[ETH_ALEN];
	int link_up;
	/*
	 * The largest frame (without FCS) the NIC sends and takes; 0 at
	 * registration means ETH_MAX_FRAME.  Beyond PKT_MAX_FRAME only where
	 * every frame goes in place (tx_begin) and comes up through
	 * netdev_input_frame, or in large buffers (pkt_get_len).
	 */
	uint32_t frame_max;
	unsigned flags;			/* NETDEV_* properties of the link */
	int polling;			/* receive by polling, interrupt off */
	int wait;			/* enum netdev_wait, when not polling */
	unsigned spin_us;		/* NETDEV_WAIT_ADAPTIVE: poll this long */
	const struct netdev_ops *ops;
	void *softc;			/* the driver's state, opaque above */
	/*
	 * A NIC made of memory shared with the other nodes (the shared-memory
	 * link): NETDEV_LINES cache lines of it no frame uses, for measuring
	 * the memory itself; NULL on other NICs.
	 */
	volatile uint8_t *lines;
	netdev_rx_fn rx;		/* the receive hook (netdev_set_rx) */
	netdev_rx_frame_fn rx_frame;	/* the hook for netdev_input_frame */
	/* Set by the layer above: the hook for long frames where they lie in shared memory (above). */
	netdev_rx_frame_fn rx_shared;
	struct netdev_stats stats;
	struct waitq tx_waiters;	/* threads waiting for TX ring space */
};

/* Called by a driver once its device works.  0, or -EBUSY if a NIC is in use. */
int netdev_register(struct netdev *nd);

/* The node's NIC, or NULL if none was found. */
struct netdev *netdev_get(void);

/* Attach the receive hooks (the demultiplexer, once). */
void netdev_set_rx(struct netdev *nd, netdev_rx_fn fn, netdev_rx_frame_fn frame_fn);

/* Hand a received frame up (driver, interrupt context). */
void netdev_input(struct netdev *nd, struct pktbuf *pb);

/*
 * Hand up a frame in the driver's own memory (see netdev_rx_frame_fn): 0 or
 * -ENOBUFS.  Inline: it is one step of every such driver's receive loop.
 */
static inline int netdev_input_frame(struct netdev *nd, uint8_t *frame, size_t len)
{
	int r = 0;

	if (!nd->rx_frame)
		nd->stats.rx_no_hook++;
	else if ((r = nd->rx_frame(nd, frame, len)) < 0)
		nd->stats.rx_no_buffer++;
	if (r == 0) {
		nd->stats.rx_frames++;
		nd->stats.rx_bytes += len;
	}
	trace_point(TS_RX_DONE);
	return r;
}

/* Wake threads waiting for TX ring space (driver, interrupt context). */
void netdev_tx_space(struct netdev *nd);

/*
 * Polling mode: with on, the receive interrupt is off and received frames
 * arrive only when someone calls netdev_poll().  Return frames harvested.
 */
void netdev_set_polling(struct netdev *nd, int on);
int netdev_poll(struct netdev *nd);

/*
 * Wait up to the NIC's spin_us for *flag by polling it from this thread,
 * if the node waits by polling anyway (wait mode adaptive or spin, and the
 * driver can): the frame that sets *flag is then taken without a switch
 * to the idle thread and back.  Returns *flag (0: not set, sleep as usual).
 */
int netdev_poll_wait(struct netdev *nd, volatile int *flag);

/*
 * ops->busy, where it applies (a node that polls its link: wait mode
 * adaptive or spin; net_busy_begin calls it for a thread, interrupts on,
 * not preempted).  NETDEV_BUSY_START: 1 if it applied, and then
 * NETDEV_BUSY_STOP must follow; LOOK and STOP only after a START that
 * applied.
 */
enum { NETDEV_BUSY_STOP, NETDEV_BUSY_START, NETDEV_BUSY_LOOK };
int netdev_busy(struct netdev *nd, int how);

/* Print the driver's counters (and the NIC's own, read now) on the console. */
void netdev_print_stats(struct netdev *nd);

#endif
