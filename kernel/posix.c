/*
 * The few POSIX calls a C program written for Linux expects beside
 * picolibc (time, sleep, process and host names, sysconf), on the
 * kernel's clock and threads, so that such a program builds and runs
 * here unmodified (boot/mpicc).  There is one process per node: its id
 * is the node's id plus one, its host name "node<id>".
 *
 * Files (open, read, write and the rest) are in files.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <string.h>
#include <sys/time.h>
#include <sys/times.h>
#include <time.h>
#include <unistd.h>

#include "kernel/cmos.h"
#include "kernel/node.h"
#include "kernel/thread.h"
#include "kernel/tsc.h"

/* The RTC read once, at the first question: seconds since 1970 at now_ns() == base_ns. */
static int64_t rtc_base_s = -1;
static uint64_t rtc_base_ns;

static void wall_clock(struct timespec *ts)
{
	if (rtc_base_s < 0) {
		int64_t s = cmos_rtc_seconds();
		rtc_base_ns = now_ns();
		rtc_base_s = s < 0 ? 0 : s;	/* no clock: time starts at the epoch */
	}
	uint64_t ns = now_ns() - rtc_base_ns;
	ts->tv_sec = (time_t)(rtc_base_s + (int64_t)(ns / 1000000000));
	ts->tv_nsec = (long)(ns % 1000000000);
}

int clock_gettime(clockid_t id, struct timespec *tp)
{
	if (!tp) {
		errno = EFAULT;
		return -1;
	}
	switch (id) {
	case CLOCK_REALTIME:
	case CLOCK_REALTIME_COARSE:
		wall_clock(tp);
		return 0;
	case CLOCK_MONOTONIC:
	case CLOCK_MONOTONIC_RAW:
	case CLOCK_MONOTONIC_COARSE:
	case CLOCK_BOOTTIME:
	case CLOCK_PROCESS_CPUTIME_ID:
	case CLOCK_THREAD_CPUTIME_ID: {
		/* One process on one CPU: its CPU time is the time since boot, near enough. */
		uint64_t ns = now_ns();
		tp->tv_sec = (time_t)(ns / 1000000000);
		tp->tv_nsec = (long)(ns % 1000000000);
		return 0;
	}
	default:
		errno = EINVAL;
		return -1;
	}
}

int clock_getres(clockid_t id, struct timespec *res)
{
	struct timespec t;

	if (clock_gettime(id, &t) < 0)
		return -1;
	if (res) {
		res->tv_sec = 0;
		res->tv_nsec = 1;	/* the TSC counts nanoseconds or finer */
	}
	return 0;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
	struct timespec ts;

	(void)tz;
	if (tv) {
		wall_clock(&ts);
		tv->tv_sec = ts.tv_sec;
		tv->tv_usec = ts.tv_nsec / 1000;
	}
	return 0;
}

clock_t times(struct tms *buf)
{
	clock_t t = (clock_t)(now_ns() / (1000000000 / CLOCKS_PER_SEC));

	if (buf) {
		buf->tms_utime = t;
		buf->tms_stime = 0;
		buf->tms_cutime = 0;
		buf->tms_cstime = 0;
	}
	return t;
}

int nanosleep(const struct timespec *rqtp, struct timespec *rmtp)
{
	if (!rqtp || rqtp->tv_nsec < 0 || rqtp->tv_nsec >= 1000000000 || rqtp->tv_sec < 0) {
		errno = EINVAL;
		return -1;
	}
	thread_sleep_ns((uint64_t)rqtp->tv_sec * 1000000000 + (uint64_t)rqtp->tv_nsec);
	if (rmtp)
		rmtp->tv_sec = 0, rmtp->tv_nsec = 0;
	return 0;
}

int usleep(useconds_t us)
{
	thread_sleep_ns((uint64_t)us * 1000);
	return 0;
}

unsigned sleep(unsigned s)
{
	thread_sleep_ns((uint64_t)s * 1000000000);
	return 0;
}

pid_t getpid(void)
{
	return (pid_t)(node_id + 1);
}

int gethostname(char *name, size_t len)
{
	if (!name || snprintf(name, len, "node%d", node_id) >= (int)len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

long sysconf(int name)
{
	switch (name) {
	case _SC_CLK_TCK:
		return CLOCKS_PER_SEC;
	case _SC_PAGESIZE:
		return 4096;
	case _SC_NPROCESSORS_CONF:
	case _SC_NPROCESSORS_ONLN:
		return 1;
	default:
		errno = EINVAL;
		return -1;
	}
}

int isatty(int fd)
{
	(void)fd;
	return 0;
}
