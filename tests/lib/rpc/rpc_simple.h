/*
 * The Simple call's procedure (the paper's Table 4), as the RPC test app
 * and the bench rows register it: four 32-bit integer arguments, one
 * integer result.
 */
#ifndef TESTS_LIB_RPC_RPC_SIMPLE_H
#define TESTS_LIB_RPC_RPC_SIMPLE_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * The four arguments' sum, each weighted by its place (1 to 4) when
 * weighted is set, so that an argument in the wrong place changes it;
 * -EINVAL for arguments of any other length.
 */
static inline int rpc_simple(const void *args, size_t len, uint64_t *result, bool weighted)
{
	int32_t a[4];

	if (len != sizeof a)
		return -EINVAL;
	memcpy(a, args, sizeof a);
	*result = weighted ? (uint64_t)((int64_t)a[0] + 2 * (int64_t)a[1] + 3 * (int64_t)a[2] + 4 * (int64_t)a[3])
			   : (uint64_t)((int64_t)a[0] + a[1] + a[2] + a[3]);
	return 0;
}

/* Simple as the bench rows register it: the plain sum. */
static inline int rpc_simple_sum(const void *args, size_t len, uint64_t *result)
{
	return rpc_simple(args, len, result, false);
}

/* Simple as the test app registers it: the weighted sum. */
static inline int rpc_simple_weighted(const void *args, size_t len, uint64_t *result)
{
	return rpc_simple(args, len, result, true);
}

#endif
