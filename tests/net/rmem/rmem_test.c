/*
 * rmem-test: every remote-memory operation, every protection violation,
 * revocation during traffic, and atomics under contention from every node.
 *
 * Node 0 is the target: it exports segments cut from the middle of larger
 * buffers whose other bytes are a pattern, so that it can check, byte for
 * byte, that nothing outside a segment (and nothing inside one that an
 * operation had no right to touch) ever changed.  Node 1 runs the
 * operation check_count, node 2 (node 1 with two nodes) the violations, every
 * node the contention test.  Each check prints one line on failure; the
 * app ends with RESULT rmem-test checks=.. failed=.. and fails if any did.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/app.h"
#include "kernel/sync.h"
#include "kernel/thread.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"
#include "net/call/barrier.h"
#include "net/fabric/fabric.h"
#include "net/rmem/rmem.h"
#include "tests/apps/check.h"

#define GUARD 512			/* pattern bytes on each side of a segment */
#define SEG_SIZE 4096
#define BARRIER_NS 120000000000ULL

/* Node 0's buffers: GUARD | segment | GUARD, all patterned at first. */
enum { B_DATA, B_RO, B_NOACCESS, B_INHIBIT, B_REVOKE, B_COUNTER, NBUF };
static const char *const names[NBUF] = { "data", "ro", "noaccess", "inhibit", "revoke", "counter" };
static const int rights[NBUF] = { RMEM_RW, RMEM_R, 0, RMEM_RW, RMEM_RW, RMEM_ALL };
static uint8_t *buf[NBUF];
static int segno[NBUF];

/* Node 0's ticket for "noaccess": its segment number and each node's generation. */
static struct {
	uint32_t seg;
	uint32_t gen[MAX_NODES];
} tickets;

static uint8_t pat(int b, size_t i)
{
	return (uint8_t)(b * 37 + i * 7 + 1);
}

/* --- node 0: the target --------------------------------------------------- */

static volatile uint64_t notified;

static void on_notify(void *arg, int seg, uint32_t off, uint32_t count)
{
	(void)arg;
	(void)seg;
	(void)off;
	(void)count;
	notified++;
}

static int export_all(void)
{
	for (int b = 0; b < NBUF; b++) {
		buf[b] = malloc(SEG_SIZE + 2 * GUARD);
		if (!buf[b])
			return -1;
		for (size_t i = 0; i < SEG_SIZE + 2 * GUARD; i++)
			buf[b][i] = pat(b, i);
		if (b == B_COUNTER)
			memset(buf[b] + GUARD, 0, 64);
		segno[b] = seg_export(names[b], buf[b] + GUARD, SEG_SIZE, rights[b]);
		if (segno[b] < 0)
			return -1;
	}
	seg_notify(segno[B_DATA], 1, on_notify, NULL);
	seg_inhibit(segno[B_INHIBIT], 1);
	/* What a descriptor of "noaccess" would carry, per node, readable by all. */
	tickets.seg = (uint32_t)segno[B_NOACCESS];
	for (int n = 0; n < MAX_NODES; n++)
		if (seg_ticket(segno[B_NOACCESS], n, &tickets.gen[n]) < 0)
			return -1;
	return seg_export("tickets", &tickets, sizeof tickets, RMEM_R) < 0 ? -1 : 0;
}

/* Bytes of buffer b that differ from the pattern, outside [lo, hi) of the segment. */
static size_t changed_outside(int b, size_t lo, size_t hi)
{
	size_t n = 0;

	for (size_t i = 0; i < SEG_SIZE + 2 * GUARD; i++) {
		if (i >= GUARD + lo && i < GUARD + hi)
			continue;
		if (buf[b][i] != pat(b, i))
			n++;
	}
	return n;
}

/* --- node 1: every operation ------------------------------------------------ */

static int lseg = -1;
static uint8_t *lbuf;

