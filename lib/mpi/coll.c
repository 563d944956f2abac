/*
 * The blocking collectives (MPI-3.1 chapter 5) on the internal point to
 * point, on intra- and intercommunicators, and the algorithms the
 * nonblocking ones run (coll.h).
 *
 * A message costs a round trip of 10-100 us between emulated nodes and a
 * communicator has at most 64 ranks, so the algorithms count rounds:
 *
 *   Barrier            dissemination, ceil(log2 n) rounds
 *   Bcast              binomial tree
 *   Gather, Scatter    binomial trees over packed blocks
 *   Gatherv, Scatterv  linear (only the root knows the counts)
 *   Allgather(v)       Bruck's concatenation, ceil(log2 n) rounds, any n
 *   Alltoall(v,w)      every pair at once
 *   Reduce             binomial tree, in rank order (then to the root
 *                      when the op does not commute and the root is not 0)
 *   Allreduce          recursive doubling, the ranks beyond a power of two
 *                      folded in first, in rank order; long vectors of a
 *                      commutative op: recursive halving then doubling
 *   Reduce_scatter     recursive halving (commutative ops), else reduce to
 *                      rank 0 and a binomial scatter of the pieces
 *   Scan, Exscan       recursive doubling
 *
 * Reduce, Allreduce and the scans cut long vectors into segments of
 * 1 MiB, reduced one after the other.
 *
 * Every reduction keeps rank order (the lower ranks' data is the left
 * operand), so a user's non-commutative op gets what MPI-3.1 §5.9.1
 * promises, and partners in a doubling step compute bit for bit the same
 * floating point result.
 *
 * Intercommunicators (MPI-3.1 §5.2.2): the messages go between the
 * groups only.  Rooted collectives go straight between the root and the
 * other group; the reductions to everyone go through the groups' leaders
 * (rank 0): every rank sends its vector to the remote leader, which
 * reduces them in rank order and hands the result to the other leader,
 * which passes it (or its pieces) to the rest of its remote group.
 *
 * Errors: a rank that cannot go on (a receive failed, a length did not
 * match) still takes part, sending empty messages where data was due; a
 * receiver that expected data sees the short message and fails too, so no
 * rank waits forever and every rank returns an error.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/mpi/coll.h"

#define CTX MPII_CTX_COLL
/* A tag: the instance's sequence number, then 6 bits of phase (a round, a step). */
#define PHASE_BITS 6

static int tag_of(uint32_t seq, int phase)
{
	return (int)((seq & (MPII_TAG_UB >> PHASE_BITS)) << PHASE_BITS | (uint32_t)phase);
}

uint32_t mpii_coll_seq(struct mpi_comm *c)
{
	mpii_lock();
	uint32_t s = c->coll_seq++;
	mpii_unlock();
	return s;
}

static int min_int(int a, int b)
{
	return a < b ? a : b;
}

