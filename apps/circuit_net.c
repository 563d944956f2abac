/*
 * The circuit simulator's netlists (remote-memory-atm paper, section 3.2.2):
 * the 32-bit ripple-carry adder the paper measured ("about 225 gates") and
 * larger array multipliers, built as C data at start (the node has no file
 * system), with their vectors, arithmetic and placement.  Contract in
 * circuit_net.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "apps/circuit_net.h"

#define NONE 0xffffffffu

const struct ckt_info ckt_bundled[] = {
	{ "adder32", CKT_ADDER, 32, "32-bit ripple-carry adder (the paper's circuit)" },
	{ "mul16", CKT_MUL, 16, "16x16 ripple-carry array multiplier" },
	{ "mul32", CKT_MUL, 32, "32x32 ripple-carry array multiplier" },
	{ NULL, 0, 0, NULL },
};

/* Delays in ticks: a primary input or inverter 1, AND/OR 2, XOR 3. */
static const uint32_t delays[G_NTYPES] = {
	[G_INPUT] = 1, [G_BUF] = 1, [G_NOT] = 1, [G_AND] = 2, [G_OR] = 2, [G_XOR] = 3, [G_PROBE] = 0,
};

static const char *const names[G_NTYPES] = {
	[G_INPUT] = "INPUT", [G_BUF] = "BUF", [G_NOT] = "NOT", [G_AND] = "AND",
	[G_OR] = "OR", [G_XOR] = "XOR", [G_PROBE] = "PROBE",
};

uint32_t gate_delay(unsigned type)
{
	return type < G_NTYPES ? delays[type] : 0;
}

const char *gate_name(unsigned type)
{
	return type < G_NTYPES ? names[type] : "?";
}

/* splitmix64: small, good enough for vectors and placement, same everywhere. */
uint64_t ckt_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* --- building ------------------------------------------------------------ */

struct builder {
	struct netlist *n;
	int failed;
};

static uint32_t add(struct builder *b, unsigned type, uint32_t in0, uint32_t in1)
{
	struct netlist *n = b->n;

	if (b->failed)
		return NONE;
	if (n->ngates == n->cap) {
		uint32_t cap = n->cap ? n->cap * 2 : 256;
		struct gate *g = cap < CKT_MAX_GATES ? realloc(n->g, cap * sizeof *g) : NULL;
		if (!g) {
			b->failed = 1;
			return NONE;
		}
		n->g = g;
		n->cap = cap;
	}
	struct gate *g = &n->g[n->ngates];
	memset(g, 0, sizeof *g);
	g->type = (uint8_t)type;
	g->nin = (type == G_AND || type == G_OR || type == G_XOR) ? 2 : 1;
	g->in[0] = in0;
	g->in[1] = g->nin == 2 ? in1 : NONE;
	n->count[type]++;
	return n->ngates++;
}

/* A full adder: sum = a ^ b ^ c, carry = (a & b) | ((a ^ b) & c); 5 gates. */
static void full_adder(struct builder *b, uint32_t x, uint32_t y, uint32_t c, uint32_t *sum, uint32_t *carry)
{
	uint32_t h = add(b, G_XOR, x, y);
	*sum = add(b, G_XOR, h, c);
	uint32_t g1 = add(b, G_AND, x, y);
	uint32_t g2 = add(b, G_AND, h, c);
	*carry = add(b, G_OR, g1, g2);
}

/* A half adder: sum = a ^ b, carry = a & b; 2 gates. */
static void half_adder(struct builder *b, uint32_t x, uint32_t y, uint32_t *sum, uint32_t *carry)
{
	*sum = add(b, G_XOR, x, y);
	*carry = add(b, G_AND, x, y);
}

/*
 * The ripple-carry adder, built bit slice by bit slice (a_i, b_i and the
 * slice's full adder together) so that linear placement cuts the carry
 * chain P-1 times.  32 bits: 1 + 32 * (2 + 5) = 225 gates.
 */
static void build_adder(struct builder *b, uint32_t w, uint32_t *in, uint32_t *out)
{
	uint32_t c = add(b, G_INPUT, NONE, NONE);

	in[2 * w] = c;
	for (uint32_t i = 0; i < w; i++) {
		in[i] = add(b, G_INPUT, NONE, NONE);
		in[w + i] = add(b, G_INPUT, NONE, NONE);
		full_adder(b, in[i], in[w + i], c, &out[i], &c);
	}
	out[w] = c;
}

/*
 * The w x w array multiplier: partial products pp[i][j] = a_j & b_i, and
 * w-1 rows of ripple-carry adders, row i adding pp[i] to the upper bits of
 * the row before (half adders where a row has no carry in or no upper
 * bit).  Row i's partial products come just before row i, for linear
 * placement.  16 bits: 32 + 256 + 74 + 14 * 77 = 1440 gates.
 */
