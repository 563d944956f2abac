/*
 * Madeleine's RPC (paper 2.1.4): a service number travels EXPRESS in
 * the header of an ordinary message, and the receiving side runs the
 * service registered under it as the message's handler, which unpacks
 * the arguments and may answer with a message of its own.  Built on the
 * programming interface alone (mad.h).
 */
#include <errno.h>
#include <stdio.h>

#include "lib/mad.h"

static mad_service_fn services[64];

int mad_rpc_register(uint32_t service, mad_service_fn fn)
{
	if (service >= sizeof services / sizeof services[0])
		return -EINVAL;
	services[service] = fn;
	return 0;
}

int mad_rpc_begin(int dest, uint32_t service)
{
	return mad_rpc_begin_on(mad_default_channel(), dest, service);
}

int mad_rpc_begin_on(struct mad_channel *ch, int dest, uint32_t service)
{
	static __thread uint32_t svc;
	int r = mad_sendbuf_init_on(ch, dest);

	if (r < 0)
		return r;
	svc = service;
	/* The service id travels in the header, EXPRESS (paper 2.1.4). */
	return mad_sendbuf_pack_byte(MAD_SND_SAFER | MAD_RECV_EXPRESS, &svc, sizeof svc);
}

static int dispatch(int src)
{
	uint32_t svc;
	int r = mad_recvbuf_unpack_byte(MAD_SND_SAFER | MAD_RECV_EXPRESS, &svc, sizeof svc);

	if (r < 0)
		return r;
	if (svc >= sizeof services / sizeof services[0] || !services[svc]) {
		printf("mad: RPC for unknown service %u from node %d\n", svc, src);
		mad_recv_misuse("unknown service");
		return -ENOSYS;
	}
	return services[svc](src);
}

int mad_rpc_serve_one(uint64_t timeout_ns)
{
	return mad_recvbuf_receive_on(mad_default_channel(), dispatch, timeout_ns);
}

int mad_rpc_serve_one_on(struct mad_channel *ch, uint64_t timeout_ns)
{
	return mad_recvbuf_receive_on(ch, dispatch, timeout_ns);
}
