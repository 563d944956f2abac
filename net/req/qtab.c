/*
 * The queue table, and the receive half's checks and deposit as pure
 * logic on it (a request's rights, generation and room, the word
 * written); see qtab.h.  remote.c runs them in the fabric's receive path.
 */
#include <errno.h>
#include <string.h>

#include "net/req/qtab.h"

static struct req_qent *get(struct req_qtab *t, int qid)
{
	if (qid < 0 || qid >= REQ_MAX_QUEUES || !t->e[qid].used)
		return NULL;
	return &t->e[qid];
}

void req_qtab_init(struct req_qtab *t, int self)
{
	memset(t, 0, sizeof *t);
	t->self = self;
	t->generation = 1;
}

int req_qtab_create(struct req_qtab *t, int slot, void *buf, size_t bytes, const struct req_alloc *a)
{
	if (slot < -1 || slot >= REQ_MAX_QUEUES)
		return -EINVAL;
	if (slot == -1) {
		for (int i = 0; i < REQ_MAX_QUEUES && slot < 0; i++)
			if (!t->e[i].used)
				slot = i;
		if (slot < 0)
			return -ENOSPC;
	} else if (t->e[slot].used) {
		return -EBUSY;
	}
	struct req_qent *e = &t->e[slot];
	memset(e, 0, sizeof *e);
	if (req_q_init(&e->q, buf, bytes, a) < 0)
		return -EINVAL;
	/* Fresh generations: handles of an earlier queue here stay stale. */
	for (int i = 0; i < REQ_NODES; i++)
		e->gen[i] = t->generation;
	t->generation++;
	e->used = 1;
	return slot;
}

int req_qtab_destroy(struct req_qtab *t, int qid)
{
	struct req_qent *e = get(t, qid);

	if (!e)
		return -EBADF;
	req_q_destroy(&e->q);
	memset(e->right, 0, sizeof e->right);
	e->name[0] = '\0';
	e->used = 0;
	return 0;
}

static int set_right(struct req_qtab *t, struct req_qent *e, int node, int on)
{
	if (node < -1 || node >= REQ_NODES || node == t->self)
		return -EINVAL;
	for (int i = 0; i < REQ_NODES; i++)
		if (i != t->self && (node == -1 || i == node))
			e->right[i] = (uint8_t)on;
	return 0;
}

int req_qtab_export(struct req_qtab *t, int qid, const char *name, int node)
{
	struct req_qent *e = get(t, qid);
	size_t n = strlen(name);

	if (n == 0 || n >= REQ_NAME_MAX || node < -1 || node >= REQ_NODES || node == t->self)
		return -EINVAL;
	if (!e)
		return -EBADF;
	for (int i = 0; i < REQ_MAX_QUEUES; i++)
		if (t->e[i].used && i != qid && strcmp(t->e[i].name, name) == 0)
			return -EEXIST;
	memcpy(e->name, name, n + 1);
	return set_right(t, e, node, 1);
}

int req_qtab_grant(struct req_qtab *t, int qid, int node)
{
	struct req_qent *e = get(t, qid);

	return e ? set_right(t, e, node, 1) : -EBADF;
}

int req_qtab_revoke(struct req_qtab *t, int qid, int node)
{
	struct req_qent *e = get(t, qid);

	if (!e)
		return -EBADF;
	if (node < -1 || node >= REQ_NODES)
		return -EINVAL;
	for (int i = 0; i < REQ_NODES; i++) {
		if (node == -1 || i == node) {
			e->right[i] = 0;
			e->gen[i] = t->generation;
		}
	}
	t->generation++;
	return 0;
}

int req_qtab_ticket(const struct req_qtab *t, int qid, int node, uint32_t *gen)
{
	if (qid < 0 || qid >= REQ_MAX_QUEUES || !t->e[qid].used)
		return -EBADF;
	if (node < 0 || node >= REQ_NODES)
		return -EINVAL;
	*gen = t->e[qid].gen[node];
	return 0;
}