/* The smallest power of two >= n (a binomial tree's root's span). */
static int pow2_ceil(int n)
{
	int p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

/* --- data ------------------------------------------------------------------------------- */

static size_t bytes_of(int count, MPI_Datatype dt)
{
	return count > 0 ? (size_t)count * mpii_type_size(dt) : 0;
}

/* Element i of a buffer of dt (as addresses: the buffer may be MPI_BOTTOM). */
static char *elem(const void *buf, MPI_Aint i, MPI_Datatype dt)
{
	return (char *)((uintptr_t)buf + (uintptr_t)(i * mpii_type_extent(dt)));
}

/*
 * Where a receive of count elements goes: an empty one never into NULL,
 * which the point to point takes for a failed allocation.
 */
static void *room(void *buf, int count, MPI_Datatype dt)
{
	static char none;

	return buf || bytes_of(count, dt) ? buf : &none;
}

static int no_mem(const char *fn)
{
	return mpii_errcode(MPI_ERR_NO_MEM, fn, "no memory for a temporary buffer");
}

/*
 * Room for count elements of dt laid out as in a program's buffer: the
 * address to pass with (count, dt), NULL if memory ran out; *mem is what
 * to free.
 */
static void *tmp_new(int count, MPI_Datatype dt, void **mem)
{
	MPI_Aint ext = mpii_type_extent(dt), lo = mpii_type_true_lb(dt);
	size_t span = 0;

	if (count > 0) {
		span = (size_t)mpii_type_true_extent(dt) + (size_t)(count - 1) * (size_t)(ext < 0 ? -ext : ext);
		if (ext < 0)
			lo += (count - 1) * ext;
	}
	*mem = malloc(span ? span : 1);
	return *mem ? (char *)*mem - lo : NULL;
}

/*
 * Long reductions go in pieces of about SEGMENT bytes, one after the
 * other (every rank cuts alike: count and datatype are the same on all,
 * MPI-3.1 §5.9.1): the temporary buffers stay that small (a node has
 * tens of MiB; MPICH's uoplong reduces 25 MiB vectors), and a piece moves
 * up a tree while the next one is reduced below.
 */
#define SEGMENT (1 << 20)

static int seg_count(int count, MPI_Datatype dt)
{
	MPI_Aint ext = mpii_type_extent(dt);

	if (ext <= 0 || (MPI_Aint)count * ext <= SEGMENT)
		return count;
	return SEGMENT / ext > 0 ? (int)(SEGMENT / ext) : 1;
}

/* The piece of a buffer from element off (MPI_IN_PLACE stays). */
static void *part(const void *buf, int off, MPI_Datatype dt)
{
	return buf == MPI_IN_PLACE ? MPI_IN_PLACE : elem(buf, off, dt);
}

/* Copy scount elements of stype to rcount elements of rtype (a receive from oneself). */
static int copy(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
		const char *fn)
{
	size_t n = bytes_of(scount, stype);
	const void *s;
	void *d;

	if (n > bytes_of(rcount, rtype))
		return mpii_errcode(MPI_ERR_TRUNCATE, fn, "%zu bytes for a buffer of %zu", n, bytes_of(rcount, rtype));
	if (n == 0)
		return MPI_SUCCESS;
	if (mpii_type_contig(sbuf, scount, stype, &s) && mpii_type_contig(rbuf, rcount, rtype, (const void **)&d)) {
		memmove(d, s, n);
		return MPI_SUCCESS;
	}
	void *t = malloc(n);
	if (!t)
		return no_mem(fn);
	mpii_pack(sbuf, scount, stype, t);
	mpii_unpack(t, n, rbuf, rcount, rtype);
	free(t);
	return MPI_SUCCESS;
}

/* --- messages ----------------------------------------------------------------------------- */

static int mismatch(const char *fn, MPI_Count got, size_t want, int peer)
{
	return mpii_errcode(MPI_ERR_OTHER, fn,
			    "%lld bytes from rank %d where %zu were due (lengths differ, or that rank failed)", got,
			    peer, want);
}

/*
 * The requests of one step, posted together and waited for together.  A
 * post that fails to make a request (no memory) stops the posts after
 * it; an error with a request (a dead peer) is kept and the posts go on,
 * so that the other peers are not left waiting.  A receive must bring
 * exactly its count (a collective's lengths agree), else it fails.
 */
struct reqs {
	struct mpi_req **r;
	long long *want;	/* bytes a receive must bring; -1: a send */
	int *peer;
	int n, err, broken;
	const char *fn;
};

static int reqs_init(struct reqs *q, int max, const char *fn)
{
	size_t k = (size_t)(max ? max : 1);

	q->n = 0;
	q->err = MPI_SUCCESS;
	q->broken = 0;
	q->fn = fn;
	q->r = malloc(k * (sizeof *q->r + sizeof *q->want + sizeof *q->peer));
	if (!q->r)
		return no_mem(fn);
	q->want = (long long *)(q->r + k);
	q->peer = (int *)(q->want + k);
	return MPI_SUCCESS;
}

static void reqs_add(struct reqs *q, int err, long long want, int peer)
{
	if (q->r[q->n]) {
		q->want[q->n] = want;
		q->peer[q->n++] = peer;
	} else {
		q->broken = 1;
	}
	if (!q->err)
		q->err = err;
}

/* Send count elements, or an empty message (failed: this rank cannot give its data). */
static void reqs_send(struct reqs *q, const void *buf, int count, MPI_Datatype dt, int peer, int tag,
		      struct mpi_comm *c, int failed)
{
	int err;

	if (q->broken)
		return;
	if (failed)
		err = mpii_isend(NULL, 0, MPI_BYTE, peer, tag, c, CTX, MPII_SEND_STD, &q->r[q->n]);
	else
		err = mpii_isend(buf, count, dt, peer, tag, c, CTX, MPII_SEND_STD, &q->r[q->n]);
	reqs_add(q, err, -1, peer);
}

static void reqs_recv(struct reqs *q, void *buf, int count, MPI_Datatype dt, int peer, int tag, struct mpi_comm *c)
{
	if (q->broken)
		return;
	reqs_add(q, mpii_irecv(room(buf, count, dt), count, dt, peer, tag, c, CTX, &q->r[q->n]),
		 (long long)bytes_of(count, dt), peer);
}

/* Wait for every request and free q: the first error, or MPI_SUCCESS. */
static int reqs_wait(struct reqs *q)
{
	int err = q->err;

	for (int i = 0; i < q->n; i++) {
		MPI_Status st;
		int e = mpii_req_wait(q->r[i], &st);
		if (!e && q->want[i] >= 0 && mpii_status_bytes(&st) != q->want[i])
			e = mismatch(q->fn, mpii_status_bytes(&st), (size_t)q->want[i], q->peer[i]);
		if (!err)
			err = e;
	}
	free(q->r);
	return err;
}

static int send_data(const void *buf, int count, MPI_Datatype dt, int peer, int tag, struct mpi_comm *c, int failed)
{
	if (failed)
		return mpii_send(NULL, 0, MPI_BYTE, peer, tag, c, CTX);
	return mpii_send(buf, count, dt, peer, tag, c, CTX);
}

static int recv_data(void *buf, int count, MPI_Datatype dt, int peer, int tag, struct mpi_comm *c, const char *fn)
{
	MPI_Status st;
	int err = mpii_recv(room(buf, count, dt), count, dt, peer, tag, c, CTX, &st);

	if (!err && (size_t)mpii_status_bytes(&st) != bytes_of(count, dt))
		err = mismatch(fn, mpii_status_bytes(&st), bytes_of(count, dt), peer);
	return err;
}

/* One round of a doubling algorithm: send to dst, receive from src at once. */
static int exchange(const void *sbuf, int scount, MPI_Datatype stype, int dst, void *rbuf, int rcount,
		    MPI_Datatype rtype, int src, int tag, struct mpi_comm *c, int failed, const char *fn)
{
	MPI_Status st;
	int err;

	rbuf = room(rbuf, rcount, rtype);
	if (failed)
		err = mpii_sendrecv(NULL, 0, MPI_BYTE, dst, tag, rbuf, rcount, rtype, src, tag, c, CTX, &st);
	else
		err = mpii_sendrecv(sbuf, scount, stype, dst, tag, rbuf, rcount, rtype, src, tag, c, CTX, &st);
	if (!err && (size_t)mpii_status_bytes(&st) != bytes_of(rcount, rtype))
		err = mismatch(fn, mpii_status_bytes(&st), bytes_of(rcount, rtype), src);
	return err;
}

/* Keep the first error of a sequence of steps. */
#define FIRST(err, expr)			\
	do {					\
		int e_ = (expr);		\
		if (!(err))			\
			(err) = e_;		\
	} while (0)

/* --- barrier ------------------------------------------------------------------------------ */

static int inter_relay(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, const int *lcounts,
		       struct mpi_comm *c, uint32_t seq, const char *fn);

/* Dissemination (Hensgen, Finkel, Manber 1988): round k signals rank r + 2^k. */
static int barrier_intra(struct mpi_comm *c, uint32_t seq)
{
	int n = c->size, r = c->rank, err = MPI_SUCCESS;

	for (int k = 1, round = 0; k < n; k <<= 1, round++)
		FIRST(err, exchange(NULL, 0, MPI_BYTE, (r + k) % n, NULL, 0, MPI_BYTE, (r - k + n) % n,
				    tag_of(seq, round), c, 0, "MPI_Barrier"));
	return err;
}

int mpii_coll_barrier(struct mpi_comm *c, uint32_t seq)
{
	if (mpii_comm_inter(c))
		return inter_relay(NULL, NULL, 0, MPI_BYTE, MPI_OP_NULL, NULL, c, seq, "MPI_Barrier");
	return barrier_intra(c, seq);
}

/* --- broadcast ----------------------------------------------------------------------------- */

/*
 * Binomial tree: relative rank v receives from v minus its lowest set bit,
 * then sends to v + 2^k for every 2^k below that bit, the largest subtree
 * first.
 */
static int bcast_intra(void *buf, int count, MPI_Datatype dt, int root, struct mpi_comm *c, uint32_t seq)
{
	int n = c->size, v = (c->rank - root + n) % n, tag = tag_of(seq, 0), mask, err = MPI_SUCCESS;
	struct reqs q;

	if (n == 1 || bytes_of(count, dt) == 0)
		return MPI_SUCCESS;
	for (mask = 1; mask < n; mask <<= 1)
		if (v & mask) {
			err = recv_data(buf, count, dt, (v - mask + root) % n, tag, c, "MPI_Bcast");
			break;
		}
	FIRST(err, reqs_init(&q, 32, "MPI_Bcast"));
	if (q.r) {
		for (mask >>= 1; mask > 0; mask >>= 1)
			if (v + mask < n)
				reqs_send(&q, buf, count, dt, (v + mask + root) % n, tag, c, err != MPI_SUCCESS);
		FIRST(err, reqs_wait(&q));
	}
	return err;
}

static int bcast_inter(void *buf, int count, MPI_Datatype dt, int root, struct mpi_comm *c, uint32_t seq)
{
	int tag = tag_of(seq, 0), err;
	struct reqs q;

	if (root == MPI_PROC_NULL)
		return MPI_SUCCESS;
	if (root != MPI_ROOT)
		return recv_data(buf, count, dt, root, tag, c, "MPI_Bcast");
	int m = mpii_comm_peers(c);
	if ((err = reqs_init(&q, m, "MPI_Bcast")))
		return err;
	for (int i = 0; i < m; i++)
		reqs_send(&q, buf, count, dt, i, tag, c, 0);
	return reqs_wait(&q);
}

int mpii_coll_bcast(void *buf, int count, MPI_Datatype dt, int root, struct mpi_comm *c, uint32_t seq)
{
	if (mpii_comm_inter(c))
		return bcast_inter(buf, count, dt, root, c, seq);
	return bcast_intra(buf, count, dt, root, c, seq);
}

/* --- gather and scatter -------------------------------------------------------------------- */

/*
 * The binomial trees of Gather and Scatter move packed blocks: relative
 * rank v holds the blocks of v .. v + span - 1, span its lowest set bit
 * (the root: all n).  Every rank's block has the same length (the type
 * signatures agree), so a non-root rank knows it from its own arguments.
 */
static int subtree(int v, int n, int *mask)
{
	int m = 1;

	while (m < n && !(v & m))
		m <<= 1;
	*mask = m;
	return min_int(m, n - v);
}

static int gather_intra(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
			int root, struct mpi_comm *c, uint32_t seq)
{
	static const char fn[] = "MPI_Gather";
	int n = c->size, r = c->rank, v = (r - root + n) % n, tag = tag_of(seq, 0), mask, err = MPI_SUCCESS;
	size_t blk = r == root ? bytes_of(rcount, rtype) : bytes_of(scount, stype);
	struct reqs q;

	if (blk == 0)
		return MPI_SUCCESS;
	int span = subtree(v, n, &mask);
	char *tmp = malloc((size_t)span * blk);
	if (!tmp)
		return no_mem(fn);
	if (r == root && sbuf == MPI_IN_PLACE)
		mpii_pack(elem(rbuf, (MPI_Aint)r * rcount, rtype), rcount, rtype, tmp);
	else if (bytes_of(scount, stype) != blk)
		err = mpii_errcode(MPI_ERR_TRUNCATE, fn, "the root's block has %zu bytes, its buffer's %zu",
				   bytes_of(scount, stype), blk);
	else
		mpii_pack(sbuf, scount, stype, tmp);
	FIRST(err, reqs_init(&q, 32, fn));
	if (q.r) {
		for (int k = 1; k < mask; k <<= 1)
			if (v + k < n)
				reqs_recv(&q, tmp + k * blk, (int)((size_t)min_int(k, n - v - k) * blk), MPI_BYTE,
					  (v + k + root) % n, tag, c);
		FIRST(err, reqs_wait(&q));
	}
	if (v != 0) {
		FIRST(err, send_data(tmp, (int)(span * blk), MPI_BYTE, (v - mask + root) % n, tag, c, err != 0));
	} else if (!err) {
		for (int j = sbuf == MPI_IN_PLACE; j < n; j++)
			mpii_unpack(tmp + j * blk, blk, elem(rbuf, (MPI_Aint)((j + root) % n) * rcount, rtype), rcount,
				    rtype);
	}
	free(tmp);
	return err;
}

static int scatter_intra(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
			 MPI_Datatype rtype, int root, struct mpi_comm *c, uint32_t seq)
{
	static const char fn[] = "MPI_Scatter";
	int n = c->size, r = c->rank, v = (r - root + n) % n, tag = tag_of(seq, 0), mask, err = MPI_SUCCESS;
	size_t blk = r == root ? bytes_of(scount, stype) : bytes_of(rcount, rtype);
	struct reqs q;

	if (blk == 0)
		return MPI_SUCCESS;
	int span = subtree(v, n, &mask);
	char *tmp = malloc((size_t)span * blk);
	if (!tmp)
		return no_mem(fn);
	if (v == 0) {
		for (int j = 1; j < n; j++)
			mpii_pack(elem(sbuf, (MPI_Aint)((j + root) % n) * scount, stype), scount, stype, tmp + j * blk);
	} else {
		err = recv_data(tmp, (int)(span * blk), MPI_BYTE, (v - mask + root) % n, tag, c, fn);
	}
	FIRST(err, reqs_init(&q, 32, fn));
	if (q.r) {
		for (int k = mask >> 1; k > 0; k >>= 1)
			if (v + k < n)
				reqs_send(&q, tmp + k * blk, (int)((size_t)min_int(k, n - v - k) * blk), MPI_BYTE,
					  (v + k + root) % n, tag, c, err != 0);
		FIRST(err, reqs_wait(&q));
	}
	if (v == 0) {
		if (rbuf != MPI_IN_PLACE)
			FIRST(err, copy(elem(sbuf, (MPI_Aint)r * scount, stype), scount, stype, rbuf, rcount, rtype, fn));
	} else if (!err) {
		mpii_unpack(tmp, blk, rbuf, rcount, rtype);
	}
	free(tmp);
	return err;
}

/*
 * Gatherv and Scatterv, and the rooted collectives of an
 * intercommunicator: the root and every other rank directly.  Zero-byte
 * blocks travel on neither side (both sides know the length).  self: the
 * root's own rank in the peers' numbering, or -1 (an intercommunicator).
 */
static int gatherv_linear(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int *rcounts,
			  const int *displs, MPI_Datatype rtype, int root, int self, struct mpi_comm *c,
			  uint32_t seq, const char *fn)
{
	int tag = tag_of(seq, 0), err;
	struct reqs q;

	if (root == MPI_PROC_NULL)
		return MPI_SUCCESS;
	if (self < 0 ? root != MPI_ROOT : c->rank != root) {
		if (bytes_of(scount, stype) == 0)
			return MPI_SUCCESS;
		return mpii_send(sbuf, scount, stype, root, tag, c, CTX);
	}
	int m = mpii_comm_peers(c);
	if ((err = reqs_init(&q, m, fn)))
		return err;
	for (int i = 0; i < m; i++)
		if (i != self && bytes_of(rcounts[i], rtype))
			reqs_recv(&q, elem(rbuf, displs[i], rtype), rcounts[i], rtype, i, tag, c);
	if (self >= 0 && sbuf != MPI_IN_PLACE)
		err = copy(sbuf, scount, stype, elem(rbuf, displs[self], rtype), rcounts[self], rtype, fn);
	FIRST(err, reqs_wait(&q));
	return err;
}

static int scatterv_linear(const void *sbuf, const int *scounts, const int *displs, MPI_Datatype stype, void *rbuf,
			   int rcount, MPI_Datatype rtype, int root, int self, struct mpi_comm *c, uint32_t seq,
			   const char *fn)
{
	int tag = tag_of(seq, 0), err;
	struct reqs q;

	if (root == MPI_PROC_NULL)
		return MPI_SUCCESS;
	if (self < 0 ? root != MPI_ROOT : c->rank != root) {
		if (bytes_of(rcount, rtype) == 0)
			return MPI_SUCCESS;
		return recv_data(rbuf, rcount, rtype, root, tag, c, fn);
	}
	int m = mpii_comm_peers(c);
	if ((err = reqs_init(&q, m, fn)))
		return err;
	for (int i = 0; i < m; i++)
		if (i != self && bytes_of(scounts[i], stype))
			reqs_send(&q, elem(sbuf, displs[i], stype), scounts[i], stype, i, tag, c, 0);
	if (self >= 0 && rbuf != MPI_IN_PLACE)
		err = copy(elem(sbuf, displs[self], stype), scounts[self], stype, rbuf, rcount, rtype, fn);
	FIRST(err, reqs_wait(&q));
	return err;
}

/* The uniform counts and displacements of Gather and Scatter, for the linear forms. */
static int *uniform(int n, int count, int **displs)
{
	int *a = malloc(2 * (size_t)(n ? n : 1) * sizeof *a);

	if (!a)
		return NULL;
	*displs = a + n;
	for (int i = 0; i < n; i++) {
		a[i] = count;
		(*displs)[i] = i * count;
	}
	return a;
}

int mpii_coll_gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
		     int root, struct mpi_comm *c, uint32_t seq)
{
	if (!mpii_comm_inter(c))
		return gather_intra(sbuf, scount, stype, rbuf, rcount, rtype, root, c, seq);
	int *displs, *counts = uniform(mpii_comm_peers(c), rcount, &displs);
	if (!counts)
		return no_mem("MPI_Gather");
	int err = gatherv_linear(sbuf, scount, stype, rbuf, counts, displs, rtype, root, -1, c, seq, "MPI_Gather");
	free(counts);
	return err;
}

