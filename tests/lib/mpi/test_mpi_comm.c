/*
 * Host unit tests of lib/mpi/comm.c: communicators made by every
 * constructor, run as the ranks of worlds of forked processes joined by
 * sockets (host_mpi_comm.c), the way MPICH's comm tests and its harness
 * (MTestGetIntracomm, MTestGetIntercomm) make them.  For each new
 * communicator every member checks its size and rank, that all members
 * agreed on its context and that no other communicator of this process
 * has it, and that messages go on it.
 *
 * A rank's checks count failures (cmocka runs in the parent only); a rank
 * that fails one exits nonzero and the test fails.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/host/unit.h"

#include "lib/mpi/mpiimpl.h"
#include "tests/lib/mpi/host_mpi_comm.h"
#include "tests/lib/mpi/rank_check.h"

enum { TAG_CTX = 31000, TAG_DATA = 30000, TAG_SYNC = 29000 };

static int wrank(void)
{
	return mpii_world_rank;
}

static int wsize(void)
{
	return mpii_world_size;
}

static void send_int(int v, int peer, int tag, struct mpi_comm *c)
{
	CHECK(mpii_send(&v, 1, MPI_INT, peer, tag, c, 0) == MPI_SUCCESS);
}

static int recv_int(int peer, int tag, struct mpi_comm *c)
{
	int v = -12345;

	CHECK(mpii_recv(&v, 1, MPI_INT, peer, tag, c, 0, MPI_STATUS_IGNORE) == MPI_SUCCESS);
	return v;
}

/* Everyone waits for everyone, on COMM_WORLD's point to point. */
static void barrier(void)
{
	struct mpi_comm *w = mpii_comm_get(MPI_COMM_WORLD);

	if (wrank() == 0) {
		for (int i = 1; i < wsize(); i++)
			recv_int(i, TAG_SYNC, w);
		for (int i = 1; i < wsize(); i++)
			send_int(0, i, TAG_SYNC, w);
	} else {
		send_int(0, 0, TAG_SYNC, w);
		recv_int(0, TAG_SYNC, w);
	}
}

/* The communicators this process holds, to check that no two share a context. */
static MPI_Comm live[512];
static int nlive;

static void forget(MPI_Comm h)
{
	for (int i = 0; i < nlive; i++)
		if (live[i] == h)
			live[i] = live[--nlive];
}

static void free_comm(MPI_Comm *h)
{
	forget(*h);
	CHECK(MPI_Comm_free(h) == MPI_SUCCESS);
	CHECK(*h == MPI_COMM_NULL);
}

/*
 * A communicator just made: its members' contexts and messages.
 * Collective over it.
 */
static void check_comm(MPI_Comm h, int size, int rank)
{
	struct mpi_comm *c = mpii_comm_get(h);
	int n, r, flag;

	CHECK(c != NULL);
	if (!c)
		return;
	CHECK(MPI_Comm_size(h, &n) == MPI_SUCCESS && n == size);
	CHECK(MPI_Comm_rank(h, &r) == MPI_SUCCESS && r == rank);
	CHECK(c->ctx % 4 == 0 && c->ctx != 0 && c->ctx != 4);
	for (int i = 0; i < nlive; i++)
		CHECK(mpii_comm_get(live[i])->ctx != c->ctx);
	if (nlive < 512)
		live[nlive++] = h;
	MPI_Comm_test_inter(h, &flag);
	if (!flag) {
		/* The same context everywhere; a message around the ring. */
		if (c->rank == 0)
			for (int i = 1; i < c->size; i++)
				CHECK(recv_int(i, TAG_CTX, c) == (int)c->ctx);
		else
			send_int((int)c->ctx, 0, TAG_CTX, c);
		send_int(c->rank, (c->rank + 1) % c->size, TAG_DATA, c);
		CHECK(recv_int((c->rank + c->size - 1) % c->size, TAG_DATA, c) == (c->rank + c->size - 1) % c->size);
		return;
	}
	/* An intercommunicator: the local communicator's context too, and every pair across. */
	CHECK(c->local && c->local->ctx != c->ctx && c->local->size == c->size);
	for (int i = 0; i < nlive - 1; i++)
		CHECK(mpii_comm_get(live[i])->ctx != c->local->ctx);
	if (c->local->rank == 0)
		for (int i = 1; i < c->size; i++)
			CHECK(recv_int(i, TAG_CTX, c->local) == (int)c->local->ctx);
	else
		send_int((int)c->local->ctx, 0, TAG_CTX, c->local);
	for (int i = 0; i < c->rgroup->size; i++)
		send_int((int)c->ctx * 1000 + c->rank, i, TAG_DATA, c);
	for (int i = 0; i < c->rgroup->size; i++)
		CHECK(recv_int(i, TAG_DATA, c) == (int)c->ctx * 1000 + i);
}

