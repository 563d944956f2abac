/*
 * What the files of lib/mpi/ share; not for programs (they include mpi.h).
 *
 *   handle.c    the object tables: handle <-> object, reference counts
 *   init.c      Init/Finalize, the environment, Wtime, Abort
 *   pt2pt.c     point to point over Madeleine: matching, eager and
 *               rendezvous, requests, progress (the receive thread)
 *   request.c   Wait/Test and their families, persistent and generalized requests
 *   datatype.c  derived datatypes, pack and unpack
 *   op.c        reduction operations
 *   coll.c      collectives (blocking) on the internal point to point
 *   icoll.c     nonblocking collectives
 *   comm.c      communicators, context ids, intercommunicators
 *   group.c     groups
 *   attr.c      keyvals and attributes (communicators, datatypes, windows)
 *   errors.c    error classes, codes, strings and handlers
 *   info.c      info objects
 *   topo.c      Cartesian topologies
 *   misc.c      what this machine cannot do (spawn, MPI-IO), named
 *
 * Locking: one mutex (mpii_lock) over every queue, table and request; the
 * receive thread and any user thread take it.  Calls that may block (a
 * Madeleine send, a wait) never hold it while blocked.
 */
#ifndef LIB_MPI_MPIIMPL_H
#define LIB_MPI_MPIIMPL_H

#include <stddef.h>
#include <stdint.h>

#include "lib/mpi/mpi.h"

/* --- handles --------------------------------------------------------------------------- */

#define MPII_KIND(h) (((unsigned)(h) >> NOW_MPI_KIND_SHIFT) & 0x3f)
#define MPII_INDEX(h) ((unsigned)(h) & 0xffffff)

/*
 * Every object of a kind lives in that kind's table.  Predefined objects
 * take the fixed indices mpi.h gives them; the rest are allocated.
 * mpii_obj_get: the object behind h if h is a live handle of that kind
 * (not the null handle), else NULL.
 */
int mpii_obj_new(int kind, void *obj);		/* a new handle, or -1 (no memory) */
int mpii_obj_set(int kind, unsigned index, void *obj);	/* predefined: 0 or -1 */
void *mpii_obj_get(int kind, int h);
void mpii_obj_free(int kind, int h);		/* the handle is unused again */

/* --- the lock and the wait -------------------------------------------------------------- */

void mpii_lock(void);
void mpii_unlock(void);

/*
 * Block the calling thread until done(arg) holds, making progress meanwhile
 * (sending what is due, receiving); done is called with the lock held.
 * Returns MPI_SUCCESS, or MPI_ERR_PROC_FAILED if waiting was for a rank
 * that died (then done(arg) may not hold).  Called without the lock.
 */
int mpii_wait_until(int (*done)(void *arg), void *arg);

/* Something completed: wake every thread in mpii_wait_until.  Lock held. */
void mpii_wake(void);

/* Run the progress engine once without blocking (Test, Iprobe).  Without the lock. */
void mpii_poke(void);

/* --- groups ---------------------------------------------------------------------------------- */

struct mpi_group {
	int refs;
	int size;
	int rank;		/* this process's rank in it, or MPI_UNDEFINED */
	int *world;		/* world rank (node id) of each member */
};

struct mpi_group *mpii_group_get(MPI_Group h);
/* A new group of n members with these world ranks (copied); refs 1.  NULL: no memory. */
struct mpi_group *mpii_group_new(int n, const int *world);
void mpii_group_ref(struct mpi_group *g);
void mpii_group_unref(struct mpi_group *g);
/* A handle for g (taking one reference of the caller's), or MPI_GROUP_NULL on no memory. */
MPI_Group mpii_group_handle(struct mpi_group *g);
/* MPI_IDENT, MPI_SIMILAR or MPI_UNEQUAL. */
int mpii_group_compare(const struct mpi_group *a, const struct mpi_group *b);
/* MPI_GROUP_EMPTY's handle (mpii_comm_init calls it).  MPI_SUCCESS or an error class. */
int mpii_group_init(void);

/* --- communicators ------------------------------------------------------------------------- */

struct mpi_attr;
struct mpi_topo;

