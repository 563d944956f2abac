/*
 * Madeleine: the communication interface of Bougé, Méhaut and Namyst,
 * "Madeleine: An Efficient and Portable Communication Interface for
 * RPC-based Multithreaded Environments" (madeleine paper), section 2.
 *
 * Programming interface (section 2.1).  A thread builds a message with
 * mad_sendbuf_init(dest), a series of mad_sendbuf_pack_*(mode, ptr, n)
 * and mad_sendbuf_send(); a receiving thread calls mad_recvbuf_receive
 * (handler), and the handler mirrors the packs with mad_recvbuf_unpack_*
 * and ends with mad_recvbuf_receive_data().  Modes (section 2.1.1, 2.1.2),
 * or-ed, one send mode and one receive mode, the same on both sides:
 *
 *   MAD_SND_SAFER     the data is copied at pack time: the caller may reuse it
 *   MAD_SND_LATER     the data is read at send time: changes until then count
 *   MAD_SND_CHEAPER   (default) read whenever cheapest; leave it alone until
 *                     mad_sendbuf_send returns
 *   MAD_RECV_EXPRESS  available as soon as the unpack returns
 *   MAD_RECV_CHEAPER  (default) available after mad_recvbuf_receive_data
 *
 * Messages are not self-describing (section 2.1.2): they carry the data
 * and its two lengths (EXPRESS bytes in the header, body bytes), no
 * description of the packs.  The unpack sequence must mirror the packs:
 * a mismatch is the program's error.  Misuse that the lengths show (an
 * unpack past what the message carries, receive_data before all of it, an
 * unpack after receive_data, two messages at once in one thread) is
 * detected, reported on the console, and returned as an error; the
 * message is then drained so that the next one is read correctly.  In
 * debug mode (mad_debug=1 on the command line, or mad_set_debug(1)) every
 * message sent also carries one word per pack, its mode and length, and
 * the receiver checks each unpack against it: an unpack of the wrong mode
 * or length is refused at once, naming the pack it mismatched.
 *
 * Portability interface (section 2.2, Table 1): each transport is a
 * struct mad_driver of eight functions.  The generic layer here never
 * knows which transport it runs on; the driver is chosen per channel.
 *
 * send_post / send_poll (section 2.2: post "returns without blocking",
 * poll until the transmission has completed on the sending side).  The
 * vectors and the memory they name stay the caller's until send_poll
 * returns nonzero; between polls mad_sendbuf_send waits in the driver's
 * send_wait (until a poll could make progress) or, without one, yields.
 *  - req: asynchronous.  send_post deposits what the receiver's ring and
 *    the frames queued to go have room for and returns, never waiting for
 *    credit (RMEM_NOWAIT, req_enqueue_body); send_poll deposits more as room
 *    frees (a message larger than the ring gets "not yet" answers,
 *    mad_stats send_pending).  Nor does it wait for its turn while another
 *    thread's message to the same node is still being sent (the peer's
 *    lock, held from post to the last poll, keeps messages whole): it
 *    returns -EAGAIN (mad_stats send_deferred), and send_wait sleeps until
 *    that message ends.
 *  - tcp: send_post blocks its thread in lwip_writev until lwIP's send
 *    buffer took the whole message (lwIP sockets have no completion to
 *    poll); send_poll returns 1.
 *  - rmem: send_post blocks its thread for header credit and, for a body,
 *    for the receiver's READY record (Figure 7 step 4), then returns once
 *    every WRITE is with the fabric; send_poll returns 1.
 *  - cell: send_post blocks its thread for room in the receiver's ring,
 *    chunk by chunk; send_poll returns 1.
 * recv_header_post takes no handler: the generic layer is its only caller
 * and runs the handler given to mad_recvbuf_receive as soon as
 * recv_header_poll returns a header, which is the call-back of section 2.2.
 *
 * Calls block only their calling thread.  One thread receives at a time
 * (paper 2.2: "the upper layers have to ensure that only one thread is
 * processing a receive operation at a time"); others wait their turn.
 */
#ifndef LIB_MAD_H
#define LIB_MAD_H

#include <stddef.h>
#include <stdint.h>

enum {
	MAD_SND_CHEAPER = 0x00,
	MAD_SND_SAFER = 0x01,
	MAD_SND_LATER = 0x02,
	MAD_RECV_CHEAPER = 0x00,
	MAD_RECV_EXPRESS = 0x10,
};

