/*
 * Madeleine's generic layer: the programming interface over the
 * portability interface.  See mad.h.
 *
 * Choices where the paper leaves one:
 *  - Messages carry data only, as section 2.1.2 has them: "MADELEINE
 *    internal messages are not self-describing".  The receiver's unpack
 *    sequence is its own program's; where each pack lies follows from the
 *    modes and lengths it unpacks, the same rule the sender placed them
 *    by.  Without a descriptor an unpack that does not mirror its pack is
 *    found only where the lengths disagree (an unpack past the message's
 *    EXPRESS or body bytes, or receive_data before all of them).  The
 *    debug mode (mad_debug=1, mad_set_debug) adds a descriptor to every
 *    message sent, one word per pack (mode and length), against which
 *    the receiver checks each unpack and names the pack it mismatched.
 *  - EXPRESS data travels in the header vector, so it is available as
 *    soon as its unpack returns; CHEAPER data is the body, read in one
 *    transfer at receive_data straight into the unpack destinations.
 *  - The state of the message being built or read is per thread (TLS), so
 *    threads send concurrently; receiving is one thread at a time.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/cmdline.h"
#include "kernel/node.h"
#include "kernel/sync.h"
#include "kernel/thread.h"
#include "kernel/tsc.h"
#include "lib/mad.h"

#define DESC_MODE(w) ((int)((w) >> 24))
#define DESC_LEN(w) ((size_t)((w) & 0xffffff))
/*
 * The six modes (one SND_, one RECV_): bit m of MODE_BITS is set for each.
 * One test on the path every pack and unpack takes.
 */
#define MODE_BITS (7u << MAD_RECV_CHEAPER | 7u << MAD_RECV_EXPRESS)
#define MODE_OK(m) ((unsigned)(m) < 32 && (MODE_BITS >> (m) & 1))
_Static_assert(MAD_SND_CHEAPER == 0 && MAD_SND_SAFER == 1 && MAD_SND_LATER == 2 && MAD_RECV_EXPRESS < 29,
	       "MODE_BITS assumes the SND_ modes are 0 to 2 and RECV_EXPRESS a bit below 29");
#define MAX_ITEM 0xffffff		/* 16 MiB - 1 per pack */

/* A channel: one transport, connected to every node (at most one per driver). */
struct mad_channel {
	const struct mad_driver *drv;
	struct mutex recv_lock;		/* one receiving thread at a time (paper 2.2) */
	int open;
	volatile int kicked;		/* mad_recv_kick: the receiver gives way */
};

#define NDRIVERS 8
static struct mad_channel chans[NDRIVERS];

/* The drivers linked in (MAD_DRIVER_REGISTER): the i-th, or NULL past the last. */
#ifndef HOST_TEST
extern const struct mad_driver *const __maddrv_start[], *const __maddrv_end[];

static const struct mad_driver *driver_at(int i)
{
	return i < __maddrv_end - __maddrv_start ? __maddrv_start[i] : NULL;
}
#else
static const struct mad_driver *host_drivers[NDRIVERS];
static int host_ndrivers;

void mad_driver_add(const struct mad_driver *d)
{
	if (host_ndrivers < NDRIVERS)
		host_drivers[host_ndrivers++] = d;
}

static const struct mad_driver *driver_at(int i)
{
	return i < host_ndrivers ? host_drivers[i] : NULL;
}
#endif
static struct mad_channel *defch;
static struct mutex open_lock = MUTEX_INIT;
static struct mad_stats stats;
static int debug;			/* messages sent carry their pack descriptor */

#ifndef HOST_TEST
static const struct argspec mad_args[] = {
	{ "mad_debug", ARG_BOOL, 0, 0, "Madeleine: every message sent carries its pack descriptor, and "
	  "the receiver checks each unpack against its pack's mode and length (default off: messages "
	  "carry data only)" },
	{ NULL, 0, 0, 0, NULL },
};
static const struct arg_table mad_argtab = { "madeleine", mad_args, NULL };
ARGS_REGISTER(mad_argtab);
#endif