struct mpi_comm {
	int refs;			/* the handle, plus pending operations */
	MPI_Comm handle;
	uint32_t ctx;			/* point to point context; ctx + 1 is the collectives' */
	struct mpi_group *group;	/* local group */
	struct mpi_group *rgroup;	/* remote group of an intercommunicator, else NULL */
	int rank, size;			/* in the local group */
	MPI_Errhandler errh;
	char name[MPI_MAX_OBJECT_NAME];
	struct mpi_attr *attrs;
	struct mpi_topo *topo;
	MPI_Info info;
	uint32_t coll_seq;		/* collectives started on it (icoll.c's tags) */
	int freed;			/* MPI_Comm_free called; the object waits for its last reference */
	struct mpi_comm *local;		/* intercommunicator: its local group as an intracommunicator */
	uint32_t agree_seq;		/* context id agreements started on it (comm.c's tags) */
	MPI_Win win;			/* a window's own communicator: that window (its errors' object), else 0 */
};

#define MPII_CTX_COLL 1			/* offset of the collectives' context */
#define MPII_CTX_LIMIT 65536		/* every context is below it (comm.c): 16 bits on the wire */

/* Windows (win.c): a window's communicator (its errors' handler), NULL if win is none. */
struct mpi_comm *mpii_win_comm(MPI_Win win);
/* A window's list of attributes of keyvals of its own; NULL if win is none. */
struct mpi_attr **mpii_win_attrs(MPI_Win win);
/* A predefined window attribute (MPI_WIN_BASE...): 1, or 0 with *flag 0; -1 if win is none. */
int mpii_win_attr(MPI_Win win, int key, void *val, int *flag);
struct mpi_comm *mpii_comm_lookup(MPI_Comm h);
extern struct mpi_comm *mpii_comm_world_obj;	/* MPI_COMM_WORLD's, from MPI_Init on (never freed) */
/* The communicator of handle h, NULL if none (or freed); MPI_COMM_WORLD without a lookup. */
static inline struct mpi_comm *mpii_comm_get(MPI_Comm h)
{
	return h == MPI_COMM_WORLD && mpii_comm_world_obj ? mpii_comm_world_obj : mpii_comm_lookup(h);
}
static inline int mpii_comm_inter(const struct mpi_comm *c) { return c->rgroup != NULL; }
/* The size of the group ranks name (remote for an intercommunicator). */
static inline int mpii_comm_peers(const struct mpi_comm *c) { return c->rgroup ? c->rgroup->size : c->size; }
/* World rank (node id) of peer rank r: of the remote group on an intercommunicator. */
static inline int mpii_comm_world(const struct mpi_comm *c, int r)
{
	return (c->rgroup ? c->rgroup : c->group)->world[r];
}
void mpii_comm_ref(struct mpi_comm *c);
void mpii_comm_unref(struct mpi_comm *c);
/*
 * A new communicator over group (and rgroup, or NULL), context ctx,
 * taking a reference of each group; its handle allocated.  NULL: no memory.
 */
struct mpi_comm *mpii_comm_new(struct mpi_group *group, struct mpi_group *rgroup, uint32_t ctx);
/* Init: COMM_WORLD and COMM_SELF (comm.c).  MPI_SUCCESS or an error class. */
int mpii_comm_init(void);
void mpii_comm_finalize(void);
/*
 * Collective over intracommunicator c (topo.c's Cartesian calls): a new
 * communicator of group's members (a subset of c's group), or of this
 * process's color, ordered by key then rank; *out is NULL on the
 * processes outside it.  The new one takes c's error handler.  MPI_SUCCESS
 * or an error code, not yet reported.
 */
int mpii_comm_create_from(struct mpi_comm *c, struct mpi_group *group, struct mpi_comm **out);
int mpii_comm_split(struct mpi_comm *c, int color, int key, struct mpi_comm **out);
/* A communicator's topology (topo.c), shared by its duplicates. */
void mpii_topo_ref(struct mpi_topo *t);
void mpii_topo_unref(struct mpi_topo *t);

/* --- errors -------------------------------------------------------------------------------- */

/*
 * Report an error of class cls raised by the MPI call fn on comm (NULL: on
 * COMM_WORLD, as MPI says for calls without one): the code carries the
 * message (MPI_Error_string gives "fn: message"); the communicator's error
 * handler runs (ERRORS_ARE_FATAL prints it and aborts the job).  Returns
 * the code, for the call to return.
 */
