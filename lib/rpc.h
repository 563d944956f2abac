/*
 * RPC over protected remote memory (remote-memory paper, section 3.1).
 *
 * Marshaling (3.1.1): a server exports K argument stacks for a service,
 * each a separate segment named "rpc.<service>.<k>".  A client binds by
 * importing one and claiming it with a compare-and-swap on the stack's
 * owner word, so two clients never share a stack; it exports a small reply
 * segment that only the server may write.  A call is the client building
 * the call frame (arguments as a local call would see them, contiguous)
 * directly on the server's stack with remote WRITEs, the header holding
 * the flag word (the call's sequence number) written last.  The server's
 * thread for that stack wakes on the flag, write-protects the stack
 * (seg_inhibit) while the procedure runs on the arguments in place, then
 * writes the result into the client's reply segment.  There is no
 * marshaling as such: the bytes go from the client's memory to the
 * server's stack and the procedure reads them there.
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
 * and may be lost: the two timeouts of 3.1.2 recover them.  Binding
 * always goes reliably.
 *
 * Semantics: at most once.  A client's calls on one binding are numbered;
 * the server runs each number once and answers a repeated one from the
 * result it kept.  One thread at a time per binding.
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

/*
 * A procedure: args/len are the call's arguments, in place on the
 * write-protected stack, valid until it returns.  It runs in the stack's
 * server thread and may sleep.  Return 0 or a negative errno; either goes
 * back to the caller with *result.
 */
typedef int (*rpc_proc_fn)(const void *args, size_t len, uint64_t *result);

struct rpc_stack;

struct rpc_server_stats {
	uint64_t calls;			/* procedures run */
	uint64_t repeats;		/* repeated call numbers answered from the kept result */
	uint64_t masks;			/* selective acknowledgements written (3.1.2) */
	uint64_t frames_missing;	/* frames those masks asked for */
	uint64_t bad_frames;		/* calls whose arguments failed their check */
	uint64_t binds, unbinds;
};

struct rpc_server {
	char service[RPC_SERVICE_MAX];
	rpc_proc_fn procs[RPC_MAX_PROCS];
	int nstacks;
	struct rpc_stack *stacks;
};

/* Start a server for service (1..15 characters).  0 or -EINVAL. */
int rpc_server_init(struct rpc_server *s, const char *service);

/* Register fn as procedure number proc (before or after rpc_serve).  0 or -EINVAL. */
int rpc_register(struct rpc_server *s, uint32_t proc, rpc_proc_fn fn);

/*
 * Export nstacks argument stacks "rpc.<service>.<k>" and start one server
 * thread per stack.  Return 0, or -EINVAL, -EBUSY (already serving),
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
};

struct rpc_binding {
	int server;			/* node */
	int stack;			/* k of "rpc.<service>.<k>" */
	int rd;				/* descriptor of the stack */
	int rseg;			/* this node's reply segment */
	void *reply;
	uint64_t seen;			/* notifications of rseg consumed */
	uint32_t seq;			/* the last call number */
	uint32_t reply_gen;		/* the last reply consumed */
	int flags;
	struct rpc_client_stats stats;
};

/*
 * Bind to service on node: import a free stack and claim it (rmem_cas on
 * its owner word), export a reply segment writable by node only, and wait
 * until the server has imported it.  Waits up to timeout_ns for the
 * service to appear.  Return 0, -EBUSY (every stack taken), -ENOENT (no
 * such service), -ETIMEDOUT, -EHOSTDOWN, -ENOMEM, or an rmem error.
 */
int rpc_bind(struct rpc_binding *b, int node, const char *service, int flags, uint64_t timeout_ns);

/*
 * Call procedure proc with len bytes of arguments (at most RPC_ARGS_MAX).
 * Return the procedure's value (0 or a negative errno, with *result set),
 * or -ENOSYS (no such procedure), -EMSGSIZE, -ETIMEDOUT (no answer in
 * 30 s), -EHOSTDOWN, -EINVAL, -EPROTO (the server refused the frame).
 */
int rpc_call(struct rpc_binding *b, uint32_t proc, const void *args, size_t len, uint64_t *result);

/* Give the stack back to the server and withdraw the reply segment.  0 or -errno. */
int rpc_unbind(struct rpc_binding *b);

/* The layout of an argument stack, for tests that write into one directly. */
#define RPC_STACK_ARGS_OFF 96		/* arguments start here */
#define RPC_STACK_SIZE (RPC_STACK_ARGS_OFF + RPC_ARGS_MAX)

#endif