static int build_mul(struct builder *b, uint32_t w, uint32_t *in, uint32_t *out)
{
	uint32_t *prev = calloc(w, sizeof *prev), *cur = calloc(w, sizeof *cur);
	uint32_t *pp = malloc(w * sizeof *pp), prevc = NONE;

	if (!prev || !cur || !pp) {
		free(prev);
		free(cur);
		free(pp);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < 2 * w; i++)
		in[i] = add(b, G_INPUT, NONE, NONE);
	for (uint32_t j = 0; j < w; j++)
		prev[j] = add(b, G_AND, in[j], in[w]);
	out[0] = prev[0];
	for (uint32_t i = 1; i < w; i++) {
		uint32_t carry = NONE;
		for (uint32_t j = 0; j < w; j++)
			pp[j] = add(b, G_AND, in[j], in[w + i]);
		for (uint32_t j = 0; j < w; j++) {
			uint32_t x = j + 1 < w ? prev[j + 1] : prevc;
			if (carry == NONE)
				half_adder(b, x, pp[j], &cur[j], &carry);
			else if (x == NONE)
				half_adder(b, pp[j], carry, &cur[j], &carry);
			else
				full_adder(b, x, pp[j], carry, &cur[j], &carry);
		}
		prevc = carry;
		out[i] = cur[0];
		memcpy(prev, cur, w * sizeof *prev);
	}
	for (uint32_t j = 1; j < w; j++)
		out[w - 1 + j] = prev[j];
	out[2 * w - 1] = prevc;
	free(prev);
	free(cur);
	free(pp);
	return 0;
}

/* Fanout lists (the inverse of the input pins) and the critical path. */
static int link_fanouts(struct netlist *n)
{
	uint32_t *cnt = calloc(n->ngates + 1, sizeof *cnt), *arr = NULL;
	uint32_t nfo = 0;

	if (!cnt)
		return -ENOMEM;
	for (uint32_t g = 0; g < n->ngates; g++)
		for (unsigned p = 0; p < n->g[g].nin; p++)
			if (n->g[g].type != G_INPUT)
				cnt[n->g[g].in[p]]++;
	for (uint32_t g = 0; g < n->ngates; g++) {
		n->g[g].fo = nfo;
		n->g[g].nfo = 0;
		nfo += cnt[g];
	}
	n->fanout = malloc((nfo ? nfo : 1) * sizeof *n->fanout);
	arr = malloc(n->ngates * sizeof *arr);
	if (!n->fanout || !arr) {
		free(cnt);
		free(arr);
		return -ENOMEM;
	}
	for (uint32_t g = 0; g < n->ngates; g++) {
		const struct gate *x = &n->g[g];
		uint32_t t = 0;
		if (x->type == G_INPUT) {
			arr[g] = gate_delay(G_INPUT);
			continue;
		}
		for (unsigned p = 0; p < x->nin; p++) {
			struct gate *d = &n->g[x->in[p]];
			n->fanout[d->fo + d->nfo++] = (struct fanout){ g, p };
			if (arr[x->in[p]] > t)
				t = arr[x->in[p]];
		}
		arr[g] = t + gate_delay(x->type);
	}
	n->crit = 0;
	for (uint32_t i = 0; i < n->noutputs; i++)
		if (arr[n->output[i]] > n->crit)
			n->crit = arr[n->output[i]];
	free(cnt);
	free(arr);
	return 0;
}

int ckt_build(struct netlist *n, const char *name)
{
	const struct ckt_info *info = ckt_bundled;
	struct builder b = { n, 0 };
	uint32_t *drv;
	int r = 0;

	while (info->name && strcmp(info->name, name) != 0)
		info++;
	if (!info->name)
		return -ENOENT;
	memset(n, 0, sizeof *n);
	n->name = info->name;
	n->kind = info->kind;
	n->width = info->width;
	n->ninputs = info->kind == CKT_ADDER ? 2 * info->width + 1 : 2 * info->width;
	n->noutputs = info->kind == CKT_ADDER ? info->width + 1 : 2 * info->width;
	n->input = malloc(n->ninputs * sizeof *n->input);
	n->output = malloc(n->noutputs * sizeof *n->output);
	drv = malloc(n->noutputs * sizeof *drv);
	if (!n->input || !n->output || !drv) {
		r = -ENOMEM;
		goto out;
	}
	if (info->kind == CKT_ADDER)
		build_adder(&b, info->width, n->input, drv);
	else if ((r = build_mul(&b, info->width, n->input, drv)) < 0)
		goto out;
	n->nplaced = n->ngates;
	for (uint32_t i = 0; i < n->noutputs; i++)
		n->output[i] = add(&b, G_PROBE, drv[i], NONE);
	if (b.failed) {
		r = -ENOMEM;
		goto out;
	}
	r = link_fanouts(n);
out:
	free(drv);
	if (r < 0)
		ckt_free(n);
	return r;
}