int mad_set_debug(int on)
{
	int was = debug;

	debug = !!on;
	return was;
}

/* --- the pure part ------------------------------------------------------------ */

/*
 * EXPRESS data into or out of the header: mostly a few bytes (an
 * envelope), which two overlapping moves copy without a call; memcpy's
 * byte loop for short lengths costs an instruction a byte.
 */
static inline void express_copy(void *dst, const void *src, size_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src;

	if (n >= 8 && n <= 16) {
		uint64_t a, b;
		__builtin_memcpy(&a, s, 8);
		__builtin_memcpy(&b, s + n - 8, 8);
		__builtin_memcpy(d, &a, 8);
		__builtin_memcpy(d + n - 8, &b, 8);
	} else if (n >= 4 && n < 8) {
		uint32_t a, b;
		__builtin_memcpy(&a, s, 4);
		__builtin_memcpy(&b, s + n - 4, 4);
		__builtin_memcpy(d, &a, 4);
		__builtin_memcpy(d + n - 4, &b, 4);
	} else {
		memcpy(d, s, n);
	}
}

int mad_hdr_check(const void *hdr, size_t len)
{
	struct mad_wire_hdr h;

	if (len < sizeof h)
		return -EPROTO;
	memcpy(&h, hdr, sizeof h);
	if (h.magic != MAD_MAGIC || h.npacks > MAD_MAX_PACKS || h.express_len > MAD_EXPRESS_MAX ||
	    len != sizeof h + 4u * h.npacks + h.express_len)
		return -EPROTO;
	if (h.npacks == 0)
		return 0;		/* no descriptor: data only */
	/* The descriptor must add up to the express and body lengths. */
	const uint8_t *d = (const uint8_t *)hdr + sizeof h;
	uint64_t ex = 0, body = 0;
	for (unsigned i = 0; i < h.npacks; i++) {
		uint32_t w;
		memcpy(&w, d + 4 * i, 4);
		int mode = DESC_MODE(w), where = mode & (MAD_RECV_EXPRESS | MAD_DESC_INBODY);
		/* One of the six modes; in the body only if EXPRESS (pack). */
		if (!MODE_OK(mode & ~MAD_DESC_INBODY) || where == MAD_DESC_INBODY)
			return -EPROTO;
		if (where == MAD_RECV_EXPRESS)
			ex += DESC_LEN(w);
		else
			body += DESC_LEN(w);
	}
	if (ex != h.express_len || body != h.body_len)
		return -EPROTO;
	return 0;
}

static const char *mode_name(int mode)
{
	static const char *const names[] = {
		"SND_CHEAPER|RECV_CHEAPER", "SND_SAFER|RECV_CHEAPER", "SND_LATER|RECV_CHEAPER", "?",
		"SND_CHEAPER|RECV_EXPRESS", "SND_SAFER|RECV_EXPRESS", "SND_LATER|RECV_EXPRESS", "?",
	};
	int i = (mode & MAD_SND_MASK) + ((mode & MAD_RECV_EXPRESS) ? 4 : 0);
	return i < 8 ? names[i] : "?";
}

int mad_match_unpack(const void *hdr, unsigned idx, int mode, size_t n, char *err, size_t errlen)
{
	struct mad_wire_hdr h;
	uint32_t w;

	memcpy(&h, hdr, sizeof h);
	if (idx >= h.npacks) {
		snprintf(err, errlen, "unpack #%u of %zu bytes, but the message has only %u packs", idx + 1,
			 n, h.npacks);
		return -EPROTO;
	}
	memcpy(&w, (const uint8_t *)hdr + sizeof h + 4 * idx, 4);
	if ((DESC_MODE(w) & ~MAD_DESC_INBODY) != mode || DESC_LEN(w) != n) {
		snprintf(err, errlen, "unpack #%u is %zu bytes %s, but pack #%u was %zu bytes %s", idx + 1,
			 n, mode_name(mode), idx + 1, DESC_LEN(w), mode_name(DESC_MODE(w) & ~MAD_DESC_INBODY));
		return -EPROTO;
	}
	return 0;
}

