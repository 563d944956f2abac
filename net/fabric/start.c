/*
 * The fabric's start-up: its arguments, one channel per peer
 * (net/fabric/channel.c), the timers, the EtherType handlers, and the
 * counters' report.  It starts the files below it (fabric.c, rx.c,
 * inject.c, discovery.c, send.c), and none of them calls it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/console.h"
#include "kernel/crc.h"
#include "kernel/incarnation.h"
#include "kernel/init.h"
#include "kernel/node.h"
#include "kernel/sync.h"
#include "kernel/thread.h"
#include "kernel/timer.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"
#include "net/fabric/fault.h"
#include "net/fabric/internal.h"
#include "net/net.h"
#include "net/pktshare.h"

static const struct argspec fabric_args[] = {
	{ "fault", ARG_STR, 0, 0, "receive faults, e.g. drop:0.05,dup:0.01,reorder:0.01,corrupt:0.01" },
	{ "peer_timeout_ms", ARG_INT, 100, 3600000, "declare a silent peer dead after this (default 10000)" },
	{ "seed", ARG_INT, 0, 0x7fffffff, "fault injection random seed (default: node id)" },
	{ "fault_node", ARG_INT, 0, 63, "only this node injects the faults of fault= (default: every node)" },
	{ "fabric_tx_bufs", ARG_INT, 4, PKT_POOL_BUFS,
	  "packet buffers the send queues may hold together (default 384 of 1024)" },
	{ "auto_settle_ms", ARG_INT, 100, 3600000, "node=auto nodes=auto: the cluster is formed "
	  "after this long without a newcomer (default 3000)" },
	{ "auto_confirm_ms", ARG_INT, 10, 3600000, "node=auto nodes=N: the cluster is formed once N "
	  "stations have heard each other and no newcomer for this long (default 300)" },
	{ "auto_timeout_ms", ARG_INT, 1000, 86400000, "node=auto: give up (naming the stations "
	  "heard) if no agreement is reached in this long (default 300000)" },
	{ "frame", ARG_INT, FAB_FRAME_MAX, FAB_FRAME_LIMIT, "the longest frame this node's fabric sends "
	  "and takes (default: its NIC's); a pair uses the shorter of its two" },
	{ "key", ARG_SECRET, 0, 0, "cluster key (16 to 128 characters, the same on every node): every "
	  "fabric frame carries a SipHash-2-4 MAC and is taken at most once" },
	{ "cluster", ARG_STR, 0, 0, "the cluster's name (1 to 64 characters, the same on every node): "
	  "the salt of the key's derivation from key=, so that two clusters with one passphrase "
	  "have two keys (default now)" },
	{ NULL, 0, 0, 0, NULL },
};

static int fabric_check_args(const struct cmdline *c, char *err, size_t errlen)
{
	const char *f = cmdline_get(c, "fault");
	struct fault_cfg tmp;

	const char *k = cmdline_get(c, "key");

	if (f && fault_parse(f, &tmp, err, errlen) < 0)
		return -EINVAL;
	if (k && (strlen(k) < FABRIC_KEY_MIN || strlen(k) > FABRIC_KEY_MAX)) {
		snprintf(err, errlen, "key: %zu characters; a cluster key has %d to %d", strlen(k),
			 FABRIC_KEY_MIN, FABRIC_KEY_MAX);
		return -EINVAL;
	}
	const char *cl = cmdline_get(c, "cluster");
	if (cl && (strlen(cl) < 1 || strlen(cl) > FAB_CLUSTER_MAX)) {
		snprintf(err, errlen, "cluster: %zu characters; a cluster's name has 1 to %d", strlen(cl),
			 FAB_CLUSTER_MAX);
		return -EINVAL;
	}
	return 0;
}

static const struct arg_table fabric_argtab = { "fabric", fabric_args, fabric_check_args };
ARGS_REGISTER(fabric_argtab);

/* --- timers ---------------------------------------------------------------- */

