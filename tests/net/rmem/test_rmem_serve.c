/*
 * Host unit tests of remote memory's receive half and issuing half as the
 * kernel runs them: net/rmem/serve.c (rmem_receive), rmem.c, segments.c,
 * with the fabric's real request/answer facility (net/call/call.c) on
 * the fake fabric boundary of host_fabric.c.  This process is node 0; the
 * peer is node 2.  Requests this node issues to node 2 are handed back to
 * this node's own receive code as if node 2 had sent them, so a segment
 * exported here with rights for node 2 plays the remote segment and its
 * answers come back to the issuing half: one real code path each way.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tests/host/unit.h"

#include "kernel/init.h"
#include "net/call/call.h"
#include "net/call/call_wire.h"
#include "net/rmem/internal.h"
#include "net/rmem/proto.h"
#include "net/rmem/rmem.h"
#include "tests/host/host_fabric.h"
#include "tests/host/rmem_fixture.h"

#define SELF 0
#define PEER 2

static _Alignas(8) uint8_t remote[(RMEM_TRAIN_MAX + 4) * RMEM_MAX_XFER];	/* the "remote" segment (node 2's view) */
static _Alignas(8) uint8_t local[8192], local2[256];

static int setup(void **state)
{
	(void)state;
	host_rx_shared = 0;
	host_rmem_reset(SELF, 4);
	memset(remote, 0, sizeof remote);
	memset(local, 0x11, sizeof local);
	memset(local2, 0x22, sizeof local2);
	return 0;
}

/* A request or answer as node 2 would send it. */
static size_t msg(uint8_t *b, uint8_t op, uint8_t flags, uint16_t seg, uint32_t gen, uint32_t off,
		  uint32_t count, uint32_t tag, int32_t status, const void *data, size_t dlen)
{
	struct rmem_msg m = rmem_msg_of(op, flags, seg, gen, off, count, tag, status);

	memcpy(b, &m, sizeof m);
	if (dlen)
		memcpy(b + sizeof m, data, dlen);
	return sizeof m + dlen;
}

/* The segment node 2 addresses, exported here with rights for node 2 alone. */
static int export_remote(int rights, uint32_t *gen)
{
	int seg = seg_export_for("remote", remote, sizeof remote, PEER, rights);

	assert_true(seg >= 0);
	assert_int_equal(seg_ticket(seg, PEER, gen), 0);
	return seg;
}

/* The remote segment exported read-write to PEER (its number in *seg) and a descriptor of it. */
static int attach_remote(int *seg)
{
	uint32_t gen;
	int rd;

	*seg = export_remote(RMEM_RW, &gen);
	rd = rmem_attach(PEER, *seg, gen, sizeof remote, RMEM_RW);
	assert_true(rd >= 0);
	return rd;
}

/* Take the one frame this node sent, to node 2 on rmem's protocol; its header. */
static struct rmem_msg take(struct host_frame *f, int raw)
{
	struct rmem_msg m;

	assert_int_equal(host_frame_take(f), 0);
	assert_int_equal(f->dst, PEER);
	assert_int_equal(f->proto, RMEM_PROTO);
	assert_int_equal(f->raw, raw);
	assert_true(f->len >= sizeof m);
	memcpy(&m, f->data, sizeof m);
	return m;
}

/* --- atomics only on the reliable channel -------------------------------- */

/*
 * Paper 2.3: the compare-and-swap is reliable.  A raw frame has no
 * sequence number, so nothing removes a duplicate: an atomic arriving
 * raw is refused (and answered raw), never applied, however often it
 * comes; on the channel the same request applies once.
 */
