/*
 * What `make bench-share` prints: the demand, an aligned table with a row
 * per way, why a way could not be measured, the targets (each shared way
 * against static partitions) and whether each is met, and as the last
 * line one JSON object: the driver and device, then a member per way
 * (null: not measured).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ctl_table.h"
#include "share.h"
#include "units.h"

/* Idle memory with sharing must be this much below static partitions'. */
#define IDLE_CUT	0.40
/*
 * "No longer" within the timing noise of one run: tenants wake on time
 * only to a few milliseconds, and a run lasts seconds.
 */
#define MAKESPAN_SLACK	0.01

static const char *const setup[WAY_COUNT] = {
	[WAY_STATIC] = "equal limits, fail",
	[WAY_WAIT] = "shared, wait",
	[WAY_SWAP] = "shared, swap",
	[WAY_PREEMPT] = "priorities, preempt",
};

static void
demand_print(const struct share_run *r)
{
	double cap = (double)r->p.capacity, peak, mean;
	double pmin = 1e9, pmax = 0, psum = 0, mmin = 1e9, mmax = 0, msum = 0;
	char size[32], total[32], reserve[32], kept[32];
	unsigned i;

	for (i = 0; i < r->p.tenants; i++) {
		peak = 100.0 * (double)trace_peak(&r->traces[i]) / cap;
		mean = 100.0 * trace_mean(&r->traces[i]) / cap;
		pmin = fmin(pmin, peak);
		pmax = fmax(pmax, peak);
		psum += peak;
		mmin = fmin(mmin, mean);
		mmax = fmax(mmax, mean);
		msum += mean;
	}
	if (r->p.real)
		printf("sharing %s of a real %s (%s; the daemons keep back "
		    "%s, %s is held outside gpufrac)\nbetween %u tenants, "
		    "seed %" PRIu64 ", bursts due over %.1f s%s\n",
		    size_format(r->p.capacity, size, sizeof(size)),
		    r->dev.name, size_format(r->dev.total, total,
		    sizeof(total)), size_format(r->dev.reserve, reserve,
		    sizeof(reserve)), size_format(r->dev.kept, kept,
		    sizeof(kept)), r->p.tenants, r->p.seed,
		    (double)r->p.duration_ms / 1000, r->p.quick ?
		    " (quick)" : "");
	else
		printf("sharing one simulated %s GPU between %u tenants, seed %"
		    PRIu64 ", bursts due over %.1f s%s\n",
		    size_format(r->p.capacity, size, sizeof(size)),
		    r->p.tenants, r->p.seed, (double)r->p.duration_ms / 1000,
		    r->p.quick ? " (quick)" : "");
	printf("demand of each tenant: peak %.0f-%.0f%% of the device "
	    "(together %.0f%%), mean %.1f-%.1f%% (together %.0f%%)\n\n",
	    pmin, pmax, psum, mmin, mmax, msum);
}

static void
cell_num(char *buf, size_t size, double v, const char *fmt)
{
	if (isnan(v))
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, fmt, v);
}

static void
cell_int(char *buf, size_t size, int64_t v)
{
	if (v < 0)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%" PRId64, v);
}

static void
table_print(const struct share_run *r)
{
	static const struct ctl_column cols[] = {
		{ "WAY", 0 }, { "SETUP", 0 }, { "IDLE", 1 }, { "FAILED", 1 },
		{ "WAITED", 1 }, { "SWAPS", 1 }, { "MOVED", 1 },
		{ "SWAP TIME", 1 }, { "PREEMPTS", 1 }, { "WORK DONE", 1 },
		{ "MAKESPAN", 1 },
	};
	char c[11][32];
	const char *cells[11];
	const struct share_result *res;
	struct ctl_table t;
	int way, i;

	ctl_table_init(&t, cols, 11);
	for (way = 0; way < WAY_COUNT; way++) {
		res = &r->results[way];
		snprintf(c[0], sizeof(c[0]), "%s", share_way_name(way));
		snprintf(c[1], sizeof(c[1]), "%s", setup[way]);
		cell_num(c[2], sizeof(c[2]), res->idle_pct, "%.1f%%");
		cell_int(c[3], sizeof(c[3]), res->oom);
		cell_num(c[4], sizeof(c[4]), res->waited_s, "%.2fs");
		cell_int(c[5], sizeof(c[5]), res->swaps);
		if (res->swap_bytes < 0)
			snprintf(c[6], sizeof(c[6]), "-");
		else
			size_format((uint64_t)res->swap_bytes, c[6],
			    sizeof(c[6]));
		cell_num(c[7], sizeof(c[7]), res->swap_ms < 0 ? NAN :
		    (double)res->swap_ms / 1000, "%.2fs");
		cell_int(c[8], sizeof(c[8]), res->preempts);
		cell_num(c[9], sizeof(c[9]), res->done_pct, "%.1f%%");
		cell_num(c[10], sizeof(c[10]), res->makespan_s, "%.2fs");
		for (i = 0; i < 11; i++)
			cells[i] = c[i];
		ctl_table_add(&t, cells, 11);
	}
	ctl_table_print(&t, stdout);
	ctl_table_free(&t);
}

static void
notes_print(const struct share_run *r)
{
	int way;

	for (way = 0; way < WAY_COUNT; way++)
		if (r->results[way].note[0] != '\0')
			printf("%s: %s\n", share_way_name(way),
			    r->results[way].note);
}

