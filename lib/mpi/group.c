/*
 * Groups (MPI-3.1 §6.3): ordered sets of processes, each named by its
 * world rank (its node id).  A group never changes once made; handles and
 * communicators share it by counting references.  An empty result is
 * always MPI_GROUP_EMPTY itself, as programs compare handles against it
 * (MPICH's group/grouptest).
 *
 * Errors of group calls go to MPI_COMM_WORLD's handler: a group call has
 * no communicator.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/mpi/mpiimpl.h"

static struct mpi_group empty = { 1, 0, MPI_UNDEFINED, NULL };

int mpii_group_init(void)
{
	return mpii_obj_set(NOW_MPI_KGROUP, MPII_INDEX(MPI_GROUP_EMPTY), &empty) < 0 ? MPI_ERR_NO_MEM : MPI_SUCCESS;
}

struct mpi_group *mpii_group_get(MPI_Group h)
{
	return mpii_obj_get(NOW_MPI_KGROUP, h);
}

struct mpi_group *mpii_group_new(int n, const int *world)
{
	if (n == 0)
		return &empty;
	struct mpi_group *g = malloc(sizeof *g);
	int *w = malloc((size_t)n * sizeof *w);
	if (!g || !w) {
		free(g);
		free(w);
		return NULL;
	}
	memcpy(w, world, (size_t)n * sizeof *w);
	g->refs = 1;
	g->size = n;
	g->world = w;
	g->rank = MPI_UNDEFINED;
	for (int i = 0; i < n; i++)
		if (w[i] == mpii_world_rank)
			g->rank = i;
	return g;
}

void mpii_group_ref(struct mpi_group *g)
{
	if (g != &empty)
		__atomic_add_fetch(&g->refs, 1, __ATOMIC_RELAXED);
}

void mpii_group_unref(struct mpi_group *g)
{
	if (!g || g == &empty)
		return;
	if (__atomic_sub_fetch(&g->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		free(g->world);
		free(g);
	}
}

MPI_Group mpii_group_handle(struct mpi_group *g)
{
	if (g == &empty)
		return MPI_GROUP_EMPTY;
	int h = mpii_obj_new(NOW_MPI_KGROUP, g);
	if (h < 0) {
		mpii_group_unref(g);
		return MPI_GROUP_NULL;
	}
	return h;
}

/*
 * The rank in g of every world rank (MPI_UNDEFINED for those not in it):
 * an array of mpii_world_size entries to free, or NULL (no memory).
 */
static int *rank_map(const struct mpi_group *g)
{
	int *m = malloc((size_t)(mpii_world_size > 0 ? mpii_world_size : 1) * sizeof *m);

	if (!m)
		return NULL;
	for (int i = 0; i < mpii_world_size; i++)
		m[i] = MPI_UNDEFINED;
	for (int i = 0; i < g->size; i++)
		m[g->world[i]] = i;
	return m;
}

int mpii_group_compare(const struct mpi_group *a, const struct mpi_group *b)
{
	if (a->size != b->size)
		return MPI_UNEQUAL;
	if (a->size == 0 || memcmp(a->world, b->world, (size_t)a->size * sizeof *a->world) == 0)
		return MPI_IDENT;
	int *m = rank_map(b), r = MPI_SIMILAR;
	if (!m)
		return MPI_UNEQUAL;
	for (int i = 0; i < a->size && r == MPI_SIMILAR; i++)
		if (m[a->world[i]] == MPI_UNDEFINED)
			r = MPI_UNEQUAL;
	free(m);
	return r;
}

/* The group behind h, or NULL with the error reported. */
static struct mpi_group *group_arg(MPI_Group h, const char *fn, int *err)
{
	struct mpi_group *g = mpii_group_get(h);

	if (!g)
		*err = mpii_err(NULL, MPI_ERR_GROUP, fn, h == MPI_GROUP_NULL ? "Null group" : "Invalid group %#x", h);
	return g;
}

/* Hand a new group to the program: *out its handle. */
static int give(struct mpi_group *g, MPI_Group *out, const char *fn)
{
	if (!g)
		return mpii_err(NULL, MPI_ERR_NO_MEM, fn, "no memory for a group");
	*out = mpii_group_handle(g);
	if (*out == MPI_GROUP_NULL)
		return mpii_err(NULL, MPI_ERR_NO_MEM, fn, "no memory for a group handle");
	return MPI_SUCCESS;
}

int MPI_Group_size(MPI_Group group, int *size)
{
	static const char fn[] = "MPI_Group_size";
	int err;
	struct mpi_group *g = group_arg(group, fn, &err);

	if (!g)
		return err;
	if (!size)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Null pointer in parameter size");
	*size = g->size;
	return MPI_SUCCESS;
}