/* --- intracommunicators ------------------------------------------------------------------------- */

/* MPICH's comm/dup, ctxalloc: many duplicates alive at once, freed, made again. */
static int run_dup(void)
{
	static MPI_Comm d[150];
	MPI_Comm base;

	CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &base) == MPI_SUCCESS);
	check_comm(base, wsize(), wrank());
	for (int round = 0; round < 4; round++) {
		for (int i = 0; i < 150; i++) {
			CHECK(MPI_Comm_dup(base, &d[i]) == MPI_SUCCESS);
			check_comm(d[i], wsize(), wrank());
		}
		for (int i = 0; i < 150; i++)
			free_comm(&d[i]);
	}
	/* Ranks whose contexts differ (rank 0 holds many more) still agree on common ones. */
	static MPI_Comm mine[300];
	int nmine = wrank() == 0 ? 300 : wrank() * 7;
	for (int i = 0; i < nmine; i++) {
		CHECK(MPI_Comm_dup(MPI_COMM_SELF, &mine[i]) == MPI_SUCCESS);
		check_comm(mine[i], 1, 0);
	}
	for (int i = 0; i < 100; i++) {
		CHECK(MPI_Comm_dup(base, &d[i]) == MPI_SUCCESS);
		check_comm(d[i], wsize(), wrank());
	}
	for (int i = 0; i < 100; i++)
		free_comm(&d[i]);
	for (int i = 0; i < nmine; i++)
		free_comm(&mine[i]);
	/* A duplicate of a duplicate of COMM_SELF needs nobody else. */
	MPI_Comm s1, s2;
	CHECK(MPI_Comm_dup(MPI_COMM_SELF, &s1) == MPI_SUCCESS);
	check_comm(s1, 1, 0);
	CHECK(MPI_Comm_dup(s1, &s2) == MPI_SUCCESS);
	check_comm(s2, 1, 0);
	free_comm(&s1);
	free_comm(&s2);
	free_comm(&base);
	return errs;
}

/* MPICH's comm/cmsplit, cmsplit2 (the tie-break), MTestGetIntracomm's splits. */
static int run_split(void)
{
	int n = wsize(), r = wrank(), s;
	MPI_Comm c, rev, none;

	CHECK(MPI_Comm_split(MPI_COMM_WORLD, r < 2 ? 1 : MPI_UNDEFINED, n - r, &c) == MPI_SUCCESS);
	if (r < 2) {
		check_comm(c, n < 2 ? 1 : 2, n < 2 ? 0 : 1 - r);
		free_comm(&c);
	} else {
		CHECK(c == MPI_COMM_NULL);
	}
	CHECK(MPI_Comm_split(MPI_COMM_WORLD, 0, n - r, &rev) == MPI_SUCCESS);
	check_comm(rev, n, n - 1 - r);
	for (int modulus = 1; modulus <= n; modulus++) {
		int key = r % modulus, pos = 0, in[16], out[16];
		MPI_Group wg, g;
		CHECK(MPI_Comm_split(MPI_COMM_WORLD, 5, key, &c) == MPI_SUCCESS);
		s = 0;
		for (int w = 0; w < n; w++)
			s += w % modulus < key || (w % modulus == key && w < r);
		check_comm(c, n, s);
		MPI_Comm_group(MPI_COMM_WORLD, &wg);
		MPI_Comm_group(c, &g);
		for (int i = 0; i < n; i++)
			in[i] = i;
		MPI_Group_translate_ranks(g, n, in, wg, out);
		/* Ordered by key, then by the old rank. */
		for (int k = 0; k < modulus; k++)
			for (int w = k; w < n; w += modulus)
				CHECK(out[pos++] == w);
		MPI_Group_free(&wg);
		MPI_Group_free(&g);
		free_comm(&c);
	}
	/* Half of the world, reversed; the other half gets nothing. */
	CHECK(MPI_Comm_split(rev, r < n / 2 ? 1 : MPI_UNDEFINED, n - r, &c) == MPI_SUCCESS);
	if (r < n / 2)
		check_comm(c, n / 2, n / 2 - 1 - r);
	if (c != MPI_COMM_NULL)
		free_comm(&c);
	CHECK(MPI_Comm_split(MPI_COMM_WORLD, MPI_UNDEFINED, 0, &none) == MPI_SUCCESS);
	CHECK(none == MPI_COMM_NULL);
	free_comm(&rev);
	/* MPICH's comm/ctxsplit: splits made and freed in a loop, some ranks out. */
	for (int i = 0; i < 100; i++) {
		int in = (i + r) % 3 != 0;
		CHECK(MPI_Comm_split(MPI_COMM_WORLD, in ? 1 : MPI_UNDEFINED, r, &c) == MPI_SUCCESS);
		CHECK((c != MPI_COMM_NULL) == in);
		if (c != MPI_COMM_NULL)
			CHECK(MPI_Comm_free(&c) == MPI_SUCCESS);
	}
	return errs;
}

