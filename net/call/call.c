/*
 * The request/answer facility: the call table, waiting, sinks for
 * asynchronous refusals and fences.  See call.h.  The facility's own
 * protocol (fences, lookups) is service.c's; the name service, names.c.
 *
 * Tags: a call's tag is its slot (low 8 bits) and a sequence number above
 * it, never 0 and below 2^31, so an answer finds its call in one step and
 * a stale tag or handle matches nothing.  A sink's tag has the top bit
 * set, the sink's number in bits 20..29 and its generation below, so that
 * a refusal for a sink freed and taken again is not charged to the new
 * owner.
 */
#include <errno.h>
#include <string.h>

#include "kernel/init.h"
#include "kernel/trap.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"
#include "net/call/call.h"
#include "net/call/internal.h"
#include "net/fabric/fabric.h"
#include "net/net.h"

_Static_assert(CALL_MAX <= 256, "a call's slot fits the tag's low 8 bits");
_Static_assert(CALL_MAX_SINKS <= 1024, "a sink's number fits 10 bits of its tag");

#define SINK_BIT 0x80000000u
#define SINK_GEN_MASK 0xfffffu

struct sink {
	int used;
	uint8_t proto;
	int node;
	uint32_t epoch;			/* the node's binding when the sink was made */
	uint32_t gen;
	int error;			/* the first refusal since the last call_sync */
};

static struct call calls[CALL_MAX];
static struct sink sinks[CALL_MAX_SINKS];
static uint32_t next_seq = 1;
struct call_counters call_ctr;

/* --- calls ------------------------------------------------------------------- */

struct call *call_new(uint8_t proto, uint8_t kind, int node)
{
	irqflags_t f = irq_save();

	for (int i = 0; i < CALL_MAX; i++) {
		struct call *c = &calls[i];
		if (c->tag)
			continue;
		memset(c, 0, sizeof *c);
		c->tag = next_seq << 8 | (uint32_t)i;
		if (++next_seq >= 1u << 23)
			next_seq = 1;
		c->proto = proto;
		c->kind = kind;
		c->node = (int16_t)node;
		c->epoch = fabric_peer_epoch(node);
		call_ctr.calls++;
		irq_restore(f);
		return c;
	}
	irq_restore(f);
	return NULL;
}

struct call *call_find(uint8_t proto, int node, uint32_t tag)
{
	struct call *c;

	if (tag == 0 || call_tag_is_sink(tag) || (tag & 0xff) >= CALL_MAX) {
		call_ctr.answers_unmatched++;
		return NULL;
	}
	c = &calls[tag & 0xff];
	if (c->tag != tag || c->proto != proto || c->node != node || c->done) {
		call_ctr.answers_unmatched++;
		return NULL;
	}
	return c;
}

struct call *call_get(uint8_t proto, uint8_t kind, int h)
{
	struct call *c;

	if (h <= 0 || (h & 0xff) >= CALL_MAX)
		return NULL;
	c = &calls[h & 0xff];
	return c->tag == (uint32_t)h && c->proto == proto && c->kind == kind ? c : NULL;
}

void call_done(struct call *c, int status)
{
	c->status = status;
	c->done = 1;
	if (c->wq.head)
		waitq_wake_all(&c->wq);
}

int call_wait(struct call *c, uint64_t timeout_ns)
{
	uint64_t start = cycles(), end;
	irqflags_t f = irq_save();
	int r = 0;

	/* Polled for first: the deadline is worked out only if the answer is not in by then. */
	if (net_poll_wait(&c->done)) {
		irq_restore(f);
		return 0;
	}
	end = start + ns_to_cycles(timeout_ns);
	while (!c->done) {
		if (fabric_peer_dead(c->node)) {
			r = -EHOSTDOWN;
			break;
		}
		uint64_t now = cycles();
		if (now >= end) {
			r = -ETIMEDOUT;
			break;
		}
		uint64_t left = cycles_to_ns(end - now);
		waitq_wait_timeout(&c->wq, left < 100000000 ? left : 100000000);
	}
	irq_restore(f);
	return r;
}

void call_node_reset(int node)
{
	for (int i = 0; i < CALL_MAX; i++)
		if (calls[i].tag && calls[i].node == node && !calls[i].done)
			call_done(&calls[i], -ECONNRESET);
	for (int i = 0; i < CALL_MAX_SINKS; i++)
		if (sinks[i].used && sinks[i].node == node && !sinks[i].error)
			sinks[i].error = -ECONNRESET;
	call_ctr.resets++;
}

void call_free(struct call *c)
{
	/* One aligned store: a handler sees the call either taken or free (no interrupt window to close). */
	__atomic_store_n(&c->tag, 0, __ATOMIC_RELEASE);
}

/* call_send, to the node's binding epoch only (0: any). */
static int send_at(int node, uint32_t epoch, uint8_t proto, const void *hdr, size_t hlen,
		   const void *data, size_t dlen, int flags)
{
	if (epoch && fabric_peer_epoch(node) != epoch)
		return -ECONNRESET;
	if (flags & CALL_RAW) {
		if (hlen + dlen > FAB_MTU && hlen + dlen > fabric_mtu(node))
			return -EMSGSIZE;
		return fabric_raw_sendv(node, proto, hdr, hlen, data, dlen);
	}
	return fabric_send_at(node, epoch, proto, hdr, hlen, data, dlen,
			      in_irq ? flags | FABRIC_NOWAIT : flags);
}

