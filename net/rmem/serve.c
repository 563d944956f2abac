/*
 * Remote memory, the receive half: every operation checked and applied at
 * the target, in the fabric's receive path (interrupts off, serialized),
 * where the paper's kernel emulation ran (section 2.3); answers to this
 * node's calls go on to the issuing half (rmem.c, rmem_complete).  See
 * rmem.h for the model, proto.h for the wire and the check.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kernel/builtins.h"	/* memcpy_upto; the kernel build has it already */

#include "kernel/init.h"
#include "kernel/node.h"
#include "kernel/trace.h"
#include "kernel/x86.h"
#include "net/call/call.h"
#include "net/call/names.h"
#include "net/fabric/fabric.h"
#include "net/net.h"
#include "net/rmem/internal.h"
#include "net/rmem/proto.h"

_Static_assert(RMEM_XFER_LIMIT <= RMEM_DATA_MAX, "the longest transfer is taken");
_Static_assert(RMEM_HDR_LEN + RMEM_DATA_MAX == FAB_FRAME_LIMIT - FAB_ETH_HLEN - FAB_HDR_LEN - FAB_TRAILER_LEN,
	       "the longest message fills the longest frame");
_Static_assert(RMEM_HDR_LEN + RMEM_MAX_XFER <= FAB_MTU, "a transfer fits one frame");


static void count_refusal(int st)
{
	switch (st) {
	case RMS_BAD_SEG: rmem_ctr.refused_bad_seg++; break;
	case RMS_STALE: rmem_ctr.refused_stale++; break;
	case RMS_RIGHTS: rmem_ctr.refused_rights++; break;
	case RMS_BOUNDS: rmem_ctr.refused_bounds++; break;
	case RMS_INHIBIT: rmem_ctr.refused_inhibit++; break;
	case RMS_ALIGN: rmem_ctr.refused_align++; break;
	default: rmem_ctr.refused_malformed++; break;
	}
}

/*
 * The answer to a request: on the reliable channel in tx, begun by serve
 * for exactly this length before anything changed; raw, as a raw frame.
 */
static void answer(struct fabric_tx *tx, int src, uint8_t op, const struct rmem_msg *m, int status,
		   const void *data, size_t dlen, int raw)
{
	/* The request's offset goes back with it: a SYNC write's pieces are told apart by it. */
	struct rmem_msg a = { .op = op, .tag = m->tag, .off = m->off, .status = status,
			      .count = (uint32_t)dlen };

	if (raw) {
		a.flags = RM_F_RAW;
		call_answer(src, RMEM_PROTO, &a, sizeof a, data, dlen, raw);
		return;
	}
	/* Written where it goes (on the shared-memory link, the NIC's slot). */
	memcpy(tx->payload, &a, sizeof a);
	if (dlen)
		memcpy_upto(tx->payload + sizeof a, data, dlen, RMEM_MAX_XFER);
	if (fabric_tx_end(tx) < 0)
		rmem_ctr.answers_lost++;
}


/* An atomic applied: its answer (the old value), and notification if asked for. */
static inline __attribute__((always_inline)) void atomic_done(struct fabric_tx *tx, int src, const struct rmem_msg *m,
							      uint64_t old, int raw)
{
	rmem_ctr.applied_atomic++;
	trace_point(TS_MECH_SEND);
	answer(tx, src, RM_ATOMIC_RESP, m, RMS_OK, &old, 8, raw);
	trace_point(TS_MECH_DONE);
	if (m->flags & RM_F_INTR)
		rmem_arrived(m->seg, m->off, 8);
}

/*
 * RM_CAS_BLOCK: the paper's compare-and-swap (2.1, 2.3) on each word of
 * the block in turn, from one message: word i becomes desired[i] if it
 * holds expect[i].  Each word's swap is atomic as a lone CAS's is (the
 * receive path runs with interrupts off, one message at a time); the
 * block as a whole is not, and says nothing of the words' order.  The
 * answer is the words found, as a READ's: written into the answer's slot
 * as they are found, no copy between.  Reliable channel only (serve).
 */