static void raw_atomics_are_refused(void **state)
{
	uint8_t b[64];
	uint32_t gen;
	uint64_t word, add = 5, cas[2] = { 0, 77 };
	struct host_frame f;

	(void)state;
	int seg = export_remote(RMEM_ALL, &gen);
	size_t n = msg(b, RM_FADD, RM_F_RAW, (uint16_t)seg, gen, 0, 8, 0x100, 0, &add, 8);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(rmem_receive(PEER, b, n, 1), 0);
		struct rmem_msg a = take(&f, 1);
		assert_int_equal(a.op, RM_STATUS);
		assert_int_equal(a.tag, 0x100);
		assert_int_not_equal(a.status, RMS_OK);
	}
	n = msg(b, RM_CAS, RM_F_RAW, (uint16_t)seg, gen, 8, 8, 0x200, 0, cas, 16);
	assert_int_equal(rmem_receive(PEER, b, n, 1), 0);
	assert_int_not_equal(take(&f, 1).status, RMS_OK);
	memcpy(&word, remote, 8);
	assert_int_equal(word, 0);
	memcpy(&word, remote + 8, 8);
	assert_int_equal(word, 0);
	assert_int_equal(rmem_ctr.applied_atomic, 0);
	assert_int_equal(rmem_ctr.refused_unreliable, 3);

	/* A raw WRITE is still served: only atomics need the channel. */
	n = msg(b, RM_WRITE, RM_F_RAW, (uint16_t)seg, gen, 16, 4, 0x300, 0, "abcd", 4);
	assert_int_equal(rmem_receive(PEER, b, n, 1), 0);
	assert_memory_equal(remote + 16, "abcd", 4);
	assert_int_equal(host_frames(), 0);

	/* On the channel, the fetch-and-add applies, once. */
	n = msg(b, RM_FADD, 0, (uint16_t)seg, gen, 0, 8, 0x400, 0, &add, 8);
	assert_int_equal(rmem_receive(PEER, b, n, 0), 0);
	struct rmem_msg a = take(&f, 0);
	assert_int_equal(a.op, RM_ATOMIC_RESP);
	assert_int_equal(a.status, RMS_OK);
	memcpy(&word, remote, 8);
	assert_int_equal(word, 5);
	assert_int_equal(rmem_ctr.applied_atomic, 1);
}

/* --- a READ's local target ------------------------------------------------ */

/*
 * A READ records where its answer goes.  If that local segment is
 * withdrawn and its slot exported again before the answer arrives, the
 * data must not land in the new segment: the READ reports -ESTALE.
 */
static void read_answer_never_lands_in_a_reexported_slot(void **state)
{
	uint8_t b[64], data[16];
	struct host_frame f;

	(void)state;
	int lseg = seg_export("dest", local, sizeof local, 0);
	assert_true(lseg >= 0);
	int rd = rmem_attach(PEER, 7, 1, 4096, RMEM_R);
	assert_true(rd >= 0);
	int h = rmem_read(rd, 0, sizeof data, lseg, 32, 0);
	assert_true(h > 0);
	struct rmem_msg req = take(&f, 0);
	assert_int_equal(req.op, RM_READ_REQ);
	assert_int_equal(req.tag, (uint32_t)h);

	assert_int_equal(seg_unexport(lseg), 0);
	assert_int_equal(seg_export("other", local2, sizeof local2, 0), lseg);	/* the same slot */

	memset(data, 0xee, sizeof data);
	size_t n = msg(b, RM_READ_RESP, 0, 0, 0, 0, sizeof data, (uint32_t)h, RMS_OK, data, sizeof data);
	assert_int_equal(rmem_receive(PEER, b, n, 0), 0);
	for (size_t i = 0; i < sizeof local2; i++)
		assert_int_equal(local2[i], 0x22);
	for (size_t i = 0; i < sizeof local; i++)
		assert_int_equal(local[i], 0x11);
	assert_int_equal(rmem_read_poll(h), 1);
	assert_int_equal(rmem_read_wait(h, 0), -ESTALE);
	assert_int_equal(rmem_read_poll(h), -EBADF);
	assert_int_equal(rmem_release(rd), 0);
}

