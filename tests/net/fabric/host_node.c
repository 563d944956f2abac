/*
 * One node's fabric on the host, and its simulated peers; see host_node.h.
 * The first half is the kernel the fabric's files call (clock, timers,
 * waiting, the NIC, the command line), the second the peers.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/init.h"
#include "kernel/sync.h"
#include "kernel/thread.h"
#include "kernel/timer.h"
#include "kernel/trace.h"
#include "net/fabric/internal.h"
#include "net/net.h"
#include "tests/net/fabric/host_node.h"

int host_pkt_live(void);

struct hn_stats hn;

/* --- the kernel, for the fabric's files ---------------------------------------- */

int node_id = HN_ME, num_nodes = HN_NODES;
volatile int in_irq;
volatile int trace_on;
struct trace_rec trace_cur;
void trace_mark(trace_stage_t s) { (void)s; }

static uint64_t clock_ns = 1000000000ULL;
static uint64_t node_inc;
static int keyed;
static unsigned timeout_ms;
static const uint8_t node_mac[6] = { 2, 0x4e, 0x4f, 0x57, 0, HN_ME };

static void run_ticks(void);
static int tick_in_clock;	/* hn_start: the next read of the clock takes a tick first */

uint64_t now_ns(void)
{
	if (tick_in_clock) {
		/* An interrupt taken there, as TCG takes one after the rdtsc helper. */
		tick_in_clock = 0;
		run_ticks();
	}
	return clock_ns;
}
uint64_t ns_to_cycles(uint64_t ns) { return ns; }
uint64_t cycles_to_ns(uint64_t c) { return c; }
uint64_t incarnation(void) { return node_inc; }
const char *incarnation_source(void) { return "host"; }
int incarnation_refused(void) { return 0; }
/* Distinct, never 0, and not guessable from anything a frame carries (for these tests). */
uint64_t random64(void) { static uint64_t x = 0x9e3779b97f4a7c15ULL; x = x * 6364136223846793005ULL + 1442695040888963407ULL; return x | 1; }
void sched_maybe_preempt(void) { }
void thread_sleep_ns(uint64_t ns) { clock_ns += ns; }
void call_node_reset(int node) { (void)node; }

void kprintf(const char *fmt, ...)
{
	(void)fmt;
}

void panic(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	abort();
}

const char *arg_str(const char *key, const char *def)
{
	if (strcmp(key, "key") == 0)
		return keyed ? HN_KEY : NULL;
	return def;
}

void arg_forget(const char *key) { (void)key; }

long arg_int(const char *key, long def)
{
	if (strcmp(key, "peer_timeout_ms") == 0)
		return timeout_ms;
	return def;
}

int waitq_wait_timeout(struct waitq *wq, uint64_t timeout_ns)
{
	(void)wq;
	clock_ns += timeout_ns;
	return WAKE_TIMEOUT;
}

int waitq_wake_one(struct waitq *wq) { (void)wq; return 0; }
int waitq_wake_all(struct waitq *wq) { (void)wq; return 0; }

#define MAX_TIMERS 8
static struct ktimer *timers[MAX_TIMERS];
static void (*tick_hooks[4])(void), (*idle_hooks[4])(void);

void timer_arm(struct ktimer *t, uint64_t deadline, void (*fn)(void *), void *arg)
{
	t->deadline = deadline;
	t->fn = fn;
	t->arg = arg;
	t->armed = 1;
	for (int i = 0; i < MAX_TIMERS; i++)
		if (timers[i] == t || !timers[i]) {
			timers[i] = t;
			return;
		}
	abort();
}

int timer_cancel(struct ktimer *t)
{
	int was = t->armed;

	t->armed = 0;
	return was;
}

void timer_add_tick_hook(void (*fn)(void))
{
	for (int i = 0; i < 4; i++)
		if (!tick_hooks[i] || tick_hooks[i] == fn) {
			tick_hooks[i] = fn;
			return;
		}
}

void thread_add_idle_hook(void (*fn)(void))
{
	for (int i = 0; i < 4; i++)
		if (!idle_hooks[i] || idle_hooks[i] == fn) {
			idle_hooks[i] = fn;
			return;
		}
}

static const struct init_hook *hooks[32];
static int nhooks;

void host_init_hook_add(const struct init_hook *h)
{
	if (nhooks < 32)
		hooks[nhooks++] = h;
}

