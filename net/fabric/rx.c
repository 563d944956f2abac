/*
 * The fabric's receive path (NIC interrupt, interrupts off): validate the
 * frame, check that it comes from a node bound by the handshake
 * (member.h), from its bound MAC and with the tag of the pair's current
 * incarnations, and with a cluster key that its tag is right and that
 * it was not taken before (wire.h), then hand HELLOs to discovery, raw frames to their protocol's
 * raw handler and everything else to the sender's channel.  Every frame
 * that fails a check is counted and dropped.
 */
#include <string.h>

#include "kernel/trace.h"
#include "kernel/tsc.h"
#include "net/fabric/internal.h"

void fab_process(struct pktbuf *pb)
{
	struct fab_hdr h;
	const uint8_t *payload;
	enum fab_err e;
	struct peer *p;

	trace_point(TS_FABRIC_RX);
	fab.ctr.rx_frames++;
	if (pb->len > FAB_ETH_HLEN + 1 && pb->data[FAB_ETH_HLEN + 1] == FAB_AUTO) {
		fab_auto_input(pb);	/* node=auto stations, not yet nodes */
		return;
	}
	e = fab_parse_link(pb->data, pb->len, fab.me, fab.nnodes, fab.lossless, fab.keyed, &h,
			   &payload);
	if (e != FAB_OK)
		goto reject;
	p = &fab.peers[h.src];
	if (h.type == FAB_HELLO) {
		/* Under the cluster key: only a holder of the key names itself a node. */
		if (fab.keyed && (e = fab_unseal(&fab.hello_unseal, pb->data, &h, 0)) != FAB_OK)
			goto reject;
		fab_hello_input(&h, payload, pb->data + 6);
		pkt_put(pb);
		return;
	}
	if (!p->known) {
		/* Only the handshake binds a node, never a frame that names it. */
		fab.ctr.rx_unbound++;
		pkt_put(pb);
		return;
	} else if (p->rx_tag != h.session) {
		/* A frame of the pair's channel before one side rebooted, or a forgery. */
		fab.ctr.rx_stale_session++;
		pkt_put(pb);
		return;
	} else if (memcmp(p->mac, pb->data + 6, 6) != 0) {
		fab.ctr.rx_foreign_mac++;
		pkt_put(pb);
		return;
	}
	/*
	 * Keyed: the tag under the pair's key (its incarnations and ours), then
	 * the replay window.  Checked after the cheap tests above, before any
	 * field reaches the channel or a protocol.
	 */
	if (fab.keyed && (e = fab_unseal(&p->rx_seal, pb->data, &h, 1)) != FAB_OK)
		goto reject;
	/* Without a CRC only from a node that said its link is lossless. */
	if ((h.flags & FAB_F_NOCRC) && h.type != FAB_RAW && !p->lossless) {
		fab.ctr.rx_rejected[FAB_E_FIELD]++;
		pkt_put(pb);
		return;
	}
	if (h.type == FAB_RAW) {
		fab.ctr.rx_raw++;
		if (h.proto < FP_MAX && fab.raw_handlers[h.proto])
			fab.raw_handlers[h.proto](h.src, payload, h.len, pb);
		else
			fab.ctr.rx_unknown_proto++;
		pkt_put(pb);
		return;
	}
	if (p->ch.dead) {
		fab.ctr.rx_dead_peer++;
		pkt_put(pb);
		return;
	}
	chan_input(&p->ch, &h, payload, pb, now_ns());
	fab_after_chan_op(p);
	return;
reject:
	fab.ctr.rx_rejected[e]++;
	pkt_put(pb);
}