/* The same READ with its target in place lands, once, where it was asked to. */
static void read_answer_lands_in_its_segment(void **state)
{
	uint8_t b[64], data[16];
	struct host_frame f;

	(void)state;
	int lseg = seg_export("dest", local, sizeof local, 0);
	int rd = rmem_attach(PEER, 7, 1, 4096, RMEM_R);
	int h = rmem_read(rd, 0, sizeof data, lseg, 32, 0);
	assert_true(h > 0);
	take(&f, 0);
	memset(data, 0xee, sizeof data);
	size_t n = msg(b, RM_READ_RESP, 0, 0, 0, 0, sizeof data, (uint32_t)h, RMS_OK, data, sizeof data);
	assert_int_equal(rmem_receive(PEER, b, n, 0), 0);
	assert_int_equal(rmem_read_wait(h, 0), 0);
	assert_memory_equal(local + 32, data, sizeof data);
	assert_int_equal(local[31], 0x11);
	assert_int_equal(local[48], 0x11);
	/* A second copy of the answer matches nothing and changes nothing. */
	memset(data, 0xdd, sizeof data);
	n = msg(b, RM_READ_RESP, 0, 0, 0, 0, sizeof data, (uint32_t)h, RMS_OK, data, sizeof data);
	uint64_t unmatched = rmem_ctr.responses_unmatched;
	assert_int_equal(rmem_receive(PEER, b, n, 0), 0);
	assert_int_equal(rmem_ctr.responses_unmatched, unmatched + 1);
	assert_int_equal(local[32], 0xee);
	/* The handle is gone; a new READ in the same call slot gets another handle. */
	assert_int_equal(rmem_read_poll(h), -EBADF);
	int h2 = rmem_read(rd, 0, 8, lseg, 0, 0);
	assert_true(h2 > 0 && h2 != h);
	assert_int_equal(h2 & 0xff, h & 0xff);
	assert_int_equal(rmem_read_poll(h), -EBADF);
	assert_int_equal(rmem_read_wait(h, 0), -EBADF);
	assert_int_equal(rmem_read_poll(h2), 0);
}

/*
 * Node 2 reboots and is bound again while a READ is in flight: the READ
 * ends with -ECONNRESET, its late answer lands nowhere, and the old
 * descriptor sends nothing more (to the new incarnation, a segment of the
 * same number and generation may be another).  A new descriptor works.
 */
static void descriptor_of_a_rebooted_node_is_refused(void **state)
{
	uint8_t b[64], data[16];
	struct host_frame f;

	(void)state;
	host_epoch[PEER] = 1;
	int lseg = seg_export("dest", local, sizeof local, 0);
	int rd = rmem_attach(PEER, 7, 1, 4096, RMEM_RW);
	int h = rmem_read(rd, 0, sizeof data, lseg, 32, 0);
	assert_true(h > 0);
	take(&f, 0);
	host_epoch[PEER] = 2;
	call_node_reset(PEER);
	assert_int_equal(rmem_read_wait(h, 0), -ECONNRESET);
	memset(data, 0xee, sizeof data);
	size_t n = msg(b, RM_READ_RESP, 0, 0, 0, 0, sizeof data, (uint32_t)h, RMS_OK, data, sizeof data);
	assert_int_equal(rmem_receive(PEER, b, n, 0), 0);
	assert_int_equal(local[32], 0x11);
	assert_int_equal(rmem_read(rd, 0, 8, lseg, 0, 0), -ECONNRESET);
	assert_int_equal(rmem_write(rd, 0, data, 8, 0), -ECONNRESET);
	assert_int_equal(rmem_write(rd, 0, data, 8, RMEM_SYNC), -ECONNRESET);
	assert_int_equal(host_frames(), 0);
	int rd2 = rmem_attach(PEER, 7, 1, 4096, RMEM_RW);
	assert_int_equal(rmem_write(rd2, 0, data, 8, 0), 0);
	assert_int_equal(host_frames(), 1);
	rmem_release(rd);
	rmem_release(rd2);
}

/* --- a SYNC block write --------------------------------------------------- */

/*
 * The network while the issuer waits: every frame to node 2 goes to this
 * node's receive code as node 2's, in order; before the request numbered
 * `inhibit_at` (0, 1, ...) the target segment is write-inhibited, after it
 * released again.
 */
static int pump_seg, pump_n, inhibit_at = -1, pump_double;