/* MPICH's comm/commcreate1 and attr/attrt: groups of world and of a duplicate, disjoint ones in one call. */
static int run_create(void)
{
	int n = wsize(), r = wrank(), gr, gs, result;
	int high[1][3] = { { n / 2 + 1, n - 1, 1 } }, odd[1][3] = { { 2 * (n / 2) - 1, 1, -2 } },
	    even[1][3] = { { 0, n - 1, 2 } }, revr[1][3] = { { n - 1, 0, -1 } };
	MPI_Group wg, gh, go, ge, grev;
	MPI_Comm dupw, c, cdup, crev;

	MPI_Comm_group(MPI_COMM_WORLD, &wg);
	MPI_Group_range_incl(wg, 1, high, &gh);
	MPI_Group_range_incl(wg, 1, odd, &go);
	MPI_Group_range_incl(wg, 1, even, &ge);
	MPI_Group_range_incl(wg, 1, revr, &grev);
	MPI_Comm_dup(MPI_COMM_WORLD, &dupw);
	check_comm(dupw, n, r);
	MPI_Group gs_list[] = { gh, go, ge, r % 2 ? go : ge, MPI_GROUP_EMPTY };
	for (int base = 0; base < 2; base++)
		for (size_t i = 0; i < sizeof gs_list / sizeof gs_list[0]; i++) {
			MPI_Group g = gs_list[i];
			CHECK(MPI_Comm_create(base ? dupw : MPI_COMM_WORLD, g, &c) == MPI_SUCCESS);
			MPI_Group_rank(g, &gr);
			MPI_Group_size(g, &gs);
			CHECK((c == MPI_COMM_NULL) == (gr == MPI_UNDEFINED));
			if (c != MPI_COMM_NULL) {
				check_comm(c, gs, gr);
				free_comm(&c);
			}
		}
	CHECK(MPI_Comm_create(dupw, wg, &c) == MPI_SUCCESS);
	check_comm(c, n, r);
	CHECK(MPI_Comm_create(c, grev, &crev) == MPI_SUCCESS);
	check_comm(crev, n, n - 1 - r);
	MPI_Comm_dup(c, &cdup);
	check_comm(cdup, n, r);
	MPI_Comm_compare(c, c, &result);
	CHECK(result == MPI_IDENT);
	MPI_Comm_compare(c, cdup, &result);
	CHECK(result == MPI_CONGRUENT);
	MPI_Comm_compare(c, crev, &result);
	CHECK(result == (n > 1 ? MPI_SIMILAR : MPI_CONGRUENT));
	MPI_Comm_compare(c, MPI_COMM_SELF, &result);
	CHECK(result == (n > 1 ? MPI_UNEQUAL : MPI_CONGRUENT));
	free_comm(&c);
	free_comm(&cdup);
	free_comm(&crev);
	free_comm(&dupw);
	MPI_Group_free(&gh);
	MPI_Group_free(&go);
	MPI_Group_free(&ge);
	MPI_Group_free(&grev);
	MPI_Group_free(&wg);
	return errs;
}

