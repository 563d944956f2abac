/*
 * Host unit tests of MPI's collectives (lib/mpi/coll.c, icoll.c): every
 * collective on 1 to 16 ranks simulated as threads over a point to point
 * that completes a send only when it is received (tests/lib/mpi/host_mpi.c),
 * every root, MPI_IN_PLACE, derived types on one side, zero counts, a
 * non-commutative operation (2x2 matrix products: rank order shows),
 * intercommunicators with groups of every split, the argument errors
 * MPICH's tests provoke (and that the ranks stay in step after them),
 * and the nonblocking forms: started together, in any order, waited for
 * in any order, mixed with blocking ones and with point to point.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/lib/mpi/host_mpi.h"
#include "tests/host/host_rnd.h"

static int fails;

#define CHECK(cond, ...)									\
	do {											\
		if (!(cond)) {									\
			if (__atomic_add_fetch(&fails, 1, __ATOMIC_RELAXED) < 20) {		\
				fprintf(stderr, "%s:%d size %d rank %d: ", __func__, __LINE__, size,	\
					rank);							\
				fprintf(stderr, __VA_ARGS__);					\
				fputc('\n', stderr);						\
			}									\
		}										\
	} while (0)

#define OK(call) CHECK((call) == MPI_SUCCESS, "%s failed", #call)

/* --- a non-commutative operation: products of 2x2 matrices ------------------------------------ */

typedef struct {
	uint32_t m[4];
} mat;

static MPI_Datatype mat_t, ivec_t;
static MPI_Op matmul_op, intsum_op;

static mat mat_mul(mat a, mat b)
{
	mat c;

	c.m[0] = a.m[0] * b.m[0] + a.m[1] * b.m[2];
	c.m[1] = a.m[0] * b.m[1] + a.m[1] * b.m[3];
	c.m[2] = a.m[2] * b.m[0] + a.m[3] * b.m[2];
	c.m[3] = a.m[2] * b.m[1] + a.m[3] * b.m[3];
	return c;
}

/* inout = in x inout: in holds the lower ranks. */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	mat *a = in, *b = inout;

	if (*dt != mat_t)
		abort();
	for (int i = 0; i < *len; i++)
		b[i] = mat_mul(a[i], b[i]);
}

static void intsum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
	(void)dt;
	for (int i = 0; i < *len; i++)
		((int *)inout)[i] += ((int *)in)[i];
}

static mat mat_of(int rank, int i)
{
	return (mat){ { (uint32_t)(rank + 1 + i), (uint32_t)(2 * rank + 3), (uint32_t)(i * 7 + 1),
			(uint32_t)(rank * rank + 5 + i) } };
}

/* The product of ranks lo .. hi - 1's matrices number i. */
static mat mat_prod(int lo, int hi, int i)
{
	mat p = { { 1, 0, 0, 1 } };

	for (int r = lo; r < hi; r++)
		p = mat_mul(p, mat_of(r, i));
	return p;
}

static int mat_eq(mat a, mat b)
{
	return memcmp(&a, &b, sizeof a) == 0;
}

/* --- a world of ranks -------------------------------------------------------------------------- */

static void run(void (*fn)(int, int, void *), void *arg, int lo, int hi)
{
	fails = 0;
	for (int n = lo; n <= hi; n++)
		host_run(n, fn, arg);
	assert_int_equal(fails, 0);
}

static const int sizes_big[] = { 13, 16 };

static void run_all(void (*fn)(int, int, void *), void *arg)
{
	run(fn, arg, 1, 9);
	for (size_t i = 0; i < sizeof sizes_big / sizeof *sizes_big; i++)
		run(fn, arg, sizes_big[i], sizes_big[i]);
}

/* --- barrier and broadcast ----------------------------------------------------------------------- */

static int arrived[8];

static void case_barrier(int rank, int size, void *arg)
{
	(void)arg;
	for (int k = 0; k < 8; k++) {
		__atomic_add_fetch(&arrived[k], 1, __ATOMIC_SEQ_CST);
		OK(MPI_Barrier(MPI_COMM_WORLD));
		/* No rank leaves before every rank came. */
		CHECK(__atomic_load_n(&arrived[k], __ATOMIC_SEQ_CST) >= size, "barrier %d left early", k);
		OK(MPI_Barrier(MPI_COMM_WORLD));
		if (rank == 0)
			__atomic_store_n(&arrived[k], 0, __ATOMIC_SEQ_CST);
	}
}

static void test_barrier(void **state)
{
	(void)state;
	run_all(case_barrier, NULL);
}

static void case_bcast(int rank, int size, void *arg)
{
	(void)arg;
	for (int root = 0; root < size; root++) {
		int buf[40];
		for (int i = 0; i < 40; i++)
			buf[i] = rank == root ? i * 3 + root : -1;
		OK(MPI_Bcast(buf, 40, MPI_INT, root, MPI_COMM_WORLD));
		for (int i = 0; i < 40; i++)
			CHECK(buf[i] == i * 3 + root, "root %d buf[%d] = %d", root, i, buf[i]);
		/* A derived type on the receivers: the same signature, holes between. */
		int v[60];
		for (int i = 0; i < 60; i++)
			v[i] = -1;
		if (rank == root) {
			for (int i = 0; i < 20; i++)
				v[i] = 100 + i;
			OK(MPI_Bcast(v, 20, MPI_INT, root, MPI_COMM_WORLD));
		} else {
			OK(MPI_Bcast(v, 10, ivec_t, root, MPI_COMM_WORLD));
			for (int e = 0; e < 10; e++) {
				CHECK(v[3 * e] == 100 + 2 * e && v[3 * e + 2] == 101 + 2 * e, "vec bcast %d", e);
				CHECK(v[3 * e + 1] == -1, "hole written");
			}
		}
	}
	/* Nothing to send: nothing happens, even with a NULL buffer. */
	OK(MPI_Bcast(NULL, 0, MPI_INT, 0, MPI_COMM_WORLD));
}

static void test_bcast(void **state)
{
	(void)state;
	run_all(case_bcast, NULL);
}

/* MPICH's errors/coll/bcastlength.c: every non-root rank sees a wrong length. */
static void case_bcastlength(int rank, int size, void *arg)
{
	(void)arg;
	int buf[10] = { 0 };

	host_errs = 0;
	int err = MPI_Bcast(buf, rank == 0 ? 1 : 10, MPI_INT, 0, MPI_COMM_WORLD);
	if (rank)
		CHECK(err != MPI_SUCCESS, "long: no error");
	err = MPI_Bcast(buf, rank == 0 ? 10 : 1, MPI_INT, 0, MPI_COMM_WORLD);
	if (rank)
		CHECK(err != MPI_SUCCESS, "short: no error");
	/* And the next collective works. */
	int x = rank == 0 ? 42 : 0;
	OK(MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD));
	CHECK(x == 42, "after the errors: %d", x);
}

static void test_bcastlength(void **state)
{
	(void)state;
	run(case_bcastlength, NULL, 2, 9);
}

/* --- gather and scatter ------------------------------------------------------------------------------ */

static void case_gather(int rank, int size, void *arg)
{
	(void)arg;
	enum { K = 3 };
	int *r = malloc((size_t)size * K * 3 * sizeof *r);

	for (int root = 0; root < size; root++) {
		int s[K];
		for (int i = 0; i < K; i++)
			s[i] = rank * 10 + i;
		for (int i = 0; i < size * K; i++)
			r[i] = -1;
		OK(MPI_Gather(s, K, MPI_INT, r, K, MPI_INT, root, MPI_COMM_WORLD));
		for (int i = 0; i < size * K; i++)
			CHECK(r[i] == (rank == root ? i / K * 10 + i % K : -1), "gather root %d r[%d] = %d", root, i, r[i]);
		/* In place at the root. */
		for (int i = 0; i < size * K; i++)
			r[i] = rank == root && i / K == root ? root * 10 + i % K : -1;
		if (rank == root)
			OK(MPI_Gather(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, r, K, MPI_INT, root, MPI_COMM_WORLD));
		else
			OK(MPI_Gather(s, K, MPI_INT, NULL, 0, MPI_DATATYPE_NULL, root, MPI_COMM_WORLD));
		if (rank == root)
			for (int i = 0; i < size * K; i++)
				CHECK(r[i] == i / K * 10 + i % K, "in place root %d r[%d] = %d", root, i, r[i]);
		/* Scatter back, the root's blocks received as vectors with holes. */
		int got[3 * K];
		for (int i = 0; i < 3 * K; i++)
			got[i] = -1;
		int sb[64 * K];
		for (int i = 0; i < size * K * 2; i++)
			sb[i] = i;
		OK(MPI_Scatter(sb, 2 * K, MPI_INT, got, K, ivec_t, root, MPI_COMM_WORLD));
		for (int e = 0; e < K; e++)
			CHECK(got[3 * e] == rank * 2 * K + 2 * e && got[3 * e + 2] == rank * 2 * K + 2 * e + 1 &&
				      got[3 * e + 1] == -1,
			      "scatter root %d element %d", root, e);
		/* Scatter in place at the root: its block stays. */
		int mine[2 * K] = { 0 };
		if (rank == root)
			OK(MPI_Scatter(sb, 2 * K, MPI_INT, MPI_IN_PLACE, 0, MPI_INT, root, MPI_COMM_WORLD));
		else
			OK(MPI_Scatter(NULL, 0, MPI_INT, mine, 2 * K, MPI_INT, root, MPI_COMM_WORLD));
		for (int i = 0; rank != root && i < 2 * K; i++)
			CHECK(mine[i] == rank * 2 * K + i, "scatter in place mine[%d] = %d", i, mine[i]);
	}
	free(r);
}

