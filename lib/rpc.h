/*
 * RPC over protected remote memory (remote-memory paper, section 3.1).
 *
 * Marshaling (3.1.1): a server exports K argument stacks for a service,
 * each a separate segment named "rpc.<service>.<k>", "imported by clients
 * at bind time".  A binding registers the client with the server (its
 * reply segment, writable by the server only) and holds no stack: on each
 * call the client "picks an available stack for the server", claiming it with a compare-and-swap on the stack's owner word, so two
 * calls never share a stack, and gives it back when the answer is in.  A
 * call is the client building the call frame (arguments as a local call
 * would see them, contiguous) directly on that stack with remote WRITEs,
 * the header holding the flag word (the call's number) written last.  The
 * stack's server thread wakes on the flag, write-protects the stack
 * (seg_inhibit) while the procedure runs on the arguments in place, then
 * writes the result into the client's reply segment.  There is no
 * marshaling as such: the bytes go from the client's memory to the
 * server's stack and the procedure reads them there.  So any number of
 * bindings share the K stacks, and the threads of one binding make up to
 * K calls at once.
 *
 * Call-by-reference (3.1.1): "the references placed on the call frame
 * must contain a segment number (descriptor) and offset into an exported
 * client segment."  rpc_ref_make exports a client buffer to the server
 * alone and fills a struct rpc_ref to put among the arguments; the
 * procedure reads and writes it with remote READs and WRITEs
 * (rpc_ref_read, rpc_ref_write), which the client's node checks as for
 * any segment.
 *
 * Transport (3.1.2): a call whose frame does not fit one WRITE is N frames
 * sent without waiting, the one carrying the header (and flag) last.  The
 * server keeps a bit mask of the frames that arrived; on the Nth frame or
 * a timeout it either runs the call (mask complete; the result implies the
 * full mask, so the no-loss case costs no extra frame) or writes the mask
 * into the client's reply segment, and the client rewrites only the
 * missing frames.  Over the reliable channel (the default) no frame is
 * ever missing.  With RPC_UNRELIABLE a call's frames, its masks and its
 * result travel as raw frames (RMEM_UNRELIABLE), as the paper's cells did,
 * and may be lost: the two timeouts of 3.1.2 recover them.  Binding,
 * claims and releases always go reliably.
 *
 * Semantics: at most once.  A binding's calls are numbered; the server
 * runs each number once, answers a repeated one from the result it kept
 * on that stack, and refuses numbers older than its window of the last
 * SEEN_WINDOW (rpc_wire.h) calls.
 *
 * Threads call everything here; nothing in interrupt context.
 */
#ifndef LIB_RPC_H
#define LIB_RPC_H

#include <stddef.h>
#include <stdint.h>

#define RPC_SERVICE_MAX 16		/* service name, with the NUL */
#define RPC_MAX_PROCS 64		/* procedure numbers 0..63 */
#define RPC_ARGS_MAX 16384		/* argument bytes per call */
#define RPC_MAX_STACKS 32		/* argument stacks per service */
#define RPC_MAX_BINDINGS 128		/* bindings per service, all sharing its stacks */
#define RPC_REF_MAX 16384		/* bytes one rpc_ref_read brings */

/*
 * A procedure: args/len are the call's arguments, in place on the
 * write-protected stack, valid until it returns.  It runs in the stack's
 * server thread and may sleep.  Return 0 or a negative errno; either goes
 * back to the caller with *result.
 */
typedef int (*rpc_proc_fn)(const void *args, size_t len, uint64_t *result);

struct rpc_stack;
struct rpc_bound;
struct rpc_local;

struct rpc_server_stats {
	uint64_t calls;			/* procedures run */
	uint64_t repeats;		/* repeated call numbers answered from the kept result */
	uint64_t masks;			/* selective acknowledgements written (3.1.2) */
	uint64_t frames_missing;	/* frames those masks asked for */
	uint64_t bad_frames;		/* calls whose arguments failed their check */
	uint64_t forged;		/* headers naming no binding, or with a wrong secret */
	uint64_t stale;			/* call numbers older than the window: not run */
	uint64_t unclaimed;		/* headers on a stack their claim does not hold: not run */
	uint64_t binds, unbinds;
	uint64_t refused;		/* bindings refused: every one taken */
};

struct rpc_server {
	char service[RPC_SERVICE_MAX];
	rpc_proc_fn procs[RPC_MAX_PROCS];
	int nstacks;
	struct rpc_stack *stacks;
	struct rpc_bound *bound;	/* RPC_MAX_BINDINGS */
};

/* Start a server for service (1..15 characters).  0 or -EINVAL. */
int rpc_server_init(struct rpc_server *s, const char *service);

/* Register fn as procedure number proc (before or after rpc_serve).  0 or -EINVAL. */
int rpc_register(struct rpc_server *s, uint32_t proc, rpc_proc_fn fn);

