/*
 * The request/answer facility of the fabric, the one the mechanisms
 * (remote memory, remote enqueue, hybrid deposit) share:
 *
 *  - Calls: a request that waits for an answer takes a call, whose tag it
 *    carries on the wire; the answer carries the tag back and is matched
 *    to (protocol, node, tag), never trusted further.  The tag is also the
 *    handle a non-blocking operation returns: a stale handle names no call.
 *    A thread waits for its call's answer, for its node's death (the
 *    fabric declares a silent peer dead) or for a timeout.
 *  - Sinks: a request that expects no answer unless it is refused (an
 *    asynchronous WRITE, an enqueue) carries a sink's tag instead; the
 *    refusal is kept in the sink until the issuer asks with call_sync(),
 *    which also waits until the node has taken everything sent before
 *    (a fence on the same channel, so in order behind it).
 *  - Answers: a receive handler that must answer asks call_can_answer()
 *    before it changes anything and returns -EBUSY if not, so that a
 *    request offered again later is never applied twice.
 *  - Names: one name service for segments, queues and connections alike.
 *    Each mechanism registers a resolver for its kind of name; a lookup
 *    asks a node's resolver and gets back what it answered for the asker.
 *
 * The facility's own messages (fences, lookups) are net/call/call_wire.h.
 * Unless marked (irq), call from threads.
 */
#ifndef NET_CALL_CALL_H
#define NET_CALL_CALL_H

#include <stddef.h>
#include <stdint.h>

#include "kernel/sync.h"
#include "net/call/call_wire.h"

#define CALL_MAX 192			/* calls outstanding per node */
#define CALL_MAX_SINKS 1024		/* asynchronous error sinks per node */
#define CALL_WAIT_NS 30000000000ULL	/* what blocking operations wait at most */
#define CALL_RAW 0x100			/* call_send etc.: a raw frame, not the channel */

struct call {
	uint32_t tag;			/* 0: free; else the handle */
	uint8_t proto;			/* the protocol the answer comes on */
	uint8_t kind;			/* the protocol's own kind of request */
	int16_t node;
	uint32_t epoch;			/* the node's binding it was made for (fabric_peer_epoch) */
	volatile int done;
	int status;			/* the answer's verdict: 0 or a negative errno */
	uint64_t value;			/* a word the answer carries */
	uint64_t priv[4];		/* the protocol's record of the request */
	struct waitq wq;
};

/* A free call to node for proto, with a fresh tag; NULL if all are busy.  (irq) */
struct call *call_new(uint8_t proto, uint8_t kind, int node);

/* The pending call an answer from node with tag is for, or NULL.  (irq) */
struct call *call_find(uint8_t proto, int node, uint32_t tag);

/* The call behind handle h (its tag) if it is proto's and of kind, or NULL. */
struct call *call_get(uint8_t proto, uint8_t kind, int h);

/* The answer came: status (0 or a negative errno); wake the waiter.  (irq) */
void call_done(struct call *c, int status);

/*
 * Wait until c is done (0), its node is dead (-EHOSTDOWN) or timeout_ns
 * passed (-ETIMEDOUT).  The call stays c's caller's to free.
 */
int call_wait(struct call *c, uint64_t timeout_ns);

/*
 * node rebooted and was bound again (net/fabric/member.h; the fabric calls
 * this as a peer-reset hook, which call.c registers): every call
 * pending to it is done with -ECONNRESET, and every sink for it keeps
 * -ECONNRESET (what was sent to the old incarnation is lost, and
 * call_sync says so).  Answers to those calls are unmatched from now on.
 * (irq)
 */
void call_node_reset(int node);

/* Free c; a later answer for it is unmatched.  (irq) */
void call_free(struct call *c);

/*
 * Send hdr (hlen bytes, the tag already in it) and data to c's node on
 * c's protocol, wait for the answer, free c.  flags: FABRIC_* or CALL_RAW.
 * The answer's status, or the send's or the wait's error; -ECONNRESET if
 * the node rebooted since c was made (nothing is sent to the new
 * incarnation) or while the call was pending.
 */
int call_run(struct call *c, const void *hdr, size_t hlen, const void *data, size_t dlen,
	     int flags, uint64_t timeout_ns);

/*
 * Send hdr then data to node on proto: the reliable channel, or a raw
 * frame with CALL_RAW.  0 or the fabric's error.  (irq with FABRIC_NOWAIT
 * or CALL_RAW)
 */
int call_send(int node, uint8_t proto, const void *hdr, size_t hlen, const void *data,
	      size_t dlen, int flags);

/*
 * call_send for c: to c's node and protocol, and only to the incarnation
 * c was made for: -ECONNRESET (nothing sent) if the node was bound again
 * since.  Use it, not call_send, for every request that carries c's tag.
 */
int call_post(struct call *c, const void *hdr, size_t hlen, const void *data, size_t dlen,
	      int flags);

/* Can an answer to node go now?  Ask before changing anything.  (irq) */
int call_can_answer(int node);

/* Send an answer without waiting (raw: as a raw frame).  0, or counted as lost.  (irq) */
int call_answer(int node, uint8_t proto, const void *hdr, size_t hlen, const void *data,
		size_t dlen, int raw);

/* --- asynchronous errors ----------------------------------------------------- */

/* A sink for refusals of requests to node on proto: >= 0, or -ENOSPC. */
int call_sink_new(uint8_t proto, int node);
void call_sink_free(int s);

/*
 * Was s's node bound again (it rebooted) since s was made?  A handle that
 * owns a sink (an imported segment, a remote queue) names things of the
 * incarnation it was made for: refuse it with -ECONNRESET when this says so.
 */
int call_sink_stale(int s);

/* The tag a request carries so that its refusal lands in sink s. */
uint32_t call_sink_tag(int s);

/*
 * The binding s was made for (fabric_peer_epoch of its node then): a
 * request written with fabric_tx_begin for that epoch goes to that
 * incarnation only, as call_sink_send's do.
 */
uint32_t call_sink_epoch(int s);

/*
 * call_send to s's node, but only to the incarnation s was made for: if
 * the node rebooted since (even while the message waited for window
 * space), -ECONNRESET and nothing is sent.
 */
int call_sink_send(int s, uint8_t proto, const void *hdr, size_t hlen, const void *data,
		   size_t dlen, int flags);

/* Is tag a sink's (not a call's)? */
static inline int call_tag_is_sink(uint32_t tag) { return (tag & 0x80000000u) != 0; }

/*
 * A refusal (err < 0) arrived from node with a sink's tag: keep the first
 * in the sink.  0, or -ENOENT if the tag names no sink of (proto, node).  (irq)
 */
int call_sink_error(uint8_t proto, int node, uint32_t tag, int err);

/* The first refusal s received so far, cleared (0 if none), without waiting; or -EBADF. */
int call_sink_take(int s);

/*
 * Wait until s's node has taken everything sent to it before this call,
 * then return and clear the first refusal s received since the last call
 * (0 if none), or -EHOSTDOWN, -ETIMEDOUT, -EBADF.
 */
int call_sync(int s, uint64_t timeout_ns);

/* Wait until node has taken everything sent to it before.  0 or -errno. */
int call_fence(int node, uint64_t timeout_ns);

struct call_counters {
	uint64_t calls, answers_unmatched, answers_lost, sink_errors, sink_unmatched;
	uint64_t fences, lookups_served, malformed;
	uint64_t resets;		/* nodes bound again after a reboot */
};

void call_counters(struct call_counters *out);

#endif