static void run_hooks(int level)
{
	for (int i = 0; i < nhooks; i++)
		if (hooks[i]->level == level && hooks[i]->fn() < 0)
			abort();
}

/* The NIC: the EtherType handler, and what the node transmits. */
static ethertype_handler_t fabric_rx;
static ethertype_frame_handler_t fabric_rx_frame;
static unsigned long frames_in;

struct frame {
	uint8_t *data;
	size_t len;
};

#define OUT_MAX 1024
static struct frame out[OUT_MAX];	/* the node's frames, not yet at the peers */
static int nout;

int net_up(void) { return 1; }
int net_unregister(uint16_t ethertype) { (void)ethertype; return 0; }
int net_link_lossless(void) { return 0; }
uint32_t net_frame_max(void) { return ETH_MAX_FRAME; }
void net_set_path_frame(uint32_t frame) { (void)frame; }
/* Frames go up copied, never where they lie. */
void net_set_rx_shared(uint16_t ethertype, ethertype_frame_handler_t fn) { (void)ethertype; (void)fn; }
void net_print_stats(void) {}
/* The node has a typed id: auto.c's hook does nothing, and AUTO frames are ignored. */
int node_auto(int *expect)
{
	if (expect)
		*expect = 0;
	return 0;
}
int node_set_identity(int id, int nodes)
{
	(void)id, (void)nodes;
	return -EINVAL;
}
void kernel_exit(int status)
{
	(void)status;
	abort();
}
const uint8_t *net_mac(void) { return node_mac; }

int net_register(uint16_t ethertype, ethertype_handler_t fn)
{
	if (ethertype != ETHERTYPE_FABRIC)
		return -EINVAL;
	fabric_rx = fn;
	return 0;
}

int net_register_frame(uint16_t ethertype, ethertype_frame_handler_t fn)
{
	if (ethertype != ETHERTYPE_FABRIC)
		return -ENOENT;
	fabric_rx_frame = fn;
	return 0;
}

/* The fake link is not lossless: the fabric never builds a frame in place here. */
uint8_t *net_tx_begin(const uint8_t dst[ETH_ALEN], size_t len)
{
	(void)dst, (void)len;
	return NULL;
}

void net_tx_commit(size_t len)
{
	(void)len;
	abort();
}

/* No slot is ever begun: nothing is pinned. */
int net_tx_pins(void)
{
	return 0;
}

void net_tx_commit_pinned(size_t len)
{
	(void)len;
	abort();
}

void net_tx_unpin(const uint8_t dst[ETH_ALEN], unsigned n)
{
	(void)dst, (void)n;
	abort();
}

int net_transmit(struct pktbuf *pb)
{
	if (nout == OUT_MAX)
		return -EAGAIN;		/* a full ring */
	out[nout].data = malloc(pb->len);
	memcpy(out[nout].data, pb->data, pb->len);
	out[nout].len = pb->len;
	nout++;
	return 0;
}

/* --- the node's app ------------------------------------------------------------ */

/* An app message: who sent it, which of its boots, its number, a checksum. */
struct app_msg {
	uint32_t magic;
	uint16_t src;
	uint16_t pad;
	uint64_t inc;
	uint32_t seq;
	uint32_t sum;
} __attribute__((packed));

#define APP_MAGIC 0x6e6f7721u

static uint32_t msg_sum(const uint8_t *p, size_t len)
{
	uint32_t s = 2166136261u;

	for (size_t i = offsetof(struct app_msg, sum) + 4; i < len; i++)
		s = (s ^ p[i]) * 16777619u;
	return s;
}

/*
 * What the node's handler saw of each peer: the incarnation of its last
 * message and that message's number; and every incarnation each peer has
 * had (a message of an old one may still arrive before the node learns of
 * the new one).
 */
static uint64_t seen_inc[HN_NODES];
static uint32_t seen_seq[HN_NODES];
#define MAX_INCS 2048		/* the fuzz target runs at most 2000 operations */
static uint64_t incs[HN_NODES][MAX_INCS];
static unsigned nincs[HN_NODES];

static int was_inc(int k, uint64_t inc)
{
	for (unsigned i = 0; i < nincs[k] && i < MAX_INCS; i++)
		if (incs[k][i] == inc)
			return 1;
	return 0;
}