int mpii_coll_gatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int *rcounts,
		      const int *displs, MPI_Datatype rtype, int root, struct mpi_comm *c, uint32_t seq)
{
	return gatherv_linear(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root,
			      mpii_comm_inter(c) ? -1 : root, c, seq, "MPI_Gatherv");
}

int mpii_coll_scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
		      int root, struct mpi_comm *c, uint32_t seq)
{
	if (!mpii_comm_inter(c))
		return scatter_intra(sbuf, scount, stype, rbuf, rcount, rtype, root, c, seq);
	int *displs, *counts = uniform(mpii_comm_peers(c), scount, &displs);
	if (!counts)
		return no_mem("MPI_Scatter");
	int err = scatterv_linear(sbuf, counts, displs, stype, rbuf, rcount, rtype, root, -1, c, seq, "MPI_Scatter");
	free(counts);
	return err;
}

int mpii_coll_scatterv(const void *sbuf, const int *scounts, const int *displs, MPI_Datatype stype, void *rbuf,
		       int rcount, MPI_Datatype rtype, int root, struct mpi_comm *c, uint32_t seq)
{
	return scatterv_linear(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root,
			       mpii_comm_inter(c) ? -1 : root, c, seq, "MPI_Scatterv");
}

/* --- all to all ---------------------------------------------------------------------------- */

/*
 * Every pair at once: the receives posted first, then the sends, each
 * rank starting with its right neighbour so that no rank is everyone's
 * first.  Displacements in bytes, a type per peer (Alltoallw's form, to
 * which the others are brought).  self: this rank (its block is copied),
 * or -1 on an intercommunicator.
 */
static int alltoallw_direct(const void *sbuf, const int *scounts, const MPI_Aint *sdispls, const MPI_Datatype *stypes,
			    void *rbuf, const int *rcounts, const MPI_Aint *rdispls, const MPI_Datatype *rtypes,
			    int self, struct mpi_comm *c, uint32_t seq, const char *fn)
{
	int m = mpii_comm_peers(c), tag = tag_of(seq, 0), err;
	struct reqs q;

	if ((err = reqs_init(&q, 2 * m, fn)))
		return err;
	for (int i = 0; i < m; i++)
		if (i != self && bytes_of(rcounts[i], rtypes[i]))
			reqs_recv(&q, (char *)rbuf + rdispls[i], rcounts[i], rtypes[i], i, tag, c);
	for (int k = 0; k < m; k++) {
		int i = (self + 1 + k) % m;
		if (i != self && bytes_of(scounts[i], stypes[i]))
			reqs_send(&q, (const char *)sbuf + sdispls[i], scounts[i], stypes[i], i, tag, c, 0);
	}
	if (self >= 0)
		err = copy((const char *)sbuf + sdispls[self], scounts[self], stypes[self], (char *)rbuf + rdispls[self],
			   rcounts[self], rtypes[self], fn);
	FIRST(err, reqs_wait(&q));
	return err;
}

/*
 * The general form, MPI_IN_PLACE included: the blocks to send are first
 * packed out of the receive buffer, which the receives then overwrite.
 * The arrays are per peer; displacements in bytes.
 */
static int alltoallw_any(const void *sbuf, const int *scounts, const MPI_Aint *sdispls, const MPI_Datatype *stypes,
			 void *rbuf, const int *rcounts, const MPI_Aint *rdispls, const MPI_Datatype *rtypes,
			 struct mpi_comm *c, uint32_t seq, const char *fn)
{
	int m = mpii_comm_peers(c), self = mpii_comm_inter(c) ? -1 : c->rank;

	if (sbuf != MPI_IN_PLACE)
		return alltoallw_direct(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, self, c, seq,
					fn);
	size_t total = 0;
	for (int i = 0; i < m; i++)
		total += bytes_of(rcounts[i], rtypes[i]);
	char *packed = malloc(total ? total : 1);
	int *counts = malloc((size_t)m * sizeof *counts);
	MPI_Aint *displs = malloc((size_t)m * sizeof *displs);
	MPI_Datatype *types = malloc((size_t)m * sizeof *types);
	int err;
	if (!packed || !counts || !displs || !types) {
		err = no_mem(fn);
	} else {
		size_t off = 0;
		for (int i = 0; i < m; i++) {
			size_t b = bytes_of(rcounts[i], rtypes[i]);
			if (i == self)
				b = 0;		/* the own block stays where it is */
			else if (b)
				mpii_pack((char *)rbuf + rdispls[i], rcounts[i], rtypes[i], packed + off);
			counts[i] = (int)b;
			displs[i] = (MPI_Aint)off;
			types[i] = MPI_BYTE;
			off += b;
		}
		err = alltoallw_direct(packed, counts, displs, types, rbuf, rcounts, rdispls, rtypes, self, c, seq, fn);
	}
	free(packed);
	free(counts);
	free(displs);
	free(types);
	return err;
}

/* Alltoall's and Alltoallv's arguments in Alltoallw's form (displacements in bytes). */
struct wform {
	int *scounts, *rcounts;
	MPI_Aint *sdispls, *rdispls;
	MPI_Datatype *stypes, *rtypes;
};

static int wform_new(struct wform *w, int m)
{
	size_t k = (size_t)(m ? m : 1);
	char *p = malloc(k * 2 * (sizeof(int) + sizeof(MPI_Aint) + sizeof(MPI_Datatype)));

	if (!p)
		return -1;
	w->sdispls = (MPI_Aint *)p;
	w->rdispls = w->sdispls + k;
	w->scounts = (int *)(w->rdispls + k);
	w->rcounts = w->scounts + k;
	w->stypes = (MPI_Datatype *)(w->rcounts + k);
	w->rtypes = w->stypes + k;
	return 0;
}

/* One side of a v collective: counts and displacements in elements of dt. */
static void wform_side(int m, int *counts, MPI_Aint *displs, MPI_Datatype *types, const int *vcounts,
		       const int *vdispls, int count, MPI_Datatype dt)
{
	for (int i = 0; i < m; i++) {
		counts[i] = vcounts ? vcounts[i] : count;
		displs[i] = (vdispls ? vdispls[i] : (MPI_Aint)i * count) * mpii_type_extent(dt);
		types[i] = dt;
	}
}

int mpii_coll_alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
		       struct mpi_comm *c, uint32_t seq)
{
	int m = mpii_comm_peers(c);
	struct wform w;

	if (wform_new(&w, m))
		return no_mem("MPI_Alltoall");
	if (sbuf != MPI_IN_PLACE)
		wform_side(m, w.scounts, w.sdispls, w.stypes, NULL, NULL, scount, stype);
	wform_side(m, w.rcounts, w.rdispls, w.rtypes, NULL, NULL, rcount, rtype);
	int err = alltoallw_any(sbuf, w.scounts, w.sdispls, w.stypes, rbuf, w.rcounts, w.rdispls, w.rtypes, c, seq,
				"MPI_Alltoall");
	free(w.sdispls);
	return err;
}

int mpii_coll_alltoallv(const void *sbuf, const int *scounts, const int *sdispls, MPI_Datatype stype, void *rbuf,
			const int *rcounts, const int *rdispls, MPI_Datatype rtype, struct mpi_comm *c, uint32_t seq)
{
	int m = mpii_comm_peers(c);
	struct wform w;

	if (wform_new(&w, m))
		return no_mem("MPI_Alltoallv");
	if (sbuf != MPI_IN_PLACE)
		wform_side(m, w.scounts, w.sdispls, w.stypes, scounts, sdispls, 0, stype);
	wform_side(m, w.rcounts, w.rdispls, w.rtypes, rcounts, rdispls, 0, rtype);
	int err = alltoallw_any(sbuf, w.scounts, w.sdispls, w.stypes, rbuf, w.rcounts, w.rdispls, w.rtypes, c, seq,
				"MPI_Alltoallv");
	free(w.sdispls);
	return err;
}

int mpii_coll_alltoallw(const void *sbuf, const int *scounts, const int *sdispls, const MPI_Datatype *stypes,
			void *rbuf, const int *rcounts, const int *rdispls, const MPI_Datatype *rtypes,
			struct mpi_comm *c, uint32_t seq)
{
	int m = mpii_comm_peers(c);
	struct wform w;

	if (wform_new(&w, m))
		return no_mem("MPI_Alltoallw");
	for (int i = 0; i < m; i++) {
		if (sbuf != MPI_IN_PLACE) {
			w.scounts[i] = scounts[i];
			w.sdispls[i] = sdispls[i];
			w.stypes[i] = stypes[i];
		}
		w.rcounts[i] = rcounts[i];
		w.rdispls[i] = rdispls[i];
		w.rtypes[i] = rtypes[i];
	}
	int err = alltoallw_any(sbuf, w.scounts, w.sdispls, w.stypes, rbuf, w.rcounts, w.rdispls, w.rtypes, c, seq,
				"MPI_Alltoallw");
	free(w.sdispls);
	return err;
}

