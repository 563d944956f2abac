/*
 * Remote memory's message header for the host tests that build requests
 * and answers by hand (test_rmem.c, test_rmem_serve.c, and seed_rmem.c's
 * fuzz inputs): every field of
 * struct rmem_msg set from the arguments, the rest zero.
 */
#ifndef TESTS_HOST_RMEM_FIXTURE_H
#define TESTS_HOST_RMEM_FIXTURE_H

#include <stdint.h>

#include "net/rmem/proto.h"

static inline struct rmem_msg rmem_msg_of(uint8_t op, uint8_t flags, uint16_t seg, uint32_t gen,
					  uint32_t off, uint32_t count, uint32_t tag, int32_t status)
{
	return (struct rmem_msg){ .op = op, .flags = flags, .seg = seg, .gen = gen,
				  .off = off, .count = count, .tag = tag, .status = status };
}

#endif
