/*
 * Messages for an app's protocol that came before the app registered it
 * (fabric.h, fabric_register), kept aside.  A node's app registers its
 * protocols once it runs, after a peer may already have sent to them;
 * the channel delivers each peer's messages in order, so a message refused
 * for want of its handler would hold up everything behind it from that
 * peer, every protocol's.  Parked here instead, the channel goes on with
 * the others, and only the missing protocol waits: its later messages
 * park behind the first (each protocol's order kept), and they are handed
 * over, in order, when it registers.  One still without a handler at the
 * end of the grace (FAB_APP_GRACE_NS after start-up) is counted as for no
 * protocol and dropped.  A sender's reboot drops none: each was
 * acknowledged, so its sender counts it delivered.  With the park full, the
 * channel holds the message as before (it is offered again every tick).
 *
 * Interrupt context or interrupts off, like the rest of the fabric.  late:
 * the grace is over (fab_park_late, internal.h).
 */
#include <errno.h>
#include <string.h>

#include "drivers/pktbuf.h"
#include "net/fabric/internal.h"

#define PARK_MAX 64

struct parked {
	struct pktbuf *pb;	/* our reference; the payload at pb->data + off */
	uint16_t off, len;
	uint8_t proto, src;
};

static struct parked park[PARK_MAX];	/* oldest first */
static unsigned park_n;
static uint8_t parked_of[FP_MAX];	/* messages parked per protocol */
/* Registered while messages of its own were parked: installed once they are handed over. */
static fabric_handler_t pending[FP_MAX];
static unsigned pending_n;
/* The fabric's handler table and counters (fab_park_bind): this file names no state of fabric.c's. */
static fabric_handler_t *handlers;
static struct fabric_counters *ctr;

void fab_park_bind(fabric_handler_t *table, struct fabric_counters *counters)
{
	handlers = table;
	ctr = counters;
}

int fab_park_has(uint8_t proto)
{
	return parked_of[proto] || pending[proto];
}

int fab_park(int src, uint8_t proto, const uint8_t *p, size_t len, struct pktbuf *pb)
{
	struct parked *k;

	if (park_n == PARK_MAX || len > UINT16_MAX) {
		ctr->park_full++;
		return -EBUSY;
	}
	k = &park[park_n];
	if (pb && p >= pb->data && p + len <= pb->data + pb->len) {
		pkt_ref(pb);
		k->pb = pb;
		k->off = (uint16_t)(p - pb->data);
	} else {
		/* Where it lies is not ours to keep (the ring, a copy reused): a buffer of its own. */
		if (!(k->pb = pkt_get_len(len)))
			return -EBUSY;
		memcpy(k->pb->data, p, len);
		k->pb->len = (uint16_t)len;
		k->off = 0;
	}
	k->len = (uint16_t)len;
	k->proto = proto;
	k->src = (uint8_t)src;
	park_n++;
	parked_of[proto]++;
	ctr->parked++;
	return 0;
}

static void take_out(unsigned i)
{
	parked_of[park[i].proto]--;
	pkt_put(park[i].pb);
	memmove(&park[i], &park[i + 1], (park_n - i - 1) * sizeof park[0]);
	park_n--;
}

int fab_park_register(uint8_t proto, fabric_handler_t fn, int late)
{
	if (pending[proto])
		return -EBUSY;
	pending[proto] = fn;
	pending_n++;
	fab_park_flush(late);
	return 0;
}

int fab_park_busy(void)
{
	return park_n != 0 || pending_n != 0;
}

void fab_park_flush(int late)
{
	uint32_t held = 0;		/* protocols one of whose messages was refused in this pass */

	for (unsigned i = 0; i < park_n;) {
		struct parked *k = &park[i];
		fabric_handler_t fn = pending[k->proto];
		if (fn) {
			if ((held >> k->proto & 1) || fn(k->src, k->pb->data + k->off, k->len, k->pb) < 0) {
				/* Not now: it and its protocol's later ones wait for the next tick. */
				if (!(held >> k->proto & 1))
					ctr->park_refused++;
				held |= 1u << k->proto;
				i++;
				continue;
			}
			ctr->park_delivered++;
			take_out(i);
		} else if (late) {
			ctr->rx_unknown_proto++;
			take_out(i);
		} else {
			i++;
		}
	}
	/* A protocol whose parked messages are all handed over takes the rest directly. */
	for (unsigned p = 0; pending_n && p < FP_MAX; p++)
		if (pending[p] && !parked_of[p]) {
			handlers[p] = pending[p];
			pending[p] = NULL;
			pending_n--;
		}
}

void fab_park_clear(void)
{
	while (park_n)
		take_out(park_n - 1);
	memset(pending, 0, sizeof pending);
	pending_n = 0;
}