static int node_handler(int src, const uint8_t *p, size_t len, struct pktbuf *pb)
{
	struct app_msg m;

	(void)pb;
	if (src < 0 || src >= HN_NODES || src == HN_ME || len > FAB_MTU)
		abort();	/* the fabric hands a handler only what it validated */
	hn.delivered[src]++;
	if (len < sizeof m) {
		hn.garbage++;
		return 0;
	}
	memcpy(&m, p, sizeof m);
	if (m.magic != APP_MAGIC || m.src != src || !was_inc(src, m.inc) || m.sum != msg_sum(p, len)) {
		hn.garbage++;
		return 0;
	}
	hn.good[src]++;
	if (m.inc != seen_inc[src]) {
		/* Another boot of src: its messages start again from the first. */
		seen_inc[src] = m.inc;
		seen_seq[src] = 0;
	}
	if (m.seq != seen_seq[src] + 1)
		hn.out_of_order++;
	seen_seq[src] = m.seq;
	return 0;
}

static int node_late_handler(int src, const uint8_t *p, size_t len, struct pktbuf *pb)
{
	(void)pb;
	if (src < 0 || src >= HN_NODES || src == HN_ME || len == 0 || len > FAB_MTU)
		abort();
	if (hn.late_refuse)
		return -EBUSY;
	for (size_t i = 1; i < len; i++)
		if (p[i] != p[0])
			hn.garbage++;
	if (hn.late_n < 64)
		hn.late_tags[hn.late_n] = p[0];
	hn.late_n++;
	return 0;
}

int hn_register_late(void)
{
	in_irq = 0;
	return fabric_register(HN_LATE_PROTO, node_late_handler);
}

static int node_raw_handler(int src, const uint8_t *p, size_t len, struct pktbuf *pb)
{
	(void)p;
	(void)pb;
	if (src < 0 || src >= HN_NODES || src == HN_ME || len > FAB_MTU)
		abort();
	hn.raw[src]++;
	return 0;
}

/* --- the simulated peers ------------------------------------------------------- */

struct sim {
	int id;
	uint64_t inc;
	uint8_t mac[6];
	struct member m;		/* the node, as this peer sees it */
	struct chan ch;			/* toward the node */
	struct fab_seal seal, hello_seal;
	struct fab_unseal unseal, hello_unseal;
	uint32_t next_seq;		/* its next app message */
};

static struct sim sims[HN_NODES];
static struct sipkey cluster;


#define HIST 64
static struct frame wire[HN_WIRE];	/* toward the node */
static int nwire;
static struct frame hist[HIST];		/* frames sent to the node, for replays */
static unsigned nhist;

static void put_on_wire(const uint8_t *data, size_t len)
{
	struct frame *h = &hist[nhist++ % HIST];

	if (nwire < HN_WIRE) {
		wire[nwire].data = malloc(len);
		memcpy(wire[nwire].data, data, len);
		wire[nwire].len = len;
		nwire++;
	}
	free(h->data);
	h->data = malloc(len);
	memcpy(h->data, data, len);
	h->len = len;
}

static int sim_xmit(void *ctx, struct pktbuf *pb)
{
	(void)ctx;
	put_on_wire(pb->data, pb->len);
	return 0;
}

static int sim_deliver(void *ctx, int peer, uint8_t proto, const uint8_t *p, size_t len,
		       struct pktbuf *pb)
{
	struct sim *s = ctx;

	(void)peer;
	(void)proto;
	(void)p;
	(void)len;
	(void)pb;
	hn.peer_got[s->id]++;
	return 0;
}

static struct pktbuf *sim_alloc(void *ctx, size_t len)
{
	(void)ctx;
	return pkt_get_len(len);
}

static const struct chan_ops sim_ops = { sim_xmit, sim_deliver, sim_alloc, NULL };

static void sim_boot(int k, uint64_t inc)
{
	struct sim *s = &sims[k];
	struct chan_cfg cfg = {
		.me = k, .peer = HN_ME, .window = 64,
		.rto_init_ns = 20000000, .rto_min_ns = 2000000, .rto_max_ns = 500000000,
		.ack_delay_ns = 5000000, .dead_ns = 3600000000000ULL,
	};

	if (s->ch.ops)
		chan_release(&s->ch);
	memset(s, 0, sizeof *s);
	s->id = k;
	s->inc = inc;
	incs[k][nincs[k]++ % MAX_INCS] = inc;
	memcpy(s->mac, node_mac, 6);
	s->mac[5] = (uint8_t)k;
	memcpy(cfg.my_mac, s->mac, 6);
	memcpy(cfg.peer_mac, node_mac, 6);
	if (keyed) {
		cfg.seal = &s->seal;
		s->hello_seal.key = cluster;
		s->hello_unseal.key = cluster;
		s->m.keep_past = 1;
	}
	chan_init(&s->ch, &cfg, &sim_ops, s);
}