/* --- setup ------------------------------------------------------------------------ */

struct mad_channel *mad_open(const char *name)
{
	const struct mad_driver *d;
	struct mad_channel *ch = NULL;
	int r;

	for (int i = 0; i < NDRIVERS && (d = driver_at(i)); i++)
		if (d->name && strcmp(d->name, name) == 0) {
			ch = &chans[i];
			break;
		}
	if (!ch) {
		printf("mad: no driver '%s' (", name);
		for (int i = 0; i < NDRIVERS && (d = driver_at(i)); i++)
			printf("%s%s", i ? ", " : "", d->name);
		printf(")\n");
		return NULL;
	}
	mutex_lock(&open_lock);
#ifndef HOST_TEST
	debug = arg_bool("mad_debug", debug);
#endif
	if (!ch->open) {
		ch->drv = d;
		r = ch->drv->init ? ch->drv->init(num_nodes, node_id) : -ENOSYS;
		if (r < 0)
			printf("mad: driver %s: init failed (%d)\n", name, r);
		else
			ch->open = 1;
		mutex_init(&ch->recv_lock, 0);
	}
	mutex_unlock(&open_lock);
	return ch->open ? ch : NULL;
}

int mad_init(const char *name)
{
	struct mad_channel *ch = mad_open(name);

	if (!ch)
		return -ENODEV;
	defch = ch;
	return 0;
}

struct sendstate;
static __thread struct sendstate *snd;
static void free_copies(void);

void mad_exit(void)
{
	if (snd)
		free_copies();		/* the calling thread's last message's SND_SAFER copies */
	mutex_lock(&open_lock);
	for (int i = 0; i < NDRIVERS; i++) {
		if (chans[i].open && chans[i].drv->exit)
			chans[i].drv->exit();
		chans[i].open = 0;
	}
	defch = NULL;
	mutex_unlock(&open_lock);
}

struct mad_channel *mad_default_channel(void)
{
	return defch;
}

const char *mad_driver_name(void)
{
	return defch ? defch->drv->name : "none";
}

const char *mad_channel_name(const struct mad_channel *ch)
{
	return ch ? ch->drv->name : "none";
}

/* --- sending ------------------------------------------------------------------------ */

struct later {			/* EXPRESS data read at send time */
	const void *ptr;
	size_t len, off;
};

struct sendstate {
	struct mad_channel *ch;
	int active;
	int dest;
	int error;
	int desc;				/* debug mode: the descriptor goes with the message */
	unsigned npacks;
	uint8_t hdr[MAD_HDR_MAX];		/* wire header, descriptor (debug), express */
	size_t express_len, body_len;
	struct later later[MAD_MAX_PACKS];
	unsigned nlater;
	struct mad_iovec iov[MAD_MAX_PACKS + 1];
	unsigned niov;
	void *copies[MAD_MAX_PACKS];		/* SND_SAFER copies, freed at the next init */
	unsigned ncopies;
	int sent;				/* the message went and may go again (resend) */
};

static void free_copies(void)
{
	while (snd->ncopies)
		free(snd->copies[--snd->ncopies]);
}

/* SND_SAFER: an explicit copy, taken now (paper 2.1.1). */
static const void *safe_copy(const void *ptr, size_t n)
{
	void *c = malloc(n ? n : 1);

	if (!c)
		return NULL;
	memcpy(c, ptr, n);
	snd->copies[snd->ncopies++] = c;
	return c;
}

/*
 * Misuse is said on the console 20 times; after that it is counted only
 * (stats.misuse), so that a program caught in a loop of it does not bury
 * the console (and the node's time) under the same line.  Cold and not
 * inlined: under LTO its lines counted against the whole image's inlining
 * budget and moved the raw frame's receive path by 7 instructions.
 */
#define MISUSE_SAID 20

