/*
 * The bus: how long moving bytes between host and device takes, for the
 * checkpoint API (SIMCUDA_CKPT_GBPS; its restores SIMCUDA_CKPT_IN_GBPS
 * where set: an H200's took 2 GB/s out, 5.5 in) and for copies between
 * pinned host memory and the device (SIMCUDA_COPY_GBPS), and how long
 * pinning host memory takes (SIMCUDA_PIN_GBPS), so that the two ways of
 * swapping a process out can be compared (make bench-swap, issue 21); and
 * the one copy across it that fails (SIMCUDA_FAIL_BUS_COPY), so that a
 * move that fails half way can be tested.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "log.h"
#include "sim.h"
#include "units.h"

uint64_t bus_ckpt_rate;		/* bytes/s; 0: no time at all */
uint64_t bus_ckpt_in_rate;
uint64_t bus_copy_rate;
uint64_t bus_pin_rate;
uint64_t bus_fail_nth;		/* the copy across the bus that fails, or 0 */
static uint64_t bus_copies;	/* copies across the bus so far */

/* A count up to this is taken; a larger one is as good as never. */
#define BUS_FAIL_MAX	1000000000ull

/*
 * A rate in GB/s, a decimal ("2.3"), read as a size in G (10^9 bytes),
 * which is exact and knows no locale. 0 when unset or bad (said).
 */
static uint64_t
rate_parse(const char *name)
{
	const char *s = getenv(name);
	uint64_t rate;
	char buf[64];

	if (s == NULL)
		return 0;
	if ((size_t)snprintf(buf, sizeof(buf), "%sG", s) >= sizeof(buf) ||
	    size_parse(buf, &rate) < 0 || rate == 0) {
		log_warnx("bad %s '%s': unlimited", name, s);
		return 0;
	}
	return rate;
}

/* SIMCUDA_FAIL_BUS_COPY, a count: a bad value is 0 (none fails), said. */
static void
bus_fail_parse(void)
{
	const char *s = getenv("SIMCUDA_FAIL_BUS_COPY");

	bus_fail_nth = 0;
	__atomic_store_n(&bus_copies, 0, __ATOMIC_RELAXED);
	if (s != NULL && decimal_parse(s, BUS_FAIL_MAX, &bus_fail_nth) < 0) {
		log_warnx("bad SIMCUDA_FAIL_BUS_COPY '%s': none fails", s);
		bus_fail_nth = 0;
	}
}

void
bus_rate_parse(void)
{
	bus_ckpt_rate = rate_parse("SIMCUDA_CKPT_GBPS");
	bus_ckpt_in_rate = getenv("SIMCUDA_CKPT_IN_GBPS") != NULL ?
	    rate_parse("SIMCUDA_CKPT_IN_GBPS") : bus_ckpt_rate;
	bus_copy_rate = rate_parse("SIMCUDA_COPY_GBPS");
	bus_pin_rate = rate_parse("SIMCUDA_PIN_GBPS");
	bus_fail_parse();
}

/*
 * Whether this copy across the bus is the one that fails: the Nth of the
 * process, counted from cuInit, in either direction.
 */
int
bus_copy_fails(void)
{
	return bus_fail_nth != 0 &&
	    __atomic_add_fetch(&bus_copies, 1, __ATOMIC_RELAXED) == bus_fail_nth;
}

void
bus_start(struct timespec *start)
{
	clock_gettime(CLOCK_MONOTONIC, start);
}

/*
 * Return no sooner than bytes/rate after start: the real driver's calls
 * return when the bytes have moved, the caller blocked meanwhile. The
 * simulator's own work (a memmove) done since start is part of that time,
 * not added to it: the bus would have moved the bytes meanwhile.
 */
void
bus_move(const struct timespec *start, uint64_t bytes, uint64_t rate)
{
	unsigned __int128 ns;
	struct timespec end;

	if (rate == 0 || bytes == 0)
		return;
	ns = (unsigned __int128)bytes * 1000000000u / rate;
	end = *start;
	end.tv_sec += (time_t)(ns / 1000000000u);
	end.tv_nsec += (long)(ns % 1000000000u);
	if (end.tv_nsec >= 1000000000) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &end, NULL) ==
	    EINTR)
		;
}
