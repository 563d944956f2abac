/*
 * Communicators (MPI-3.1 §6.4-6.6): intra- and intercommunicators, how
 * they are made, and the context ids that keep their messages apart.
 *
 * Context ids.  A communicator's point to point goes on context ctx, its
 * collectives on ctx + 1, and this file's agreements on ctx + 2 (ctx + 3
 * is spare); bit b of a bitmap stands for the four from 4b (COMM_WORLD has
 * 0, COMM_SELF 4).  The members of a new communicator agree on a set none
 * of them uses: each offers the sets free at home, the offers are ANDed
 * over the members (a reduction over the parent, or over each group and
 * between the groups' leaders for an intercommunicator), and every member
 * takes the lowest common one.  Freeing the communicator gives it back.
 *
 * Agreements can run at once in one process (MPI_Comm_idup's threads, a
 * blocking call beside them), and one may wait long for a member that has
 * not joined yet (MPICH's comm/comm_create_group_idup).  So a round offers
 * one region of the bitmap only, chosen from the agreement's key and the
 * round's number (the same on every member), and holds what it offered
 * until it ends: a round running beside it at home offers what is not
 * held, and says so (the reduction's "calm" word).  A round that found no
 * common set is run again on another region.  No agreement waits for
 * another: one waiting for a late member holds one region while the
 * others go around it.  (MPICH instead lets one agreement at a time own
 * the whole mask, the others offering nothing until it is done.)
 *
 * An intercommunicator keeps its local group as an intracommunicator of
 * its own (local), over which its agreements and group exchanges run; the
 * leaders (rank 0 of each group) trade over the intercommunicator itself,
 * or over the peer communicator while one is being made.
 *
 * Messages of agreements go on the agreements' context of the
 * communicator they run over (no program's message nor coll.c's is
 * there), tagged with the agreement's number on that communicator
 * (agree_seq, taken in the order every member starts its collective
 * calls), or, for MPI_Comm_create_group, which is collective over the
 * group only, with its tag and bit 30 set.  Steps of one agreement share
 * its tag: between two members they happen in one order, and MPI's
 * non-overtaking rule keeps them apart.
 *
 * Locking: a mutex of this file's over the bitmaps, never held while
 * sending or waiting; reference counts are atomic.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/sync.h"
#include "kernel/thread.h"
#include "lib/mpi/mpiimpl.h"

#define CTX_BITS 4096			/* sets of four: contexts 0..16383 */
#define CTX_WORDS (CTX_BITS / 32)
_Static_assert(CTX_BITS * 4 <= MPII_CTX_LIMIT, "every context below MPII_CTX_LIMIT");
#define CTX_AGREE 2			/* the agreements' context: ctx + 2 */
#define REGION_WORDS 4			/* what one round offers: 128 sets */
#define REGION_BITS (REGION_WORDS * 32)
#define NREGIONS (CTX_WORDS / REGION_WORDS)
#define CTX_WORLD 0
#define CTX_SELF 4
#define CREATE_GROUP_TAGS 0x40000000

static struct mutex ctx_lock = MUTEX_INIT;
static uint32_t ctx_used[CTX_WORDS];	/* a communicator of this process has the set */
static uint32_t ctx_held[CTX_WORDS];	/* a round in progress offered it */

static struct mpi_comm *world, *self;

/* --- communicator objects -------------------------------------------------------------------- */

static void ctx_release(uint32_t ctx)
{
	uint32_t b = ctx / 4;

	mutex_lock(&ctx_lock);
	ctx_used[b / 32] &= ~(1u << (b % 32));
	mutex_unlock(&ctx_lock);
}

static struct mpi_comm *comm_alloc(struct mpi_group *group, struct mpi_group *rgroup, uint32_t ctx)
{
	struct mpi_comm *c = calloc(1, sizeof *c);

	if (!c)
		return NULL;
	c->refs = 1;
	c->ctx = ctx;
	c->group = group;
	c->rgroup = rgroup;
	mpii_group_ref(group);
	if (rgroup)
		mpii_group_ref(rgroup);
	c->rank = group->rank;
	c->size = group->size;
	c->errh = MPI_ERRORS_ARE_FATAL;
	c->info = MPI_INFO_NULL;
	return c;
}

struct mpi_comm *mpii_comm_new(struct mpi_group *group, struct mpi_group *rgroup, uint32_t ctx)
{
	struct mpi_comm *c = comm_alloc(group, rgroup, ctx);

	if (!c)
		return NULL;
	int h = mpii_obj_new(NOW_MPI_KCOMM, c);
	if (h < 0) {
		mpii_group_unref(group);
		mpii_group_unref(rgroup);
		free(c);
		return NULL;
	}
	c->handle = h;
	return c;
}

static void comm_destroy(struct mpi_comm *c)
{
	/*
	 * One whose agreement never ended still has context 0, COMM_WORLD's
	 * (which is never destroyed): it has nothing to give back.
	 */
	if (c->ctx != CTX_WORLD)
		ctx_release(c->ctx);
	if (c->local)
		mpii_comm_unref(c->local);
	mpii_group_unref(c->group);
	mpii_group_unref(c->rgroup);
	mpii_errh_unref(c->errh);
	if (c->topo)
		mpii_topo_unref(c->topo);
	if (c->info != MPI_INFO_NULL)
		MPI_Info_free(&c->info);
	mpii_obj_free(NOW_MPI_KCOMM, c->handle);
	free(c);
}

struct mpi_comm *mpii_comm_world_obj;

struct mpi_comm *mpii_comm_lookup(MPI_Comm h)
{
	struct mpi_comm *c = mpii_obj_get(NOW_MPI_KCOMM, h);

	/* A freed communicator waiting for its last operations is no longer the program's. */
	return c && !__atomic_load_n(&c->freed, __ATOMIC_ACQUIRE) ? c : NULL;
}

void mpii_comm_ref(struct mpi_comm *c)
{
	__atomic_add_fetch(&c->refs, 1, __ATOMIC_RELAXED);
}

void mpii_comm_unref(struct mpi_comm *c)
{
	if (__atomic_sub_fetch(&c->refs, 1, __ATOMIC_ACQ_REL) == 0)
		comm_destroy(c);
}

/* A new communicator's error handler is its parent's (MPI-3.1 §8.3). */
static void inherit(struct mpi_comm *nc, const struct mpi_comm *parent)
{
	nc->errh = __atomic_load_n(&parent->errh, __ATOMIC_ACQUIRE);
	mpii_errh_ref(nc->errh);
}

/* --- circles: the processes an agreement runs over ---------------------------------------------- */

/*
 * n members, member i being rank rank[i] of intracommunicator c (rank
 * NULL: rank i), this process member me; member 0 leads.  Messages go on
 * c's agreements' context with tag.  A joined circle's leader also trades
 * with the other group's leader, rank bridge_peer of bridge, on context
 * offset bridge_off with bridge_tag.
 */
struct circle {
	struct mpi_comm *c;
	int n, me, tag;
	const int *rank;
	int joined;			/* the group trades with another through its leader */
	struct mpi_comm *bridge;	/* the leader's way to the other leader */
	int bridge_peer, bridge_off, bridge_tag;
};

static void circle_of(struct circle *k, struct mpi_comm *c, int tag)
{
	k->c = c;
	k->n = c->size;
	k->me = c->rank;
	k->tag = tag;
	k->rank = NULL;
	k->joined = 0;
	k->bridge = NULL;
}

