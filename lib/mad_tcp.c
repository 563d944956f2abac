/*
 * Madeleine's TCP driver (madeleine paper 3.1): one lwIP TCP connection
 * per pair of nodes; a whole message (header vector, then body vectors)
 * goes as one writev on the stream; the receiver reads the header, lets
 * the handler name where the body goes, then readv's it straight there.
 * No extra message and no extra copy on top of TCP's own.
 *
 * Connections: node i accepts from every higher node and connects to every
 * lower one, at 10.0.0.(j+1) port MAD_TCP_PORT.  Without a cluster key the
 * connecting side sends its node id, taken only from that node's address.
 * With one (lwIP's IP and ARP are not under the key: an address proves
 * nothing), the two prove it to each other: the accepting side sends a
 * random challenge, the connecting one its id, a challenge of its own and
 * a tag under the key over both ids and both challenges, and the accepting
 * side answers with its own tag (fabric_key_tag, domains "mad-tcp-c" and
 * "mad-tcp-s").  Every read of the set-up has a time limit (the accepting
 * side SETUP_TIMEOUT_MS; the connecting side CONNECT_TIMEOUT_MS): an idle
 * or silent connection is closed.  The accepting side lets up to PROVERS
 * connections prove themselves at once, each in a thread of its own with
 * its own time limit, so that silent connections opened ahead of a real
 * node's do not keep it waiting in the queue behind them.
 *
 * With a key, the proof covers the connection's whole life, not its
 * set-up alone: a station that relayed the two challenges could otherwise
 * read, change or inject messages afterwards.  Both sides derive a key
 * per direction from the cluster key, both ids and both challenges
 * (session_keys), and every message carries two SipHash-2-4 tags under
 * its direction's key: one after its header, over the message's sequence
 * number and the header (checked before any handler sees the header), one
 * after its body, over all of it (checked once the body is in).  The
 * sequence numbers are not sent: each side counts, so a message replayed,
 * dropped or reordered in the stream fails its tag like a changed one.  A
 * message that fails is refused (-EBADMSG) and its connection closed: the
 * stream can no longer be trusted.
 *
 * A connection that fails (a tag, a reset, its end, a stream out of step)
 * is aborted (an RST to the peer, whose calls then fail too) and never
 * read or written again (lost[]): sends to that node
 * and receives from it fail (-ENOTCONN), the other nodes' messages go on,
 * and it is said once.  The socket is closed only at tcp_exit, so that a
 * thread still inside a call on it never finds it reused.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kernel/incarnation.h"
#include "kernel/node.h"
#include "kernel/siphash.h"
#include "kernel/sync.h"
#include "kernel/thread.h"
#include "kernel/tsc.h"
#include "lib/mad.h"
#include "lib/mad_drv.h"
#include "net/fabric/fabric.h"
#include "lwip/sockets.h"
#include "net/lwip/lwip_port.h"
#include "net/net.h"

#define MAD_TCP_PORT 5555
#define CONNECT_TRIES 130		/* the first QUICK_TRIES 50 ms apart, then half a second */
#define QUICK_TRIES 10
/*
 * Before its first connection a node waits this long, at most, for the
 * length of its frames to every peer to settle (fabric_wait_path): a
 * connection's segment size is fixed at its SYN, from both ends' MTUs,
 * and one made before long frames were found to pass kept Ethernet's
 * 1460 bytes for its life (NetPIPE over this driver on e1000 at 1 MiB:
 * 21.6 MB/s so, against 116 over rmem).  The probes take at most about
 * half a second to give up.
 */
#define PATH_WAIT_NS 10000000000ULL
#define SETUP_TIMEOUT_MS 5000		/* the accepting side's set-up reads wait at most this long */
#define CONNECT_TIMEOUT_MS 30000	/* the connecting side's */
#define PROVERS 16			/* connections the accepting side lets prove themselves at once */
#define ACCEPT_POLL_MS 200		/* its accept waits this long, then looks at the proofs */

