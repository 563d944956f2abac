/*
 * Hybrid deposit, the kernel calls (paper 3.2, DART 6.1, 6.2, 6.4, 6.5):
 * endpoints and connections, the destination's registers and instruction
 * memory, interrupts and exception handlers, and connection names.  Each
 * runs with interrupts off, which stops the receive path ("cell processing
 * can also be blocked globally", 6.4).  See deposit.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/init.h"
#include "kernel/node.h"
#include "kernel/sync.h"
#include "kernel/thread.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"
#include "net/call/call.h"
#include "net/call/names.h"
#include "net/deposit/internal.h"
#include "net/fabric/fabric.h"
#include "net/net.h"

/* --- endpoints and connections ------------------------------------------------- */

int dep_endpoint_create(void *base, size_t size, int prot)
{
	irqflags_t f = irq_save();
	int r = dart_ep_create(&dep_dart, base, size, prot);
	irq_restore(f);
	return r;
}

int dep_endpoint_destroy(int ep)
{
	irqflags_t f = irq_save();
	int r = dart_ep_destroy(&dep_dart, ep);
	irq_restore(f);
	return r;
}

int dep_endpoint_protect(int ep, uint32_t off, uint32_t len, int prot)
{
	irqflags_t f = irq_save();
	int r = dart_ep_protect(&dep_dart, ep, off, len, prot);
	irq_restore(f);
	return r;
}

int dep_conn_open(int vci, const struct dep_conn_cfg *cfg)
{
	struct dart_conn_cfg dc = { cfg->peer, cfg->ep, cfg->flags, cfg->reply, cfg->reg_base,
				    cfg->reg_count, cfg->ip_base, cfg->ip_count, cfg->group };
	unsigned cap = cfg->hold ? cfg->hold : DEP_HOLD_DEFAULT;
	struct cell *hold;
	int r;

	if (!dep_ready)
		return -ENODEV;
	if (cfg->peer == node_id || cfg->peer < 0 || cfg->peer >= num_nodes || cap > 4096)
		return -EINVAL;
	/* Multicast members: other nodes of the cluster. */
	if ((cfg->group >> node_id & 1) || (num_nodes < 64 && (cfg->group >> num_nodes)))
		return -EINVAL;
	hold = malloc(cap * sizeof *hold);
	if (!hold)
		return -ENOMEM;
	irqflags_t f = irq_save();
	r = dart_conn_open(&dep_dart, vci, &dc, hold, cap);
	if (r == 0) {
		struct conn_note *n = &dep_notes[vci];
		n->intr_fn = NULL;
		n->intr_arg = NULL;
		n->intrs = 0;
		n->exc_fn = NULL;
		n->exc_arg = NULL;
		n->exc_pending = n->status_pending = n->tx_busy = 0;
		n->name[0] = '\0';
		memset(&dep_sendregs_tab[vci], 0, sizeof dep_sendregs_tab[vci]);
	}
	irq_restore(f);
	if (r < 0)
		free(hold);
	return r;
}

int dep_conn_close(int vci)
{
	struct cell *hold = NULL;
	int r;

	if (vci < 0 || vci >= DART_MAX_CONN)
		return -EBADF;
	irqflags_t f = irq_save();
	if (dep_notes[vci].tx_busy || dep_notes[vci].tx_singles) {
		irq_restore(f);
		return -EBUSY;
	}
	hold = dep_dart.conn[vci].hold;
	r = dart_conn_close(&dep_dart, vci);
	if (r == 0) {
		dep_hold_freed();
		dep_notes[vci].intr_fn = NULL;
		dep_notes[vci].exc_fn = NULL;
		dep_notes[vci].exc_pending = dep_notes[vci].status_pending = 0;
		dep_notes[vci].name[0] = '\0';
		waitq_wake_all(&dep_notes[vci].wq);
		/* Its sender may go on (it will find it closed); its own sends wait for nobody. */
		dep_flow_sync(vci);
		dep_flow_release(vci, -1);
	}
	irq_restore(f);
	if (r == 0)
		free(hold);
	return r;
}

