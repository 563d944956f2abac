/*
 * rpc: the RPC table of the remote-memory paper, section 3.1.3 (Table 4):
 * Simple (four integer arguments, an integer result) and MW-32, MW-64 and
 * MW-128 (32, 64 and 128 words of arguments, an integer result), node 0
 * calling node 1, over
 *  - rmem:      RPC on protected remote memory (lib/rpc.h: argument stacks
 *               written remotely, section 3.1.1; the reliable channel);
 *  - mad-tcp:   Madeleine's RPC (madeleine paper 2.1.4: the service id
 *               EXPRESS, the arguments CHEAPER) on its TCP driver, the
 *               result sent back as a Madeleine message;
 *  - mad-rmem, mad-req, mad-cell: the same on Madeleine's remote-memory,
 *               REQ and hybrid-deposit drivers.
 * Every result is checked.  Node 0 prints the table of medians beside the
 * paper's figures, and one line per transport:
 *	RESULT rpc transport=T calls=N simple_us=.. mw32_us=.. mw64_us=.. mw128_us=.. failed=0
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/app.h"
#include "apps/stats.h"
#include "kernel/thread.h"
#include "kernel/tsc.h"
#include "lib/mad.h"
#include "lib/rpc.h"
#include "net/call/barrier.h"
#include "net/fabric/fabric.h"

#define WAIT_NS 30000000000ULL
enum { P_SIMPLE = 1, P_SUM = 2 };
enum { SVC_SIMPLE = 10, SVC_SUM = 11, SVC_REPLY = 12, SVC_STOP = 13 };

static const int kinds[4] = { 0, 32, 64, 128 };	/* words; 0 is Simple */
static volatile int failed;

static uint64_t simple(const int32_t a[4])
{
	return (uint64_t)((int64_t)a[0] + 2 * (int64_t)a[1] + 3 * (int64_t)a[2] + 4 * (int64_t)a[3]);
}

static uint64_t sum(const uint32_t *w, size_t n)
{
	uint64_t s = 0;

	for (size_t i = 0; i < n; i++)
		s += (uint64_t)w[i] * (i + 1);	/* a word in the wrong place changes it */
	return s;
}

/* --- remote memory (lib/rpc.h) ------------------------------------------------ */

static int proc_simple(const void *args, size_t len, uint64_t *result)
{
	int32_t a[4];

	if (len != sizeof a)
		return -EINVAL;
	memcpy(a, args, sizeof a);
	*result = simple(a);
	return 0;
}

static int proc_sum(const void *args, size_t len, uint64_t *result)
{
	if (len % 4 || len > 128 * 4)
		return -EINVAL;
	uint32_t w[128];
	memcpy(w, args, len);
	*result = sum(w, len / 4);
	return 0;
}

/* --- Madeleine ------------------------------------------------------------------ */

static struct mad_channel *cur_ch;
static volatile uint64_t reply;
static volatile int stop;

static int reply_to(int src, uint64_t v)
{
	static __thread uint64_t out;
	int r = mad_rpc_begin_on(cur_ch, src, SVC_REPLY);

	out = v;
	if (r == 0)
		r = mad_sendbuf_pack_u64(MAD_SND_CHEAPER | MAD_RECV_EXPRESS, (const uint64_t *)&out, 1);
	int s = mad_sendbuf_send();
	return r ? r : s;
}

static int svc_simple(int src)
{
	int32_t a[4];
	int r = mad_recvbuf_unpack_int(MAD_SND_CHEAPER | MAD_RECV_CHEAPER, a, 4);
	int d = mad_recvbuf_receive_data();

	if (r || d)
		return r ? r : d;
	return reply_to(src, simple(a));
}

static int svc_sum(int src)
{
	uint32_t n = 0, w[128];
	int r = mad_recvbuf_unpack_byte(MAD_SND_SAFER | MAD_RECV_EXPRESS, &n, sizeof n);

	/* The size first, EXPRESS; then the words CHEAPER, into memory chosen for them. */
	if (r == 0 && n > 128)
		r = -EINVAL;
	if (r == 0)
		r = mad_recvbuf_unpack_byte(MAD_SND_CHEAPER | MAD_RECV_CHEAPER, w, n * 4);
	int d = mad_recvbuf_receive_data();
	if (r || d)
		return r ? r : d;
	return reply_to(src, sum(w, n));
}

