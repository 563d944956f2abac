/*
 * The fabric's boundary, the clock, node identity and waiting, for host
 * tests; see host_fabric.h.  Timeouts are kept but short: a nanosecond of
 * the kernel's is a thousandth of a TSC cycle here.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/init.h"
#include "kernel/node.h"
#include "kernel/sync.h"
#include "kernel/thread.h"
#include "kernel/trace.h"
#include "kernel/trap.h"
#include "kernel/tsc.h"
#include "tests/host/host_fabric.h"

#define QMAX 256

int node_id, num_nodes;
volatile int in_irq;
volatile int trace_on;
struct trace_rec trace_cur;
void trace_mark(trace_stage_t s) { (void)s; }
uint64_t tsc_hz = 1000000000;
int host_can_send = 1;
uint32_t host_epoch[64];
void (*host_pump)(void);

static struct host_frame q[QMAX];
static int qhead, qlen;
static fabric_handler_t handlers[256], raw_handlers[256];

void host_fabric_reset(int self, int nodes)
{
	node_id = self;
	num_nodes = nodes;
	qhead = qlen = 0;
	host_can_send = 1;
	host_pump = NULL;
	memset(host_epoch, 0, sizeof host_epoch);
}

static const struct init_hook *hooks[32];
static int nhooks;

void host_init_hook_add(const struct init_hook *h)
{
	if (nhooks < (int)(sizeof hooks / sizeof hooks[0]))
		hooks[nhooks++] = h;
}

int host_run_init_hooks(int level)
{
	int r = 0;

	for (int i = 0; i < nhooks; i++)
		if (hooks[i]->level == level) {
			int e = hooks[i]->fn();
			if (e < 0 && r == 0)
				r = e;
		}
	return r;
}

int host_frames(void)
{
	return qlen;
}

int host_frame_take(struct host_frame *f)
{
	if (!qlen)
		return -1;
	*f = q[qhead];
	qhead = (qhead + 1) % QMAX;
	qlen--;
	return 0;
}

static int enqueue(int dst, uint8_t proto, int raw, const void *hdr, size_t hlen, const void *data,
		   size_t dlen)
{
	struct host_frame *f;

	if (dst < 0 || dst >= num_nodes || dst == node_id)
		return -EINVAL;
	if (hlen + dlen > FAB_MTU)
		return -EMSGSIZE;
	if (qlen == QMAX)
		return -EAGAIN;
	f = &q[(qhead + qlen++) % QMAX];
	f->dst = dst;
	f->proto = proto;
	f->raw = raw;
	f->len = hlen + dlen;
	memcpy(f->data, hdr, hlen);
	if (dlen)
		memcpy(f->data + hlen, data, dlen);
	return 0;
}

fabric_handler_t host_handler(uint8_t proto, int raw)
{
	return raw ? raw_handlers[proto] : handlers[proto];
}

/* --- net/fabric/fabric.h ---------------------------------------------------- */

int fabric_ready(void) { return 1; }

int fabric_register(uint8_t proto, fabric_handler_t fn)
{
	handlers[proto] = fn;
	return 0;
}

int fabric_register_raw(uint8_t proto, fabric_handler_t fn)
{
	raw_handlers[proto] = fn;
	return 0;
}

int host_rx_shared;		/* a test says: the message lies in shared memory */

int fabric_register_in_place(uint8_t proto)
{
	(void)proto;
	return 0;
}

int fabric_rx_shared(void)
{
	return host_rx_shared;
}

static void (*reset_hooks[FABRIC_RESET_HOOKS])(int node);

int fabric_on_peer_reset(void (*fn)(int node))
{
	for (int i = 0; i < FABRIC_RESET_HOOKS; i++) {
		if (!reset_hooks[i] || reset_hooks[i] == fn) {
			reset_hooks[i] = fn;
			return 0;
		}
	}
	return -ENOSPC;
}

void host_peer_reset(int node)
{
	for (int i = 0; i < FABRIC_RESET_HOOKS && reset_hooks[i]; i++)
		reset_hooks[i](node);
}