int call_send(int node, uint8_t proto, const void *hdr, size_t hlen, const void *data,
	      size_t dlen, int flags)
{
	return send_at(node, 0, proto, hdr, hlen, data, dlen, flags);
}

int call_post(struct call *c, const void *hdr, size_t hlen, const void *data, size_t dlen,
	      int flags)
{
	return send_at(c->node, c->epoch, c->proto, hdr, hlen, data, dlen, flags);
}

int call_run(struct call *c, const void *hdr, size_t hlen, const void *data, size_t dlen,
	     int flags, uint64_t timeout_ns)
{
	int r = call_post(c, hdr, hlen, data, dlen, flags);

	if (r == 0)
		r = call_wait(c, timeout_ns);
	if (r == 0)
		r = c->status;
	call_free(c);
	return r;
}

int call_can_answer(int node)
{
	return fabric_can_send(node);
}

int call_answer(int node, uint8_t proto, const void *hdr, size_t hlen, const void *data,
		size_t dlen, int raw)
{
	int r = call_send(node, proto, hdr, hlen, data, dlen, raw ? CALL_RAW : FABRIC_NOWAIT);

	if (r < 0)
		call_ctr.answers_lost++;
	return r;
}

/* --- sinks ------------------------------------------------------------------- */

int call_sink_new(uint8_t proto, int node)
{
	irqflags_t f = irq_save();

	for (int i = 0; i < CALL_MAX_SINKS; i++) {
		struct sink *s = &sinks[i];
		if (s->used)
			continue;
		s->used = 1;
		s->proto = proto;
		s->node = node;
		s->epoch = fabric_peer_epoch(node);
		s->gen = (s->gen + 1) & SINK_GEN_MASK;
		s->error = 0;
		irq_restore(f);
		return i;
	}
	irq_restore(f);
	return -ENOSPC;
}

void call_sink_free(int s)
{
	irqflags_t f = irq_save();
	if (s >= 0 && s < CALL_MAX_SINKS)
		sinks[s].used = 0;
	irq_restore(f);
}

int call_sink_stale(int s)
{
	return s >= 0 && s < CALL_MAX_SINKS && sinks[s].used && sinks[s].epoch &&
	       sinks[s].epoch != fabric_peer_epoch(sinks[s].node);
}

uint32_t call_sink_epoch(int s)
{
	return s >= 0 && s < CALL_MAX_SINKS ? sinks[s].epoch : 0;
}

uint32_t call_sink_tag(int s)
{
	return SINK_BIT | (uint32_t)s << 20 | sinks[s].gen;
}

int call_sink_send(int s, uint8_t proto, const void *hdr, size_t hlen, const void *data,
		   size_t dlen, int flags)
{
	if (s < 0 || s >= CALL_MAX_SINKS || !sinks[s].used)
		return -EBADF;
	/* The epoch of the binding the sink was made for is checked again where the frame is queued. */
	return send_at(sinks[s].node, sinks[s].epoch, proto, hdr, hlen, data, dlen, flags);
}

int call_sink_error(uint8_t proto, int node, uint32_t tag, int err)
{
	unsigned i = (tag >> 20) & 0x3ff;
	struct sink *s = &sinks[i];

	if (!call_tag_is_sink(tag) || i >= CALL_MAX_SINKS || !s->used || s->proto != proto ||
	    s->node != node || s->gen != (tag & SINK_GEN_MASK)) {
		call_ctr.sink_unmatched++;
		return -ENOENT;
	}
	call_ctr.sink_errors++;
	if (!s->error)
		s->error = err;
	return 0;
}

int call_fence(int node, uint64_t timeout_ns)
{
	struct call_msg m = { 0 };
	struct call *c = call_new(CALL_PROTO, CALL_FENCE, node);

	if (!c)
		return -EAGAIN;
	m.op = CALL_FENCE;
	m.tag = c->tag;
	call_ctr.fences++;
	return call_run(c, &m, sizeof m, NULL, 0, 0, timeout_ns);
}

int call_sink_take(int s)
{
	if (s < 0 || s >= CALL_MAX_SINKS || !sinks[s].used)
		return -EBADF;
	irqflags_t f = irq_save();
	int r = sinks[s].error;
	sinks[s].error = 0;
	irq_restore(f);
	return r;
}

int call_sync(int s, uint64_t timeout_ns)
{
	int r;

	if (s < 0 || s >= CALL_MAX_SINKS || !sinks[s].used)
		return -EBADF;
	if ((r = call_fence(sinks[s].node, timeout_ns)) < 0)
		return r;
	irqflags_t f = irq_save();
	r = sinks[s].error;
	sinks[s].error = 0;
	irq_restore(f);
	return r;
}

void call_counters(struct call_counters *out)
{
	irqflags_t f = irq_save();
	*out = call_ctr;
	irq_restore(f);
}