static int svc_reply(int src)
{
	uint64_t v;
	int r = mad_recvbuf_unpack_u64(MAD_SND_CHEAPER | MAD_RECV_EXPRESS, &v, 1);
	int d = mad_recvbuf_receive_data();

	(void)src;
	reply = v;
	return r ? r : d;
}

static int svc_stop(int src)
{
	(void)src;
	stop = 1;
	return mad_recvbuf_receive_data();
}

static int mad_call(int words, const void *args, uint64_t *res)
{
	static uint32_t n;
	int r = mad_rpc_begin_on(cur_ch, 1, words ? SVC_SUM : SVC_SIMPLE);

	if (r == 0 && words) {
		n = (uint32_t)words;
		r = mad_sendbuf_pack_byte(MAD_SND_SAFER | MAD_RECV_EXPRESS, &n, sizeof n);
		if (r == 0)
			r = mad_sendbuf_pack_byte(MAD_SND_CHEAPER | MAD_RECV_CHEAPER, args, n * 4);
	} else if (r == 0) {
		r = mad_sendbuf_pack_int(MAD_SND_CHEAPER | MAD_RECV_CHEAPER, args, 4);
	}
	int s = mad_sendbuf_send();
	if (r || s)
		return r ? r : s;
	r = mad_rpc_serve_one_on(cur_ch, WAIT_NS);
	*res = reply;
	return r;
}

/* --- the table -------------------------------------------------------------------- */

struct transport {
	const char *name;
	struct rpc_binding b;
	uint64_t median[4];
};

static int one_call(struct transport *t, int words, int i)
{
	uint32_t w[128];
	int32_t a[4] = { i, -3, 1000, 7 };
	uint64_t want, res = ~0ULL;
	int r;

	if (words < 0 || words > (int)(sizeof w / sizeof w[0]))
		return -1;
	for (int k = 0; k < words; k++)
		w[k] = (uint32_t)(k * 2654435761u) ^ (uint32_t)i;
	want = words ? sum(w, (size_t)words) : simple(a);
	if (strcmp(t->name, "rmem") == 0)
		r = rpc_call(&t->b, words ? P_SUM : P_SIMPLE, words ? (const void *)w : (const void *)a,
			     words ? (size_t)words * 4 : sizeof a, &res);
	else
		r = mad_call(words, words ? (const void *)w : (const void *)a, &res);
	if (r < 0 || res != want) {
		if (failed++ < 5)
			printf("rpc: FAILED: %s call %d of %d words: %d, result %lu, expected %lu\n", t->name, i,
			       words, r, (unsigned long)res, (unsigned long)want);
		return -1;
	}
	return 0;
}

static void *mad_server(void *arg)
{
	(void)arg;
	while (!stop) {
		int r = mad_rpc_serve_one_on(cur_ch, 100000000ULL);
		if (r < 0 && r != -ETIMEDOUT && failed++ < 5)
			printf("rpc: FAILED: serving a Madeleine call: %d\n", r);
	}
	return NULL;
}

static const struct argspec rpc_args[] = {
	{ "calls", ARG_INT, 10, 1000000, "calls of each kind per transport (default 1000)" },
	{ "transports", ARG_STR, 0, 0,
	  "comma list of rmem, mad-tcp, mad-rmem, mad-req, mad-cell (default rmem,mad-tcp,mad-rmem)" },
	{ NULL, 0, 0, 0, NULL },
};

