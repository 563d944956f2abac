/*
 * Cartesian topologies (MPI-3.1 §7.5): a grid laid over a communicator's
 * ranks in row-major order, and MPI_Dims_create's balanced grids.  The
 * ranks are never reordered (reorder is a hint): rank r of the old
 * communicator is rank r of the grid.
 *
 * A topology never changes once made; a communicator and its duplicates
 * share it by counting references.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/mpi/mpiimpl.h"

struct mpi_topo {
	int refs;
	int ndims;
	int *dims, *periods;
};

void mpii_topo_ref(struct mpi_topo *t)
{
	__atomic_add_fetch(&t->refs, 1, __ATOMIC_RELAXED);
}

void mpii_topo_unref(struct mpi_topo *t)
{
	if (__atomic_sub_fetch(&t->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		free(t->dims);
		free(t);
	}
}

static struct mpi_topo *topo_new(int ndims, const int *dims, const int *periods)
{
	struct mpi_topo *t = malloc(sizeof *t);
	int *d = malloc(2 * ((size_t)ndims + 1) * sizeof *d);

	if (!t || !d) {
		free(t);
		free(d);
		return NULL;
	}
	t->refs = 1;
	t->ndims = ndims;
	t->dims = d;
	t->periods = d + ndims + 1;
	for (int i = 0; i < ndims; i++) {
		t->dims[i] = dims[i];
		t->periods[i] = periods[i] != 0;
	}
	return t;
}

/* --- MPI_Dims_create ---------------------------------------------------------------------------- */

/*
 * The search for the best split of n into k factors, largest first.  Best
 * is what MPICH gives (MPICH's topo/dims5 lists 75,000 of its answers):
 * the least spread between the largest and the smallest factor, then the
 * largest smallest factor, the largest next one, and so on.  Every factor
 * divides n: the search walks n's divisors (at most 1344 below 2^31),
 * largest first.
 */
struct dims_search {
	int k;
	int *cur, *best;
	long best_spread;
	int found;
	long *div;			/* n's divisors, decreasing */
	int ndiv;
};

static int better(const struct dims_search *s, long spread)
{
	if (!s->found || spread != s->best_spread)
		return !s->found || spread < s->best_spread;
	for (int i = s->k - 1; i >= 0; i--)
		if (s->cur[i] != s->best[i])
			return s->cur[i] > s->best[i];
	return 0;
}