/* The circle of intercommunicator ic: its local group, its leaders trading over ic. */
static void circle_inter(struct circle *k, struct mpi_comm *ic, int tag)
{
	circle_of(k, ic->local, tag);
	k->joined = 1;
	k->bridge = ic;
	k->bridge_peer = 0;
	k->bridge_off = CTX_AGREE;
	k->bridge_tag = tag;
}

/* The tags of agreement number seq on a communicator, and of MPI_Comm_create_group's tag. */
static int seq_tag(uint32_t seq)
{
	return (int)(seq & (CREATE_GROUP_TAGS - 1));
}

static int group_tag(int tag)
{
	return (int)(CREATE_GROUP_TAGS | ((uint32_t)tag & (CREATE_GROUP_TAGS - 1)));
}

static uint32_t next_seq(struct mpi_comm *c)
{
	return __atomic_fetch_add(&c->agree_seq, 1, __ATOMIC_RELAXED);
}

/* An agreement's key, the same on every member. */
static uint32_t key_of(const struct mpi_comm *c, uint32_t seq)
{
	return c->ctx * 2654435761u + seq;
}

static int peer_of(const struct circle *k, int i)
{
	return k->rank ? k->rank[i] : i;
}

/*
 * Small circles trade directly, every message in one hop; larger ones in
 * ceil(log2 n) rounds.  A hop between emulated nodes costs some hundreds
 * of microseconds and MPICH's comm/ctxsplit makes 100,000 communicators in
 * five minutes on four: a split must cost little more than one hop.
 */
#define DIRECT_MAX 8

/* Member 0's len bytes at buf to every member. */
static int circle_bcast(const struct circle *k, void *buf, int len)
{
	int mask = 1, err = MPI_SUCCESS;

	if (k->n <= DIRECT_MAX) {
		struct mpi_req *q[DIRECT_MAX];
		if (k->me != 0)
			return mpii_recv(buf, len, MPI_BYTE, peer_of(k, 0), k->tag, k->c, CTX_AGREE, MPI_STATUS_IGNORE);
		for (int i = 1; i < k->n; i++) {
			int e = mpii_isend(buf, len, MPI_BYTE, peer_of(k, i), k->tag, k->c, CTX_AGREE, MPII_SEND_STD,
					   &q[i - 1]);
			err = err ? err : e;
		}
		int e = mpii_req_waitall(k->n - 1, q);
		return err ? err : e;
	}
	/* Binomial tree: from member v minus its lowest set bit, then on to v + 2^j below that bit. */
	while (mask < k->n) {
		if (k->me & mask) {
			err = mpii_recv(buf, len, MPI_BYTE, peer_of(k, k->me - mask), k->tag, k->c, CTX_AGREE,
					MPI_STATUS_IGNORE);
			break;
		}
		mask <<= 1;
	}
	for (mask >>= 1; mask > 0 && err == MPI_SUCCESS; mask >>= 1)
		if (k->me + mask < k->n)
			err = mpii_send(buf, len, MPI_BYTE, peer_of(k, k->me + mask), k->tag, k->c, CTX_AGREE);
	return err;
}

/* Every member's record of sz bytes (its own at rec + me * sz) to every member. */
static int circle_allgather(const struct circle *k, void *rec, int sz)
{
	char *b = rec;
	int n = k->n, me = k->me, err = MPI_SUCCESS;

	if (n <= DIRECT_MAX) {
		struct mpi_req *q[2 * DIRECT_MAX];
		int nq = 0;
		for (int i = 0; i < n; i++) {
			if (i == me)
				continue;
			int e = mpii_irecv(b + i * sz, sz, MPI_BYTE, peer_of(k, i), k->tag, k->c, CTX_AGREE, &q[nq++]);
			err = err ? err : e;
			e = mpii_isend(b + me * sz, sz, MPI_BYTE, peer_of(k, i), k->tag, k->c, CTX_AGREE, MPII_SEND_STD,
				       &q[nq++]);
			err = err ? err : e;
		}
		int e = mpii_req_waitall(nq, q);
		return err ? err : e;
	}
	/*
	 * Bruck's concatenation: after the round of distance d a member holds
	 * the records of members me .. me + 2d - 1, its own first.
	 */
	char *t = malloc((size_t)n * (size_t)sz);
	if (!t)
		return mpii_errcode(MPI_ERR_NO_MEM, "MPI", "no memory for a context agreement");
	memcpy(t, b + me * sz, (size_t)sz);
	for (int d = 1; d < n && err == MPI_SUCCESS; d <<= 1) {
		int cnt = d < n - d ? d : n - d;
		err = mpii_sendrecv(t, cnt * sz, MPI_BYTE, peer_of(k, (me - d + n) % n), k->tag, t + d * sz, cnt * sz,
				    MPI_BYTE, peer_of(k, (me + d) % n), k->tag, k->c, CTX_AGREE, MPI_STATUS_IGNORE);
	}
	for (int j = 0; j < n && err == MPI_SUCCESS; j++)
		memcpy(b + ((me + j) % n) * sz, t + j * sz, (size_t)sz);
	free(t);
	return err;
}

/*
 * The leaders swap mine for theirs over the bridge.  Only a leader needs
 * to know the bridge: the others of a group being joined to another may
 * not even belong to the peer communicator (MPI-3.1 §6.6.2).
 */
static int leader_swap(const struct circle *k, const void *mine, int mlen, void *theirs, int tlen)
{
	if (k->me != 0 || !k->bridge)
		return MPI_SUCCESS;
	return mpii_sendrecv(mine, mlen, MPI_BYTE, k->bridge_peer, k->bridge_tag, theirs, tlen, MPI_BYTE,
			     k->bridge_peer, k->bridge_tag, k->bridge, k->bridge_off, MPI_STATUS_IGNORE);
}

/* The leader gives mine for theirs; every member gets theirs. */
static int circle_trade(const struct circle *k, const void *mine, int mlen, void *theirs, int tlen)
{
	int err = leader_swap(k, mine, mlen, theirs, tlen);

	return err ? err : circle_bcast(k, theirs, tlen);
}

/* The words at offset off of every member's record (rec bytes apart), ANDed into w[0..nw). */
static void and_records(const struct circle *k, const void *recs, int rec, int off, uint32_t *w, int nw)
{
	for (int m = 0; m < k->n; m++) {
		const uint32_t *x = (const uint32_t *)((const char *)recs + (size_t)m * (size_t)rec + off);
		for (int i = 0; i < nw; i++)
			w[i] &= x[i];
	}
}

/* In a joined circle, the other group's AND too (its leader's, through ours). */
static int bridge_band(const struct circle *k, uint32_t *w, int nw)
{
	uint32_t theirs[REGION_WORDS + 1];
	int err;

	if (!k->joined)
		return MPI_SUCCESS;
	if ((err = circle_trade(k, w, nw * 4, theirs, nw * 4)))
		return err;
	for (int i = 0; i < nw; i++)
		w[i] &= theirs[i];
	return MPI_SUCCESS;
}

/* --- context ids ---------------------------------------------------------------------------- */

static int region_of(uint32_t key, uint32_t round)
{
	uint32_t h = key ^ (round * 0x9e3779b9u);

	h ^= h >> 16;
	h *= 0x7feb352du;
	h ^= h >> 15;
	h *= 0x846ca68bu;
	h ^= h >> 16;
	return (int)(h % NREGIONS);
}