void ckt_free(struct netlist *n)
{
	free(n->g);
	free(n->fanout);
	free(n->input);
	free(n->output);
	memset(n, 0, sizeof *n);
}

int ckt_check(const struct netlist *n)
{
	uint64_t pins = 0;

	for (uint32_t g = 0; g < n->ngates; g++) {
		const struct gate *x = &n->g[g];
		if (x->type >= G_NTYPES || x->nin < 1 || x->nin > CKT_MAX_FANIN)
			return -1;
		if ((x->type == G_PROBE) != (g >= n->nplaced))
			return -1;
		if (x->type == G_PROBE && x->nfo != 0)
			return -1;
		if (x->type != G_INPUT) {
			for (unsigned p = 0; p < x->nin; p++) {
				uint32_t d = x->in[p];
				if (d >= g || n->g[d].type == G_PROBE)
					return -1;
				int found = 0;
				for (uint32_t f = 0; f < n->g[d].nfo; f++) {
					const struct fanout *fo = &n->fanout[n->g[d].fo + f];
					if (fo->gate == g && fo->pin == p)
						found++;
				}
				if (found != 1)
					return -1;
				pins++;
			}
		}
		for (uint32_t f = 0; f < x->nfo; f++) {
			const struct fanout *fo = &n->fanout[x->fo + f];
			if (fo->gate >= n->ngates || fo->pin >= n->g[fo->gate].nin ||
			    n->g[fo->gate].in[fo->pin] != g)
				return -1;
		}
	}
	uint64_t nfo = 0;
	for (uint32_t g = 0; g < n->ngates; g++)
		nfo += n->g[g].nfo;
	if (nfo != pins)
		return -1;
	for (uint32_t i = 0; i < n->ninputs; i++)
		if (n->input[i] >= n->nplaced || n->g[n->input[i]].type != G_INPUT)
			return -1;
	for (uint32_t i = 0; i < n->noutputs; i++)
		if (n->output[i] != n->nplaced + i)
			return -1;
	return 0;
}

/* --- vectors ----------------------------------------------------------------- */

void ckt_vectors(const struct netlist *n, uint64_t seed, struct ckt_vec *v, uint32_t nvec)
{
	uint64_t mask = n->width >= 64 ? ~0ULL : (1ULL << n->width) - 1, st = seed;

	for (uint32_t k = 0; k < nvec; k++) {
		if (k < 2 && n->kind == CKT_ADDER) {
			/*
			 * 0xff..fe + 0 + 1, then 0xff..ff + 0 + 1: bit 0 of a
			 * flips and the carry ripples through every bit, along
			 * the critical path (a_0, its XOR, AND, OR, then the
			 * carry chain).
			 */
			v[k].a = mask - 1 + k;
			v[k].b = 0;
			v[k].cin = 1;
			continue;
		}
		if (k < 2) {
			/* Multiplier: all ones times all ones, then times one. */
			v[k].a = mask;
			v[k].b = k ? 1 : mask;
			v[k].cin = 0;
			continue;
		}
		v[k].a = ckt_rand(&st) & mask;
		v[k].b = ckt_rand(&st) & mask;
		v[k].cin = n->kind == CKT_ADDER ? (unsigned)(ckt_rand(&st) & 1) : 0;
	}
}

unsigned ckt_input_bit(const struct netlist *n, const struct ckt_vec *v, uint32_t i)
{
	if (i < n->width)
		return (unsigned)(v->a >> i) & 1;
	if (i < 2 * n->width)
		return (unsigned)(v->b >> (i - n->width)) & 1;
	return v->cin & 1;
}

uint64_t ckt_expected(const struct netlist *n, const struct ckt_vec *v)
{
	if (n->kind == CKT_ADDER)
		return v->a + v->b + v->cin;
	return v->a * v->b;
}

/* --- placement ------------------------------------------------------------------ */

void ckt_place(const struct netlist *n, int nodes, enum ckt_place how, uint64_t seed, uint8_t *owner)
{
	uint64_t st = seed ^ 0x5deece66dULL;

	if (nodes < 1)
		nodes = 1;
	for (uint32_t g = 0; g < n->nplaced; g++) {
		if (how == PLACE_LINEAR)
			owner[g] = (uint8_t)((uint64_t)g * (uint64_t)nodes / n->nplaced);
		else
			owner[g] = (uint8_t)(ckt_rand(&st) % (uint64_t)nodes);
	}
	for (uint32_t g = n->nplaced; g < n->ngates; g++)
		owner[g] = owner[n->g[g].in[0]];
}