__attribute__((format(printf, 4, 5))) int mpii_err(struct mpi_comm *c, int cls, const char *fn,
						   const char *fmt, ...);
/* The same on a window (its own handler). */
__attribute__((format(printf, 4, 5))) int mpii_err_win(MPI_Win win, int cls, const char *fn, const char *fmt,
						       ...);
/* A code with a message, without running a handler (a status's MPI_ERROR). */
__attribute__((format(printf, 3, 4))) int mpii_errcode(int cls, const char *fn, const char *fmt, ...);
/* Run comm's handler on an existing code.  Returns code. */
int mpii_err_raise(struct mpi_comm *c, int code);
int mpii_err_init(void);
/* The class of a code, or MPI_ERR_UNKNOWN if code is none (a callback's own value). */
int mpii_err_class(int code);
/* MPI_LASTUSEDCODE's value: the largest code or class in use. */
int mpii_err_lastused(void);
/* Error handlers are counted: every communicator (window) holding one keeps it. */
void mpii_errh_ref(MPI_Errhandler h);
void mpii_errh_unref(MPI_Errhandler h);

/*
 * Argument checks every call makes, each returning MPI_SUCCESS or the
 * error already reported through mpii_err (fn names the call).
 */
int mpii_check_comm(MPI_Comm h, const char *fn, struct mpi_comm **out);
int mpii_check_count(struct mpi_comm *c, int count, const char *fn);
int mpii_check_type(struct mpi_comm *c, MPI_Datatype dt, const char *fn);	/* valid and committed */
int mpii_check_buf(struct mpi_comm *c, const void *buf, int count, MPI_Datatype dt, const char *fn);
/* A peer rank of c: 0..peers-1, or MPI_PROC_NULL, or (any_ok) MPI_ANY_SOURCE. */
int mpii_check_rank(struct mpi_comm *c, int rank, int any_ok, const char *fn);
/* A tag: 0..MPII_TAG_UB, or (any_ok) MPI_ANY_TAG. */
int mpii_check_tag(struct mpi_comm *c, int tag, int any_ok, const char *fn);
int mpii_check_root(struct mpi_comm *c, int root, const char *fn);
int mpii_check_op(struct mpi_comm *c, MPI_Op op, const char *fn);

#define MPII_TAG_UB 0x7fffffff

/* --- datatypes ---------------------------------------------------------------------------- */

/*
 * What the other files ask of a datatype (datatype.c).  dt is a valid
 * handle (checked by the caller).
 */
size_t mpii_type_size(MPI_Datatype dt);			/* bytes of data in one element */
/*
 * A predefined type whose element is one run of bytes from its start, as
 * wide as its extent (MPI_INT, MPI_DOUBLE, MPI_BYTE...): its size, known
 * without a lookup; 0 for any other type.  The fast paths' test.
 */
extern uint8_t mpii_plain[NOW_MPI_NPREDEF_TYPES];
static inline size_t mpii_plain_size(MPI_Datatype dt)
{
	unsigned i = (unsigned)dt - (unsigned)NOW_MPI_H(NOW_MPI_KTYPE, 0);

	return i < NOW_MPI_NPREDEF_TYPES ? mpii_plain[i] : 0;
}
MPI_Aint mpii_type_extent(MPI_Datatype dt);
MPI_Aint mpii_type_lb(MPI_Datatype dt);
MPI_Aint mpii_type_true_lb(MPI_Datatype dt);
MPI_Aint mpii_type_true_extent(MPI_Datatype dt);
int mpii_type_valid(MPI_Datatype dt);			/* a live datatype handle */
int mpii_type_committed(MPI_Datatype dt);		/* predefined ones are */
/*
 * count elements of dt at buf are one contiguous run of count * size bytes:
 * 1 and *start set to its first byte, else 0.
 */
int mpii_type_contig(const void *buf, int count, MPI_Datatype dt, const void **start);
/*
 * The contiguous runs count elements of dt occupy, in the order of the
 * packed stream, as offsets from the buffer's address (below it for a
 * negative displacement); runs that touch are joined.  *runs is
 * malloc'd (NULL when there are none).  0, or -1 for no memory.
 */