/* The peer bound the node (incarnation m.inc): its channel's tag and keys follow. */
static void sim_bind(struct sim *s, int reset)
{
	uint16_t tag = fab_pair_tag(s->inc, s->m.inc);

	if (keyed) {
		fab_pair_key(&s->seal.key, &cluster, s->id, s->inc, HN_ME, s->m.inc);
		fab_pair_key(&s->unseal.key, &cluster, HN_ME, s->m.inc, s->id, s->inc);
		s->seal.ctr = 0;
		s->unseal.top = s->unseal.seen = 0;
	}
	if (reset)
		chan_reset(&s->ch, tag, node_mac);
	else
		s->ch.cfg.session = tag;
}

void hn_hello(int k, int broadcast)
{
	struct sim *s = &sims[k];
	struct fab_hdr h;
	struct fab_hello hello;
	uint8_t frame[FAB_FRAME_MAX];
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

	memset(&h, 0, sizeof h);
	memset(&hello, 0, sizeof hello);
	h.type = FAB_HELLO;
	h.src = (uint16_t)k;
	h.dst = broadcast ? FAB_BROADCAST : HN_ME;
	h.len = sizeof hello;
	hello.nodes = HN_NODES;
	memcpy(hello.mac, s->mac, 6);
	hello.inc = s->inc;
	if (!broadcast) {
		hello.echo = member_echo(&s->m);
		hello.nonce = member_nonce(&s->m);
		if (member_says_bound(&s->m))
			hello.flags |= FAB_HELLO_BOUND;
		hello.known = member_up(&s->m) ? 1ULL << HN_ME : 0;
	}
	memcpy(frame + CHAN_PAYLOAD_OFF, &hello, sizeof hello);
	size_t n = fab_build_sealed(frame, broadcast ? bcast : node_mac, s->mac, &h,
				    keyed ? &s->hello_seal : NULL);
	put_on_wire(frame, n);
}

/* Is the frame's tag right under u's key (the 64-bit counter as fab_unseal makes it)? */
static int sealed_for(const struct fab_unseal *u, const uint8_t *frame, const struct fab_hdr *h)
{
	const uint8_t *fh = frame + FAB_ETH_HLEN;
	struct fab_trailer t;
	struct siphash st;
	uint64_t ctr;

	memcpy(&t, fh + FAB_HDR_LEN + h->len, sizeof t);
	ctr = u->top + (uint64_t)(int64_t)(int32_t)(t.ctr - (uint32_t)u->top);
	siphash_init(&st, &u->key);
	siphash_update(&st, fh, FAB_HDR_LEN + h->len);
	siphash_update(&st, &ctr, sizeof ctr);
	return siphash_final(&st) == t.tag;
}

/* One of the node's frames reaches peer k. */
static void to_peer(int k, const uint8_t *data, size_t len)
{
	struct sim *s = &sims[k];
	struct fab_hdr h;
	const uint8_t *payload;

	if (fab_parse_link(data, len, k, HN_NODES, 0, keyed, &h, &payload) != FAB_OK)
		abort();	/* the node sends nothing a peer could not parse */
	if (h.type == FAB_HELLO) {
		struct fab_hello hello;
		if (keyed && fab_unseal(&s->hello_unseal, data, &h, 0) != FAB_OK)
			abort();
		memcpy(&hello, payload, sizeof hello);
		unsigned r = member_hello(&s->m, hello.inc, hello.nonce, hello.echo,
					  (hello.flags & FAB_HELLO_BOUND) != 0, data + 6,
					  h.dst == FAB_BROADCAST, random64());
		if (r & MEMBER_BIND)
			sim_bind(s, (r & MEMBER_RESET) != 0);
		if (r & MEMBER_REPLY)
			hn_hello(k, 0);
		return;
	}
	/* Frames to a peer that has not bound this incarnation of the node: dropped, as by rx.c. */
	if (s->m.inc != node_inc || h.session != fab_pair_tag(node_inc, s->inc))
		return;
	/*
	 * The tag checked here as well: the fuzzing build's fab_unseal does not,
	 * and a frame the node sealed for another pair (an incarnation a fuzzed
	 * HELLO made it bind, whose 16-bit tag is this pair's too) is not this
	 * peer's to count.
	 */
	if (keyed && !sealed_for(&s->unseal, data, &h))
		return;
	if (keyed && fab_unseal(&s->unseal, data, &h, 1) != FAB_OK) {
		fprintf(stderr, "host_node: peer %d refused a frame of the node's (type %u)\n", k, h.type);
		abort();	/* the node's own frames, once each */
	}
	if (h.type == FAB_RAW)
		return;
	struct pktbuf *pb = pkt_get();
	memcpy(pb->data, data, len);
	pb->len = (uint16_t)len;
	chan_input(&s->ch, &h, pb->data + (payload - data), pb, clock_ns);
}