static void ops_checks(int target)
{
	uint8_t out[3000];
	int rd, r, h;
	uint64_t old;

	rd = rmem_import(target, "data");
	EXPECT(rd >= 0, "import data: %d", rd);
	if (rd < 0)
		return;
	size_t size;
	int rts, node;
	EXPECT(rmem_desc_info(rd, &node, &size, &rts) == 0 && node == target && size == SEG_SIZE &&
		       rts == RMEM_RW,
	       "descriptor info node %d size %zu rights %d", node, size, rts);

	/* WRITE, synchronous: applied before it returns. */
	for (int i = 0; i < 40; i++)
		out[i] = (uint8_t)(0xa0 + i);
	r = rmem_write(rd, 100, out, 40, RMEM_SYNC);
	EXPECT(r == 0, "sync write: %d", r);

	/* READ it back into a local segment, waiting. */
	h = rmem_read(rd, 100, 40, lseg, 0, 0);
	EXPECT(h >= 0, "read: %d", h);
	if (h >= 0) {
		r = rmem_read_wait(h, 10000000000ULL);
		EXPECT(r == 0 && memcmp(lbuf, out, 40) == 0, "read back 40 bytes: %d", r);
	}

	/* READ, completion by polling. */
	memset(lbuf, 0, 64);
	h = rmem_read(rd, 100, 40, lseg, 8, 0);
	EXPECT(h >= 0, "read to poll: %d", h);
	if (h >= 0) {
		uint64_t end = cycles() + ns_to_cycles(10000000000ULL);
		while (rmem_read_poll(h) == 0 && cycles() < end)
			thread_yield();
		EXPECT(rmem_read_poll(h) == 1, "read never completed by polling");
		EXPECT(rmem_read_wait(h, 1000000) == 0 && memcmp(lbuf + 8, out, 40) == 0, "polled data");
	}

	/* Asynchronous WRITE with notification, then a fence: no error. */
	for (int i = 0; i < 20; i++)
		out[i] = (uint8_t)(i * 3);
	r = rmem_write(rd, 200, out, 20, RMEM_INTR);
	EXPECT(r == 0, "async write: %d", r);
	EXPECT(rmem_sync(rd, 10000000000ULL) == 0, "sync after a good async write");

	/* Block write of 3000 bytes, then three reads. */
	for (int i = 0; i < 3000; i++)
		out[i] = (uint8_t)(i ^ 0x5a);
	r = rmem_write_block(rd, 1000, out, 3000, RMEM_SYNC);
	EXPECT(r == 0, "block write: %d", r);
	int ok = 1;
	for (int k = 0; k < 3; k++) {
		h = rmem_read(rd, 1000 + 1000 * (uint32_t)k, 1000, lseg, 1000, 0);
		if (h < 0 || rmem_read_wait(h, 10000000000ULL) != 0 ||
		    memcmp(lbuf + 1000, out + 1000 * k, 1000) != 0)
			ok = 0;
	}
	EXPECT(ok, "block write read back");

	/* READ of the largest transfer in one frame. */
	h = rmem_read(rd, 0, RMEM_MAX_XFER, lseg, 0, RMEM_INTR);
	EXPECT(h >= 0 && rmem_read_wait(h, 10000000000ULL) == 0, "max read");

	/* Unreliable WRITE and READ: without receive faults they arrive. */
	if (!arg_str("fault", NULL)) {
		memset(out, 0x77, 64);
		r = rmem_write(rd, 3000, out, 64, RMEM_UNRELIABLE);
		EXPECT(r == 0, "unreliable write: %d", r);
		thread_sleep_ns(50000000);
		h = rmem_read(rd, 3000, 64, lseg, 0, RMEM_UNRELIABLE);
		EXPECT(h >= 0 && rmem_read_wait(h, 5000000000ULL) == 0 && memcmp(lbuf, out, 64) == 0,
		       "unreliable write and read back");
	}

	/*
	 * Paper 2.1: a full FIFO raises an exception at the issuer.  NOWAIT
	 * writes in a burst until one finds the channel's window full (-EAGAIN,
	 * counted); every write that went lands, in order: the words read back
	 * are the last that went to each.
	 */
	{
		enum { WORDS = 128, AT = 2048 };
		static uint64_t want[WORDS];
		struct rmem_counters c0, c1;
		int went = 0, over = 0, err = 0;
		rmem_counters(&c0);
		memset(want, 0, sizeof want);
		rmem_write(rd, AT, want, WORDS * 8, RMEM_SYNC);
		for (int i = 0; i < 100000 && !over && !err; i++) {
			uint64_t v = (uint64_t)i + 1;
			r = rmem_write(rd, AT + (uint32_t)(i % WORDS) * 8, &v, 8, RMEM_NOWAIT);
			if (r == 0) {
				want[i % WORDS] = v;
				went++;
			} else if (r == -EAGAIN) {
				over = 1;
			} else {
				err = r;	/* the burst ends at any other error */
			}
		}
		EXPECT(!err, "nowait write: %d", err);
		rmem_counters(&c1);
		EXPECT(over && c1.fifo_overflows == c0.fifo_overflows + 1,
		       "no FIFO overflow after %d nowait writes (counted %lu)", went,
		       c1.fifo_overflows - c0.fifo_overflows);
		EXPECT(rmem_sync(rd, 10000000000ULL) == 0, "sync after the nowait burst");
		h = rmem_read(rd, AT, WORDS * 8, lseg, 0, 0);
		EXPECT(h >= 0 && rmem_read_wait(h, 10000000000ULL) == 0 &&
			       memcmp(lbuf, want, WORDS * 8) == 0,
		       "the %d nowait writes that went, read back", went);
		printf("rmem-test: %d nowait writes went before the FIFO overflowed\n", went);
	}

	/* Atomics. */
	int rc = rmem_import(target, "counter");
	EXPECT(rc >= 0, "import counter: %d", rc);
	if (rc >= 0) {
		r = rmem_cas(rc, 56, 0, 42, &old);
		EXPECT(r == 0 && old == 0, "cas 0->42: %d old %lu", r, old);
		r = rmem_cas(rc, 56, 0, 43, &old);
		EXPECT(r == 0 && old == 42, "failing cas sees 42: %d old %lu", r, old);
		r = rmem_fadd(rc, 56, 8, &old);
		EXPECT(r == 0 && old == 42, "fadd: %d old %lu", r, old);
		r = rmem_cas(rc, 56, 50, 0, &old);
		EXPECT(r == 0 && old == 50, "cas back to 0: %d old %lu", r, old);
		EXPECT(rmem_cas(rc, 4, 0, 1, &old) == -EINVAL, "misaligned cas refused by the target");
		EXPECT(rmem_fadd(rd, 0, 1, &old) == -EACCES, "fadd without the atomic right refused locally");
	}
	rmem_release(rd);
}