static void test_gather_scatter(void **state)
{
	(void)state;
	run_all(case_gather, NULL);
}

static void case_gatherv(int rank, int size, void *arg)
{
	(void)arg;
	int counts[16], displs[16], total = 0;

	for (int i = 0; i < size; i++) {
		counts[i] = (i * 3) % 4;	/* zeros among them */
		displs[i] = total + 1;		/* a gap before every block */
		total += counts[i] + 1;
	}
	int *r = malloc((size_t)(total + 1) * sizeof *r);
	for (int root = 0; root < size; root++) {
		int s[4];
		for (int i = 0; i < 4; i++)
			s[i] = rank * 100 + i;
		for (int i = 0; i <= total; i++)
			r[i] = -1;
		OK(MPI_Gatherv(s, counts[rank], MPI_INT, r, counts, displs, MPI_INT, root, MPI_COMM_WORLD));
		if (rank == root)
			for (int i = 0; i < size; i++) {
				for (int k = 0; k < counts[i]; k++)
					CHECK(r[displs[i] + k] == i * 100 + k, "gatherv root %d block %d", root, i);
				CHECK(r[displs[i] - 1] == -1, "gatherv wrote a gap");
			}
		/* And back with Scatterv, in place at the root. */
		int got[4] = { -1, -1, -1, -1 };
		if (rank == root)
			OK(MPI_Scatterv(r, counts, displs, MPI_INT, MPI_IN_PLACE, 0, MPI_INT, root, MPI_COMM_WORLD));
		else
			OK(MPI_Scatterv(NULL, NULL, NULL, MPI_INT, got, counts[rank], MPI_INT, root, MPI_COMM_WORLD));
		for (int k = 0; rank != root && k < 4; k++)
			CHECK(got[k] == (k < counts[rank] ? rank * 100 + k : -1), "scatterv got[%d] = %d", k, got[k]);
	}
	free(r);
}

static void test_gatherv_scatterv(void **state)
{
	(void)state;
	run_all(case_gatherv, NULL);
}

/* --- allgather and all to all ---------------------------------------------------------------------- */

static void case_allgather(int rank, int size, void *arg)
{
	(void)arg;
	enum { K = 5 };
	int s[K], *r = malloc((size_t)size * K * sizeof *r);

	for (int i = 0; i < K; i++)
		s[i] = rank * K + i;
	for (int i = 0; i < size * K; i++)
		r[i] = -1;
	OK(MPI_Allgather(s, K, MPI_INT, r, K, MPI_INT, MPI_COMM_WORLD));
	for (int i = 0; i < size * K; i++)
		CHECK(r[i] == i, "allgather r[%d] = %d", i, r[i]);
	for (int i = 0; i < size * K; i++)
		r[i] = i / K == rank ? i : -1;
	OK(MPI_Allgather(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, r, K, MPI_INT, MPI_COMM_WORLD));
	for (int i = 0; i < size * K; i++)
		CHECK(r[i] == i, "in place r[%d] = %d", i, r[i]);
	free(r);

	/* Allgatherv, counts with zeros, gaps, received as vectors. */
	int counts[16], displs[16], total = 0;
	for (int i = 0; i < size; i++) {
		counts[i] = (i + 1) % 3;
		displs[i] = total;
		total += counts[i] + 1;
	}
	int *v = malloc((size_t)(3 * total + 3) * sizeof *v);
	for (int i = 0; i < 3 * total + 3; i++)
		v[i] = -1;
	int sv[4];
	for (int k = 0; k < 4; k++)
		sv[2 * (k / 2) + k % 2] = rank * 10 + k;
	OK(MPI_Allgatherv(sv, 2 * counts[rank], MPI_INT, v, counts, displs, ivec_t, MPI_COMM_WORLD));
	for (int i = 0; i < size; i++)
		for (int e = 0; e < counts[i]; e++) {
			int *p = v + 3 * (displs[i] + e);
			CHECK(p[0] == i * 10 + 2 * e && p[2] == i * 10 + 2 * e + 1 && p[1] == -1,
			      "allgatherv block %d element %d: %d %d %d", i, e, p[0], p[1], p[2]);
		}
	free(v);
}

static void test_allgather(void **state)
{
	(void)state;
	run_all(case_allgather, NULL);
}

static void case_alltoall(int rank, int size, void *arg)
{
	(void)arg;
	enum { K = 3 };
	int *s = calloc((size_t)size * K, sizeof *s), *r = calloc((size_t)size * K, sizeof *r);

	for (int i = 0; i < size * K; i++) {
		s[i] = rank * 1000 + i;
		r[i] = -1;
	}
	OK(MPI_Alltoall(s, K, MPI_INT, r, K, MPI_INT, MPI_COMM_WORLD));
	for (int i = 0; i < size * K; i++)
		CHECK(r[i] == i / K * 1000 + rank * K + i % K, "alltoall r[%d] = %d", i, r[i]);
	OK(MPI_Alltoall(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, s, K, MPI_INT, MPI_COMM_WORLD));
	for (int i = 0; i < size * K; i++)
		CHECK(s[i] == r[i], "in place s[%d] = %d", i, s[i]);

	/* Alltoallv: rank i sends (i + j) % 3 ints to j. */
	int sc[16], sd[16], rc[16], rd[16], st = 0, rt = 0;
	for (int j = 0; j < size; j++) {
		sc[j] = (rank + j) % 3;
		rc[j] = (j + rank) % 3;
		sd[j] = st;
		rd[j] = rt + 1;
		st += sc[j];
		rt += rc[j] + 1;
	}
	int *sv = malloc((size_t)(st + 1) * sizeof *sv), *rv = malloc((size_t)(rt + 1) * sizeof *rv);
	for (int j = 0; j < size; j++)
		for (int k = 0; k < sc[j]; k++)
			sv[sd[j] + k] = rank * 100 + j * 10 + k;
	for (int i = 0; i <= rt; i++)
		rv[i] = -1;
	OK(MPI_Alltoallv(sv, sc, sd, MPI_INT, rv, rc, rd, MPI_INT, MPI_COMM_WORLD));
	for (int j = 0; j < size; j++) {
		for (int k = 0; k < rc[j]; k++)
			CHECK(rv[rd[j] + k] == j * 100 + rank * 10 + k, "alltoallv from %d", j);
		CHECK(rv[rd[j] - 1] == -1, "alltoallv gap");
	}
	/* In place, the same layout both ways. */
	for (int j = 0; j < size; j++)
		for (int k = 0; k < rc[j]; k++)
			rv[rd[j] + k] = rank * 100 + j * 10 + k;
	OK(MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, rv, rc, rd, MPI_INT, MPI_COMM_WORLD));
	for (int j = 0; j < size; j++)
		for (int k = 0; k < rc[j]; k++)
			CHECK(rv[rd[j] + k] == j * 100 + rank * 10 + k, "alltoallv in place from %d", j);

	/* Alltoallw: to even ranks ints, to odd ranks vectors; bytes displacements. */
	int wsc[16], wsd[16], wrc[16], wrd[16];
	MPI_Datatype wst[16], wrt[16];
	int *ws = malloc((size_t)size * 6 * sizeof *ws), *wr = malloc((size_t)size * 6 * sizeof *wr);
	for (int j = 0; j < size; j++) {
		wsc[j] = 2;
		wst[j] = MPI_INT;
		wsd[j] = j * 6 * (int)sizeof(int);
		wrc[j] = j % 2 ? 1 : 2;
		wrt[j] = j % 2 ? ivec_t : MPI_INT;
		wrd[j] = j * 6 * (int)sizeof(int);
		for (int k = 0; k < 6; k++) {
			ws[j * 6 + k] = rank * 100 + j * 10 + k;
			wr[j * 6 + k] = -1;
		}
	}
	OK(MPI_Alltoallw(ws, wsc, wsd, wst, wr, wrc, wrd, wrt, MPI_COMM_WORLD));
	for (int j = 0; j < size; j++) {
		int *p = wr + j * 6;
		if (j % 2)
			CHECK(p[0] == j * 100 + rank * 10 && p[1] == -1 && p[2] == j * 100 + rank * 10 + 1,
			      "alltoallw from %d", j);
		else
			CHECK(p[0] == j * 100 + rank * 10 && p[1] == j * 100 + rank * 10 + 1 && p[2] == -1,
			      "alltoallw from %d", j);
	}
	/* MPICH's alltoallw_zeros: zero-size types and zero counts, in place too. */
	MPI_Datatype zt[16];
	int ones[16], zeros[16];
	for (int j = 0; j < size; j++) {
		zt[j] = MPI_INT;
		ones[j] = 0;
		zeros[j] = 0;
	}
	OK(MPI_Alltoallw(ws, ones, zeros, zt, wr, zeros, zeros, zt, MPI_COMM_WORLD));
	OK(MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, wr, zeros, zeros, zt, MPI_COMM_WORLD));
	free(ws);
	free(wr);
	free(sv);
	free(rv);
	free(s);
	free(r);
}

