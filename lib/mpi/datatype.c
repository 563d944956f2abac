/*
 * Datatypes (MPI-3.1 chapter 4): the constructors and queries, pack and
 * unpack, external32, and the counts a status holds.
 *
 * Each datatype keeps
 *  - its layout: size, bounds and true bounds, alignment, and whether its
 *    bounds come from MPI-1's MPI_LB/MPI_UB markers or create_resized
 *    (such bounds stick: a type made of it takes them as its own);
 *  - a copy program (struct pnode): runs of bytes, a body repeated at a
 *    stride, sequences of these.  It is built as the type is made,
 *    folding what abuts, so whatever the nesting that made them a
 *    contiguous type is one memcpy and a vector one loop of memcpys;
 *  - its signature (struct snode): the basic elements in pack order, for
 *    MPI_Get_elements and external32;
 *  - what it was made of, for get_envelope and get_contents: the types it
 *    names stay alive as long as it does.
 * Programs and signatures never change once built; a type shares them,
 * by reference count, with the types made of it.
 *
 * A datatype lives while anything holds a reference: the user's handles
 * (its creation and each get_contents that returned it), the types made
 * of it, and pending operations (mpii_type_ref).  MPI_Type_free drops the
 * user's; the handle stays valid for the others until the last goes.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/mpi/mpiimpl.h"

#define IDX(h) MPII_INDEX(h)
#define NTYPES NOW_MPI_NPREDEF_TYPES
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* layout.basic when the data is of no single predefined type, or there is none. */
#define MIXED MPI_DATATYPE_NULL
#define NODATA (-1)

_Static_assert(sizeof(long) == 8 && sizeof(long double) == 16 && sizeof(__WCHAR_TYPE__) == 4,
	       "the predefined types' sizes below are x86-64's");

/* Threads share types (a pending receive unrefs one): counts are atomic. */
static inline void ref_inc(int *r)
{
	__atomic_add_fetch(r, 1, __ATOMIC_RELAXED);
}

static inline int ref_dec(int *r)
{
	return __atomic_sub_fetch(r, 1, __ATOMIC_ACQ_REL);
}

/* Nonzero when a * b or a + b overflows (then *r is not to be used). */
#define MUL_OVF(a, b, r) __builtin_mul_overflow((a), (b), (r))
#define ADD_OVF(a, b, r) __builtin_add_overflow((a), (b), (r))

/* --- the predefined types -------------------------------------------------------------- */

/* How external32 (MPI-3.1 §13.5.2: big endian, fixed sizes) writes an element. */
enum conv {
	X_COPY,		/* the bytes as they are */
	X_SWAP,		/* each part's bytes reversed */
	X_LONG,		/* 8-byte long as 4 bytes */
	X_ULONG,
	X_WCHAR,	/* 4-byte wchar_t as 2 bytes */
	X_LDBL,		/* x87 80-bit extended (16 bytes in memory) as IEEE binary128 */
};

struct predef {
	const char *name;
	uint8_t size, align, ext32, conv;
	uint8_t parts;	/* the complex types have two, converted one by one */
};

#define P(h, size, align, ext32, conv, parts) [IDX(h)] = { #h, size, align, ext32, conv, parts }
static const struct predef predefs[NTYPES] = {
	P(MPI_CHAR, 1, 1, 1, X_COPY, 1),
	P(MPI_SIGNED_CHAR, 1, 1, 1, X_COPY, 1),
	P(MPI_UNSIGNED_CHAR, 1, 1, 1, X_COPY, 1),
	P(MPI_BYTE, 1, 1, 1, X_COPY, 1),
	P(MPI_WCHAR, 4, 4, 2, X_WCHAR, 1),
	P(MPI_SHORT, 2, 2, 2, X_SWAP, 1),
	P(MPI_UNSIGNED_SHORT, 2, 2, 2, X_SWAP, 1),
	P(MPI_INT, 4, 4, 4, X_SWAP, 1),
	P(MPI_UNSIGNED, 4, 4, 4, X_SWAP, 1),
	P(MPI_LONG, 8, 8, 4, X_LONG, 1),
	P(MPI_UNSIGNED_LONG, 8, 8, 4, X_ULONG, 1),
	P(MPI_LONG_LONG_INT, 8, 8, 8, X_SWAP, 1),
	P(MPI_UNSIGNED_LONG_LONG, 8, 8, 8, X_SWAP, 1),
	P(MPI_FLOAT, 4, 4, 4, X_SWAP, 1),
	P(MPI_DOUBLE, 8, 8, 8, X_SWAP, 1),
	P(MPI_LONG_DOUBLE, 16, 16, 16, X_LDBL, 1),
	P(MPI_C_BOOL, 1, 1, 1, X_COPY, 1),
	P(MPI_INT8_T, 1, 1, 1, X_COPY, 1),
	P(MPI_INT16_T, 2, 2, 2, X_SWAP, 1),
	P(MPI_INT32_T, 4, 4, 4, X_SWAP, 1),
	P(MPI_INT64_T, 8, 8, 8, X_SWAP, 1),
	P(MPI_UINT8_T, 1, 1, 1, X_COPY, 1),
	P(MPI_UINT16_T, 2, 2, 2, X_SWAP, 1),
	P(MPI_UINT32_T, 4, 4, 4, X_SWAP, 1),
	P(MPI_UINT64_T, 8, 8, 8, X_SWAP, 1),
	P(MPI_AINT, 8, 8, 8, X_SWAP, 1),
	P(MPI_OFFSET, 8, 8, 8, X_SWAP, 1),
	P(MPI_COUNT, 8, 8, 8, X_SWAP, 1),
	P(MPI_C_COMPLEX, 8, 4, 8, X_SWAP, 2),
	P(MPI_C_DOUBLE_COMPLEX, 16, 8, 16, X_SWAP, 2),
	P(MPI_C_LONG_DOUBLE_COMPLEX, 32, 16, 32, X_LDBL, 2),
	P(MPI_PACKED, 1, 1, 1, X_COPY, 1),
	P(MPI_LB, 0, 1, 0, X_COPY, 1),
	P(MPI_UB, 0, 1, 0, X_COPY, 1),
	/* The pairs are made as structs of their two members (pairs[] below). */
	P(MPI_FLOAT_INT, 0, 0, 0, X_COPY, 1),
	P(MPI_DOUBLE_INT, 0, 0, 0, X_COPY, 1),
	P(MPI_LONG_INT, 0, 0, 0, X_COPY, 1),
	P(MPI_SHORT_INT, 0, 0, 0, X_COPY, 1),
	P(MPI_2INT, 0, 0, 0, X_COPY, 1),
	P(MPI_LONG_DOUBLE_INT, 0, 0, 0, X_COPY, 1),
	P(MPI_CHARACTER, 1, 1, 1, X_COPY, 1),
	P(MPI_LOGICAL, 4, 4, 4, X_SWAP, 1),
	P(MPI_INTEGER, 4, 4, 4, X_SWAP, 1),
	P(MPI_REAL, 4, 4, 4, X_SWAP, 1),
	P(MPI_DOUBLE_PRECISION, 8, 8, 8, X_SWAP, 1),
	P(MPI_COMPLEX, 8, 4, 8, X_SWAP, 2),
	P(MPI_DOUBLE_COMPLEX, 16, 8, 16, X_SWAP, 2),
	P(MPI_2INTEGER, 0, 0, 0, X_COPY, 1),
	P(MPI_2REAL, 0, 0, 0, X_COPY, 1),
	P(MPI_2DOUBLE_PRECISION, 0, 0, 0, X_COPY, 1),
	P(MPI_INTEGER1, 1, 1, 1, X_COPY, 1),
	P(MPI_INTEGER2, 2, 2, 2, X_SWAP, 1),
	P(MPI_INTEGER4, 4, 4, 4, X_SWAP, 1),
	P(MPI_INTEGER8, 8, 8, 8, X_SWAP, 1),
	P(MPI_REAL4, 4, 4, 4, X_SWAP, 1),
	P(MPI_REAL8, 8, 8, 8, X_SWAP, 1),
	P(MPI_COMPLEX8, 8, 4, 8, X_SWAP, 2),
	P(MPI_COMPLEX16, 16, 8, 16, X_SWAP, 2),
	P(MPI_CXX_BOOL, 1, 1, 1, X_COPY, 1),
	P(MPI_CXX_FLOAT_COMPLEX, 8, 4, 8, X_SWAP, 2),
	P(MPI_CXX_DOUBLE_COMPLEX, 16, 8, 16, X_SWAP, 2),
	P(MPI_CXX_LONG_DOUBLE_COMPLEX, 32, 16, 32, X_LDBL, 2),
};
#undef P

/* The pair types of MINLOC and MAXLOC: the C struct of the two (padding included). */
static const struct {
	MPI_Datatype pair, first, second;
} pairs[] = {
	{ MPI_FLOAT_INT, MPI_FLOAT, MPI_INT },
	{ MPI_DOUBLE_INT, MPI_DOUBLE, MPI_INT },
	{ MPI_LONG_INT, MPI_LONG, MPI_INT },
	{ MPI_SHORT_INT, MPI_SHORT, MPI_INT },
	{ MPI_2INT, MPI_INT, MPI_INT },
	{ MPI_LONG_DOUBLE_INT, MPI_LONG_DOUBLE, MPI_INT },
	{ MPI_2INTEGER, MPI_INTEGER, MPI_INTEGER },
	{ MPI_2REAL, MPI_REAL, MPI_REAL },
	{ MPI_2DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION },
};

/* --- copy programs --------------------------------------------------------------------- */

enum { P_RUN, P_RUNS, P_REP, P_SEQ };

struct run {
	MPI_Aint off, len;
};

struct item {
	MPI_Aint disp;
	struct pnode *node;
};

/*
 * Where one element's data lies, in pack order, relative to the
 * element's start.  A node never has zero bytes: a type without data has
 * no program.
 */
struct pnode {
	int refs;
	int kind;
	union {
		struct run run;			/* P_RUN: len bytes at off */
		struct {			/* P_RUNS: each in turn */
			size_t n;
			struct run *v;
		} runs;
		struct {			/* P_REP: cnt bodies, the i-th at off + i * stride */
			MPI_Aint off, stride;
			MPI_Count cnt;
			struct pnode *body;
		} rep;
		struct {			/* P_SEQ: each node in turn, at its disp */
			size_t n;
			struct item *v;
		} seq;
	};
};

static struct pnode *prog_new(int kind)
{
	struct pnode *p = calloc(1, sizeof *p);

	if (p) {
		p->refs = 1;
		p->kind = kind;
	}
	return p;
}

static struct pnode *prog_ref(struct pnode *p)
{
	if (p)
		ref_inc(&p->refs);
	return p;
}

static void prog_unref(struct pnode *p)
{
	if (!p || ref_dec(&p->refs))
		return;
	switch (p->kind) {
	case P_RUNS:
		free(p->runs.v);
		break;
	case P_REP:
		prog_unref(p->rep.body);
		break;
	case P_SEQ:
		for (size_t k = 0; k < p->seq.n; k++)
			prog_unref(p->seq.v[k].node);
		free(p->seq.v);
		break;
	}
	free(p);
}

static struct pnode *prog_run(MPI_Aint off, MPI_Aint len)
{
	struct pnode *p = prog_new(P_RUN);

	if (p) {
		p->run.off = off;
		p->run.len = len;
	}
	return p;
}