int req_qtab_resolve(const struct req_qtab *t, const char *name, int asker, struct req_queue_answer *a)
{
	for (int i = 0; i < REQ_MAX_QUEUES; i++) {
		const struct req_qent *e = &t->e[i];
		if (!e->used || strcmp(e->name, name) != 0)
			continue;
		if (asker < 0 || asker >= REQ_NODES || !e->right[asker])
			return -EACCES;
		a->addr = (uintptr_t)e->q.first;
		a->gen = e->gen[asker];
		a->reserved = 0;
		return 0;
	}
	return -ENOENT;
}

/* --- the receive half -------------------------------------------------------- */

static struct req_qent *find(struct req_qtab *t, uint64_t addr)
{
	for (int i = 0; i < REQ_MAX_QUEUES; i++)
		if (t->e[i].used && (uintptr_t)t->e[i].q.first == addr)
			return &t->e[i];
	return NULL;
}

/* src's standing on e: RQS_OK, or why its REQ is refused. */
static int admit(const struct req_qent *e, int src, uint32_t gen)
{
	if (!e)
		return RQS_NOQUEUE;
	if (src < 0 || src >= REQ_NODES)
		return RQS_DENIED;
	if (e->gen[src] != gen)
		return RQS_STALE;	/* revoked, or a handle of an earlier queue here */
	return e->right[src] ? RQS_OK : RQS_DENIED;
}

static void refuse(struct req_qtab *t, int status, struct req_rx *out)
{
	switch (status) {
	case RQS_NOQUEUE: t->ctr.rx_refused_noqueue++; break;
	case RQS_STALE: t->ctr.rx_stale++; break;
	case RQS_DENIED: t->ctr.rx_denied++; break;
	case RQS_NOSPACE: t->ctr.rx_nospace++; break;
	default: t->ctr.rx_corrupt++; break;
	}
	out->answer = 1;
	out->status = status;
}

void req_rx_enq(struct req_qtab *t, int src, const struct req_msg *m, int (*can_answer)(int src),
		struct req_rx *out)
{
	struct req_qent *e = find(t, m->addr);
	int status = admit(e, src, m->gen);
	int needs;

	out->hold = 0;
	out->answer = 0;
	out->status = RQS_OK;
	out->qid = -1;
	t->ctr.rx_req++;
	/*
	 * Its answer must be able to go before anything happens.  A REQ that
	 * is refused, acknowledged or meets a queue not accepting needs one;
	 * so does one whose queue header turns out damaged (below).
	 */
	needs = status != RQS_OK || (m->flags & RQF_ACK) || !e->q.accepting;
	if (needs && !can_answer(src)) {
		out->hold = 1;
		return;
	}
	if (status != RQS_OK) {
		refuse(t, status, out);
		return;
	}
	switch (req_q_enqueue(&e->q, m->word)) {
	case REQ_ENQ_REFUSED:
		/* Full, waiting for a dequeue to finish: hold it (back-pressure). */
		e->refused_busy++;
		t->ctr.rx_busy++;
		out->hold = 1;
		return;
	case REQ_ENQ_NOSPACE:
		refuse(t, RQS_NOSPACE, out);
		return;
	case REQ_ENQ_CORRUPT:
		/* Nothing stored: held if its refusal cannot go now. */
		if (!needs && !can_answer(src)) {
			out->hold = 1;
			return;
		}
		refuse(t, RQS_BROKEN, out);
		return;
	case REQ_ENQ_NOMEM:
		t->ctr.nomem++;
		break;
	case REQ_ENQ_CAPPED:
		/* Stored; the REQs after it are held until a dequeue makes space. */
		t->ctr.capped++;
		break;
	default:
		break;
	}
	out->qid = (int)(e - t->e);
	if (m->flags & RQF_ACK)
		out->answer = 1;
}

int req_status_errno(int status)
{
	switch (status) {
	case RQS_OK: return 0;
	case RQS_NOQUEUE: return -ENOENT;
	case RQS_STALE: return -ESTALE;
	case RQS_DENIED: return -EACCES;
	case RQS_NOSPACE: return -ENOSPC;
	case RQS_NOBODY: return -ENODATA;
	default: return -EIO;
	}
}