/* MPICH's comm/comm_create_group, comm_group_half, comm_group_rand: only the group calls. */
static int run_create_group(void)
{
	int n = wsize(), r = wrank(), ranks[16], cnt, in;
	MPI_Group wg, g;
	MPI_Comm c;

	MPI_Comm_group(MPI_COMM_WORLD, &wg);
	for (int loop = 0; loop < 20; loop++) {
		cnt = 0;
		in = -1;
		srand((unsigned)loop);
		for (int i = 0; i < n; i++)
			if (rand() % 2 || i == loop % n) {
				if (i == r)
					in = cnt;
				ranks[cnt++] = i;
			}
		MPI_Group_incl(wg, cnt, ranks, &g);
		if (in >= 0) {
			CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, g, loop, &c) == MPI_SUCCESS);
			check_comm(c, cnt, in);
			free_comm(&c);
		}
		MPI_Group_free(&g);
	}
	/* Two groups at once with different tags, each rank in both (the order of calls differs). */
	int evens[16], ne = 0;
	for (int i = 0; i < n; i += 2)
		evens[ne++] = i;
	MPI_Group ge, gw = wg;
	MPI_Group_incl(wg, ne, evens, &ge);
	MPI_Comm ce = MPI_COMM_NULL, cw;
	if (r % 2 == 0) {
		CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, ge, 7, &ce) == MPI_SUCCESS);
		CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, gw, 8, &cw) == MPI_SUCCESS);
	} else {
		CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, gw, 8, &cw) == MPI_SUCCESS);
	}
	if (ce != MPI_COMM_NULL) {
		check_comm(ce, ne, r / 2);
		free_comm(&ce);
	}
	check_comm(cw, n, r);
	free_comm(&cw);
	MPI_Group_free(&ge);
	MPI_Group_free(&wg);
	return errs;
}

/* --- intercommunicators ---------------------------------------------------------------------------- */

/*
 * The intercommunicators of MPICH's MTestGetIntercomm, case k (0..6), or
 * MPI_COMM_NULL where the world is too small or this rank is out of it;
 * *left: this rank is in the left group.  Returns 0 past the last case.
 */
static int make_intercomm(int k, MPI_Comm *ic, int *left)
{
	int n = wsize(), r = wrank(), rl;
	MPI_Comm m = MPI_COMM_NULL, m2 = MPI_COMM_NULL;

	*ic = MPI_COMM_NULL;
	*left = 0;
	switch (k) {
	case 0: /* halves */
	case 3: /* halves, then dup */
	case 4: /* halves, then split */
		if (n < 2)
			return 1;
		MPI_Comm_split(MPI_COMM_WORLD, r < n / 2, r, &m);
		rl = r == 0 ? n / 2 : r == n / 2 ? 0 : -1;
		*left = r < n / 2;
		CHECK(MPI_Intercomm_create(m, 0, MPI_COMM_WORLD, rl, 12345, ic) == MPI_SUCCESS);
		if (k == 3 || k == 4) {
			MPI_Comm old = *ic;
			int lr;
			MPI_Comm_rank(old, &lr);
			CHECK((k == 3 ? MPI_Comm_dup(old, ic) : MPI_Comm_split(old, 0, lr, ic)) == MPI_SUCCESS);
			MPI_Comm_free(&old);
		}
		break;
	case 1: /* one and the rest */
	case 2: /* two and the rest */
		if (n < (k == 1 ? 2 : 4))
			return 1;
		MPI_Comm_split(MPI_COMM_WORLD, r < k, r, &m);
		rl = r == 0 ? k : r == k ? 0 : -1;
		*left = r < k;
		CHECK(MPI_Intercomm_create(m, 0, MPI_COMM_WORLD, rl, 12346, ic) == MPI_SUCCESS);
		break;
	case 5: /* halves without world rank 0 */
		if (n < 4)
			return 1;
		MPI_Comm_split(MPI_COMM_WORLD, r == 0 ? MPI_UNDEFINED : r < n / 2, r, &m);
		rl = r == 1 ? n / 2 : r == n / 2 ? 1 : -1;
		*left = r < n / 2;
		if (r != 0)
			CHECK(MPI_Intercomm_create(m, 0, MPI_COMM_WORLD, rl, 12345, ic) == MPI_SUCCESS);
		break;
	case 6: /* halves, then each side's rank 0 left out by MPI_Comm_create */
		if (n < 4)
			return 1;
		MPI_Comm_split(MPI_COMM_WORLD, r < n / 2, r, &m);
		rl = r == 0 ? n / 2 : r == n / 2 ? 0 : -1;
		*left = r < n / 2;
		CHECK(MPI_Intercomm_create(m, 0, MPI_COMM_WORLD, rl, 12345, &m2) == MPI_SUCCESS);
		{
			MPI_Group og, ng;
			int zero = 0;
			MPI_Comm_group(m2, &og);
			MPI_Group_excl(og, 1, &zero, &ng);
			CHECK(MPI_Comm_create(m2, ng, ic) == MPI_SUCCESS);
			MPI_Group_free(&og);
			MPI_Group_free(&ng);
		}
		break;
	default:
		return 0;
	}
	if (m != MPI_COMM_NULL)
		MPI_Comm_free(&m);
	if (m2 != MPI_COMM_NULL)
		MPI_Comm_free(&m2);
	return 1;
}