/*
 * Retransmission, probes, delayed acks and the dead-peer check all run from
 * the periodic tick (TICK_HZ) rather than from timers of their own: a lost
 * frame waits up to a tick longer for its retransmission (SACK recovers
 * most losses in streams sooner), and loss-free traffic costs no timer
 * work at all, which matters under QEMU where programming the LAPIC timer
 * wakes the emulator's main loop.
 */

/* The tick: every channel's timers, delayed acks included (interrupt context). */
static void fabric_tick(void)
{
	uint64_t now = now_ns();

	for (int i = 0; i < fab.nnodes; i++) {
		if (i == fab.me)
			continue;
		chan_timer(&fab.peers[i].ch, now);
		/* Refused messages are offered again every tick, resumed or not. */
		if (fab.peers[i].ch.blocked)
			chan_resume(&fab.peers[i].ch, now);
		fab_after_chan_op(&fab.peers[i]);
	}
	if (__builtin_expect(fab_park_busy(), 0))
		fab_park_flush(fab_park_late());
}

/* The CPU is about to halt: acknowledge what arrived (interrupts off). */
static void fabric_idle(void)
{
	uint64_t now = 0;

	for (int i = 0; i < fab.nnodes; i++) {
		/* A lossless channel acknowledges for credit only (channel.h). */
		if (i != fab.me && fab.peers[i].ch.ack_pending && !fab.peers[i].ch.cfg.lossless) {
			if (!now)
				now = now_ns();
			chan_flush_ack(&fab.peers[i].ch, now);
		}
	}
}

/* The EtherType handler (interrupt context). */
static void fabric_input(struct pktbuf *pb)
{
	if (fab_inject_any())
		fab_inject(pb);
	else
		fab_process(pb);
}

/* --- start-up -------------------------------------------------------------- */