static __attribute__((cold, noinline)) int misuse_say(void)
{
	static unsigned said;

	stats.misuse++;
	if (said < MISUSE_SAID) {
		said++;
		return 1;
	}
	if (said++ == MISUSE_SAID)
		printf("mad: misuse: said %d times; from now on only counted (mad_stats' misuse)\n", MISUSE_SAID);
	return 0;
}

static int send_misuse(const char *fmt, const char *what)
{
	if (misuse_say()) {
		printf("mad: misuse: ");
		printf(fmt, what);
		printf("\n");
	}
	if (snd && snd->active)
		snd->error = -EPROTO;
	return -EPROTO;
}

int mad_sendbuf_init(int dest)
{
	return mad_sendbuf_init_on(defch, dest);
}

int mad_sendbuf_init_on(struct mad_channel *ch, int dest)
{
	if (!ch || !ch->open)
		return -ENODEV;
	if (dest < 0 || dest >= num_nodes || dest == node_id)
		return -EINVAL;
	if (!snd) {
		snd = calloc(1, sizeof *snd);
		if (!snd)
			return -ENOMEM;
	}
	if (snd->active)
		return send_misuse("%s: a message is already being built in this thread",
				   "sendbuf_init");
	snd->active = 1;
	snd->sent = 0;
	snd->ch = ch;
	snd->dest = dest;
	snd->error = 0;
	snd->desc = debug;
	snd->npacks = 0;
	snd->express_len = snd->body_len = 0;
	snd->nlater = 0;
	snd->niov = 1;				/* iov[0] is the header */
	free_copies();
	return 0;
}

/* Why pack refuses (off the path of a good pack): say it, and fail the message. */
static __attribute__((noinline)) int pack_refused(int mode, const void *ptr, size_t n)
{
	if (!snd || !snd->active)
		return send_misuse("%s without sendbuf_init", "pack");
	if (!MODE_OK(mode))
		return send_misuse("%s: invalid mode (one SND_ and one RECV_ mode)", "pack");
	if (snd->npacks == MAD_MAX_PACKS)
		return send_misuse("%s: more than 64 packs in one message", "pack");
	if (n > MAX_ITEM || (n && !ptr))
		return send_misuse("%s: bad pointer or length", "pack");
	return snd->error;		/* the message already failed: it will not be sent */
}

/* Record a checked pack of n bytes at ptr in s. */
static inline int pack_record(struct sendstate *s, int mode, const void *ptr, size_t n)
{
	int rm = mode & MAD_RECV_MASK;
	/*
	 * EXPRESS data goes in the header while it fits there, else in the
	 * body; the receiver places its unpacks by the same rule.
	 */
	int inhdr = rm == MAD_RECV_EXPRESS && s->express_len + n <= MAD_EXPRESS_MAX;
	if (s->desc) {
		uint32_t w = (uint32_t)(mode | (rm == MAD_RECV_EXPRESS && !inhdr ? MAD_DESC_INBODY : 0)) << 24 |
			     (uint32_t)n;
		memcpy(s->hdr + sizeof(struct mad_wire_hdr) + 4 * s->npacks, &w, 4);
	}
	s->npacks++;
	if (inhdr) {
		/* Placed after the descriptor (if any) at send time; SAFER is copied now. */
		struct later *l = &s->later[s->nlater++];
		l->off = s->express_len;
		l->len = n;
		l->ptr = ptr;
		s->express_len += n;
		return 0;
	}
	if (n == 0)
		return 0;
	/* SND_LATER and SND_CHEAPER: the caller's memory, read when sent. */
	s->iov[s->niov].base = (void *)(uintptr_t)ptr;
	s->iov[s->niov].len = n;
	s->niov++;
	s->body_len += n;
	return 0;
}

/*
 * SND_SAFER: the copy is taken before anything of the pack is recorded;
 * without it the message is unsendable (sendbuf_send returns -ENOMEM).
 */
static __attribute__((noinline)) int pack_safer(struct sendstate *s, int mode, const void *ptr, size_t n)
{
	if (!(ptr = safe_copy(ptr, n))) {
		printf("mad: pack: no memory for a %zu-byte SND_SAFER copy: the message will not be sent\n", n);
		s->error = -ENOMEM;
		return -ENOMEM;
	}
	return pack_record(s, mode, ptr, n);
}

