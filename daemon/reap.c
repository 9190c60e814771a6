/*
 * Reaping transient run-time groups whose cgroups are gone: a timer while
 * any exists, a look at each, and removal through arbiter_group_rm.
 */
#include <stdlib.h>
#include <string.h>

#include "arbiter.h"
#include "cgroup.h"
#include "event.h"
#include "log.h"
#include "match.h"
#include "proto.h"
#include "reap.h"
#include "rtgroups.h"

/* The literal path of g's first cgroup rule, into buf: 0, or -1. */
static int
group_path(const struct config_group *g, char *buf, size_t size)
{
	size_t i;

	for (i = 0; i < g->nrules; i++)
		if (match_rule_path(&g->rules[i], buf, size) == 0)
			return 0;
	return -1;
}

void
reap_identify(struct config_group *g, int again)
{
	char path[4096];

	if (again)
		g->cgroup_ino = 0;
	if (g->transient && g->cgroup_ino == 0 &&
	    group_path(g, path, sizeof(path)) == 0)
		g->cgroup_ino = cgroup_identity(path);
}

/* 1 when g's cgroup is known and another is at its path now, else 0. */
static int
cgroup_replaced(const struct config_group *g)
{
	char path[4096];
	uint64_t now;

	if (!g->transient || g->cgroup_ino == 0 ||
	    group_path(g, path, sizeof(path)) < 0)
		return 0;
	now = cgroup_identity(path);
	return now != 0 && now != g->cgroup_ino;
}

void
reap_replaced_drop(struct config *rt, const struct config_group *g)
{
	char path[4096], other[4096];
	size_t i = 0;

	if (!g->transient || g->cgroup_ino == 0 ||
	    group_path(g, path, sizeof(path)) < 0)
		return;
	while (i < rt->ngroups) {
		struct config_group *h = &rt->groups[i];

		if (h != g && h->transient && group_path(h, other,
		    sizeof(other)) == 0 && strcmp(path, other) == 0) {
			reap_identify(h, 0);
			if (h->cgroup_ino != g->cgroup_ino) {
				log_info("run-time group '%s' removed: its "
				    "cgroup '%s' is gone, and a new one there "
				    "is group '%s''s", h->pol.name, path,
				    g->pol.name);
				if (h < g)
					g--;	/* moved down with the rest */
				rtgroups_drop(rt, i);
				continue;
			}
		}
		i++;
	}
}

/* 1 when g names cgroups and none of them exists now, else 0. */
static int
cgroups_gone(const struct config_group *g)
{
	char path[4096];
	int named = 0;
	size_t i;

	for (i = 0; i < g->nrules; i++) {
		if (match_rule_path(&g->rules[i], path, sizeof(path)) < 0)
			continue;
		if (cgroup_exists(path) != 0)
			return 0;	/* there, or cannot be told */
		named = 1;
	}
	return named;
}

/* The processes of run-time group g now (0 if it is shadowed). */
static uint32_t
members(const struct arbiter *a, const struct config_group *g)
{
	size_t i;

	for (i = 0; i < a->groups.n; i++)
		if (a->groups.sections[i] == g)
			return a->ledger.groups[i + 1].nmembers;
	return 0;
}

/* Note which groups are gone; the name of one gone long enough, or NULL. */
static const char *
reap_pick(struct arbiter *a, uint64_t now)
{
	size_t i;

	for (i = 0; i < a->rt.ngroups; i++) {
		struct config_group *g = &a->rt.groups[i];

		if (!g->transient)
			continue;
		reap_identify(g, 0);
		if (cgroup_replaced(g))
			return g->pol.name;	/* the processes are not its */
		if (!cgroups_gone(g) || members(a, g) > 0) {
			g->gone_since_ms = 0;
			continue;
		}
		if (g->gone_since_ms == 0)
			g->gone_since_ms = now;
		else if (now - g->gone_since_ms >= REAP_GRACE_MS)
			return g->pol.name;
	}
	return NULL;
}

static void
reap_fire(struct event_loop *loop, void *arg)
{
	struct arbiter *a = arg;
	char name[GF_GROUP_LEN], err[GF_ERRMSG_LEN];
	const char *pick;

	(void)loop;
	a->reap_timer = 0;
	while ((pick = reap_pick(a, event_now_ms())) != NULL) {
		/* The removal replaces a->rt: keep the name. */
		proto_strlcpy(name, pick, sizeof(name));
		if (arbiter_group_rm(a, NULL, name, err, sizeof(err)) < 0) {
			log_warnx("cannot remove run-time group '%s', whose "
			    "cgroup is gone: %s", name, err);
			break;
		}
		log_info("run-time group '%s' removed: its cgroup is gone",
		    name);
	}
	reap_arm(a);
}

void
reap_arm(struct arbiter *a)
{
	size_t i;

	if (a->reap_timer > 0 || a->stopping || a->loop == NULL)
		return;
	for (i = 0; i < a->rt.ngroups; i++)
		if (a->rt.groups[i].transient)
			break;
	if (i == a->rt.ngroups)
		return;
	a->reap_timer = event_timer_add(a->loop, REAP_EVERY_MS, reap_fire, a);
	if (a->reap_timer < 0) {
		log_warnx("cannot arm the timer that removes transient groups");
		a->reap_timer = 0;
	}
}

void
reap_free(struct arbiter *a)
{
	if (a->reap_timer > 0)
		event_timer_cancel(a->loop, a->reap_timer);
	a->reap_timer = 0;
}