static void test_alltoall(void **state)
{
	(void)state;
	run_all(case_alltoall, NULL);
}

/* --- reductions ------------------------------------------------------------------------------------- */

static void case_reduce(int rank, int size, void *arg)
{
	(void)arg;
	enum { K = 7 };
	int s[K], r[K];
	mat ms[K], mr[K];

	for (int root = 0; root < size; root++) {
		for (int i = 0; i < K; i++) {
			s[i] = rank + i;
			r[i] = -1;
			ms[i] = mat_of(rank, i);
		}
		OK(MPI_Reduce(s, r, K, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD));
		for (int i = 0; i < K; i++)
			CHECK(r[i] == (rank == root ? size * (size - 1) / 2 + i * size : -1), "sum root %d r[%d] = %d",
			      root, i, r[i]);
		OK(MPI_Reduce(ms, mr, K, mat_t, matmul_op, root, MPI_COMM_WORLD));
		for (int i = 0; rank == root && i < K; i++)
			CHECK(mat_eq(mr[i], mat_prod(0, size, i)), "matmul root %d element %d", root, i);
		/* In place at the root, a user's commutative op. */
		if (rank == root) {
			memcpy(r, s, sizeof r);
			OK(MPI_Reduce(MPI_IN_PLACE, r, K, MPI_INT, intsum_op, root, MPI_COMM_WORLD));
			for (int i = 0; i < K; i++)
				CHECK(r[i] == size * (size - 1) / 2 + i * size, "in place root %d r[%d] = %d", root, i,
				      r[i]);
			memcpy(mr, ms, sizeof mr);
			OK(MPI_Reduce(MPI_IN_PLACE, mr, K, mat_t, matmul_op, root, MPI_COMM_WORLD));
			for (int i = 0; i < K; i++)
				CHECK(mat_eq(mr[i], mat_prod(0, size, i)), "matmul in place root %d element %d", root, i);
		} else {
			OK(MPI_Reduce(s, NULL, K, MPI_INT, intsum_op, root, MPI_COMM_WORLD));
			OK(MPI_Reduce(ms, NULL, K, mat_t, matmul_op, root, MPI_COMM_WORLD));
		}
	}
	/* MAXLOC: ties keep the lowest rank. */
	struct {
		double v;
		int i;
	} in = { (double)(rank % 3), rank }, out = { -1, -1 };
	OK(MPI_Reduce(&in, &out, 1, MPI_DOUBLE_INT, MPI_MAXLOC, size - 1, MPI_COMM_WORLD));
	if (rank == size - 1)
		CHECK(out.v == (size > 2 ? 2 : size - 1) && out.i == (size > 2 ? 2 : size - 1), "maxloc %g %d", out.v,
		      out.i);
}

static void test_reduce(void **state)
{
	(void)state;
	run_all(case_reduce, NULL);
}

