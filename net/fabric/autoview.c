/*
 * node=auto's agreement; see autoview.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "net/fabric/autoview.h"

static int mac_cmp(const void *a, const void *b)
{
	return memcmp(a, b, 6);
}

void autov_init(struct autov *s, const uint8_t me[6], int expect, uint64_t nonce, uint64_t now)
{
	memset(s, 0, sizeof *s);
	memcpy(s->me, me, 6);
	s->nonce = nonce ? nonce : 1;
	s->expect = expect;
	s->last_new = now;
}

int autov_live(const struct autov *s)
{
	int n = 1;

	for (int i = 0; i < s->n; i++)
		n += s->p[i].live;
	return n;
}

/* Its entry, made if new (the table full: the stalest station not live makes room), or NULL. */
static struct autov_peer *peer(struct autov *s, const uint8_t mac[6], uint64_t now)
{
	struct autov_peer *old = NULL;

	for (int i = 0; i < s->n; i++)
		if (memcmp(s->p[i].mac, mac, 6) == 0)
			return &s->p[i];
	if (s->n < FAB_MAX_NODES - 1) {
		old = &s->p[s->n++];
	} else {
		for (int i = 0; i < s->n; i++)
			if (!s->p[i].live && (!old || s->p[i].last < old->last))
				old = &s->p[i];
		if (!old) {
			s->full++;
			return NULL;
		}
	}
	memset(old, 0, sizeof *old);
	memcpy(old->mac, mac, 6);
	old->last = now;
	return old;
}

/* Does a's echo list hold this station's nonce? */
static int echoes_me(const struct autov *s, const struct fab_auto *a)
{
	for (int i = 0; i < a->necho && i < FAB_MAX_NODES; i++)
		if (a->echo[i].nonce == s->nonce && memcmp(a->echo[i].mac, s->me, 6) == 0)
			return 1;
	return 0;
}

/*
 * A nonce of p's heard in a frame: fresh (the frame echoed ours, so it was
 * made now), it is p's own and leads; else it joins the others as the most
 * recent, the oldest dropped when the set is full, never the proven one.
 */
static void hear_nonce(struct autov *s, struct autov_peer *p, uint64_t nonce, int fresh)
{
	int keep = p->live ? 1 : 0;	/* nonce[0] proven: it stays */
	int i;

	if (fresh) {
		p->nonce[0] = nonce;
		p->nn = 1;
		return;
	}
	for (i = 0; i < p->nn; i++)
		if (p->nonce[i] == nonce)
			break;
	if (i < keep)
		return;			/* the proven one again */
	if (i == p->nn) {
		if (p->nn < AUTOV_NONCES)
			p->nn++;
		else
			s->nonces_dropped++;
		i = p->nn - 1;
	}
	/* To the front of the unproven ones. */
	memmove(&p->nonce[keep + 1], &p->nonce[keep], (size_t)(i - keep) * sizeof p->nonce[0]);
	p->nonce[keep] = nonce;
}

/* Is a search of p's (carrying nonce) to be answered now?  See AUTOV_ANSWER_MIN_NS. */
static int answer_due(struct autov *s, struct autov_peer *p, uint64_t nonce, uint64_t now)
{
	if (!p)
		return 0;		/* a table full of live stations: p is not one of them */
	if (nonce != p->answered_nonce || !p->answer_gap) {
		p->answered_nonce = nonce;
		p->answer_gap = AUTOV_ANSWER_MIN_NS;
	} else if (now - p->answered_at < p->answer_gap) {
		s->answers_held++;
		return 0;
	} else if (p->answer_gap < AUTOV_ANSWER_MAX_NS) {
		p->answer_gap *= 2;
		if (p->answer_gap > AUTOV_ANSWER_MAX_NS)
			p->answer_gap = AUTOV_ANSWER_MAX_NS;
	}
	p->answered_at = now;
	return 1;
}

int autov_input(struct autov *s, const struct fab_auto *a, uint64_t now)
{
	int fresh = echoes_me(s, a);
	struct autov_peer *p;

	if (a->expect != s->expect || memcmp(a->mac, s->me, 6) == 0)
		return 0;
	if ((p = peer(s, a->mac, now)) != NULL) {
		hear_nonce(s, p, a->nonce, fresh);
		p->last = now;
		if (fresh && !p->live) {
			p->live = 1;
			s->last_new = now;
			if (autov_live(s) > (s->expect ? s->expect : FAB_MAX_NODES))
				s->too_many = 1;
		}
	}
	if (s->nview) {
		/* A member: answer a station still looking; note a view unlike ours. */
		if (a->nview && (a->nview != s->nview || memcmp(a->view, s->view, (size_t)s->nview * 6)))
			s->conflicts++;
		return !a->nview && answer_due(s, p, a->nonce, now);
	}
	if (a->nview) {
		/* Only a view made for this station now counts, for it or against it. */
		if (!fresh) {
			s->stale_views++;
		} else if (fab_auto_find((const uint8_t (*)[6])a->view, a->nview, s->me) >= 0) {
			memcpy(s->view, a->view, (size_t)a->nview * 6);
			s->nview = a->nview;
		} else if (!s->excluded) {
			s->excluded = 1;
			memcpy(s->excluded_by, a->mac, 6);
		}
	}
	return 0;
}

/* The view of the live stations, this one included, ascending. */
static void take_live(struct autov *s)
{
	int n = 0;

	memcpy(s->view[n++], s->me, 6);
	for (int i = 0; i < s->n && n < FAB_MAX_NODES; i++)
		if (s->p[i].live)
			memcpy(s->view[n++], s->p[i].mac, 6);
	qsort(s->view, (size_t)n, 6, mac_cmp);
	s->nview = n;
}

int autov_decide(struct autov *s, uint64_t now, uint64_t settle_ns, uint64_t confirm_ns)
{
	int live;

	if (s->nview)
		return 1;
	if (s->excluded)
		return -EEXIST;
	if (s->too_many)
		return -E2BIG;
	live = autov_live(s);
	if (s->expect) {
		if (live == s->expect && now - s->last_new >= confirm_ns) {
			take_live(s);
			return 1;
		}
		return 0;
	}
	/* nodes=auto: the lowest live MAC decides, once nobody new has come for the settle time. */
	for (int i = 0; i < s->n; i++)
		if (s->p[i].live && memcmp(s->p[i].mac, s->me, 6) < 0)
			return 0;
	if (now - s->last_new >= settle_ns) {
		take_live(s);
		return 1;
	}
	return 0;
}

void autov_payload(const struct autov *s, uint64_t inc, struct fab_auto *a)
{
	memset(a, 0, sizeof *a);
	a->expect = (uint16_t)s->expect;
	a->heard = (uint16_t)autov_live(s);
	memcpy(a->mac, s->me, 6);
	a->inc = inc;
	a->nonce = s->nonce;
	if (s->nview) {
		a->nview = (uint16_t)s->nview;
		memcpy(a->view, s->view, (size_t)s->nview * 6);
	}
	/*
	 * Every station heard, live or not yet: each learns that its nonce
	 * came through.  Each one's first nonce, then the others while there
	 * is room.
	 */
	for (int k = 0; k < AUTOV_NONCES; k++)
		for (int i = 0; i < s->n && a->necho < FAB_MAX_NODES; i++) {
			const struct autov_peer *p = &s->p[i];
			if (k >= p->nn)
				continue;
			memcpy(a->echo[a->necho].mac, p->mac, 6);
			a->echo[a->necho].nonce = p->nonce[k];
			a->necho++;
		}
}