/* A loop node taking a new reference of body. */
static struct pnode *prog_loop(MPI_Aint off, MPI_Count cnt, MPI_Aint stride, struct pnode *body)
{
	struct pnode *p = prog_new(P_REP);

	if (p) {
		p->rep.off = off;
		p->rep.cnt = cnt;
		p->rep.stride = stride;
		p->rep.body = prog_ref(body);
	}
	return p;
}

/*
 * cnt >= 1 bodies, the i-th at i * stride: a new reference, or NULL (no
 * memory).  A loop whose bodies tile memory folds into one run, or into
 * the loop it repeats.  The caller has checked that the data's size does
 * not overflow, which bounds the products here.
 */
static struct pnode *prog_rep(MPI_Count cnt, MPI_Aint stride, struct pnode *body)
{
	MPI_Aint span;

	if (cnt == 1)
		return prog_ref(body);
	if (body->kind == P_RUN && body->run.len == stride)
		return prog_run(body->run.off, cnt * stride);
	if (body->kind == P_REP && !MUL_OVF(body->rep.cnt, body->rep.stride, &span) && span == stride)
		return prog_loop(body->rep.off, cnt * body->rep.cnt, body->rep.stride, body->rep.body);
	return prog_loop(0, cnt, stride, body);
}

/* p moved by d bytes: a new reference, or NULL (no memory). */
static struct pnode *prog_shift(struct pnode *p, MPI_Aint d)
{
	struct pnode *s;

	if (d == 0)
		return prog_ref(p);
	if (p->kind == P_RUN)
		return prog_run(p->run.off + d, p->run.len);
	if (p->kind == P_REP)
		return prog_loop(p->rep.off + d, p->rep.cnt, p->rep.stride, p->rep.body);
	s = prog_new(P_SEQ);
	if (s && !(s->seq.v = malloc(sizeof *s->seq.v))) {
		free(s);
		return NULL;
	}
	if (s) {
		s->seq.n = 1;
		s->seq.v[0].disp = d;
		s->seq.v[0].node = prog_ref(p);
	}
	return s;
}

/* Make room for n + 1 elements of esz bytes in *v of capacity *cap: 0, or -1. */
static int grow(void **v, size_t *cap, size_t n, size_t esz)
{
	size_t c;
	void *nv;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 8;
	nv = realloc(*v, c * esz);
	if (!nv)
		return -1;
	*v = nv;
	*cap = c;
	return 0;
}

/* memcpy that takes the NULL arrays MPI allows with a zero count. */
static void copy(void *dst, const void *src, size_t n)
{
	if (n)
		memcpy(dst, src, n);
}

/*
 * A program built block by block (indexed, struct): runs that abut are
 * joined, consecutive runs become one P_RUNS node, the rest a P_SEQ.
 */
struct progb {
	struct run *runs;	/* runs not yet in a node */
	size_t nruns, caprun;
	struct item *items;
	size_t nitems, capitem;
	int nomem;
};

/* Runs of a body this small are copied into the sequence, so that they can join. */
#define FLATTEN_MAX 16

static void progb_run(struct progb *b, MPI_Aint off, MPI_Aint len)
{
	struct run *last = b->nruns ? &b->runs[b->nruns - 1] : NULL;

	if (last && last->off + last->len == off) {
		last->len += len;
		return;
	}
	if (grow((void **)&b->runs, &b->caprun, b->nruns, sizeof *b->runs)) {
		b->nomem = 1;
		return;
	}
	b->runs[b->nruns].off = off;
	b->runs[b->nruns++].len = len;
}

/* Append p (the builder takes the caller's reference; NULL: no memory). */
static void progb_item(struct progb *b, MPI_Aint disp, struct pnode *p)
{
	if (!p || grow((void **)&b->items, &b->capitem, b->nitems, sizeof *b->items)) {
		prog_unref(p);
		b->nomem = 1;
		return;
	}
	b->items[b->nitems].disp = disp;
	b->items[b->nitems++].node = p;
}

static void progb_flush(struct progb *b)
{
	struct pnode *p;

	if (!b->nruns)
		return;
	if (b->nruns == 1) {
		p = prog_run(b->runs[0].off, b->runs[0].len);
	} else if ((p = prog_new(P_RUNS))) {
		struct run *v = realloc(b->runs, b->nruns * sizeof *v);

		p->runs.v = v ? v : b->runs;
		p->runs.n = b->nruns;
		b->runs = NULL;
		b->caprun = 0;
	}
	b->nruns = 0;
	progb_item(b, 0, p);
}

/* A block: cnt bodies at disp, each at stride from the last. */
static void progb_add(struct progb *b, MPI_Aint disp, MPI_Count cnt, MPI_Aint stride, struct pnode *body)
{
	if (body->kind == P_RUN && (cnt == 1 || body->run.len == stride)) {
		progb_run(b, disp + body->run.off, cnt * body->run.len);
		return;
	}
	if (body->kind == P_RUNS && cnt == 1 && body->runs.n <= FLATTEN_MAX) {
		for (size_t k = 0; k < body->runs.n; k++)
			progb_run(b, disp + body->runs.v[k].off, body->runs.v[k].len);
		return;
	}
	progb_flush(b);
	progb_item(b, disp, prog_rep(cnt, stride, body));
}

/* The program, or NULL: nothing added, or no memory (b->nomem). */
static struct pnode *progb_finish(struct progb *b)
{
	struct pnode *p = NULL;

	progb_flush(b);
	free(b->runs);
	if (!b->nomem && b->nitems == 1) {
		p = prog_shift(b->items[0].node, b->items[0].disp);
		b->nomem = !p;
	} else if (!b->nomem && b->nitems > 1 && (p = prog_new(P_SEQ))) {
		struct item *v = realloc(b->items, b->nitems * sizeof *v);

		p->seq.v = v ? v : b->items;
		p->seq.n = b->nitems;
		return p;
	} else if (b->nitems > 1) {
		b->nomem = 1;
	}
	for (size_t k = 0; k < b->nitems; k++)
		prog_unref(b->items[k].node);
	free(b->items);
	return p;
}

/* --- signatures ------------------------------------------------------------------------ */

enum { S_BASIC, S_REP, S_SEQ };

/* The basic elements of one element of a type, in pack order. */
struct snode {
	int refs;
	int kind;
	int t;			/* S_BASIC: the element type's index (never a pair) */
	MPI_Count n;		/* S_BASIC: elements; S_REP: repetitions; S_SEQ: nodes */
	MPI_Count bytes;	/* the whole node's: native bytes, */
	MPI_Count ext32;	/* external32 bytes, */
	MPI_Count nel;		/* basic elements */
	struct snode *body;	/* S_REP */
	struct snode **v;	/* S_SEQ */
};

static struct snode *sig_new(int kind)
{
	struct snode *s = calloc(1, sizeof *s);

	if (s) {
		s->refs = 1;
		s->kind = kind;
	}
	return s;
}

static struct snode *sig_ref(struct snode *s)
{
	if (s)
		ref_inc(&s->refs);
	return s;
}

static void sig_unref(struct snode *s)
{
	if (!s || ref_dec(&s->refs))
		return;
	if (s->kind == S_REP)
		sig_unref(s->body);
	if (s->kind == S_SEQ) {
		for (MPI_Count k = 0; k < s->n; k++)
			sig_unref(s->v[k]);
		free(s->v);
	}
	free(s);
}

static struct snode *sig_basic(int t, MPI_Count n)
{
	struct snode *s = sig_new(S_BASIC);

	if (s) {
		s->t = t;
		s->n = n;
		s->bytes = n * predefs[t].size;
		s->ext32 = n * predefs[t].ext32;
		s->nel = n;
	}
	return s;
}

/* cnt >= 1 times body: a new reference, or NULL (no memory).  Sizes checked by the caller. */
static struct snode *sig_rep(MPI_Count cnt, struct snode *body)
{
	struct snode *s;

	if (cnt == 1)
		return sig_ref(body);
	if (body->kind == S_BASIC)
		return sig_basic(body->t, cnt * body->n);
	if (body->kind == S_REP) {
		cnt *= body->n;
		body = body->body;
	}
	s = sig_new(S_REP);
	if (s) {
		s->n = cnt;
		s->body = sig_ref(body);
		s->bytes = cnt * body->bytes;
		s->ext32 = cnt * body->ext32;
		s->nel = cnt * body->nel;
	}
	return s;
}

/* A signature built block by block: runs of one basic type join. */
struct sigb {
	int t;			/* basic elements not yet in a node: n of type t */
	MPI_Count n;
	struct snode **v;
	size_t nv, cap;
	int nomem;
};

static void sigb_node(struct sigb *b, struct snode *s)
{
	if (!s || grow((void **)&b->v, &b->cap, b->nv, sizeof *b->v)) {
		sig_unref(s);
		b->nomem = 1;
		return;
	}
	b->v[b->nv++] = s;
}

static void sigb_flush(struct sigb *b)
{
	if (b->n)
		sigb_node(b, sig_basic(b->t, b->n));
	b->n = 0;
}

static void sigb_add(struct sigb *b, MPI_Count cnt, struct snode *s)
{
	if (s->kind == S_BASIC) {
		if (b->n && b->t != s->t)
			sigb_flush(b);
		b->t = s->t;
		b->n += cnt * s->n;
		return;
	}
	if (s->kind == S_SEQ && cnt == 1 && s->n <= FLATTEN_MAX) {
		for (MPI_Count k = 0; k < s->n; k++)
			sigb_add(b, 1, s->v[k]);
		return;
	}
	sigb_flush(b);
	sigb_node(b, sig_rep(cnt, s));
}

/* The signature, or NULL: nothing added, or no memory (b->nomem). */
static struct snode *sigb_finish(struct sigb *b)
{
	struct snode *s = NULL;

	sigb_flush(b);
	if (!b->nomem && b->nv == 1) {
		s = b->v[0];
		b->nv = 0;
	} else if (!b->nomem && b->nv > 1 && (s = sig_new(S_SEQ))) {
		struct snode **v = realloc(b->v, b->nv * sizeof *v);

		s->v = v ? v : b->v;
		s->n = b->nv;
		for (size_t k = 0; k < b->nv; k++) {
			s->bytes += s->v[k]->bytes;
			s->ext32 += s->v[k]->ext32;
			s->nel += s->v[k]->nel;
		}
		return s;
	} else if (b->nv > 1) {
		b->nomem = 1;
	}
	for (size_t k = 0; k < b->nv; k++)
		sig_unref(b->v[k]);
	free(b->v);
	return s;
}

/* --- layouts --------------------------------------------------------------------------- */

struct layout {
	MPI_Count size;		/* bytes of data */
	MPI_Count nel;		/* basic elements */
	MPI_Count ext32;	/* bytes in external32 */
	MPI_Aint lb, ub;
	MPI_Aint tlb, tub;	/* true bounds: of the data alone (0, 0 without data) */
	int has_lb, has_ub;	/* bounds set by a marker or create_resized: they stick */
	int align;		/* the struct padding's (MPI-3.1 §4.1.6) */
	MPI_Datatype basic;	/* the one predefined type of the data, MIXED or NODATA */
	struct pnode *prog;	/* NULL when there is no data */
	struct snode *sig;
};

static void lay_empty(struct layout *l, int align)
{
	memset(l, 0, sizeof *l);
	l->align = align;
	l->basic = NODATA;
}