static int pack(int mode, const void *ptr, size_t n)
{
	struct sendstate *s = snd;

	if (!s || !s->active || !MODE_OK(mode) || s->npacks == MAD_MAX_PACKS || n > MAX_ITEM || (n && !ptr) ||
	    s->error)
		return pack_refused(mode, ptr, n);
	if ((mode & MAD_SND_MASK) == MAD_SND_SAFER && n)
		return pack_safer(s, mode, ptr, n);
	return pack_record(s, mode, ptr, n);
}

int mad_sendbuf_pack_byte(int mode, const void *ptr, size_t n)
{
	return pack(mode, ptr, n);
}

int mad_sendbuf_pack_int(int mode, const int *ptr, size_t n)
{
	return pack(mode, ptr, n * sizeof(int));
}

int mad_sendbuf_pack_u64(int mode, const uint64_t *ptr, size_t n)
{
	return pack(mode, ptr, n * sizeof(uint64_t));
}

/*
 * Send the message built in snd to snd->dest: the header written now, the
 * SND_LATER data read now (paper 2.1.1).
 */
static int transmit(void)
{
	struct mad_wire_hdr h;
	size_t dlen;
	int r;

	h.magic = MAD_MAGIC;
	h.npacks = snd->desc ? (uint16_t)snd->npacks : 0;	/* descriptor words that follow */
	h.src = (uint16_t)node_id;
	h.express_len = (uint32_t)snd->express_len;
	h.body_len = (uint32_t)snd->body_len;
	memcpy(snd->hdr, &h, sizeof h);
	dlen = sizeof h + 4u * h.npacks;
	/* EXPRESS data now: SND_LATER reads its value at send time. */
	for (unsigned i = 0; i < snd->nlater; i++)
		if (snd->later[i].len)
			express_copy(snd->hdr + dlen + snd->later[i].off, snd->later[i].ptr, snd->later[i].len);
	snd->iov[0].base = snd->hdr;
	snd->iov[0].len = dlen + snd->express_len;
	const struct mad_driver *drv = snd->ch->drv;
	/* -EAGAIN: the driver would have to wait for the destination (another message to it under way). */
	while ((r = drv->send_post(snd->dest, snd->iov, (int)snd->niov)) == -EAGAIN) {
		stats.send_deferred++;
		if (drv->send_wait)
			drv->send_wait(snd->dest);
		else
			thread_yield();
	}
	while (r == 0 && (r = drv->send_poll(snd->dest)) == 0) {
		stats.send_pending++;
		if (drv->send_wait)
			drv->send_wait(snd->dest);
		else
			thread_yield();
	}
	if (r < 0)
		return r;
	stats.sent++;
	stats.bytes_sent += snd->iov[0].len + snd->body_len;
	return 0;
}

int mad_sendbuf_send(void)
{
	int r;

	if (!snd || !snd->active)
		return send_misuse("%s without sendbuf_init", "sendbuf_send");
	snd->active = 0;
	if (snd->error) {
		free_copies();
		return snd->error;		/* a misused message is not sent */
	}
	if ((r = transmit()) == 0)
		snd->sent = 1;
	return r;
}

int mad_sendbuf_resend(int dest)
{
	if (!snd || !snd->sent || snd->active)
		return send_misuse("%s without a message sent by sendbuf_send since sendbuf_init",
				   "sendbuf_resend");
	if (dest < 0 || dest >= num_nodes || dest == node_id)
		return -EINVAL;
	snd->dest = dest;
	return transmit();
}

/* --- receiving ------------------------------------------------------------------------ */

struct recvstate {
	const struct mad_driver *drv;
	int active;
	int done;
	int error;
	int src;
	uint8_t hdr[MAD_HDR_MAX];
	size_t hdr_len;
	unsigned npacks;			/* descriptor words (0: data only) */
	size_t express_len, body_len;		/* the message's, from its header */
	const uint8_t *express;			/* its EXPRESS data in hdr */
	unsigned idx;
	size_t express_off;
	struct mad_iovec iov[MAD_MAX_PACKS];
	unsigned niov;
	size_t body_posted;
};

