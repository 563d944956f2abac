/*
 * libFuzzer target: the receiving half of protected remote memory, the
 * kernel's own net/rmem/serve.c (rmem_receive) on node 1, with the
 * fabric's request/answer code (net/call/call.c) on the fake fabric
 * boundary of tests/host/host_fabric.c.  The input is a sequence of chunks:
 *
 *   src (< 0xf0), len (2 bytes, little-endian), len message bytes
 *       a message from node src & 63 (0xe0..0xef: nodes 60..74 and -1,
 *       some beyond the table), through rmem_receive: 0x00..0x3f and
 *       0xc0..0xef on the reliable channel, 0x40..0x7f as a raw frame,
 *       0x80..0xbf on the channel while no answer can go (call_can_answer
 *       says no: the request must be offered again, nothing changed)
 *   0xf0 | cmd, a, b, c
 *       a change of the table: grant, revoke, inhibit, unexport, export
 *
 * Segments live in fixed regions of an arena (two of them overlap); every
 * other byte of the arena is a guard.  Beside the real table the target
 * keeps its own model of it, written from segtab.h's contract: every
 * segtab call must return what the model says, every view must agree
 * with it, generations must only move on (never back to one handed out
 * before), and every request must get the answer the model gives (the
 * refusal's status, the READ's bytes, the atomic's old value; atomics
 * that came raw refused).  A shadow copy of the arena gets each allowed
 * operation applied byte by byte at the model's address; the arena must
 * always equal it.  abort()
 * on any difference, on an allowed operation outside its segment, on a
 * misaligned atomic, or on a guard byte changed.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/rmem/internal.h"
#include "net/rmem/proto.h"
#include "net/rmem/rmem.h"
#include "net/rmem/segtab.h"
#include "tests/host/host_fabric.h"

#define ARENA 8192
#define SELF 1

static const struct region {
	uint32_t at, size;
} regions[] = {
	{ 256, 2048 },		/* 0: large */
	{ 2560, 1409 },		/* 1: one more than the largest transfer */
	{ 4096, 1408 },		/* 2: exactly the largest transfer */
	{ 5632, 8 },		/* 3: one word */
	{ 5760, 100 },		/* 4: size not a multiple of 8 */
	{ 6016, 1 },		/* 5: one byte */
	{ 1024, 512 },		/* 6: inside region 0 */
	{ 6144, 1500 },		/* 7: free at first */
};
#define NREG (int)(sizeof regions / sizeof regions[0])

static _Alignas(64) uint8_t arena[ARENA];
static uint8_t shadow[ARENA];
static uint8_t image[ARENA];		/* the arena as every input starts */
#define tab rmem_segtab		/* the kernel's own table, which serve.c reads */

/* The guards: every stretch of the arena in no region. */
static struct { uint32_t at, len; } guards[2 * 8 + 1];
static int nguards;

static const char *const names[] = {
	"data", "ro", "none", "word", "odd", "tiny", "ovl", "s7", "s8", "s9", "a", "b",
	"c", "d", "e", "f",
	"",					/* -EINVAL */
	"0123456789abcdefghijklmnopqrstu",	/* 31: the longest */
	"0123456789abcdefghijklmnopqrstuv",	/* 32: -EINVAL */
};
#define NNAMES (int)(sizeof names / sizeof names[0])

/* --- the model ----------------------------------------------------------- */

struct mslot {
	int used, ever;
	char name[SEGTAB_NAME];
	int reg;
	int inhibit;
	uint8_t rights[SEGTAB_NODES];
	uint32_t gen[SEGTAB_NODES];	/* the last generation seen per node */
};
static struct mslot ms[SEGTAB_SLOTS];