/* The sizes of intercommunicator k's groups seen from this rank (MTestGetIntercomm's recipes). */
static void inter_sizes(int k, int left, int *lsize, int *rsize)
{
	int n = wsize(), a = k == 1 ? 1 : k == 2 ? 2 : n / 2, b = n - a;

	if (k == 5)
		a -= 1;
	if (k == 6)
		a -= 1, b -= 1;
	*lsize = left ? a : b;
	*rsize = left ? b : a;
}

static int run_intercomm(void)
{
	MPI_Comm ic;
	int left;

	for (int k = 0; make_intercomm(k, &ic, &left); k++) {
		if (ic == MPI_COMM_NULL)
			continue;
		int ls, rs, rank, flag, size, result;
		inter_sizes(k, left, &ls, &rs);
		MPI_Comm_rank(ic, &rank);
		check_comm(ic, ls, rank);
		CHECK(MPI_Comm_remote_size(ic, &size) == MPI_SUCCESS && size == rs);
		CHECK(MPI_Comm_test_inter(ic, &flag) == MPI_SUCCESS && flag);
		/* MPICH's comm/icgroup. */
		MPI_Group g, rg;
		int gr, gsz;
		MPI_Comm_group(ic, &g);
		MPI_Group_rank(g, &gr);
		MPI_Group_size(g, &gsz);
		CHECK(gr == rank && gsz == ls);
		MPI_Comm_remote_group(ic, &rg);
		MPI_Group_size(rg, &gsz);
		CHECK(gsz == rs);
		/* MPICH's comm/icm: the high group's ranks come after the low one's. */
		MPI_Comm m;
		for (int high = 0; high < 2; high++) {
			CHECK(MPI_Intercomm_merge(ic, high ? left : !left, &m) == MPI_SUCCESS);
			check_comm(m, ls + rs, (high ? left : !left) ? rs + rank : rank);
			free_comm(&m);
		}
		CHECK(MPI_Intercomm_merge(ic, 0, &m) == MPI_SUCCESS);
		check_comm(m, ls + rs, mpii_comm_get(m)->rank);
		free_comm(&m);
		/* MPICH's comm/dupic: a duplicate has a context of its own. */
		MPI_Comm d, d2;
		CHECK(MPI_Comm_dup(ic, &d) == MPI_SUCCESS);
		check_comm(d, ls, rank);
		MPI_Comm_compare(ic, d, &result);
		CHECK(result == MPI_CONGRUENT);
		CHECK(MPI_Comm_dup(d, &d2) == MPI_SUCCESS);
		check_comm(d2, ls, rank);
		free_comm(&d2);
		free_comm(&d);
		/* MPICH's comm/icsplit: odd and even ranks of each side. */
		MPI_Comm s;
		int color = rank % 2;
		CHECK(MPI_Comm_split(ic, color, rank, &s) == MPI_SUCCESS);
		if ((rs + !color) / 2 > 0) {
			CHECK(s != MPI_COMM_NULL);
			check_comm(s, (ls + !color) / 2, rank / 2);
			MPI_Comm_remote_size(s, &size);
			CHECK(size == (rs + !color) / 2);
			free_comm(&s);
		} else {
			CHECK(s == MPI_COMM_NULL);
		}
		/* MPICH's comm/iccreate: 1 and 1, a manual dup, an empty side. */
		int zero = 0;
		MPI_Group g0;
		MPI_Comm c;
		MPI_Group_incl(g, 1, &zero, &g0);
		CHECK(MPI_Comm_create(ic, g0, &c) == MPI_SUCCESS);
		CHECK((c != MPI_COMM_NULL) == (rank == 0));
		if (c != MPI_COMM_NULL) {
			check_comm(c, 1, 0);
			MPI_Comm_remote_size(c, &size);
			CHECK(size == 1);
			free_comm(&c);
		}
		CHECK(MPI_Comm_create(ic, g, &c) == MPI_SUCCESS);
		check_comm(c, ls, rank);
		MPI_Comm_compare(ic, c, &result);
		CHECK(result == MPI_CONGRUENT);
		free_comm(&c);
		CHECK(MPI_Comm_create(ic, left ? g : MPI_GROUP_EMPTY, &c) == MPI_SUCCESS);
		CHECK(c == MPI_COMM_NULL);
		MPI_Group_free(&g0);
		MPI_Group_free(&g);
		MPI_Group_free(&rg);
		free_comm(&ic);
	}
	return errs;
}