static void pump(void)
{
	struct host_frame f;

	while (host_frame_take(&f) == 0) {
		struct rmem_msg m;
		memcpy(&m, f.data, sizeof m);
		int request = m.op == RM_WRITE;
		if (request)
			seg_inhibit(pump_seg, pump_n == inhibit_at);
		assert_int_equal(rmem_receive(PEER, f.data, f.len, f.raw), 0);
		/* A raw request the network doubled: served twice, answered twice. */
		if (pump_double && f.raw && request)
			assert_int_equal(rmem_receive(PEER, f.data, f.len, f.raw), 0);
		if (request) {
			seg_inhibit(pump_seg, 0);
			pump_n++;
		}
	}
}

static void write_block_sync_flags(int refuse, int *r, uint8_t *src, size_t count, int flags)
{
	int seg, rd = attach_remote(&seg);

	for (size_t i = 0; i < count; i++)
		src[i] = (uint8_t)(i * 7 + 1);
	pump_seg = seg;
	pump_n = 0;
	inhibit_at = refuse;
	host_pump = pump;
	*r = rmem_write_block(rd, 0, src, count, flags);
	host_pump = NULL;
	pump_double = 0;
	rmem_release(rd);
}

static void write_block_sync(int refuse, int *r, uint8_t *src, size_t count)
{
	write_block_sync_flags(refuse, r, src, count, RMEM_SYNC);
}

/*
 * SYNC + UNRELIABLE with every raw request doubled: each piece answers
 * twice.  The call counts pieces, not answers, so it ends only once the
 * last piece answered, and that piece's refusal is the block's verdict.
 */
static void write_block_sync_unreliable_doubled(void **state)
{
	static uint8_t src[3 * RMEM_MAX_XFER];
	int r;

	(void)state;
	pump_double = 1;
	write_block_sync_flags(2, &r, src, sizeof src, RMEM_SYNC | RMEM_UNRELIABLE);
	assert_int_equal(r, -EROFS);
	assert_memory_equal(remote, src, 2 * RMEM_MAX_XFER);
	for (size_t i = 2 * RMEM_MAX_XFER; i < 3 * RMEM_MAX_XFER; i++)
		assert_int_equal(remote[i], 0);
	/* Pieces 0 and 1 answered twice before the last answered; its second finds no call. */
	assert_int_equal(rmem_ctr.answers_duplicate, 2);
	assert_int_equal(host_frames(), 0);
}

/* A block longer than one train: each train's pieces answer, the refusal in the second counts. */
static void write_block_sync_many_trains(void **state)
{
	static uint8_t src[RMEM_TRAIN_MAX * RMEM_MAX_XFER + 3 * RMEM_MAX_XFER];
	int r;

	(void)state;
	write_block_sync(RMEM_TRAIN_MAX + 1, &r, src, sizeof src);
	assert_int_equal(r, -EROFS);
	assert_int_equal(pump_n, RMEM_TRAIN_MAX + 3);
	assert_memory_equal(remote, src, (RMEM_TRAIN_MAX + 1) * RMEM_MAX_XFER);
	for (size_t i = 0; i < RMEM_MAX_XFER; i++)
		assert_int_equal(remote[(RMEM_TRAIN_MAX + 1) * RMEM_MAX_XFER + i], 0);
	assert_memory_equal(remote + (RMEM_TRAIN_MAX + 2) * RMEM_MAX_XFER,
			    src + (RMEM_TRAIN_MAX + 2) * RMEM_MAX_XFER, RMEM_MAX_XFER);
}

/* A piece refused in mid-train is the block's verdict, not lost. */
static void write_block_sync_reports_a_refused_piece(void **state)
{
	static uint8_t src[3 * RMEM_MAX_XFER];
	int r;

	(void)state;
	write_block_sync(1, &r, src, sizeof src);
	assert_int_equal(pump_n, 3);
	assert_int_equal(r, -EROFS);
	assert_memory_equal(remote, src, RMEM_MAX_XFER);
	for (size_t i = RMEM_MAX_XFER; i < 2 * RMEM_MAX_XFER; i++)
		assert_int_equal(remote[i], 0);
	assert_memory_equal(remote + 2 * RMEM_MAX_XFER, src + 2 * RMEM_MAX_XFER, RMEM_MAX_XFER);
	assert_int_equal(rmem_ctr.refused_inhibit, 1);
}