struct mpii_run {
	MPI_Aint off;
	size_t len;
};
int mpii_type_runs(int count, MPI_Datatype dt, struct mpii_run **runs, size_t *n);
/* Pack count elements of dt at buf into out (count * size bytes). */
void mpii_pack(const void *buf, int count, MPI_Datatype dt, void *out);
/*
 * Unpack the first n bytes of a packed stream into count elements of dt at
 * buf (n <= count * size; a short message fills the first elements).
 */
void mpii_unpack(const void *in, size_t n, void *buf, int count, MPI_Datatype dt);
/* The number of whole basic elements n packed bytes of dt hold (Get_elements), or -1. */
MPI_Count mpii_type_elements(MPI_Datatype dt, MPI_Count n);
/*
 * The one predefined type dt is made of, or MPI_DATATYPE_NULL (mixed); a
 * MINLOC/MAXLOC pair type (MPI_2INT, MPI_DOUBLE_INT, ...) counts as one
 * type, not as its members (op.c reduces pairs).
 */
MPI_Datatype mpii_type_basic(MPI_Datatype dt);
void mpii_type_ref(MPI_Datatype dt);		/* pending operations keep a type alive */
void mpii_type_unref(MPI_Datatype dt);
int mpii_type_init(void);
const char *mpii_type_name(MPI_Datatype dt);

/*
 * Status count: the message's length in bytes, 63 bits over count_lo and
 * the high bits of count_hi_and_cancelled (bit 0 is "cancelled").
 */
static inline void mpii_status_set_bytes(MPI_Status *s, MPI_Count n)
{
	s->count_lo = (int)(uint32_t)(n & 0xffffffff);
	s->count_hi_and_cancelled = (s->count_hi_and_cancelled & 1) | (int)((uint64_t)n >> 32 << 1);
}
static inline MPI_Count mpii_status_bytes(const MPI_Status *s)
{
	return (MPI_Count)((uint64_t)(uint32_t)s->count_lo | (uint64_t)((uint32_t)s->count_hi_and_cancelled >> 1) << 32);
}

/* --- attributes (attr.c) ------------------------------------------------------------------- */

/*
 * An object's attributes: a list owned by the object (communicator,
 * datatype, window).  kind is the object's handle kind (NOW_MPI_KCOMM,
 * _KTYPE, _KWIN), h its handle, as the callbacks receive them.
 *  dup_all: copy src's attributes to *dst through each keyval's copy
 *           callback (Comm_dup, Type_dup); MPI_SUCCESS or the callback's error.
 *  free_all: delete every attribute through its delete callback (Comm_free,
 *           Type_free, Win_free); MPI_SUCCESS or the first callback error.
 */
int mpii_attr_dup_all(struct mpi_attr **dst, struct mpi_attr *src, int kind, int oldh, int newh);
int mpii_attr_free_all(struct mpi_attr **list, int kind, int h);
/* The attribute list of a datatype (datatype.c), or NULL for an invalid handle. */
struct mpi_attr **mpii_type_attrs(MPI_Datatype dt);

/* --- operations ------------------------------------------------------------------------------ */

/*
 * inout[i] = in[i] op inout[i] for count elements of dt (op.c).
 * MPI_SUCCESS, or MPI_ERR_OP when op is not defined on dt (reported by the caller).
 */
int mpii_op_apply(MPI_Op op, const void *in, void *inout, int count, MPI_Datatype dt);
int mpii_op_valid(MPI_Op op);
int mpii_op_commutative(MPI_Op op);
/* Is op defined on dt (predefined ops on their types; user ops on any)? */
int mpii_op_type_ok(MPI_Op op, MPI_Datatype dt);
/* Pending reductions keep a user's op alive after MPI_Op_free (predefined ones: no-ops). */
void mpii_op_ref(MPI_Op op);
void mpii_op_unref(MPI_Op op);
int mpii_op_init(void);

/* --- point to point (internal) ------------------------------------------------------------- */

enum mpii_send_mode { MPII_SEND_STD, MPII_SEND_SYNC, MPII_SEND_READY, MPII_SEND_BUF };

struct mpi_req;