int MPI_Group_rank(MPI_Group group, int *rank)
{
	static const char fn[] = "MPI_Group_rank";
	int err;
	struct mpi_group *g = group_arg(group, fn, &err);

	if (!g)
		return err;
	if (!rank)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Null pointer in parameter rank");
	*rank = g->rank;
	return MPI_SUCCESS;
}

int MPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[])
{
	static const char fn[] = "MPI_Group_translate_ranks";
	int err;
	struct mpi_group *a = group_arg(group1, fn, &err), *b = a ? group_arg(group2, fn, &err) : NULL;

	if (!b)
		return err;
	if (n < 0)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Invalid argument n, value is %d", n);
	if (n > 0 && (!ranks1 || !ranks2))
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Null pointer in parameter %s", ranks1 ? "ranks2" : "ranks1");
	for (int i = 0; i < n; i++)
		if (ranks1[i] != MPI_PROC_NULL && (ranks1[i] < 0 || ranks1[i] >= a->size))
			return mpii_err(NULL, MPI_ERR_RANK, fn,
					"Invalid rank in ranks1[%d] has value %d but must be nonnegative and less than %d",
					i, ranks1[i], a->size);
	int *m = rank_map(b);
	if (!m)
		return mpii_err(NULL, MPI_ERR_NO_MEM, fn, "no memory");
	/* MPI-2.1 errata: MPI_PROC_NULL translates to itself. */
	for (int i = 0; i < n; i++)
		ranks2[i] = ranks1[i] == MPI_PROC_NULL ? MPI_PROC_NULL : m[a->world[ranks1[i]]];
	free(m);
	return MPI_SUCCESS;
}

int MPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
	static const char fn[] = "MPI_Group_compare";
	int err;
	struct mpi_group *a = group_arg(group1, fn, &err), *b = a ? group_arg(group2, fn, &err) : NULL;

	if (!b)
		return err;
	if (!result)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Null pointer in parameter result");
	*result = mpii_group_compare(a, b);
	return MPI_SUCCESS;
}

enum set_op { UNION, INTERSECTION, DIFFERENCE };

/*
 * The set operations (MPI-3.1 §6.3.2): the members of group1 a union
 * keeps (all), an intersection (those in group2) or a difference (those
 * not in group2), then for a union group2's members not in group1, each
 * in its group's order.
 */
static int set_op(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup, enum set_op op, const char *fn)
{
	int err;
	struct mpi_group *a = group_arg(group1, fn, &err), *b = a ? group_arg(group2, fn, &err) : NULL;

	if (!b)
		return err;
	if (!newgroup)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Null pointer in parameter newgroup");
	int *inb = rank_map(b), *ina = rank_map(a), *w = malloc((size_t)(a->size + b->size + 1) * sizeof *w), n = 0;
	struct mpi_group *g = NULL;
	if (inb && ina && w) {
		for (int i = 0; i < a->size; i++) {
			int in = inb[a->world[i]] != MPI_UNDEFINED;
			if (op == UNION || (op == INTERSECTION) == in)
				w[n++] = a->world[i];
		}
		for (int i = 0; op == UNION && i < b->size; i++)
			if (ina[b->world[i]] == MPI_UNDEFINED)
				w[n++] = b->world[i];
		g = mpii_group_new(n, w);
	}
	free(inb);
	free(ina);
	free(w);
	return give(g, newgroup, fn);
}

int MPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
	return set_op(group1, group2, newgroup, UNION, "MPI_Group_union");
}

int MPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
	return set_op(group1, group2, newgroup, INTERSECTION, "MPI_Group_intersection");
}

int MPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
	return set_op(group1, group2, newgroup, DIFFERENCE, "MPI_Group_difference");
}

/*
 * Check a list of n ranks of g (each valid, none twice); mark[] (g->size
 * entries, zeroed) gets 1 for each.
 */
static int check_ranks(const struct mpi_group *g, int n, const int *ranks, char *mark, const char *fn)
{
	for (int i = 0; i < n; i++) {
		if (ranks[i] < 0 || ranks[i] >= g->size)
			return mpii_err(NULL, MPI_ERR_RANK, fn,
					"Invalid rank in ranks[%d] has value %d but must be nonnegative and less than %d",
					i, ranks[i], g->size);
		if (mark[ranks[i]])
			return mpii_err(NULL, MPI_ERR_RANK, fn, "Duplicate rank %d in ranks[%d]", ranks[i], i);
		mark[ranks[i]] = 1;
	}
	return MPI_SUCCESS;
}