static int fabric_init(void)
{
	char desc[128];
	unsigned window;

	fab_park_bind(fab.handlers, &fab.ctr);
	if (!net_up())
		return -ENODEV;
	fab.me = node_id;
	fab.nnodes = num_nodes;
	fab.peers = calloc((size_t)fab.nnodes, sizeof *fab.peers);
	if (!fab.peers)
		return -ENOMEM;
	fab.inc = incarnation();
	if (fab_cluster_key(&fab.key)) {
		fab.keyed = 1;
		fab.hello_seal.key = fab.key;
		for (int i = 0; i < fab.nnodes; i++)
			fab.peers[i].hello_rx.key = fab.key;
	}
	if (arg_int("peer_timeout_ms", 0))
		fab.peer_timeout_ns = (uint64_t)arg_int("peer_timeout_ms", 10000) * 1000000ULL;
	if ((fab.pkt_tx = pkt_consumer("fabric-tx", (int)arg_int("fabric_tx_bufs", FAB_PKT_SHARE))) < 0)
		return fab.pkt_tx;
	fab_inject_init(fab_process);
	fab.inject = fab_inject_any();
	/* A lossless link is lossless unless this node injects faults. */
	fab.lossless = net_link_lossless() && !fab_inject_any();
	/* The longest message this node's NIC carries; a pair uses the shorter of its two (HELLO). */
	fab.frame_max = net_frame_max() < FAB_FRAME_LIMIT ? net_frame_max() : FAB_FRAME_LIMIT;
	if (fab.frame_max > (uint32_t)arg_int("frame", FAB_FRAME_LIMIT))
		fab.frame_max = (uint32_t)arg_int("frame", FAB_FRAME_LIMIT);
	fab.link_exact = net_link_lossless();
	fab.mtu_max = fab_payload_max(fab.frame_max);

	/* Every peer's window fits the receive ring and the buffer pool together. */
	window = fab.nnodes > 1 ? 192 / (unsigned)(fab.nnodes - 1) : CHAN_WIN_MAX;
	if (window > CHAN_WIN_MAX)
		window = CHAN_WIN_MAX;
	if (window < 4)
		window = 4;
	while (window & (window - 1))	/* a power of two: slots are found by masking */
		window &= window - 1;

	for (int i = 0; i < fab.nnodes; i++) {
		struct chan_cfg cfg = {
			.me = fab.me,
			.peer = i,
			.window = window,
			.rto_init_ns = 20000000,
			.rto_min_ns = 2000000,
			.rto_max_ns = 500000000,
			.ack_delay_ns = 5000000,	/* a backstop: acks go out at idle */
			.dead_ns = fab.peer_timeout_ns,
		};
		memcpy(cfg.my_mac, net_mac(), 6);
		fab.peers[i].frame = fab.peers[i].frame_ok = FAB_FRAME_MAX;
		/*
		 * Frames sent in place keep their payload until acknowledged
		 * (channel.h), in slots for the longest this NIC sends; failing
		 * that much memory, for Ethernet's and its frames are Ethernet's.
		 */
		if (fab.lossless && i != fab.me) {
			cfg.kept_stride = chan_kept_stride(fab.mtu_max);
			if (!(cfg.kept = malloc((size_t)window * cfg.kept_stride)) && fab.mtu_max > FAB_MTU) {
				printf("fabric: no memory to keep %u frames of %zu bytes for node %d: "
				       "frames of %d bytes to it\n", window, fab.mtu_max, i, FAB_FRAME_MAX);
				cfg.kept_stride = chan_kept_stride(FAB_MTU);
				cfg.kept = malloc((size_t)window * cfg.kept_stride);
			}
		}
		if (fab.keyed) {
			cfg.seal = &fab.peers[i].tx_seal;	/* its key comes with the binding */
			fab.peers[i].m.keep_past = 1;
		}
		/*
		 * Unkeyed, where the link keeps a slot as written until let go
		 * (the shared-memory link), a long frame sent in place is kept
		 * there, not copied: one copy of its bytes on this node, not two.
		 */
		cfg.by_ref = !fab.keyed && net_tx_pins();
		chan_init(&fab.peers[i].ch, &cfg, &fab_chan_ops, &fab.peers[i]);
	}
	timer_add_tick_hook(fabric_tick);
	thread_add_idle_hook(fabric_idle);
	if (net_register(ETHERTYPE_FABRIC, fabric_input) < 0 ||
	    net_register_frame(ETHERTYPE_FABRIC, fab_process_frame) < 0)
		return -EBUSY;
	/* Long frames read where they lie in the ring, but under a key: its tag is over bytes of our own. */
	if (!fab.keyed)
		net_set_rx_shared(ETHERTYPE_FABRIC, fab_process_shared);
	fab.ready = 1;
	fab_inject_describe(desc, sizeof desc);
	printf("fabric: node %d of %d, incarnation %016lx (%s), window %u frames per peer, "
	       "frames to %u bytes, peer timeout %lu ms, %s%s%s%s%s\n",
	       fab.me, fab.nnodes, fab.inc, incarnation_source(), window, fab.frame_max,
	       fab.peer_timeout_ns / 1000000,
	       fab.keyed ? "keyed (SipHash-2-4 MAC, replay window)" : "crc32c ",
	       fab.keyed ? "" : crc32c_impl(),
	       fab.lossless ? ", lossless link (no CRC, acks for credit)" : "",
	       fab_inject_any() ? ", receive faults: " : "", fab_inject_any() ? desc : "");
	if (fab.keyed)
		printf("fabric: the cluster key derived from key= by scrypt (N %d, r %d: %d KiB) in %lu ms, "
		       "salted with cluster=%s\n", FAB_KEY_N, FAB_KEY_R, FAB_KEY_N * 128 * FAB_KEY_R / 1024,
		       (unsigned long)(fab.key_ns / 1000000), arg_str("cluster", FAB_CLUSTER_DEFAULT));
	if (fab.keyed && strcmp(incarnation_source(), "tsc jitter") == 0)
		printf("fabric: warning: this CPU gave no usable RDSEED or RDRAND; the incarnation and "
		       "handshake challenges come from TSC jitter, which is not an entropy source%s\n",
		       incarnation_refused() ? " (it gave values a working DRNG never gives: 0, all ones, repeats)" : "");
	fab_discovery_start();
	return 0;
}

