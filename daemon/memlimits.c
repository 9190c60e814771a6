/*
 * The driver's walls (issue 31 C): where the driver has memory limits per
 * cgroup (r615), each group that names a cgroup gets, on each device, the
 * driver's hard limit = its limit and soft limit = its guarantee, on that
 * cgroup's directory, so that every process in it is held there, shim or
 * not. Which group gets which wall is decided here, after each start,
 * reload and run-time group change; nvml_limits.c sets them.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arbiter.h"
#include "cgroup.h"
#include "decision.h"
#include "log.h"
#include "match.h"
#include "memlimits.h"
#include "nvml_limits.h"
#include "proto.h"
#include "statefile.h"
#include "units.h"
#include "walls_journal.h"

/* One wall, wanted or in force. */
struct memlimit_wall {
	size_t		dev;
	char		*dir;		/* the cgroup's directory, full path */
	char		group[GF_GROUP_LEN];
	uint64_t	soft, hard;
	int		set;		/* in force, or may be: journalled */
	int		lost;		/* the driver lost it, and it could not
					 * be set again: said once */
};

/* The group of a wall found in the journal, that no group set yet. */
#define JOURNAL_GROUP	"(journal)"

/* Whether the walls of group g may stand for its limit: a limit each
 * process may raise, or one per process, is no limit for a cgroup. */
static int
group_walled(const struct ledger_group *g)
{
	return !g->pol.per_process && !g->pol.client_may_raise;
}

static struct memlimit_wall *
wall_find(struct memlimit_wall *w, size_t n, size_t dev, const char *dir)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (w[i].dev == dev && strcmp(w[i].dir, dir) == 0)
			return &w[i];
	return NULL;
}

/*
 * Whether a group before group gi may hold processes of cgroup path
 * (issue 39, 6): a uid or gid rule may match any process, a pattern any
 * cgroup it matches. A wall on path would then hold processes of that
 * group to gi's limit. The earlier group's name, or NULL.
 */
static const char *
wall_shadowed(const struct arbiter *a, size_t gi, const char *path,
    char *rule, size_t rulelen)
{
	const struct config_group *sec;
	struct match_subject s = { path, 0, 0 };
	size_t g, r;

	for (g = 0; g < gi; g++) {
		sec = a->groups.sections[g];
		for (r = 0; r < sec->nrules; r++) {
			const struct match_rule *mr = &sec->rules[r];

			if (mr->kind == MATCH_UID || mr->kind == MATCH_GID ||
			    match_rule_test(mr, &s)) {
				match_rule_format(mr, rule, rulelen);
				return a->ledger.groups[g + 1].pol.name;
			}
		}
	}
	return NULL;
}

/* Add the walls of group gi (an index into a->groups.sections) on the
 * usable devices to *w (*n of them, room for *room). 0, or -1 (ENOMEM). */
static int
group_walls(struct arbiter *a, size_t gi, struct memlimit_wall **w,
    size_t *n, size_t *room)
{
	const struct config_group *sec = a->groups.sections[gi];
	const struct ledger_group *lg = &a->ledger.groups[gi + 1];
	char path[PATH_MAX], dir[PATH_MAX], rule[MATCH_RULE_TEXT_LEN];
	struct memlimit_wall *more;
	const char *by;
	size_t r, d;

	if (!group_walled(lg))
		return 0;
	for (r = 0; r < sec->nrules; r++) {
		if (match_rule_path(&sec->rules[r], path, sizeof(path)) < 0)
			continue;
		if ((by = wall_shadowed(a, gi, path, rule,
		    sizeof(rule))) != NULL) {
			log_warnx("group '%s': no driver limit on cgroup '%s': "
			    "group '%s' comes first and may hold its processes "
			    "(%s)", lg->pol.name, path, by, rule);
			continue;
		}
		if (cgroup_dir(path, dir, sizeof(dir), NULL) < 0) {
			log_warnx("group '%s': cannot tell the directory of "
			    "cgroup '%s': no driver limit", lg->pol.name, path);
			continue;
		}
		for (d = 0; d < a->ledger.ndevices; d++) {
			/* The first group that names a cgroup has it. */
			if (!a->memlimits.usable[d] ||
			    wall_find(*w, *n, d, dir) != NULL)
				continue;
			if (*n == *room) {
				*room = *room ? *room * 2 : 8;
				if ((more = reallocarray(*w, *room,
				    sizeof(**w))) == NULL)
					return -1;
				*w = more;
			}
			if (((*w)[*n].dir = strdup(dir)) == NULL)
				return -1;
			(*w)[*n].dev = d;
			proto_strlcpy((*w)[*n].group, lg->pol.name,
			    sizeof((*w)[*n].group));
			(*w)[*n].soft = lg->share[d].guarantee;
			(*w)[*n].hard = lg->share[d].limit;
			(*n)++;
		}
	}
	return 0;
}