static int incl_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup, int incl, const char *fn)
{
	int err;
	struct mpi_group *g = group_arg(group, fn, &err);

	if (!g)
		return err;
	if (n < 0 || n > g->size)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Invalid argument n, value is %d but must be between 0 and %d", n,
				g->size);
	if (n > 0 && !ranks)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Null pointer in parameter ranks");
	if (!newgroup)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Null pointer in parameter newgroup");
	char *mark = calloc((size_t)g->size + 1, 1);
	int *w = malloc(((size_t)g->size + 1) * sizeof *w), k = 0;
	if (!mark || !w) {
		free(mark);
		free(w);
		return mpii_err(NULL, MPI_ERR_NO_MEM, fn, "no memory");
	}
	if ((err = check_ranks(g, n, ranks, mark, fn)) == MPI_SUCCESS) {
		if (incl)
			for (int i = 0; i < n; i++)
				w[k++] = g->world[ranks[i]];
		else
			for (int i = 0; i < g->size; i++)
				if (!mark[i])
					w[k++] = g->world[i];
		err = give(mpii_group_new(k, w), newgroup, fn);
	}
	free(mark);
	free(w);
	return err;
}

int MPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
	return incl_excl(group, n, ranks, newgroup, 1, "MPI_Group_incl");
}

int MPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
	return incl_excl(group, n, ranks, newgroup, 0, "MPI_Group_excl");
}

/*
 * The ranks n triplets (first, last, stride) name (MPI-3.1 §6.3.2), in
 * order, into *out (to free) and *count.  A triplet whose stride does not
 * lead from first towards last names no rank and is an error, as MPICH
 * has it; so is a rank outside g or named twice.
 */
static int expand_ranges(const struct mpi_group *g, int n, int ranges[][3], int **out, int *count, const char *fn)
{
	long total = 0;

	if (n < 0)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Invalid argument n, value is %d", n);
	if (n > 0 && !ranges)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Null pointer in parameter ranges");
	for (int i = 0; i < n; i++) {
		int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
		if (first < 0 || first >= g->size || last < 0 || last >= g->size)
			return mpii_err(NULL, MPI_ERR_RANK, fn,
					"Invalid range %d (%d, %d, %d): its ends must be nonnegative and less than %d", i,
					first, last, stride, g->size);
		if (stride == 0)
			return mpii_err(NULL, MPI_ERR_ARG, fn, "Invalid range %d (%d, %d, %d): the stride is zero", i,
					first, last, stride);
		if ((last - first) / stride < 0)
			return mpii_err(NULL, MPI_ERR_ARG, fn,
					"Invalid range %d (%d, %d, %d): the stride leads away from the last rank", i,
					first, last, stride);
		total += (last - first) / stride + 1;
		if (total > g->size)
			return mpii_err(NULL, MPI_ERR_RANK, fn, "The ranges name more than the group's %d ranks",
					g->size);
	}
	int *r = malloc(((size_t)total + 1) * sizeof *r), k = 0;
	char *mark = calloc((size_t)g->size + 1, 1);
	if (!r || !mark) {
		free(r);
		free(mark);
		return mpii_err(NULL, MPI_ERR_NO_MEM, fn, "no memory");
	}
	for (int i = 0; i < n; i++)
		for (int j = 0; j <= (ranges[i][1] - ranges[i][0]) / ranges[i][2]; j++)
			r[k++] = ranges[i][0] + j * ranges[i][2];
	int err = check_ranks(g, k, r, mark, fn);
	free(mark);
	if (err) {
		free(r);
		return err;
	}
	*out = r;
	*count = k;
	return MPI_SUCCESS;
}

int MPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
	static const char fn[] = "MPI_Group_range_incl";
	int err, *r, k;
	struct mpi_group *g = group_arg(group, fn, &err);

	if (!g)
		return err;
	if (!newgroup)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Null pointer in parameter newgroup");
	if ((err = expand_ranges(g, n, ranges, &r, &k, fn)))
		return err;
	for (int i = 0; i < k; i++)
		r[i] = g->world[r[i]];
	err = give(mpii_group_new(k, r), newgroup, fn);
	free(r);
	return err;
}

int MPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
	static const char fn[] = "MPI_Group_range_excl";
	int err, *r, k;
	struct mpi_group *g = group_arg(group, fn, &err);

	if (!g)
		return err;
	if (!newgroup)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Null pointer in parameter newgroup");
	if ((err = expand_ranges(g, n, ranges, &r, &k, fn)))
		return err;
	err = incl_excl(group, k, r, newgroup, 0, fn);
	free(r);
	return err;
}

int MPI_Group_free(MPI_Group *group)
{
	static const char fn[] = "MPI_Group_free";
	int err;

	if (!group)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "Null pointer in parameter group");
	struct mpi_group *g = group_arg(*group, fn, &err);
	if (!g)
		return err;
	/* MPI_GROUP_EMPTY is predefined: freeing it only clears the program's handle. */
	if (*group != MPI_GROUP_EMPTY) {
		mpii_obj_free(NOW_MPI_KGROUP, *group);
		mpii_group_unref(g);
	}
	*group = MPI_GROUP_NULL;
	return MPI_SUCCESS;
}