static void write_block_sync_all_applied(void **state)
{
	static uint8_t src[2 * RMEM_MAX_XFER + 5];
	int r;

	(void)state;
	write_block_sync(-1, &r, src, sizeof src);
	assert_int_equal(r, 0);
	assert_int_equal(pump_n, 3);
	assert_memory_equal(remote, src, sizeof src);
	assert_int_equal(rmem_ctr.applied_write, 3);
	assert_int_equal(host_frames(), 0);
}

/*
 * An asynchronous block write keeps its flags on every piece, not only the
 * last: with RMEM_NOWAIT and no room it fails at its first piece and sends
 * nothing (it never blocks); with RMEM_MARKED a refused first piece is
 * remembered at the target although the last one landed.
 */
static void write_block_keeps_nowait_and_marked_on_every_piece(void **state)
{
	static uint8_t src[3 * RMEM_MAX_XFER];
	int seg, rd;

	(void)state;
	rd = attach_remote(&seg);
	host_can_send = 0;
	assert_int_equal(rmem_write_block(rd, 0, src, sizeof src, RMEM_NOWAIT), -EAGAIN);
	assert_int_equal(host_frames(), 0);
	assert_int_equal(rmem_ctr.fifo_overflows, 1);
	host_can_send = 1;

	for (size_t i = 0; i < sizeof src; i++)
		src[i] = (uint8_t)(i * 5 + 3);
	rmem_marked_take(PEER);
	assert_int_equal(rmem_write_block(rd, 0, src, sizeof src, RMEM_MARKED), 0);
	assert_int_equal(host_frames(), 3);
	pump_seg = seg;
	pump_n = 0;
	inhibit_at = 0;			/* the first piece refused */
	pump();
	inhibit_at = -1;
	assert_int_equal(pump_n, 3);
	assert_int_equal(rmem_ctr.refused_inhibit, 1);
	assert_true(rmem_marked_refused(PEER));
	rmem_marked_take(PEER);
	assert_memory_equal(remote + RMEM_MAX_XFER, src + RMEM_MAX_XFER, 2 * RMEM_MAX_XFER);
	rmem_release(rd);
}

/* Every frame this node sent handed to its own receive half, as node 2 would take it. */
static void pump_all(void)
{
	struct host_frame f;

	while (host_frame_take(&f) == 0)
		assert_int_equal(rmem_receive(PEER, f.data, f.len, f.raw), 0);
}

/*
 * An atomic needs an aligned word at the target, wherever the segment
 * starts: on a segment based 4 mod 8 the word at offset 4 is aligned and
 * the one at offset 0 is not.  The issuer knows offsets only, so the
 * target decides.
 */
static void atomics_on_a_segment_based_4_mod_8(void **state)
{
	uint64_t old = 1, word;
	uint32_t gen;

	(void)state;
	int seg = seg_export_for("odd", remote + 4, 256, PEER, RMEM_ALL);
	assert_true(seg >= 0);
	assert_int_equal(seg_ticket(seg, PEER, &gen), 0);
	int rd = rmem_attach(PEER, seg, gen, 256, RMEM_ALL);
	assert_true(rd >= 0);
	host_pump = pump_all;
	assert_int_equal(rmem_cas(rd, 4, 0, 77, &old), 0);
	assert_int_equal(old, 0);
	memcpy(&word, remote + 8, 8);
	assert_int_equal(word, 77);
	assert_int_equal(rmem_fadd(rd, 12, 5, &old), 0);
	memcpy(&word, remote + 16, 8);
	assert_int_equal(word, 5);
	/* Offset 0 is address 4 mod 8: refused by the target, nothing changed. */
	assert_int_equal(rmem_cas(rd, 0, 0, 99, &old), -EINVAL);
	assert_int_equal(rmem_ctr.refused_align, 1);
	memcpy(&word, remote + 4, 8);
	assert_int_equal(word, 77ULL << 32);
	host_pump = NULL;
	rmem_release(rd);
}

/*
 * A block of compare-and-swaps (RM_CAS_BLOCK, rmem_cas_block_start): each
 * word that held its expected value takes its new one, the others stay as
 * they are; the words found come back as a READ's data would, into the
 * issuer's own segment.  Raw, without the atomic right, misaligned or
 * malformed: refused, nothing changed.
 */