/* Whether directory in lies strictly under directory out. */
static int
dir_under(const char *in, const char *out)
{
	size_t n = strlen(out);

	return strncmp(in, out, n) == 0 && in[n] == '/';
}

static uint64_t
add_sat(uint64_t x, uint64_t y)
{
	/* UINT64_MAX is no limit: NVML_LIMITS_CLEAR. */
	return x >= UINT64_MAX - 1 - y ? UINT64_MAX - 1 : x + y;
}

/*
 * The driver counts a cgroup's whole subtree against its wall, the walls
 * below included (issue 39, 5), while the groups are disjoint: a wall is
 * its group's limit (guarantee) plus the limits (guarantees) of the
 * groups walled below it, so that the inner groups' memory never takes
 * the outer group's. 0, or -1 (ENOMEM).
 */
static int
walls_nest(struct memlimit_wall *w, size_t n)
{
	uint64_t *own;
	size_t i, k;

	if (n == 0)
		return 0;
	if ((own = calloc(2 * n, sizeof(*own))) == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		own[2 * i] = w[i].soft;
		own[2 * i + 1] = w[i].hard;
	}
	for (i = 0; i < n; i++)
		for (k = 0; k < n; k++)
			if (w[k].dev == w[i].dev && dir_under(w[k].dir,
			    w[i].dir)) {
				w[i].soft = add_sat(w[i].soft, own[2 * k]);
				w[i].hard = add_sat(w[i].hard, own[2 * k + 1]);
			}
	free(own);
	return 0;
}

static void
walls_free(struct memlimit_wall *w, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(w[i].dir);
	free(w);
}

/* A failed set or clear: an event, never more. */
static void
wall_failed(struct arbiter *a, const struct memlimit_wall *w,
    const char *what, const char *why)
{
	decision_event(a, GF_EV_DRIVER_LIMIT, NULL, (int)w->dev, w->hard,
	    "group '%s': cannot %s the driver's limit of '%s': %s", w->group,
	    what, w->dir, why);
}

/* Add a wall for want, not set yet: it, or NULL (ENOMEM). */
static struct memlimit_wall *
wall_add(struct memlimits *m, const struct memlimit_wall *want)
{
	struct memlimit_wall *more, *w;
	char *dir;

	if ((dir = strdup(want->dir)) == NULL)
		return NULL;
	if ((more = reallocarray(m->walls, m->nwalls + 1,
	    sizeof(*more))) == NULL) {
		free(dir);
		return NULL;
	}
	m->walls = more;
	w = &m->walls[m->nwalls++];
	memset(w, 0, sizeof(*w));
	w->dev = want->dev;
	w->dir = dir;
	memcpy(w->group, want->group, sizeof(w->group));
	return w;
}

/*
 * Write the walls in force, or that may be, to the journal: 0, or -1 with
 * one line in why.
 */