int dep_conn_resume(int vci, int how)
{
	int r;

	if (how != DART_RETRY && how != DART_SKIP)
		return -EINVAL;
	irqflags_t f = irq_save();
	r = dart_resume(&dep_dart, vci, how, &dep_sink);
	if (r >= 0 || r == -EAGAIN)
		dep_hold_freed();
	if (r == -EAGAIN) {
		dep_replay_waiting = 1;
		dep_wake_worker();
	}
	irq_restore(f);
	sched_maybe_preempt();
	return r;
}

int dep_conn_info(int vci, struct dep_conn_info *out)
{
	if (vci < 0 || vci >= DART_MAX_CONN)
		return -EBADF;
	irqflags_t f = irq_save();
	const struct dart_conn *c = &dep_dart.conn[vci];
	int r = c->state == DC_FREE ? -EBADF : 0;
	if (r == 0) {
		out->state = c->state;
		out->exc = c->exc;
		out->held = (unsigned)c->hold_n + c->sp_n;
		out->spilled = c->sp_n;
		out->flow_stop = c->flow_stop;
		out->stopped_by = dep_flow[vci].stopped_by;
		out->hold_full = c->hold_full;
		out->cells = c->cells;
		out->exceptions = c->exceptions;
		out->discarded = c->discarded;
		out->interrupts = dep_notes[vci].intrs;
	}
	irq_restore(f);
	return r;
}

/* --- registers and instructions -------------------------------------------------- */

int dep_reg_set(unsigned r, uint32_t v)
{
	if (r >= DART_NREGS)
		return -EINVAL;
	irqflags_t f = irq_save();
	dep_dart.reg[r] = v;
	irq_restore(f);
	return 0;
}

int dep_reg_get(unsigned r, uint32_t *v)
{
	if (r >= DART_NREGS)
		return -EINVAL;
	irqflags_t f = irq_save();
	*v = dep_dart.reg[r];
	irq_restore(f);
	return 0;
}

int dep_reg_protect(unsigned r, int prot)
{
	if (r >= DART_NREGS || (prot & ~(DART_REG_R | DART_REG_W)))
		return -EINVAL;
	irqflags_t f = irq_save();
	dep_dart.reg_prot[r] = (uint8_t)prot;
	irq_restore(f);
	return 0;
}

int dep_reg_op(unsigned r, unsigned alu, uint32_t operand, uint32_t *newval)
{
	irqflags_t f = irq_save();
	int ret = dart_reg_op(&dep_dart, r, alu, operand, newval);
	irq_restore(f);
	return ret;
}

int dep_instr_set(unsigned slot, const struct cell_ctl *ins, int flags)
{
	/* Low byte: DART_I_ENTRY; above it: DART_I_NEXT(ip), ip an instruction of the memory. */
	if (slot >= DART_NINSTR || flags < 0 || (flags & 0xff & ~DART_I_ENTRY) || DART_I_NEXT_OF(flags) >= DART_NINSTR)
		return -EINVAL;
	irqflags_t f = irq_save();
	dep_dart.imem[slot].ctl = *ins;
	dep_dart.imem[slot].flags = (uint8_t)(flags & DART_I_ENTRY);
	dep_dart.imem[slot].next = (uint16_t)(DART_I_NEXT_OF(flags) + 1);
	irq_restore(f);
	return 0;
}

/* --- interrupts and exceptions --------------------------------------------------- */

int dep_on_intr(int vci, dep_intr_fn fn, void *arg)
{
	if (vci < 0 || vci >= DART_MAX_CONN)
		return -EBADF;
	irqflags_t f = irq_save();
	int r = dep_dart.conn[vci].state == DC_FREE ? -EBADF : 0;
	if (r == 0) {
		dep_notes[vci].intr_fn = fn;
		dep_notes[vci].intr_arg = arg;
	}
	irq_restore(f);
	return r;
}