static void cas_block(struct fabric_tx *tx, const struct rmem_msg *m, uint8_t *target,
		      const uint8_t *pairs)
{
	struct rmem_msg a = { .op = RM_READ_RESP, .tag = m->tag, .off = m->off, .status = RMS_OK,
			      .count = m->count };
	uint8_t *out = tx->payload + sizeof a;
	uint32_t words = m->count / 8;

	for (uint32_t i = 0; i < words; i++) {
		uint64_t expect, desired, old;
		memcpy(&expect, pairs + 16 * i, 8);
		memcpy(&desired, pairs + 16 * i + 8, 8);
		old = expect;
		__atomic_compare_exchange_n((uint64_t *)target + i, &old, desired, 0, __ATOMIC_SEQ_CST,
					    __ATOMIC_SEQ_CST);
		memcpy(out + 8 * i, &old, 8);
	}
	rmem_ctr.applied_atomic += words;
	rmem_ctr.applied_cas_block++;
	memcpy(tx->payload, &a, sizeof a);
	if (fabric_tx_end(tx) < 0)
		rmem_ctr.answers_lost++;
	if (m->flags & RM_F_INTR)
		rmem_arrived(m->seg, m->off, m->count);
}

/* The length of the answer's data to m, whose check gave st. */
static size_t answer_len(const struct rmem_msg *m, int st)
{
	if (st != RMS_OK)
		return 0;
	switch (m->op) {
	case RM_READ_REQ:
	case RM_CAS_BLOCK: return m->count;
	case RM_CAS:
	case RM_FADD: return 8;
	default: return 0;
	}
}

/* A request from src.  Return -EBUSY to be offered it again later. */
/*
 * Whether a marked WRITE (RMEM_MARKED) from each node was refused since
 * the verdict was last taken (rmem_marked_take): several WRITEs are
 * refused if any of them was; a new incarnation of the node starts clear.
 */
static uint8_t marked_refused[MAX_NODES];

int rmem_marked_refused(int src)
{
	return src >= 0 && src < MAX_NODES && marked_refused[src];
}

void rmem_marked_take(int src)
{
	if (src >= 0 && src < MAX_NODES)
		marked_refused[src] = 0;
}