static void lay_release(struct layout *l)
{
	prog_unref(l->prog);
	sig_unref(l->sig);
	l->prog = NULL;
	l->sig = NULL;
}

static void lay_copy(struct layout *d, const struct layout *s)
{
	*d = *s;
	prog_ref(d->prog);
	sig_ref(d->sig);
}

static MPI_Datatype basic_join(MPI_Datatype a, MPI_Datatype b)
{
	if (a == NODATA)
		return b;
	return a == b ? a : MIXED;
}

/*
 * The bounds of a type as copies of its parts are placed: the true
 * bounds are those of the data; lb and ub are the markers' where a part
 * has them (MPI-1: the least LB marker, the greatest UB marker), else the
 * data's least lb and greatest ub.
 */
struct bounds {
	int ovf;
	int tl, tu, lbm, ubm, el, eu;	/* which of the values below are set */
	MPI_Aint tlb, tub, lb, ub, elb, eub;
};

static void lower(int *set, MPI_Aint *v, MPI_Aint x)
{
	if (!*set || x < *v)
		*v = x;
	*set = 1;
}

static void upper(int *set, MPI_Aint *v, MPI_Aint x)
{
	if (!*set || x > *v)
		*v = x;
	*set = 1;
}

static MPI_Aint add_b(struct bounds *b, MPI_Aint x, MPI_Aint y)
{
	MPI_Aint r = 0;

	if (ADD_OVF(x, y, &r))
		b->ovf = 1;
	return r;
}

/* Copies of c at displacements from pmin to pmax bytes. */
static void bounds_add(struct bounds *b, const struct layout *c, MPI_Aint pmin, MPI_Aint pmax)
{
	if (c->size > 0) {
		lower(&b->tl, &b->tlb, add_b(b, pmin, c->tlb));
		upper(&b->tu, &b->tub, add_b(b, pmax, c->tub));
		if (!c->has_lb)
			lower(&b->el, &b->elb, add_b(b, pmin, c->lb));
		if (!c->has_ub)
			upper(&b->eu, &b->eub, add_b(b, pmax, c->ub));
	}
	if (c->has_lb)
		lower(&b->lbm, &b->lb, add_b(b, pmin, c->lb));
	if (c->has_ub)
		upper(&b->ubm, &b->ub, add_b(b, pmax, c->ub));
}

/*
 * Set l's bounds; a struct without markers has its extent padded to its
 * alignment, as the C compiler pads a struct (MPI-3.1 §4.1.6).
 * MPI_SUCCESS or MPI_ERR_ARG (the displacements overflow).
 */
static int bounds_finish(struct bounds *b, struct layout *l, int pad)
{
	l->tlb = b->tl ? b->tlb : 0;
	l->tub = b->tu ? b->tub : 0;
	l->has_lb = b->lbm;
	l->has_ub = b->ubm;
	l->lb = b->lbm ? b->lb : b->el ? b->elb : 0;
	l->ub = b->ubm ? b->ub : b->eu ? b->eub : 0;
	if (pad && !b->lbm && !b->ubm && l->align > 1) {
		MPI_Aint r = (l->ub - l->lb) % l->align;

		if (r)
			l->ub = add_b(b, l->ub, l->align - r);
	}
	return b->ovf ? MPI_ERR_ARG : MPI_SUCCESS;
}

/*
 * count blocks of blocklen copies of c (each at c's extent from the
 * last), block i at i * stride bytes: contiguous, vector, hvector.
 * MPI_SUCCESS, MPI_ERR_ARG (overflow) or MPI_ERR_NO_MEM.
 */
static int lay_vector(struct layout *l, const struct layout *c, MPI_Count count, MPI_Count blocklen,
		      MPI_Aint stride)
{
	struct bounds b = { 0 };
	MPI_Aint cext = c->ub - c->lb, span, bspan;
	MPI_Count n;
	struct pnode *in;

	lay_empty(l, c->align);
	if (count == 0 || blocklen == 0)
		return MPI_SUCCESS;
	if (MUL_OVF(count, blocklen, &n) || MUL_OVF(n, c->size, &l->size) || MUL_OVF(n, c->nel, &l->nel) ||
	    MUL_OVF(n, c->ext32, &l->ext32) || MUL_OVF(count - 1, stride, &span) ||
	    MUL_OVF(blocklen - 1, cext, &bspan))
		return MPI_ERR_ARG;
	bounds_add(&b, c, add_b(&b, MIN(span, 0), MIN(bspan, 0)), add_b(&b, MAX(span, 0), MAX(bspan, 0)));
	if (bounds_finish(&b, l, 0))
		return MPI_ERR_ARG;
	if (!c->size)
		return MPI_SUCCESS;
	l->basic = c->basic;
	in = prog_rep(blocklen, cext, c->prog);
	l->prog = in ? prog_rep(count, stride, in) : NULL;
	prog_unref(in);
	l->sig = sig_rep(n, c->sig);
	if (!l->prog || !l->sig) {
		lay_release(l);
		return MPI_ERR_NO_MEM;
	}
	return MPI_SUCCESS;
}

/* The blocks of an indexed type or a struct. */
struct blocks {
	int n;
	const int *len;			/* each block's length, or NULL: ... */
	int blen;			/* ... every block's */
	const int *idisp;		/* displacements in extents of one, or NULL: ... */
	const MPI_Aint *adisp;		/* ... in bytes */
	const struct layout *one;	/* the type of every block, or NULL: ... */
	const struct layout **lays;	/* ... of each */
	int is_struct;			/* pad the extent to the alignment */
};

/* MPI_SUCCESS, MPI_ERR_ARG (overflow) or MPI_ERR_NO_MEM. */
static int lay_blocks(struct layout *l, const struct blocks *bk)
{
	struct bounds b = { 0 };
	struct progb pb = { 0 };
	struct sigb sb = { 0 };
	int err;

	lay_empty(l, bk->one ? bk->one->align : 1);
	for (int k = 0; k < bk->n; k++) {
		MPI_Count len = bk->len ? bk->len[k] : bk->blen, v;
		const struct layout *c = bk->one ? bk->one : bk->lays[k];
		MPI_Aint cext = c->ub - c->lb, d = 0, span = 0;

		if (len == 0)
			continue;
		if (bk->adisp)
			d = bk->adisp[k];
		else if (MUL_OVF((MPI_Aint)bk->idisp[k], cext, &d))
			b.ovf = 1;
		if (MUL_OVF(len - 1, cext, &span) || MUL_OVF(len, c->size, &v) || ADD_OVF(l->size, v, &l->size) ||
		    MUL_OVF(len, c->nel, &v) || ADD_OVF(l->nel, v, &l->nel) || MUL_OVF(len, c->ext32, &v) ||
		    ADD_OVF(l->ext32, v, &l->ext32))
			b.ovf = 1;
		bounds_add(&b, c, add_b(&b, d, MIN(span, 0)), add_b(&b, d, MAX(span, 0)));
		if (bk->is_struct && c->align > l->align)
			l->align = c->align;
		if (c->size && !b.ovf) {
			l->basic = basic_join(l->basic, c->basic);
			progb_add(&pb, d, len, cext, c->prog);
			sigb_add(&sb, len, c->sig);
		}
	}
	err = bounds_finish(&b, l, bk->is_struct);
	l->prog = progb_finish(&pb);
	l->sig = sigb_finish(&sb);
	if (!err && (pb.nomem || sb.nomem))
		err = MPI_ERR_NO_MEM;
	if (err)
		lay_release(l);
	return err;
}

/* c placed at d bytes. */
static int lay_place(struct layout *l, const struct layout *c, MPI_Aint d)
{
	struct blocks bk = { .n = 1, .blen = 1, .adisp = &d, .one = c };

	return lay_blocks(l, &bk);
}

static int lay_resized(struct layout *l, const struct layout *c, MPI_Aint lb, MPI_Aint extent)
{
	lay_copy(l, c);
	l->lb = lb;
	l->has_lb = l->has_ub = 1;
	if (ADD_OVF(lb, extent, &l->ub)) {
		lay_release(l);
		return MPI_ERR_ARG;
	}
	return MPI_SUCCESS;
}

/*
 * A subarray (MPI-3.1 §4.1.3): the subsizes block of the sizes array
 * starting at starts, nested from the fastest dimension out, placed at
 * its start and given the whole array's bounds.
 */
static int lay_subarray(struct layout *l, int nd, const int *sizes, const int *subsizes, const int *starts,
			int order, const struct layout *old)
{
	struct layout cur, next;
	MPI_Aint full, disp, v;
	int step = order == MPI_ORDER_C ? -1 : 1, k = order == MPI_ORDER_C ? nd - 1 : 0, err;

	if ((err = lay_vector(&cur, old, 1, subsizes[k], 0)))
		return err;
	if (MUL_OVF((MPI_Aint)sizes[k], old->ub - old->lb, &full) ||
	    MUL_OVF((MPI_Aint)starts[k], old->ub - old->lb, &disp))
		goto overflow;
	for (int i = 1; i < nd; i++) {
		k += step;
		err = lay_vector(&next, &cur, subsizes[k], 1, full);
		lay_release(&cur);
		if (err)
			return err;
		cur = next;
		if (MUL_OVF((MPI_Aint)starts[k], full, &v) || ADD_OVF(disp, v, &disp) ||
		    MUL_OVF(full, (MPI_Aint)sizes[k], &full))
			goto overflow;
	}
	err = lay_place(&next, &cur, disp);
	lay_release(&cur);
	if (err)
		return err;
	err = lay_resized(l, &next, 0, full);
	lay_release(&next);
	return err;
overflow:
	lay_release(&cur);
	return MPI_ERR_ARG;
}

/*
 * One dimension of a darray (MPI-3.1 §4.1.4, cyclic()): of gsize
 * elements of c dealt to p processes in blocks of k, those of process r;
 * bounds 0 and gsize elements.
 */
static int lay_cyclic(struct layout *l, const struct layout *c, MPI_Count k, MPI_Count gsize, MPI_Count r,
		      MPI_Count p)
{
	MPI_Aint cext = c->ub - c->lb, full, stride, at;
	MPI_Count first = r * k, period = p * k, nb, last;
	struct layout own, whole, tail;
	const struct layout *lays[2] = { &whole, &tail };
	MPI_Aint disp[2];
	struct blocks bk = { .blen = 1, .adisp = disp, .lays = lays };
	int err;

	if (MUL_OVF(gsize, cext, &full))
		return MPI_ERR_ARG;
	if (first >= gsize) {
		lay_empty(&own, c->align);
	} else {
		nb = (gsize - first + period - 1) / period;
		last = MIN(k, gsize - first - (nb - 1) * period);
		if (MUL_OVF(period, cext, &stride) || MUL_OVF(first, cext, &at) ||
		    MUL_OVF(nb - 1, stride, &disp[1]) || ADD_OVF(disp[1], at, &disp[1]))
			return MPI_ERR_ARG;
		disp[0] = at;
		if ((err = lay_vector(&whole, c, last == k ? nb : nb - 1, k, stride)))
			return err;
		if ((err = lay_vector(&tail, c, last == k ? 0 : 1, last, 0))) {
			lay_release(&whole);
			return err;
		}
		bk.n = last == k ? 1 : 2;
		err = lay_blocks(&own, &bk);
		lay_release(&whole);
		lay_release(&tail);
		if (err)
			return err;
	}
	err = lay_resized(l, &own, 0, full);
	lay_release(&own);
	return err;
}