static int socks[MAX_NODES];
static struct mutex send_locks[MAX_NODES];
static int nnodes, me, next_poll;
static int lost[MAX_NODES];		/* its connection failed: shut, not used again */

/* A connection's message tags (keyed only): see above. */
struct tcp_auth {
	int on;
	struct sipkey tx, rx;		/* this node's messages to the peer; the peer's to this node */
	uint64_t tx_seq, rx_seq;	/* messages so far each way */
	struct siphash rx_st;		/* the message being received: header, then body */
	uint32_t rx_left;		/* its body bytes still to come */
};
static struct tcp_auth auth[MAX_NODES];
#define TAG_LEN 8

static int read_all(int s, void *buf, size_t n)
{
	uint8_t *p = buf;

	while (n) {
		ssize_t r = recv(s, p, n, 0);
		if (r == 0)
			return -ECONNRESET;
		if (r < 0)
			return -errno;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

/* Step over n bytes that went: the first vector left, resumed mid-way if need be. */
static int step(struct iovec *v, int i, int count, size_t n)
{
	while (i < count && n >= v[i].iov_len) {
		n -= v[i].iov_len;
		i++;
	}
	if (i < count) {
		v[i].iov_base = (uint8_t *)v[i].iov_base + n;
		v[i].iov_len -= n;
	}
	return i;
}

static void nodelay(int s)
{
	int on = 1;

	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
}

/* A time limit on the socket's reads (0: none), for the set-up. */
static void read_limit(int s, int ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

/* What the connecting side proves: its id to the accepting node, over both challenges. */
struct tcp_proof {
	uint32_t from, to;
	uint64_t chal_s, chal_c;
};

static int tag(const char *domain, uint32_t from, uint32_t to, uint64_t chal_s, uint64_t chal_c,
	       uint64_t *t)
{
	struct tcp_proof p = { from, to, chal_s, chal_c };

	return fabric_key_tag(domain, &p, sizeof p, t);
}

/*
 * The connection's keys, one per direction, from the cluster key, both
 * ids and both challenges: the connecting side's (from) messages under
 * "mad-tcp-kc", the accepting side's under "mad-tcp-ks".  0 or -ENOENT.
 */
static int session_keys(struct tcp_auth *a, int connecting, uint32_t from, uint32_t to, uint64_t chal_s,
			uint64_t chal_c)
{
	struct sipkey c2s, s2c;

	if (tag("mad-tcp-kc0", from, to, chal_s, chal_c, &c2s.k0) < 0 ||
	    tag("mad-tcp-kc1", from, to, chal_s, chal_c, &c2s.k1) < 0 ||
	    tag("mad-tcp-ks0", from, to, chal_s, chal_c, &s2c.k0) < 0 ||
	    tag("mad-tcp-ks1", from, to, chal_s, chal_c, &s2c.k1) < 0)
		return -ENOENT;
	memset(a, 0, sizeof *a);
	a->tx = connecting ? c2s : s2c;
	a->rx = connecting ? s2c : c2s;
	a->on = 1;
	return 0;
}

/* A message's tag state: its direction's key, then its sequence number. */
static void tag_start(struct siphash *st, const struct sipkey *k, uint64_t seq)
{
	siphash_init(st, k);
	siphash_update(st, &seq, sizeof seq);
}

/* The tag so far, the state left to go on with the body. */
static uint64_t tag_now(const struct siphash *st)
{
	struct siphash copy = *st;

	return siphash_final(&copy);
}

/* src's connection failed (r): said once, shut for good (see the top).  Returns r. */
static __attribute__((cold, noinline)) int conn_lost(int src, int r)
{
	if (!lost[src]) {
		lost[src] = 1;
		if (r != -EBADMSG)
			printf("mad-tcp: the connection with node %d failed (%d): closed, no more messages "
			       "to or from it\n", src, r);
		/* Aborted (an RST), not shut: a peer blocked writing to us hears of it at once. */
		lwip_socket_abort(socks[src]);
	}
	return r;
}

/* A message that failed its tag: said, its connection closed.  -EBADMSG. */
static __attribute__((cold, noinline)) int tag_failed(int src, const char *what)
{
	printf("mad-tcp: a message from node %d failed its tag (%s changed, replayed or out of order "
	       "in the stream): refused, the connection closed\n", src, what);
	return conn_lost(src, -EBADMSG);
}

/*
 * The connecting side's half (keyed): read the challenge, send id,
 * challenge and tag, check the answer.  0 or a negative errno.
 */
static int prove_connect(int s, uint32_t self, uint32_t to)
{
	uint64_t chal_s, chal_c = random64(), t, answer;
	uint64_t msg[3];
	int r;

	if ((r = read_all(s, &chal_s, sizeof chal_s)) < 0)
		return r;
	if ((r = tag("mad-tcp-c", self, to, chal_s, chal_c, &t)) < 0)
		return r;
	msg[0] = self;
	msg[1] = chal_c;
	msg[2] = t;
	if (send(s, msg, sizeof msg, 0) != sizeof msg)
		return -EIO;
	if ((r = read_all(s, &answer, sizeof answer)) < 0)
		return r;
	if ((r = tag("mad-tcp-s", self, to, chal_s, chal_c, &t)) < 0)
		return r;
	if (answer != t)
		return -EACCES;
	return session_keys(&auth[to], 1, self, to, chal_s, chal_c);
}

/*
 * The accepting side's half: the peer's id, proven under the key (keyed:
 * *keys its connection's) or by its address (not).  The id, or a
 * negative errno.
 */
static int prove_accept(int c, const struct sockaddr_in *from, uint32_t self, struct tcp_auth *keys)
{
	uint64_t chal_s = random64(), msg[3], t;
	uint32_t id;
	int r;

	if (!fabric_keyed()) {
		if ((r = read_all(c, &id, sizeof id)) < 0)
			return r;
		if (from->sin_family != AF_INET || from->sin_addr.s_addr != htonl(0x0a000000u | (id + 1)))
			return -EACCES;
		return (int)(id & 0x7fffffff);
	}
	if (send(c, &chal_s, sizeof chal_s, 0) != sizeof chal_s)
		return -EIO;
	if ((r = read_all(c, msg, sizeof msg)) < 0)
		return r;
	if (msg[0] > 0x7fffffff)
		return -EACCES;
	id = (uint32_t)msg[0];
	if ((r = tag("mad-tcp-c", id, self, chal_s, msg[1], &t)) < 0)
		return r;
	if (t != msg[2])
		return -EACCES;
	if ((r = tag("mad-tcp-s", id, self, chal_s, msg[1], &t)) < 0)
		return r;
	if (send(c, &t, sizeof t, 0) != sizeof t)
		return -EIO;
	if ((r = session_keys(keys, 0, id, self, chal_s, msg[1])) < 0)
		return r;
	return (int)id;
}

/* A connection proving itself (accept_higher), in a thread of its own. */
struct prover {
	struct thread *t;		/* NULL: the slot is free */
	int c;
	struct sockaddr_in from;
	uint32_t self;
	volatile int done;
	int id;				/* prove_accept's */
	struct tcp_auth keys;
};

static struct prover provers[PROVERS];

static void *prove_thread(void *arg)
{
	struct prover *p = arg;

	p->id = prove_accept(p->c, &p->from, p->self, &p->keys);
	p->done = 1;
	return NULL;
}

/* A prover that ended: its connection taken as its node's, or closed.  1 if taken. */
static int prover_end(struct prover *p, int nodes, int self)
{
	int id = p->id, taken = 0;

	thread_join(p->t);
	p->t = NULL;
	if (id > self && id < nodes && socks[id] < 0) {
		read_limit(p->c, 0);
		nodelay(p->c);
		if (p->keys.on)
			auth[id] = p->keys;
		socks[id] = p->c;
		taken = 1;
	} else {
		printf("mad: tcp: a connection that did not prove a node's id (%d); closed\n", id);
		closesocket(p->c);
	}
	return taken;
}

/*
 * Accept every higher node: one that proves its id (prove_accept), so
 * that another station cannot take a node's place by naming it first,
 * nor hold the set-up by connecting and saying nothing.  Up to PROVERS
 * connections prove themselves at once, each within SETUP_TIMEOUT_MS; one
 * more while all are busy is closed at once.  0 or a negative errno.
 */
static int accept_higher(int ls, int nodes, int self)
{
	int want = nodes - self - 1, got = 0, r = 0;

	read_limit(ls, ACCEPT_POLL_MS);
	while (got < want) {
		for (int i = 0; i < PROVERS; i++)
			if (provers[i].t && provers[i].done)
				got += prover_end(&provers[i], nodes, self);
		if (got == want)
			break;
		struct sockaddr_in from = { 0 };
		socklen_t fromlen = sizeof from;
		int c = accept(ls, (struct sockaddr *)&from, &fromlen);
		if (c < 0) {
			if (errno == EWOULDBLOCK || errno == EAGAIN)
				continue;	/* ACCEPT_POLL_MS without a connection: look at the proofs */
			r = -errno;
			break;
		}
		struct prover *p = NULL;
		for (int i = 0; i < PROVERS && !p; i++)
			if (!provers[i].t)
				p = &provers[i];
		if (p) {
			p->c = c;
			p->from = from;
			p->self = (uint32_t)self;
			p->done = 0;
			p->id = -EIO;
			memset(&p->keys, 0, sizeof p->keys);
			read_limit(c, SETUP_TIMEOUT_MS);
			p->t = thread_create("mad-tcp-prove", prove_thread, p, PRIO_NORMAL, 0);
		}
		if (!p || !p->t) {
			printf("mad: tcp: %d connections are proving themselves already; one more closed\n",
			       PROVERS);
			closesocket(c);
		}
	}
	/* Those still proving end within SETUP_TIMEOUT_MS; a node proven twice keeps its first. */
	for (int i = 0; i < PROVERS; i++)
		if (provers[i].t)
			prover_end(&provers[i], nodes, self);
	return r;
}

static int tcp_init(int nodes, int self)
{
	struct sockaddr_in sa = { 0 };
	int ls, r = 0;

	nnodes = nodes;
	me = self;
	for (int i = 0; i < MAX_NODES; i++) {
		socks[i] = -1;
		lost[i] = 0;
		mutex_init(&send_locks[i], 0);
		auth[i].on = 0;
	}
	/*
	 * Listening only then, too: a SYN that came before this node's own
	 * frames settled would fix the connection at Ethernet's MSS.  A peer
	 * that connects earlier is refused and tries again (QUICK_TRIES).
	 */
	(void)fabric_wait_path(PATH_WAIT_NS);
	ls = socket(AF_INET, SOCK_STREAM, 0);
	if (ls < 0)
		return -errno;
	sa.sin_family = AF_INET;
	sa.sin_port = htons(MAD_TCP_PORT);
	sa.sin_addr.s_addr = htonl(INADDR_ANY);
	if (bind(ls, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(ls, nodes) < 0) {
		r = -errno;
		closesocket(ls);
		return r;
	}
	/* Connect to every lower node. */
	for (int j = 0; j < self && r == 0; j++) {
		struct sockaddr_in to = { 0 };
		to.sin_family = AF_INET;
		to.sin_port = htons(MAD_TCP_PORT);
		to.sin_addr.s_addr = htonl(0x0a000000u | (uint32_t)(j + 1));
		r = -ETIMEDOUT;
		for (int t = 0; t < CONNECT_TRIES; t++) {
			int s = socket(AF_INET, SOCK_STREAM, 0);
			if (s < 0)
				break;
			if (connect(s, (struct sockaddr *)&to, sizeof to) == 0) {
				uint32_t id = (uint32_t)self;
				int ok;
				nodelay(s);
				read_limit(s, CONNECT_TIMEOUT_MS);
				if (fabric_keyed())
					ok = prove_connect(s, id, (uint32_t)j) == 0;
				else
					ok = send(s, &id, sizeof id, 0) == sizeof id;
				if (ok) {
					read_limit(s, 0);
					socks[j] = s;
					r = 0;
					break;
				}
				printf("mad: tcp: node %d did not prove itself; trying again\n", j);
			}
			closesocket(s);
			thread_sleep_ns(t < QUICK_TRIES ? 50000000ULL : 500000000ULL);
		}
	}
	if (r == 0)
		r = accept_higher(ls, nodes, self);
	closesocket(ls);
	return r;
}

static void tcp_exit(void)
{
	for (int i = 0; i < nnodes; i++) {
		if (socks[i] >= 0)
			closesocket(socks[i]);
		socks[i] = -1;
	}
}

/*
 * lwIP 2.2.1's vectored write (lwip_netconn_do_writemore, api/api_msg.c)
 * loops for ever in the tcpip thread when the element it is writing has a
 * multiple of 64 KiB left and the send buffer is full: it reads 16 bits of
 * that length (0) as "the rest of this element fits", writes 0 bytes and
 * goes round again, and the node stops (every thread waiting on lwIP, seen
 * with 64 KiB messages under a busy host).  So no element handed to
 * lwip_writev is longer than 0xffff bytes: a longer one is cut there and
 * ends that call; tcp_send_post's loop writes the rest.
 */
#define WRITEV_ELEM_MAX 0xffff

/* Calls of a long write or read between two points its busy section may be preempted (net_busy_next). */
#define BUSY_CALLS 16

static ssize_t writev_bounded(int s, const struct iovec *v, int count)
{
	struct iovec w[MAD_MAX_PACKS + 3];
	int k = 0;

	while (k < count) {
		w[k] = v[k];
		if (w[k++].iov_len > WRITEV_ELEM_MAX) {
			w[k - 1].iov_len = WRITEV_ELEM_MAX;
			break;
		}
	}
	return lwip_writev(s, w, k);
}

static int tcp_send_post(int dest, const struct mad_iovec *iov, int count)
{
	struct iovec v[MAD_MAX_PACKS + 3];
	uint64_t th, tb;
	int r = 0, i = 0, n = count;

	if (socks[dest] < 0 || lost[dest])
		return -ENOTCONN;
	for (int k = 0; k < count; k++) {
		v[k].iov_base = iov[k].base;
		v[k].iov_len = iov[k].len;
	}
	mutex_lock(&send_locks[dest]);
	if (auth[dest].on && count > 0) {
		/* The header's tag after it, the whole message's after the body (if any). */
		struct siphash st;
		size_t body = 0;
		tag_start(&st, &auth[dest].tx, auth[dest].tx_seq++);
		siphash_update(&st, iov[0].base, iov[0].len);
		th = tag_now(&st);
		for (int k = 1; k < count; k++) {
			siphash_update(&st, iov[k].base, iov[k].len);
			body += iov[k].len;
		}
		memmove(&v[2], &v[1], (size_t)(count - 1) * sizeof v[0]);
		v[1].iov_base = &th;
		v[1].iov_len = TAG_LEN;
		n = count + 1;
		if (body) {
			tb = siphash_final(&st);
			v[n].iov_base = &tb;
			v[n].iov_len = TAG_LEN;
			n++;
		}
	}
	/*
	 * A message longer than one call writes: the node takes what comes
	 * between the calls itself (net_busy_begin), so that the receiver's
	 * acknowledgements ring no doorbell here (an exit into QEMU, 16-90 us,
	 * for the node that rings).  Every BUSY_CALLS calls the thread may be
	 * preempted.
	 */
	int busy = iov_total(iov, count) > WRITEV_ELEM_MAX ? net_busy_begin() : 0;
	unsigned calls = 0;
	while (i < n) {
		ssize_t w = writev_bounded(socks[dest], v + i, n - i);
		if (w < 0) {
			r = conn_lost(dest, -errno);
			break;
		}
		i = step(v, i, n, (size_t)w);
		busy = net_busy_next(busy, &calls, BUSY_CALLS);
	}
	net_busy_end(busy);
	mutex_unlock(&send_locks[dest]);
	return r;
}

static int tcp_send_poll(int dest)
{
	(void)dest;
	return 1;		/* writev returned: the stream has it */
}

static int tcp_recv_header_post(void)
{
	return 0;
}

/* The first node with data, round robin; -1 if none. */
static int readable(uint64_t timeout_ns)
{
	fd_set rs;
	int maxfd = -1;
	struct timeval tv = { (long)(timeout_ns / 1000000000ULL),
			      (long)((timeout_ns % 1000000000ULL) / 1000) };

	FD_ZERO(&rs);
	for (int i = 0; i < nnodes; i++) {
		if (socks[i] >= 0 && !lost[i]) {
			FD_SET(socks[i], &rs);
			if (socks[i] > maxfd)
				maxfd = socks[i];
		}
	}
	if (maxfd < 0) {
		/*
		 * No connection (one node, or every one lost): nothing will come
		 * from the network, but a kick still may (a message to this node
		 * itself, a request completed by another thread).  A select on no
		 * socket waits as lwip_select_kick can cut short, where a sleep
		 * could not: each wait of a one-rank MPI program lasted its whole
		 * timeout (MPICH's coll/nonblocking3 on 1 rank passed 180 s).
		 */
		if (timeout_ns && select(0, NULL, NULL, NULL, &tv) < 0)
			thread_sleep_ns(timeout_ns);
		return -1;
	}
	if (select(maxfd + 1, &rs, NULL, NULL, &tv) <= 0)
		return -1;
	for (int k = 0; k < nnodes; k++) {
		int i = (next_poll + k) % nnodes;
		if (socks[i] >= 0 && !lost[i] && FD_ISSET(socks[i], &rs)) {
			next_poll = (i + 1) % nnodes;
			return i;
		}
	}
	return -1;
}

static int tcp_recv_body_post(int src, const struct mad_iovec *iov, int count);

static int recv_header(int i, int *src, void *hdr, size_t hdr_max, size_t *hdr_len);

static int tcp_recv_header_poll(int *src, void *hdr, size_t hdr_max, size_t *hdr_len)
{
	int i = readable(0), r;

	if (i < 0)
		return 0;
	r = recv_header(i, src, hdr, hdr_max, hdr_len);
	return r < 0 ? conn_lost(i, r) : r;
}

/* The header of the message that came from node i, whose stream is readable. */
static int recv_header(int i, int *src, void *hdr, size_t hdr_max, size_t *hdr_len)
{
	struct mad_wire_hdr h;
	size_t rest;
	int r;

	if ((r = read_all(socks[i], &h, sizeof h)) < 0)
		return r;
	if (h.magic != MAD_MAGIC || h.npacks > MAD_MAX_PACKS || h.express_len > MAD_EXPRESS_MAX)
		return -EPROTO;		/* the stream is out of step: nothing can be trusted */
	rest = 4u * h.npacks + h.express_len;
	if (sizeof h + rest > hdr_max)
		return -EPROTO;
	memcpy(hdr, &h, sizeof h);
	if ((r = read_all(socks[i], (uint8_t *)hdr + sizeof h, rest)) < 0)
		return r;
	if (auth[i].on) {
		/* Its tag, checked before anything reads the header. */
		struct tcp_auth *a = &auth[i];
		uint64_t th;
		if ((r = read_all(socks[i], &th, sizeof th)) < 0)
			return r;
		tag_start(&a->rx_st, &a->rx, a->rx_seq);
		siphash_update(&a->rx_st, hdr, sizeof h + rest);
		if (tag_now(&a->rx_st) != th)
			return tag_failed(i, "its header");
		a->rx_left = h.body_len;
		if (!a->rx_left)
			a->rx_seq++;
	}
	if (mad_hdr_check(hdr, sizeof h + rest) < 0) {
		/* A header our peers do not write: skip its body, keep the stream in step. */
		printf("mad-tcp: malformed header from node %d: dropped\n", i);
		for (uint32_t left = h.body_len; left;) {
			uint8_t sink[512];
			uint32_t k = left < sizeof sink ? left : sizeof sink;
			struct mad_iovec sv = { sink, k };
			if ((r = auth[i].on ? tcp_recv_body_post(i, &sv, 1) : read_all(socks[i], sink, k)) < 0)
				return r;
			left -= k;
		}
		return 0;
	}
	*src = i;
	*hdr_len = sizeof h + rest;
	return 1;
}

/* Keyed: the body read so far joins its message's tag; at its end, the tag is read and checked. */
static int body_tag(int src, const struct mad_iovec *iov, int count)
{
	struct tcp_auth *a = &auth[src];
	uint64_t tb;
	int r;

	for (int k = 0; k < count; k++) {
		if (iov[k].len > a->rx_left)
			return tag_failed(src, "its body's length");	/* more than its header said */
		siphash_update(&a->rx_st, iov[k].base, iov[k].len);
		a->rx_left -= (uint32_t)iov[k].len;
	}
	if (a->rx_left)
		return 0;
	if ((r = read_all(socks[src], &tb, sizeof tb)) < 0)
		return r;
	a->rx_seq++;
	return siphash_final(&a->rx_st) == tb ? 0 : tag_failed(src, "its body");
}

static int tcp_recv_body_post(int src, const struct mad_iovec *iov, int count)
{
	struct iovec v[MAD_MAX_PACKS];
	int i = 0, r;

	if (src < 0 || src >= nnodes || socks[src] < 0 || lost[src])
		return -ENOTCONN;
	for (int k = 0; k < count; k++) {
		v[k].iov_base = iov[k].base;
		v[k].iov_len = iov[k].len;
	}
	/* A long body: the sender's segments that come while it is copied out ring no doorbell (as for sending). */
	int busy = iov_total(iov, count) > WRITEV_ELEM_MAX ? net_busy_begin() : 0;
	unsigned calls = 0;
	while (i < count) {
		ssize_t n = lwip_readv(socks[src], v + i, count - i);
		if (n <= 0) {
			net_busy_end(busy);
			return conn_lost(src, n == 0 ? -ECONNRESET : -errno);
		}
		i = step(v, i, count, (size_t)n);
		busy = net_busy_next(busy, &calls, BUSY_CALLS);
	}
	net_busy_end(busy);
	if (auth[src].on && (r = body_tag(src, iov, count)) < 0)
		return conn_lost(src, r);
	return 0;
}

static int tcp_recv_body_poll(int src)
{
	(void)src;
	return 1;		/* readv returned with everything */
}

static void tcp_wait(uint64_t timeout_ns)
{
	/* select blocks only this thread; the next poll finds what woke it. */
	if (timeout_ns > 1000000000ULL)
		timeout_ns = 1000000000ULL;
	lwip_select_kickable(1);
	readable(timeout_ns);
	lwip_select_kickable(0);
}

/* mad_recv_kick: the receiver's select ends (lwip_select_kick), and it sees the kick. */
static void tcp_kick(void)
{
	lwip_select_kick();
}

MAD_DRIVER_DEFINE(tcp, .init = tcp_init, .exit = tcp_exit, .wait = tcp_wait, .kick = tcp_kick);