#define CHECK(cond)                                                                          \
	do {                                                                                 \
		if (!(cond)) {                                                               \
			fprintf(stderr, "fuzz_rmem: %s:%d: %s\n", __FILE__, __LINE__, #cond); \
			abort();                                                             \
		}                                                                            \
	} while (0)

static uint8_t pattern(size_t i)
{
	return (uint8_t)(i * 151 + (i >> 8) * 13 + 0xc3);
}

static int mvalid(int seg)
{
	return seg >= 0 && seg < SEGTAB_SLOTS && ms[seg].used;
}

/* The real views of a slot against the model, for every node. */
static void verify_slot(int seg)
{
	for (int n = 0; n < SEGTAB_NODES; n++) {
		struct rmem_segview v = segtab_view(&tab, seg, n);
		if (!ms[seg].used) {
			CHECK(!v.exists && v.gen == 0 && v.rights == 0 && v.size == 0 && !v.inhibit);
			if (n > 0)
				break;
			continue;
		}
		CHECK(v.exists);
		CHECK(v.gen == ms[seg].gen[n]);
		CHECK(v.rights == ms[seg].rights[n]);
		CHECK(v.size == regions[ms[seg].reg].size);
		CHECK(!!v.inhibit == !!ms[seg].inhibit);
		CHECK(tab.slot[seg].base == arena + regions[ms[seg].reg].at);
	}
	if (ms[seg].used)
		CHECK(segtab_find(&tab, ms[seg].name) == seg);
}

static void verify_all(void)
{
	for (int s = 0; s < SEGTAB_SLOTS; s++)
		verify_slot(s);
}

/* Read the generations after a change; each must have moved on, or stayed. */
static void take_gens(int seg, int node_moved, int all_moved)
{
	for (int n = 0; n < SEGTAB_NODES; n++) {
		uint32_t g = segtab_view(&tab, seg, n).gen;
		if (all_moved || n == node_moved)
			CHECK(g > ms[seg].gen[n]);	/* never one handed out before */
		else
			CHECK(g == ms[seg].gen[n]);
		ms[seg].gen[n] = g;
	}
}

/* how: 0 as given, 1 size 0, 2 base NULL, 3 size 2^32, 4 size 2^64 - 1 */
static int do_export(int name, int reg, int how, int rights)
{
	const char *nm = names[name];
	void *base = how == 2 ? NULL : arena + regions[reg].at;
	uint64_t size = how == 1 ? 0 : how == 3 ? 0x100000000ULL : how == 4 ? UINT64_MAX
			: regions[reg].size;
	size_t len = strlen(nm);
	int expect, free_slot = -1, dup = 0;

	for (int s = 0; s < SEGTAB_SLOTS; s++) {
		if (ms[s].used && strcmp(ms[s].name, nm) == 0)
			dup = 1;
		if (!ms[s].used && free_slot < 0)
			free_slot = s;
	}
	if (len == 0 || len >= SEGTAB_NAME || !base || size == 0 || size > 0xffffffffULL ||
	    (rights & ~RMEM_ALL))
		expect = -EINVAL;
	else if (dup)
		expect = -EEXIST;
	else if (free_slot < 0)
		expect = -ENOSPC;
	else
		expect = free_slot;
	int r = segtab_export(&tab, nm, base, size, rights);
	CHECK(r == expect);
	if (r < 0)
		return r;
	struct mslot *m = &ms[r];
	m->used = 1;
	memcpy(m->name, nm, len + 1);
	m->reg = reg;
	m->inhibit = 0;
	for (int n = 0; n < SEGTAB_NODES; n++)
		m->rights[n] = n == SELF ? 0 : (uint8_t)rights;
	if (m->ever) {
		take_gens(r, -1, 1);	/* a reused slot: every old generation stays dead */
	} else {
		for (int n = 0; n < SEGTAB_NODES; n++)
			m->gen[n] = segtab_view(&tab, r, n).gen;
	}
	m->ever = 1;
	return r;
}

static int do_grant(int seg, int node, int rights)
{
	int expect = (rights & ~RMEM_ALL) || node < -1 || node >= SEGTAB_NODES ? -EINVAL
		     : !mvalid(seg) ? -EBADF : 0;
	int r = segtab_grant(&tab, seg, node, rights);
	CHECK(r == expect);
	if (r == 0) {
		for (int n = 0; n < SEGTAB_NODES; n++)
			if (n != SELF && (node == -1 || n == node))
				ms[seg].rights[n] = (uint8_t)rights;
		take_gens(seg, -2, 0);	/* the generation stays */
	}
	return r;
}

static int do_revoke(int seg, int node)
{
	int expect = node < -1 || node >= SEGTAB_NODES ? -EINVAL : !mvalid(seg) ? -EBADF : 0;
	int r = segtab_revoke(&tab, seg, node);
	CHECK(r == expect);
	if (r == 0) {
		for (int n = 0; n < SEGTAB_NODES; n++)
			if (node == -1 || n == node)
				ms[seg].rights[n] = 0;
		take_gens(seg, node, node == -1);
	}
	return r;
}

static int do_unexport(int seg)
{
	int expect = mvalid(seg) ? 0 : -EBADF;
	int r = segtab_unexport(&tab, seg);
	CHECK(r == expect);
	if (r == 0) {
		ms[seg].used = 0;
		CHECK(segtab_find(&tab, ms[seg].name) == -1);
		ms[seg].name[0] = '\0';
	}
	return r;
}

static int do_inhibit(int seg, int on)
{
	int expect = mvalid(seg) ? 0 : -EBADF;
	int r = segtab_inhibit(&tab, seg, on);
	CHECK(r == expect);
	if (r == 0)
		ms[seg].inhibit = on;
	return r;
}

/* What rmem_parse must say, from the wire format in proto.h. */
static int model_parse(const uint8_t *p, size_t len)
{
	struct rmem_msg m;

	if (len < RMEM_HDR_LEN)
		return RMS_MALFORMED;
	memcpy(&m, p, sizeof m);
	size_t dlen = len - RMEM_HDR_LEN;
	if (m.flags & ~(RM_F_INTR | RM_F_ACK | RM_F_RAW | RM_F_MARKED))
		return RMS_MALFORMED;
	int ok;
	switch (m.op) {
	case RM_WRITE:
	case RM_READ_RESP:
		ok = m.count >= 1 && m.count <= RMEM_DATA_MAX && dlen == m.count;
		break;
	case RM_READ_REQ:
		ok = m.count >= 1 && m.count <= RMEM_DATA_MAX && dlen == 0;
		break;
	case RM_CAS:
		ok = m.count == 8 && dlen == 16;
		break;
	case RM_CAS_BLOCK:
		ok = m.count >= 8 && m.count % 8 == 0 && m.count <= RMEM_DATA_MAX / 2 && dlen == 2 * (size_t)m.count;
		break;
	case RM_FADD:
	case RM_ATOMIC_RESP:
		ok = m.count == 8 && dlen == 8;
		break;
	case RM_STATUS:
		ok = dlen == 0;
		break;
	default:
		ok = 0;
	}
	if (ok && (m.op == RM_STATUS || m.op == RM_READ_RESP || m.op == RM_ATOMIC_RESP))
		ok = m.status >= 0 && m.status < RMS_NSTATUS;
	return ok ? RMS_OK : RMS_MALFORMED;
}

/* What rmem_check must say for an operation from src, from the model. */
static int model_check(const struct rmem_msg *m, int src)
{
	int need = m->op == RM_WRITE ? RMEM_W : m->op == RM_READ_REQ ? RMEM_R : RMEM_A;

	if (!mvalid(m->seg) || src < 0 || src >= SEGTAB_NODES)
		return RMS_BAD_SEG;
	const struct mslot *s = &ms[m->seg];
	uint64_t size = regions[s->reg].size;
	if (m->gen != s->gen[src])
		return RMS_STALE;
	if ((s->rights[src] & need) != need)
		return RMS_RIGHTS;
	if (m->off > size || m->count > size - m->off)
		return RMS_BOUNDS;
	if (need == RMEM_A && ((uintptr_t)arena + regions[s->reg].at + m->off) % 8)
		return RMS_ALIGN;
	if (need != RMEM_R && s->inhibit)
		return RMS_INHIBIT;
	/* A READ whose answer would not fit one message back to src (serve.c). */
	if (m->op == RM_READ_REQ && m->count > RMEM_MAX_XFER && RMEM_HDR_LEN + (size_t)m->count > fabric_mtu(src))
		return RMS_MALFORMED;
	return RMS_OK;
}

/* --- the receiver: net/rmem/serve.c itself --------------------------------- */

/* The one answer rmem_receive sent, to src on rmem's protocol, or none. */
static int take_answer(int src, int raw, struct rmem_msg *a, const uint8_t **adata, size_t *alen)
{
	static struct host_frame f;

	if (host_frame_take(&f) < 0)
		return 0;
	CHECK(host_frames() == 0);
	CHECK(f.dst == src && f.proto == RMEM_PROTO && !!f.raw == !!raw);
	CHECK(rmem_parse(f.data, f.len, a, adata, alen) == RMS_OK);
	CHECK(!!(a->flags & RM_F_RAW) == !!raw);
	return 1;
}

/*
 * A request that parsed, through rmem_receive: it must apply exactly what
 * the model allows (to the shadow, byte by byte at the model's address)
 * and answer exactly as the model says.
 */
static void serve(int src, const struct rmem_msg *m, const uint8_t *data, const uint8_t *p,
		  size_t len, int raw, int busy)
{
	int expect = model_check(m, src);
	int atomic = m->op == RM_CAS || m->op == RM_FADD || m->op == RM_CAS_BLOCK;
	int answers = src >= 0 && src < SEGTAB_NODES && src != SELF;	/* the fabric takes it */
	int needs_answer = expect != RMS_OK || m->op != RM_WRITE || (m->flags & RM_F_ACK);
	struct rmem_msg a;
	const uint8_t *adata;
	size_t alen;

	if (raw && atomic) {
		/* Atomics only from the reliable channel: refused, answered raw. */
		uint64_t refused = rmem_ctr.refused_unreliable;
		CHECK(rmem_receive(src, p, len, 1) == 0);
		CHECK(rmem_ctr.refused_unreliable == refused + 1);
		if (take_answer(src, 1, &a, &adata, &alen))
			CHECK(answers && a.op == RM_STATUS && a.tag == m->tag && a.status == RMS_MALFORMED);
		else
			CHECK(!answers);
		return;
	}
	host_can_send = !busy;
	int r = rmem_receive(src, p, len, raw);
	host_can_send = 1;
	if (busy && needs_answer && !raw) {
		/* Offered again later: nothing changed, nothing sent. */
		CHECK(r == -EBUSY);
		CHECK(host_frames() == 0);
		return;
	}
	CHECK(r == 0);
	int got = take_answer(src, raw, &a, &adata, &alen);
	CHECK(got == (answers && needs_answer));
	if (expect != RMS_OK) {
		if (got)
			CHECK(a.op == RM_STATUS && a.tag == m->tag && a.status == expect);
		return;
	}

	/* Allowed: it lay inside its segment, by the table and by the model. */
	struct segslot *s = &tab.slot[m->seg];
	const struct region *rg = &regions[ms[m->seg].reg];
	CHECK(s->base == arena + rg->at);
	CHECK((uint64_t)m->off + m->count <= s->size && s->size == rg->size);
	uint8_t *sh = shadow + rg->at + m->off;
	if (got)
		CHECK(a.tag == m->tag && a.status == RMS_OK);

	switch (m->op) {
	case RM_WRITE:
		memcpy(sh, data, m->count);
		if (got)
			CHECK(a.op == RM_STATUS);
		break;
	case RM_READ_REQ:
		if (got)
			CHECK(a.op == RM_READ_RESP && alen == m->count &&
			      memcmp(adata, sh, m->count) == 0);
		break;
	case RM_CAS: {
		uint64_t expect_v, desired, prev;
		CHECK(((uintptr_t)(arena + rg->at + m->off) & 7) == 0);
		memcpy(&expect_v, data, 8);
		memcpy(&desired, data + 8, 8);
		memcpy(&prev, sh, 8);
		if (got)
			CHECK(a.op == RM_ATOMIC_RESP && alen == 8 && memcmp(adata, &prev, 8) == 0);
		if (prev == expect_v)
			memcpy(sh, &desired, 8);
		break;
	}
	case RM_FADD: {
		uint64_t add, prev;
		CHECK(((uintptr_t)(arena + rg->at + m->off) & 7) == 0);
		memcpy(&add, data, 8);
		memcpy(&prev, sh, 8);
		if (got)
			CHECK(a.op == RM_ATOMIC_RESP && alen == 8 && memcmp(adata, &prev, 8) == 0);
		prev += add;
		memcpy(sh, &prev, 8);
		break;
	}
	case RM_CAS_BLOCK:
		/* Each word in turn, as a lone CAS; the words found come back as a READ's data. */
		CHECK(((uintptr_t)(arena + rg->at + m->off) & 7) == 0);
		if (got)
			CHECK(a.op == RM_READ_RESP && alen == m->count);
		for (uint32_t i = 0; i < m->count / 8; i++) {
			uint64_t expect_v, desired, prev;
			memcpy(&expect_v, data + 16 * i, 8);
			memcpy(&desired, data + 16 * i + 8, 8);
			memcpy(&prev, sh + 8 * i, 8);
			if (got)
				CHECK(memcmp(adata + 8 * i, &prev, 8) == 0);
			if (prev == expect_v)
				memcpy(sh + 8 * i, &desired, 8);
		}
		break;
	default:
		abort();	/* the model allowed something that is not a request */
	}
}

/*
 * One message from src through rmem_receive.  how: 0 the reliable channel,
 * 1 a raw frame, 2 the channel with no room for an answer now.
 */
static void receive(int src, const uint8_t *in, size_t len, int how)
{
	/* A private copy of exactly len bytes: AddressSanitizer sees over-reads. */
	uint8_t *p = malloc(len ? len : 1);
	struct rmem_msg m;
	const uint8_t *data = NULL;
	size_t dlen = 0;

	if (!p)
		abort();
	memcpy(p, in, len);
	int st = rmem_parse(p, len, &m, &data, &dlen);
	CHECK(st == model_parse(p, len));
	if (st != RMS_OK) {
		uint64_t bad = rmem_ctr.refused_malformed;
		CHECK(rmem_receive(src, p, len, how == 1) == 0);
		CHECK(rmem_ctr.refused_malformed == bad + 1 && host_frames() == 0);
	} else {
		CHECK(data == p + RMEM_HDR_LEN && dlen == len - RMEM_HDR_LEN);
		CHECK(memcmp(&m, p, sizeof m) == 0);
		switch (m.op) {
		case RM_READ_RESP:
		case RM_ATOMIC_RESP:
		case RM_STATUS:
			/* Answers to calls this node never made: matched to nothing, sent nothing. */
			CHECK(rmem_receive(src, p, len, how == 1) == 0);
			CHECK(host_frames() == 0);
			break;
		default:
			serve(src, &m, data, p, len, how == 1, how == 2);
		}
	}
	free(p);
}

/* seg and node from one byte each: mostly small valid values, now and then any. */
static int seg_of(uint8_t a)
{
	return a & 0x80 ? (int)(a & 0x7f) - 1 : a & 7;
}

static int node_of(uint8_t b)
{
	return b & 0x80 ? (int)(b & 0x7f) - 2 : b & 7;
}

static void control(uint8_t cmd, uint8_t a, uint8_t b, uint8_t c)
{
	static unsigned ncontrol;
	int r = -1;

	switch (cmd % 5) {
	case 0:
		do_grant(seg_of(a), node_of(b), c & 0x0f);
		break;
	case 1:
		do_revoke(seg_of(a), node_of(b));
		break;
	case 2:
		do_inhibit(seg_of(a), c & 1);
		break;
	case 3:
		do_unexport(seg_of(a));
		break;
	case 4:
		r = do_export(c % NNAMES, a % NREG, (b >> 5) < 4 ? 0 : (b >> 5) - 3, b & 0x0f);
		break;
	}
	/* The slot it was about, at once; the whole table now and then, and at the end. */
	int seg = cmd % 5 == 4 ? r : seg_of(a);
	if (seg >= 0 && seg < SEGTAB_SLOTS)
		verify_slot(seg);
	if (++ncontrol % 16 == 0)
		verify_all();
}

static void check_guards(void)
{
	for (int g = 0; g < nguards; g++)
		CHECK(memcmp(arena + guards[g].at, image + guards[g].at, guards[g].len) == 0);
}

/* The table every input starts from; seed_rmem.c builds on it. */
static void setup(void)
{
	for (size_t i = 0; i < ARENA; i++)
		arena[i] = shadow[i] = image[i] = pattern(i);
	segtab_init(&tab, SELF);
	memset(ms, 0, sizeof ms);
	CHECK(do_export(0, 0, 0, RMEM_ALL) == 0);		/* data: everything */
	CHECK(do_export(1, 1, 0, RMEM_R) == 1);		/* ro */
	CHECK(do_export(2, 2, 0, 0) == 2);			/* none, then node 2 RW */
	CHECK(do_grant(2, 2, RMEM_RW) == 0);
	CHECK(do_export(3, 3, 0, RMEM_ALL) == 3);		/* word */
	CHECK(do_export(4, 4, 0, RMEM_RW | RMEM_A) == 4);	/* odd, inhibited */
	CHECK(do_inhibit(4, 1) == 0);
	CHECK(do_export(5, 5, 0, RMEM_W) == 5);		/* tiny */
	CHECK(do_export(7, 6, 0, RMEM_ALL) == 6);		/* s7, withdrawn ... */
	CHECK(do_unexport(6) == 0);
	CHECK(do_export(6, 6, 0, RMEM_ALL) == 6);		/* ... slot reused as ovl */
	CHECK(do_revoke(0, 2) == 0);				/* node 2 revoked on data */
	verify_all();
}

/* Built (and checked) once; every input starts from a copy. */
static struct segtab tab0;
static struct mslot ms0[SEGTAB_SLOTS];

static void init_once(void)
{
	static uint8_t in_region[ARENA];

	for (int r = 0; r < NREG; r++)
		memset(in_region + regions[r].at, 1, regions[r].size);
	for (uint32_t i = 0; i < ARENA;) {
		uint32_t j = i;
		while (j < ARENA && in_region[j] == in_region[i])
			j++;
		if (!in_region[i]) {
			CHECK(nguards < (int)(sizeof guards / sizeof guards[0]));
			guards[nguards].at = i;
			guards[nguards++].len = j - i;
		}
		i = j;
	}
	host_fabric_reset(SELF, SEGTAB_NODES);
	rmem_ready = 1;
	setup();
	tab0 = tab;
	memcpy(ms0, ms, sizeof ms);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int once;

	if (!once) {
		init_once();
		once = 1;
	}
	memcpy(arena, image, ARENA);
	memcpy(shadow, image, ARENA);
	tab = tab0;
	memcpy(ms, ms0, sizeof ms);
	while (size >= 1) {
		uint8_t b0 = data[0];
		if (b0 >= 0xf0) {
			if (size < 4)
				break;
			control(b0 & 0x0f, data[1], data[2], data[3]);
			data += 4;
			size -= 4;
			continue;
		}
		if (size < 3)
			break;
		size_t n = (size_t)data[1] | (size_t)data[2] << 8;
		data += 3;
		size -= 3;
		if (n > size)
			n = size;
		int src = b0 < 0xe0 ? b0 & 0x3f : (b0 & 0x0f) == 0x0f ? -1 : 60 + (b0 & 0x0f);
		receive(src, data, n, b0 < 0xc0 ? b0 >> 6 : 0);
		data += n;
		size -= n;
		CHECK(memcmp(arena, shadow, ARENA) == 0);
	}
	verify_all();
	/* The guards never changed, whatever happened. */
	check_guards();
	CHECK(memcmp(arena, shadow, ARENA) == 0);
	return 0;
}