static __thread struct recvstate *rcv;

int mad_recv_misuse(const char *msg)
{
	if (misuse_say())
		printf("mad: misuse: %s\n", msg);
	if (rcv && rcv->active)
		rcv->error = -EPROTO;
	return -EPROTO;
}

/* Receive the body vectors unpacked so far. */
static int post_pending(void)
{
	int r = 0;

	if (rcv->niov) {
		const struct mad_driver *drv = rcv->drv;
		r = drv->recv_body_post(rcv->src, rcv->iov, (int)rcv->niov);
		while (r == 0 && (r = drv->recv_body_poll(rcv->src)) == 0)
			drv->wait(1000000);
		rcv->niov = 0;
	}
	if (r < 0 && !rcv->error)
		rcv->error = r;
	return r < 0 ? r : 0;
}

/* An unpack that does not mirror its pack: say how. */
static __attribute__((cold, noinline)) int unpack_mismatch(int mode, size_t n)
{
	char err[160];

	mad_match_unpack(rcv->hdr, rcv->idx, mode, n, err, sizeof err);
	return mad_recv_misuse(err);
}

/*
 * Without a descriptor: an unpack with no such mode, or one past what the
 * message carries where its mode places it (the header's EXPRESS bytes or
 * the body).
 */
static __attribute__((cold, noinline)) int unpack_overrun(int mode, size_t n, int inhdr)
{
	char err[200];

	if (!MODE_OK(mode))
		snprintf(err, sizeof err, "unpack #%u: invalid mode %#x (one SND_ and one RECV_ mode)",
			 rcv->idx + 1, (unsigned)mode);
	else if (rcv->idx == MAD_MAX_PACKS)
		snprintf(err, sizeof err, "unpack #%u: a message has %d packs at most", rcv->idx + 1,
			 MAD_MAX_PACKS);
	else if (inhdr)
		snprintf(err, sizeof err, "unpack #%u of %zu bytes %s, but the message has %zu EXPRESS bytes "
			 "left in its header (it does not mirror the packs; mad_debug=1 names the pack)",
			 rcv->idx + 1, n, mode_name(mode), rcv->express_len - rcv->express_off);
	else
		snprintf(err, sizeof err, "unpack #%u of %zu bytes %s, but the message has %zu bytes left "
			 "in its body (it does not mirror the packs; mad_debug=1 names the pack)",
			 rcv->idx + 1, n, mode_name(mode), rcv->body_len - rcv->body_posted);
	return mad_recv_misuse(err);
}

/* Why unpack refuses (off the path of a good unpack). */
static __attribute__((noinline)) int unpack_refused(void *ptr, size_t n)
{
	if (!rcv || !rcv->active)
		return mad_recv_misuse("unpack outside a receive handler");
	if (rcv->done)
		return mad_recv_misuse("unpack after receive_data");
	if (rcv->error)
		return rcv->error;
	(void)ptr;
	(void)n;
	return mad_recv_misuse("unpack into a NULL pointer");
}

/* An unpack of data in the body: its vector, received with the next EXPRESS one or receive_data. */
static __attribute__((noinline)) int unpack_body(struct recvstate *r, int mode, void *ptr, size_t n)
{
	if (n) {
		r->iov[r->niov].base = ptr;
		r->iov[r->niov].len = n;
		r->niov++;
		r->body_posted += n;
	}
	/* EXPRESS in the body: receive the body up to here before returning. */
	if (mode & MAD_RECV_EXPRESS)
		return post_pending();
	return 0;
}

