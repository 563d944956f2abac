/*
 * Between pt2pt.c (the engine), request.c (Wait, Test and their
 * families) and init.c (starting and stopping the engine).
 */
#ifndef LIB_MPI_PT2PT_H
#define LIB_MPI_PT2PT_H

#include "kernel/counters.h"
#include "lib/mpi/mpiimpl.h"

enum req_kind { REQ_SEND, REQ_RECV, REQ_GENERIC, REQ_GREQ, REQ_PCOLL /* persistent collective (icoll.c) */ };

struct bsend_slot;

struct mpi_req {
	enum req_kind kind;
	MPI_Request handle;		/* 0 until a program asks for one */
	volatile int done;
	int persistent;			/* made by *_init: inactive between starts */
	int active;			/* a persistent request was started */
	int freed;			/* MPI_Request_free: released once done */
	MPI_Status status;		/* MPI_ERROR holds the outcome */
	struct mpi_comm *comm;		/* referenced while the request lives */
	uint32_t ctx;
	int peer, tag;			/* as given: a rank of comm, ANY_SOURCE, PROC_NULL */
	void *buf;
	int count;
	MPI_Datatype dt;		/* referenced while the request lives */
	enum mpii_send_mode mode;
	size_t len;			/* send: bytes of the message; receive: room */
	int state;
	uint64_t id;			/* rendezvous: ours */
	uint64_t peer_id;		/* rendezvous: the other side's */
	int node;			/* the peer's world rank */
	int cancel_asked;		/* a send: MPI_Cancel asked its receiver (W_CANCEL) */
	void *tmp;			/* a send's packed copy; a receive's staging */
	struct mpi_req *next;		/* the queue it is on */
	struct mpi_req *parent;		/* a part of parent (Isendrecv): completes it with the other part */
	struct mpi_req *sub[2];		/* a request made of two (Isendrecv): released with it */
	int pending;			/* parts not yet done */
	/* generalized requests */
	MPI_Grequest_query_function *query_fn;
	MPI_Grequest_free_function *free_fn;
	MPI_Grequest_cancel_function *cancel_fn;
	void *extra;
};

struct mpi_req *mpii_req_get(MPI_Request h);
/* Start a persistent request (MPI_Start). */
int mpii_req_start(struct mpi_req *r);
/* A request made but not started (persistent: MPI_Send_init...). */
struct mpi_req *mpii_req_persistent(enum req_kind kind, const void *buf, int count, MPI_Datatype dt, int peer,
				    int tag, struct mpi_comm *c, enum mpii_send_mode mode);
/*
 * Cancel a receive not yet matched, or a send not yet matched (one to
 * self at once; one to another rank by asking it: it completes, as
 * cancelled or as sent, when the answer comes).  A send already complete
 * is not cancelled.
 */
void mpii_req_cancel(struct mpi_req *r);
/* Release a request that is done (its handle, references, memory). */
void mpii_req_release(struct mpi_req *r);
/* Copy r's status to st (unless ignored). */
void mpii_req_status(struct mpi_req *r, MPI_Status *st);
/* The empty status (MPI-3.1 3.7.3). */
void mpii_status_empty(MPI_Status *st);
/* A dead rank makes the requests waiting on it fail: check r (lock held). */
void mpii_req_check_dead(struct mpi_req *r);

/*
 * Probe for a message on c's point-to-point context (block: wait for one;
 * take: remove it, for Mprobe, with its handle in *msg).  MPI_SUCCESS or
 * an error code.
 */
int mpii_probe(struct mpi_comm *c, int src, int tag, int block, int take, int *flag, MPI_Status *st,
	       MPI_Message *msg);
/* Receive into r (its buffer fields set) the message an Mprobe took. */
int mpii_mrecv_start(struct mpi_req *r, MPI_Message msg);
/* r's fields as for a receive or send of these arguments (no start). */
struct mpi_req *mpii_req_new(enum req_kind kind, struct mpi_comm *c);

/* init.c: start the engine on Madeleine's driver, stop it. */
int mpii_pt2pt_start(const char *driver);
void mpii_pt2pt_stop(void);
/*
 * Send on Madeleine's driver (opening it, with a receive thread, the first
 * time: every node calls this together, as mad_open wants); the channels
 * opened before still receive.  For the bench, which measures MPI on each
 * driver in one run; call it with every rank quiet (after a barrier).
 * 0 or negative errno.
 */
int mpii_use_driver(const char *driver);
/*
 * The bench's: on, MPI's receive threads stop receiving (every rank
 * quiet, no MPI call until off), so that Madeleine's own messages can run
 * on MPI's channels beside MPI's; off, they start again.  A receive on a
 * channel may see the stop's kick once (-EINTR).
 */
void mpii_pause(int on);
/*
 * Before the first pause: no more PINGs (mpi-tx's, to a peer a request
 * waits on), which would meet Madeleine's receiver; then a barrier, after
 * which none is on its way.
 */
void mpii_pings_off(void);
/* Buffered sends still to go (MPI_Buffer_detach waits for them). */
int mpii_bsend_pending(void);

/* Counters (the bench app and make cost report them). */
/* The counters (kernel/counters.h): each with the label it is printed with. */
#define MPII_COUNTERS(X) \
	X(LINE, "") \
	X(ONE, eager_sent, "eager sent") \
	X(ONE, rndv_sent, "rendezvous") \
	X(ONE, self_sent, "to self") \
	X(ONE, unexpected, "unexpected") \
	X(ONE, proto_errors, "protocol errors") \
	X(ONE, send_errors, "send errors") \
	X(ONE, pings_heard, "pings heard")

struct mpii_counters {
	MPII_COUNTERS(COUNTER_FIELD)
};
extern struct mpii_counters mpii_counters;

#endif