/* --- allgather ------------------------------------------------------------------------------ */

/*
 * Bruck's concatenation (Bruck et al., IEEE TPDS 8(11), 1997): the blocks
 * sit rotated, this rank's first; in round k a rank sends the blocks it
 * has (up to 2^k of them) to rank r - 2^k and appends those of rank
 * r + 2^k.  ceil(log2 n) rounds for any n, each block received once.
 */
static int allgatherv_bruck(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int *rcounts,
			    const int *displs, MPI_Datatype rtype, struct mpi_comm *c, uint32_t seq)
{
	static const char fn[] = "MPI_Allgather";
	int n = c->size, r = c->rank, err = MPI_SUCCESS;
	size_t *off = malloc((size_t)(n + 1) * sizeof *off);
	char *tmp = NULL;

	if (!off)
		return no_mem(fn);
	off[0] = 0;
	for (int j = 0; j < n; j++)
		off[j + 1] = off[j] + bytes_of(rcounts[(r + j) % n], rtype);
	if (off[n] == 0)
		goto out;
	if (!(tmp = malloc(off[n]))) {
		err = no_mem(fn);
		goto out;
	}
	if (sbuf == MPI_IN_PLACE)
		mpii_pack(elem(rbuf, displs[r], rtype), rcounts[r], rtype, tmp);
	else if (bytes_of(scount, stype) != off[1])
		err = mpii_errcode(MPI_ERR_TRUNCATE, fn, "%zu bytes to send, %zu to receive",
				   bytes_of(scount, stype), off[1]);
	else
		mpii_pack(sbuf, scount, stype, tmp);
	for (int k = 1, round = 0; k < n; k <<= 1, round++) {
		int cnt = min_int(k, n - k);
		FIRST(err, exchange(tmp, (int)off[cnt], MPI_BYTE, (r - k + n) % n, tmp + off[k],
				    (int)(off[k + cnt] - off[k]), MPI_BYTE, (r + k) % n, tag_of(seq, round), c, err != 0,
				    fn));
	}
	for (int j = sbuf == MPI_IN_PLACE; j < n && !err; j++) {
		int i = (r + j) % n;
		mpii_unpack(tmp + off[j], off[j + 1] - off[j], elem(rbuf, displs[i], rtype), rcounts[i], rtype);
	}
out:
	free(tmp);
	free(off);
	return err;
}

/* An intercommunicator's: this rank's block to every remote rank, theirs from each. */
static int allgatherv_inter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int *rcounts,
			    const int *displs, MPI_Datatype rtype, struct mpi_comm *c, uint32_t seq)
{
	int m = mpii_comm_peers(c);
	struct wform w;

	if (wform_new(&w, m))
		return no_mem("MPI_Allgather");
	for (int i = 0; i < m; i++) {
		w.scounts[i] = scount;
		w.sdispls[i] = 0;
		w.stypes[i] = stype;
	}
	wform_side(m, w.rcounts, w.rdispls, w.rtypes, rcounts, displs, 0, rtype);
	int err = alltoallw_direct(sbuf, w.scounts, w.sdispls, w.stypes, rbuf, w.rcounts, w.rdispls, w.rtypes, -1, c,
				   seq, "MPI_Allgather");
	free(w.sdispls);
	return err;
}

int mpii_coll_allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int *rcounts,
			 const int *displs, MPI_Datatype rtype, struct mpi_comm *c, uint32_t seq)
{
	if (mpii_comm_inter(c))
		return allgatherv_inter(sbuf, scount, stype, rbuf, rcounts, displs, rtype, c, seq);
	return allgatherv_bruck(sbuf, scount, stype, rbuf, rcounts, displs, rtype, c, seq);
}

int mpii_coll_allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
			MPI_Datatype rtype, struct mpi_comm *c, uint32_t seq)
{
	int *displs, *counts = uniform(mpii_comm_peers(c), rcount, &displs);

	if (!counts)
		return no_mem("MPI_Allgather");
	int err = mpii_coll_allgatherv(sbuf, scount, stype, rbuf, counts, displs, rtype, c, seq);
	free(counts);
	return err;
}

/* --- reductions ------------------------------------------------------------------------------ */

/*
 * Reduce count elements of dt to troot along a binomial tree: relative
 * rank v combines its children v + 1, v + 2, v + 4, ... (each holding the
 * ranks right after those v holds) as acc op child, then sends to its
 * parent.  With troot 0 that is rank order, whatever op.  in: this rank's
 * vector; out: the result, at troot only (may be in).
 */
static int reduce_tree(const void *in, void *out, int count, MPI_Datatype dt, MPI_Op op, int troot,
		       struct mpi_comm *c, int tag, const char *fn)
{
	int n = c->size, v = (c->rank - troot + n) % n, top, nchild = 0, k = 0, err = MPI_SUCCESS;
	void *mem[2] = { NULL, NULL }, *buf[2] = { NULL, NULL };
	const void *acc = in;

	subtree(v, n, &top);
	for (int mask = 1; mask < top; mask <<= 1)
		nchild += v + mask < n;
	/*
	 * The step of child i leaves acc in buf[i % 2]: at the root the last
	 * one's may be out itself, unless out still holds this rank's own
	 * vector (in place) when that buffer is first written.
	 */
	if (v == 0 && nchild > 0 && (in != out || nchild % 2 == 0))
		buf[(nchild - 1) % 2] = out;
	for (int mask = 1; mask < top; mask <<= 1) {
		if (v + mask >= n)
			continue;
		int i = k++ % 2;
		if (!buf[i] && !(buf[i] = tmp_new(count, dt, &mem[i]))) {
			FIRST(err, no_mem(fn));
			continue;
		}
		FIRST(err, recv_data(buf[i], count, dt, (v + mask + troot) % n, tag, c, fn));
		if (!err)
			err = mpii_op_apply(op, acc, buf[i], count, dt);
		acc = buf[i];
	}
	if (v != 0)
		FIRST(err, send_data(acc, count, dt, (v - top + troot) % n, tag, c, err != 0));
	else if (!err && out && acc != out)
		err = copy(acc, count, dt, out, count, dt, fn);
	free(mem[0]);
	free(mem[1]);
	return err;
}

static int reduce_intra(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
			struct mpi_comm *c, uint32_t seq)
{
	static const char fn[] = "MPI_Reduce";
	const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
	int r = c->rank, err = MPI_SUCCESS;
	void *mem = NULL, *res = NULL;

	if (mpii_op_commutative(op) || root == 0)
		return reduce_tree(in, r == root ? rbuf : NULL, count, dt, op, root, c, tag_of(seq, 0), fn);
	/* In rank order the tree's root is rank 0, which hands the result on. */
	if (r == 0 && !(res = tmp_new(count, dt, &mem)))
		err = no_mem(fn);
	FIRST(err, reduce_tree(in, res, count, dt, op, 0, c, tag_of(seq, 0), fn));
	if (r == 0)
		FIRST(err, send_data(res, count, dt, root, tag_of(seq, 1), c, err != 0));
	else if (r == root)
		FIRST(err, recv_data(rbuf, count, dt, 0, tag_of(seq, 1), c, fn));
	free(mem);
	return err;
}

/* The remote group's vectors reduced in rank order into res: v0 op (v1 op (... op vm-1)). */
static int fold_remote(void *res, int count, MPI_Datatype dt, MPI_Op op, struct mpi_comm *c, int tag, const char *fn)
{
	int m = mpii_comm_peers(c), err;
	void *mem = NULL, *tmp = NULL;

	err = recv_data(res, count, dt, m - 1, tag, c, fn);
	if (m > 1 && !(tmp = tmp_new(count, dt, &mem)))
		return no_mem(fn);
	for (int j = m - 2; j >= 0; j--) {
		FIRST(err, recv_data(tmp, count, dt, j, tag, c, fn));
		if (!err && count > 0)
			err = mpii_op_apply(op, tmp, res, count, dt);
	}
	free(mem);
	return err;
}

static int reduce_inter(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
			struct mpi_comm *c, uint32_t seq)
{
	if (root == MPI_PROC_NULL)
		return MPI_SUCCESS;
	if (root != MPI_ROOT)
		return mpii_send(sbuf, count, dt, root, tag_of(seq, 0), c, CTX);
	return fold_remote(rbuf, count, dt, op, c, tag_of(seq, 0), "MPI_Reduce");
}

int mpii_coll_reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
		     struct mpi_comm *c, uint32_t seq)
{
	int seg = seg_count(count, dt), err = MPI_SUCCESS;

	for (int off = 0; off < count; off += seg) {
		int n = min_int(seg, count - off);
		if (mpii_comm_inter(c))
			FIRST(err, reduce_inter(part(sbuf, off, dt), part(rbuf, off, dt), n, dt, op, root, c, seq));
		else
			FIRST(err, reduce_intra(part(sbuf, off, dt), part(rbuf, off, dt), n, dt, op, root, c, seq));
	}
	return err;
}

/*
 * The ranks beyond the largest power of two p <= n fold into their
 * neighbours first (Rabenseifner, "Optimization of collective reduction
 * operations", ICCS 2004): of the 2(n - p) lowest ranks each even one
 * gives its vector to the odd one above it and sits out.  The p ranks
 * left are numbered anew; new rank i holds the consecutive ranks
 * first(i) .. first(i + 1) - 1, so joining two neighbouring new ranks'
 * data, the lower on the left, keeps rank order.
 */
struct fold {
	int p, rem, newr;	/* newr: this rank's new rank, -1 if it sits out */
};

#define PHASE_LAST ((1 << PHASE_BITS) - 1)
#define PHASE_GATHER 32		/* gathering's rounds: after halving's 1 .. log2 p */

static void fold_plan(struct fold *f, int n, int r)
{
	f->p = pow2_ceil(n);
	if (f->p > n)
		f->p >>= 1;
	f->rem = n - f->p;
	f->newr = r >= 2 * f->rem ? r - f->rem : r % 2 ? r / 2 : -1;
}

/* The rank that is new rank i, and the first rank it holds. */
static int fold_rank(const struct fold *f, int i)
{
	return i < f->rem ? 2 * i + 1 : i + f->rem;
}

static int fold_first(const struct fold *f, int i)
{
	return i < f->rem ? 2 * i : i + f->rem;
}

