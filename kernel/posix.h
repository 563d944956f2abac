/*
 * What kernel/posix.c provides, announced the way POSIX systems announce
 * it, for picolibc's headers (which declare CLOCK_MONOTONIC and the CPU
 * clocks only where these say the system has them).  boot/mpicc includes
 * this before anything else in a program; so does the Makefile for
 * kernel/posix.c.
 */
#ifndef KERNEL_POSIX_H
#define KERNEL_POSIX_H

/* time.h names pid_t where _POSIX_CPUTIME is set, without declaring it. */
#include <sys/types.h>

#define _POSIX_TIMERS 200809L
#define _POSIX_MONOTONIC_CLOCK 200809L
#define _POSIX_CPUTIME 200809L
#define _POSIX_THREAD_CPUTIME 200809L

#endif