/* One round of an agreement at home: its region, and what this process offered in it. */
struct offer {
	int reg, member;
	uint32_t bits[REGION_WORDS];
};

/*
 * Offer round's region (a member: the sets free and not held, held from
 * now on; the others: all) into w, and whether no other round held any
 * of the region's free sets (the calm word, w[REGION_WORDS]).
 */
static void offer_make(struct offer *o, uint32_t key, uint32_t round, int member, uint32_t *w)
{
	uint32_t calm = 1;

	o->reg = region_of(key, round);
	o->member = member;
	uint32_t *used = &ctx_used[o->reg * REGION_WORDS], *held = &ctx_held[o->reg * REGION_WORDS];
	mutex_lock(&ctx_lock);
	for (int i = 0; i < REGION_WORDS; i++) {
		o->bits[i] = member ? ~used[i] & ~held[i] : ~0u;
		if (member && (~used[i] & held[i]))
			calm = 0;
		if (member)
			held[i] |= o->bits[i];
		w[i] = o->bits[i];
	}
	mutex_unlock(&ctx_lock);
	w[REGION_WORDS] = calm;
}

/*
 * The round over, w the offers ANDed over everyone (unless err): what was
 * held goes back, and a member takes the lowest common set.  Its context,
 * or -1 (none common, or err).
 */
static long offer_settle(const struct offer *o, const uint32_t *w, int err)
{
	uint32_t *used = &ctx_used[o->reg * REGION_WORDS], *held = &ctx_held[o->reg * REGION_WORDS];
	long ctx = -1;

	mutex_lock(&ctx_lock);
	for (int i = 0; i < REGION_WORDS; i++) {
		if (o->member)
			held[i] &= ~o->bits[i];
		if (ctx < 0 && err == MPI_SUCCESS && w[i]) {
			int bit = __builtin_ctz(w[i]);
			ctx = 4 * ((long)o->reg * REGION_BITS + i * 32 + bit);
			if (o->member)
				used[i] |= 1u << bit;
		}
	}
	mutex_unlock(&ctx_lock);
	return ctx;
}

/*
 * Agree over k on a set of contexts no member uses, from round first on;
 * member: this process will use it (the others only take part).
 * Collective over k.
 */
static int ctx_agree(const struct circle *k, uint32_t key, uint32_t first, int member, uint32_t *ctx,
		     const char *fn)
{
	const int rec = (REGION_WORDS + 1) * 4;
	uint32_t w[REGION_WORDS + 1], *recs = malloc((size_t)k->n * rec);
	struct offer o;
	int empty_rounds = 0, err = MPI_SUCCESS;

	if (!recs)
		return mpii_errcode(MPI_ERR_NO_MEM, fn, "no memory for a context agreement");
	for (uint32_t round = first;; round++) {
		offer_make(&o, key, round, member, w);
		memcpy(recs + k->me * (REGION_WORDS + 1), w, rec);
		if ((err = circle_allgather(k, recs, rec)) == MPI_SUCCESS) {
			and_records(k, recs, rec, 0, w, REGION_WORDS + 1);
			err = bridge_band(k, w, REGION_WORDS + 1);
		}
		long c = offer_settle(&o, w, err);
		if (err)
			break;
		if (c >= 0) {
			*ctx = (uint32_t)c;
			break;
		}
		/* Everyone offered a whole region and none was common: some member is full there. */
		if (w[REGION_WORDS] && ++empty_rounds == 2 * NREGIONS) {
			err = mpii_errcode(MPI_ERR_OTHER, fn, "No context id is free on every member (%d per process)",
					   CTX_BITS);
			break;
		}
	}
	free(recs);
	return err;
}

/* A set for a communicator of this process alone, no other having to agree: its context, or -1 (none free). */
static long ctx_local(void)
{
	long ctx = -1;

	mutex_lock(&ctx_lock);
	for (int i = 0; i < CTX_WORDS && ctx < 0; i++) {
		uint32_t f = ~ctx_used[i] & ~ctx_held[i];
		if (f) {
			int bit = __builtin_ctz(f);
			ctx_used[i] |= 1u << bit;
			ctx = 4 * (i * 32 + bit);
		}
	}
	mutex_unlock(&ctx_lock);
	return ctx;
}

/* --- duplicates ----------------------------------------------------------------------------------- */

/*
 * A duplicate of c made but not agreed on (ctx unset): the same groups,
 * and for an intercommunicator a local communicator of its own.
 */
static struct mpi_comm *dup_prepare(struct mpi_comm *c)
{
	struct mpi_comm *nc = mpii_comm_new(c->group, c->rgroup, 0);

	if (nc && mpii_comm_inter(c) && !(nc->local = mpii_comm_new(c->group, NULL, 0))) {
		mpii_comm_unref(nc);
		return NULL;
	}
	return nc;
}

/* The agreements of duplicate nc of c: its local communicator's, then its own.  Collective over c. */
static int dup_agree(struct mpi_comm *c, uint32_t seq, struct mpi_comm *nc, const char *fn)
{
	struct circle k;
	uint32_t ctx;
	int err;

	if (!mpii_comm_inter(c)) {
		circle_of(&k, c, seq_tag(seq));
	} else {
		circle_of(&k, c->local, seq_tag(seq));
		if ((err = ctx_agree(&k, key_of(c, seq), 0, 1, &ctx, fn)))
			return err;
		nc->local->ctx = ctx;
		circle_inter(&k, c, seq_tag(seq));
	}
	if ((err = ctx_agree(&k, key_of(c, seq), 0, 1, &ctx, fn)))
		return err;
	nc->ctx = ctx;
	return MPI_SUCCESS;
}

/*
 * The hints of info this library knows (MPI-4.0 §7.4.4's assertions), for
 * a communicator: MPI_INFO_NULL if none.  The others are dropped, as MPICH
 * does (comm/comm_info).
 */
static MPI_Info known_hints(MPI_Info info)
{
	static const char *const known[] = { "mpi_assert_no_any_tag", "mpi_assert_no_any_source",
					     "mpi_assert_exact_length", "mpi_assert_allow_overtaking" };
	MPI_Info out = MPI_INFO_NULL;
	char v[MPI_MAX_INFO_VAL + 1];
	int flag;

	if (info == MPI_INFO_NULL)
		return MPI_INFO_NULL;
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
		if (MPI_Info_get(info, known[i], MPI_MAX_INFO_VAL, v, &flag) != MPI_SUCCESS || !flag)
			continue;
		if (out == MPI_INFO_NULL && MPI_Info_create(&out) != MPI_SUCCESS)
			return MPI_INFO_NULL;
		MPI_Info_set(out, known[i], v);
	}
	return out;
}

/* What a duplicate takes of c besides its groups: topology, hints, handler, attributes. */
static int dup_copy(struct mpi_comm *c, struct mpi_comm *nc, int with_info, MPI_Info info)
{
	nc->topo = c->topo;
	if (nc->topo)
		mpii_topo_ref(nc->topo);
	if (with_info)
		nc->info = known_hints(info);
	else if (c->info != MPI_INFO_NULL)
		MPI_Info_dup(c->info, &nc->info);
	inherit(nc, c);
	return mpii_attr_dup_all(&nc->attrs, c->attrs, NOW_MPI_KCOMM, c->handle, nc->handle);
}

