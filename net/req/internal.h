/*
 * Remote enqueue's shared state, for its own files only: req.c (the
 * node's queues and the dequeue) and remote.c (the REQ operation, its
 * receive half and the handles of other nodes' queues).  Touched with
 * interrupts off, except under a queue's lock where marked.
 */
#ifndef NET_REQ_INTERNAL_H
#define NET_REQ_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "kernel/sync.h"
#include "net/req/queue.h"
#include "net/req/req.h"

struct lqueue {
	int used;
	struct req_q q;
	uint32_t gen;
	char name[REQ_NAME_MAX];
	int own_buffer;
	struct mutex lock;		/* one dequeuer at a time (paper: "a lock variable") */
	struct waitq wq;		/* req_wait */
	uint64_t refused_busy;
	uint64_t tickets;		/* dequeues handed out, under lock */
	void (*notify)(void *arg, int qid, uint32_t word);
	void *notify_arg;
};

extern struct lqueue req_lq[REQ_MAX_QUEUES];
extern struct req_counters req_ctr;
extern int req_ready;

/* The local queue at addr with generation gen, or NULL.  (irq off) */
struct lqueue *req_find(uint64_t addr, uint32_t gen);

/* The name service's resolver for queues (req.c).  (irq) */
int req_resolve(const char *name, int asker, void *answer, size_t *len);

#endif