/* --- MPI_Comm_idup ------------------------------------------------------------------------------------ */

static int run_idup(void)
{
	int n = wsize(), r = wrank();
	MPI_Comm d, ic, local, stagger = MPI_COMM_NULL;
	MPI_Request q;
	struct mpi_comm *w = mpii_comm_get(MPI_COMM_WORLD);

	/* MPICH's comm/comm_idup: rank 0 calls idup only once the others, already in theirs, reached it. */
	if (r == 0) {
		for (int i = 1; i < n; i++)
			recv_int(i, 0, w);
		CHECK(MPI_Comm_idup(MPI_COMM_WORLD, &d, &q) == MPI_SUCCESS);
	} else {
		CHECK(MPI_Comm_idup(MPI_COMM_WORLD, &d, &q) == MPI_SUCCESS);
		send_int(r, 0, 0, w);
	}
	CHECK(host_req_wait(&q) == MPI_SUCCESS);
	check_comm(d, n, r);
	free_comm(&d);
	/* With hints: the known ones stay. */
	MPI_Info in, out;
	char v[8];
	int flag;
	MPI_Info_create(&in);
	MPI_Info_set(in, "mpi_assert_exact_length", "true");
	CHECK(MPI_Comm_idup_with_info(MPI_COMM_WORLD, in, &d, &q) == MPI_SUCCESS);
	MPI_Info_free(&in);
	CHECK(host_req_wait(&q) == MPI_SUCCESS);
	check_comm(d, n, r);
	MPI_Comm_get_info(d, &out);
	MPI_Info_get(out, "mpi_assert_exact_length", 7, v, &flag);
	CHECK(flag && strcmp(v, "true") == 0);
	MPI_Info_free(&out);
	free_comm(&d);
	if (n >= 2) {
		MPI_Comm_split(MPI_COMM_WORLD, r % 2, r, &local);
		CHECK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, r == 0 ? 1 : 0, 1234, &ic) == MPI_SUCCESS);
		if (r % 2)
			MPI_Comm_dup(local, &stagger);
		int lr, rs;
		MPI_Comm_rank(ic, &lr);
		MPI_Comm_remote_size(ic, &rs);
		struct mpi_comm *c = mpii_comm_get(ic);
		if (lr == 0) {
			for (int i = 1; i < rs; i++)
				recv_int(i, 0, c);
			CHECK(MPI_Comm_idup(ic, &d, &q) == MPI_SUCCESS);
		} else {
			CHECK(MPI_Comm_idup(ic, &d, &q) == MPI_SUCCESS);
			send_int(lr, 0, 0, c);
		}
		CHECK(host_req_wait(&q) == MPI_SUCCESS);
		check_comm(d, mpii_comm_get(ic)->size, lr);
		free_comm(&d);
		if (stagger != MPI_COMM_NULL)
			MPI_Comm_free(&stagger);
		MPI_Comm_free(&local);
		MPI_Comm_free(&ic);
	}
	/* MPICH's comm/comm_idup_mul: many at once. */
	MPI_Comm many[24];
	MPI_Request qs[24];
	for (int i = 0; i < 24; i++)
		CHECK(MPI_Comm_idup(MPI_COMM_WORLD, &many[i], &qs[i]) == MPI_SUCCESS);
	for (int i = 0; i < 24; i++)
		CHECK(host_req_wait(&qs[i]) == MPI_SUCCESS);
	for (int i = 0; i < 24; i++) {
		check_comm(many[i], n, r);
		free_comm(&many[i]);
	}
	/* MPICH's comm/comm_create_group_idup: the two calls in either order. */
	MPI_Group wg;
	MPI_Comm gc;
	MPI_Comm_group(MPI_COMM_WORLD, &wg);
	if (r % 2 == 0) {
		CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, wg, 0, &gc) == MPI_SUCCESS);
		CHECK(MPI_Comm_idup(MPI_COMM_WORLD, &d, &q) == MPI_SUCCESS);
	} else {
		CHECK(MPI_Comm_idup(MPI_COMM_WORLD, &d, &q) == MPI_SUCCESS);
		CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, wg, 0, &gc) == MPI_SUCCESS);
	}
	CHECK(host_req_wait(&q) == MPI_SUCCESS);
	check_comm(d, n, r);
	check_comm(gc, n, r);
	free_comm(&d);
	free_comm(&gc);
	MPI_Group_free(&wg);
	/* MPICH's comm/comm_idup_overlap: pairs of overlapping communicators duplicated at once. */
	if (n >= 2) {
		MPI_Comm prim = MPI_COMM_NULL, sec = MPI_COMM_NULL, tmp, pd, sd;
		MPI_Request pq[2];
		for (int i = 0; i < n; i++) {
			if (r == i)
				MPI_Comm_split(MPI_COMM_WORLD, 0, 0, &prim);
			else if (r == (i + 1) % n)
				MPI_Comm_split(MPI_COMM_WORLD, 0, 0, &sec);
			else {
				MPI_Comm_split(MPI_COMM_WORLD, 1, 0, &tmp);
				MPI_Comm_free(&tmp);
			}
			barrier();
		}
		CHECK(MPI_Comm_idup(prim, &pd, &pq[0]) == MPI_SUCCESS);
		CHECK(MPI_Comm_idup(sec, &sd, &pq[1]) == MPI_SUCCESS);
		CHECK(host_req_wait(&pq[0]) == MPI_SUCCESS);
		CHECK(host_req_wait(&pq[1]) == MPI_SUCCESS);
		MPI_Comm_free(&pd);
		MPI_Comm_free(&sd);
		MPI_Comm_free(&prim);
		MPI_Comm_free(&sec);
	}
	return errs;
}