static int info_arg(struct mpi_comm *c, MPI_Info info, const char *fn)
{
	if (info != MPI_INFO_NULL && !mpii_obj_get(NOW_MPI_KINFO, info))
		return mpii_err(c, MPI_ERR_INFO, fn, "Invalid MPI_Info %#x", info);
	return MPI_SUCCESS;
}

static int dup(MPI_Comm comm, int with_info, MPI_Info info, MPI_Comm *newcomm, const char *fn)
{
	struct mpi_comm *c, *nc;
	int err;

	if ((err = mpii_check_comm(comm, fn, &c)) || (err = info_arg(c, info, fn)))
		return err;
	if (!newcomm)
		return mpii_err(c, MPI_ERR_ARG, fn, "Null pointer in parameter newcomm");
	*newcomm = MPI_COMM_NULL;
	uint32_t seq = next_seq(c);
	if (!(nc = dup_prepare(c)))
		return mpii_err(c, MPI_ERR_NO_MEM, fn, "no memory for a communicator");
	if ((err = dup_agree(c, seq, nc, fn))) {
		mpii_comm_unref(nc);
		return mpii_err_raise(c, err);
	}
	if ((err = dup_copy(c, nc, with_info, info))) {
		/* A copy callback failed (MPICH's attr/attrerr): no communicator. */
		mpii_attr_free_all(&nc->attrs, NOW_MPI_KCOMM, nc->handle);
		mpii_comm_unref(nc);
		return mpii_err_raise(c, err);
	}
	*newcomm = nc->handle;
	return MPI_SUCCESS;
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
	return dup(comm, 0, MPI_INFO_NULL, newcomm, "MPI_Comm_dup");
}

int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
	return dup(comm, 1, info, newcomm, "MPI_Comm_dup_with_info");
}

/* An MPI_Comm_idup under way: its agreements run in a thread of their own. */
struct idup {
	struct mpi_comm *c, *nc;
	uint32_t seq;
	int copy_err;			/* the attribute copy failed (at the call) */
	struct mpi_req *r;
};

static void *idup_main(void *arg)
{
	struct idup *d = arg;
	int err = dup_agree(d->c, d->seq, d->nc, "MPI_Comm_idup");

	if (!err)
		err = d->copy_err;
	if (err) {
		mpii_attr_free_all(&d->nc->attrs, NOW_MPI_KCOMM, d->nc->handle);
		mpii_comm_unref(d->nc);
	}
	mpii_comm_unref(d->c);
	mpii_req_complete(d->r, err);
	free(d);
	return NULL;
}

static int idup(MPI_Comm comm, int with_info, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request,
		const char *fn)
{
	struct mpi_comm *c;
	struct idup *d;
	int err;

	if ((err = mpii_check_comm(comm, fn, &c)) || (err = info_arg(c, info, fn)))
		return err;
	if (!newcomm || !request)
		return mpii_err(c, MPI_ERR_ARG, fn, "Null pointer in parameter %s", newcomm ? "request" : "newcomm");
	/*
	 * The number is taken now, in the order of the program's calls; the
	 * agreements wait for the other members in a thread, as an idup must
	 * not block (MPICH's comm/comm_idup: a member posts it, then sends to a
	 * rank that calls it only once that send arrived).
	 */
	uint32_t seq = next_seq(c);
	if (!(d = malloc(sizeof *d)) || !(d->nc = dup_prepare(c)) || !(d->r = mpii_req_generic(c))) {
		if (d && d->nc)
			mpii_comm_unref(d->nc);
		free(d);
		return mpii_err(c, MPI_ERR_NO_MEM, fn, "no memory for a communicator");
	}
	*request = mpii_req_handle(d->r);
	d->c = c;
	d->seq = seq;
	d->copy_err = dup_copy(c, d->nc, with_info, info);
	*newcomm = d->copy_err ? MPI_COMM_NULL : d->nc->handle;
	mpii_comm_ref(c);
	struct thread *t = thread_create("mpi-idup", idup_main, d, PRIO_NORMAL, 0);
	if (!t) {
		/* No thread to spare: agree now, which blocks until the other members call idup too. */
		idup_main(d);
		return MPI_SUCCESS;
	}
	thread_detach(t);
	return MPI_SUCCESS;
}

int MPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
	return idup(comm, 0, MPI_INFO_NULL, newcomm, request, "MPI_Comm_idup");
}

int MPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request)
{
	return idup(comm, 1, info, newcomm, request, "MPI_Comm_idup_with_info");
}

/* --- split, create -------------------------------------------------------------------------------- */

/*
 * What a member of a split says: its color and key, and (on an
 * intracommunicator) its offer for the first round of the agreement.
 */
struct split_rec {
	int color, key;
	uint32_t offer[REGION_WORDS + 1];
};

/*
 * The world ranks of the members of color in recs (n of them, in the
 * order of the ranks of the group whose world ranks are world), ordered by
 * key then rank: a group, or NULL (no memory; *nomem set).
 */
static struct mpi_group *color_group(const struct split_rec *recs, int n, const int *world, int color, int *nomem)
{
	int *idx = malloc(((size_t)n + 1) * sizeof *idx), m = 0;
	struct mpi_group *g = NULL;

	*nomem = 1;
	if (!idx)
		return NULL;
	/* Insertion keeps equal keys in rank order (MPICH's comm/cmsplit2 checks the tie-break). */
	for (int i = 0; i < n; i++) {
		if (recs[i].color != color)
			continue;
		int j = m++;
		while (j > 0 && recs[idx[j - 1]].key > recs[i].key) {
			idx[j] = idx[j - 1];
			j--;
		}
		idx[j] = i;
	}
	for (int i = 0; i < m; i++)
		idx[i] = world[idx[i]];
	g = mpii_group_new(m, idx);
	free(idx);
	*nomem = g == NULL;
	return g;
}

int mpii_comm_split(struct mpi_comm *c, int color, int key, struct mpi_comm **out)
{
	static const char fn[] = "MPI_Comm_split";
	uint32_t seq = next_seq(c), ctx, w[REGION_WORDS + 1];
	struct split_rec *recs = malloc((size_t)c->size * sizeof *recs);
	struct mpi_group *g = NULL;
	struct offer o;
	struct circle k;
	int err, nomem = 0, in = color != MPI_UNDEFINED;

	*out = NULL;
	if (!recs)
		return mpii_errcode(MPI_ERR_NO_MEM, fn, "no memory");
	/* One exchange does the split and, most often, the agreement: each offer rides with its color. */
	circle_of(&k, c, seq_tag(seq));
	recs[c->rank].color = color;
	recs[c->rank].key = key;
	offer_make(&o, key_of(c, seq), 0, in, recs[c->rank].offer);
	memcpy(w, recs[c->rank].offer, sizeof w);
	if ((err = circle_allgather(&k, recs, sizeof *recs)) == MPI_SUCCESS)
		and_records(&k, recs, sizeof *recs, offsetof(struct split_rec, offer), w, REGION_WORDS + 1);
	long first = offer_settle(&o, w, err);
	if (err == MPI_SUCCESS && in)
		g = color_group(recs, c->size, c->group->world, color, &nomem);
	free(recs);
	if (err)
		return err;
	if (first >= 0)
		ctx = (uint32_t)first;
	else if ((err = ctx_agree(&k, key_of(c, seq), 1, in, &ctx, fn)))
		return err;
	if (in && (!g || !(*out = mpii_comm_new(g, NULL, ctx)))) {
		ctx_release(ctx);
		nomem = 1;
	}
	mpii_group_unref(g);
	if (nomem)
		return mpii_errcode(MPI_ERR_NO_MEM, fn, "no memory for a communicator");
	if (*out)
		inherit(*out, c);
	return MPI_SUCCESS;
}