void hn_flush(void)
{
	for (int i = 0; i < nout; i++) {
		uint16_t dst;
		memcpy(&dst, out[i].data + FAB_ETH_HLEN + offsetof(struct fab_hdr, dst), 2);
		if (dst == FAB_BROADCAST) {
			for (int k = 0; k < HN_NODES; k++)
				if (k != HN_ME)
					to_peer(k, out[i].data, out[i].len);
		} else if (dst < HN_NODES && dst != HN_ME) {
			to_peer(dst, out[i].data, out[i].len);
		} else {
			abort();
		}
		free(out[i].data);
	}
	nout = 0;
}

/* --- the node ------------------------------------------------------------------ */

/*
 * A frame to the node: every other one as the shared-memory link hands
 * them up (in place, net.h's frame handler), the others in a pktbuf, as
 * the Ethernet NICs do; a frame in place that is not taken (-ENOBUFS)
 * goes again in a pktbuf.
 */
static void node_input(const uint8_t *data, size_t len)
{
	static uint8_t frame[PKT_MAX_FRAME];
	struct pktbuf *pb;

	if (len > PKT_MAX_FRAME)
		len = PKT_MAX_FRAME;
	if (fabric_rx_frame && frames_in++ % 2) {
		memcpy(frame, data, len);
		in_irq = 1;
		int r = fabric_rx_frame(frame, len);
		in_irq = 0;
		if (r == 0)
			return;
	}
	if (!(pb = pkt_get()))
		return;
	memcpy(pb->data, data, len);
	pb->len = (uint16_t)len;
	in_irq = 1;
	fabric_rx(pb);
	in_irq = 0;
}

static void free_frames(struct frame *f, int *n)
{
	for (int i = 0; i < *n; i++)
		free(f[i].data);
	*n = 0;
}

static void node_free(void)
{
	if (fab.peers) {
		for (int i = 0; i < fab.nnodes; i++)
			chan_release(&fab.peers[i].ch);
		free(fab.peers);
	}
	fab_park_clear();
	memset(&fab, 0, sizeof fab);
	memset(fab_reset_hooks, 0, sizeof fab_reset_hooks);
}

/* hn_reset, or hn_reset_unstarted: the fabric bound and taking frames, INIT_START not run. */
static void reset(int key, unsigned peer_timeout_ms, int start)
{
	node_free();
	for (int k = 0; k < HN_NODES; k++)
		if (sims[k].ch.ops)
			chan_release(&sims[k].ch);
	free_frames(wire, &nwire);
	free_frames(out, &nout);
	memset(&hn, 0, sizeof hn);
	memset(timers, 0, sizeof timers);
	memset(seen_inc, 0, sizeof seen_inc);
	memset(seen_seq, 0, sizeof seen_seq);
	memset(nincs, 0, sizeof nincs);
	keyed = key;
	timeout_ms = peer_timeout_ms;
	clock_ns = 1000000000ULL;	/* every run from the same start: fuzz inputs replay alike */
	fab_key_from_text(&cluster, HN_KEY, NULL);
	node_inc = 0x1111000000000001ULL + clock_ns;
	fab.peer_timeout_ns = 10000000000ULL;
	run_hooks(INIT_SUBSYS_3);
	run_hooks(INIT_SUBSYS_4);
	if (start)
		run_hooks(INIT_START);
	if (fabric_register(HN_PROTO, node_handler) < 0 ||
	    fabric_register_raw(HN_PROTO, node_raw_handler) < 0)
		abort();
	for (int k = 0; k < HN_NODES; k++)
		if (k != HN_ME)
			sim_boot(k, 0x2222000000000000ULL + (uint64_t)k * 0x10001 + clock_ns);
}

