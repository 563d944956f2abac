/*
 * RPC's layout in memory and its frames, shared by the server (rpc_server.c)
 * and the client (rpc_client.c); nothing else includes this.  The design
 * and its choices are in rpc_server.c's opening comment.
 */
#ifndef LIB_RPC_WIRE_H
#define LIB_RPC_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "kernel/crc.h"
#include "lib/rpc.h"
#include "net/rmem/rmem.h"

#define LOCAL_TRACE 0
#define LTRACEF(...) do { if (LOCAL_TRACE) printf("rpc: " __VA_ARGS__); } while (0)

#define CTL_OFF 0
#define REQ_OFF 8
#define HDR_OFF 64
#define ARGS_OFF RPC_STACK_ARGS_OFF
#define RPC_FRAME RMEM_MAX_XFER			/* one WRITE */
#define RPC_FIRST (RPC_FRAME - sizeof(struct call_hdr))	/* argument bytes in the header frame */
#define MAX_FRAMES 64				/* bits in a mask */

#define SACK_NS 5000000ULL		/* server: quiet this long mid-call, write the mask (3.1.2) */
#define SACK_TRIES 8			/* masks nobody answers, before the partial call is dropped */
#define POKE_NS 20000000ULL		/* client, raw frames: first wait before writing the header again */
#define POKE_MAX_NS 500000000ULL
#define CALL_NS 30000000000ULL		/* client: a call gives up */
#define BIND_NS 10000000000ULL		/* client: the server answers a binding request */
#define SLICE_NS 100000000ULL		/* client, reliable: look at the peer this often */

struct rpc_ctl {
	uint64_t owner;			/* 0 free, else the caller's token: (node + 1) << 32 | nonce */
	uint32_t op;			/* CTL_BIND, CTL_UNBIND */
	uint32_t node;
	char reply[RMEM_NAME_MAX];	/* bind: the client's reply segment */
	uint32_t flags;			/* bind: the client's RPC_* flags */
	uint32_t bind;			/* unbind: the binding */
	uint64_t secret;		/* unbind: its secret */
};
enum { CTL_BIND = 1, CTL_UNBIND = 2 };

struct call_hdr {
	uint32_t seq;			/* the flag word: the call's number in its binding */
	uint32_t proc;
	uint32_t len;
	uint16_t nframes;
	uint16_t flags;
	uint32_t crc;			/* HF_CRC: CRC-32C of header (crc 0) and arguments */
	uint32_t bind;			/* the binding the call is made on ... */
	uint32_t secret;		/* ... and the secret the server gave it */
	uint32_t claim;			/* the nonce of the claim that took the stack (owner word's low half) */
};
enum { HF_CRC = 1 };

struct rpc_reply {
	uint32_t seq;			/* the call answered (0 for binding) */
	uint32_t kind;
	uint32_t gen;			/* the stack's reply counter */
	int32_t status;
	uint64_t mask;			/* R_MASK: frames received */
	uint64_t result;
	uint32_t crc;			/* raw frames carry no CRC: CRC-32C of the above */
	uint32_t pad;
};
enum { R_BOUND = 1, R_UNBOUND, R_RESULT, R_MASK };
/* R_BOUND: status 0 or -EBUSY (no binding free), result the binding, mask its secret (32 bits). */

_Static_assert(sizeof(struct rpc_ctl) == HDR_OFF - CTL_OFF, "control block fills the stack's first 64 bytes");
_Static_assert(sizeof(struct call_hdr) == ARGS_OFF - HDR_OFF, "arguments follow the header");
_Static_assert(sizeof(struct rpc_reply) == 40, "a reply is one small WRITE");
#define REPLY_SLOT 64			/* a reply segment: one slot per stack of the service */
#define REPLY_SEG (REPLY_SLOT * RPC_MAX_STACKS)
_Static_assert(offsetof(struct rpc_ctl, op) == REQ_OFF, "binding request offset");
#define CTL_LEN ((uint32_t)(sizeof(struct rpc_ctl) - REQ_OFF))	/* a binding request, one WRITE */
_Static_assert(1 + (RPC_ARGS_MAX - RPC_FIRST + RPC_FRAME - 1) / RPC_FRAME <= MAX_FRAMES, "a mask covers every frame");

/* Frames a call of len argument bytes takes. */
static inline unsigned frames_for(size_t len)
{
	return len <= RPC_FIRST ? 1 : 1 + (unsigned)((len - RPC_FIRST + RPC_FRAME - 1) / RPC_FRAME);
}

static inline uint64_t all_frames(unsigned n)
{
	return n >= 64 ? ~0ULL : (1ULL << n) - 1;
}

static inline uint32_t call_crc(const struct call_hdr *h, const void *args)
{
	struct call_hdr z = *h;

	z.crc = 0;
	return crc32c(crc32c(0, &z, sizeof z), args, h->len);
}

static inline uint32_t reply_crc(const struct rpc_reply *r)
{
	return crc32c(0, r, offsetof(struct rpc_reply, crc));
}

/*
 * What stack k's thread does each time it wakes (rpc_server.c): act on
 * what the receive path noted.  Host tests drive it.  0 or -EINVAL.
 */
struct rpc_server;
int rpc_stack_step(struct rpc_server *s, int k, int timed_out);

/*
 * The client's claim of a free stack of b's service (rpc_client.c): a
 * compare-and-swap of its owner word from 0 to token on each stack in
 * turn from b->hint.  The stack's number, or -EBUSY (every stack taken),
 * -ETIMEDOUT / -EHOSTDOWN (a claim whose outcome stays unknown: no second
 * one is made), or an rmem error.  Host tests drive it.
 */
int rpc_stack_claim(struct rpc_binding *b, uint64_t token);

/*
 * This node's own use of a service's stacks (rpc_client.c): bindings of
 * one node share its write right on a stack it claimed, so no two of its
 * calls may hold one stack at once, whatever binding they are made on.
 * rpc_local_get finds or makes the entry for (server, service): NULL if
 * LOCAL_MAX services are in use already.
 */
struct rpc_local {
	int server;
	char service[RPC_SERVICE_MAX];
	uint32_t busy;			/* bit k: a call of this node holds stack k */
};
struct rpc_local *rpc_local_get(int server, const char *service);

/*
 * At most once across a binding's stacks (rpc_server.c): a call number
 * never run, not older than the window and not more than SEEN_AHEAD
 * beyond the highest run is new; any other is refused.  Numbers are
 * counted on in 64 bits from the 32 of the header (the one nearest the
 * highest run), so none comes round again.  Host tests drive it.
 */
enum { SEEN_NEW, SEEN_DONE, SEEN_OLD };
#define SEEN_WINDOW 128
#define SEEN_AHEAD 1024			/* a client's numbers in flight or lost before sending */
struct rpc_seen {
	uint64_t top;			/* the highest call number run */
	uint64_t bits[SEEN_WINDOW / 64];	/* bit seq % WINDOW: seq ran */
};
int rpc_seen_check(const struct rpc_seen *w, uint32_t seq);
void rpc_seen_mark(struct rpc_seen *w, uint32_t seq);

#endif