/* A darray (MPI-3.1 §4.1.4): arguments checked by the caller. */
static int lay_darray(struct layout *l, int rank, int nd, const int *gsizes, const int *distribs,
		      const int *dargs, const int *psizes, int order, const struct layout *old)
{
	struct layout cur, next;
	int err;

	lay_copy(&cur, old);
	for (int i = 0; i < nd; i++) {
		int d = order == MPI_ORDER_C ? nd - 1 - i : i, after = 1;
		MPI_Count k, r, p = psizes[d];

		/* Processes are numbered row-major in their grid whatever the order. */
		for (int j = d + 1; j < nd; j++)
			after *= psizes[j];
		r = rank / after % psizes[d];
		if (distribs[d] == MPI_DISTRIBUTE_NONE) {
			k = gsizes[d];
			r = 0;
			p = 1;
		} else if (distribs[d] == MPI_DISTRIBUTE_BLOCK) {
			k = dargs[d] == MPI_DISTRIBUTE_DFLT_DARG ? (gsizes[d] + p - 1) / p : dargs[d];
		} else {
			k = dargs[d] == MPI_DISTRIBUTE_DFLT_DARG ? 1 : dargs[d];
		}
		err = lay_cyclic(&next, &cur, k, gsizes[d], r, p);
		lay_release(&cur);
		if (err)
			return err;
		cur = next;
	}
	*l = cur;
	return MPI_SUCCESS;
}

/* --- the objects ----------------------------------------------------------------------- */

struct mpi_type {
	int refs;		/* the user's handles, the types made of it, pending operations */
	int handles;		/* the user's: its creation and each get_contents that returned it */
	MPI_Datatype h;
	int predefined;
	int committed;
	struct layout l;
	int combiner;		/* what it was made of (get_contents) */
	int ni, na, nd;
	int *ints;
	MPI_Aint *addrs;
	MPI_Datatype *types;
	char name[MPI_MAX_OBJECT_NAME];
	struct mpi_attr *attrs;
};

static struct mpi_type predef[NTYPES];
uint8_t mpii_plain[NTYPES];

/* Any live type, freed by the user or not (the internal calls' view). */
static struct mpi_type *tobj(MPI_Datatype h)
{
	return mpii_obj_get(NOW_MPI_KTYPE, h);
}

/* A type the user holds a handle of. */
static struct mpi_type *tget(MPI_Datatype h)
{
	struct mpi_type *t = tobj(h);

	return t && __atomic_load_n(&t->handles, __ATOMIC_RELAXED) > 0 ? t : NULL;
}

static void type_unref(struct mpi_type *t);

static void type_destroy(struct mpi_type *t)
{
	for (int k = 0; k < t->nd; k++)
		type_unref(tobj(t->types[k]));
	lay_release(&t->l);
	mpii_obj_free(NOW_MPI_KTYPE, t->h);
	free(t);
}

static void type_unref(struct mpi_type *t)
{
	if (t && !t->predefined && ref_dec(&t->refs) == 0)
		type_destroy(t);
}

static void type_ref(struct mpi_type *t)
{
	if (t && !t->predefined)
		ref_inc(&t->refs);
}

/* A new type with room for its contents, or NULL. */
static struct mpi_type *type_new(int ni, int na, int nd)
{
	struct mpi_type *t = calloc(1, sizeof *t + na * sizeof(MPI_Aint) + ni * sizeof(int) +
					       nd * sizeof(MPI_Datatype));

	if (!t)
		return NULL;
	t->addrs = (MPI_Aint *)(t + 1);
	t->ints = (int *)(t->addrs + na);
	t->types = (MPI_Datatype *)(t->ints + ni);
	t->ni = ni;
	t->na = na;
	t->nd = nd;
	return t;
}

static int lay_err(const char *fn, int err)
{
	return mpii_err(NULL, err, fn, "%s",
			err == MPI_ERR_NO_MEM ? "out of memory" : "the type's size or displacements overflow");
}

/*
 * Give t (its contents filled) the layout l and a handle in *out; the
 * types its contents name are kept alive with it.  On failure l and t
 * are released.
 */
static int type_publish(const char *fn, struct mpi_type *t, struct layout *l, int combiner, MPI_Datatype *out)
{
	int h;

	if (!t) {
		lay_release(l);
		return lay_err(fn, MPI_ERR_NO_MEM);
	}
	t->l = *l;
	t->combiner = combiner;
	t->refs = t->handles = 1;
	h = mpii_obj_new(NOW_MPI_KTYPE, t);
	if (h < 0) {
		lay_release(&t->l);
		free(t);
		return lay_err(fn, MPI_ERR_NO_MEM);
	}
	t->h = h;
	for (int k = 0; k < t->nd; k++)
		type_ref(tobj(t->types[k]));
	*out = h;
	return MPI_SUCCESS;
}

static int predef_build(void)
{
	for (int i = 1; i < NTYPES; i++) {
		struct mpi_type *t = &predef[i];
		const struct predef *p = &predefs[i];

		t->refs = t->handles = 1;
		t->h = NOW_MPI_H(NOW_MPI_KTYPE, i);
		t->predefined = t->committed = 1;
		t->combiner = MPI_COMBINER_NAMED;
		strcpy(t->name, p->name);
		lay_empty(&t->l, p->align);
		t->l.has_lb = t->h == MPI_LB;
		t->l.has_ub = t->h == MPI_UB;
		if (!p->size)
			continue;
		t->l.size = t->l.ub = t->l.tub = p->size;
		t->l.nel = 1;
		t->l.ext32 = p->ext32;
		t->l.basic = t->h;
		t->l.prog = prog_run(0, p->size);
		t->l.sig = sig_basic(i, 1);
		if (!t->l.prog || !t->l.sig)
			return MPI_ERR_NO_MEM;
	}
	for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
		const struct layout *a = &predef[IDX(pairs[i].first)].l, *b = &predef[IDX(pairs[i].second)].l;
		const struct layout *lays[2] = { a, b };
		MPI_Aint disp[2] = { 0, (a->size + b->align - 1) / b->align * b->align };
		struct blocks bk = { .n = 2, .blen = 1, .adisp = disp, .lays = lays, .is_struct = 1 };
		struct mpi_type *t = &predef[IDX(pairs[i].pair)];

		if (lay_blocks(&t->l, &bk))
			return MPI_ERR_NO_MEM;
		t->l.basic = t->h;
	}
	return MPI_SUCCESS;
}

/* --- pack and unpack ------------------------------------------------------------------- */

/* The packed stream as the program walks the memory. */
struct cursor {
	char *pk;
	size_t left;	/* bytes of the stream still to move */
	int unpack;
	struct runlist *rl;	/* mpii_type_runs: list the runs, move nothing */
};

struct runlist {
	struct mpii_run *v;
	size_t n, cap;
	int nomem;
};

/* One more run of the stream at offset mem (walked from address 0); joined to the last if they touch. */
static void runs_add(struct runlist *rl, const char *mem, size_t len)
{
	MPI_Aint off = (MPI_Aint)(intptr_t)mem;
	struct mpii_run *last = rl->n ? &rl->v[rl->n - 1] : NULL;

	if (last && last->off + (MPI_Aint)last->len == off) {
		last->len += len;
		return;
	}
	if (grow((void **)&rl->v, &rl->cap, rl->n, sizeof *rl->v) < 0) {
		rl->nomem = 1;
		return;
	}
	rl->v[rl->n++] = (struct mpii_run){ off, len };
}

/* Pointer plus displacement, as addresses: MPI_BOTTOM is NULL, and displacements go below a buffer. */
static inline char *at(const void *base, MPI_Aint d)
{
	return (char *)((uintptr_t)base + (uintptr_t)d);
}

/* n pieces of len bytes, the i-th at src + i * sstep, to dst + i * dstep. */
static inline void copy_strided(char *dst, MPI_Aint dstep, const char *src, MPI_Aint sstep, MPI_Count n,
				size_t len)
{
	/* The common element sizes as fixed-size copies: a move each, not a call. */
	switch (len) {
	case 4:
		for (MPI_Count i = 0; i < n; i++)
			memcpy(at(dst, i * dstep), at(src, i * sstep), 4);
		break;
	case 8:
		for (MPI_Count i = 0; i < n; i++)
			memcpy(at(dst, i * dstep), at(src, i * sstep), 8);
		break;
	case 16:
		for (MPI_Count i = 0; i < n; i++)
			memcpy(at(dst, i * dstep), at(src, i * sstep), 16);
		break;
	default:
		for (MPI_Count i = 0; i < n; i++)
			memcpy(at(dst, i * dstep), at(src, i * sstep), len);
	}
}

/* cnt runs of len bytes, the i-th at mem + i * stride.  1 when the stream has ended. */
static int walk_runs(struct cursor *c, char *mem, MPI_Count cnt, MPI_Aint stride, size_t len)
{
	MPI_Count whole;
	size_t n;

	if (stride == (MPI_Aint)len) {
		len *= cnt;
		cnt = 1;
	}
	whole = MIN(cnt, (MPI_Count)(c->left / len));
	if (c->rl)
		for (MPI_Count i = 0; i < whole && !c->rl->nomem; i++)
			runs_add(c->rl, at(mem, i * stride), len);
	else if (c->unpack)
		copy_strided(mem, stride, c->pk, len, whole, len);
	else
		copy_strided(c->pk, len, mem, stride, whole, len);
	c->pk += whole * len;
	c->left -= whole * len;
	if (whole == cnt)
		return c->left == 0;
	n = c->left;
	if (c->rl)
		runs_add(c->rl, at(mem, whole * stride), n);
	else if (c->unpack)
		memcpy(at(mem, whole * stride), c->pk, n);
	else
		memcpy(c->pk, at(mem, whole * stride), n);
	c->pk += n;
	c->left = 0;
	return 1;
}

static int walk(struct cursor *c, const struct pnode *p, char *base);

static int walk_rep(struct cursor *c, char *mem, MPI_Count cnt, MPI_Aint stride, const struct pnode *body)
{
	if (body->kind == P_RUN)
		return walk_runs(c, at(mem, body->run.off), cnt, stride, body->run.len);
	for (MPI_Count i = 0; i < cnt; i++)
		if (walk(c, body, at(mem, i * stride)))
			return 1;
	return 0;
}

/* Move one element's data at base by p.  1 when the stream has ended. */
static int walk(struct cursor *c, const struct pnode *p, char *base)
{
	switch (p->kind) {
	case P_RUN:
		return walk_runs(c, at(base, p->run.off), 1, 0, p->run.len);
	case P_RUNS:
		for (size_t k = 0; k < p->runs.n; k++)
			if (walk_runs(c, at(base, p->runs.v[k].off), 1, 0, p->runs.v[k].len))
				return 1;
		return 0;
	case P_REP:
		return walk_rep(c, at(base, p->rep.off), p->rep.cnt, p->rep.stride, p->rep.body);
	default:
		for (size_t k = 0; k < p->seq.n; k++)
			if (walk(c, p->seq.v[k].node, at(base, p->seq.v[k].disp)))
				return 1;
		return 0;
	}
}

void mpii_pack(const void *buf, int count, MPI_Datatype dt, void *out)
{
	const struct layout *l = &tobj(dt)->l;
	struct cursor c = { out, (size_t)count * l->size, 0, NULL };

	if (count > 0 && l->size)
		walk_rep(&c, (char *)buf, count, l->ub - l->lb, l->prog);
}