static int
journal_write(struct arbiter *a, char *why, size_t whylen)
{
	struct memlimits *m = &a->memlimits;
	struct walls_entry *e;
	size_t i;
	int r;

	if (m->nwalls > 0 && (e = calloc(m->nwalls, sizeof(*e))) == NULL) {
		snprintf(why, whylen, "out of memory for the journal of the "
		    "driver's limits");
		return -1;
	} else if (m->nwalls == 0)
		e = NULL;
	for (i = 0; i < m->nwalls; i++) {
		memcpy(e[i].uuid, a->ledger.devices[m->walls[i].dev].uuid,
		    GF_UUID_LEN);
		e[i].dir = m->walls[i].dir;
	}
	r = walls_journal_save(m->journal, e, m->nwalls, why, whylen);
	free(e);
	return r;
}

/* The device of the ledger whose UUID is uuid: its index, or -1. */
static long
journal_device(const struct arbiter *a, const uint8_t uuid[GF_UUID_LEN])
{
	size_t d;

	for (d = 0; d < a->ledger.ndevices; d++)
		if (memcmp(a->ledger.devices[d].uuid, uuid, GF_UUID_LEN) == 0)
			return (long)d;
	return -1;
}

/*
 * At start: the walls an earlier daemon journalled (killed, it cleared
 * none) are taken as in force, for walls_clear to clear where no group
 * wants them and walls_set to set again where one does. 0, or -1
 * (ENOMEM).
 */
static int
journal_adopt(struct arbiter *a)
{
	struct memlimits *m = &a->memlimits;
	struct memlimit_wall one, *w;
	struct walls_entry *e;
	size_t i, n;
	long d;

	m->journal_read = 1;
	if (statefile_path(&a->conf, WALLS_FILE, m->journal,
	    sizeof(m->journal)) < 0) {
		log_warnx("the journal of the driver's limits does not fit "
		    "in a path: no wall is set");
		m->journal[0] = '\0';
		return 0;
	}
	if (walls_journal_load(m->journal, &e, &n) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		if ((d = journal_device(a, e[i].uuid)) < 0) {
			log_warnx("'%s': a driver limit of '%s' on a device "
			    "not here is left as it is", m->journal,
			    e[i].dir);
			continue;
		}
		if (wall_find(m->walls, m->nwalls, (size_t)d, e[i].dir) != NULL)
			continue;
		memset(&one, 0, sizeof(one));
		one.dev = (size_t)d;
		one.dir = (char *)e[i].dir;
		proto_strlcpy(one.group, JOURNAL_GROUP, sizeof(one.group));
		if ((w = wall_add(m, &one)) == NULL) {
			walls_journal_free(e, n);
			return -1;
		}
		w->set = 1;
	}
	walls_journal_free(e, n);
	return 0;
}

/* Clear the walls in force that are not wanted (cleared before they
 * go, so that the driver's ancestors are decremented), unless their
 * cgroup is gone already. */
static void
walls_clear(struct arbiter *a, const struct memlimit_wall *want,
    size_t nwant)
{
	struct memlimits *m = &a->memlimits;
	char why[GF_REASON_LEN];
	size_t i, k = 0, n = m->nwalls;

	for (i = 0; i < n; i++) {
		struct memlimit_wall *w = &m->walls[i];

		if (wall_find((struct memlimit_wall *)want, nwant, w->dev,
		    w->dir) != NULL) {
			m->walls[k++] = *w;
			continue;
		}
		if (access(w->dir, F_OK) < 0)
			log_info("group '%s': cgroup '%s' is gone with its "
			    "driver limit", w->group, w->dir);
		else if (nvml_limits_set(w->dev, w->dir, 0, NVML_LIMITS_CLEAR,
		    why, sizeof(why)) < 0) {
			/* Still in force, still journalled. */
			wall_failed(a, w, "clear", why);
			m->walls[k++] = *w;
			continue;
		} else
			log_info("group '%s': driver limit of '%s' on device "
			    "%zu cleared", w->group, w->dir, w->dev);
		free(w->dir);
	}
	m->nwalls = k;
	if (k != n && journal_write(a, why, sizeof(why)) < 0)
		log_warnx("%s", why);
}