/* --- node 2 (or 1): every violation ------------------------------------------ */

static void violation_checks(int target)
{
	uint8_t out[64];
	uint64_t old;
	int rd, r;

	memset(out, 0xee, sizeof out);
	EXPECT(rmem_import(target, "nosuch") == -ENOENT, "import of a missing name");
	EXPECT(rmem_import(target, "noaccess") == -EACCES, "import without rights");

	/* Read-only: the local check refuses, and a forged right the target. */
	rd = rmem_import(target, "ro");
	EXPECT(rd >= 0, "import ro: %d", rd);
	if (rd >= 0) {
		EXPECT(rmem_write(rd, 0, out, 8, 0) == -EACCES, "write on read-only, local check");
		rmem_test_forge(rd, -1, -1, -1, RMEM_ALL);
		r = rmem_write(rd, 0, out, 8, RMEM_SYNC);
		EXPECT(r == -EACCES, "forged write right: %d", r);
		r = rmem_cas(rd, 0, 0, 1, &old);
		EXPECT(r == -EACCES, "forged atomic right: %d", r);
		rmem_release(rd);
	}

	rd = rmem_import(target, "data");
	EXPECT(rd >= 0, "import data: %d", rd);
	if (rd < 0)
		return;
	/* Out of bounds: the local check, then a forged size at the target. */
	EXPECT(rmem_write(rd, SEG_SIZE - 4, out, 8, 0) == -EINVAL, "write past the end, local check");
	rmem_test_forge(rd, -1, -1, 1LL << 40, -1);	/* past any local check */
	r = rmem_write(rd, SEG_SIZE - 4, out, 8, RMEM_SYNC);
	EXPECT(r == -ERANGE, "forged size, write past the end: %d", r);
	r = rmem_write(rd, 0xfffffff0u, out, 16, RMEM_SYNC);
	EXPECT(r == -ERANGE, "offset near 2^32 (wrap): %d", r);
	int h = rmem_read(rd, SEG_SIZE, 64, lseg, 0, 0);
	EXPECT(h >= 0 && rmem_read_wait(h, 10000000000ULL) == -ERANGE, "read past the end");
	/* Asynchronous refusal: reported at the next rmem_sync. */
	r = rmem_write(rd, SEG_SIZE + 100, out, 8, 0);
	EXPECT(r == 0, "async write past the end is sent: %d", r);
	r = rmem_sync(rd, 10000000000ULL);
	EXPECT(r == -ERANGE, "async refusal reported by sync: %d", r);
	EXPECT(rmem_sync(rd, 10000000000ULL) == 0, "the error is reported once");
	rmem_test_forge(rd, -1, -1, SEG_SIZE, -1);

	/* A forged segment number: one that does not exist, then one with no rights. */
	rmem_test_forge(rd, RMEM_MAX_SEGS - 1, -1, -1, -1);
	r = rmem_write(rd, 0, out, 8, RMEM_SYNC);
	EXPECT(r == -ENOENT, "forged segment id: %d", r);
	/*
	 * "noaccess" itself, with its current generation for this node (the
	 * ticket node 0 publishes): only the missing right is wrong, so the
	 * target must refuse with exactly -EACCES, and write nothing.
	 */
	uint32_t t[2] = { 0, 0 };
	int rt = rmem_import(target, "tickets");
	EXPECT(rt >= 0, "import tickets: %d", rt);
	if (rt >= 0) {
		int h = rmem_read(rt, 0, 4, lseg, 0, 0);
		r = h >= 0 ? rmem_read_wait(h, 10000000000ULL) : h;
		memcpy(&t[0], lbuf, 4);
		h = rmem_read(rt, 4 + 4 * (uint32_t)node_id, 4, lseg, 0, 0);
		r = r == 0 && h >= 0 ? rmem_read_wait(h, 10000000000ULL) : h;
		memcpy(&t[1], lbuf, 4);
		EXPECT(r == 0, "read the ticket: %d", r);
		rmem_release(rt);
	}
	rmem_test_forge(rd, (int)t[0], t[1], -1, RMEM_RW);
	r = rmem_write(rd, 0, out, 8, RMEM_SYNC);
	EXPECT(r == -EACCES, "forged descriptor of a no-access segment, current generation: %d", r);
	rmem_release(rd);

	/* A stale generation. */
	rd = rmem_import(target, "data");
	if (rd >= 0) {
		int node;
		size_t sz;
		rmem_desc_info(rd, &node, &sz, NULL);
		rmem_test_forge(rd, -1, 0, -1, -1);
		r = rmem_write(rd, 0, out, 8, RMEM_SYNC);
		EXPECT(r == -ESTALE, "stale generation: %d", r);
		rmem_release(rd);
	}

	/* Write inhibit. */
	rd = rmem_import(target, "inhibit");
	EXPECT(rd >= 0, "import inhibit: %d", rd);
	if (rd >= 0) {
		r = rmem_write(rd, 0, out, 8, RMEM_SYNC);
		EXPECT(r == -EROFS, "write while inhibited: %d", r);
		int h2 = rmem_read(rd, 0, 8, lseg, 0, 0);
		EXPECT(h2 >= 0 && rmem_read_wait(h2, 10000000000ULL) == 0, "read while inhibited works");
		rmem_release(rd);
	}
}