void mpii_unpack(const void *in, size_t n, void *buf, int count, MPI_Datatype dt)
{
	const struct layout *l = &tobj(dt)->l;
	struct cursor c = { (char *)in, MIN(n, (size_t)count * l->size), 1, NULL };

	if (count > 0 && c.left)
		walk_rep(&c, buf, count, l->ub - l->lb, l->prog);
}

int mpii_type_contig(const void *buf, int count, MPI_Datatype dt, const void **start)
{
	const struct layout *l = &tobj(dt)->l;

	if (count <= 0 || !l->size) {
		*start = buf;
		return 1;
	}
	if (l->prog->kind != P_RUN || (count > 1 && l->prog->run.len != l->ub - l->lb))
		return 0;
	*start = at(buf, l->prog->run.off);
	return 1;
}

int mpii_type_runs(int count, MPI_Datatype dt, struct mpii_run **runs, size_t *n)
{
	const struct layout *l = &tobj(dt)->l;
	struct runlist rl = { NULL, 0, 0, 0 };
	struct cursor c = { NULL, (size_t)count * l->size, 0, &rl };

	if (count > 0 && l->size)
		walk_rep(&c, NULL, count, l->ub - l->lb, l->prog);
	if (rl.nomem) {
		free(rl.v);
		return -1;
	}
	*runs = rl.v;
	*n = rl.n;
	return 0;
}

/* --- external32 ------------------------------------------------------------------------ */

static void store_be(unsigned char *p, uint64_t v, int n)
{
	for (int i = n - 1; i >= 0; i--, v >>= 8)
		p[i] = (unsigned char)v;
}

static uint64_t load_be(const unsigned char *p, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

/*
 * x87 extended (64-bit significand with its integer bit, 15-bit
 * exponent, sign) and binary128 (112-bit fraction, the same exponent and
 * bias): the fraction moves to the top, the integer bit is implied.
 */
static void ldbl_to_quad(unsigned char *q, const unsigned char *x)
{
	uint64_t m, frac;
	uint16_t se;

	memcpy(&m, x, 8);
	memcpy(&se, x + 8, 2);
	frac = m & 0x7fffffffffffffffULL;
	store_be(q, (uint64_t)se << 48 | frac >> 15, 8);
	store_be(q + 8, (frac & 0x7fff) << 49, 8);
}

static void quad_to_ldbl(unsigned char *x, const unsigned char *q)
{
	uint64_t hi = load_be(q, 8), lo = load_be(q + 8, 8), m;
	uint16_t se = (uint16_t)(hi >> 48);

	m = (hi & 0xffffffffffffULL) << 15 | lo >> 49;
	if (se & 0x7fff)
		m |= 1ULL << 63;
	memcpy(x, &m, 8);
	memcpy(x + 8, &se, 2);
	memset(x + 10, 0, 6);
}

/* One element of predefined type t between native (nat) and external32 (ext). */
static void x_elem(const struct predef *p, unsigned char *nat, unsigned char *ext, int to_ext)
{
	int part = p->size / p->parts, xpart = p->ext32 / p->parts;
	uint64_t v = 0;

	for (int k = 0; k < p->parts; k++, nat += part, ext += xpart) {
		switch (p->conv) {
		case X_COPY:
			if (to_ext)
				memcpy(ext, nat, part);
			else
				memcpy(nat, ext, part);
			break;
		case X_LDBL:
			if (to_ext)
				ldbl_to_quad(ext, nat);
			else
				quad_to_ldbl(nat, ext);
			break;
		case X_SWAP:
			for (int i = 0; i < part; i++) {
				if (to_ext)
					ext[i] = nat[part - 1 - i];
				else
					nat[i] = ext[part - 1 - i];
			}
			break;
		default:
			/* Narrower outside: the low bytes out, sign or zero extended back. */
			if (to_ext) {
				memcpy(&v, nat, part);
				store_be(ext, v, xpart);
				break;
			}
			v = load_be(ext, xpart);
			if (p->conv == X_LONG)
				v = (uint64_t)(int64_t)(int32_t)(uint32_t)v;
			memcpy(nat, &v, part);
		}
	}
}

/* Convert the elements s describes; *nat and *ext move past them. */
static void x_walk(const struct snode *s, unsigned char **nat, unsigned char **ext, int to_ext)
{
	const struct predef *p;

	switch (s->kind) {
	case S_BASIC:
		p = &predefs[s->t];
		for (MPI_Count i = 0; i < s->n; i++, *nat += p->size, *ext += p->ext32)
			x_elem(p, *nat, *ext, to_ext);
		break;
	case S_REP:
		for (MPI_Count i = 0; i < s->n; i++)
			x_walk(s->body, nat, ext, to_ext);
		break;
	default:
		for (MPI_Count k = 0; k < s->n; k++)
			x_walk(s->v[k], nat, ext, to_ext);
	}
}

/* --- the rest of the library's view (mpiimpl.h) ---------------------------------------- */

int mpii_type_init(void)
{
	static int built;

	if (!built) {
		if (predef_build())
			return MPI_ERR_NO_MEM;
		built = 1;
	}
	for (int i = 1; i < NTYPES; i++) {
		if (mpii_obj_set(NOW_MPI_KTYPE, i, &predef[i]))
			return MPI_ERR_NO_MEM;
		const struct layout *l = &predef[i].l;
		int plain = l->size > 0 && l->size < 256 && l->lb == 0 && l->tlb == 0 && l->ub == l->size &&
			    l->prog && l->prog->kind == P_RUN && l->prog->run.off == 0 && l->prog->run.len == l->size;
		mpii_plain[i] = plain ? (uint8_t)l->size : 0;
	}
	return MPI_SUCCESS;
}

size_t mpii_type_size(MPI_Datatype dt)
{
	return tobj(dt)->l.size;
}

MPI_Aint mpii_type_extent(MPI_Datatype dt)
{
	const struct layout *l = &tobj(dt)->l;

	return l->ub - l->lb;
}

MPI_Aint mpii_type_lb(MPI_Datatype dt)
{
	return tobj(dt)->l.lb;
}

MPI_Aint mpii_type_true_lb(MPI_Datatype dt)
{
	return tobj(dt)->l.tlb;
}

MPI_Aint mpii_type_true_extent(MPI_Datatype dt)
{
	const struct layout *l = &tobj(dt)->l;

	return l->tub - l->tlb;
}

int mpii_type_valid(MPI_Datatype dt)
{
	return tget(dt) != NULL;
}

int mpii_type_committed(MPI_Datatype dt)
{
	struct mpi_type *t = tobj(dt);

	return t && t->committed;
}

/* Whole basic elements in the first *rem bytes of s's; 1 when they end inside s. */
static int sig_count(const struct snode *s, MPI_Count *rem, MPI_Count *nel)
{
	MPI_Count k;

	switch (s->kind) {
	case S_BASIC:
		k = MIN(s->n, *rem / predefs[s->t].size);
		*nel += k;
		*rem -= k * predefs[s->t].size;
		return k < s->n;
	case S_REP:
		k = MIN(s->n, *rem / s->body->bytes);
		*nel += k * s->body->nel;
		*rem -= k * s->body->bytes;
		if (k == s->n)
			return 0;
		sig_count(s->body, rem, nel);
		return 1;
	default:
		for (MPI_Count i = 0; i < s->n; i++)
			if (sig_count(s->v[i], rem, nel))
				return 1;
		return 0;
	}
}

MPI_Count mpii_type_elements(MPI_Datatype dt, MPI_Count n)
{
	struct mpi_type *t = tobj(dt);
	MPI_Count nel, rem;

	if (!t || n < 0)
		return -1;
	if (!t->l.size)
		return n ? -1 : 0;
	nel = n / t->l.size * t->l.nel;
	rem = n % t->l.size;
	if (rem)
		sig_count(t->l.sig, &rem, &nel);
	return rem ? -1 : nel;
}

MPI_Datatype mpii_type_basic(MPI_Datatype dt)
{
	MPI_Datatype b = tobj(dt)->l.basic;

	return b == NODATA ? MPI_DATATYPE_NULL : b;
}

void mpii_type_ref(MPI_Datatype dt)
{
	type_ref(tobj(dt));
}

void mpii_type_unref(MPI_Datatype dt)
{
	type_unref(tobj(dt));
}

const char *mpii_type_name(MPI_Datatype dt)
{
	struct mpi_type *t = tobj(dt);

	return t ? t->name : "";
}

struct mpi_attr **mpii_type_attrs(MPI_Datatype dt)
{
	struct mpi_type *t = tget(dt);

	return t ? &t->attrs : NULL;
}

/* --- constructors ---------------------------------------------------------------------- */

/* The checks every constructor makes: MPI_SUCCESS with *o the old type, or the error reported. */
static int new_check(const char *fn, int count, MPI_Datatype old, MPI_Datatype *newtype, struct mpi_type **o)
{
	if (!newtype)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "newtype is NULL");
	if (count < 0)
		return mpii_err(NULL, MPI_ERR_COUNT, fn, "count %d is negative", count);
	if (!(*o = tget(old)))
		return mpii_err(NULL, MPI_ERR_TYPE, fn, "oldtype is not a valid datatype");
	return MPI_SUCCESS;
}

int MPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	static const char fn[] = "MPI_Type_contiguous";
	struct mpi_type *o, *t;
	struct layout l;
	int err;

	if ((err = new_check(fn, count, oldtype, newtype, &o)))
		return err;
	if ((err = lay_vector(&l, &o->l, 1, count, 0)))
		return lay_err(fn, err);
	if ((t = type_new(1, 0, 1))) {
		t->ints[0] = count;
		t->types[0] = oldtype;
	}
	return type_publish(fn, t, &l, MPI_COMBINER_CONTIGUOUS, newtype);
}

/* vector and hvector: the stride in elements of oldtype (vector) or in bytes. */
static int make_vector(const char *fn, int count, int blocklength, MPI_Aint stride, int in_bytes,
		       MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	struct mpi_type *o, *t;
	struct layout l;
	MPI_Aint bstride = stride;
	int err;

	if ((err = new_check(fn, count, oldtype, newtype, &o)))
		return err;
	if (blocklength < 0)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "blocklength %d is negative", blocklength);
	if (!in_bytes && MUL_OVF(stride, o->l.ub - o->l.lb, &bstride))
		return lay_err(fn, MPI_ERR_ARG);
	if ((err = lay_vector(&l, &o->l, count, blocklength, bstride)))
		return lay_err(fn, err);
	if ((t = type_new(in_bytes ? 2 : 3, in_bytes, 1))) {
		t->ints[0] = count;
		t->ints[1] = blocklength;
		if (in_bytes)
			t->addrs[0] = stride;
		else
			t->ints[2] = (int)stride;
		t->types[0] = oldtype;
	}
	return type_publish(fn, t, &l, in_bytes ? MPI_COMBINER_HVECTOR : MPI_COMBINER_VECTOR, newtype);
}

int MPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	return make_vector("MPI_Type_vector", count, blocklength, stride, 0, oldtype, newtype);
}

int MPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
			    MPI_Datatype *newtype)
{
	return make_vector("MPI_Type_create_hvector", count, blocklength, stride, 1, oldtype, newtype);
}

int MPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	return make_vector("MPI_Type_hvector", count, blocklength, stride, 1, oldtype, newtype);
}