/* Forget w, which the driver never took, and journal that. */
static void
wall_drop(struct arbiter *a, struct memlimit_wall *w)
{
	struct memlimits *m = &a->memlimits;
	char why[GF_REASON_LEN];

	free(w->dir);
	*w = m->walls[--m->nwalls];
	if (journal_write(a, why, sizeof(why)) < 0)
		log_warnx("%s", why);
}

/* Whether the driver holds wall w as it was set. */
static int
wall_held(const struct memlimit_wall *w)
{
	uint64_t soft, hard, used;
	char why[GF_REASON_LEN];

	return nvml_limits_get(w->dev, w->dir, &soft, &hard, &used, why,
	    sizeof(why)) == 0 && soft == w->soft && hard == w->hard;
}

/*
 * Set the wanted walls that are new or changed (or that the driver no
 * longer holds), each new one journalled
 * first (issue 38 E: none is in force that a later daemon cannot find);
 * those that fail are not in force (a changed one keeps its old limits).
 */
static int
walls_set(struct arbiter *a, struct memlimit_wall *want, size_t nwant)
{
	struct memlimits *m = &a->memlimits;
	struct memlimit_wall *w;
	char why[GF_REASON_LEN], hard[32], soft[32];
	size_t i;

	for (i = 0; i < nwant; i++) {
		w = wall_find(m->walls, m->nwalls, want[i].dev, want[i].dir);
		if (w != NULL && w->set && w->soft == want[i].soft &&
		    w->hard == want[i].hard && strcmp(w->group,
		    want[i].group) == 0 && wall_held(w))
			continue;
		if (w == NULL) {
			if ((w = wall_add(m, &want[i])) == NULL)
				return -1;
			if (journal_write(a, why, sizeof(why)) < 0) {
				wall_failed(a, &want[i], "journal", why);
				wall_drop(a, w);
				continue;
			}
		}
		if (nvml_limits_set(want[i].dev, want[i].dir, want[i].soft,
		    want[i].hard, why, sizeof(why)) < 0) {
			wall_failed(a, &want[i], "set", why);
			if (!w->set)
				wall_drop(a, w);
			continue;
		}
		log_info("group '%s': driver limit of '%s' on device %zu: "
		    "hard %s, soft %s", want[i].group, want[i].dir,
		    want[i].dev, size_format(want[i].hard, hard, sizeof(hard)),
		    size_format(want[i].soft, soft, sizeof(soft)));
		memcpy(w->group, want[i].group, sizeof(w->group));
		w->soft = want[i].soft;
		w->hard = want[i].hard;
		w->set = 1;
		w->lost = 0;
	}
	return 0;
}

/* Look for the functions again, device by device. */
static int
memlimits_probe(struct arbiter *a)
{
	struct memlimits *m = &a->memlimits;
	size_t d, n = a->ledger.ndevices;

	if (m->usable == NULL && n > 0 &&
	    ((m->usable = calloc(n, sizeof(*m->usable))) == NULL ||
	    (m->why = calloc(n, sizeof(*m->why))) == NULL))
		return -1;
	for (d = 0; d < n; d++)
		m->usable[d] = nvml_limits_usable(d, m->why[d],
		    sizeof(m->why[d]));
	return 0;
}

void
memlimits_apply(struct arbiter *a)
{
	struct memlimit_wall *want = NULL;
	size_t nwant = 0, room = 0, g;

	if (memlimits_probe(a) < 0 ||
	    (!a->memlimits.journal_read && journal_adopt(a) < 0))
		goto out_nomem;
	for (g = 0; g < a->groups.n; g++)
		if (group_walls(a, g, &want, &nwant, &room) < 0)
			goto out_nomem;
	if (walls_nest(want, nwant) < 0)
		goto out_nomem;
	walls_clear(a, want, nwant);
	if (walls_set(a, want, nwant) < 0)
		goto out_nomem;
	walls_free(want, nwant);
	return;
out_nomem:
	log_warnx("out of memory: the driver's limits are left as they were");
	walls_free(want, nwant);
}