static void case_allreduce(int rank, int size, void *arg)
{
	int count = *(int *)arg;
	int *s = calloc((size_t)count, sizeof *s), *r = calloc((size_t)count, sizeof *r);
	mat *ms = calloc((size_t)count, sizeof *ms), *mr = calloc((size_t)count, sizeof *mr);

	for (int i = 0; i < count; i++) {
		s[i] = rank * 3 + i;
		ms[i] = mat_of(rank, i);
	}
	OK(MPI_Allreduce(s, r, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	for (int i = 0; i < count; i++)
		CHECK(r[i] == 3 * size * (size - 1) / 2 + i * size, "sum r[%d] = %d", i, r[i]);
	memcpy(r, s, (size_t)count * sizeof *r);
	OK(MPI_Allreduce(MPI_IN_PLACE, r, count, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
	for (int i = 0; i < count; i++)
		CHECK(r[i] == 3 * (size - 1) + i, "max r[%d] = %d", i, r[i]);
	OK(MPI_Allreduce(ms, mr, count, mat_t, matmul_op, MPI_COMM_WORLD));
	for (int i = 0; i < count; i++)
		CHECK(mat_eq(mr[i], mat_prod(0, size, i)), "matmul element %d", i);
	memcpy(mr, ms, (size_t)count * sizeof *mr);
	OK(MPI_Allreduce(MPI_IN_PLACE, mr, count, mat_t, matmul_op, MPI_COMM_WORLD));
	for (int i = 0; i < count; i++)
		CHECK(mat_eq(mr[i], mat_prod(0, size, i)), "matmul in place element %d", i);
	free(s);
	free(r);
	free(ms);
	free(mr);
}

static void test_allreduce(void **state)
{
	(void)state;
	/* 20000 ints: a long vector (Rabenseifner's halving for the commutative ops). */
	int counts[] = { 1, 10, 1000, 20000 };
	for (size_t i = 0; i < sizeof counts / sizeof *counts; i++)
		run_all(case_allreduce, &counts[i]);
}

/* Vectors past a segment (1 MiB): Reduce, Allreduce and Scan go in pieces. */
static void case_long(int rank, int size, void *arg)
{
	(void)arg;
	enum { N = 300001 };
	int *s = calloc(N, sizeof *s), *r = calloc(N, sizeof *r);
	mat *ms = calloc(N / 4, sizeof *ms), *mr = calloc(N / 4, sizeof *mr);

	for (int i = 0; i < N; i++)
		s[i] = rank + i % 1000;
	for (int i = 0; i < N / 4; i++)
		ms[i] = mat_of(rank, i % 50);
	OK(MPI_Reduce(s, r, N, MPI_INT, MPI_SUM, size - 1, MPI_COMM_WORLD));
	for (int i = 0; rank == size - 1 && i < N; i++)
		if (r[i] != size * (size - 1) / 2 + size * (i % 1000)) {
			CHECK(0, "reduce r[%d] = %d", i, r[i]);
			break;
		}
	OK(MPI_Reduce(ms, mr, N / 4, mat_t, matmul_op, size / 2, MPI_COMM_WORLD));
	for (int i = 0; rank == size / 2 && i < N / 4; i++)
		if (!mat_eq(mr[i], mat_prod(0, size, i % 50))) {
			CHECK(0, "reduce matmul %d", i);
			break;
		}
	OK(MPI_Allreduce(MPI_IN_PLACE, s, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	for (int i = 0; i < N; i++)
		if (s[i] != size * (size - 1) / 2 + size * (i % 1000)) {
			CHECK(0, "allreduce s[%d] = %d", i, s[i]);
			break;
		}
	OK(MPI_Scan(ms, mr, N / 4, mat_t, matmul_op, MPI_COMM_WORLD));
	for (int i = 0; i < N / 4; i++)
		if (!mat_eq(mr[i], mat_prod(0, rank + 1, i % 50))) {
			CHECK(0, "scan matmul %d", i);
			break;
		}
	free(s);
	free(r);
	free(ms);
	free(mr);
}

static void test_long(void **state)
{
	(void)state;
	run(case_long, NULL, 1, 5);
	run(case_long, NULL, 9, 9);
}

static void case_reduce_scatter(int rank, int size, void *arg)
{
	(void)arg;
	int counts[16], total = 0, start[17];

	for (int i = 0; i < size; i++) {
		counts[i] = (i * 5 + 1) % 4;
		start[i] = total;
		total += counts[i];
	}
	start[size] = total;
	int *s = malloc((size_t)(total + 1) * sizeof *s), r[8];
	mat *ms = malloc((size_t)(total + 1) * sizeof *ms), mr[8];
	for (int i = 0; i < total; i++) {
		s[i] = rank * 10 + i;
		ms[i] = mat_of(rank, i);
	}
	for (int i = 0; i < 8; i++)
		r[i] = -1;
	OK(MPI_Reduce_scatter(s, r, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	for (int k = 0; k < 8; k++)
		CHECK(r[k] == (k < counts[rank] ? 10 * size * (size - 1) / 2 + (start[rank] + k) * size : -1),
		      "reduce_scatter r[%d] = %d", k, r[k]);
	for (int i = 0; i < 8; i++)
		r[i] = -1;
	OK(MPI_Reduce_scatter(s, r, counts, MPI_INT, intsum_op, MPI_COMM_WORLD));
	for (int k = 0; k < 8; k++)
		CHECK(r[k] == (k < counts[rank] ? 10 * size * (size - 1) / 2 + (start[rank] + k) * size : -1),
		      "reduce_scatter user op r[%d] = %d", k, r[k]);
	OK(MPI_Reduce_scatter(ms, mr, counts, mat_t, matmul_op, MPI_COMM_WORLD));
	for (int k = 0; k < counts[rank]; k++)
		CHECK(mat_eq(mr[k], mat_prod(0, size, start[rank] + k)), "reduce_scatter matmul %d", k);
	OK(MPI_Reduce_scatter(MPI_IN_PLACE, ms, counts, mat_t, matmul_op, MPI_COMM_WORLD));
	for (int k = 0; k < counts[rank]; k++)
		CHECK(mat_eq(ms[k], mat_prod(0, size, start[rank] + k)), "reduce_scatter in place %d", k);

	/* The block form; the rest of the receive buffer untouched (MPICH's nonblocking3). */
	int *bs = malloc((size_t)size * 3 * sizeof *bs), br[6];
	for (int i = 0; i < size * 3; i++)
		bs[i] = rank + i;
	for (int i = 0; i < 6; i++)
		br[i] = -1;
	OK(MPI_Reduce_scatter_block(bs, br, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	for (int k = 0; k < 6; k++)
		CHECK(br[k] == (k < 3 ? size * (size - 1) / 2 + (rank * 3 + k) * size : -1), "block br[%d] = %d", k,
		      br[k]);
	OK(MPI_Reduce_scatter_block(MPI_IN_PLACE, bs, 3, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
	for (int k = 0; k < 3; k++)
		CHECK(bs[k] == size - 1 + rank * 3 + k, "block in place bs[%d] = %d", k, bs[k]);
	free(bs);
	free(s);
	free(ms);
}

static void test_reduce_scatter(void **state)
{
	(void)state;
	run_all(case_reduce_scatter, NULL);
}

static void case_scan(int rank, int size, void *arg)
{
	(void)arg;
	enum { K = 4 };
	int s[K], r[K];
	mat ms[K], mr[K];

	for (int i = 0; i < K; i++) {
		s[i] = rank + i;
		r[i] = -7;
		ms[i] = mat_of(rank, i);
	}
	OK(MPI_Scan(s, r, K, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	for (int i = 0; i < K; i++)
		CHECK(r[i] == rank * (rank + 1) / 2 + i * (rank + 1), "scan r[%d] = %d", i, r[i]);
	OK(MPI_Scan(ms, mr, K, mat_t, matmul_op, MPI_COMM_WORLD));
	for (int i = 0; i < K; i++)
		CHECK(mat_eq(mr[i], mat_prod(0, rank + 1, i)), "scan matmul %d", i);
	for (int i = 0; i < K; i++)
		r[i] = -7;
	OK(MPI_Exscan(s, r, K, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	for (int i = 0; rank && i < K; i++)
		CHECK(r[i] == rank * (rank - 1) / 2 + i * rank, "exscan r[%d] = %d", i, r[i]);
	for (int i = 0; !rank && i < K; i++)
		CHECK(r[i] == -7, "exscan wrote rank 0's buffer");
	memcpy(mr, ms, sizeof mr);
	OK(MPI_Exscan(MPI_IN_PLACE, mr, K, mat_t, matmul_op, MPI_COMM_WORLD));
	for (int i = 0; rank && i < K; i++)
		CHECK(mat_eq(mr[i], mat_prod(0, rank, i)), "exscan matmul in place %d", i);
	memcpy(mr, ms, sizeof mr);
	OK(MPI_Scan(MPI_IN_PLACE, mr, K, mat_t, matmul_op, MPI_COMM_WORLD));
	for (int i = 0; i < K; i++)
		CHECK(mat_eq(mr[i], mat_prod(0, rank + 1, i)), "scan matmul in place %d", i);
}

static void test_scan(void **state)
{
	(void)state;
	run_all(case_scan, NULL);
}

/* --- a communicator other than the world: every other rank, backwards ------------------------------ */

static void case_subcomm(int rank, int size, void *arg)
{
	(void)arg;
	int world[16] = { 0 }, n = 0;

	for (int i = size - 1; i >= 0; i--)
		if (i % 2 == rank % 2)
			world[n++] = i;
	MPI_Comm c = host_comm(n, world, 0, NULL, 20 + 2 * (rank % 2));
	int me = -1;
	for (int i = 0; i < n; i++)
		if (world[i] == rank)
			me = i;
	int x = me, sum = 0;
	OK(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, c));
	CHECK(sum == n * (n - 1) / 2, "sum %d", sum);
	mat m = mat_of(me, 0), p;
	OK(MPI_Allreduce(&m, &p, 1, mat_t, matmul_op, c));
	CHECK(mat_eq(p, mat_prod(0, n, 0)), "matmul on a subcommunicator");
	int all[16];
	OK(MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, c));
	for (int i = 0; i < n; i++)
		CHECK(all[i] == world[i], "allgather %d", i);
	OK(MPI_Barrier(c));
}

static void test_subcomm(void **state)
{
	(void)state;
	run_all(case_subcomm, NULL);
}

/* --- intercommunicators -------------------------------------------------------------------------- */

/* The world split at a into a left group 0 .. a - 1 and a right one a .. size - 1. */
static MPI_Comm intercomm(int rank, int size, int a, int *left, int *lrank, int *lsize, int *rsize)
{
	int lw[16], rw[16];

	for (int i = 0; i < a; i++)
		lw[i] = i;
	for (int i = a; i < size; i++)
		rw[i - a] = i;
	*left = rank < a;
	*lrank = *left ? rank : rank - a;
	*lsize = *left ? a : size - a;
	*rsize = size - *lsize;
	if (*left)
		return host_comm(a, lw, size - a, rw, 40);
	return host_comm(size - a, rw, a, lw, 40);
}

/* The value a member of a group gives: its group and rank. */
static int val(int left, int r, int i)
{
	return (left ? 1000 : 2000) + r * 10 + i;
}

static void case_inter(int rank, int size, void *arg)
{
	(void)arg;
	for (int a = 1; a < size; a++) {
		int left, lr, ln, rn;
		MPI_Comm c = intercomm(rank, size, a, &left, &lr, &ln, &rn);
		int rleft = !left;
		int buf[64], s[64];

		/* Rooted: the left group's rank 0 is the root each time, then the right's last. */
		for (int pass = 0; pass < 2; pass++) {
			int rootside = pass == 0 ? left : !left;
			int rootrank = pass == 0 ? 0 : (left ? rn - 1 : ln - 1);
			int root = rootside ? (lr == rootrank ? MPI_ROOT : MPI_PROC_NULL) : rootrank;
			int iamroot = root == MPI_ROOT;
			/* The root's group as seen from the other side. */
			int rgroup_left = pass == 0;

			for (int i = 0; i < 64; i++)
				buf[i] = iamroot ? i : -1;
			OK(MPI_Bcast(buf, 5, MPI_INT, root, c));
			for (int i = 0; i < 5; i++)
				CHECK(buf[i] == (root == MPI_PROC_NULL ? -1 : i), "a %d bcast %d", a, i);

			for (int i = 0; i < 3; i++)
				s[i] = val(left, lr, i);
			for (int i = 0; i < 64; i++)
				buf[i] = -1;
			OK(MPI_Gather(s, 3, MPI_INT, buf, 3, MPI_INT, root, c));
			for (int i = 0; iamroot && i < 3 * rn; i++)
				CHECK(buf[i] == val(rleft, i / 3, i % 3), "a %d gather %d = %d", a, i, buf[i]);

			int counts[16], displs[16];
			for (int i = 0; i < rn; i++) {
				counts[i] = i % 3;
				displs[i] = 3 * i;
			}
			for (int i = 0; i < 64; i++)
				buf[i] = -1;
			int mycount = lr % 3;
			OK(MPI_Gatherv(s, mycount, MPI_INT, buf, counts, displs, MPI_INT, root, c));
			for (int i = 0; iamroot && i < rn; i++)
				for (int k = 0; k < 3; k++)
					CHECK(buf[3 * i + k] == (k < counts[i] ? val(rleft, i, k) : -1), "a %d gatherv", a);

			for (int i = 0; i < 64; i++)
				s[i] = iamroot ? 7000 + i : -1;
			for (int i = 0; i < 3; i++)
				buf[i] = -1;
			OK(MPI_Scatter(s, 3, MPI_INT, buf, 3, MPI_INT, root, c));
			for (int i = 0; !rootside && i < 3; i++)
				CHECK(buf[i] == 7000 + lr * 3 + i, "a %d scatter %d", a, i);
			for (int i = 0; i < 3; i++)
				buf[i] = -1;
			OK(MPI_Scatterv(s, counts, displs, MPI_INT, buf, mycount, MPI_INT, root, c));
			for (int i = 0; !rootside && i < mycount; i++)
				CHECK(buf[i] == 7000 + lr * 3 + i, "a %d scatterv %d", a, i);

			int x = val(left, lr, 0), y = -1;
			OK(MPI_Reduce(&x, &y, 1, MPI_INT, MPI_SUM, root, c));
			if (iamroot) {
				int want = 0;
				for (int i = 0; i < rn; i++)
					want += val(rleft, i, 0);
				CHECK(y == want, "a %d reduce %d, want %d", a, y, want);
			}
			mat m = mat_of(lr + (left ? 0 : 100), 1), p;
			OK(MPI_Reduce(&m, &p, 1, mat_t, matmul_op, root, c));
			if (iamroot) {
				mat want = { { 1, 0, 0, 1 } };
				for (int i = 0; i < rn; i++)
					want = mat_mul(want, mat_of(i + (rleft ? 0 : 100), 1));
				CHECK(mat_eq(p, want), "a %d reduce matmul", a);
			}
			(void)rgroup_left;
		}

		/* Everyone gives, everyone gets the other group's. */
		for (int i = 0; i < 2; i++)
			s[i] = val(left, lr, i);
		OK(MPI_Allgather(s, 2, MPI_INT, buf, 2, MPI_INT, c));
		for (int i = 0; i < 2 * rn; i++)
			CHECK(buf[i] == val(rleft, i / 2, i % 2), "a %d allgather", a);
		int counts[16], displs[16];
		for (int i = 0; i < rn; i++) {
			counts[i] = (i + 1) % 2 + 1;
			displs[i] = 2 * i;
		}
		int myc = (lr + 1) % 2 + 1;
		for (int i = 0; i < 64; i++)
			buf[i] = -1;
		OK(MPI_Allgatherv(s, myc, MPI_INT, buf, counts, displs, MPI_INT, c));
		for (int i = 0; i < rn; i++)
			for (int k = 0; k < 2; k++)
				CHECK(buf[2 * i + k] == (k < counts[i] ? val(rleft, i, k) : -1), "a %d allgatherv", a);
		/* Alltoall: block j to remote rank j. */
		for (int j = 0; j < rn; j++)
			s[j] = val(left, lr, j);
		OK(MPI_Alltoall(s, 1, MPI_INT, buf, 1, MPI_INT, c));
		for (int j = 0; j < rn; j++)
			CHECK(buf[j] == val(rleft, j, lr), "a %d alltoall from %d", a, j);
		int ones[16], idx[16];
		MPI_Datatype ints[16];
		for (int j = 0; j < 16; j++) {
			ones[j] = 1;
			idx[j] = j;
			ints[j] = MPI_INT;
		}
		OK(MPI_Alltoallv(s, ones, idx, MPI_INT, buf, ones, idx, MPI_INT, c));
		for (int j = 0; j < rn; j++)
			CHECK(buf[j] == val(rleft, j, lr), "a %d alltoallv from %d", a, j);
		int bidx[16];
		for (int j = 0; j < 16; j++)
			bidx[j] = j * (int)sizeof(int);
		OK(MPI_Alltoallw(s, ones, bidx, ints, buf, ones, bidx, ints, c));
		for (int j = 0; j < rn; j++)
			CHECK(buf[j] == val(rleft, j, lr), "a %d alltoallw from %d", a, j);

		/* Allreduce: the other group's sum; matrices in the other group's rank order. */
		int x = val(left, lr, 0), y = -1, want = 0;
		for (int i = 0; i < rn; i++)
			want += val(rleft, i, 0);
		OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, c));
		CHECK(y == want, "a %d allreduce %d, want %d", a, y, want);
		mat m[3], p[3];
		for (int i = 0; i < 3; i++)
			m[i] = mat_of(lr + (left ? 0 : 100), i);
		OK(MPI_Allreduce(m, p, 3, mat_t, matmul_op, c));
		for (int i = 0; i < 3; i++) {
			mat w = { { 1, 0, 0, 1 } };
			for (int j = 0; j < rn; j++)
				w = mat_mul(w, mat_of(j + (rleft ? 0 : 100), i));
			CHECK(mat_eq(p[i], w), "a %d allreduce matmul %d", a, i);
		}

		/* Reduce_scatter (MPICH's redscatinter): count = lsize * rsize * 2 on both sides. */
		int total = ln * rn * 2, rc[16];
		for (int i = 0; i < ln; i++)
			rc[i] = rn * 2;
		int *v = malloc((size_t)total * sizeof *v), got[64];
		for (int i = 0; i < total; i++)
			v[i] = (left ? 1 : -1) * (lr * total + i);
		OK(MPI_Reduce_scatter(v, got, rc, MPI_INT, MPI_SUM, c));
		for (int k = 0; k < rc[lr]; k++) {
			int w = 0, idx2 = lr * rn * 2 + k;
			for (int j = 0; j < rn; j++)
				w += (rleft ? 1 : -1) * (j * total + idx2);
			CHECK(got[k] == w, "a %d reduce_scatter %d = %d, want %d", a, k, got[k], w);
		}
		OK(MPI_Reduce_scatter_block(v, got, rn * 2, MPI_INT, MPI_SUM, c));
		for (int k = 0; k < rn * 2; k++) {
			int w = 0, idx2 = lr * rn * 2 + k;
			for (int j = 0; j < rn; j++)
				w += (rleft ? 1 : -1) * (j * total + idx2);
			CHECK(got[k] == w, "a %d reduce_scatter_block %d", a, k);
		}
		free(v);
		OK(MPI_Barrier(c));
		/* Not on an intercommunicator. */
		CHECK(MPI_Scan(&x, &y, 1, MPI_INT, MPI_SUM, c) == MPI_ERR_COMM, "scan on an intercommunicator");
		CHECK(MPI_Allreduce(MPI_IN_PLACE, &y, 1, MPI_INT, MPI_SUM, c) == MPI_ERR_BUFFER, "in place");
	}
}

static void test_inter(void **state)
{
	(void)state;
	run(case_inter, NULL, 2, 9);
}

/* --- argument errors (MPICH's errors/coll) --------------------------------------------------------------- */

static void case_errors(int rank, int size, void *arg)
{
	(void)arg;
	int sbuf[64] = { 0 }, rbuf[64] = { 0 }, counts[16], displs[16];
	MPI_Datatype types[16];
	MPI_Comm comm = MPI_COMM_WORLD;

	for (int i = 0; i < size; i++) {
		counts[i] = 2;
		displs[i] = 2 * i;
		types[i] = MPI_INT;
	}
	/* noalias2: rank 0 alone, for the rooted ones. */
	if (rank == 0) {
		CHECK(MPI_Gather(sbuf, 2, MPI_INT, sbuf, 2, MPI_INT, 0, comm) == MPI_ERR_BUFFER, "gather");
		CHECK(MPI_Gatherv(sbuf, 2, MPI_INT, sbuf, counts, displs, MPI_INT, 0, comm) == MPI_ERR_BUFFER, "gatherv");
		CHECK(MPI_Scatter(sbuf, 2, MPI_INT, sbuf, 2, MPI_INT, 0, comm) == MPI_ERR_BUFFER, "scatter");
		CHECK(MPI_Scatterv(sbuf, counts, displs, MPI_INT, sbuf, 2, MPI_INT, 0, comm) == MPI_ERR_BUFFER,
		      "scatterv");
		CHECK(MPI_Reduce(sbuf, sbuf, 2, MPI_INT, MPI_SUM, 0, comm) == MPI_ERR_BUFFER, "reduce");
	}
	CHECK(MPI_Allgather(&sbuf[rank], 1, MPI_INT, sbuf, 1, MPI_INT, comm) == MPI_ERR_BUFFER, "allgather");
	CHECK(MPI_Allgatherv(&sbuf[rank * 2], 2, MPI_INT, sbuf, counts, displs, MPI_INT, comm) == MPI_ERR_BUFFER,
	      "allgatherv");
	CHECK(MPI_Alltoall(sbuf, 2, MPI_INT, sbuf, 2, MPI_INT, comm) == MPI_ERR_BUFFER, "alltoall");
	CHECK(MPI_Alltoallv(sbuf, counts, displs, MPI_INT, sbuf, counts, displs, MPI_INT, comm) == MPI_ERR_BUFFER,
	      "alltoallv");
	CHECK(MPI_Alltoallw(sbuf, counts, displs, types, sbuf, counts, displs, types, comm) == MPI_ERR_BUFFER,
	      "alltoallw");
	CHECK(MPI_Allreduce(sbuf, sbuf, 2, MPI_INT, MPI_SUM, comm) == MPI_ERR_BUFFER, "allreduce");
	CHECK(MPI_Reduce_scatter(sbuf, sbuf, counts, MPI_INT, MPI_SUM, comm) == MPI_ERR_BUFFER, "reduce_scatter");
	CHECK(MPI_Reduce_scatter_block(sbuf, sbuf, 2, MPI_INT, MPI_SUM, comm) == MPI_ERR_BUFFER, "rsb");
	CHECK(MPI_Scan(sbuf, sbuf, 2, MPI_INT, MPI_SUM, comm) == MPI_ERR_BUFFER, "scan");
	CHECK(MPI_Exscan(sbuf, sbuf, 2, MPI_INT, MPI_SUM, comm) == MPI_ERR_BUFFER, "exscan");
	/* rerr: an op its type does not take, on every rank. */
	CHECK(MPI_Reduce(sbuf, rbuf, 1, MPI_BYTE, MPI_MAX, 0, comm) == MPI_ERR_OP, "byte max");
	CHECK(MPI_Allreduce(sbuf, rbuf, 1, MPI_INT, MPI_MINLOC, comm) == MPI_ERR_OP, "int minloc");
	CHECK(MPI_Allreduce(sbuf, rbuf, 1, MPI_INT, MPI_OP_NULL, comm) == MPI_ERR_OP, "null op");
	CHECK(MPI_Bcast(sbuf, -1, MPI_INT, 0, comm) == MPI_ERR_COUNT, "count");
	CHECK(MPI_Bcast(sbuf, 1, MPI_INT, size, comm) == MPI_ERR_ROOT, "root");
	CHECK(MPI_Bcast(sbuf, 1, MPI_DATATYPE_NULL, 0, comm) == MPI_ERR_TYPE, "type");
	CHECK(MPI_Bcast(NULL, 1, MPI_INT, 0, comm) == MPI_ERR_BUFFER, "NULL buffer");
	CHECK(MPI_Barrier(MPI_COMM_NULL) == MPI_ERR_COMM, "comm");
	CHECK(MPI_Gatherv(sbuf, 2, MPI_INT, rbuf, NULL, displs, MPI_INT, rank, comm) == MPI_ERR_ARG, "NULL counts");
	if (rank)
		CHECK(MPI_Gather(MPI_IN_PLACE, 2, MPI_INT, rbuf, 2, MPI_INT, 0, comm) == MPI_ERR_BUFFER,
		      "in place off the root");
	/* noalias: the make-up reduce of the root meets the others' first one; in place is no alias. */
	for (int i = 0; i < size; i++)
		sbuf[i] = i;
	int err = MPI_Reduce(sbuf, rank == 0 ? sbuf : NULL, 1, MPI_INT, MPI_SUM, 0, comm);
	CHECK((rank == 0) == (err != MPI_SUCCESS), "reduce alias");
	if (err)
		OK(MPI_Reduce(sbuf, rbuf, 1, MPI_INT, MPI_SUM, 0, comm));
	OK(MPI_Reduce(rank == 0 ? MPI_IN_PLACE : sbuf, sbuf, 1, MPI_INT, MPI_SUM, 0, comm));
	/* After all that, the ranks are still in step. */
	int x = rank, y = -1;
	OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, comm));
	CHECK(y == size * (size - 1) / 2, "in step after the errors: %d", y);
}

static void test_errors(void **state)
{
	(void)state;
	run(case_errors, NULL, 1, 6);
}

/* --- the internal forms -------------------------------------------------------------------------- */

static void case_internal(int rank, int size, void *arg)
{
	(void)arg;
	struct mpi_comm *c = mpii_comm_get(MPI_COMM_WORLD);
	int x = rank == size - 1 ? 77 : 0, all[16], s = 0;

	OK(mpii_barrier(c));
	OK(mpii_bcast(&x, 1, MPI_INT, size - 1, c));
	CHECK(x == 77, "bcast %d", x);
	OK(mpii_allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, c));
	for (int i = 0; i < size; i++)
		CHECK(all[i] == i, "allgather %d", i);
	OK(mpii_allreduce(&rank, &s, 1, MPI_INT, MPI_SUM, c));
	CHECK(s == size * (size - 1) / 2, "allreduce %d", s);
}

static void test_internal(void **state)
{
	(void)state;
	run(case_internal, NULL, 1, 9);
}

/* --- nonblocking collectives --------------------------------------------------------------------- */

/* Every nonblocking collective started at once, waited for last to first. */
static void case_nb_all(int rank, int size, void *arg)
{
	(void)arg;
	enum { N = 17 };
	MPI_Request q[N];
	int n = 0, b[N][64], s[N][64], counts[16], displs[16], ones[16], bidx[16];
	MPI_Datatype ints[16];
	MPI_Comm w = MPI_COMM_WORLD;

	for (int k = 0; k < N; k++)
		for (int i = 0; i < 64; i++) {
			b[k][i] = -1;
			s[k][i] = rank * 100 + i;
		}
	for (int i = 0; i < size; i++) {
		counts[i] = 2;
		displs[i] = 2 * i;
		ones[i] = 1;
		bidx[i] = i * (int)sizeof(int);
		ints[i] = MPI_INT;
	}
	int root = size / 2;
	OK(MPI_Ibarrier(w, &q[n++]));
	if (rank == root)
		b[1][0] = 4242;
	OK(MPI_Ibcast(b[1], 1, MPI_INT, root, w, &q[n++]));
	OK(MPI_Igather(s[2], 2, MPI_INT, b[2], 2, MPI_INT, root, w, &q[n++]));
	OK(MPI_Igatherv(s[3], 2, MPI_INT, b[3], counts, displs, MPI_INT, root, w, &q[n++]));
	OK(MPI_Iscatter(s[4], 2, MPI_INT, b[4], 2, MPI_INT, root, w, &q[n++]));
	OK(MPI_Iscatterv(s[5], counts, displs, MPI_INT, b[5], 2, MPI_INT, root, w, &q[n++]));
	OK(MPI_Iallgather(s[6], 2, MPI_INT, b[6], 2, MPI_INT, w, &q[n++]));
	OK(MPI_Iallgatherv(s[7], 2, MPI_INT, b[7], counts, displs, MPI_INT, w, &q[n++]));
	OK(MPI_Ialltoall(s[8], 1, MPI_INT, b[8], 1, MPI_INT, w, &q[n++]));
	OK(MPI_Ialltoallv(s[9], ones, displs, MPI_INT, b[9], ones, displs, MPI_INT, w, &q[n++]));
	OK(MPI_Ialltoallw(s[10], ones, bidx, ints, b[10], ones, bidx, ints, w, &q[n++]));
	OK(MPI_Ireduce(s[11], b[11], 3, MPI_INT, MPI_SUM, root, w, &q[n++]));
	OK(MPI_Iallreduce(s[12], b[12], 3, MPI_INT, MPI_MAX, w, &q[n++]));
	OK(MPI_Ireduce_scatter(s[13], b[13], counts, MPI_INT, MPI_SUM, w, &q[n++]));
	OK(MPI_Ireduce_scatter_block(s[14], b[14], 2, MPI_INT, MPI_SUM, w, &q[n++]));
	OK(MPI_Iscan(s[15], b[15], 2, MPI_INT, MPI_SUM, w, &q[n++]));
	OK(MPI_Iexscan(s[16], b[16], 2, MPI_INT, MPI_SUM, w, &q[n++]));
	for (int k = n - 1; k >= 0; k--)
		OK(host_wait(q[k]));
	CHECK(b[1][0] == 4242, "ibcast");
	for (int i = 0; rank == root && i < 2 * size; i++) {
		CHECK(b[2][i] == i / 2 * 100 + i % 2, "igather %d", i);
		CHECK(b[3][i] == i / 2 * 100 + i % 2, "igatherv %d", i);
	}
	for (int i = 0; i < 2; i++) {
		CHECK(b[4][i] == root * 100 + 2 * rank + i, "iscatter %d", i);
		CHECK(b[5][i] == root * 100 + 2 * rank + i, "iscatterv %d", i);
	}
	for (int i = 0; i < 2 * size; i++) {
		CHECK(b[6][i] == i / 2 * 100 + i % 2, "iallgather %d", i);
		CHECK(b[7][i] == i / 2 * 100 + i % 2, "iallgatherv %d", i);
	}
	for (int j = 0; j < size; j++) {
		CHECK(b[8][j] == j * 100 + rank, "ialltoall %d", j);
		CHECK(b[9][2 * j] == j * 100 + 2 * rank, "ialltoallv %d", j);
		CHECK(b[10][j] == j * 100 + rank, "ialltoallw %d", j);
	}
	for (int i = 0; i < 3; i++) {
		if (rank == root)
			CHECK(b[11][i] == 100 * size * (size - 1) / 2 + size * i, "ireduce %d", i);
		CHECK(b[12][i] == 100 * (size - 1) + i, "iallreduce %d", i);
	}
	for (int i = 0; i < 2; i++) {
		CHECK(b[13][i] == 100 * size * (size - 1) / 2 + size * (2 * rank + i), "ireduce_scatter %d", i);
		CHECK(b[14][i] == 100 * size * (size - 1) / 2 + size * (2 * rank + i), "irsb %d", i);
		CHECK(b[15][i] == 100 * rank * (rank + 1) / 2 + (rank + 1) * i, "iscan %d", i);
		if (rank)
			CHECK(b[16][i] == 100 * rank * (rank - 1) / 2 + rank * i, "iexscan %d", i);
	}
	/* Errors found by the call return at once, with no request (MPICH's noalias3). */
	MPI_Request r = MPI_REQUEST_NULL;
	CHECK(MPI_Iallreduce(s[0], s[0], 1, MPI_INT, MPI_SUM, w, &r) == MPI_ERR_BUFFER, "ialias");
	CHECK(MPI_Ireduce(s[0], b[0], 1, MPI_BYTE, MPI_MAX, 0, w, &r) == MPI_ERR_OP, "ireduce byte max");
	CHECK(MPI_Ibarrier(w, NULL) == MPI_ERR_ARG, "NULL request");
	CHECK(r == MPI_REQUEST_NULL, "a request for a failed call");
	/* And the next one matches everywhere. */
	int x = rank, y = 0;
	OK(MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, w, &r));
	OK(host_wait(r));
	CHECK(y == size * (size - 1) / 2, "after the errors %d", y);
}

static void test_nb_all(void **state)
{
	(void)state;
	run_all(case_nb_all, NULL);
}

/*
 * MPICH's nonblocking3: many collectives pending at once on several
 * communicators, chosen alike on every rank, waited for in each rank's
 * own random order, with point to point in between.
 */
enum { NB_WINDOW = 40, NB_KINDS = 12 };

struct slot {
	int kind, ci, it, root;
	MPI_Request req;
	int s[64], r[64];
	mat ms[4], mr[4];
};

static void nb_start(struct slot *sl, MPI_Comm comm, int lr, int size)
{
	int it = sl->it, root = sl->root;

	for (int i = 0; i < 64; i++)
		sl->r[i] = -1;
	switch (sl->kind) {
	case 0:
		for (int k = 0; k < 4; k++)
			sl->r[k] = lr == root ? it * 10 + k : -1;
		MPI_Ibcast(sl->r, 4, MPI_INT, root, comm, &sl->req);
		break;
	case 1:
		MPI_Ibarrier(comm, &sl->req);
		break;
	case 2:
		for (int k = 0; k < 4; k++)
			sl->s[k] = lr + k + it;
		MPI_Ireduce(sl->s, sl->r, 4, MPI_INT, intsum_op, root, comm, &sl->req);
		break;
	case 3:
		for (int k = 0; k < 4; k++)
			sl->ms[k] = mat_of(lr, k + it);
		MPI_Iallreduce(sl->ms, sl->mr, 4, mat_t, matmul_op, comm, &sl->req);
		break;
	case 4:
		for (int j = 0; j < size; j++)
			sl->s[j] = lr * 100 + j + it;
		MPI_Ialltoall(sl->s, 1, MPI_INT, sl->r, 1, MPI_INT, comm, &sl->req);
		break;
	case 5:
		sl->s[0] = lr + it;
		MPI_Igather(sl->s, 1, MPI_INT, sl->r, 1, MPI_INT, root, comm, &sl->req);
		break;
	case 6:
		for (int j = 0; j < size; j++)
			sl->s[j] = j * 3 + it;
		MPI_Iscatter(sl->s, 1, MPI_INT, sl->r, 1, MPI_INT, root, comm, &sl->req);
		break;
	case 7:
		sl->s[0] = lr * 7 + it;
		MPI_Iallgather(sl->s, 1, MPI_INT, sl->r, 1, MPI_INT, comm, &sl->req);
		break;
	case 8:
		for (int j = 0; j < 2 * size; j++)
			sl->s[j] = lr + j + it;
		MPI_Ireduce_scatter_block(sl->s, sl->r, 2, MPI_INT, MPI_SUM, comm, &sl->req);
		break;
	case 9:
		sl->s[0] = lr + it;
		MPI_Iscan(sl->s, sl->r, 1, MPI_INT, MPI_SUM, comm, &sl->req);
		break;
	case 10:
		sl->s[0] = lr + it;
		MPI_Iexscan(sl->s, sl->r, 1, MPI_INT, MPI_SUM, comm, &sl->req);
		break;
	case 11:
		/* A derived type: the job must hold it (its references are counted). */
		for (int i = 0; i < 64; i++)
			sl->r[i] = -1;
		if (lr == root)
			for (int e = 0; e < 3; e++) {
				sl->r[3 * e] = it + e;
				sl->r[3 * e + 2] = -it - e;
			}
		MPI_Ibcast(sl->r, 3, ivec_t, root, comm, &sl->req);
		break;
	}
}

static void nb_check(struct slot *sl, int lr, int size, int rank)
{
	int it = sl->it, root = sl->root;

	switch (sl->kind) {
	case 0:
		for (int k = 0; k < 4; k++)
			CHECK(sl->r[k] == it * 10 + k, "ibcast it %d", it);
		break;
	case 2:
		for (int k = 0; lr == root && k < 4; k++)
			CHECK(sl->r[k] == size * (size - 1) / 2 + size * (k + it), "ireduce it %d", it);
		break;
	case 3:
		for (int k = 0; k < 4; k++)
			CHECK(mat_eq(sl->mr[k], mat_prod(0, size, k + it)), "iallreduce matmul it %d", it);
		break;
	case 4:
		for (int j = 0; j < size; j++)
			CHECK(sl->r[j] == j * 100 + lr + it, "ialltoall it %d", it);
		break;
	case 5:
		for (int j = 0; lr == root && j < size; j++)
			CHECK(sl->r[j] == j + it, "igather it %d", it);
		break;
	case 6:
		CHECK(sl->r[0] == lr * 3 + it, "iscatter it %d", it);
		break;
	case 7:
		for (int j = 0; j < size; j++)
			CHECK(sl->r[j] == j * 7 + it, "iallgather it %d", it);
		break;
	case 8:
		for (int k = 0; k < 2; k++)
			CHECK(sl->r[k] == size * (size - 1) / 2 + size * (2 * lr + k + it), "irsb it %d", it);
		CHECK(sl->r[2] == -1, "irsb wrote past its piece");
		break;
	case 9:
		CHECK(sl->r[0] == lr * (lr + 1) / 2 + (lr + 1) * it, "iscan it %d", it);
		break;
	case 10:
		if (lr)
			CHECK(sl->r[0] == lr * (lr - 1) / 2 + lr * it, "iexscan it %d", it);
		break;
	case 11:
		for (int e = 0; e < 3; e++)
			CHECK(sl->r[3 * e] == it + e && sl->r[3 * e + 2] == -it - e && sl->r[3 * e + 1] == -1,
			      "ibcast vector it %d", it);
		break;
	}
}

static void case_nb_stress(int rank, int size, void *arg)
{
	int iters = *(int *)arg;
	int all[16], rev[16];

	for (int i = 0; i < size; i++) {
		all[i] = i;
		rev[i] = size - 1 - i;
	}
	MPI_Comm comms[3] = { MPI_COMM_WORLD, host_comm(size, all, 0, NULL, 60), host_comm(size, rev, 0, NULL, 62) };
	int lrank[3] = { rank, rank, size - 1 - rank };
	struct slot *slots = calloc(NB_WINDOW, sizeof *slots);
	int busy[NB_WINDOW] = { 0 }, nbusy = 0;
	unsigned common = 12345, mine = 777u + (unsigned)rank * 7919u;
	struct mpi_comm *world = mpii_comm_get(MPI_COMM_WORLD);

	for (int it = 0; it < iters || nbusy; it++) {
		/* Wait for one, in this rank's order, when the window is full or the starts are over. */
		if (nbusy == NB_WINDOW || (it >= iters && nbusy)) {
			int pick = (int)(host_rnd_next(&mine) % (unsigned)nbusy), k;
			for (k = 0; k < NB_WINDOW; k++)
				if (busy[k] && pick-- == 0)
					break;
			OK(host_wait(slots[k].req));
			nb_check(&slots[k], lrank[slots[k].ci], size, rank);
			busy[k] = 0;
			nbusy--;
			continue;
		}
		if (it >= iters)
			continue;
		unsigned what = host_rnd_next(&common);
		if (what % 8 == 0 && size > 1) {
			/* Point to point around the ring while the collectives go on. */
			int out = rank * 1000 + it, in = -1;
			OK(mpii_sendrecv(&out, 1, MPI_INT, (rank + 1) % size, it, &in, 1, MPI_INT, (rank + size - 1) % size,
					 it, world, 0, MPI_STATUS_IGNORE));
			CHECK(in == (rank + size - 1) % size * 1000 + it, "ring %d", in);
			continue;
		}
		int k = 0;
		while (busy[k])
			k++;
		struct slot *sl = &slots[k];
		sl->kind = (int)((what >> 4) % NB_KINDS);
		sl->ci = (int)((what >> 9) % 3);
		sl->it = it;
		sl->root = (int)((what >> 12) % (unsigned)size);
		nb_start(sl, comms[sl->ci], lrank[sl->ci], size);
		busy[k] = 1;
		nbusy++;
	}
	free(slots);
}

static void test_nb_stress(void **state)
{
	(void)state;
	int iters = 400;
	run_all(case_nb_stress, &iters);
	assert_int_equal(host_type_refs(), 0);
}

/*
 * Collectives started in different orders on different communicators (MPI
 * allows it), a blocking one among nonblocking ones on one communicator.
 */
static void case_nb_order(int rank, int size, void *arg)
{
	(void)arg;
	int all[16];

	for (int i = 0; i < size; i++)
		all[i] = i;
	MPI_Comm c1 = host_comm(size, all, 0, NULL, 70), c2 = host_comm(size, all, 0, NULL, 72);
	MPI_Request q[4];
	int a = rank, b = 2 * rank, sa = 0, sb = 0;
	if (rank % 2) {
		OK(MPI_Iallreduce(&a, &sa, 1, MPI_INT, MPI_SUM, c1, &q[0]));
		OK(MPI_Iallreduce(&b, &sb, 1, MPI_INT, MPI_SUM, c2, &q[1]));
	} else {
		OK(MPI_Iallreduce(&b, &sb, 1, MPI_INT, MPI_SUM, c2, &q[1]));
		OK(MPI_Iallreduce(&a, &sa, 1, MPI_INT, MPI_SUM, c1, &q[0]));
	}
	int v = rank == 0 ? 5 : 0, x = rank, y = 0;
	OK(MPI_Ibcast(&v, 1, MPI_INT, 0, c1, &q[2]));
	OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_MAX, c1));
	OK(MPI_Ibarrier(c1, &q[3]));
	for (int k = 3; k >= 0; k--)
		OK(host_wait(q[k]));
	CHECK(sa == size * (size - 1) / 2 && sb == size * (size - 1), "crossed %d %d", sa, sb);
	CHECK(v == 5 && y == size - 1, "mixed %d %d", v, y);
}

static void test_nb_order(void **state)
{
	(void)state;
	run_all(case_nb_order, NULL);
}

/* Nonblocking collectives on intercommunicators. */
static void case_nb_inter(int rank, int size, void *arg)
{
	(void)arg;
	int left, lr, ln, rn;
	MPI_Comm c = intercomm(rank, size, (size + 1) / 2, &left, &lr, &ln, &rn);
	MPI_Request q[3];
	int x = val(left, lr, 0), y = -1, g[16], b = left && lr == 0 ? 99 : -1;
	int root = left ? (lr == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;

	OK(MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, c, &q[0]));
	OK(MPI_Iallgather(&x, 1, MPI_INT, g, 1, MPI_INT, c, &q[1]));
	OK(MPI_Ibcast(&b, 1, MPI_INT, root, c, &q[2]));
	for (int k = 2; k >= 0; k--)
		OK(host_wait(q[k]));
	int want = 0;
	for (int i = 0; i < rn; i++) {
		want += val(!left, i, 0);
		CHECK(g[i] == val(!left, i, 0), "iallgather %d", i);
	}
	CHECK(y == want, "iallreduce %d, want %d", y, want);
	CHECK(b == (left && lr ? -1 : 99), "ibcast %d", b);
	OK(MPI_Ibarrier(c, &q[0]));
	OK(host_wait(q[0]));
}

static void test_nb_inter(void **state)
{
	(void)state;
	run(case_nb_inter, NULL, 2, 9);
}

int main(void)
{
	assert_int_equal(mpii_op_init(), MPI_SUCCESS);
	mat_t = host_type_vector(4, 1, 1, MPI_UNSIGNED, 0);
	ivec_t = host_type_vector(2, 1, 2, MPI_INT, 0);
	assert_int_equal(MPI_Op_create(matmul, 0, &matmul_op), MPI_SUCCESS);
	assert_int_equal(MPI_Op_create(intsum, 1, &intsum_op), MPI_SUCCESS);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_barrier),
		cmocka_unit_test(test_bcast),
		cmocka_unit_test(test_bcastlength),
		cmocka_unit_test(test_gather_scatter),
		cmocka_unit_test(test_gatherv_scatterv),
		cmocka_unit_test(test_allgather),
		cmocka_unit_test(test_alltoall),
		cmocka_unit_test(test_reduce),
		cmocka_unit_test(test_allreduce),
		cmocka_unit_test(test_long),
		cmocka_unit_test(test_reduce_scatter),
		cmocka_unit_test(test_scan),
		cmocka_unit_test(test_subcomm),
		cmocka_unit_test(test_inter),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_internal),
		cmocka_unit_test(test_nb_all),
		cmocka_unit_test(test_nb_stress),
		cmocka_unit_test(test_nb_order),
		cmocka_unit_test(test_nb_inter),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