/* --- revocation during traffic ------------------------------------------------ */

static volatile int revoke_now;

static void revoke_writer(int target)
{
	uint8_t out[64];
	int rd = rmem_import(target, "revoke"), refused = 0, sent = 0, r;

	EXPECT(rd >= 0, "import revoke: %d", rd);
	if (rd < 0)
		return;
	/* Stream until the target has revoked us and we have seen it. */
	for (uint32_t i = 0; i < 100000 && !refused; i++) {
		memset(out, (int)(i & 0xff), sizeof out);
		r = rmem_write(rd, (i * 64) % (SEG_SIZE - 64), out, 64, 0);
		if (r < 0)
			break;
		sent++;
		if (i % 64 == 63 && rmem_sync(rd, 10000000000ULL) == -ESTALE)
			refused = 1;
	}
	EXPECT(refused, "writes after revocation refused (sent %d)", sent);
	EXPECT(rmem_write(rd, 0, out, 8, RMEM_SYNC) == -ESTALE, "sync write after revocation");
	rmem_release(rd);
	EXPECT(rmem_import(target, "revoke") == -EACCES, "re-import after revocation");
}

/* --- contention --------------------------------------------------------------- */

static void contend(int target, int iters)
{
	int rc = rmem_import(target, "counter"), bad = 0;
	uint64_t guess = 0, old;

	EXPECT(rc >= 0, "import counter: %d", rc);
	if (rc < 0)
		return;
	for (int i = 0; i < iters; i++) {
		for (;;) {
			if (rmem_cas(rc, 0, guess, guess + 1, &old) < 0) {
				bad++;
				break;
			}
			if (old == guess) {
				guess++;
				break;
			}
			guess = old;
		}
		if (rmem_fadd(rc, 8, 1, &old) < 0)
			bad++;
	}
	EXPECT(bad == 0, "%d atomic operations failed", bad);
	rmem_release(rc);
}

