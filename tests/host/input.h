/*
 * The fuzz input as a stream of operations: each target sets in/in_left
 * to the input and takes its operations' bytes with take(), which reads
 * past the end as zeros.  One translation unit per target: the state is
 * the including file's own.
 */
#ifndef TESTS_HOST_INPUT_H
#define TESTS_HOST_INPUT_H

#include <stddef.h>
#include <stdint.h>

static const uint8_t *in;
static size_t in_left;

/* The next nbytes bytes as a little-endian number (at most 4). */
static unsigned take(unsigned nbytes)
{
	unsigned v = 0;

	for (unsigned i = 0; i < nbytes; i++) {
		v |= (unsigned)(in_left ? *in : 0) << (8 * i);
		if (in_left) {
			in++;
			in_left--;
		}
	}
	return v;
}

#endif