/* The fold itself (phase 0): acc = lower op acc on the odd ranks; other is room for a vector. */
static int fold_in(void *acc, void *other, int count, MPI_Datatype dt, MPI_Op op, const struct fold *f,
		   struct mpi_comm *c, uint32_t seq, int err, const char *fn)
{
	int r = c->rank;

	if (r >= 2 * f->rem)
		return err;
	if (f->newr < 0)
		return send_data(acc, count, dt, r + 1, tag_of(seq, 0), c, err != 0);
	FIRST(err, recv_data(other, count, dt, r - 1, tag_of(seq, 0), c, fn));
	if (!err)
		err = mpii_op_apply(op, other, acc, count, dt);
	return err;
}

/*
 * Recursive doubling over the new ranks: log2 p rounds of whole vectors.
 * The result lands in rbuf (acc starts there; other is room for one).
 */
static int doubling(void *rbuf, void *other, int count, MPI_Datatype dt, MPI_Op op, const struct fold *f,
		    struct mpi_comm *c, uint32_t seq, int err, const char *fn)
{
	void *acc = rbuf;

	for (int mask = 1, round = 1; mask < f->p; mask <<= 1, round++) {
		int np = f->newr ^ mask, peer = fold_rank(f, np);
		FIRST(err, exchange(acc, count, dt, peer, other, count, dt, peer, tag_of(seq, round), c, err != 0, fn));
		if (err)
			continue;
		if (np < f->newr) {
			err = mpii_op_apply(op, other, acc, count, dt);
		} else {
			err = mpii_op_apply(op, acc, other, count, dt);
			void *t = acc;
			acc = other;
			other = t;
		}
	}
	if (!err && acc != rbuf)
		err = copy(acc, count, dt, rbuf, count, dt, fn);
	return err;
}

/*
 * Recursive halving over the new ranks, for commutative ops: the vector
 * is cut into p chunks (chunk i: elements cstart[i] .. cstart[i + 1] - 1);
 * in each round a rank keeps the half of its chunks on its side, sends
 * the other half to its partner and adds in the partner's half of its
 * own.  Afterwards acc's chunk newr is everyone's reduction.  Rounds
 * 1 .. log2 p.
 */
static int halving(void *acc, void *other, const MPI_Aint *cstart, MPI_Datatype dt, MPI_Op op, const struct fold *f,
		   struct mpi_comm *c, uint32_t seq, int err, const char *fn)
{
	int lo = 0, hi = f->p, round = 1;

	for (int mask = f->p / 2; mask > 0; mask >>= 1, round++) {
		int upper = (f->newr & mask) != 0, peer = fold_rank(f, f->newr ^ mask);
		int klo = upper ? lo + mask : lo, khi = upper ? hi : lo + mask;
		int slo = upper ? lo : lo + mask, shi = upper ? lo + mask : hi;
		int kept = (int)(cstart[khi] - cstart[klo]);
		FIRST(err, exchange(elem(acc, cstart[slo], dt), (int)(cstart[shi] - cstart[slo]), dt, peer,
				    elem(other, cstart[klo], dt), kept, dt, peer, tag_of(seq, round), c, err != 0, fn));
		if (!err)
			err = mpii_op_apply(op, elem(other, cstart[klo], dt), elem(acc, cstart[klo], dt), kept, dt);
		lo = klo;
		hi = khi;
	}
	return err;
}

/* Then recursive doubling of the chunks, until every new rank has all of them.  Rounds from round0. */
static int gathering(void *acc, const MPI_Aint *cstart, MPI_Datatype dt, const struct fold *f, struct mpi_comm *c,
		     uint32_t seq, int round0, int err, const char *fn)
{
	int lo = f->newr, hi = f->newr + 1;

	for (int mask = 1, round = round0; mask < f->p; mask <<= 1, round++) {
		int peer = fold_rank(f, f->newr ^ mask), plo = f->newr & mask ? lo - mask : hi;
		FIRST(err, exchange(elem(acc, cstart[lo], dt), (int)(cstart[hi] - cstart[lo]), dt, peer,
				    elem(acc, cstart[plo], dt), (int)(cstart[plo + mask] - cstart[plo]), dt, peer,
				    tag_of(seq, round), c, err != 0, fn));
		lo = min_int(lo, plo);
		hi = lo + 2 * mask;
	}
	return err;
}

/*
 * Allreduce: the fold, then recursive doubling (log2 p + 2 rounds), or
 * for long vectors and a commutative op Rabenseifner's recursive halving
 * and doubling, where a rank sends about 2 vectors in all instead of
 * log2 p of them (2 log2 p + 2 rounds).
 */
#define LONG_VECTOR (64 * 1024)

static int allreduce_intra(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, struct mpi_comm *c,
			   uint32_t seq)
{
	static const char fn[] = "MPI_Allreduce";
	int n = c->size, r = c->rank, err = MPI_SUCCESS;
	void *mem = NULL, *other;
	MPI_Aint *cstart = NULL;
	struct fold f;

	if (sbuf != MPI_IN_PLACE)
		err = copy(sbuf, count, dt, rbuf, count, dt, fn);
	if (n == 1)
		return err;
	fold_plan(&f, n, r);
	int halve = mpii_op_commutative(op) && count >= f.p && bytes_of(count, dt) >= LONG_VECTOR;
	if (!(other = tmp_new(count, dt, &mem)) || (halve && !(cstart = malloc((size_t)(f.p + 1) * sizeof *cstart)))) {
		free(mem);
		return no_mem(fn);
	}
	err = fold_in(rbuf, other, count, dt, op, &f, c, seq, err, fn);
	if (f.newr >= 0 && !halve) {
		err = doubling(rbuf, other, count, dt, op, &f, c, seq, err, fn);
	} else if (f.newr >= 0) {
		for (int i = 0; i <= f.p; i++)
			cstart[i] = (MPI_Aint)i * (count / f.p) + min_int(i, count % f.p);
		err = halving(rbuf, other, cstart, dt, op, &f, c, seq, err, fn);
		err = gathering(rbuf, cstart, dt, &f, c, seq, PHASE_GATHER, err, fn);
	}
	if (r < 2 * f.rem) {
		if (f.newr >= 0)
			FIRST(err, send_data(rbuf, count, dt, r - 1, tag_of(seq, PHASE_LAST), c, err != 0));
		else
			FIRST(err, recv_data(rbuf, count, dt, r + 1, tag_of(seq, PHASE_LAST), c, fn));
	}
	free(cstart);
	free(mem);
	return err;
}

/*
 * The reductions to everyone on an intercommunicator, through the
 * leaders (see the top): phase 0 every vector to the remote leader,
 * phases 1-2 the leaders swap the results (and the counts to cut them
 * by), phase 3 a leader passes the other group's result to its other
 * members.  A leader sends phase 2 only after every remote vector came,
 * so with count 0 this is a barrier.  lcounts: this group's pieces
 * (Reduce_scatter), NULL: everyone gets all count elements.
 */
static int inter_relay(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, const int *lcounts,
		       struct mpi_comm *c, uint32_t seq, const char *fn)
{
	int n = c->size, m = mpii_comm_peers(c), r = c->rank, err;
	struct mpi_req *sr = NULL;
	struct reqs q;

	err = mpii_isend(sbuf, count, dt, 0, tag_of(seq, 0), c, CTX, MPII_SEND_STD, &sr);
	if (r != 0) {
		FIRST(err, recv_data(rbuf, lcounts ? lcounts[r] : count, dt, 0, tag_of(seq, 3), c, fn));
		if (sr)
			FIRST(err, mpii_req_wait(sr, MPI_STATUS_IGNORE));
		return err;
	}
	void *resmem = NULL, *rresmem = NULL;
	void *res = tmp_new(count, dt, &resmem), *rres = tmp_new(count, dt, &rresmem);
	int *rcounts = lcounts ? calloc((size_t)m, sizeof *rcounts) : NULL;
	if (!res || !rres || (lcounts && !rcounts)) {
		FIRST(err, no_mem(fn));
		goto out;
	}
	FIRST(err, fold_remote(res, count, dt, op, c, tag_of(seq, 0), fn));
	if (sr) {
		FIRST(err, mpii_req_wait(sr, MPI_STATUS_IGNORE));
		sr = NULL;
	}
	FIRST(err, reqs_init(&q, 4, fn));
	if (q.r) {
		if (lcounts) {
			reqs_recv(&q, rcounts, m, MPI_INT, 0, tag_of(seq, 1), c);
			reqs_send(&q, lcounts, n, MPI_INT, 0, tag_of(seq, 1), c, err != 0);
		}
		reqs_recv(&q, rres, count, dt, 0, tag_of(seq, 2), c);
		reqs_send(&q, res, count, dt, 0, tag_of(seq, 2), c, err != 0);
		FIRST(err, reqs_wait(&q));
	}
	FIRST(err, reqs_init(&q, m, fn));
	if (q.r) {
		MPI_Aint off = rcounts ? rcounts[0] : 0;
		for (int j = 1; j < m; j++) {
			int cnt = rcounts ? rcounts[j] : count;
			reqs_send(&q, elem(rres, off, dt), cnt, dt, j, tag_of(seq, 3), c, err != 0);
			if (rcounts)
				off += cnt;
		}
		FIRST(err, reqs_wait(&q));
	}
	if (!err)
		err = copy(res, lcounts ? lcounts[0] : count, dt, rbuf, lcounts ? lcounts[0] : count, dt, fn);
out:
	if (sr)
		FIRST(err, mpii_req_wait(sr, MPI_STATUS_IGNORE));
	free(resmem);
	free(rresmem);
	free(rcounts);
	return err;
}

int mpii_coll_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, struct mpi_comm *c,
			uint32_t seq)
{
	int seg = seg_count(count, dt), err = MPI_SUCCESS;

	for (int off = 0; off < count; off += seg) {
		int n = min_int(seg, count - off);
		if (mpii_comm_inter(c))
			FIRST(err, inter_relay(part(sbuf, off, dt), part(rbuf, off, dt), n, dt, op, NULL, c, seq,
					       "MPI_Allreduce"));
		else
			FIRST(err, allreduce_intra(part(sbuf, off, dt), part(rbuf, off, dt), n, dt, op, c, seq));
	}
	return err;
}

/*
 * A non-commutative op: reduce to rank 0 in rank order, then a binomial
 * scatter of the pieces (a subtree's ranks are consecutive, so its pieces
 * are one run of the vector, sent as it lies).  2 log2 n rounds.
 */