static int serve(int src, const struct rmem_msg *m, const uint8_t *data, int raw)
{
	struct rmem_segview v = segtab_view(&rmem_segtab, m->seg, src);
	int st = rmem_check(&v, m);

	/* A READ longer than one message back to src (its issuer asked beyond rmem_max_xfer). */
	if (st == RMS_OK && m->op == RM_READ_REQ && m->count > RMEM_MAX_XFER &&
	    RMEM_HDR_LEN + (size_t)m->count > fabric_mtu(src))
		st = RMS_MALFORMED;
	int needs_answer = st != RMS_OK || m->op != RM_WRITE || (m->flags & RM_F_ACK);

	/*
	 * Paper 2.3: "Unlike the read/write primitives, which are only as
	 * reliable as the network, the compare-and-swap operation is reliable
	 * in the face of cell loss."  A raw frame has no sequence number, so
	 * nothing removes its duplicates: an atomic that came raw could apply
	 * twice.  Atomics are taken from the reliable channel only.
	 */
	struct fabric_tx tx;

	if (raw && (m->op == RM_CAS || m->op == RM_FADD || m->op == RM_CAS_BLOCK)) {
		rmem_ctr.refused_unreliable++;
		answer(&tx, src, RM_STATUS, m, RMS_MALFORMED, NULL, 0, raw);
		return 0;
	}
	/*
	 * Nothing changes unless its answer can go: a retry must not apply
	 * twice.  The answer's room is taken first; in a buffer (not the
	 * NIC's slot) it goes only if the channel has room for it now.
	 */
	if (needs_answer && !raw) {
		if (fabric_tx_begin(&tx, src, 0, RMEM_PROTO, RMEM_HDR_LEN + answer_len(m, st),
				    FABRIC_NOWAIT) < 0)
			return -EBUSY;
		if (tx.pb && !call_can_answer(src)) {
			fabric_tx_drop(&tx);
			return -EBUSY;
		}
	}
	/* A marked WRITE: what follows it asks whether all of them landed (rmem_marked_refused). */
	if (m->op == RM_WRITE && (m->flags & RM_F_MARKED) && st != RMS_OK && src >= 0 && src < MAX_NODES)
		marked_refused[src] = 1;
	if (st != RMS_OK) {
		count_refusal(st);
		answer(&tx, src, RM_STATUS, m, st, NULL, 0, raw);
		return 0;
	}
	struct segslot *s = &rmem_segtab.slot[m->seg];
	uint8_t *target = s->base + m->off;
	switch (m->op) {
	case RM_WRITE:
		memcpy_upto(target, data, m->count, RMEM_MAX_XFER);
		trace_point(TS_MECH_DONE);
		rmem_ctr.applied_write++;
		if (m->flags & RM_F_ACK)
			answer(&tx, src, RM_STATUS, m, RMS_OK, NULL, 0, raw);
		if (m->flags & RM_F_INTR)
			rmem_arrived(m->seg, m->off, m->count);
		break;
	case RM_READ_REQ:
		rmem_ctr.applied_read++;
		trace_point(TS_MECH_SEND);
		answer(&tx, src, RM_READ_RESP, m, RMS_OK, target, m->count, raw);
		trace_point(TS_MECH_DONE);
		break;
	case RM_CAS: {
		uint64_t expect, desired, old;
		memcpy(&expect, data, 8);
		memcpy(&desired, data + 8, 8);
		old = expect;
		__atomic_compare_exchange_n((uint64_t *)target, &old, desired, 0, __ATOMIC_SEQ_CST,
					    __ATOMIC_SEQ_CST);
		atomic_done(&tx, src, m, old, raw);
		break;
	}
	case RM_FADD: {
		uint64_t add, old;
		memcpy(&add, data, 8);
		old = __atomic_fetch_add((uint64_t *)target, add, __ATOMIC_SEQ_CST);
		atomic_done(&tx, src, m, old, raw);
		break;
	}
	case RM_CAS_BLOCK:
		cas_block(&tx, m, target, data);
		break;
	default:
		/* rmem_parse lets no other request by; were one here, its room goes back. */
		if (needs_answer && !raw)
			fabric_tx_drop(&tx);
		break;
	}
	return 0;
}

/*
 * The common request, taken in one pass: an asynchronous WRITE (on the
 * reliable channel or raw) that its segment allows (paper 2.3: the receive path
 * does the operation in a handful of instructions).  The same checks as
 * rmem_parse and rmem_check, in the order that settles a good one
 * soonest; anything else, refusals included, is left to serve().  1 if
 * applied, 0 if not this kind or not allowed.
 */
static int write_fast(int src, const struct rmem_msg *m, const uint8_t *data, size_t dlen)
{
	const struct segslot *s;

	if (m->op != RM_WRITE || (m->flags & ~(RM_F_INTR | RM_F_MARKED | RM_F_RAW)) || m->count != dlen ||
	    m->count == 0 || m->count > RMEM_DATA_MAX || m->seg >= SEGTAB_SLOTS ||
	    (unsigned)src >= SEGTAB_NODES)
		return 0;
	s = &rmem_segtab.slot[m->seg];
	if (!s->used || s->gen[src] != m->gen || !(s->rights[src] & RMEM_W) || s->inhibit ||
	    (uint64_t)m->off + m->count > s->size)
		return 0;
	memcpy_upto(s->base + m->off, data, m->count, RMEM_MAX_XFER);
	trace_point(TS_MECH_DONE);
	rmem_ctr.applied_write++;
	if (m->flags & RM_F_INTR)
		rmem_arrived(m->seg, m->off, m->count);
	return 1;
}