/* Debug mode: the message's descriptor says where the pack lies, and what it was. */
static __attribute__((noinline)) int unpack_described(struct recvstate *r, int mode, void *ptr, size_t n)
{
	uint32_t w;

	if (r->idx >= r->npacks)
		return unpack_mismatch(mode, n);
	/*
	 * The pack this unpack mirrors: the same mode and length
	 * (mad_match_unpack), its descriptor word compared whole.
	 */
	memcpy(&w, r->hdr + sizeof(struct mad_wire_hdr) + 4 * r->idx, 4);
	if ((unsigned)mode > 0x7f || n > MAX_ITEM ||
	    (w & ~((uint32_t)MAD_DESC_INBODY << 24)) != ((uint32_t)mode << 24 | (uint32_t)n))
		return unpack_mismatch(mode, n);
	r->idx++;
	if ((mode & MAD_RECV_EXPRESS) && !(DESC_MODE(w) & MAD_DESC_INBODY)) {
		/* In the header: here now. */
		express_copy(ptr, r->express + r->express_off, n);
		r->express_off += n;
		return 0;
	}
	return unpack_body(r, mode, ptr, n);
}

static int unpack(int mode, void *ptr, size_t n)
{
	struct recvstate *r = rcv;

	if (!r || !r->active || r->done || r->error || (n && !ptr))
		return unpack_refused(ptr, n);
	if (r->npacks)
		return unpack_described(r, mode, ptr, n);
	/*
	 * Data only (section 2.1.2): the pack lies where the sender's rule
	 * (pack_record) put a pack of this mode and length, the unpacks
	 * before it having taken what they mirror.
	 */
	if (!MODE_OK(mode) || r->idx == MAD_MAX_PACKS)
		return unpack_overrun(mode, n, 0);
	if ((mode & MAD_RECV_EXPRESS) && r->express_off + n <= MAD_EXPRESS_MAX) {
		/* In the header: here now. */
		if (n > r->express_len - r->express_off)
			return unpack_overrun(mode, n, 1);
		r->idx++;
		express_copy(ptr, r->express + r->express_off, n);
		r->express_off += n;
		return 0;
	}
	if (n > r->body_len - r->body_posted)
		return unpack_overrun(mode, n, 0);
	r->idx++;
	return unpack_body(r, mode, ptr, n);
}

int mad_recvbuf_unpack_byte(int mode, void *ptr, size_t n)
{
	return unpack(mode, ptr, n);
}

int mad_recvbuf_unpack_int(int mode, int *ptr, size_t n)
{
	return unpack(mode, ptr, n * sizeof(int));
}

int mad_recvbuf_unpack_u64(int mode, uint64_t *ptr, size_t n)
{
	return unpack(mode, ptr, n * sizeof(uint64_t));
}

/* Receive the rest of the body into a scratch buffer: keeps the stream in step. */
static int drain(size_t left)
{
	static uint8_t sink[4096];
	const struct mad_driver *drv = rcv->drv;
	struct mad_iovec v[MAD_MAX_PACKS];
	int r = 0;

	while (left && r >= 0) {
		int n = 0;
		size_t chunk = 0;
		while (n < MAD_MAX_PACKS && chunk < left) {
			size_t k = left - chunk < sizeof sink ? left - chunk : sizeof sink;
			v[n].base = sink;
			v[n].len = k;
			chunk += k;
			n++;
		}
		r = drv->recv_body_post(rcv->src, v, n);
		while (r == 0 && (r = drv->recv_body_poll(rcv->src)) == 0)
			drv->wait(1000000);
		left -= chunk;
	}
	return r < 0 ? r : 0;
}