long dep_intr_wait(int vci, uint64_t *seen, uint64_t timeout_ns)
{
	uint64_t start = cycles(), end;
	long r = -ETIMEDOUT;

	if (vci < 0 || vci >= DART_MAX_CONN)
		return -EBADF;
	irqflags_t f = irq_save();
	struct conn_note *n = &dep_notes[vci];
	/*
	 * Where the node polls its link anyway, poll it from this thread
	 * first (net_poll_wait, as seg_wait does): the interrupt is then taken
	 * without a switch to the idle thread and back.  Not for a wait
	 * shorter than the poll would be.
	 */
	if (dep_dart.conn[vci].state != DC_FREE && n->intrs == *seen &&
	    timeout_ns >= net_wait_spin_us() * 1000ULL) {
		n->kick = 0;
		if (n->intrs == *seen)
			net_poll_wait(&n->kick);
	}
	end = start + ns_to_cycles(timeout_ns);
	while (dep_dart.conn[vci].state != DC_FREE && n->intrs == *seen) {
		uint64_t now = cycles();
		if (now >= end)
			break;
		waitq_wait_timeout(&n->wq, cycles_to_ns(end - now));
	}
	if (dep_dart.conn[vci].state == DC_FREE)
		r = -EBADF;
	else if (n->intrs != *seen)
		r = (long)(*seen = n->intrs);
	irq_restore(f);
	return r;
}

int dep_on_exception(int vci, dep_exc_fn fn, void *arg)
{
	irqflags_t f = irq_save();
	int r = 0;
	if (vci == -1) {
		dep_default_exc_fn = fn;
		dep_default_exc_arg = arg;
	} else if (vci < 0 || vci >= DART_MAX_CONN || dep_dart.conn[vci].state == DC_FREE) {
		r = -EBADF;
	} else {
		dep_notes[vci].exc_fn = fn;
		dep_notes[vci].exc_arg = arg;
	}
	irq_restore(f);
	return r;
}


/* --- names ----------------------------------------------------------------------- */

int dep_conn_export(int vci, const char *name)
{
	size_t n = strlen(name);
	int r = 0;

	if (n == 0 || n >= DEP_NAME_MAX || n > CALL_NAME_MAX)
		return -EINVAL;
	if (vci < 0 || vci >= DART_MAX_CONN)
		return -EBADF;
	irqflags_t f = irq_save();
	if (dep_dart.conn[vci].state == DC_FREE)
		r = -EBADF;
	for (int i = 0; r == 0 && i < DART_MAX_CONN; i++)
		if (i != vci && dep_dart.conn[i].state != DC_FREE && strcmp(dep_notes[i].name, name) == 0)
			r = -EEXIST;
	if (r == 0)
		memcpy(dep_notes[vci].name, name, n + 1);
	irq_restore(f);
	return r;
}

/* The name service's resolver for connections (NAME_CONN; irq). */
static int conn_resolve(const char *name, int asker, void *answer, size_t *len)
{
	for (int i = 0; i < DART_MAX_CONN; i++) {
		if (dep_dart.conn[i].state == DC_FREE || strcmp(dep_notes[i].name, name) != 0)
			continue;
		/* A connection is between two nodes: only its peer may find it. */
		if (dep_dart.conn[i].peer != asker)
			return -EACCES;
		uint16_t vci = (uint16_t)i;
		memcpy(answer, &vci, sizeof vci);
		*len = sizeof vci;
		return 0;
	}
	return -ENOENT;
}

static int conn_names_init(void)
{
	if (!fabric_ready())
		return -ENODEV;
	return names_register(NAME_CONN, conn_resolve) < 0 ? -EBUSY : 0;
}
INIT_HOOK(INIT_SUBSYS_4, deposit_names, conn_names_init);

int dep_conn_lookup(int node, const char *name, uint64_t timeout_ns)
{
	uint16_t vci;
	int r;

	if (!dep_ready)
		return -ENODEV;
	if (node < 0 || node >= num_nodes || node == node_id)
		return -EINVAL;
	r = names_lookup(node, NAME_CONN, name, &vci, sizeof vci, timeout_ns);
	if (r < 0)
		return r;
	if (vci >= DART_MAX_CONN)
		return -EPROTO;
	return vci;
}