static int rpc_main(void)
{
	int calls = (int)arg_int("calls", 1000);
	const char *list = arg_str("transports", "rmem,mad-tcp,mad-rmem");
	static struct rpc_server server;
	struct transport tr[5];
	int nt = 0, r = 0;
	char buf[128], *save, *tok;

	if (num_nodes < 2 || fabric_wait_peers(60000000000ULL) < 0) {
		printf("rpc: needs 2 nodes that answer\n");
		return 1;
	}
	snprintf(buf, sizeof buf, "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok && nt < 5; tok = strtok_r(NULL, ",", &save)) {
		if (strcmp(tok, "rmem") && strcmp(tok, "mad-tcp") && strcmp(tok, "mad-rmem") && strcmp(tok, "mad-req") &&
		    strcmp(tok, "mad-cell")) {
			printf("rpc: unknown transport '%s' (rmem, mad-tcp, mad-rmem, mad-req, mad-cell)\n", tok);
			return 2;
		}
		memset(&tr[nt], 0, sizeof tr[nt]);
		tr[nt++].name = tok;
	}
	mad_rpc_register(SVC_SIMPLE, svc_simple);
	mad_rpc_register(SVC_SUM, svc_sum);
	mad_rpc_register(SVC_REPLY, svc_reply);
	mad_rpc_register(SVC_STOP, svc_stop);
	for (int t = 0; t < nt && r == 0; t++) {
		int rmem = strcmp(tr[t].name, "rmem") == 0;
		struct thread *srv = NULL;
		/* Set up on every node, then node 0 calls node 1. */
		if (rmem && node_id == 1) {
			r = rpc_server_init(&server, "table");
			if (r == 0)
				r = rpc_register(&server, P_SIMPLE, proc_simple);
			if (r == 0)
				r = rpc_register(&server, P_SUM, proc_sum);
			if (r == 0)
				r = rpc_serve(&server, 1);
		} else if (!rmem) {
			cur_ch = mad_open(tr[t].name + 4);
			stop = 0;
			if (!cur_ch)
				r = -ENODEV;
			else if (node_id == 1)
				srv = thread_create("rpc-mad", mad_server, NULL, PRIO_NORMAL, 0);
		}
		if (cluster_barrier(WAIT_NS) < 0)
			r = -ETIMEDOUT;
		if (r == 0 && node_id == 0 && rmem)
			r = rpc_bind(&tr[t].b, 1, "table", 0, WAIT_NS);
		if (r == 0 && node_id == 0) {
			struct samples s;
			if (samples_init(&s, (size_t)calls) < 0)
				return 1;
			for (int k = 0; k < 4 && r == 0; k++) {
				s.n = 0;
				for (int i = 0; i < calls + 10 && r == 0; i++) {
					uint64_t t0 = cycles();
					r = one_call(&tr[t], kinds[k], i);
					if (i >= 10)
						samples_add(&s, cycles() - t0);
				}
				tr[t].median[k] = samples_quantile(&s, 0.5);
			}
			samples_free(&s);
			if (rmem)
				rpc_unbind(&tr[t].b);
			else if (mad_rpc_begin_on(cur_ch, 1, SVC_STOP) == 0)
				mad_sendbuf_send();
		}
		if (srv)
			thread_join(srv);
		if (cluster_barrier(WAIT_NS) < 0)
			r = -ETIMEDOUT;
	}
	if (r < 0 || failed) {
		printf("rpc: FAILED (%d, %d failed calls)\n", r, failed);
		return 1;
	}
	if (node_id != 0)
		return 0;
	printf("rpc: call times in us, median of %d calls, node 0 calling node 1 (paper Table 4)\n", calls);
	printf("rpc: %-28s %8s %8s %8s %8s\n", "transport", "Simple", "MW-32", "MW-64", "MW-128");
	for (int t = 0; t < nt; t++) {
		char v[4][24];
		for (int k = 0; k < 4; k++)
			fmt_us(v[k], sizeof v[k], tr[t].median[k]);
		printf("rpc: %-28s %8s %8s %8s %8s\n", tr[t].name, v[0], v[1], v[2], v[3]);
		result("transport=%s calls=%d simple_us=%s mw32_us=%s mw64_us=%s mw128_us=%s failed=0", tr[t].name,
		       calls, v[0], v[1], v[2], v[3]);
	}
	printf("rpc: %-28s %8d %8d %8d %8d\n", "paper: DEC 5000/200, ATM", 93, 300, 488, 698);
	return 0;
}

APP(rpc_app, "rpc",
    "RPC table (remote-memory paper 3.1.3): Simple, MW-32/64/128 over remote memory and Madeleine",
    rpc_main, rpc_args, 2);