void hn_reset(int key, unsigned peer_timeout_ms)
{
	reset(key, peer_timeout_ms, 1);
}

void hn_reset_unstarted(int key, unsigned peer_timeout_ms)
{
	reset(key, peer_timeout_ms, 0);
}

void hn_start(int tick_inside)
{
	tick_in_clock = tick_inside;
	run_hooks(INIT_START);
	tick_in_clock = 0;
}

int hn_teardown(void)
{
	node_free();
	for (int k = 0; k < HN_NODES; k++)
		if (sims[k].ch.ops)
			chan_release(&sims[k].ch);
	memset(sims, 0, sizeof sims);
	free_frames(wire, &nwire);
	free_frames(out, &nout);
	for (int i = 0; i < HIST; i++) {
		free(hist[i].data);
		hist[i].data = NULL;
	}
	nhist = 0;
	return host_pkt_live() == 0 ? 0 : -1;
}

int hn_waiting(void)
{
	return nwire;
}

static void take(int i, struct frame *f)
{
	*f = wire[i];
	memmove(&wire[i], &wire[i + 1], (size_t)(nwire - i - 1) * sizeof wire[0]);
	nwire--;
}

void hn_deliver(int i)
{
	struct frame f;

	if (i < 0 || i >= nwire)
		return;
	take(i, &f);
	node_input(f.data, f.len);
	free(f.data);
}

void hn_drop(int i)
{
	struct frame f;

	if (i < 0 || i >= nwire)
		return;
	take(i, &f);
	free(f.data);
}

void hn_damage(int i, size_t off, uint8_t x)
{
	if (i < 0 || i >= nwire || !x)
		return;
	wire[i].data[off % wire[i].len] ^= x;
	hn.damaged++;
}

void hn_replay(unsigned n)
{
	unsigned have = nhist < HIST ? nhist : HIST;

	if (!have)
		return;
	struct frame *h = &hist[n % have];
	uint8_t *copy = malloc(h->len);
	memcpy(copy, h->data, h->len);
	node_input(copy, h->len);
	free(copy);
}

void hn_inject(const uint8_t *bytes, size_t len)
{
	hn.damaged++;
	node_input(bytes, len);
}

void hn_settle(void)
{
	for (int round = 0; round < 64 && (nwire || nout); round++) {
		while (nwire)
			hn_deliver(0);
		for (int i = 0; i < 4; i++)
			if (idle_hooks[i]) {
				in_irq = 1;
				idle_hooks[i]();
				in_irq = 0;
			}
		hn_flush();
		for (int k = 0; k < HN_NODES; k++)
			if (k != HN_ME)
				chan_flush_ack(&sims[k].ch, clock_ns);
	}
}

/* The timer interrupt's tick hooks. */
static void run_ticks(void)
{
	int was = in_irq;

	in_irq = 1;
	for (int i = 0; i < 4; i++)
		if (tick_hooks[i])
			tick_hooks[i]();
	in_irq = was;
}

void hn_advance(unsigned ms)
{
	clock_ns += (uint64_t)ms * 1000000ULL;
	run_ticks();
	in_irq = 1;
	for (int i = 0; i < MAX_TIMERS; i++) {
		struct ktimer *t = timers[i];
		if (t && t->armed) {
			t->armed = 0;
			t->fn(t->arg);
		}
	}
	in_irq = 0;
	for (int k = 0; k < HN_NODES; k++)
		if (k != HN_ME)
			chan_timer(&sims[k].ch, clock_ns);
}

static int all_up(void)
{
	for (int k = 0; k < HN_NODES; k++) {
		if (k == HN_ME)
			continue;
		if (!fab.peers[k].known || fab.peers[k].m.inc != sims[k].inc ||
		    !member_up(&fab.peers[k].m) || !member_up(&sims[k].m) || sims[k].m.inc != node_inc)
			return 0;
	}
	return 1;
}