/*
 * An intercommunicator of local group lg and remote group rg made from
 * ic (in: this process is in lg): the agreements of its local
 * communicator and its own, over ic's circle.  Collective over ic.
 */
static int inter_from(struct mpi_comm *ic, const struct circle *k, uint32_t key, struct mpi_group *lg,
		      struct mpi_group *rg, int in, struct mpi_comm **out, const char *fn)
{
	struct circle lk = *k;
	uint32_t lctx, ctx;
	int err;

	*out = NULL;
	lk.joined = 0;
	if ((err = ctx_agree(&lk, key, 0, in, &lctx, fn)))
		return err;
	err = ctx_agree(k, key, 0, in, &ctx, fn);
	if (!in) {
		return err;
	} else if (err) {
		ctx_release(lctx);
		return err;
	}
	struct mpi_comm *nc = mpii_comm_new(lg, rg, ctx);
	struct mpi_comm *l = nc ? mpii_comm_new(lg, NULL, lctx) : NULL;
	if (!l) {
		ctx_release(lctx);
		if (nc)
			mpii_comm_unref(nc);
		else
			ctx_release(ctx);
		return mpii_errcode(MPI_ERR_NO_MEM, fn, "no memory for a communicator");
	}
	nc->local = l;
	inherit(nc, ic);
	*out = nc;
	return MPI_SUCCESS;
}

/* MPI_Comm_split on an intercommunicator: each color a new one, of its members on both sides. */
static int split_inter(struct mpi_comm *ic, int color, int key, struct mpi_comm **out)
{
	static const char fn[] = "MPI_Comm_split";
	uint32_t seq = next_seq(ic);
	int n = ic->size, rn = ic->rgroup->size, err, nomem = 0;
	struct split_rec *recs = malloc((size_t)n * sizeof *recs), *rrecs = malloc((size_t)rn * sizeof *rrecs);
	struct mpi_group *lg = NULL, *rg = NULL;
	struct circle k;

	*out = NULL;
	if (!recs || !rrecs) {
		free(recs);
		free(rrecs);
		return mpii_errcode(MPI_ERR_NO_MEM, fn, "no memory");
	}
	circle_inter(&k, ic, seq_tag(seq));
	memset(&recs[ic->rank], 0, sizeof *recs);
	recs[ic->rank].color = color;
	recs[ic->rank].key = key;
	if ((err = circle_allgather(&k, recs, sizeof *recs)) ||
	    (err = circle_trade(&k, recs, n * (int)sizeof *recs, rrecs, rn * (int)sizeof *rrecs))) {
		free(recs);
		free(rrecs);
		return err;
	}
	if (color != MPI_UNDEFINED) {
		lg = color_group(recs, n, ic->group->world, color, &nomem);
		if (lg)
			rg = color_group(rrecs, rn, ic->rgroup->world, color, &nomem);
	}
	free(recs);
	free(rrecs);
	/* A color with nobody on the other side makes no communicator (MPI-3.1 §6.4.2). */
	int in = lg && rg && rg->size > 0;
	err = inter_from(ic, &k, key_of(ic, seq), lg, rg, in, out, fn);
	mpii_group_unref(lg);
	mpii_group_unref(rg);
	if (err == MPI_SUCCESS && nomem)
		err = mpii_errcode(MPI_ERR_NO_MEM, fn, "no memory for a group");
	return err;
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
	static const char fn[] = "MPI_Comm_split";
	struct mpi_comm *c, *nc;
	int err;

	if ((err = mpii_check_comm(comm, fn, &c)))
		return err;
	if (!newcomm)
		return mpii_err(c, MPI_ERR_ARG, fn, "Null pointer in parameter newcomm");
	if (color < 0 && color != MPI_UNDEFINED)
		return mpii_err(c, MPI_ERR_ARG, fn, "Invalid color %d: nonnegative or MPI_UNDEFINED", color);
	err = mpii_comm_inter(c) ? split_inter(c, color, key, &nc) : mpii_comm_split(c, color, key, &nc);
	*newcomm = nc ? nc->handle : MPI_COMM_NULL;
	return err ? mpii_err_raise(c, err) : MPI_SUCCESS;
}

int mpii_comm_create_from(struct mpi_comm *c, struct mpi_group *group, struct mpi_comm **out)
{
	static const char fn[] = "MPI_Comm_create";
	uint32_t seq = next_seq(c), ctx;
	int in = group->rank != MPI_UNDEFINED, err;
	struct circle k;

	*out = NULL;
	circle_of(&k, c, seq_tag(seq));
	if ((err = ctx_agree(&k, key_of(c, seq), 0, in, &ctx, fn)) || !in)
		return err;
	if (!(*out = mpii_comm_new(group, NULL, ctx))) {
		ctx_release(ctx);
		return mpii_errcode(MPI_ERR_NO_MEM, fn, "no memory for a communicator");
	}
	inherit(*out, c);
	return MPI_SUCCESS;
}

/* Is every member of g one of c's local group?  Else the error, reported. */
static int subset_check(struct mpi_comm *c, const struct mpi_group *g, const char *fn)
{
	for (int i = 0; i < g->size; i++) {
		int j = 0;
		while (j < c->size && c->group->world[j] != g->world[i])
			j++;
		if (j == c->size)
			return mpii_err(c, MPI_ERR_GROUP, fn, "The group's process %d (world rank %d) is not in the "
					"communicator's group", i, g->world[i]);
	}
	return MPI_SUCCESS;
}

/* MPI_Comm_create on an intercommunicator: each side gives a subgroup of its own (MPI-3.1 §6.4.2). */
static int create_inter(struct mpi_comm *ic, struct mpi_group *g, struct mpi_comm **out)
{
	static const char fn[] = "MPI_Comm_create";
	uint32_t seq = next_seq(ic);
	struct circle k;
	int rn, err;

	*out = NULL;
	circle_inter(&k, ic, seq_tag(seq));
	if ((err = circle_trade(&k, &g->size, sizeof(int), &rn, sizeof(int))))
		return err;
	int *rw = malloc(((size_t)rn + 1) * sizeof *rw);
	if (!rw)
		return mpii_errcode(MPI_ERR_NO_MEM, fn, "no memory");
	if ((err = circle_trade(&k, g->world, g->size * (int)sizeof(int), rw, rn * (int)sizeof(int)))) {
		free(rw);
		return err;
	}
	struct mpi_group *rg = mpii_group_new(rn, rw);
	free(rw);
	/* An empty group on either side: nobody gets a communicator, and everybody knows it. */
	if (g->size == 0 || rn == 0) {
		mpii_group_unref(rg);
		return MPI_SUCCESS;
	}
	err = inter_from(ic, &k, key_of(ic, seq), g, rg, rg && g->rank != MPI_UNDEFINED, out, fn);
	if (err == MPI_SUCCESS && !rg)
		err = mpii_errcode(MPI_ERR_NO_MEM, fn, "no memory for a group");
	mpii_group_unref(rg);
	return err;
}