/* --- the rest -------------------------------------------------------------------------------------- */

/* MPICH's comm/cmsplit_type (every rank alone on its node), commname, comm_info; a free that waits. */
static int run_misc(void)
{
	int n = wsize(), r = wrank(), len, flag;
	MPI_Comm c, d;
	MPI_Info in, out;
	char name[MPI_MAX_OBJECT_NAME], v[16];

	CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c) == MPI_SUCCESS);
	check_comm(c, 1, 0);
	free_comm(&c);
	CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, r % 2 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c) ==
	      MPI_SUCCESS);
	CHECK((c == MPI_COMM_NULL) == (r % 2));
	if (c != MPI_COMM_NULL)
		free_comm(&c);
	CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, MPI_INFO_NULL, &c) == MPI_SUCCESS);
	CHECK(c == MPI_COMM_NULL);
	MPI_Info_create(&in);
	MPI_Info_set(in, "mpi_hw_resource_type", "core");
	CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, in, &c) == MPI_SUCCESS);
	check_comm(c, 1, 0);
	free_comm(&c);
	CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, 0, in, &c) == MPI_SUCCESS);
	CHECK(c == MPI_COMM_NULL);
	/* Names. */
	MPI_Comm_get_name(MPI_COMM_WORLD, name, &len);
	CHECK(strcmp(name, "MPI_COMM_WORLD") == 0 && len == 14);
	MPI_Comm_get_name(MPI_COMM_SELF, name, &len);
	CHECK(strcmp(name, "MPI_COMM_SELF") == 0);
	MPI_Comm_dup(MPI_COMM_WORLD, &c);
	check_comm(c, n, r);
	MPI_Comm_get_name(c, name, &len);
	CHECK(name[0] == 0 && len == 0);
	MPI_Comm_set_name(c, "comm-0");
	MPI_Comm_get_name(c, name, &len);
	CHECK(strcmp(name, "comm-0") == 0);
	/* Hints: the unknown dropped, the known kept, and copied by a duplicate. */
	MPI_Info_set(in, "invalid_test_key", "true");
	MPI_Info_set(in, "mpi_assert_no_any_tag", "true");
	CHECK(MPI_Comm_set_info(c, in) == MPI_SUCCESS);
	CHECK(MPI_Comm_get_info(c, &out) == MPI_SUCCESS);
	MPI_Info_get(out, "invalid_test_key", 15, v, &flag);
	CHECK(!flag);
	MPI_Info_get(out, "mpi_assert_no_any_tag", 15, v, &flag);
	CHECK(flag && strcmp(v, "true") == 0);
	MPI_Info_free(&out);
	MPI_Comm_dup(c, &d);
	check_comm(d, n, r);
	MPI_Comm_get_info(d, &out);
	MPI_Info_get(out, "mpi_assert_no_any_tag", 15, v, &flag);
	CHECK(flag);
	MPI_Info_free(&out);
	free_comm(&d);
	CHECK(MPI_Comm_dup_with_info(c, MPI_INFO_NULL, &d) == MPI_SUCCESS);
	check_comm(d, n, r);
	MPI_Comm_get_info(d, &out);
	MPI_Info_get_nkeys(out, &len);
	CHECK(len == 0);
	MPI_Info_free(&out);
	free_comm(&d);
	MPI_Info_free(&in);
	/* MPICH's comm/cmfree: a freed communicator lives while an operation holds it. */
	struct mpi_comm *held = mpii_comm_get(c);
	uint32_t ctx = held->ctx;
	mpii_comm_ref(held);
	MPI_Comm h = c;
	free_comm(&c);
	CHECK(mpii_comm_get(h) == NULL);
	MPI_Comm_dup(MPI_COMM_WORLD, &d);
	CHECK(mpii_comm_get(d)->ctx != ctx);
	mpii_comm_unref(held);
	free_comm(&d);
	/* Errors: the permanent ones, a group not a subset. */
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	c = MPI_COMM_WORLD;
	int e = MPI_Comm_free(&c), cls;
	MPI_Error_class(e, &cls);
	CHECK(cls == MPI_ERR_COMM);
	MPI_Comm s;
	MPI_Group wg;
	MPI_Comm_group(MPI_COMM_WORLD, &wg);
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
	if (n > 1) {
		e = MPI_Comm_create(MPI_COMM_SELF, wg, &s);
		MPI_Error_class(e, &cls);
		CHECK(cls == MPI_ERR_GROUP);
	}
	MPI_Group_free(&wg);
	e = MPI_Comm_remote_size(MPI_COMM_WORLD, &len);
	MPI_Error_class(e, &cls);
	CHECK(cls == MPI_ERR_COMM);
	MPI_Comm parent;
	CHECK(MPI_Comm_get_parent(&parent) == MPI_SUCCESS && parent == MPI_COMM_NULL);
	int codes[2];
	e = MPI_Comm_spawn("x", MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0, MPI_COMM_SELF, &parent, codes);
	MPI_Error_class(e, &cls);
	CHECK(cls == MPI_ERR_UNSUPPORTED_OPERATION && parent == MPI_COMM_NULL && codes[1] == e);
	barrier();
	return errs;
}