/* "-52% met": the change from static's and whether the target is met. */
static void
target_cell(char *buf, size_t size, double v, double base, int met)
{
	if (isnan(v) || isnan(base) || base == 0)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%+.1f%% %s", 100.0 * (v - base) / base,
		    met ? "met" : "not met");
}

static void
targets_print(const struct share_run *r)
{
	static const struct ctl_column cols[] = {
		{ "TARGET, AGAINST STATIC", 0 }, { "WAIT", 0 }, { "SWAP", 0 },
		{ "PREEMPT", 0 },
	};
	const struct share_result *st = &r->results[WAY_STATIC], *res;
	char c[3][4][40];
	const char *cells[4];
	struct ctl_table t;
	int way, k;

	snprintf(c[0][0], sizeof(c[0][0]), "idle memory %.0f%% lower or more",
	    100 * IDLE_CUT);
	snprintf(c[1][0], sizeof(c[1][0]), "no failed allocation");
	snprintf(c[2][0], sizeof(c[2][0]), "makespan no longer (%.0f%% noise)",
	    100 * MAKESPAN_SLACK);
	for (way = WAY_WAIT; way < WAY_COUNT; way++) {
		res = &r->results[way];
		target_cell(c[0][way], sizeof(c[0][way]), res->idle_pct,
		    st->idle_pct, res->idle_pct <= (1 - IDLE_CUT) *
		    st->idle_pct);
		if (res->oom < 0)
			snprintf(c[1][way], sizeof(c[1][way]), "-");
		else
			snprintf(c[1][way], sizeof(c[1][way]), "%" PRId64
			    " %s", res->oom, res->oom == 0 ? "met" : "not met");
		target_cell(c[2][way], sizeof(c[2][way]), res->makespan_s,
		    st->makespan_s, res->makespan_s <= (1 + MAKESPAN_SLACK) *
		    st->makespan_s);
	}
	ctl_table_init(&t, cols, 4);
	for (k = 0; k < 3; k++) {
		for (way = 0; way < WAY_COUNT; way++)
			cells[way] = c[k][way];
		ctl_table_add(&t, cells, 4);
	}
	printf("\n");
	ctl_table_print(&t, stdout);
	ctl_table_free(&t);
}

static void
json_num(const char *key, double v, const char *fmt, int comma)
{
	printf("\"%s\":", key);
	if (isnan(v))
		printf("null");
	else
		printf(fmt, v);
	if (comma)
		printf(",");
}

static void
json_int(const char *key, int64_t v, int comma)
{
	printf("\"%s\":", key);
	if (v < 0)
		printf("null");
	else
		printf("%" PRId64, v);
	if (comma)
		printf(",");
}

/* s as a JSON string; null when empty. */
static void
json_str(const char *key, const char *s)
{
	printf("\"%s\":", key);
	if (*s == '\0') {
		printf("null,");
		return;
	}
	putchar('"');
	for (; *s != '\0'; s++)
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", (unsigned)(unsigned char)*s);
		else
			putchar(*s);
	printf("\",");
}

/* The driver and the device shared: what the daemons said of it. */
static void
json_device(const struct share_run *r)
{
	const struct share_device *d = &r->dev;

	printf("\"driver\":\"%s\",", r->p.real ? "real" : "simulated");
	json_str("gpu", d->name);
	json_int("device_bytes", d->capacity ? (int64_t)d->capacity : -1, 1);
	/* The simulated device is shared whole: its total is the capacity. */
	json_int("gpu_total_bytes", r->p.real ? (int64_t)d->total :
	    d->capacity ? (int64_t)d->capacity : -1, 1);
	json_int("reserve_bytes", (int64_t)d->reserve, 1);
	json_int("kept_bytes", (int64_t)d->kept, 1);
}

static void
json_print(const struct share_run *r)
{
	const struct share_result *res;
	int way;

	printf("{");
	json_device(r);
	for (way = 0; way < WAY_COUNT; way++) {
		res = &r->results[way];
		printf("%s\"%s\":{", way ? "," : "", share_way_name(way));
		json_num("idle_pct", res->idle_pct, "%.1f", 1);
		json_int("oom", res->oom, 1);
		json_num("makespan_s", res->makespan_s, "%.3f", 1);
		json_num("waited_s", res->waited_s, "%.3f", 1);
		json_int("swaps", res->swaps, 1);
		json_int("swap_bytes", res->swap_bytes, 1);
		json_int("swap_ms", res->swap_ms, 1);
		json_int("preempts", res->preempts, 1);
		json_int("kills", res->kills, 1);
		json_num("done_pct", res->done_pct, "%.1f", 0);
		printf("}");
	}
	printf("}\n");
}

void
report_print(const struct share_run *r, double runtime_s)
{
	printf("\n");
	demand_print(r);
	table_print(r);
	notes_print(r);
	targets_print(r);
	printf("\nIDLE: the mean share of the device that no allocation "
	    "holds (the daemon's status, every 50 ms).\n"
	    "FAILED: allocations refused. WAITED: the tenants' time inside "
	    "driver calls, waiting for memory or to be swapped back in.\n"
	    "SWAPS: swap-outs; MOVED: bytes out and in, in SWAP TIME (the "
	    "daemon's events%s). WORK DONE: of the bursts' bytes x time.\n"
	    "Ran in %.1f s.\n", r->p.real ? "" : "; the simulated driver's\n"
	    "checkpoint copies nothing, so its swaps take no time",
	    runtime_s);
	fflush(stdout);
	json_print(r);
	fflush(stdout);
}