int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
	static const char fn[] = "MPI_Comm_create";
	struct mpi_comm *c, *nc;
	struct mpi_group *g;
	int err;

	if ((err = mpii_check_comm(comm, fn, &c)))
		return err;
	if (!(g = mpii_group_get(group)))
		return mpii_err(c, MPI_ERR_GROUP, fn, group == MPI_GROUP_NULL ? "Null group" : "Invalid group %#x", group);
	if (!newcomm)
		return mpii_err(c, MPI_ERR_ARG, fn, "Null pointer in parameter newcomm");
	if ((err = subset_check(c, g, fn)))
		return err;
	err = mpii_comm_inter(c) ? create_inter(c, g, &nc) : mpii_comm_create_from(c, g, &nc);
	*newcomm = nc ? nc->handle : MPI_COMM_NULL;
	return err ? mpii_err_raise(c, err) : MPI_SUCCESS;
}

int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
	static const char fn[] = "MPI_Comm_create_group";
	struct mpi_comm *c, *nc = NULL;
	struct mpi_group *g;
	struct circle k;
	uint32_t ctx;
	int err;

	if ((err = mpii_check_comm(comm, fn, &c)))
		return err;
	if (mpii_comm_inter(c))
		return mpii_err(c, MPI_ERR_COMM, fn, "An intercommunicator cannot be the parent");
	if (!(g = mpii_group_get(group)))
		return mpii_err(c, MPI_ERR_GROUP, fn, group == MPI_GROUP_NULL ? "Null group" : "Invalid group %#x", group);
	if ((err = mpii_check_tag(c, tag, 0, fn)))
		return err;
	if (!newcomm)
		return mpii_err(c, MPI_ERR_ARG, fn, "Null pointer in parameter newcomm");
	if (g->rank == MPI_UNDEFINED)
		return mpii_err(c, MPI_ERR_GROUP, fn, "The calling process is not in the group");
	/* The agreement runs over the group's members only, named by their ranks in c. */
	int *rank = malloc((size_t)g->size * sizeof *rank);
	if (!rank)
		return mpii_err(c, MPI_ERR_NO_MEM, fn, "no memory");
	for (int i = 0; i < g->size; i++) {
		int j = 0;
		while (j < c->size && c->group->world[j] != g->world[i])
			j++;
		if (j == c->size) {
			free(rank);
			return mpii_err(c, MPI_ERR_GROUP, fn, "The group's process %d (world rank %d) is not in the "
					"communicator's group", i, g->world[i]);
		}
		rank[i] = j;
	}
	k.c = c;
	k.n = g->size;
	k.me = g->rank;
	k.rank = rank;
	k.tag = group_tag(tag);
	k.joined = 0;
	err = ctx_agree(&k, c->ctx ^ ((uint32_t)tag * 0x9e3779b9u), 0, 1, &ctx, fn);
	free(rank);
	if (err == MPI_SUCCESS && !(nc = mpii_comm_new(g, NULL, ctx))) {
		ctx_release(ctx);
		err = mpii_errcode(MPI_ERR_NO_MEM, fn, "no memory for a communicator");
	}
	*newcomm = MPI_COMM_NULL;
	if (err)
		return mpii_err_raise(c, err);
	inherit(nc, c);
	*newcomm = nc->handle;
	return MPI_SUCCESS;
}

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
	static const char fn[] = "MPI_Comm_split_type";
	struct mpi_comm *c, *nc;
	struct mpi_group *g;
	int err, flag = 0;
	char v[MPI_MAX_INFO_VAL + 1];

	(void)key;		/* one member: nothing to order */
	if ((err = mpii_check_comm(comm, fn, &c)) || (err = info_arg(c, info, fn)))
		return err;
	if (mpii_comm_inter(c))
		return mpii_err(c, MPI_ERR_COMM, fn, "An intercommunicator cannot be split by type");
	if (!newcomm)
		return mpii_err(c, MPI_ERR_ARG, fn, "Null pointer in parameter newcomm");
	if (split_type != MPI_UNDEFINED && split_type != MPI_COMM_TYPE_SHARED && split_type != MPI_COMM_TYPE_HW_GUIDED &&
	    split_type != MPI_COMM_TYPE_HW_UNGUIDED)
		return mpii_err(c, MPI_ERR_ARG, fn, "Invalid split_type %d", split_type);
	*newcomm = MPI_COMM_NULL;
	/*
	 * Every rank is alone on its node, with the node's memory and hardware
	 * to itself: a shared-memory or hardware domain is the rank alone
	 * (MPI-4.0 §7.4.2; without a resource type named, HW_GUIDED gives
	 * MPI_COMM_NULL, and HW_UNGUIDED has no smaller domain to offer).  Each
	 * process knows this without the others: no agreement is needed.
	 */
	if (split_type == MPI_COMM_TYPE_HW_GUIDED && info != MPI_INFO_NULL)
		MPI_Info_get(info, "mpi_hw_resource_type", MPI_MAX_INFO_VAL, v, &flag);
	if (split_type != MPI_COMM_TYPE_SHARED && !flag)
		return MPI_SUCCESS;
	if (!(g = mpii_group_new(1, &mpii_world_rank)))
		return mpii_err(c, MPI_ERR_NO_MEM, fn, "no memory for a group");
	long ctx = ctx_local();
	if (ctx < 0) {
		err = mpii_errcode(MPI_ERR_OTHER, fn, "No context id is free (%d per process)", CTX_BITS);
	} else if (!(nc = mpii_comm_new(g, NULL, (uint32_t)ctx))) {
		ctx_release((uint32_t)ctx);
		err = mpii_errcode(MPI_ERR_NO_MEM, fn, "no memory for a communicator");
	}
	mpii_group_unref(g);
	if (err)
		return mpii_err_raise(c, err);
	inherit(nc, c);
	*newcomm = nc->handle;
	return MPI_SUCCESS;
}

/* --- intercommunicators ------------------------------------------------------------------------ */

/* The sizes of a group and its agreement key, as the leaders trade them. */
struct side {
	int size;
	uint32_t key;
};

