/*
 * Remote enqueue's shared state, for its own files only: req.c (the
 * node's queues and the dequeue) and remote.c (the REQ operation, its
 * receive half and the handles of other nodes' queues).  The table
 * (qtab.h) is touched with interrupts off; struct lqueue holds what the
 * kernel adds to each slot.
 */
#ifndef NET_REQ_INTERNAL_H
#define NET_REQ_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "kernel/sync.h"
#include "net/req/qtab.h"
#include "net/req/req.h"

struct lqueue {
	/*
	 * One dequeuer at a time (paper: "a lock variable").  Initialized
	 * once and never again: a slot's next queue reuses it, so a thread
	 * still asleep on it for the previous queue is never corrupted; it
	 * wakes, sees the incarnation moved on and returns -EBADF.
	 */
	struct mutex lock;
	uint32_t incarnation;		/* moves on at every destroy */
	struct waitq wq;		/* req_wait */
	int own_buffer;
	uint64_t tickets;		/* dequeues handed out, under lock */
	void (*notify)(void *arg, int qid, uint32_t word);
	void *notify_arg;
};

extern struct req_qtab req_tab;
extern struct lqueue req_lq[REQ_MAX_QUEUES];
extern int req_ready;

/* Initialize the slots' locks (once, before any queue exists). */
void req_slots_init(void);

/* The name service's resolver for queues (req.c).  (irq) */
int req_resolve(const char *name, int asker, void *answer, size_t *len);

#endif
