/*
 * The counters the decision log feeds: one row of counts per group, the
 * wait histogram, and the table of waits being timed.
 */
#include <stdlib.h>
#include <string.h>

#include "metrics_counts.h"
#include "proto.h"

/* 1 ms to 5 min: a wake-up within a free's round trip, to wait_timeout. */
const uint64_t metrics_wait_bounds_ms[METRICS_WAIT_BUCKETS] = {
	1, 5, 10, 50, 100, 500, 1000, 5000, 10000, 30000, 60000, 300000,
};

void
metrics_counts_init(struct metrics_counts *mc, metrics_alive_fn *alive,
    void *arg)
{
	memset(mc, 0, sizeof(*mc));
	mc->alive = alive;
	mc->alive_arg = arg;
}

void
metrics_counts_free(struct metrics_counts *mc)
{
	free(mc->groups);
	free(mc->waits);
	memset(mc, 0, sizeof(*mc));
}

static struct metrics_group_counts *
group_find(const struct metrics_counts *mc, const char *name)
{
	size_t i;

	for (i = 0; i < mc->ngroups; i++)
		if (strcmp(mc->groups[i].name, name) == 0)
			return &mc->groups[i];
	return NULL;
}

/* group_find, first trying the row of the last event (runs are usual). */
static struct metrics_group_counts *
group_find_hint(struct metrics_counts *mc, const char *name)
{
	struct metrics_group_counts *g;

	if (mc->hint < mc->ngroups &&
	    strcmp(mc->groups[mc->hint].name, name) == 0)
		return &mc->groups[mc->hint];
	if ((g = group_find(mc, name)) != NULL)
		mc->hint = (size_t)(g - mc->groups);
	return g;
}

const struct metrics_group_counts *
metrics_counts_group(const struct metrics_counts *mc, const char *name)
{
	return group_find(mc, name);
}

/* Drop the rows of groups that are gone (never the overflow row). */
static void
groups_prune(struct metrics_counts *mc)
{
	size_t i, n = 0;

	if (mc->alive == NULL)
		return;
	for (i = 0; i < mc->ngroups; i++)
		if (strcmp(mc->groups[i].name, METRICS_GROUP_OTHER) == 0 ||
		    mc->alive(mc->groups[i].name, mc->alive_arg))
			mc->groups[n++] = mc->groups[i];
	mc->ngroups = n;
}

/* A new row called name at the end: NULL when there is no room. */
static struct metrics_group_counts *
group_append(struct metrics_counts *mc, const char *name)
{
	struct metrics_group_counts *g;
	size_t cap;

	if (mc->ngroups == mc->groupcap) {
		cap = mc->groupcap ? 2 * mc->groupcap : 8;
		if ((g = realloc(mc->groups, cap * sizeof(*g))) == NULL)
			return NULL;
		mc->groups = g;
		mc->groupcap = cap;
	}
	g = &mc->groups[mc->ngroups++];
	memset(g, 0, sizeof(*g));
	proto_strlcpy(g->name, name, sizeof(g->name));
	return g;
}

/* The row for name, made if need be (see the contract). */
static struct metrics_group_counts *
group_row(struct metrics_counts *mc, const char *name)
{
	struct metrics_group_counts *g;

	if ((g = group_find_hint(mc, name)) != NULL)
		return g;
	/* Full: look for rows of groups gone, not at every event though. */
	if (mc->ngroups >= METRICS_GROUPS_MAX - 1 &&
	    mc->full_misses++ % METRICS_PRUNE_EVERY == 0)
		groups_prune(mc);
	/* The last row is kept for the overflow. */
	if (mc->ngroups < METRICS_GROUPS_MAX - 1 &&
	    (g = group_append(mc, name)) != NULL)
		return g;
	if ((g = group_find(mc, METRICS_GROUP_OTHER)) != NULL)
		return g;
	return group_append(mc, METRICS_GROUP_OTHER);
}

static void
wait_begin(struct metrics_counts *mc, const struct gf_event *e,
    uint64_t now_ms)
{
	struct metrics_wait *w;
	size_t cap;

	if (mc->nwaits == METRICS_WAITS_MAX) {
		memmove(mc->waits, mc->waits + 1,
		    (mc->nwaits - 1) * sizeof(*mc->waits));
		mc->nwaits--;
	}
	if (mc->nwaits == mc->waitcap) {
		cap = mc->waitcap ? 2 * mc->waitcap : 16;
		if ((w = realloc(mc->waits, cap * sizeof(*w))) == NULL)
			return;
		mc->waits = w;
		mc->waitcap = cap;
	}
	w = &mc->waits[mc->nwaits++];
	w->pid = e->pid;
	memcpy(w->uuid, e->uuid, sizeof(w->uuid));
	w->bytes = e->bytes;
	w->start_ms = now_ms;
}

static void
wait_observe(struct metrics_group_counts *g, uint64_t ms)
{
	size_t i;

	for (i = 0; i < METRICS_WAIT_BUCKETS; i++)
		if (ms <= metrics_wait_bounds_ms[i])
			g->wait_le[i]++;
	g->wait_count++;
	g->wait_sum_ms += ms;
}

/* A wake-up or timeout: the wait it ends, timed, if it was followed. */
static void
wait_end(struct metrics_counts *mc, struct metrics_group_counts *g,
    const struct gf_event *e, uint64_t now_ms)
{
	struct metrics_wait *w;
	size_t i;

	for (i = 0; i < mc->nwaits; i++) {
		w = &mc->waits[i];
		if (w->pid != e->pid || w->bytes != e->bytes ||
		    memcmp(w->uuid, e->uuid, sizeof(w->uuid)) != 0)
			continue;
		if (g != NULL)
			wait_observe(g, now_ms > w->start_ms ?
			    now_ms - w->start_ms : 0);
		memmove(w, w + 1, (mc->nwaits - i - 1) * sizeof(*w));
		mc->nwaits--;
		return;
	}
}

void
metrics_counts_event(struct metrics_counts *mc, const struct gf_event *e,
    uint64_t now_ms)
{
	struct metrics_group_counts *g;

	mc->events++;
	/* Of no group: the daemon's own counters count them (control.c);
	 * a driver-limit event names its group in its reason only. */
	if (e->kind == GF_EV_CONN_LIMIT || e->kind == GF_EV_DRIVER_LIMIT)
		return;
	g = group_row(mc, e->group);
	if (g != NULL && e->kind < METRICS_EV_KINDS) {
		g->events[e->kind]++;
		g->bytes[e->kind] += e->bytes;
		g->duration_ms[e->kind] += e->duration_ms;
	}
	if (e->kind == GF_EV_WAIT)
		wait_begin(mc, e, now_ms);
	else if (e->kind == GF_EV_WAKE || e->kind == GF_EV_TIMEOUT)
		wait_end(mc, g, e, now_ms);
}