/* The four indexed constructors: bk holds the count, lengths and displacements. */
static int make_indexed(const char *fn, struct blocks *bk, MPI_Datatype oldtype, MPI_Datatype *newtype,
			int combiner)
{
	struct mpi_type *o, *t;
	struct layout l;
	int n = bk->n, err;

	if ((err = new_check(fn, n, oldtype, newtype, &o)))
		return err;
	if (n > 0 && ((!bk->len && combiner != MPI_COMBINER_INDEXED_BLOCK &&
		       combiner != MPI_COMBINER_HINDEXED_BLOCK) || (!bk->idisp && !bk->adisp)))
		return mpii_err(NULL, MPI_ERR_ARG, fn, "an array argument is NULL");
	if (!bk->len && bk->blen < 0)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "blocklength %d is negative", bk->blen);
	for (int k = 0; bk->len && k < n; k++)
		if (bk->len[k] < 0)
			return mpii_err(NULL, MPI_ERR_ARG, fn, "blocklength %d (block %d) is negative",
					bk->len[k], k);
	bk->one = &o->l;
	if ((err = lay_blocks(&l, bk)))
		return lay_err(fn, err);
	switch (combiner) {
	case MPI_COMBINER_INDEXED:
		if ((t = type_new(2 * n + 1, 0, 1))) {
			copy(t->ints + 1, bk->len, n * sizeof(int));
			copy(t->ints + 1 + n, bk->idisp, n * sizeof(int));
		}
		break;
	case MPI_COMBINER_HINDEXED:
		if ((t = type_new(n + 1, n, 1))) {
			copy(t->ints + 1, bk->len, n * sizeof(int));
			copy(t->addrs, bk->adisp, n * sizeof(MPI_Aint));
		}
		break;
	case MPI_COMBINER_INDEXED_BLOCK:
		if ((t = type_new(n + 2, 0, 1))) {
			t->ints[1] = bk->blen;
			copy(t->ints + 2, bk->idisp, n * sizeof(int));
		}
		break;
	default:
		if ((t = type_new(2, n, 1))) {
			t->ints[1] = bk->blen;
			copy(t->addrs, bk->adisp, n * sizeof(MPI_Aint));
		}
	}
	if (t) {
		t->ints[0] = n;
		t->types[0] = oldtype;
	}
	return type_publish(fn, t, &l, combiner, newtype);
}

int MPI_Type_indexed(int count, const int array_of_blocklengths[], const int array_of_displacements[],
		     MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	struct blocks bk = { .n = count, .len = array_of_blocklengths, .idisp = array_of_displacements };

	return make_indexed("MPI_Type_indexed", &bk, oldtype, newtype, MPI_COMBINER_INDEXED);
}

int MPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
			     const MPI_Aint array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	struct blocks bk = { .n = count, .len = array_of_blocklengths, .adisp = array_of_displacements };

	return make_indexed("MPI_Type_create_hindexed", &bk, oldtype, newtype, MPI_COMBINER_HINDEXED);
}

int MPI_Type_hindexed(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
		      MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	struct blocks bk = { .n = count, .len = array_of_blocklengths, .adisp = array_of_displacements };

	return make_indexed("MPI_Type_hindexed", &bk, oldtype, newtype, MPI_COMBINER_HINDEXED);
}

int MPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[],
				  MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	struct blocks bk = { .n = count, .blen = blocklength, .idisp = array_of_displacements };

	return make_indexed("MPI_Type_create_indexed_block", &bk, oldtype, newtype,
			    MPI_COMBINER_INDEXED_BLOCK);
}

int MPI_Type_create_hindexed_block(int count, int blocklength, const MPI_Aint array_of_displacements[],
				   MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	struct blocks bk = { .n = count, .blen = blocklength, .adisp = array_of_displacements };

	return make_indexed("MPI_Type_create_hindexed_block", &bk, oldtype, newtype,
			    MPI_COMBINER_HINDEXED_BLOCK);
}

static int make_struct(const char *fn, int count, const int *bl, const MPI_Aint *disp, const MPI_Datatype *types,
		       MPI_Datatype *newtype)
{
	const struct layout **lays;
	struct blocks bk = { .n = count, .len = bl, .adisp = disp, .is_struct = 1 };
	struct mpi_type *t;
	struct layout l;
	int err;

	if (!newtype)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "newtype is NULL");
	if (count < 0)
		return mpii_err(NULL, MPI_ERR_COUNT, fn, "count %d is negative", count);
	if (count > 0 && (!bl || !disp || !types))
		return mpii_err(NULL, MPI_ERR_ARG, fn, "an array argument is NULL");
	for (int k = 0; k < count; k++) {
		if (bl[k] < 0)
			return mpii_err(NULL, MPI_ERR_ARG, fn, "blocklength %d (block %d) is negative", bl[k], k);
		if (!tget(types[k]))
			return mpii_err(NULL, MPI_ERR_TYPE, fn, "type %d is not a valid datatype", k);
	}
	lays = malloc((count ? count : 1) * sizeof *lays);
	if (!lays)
		return lay_err(fn, MPI_ERR_NO_MEM);
	for (int k = 0; k < count; k++)
		lays[k] = &tobj(types[k])->l;
	bk.lays = lays;
	err = lay_blocks(&l, &bk);
	free(lays);
	if (err)
		return lay_err(fn, err);
	if ((t = type_new(count + 1, count, count))) {
		t->ints[0] = count;
		copy(t->ints + 1, bl, count * sizeof(int));
		copy(t->addrs, disp, count * sizeof(MPI_Aint));
		copy(t->types, types, count * sizeof(MPI_Datatype));
	}
	return type_publish(fn, t, &l, MPI_COMBINER_STRUCT, newtype);
}

int MPI_Type_create_struct(int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[],
			   const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
	return make_struct("MPI_Type_create_struct", count, array_of_blocklengths, array_of_displacements,
			   array_of_types, newtype);
}

int MPI_Type_struct(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
		    MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
	return make_struct("MPI_Type_struct", count, array_of_blocklengths, array_of_displacements, array_of_types,
			   newtype);
}

int MPI_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[],
			     const int array_of_starts[], int order, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	static const char fn[] = "MPI_Type_create_subarray";
	struct mpi_type *o, *t;
	struct layout l;
	int err;

	if ((err = new_check(fn, 0, oldtype, newtype, &o)))
		return err;
	if (ndims <= 0)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "ndims %d is not positive", ndims);
	if (!array_of_sizes || !array_of_subsizes || !array_of_starts)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "an array argument is NULL");
	if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "order %d is neither C nor Fortran", order);
	for (int i = 0; i < ndims; i++) {
		if (array_of_sizes[i] <= 0 || array_of_subsizes[i] < 0 || array_of_starts[i] < 0 ||
		    array_of_subsizes[i] > array_of_sizes[i] - array_of_starts[i])
			return mpii_err(NULL, MPI_ERR_ARG, fn,
					"dimension %d: size %d, subsize %d, start %d do not fit", i,
					array_of_sizes[i], array_of_subsizes[i], array_of_starts[i]);
	}
	if ((err = lay_subarray(&l, ndims, array_of_sizes, array_of_subsizes, array_of_starts, order, &o->l)))
		return lay_err(fn, err);
	if ((t = type_new(3 * ndims + 2, 0, 1))) {
		t->ints[0] = ndims;
		memcpy(t->ints + 1, array_of_sizes, ndims * sizeof(int));
		memcpy(t->ints + 1 + ndims, array_of_subsizes, ndims * sizeof(int));
		memcpy(t->ints + 1 + 2 * ndims, array_of_starts, ndims * sizeof(int));
		t->ints[1 + 3 * ndims] = order;
		t->types[0] = oldtype;
	}
	return type_publish(fn, t, &l, MPI_COMBINER_SUBARRAY, newtype);
}

static int darray_check(const char *fn, int size, int rank, int ndims, const int *gsizes, const int *distribs,
			const int *dargs, const int *psizes, int order)
{
	long long procs = 1;

	if (size <= 0 || rank < 0 || rank >= size)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "rank %d is not in a grid of size %d", rank, size);
	if (ndims <= 0)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "ndims %d is not positive", ndims);
	if (!gsizes || !distribs || !dargs || !psizes)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "an array argument is NULL");
	if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "order %d is neither C nor Fortran", order);
	for (int i = 0; i < ndims; i++) {
		if (gsizes[i] <= 0 || psizes[i] <= 0)
			return mpii_err(NULL, MPI_ERR_ARG, fn, "dimension %d: gsize %d, psize %d", i, gsizes[i],
					psizes[i]);
		if (distribs[i] != MPI_DISTRIBUTE_BLOCK && distribs[i] != MPI_DISTRIBUTE_CYCLIC &&
		    distribs[i] != MPI_DISTRIBUTE_NONE)
			return mpii_err(NULL, MPI_ERR_ARG, fn, "dimension %d: distribution %d is unknown", i,
					distribs[i]);
		if (dargs[i] != MPI_DISTRIBUTE_DFLT_DARG && dargs[i] <= 0)
			return mpii_err(NULL, MPI_ERR_ARG, fn, "dimension %d: darg %d is not positive", i,
					dargs[i]);
		/* MPI-3.1 §4.1.4: blocks must cover the dimension. */
		if (distribs[i] == MPI_DISTRIBUTE_BLOCK && dargs[i] != MPI_DISTRIBUTE_DFLT_DARG &&
		    (long long)dargs[i] * psizes[i] < gsizes[i])
			return mpii_err(NULL, MPI_ERR_ARG, fn, "dimension %d: %d blocks of %d miss part of %d",
					i, psizes[i], dargs[i], gsizes[i]);
		procs *= psizes[i];
		if (procs > size)
			break;
	}
	if (procs != size)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "the process grid does not have %d processes", size);
	return MPI_SUCCESS;
}

int MPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[],
			   const int array_of_distribs[], const int array_of_dargs[], const int array_of_psizes[],
			   int order, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	static const char fn[] = "MPI_Type_create_darray";
	struct mpi_type *o, *t;
	struct layout l;
	int err;

	if ((err = new_check(fn, 0, oldtype, newtype, &o)))
		return err;
	if ((err = darray_check(fn, size, rank, ndims, array_of_gsizes, array_of_distribs, array_of_dargs,
				array_of_psizes, order)))
		return err;
	if ((err = lay_darray(&l, rank, ndims, array_of_gsizes, array_of_distribs, array_of_dargs, array_of_psizes,
			      order, &o->l)))
		return lay_err(fn, err);
	if ((t = type_new(4 * ndims + 4, 0, 1))) {
		t->ints[0] = size;
		t->ints[1] = rank;
		t->ints[2] = ndims;
		memcpy(t->ints + 3, array_of_gsizes, ndims * sizeof(int));
		memcpy(t->ints + 3 + ndims, array_of_distribs, ndims * sizeof(int));
		memcpy(t->ints + 3 + 2 * ndims, array_of_dargs, ndims * sizeof(int));
		memcpy(t->ints + 3 + 3 * ndims, array_of_psizes, ndims * sizeof(int));
		t->ints[3 + 4 * ndims] = order;
		t->types[0] = oldtype;
	}
	return type_publish(fn, t, &l, MPI_COMBINER_DARRAY, newtype);
}

int MPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *newtype)
{
	static const char fn[] = "MPI_Type_create_resized";
	struct mpi_type *o, *t;
	struct layout l;
	int err;

	if ((err = new_check(fn, 0, oldtype, newtype, &o)))
		return err;
	if ((err = lay_resized(&l, &o->l, lb, extent)))
		return lay_err(fn, err);
	if ((t = type_new(0, 2, 1))) {
		t->addrs[0] = lb;
		t->addrs[1] = extent;
		t->types[0] = oldtype;
	}
	return type_publish(fn, t, &l, MPI_COMBINER_RESIZED, newtype);
}

int MPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
	static const char fn[] = "MPI_Type_dup";
	struct mpi_type *o, *t;
	struct layout l;
	MPI_Datatype h;
	int err;

	if ((err = new_check(fn, 0, oldtype, newtype, &o)))
		return err;
	lay_copy(&l, &o->l);
	if ((t = type_new(0, 0, 1)))
		t->types[0] = oldtype;
	if ((err = type_publish(fn, t, &l, MPI_COMBINER_DUP, &h))) {
		*newtype = MPI_DATATYPE_NULL;
		return err;
	}
	t->committed = o->committed;
	/* The attribute copy callbacks see the new handle: they may call MPI on it. */
	if ((err = mpii_attr_dup_all(&t->attrs, o->attrs, NOW_MPI_KTYPE, oldtype, h))) {
		mpii_attr_free_all(&t->attrs, NOW_MPI_KTYPE, h);
		type_unref(t);
		*newtype = MPI_DATATYPE_NULL;
		return mpii_err_raise(NULL, err);
	}
	*newtype = h;
	return MPI_SUCCESS;
}

/* --- commit, free, queries ------------------------------------------------------------- */

/* The type dt names for call fn, or NULL with *err the error reported. */
static struct mpi_type *type_arg(const char *fn, MPI_Datatype dt, int *err)
{
	struct mpi_type *t = tget(dt);

	if (!t)
		*err = mpii_err(NULL, MPI_ERR_TYPE, fn, "datatype is not valid");
	return t;
}

static int null_arg(const char *fn, const char *what)
{
	return mpii_err(NULL, MPI_ERR_ARG, fn, "%s is NULL", what);
}

int MPI_Type_commit(MPI_Datatype *datatype)
{
	struct mpi_type *t;
	int err;

	if (!datatype)
		return null_arg("MPI_Type_commit", "datatype");
	if (!(t = type_arg("MPI_Type_commit", *datatype, &err)))
		return err;
	t->committed = 1;
	return MPI_SUCCESS;
}

int MPI_Type_free(MPI_Datatype *datatype)
{
	static const char fn[] = "MPI_Type_free";
	struct mpi_type *t;
	int err = MPI_SUCCESS;

	if (!datatype)
		return null_arg(fn, "datatype");
	if (!(t = type_arg(fn, *datatype, &err)))
		return err;
	if (t->predefined)
		return mpii_err(NULL, MPI_ERR_TYPE, fn, "%s is predefined: it cannot be freed", t->name);
	/*
	 * The attributes go with the user's last handle (pending operations
	 * need none), deleted while it is still valid: the callbacks get it.
	 */
	if (__atomic_load_n(&t->handles, __ATOMIC_RELAXED) == 1)
		err = mpii_attr_free_all(&t->attrs, NOW_MPI_KTYPE, t->h);
	ref_dec(&t->handles);
	type_unref(t);
	*datatype = MPI_DATATYPE_NULL;
	return err ? mpii_err_raise(NULL, err) : MPI_SUCCESS;
}

int MPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size)
{
	struct mpi_type *t;
	int err;

	if (!(t = type_arg("MPI_Type_size_x", datatype, &err)))
		return err;
	if (!size)
		return null_arg("MPI_Type_size_x", "size");
	*size = t->l.size;
	return MPI_SUCCESS;
}

int MPI_Type_size(MPI_Datatype datatype, int *size)
{
	struct mpi_type *t;
	int err;

	if (!(t = type_arg("MPI_Type_size", datatype, &err)))
		return err;
	if (!size)
		return null_arg("MPI_Type_size", "size");
	*size = t->l.size > INT_MAX ? MPI_UNDEFINED : (int)t->l.size;
	return MPI_SUCCESS;
}

/* The four extent queries: the bounds (true or not) of datatype, for fn. */
static int extent_of(const char *fn, MPI_Datatype datatype, int true_bounds, MPI_Aint *lb, MPI_Aint *extent)
{
	struct mpi_type *t;
	int err;

	if (!(t = type_arg(fn, datatype, &err)))
		return err;
	*lb = true_bounds ? t->l.tlb : t->l.lb;
	*extent = true_bounds ? t->l.tub - t->l.tlb : t->l.ub - t->l.lb;
	return MPI_SUCCESS;
}

int MPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
	if (!lb || !extent)
		return null_arg("MPI_Type_get_extent", !lb ? "lb" : "extent");
	return extent_of("MPI_Type_get_extent", datatype, 0, lb, extent);
}

int MPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent)
{
	if (!true_lb || !true_extent)
		return null_arg("MPI_Type_get_true_extent", !true_lb ? "true_lb" : "true_extent");
	return extent_of("MPI_Type_get_true_extent", datatype, 1, true_lb, true_extent);
}

int MPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
	MPI_Aint l = 0, e = 0;
	int err;

	if (!lb || !extent)
		return null_arg("MPI_Type_get_extent_x", !lb ? "lb" : "extent");
	if ((err = extent_of("MPI_Type_get_extent_x", datatype, 0, &l, &e)))
		return err;
	*lb = l;
	*extent = e;
	return MPI_SUCCESS;
}

int MPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent)
{
	MPI_Aint l = 0, e = 0;
	int err;

	if (!true_lb || !true_extent)
		return null_arg("MPI_Type_get_true_extent_x", !true_lb ? "true_lb" : "true_extent");
	if ((err = extent_of("MPI_Type_get_true_extent_x", datatype, 1, &l, &e)))
		return err;
	*true_lb = l;
	*true_extent = e;
	return MPI_SUCCESS;
}

int MPI_Type_extent(MPI_Datatype datatype, MPI_Aint *extent)
{
	MPI_Aint lb;

	if (!extent)
		return null_arg("MPI_Type_extent", "extent");
	return extent_of("MPI_Type_extent", datatype, 0, &lb, extent);
}

int MPI_Type_lb(MPI_Datatype datatype, MPI_Aint *displacement)
{
	MPI_Aint extent;

	if (!displacement)
		return null_arg("MPI_Type_lb", "displacement");
	return extent_of("MPI_Type_lb", datatype, 0, displacement, &extent);
}

int MPI_Type_ub(MPI_Datatype datatype, MPI_Aint *displacement)
{
	MPI_Aint lb = 0, extent = 0;
	int err;

	if (!displacement)
		return null_arg("MPI_Type_ub", "displacement");
	if ((err = extent_of("MPI_Type_ub", datatype, 0, &lb, &extent)))
		return err;
	*displacement = lb + extent;
	return MPI_SUCCESS;
}

int MPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses, int *num_datatypes,
			  int *combiner)
{
	struct mpi_type *t;
	int err;

	if (!(t = type_arg("MPI_Type_get_envelope", datatype, &err)))
		return err;
	if (!num_integers || !num_addresses || !num_datatypes || !combiner)
		return null_arg("MPI_Type_get_envelope", "an output argument");
	*num_integers = t->ni;
	*num_addresses = t->na;
	*num_datatypes = t->nd;
	*combiner = t->combiner;
	return MPI_SUCCESS;
}

int MPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses, int max_datatypes,
			  int array_of_integers[], MPI_Aint array_of_addresses[],
			  MPI_Datatype array_of_datatypes[])
{
	static const char fn[] = "MPI_Type_get_contents";
	struct mpi_type *t;
	int err;

	if (!(t = type_arg(fn, datatype, &err)))
		return err;
	if (t->predefined)
		return mpii_err(NULL, MPI_ERR_TYPE, fn, "%s is predefined: it has no contents", t->name);
	if (max_integers < t->ni || max_addresses < t->na || max_datatypes < t->nd)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "room for %d, %d, %d: the type has %d, %d, %d",
				max_integers, max_addresses, max_datatypes, t->ni, t->na, t->nd);
	if ((t->ni && !array_of_integers) || (t->na && !array_of_addresses) || (t->nd && !array_of_datatypes))
		return null_arg(fn, "an output array");
	copy(array_of_integers, t->ints, t->ni * sizeof(int));
	copy(array_of_addresses, t->addrs, t->na * sizeof(MPI_Aint));
	copy(array_of_datatypes, t->types, t->nd * sizeof(MPI_Datatype));
	/* Each derived type returned is a handle of the user's, to free (MPI-3.1 §4.1.13). */
	for (int k = 0; k < t->nd; k++) {
		struct mpi_type *c = tobj(t->types[k]);

		if (!c->predefined) {
			ref_inc(&c->handles);
			ref_inc(&c->refs);
		}
	}
	return MPI_SUCCESS;
}

int MPI_Type_set_name(MPI_Datatype datatype, const char *type_name)
{
	struct mpi_type *t;
	int err;

	if (!(t = type_arg("MPI_Type_set_name", datatype, &err)))
		return err;
	if (!type_name)
		return null_arg("MPI_Type_set_name", "type_name");
	/* Longer names are cut (MPI-3.1 §6.8). */
	strncpy(t->name, type_name, MPI_MAX_OBJECT_NAME - 1);
	t->name[MPI_MAX_OBJECT_NAME - 1] = 0;
	return MPI_SUCCESS;
}

int MPI_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen)
{
	struct mpi_type *t;
	int err;

	if (!(t = type_arg("MPI_Type_get_name", datatype, &err)))
		return err;
	if (!type_name || !resultlen)
		return null_arg("MPI_Type_get_name", !type_name ? "type_name" : "resultlen");
	strcpy(type_name, t->name);
	*resultlen = (int)strlen(t->name);
	return MPI_SUCCESS;
}

int MPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
	static const char fn[] = "MPI_Type_match_size";
	static const MPI_Datatype reals[] = { MPI_REAL4, MPI_REAL8, MPI_LONG_DOUBLE };
	static const MPI_Datatype integers[] = { MPI_INTEGER1, MPI_INTEGER2, MPI_INTEGER4, MPI_INTEGER8 };
	static const MPI_Datatype complexes[] = { MPI_COMPLEX8, MPI_COMPLEX16, MPI_C_LONG_DOUBLE_COMPLEX };
	const MPI_Datatype *v;
	size_t n;

	if (!datatype)
		return null_arg(fn, "datatype");
	switch (typeclass) {
	case MPI_TYPECLASS_REAL:
		v = reals;
		n = sizeof reals / sizeof reals[0];
		break;
	case MPI_TYPECLASS_INTEGER:
		v = integers;
		n = sizeof integers / sizeof integers[0];
		break;
	case MPI_TYPECLASS_COMPLEX:
		v = complexes;
		n = sizeof complexes / sizeof complexes[0];
		break;
	default:
		return mpii_err(NULL, MPI_ERR_ARG, fn, "typeclass %d is unknown", typeclass);
	}
	for (size_t i = 0; i < n; i++) {
		if (predefs[IDX(v[i])].size == size) {
			*datatype = v[i];
			return MPI_SUCCESS;
		}
	}
	return mpii_err(NULL, MPI_ERR_ARG, fn, "no type of class %d has size %d", typeclass, size);
}