int fabric_send(int dst, uint8_t proto, const void *hdr, size_t hlen, const void *data, size_t dlen,
		int flags)
{
	(void)flags;
	return enqueue(dst, proto, 0, hdr, hlen, data, dlen);
}

int fabric_raw_send_pb(int dst, uint8_t proto, struct pktbuf *pb, size_t len)
{
	return enqueue(dst, proto, 1, fabric_payload(pb), len, NULL, 0);
}

int fabric_raw_sendv(int dst, uint8_t proto, const void *hdr, size_t hlen, const void *data, size_t dlen)
{
	return enqueue(dst, proto, 1, hdr, hlen, data, dlen);
}

int fabric_send_at(int dst, uint32_t epoch, uint8_t proto, const void *hdr, size_t hlen,
		   const void *data, size_t dlen, int flags)
{
	if (epoch && epoch != host_epoch[dst])
		return -ECONNRESET;
	if ((flags & FABRIC_NOWAIT) && !host_can_send)
		return -EAGAIN;		/* the window full: a waiting sender would sleep here */
	return enqueue(dst, proto, 0, hdr, hlen, data, dlen);
}

/* The message written where it goes: here always a buffer of the fake link's own. */
int fabric_tx_begin(struct fabric_tx *tx, int dst, uint32_t epoch, uint8_t proto, size_t len,
		    int flags)
{
	if (len > FAB_MTU)
		return -EMSGSIZE;
	if (!(tx->pb = pkt_get()))
		return -ENOBUFS;
	tx->payload = fabric_payload(tx->pb);
	tx->dst = dst;
	tx->epoch = epoch;
	tx->proto = proto;
	tx->len = len;
	tx->flags = flags;
	return 0;
}

int fabric_tx_end(struct fabric_tx *tx)
{
	int r = fabric_send_at(tx->dst, tx->epoch, tx->proto, tx->payload, tx->len, NULL, 0, tx->flags);

	pkt_put(tx->pb);
	return r;
}

void fabric_tx_drop(struct fabric_tx *tx)
{
	pkt_put(tx->pb);
}

uint32_t fabric_peer_epoch(int dst)
{
	return dst >= 0 && dst < 64 ? host_epoch[dst] : 0;
}

size_t fabric_mtu(int dst)
{
	(void)dst;
	return FAB_MTU;		/* the host link: Ethernet's frames */
}

int fabric_can_send(int dst)
{
	(void)dst;
	return host_can_send;
}

int fabric_peer_dead(int dst)
{
	(void)dst;
	return 0;
}

/* --- kernel: clock, waiting, threads ---------------------------------------- */

uint64_t ns_to_cycles(uint64_t ns) { return ns / 1000; }
uint64_t cycles_to_ns(uint64_t c) { return c * 1000; }
uint64_t now_ns(void) { return cycles_to_ns(cycles()); }

/* The link is not polled on the host: a waiting call sleeps (host_pump). */
int net_poll_wait(volatile int *flag) { return *flag; }
int net_busy_begin(void) { return 0; }
void net_busy_look_now(void) {}
void net_busy_stop(void) {}
unsigned net_wait_spin_us(void) { return 0; }

int waitq_wait_timeout(struct waitq *wq, uint64_t timeout_ns)
{
	(void)wq;
	(void)timeout_ns;
	if (host_pump)
		host_pump();
	return WAKE_TIMEOUT;
}

void waitq_wait(struct waitq *wq)
{
	waitq_wait_timeout(wq, 0);
}

int waitq_wake_one(struct waitq *wq)
{
	(void)wq;
	return 0;
}

int waitq_wake_all(struct waitq *wq)
{
	(void)wq;
	return 0;
}

void thread_sleep_ns(uint64_t ns)
{
	waitq_wait_timeout(NULL, ns);
}

int host_threads;

struct thread *thread_create(const char *name, void *(*fn)(void *), void *arg, int prio,
			     size_t stack_size)
{
	static char dummy[64];

	(void)name, (void)fn, (void)arg, (void)prio, (void)stack_size;
	return host_threads ? (struct thread *)(void *)dummy : NULL;
}

void thread_detach(struct thread *t)
{
	(void)t;
}