int mad_recvbuf_receive_data(void)
{
	int r = 0;

	if (!rcv || !rcv->active)
		return mad_recv_misuse("receive_data outside a receive handler");
	if (rcv->done)
		return mad_recv_misuse("receive_data called twice");
	rcv->done = 1;
	if (!rcv->error && rcv->npacks && rcv->idx != rcv->npacks) {
		char err[96];
		snprintf(err, sizeof err, "receive_data after %u unpacks; the message has %u packs", rcv->idx,
			 rcv->npacks);
		mad_recv_misuse(err);
	} else if (!rcv->error && (rcv->express_off != rcv->express_len || rcv->body_posted != rcv->body_len)) {
		char err[200];
		snprintf(err, sizeof err, "receive_data after %u unpacks of %zu of the message's %zu EXPRESS "
			 "bytes in its header and %zu of its %zu body bytes (mad_debug=1 names the pack)",
			 rcv->idx, rcv->express_off, rcv->express_len, rcv->body_posted, rcv->body_len);
		mad_recv_misuse(err);
	}
	if (rcv->error) {
		/* Whatever was unpacked is read, the rest thrown away. */
		int e = rcv->error;
		post_pending();
		drain(rcv->body_len - rcv->body_posted);
		return e;
	}
	if ((r = post_pending()) < 0)
		return r;
	stats.received++;
	stats.bytes_received += rcv->hdr_len + rcv->body_len;
	return 0;
}

int mad_recvbuf_receive_timeout(int (*handler)(int src), uint64_t timeout_ns)
{
	return mad_recvbuf_receive_on(defch, handler, timeout_ns);
}

int mad_recvbuf_receive_on(struct mad_channel *ch, int (*handler)(int src), uint64_t timeout_ns)
{
	uint64_t end = cycles() + ns_to_cycles(timeout_ns);
	const struct mad_driver *drv;
	int r, src;
	size_t len;

	if (!ch || !ch->open)
		return -ENODEV;
	drv = ch->drv;
	if (!rcv) {
		rcv = calloc(1, sizeof *rcv);
		if (!rcv)
			return -ENOMEM;
	}
	if (rcv->active)
		return mad_recv_misuse("receive from inside a receive handler");
	mutex_lock(&ch->recv_lock);
	r = drv->recv_header_post();
	while (r == 0) {
		r = drv->recv_header_poll(&src, rcv->hdr, sizeof rcv->hdr, &len);
		if (r != 0)
			break;
		if (ch->kicked) {
			ch->kicked = 0;
			r = -EINTR;
			break;
		}
		uint64_t now = cycles();
		if (now >= end) {
			r = -ETIMEDOUT;
			break;
		}
		drv->wait(cycles_to_ns(end - now));
	}
	if (r < 0) {
		mutex_unlock(&ch->recv_lock);
		return r;
	}
	if (mad_hdr_check(rcv->hdr, len) < 0) {
		/* A transport delivers whole headers; a bad one is a broken peer. */
		mutex_unlock(&ch->recv_lock);
		stats.misuse++;
		printf("mad: malformed header from node %d (%zu bytes): dropped\n", src, len);
		return -EPROTO;
	}
	rcv->drv = drv;
	rcv->active = 1;
	rcv->done = 0;
	rcv->error = 0;
	rcv->src = src;
	rcv->hdr_len = len;
	{
		struct mad_wire_hdr h;
		memcpy(&h, rcv->hdr, sizeof h);
		rcv->npacks = h.npacks;
		rcv->express_len = h.express_len;
		rcv->body_len = h.body_len;
		rcv->express = rcv->hdr + sizeof h + 4u * h.npacks;
	}
	rcv->idx = 0;
	rcv->express_off = 0;
	rcv->niov = 0;
	rcv->body_posted = 0;
	r = handler(src);
	if (!rcv->done) {
		mad_recv_misuse("the handler returned without calling receive_data");
		mad_recvbuf_receive_data();
		if (r >= 0)
			r = -EPROTO;
	} else if (rcv->error && r >= 0) {
		r = rcv->error;
	}
	rcv->active = 0;
	mutex_unlock(&ch->recv_lock);
	return r;
}

void mad_recv_kick(struct mad_channel *ch)
{
	if (!ch || !ch->open)
		return;
	ch->kicked = 1;
	if (ch->drv->kick)
		ch->drv->kick();
}

int mad_recv_kickable(const struct mad_channel *ch)
{
	return ch && ch->open && ch->drv->kick != NULL;
}

int mad_recvbuf_receive(int (*handler)(int src))
{
	return mad_recvbuf_receive_timeout(handler, ~0ULL >> 2);
}

void mad_stats(struct mad_stats *out)
{
	*out = stats;
}