#define MAD_SND_MASK 0x0f
#define MAD_RECV_MASK 0x70

/* One piece of a message: what the portability interface moves. */
struct mad_iovec {
	void *base;
	size_t len;
};

/*
 * The portability interface (Table 1).  All return 0 or a negative
 * error unless said otherwise; none may block longer than it must, and
 * never more than its calling thread.
 */
struct mad_driver {
	const char *name;
	/* Connections setup / shutdown (every node calls them). */
	int (*init)(int nodes, int self);
	void (*exit)(void);
	/*
	 * Post the sending of a message (header vector first); poll: 1 when
	 * done, 0 while still sending (which drivers can be, above).  Post
	 * may return -EAGAIN instead of waiting: nothing was sent; the
	 * generic layer calls send_wait (or yields) and posts again.
	 */
	int (*send_post)(int dest, const struct mad_iovec *iov, int count);
	int (*send_poll)(int dest);
	/*
	 * Ready to receive a header; poll: 1 when one arrived, with its source
	 * and its bytes copied into hdr (at most hdr_max), *hdr_len set.
	 */
	int (*recv_header_post)(void);
	int (*recv_header_poll)(int *src, void *hdr, size_t hdr_max, size_t *hdr_len);
	/*
	 * Ready to receive the body of the message whose header came last, into
	 * these vectors (zero copy where the transport can); poll: 1 when done.
	 */
	int (*recv_body_post)(int src, const struct mad_iovec *iov, int count);
	int (*recv_body_poll)(int src);
	/* Block until a recv poll could succeed (or timeout_ns); the generic layer's wait. */
	void (*wait)(uint64_t timeout_ns);
	/* Optional: block until send_poll(dest) could make progress (or a short while). */
	void (*send_wait)(int dest);
	/* Optional: make a thread in wait return now (mad_recv_kick). */
	void (*kick)(void);
};

/*
 * A driver registers itself (as apps and PCI drivers do): the generic
 * layer finds it by name in the linker section .maddrv, and never names
 * a driver.
 */
#ifndef HOST_TEST
#define MAD_DRIVER_REGISTER(d) \
	static const struct mad_driver *const maddrv_ptr_##d __attribute__((used, section(".maddrv." #d))) = &(d)
#else
/* Host tests list theirs at program start. */
void mad_driver_add(const struct mad_driver *d);
#define MAD_DRIVER_REGISTER(d) \
	__attribute__((constructor)) static void maddrv_ctor_##d(void) { mad_driver_add(&(d)); }
#endif

/*
 * Define and register the driver p whose sending and receiving functions
 * are named p_send_post, p_send_poll, p_recv_header_post,
 * p_recv_header_poll, p_recv_body_post and p_recv_body_poll; the other
 * fields (.init, .exit, .wait, .send_wait) follow as designated
 * initialisers.
 */