static void cas_block_swaps_each_word_that_held_its_value(void **state)
{
	uint64_t was[4] = { 1, 2, 3, 4 }, pairs[8] = { 1, 10, 9, 20, 3, 30, 4, 40 };
	uint64_t now[4], found[4], want[4] = { 10, 2, 30, 40 };
	uint32_t gen, gen_rw;
	uint8_t b[128];
	struct host_frame f;

	(void)state;
	memcpy(remote + 8, was, sizeof was);
	int seg = seg_export_for("cas", remote, 256, PEER, RMEM_ALL);
	assert_true(seg >= 0);
	assert_int_equal(seg_ticket(seg, PEER, &gen), 0);
	int rd = rmem_attach(PEER, seg, gen, 256, RMEM_ALL);
	int lseg = seg_export("found", local, sizeof local, 0);
	assert_true(rd >= 0 && lseg >= 0);
	assert_int_equal(rmem_cas_block_max(rd), RMEM_MAX_XFER / 16);
	host_pump = pump_all;
	int h = rmem_cas_block_start(rd, 8, pairs, 4, lseg, 64);
	assert_true(h > 0);
	assert_int_equal(rmem_read_wait(h, 1000000000ull), 0);
	memcpy(now, remote + 8, sizeof now);
	assert_memory_equal(now, want, sizeof want);
	memcpy(found, local + 64, sizeof found);
	assert_memory_equal(found, was, sizeof was);
	assert_int_equal(local[63], 0x11);
	assert_int_equal(local[96], 0x11);
	assert_int_equal(rmem_ctr.applied_atomic, 4);
	assert_int_equal(rmem_ctr.applied_cas_block, 1);

	/* The issuer's own checks: too many words, beyond the segment, a local segment too short. */
	assert_int_equal(rmem_cas_block_start(rd, 8, pairs, 0, lseg, 0), -EINVAL);
	assert_int_equal(rmem_cas_block_start(rd, 8, pairs, rmem_cas_block_max(rd) + 1, lseg, 0), -EINVAL);
	assert_int_equal(rmem_cas_block_start(rd, 240, pairs, 4, lseg, 0), -EINVAL);
	assert_int_equal(rmem_cas_block_start(rd, 8, pairs, 4, lseg, sizeof local - 8), -EINVAL);
	/* The target's: a misaligned first word is refused whole. */
	h = rmem_cas_block_start(rd, 4, pairs, 2, lseg, 0);
	assert_true(h > 0);
	assert_int_equal(rmem_read_wait(h, 1000000000ull), -EINVAL);
	memcpy(now, remote + 8, sizeof now);
	assert_memory_equal(now, want, sizeof want);
	host_pump = NULL;

	/* Without the atomic right, raw, or pairs that do not match the count: nothing changes. */
	int seg_rw = export_remote(RMEM_RW, &gen_rw);
	size_t n = msg(b, RM_CAS_BLOCK, 0, (uint16_t)seg_rw, gen_rw, 8, 16, 0x500, 0, pairs, 32);
	assert_int_equal(rmem_receive(PEER, b, n, 0), 0);
	struct rmem_msg a = take(&f, 0);
	assert_int_equal(a.op, RM_STATUS);
	assert_int_equal(a.status, RMS_RIGHTS);
	n = msg(b, RM_CAS_BLOCK, RM_F_RAW, (uint16_t)seg, gen, 8, 16, 0x600, 0, pairs, 32);
	assert_int_equal(rmem_receive(PEER, b, n, 1), 0);
	assert_int_not_equal(take(&f, 1).status, RMS_OK);
	uint64_t malformed = rmem_ctr.refused_malformed;
	n = msg(b, RM_CAS_BLOCK, 0, (uint16_t)seg, gen, 8, 16, 0x700, 0, pairs, 24);
	assert_int_equal(rmem_receive(PEER, b, n, 0), 0);
	n = msg(b, RM_CAS_BLOCK, 0, (uint16_t)seg, gen, 8, 12, 0x800, 0, pairs, 24);
	assert_int_equal(rmem_receive(PEER, b, n, 0), 0);
	assert_int_equal(rmem_ctr.refused_malformed, malformed + 2);
	assert_int_equal(host_frames(), 0);
	memcpy(now, remote + 8, sizeof now);
	assert_memory_equal(now, want, sizeof want);
	assert_int_equal(rmem_ctr.applied_atomic, 4);
	assert_int_equal(rmem_ctr.refused_unreliable, 1);
	rmem_release(rd);
}

