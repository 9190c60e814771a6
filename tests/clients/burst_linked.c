/*
 * A program that holds memory in bursts, for the looks' tests and bench
 * (issue 38, D): on device 0 it keeps a 2 MiB probe, then COUNT times
 * allocates SIZE, holds it HOLD_MS and frees it, one burst every
 * PERIOD_MS, each centred between two instants PERIOD_MS apart counted
 * from its start:
 *   burst_linked SIZE HOLD_MS PERIOD_MS COUNT [SYNC_FILE]
 * With SYNC_FILE it counts them instead from the moment that file
 * appears, which the caller creates when `gpufracctl ps` first lists the
 * probe: the daemon's look that saw it. That moment comes a little after
 * the look, so each burst then starts SYNC_LEAD_MS after its instant: a
 * timed attacker keeps its bursts between looks that come every
 * PERIOD_MS. It prints "probe" once
 * the probe is held, "start MS" at the first instant (MS since the epoch,
 * as the daemon's events say their time), "burst K MS" as burst K (from
 * 1) is taken, MS after the first instant ("burst K err=CODE" if
 * refused), and "unseen COUNT" at the end. Run with or without the shim. Exit status 0; 1 when an
 * allocation failed; 2 on a usage or set-up error.
 */
#include <cuda.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "units.h"

#define PROBE_BYTES	(2ull << 20)
#define SYNC_WAIT_MS	30000
#define SYNC_LEAD_MS	50

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static uint64_t
epoch_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void
sleep_until(uint64_t at_ms)
{
	struct timespec ts;

	ts.tv_sec = (time_t)(at_ms / 1000);
	ts.tv_nsec = (long)(at_ms % 1000) * 1000000;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	    EINTR)
		;
}

/* The moment path appears, polled every millisecond; 0 if it never does. */
static uint64_t
sync_wait(const char *path)
{
	uint64_t until = now_ms() + SYNC_WAIT_MS;

	while (access(path, F_OK) != 0) {
		if (now_ms() >= until)
			return 0;
		usleep(1000);
	}
	return now_ms();
}

/* A bad argument: what it is, its value (NULL: a wrong count). */
static int
usage(const char *what, const char *value)
{
	if (value != NULL)
		fprintf(stderr, "burst_linked: bad %s '%s'\n", what, value);
	fprintf(stderr, "usage: burst_linked SIZE HOLD_MS PERIOD_MS COUNT "
	    "[SYNC_FILE]\n");
	return 2;
}

int
main(int argc, char **argv)
{
	uint64_t size, hold, period, count, t0, lead, k;
	CUdeviceptr probe, p;
	CUcontext ctx;
	CUresult r;

	if (argc < 5 || argc > 6)
		return usage(NULL, NULL);
	if (size_parse(argv[1], &size) < 0)
		return usage("SIZE", argv[1]);
	if (decimal_parse(argv[2], UINT32_MAX, &hold) < 0)
		return usage("HOLD_MS", argv[2]);
	if (decimal_parse(argv[3], UINT32_MAX, &period) < 0 || hold > period)
		return usage("PERIOD_MS (HOLD_MS at most)", argv[3]);
	if (decimal_parse(argv[4], UINT32_MAX, &count) < 0)
		return usage("COUNT", argv[4]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (cuInit(0) != CUDA_SUCCESS ||
	    cuDevicePrimaryCtxRetain(&ctx, 0) != CUDA_SUCCESS ||
	    cuCtxSetCurrent(ctx) != CUDA_SUCCESS ||
	    cuMemAlloc(&probe, PROBE_BYTES) != CUDA_SUCCESS) {
		fprintf(stderr, "burst_linked: no device 0 to hold a probe\n");
		return 2;
	}
	printf("probe\n");
	t0 = now_ms();
	lead = (period - hold) / 2;
	if (argc == 6 && (lead = SYNC_LEAD_MS) > period - hold)
		return usage("HOLD_MS (no room left to time)", argv[2]);
	if (argc == 6 && (t0 = sync_wait(argv[5])) == 0) {
		fprintf(stderr, "burst_linked: '%s' never appeared\n",
		    argv[5]);
		return 2;
	}
	printf("start %llu\n", (unsigned long long)(epoch_ms() - (now_ms() -
	    t0)));
	for (k = 0; k < count; k++) {
		sleep_until(t0 + k * period + lead);
		if ((r = cuMemAlloc(&p, size)) != CUDA_SUCCESS) {
			printf("burst %llu err=%d\n", (unsigned long long)k + 1,
			    (int)r);
			return 1;
		}
		printf("burst %llu %llu\n", (unsigned long long)k + 1,
		    (unsigned long long)(now_ms() - t0));
		sleep_until(now_ms() + hold);
		cuMemFree(p);
	}
	printf("unseen %llu\n", (unsigned long long)count);
	return 0;
}