/* The kernel's protocols have registered: deliver what waited for them. */
static int fabric_start(void)
{
	if (!fab.ready)
		return -ENODEV;
	/*
	 * The grace first, then started, interrupts off: a tick between the
	 * two (TCG takes one after now_ns's rdtsc) offered a held message
	 * to a fabric started with no grace, which dropped it as no one's
	 * after its sender had counted it delivered.
	 */
	irqflags_t f = irq_save();
	fab.app_grace_end = now_ns() + FAB_APP_GRACE_NS;
	fab.started = 1;
	irq_restore(f);
	fabric_resume();
	return 0;
}

/* Nothing this node sent may be lost because it stopped. */
static void fabric_exit(void)
{
	fabric_shutdown(3000000000ULL, 100000000ULL);
}

INIT_HOOK(INIT_SUBSYS_3, fabric, fabric_init);
INIT_HOOK(INIT_START, fabric_start, fabric_start);
EXIT_HOOK(fabric, fabric_exit);

#define COUNTER_TYPE struct fabric_counters
static const struct counter_row fabric_rows[] = { FABRIC_COUNTERS(COUNTER_ROW) };
#undef COUNTER_TYPE

void fabric_print_stats(void)
{
	struct fabric_counters c;

	if (!fab.ready)
		return;
	fabric_counters(&c);
	counters_print("fabric", fabric_rows, COUNTER_ROWS(fabric_rows), &c);
	for (int i = 0; i < fab.nnodes; i++) {
		const struct chan *ch = &fab.peers[i].ch;
		if (i == fab.me)
			continue;
		printf("fabric: peer n%d%s srtt %lu us rto %lu us, tx %lu retx %lu+%lu (timeout+sack), "
		       "rx %lu dup %lu ooo %lu outside %lu\n",
		       i, ch->dead ? " DEAD" : "", ch->srtt / 1000, ch->rto / 1000, ch->stats.tx_data,
		       ch->stats.tx_retx_timeout, ch->stats.tx_retx_sack, ch->stats.rx_data,
		       ch->stats.rx_dup, ch->stats.rx_ooo, ch->stats.rx_outside_window);
	}
	fab_auto_print_stats();
}

/*
 * An NMI's dump (kernel/init.h, DUMP_HOOK): each peer's binding and
 * channel as they stand (sequence numbers, what is in flight, timers),
 * then the counters and the NIC's.  Reads only.
 */
static void fabric_dump(void)
{
	uint64_t now = now_ns();

	if (!fab.ready)
		return;
	printf("fabric: node %d of %d, HELLOs sent %lu heard %lu\n", fab.me, fab.nnodes,
	       (unsigned long)fab.ctr.hello_tx, (unsigned long)fab.ctr.hello_rx);
	for (int i = 0; i < fab.nnodes; i++) {
		const struct peer *p = &fab.peers[i];
		const struct chan *ch = &p->ch;
		if (i == fab.me)
			continue;
		printf("fabric: peer n%d %s%s%s, snd una %u nxt %u tx %u limit %u, rcv nxt %u dlv %u ooo %u%s, "
		       "rto in %ld ms, quiet in %ld ms, heard %lu ms ago\n", i,
		       member_up(&p->m) ? "up" : p->known ? "bound, has not bound us" : "not bound",
		       ch->cfg.lossless ? ", lossless" : "", ch->dead ? ", DEAD" : "", ch->snd_una, ch->snd_nxt,
		       ch->snd_tx, ch->snd_limit, ch->rcv_nxt, ch->dlv_nxt, ch->rx_ooo, ch->blocked ? ", blocked" : "",
		       ch->rto_deadline ? (long)((int64_t)(ch->rto_deadline - now) / 1000000) : -1L,
		       ch->quiet_deadline ? (long)((int64_t)(ch->quiet_deadline - now) / 1000000) : -1L,
		       ch->last_heard ? (unsigned long)((now - ch->last_heard) / 1000000) : 0UL);
	}
	fabric_print_stats();
	net_print_stats();
}
DUMP_HOOK(fabric, fabric_dump);