/* The largest m with m^j <= n. */
static long iroot(long n, int j)
{
	long lo = 1, hi = n;

	while (lo < hi) {
		long mid = lo + (hi - lo + 1) / 2, p = 1;
		for (int i = 0; i < j && p <= n; i++)
			p = p > n / mid ? n + 1 : p * mid;
		if (p <= n)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* Factors i.. of n, each at most the divisor at index from. */
static void dims_search(struct dims_search *s, int i, long n, int from)
{
	int j = s->k - i;

	if (j == 1) {
		s->cur[i] = (int)n;
		long spread = s->cur[0] - n;
		if (better(s, spread)) {
			memcpy(s->best, s->cur, (size_t)s->k * sizeof *s->cur);
			s->best_spread = spread;
			s->found = 1;
		}
		return;
	}
	for (int d = from; d < s->ndiv; d++) {
		long f = s->div[d], rest = n / f, p = 1;
		if (n % f)
			continue;
		/* f is the largest of the j factors left: f^j >= n, or no smaller f does either. */
		for (int t = 1; t < j && p <= rest; t++)
			p = p > rest / f ? rest + 1 : p * f;
		if (p < rest)
			break;
		/* The smallest factor will be at most rest^(1/(j-1)): no better spread than this. */
		long first = i == 0 ? f : s->cur[0];
		if (s->found && first - iroot(rest, j - 1) > s->best_spread)
			continue;
		s->cur[i] = (int)f;
		dims_search(s, i + 1, rest, d);
	}
}

/* n's divisors, decreasing, into *out (to free); their number, or -1 (no memory). */
static int divisors(long n, long **out)
{
	long p[32];
	int e[32], np = 0, nd = 1;

	for (long q = 2, m = n; m > 1; q++) {
		if (q * q > m)
			q = m;
		if (m % q)
			continue;
		p[np] = q;
		e[np] = 0;
		while (m % q == 0) {
			m /= q;
			e[np]++;
		}
		nd *= e[np++] + 1;
	}
	long *d = malloc((size_t)nd * sizeof *d);
	if (!d)
		return -1;
	int k = 1;
	d[0] = 1;
	for (int i = 0; i < np; i++) {
		int base = k;
		long m = 1;
		for (int x = 0; x < e[i]; x++) {
			m *= p[i];
			for (int y = 0; y < base; y++)
				d[k++] = d[y] * m;
		}
	}
	/* Insertion sort, decreasing: a few hundred entries at most in practice. */
	for (int i = 1; i < k; i++) {
		long v = d[i];
		int j = i;
		while (j > 0 && d[j - 1] < v) {
			d[j] = d[j - 1];
			j--;
		}
		d[j] = v;
	}
	*out = d;
	return k;
}

int MPI_Dims_create(int nnodes, int ndims, int dims[])
{
	static const char fn[] = "MPI_Dims_create";
	long fixed = 1;
	int free_dims = 0;

	if (nnodes <= 0)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Invalid argument nnodes, value is %d but must be positive", nnodes);
	if (ndims < 0)
		return mpii_err(NULL, MPI_ERR_DIMS, fn, "Invalid argument ndims, value is %d", ndims);
	if (ndims > 0 && !dims)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Null pointer in parameter dims");
	for (int i = 0; i < ndims; i++) {
		if (dims[i] < 0)
			return mpii_err(NULL, MPI_ERR_DIMS, fn, "dims[%d] is %d: the dimensions must be nonnegative", i,
					dims[i]);
		if (dims[i] == 0)
			free_dims++;
		else if ((fixed *= dims[i]) > nnodes)
			break;
	}
	if (fixed > nnodes || nnodes % fixed || (free_dims == 0 && fixed != nnodes))
		return mpii_err(NULL, MPI_ERR_DIMS, fn, "The dimensions given cannot make a grid of %d nodes", nnodes);
	if (free_dims == 0)
		return MPI_SUCCESS;
	struct dims_search s = { free_dims, malloc(2 * (size_t)free_dims * sizeof(int)), NULL, 0, 0, NULL, 0 };
	if (!s.cur || (s.ndiv = divisors(nnodes / fixed, &s.div)) < 0) {
		free(s.cur);
		return mpii_err(NULL, MPI_ERR_NO_MEM, fn, "no memory");
	}
	s.best = s.cur + free_dims;
	dims_search(&s, 0, nnodes / fixed, 0);
	for (int i = 0, j = 0; i < ndims; i++)
		if (dims[i] == 0)
			dims[i] = s.best[j++];
	free(s.cur);
	free(s.div);
	return MPI_SUCCESS;
}

/* --- Cartesian communicators ---------------------------------------------------------------------- */

/* The Cartesian communicator behind comm, or NULL with the error reported. */
static struct mpi_comm *cart_arg(MPI_Comm comm, const char *fn, int *err)
{
	struct mpi_comm *c;

	if ((*err = mpii_check_comm(comm, fn, &c)))
		return NULL;
	if (!c->topo) {
		*err = mpii_err(c, MPI_ERR_TOPOLOGY, fn, "The communicator has no Cartesian topology");
		return NULL;
	}
	return c;
}

/* The coordinates of rank r. */
static void coords_of(const struct mpi_topo *t, int r, int *coords)
{
	for (int i = t->ndims - 1; i >= 0; i--) {
		coords[i] = r % t->dims[i];
		r /= t->dims[i];
	}
}

int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
		    MPI_Comm *comm_cart)
{
	static const char fn[] = "MPI_Cart_create";
	struct mpi_comm *c, *nc;
	long n = 1;
	int err;

	(void)reorder;
	if ((err = mpii_check_comm(comm_old, fn, &c)))
		return err;
	if (mpii_comm_inter(c))
		return mpii_err(c, MPI_ERR_COMM, fn, "An intercommunicator cannot have a topology");
	if (ndims < 0)
		return mpii_err(c, MPI_ERR_DIMS, fn, "Invalid argument ndims, value is %d", ndims);
	if ((ndims > 0 && (!dims || !periods)) || !comm_cart)
		return mpii_err(c, MPI_ERR_ARG, fn, "Null pointer in parameter %s",
				!comm_cart ? "comm_cart" : !dims ? "dims" : "periods");
	for (int i = 0; i < ndims; i++) {
		if (dims[i] <= 0)
			return mpii_err(c, MPI_ERR_DIMS, fn, "dims[%d] is %d: the dimensions must be positive", i, dims[i]);
		if ((n *= dims[i]) > c->size)
			break;
	}
	if (n > c->size)
		return mpii_err(c, MPI_ERR_ARG, fn, "The grid needs more than the communicator's %d processes", c->size);
	/* The grid is the first n ranks; a grid of no dimension is one point (MPICH's topo/cartzero). */
	struct mpi_topo *t = topo_new(ndims, dims, periods);
	struct mpi_group *g = t ? mpii_group_new((int)n, c->group->world) : NULL;
	*comm_cart = MPI_COMM_NULL;
	err = g ? mpii_comm_create_from(c, g, &nc) : mpii_errcode(MPI_ERR_NO_MEM, fn, "no memory for a topology");
	mpii_group_unref(g);
	if (err == MPI_SUCCESS && nc) {
		nc->topo = t;
		*comm_cart = nc->handle;
	} else if (t) {
		mpii_topo_unref(t);
	}
	return err ? mpii_err_raise(c, err) : MPI_SUCCESS;
}

int MPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
	static const char fn[] = "MPI_Cartdim_get";
	int err;
	struct mpi_comm *c = cart_arg(comm, fn, &err);

	if (!c)
		return err;
	if (!ndims)
		return mpii_err(c, MPI_ERR_ARG, fn, "Null pointer in parameter ndims");
	*ndims = c->topo->ndims;
	return MPI_SUCCESS;
}

int MPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
	static const char fn[] = "MPI_Cart_get";
	int err;
	struct mpi_comm *c = cart_arg(comm, fn, &err);

	if (!c)
		return err;
	struct mpi_topo *t = c->topo;
	int n = maxdims < t->ndims ? maxdims : t->ndims;
	if (maxdims < 0)
		return mpii_err(c, MPI_ERR_ARG, fn, "Invalid argument maxdims, value is %d", maxdims);
	if (n > 0 && (!dims || !periods || !coords))
		return mpii_err(c, MPI_ERR_ARG, fn, "Null pointer in parameter %s",
				!dims ? "dims" : !periods ? "periods" : "coords");
	int *all = malloc(((size_t)t->ndims + 1) * sizeof *all);
	if (!all)
		return mpii_err(c, MPI_ERR_NO_MEM, fn, "no memory");
	coords_of(t, c->rank, all);
	for (int i = 0; i < n; i++) {
		dims[i] = t->dims[i];
		periods[i] = t->periods[i];
		coords[i] = all[i];
	}
	free(all);
	return MPI_SUCCESS;
}

int MPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
	static const char fn[] = "MPI_Cart_rank";
	int err, r = 0;
	struct mpi_comm *c = cart_arg(comm, fn, &err);

	if (!c)
		return err;
	struct mpi_topo *t = c->topo;
	if ((t->ndims > 0 && !coords) || !rank)
		return mpii_err(c, MPI_ERR_ARG, fn, "Null pointer in parameter %s", rank ? "coords" : "rank");
	for (int i = 0; i < t->ndims; i++) {
		int x = coords[i], d = t->dims[i];
		/* A periodic dimension wraps around (MPI-3.1 §7.5.5); out of any other is an error. */
		if (t->periods[i])
			x = (x % d + d) % d;
		else if (x < 0 || x >= d)
			return mpii_err(c, MPI_ERR_ARG, fn, "Coordinate %d is %d, outside 0..%d of a nonperiodic dimension",
					i, x, d - 1);
		r = r * d + x;
	}
	*rank = r;
	return MPI_SUCCESS;
}

int MPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
	static const char fn[] = "MPI_Cart_coords";
	int err;
	struct mpi_comm *c = cart_arg(comm, fn, &err);

	if (!c)
		return err;
	struct mpi_topo *t = c->topo;
	if (rank < 0 || rank >= c->size)
		return mpii_err(c, MPI_ERR_RANK, fn, "Invalid rank has value %d but must be nonnegative and less than %d",
				rank, c->size);
	if (maxdims < t->ndims)
		return mpii_err(c, MPI_ERR_ARG, fn, "maxdims is %d, less than the %d dimensions", maxdims, t->ndims);
	if (t->ndims > 0 && !coords)
		return mpii_err(c, MPI_ERR_ARG, fn, "Null pointer in parameter coords");
	coords_of(t, rank, coords);
	return MPI_SUCCESS;
}

int MPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest)
{
	static const char fn[] = "MPI_Cart_shift";
	int err;
	struct mpi_comm *c = cart_arg(comm, fn, &err);

	if (!c)
		return err;
	struct mpi_topo *t = c->topo;
	if (direction < 0 || direction >= t->ndims)
		return mpii_err(c, MPI_ERR_ARG, fn, "Invalid direction %d: the grid has %d dimensions", direction,
				t->ndims);
	if (!rank_source || !rank_dest)
		return mpii_err(c, MPI_ERR_ARG, fn, "Null pointer in parameter %s",
				rank_source ? "rank_dest" : "rank_source");
	int *x = malloc((size_t)t->ndims * sizeof *x);
	if (!x)
		return mpii_err(c, MPI_ERR_NO_MEM, fn, "no memory");
	int *out[2] = { rank_source, rank_dest }, d = t->dims[direction];
	for (int k = 0; k < 2; k++) {
		coords_of(t, c->rank, x);
		long v = (long)x[direction] + (k ? disp : -(long)disp);
		if (t->periods[direction]) {
			v = (v % d + d) % d;
		} else if (v < 0 || v >= d) {
			*out[k] = MPI_PROC_NULL;
			continue;
		}
		x[direction] = (int)v;
		int r = 0;
		for (int i = 0; i < t->ndims; i++)
			r = r * t->dims[i] + x[i];
		*out[k] = r;
	}
	free(x);
	return MPI_SUCCESS;
}

int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
	static const char fn[] = "MPI_Cart_sub";
	int err;
	struct mpi_comm *c = cart_arg(comm, fn, &err), *nc;

	if (!c)
		return err;
	struct mpi_topo *t = c->topo;
	if ((t->ndims > 0 && !remain_dims) || !newcomm)
		return mpii_err(c, MPI_ERR_ARG, fn, "Null pointer in parameter %s", newcomm ? "remain_dims" : "newcomm");
	int *x = calloc(2 * ((size_t)t->ndims + 1), sizeof *x), n = 0, color = 0;
	struct mpi_topo *st = NULL;
	if (x) {
		int *sub = x + t->ndims + 1;
		/* The color names the subgrid: the coordinates of the dimensions that go. */
		coords_of(t, c->rank, x);
		for (int i = 0; i < t->ndims; i++) {
			if (remain_dims[i])
				sub[n++] = t->dims[i];
			else
				color = color * t->dims[i] + x[i];
		}
		st = topo_new(n, sub, sub);
		for (int i = 0, j = 0; st && i < t->ndims; i++)
			if (remain_dims[i])
				st->periods[j++] = t->periods[i];
	}
	free(x);
	*newcomm = MPI_COMM_NULL;
	if (!st)
		return mpii_err(c, MPI_ERR_NO_MEM, fn, "no memory for a topology");
	/*
	 * With no dimension left the grid is one point, rank 0, as MPICH has
	 * it (topo/cartsuball: the others get MPI_COMM_NULL).  Ranks keep
	 * their order, which is the subgrid's row-major one.
	 */
	if (n == 0)
		color = c->rank == 0 ? 0 : MPI_UNDEFINED;
	err = mpii_comm_split(c, color, c->rank, &nc);
	if (err == MPI_SUCCESS && nc) {
		nc->topo = st;
		*newcomm = nc->handle;
	} else {
		mpii_topo_unref(st);
	}
	return err ? mpii_err_raise(c, err) : MPI_SUCCESS;
}

int MPI_Topo_test(MPI_Comm comm, int *status)
{
	static const char fn[] = "MPI_Topo_test";
	struct mpi_comm *c;
	int err = mpii_check_comm(comm, fn, &c);

	if (err)
		return err;
	if (!status)
		return mpii_err(c, MPI_ERR_ARG, fn, "Null pointer in parameter status");
	*status = c->topo ? MPI_CART : MPI_UNDEFINED;
	return MPI_SUCCESS;
}