int hn_discover(void)
{
	for (int round = 0; round < 50 && !all_up(); round++) {
		for (int k = 0; k < HN_NODES; k++)
			if (k != HN_ME && !member_up(&sims[k].m))
				hn_hello(k, 1);
		hn_settle();
		hn_advance(20);
		hn_settle();
	}
	return all_up() ? 0 : -1;
}

static void fill_msg(struct sim *s, uint8_t *p, size_t len)
{
	struct app_msg m = { APP_MAGIC, (uint16_t)s->id, 0, s->inc, ++s->next_seq, 0 };

	for (size_t i = sizeof m; i < len; i++)
		p[i] = (uint8_t)(i * 7 + m.seq);
	memcpy(p, &m, sizeof m);
	m.sum = msg_sum(p, len);
	memcpy(p, &m, sizeof m);
}

int hn_send(int k, size_t len)
{
	struct sim *s = &sims[k];
	struct pktbuf *pb;
	int r;

	if (len < sizeof(struct app_msg))
		len = sizeof(struct app_msg);
	if (len > FAB_MTU)
		len = FAB_MTU;
	if (!(pb = pkt_get()))
		return -ENOBUFS;
	fill_msg(s, pb->data + CHAN_PAYLOAD_OFF, len);
	r = chan_send(&s->ch, pb, HN_PROTO, len, 0, clock_ns);
	if (r < 0) {
		s->next_seq--;
		pkt_put(pb);
	}
	return r;
}

int hn_send_late(int k, uint8_t tag, size_t len)
{
	struct sim *s = &sims[k];
	struct pktbuf *pb;
	int r;

	if (len == 0 || len > FAB_MTU || !(pb = pkt_get()))
		return -ENOBUFS;
	memset(pb->data + CHAN_PAYLOAD_OFF, tag, len);
	r = chan_send(&s->ch, pb, HN_LATE_PROTO, len, 0, clock_ns);
	if (r < 0)
		pkt_put(pb);
	return r;
}

int hn_raw(int k, size_t len)
{
	struct sim *s = &sims[k];
	struct fab_hdr h;
	uint8_t frame[FAB_FRAME_MAX];

	if (len > FAB_MTU)
		len = FAB_MTU;
	memset(&h, 0, sizeof h);
	h.type = FAB_RAW;
	h.proto = HN_PROTO;
	h.flags = FAB_F_NOCRC;
	h.src = (uint16_t)k;
	h.dst = HN_ME;
	h.session = fab_pair_tag(s->inc, s->m.inc);
	h.len = (uint16_t)len;
	memset(frame + CHAN_PAYLOAD_OFF, 0x5a, len);
	/* Raw frames share the pair's counter with the channel's. */
	size_t n = fab_build_sealed(frame, node_mac, s->mac, &h, keyed ? &s->seal : NULL);
	put_on_wire(frame, n);
	return 0;
}

int hn_barrier_msg(int k, char kind, uint32_t gen)
{
	struct pktbuf *pb = pkt_get();
	int r;

	if (!pb)
		return -ENOBUFS;
	pb->data[CHAN_PAYLOAD_OFF] = (uint8_t)kind;
	memcpy(pb->data + CHAN_PAYLOAD_OFF + 1, &gen, 4);
	r = chan_send(&sims[k].ch, pb, 8 /* the barrier's protocol */, 5, 0, clock_ns);
	if (r < 0)
		pkt_put(pb);
	return r;
}

void hn_reboot(int k, uint64_t inc)
{
	sim_boot(k, inc ? inc : sims[k].inc + 0x100000001ULL);
}

int hn_node_send(int k, size_t len, int raw)
{
	static uint8_t buf[FAB_MTU];

	if (len > FAB_MTU)
		len = FAB_MTU;
	memset(buf, 0xa5, len);
	if (raw)
		return fabric_raw_send(k, HN_PROTO, buf, len);
	return fabric_send(k, HN_PROTO, buf, len, NULL, 0, FABRIC_NOWAIT);
}

int hn_bound(int k, uint64_t *inc)
{
	if (inc)
		*inc = fab.peers[k].m.inc;
	return fab.peers[k].known;
}

int hn_dead(int k)
{
	return fab.peers[k].ch.dead;
}

uint64_t hn_peer_inc(int k)
{
	return sims[k].inc;
}

void hn_counters(struct fabric_counters *c)
{
	fabric_counters(c);
}