int rmem_receive(int src, const uint8_t *payload, size_t len, int raw)
{
	struct rmem_msg m;
	const uint8_t *data;
	size_t dlen;

	trace_point(TS_MECH_RX);
	if (len >= RMEM_HDR_LEN) {
		memcpy(&m, payload, sizeof m);
		if (write_fast(src, &m, payload + RMEM_HDR_LEN, len - RMEM_HDR_LEN))
			return 0;
	}
	if (rmem_parse(payload, len, &m, &data, &dlen) != RMS_OK) {
		rmem_ctr.refused_malformed++;
		return 0;
	}
	switch (m.op) {
	case RM_READ_RESP:
	case RM_ATOMIC_RESP:
	case RM_STATUS:
		rmem_complete(src, &m, data);
		return 0;
	default:
		return serve(src, &m, data, raw);
	}
}

/*
 * A message where it lies in the shared-memory link's ring, which other
 * nodes may write meanwhile (fabric_rx_shared): a WRITE the fast path
 * takes, or a READ's answer, is checked on a copy of its header and its
 * data copied once, from there to its segment, as a sender's bytes; any
 * other message is copied whole first (into memory of this node's own),
 * then received from there.
 */
static uint8_t shared_copy[FAB_FRAME_LIMIT];

static __attribute__((noinline)) int receive_shared(int src, const uint8_t *payload, size_t len)
{
	struct rmem_msg m;

	if (len >= RMEM_HDR_LEN) {
		memcpy(&m, payload, sizeof m);
		__asm__ volatile("" ::: "memory");	/* write_fast checks the copy, never the ring */
		if (write_fast(src, &m, payload + RMEM_HDR_LEN, len - RMEM_HDR_LEN))
			return 0;
		if (m.op == RM_READ_RESP) {
			/* rmem_complete reads m (ours) for every check, the ring only to copy the data. */
			if (rmem_parse_header(&m, len - RMEM_HDR_LEN) == RMS_OK)
				rmem_complete(src, &m, payload + RMEM_HDR_LEN);
			else
				rmem_ctr.refused_malformed++;
			return 0;
		}
	}
	if (len > sizeof shared_copy)
		return 0;
	memcpy(shared_copy, payload, len);
	return rmem_receive(src, shared_copy, len, 0);
}

static int rmem_handler(int src, const uint8_t *payload, size_t len, struct pktbuf *pb)
{
	(void)pb;
	if (__builtin_expect(fabric_rx_shared(), 0))
		return receive_shared(src, payload, len);
	return rmem_receive(src, payload, len, 0);
}

static int rmem_raw_handler(int src, const uint8_t *payload, size_t len, struct pktbuf *pb)
{
	(void)pb;
	rmem_receive(src, payload, len, 1);
	return 0;
}

static int rmem_init(void)
{
	int r;

	if (!fabric_ready())
		return -ENODEV;
	if ((r = fabric_register(RMEM_PROTO, rmem_handler)) < 0 ||
	    (r = fabric_register_in_place(RMEM_PROTO)) < 0 ||
	    (r = fabric_register_raw(RMEM_PROTO, rmem_raw_handler)) < 0 ||
	    (r = names_register(NAME_SEGMENT, rmem_seg_resolve)) < 0 ||
	    (r = fabric_on_peer_reset(rmem_marked_take)) < 0)
		return r;
	segtab_init(&rmem_segtab, node_id);
	rmem_ready = 1;
	return 0;
}
INIT_HOOK(INIT_SUBSYS_4, rmem, rmem_init);

void rmem_counters(struct rmem_counters *out)
{
	irqflags_t f = irq_save();
	*out = rmem_ctr;
	irq_restore(f);
}

#define COUNTER_TYPE struct rmem_counters
static const struct counter_row rmem_rows[] = { RMEM_COUNTERS(COUNTER_ROW) };
#undef COUNTER_TYPE

void rmem_print_stats(void)
{
	struct rmem_counters c;

	rmem_counters(&c);
	counters_print("rmem", rmem_rows, COUNTER_ROWS(rmem_rows), &c);
}
/* In an NMI's dump (boot/cluster's --timeout): what this node applied and refused. */
DUMP_HOOK(rmem, rmem_print_stats);