static void contend_local(int iters)
{
	uint64_t *counter = (uint64_t *)(buf[B_COUNTER] + GUARD);

	for (int i = 0; i < iters; i++) {
		uint64_t v = __atomic_load_n(&counter[0], __ATOMIC_SEQ_CST);
		while (!__atomic_compare_exchange_n(&counter[0], &v, v + 1, 0, __ATOMIC_SEQ_CST,
						    __ATOMIC_SEQ_CST))
			;
		__atomic_fetch_add(&counter[1], 1, __ATOMIC_SEQ_CST);
		if (i % 16 == 0)
			thread_yield();
	}
}

/* --- the run ---------------------------------------------------------------------- */

static const struct argspec rmem_test_args[] = {
	{ "iters", ARG_INT, 1, 1000000, "atomic increments per node in the contention test (default 300)" },
	{ NULL, 0, 0, 0, NULL },
};

static int rmem_test_main(void)
{
	int iters = (int)arg_int("iters", 300);
	int opsnode = 1, violnode = num_nodes > 2 ? 2 : 1;

	if (!fabric_ready() || fabric_wait_peers(60000000000ULL) < 0) {
		printf("rmem-test: no network\n");
		return 1;
	}
	lbuf = calloc(1, SEG_SIZE);
	lseg = lbuf ? seg_export("local", lbuf, SEG_SIZE, 0) : -1;
	if (lseg < 0 || (node_id == 0 && export_all() < 0)) {
		printf("rmem-test: cannot export\n");
		return 1;
	}
	if (check_barrier("after export", BARRIER_NS) < 0)
		return 1;

	/* Operations and violations. */
	if (node_id == opsnode)
		ops_checks(0);
	if (node_id == violnode)
		violation_checks(0);
	if (check_barrier("after operations", BARRIER_NS) < 0)
		return 1;
	if (node_id == 0) {
		/* Only "data" was writable; the rest must be exactly as it was. */
		EXPECT(changed_outside(B_DATA, 0, SEG_SIZE) == 0, "bytes changed outside segment data");
		for (int b = B_RO; b <= B_INHIBIT; b++)
			EXPECT(changed_outside(b, 0, 0) == 0, "bytes changed in buffer %s", names[b]);
		EXPECT(notified >= 1, "no notification for the RMEM_INTR write");
		struct rmem_counters c;
		rmem_counters(&c);
		EXPECT(c.refused_rights >= 2 && c.refused_bounds >= 3 && c.refused_bad_seg >= 1 &&
			       c.refused_stale >= 1 && c.refused_inhibit >= 1,
		       "refusal counters: rights %lu bounds %lu bad_seg %lu stale %lu inhibit %lu",
		       c.refused_rights, c.refused_bounds, c.refused_bad_seg, c.refused_stale,
		       c.refused_inhibit);
	}

	/* Revocation during traffic: node 1 streams, node 0 revokes it midway. */
	static uint8_t snapshot[SEG_SIZE + 2 * GUARD];
	if (check_barrier("before revocation", BARRIER_NS) < 0)
		return 1;
	if (node_id == opsnode) {
		revoke_writer(0);
	} else if (node_id == 0) {
		/* Let some writes land, then revoke and snapshot in one step. */
		struct rmem_counters c0, c1;
		rmem_counters(&c0);
		uint64_t end = cycles() + ns_to_cycles(20000000000ULL);
		do {
			thread_sleep_ns(2000000);
			rmem_counters(&c1);
		} while (c1.applied_write - c0.applied_write < 200 && cycles() < end);
		irqflags_t f = irq_save();
		seg_revoke(segno[B_REVOKE], opsnode);
		memcpy(snapshot, buf[B_REVOKE], sizeof snapshot);
		irq_restore(f);
	}
	if (check_barrier("after revocation", BARRIER_NS) < 0)
		return 1;
	if (node_id == 0) {
		EXPECT(memcmp(snapshot, buf[B_REVOKE], sizeof snapshot) == 0,
		       "segment changed after revocation");
		EXPECT(changed_outside(B_REVOKE, 0, SEG_SIZE) == 0, "bytes changed outside segment revoke");
	}

	/* Contention: every node increments node 0's counters iters times. */
	if (check_barrier("before contention", BARRIER_NS) < 0)
		return 1;
	uint64_t t0 = cycles();
	if (node_id == 0)
		contend_local(iters);
	else
		contend(0, iters);
	uint64_t ms = cycles_to_ns(cycles() - t0) / 1000000;
	if (check_barrier("after contention", BARRIER_NS) < 0)
		return 1;
	if (node_id == 0) {
		uint64_t *counter = (uint64_t *)(buf[B_COUNTER] + GUARD);
		uint64_t want = (uint64_t)num_nodes * (uint64_t)iters;
		EXPECT(counter[0] == want, "cas counter %lu, expected %lu", counter[0], want);
		EXPECT(counter[1] == want, "fadd counter %lu, expected %lu", counter[1], want);
		EXPECT(changed_outside(B_COUNTER, 0, 64) == 0, "bytes changed around the counters");
		printf("rmem-test: counters %lu and %lu after %d nodes x %d increments (%lu ms)\n",
		       counter[0], counter[1], num_nodes, iters, ms);
	}
	rmem_print_stats();
	if (node_id == 0)
		fabric_print_stats();
	return check_result();
}

APP(rmem_test, "rmem-test",
    "remote memory: every operation, every protection violation, revocation, contention",
    rmem_test_main, rmem_test_args, 2);