/*
 * Export nstacks argument stacks "rpc.<service>.<k>" and start one server
 * thread per stack: up to nstacks calls run at once.  Return 0, or -EINVAL, -EBUSY (already serving),
 * -ENOMEM, or seg_export's error (the stacks exported so far stay).
 */
int rpc_serve(struct rpc_server *s, int nstacks);

/* The server's counters, summed over its stacks. */
void rpc_server_stats(const struct rpc_server *s, struct rpc_server_stats *out);

/* --- clients ------------------------------------------------------------- */

enum {				/* rpc_bind flags */
	RPC_UNRELIABLE = 1,	/* calls and answers as raw frames (3.1.2 does the rest) */
};

struct rpc_client_stats {
	uint64_t calls;
	uint64_t frames;		/* argument frames written, first time */
	uint64_t rewritten;		/* frames written again because a mask showed them missing */
	uint64_t masks;			/* masks received */
	uint64_t timeouts;		/* waits that ran out: the header frame written again */
	uint64_t claims_lost;		/* stacks found taken when claiming one */
	uint64_t stack_waits;		/* calls that found every stack taken and waited */
};

struct rpc_binding {
	int server;			/* node */
	int nstacks;			/* the service's stacks, imported at bind time */
	int rd[RPC_MAX_STACKS];		/* their descriptors */
	int rseg;			/* this node's reply segment: one slot per stack */
	void *reply;
	uint32_t id;			/* the server's number for this binding ... */
	uint64_t secret;		/* ... and its secret, both carried by every call */
	uint32_t seq;			/* the last call number (taken atomically) */
	uint32_t hint;			/* the stack to try first */
	struct rpc_local *local;	/* this node's calls on the service's stacks (rpc_client.c) */
	int flags;
	struct rpc_client_stats stats;	/* updated atomically */
};

/*
 * Bind to service on node: import its stacks, export a reply segment
 * writable by node only, and register it with the server (on a stack
 * claimed for the purpose and given back).  Waits up to timeout_ns for
 * the service to appear.  Return 0, -EBUSY (the server holds
 * RPC_MAX_BINDINGS already), -ENOENT (no such service), -ETIMEDOUT,
 * -EHOSTDOWN, -ENOMEM, or an rmem error.
 */
int rpc_bind(struct rpc_binding *b, int node, const char *service, int flags, uint64_t timeout_ns);

/*
 * Call procedure proc with len bytes of arguments (at most RPC_ARGS_MAX)
 * on a stack free at the time, waiting for one while every stack is in
 * use.  Any number of threads may call on one binding at once.  Return
 * the procedure's value (0 or a negative errno, with *result set), or
 * -ENOSYS (no such procedure), -EMSGSIZE, -ETIMEDOUT (no answer, or no
 * stack free, in 30 s), -EHOSTDOWN, -EINVAL, -EPROTO (the server refused
 * the frame).
 */
int rpc_call(struct rpc_binding *b, uint32_t proc, const void *args, size_t len, uint64_t *result);

/* Unregister from the server and withdraw the reply segment; no call may be in flight.  0 or -errno. */
int rpc_unbind(struct rpc_binding *b);

/* --- call-by-reference (3.1.1) ------------------------------------------------ */

/* A reference to client memory, placed among a call's arguments. */
struct rpc_ref {
	int32_t seg;			/* the client's segment ... */
	uint32_t gen;			/* ... its generation for the server's node */
	uint32_t len;
	uint32_t rights;		/* RMEM_R, RMEM_W */
};

/*
 * Client: export [buf, buf + len) to b's server alone with rights (RMEM_R,
 * RMEM_W or both) and describe it in *ref.  0, -EINVAL, or seg_export's
 * error.  The memory stays exported until rpc_ref_drop.
 */
int rpc_ref_make(const struct rpc_binding *b, struct rpc_ref *ref, void *buf, size_t len, int rights);
int rpc_ref_drop(struct rpc_ref *ref);

/*
 * Server, inside a procedure: READ len bytes (at most RPC_REF_MAX) at off
 * of the caller's memory that ref names; *data points at them, valid
 * until the procedure returns or reads again.  0, -EPERM (not inside a
 * procedure), -EINVAL, -ERANGE (beyond the reference), or the client's
 * refusal.
 */
int rpc_ref_read(const struct rpc_ref *ref, uint32_t off, size_t len, const void **data);

/* Server, inside a procedure: WRITE len bytes at off of the caller's memory; returns once applied. */
int rpc_ref_write(const struct rpc_ref *ref, uint32_t off, const void *src, size_t len);

/* The layout of an argument stack, for tests that write into one directly. */
#define RPC_STACK_ARGS_OFF 96		/* arguments start here */
#define RPC_STACK_SIZE (RPC_STACK_ARGS_OFF + RPC_ARGS_MAX)

#endif