/*
 * The internal point to point: no argument checks, no error handler; the
 * collectives' messages go on context c->ctx + ctxoff (MPII_CTX_COLL), so
 * they never match a program's.  peer is a rank of c (the remote group of
 * an intercommunicator), or MPI_PROC_NULL.  Return MPI_SUCCESS or an
 * error code; *out is the request (to wait for with mpii_req_wait).
 */
int mpii_isend(const void *buf, int count, MPI_Datatype dt, int peer, int tag, struct mpi_comm *c, int ctxoff,
	       enum mpii_send_mode mode, struct mpi_req **out);
int mpii_irecv(void *buf, int count, MPI_Datatype dt, int peer, int tag, struct mpi_comm *c, int ctxoff,
	       struct mpi_req **out);
/* Wait for r, fill status (may be NULL or MPI_STATUS_IGNORE), free r.  Its MPI_ERROR. */
int mpii_req_wait(struct mpi_req *r, MPI_Status *status);
/*
 * Wait for all n (NULL entries are skipped), freeing each and clearing its
 * slot; the first error, or MPI_SUCCESS.  Over mpii_req_wait alone, so the
 * host tests' fakes of it have it too.
 */
static inline int mpii_req_waitall(int n, struct mpi_req **r)
{
	int err = MPI_SUCCESS;

	for (int i = 0; i < n; i++)
		if (r[i]) {
			int e = mpii_req_wait(r[i], MPI_STATUS_IGNORE);
			r[i] = NULL;
			if (e != MPI_SUCCESS && err == MPI_SUCCESS)
				err = e;
		}
	return err;
}
/* Blocking forms. */
int mpii_send(const void *buf, int count, MPI_Datatype dt, int peer, int tag, struct mpi_comm *c, int ctxoff);
int mpii_send_mode(const void *buf, int count, MPI_Datatype dt, int peer, int tag, struct mpi_comm *c, int ctxoff,
		   enum mpii_send_mode mode);
/* Messages of at most this many bytes go eager (with the envelope), longer ones by rendezvous. */
#define MPII_EAGER_MAX (64 * 1024)
/*
 * A standard or ready send of len <= MPII_EAGER_MAX contiguous bytes at
 * start to world rank node (not this node's), on c's context + ctxoff:
 * sent, and done, with no request.  MPI_SUCCESS or a code (not raised).
 */
int mpii_send_eager(int node, struct mpi_comm *c, int ctxoff, int tag, const void *start, size_t len);
int mpii_recv(void *buf, int count, MPI_Datatype dt, int peer, int tag, struct mpi_comm *c, int ctxoff,
	      MPI_Status *status);
int mpii_sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf, int rcount,
		  MPI_Datatype rtype, int src, int rtag, struct mpi_comm *c, int ctxoff, MPI_Status *status);

/*
 * A request that some other part of the library completes (nonblocking
 * collectives, Comm_idup, generalized requests): the program waits for it
 * like any other.  mpii_req_generic: a new one, not complete, with a handle.
 * mpii_req_complete: complete it with error code err (lock not held).
 */
struct mpi_req *mpii_req_generic(struct mpi_comm *c);
/* A persistent collective's request (icoll.c): inactive, with its handle, keeping job; NULL on no memory. */
struct mpi_req *mpii_req_pcoll(struct mpi_comm *c, void *job);
MPI_Request mpii_req_handle(struct mpi_req *r);
void mpii_req_complete(struct mpi_req *r, int err);

/*
 * The collectives the other files use (coll.c), without argument checks
 * or error handler, on intracommunicators: MPI_SUCCESS or an error code.
 */
int mpii_barrier(struct mpi_comm *c);
int mpii_bcast(void *buf, int count, MPI_Datatype dt, int root, struct mpi_comm *c);
int mpii_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, struct mpi_comm *c);
int mpii_allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
		   struct mpi_comm *c);

/* The world: this node's rank and the job's size. */
extern int mpii_world_rank, mpii_world_size;
/* MPI_Init ran and MPI_Finalize did not yet. */
extern int mpii_initialized, mpii_finalized;

/* Has world rank w died (its node gone)? */
int mpii_rank_dead(int w);

/* Wtime's clock. */
double mpii_wtime(void);

/* Abort the job: print why, stop this node with status code (mpirun stops the others). */
__attribute__((noreturn)) void mpii_abort(int code, const char *why);

#endif
