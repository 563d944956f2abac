/*
 * The fabric's boundary for host tests that run the kernel's own protocol
 * code (net/call/call.c, names.c, net/rmem/): frames the code sends are
 * queued here, not delivered; the test takes them and hands them to the
 * receive code itself, as any node, in any order, any number of times.
 * Also the kernel's clock, node identity and waiting, for one user thread.
 */
#ifndef TESTS_HOST_HOST_FABRIC_H
#define TESTS_HOST_HOST_FABRIC_H

#include <stddef.h>
#include <stdint.h>

#include "net/fabric/fabric.h"

struct host_frame {
	int dst;
	uint8_t proto;
	int raw;			/* a raw frame, not the reliable channel */
	size_t len;
	uint8_t data[FAB_MTU];
};

/* Set this node's id and the cluster size; forget every frame and setting. */
void host_fabric_reset(int self, int nodes);

/*
 * Run the init hooks of level (kernel/init.h) that the kernel files built
 * into this test register, as the kernel would at boot: 0 or the first
 * error.
 */
int host_run_init_hooks(int level);

/*
 * host_fabric_reset, and remote memory's tables, notes and counters as a
 * boot leaves them (tests/host/host_rmem.c; for tests that build net/rmem).
 */
void host_rmem_reset(int self, int nodes);

/* Node rebooted and was bound again: run the fabric_on_peer_reset hooks. */
void host_peer_reset(int node);

/* How many frames wait; take the oldest (0) or -1 if none. */
int host_frames(void);
int host_frame_take(struct host_frame *f);

/*
 * thread_create: with host_threads set it "creates" a thread that never
 * runs (the test calls what the thread would do); else it fails (NULL).
 */
extern int host_threads;

/* What fabric_peer_epoch answers for each node (0 after host_fabric_reset). */
extern uint32_t host_epoch[64];

/* What fabric_can_send answers (1 by default); 0 also fails a FABRIC_NOWAIT send, -EAGAIN. */
extern int host_can_send;
/* fabric_rx_shared(): 1 while a test hands a handler a message "in shared memory". */
extern int host_rx_shared;

/*
 * Called each time kernel code waits (waitq_wait_timeout): the test moves
 * frames here, as the network would while the thread sleeps.  NULL: none.
 */
extern void (*host_pump)(void);

/* The handler the code registered for proto (raw: the raw one), or NULL. */
fabric_handler_t host_handler(uint8_t proto, int raw);

#endif
