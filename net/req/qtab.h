/*
 * The node's table of REQ queues, and what the receive half of the REQ
 * operation decides and writes, as pure logic on a caller-supplied table:
 * net/req/req.c keeps the node's table, remote.c (the receive half in the
 * fabric's receive path) calls these with interrupts off; the host unit
 * tests and the fuzz target drive the same code.
 *
 * Rights.  The paper protects a queue through the VM system: only a
 * process that has the queue's shadow page mapped can issue a REQ to it
 * ("Issuing an Enqueue Operation": "malicious or ignorant users may
 * request enqueue operations to physical addresses on which they do not
 * have read/write access", which shadow addressing prevents).  Here the
 * receiver checks instead, with the model of the segments of remote
 * memory (net/rmem/rmem.h): each queue has, per node, a right to enqueue
 * and a generation.  The name service hands a node the generation of its
 * own right; revoking takes the right and moves that node's generation on,
 * so its handles and its REQs still in flight are refused as stale.
 */
#ifndef NET_REQ_QTAB_H
#define NET_REQ_QTAB_H

#include <stddef.h>
#include <stdint.h>

#include "net/req/queue.h"
#include "net/req/req.h"
#include "net/req/wire.h"

#define REQ_NODES 64

struct req_qent {
	int used;
	struct req_q q;
	char name[REQ_NAME_MAX];	/* "" while not exported */
	uint8_t right[REQ_NODES];	/* may this node enqueue */
	uint32_t gen[REQ_NODES];	/* what this node's handles must carry */
	uint64_t refused_busy;		/* held back: full, waiting for space */
};

struct req_qtab {
	struct req_qent e[REQ_MAX_QUEUES];
	int self;			/* this node: never granted anything */
	uint32_t generation;		/* the next generation handed out */
	struct req_counters ctr;
};

void req_qtab_init(struct req_qtab *t, int self);

/*
 * Make slot `slot` (or, for -1, the first free one) a queue on buf (see
 * req_q_init), granted to nobody.  The slot, or -EINVAL, -ENOSPC, -EBUSY
 * (that slot is in use).
 */
int req_qtab_create(struct req_qtab *t, int slot, void *buf, size_t bytes, const struct req_alloc *a);

/* Free the chain but the first buffer; every generation moves on.  0 or -EBADF. */
int req_qtab_destroy(struct req_qtab *t, int qid);

/*
 * Give the queue its name and grant node `node` (or every other node, -1)
 * the right to enqueue.  0, -EBADF, -EINVAL, -EEXIST (name taken).
 */
int req_qtab_export(struct req_qtab *t, int qid, const char *name, int node);

/* Grant node (or every other node, -1) the right; generations stay. 0, -EBADF, -EINVAL. */
int req_qtab_grant(struct req_qtab *t, int qid, int node);

/* Take node's (or everyone's, -1) right and move its generation on. */
int req_qtab_revoke(struct req_qtab *t, int qid, int node);

/* The generation node's handles of qid carry.  0 or -EBADF, -EINVAL. */
int req_qtab_ticket(const struct req_qtab *t, int qid, int node, uint32_t *gen);

/* What `asker` gets for `name`: 0, -ENOENT, -EACCES (no right). */
int req_qtab_resolve(const struct req_qtab *t, const char *name, int asker, struct req_queue_answer *a);

/* The outcome of one RQ_ENQ (req_rx_enq). */
struct req_rx {
	int hold;		/* refuse it to the fabric (-EBUSY): it is held and retried */
	int answer;		/* send `status` back to the sender */
	int status;		/* enum req_status */
	int qid;		/* the queue it was stored in, or -1 */
};

/*
 * The receive half of REQ (paper, "The Receiver Node"): check the RQ_ENQ
 * m from node src against the table (queue at m->addr, src's right and
 * generation) and, if it passes, perform the enqueue.  can_answer(src)
 * says whether a STATUS can go to src now, asked only of a REQ whose
 * verdict needs one; such a REQ is held if it cannot go, before anything
 * happens.  Counts every refusal by reason.  Interrupts off: serialized
 * with every other enqueue.
 */
void req_rx_enq(struct req_qtab *t, int src, const struct req_msg *m, int (*can_answer)(int src),
		struct req_rx *out);

/* The error a sender reports for a refusal status. */
int req_status_errno(int status);

#endif