static int reduce_scatter_tree(const void *sbuf, void *rbuf, const int *rcounts, MPI_Datatype dt, MPI_Op op,
				struct mpi_comm *c, uint32_t seq)
{
	static const char fn[] = "MPI_Reduce_scatter";
	int n = c->size, r = c->rank, err = MPI_SUCCESS, mask;
	MPI_Aint *start = malloc((size_t)(n + 1) * sizeof *start);
	void *fullmem = NULL, *segmem = NULL, *seg = NULL;
	struct reqs q;

	if (!start)
		return no_mem(fn);
	start[0] = 0;
	for (int i = 0; i < n; i++)
		start[i + 1] = start[i] + rcounts[i];
	if (start[n] == 0)
		goto out;
	if (r == 0 && !(seg = tmp_new((int)start[n], dt, &fullmem)))
		err = no_mem(fn);
	FIRST(err, reduce_tree(sbuf == MPI_IN_PLACE ? rbuf : sbuf, seg, (int)start[n], dt, op, 0, c, tag_of(seq, 0),
			       fn));
	int span = subtree(r, n, &mask);
	if (r != 0) {
		int cnt = (int)(start[r + span] - start[r]);
		if (!(seg = tmp_new(cnt, dt, &segmem))) {
			FIRST(err, no_mem(fn));
			goto out;
		}
		FIRST(err, recv_data(seg, cnt, dt, r - mask, tag_of(seq, 1), c, fn));
	}
	FIRST(err, reqs_init(&q, 32, fn));
	if (q.r) {
		for (int k = mask >> 1; k > 0; k >>= 1)
			if (r + k < n)
				reqs_send(&q, elem(seg, start[r + k] - start[r], dt),
					  (int)(start[min_int(r + 2 * k, n)] - start[r + k]), dt, r + k, tag_of(seq, 1), c,
					  err != 0);
		FIRST(err, reqs_wait(&q));
	}
	if (!err)
		err = copy(seg, rcounts[r], dt, rbuf, rcounts[r], dt, fn);
out:
	free(fullmem);
	free(segmem);
	free(start);
	return err;
}

/*
 * A commutative op: the fold, recursive halving with new rank i's chunk
 * the pieces of the ranks it holds, then the folded ranks' pieces back to
 * them.  log2 p + 2 rounds, about one vector sent by each rank.
 */
static int reduce_scatter_halving(const void *sbuf, void *rbuf, const int *rcounts, MPI_Datatype dt, MPI_Op op,
				  struct mpi_comm *c, uint32_t seq)
{
	static const char fn[] = "MPI_Reduce_scatter";
	int n = c->size, r = c->rank, err = MPI_SUCCESS;
	MPI_Aint *start = malloc((size_t)(2 * n + 2) * sizeof *start), *cstart = start + n + 1;
	void *amem = NULL, *omem = NULL, *acc = NULL, *other = NULL;
	struct fold f;

	if (!start)
		return no_mem(fn);
	start[0] = 0;
	for (int i = 0; i < n; i++)
		start[i + 1] = start[i] + rcounts[i];
	int total = (int)start[n];
	if (total == 0)
		goto out;
	if (!(acc = tmp_new(total, dt, &amem)) || !(other = tmp_new(total, dt, &omem))) {
		err = no_mem(fn);
		goto out;
	}
	fold_plan(&f, n, r);
	err = copy(sbuf == MPI_IN_PLACE ? rbuf : sbuf, total, dt, acc, total, dt, fn);
	err = fold_in(acc, other, total, dt, op, &f, c, seq, err, fn);
	if (f.newr < 0) {
		FIRST(err, recv_data(rbuf, rcounts[r], dt, r + 1, tag_of(seq, PHASE_LAST), c, fn));
		goto out;
	}
	for (int i = 0; i <= f.p; i++)
		cstart[i] = start[fold_first(&f, i)];
	err = halving(acc, other, cstart, dt, op, &f, c, seq, err, fn);
	if (r < 2 * f.rem)
		FIRST(err, send_data(elem(acc, start[r - 1], dt), rcounts[r - 1], dt, r - 1, tag_of(seq, PHASE_LAST), c,
				     err != 0));
	if (!err)
		err = copy(elem(acc, start[r], dt), rcounts[r], dt, rbuf, rcounts[r], dt, fn);
out:
	free(amem);
	free(omem);
	free(start);
	return err;
}

int mpii_coll_reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts, MPI_Datatype dt, MPI_Op op,
			     struct mpi_comm *c, uint32_t seq)
{
	if (!mpii_comm_inter(c))
		return mpii_op_commutative(op) ? reduce_scatter_halving(sbuf, rbuf, rcounts, dt, op, c, seq)
					       : reduce_scatter_tree(sbuf, rbuf, rcounts, dt, op, c, seq);
	long long count = 0;
	for (int i = 0; i < c->size; i++)
		count += rcounts[i];
	return inter_relay(sbuf, rbuf, (int)count, dt, op, rcounts, c, seq, "MPI_Reduce_scatter");
}

int mpii_coll_reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, MPI_Datatype dt, MPI_Op op,
				   struct mpi_comm *c, uint32_t seq)
{
	int *displs, *counts = uniform(c->size, rcount, &displs);

	if (!counts)
		return no_mem("MPI_Reduce_scatter_block");
	int err = mpii_coll_reduce_scatter(sbuf, rbuf, counts, dt, op, c, seq);
	free(counts);
	return err;
}

/*
 * Scan and Exscan by recursive doubling: partial holds the reduction of
 * this rank's aligned block of 2^k ranks; exchanging it with the partner
 * block's, a rank adds the lower block's into its result.
 */
static int scan_intra(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, struct mpi_comm *c,
		      uint32_t seq, int exclusive)
{
	const char *fn = exclusive ? "MPI_Exscan" : "MPI_Scan";
	int n = c->size, r = c->rank, err, have = !exclusive;
	void *pmem, *tmem;
	void *partial = tmp_new(count, dt, &pmem), *tmp = tmp_new(count, dt, &tmem);

	if (!partial || !tmp) {
		err = no_mem(fn);
		goto out;
	}
	err = copy(sbuf == MPI_IN_PLACE ? rbuf : sbuf, count, dt, partial, count, dt, fn);
	if (!exclusive && sbuf != MPI_IN_PLACE)
		FIRST(err, copy(sbuf, count, dt, rbuf, count, dt, fn));
	for (int mask = 1, round = 0; mask < n; mask <<= 1, round++) {
		int peer = r ^ mask;
		if (peer >= n)
			continue;
		FIRST(err, exchange(partial, count, dt, peer, tmp, count, dt, peer, tag_of(seq, round), c, err != 0, fn));
		if (err)
			continue;
		if (peer < r) {
			if (have)
				err = mpii_op_apply(op, tmp, rbuf, count, dt);
			else
				err = copy(tmp, count, dt, rbuf, count, dt, fn);
			have = 1;
			FIRST(err, mpii_op_apply(op, tmp, partial, count, dt));
		} else {
			err = mpii_op_apply(op, partial, tmp, count, dt);
			void *t = partial;
			partial = tmp;
			tmp = t;
		}
	}
out:
	free(pmem);
	free(tmem);
	return err;
}

static int scan_segments(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, struct mpi_comm *c,
			 uint32_t seq, int exclusive)
{
	int seg = seg_count(count, dt), err = MPI_SUCCESS;

	for (int off = 0; off < count; off += seg)
		FIRST(err, scan_intra(part(sbuf, off, dt), part(rbuf, off, dt), min_int(seg, count - off), dt, op, c,
				      seq, exclusive));
	return err;
}

int mpii_coll_scan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, struct mpi_comm *c,
		   uint32_t seq)
{
	return scan_segments(sbuf, rbuf, count, dt, op, c, seq, 0);
}

int mpii_coll_exscan(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, struct mpi_comm *c,
		     uint32_t seq)
{
	return scan_segments(sbuf, rbuf, count, dt, op, c, seq, 1);
}

/* --- argument checks ------------------------------------------------------------------------ */

/* MPICH's checks, in its order; MPI_IN_PLACE where MPI does not allow it is MPI_ERR_BUFFER, as in MPICH. */

/* count elements of dt at buf. */
static int check_data(struct mpi_comm *c, const void *buf, int count, MPI_Datatype dt, const char *fn)
{
	int err;

	if ((err = mpii_check_count(c, count, fn)) || (err = mpii_check_type(c, dt, fn)) ||
	    (err = mpii_check_buf(c, buf, count, dt, fn)))
		return err;
	return MPI_SUCCESS;
}

/* One count and displacement per peer. */
static int check_vector(struct mpi_comm *c, const void *buf, const int *counts, const int *displs, MPI_Datatype dt,
			const char *fn)
{
	int err;

	if (!counts || !displs)
		return mpii_err(c, MPI_ERR_ARG, fn, "the counts or the displacements are NULL");
	if ((err = mpii_check_type(c, dt, fn)))
		return err;
	for (int i = 0; i < mpii_comm_peers(c); i++) {
		if ((err = mpii_check_count(c, counts[i], fn)))
			return err;
		if (displs[i] == 0 && (err = mpii_check_buf(c, buf, counts[i], dt, fn)))
			return err;
	}
	return MPI_SUCCESS;
}

static int in_place_here(struct mpi_comm *c, const char *fn)
{
	return mpii_err(c, MPI_ERR_BUFFER, fn, "MPI_IN_PLACE is not allowed here");
}

static int aliased(struct mpi_comm *c, const char *fn)
{
	return mpii_err(c, MPI_ERR_BUFFER, fn, "the send and receive buffers are the same");
}

static int check_op(struct mpi_comm *c, int count, MPI_Op op, MPI_Datatype dt, const char *fn)
{
	int err;

	if ((err = mpii_check_op(c, op, fn)) || (err = mpii_check_count(c, count, fn)) ||
	    (err = mpii_check_type(c, dt, fn)))
		return err;
	if (!mpii_op_type_ok(op, dt))
		return mpii_err(c, MPI_ERR_OP, fn, "the operation is not defined on %s", mpii_type_name(dt));
	return MPI_SUCCESS;
}

int mpii_coll_check_bcast(struct mpi_comm *c, void *buf, int count, MPI_Datatype dt, int root, const char *fn)
{
	int err;

	if ((err = mpii_check_root(c, root, fn)) || (err = mpii_check_count(c, count, fn)))
		return err;
	if (count > 0 && ((err = mpii_check_type(c, dt, fn)) || (err = mpii_check_buf(c, buf, count, dt, fn))))
		return err;
	return MPI_SUCCESS;
}