/*
 * Paper 2.1: a WRITE that finds the FIFO (the channel's window, the packet
 * pool) full raises an exception at the issuer.  With RMEM_NOWAIT: -EAGAIN
 * at once, nothing sent, counted; with room, sent.  Not with RMEM_SYNC.
 */
static void nowait_write_overflow_is_the_papers_exception(void **state)
{
	int seg, rd;

	(void)state;
	rd = attach_remote(&seg);
	(void)seg;
	host_can_send = 0;
	assert_int_equal(rmem_write(rd, 0, "abcdefgh", 8, RMEM_NOWAIT), -EAGAIN);
	assert_int_equal(rmem_ctr.fifo_overflows, 1);
	assert_int_equal(host_frames(), 0);
	assert_int_equal(rmem_write(rd, 0, "abcdefgh", 8, RMEM_NOWAIT | RMEM_SYNC), -EINVAL);
	host_can_send = 1;
	assert_int_equal(rmem_write(rd, 0, "abcdefgh", 8, RMEM_NOWAIT), 0);
	assert_int_equal(host_frames(), 1);
	pump_all();
	assert_memory_equal(remote, "abcdefgh", 8);
	assert_int_equal(rmem_ctr.fifo_overflows, 1);
	rmem_release(rd);
}

/*
 * A message that lies in memory other nodes write (the shared-memory
 * link's ring, fabric_rx_shared): a WRITE of the fast path lands from
 * there; one the fast path does not take (it asks for an answer) is
 * copied first and served from the copy, answered as any; a short one is
 * refused as malformed, in shared memory as out of it.
 */
static void shared_messages_land_once_checked(void **state)
{
	static uint8_t ring[4096];
	struct host_frame f;
	uint32_t gen;

	(void)state;
	/* rmem's handler, as the kernel registers it (its init hook), on a fresh table. */
	if (!host_handler(RMEM_PROTO, 0))
		assert_int_equal(host_run_init_hooks(INIT_SUBSYS_4), 0);
	setup(NULL);
	fabric_handler_t h = host_handler(RMEM_PROTO, 0);
	assert_non_null(h);
	int seg = export_remote(RMEM_ALL, &gen);
	host_rx_shared = 1;
	size_t n = msg(ring, RM_WRITE, 0, (uint16_t)seg, gen, 64, 2048, 0, 0, local, 0);
	memset(ring + n, 0x5a, 2048);
	assert_int_equal(h(PEER, ring, n + 2048, NULL), 0);
	assert_int_equal(remote[64], 0x5a);
	assert_int_equal(remote[64 + 2047], 0x5a);
	assert_int_equal(remote[64 + 2048], 0);
	assert_int_equal(rmem_ctr.applied_write, 1);
	assert_int_equal(host_frames(), 0);
	n = msg(ring, RM_WRITE, RM_F_ACK, (uint16_t)seg, gen, 4096, 8, 0x300, 0, "acked-in", 8);
	assert_int_equal(h(PEER, ring, n, NULL), 0);
	assert_memory_equal(remote + 4096, "acked-in", 8);
	struct rmem_msg a = take(&f, 0);
	assert_int_equal(a.op, RM_STATUS);
	assert_int_equal(a.tag, 0x300);
	assert_int_equal(a.status, RMS_OK);
	assert_int_equal(h(PEER, ring, 3, NULL), 0);
	assert_int_equal(rmem_ctr.refused_malformed, 1);
	/* A READ's answer where it lies: its data lands in the READ's segment, once. */
	int lseg = seg_export("dest", local, sizeof local, 0);
	int rd = rmem_attach(PEER, 7, 1, 4096, RMEM_R);
	int hr = rmem_read(rd, 0, 1024, lseg, 32, 0);
	assert_true(hr > 0);
	take(&f, 0);
	n = msg(ring, RM_READ_RESP, 0, 0, 0, 0, 1024, (uint32_t)hr, RMS_OK, NULL, 0);
	memset(ring + n, 0xc3, 1024);
	assert_int_equal(h(PEER, ring, n + 1024, NULL), 0);
	assert_int_equal(rmem_read_wait(hr, 0), 0);
	assert_int_equal(local[32], 0xc3);
	assert_int_equal(local[32 + 1023], 0xc3);
	assert_int_equal(local[32 + 1024], 0x11);
	/* One whose length disagrees with its count is malformed, counted, and lands nowhere. */
	hr = rmem_read(rd, 0, 1024, lseg, 4096, 0);
	assert_true(hr > 0);
	take(&f, 0);
	n = msg(ring, RM_READ_RESP, 0, 0, 0, 0, 1024, (uint32_t)hr, RMS_OK, NULL, 0);
	assert_int_equal(h(PEER, ring, n + 512, NULL), 0);
	assert_int_equal(rmem_ctr.refused_malformed, 2);
	assert_int_equal(local[4096], 0x11);
	assert_int_equal(rmem_read_poll(hr), 0);
	host_rx_shared = 0;
	assert_int_equal(rmem_ctr.applied_write, 2);
}