#define MAD_DRIVER_DEFINE(p, ...)                                                          \
	static const struct mad_driver mad_driver_##p = {                                  \
		.name = #p, .send_post = p##_send_post, .send_poll = p##_send_poll,        \
		.recv_header_post = p##_recv_header_post,                                  \
		.recv_header_poll = p##_recv_header_poll,                                  \
		.recv_body_post = p##_recv_body_post, .recv_body_poll = p##_recv_body_poll, \
		__VA_ARGS__ };                                                              \
	MAD_DRIVER_REGISTER(mad_driver_##p)

/*
 * Channels.  A channel is one transport ("tcp", "rmem", "req", "cell")
 * connected to every node; several may be open at once, each driver once.
 * mad_open connects every node on it (every node calls it) or returns the
 * channel already open; NULL if the driver is unknown or cannot start.
 * mad_init opens one and makes it the default channel, which the calls
 * without a channel argument use, as in the paper.  mad_exit closes all.
 */
struct mad_channel;
struct mad_channel *mad_open(const char *driver);
int mad_init(const char *driver);
void mad_exit(void);
const char *mad_driver_name(void);
const char *mad_channel_name(const struct mad_channel *ch);

/* --- sending (section 2.1.1) ------------------------------------------------ */

int mad_sendbuf_init(int dest);
int mad_sendbuf_init_on(struct mad_channel *ch, int dest);
int mad_sendbuf_pack_byte(int mode, const void *ptr, size_t n);
int mad_sendbuf_pack_int(int mode, const int *ptr, size_t n);
int mad_sendbuf_pack_u64(int mode, const uint64_t *ptr, size_t n);
int mad_sendbuf_send(void);

/*
 * Send the message that mad_sendbuf_send just sent again, to dest (paper
 * 2.1.1, SND_LATER: "useful when a message is to be sent to various
 * destinations with only minor variations.  In this case, the data can be
 * packed only once and their values can be updated between the send
 * operations").  SND_LATER data is read again now; SND_SAFER data is the
 * copy taken at pack time (kept until the next mad_sendbuf_init);
 * SND_CHEAPER data must still be there.  As many times as wanted, until
 * the next mad_sendbuf_init.  0, -EINVAL (dest), -EPROTO (nothing sent to
 * send again), or the driver's error.
 */
int mad_sendbuf_resend(int dest);

/*
 * Debug mode for the messages this node sends from now on (see above);
 * returns the previous setting.  mad_debug= on the command line sets it
 * at the first mad_open.
 */
int mad_set_debug(int on);

/* --- receiving (section 2.1.2) ---------------------------------------------- */

/*
 * Wait for a message from any node and run handler(src) on it; the
 * handler unpacks and calls mad_recvbuf_receive_data().  Return the
 * handler's result, or a negative error (-EPROTO on misuse, -ETIMEDOUT).
 * A body that will not come fails the message at receive_data: -EHOSTDOWN
 * (its sender died), -ECONNABORTED (its sender gave it up: rmem, no room
 * for it was offered within MAD_PEER_TIMEOUT_NS, 30 s).
 */
int mad_recvbuf_receive(int (*handler)(int src));
int mad_recvbuf_receive_timeout(int (*handler)(int src), uint64_t timeout_ns);
int mad_recvbuf_receive_on(struct mad_channel *ch, int (*handler)(int src), uint64_t timeout_ns);
int mad_recvbuf_unpack_byte(int mode, void *ptr, size_t n);
int mad_recvbuf_unpack_int(int mode, int *ptr, size_t n);
int mad_recvbuf_unpack_u64(int mode, uint64_t *ptr, size_t n);
int mad_recvbuf_receive_data(void);

/*
 * Make the thread waiting in mad_recvbuf_receive_on(ch, ...) for a header
 * return -EINTR, so that another thread may receive on ch instead: at once
 * with a driver that has a kick, else when its wait ends (a driver's wait
 * is bounded).  A kick with no thread waiting makes the next receive on ch
 * return -EINTR at once, before it waits.  (irq: no lock taken.)
 */
void mad_recv_kick(struct mad_channel *ch);
/* Does ch's driver have a kick (mad_recv_kick takes effect at once)? */
int mad_recv_kickable(const struct mad_channel *ch);

/* --- RPC (section 2.1.4) ------------------------------------------------------ */

/*
 * A service: the service number travels RECV_EXPRESS in the header; the
 * handler unpacks its arguments (RECV_CHEAPER into memory it chooses) and
 * calls mad_recvbuf_receive_data().
 */
typedef int (*mad_service_fn)(int src);
int mad_rpc_register(uint32_t service, mad_service_fn fn);
/* Start a call: sendbuf_init(dest) and pack the service number. */
int mad_rpc_begin(int dest, uint32_t service);
int mad_rpc_begin_on(struct mad_channel *ch, int dest, uint32_t service);
/* Receive one message and dispatch it to its service. */
int mad_rpc_serve_one(uint64_t timeout_ns);
int mad_rpc_serve_one_on(struct mad_channel *ch, uint64_t timeout_ns);

/*
 * send_pending: send_poll answers "not yet" (the transport was still
 * sending); send_deferred: send_post answers -EAGAIN (the driver would
 * have had to wait for the destination), posted again after send_wait.
 */
struct mad_stats {
	uint64_t sent, received, misuse, bytes_sent, bytes_received, send_pending;
	uint64_t send_deferred;		/* send_post said -EAGAIN: another message to the node under way */
};
void mad_stats(struct mad_stats *out);

/*
 * The rmem driver's bodies sent (lib/mad_rmem.c): with their first part
 * early, into the receiver's eager area; all by READY, no half of that
 * area known free; and header slots this node dropped as malformed.
 */
struct mad_rmem_counts {
	uint64_t early, by_ready, bad_slots;
};
void mad_rmem_counts(struct mad_rmem_counts *out);

#ifdef NOW_TEST_HOOKS
/*
 * For tests only, on the req driver: write-inhibit the ring node deposits
 * into here (its chunk WRITEs are then refused); how many words (chunk
 * announcements) this node has taken from node.  0 / the count, or -EINVAL.
 */
int mad_req_test_inhibit(int node, int on);
long mad_req_test_words(int node);
/*
 * For tests only: on this node (the receiver), break the stream from node
 * once after bytes of it have arrived, until the stream resynchronises:
 * req refuses the WRITEs of the chunks that come then (so their words
 * too); cell has their deposits raise an exception (a protected page of
 * the buffer).  0, or -EINVAL.
 */
int mad_req_test_break(int node, long after);
int mad_cell_test_break(int node, long after);
/*
 * For tests only, on the req driver (the sender): when on, every other
 * chunk of more than one WRITE stops after its first WRITE, as when the
 * frames queued to go have no room for the rest; the chunk goes again
 * whole later, or never if the message fails meanwhile.  0.
 */
int mad_req_test_partial(int on);
/*
 * For tests only, on the rmem driver: the driver's set-up pauses ns after
 * it exported each peer's segments (the peer can import them and write
 * meanwhile) before it goes on.  0.
 */
int mad_rmem_test_export_gap(uint64_t ns);
/*
 * For tests only, on the rmem driver: a sender waits ns for a READY (0:
 * MAD_PEER_TIMEOUT_NS, as always) before it gives the message up.  0.
 */
int mad_rmem_test_ready_wait(uint64_t ns);
/*
 * For tests only, on the rmem driver: the next body this node sends with
 * an early part says, in its header, more early bytes than the eager area
 * holds (the receiver must drop that header and refuse the message).  0.
 */
int mad_rmem_test_bad_eager(void);
#endif

/* --- the message description (pure; host tests drive it) --------------------- */

#define MAD_MAX_PACKS 64
#define MAD_EXPRESS_MAX 1024		/* bytes of EXPRESS data in the header */
#define MAD_DESC_INBODY 0x80		/* descriptor: this EXPRESS pack is in the body */

/*
 * On the wire a message is a header vector, then the body vectors:
 *   struct mad_wire_hdr, in debug mode only the pack descriptor (npacks
 *   32-bit words, one per pack: mode in the top byte, length below; none
 *   otherwise), the EXPRESS data concatenated, and then, as the body, the
 *   CHEAPER data in pack order.  An EXPRESS pack that would take the
 *   header's EXPRESS data past MAD_EXPRESS_MAX bytes travels in the body
 *   instead (marked MAD_DESC_INBODY in a descriptor); its unpack receives
 *   the body up to and including it before returning, so it is still
 *   there when the unpack returns.
 */
struct mad_wire_hdr {
	uint32_t magic;
	uint16_t npacks;		/* descriptor words that follow (0: none) */
	uint16_t src;
	uint32_t express_len;
	uint32_t body_len;
} __attribute__((packed));
_Static_assert(sizeof(struct mad_wire_hdr) == 16, "madeleine header is 16 bytes");

#define MAD_MAGIC 0x4d414431u		/* "MAD1" */
#define MAD_HDR_MAX (sizeof(struct mad_wire_hdr) + 4 * MAD_MAX_PACKS + MAD_EXPRESS_MAX)

/* Validate a received header of len bytes.  0 or -EPROTO. */
int mad_hdr_check(const void *hdr, size_t len);

/*
 * The receive-side bookkeeping: given the checked header, match the next
 * unpack (mode, n) against pack number idx.  0, or -EPROTO with a message
 * in err describing the mismatch.
 */
int mad_match_unpack(const void *hdr, unsigned idx, int mode, size_t n, char *err, size_t errlen);

/* Between the generic layer's files (mad.c, mad_rpc.c); not for apps. */
struct mad_channel *mad_default_channel(void);
/* A receive handler misused the interface: counted, reported, and the message's receive fails. */
int mad_recv_misuse(const char *msg);

#endif