int mpii_coll_is_root(struct mpi_comm *c, int root)
{
	return mpii_comm_inter(c) ? root == MPI_ROOT : c->rank == root;
}

/*
 * Rooted collectives: does this rank give or take a block (an
 * intracommunicator's ranks, the non-root group of an intercommunicator)?
 */
static int is_leaf(struct mpi_comm *c, int root)
{
	return !mpii_comm_inter(c) || root >= 0;
}

/* The block of a rooted collective's non-root side (the root's own, on an intracommunicator). */
static int check_block(struct mpi_comm *c, const void *buf, int count, MPI_Datatype dt, int root, const char *fn)
{
	if (buf == MPI_IN_PLACE)
		return mpii_comm_inter(c) || !mpii_coll_is_root(c, root) ? in_place_here(c, fn) : MPI_SUCCESS;
	return check_data(c, buf, count, dt, fn);
}

int mpii_coll_check_gather(struct mpi_comm *c, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
			   int rcount, MPI_Datatype rtype, int root, const char *fn)
{
	int err;

	if ((err = mpii_check_root(c, root, fn)))
		return err;
	if (is_leaf(c, root)) {
		if ((err = check_block(c, sbuf, scount, stype, root, fn)))
			return err;
		if (mpii_coll_is_root(c, root) && sbuf != MPI_IN_PLACE && stype == rtype && scount == rcount && scount &&
		    sbuf == elem(rbuf, (MPI_Aint)c->rank * rcount, rtype))
			return aliased(c, fn);
	}
	if (mpii_coll_is_root(c, root)) {
		if (rbuf == MPI_IN_PLACE)
			return in_place_here(c, fn);
		return check_data(c, rbuf, rcount, rtype, fn);
	}
	return MPI_SUCCESS;
}

int mpii_coll_check_gatherv(struct mpi_comm *c, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
			    const int *rcounts, const int *displs, MPI_Datatype rtype, int root, const char *fn)
{
	int err;

	if ((err = mpii_check_root(c, root, fn)))
		return err;
	if (is_leaf(c, root) && (err = check_block(c, sbuf, scount, stype, root, fn)))
		return err;
	if (mpii_coll_is_root(c, root)) {
		if (rbuf == MPI_IN_PLACE)
			return in_place_here(c, fn);
		if ((err = check_vector(c, rbuf, rcounts, displs, rtype, fn)))
			return err;
		if (!mpii_comm_inter(c) && sbuf != MPI_IN_PLACE && scount && sbuf == elem(rbuf, displs[c->rank], rtype))
			return aliased(c, fn);
	}
	return MPI_SUCCESS;
}

int mpii_coll_check_scatter(struct mpi_comm *c, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
			    int rcount, MPI_Datatype rtype, int root, const char *fn)
{
	int err;

	if ((err = mpii_check_root(c, root, fn)))
		return err;
	if (mpii_coll_is_root(c, root)) {
		if (sbuf == MPI_IN_PLACE)
			return in_place_here(c, fn);
		if ((err = check_data(c, sbuf, scount, stype, fn)))
			return err;
	}
	if (is_leaf(c, root)) {
		if ((err = check_block(c, rbuf, rcount, rtype, root, fn)))
			return err;
		if (mpii_coll_is_root(c, root) && rbuf != MPI_IN_PLACE && stype == rtype && scount == rcount && rcount &&
		    rbuf == elem(sbuf, (MPI_Aint)c->rank * scount, stype))
			return aliased(c, fn);
	}
	return MPI_SUCCESS;
}

int mpii_coll_check_scatterv(struct mpi_comm *c, const void *sbuf, const int *scounts, const int *displs,
			     MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root, const char *fn)
{
	int err;

	if ((err = mpii_check_root(c, root, fn)))
		return err;
	if (mpii_coll_is_root(c, root)) {
		if (sbuf == MPI_IN_PLACE)
			return in_place_here(c, fn);
		if ((err = check_vector(c, sbuf, scounts, displs, stype, fn)))
			return err;
	}
	if (is_leaf(c, root)) {
		if ((err = check_block(c, rbuf, rcount, rtype, root, fn)))
			return err;
		if (mpii_coll_is_root(c, root) && rbuf != MPI_IN_PLACE && rcount && rbuf == elem(sbuf, displs[c->rank], stype))
			return aliased(c, fn);
	}
	return MPI_SUCCESS;
}

/* The send side of the collectives where every rank gives: MPI_IN_PLACE on intracommunicators only. */
static int check_send(struct mpi_comm *c, const void *sbuf, int scount, MPI_Datatype stype, const char *fn)
{
	if (sbuf == MPI_IN_PLACE)
		return mpii_comm_inter(c) ? in_place_here(c, fn) : MPI_SUCCESS;
	return check_data(c, sbuf, scount, stype, fn);
}

int mpii_coll_check_allgather(struct mpi_comm *c, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
			      int rcount, MPI_Datatype rtype, const char *fn)
{
	int err;

	if ((err = check_send(c, sbuf, scount, stype, fn)))
		return err;
	if (rbuf == MPI_IN_PLACE)
		return in_place_here(c, fn);
	if ((err = check_data(c, rbuf, rcount, rtype, fn)))
		return err;
	/* The block this rank sends is where it would receive its own (MPICH's check). */
	if (!mpii_comm_inter(c) && sbuf != MPI_IN_PLACE && stype == rtype && scount && rcount &&
	    sbuf == elem(rbuf, (MPI_Aint)c->rank * rcount, rtype))
		return aliased(c, fn);
	return MPI_SUCCESS;
}

int mpii_coll_check_allgatherv(struct mpi_comm *c, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
			       const int *rcounts, const int *displs, MPI_Datatype rtype, const char *fn)
{
	int err;

	if ((err = check_send(c, sbuf, scount, stype, fn)))
		return err;
	if (rbuf == MPI_IN_PLACE)
		return in_place_here(c, fn);
	if ((err = check_vector(c, rbuf, rcounts, displs, rtype, fn)))
		return err;
	if (!mpii_comm_inter(c) && sbuf != MPI_IN_PLACE && stype == rtype && scount &&
	    sbuf == elem(rbuf, displs[c->rank], rtype))
		return aliased(c, fn);
	return MPI_SUCCESS;
}

int mpii_coll_check_alltoall(struct mpi_comm *c, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
			     int rcount, MPI_Datatype rtype, const char *fn)
{
	int err;

	if ((err = check_send(c, sbuf, scount, stype, fn)))
		return err;
	if (rbuf == MPI_IN_PLACE)
		return in_place_here(c, fn);
	if ((err = check_data(c, rbuf, rcount, rtype, fn)))
		return err;
	if (sbuf == rbuf && rcount)
		return aliased(c, fn);
	return MPI_SUCCESS;
}

int mpii_coll_check_alltoallv(struct mpi_comm *c, const void *sbuf, const int *scounts, const int *sdispls,
			      MPI_Datatype stype, void *rbuf, const int *rcounts, const int *rdispls,
			      MPI_Datatype rtype, const char *fn)
{
	int err;

	if (sbuf == MPI_IN_PLACE) {
		if (mpii_comm_inter(c))
			return in_place_here(c, fn);
	} else if ((err = check_vector(c, sbuf, scounts, sdispls, stype, fn))) {
		return err;
	}
	if (rbuf == MPI_IN_PLACE)
		return in_place_here(c, fn);
	if ((err = check_vector(c, rbuf, rcounts, rdispls, rtype, fn)))
		return err;
	if (sbuf == rbuf)
		return aliased(c, fn);
	return MPI_SUCCESS;
}

/* Alltoallw's side: a count, a displacement and a type per peer. */
static int check_wside(struct mpi_comm *c, const void *buf, const int *counts, const int *displs,
		       const MPI_Datatype *types, const char *fn)
{
	int err;

	if (!counts || !displs || !types)
		return mpii_err(c, MPI_ERR_ARG, fn, "the counts, displacements or types are NULL");
	for (int i = 0; i < mpii_comm_peers(c); i++) {
		if ((err = mpii_check_count(c, counts[i], fn)))
			return err;
		if (counts[i] > 0 && (err = mpii_check_type(c, types[i], fn)))
			return err;
		if (counts[i] > 0 && displs[i] == 0 && (err = mpii_check_buf(c, buf, counts[i], types[i], fn)))
			return err;
	}
	return MPI_SUCCESS;
}

int mpii_coll_check_alltoallw(struct mpi_comm *c, const void *sbuf, const int *scounts, const int *sdispls,
			      const MPI_Datatype *stypes, void *rbuf, const int *rcounts, const int *rdispls,
			      const MPI_Datatype *rtypes, const char *fn)
{
	int err;

	if (sbuf == MPI_IN_PLACE) {
		if (mpii_comm_inter(c))
			return in_place_here(c, fn);
	} else if ((err = check_wside(c, sbuf, scounts, sdispls, stypes, fn))) {
		return err;
	}
	if (rbuf == MPI_IN_PLACE)
		return in_place_here(c, fn);
	if ((err = check_wside(c, rbuf, rcounts, rdispls, rtypes, fn)))
		return err;
	if (sbuf == rbuf)
		return aliased(c, fn);
	return MPI_SUCCESS;
}

int mpii_coll_check_reduce(struct mpi_comm *c, const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
			   int root, const char *fn)
{
	int err;

	if ((err = mpii_check_root(c, root, fn)))
		return err;
	if (mpii_comm_inter(c) && root == MPI_PROC_NULL)
		return MPI_SUCCESS;
	if ((err = check_op(c, count, op, dt, fn)))
		return err;
	if (mpii_coll_is_root(c, root)) {
		if (rbuf == MPI_IN_PLACE && count)
			return in_place_here(c, fn);
		if ((err = mpii_check_buf(c, rbuf, count, dt, fn)))
			return err;
		if (count && sbuf == rbuf)
			return aliased(c, fn);
	}
	if (is_leaf(c, root)) {
		if (sbuf == MPI_IN_PLACE)
			return mpii_comm_inter(c) || !mpii_coll_is_root(c, root) ? in_place_here(c, fn) : MPI_SUCCESS;
		return mpii_check_buf(c, sbuf, count, dt, fn);
	}
	return MPI_SUCCESS;
}

