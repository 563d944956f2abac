#include <errno.h>
#include <string.h>

#include "net/rmem/rmem.h"
#include "net/rmem/segtab.h"

_Static_assert(SEGTAB_SLOTS % 64 == 0 && SEGTAB_SLOTS < 65536, "usedmap words, chain links of 16 bits");

static struct segslot *get(struct segtab *t, int seg)
{
	if (seg < 0 || seg >= SEGTAB_SLOTS || !t->slot[seg].used)
		return NULL;
	return &t->slot[seg];
}

void segtab_init(struct segtab *t, int self)
{
	memset(t, 0, sizeof *t);
	t->self = self;
}

/* FNV-1a of a name, to its bucket. */
static unsigned bucket(const char *name)
{
	uint32_t h = 2166136261u;

	while (*name)
		h = (h ^ (uint8_t)*name++) * 16777619u;
	return h & (SEGTAB_HASH - 1);
}

static int lowest_free(const struct segtab *t)
{
	for (int w = 0; w < SEGTAB_SLOTS / 64; w++)
		if (~t->usedmap[w])
			return w * 64 + __builtin_ctzll(~t->usedmap[w]);
	return -1;
}

int segtab_export(struct segtab *t, const char *name, void *base, uint64_t size, int rights)
{
	size_t n = strlen(name);
	int free_slot;

	if (n == 0 || n >= SEGTAB_NAME || !base || size == 0 || size > 0xffffffffULL ||
	    (rights & ~RMEM_ALL))
		return -EINVAL;
	if (segtab_find(t, name) >= 0)
		return -EEXIST;
	if ((free_slot = lowest_free(t)) < 0)
		return -ENOSPC;
	struct segslot *s = &t->slot[free_slot];
	uint32_t gens[SEGTAB_NODES], epoch = s->epoch;
	memcpy(gens, s->gen, sizeof gens);
	memset(s, 0, sizeof *s);
	s->epoch = epoch + 1;
	for (int i = 0; i < SEGTAB_NODES; i++) {
		s->gen[i] = gens[i] + 1;
		s->rights[i] = i == t->self ? 0 : (uint8_t)rights;
	}
	memcpy(s->name, name, n + 1);
	s->base = base;
	s->size = size;
	s->used = 1;
	t->usedmap[free_slot / 64] |= 1ULL << (free_slot % 64);
	unsigned b = bucket(name);
	t->next[free_slot] = t->head[b];
	t->head[b] = (uint16_t)(free_slot + 1);
	return free_slot;
}

int segtab_grant(struct segtab *t, int seg, int node, int rights)
{
	struct segslot *s = get(t, seg);

	if ((rights & ~RMEM_ALL) || node < -1 || node >= SEGTAB_NODES)
		return -EINVAL;
	if (!s)
		return -EBADF;
	if (node >= 0) {
		if (node != t->self)
			s->rights[node] = (uint8_t)rights;
		return 0;
	}
	uint8_t own = t->self >= 0 && t->self < SEGTAB_NODES ? s->rights[t->self] : 0;
	memset(s->rights, rights, sizeof s->rights);
	if (t->self >= 0 && t->self < SEGTAB_NODES)
		s->rights[t->self] = own;
	return 0;
}

int segtab_revoke(struct segtab *t, int seg, int node)
{
	struct segslot *s = get(t, seg);

	if (node < -1 || node >= SEGTAB_NODES)
		return -EINVAL;
	if (!s)
		return -EBADF;
	for (int i = 0; i < SEGTAB_NODES; i++) {
		if (node == -1 || i == node) {
			s->rights[i] = 0;
			s->gen[i]++;
		}
	}
	return 0;
}

int segtab_unexport(struct segtab *t, int seg)
{
	struct segslot *s = get(t, seg);

	if (!s)
		return -EBADF;
	for (int i = 0; i < SEGTAB_NODES; i++)
		s->gen[i]++;
	for (uint16_t *p = &t->head[bucket(s->name)]; *p; p = &t->next[*p - 1]) {
		if (*p - 1 == seg) {
			*p = t->next[seg];
			break;
		}
	}
	t->next[seg] = 0;
	t->usedmap[seg / 64] &= ~(1ULL << (seg % 64));
	s->used = 0;
	s->name[0] = '\0';
	return 0;
}

int segtab_inhibit(struct segtab *t, int seg, int on)
{
	struct segslot *s = get(t, seg);

	if (!s)
		return -EBADF;
	s->inhibit = on;
	return 0;
}

int segtab_find(const struct segtab *t, const char *name)
{
	for (unsigned i = t->head[bucket(name)]; i; i = t->next[i - 1])
		if (strcmp(t->slot[i - 1].name, name) == 0)
			return (int)i - 1;
	return -1;
}

struct rmem_segview segtab_view(const struct segtab *t, int seg, int src)
{
	struct rmem_segview v = { 0 };

	if (seg < 0 || seg >= SEGTAB_SLOTS || !t->slot[seg].used || src < 0 || src >= SEGTAB_NODES)
		return v;
	const struct segslot *s = &t->slot[seg];
	v.exists = 1;
	v.gen = s->gen[src];
	v.rights = s->rights[src];
	v.size = s->size;
	v.inhibit = s->inhibit;
	v.base = (uintptr_t)s->base;
	return v;
}