/*
 * A lookup's answer longer than what the asker expects (a peer's name
 * service may answer up to 32 bytes; a segment's answer is 16): refused
 * as -EPROTO, nothing written past the asker's answer.  Before, the 32
 * bytes were copied into the asker's 16-byte answer on its stack.
 */
static uint8_t long_answer_fill;

static void answer_long(void)
{
	struct host_frame f;
	struct call_msg m;
	uint8_t buf[CALL_HDR_LEN + CALL_ANSWER_MAX];

	while (host_frame_take(&f) == 0) {
		assert_int_equal(f.proto, CALL_PROTO);
		memcpy(&m, f.data, sizeof m);
		assert_int_equal(m.op, CALL_LOOKUP);
		m.op = CALL_LOOKUP_DONE;
		m.len = CALL_ANSWER_MAX;
		m.status = CALL_OK;
		memcpy(buf, &m, sizeof m);
		memset(buf + sizeof m, long_answer_fill, CALL_ANSWER_MAX);
		assert_int_equal(host_handler(CALL_PROTO, 0)(PEER, buf, sizeof buf, NULL), 0);
	}
}

static void a_lookup_answer_longer_than_asked_is_refused(void **state)
{
	(void)state;
	assert_int_equal(host_run_init_hooks(INIT_SUBSYS_4), 0);
	long_answer_fill = 0x5a;
	host_pump = answer_long;
	assert_int_equal(rmem_import(PEER, "seg"), -EPROTO);
	host_pump = NULL;
}

UNIT_MAIN("tests", NULL, NULL,
	  cmocka_unit_test_setup(a_lookup_answer_longer_than_asked_is_refused, setup),
	  cmocka_unit_test_setup(raw_atomics_are_refused, setup),
	  cmocka_unit_test_setup(atomics_on_a_segment_based_4_mod_8, setup),
	  cmocka_unit_test_setup(cas_block_swaps_each_word_that_held_its_value, setup),
	  cmocka_unit_test_setup(write_block_sync_unreliable_doubled, setup),
	  cmocka_unit_test_setup(write_block_sync_many_trains, setup),
	  cmocka_unit_test_setup(write_block_keeps_nowait_and_marked_on_every_piece, setup),
	  cmocka_unit_test_setup(nowait_write_overflow_is_the_papers_exception, setup),
	  cmocka_unit_test_setup(read_answer_never_lands_in_a_reexported_slot, setup),
	  cmocka_unit_test_setup(read_answer_lands_in_its_segment, setup),
	  cmocka_unit_test_setup(descriptor_of_a_rebooted_node_is_refused, setup),
	  cmocka_unit_test_setup(write_block_sync_reports_a_refused_piece, setup),
	  cmocka_unit_test_setup(write_block_sync_all_applied, setup),
	  cmocka_unit_test_setup(shared_messages_land_once_checked, setup))