int mpii_coll_check_allreduce(struct mpi_comm *c, const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
			      MPI_Op op, const char *fn)
{
	int err;

	if ((err = check_op(c, count, op, dt, fn)))
		return err;
	if (rbuf == MPI_IN_PLACE && count)
		return in_place_here(c, fn);
	if (sbuf == MPI_IN_PLACE) {
		if (mpii_comm_inter(c))
			return in_place_here(c, fn);
	} else if (count && sbuf == rbuf) {
		return aliased(c, fn);
	} else if ((err = mpii_check_buf(c, sbuf, count, dt, fn))) {
		return err;
	}
	return mpii_check_buf(c, rbuf, count, dt, fn);
}

/* Reduce_scatter's: the vector of count elements and this rank's piece of rcount. */
static int check_pieces(struct mpi_comm *c, const void *sbuf, void *rbuf, long long count, int rcount,
			MPI_Datatype dt, const char *fn)
{
	int err;

	if (rbuf == MPI_IN_PLACE && rcount)
		return in_place_here(c, fn);
	if (sbuf == MPI_IN_PLACE) {
		if (mpii_comm_inter(c))
			return in_place_here(c, fn);
	} else if (count && sbuf == rbuf) {
		return aliased(c, fn);
	} else if (count > 0x7fffffff) {
		return mpii_err(c, MPI_ERR_COUNT, fn, "the counts add up to more than an int");
	} else if ((err = mpii_check_buf(c, sbuf, (int)count, dt, fn))) {
		return err;
	}
	return mpii_check_buf(c, rbuf, rcount, dt, fn);
}

int mpii_coll_check_reduce_scatter(struct mpi_comm *c, const void *sbuf, void *rbuf, const int *rcounts,
				   MPI_Datatype dt, MPI_Op op, const char *fn)
{
	long long count = 0;
	int err;

	if (!rcounts)
		return mpii_err(c, MPI_ERR_ARG, fn, "recvcounts is NULL");
	for (int i = 0; i < c->size; i++) {
		if ((err = mpii_check_count(c, rcounts[i], fn)))
			return err;
		count += rcounts[i];
	}
	if ((err = check_op(c, rcounts[c->rank], op, dt, fn)))
		return err;
	return check_pieces(c, sbuf, rbuf, count, rcounts[c->rank], dt, fn);
}

int mpii_coll_check_reduce_scatter_block(struct mpi_comm *c, const void *sbuf, void *rbuf, int rcount,
					 MPI_Datatype dt, MPI_Op op, const char *fn)
{
	int err;

	if ((err = check_op(c, rcount, op, dt, fn)))
		return err;
	return check_pieces(c, sbuf, rbuf, (long long)rcount * c->size, rcount, dt, fn);
}

int mpii_coll_check_scan(struct mpi_comm *c, const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
			 const char *fn)
{
	if (mpii_comm_inter(c))
		return mpii_err(c, MPI_ERR_COMM, fn, "not defined on an intercommunicator");
	return mpii_coll_check_allreduce(c, sbuf, rbuf, count, dt, op, fn);
}

/* --- the calls -------------------------------------------------------------------------------- */

/* The end of a blocking collective: an error goes through the communicator's handler. */
static int done(struct mpi_comm *c, int err)
{
	return err ? mpii_err_raise(c, err) : MPI_SUCCESS;
}

int MPI_Barrier(MPI_Comm comm)
{
	struct mpi_comm *c;
	int err;

	if ((err = mpii_check_comm(comm, "MPI_Barrier", &c)))
		return err;
	return done(c, mpii_coll_barrier(c, mpii_coll_seq(c)));
}

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
	static const char fn[] = "MPI_Bcast";
	struct mpi_comm *c;
	int err;

	if ((err = mpii_check_comm(comm, fn, &c)) || (err = mpii_coll_check_bcast(c, buffer, count, datatype, root, fn)))
		return err;
	return done(c, mpii_coll_bcast(buffer, count, datatype, root, c, mpii_coll_seq(c)));
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
	       MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	static const char fn[] = "MPI_Gather";
	struct mpi_comm *c;
	int err;

	if ((err = mpii_check_comm(comm, fn, &c)) ||
	    (err = mpii_coll_check_gather(c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, fn)))
		return err;
	return done(c, mpii_coll_gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, c,
					mpii_coll_seq(c)));
}

int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
		const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	static const char fn[] = "MPI_Gatherv";
	struct mpi_comm *c;
	int err;

	if ((err = mpii_check_comm(comm, fn, &c)) ||
	    (err = mpii_coll_check_gatherv(c, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
					   root, fn)))
		return err;
	return done(c, mpii_coll_gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, c,
					 mpii_coll_seq(c)));
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
		MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	static const char fn[] = "MPI_Scatter";
	struct mpi_comm *c;
	int err;

	if ((err = mpii_check_comm(comm, fn, &c)) ||
	    (err = mpii_coll_check_scatter(c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, fn)))
		return err;
	return done(c, mpii_coll_scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, c,
					 mpii_coll_seq(c)));
}

int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
		 void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
	static const char fn[] = "MPI_Scatterv";
	struct mpi_comm *c;
	int err;

	if ((err = mpii_check_comm(comm, fn, &c)) ||
	    (err = mpii_coll_check_scatterv(c, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
					    root, fn)))
		return err;
	return done(c, mpii_coll_scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
					  c, mpii_coll_seq(c)));
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
		  MPI_Datatype recvtype, MPI_Comm comm)
{
	static const char fn[] = "MPI_Allgather";
	struct mpi_comm *c;
	int err;

	if ((err = mpii_check_comm(comm, fn, &c)) ||
	    (err = mpii_coll_check_allgather(c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, fn)))
		return err;
	return done(c, mpii_coll_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, c,
					   mpii_coll_seq(c)));
}

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
		   const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
	static const char fn[] = "MPI_Allgatherv";
	struct mpi_comm *c;
	int err;

	if ((err = mpii_check_comm(comm, fn, &c)) ||
	    (err = mpii_coll_check_allgatherv(c, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
					      fn)))
		return err;
	return done(c, mpii_coll_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, c,
					    mpii_coll_seq(c)));
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
		 MPI_Datatype recvtype, MPI_Comm comm)
{
	static const char fn[] = "MPI_Alltoall";
	struct mpi_comm *c;
	int err;

	if ((err = mpii_check_comm(comm, fn, &c)) ||
	    (err = mpii_coll_check_alltoall(c, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, fn)))
		return err;
	return done(c, mpii_coll_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, c,
					  mpii_coll_seq(c)));
}

int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
		  void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
	static const char fn[] = "MPI_Alltoallv";
	struct mpi_comm *c;
	int err;

	if ((err = mpii_check_comm(comm, fn, &c)) ||
	    (err = mpii_coll_check_alltoallv(c, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
					     recvtype, fn)))
		return err;
	return done(c, mpii_coll_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
					   recvtype, c, mpii_coll_seq(c)));
}

int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
		  void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
		  MPI_Comm comm)
{
	static const char fn[] = "MPI_Alltoallw";
	struct mpi_comm *c;
	int err;

	if ((err = mpii_check_comm(comm, fn, &c)) ||
	    (err = mpii_coll_check_alltoallw(c, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
					     recvtypes, fn)))
		return err;
	return done(c, mpii_coll_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
					   recvtypes, c, mpii_coll_seq(c)));
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
	       MPI_Comm comm)
{
	static const char fn[] = "MPI_Reduce";
	struct mpi_comm *c;
	int err;

	if ((err = mpii_check_comm(comm, fn, &c)) ||
	    (err = mpii_coll_check_reduce(c, sendbuf, recvbuf, count, datatype, op, root, fn)))
		return err;
	return done(c, mpii_coll_reduce(sendbuf, recvbuf, count, datatype, op, root, c, mpii_coll_seq(c)));
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
	static const char fn[] = "MPI_Allreduce";
	struct mpi_comm *c;
	int err;

	if ((err = mpii_check_comm(comm, fn, &c)) ||
	    (err = mpii_coll_check_allreduce(c, sendbuf, recvbuf, count, datatype, op, fn)))
		return err;
	return done(c, mpii_coll_allreduce(sendbuf, recvbuf, count, datatype, op, c, mpii_coll_seq(c)));
}

int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
		       MPI_Op op, MPI_Comm comm)
{
	static const char fn[] = "MPI_Reduce_scatter";
	struct mpi_comm *c;
	int err;

	if ((err = mpii_check_comm(comm, fn, &c)) ||
	    (err = mpii_coll_check_reduce_scatter(c, sendbuf, recvbuf, recvcounts, datatype, op, fn)))
		return err;
	return done(c, mpii_coll_reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, c, mpii_coll_seq(c)));
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
			     MPI_Comm comm)
{
	static const char fn[] = "MPI_Reduce_scatter_block";
	struct mpi_comm *c;
	int err;

	if ((err = mpii_check_comm(comm, fn, &c)) ||
	    (err = mpii_coll_check_reduce_scatter_block(c, sendbuf, recvbuf, recvcount, datatype, op, fn)))
		return err;
	return done(c,
		    mpii_coll_reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, c, mpii_coll_seq(c)));
}

int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
	static const char fn[] = "MPI_Scan";
	struct mpi_comm *c;
	int err;

	if ((err = mpii_check_comm(comm, fn, &c)) ||
	    (err = mpii_coll_check_scan(c, sendbuf, recvbuf, count, datatype, op, fn)))
		return err;
	return done(c, mpii_coll_scan(sendbuf, recvbuf, count, datatype, op, c, mpii_coll_seq(c)));
}

int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
	static const char fn[] = "MPI_Exscan";
	struct mpi_comm *c;
	int err;

	if ((err = mpii_check_comm(comm, fn, &c)) ||
	    (err = mpii_coll_check_scan(c, sendbuf, recvbuf, count, datatype, op, fn)))
		return err;
	return done(c, mpii_coll_exscan(sendbuf, recvbuf, count, datatype, op, c, mpii_coll_seq(c)));
}

/* --- for the other files (mpiimpl.h) ---------------------------------------------------------- */

int mpii_barrier(struct mpi_comm *c)
{
	return mpii_coll_barrier(c, mpii_coll_seq(c));
}

int mpii_bcast(void *buf, int count, MPI_Datatype dt, int root, struct mpi_comm *c)
{
	return mpii_coll_bcast(buf, count, dt, root, c, mpii_coll_seq(c));
}

int mpii_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op, struct mpi_comm *c)
{
	return mpii_coll_allreduce(sbuf, rbuf, count, dt, op, c, mpii_coll_seq(c));
}

int mpii_allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
		   struct mpi_comm *c)
{
	return mpii_coll_allgather(sbuf, scount, stype, rbuf, rcount, rtype, c, mpii_coll_seq(c));
}
