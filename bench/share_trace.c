/*
 * The sharing benchmark's demand: one trace per tenant, made from the seed
 * alone (splitmix64), so that every way runs exactly the same demand; and
 * the lines that hand a trace to its tenant process.
 *
 * A tenant holds a base of 3-6 % of the device from start to end and,
 * every 0.35-1.3 s, a burst on top of it for 0.2-0.6 s: usually small
 * (base and burst 6-14 %), sometimes (3 in 10) a peak of 28-40 %, and at
 * least one peak of 36-40 %. Together the tenants ask for more than the
 * device at their peaks, and for about 12 % each on average.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "share.h"

#define MIB		(1ull << 20)

struct rng {
	uint64_t	 s;
};

static uint64_t
rng_next(struct rng *g)
{
	uint64_t z = (g->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [lo, hi]. */
static uint64_t
rng_range(struct rng *g, uint64_t lo, uint64_t hi)
{
	return lo + rng_next(g) % (hi - lo + 1);
}

/* per-mille of the capacity, whole MiB. */
static uint64_t
share_of(const struct share_params *p, uint64_t permille)
{
	return p->capacity / 1000 * permille / MIB * MIB;
}

static void
trace_one(const struct share_params *p, unsigned index, struct share_trace *t)
{
	struct rng g = { p->seed * 0x100000001b3ull + index + 1 };
	struct share_burst *b;
	uint64_t at, total;
	size_t peak;

	memset(t, 0, sizeof(*t));
	t->base = share_of(p, rng_range(&g, 30, 60));
	at = rng_range(&g, 0, 300);		/* tenants start apart */
	do {
		b = &t->bursts[t->nbursts++];
		b->start_ms = at;
		b->hold_ms = rng_range(&g, 200, 600);
		total = rng_range(&g, 1, 10) <= 3 ?
		    share_of(p, rng_range(&g, 280, 400)) :
		    share_of(p, rng_range(&g, 60, 140));
		b->bytes = total > t->base ? total - t->base : MIB;
		at += b->hold_ms + rng_range(&g, 150, 700);
	} while (at < p->duration_ms && t->nbursts < SHARE_BURSTS_MAX);
	/* Each tenant's peak is near 40 %: the bursts a static share fails. */
	peak = (size_t)rng_range(&g, 0, t->nbursts - 1);
	t->bursts[peak].bytes = share_of(p, rng_range(&g, 360, 400)) - t->base;
	b = &t->bursts[t->nbursts - 1];
	t->end_ms = b->start_ms + b->hold_ms;
}

void
trace_make(const struct share_params *p, struct share_trace *t)
{
	unsigned i;

	for (i = 0; i < p->tenants; i++)
		trace_one(p, i, &t[i]);
}

uint64_t
trace_peak(const struct share_trace *t)
{
	uint64_t peak = 0;
	size_t i;

	for (i = 0; i < t->nbursts; i++)
		if (t->bursts[i].bytes > peak)
			peak = t->bursts[i].bytes;
	return t->base + peak;
}

double
trace_work(const struct share_trace *t)
{
	double w = 0;
	size_t i;

	for (i = 0; i < t->nbursts; i++)
		w += (double)t->bursts[i].bytes * (double)t->bursts[i].hold_ms;
	return w;
}

double
trace_mean(const struct share_trace *t)
{
	if (t->end_ms == 0)
		return 0;
	return (double)t->base + trace_work(t) / (double)t->end_ms;
}

/*
 * "base BYTES", one "burst START_MS HOLD_MS BYTES" per burst, "end": what
 * share_tenant reads before it says it is ready.
 */
int
trace_send(int fd, const struct share_trace *t)
{
	char line[96];
	size_t i;
	int n;

	n = snprintf(line, sizeof(line), "base %" PRIu64 "\n", t->base);
	if (write(fd, line, (size_t)n) != n)
		return -1;
	for (i = 0; i < t->nbursts; i++) {
		n = snprintf(line, sizeof(line), "burst %" PRIu64 " %" PRIu64
		    " %" PRIu64 "\n", t->bursts[i].start_ms,
		    t->bursts[i].hold_ms, t->bursts[i].bytes);
		if (write(fd, line, (size_t)n) != n)
			return -1;
	}
	if (write(fd, "end\n", 4) != 4)
		return -1;
	return 0;
}
