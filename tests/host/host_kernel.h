/* The kernel below the packet pool for host tests (host_kernel.c). */
#ifndef TESTS_HOST_HOST_KERNEL_H
#define TESTS_HOST_HOST_KERNEL_H

/* The pool of n buffers, made at the first call: 0 if every buffer is back, else -1. */
int host_pool_whole(int n);

#endif