/*
 * Wall w, which the driver no longer holds as set (its directory made
 * again: the driver keys walls by directory, not path; or changed behind
 * the daemon's back), set again. A cgroup that is gone waits for its
 * group to go; a set that fails is said once, until it holds again.
 */
static void
wall_restore(struct arbiter *a, struct memlimit_wall *w)
{
	char why[GF_REASON_LEN];

	if (access(w->dir, F_OK) < 0)
		return;
	if (nvml_limits_set(w->dev, w->dir, w->soft, w->hard, why,
	    sizeof(why)) < 0) {
		if (!w->lost)
			wall_failed(a, w, "set again", why);
		w->lost = 1;
		return;
	}
	w->lost = 0;
	decision_event(a, GF_EV_DRIVER_LIMIT, NULL, (int)w->dev, w->hard,
	    "group '%s': the driver's limit of '%s' was not as set: set "
	    "again", w->group, w->dir);
}

void
memlimits_check(struct arbiter *a)
{
	struct memlimits *m = &a->memlimits;
	size_t i;

	if (m->usable == NULL)
		return;
	for (i = 0; i < m->nwalls; i++) {
		struct memlimit_wall *w = &m->walls[i];

		/* Journalled walls not wanted yet are the start's to clear. */
		if (w->set && m->usable[w->dev] && strcmp(w->group,
		    JOURNAL_GROUP) != 0 && !wall_held(w))
			wall_restore(a, w);
	}
}

void
memlimits_status(const struct arbiter *a, size_t dev,
    struct gf_device_status *ds)
{
	const struct memlimits *m = &a->memlimits;
	size_t i, k;

	if (m->usable == NULL || dev >= a->ledger.ndevices)
		return;
	if (!m->usable[dev]) {
		ds->driver_limits = GF_DLIM_OFF;
		proto_strlcpy(ds->driver_reason, m->why[dev],
		    sizeof(ds->driver_reason));
		return;
	}
	ds->driver_limits = GF_DLIM_ON;
	/* Groups, not cgroups: one may name several. Only the walls the
	 * driver holds as set count (a cgroup made again has none). */
	for (i = 0; i < m->nwalls; i++) {
		if (m->walls[i].dev != dev || !m->walls[i].set ||
		    !wall_held(&m->walls[i]))
			continue;
		for (k = 0; k < i; k++)
			if (m->walls[k].dev == dev && strcmp(m->walls[k].group,
			    m->walls[i].group) == 0)
				break;
		if (k == i)
			ds->driver_groups++;
	}
}

int
memlimits_wall(const struct arbiter *a, size_t i, struct gf_wall *w)
{
	const struct memlimits *m = &a->memlimits;
	const struct memlimit_wall *mw;
	char why[GF_REASON_LEN];
	size_t len;

	if (i >= m->nwalls)
		return 0;
	mw = &m->walls[i];
	memset(w, 0, sizeof(*w));
	memcpy(w->uuid, a->ledger.devices[mw->dev].uuid, GF_UUID_LEN);
	w->read = nvml_limits_get(mw->dev, mw->dir, &w->soft, &w->hard,
	    &w->used, why, sizeof(why)) == 0;
	if (!w->read)
		w->soft = w->hard = w->used = 0;
	proto_strlcpy(w->group, mw->group, sizeof(w->group));
	/* A long path keeps its end, the cgroup's own name. */
	if ((len = strlen(mw->dir)) < sizeof(w->dir))
		memcpy(w->dir, mw->dir, len + 1);
	else
		snprintf(w->dir, sizeof(w->dir), "...%s", mw->dir + len -
		    (sizeof(w->dir) - 4));
	return 1;
}

void
memlimits_free(struct arbiter *a)
{
	struct memlimits *m = &a->memlimits;

	/* The walls are the daemon's: none outlives it (those that could
	 * not be cleared stay journalled, for the next start). */
	walls_clear(a, NULL, 0);
	walls_free(m->walls, m->nwalls);
	free(m->usable);
	free(m->why);
	memset(m, 0, sizeof(*m));
}