int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag,
			 MPI_Comm *newintercomm)
{
	static const char fn[] = "MPI_Intercomm_create";
	struct mpi_comm *lc, *pc = NULL, *local, *ic = NULL;
	struct circle k;
	struct side mine, theirs;
	uint32_t ctx;
	int err, *rot, *rw = NULL;

	if ((err = mpii_check_comm(local_comm, fn, &lc)))
		return err;
	if (mpii_comm_inter(lc))
		return mpii_err(lc, MPI_ERR_COMM, fn, "The local communicator is an intercommunicator");
	if (!newintercomm)
		return mpii_err(lc, MPI_ERR_ARG, fn, "Null pointer in parameter newintercomm");
	if (local_leader < 0 || local_leader >= lc->size)
		return mpii_err(lc, MPI_ERR_RANK, fn, "Invalid local leader %d but must be nonnegative and less than %d",
				local_leader, lc->size);
	/* peer_comm, remote_leader and tag matter at the leader only (MPI-3.1 §6.6.2). */
	if (lc->rank == local_leader) {
		if ((err = mpii_check_comm(peer_comm, fn, &pc)) || (err = mpii_check_tag(pc, tag, 0, fn)))
			return err;
		if (remote_leader < 0 || remote_leader >= mpii_comm_peers(pc))
			return mpii_err(pc, MPI_ERR_RANK, fn, "Invalid remote leader %d but must be nonnegative and less "
					"than %d", remote_leader, mpii_comm_peers(pc));
	}
	*newintercomm = MPI_COMM_NULL;
	uint32_t seq = next_seq(lc);
	if (!(rot = malloc((size_t)lc->size * sizeof *rot)))
		return mpii_err(lc, MPI_ERR_NO_MEM, fn, "no memory");
	/* The circles start at the leader: it trades with the other side. */
	for (int i = 0; i < lc->size; i++)
		rot[i] = (i + local_leader) % lc->size;
	k.c = lc;
	k.n = lc->size;
	k.me = (lc->rank - local_leader + lc->size) % lc->size;
	k.rank = rot;
	k.tag = seq_tag(seq);
	k.joined = 0;
	/* First the new communicator's local group gets a communicator of its own. */
	if ((err = ctx_agree(&k, key_of(lc, seq), 0, 1, &ctx, fn)))
		goto out;
	if (!(local = mpii_comm_new(lc->group, NULL, ctx))) {
		ctx_release(ctx);
		err = mpii_errcode(MPI_ERR_NO_MEM, fn, "no memory for a communicator");
		goto out;
	}
	/* Then the groups go between the leaders, and the whole agrees. */
	k.c = local;
	k.joined = 1;
	k.bridge = pc;
	k.bridge_peer = remote_leader;
	k.bridge_off = 0;
	k.bridge_tag = tag;
	mine.size = lc->size;
	mine.key = local->ctx;
	if ((err = circle_trade(&k, &mine, sizeof mine, &theirs, sizeof theirs)))
		goto free_local;
	if (!(rw = malloc(((size_t)theirs.size + 1) * sizeof *rw))) {
		err = mpii_errcode(MPI_ERR_NO_MEM, fn, "no memory");
		goto free_local;
	}
	if ((err = circle_trade(&k, lc->group->world, lc->size * (int)sizeof(int), rw, theirs.size * (int)sizeof(int))))
		goto free_local;
	struct mpi_group *rg = mpii_group_new(theirs.size, rw);
	/* The key must be the same on both sides: made of both sides' numbers alike. */
	err = ctx_agree(&k, mine.key * theirs.key + mine.key + theirs.key, 0, rg != NULL, &ctx, fn);
	if (err == MPI_SUCCESS && rg && !(ic = mpii_comm_new(lc->group, rg, ctx)))
		ctx_release(ctx);
	mpii_group_unref(rg);
	if (err == MPI_SUCCESS && !ic)
		err = mpii_errcode(MPI_ERR_NO_MEM, fn, "no memory for a communicator");
	if (err)
		goto free_local;
	ic->local = local;
	inherit(ic, lc);
	*newintercomm = ic->handle;
	goto out;
free_local:
	mpii_comm_unref(local);
out:
	free(rot);
	free(rw);
	return err ? mpii_err_raise(lc, err) : MPI_SUCCESS;
}

int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
	static const char fn[] = "MPI_Intercomm_merge";
	struct mpi_comm *ic, *nc = NULL;
	struct circle k;
	uint32_t ctx;
	int err, mine = high != 0, theirs;

	if ((err = mpii_check_comm(intercomm, fn, &ic)))
		return err;
	if (!mpii_comm_inter(ic))
		return mpii_err(ic, MPI_ERR_COMM, fn, "The communicator is not an intercommunicator");
	if (!newintracomm)
		return mpii_err(ic, MPI_ERR_ARG, fn, "Null pointer in parameter newintracomm");
	*newintracomm = MPI_COMM_NULL;
	uint32_t seq = next_seq(ic);
	circle_inter(&k, ic, seq_tag(seq));
	if ((err = circle_trade(&k, &mine, sizeof mine, &theirs, sizeof theirs)))
		return mpii_err_raise(ic, err);
	/* The low group first; between two alike, the one whose leader has the lower world rank. */
	const struct mpi_group *l = ic->group, *r = ic->rgroup;
	int local_first = mine != theirs ? !mine : l->world[0] < r->world[0];
	int *w = malloc(((size_t)l->size + (size_t)r->size) * sizeof *w);
	struct mpi_group *g = NULL;
	if (w) {
		const struct mpi_group *a = local_first ? l : r, *b = local_first ? r : l;
		memcpy(w, a->world, (size_t)a->size * sizeof *w);
		memcpy(w + a->size, b->world, (size_t)b->size * sizeof *w);
		g = mpii_group_new(l->size + r->size, w);
		free(w);
	}
	err = ctx_agree(&k, key_of(ic, seq), 0, g != NULL, &ctx, fn);
	if (err == MPI_SUCCESS && g && !(nc = mpii_comm_new(g, NULL, ctx)))
		ctx_release(ctx);
	mpii_group_unref(g);
	if (err == MPI_SUCCESS && !nc)
		err = mpii_errcode(MPI_ERR_NO_MEM, fn, "no memory for a communicator");
	if (err)
		return mpii_err_raise(ic, err);
	inherit(nc, ic);
	*newintracomm = nc->handle;
	return MPI_SUCCESS;
}

/* --- queries ------------------------------------------------------------------------------------ */

int MPI_Comm_size(MPI_Comm comm, int *size)
{
	static const char fn[] = "MPI_Comm_size";
	struct mpi_comm *c;
	int err = mpii_check_comm(comm, fn, &c);

	if (err)
		return err;
	if (!size)
		return mpii_err(c, MPI_ERR_ARG, fn, "Null pointer in parameter size");
	*size = c->size;
	return MPI_SUCCESS;
}

int MPI_Comm_rank(MPI_Comm comm, int *rank)
{
	static const char fn[] = "MPI_Comm_rank";
	struct mpi_comm *c;
	int err = mpii_check_comm(comm, fn, &c);

	if (err)
		return err;
	if (!rank)
		return mpii_err(c, MPI_ERR_ARG, fn, "Null pointer in parameter rank");
	*rank = c->rank;
	return MPI_SUCCESS;
}

int MPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
	static const char fn[] = "MPI_Comm_compare";
	struct mpi_comm *a, *b;
	int err;

	if ((err = mpii_check_comm(comm1, fn, &a)) || (err = mpii_check_comm(comm2, fn, &b)))
		return err;
	if (!result)
		return mpii_err(a, MPI_ERR_ARG, fn, "Null pointer in parameter result");
	if (a == b) {
		*result = MPI_IDENT;
	} else if (mpii_comm_inter(a) != mpii_comm_inter(b)) {
		*result = MPI_UNEQUAL;
	} else {
		int l = mpii_group_compare(a->group, b->group);
		int r = mpii_comm_inter(a) ? mpii_group_compare(a->rgroup, b->rgroup) : MPI_IDENT;
		/* MPI-3.1 §6.4.1: the groups identical makes congruent, the same members similar. */
		if (l == MPI_UNEQUAL || r == MPI_UNEQUAL)
			*result = MPI_UNEQUAL;
		else if (l == MPI_IDENT && r == MPI_IDENT)
			*result = MPI_CONGRUENT;
		else
			*result = MPI_SIMILAR;
	}
	return MPI_SUCCESS;
}

int MPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
	static const char fn[] = "MPI_Comm_group";
	struct mpi_comm *c;
	int err = mpii_check_comm(comm, fn, &c);

	if (err)
		return err;
	if (!group)
		return mpii_err(c, MPI_ERR_ARG, fn, "Null pointer in parameter group");
	mpii_group_ref(c->group);
	if ((*group = mpii_group_handle(c->group)) == MPI_GROUP_NULL)
		return mpii_err(c, MPI_ERR_NO_MEM, fn, "no memory for a group handle");
	return MPI_SUCCESS;
}

int MPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
	static const char fn[] = "MPI_Comm_test_inter";
	struct mpi_comm *c;
	int err = mpii_check_comm(comm, fn, &c);

	if (err)
		return err;
	if (!flag)
		return mpii_err(c, MPI_ERR_ARG, fn, "Null pointer in parameter flag");
	*flag = mpii_comm_inter(c);
	return MPI_SUCCESS;
}

/* The intercommunicator behind comm, or NULL with the error reported. */
static struct mpi_comm *inter_arg(MPI_Comm comm, const void *out, const char *fn, int *err)
{
	struct mpi_comm *c;

	if ((*err = mpii_check_comm(comm, fn, &c)))
		return NULL;
	if (!mpii_comm_inter(c)) {
		*err = mpii_err(c, MPI_ERR_COMM, fn, "The communicator is not an intercommunicator");
		return NULL;
	}
	if (!out) {
		*err = mpii_err(c, MPI_ERR_ARG, fn, "Null pointer in the output parameter");
		return NULL;
	}
	return c;
}

int MPI_Comm_remote_size(MPI_Comm comm, int *size)
{
	int err;
	struct mpi_comm *c = inter_arg(comm, size, "MPI_Comm_remote_size", &err);

	if (!c)
		return err;
	*size = c->rgroup->size;
	return MPI_SUCCESS;
}

int MPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
	static const char fn[] = "MPI_Comm_remote_group";
	int err;
	struct mpi_comm *c = inter_arg(comm, group, fn, &err);

	if (!c)
		return err;
	mpii_group_ref(c->rgroup);
	if ((*group = mpii_group_handle(c->rgroup)) == MPI_GROUP_NULL)
		return mpii_err(c, MPI_ERR_NO_MEM, fn, "no memory for a group handle");
	return MPI_SUCCESS;
}

int MPI_Comm_set_name(MPI_Comm comm, const char *comm_name)
{
	static const char fn[] = "MPI_Comm_set_name";
	struct mpi_comm *c;
	int err = mpii_check_comm(comm, fn, &c);

	if (err)
		return err;
	if (!comm_name)
		return mpii_err(c, MPI_ERR_ARG, fn, "Null pointer in parameter comm_name");
	/* Longer names are cut (MPI-3.1 §6.8). */
	size_t n = strnlen(comm_name, MPI_MAX_OBJECT_NAME - 1);
	memcpy(c->name, comm_name, n);
	c->name[n] = 0;
	return MPI_SUCCESS;
}

int MPI_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen)
{
	static const char fn[] = "MPI_Comm_get_name";
	struct mpi_comm *c;
	int err = mpii_check_comm(comm, fn, &c);

	if (err)
		return err;
	if (!comm_name || !resultlen)
		return mpii_err(c, MPI_ERR_ARG, fn, "Null pointer in parameter %s", comm_name ? "resultlen" : "comm_name");
	strcpy(comm_name, c->name);
	*resultlen = (int)strlen(c->name);
	return MPI_SUCCESS;
}

int MPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
	static const char fn[] = "MPI_Comm_set_info";
	struct mpi_comm *c;
	int err;

	if ((err = mpii_check_comm(comm, fn, &c)) || (err = info_arg(c, info, fn)))
		return err;
	MPI_Info old = c->info;
	c->info = known_hints(info);
	if (old != MPI_INFO_NULL)
		MPI_Info_free(&old);
	return MPI_SUCCESS;
}

int MPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
	static const char fn[] = "MPI_Comm_get_info";
	struct mpi_comm *c;
	int err = mpii_check_comm(comm, fn, &c);

	if (err)
		return err;
	if (!info_used)
		return mpii_err(c, MPI_ERR_ARG, fn, "Null pointer in parameter info_used");
	/* A new object, the program's to free (MPI-3.1 §6.4.4). */
	return c->info == MPI_INFO_NULL ? MPI_Info_create(info_used) : MPI_Info_dup(c->info, info_used);
}

/* --- freeing ------------------------------------------------------------------------------------- */

static int comm_free(MPI_Comm *comm, const char *fn)
{
	struct mpi_comm *c;
	int err;

	if (!comm)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Null pointer in parameter comm");
	if ((err = mpii_check_comm(*comm, fn, &c)))
		return err;
	if (c == world || c == self)
		return mpii_err(c, MPI_ERR_COMM, fn, "%s cannot be freed", c->name);
	/*
	 * The attributes go first, while the handle is still valid: their
	 * callbacks get it and may use it (MPICH's attr/attrdeleteget).  If
	 * one fails the communicator stays.
	 */
	if ((err = mpii_attr_free_all(&c->attrs, NOW_MPI_KCOMM, c->handle)))
		return mpii_err_raise(c, err);
	/* Operations still pending keep the object, and its context, until they end. */
	__atomic_store_n(&c->freed, 1, __ATOMIC_RELEASE);
	*comm = MPI_COMM_NULL;
	mpii_comm_unref(c);
	return MPI_SUCCESS;
}

int MPI_Comm_free(MPI_Comm *comm)
{
	return comm_free(comm, "MPI_Comm_free");
}

/* Without dynamic processes, a disconnect is a free (MPI-3.1 §10.5.4). */
int MPI_Comm_disconnect(MPI_Comm *comm)
{
	return comm_free(comm, "MPI_Comm_disconnect");
}

/* --- COMM_WORLD and COMM_SELF ---------------------------------------------------------------------- */

static struct mpi_comm *predefined(MPI_Comm h, int n, const int *members, uint32_t ctx, const char *name)
{
	struct mpi_group *g = mpii_group_new(n, members);
	struct mpi_comm *c = g ? comm_alloc(g, NULL, ctx) : NULL;

	mpii_group_unref(g);
	if (!c)
		return NULL;
	if (mpii_obj_set(NOW_MPI_KCOMM, MPII_INDEX(h), c) < 0) {
		mpii_group_unref(c->group);
		free(c);
		return NULL;
	}
	c->handle = h;
	strcpy(c->name, name);
	ctx_used[ctx / 128] |= 1u << (ctx / 4 % 32);
	return c;
}

int mpii_comm_init(void)
{
	int err = mpii_group_init();

	if (err)
		return err;
	memset(ctx_used, 0, sizeof ctx_used);
	memset(ctx_held, 0, sizeof ctx_held);
	int *w = malloc((size_t)mpii_world_size * sizeof *w);
	if (!w)
		return MPI_ERR_NO_MEM;
	for (int i = 0; i < mpii_world_size; i++)
		w[i] = i;
	world = predefined(MPI_COMM_WORLD, mpii_world_size, w, CTX_WORLD, "MPI_COMM_WORLD");
	mpii_comm_world_obj = world;
	free(w);
	self = predefined(MPI_COMM_SELF, 1, &mpii_world_rank, CTX_SELF, "MPI_COMM_SELF");
	return world && self ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

void mpii_comm_finalize(void)
{
	/* MPI-3.1 §8.7.1: COMM_SELF's attributes are deleted first, as if it were freed; then COMM_WORLD's. */
	struct mpi_comm *cs[2] = { self, world };

	for (int i = 0; i < 2; i++) {
		if (!cs[i])
			continue;
		mpii_attr_free_all(&cs[i]->attrs, NOW_MPI_KCOMM, cs[i]->handle);
		mpii_errh_unref(__atomic_exchange_n(&cs[i]->errh, MPI_ERRORS_ARE_FATAL, __ATOMIC_ACQ_REL));
	}
}