int MPI_Get_address(const void *location, MPI_Aint *address)
{
	if (!address)
		return null_arg("MPI_Get_address", "address");
	*address = (MPI_Aint)(uintptr_t)location;
	return MPI_SUCCESS;
}

int MPI_Address(void *location, MPI_Aint *address)
{
	if (!address)
		return null_arg("MPI_Address", "address");
	*address = (MPI_Aint)(uintptr_t)location;
	return MPI_SUCCESS;
}

/* Addresses wrap as unsigned ones do (MPI-3.1 §4.1.5). */
MPI_Aint MPI_Aint_add(MPI_Aint base, MPI_Aint disp)
{
	return (MPI_Aint)((uintptr_t)base + (uintptr_t)disp);
}

MPI_Aint MPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
	return (MPI_Aint)((uintptr_t)addr1 - (uintptr_t)addr2);
}

/* count elements of each bytes, or LLONG_MAX: more than any buffer. */
static MPI_Count total(int count, MPI_Count each)
{
	MPI_Count n;

	return MUL_OVF((MPI_Count)count, each, &n) ? LLONG_MAX : n;
}

/* --- Pack, Unpack ---------------------------------------------------------------------- */

/* The checks of the pack calls: a valid committed type and a count. */
static int pack_check(const char *fn, struct mpi_comm *c, MPI_Datatype datatype, int count, struct mpi_type **t)
{
	*t = NULL;
	if (count < 0)
		return mpii_err(c, MPI_ERR_COUNT, fn, "count %d is negative", count);
	if (!(*t = tget(datatype)))
		return mpii_err(c, MPI_ERR_TYPE, fn, "datatype is not valid");
	if (!(*t)->committed)
		return mpii_err(c, MPI_ERR_TYPE, fn, "datatype is not committed");
	return MPI_SUCCESS;
}

int MPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize, int *position,
	     MPI_Comm comm)
{
	static const char fn[] = "MPI_Pack";
	struct mpi_comm *c;
	struct mpi_type *t;
	MPI_Count need;
	int err;

	if ((err = mpii_check_comm(comm, fn, &c)) || (err = pack_check(fn, c, datatype, incount, &t)))
		return err;
	if (!position)
		return mpii_err(c, MPI_ERR_ARG, fn, "position is NULL");
	need = total(incount, t->l.size);
	if (*position < 0 || need > (MPI_Count)outsize - *position)
		return mpii_err(c, MPI_ERR_TRUNCATE, fn, "%lld bytes do not fit at %d of %d", (long long)need,
				*position, outsize);
	if (need && !outbuf)
		return mpii_err(c, MPI_ERR_BUFFER, fn, "outbuf is NULL");
	mpii_pack(inbuf, incount, datatype, (char *)outbuf + *position);
	*position += (int)need;
	return MPI_SUCCESS;
}

int MPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount, MPI_Datatype datatype,
	       MPI_Comm comm)
{
	static const char fn[] = "MPI_Unpack";
	struct mpi_comm *c;
	struct mpi_type *t;
	MPI_Count need;
	int err;

	if ((err = mpii_check_comm(comm, fn, &c)) || (err = pack_check(fn, c, datatype, outcount, &t)))
		return err;
	if (!position)
		return mpii_err(c, MPI_ERR_ARG, fn, "position is NULL");
	need = total(outcount, t->l.size);
	if (*position < 0 || need > (MPI_Count)insize - *position)
		return mpii_err(c, MPI_ERR_TRUNCATE, fn, "%lld bytes are not there at %d of %d", (long long)need,
				*position, insize);
	if (need && !inbuf)
		return mpii_err(c, MPI_ERR_BUFFER, fn, "inbuf is NULL");
	mpii_unpack((const char *)inbuf + *position, need, outbuf, outcount, datatype);
	*position += (int)need;
	return MPI_SUCCESS;
}

int MPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size)
{
	static const char fn[] = "MPI_Pack_size";
	struct mpi_comm *c;
	struct mpi_type *t;
	MPI_Count need;
	int err;

	if ((err = mpii_check_comm(comm, fn, &c)))
		return err;
	if (incount < 0)
		return mpii_err(c, MPI_ERR_COUNT, fn, "count %d is negative", incount);
	if (!(t = tget(datatype)))
		return mpii_err(c, MPI_ERR_TYPE, fn, "datatype is not valid");
	if (!size)
		return mpii_err(c, MPI_ERR_ARG, fn, "size is NULL");
	need = total(incount, t->l.size);
	if (need > INT_MAX)
		return mpii_err(c, MPI_ERR_ARG, fn, "%lld bytes do not fit an int", (long long)need);
	*size = (int)need;
	return MPI_SUCCESS;
}

static int datarep_check(const char *fn, const char *datarep)
{
	if (!datarep || strcmp(datarep, "external32"))
		return mpii_err(NULL, MPI_ERR_UNSUPPORTED_DATAREP, fn, "data representation %s is not external32",
				datarep ? datarep : "(NULL)");
	return MPI_SUCCESS;
}

int MPI_Pack_external(const char datarep[], const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf,
		      MPI_Aint outsize, MPI_Aint *position)
{
	static const char fn[] = "MPI_Pack_external";
	struct mpi_type *t;
	unsigned char *tmp, *nat, *ext;
	MPI_Count need;
	int err;

	if ((err = datarep_check(fn, datarep)) || (err = pack_check(fn, NULL, datatype, incount, &t)))
		return err;
	if (!position)
		return null_arg(fn, "position");
	need = total(incount, t->l.ext32);
	if (*position < 0 || need > outsize - *position)
		return mpii_err(NULL, MPI_ERR_TRUNCATE, fn, "%lld bytes do not fit at %ld of %ld", (long long)need,
				*position, outsize);
	if (!need)
		return MPI_SUCCESS;
	if (!outbuf)
		return mpii_err(NULL, MPI_ERR_BUFFER, fn, "outbuf is NULL");
	/* Native first, then converted element by element as the signature says. */
	if (!(tmp = malloc(incount * t->l.size)))
		return lay_err(fn, MPI_ERR_NO_MEM);
	mpii_pack(inbuf, incount, datatype, tmp);
	nat = tmp;
	ext = (unsigned char *)outbuf + *position;
	for (int i = 0; i < incount; i++)
		x_walk(t->l.sig, &nat, &ext, 1);
	free(tmp);
	*position += need;
	return MPI_SUCCESS;
}

int MPI_Unpack_external(const char datarep[], const void *inbuf, MPI_Aint insize, MPI_Aint *position, void *outbuf,
			int outcount, MPI_Datatype datatype)
{
	static const char fn[] = "MPI_Unpack_external";
	struct mpi_type *t;
	unsigned char *tmp, *nat, *ext;
	MPI_Count need;
	int err;

	if ((err = datarep_check(fn, datarep)) || (err = pack_check(fn, NULL, datatype, outcount, &t)))
		return err;
	if (!position)
		return null_arg(fn, "position");
	need = total(outcount, t->l.ext32);
	if (*position < 0 || need > insize - *position)
		return mpii_err(NULL, MPI_ERR_TRUNCATE, fn, "%lld bytes are not there at %ld of %ld",
				(long long)need, *position, insize);
	if (!need)
		return MPI_SUCCESS;
	if (!inbuf)
		return mpii_err(NULL, MPI_ERR_BUFFER, fn, "inbuf is NULL");
	if (!(tmp = malloc(outcount * t->l.size)))
		return lay_err(fn, MPI_ERR_NO_MEM);
	nat = tmp;
	ext = (unsigned char *)inbuf + *position;
	for (int i = 0; i < outcount; i++)
		x_walk(t->l.sig, &nat, &ext, 0);
	mpii_unpack(tmp, outcount * t->l.size, outbuf, outcount, datatype);
	free(tmp);
	*position += need;
	return MPI_SUCCESS;
}

int MPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype, MPI_Aint *size)
{
	static const char fn[] = "MPI_Pack_external_size";
	struct mpi_type *t;
	int err;

	if ((err = datarep_check(fn, datarep)))
		return err;
	if (incount < 0)
		return mpii_err(NULL, MPI_ERR_COUNT, fn, "count %d is negative", incount);
	if (!(t = type_arg(fn, datatype, &err)))
		return err;
	if (!size)
		return null_arg(fn, "size");
	if ((*size = total(incount, t->l.ext32)) == LLONG_MAX)
		return mpii_err(NULL, MPI_ERR_ARG, fn, "%d elements are too large", incount);
	return MPI_SUCCESS;
}

/* --- the counts of a status ------------------------------------------------------------ */

static int status_check(const char *fn, const MPI_Status *status, MPI_Datatype datatype, const void *out,
			struct mpi_type **t)
{
	int err;

	*t = NULL;
	if (!status || status == MPI_STATUS_IGNORE)
		return null_arg(fn, "status");
	if (!(*t = type_arg(fn, datatype, &err)))
		return err;
	if (!out)
		return null_arg(fn, "count");
	return MPI_SUCCESS;
}

int MPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
	struct mpi_type *t;
	MPI_Count bytes;
	int err;

	if ((err = status_check("MPI_Get_count", status, datatype, count, &t)))
		return err;
	bytes = mpii_status_bytes(status);
	/* A type without data: zero elements, whatever came (MPI-3.1 §3.2.5). */
	if (!t->l.size)
		*count = 0;
	else if (bytes % t->l.size || bytes / t->l.size > INT_MAX)
		*count = MPI_UNDEFINED;
	else
		*count = (int)(bytes / t->l.size);
	return MPI_SUCCESS;
}

/* The basic elements the status's bytes hold, or MPI_UNDEFINED (one is cut short). */
static int elements(const char *fn, const MPI_Status *status, MPI_Datatype datatype, const void *count,
		    MPI_Count *n)
{
	struct mpi_type *t;
	int err;

	if ((err = status_check(fn, status, datatype, count, &t)))
		return err;
	*n = t->l.size ? mpii_type_elements(datatype, mpii_status_bytes(status)) : 0;
	if (*n < 0)
		*n = MPI_UNDEFINED;
	return MPI_SUCCESS;
}

int MPI_Get_elements_x(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
	return elements("MPI_Get_elements_x", status, datatype, count, count);
}

int MPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
	MPI_Count n;
	int err;

	if ((err = elements("MPI_Get_elements", status, datatype, count, &n)))
		return err;
	*count = n > INT_MAX ? MPI_UNDEFINED : (int)n;
	return MPI_SUCCESS;
}

/*
 * The status says count elements of datatype came: count * size bytes,
 * as MPICH does (so Get_count gives count back whatever the type).
 */
int MPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
	static const char fn[] = "MPI_Status_set_elements_x";
	struct mpi_type *t;
	MPI_Count bytes;
	int err;

	if (!status || status == MPI_STATUS_IGNORE)
		return null_arg(fn, "status");
	if (!(t = type_arg(fn, datatype, &err)))
		return err;
	if (count < 0)
		return mpii_err(NULL, MPI_ERR_COUNT, fn, "count %lld is negative", (long long)count);
	if (MUL_OVF(count, t->l.size, &bytes))
		return mpii_err(NULL, MPI_ERR_COUNT, fn, "count %lld is too large", (long long)count);
	mpii_status_set_bytes(status, bytes);
	return MPI_SUCCESS;
}

int MPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype, int count)
{
	return MPI_Status_set_elements_x(status, datatype, count);
}