/* --- the runs ------------------------------------------------------------------------------------------ */

static void in_worlds(int (*fn)(void), const int *sizes, int n)
{
	for (int i = 0; i < n; i++)
		assert_int_equal(host_mpi_run(sizes[i], fn), 0);
}

static const int sizes[] = { 1, 2, 3, 4, 5, 8, 11 };
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))

static void test_dup(void **state)
{
	(void)state;
	in_worlds(run_dup, sizes, NSIZES);
}

static void test_split(void **state)
{
	(void)state;
	in_worlds(run_split, sizes, NSIZES);
}

static void test_create(void **state)
{
	(void)state;
	/* Its groups need three ranks at least. */
	in_worlds(run_create, sizes + 2, NSIZES - 2);
}

static void test_create_group(void **state)
{
	(void)state;
	in_worlds(run_create_group, sizes, NSIZES);
}

static void test_intercomm(void **state)
{
	(void)state;
	in_worlds(run_intercomm, sizes, NSIZES);
}

static void test_idup(void **state)
{
	(void)state;
	in_worlds(run_idup, sizes, NSIZES);
}

static void test_misc(void **state)
{
	(void)state;
	in_worlds(run_misc, sizes, NSIZES);
}

UNIT_MAIN("tests", NULL, NULL,
	  cmocka_unit_test(test_dup),
	  cmocka_unit_test(test_split),
	  cmocka_unit_test(test_create),
	  cmocka_unit_test(test_create_group),
	  cmocka_unit_test(test_intercomm),
	  cmocka_unit_test(test_idup),
	  cmocka_unit_test(test_misc))
