/*
 * The daemon's life cycle: start-up (devices, configuration, socket), a
 * reload that applies a new configuration entirely or not at all, to the
 * running clients as well, and shutdown.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "activity.h"
#include "arbiter.h"
#include "caps.h"
#include "conncaps.h"
#include "jobbound.h"
#include "depart.h"
#include "devices.h"
#include "driver.h"
#include "event.h"
#include "granted.h"
#include "groups.h"
#include "identity.h"
#include "lease.h"
#include "log.h"
#include "overhead.h"
#include "path.h"
#include "proto.h"
#include "reap.h"
#include "resolve.h"
#include "rtgroups.h"
#include "units.h"
#include "unshimmed.h"
#include "uuid.h"
#include "view.h"

int
arbiter_read_config(struct config *c, const char *path, int optional,
    const char *socket_arg, config_report_fn *report, void *arg)
{
	int errors = config_load(c, path, optional, report, arg);
	char line[CONFIG_SOCKET_LEN + 64];

	if (socket_arg == NULL)
		return errors;
	if (strlen(socket_arg) >= sizeof(c->socket)) {
		snprintf(line, sizeof(line), "socket path '%s' is too long "
		    "(at most %zu bytes)", socket_arg, sizeof(c->socket) - 1);
		report(line, arg);
		return errors + 1;
	}
	proto_strlcpy(c->socket, socket_arg, sizeof(c->socket));
	return errors;
}

/* The ledger device a [device] section names, or -1. */
static int
device_match(const struct ledger *l, const struct config_device *d)
{
	size_t i;

	if (d->by_uuid)
		return ledger_device_find(l, d->uuid);
	for (i = 0; i < l->ndevices; i++)
		if (l->devices[i].index == d->ordinal)
			return (int)i;
	return -1;
}

static void __attribute__((format(printf, 3, 4)))
check_error(config_report_fn *report, void *arg, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	report(line, arg);
}

/* A guarantee above its group's limit on this device (a size and a share). */
static int
guarantee_within_limit(const struct ledger_device *d, uint64_t capacity,
    const struct group_policy *pol, const char *where,
    config_report_fn *report, void *arg)
{
	uint64_t gb = limit_resolve(pol->guarantee_kind, pol->guarantee_value,
	    capacity);
	uint64_t lb = limit_resolve(pol->limit_kind, pol->limit_value,
	    capacity);
	char ubuf[UUID_STR_LEN], gbuf[32], lbuf[32];

	if (gb <= lb)
		return 0;
	check_error(report, arg, "%s: guarantee %s of group '%s' is more than "
	    "its limit %s on %s (device %u)", where,
	    size_format(gb, gbuf, sizeof(gbuf)), pol->name,
	    size_format(lb, lbuf, sizeof(lbuf)),
	    uuid_format(d->uuid, ubuf, sizeof(ubuf)), d->index);
	return 1;
}

/* The groups' guarantees on every device, with the new reserves. */
static int
guarantees_check(const struct ledger *l, const struct groups *gs,
    const uint64_t *reserves, config_report_fn *report, void *arg)
{
	size_t i, j, n = groups_count(gs);
	struct group_policy *pols = calloc(n, sizeof(*pols));
	struct group_policy *fit = calloc(n, sizeof(*fit));
	char msg[1024];
	int errors = 0;

	if (pols == NULL || fit == NULL) {
		report("out of memory checking the configuration", arg);
		errors = 1;
		goto out_free;
	}
	groups_policies(gs, pols);
	/* A job's guarantee is part of its bound's, not besides it. */
	memcpy(fit, pols, n * sizeof(*fit));
	for (j = 1; j < n; j++)
		if (groups_bound(gs, j) != 0)
			fit[j].guarantee_value = 0;
	for (i = 0; i < l->ndevices; i++) {
		const struct ledger_device *d = &l->devices[i];
		uint64_t capacity = d->total - reserves[i];

		for (j = 1; j < n; j++)
			errors += guarantee_within_limit(d, capacity, &pols[j],
			    gs->sections[j - 1]->guarantee_where, report, arg);
		if (ledger_guarantees_fit(d, capacity, fit, n, msg,
		    sizeof(msg)) < 0) {
			report(msg, arg);
			errors++;
		}
	}
out_free:
	free(fit);
	free(pols);
	return errors;
}

int
arbiter_check(const struct ledger *l, const struct groups *gs,
    uint64_t *reserves, config_report_fn *report, void *arg)
{
	const struct config *conf = gs->conf;
	const char **claimed = calloc(l->ndevices ? l->ndevices : 1,
	    sizeof(*claimed));
	char ubuf[UUID_STR_LEN], rbuf[32], tbuf[32];
	int errors = 0, dev;
	size_t i;

	if (claimed == NULL) {
		report("out of memory checking the configuration", arg);
		return 1;
	}
	for (i = 0; i < l->ndevices; i++)
		reserves[i] = 0;
	for (i = 0; i < conf->ndevices; i++) {
		const struct config_device *d = &conf->devices[i];
		const struct ledger_device *ld;

		if ((dev = device_match(l, d)) < 0) {
			if (d->by_uuid)
				uuid_format(d->uuid, ubuf, sizeof(ubuf));
			else
				snprintf(ubuf, sizeof(ubuf), "%u", d->ordinal);
			log_warnx("%s: there is no device %s on this machine; "
			    "ignoring its section", d->where, ubuf);
			continue;
		}
		ld = &l->devices[dev];
		uuid_format(ld->uuid, ubuf, sizeof(ubuf));
		if (claimed[dev] != NULL) {
			check_error(report, arg, "%s: device %u (%s) is "
			    "configured twice; first at %s", d->where,
			    ld->index, ubuf, claimed[dev]);
			errors++;
			continue;
		}
		claimed[dev] = d->where;
		if (d->reserve_set && d->reserve > ld->total) {
			check_error(report, arg, "%s: 'reserve' of %s is more "
			    "than the total %s of device %u (%s)",
			    d->reserve_where, size_format(d->reserve, rbuf,
			    sizeof(rbuf)), size_format(ld->total, tbuf,
			    sizeof(tbuf)), ld->index, ubuf);
			errors++;
			continue;
		}
		reserves[dev] = d->reserve;
	}
	free(claimed);
	if (errors > 0)
		return errors;
	return guarantees_check(l, gs, reserves, report, arg);
}

/* Where problems go: the log, and the first one into err if any. */
struct report_to {
	char		*err;
	size_t		 errlen;
	int		 n;
};

static void
report_log(const char *line, void *arg)
{
	struct report_to *r = arg;

	log_errx("%s", line);
	if (r != NULL && r->n++ == 0 && r->err != NULL)
		snprintf(r->err, r->errlen, "%s", line);
}

/* ledger_groups_set's question, asked of the new groups. */
static size_t
group_of(const struct ledger_client *c, void *arg)
{
	return groups_match(arg, c->cgroup, c->uid, c->gid);
}

/*
 * The new groups, every client matched again, each job's group within
 * its user's [group]: 0, or -1 (ENOMEM).
 */
static int
groups_apply(struct ledger *l, const struct groups *gs)
{
	size_t i, n = groups_count(gs);
	struct group_policy *pols = calloc(n, sizeof(*pols));
	size_t *bound = calloc(n, sizeof(*bound));
	int rc = -1;

	if (pols == NULL || bound == NULL)
		goto out_free;
	groups_policies(gs, pols);
	for (i = 0; i < n; i++)
		bound[i] = groups_bound(gs, i);
	if ((rc = ledger_groups_set(l, pols, n, group_of, (void *)gs)) == 0)
		ledger_groups_bound(l, bound);
out_free:
	free(bound);
	free(pols);
	return rc;
}

/*
 * A configuration and run-time groups to be put in force: each either a's
 * own (kept as it is) or a new one that the candidate owns.
 */
struct candidate {
	struct config	*conf;
	struct config	*rt;
	struct groups	 gs;
	uint64_t	*reserves;	/* one per ledger device */
};

static void
candidate_drop(struct arbiter *a, struct candidate *cd)
{
	if (cd->conf != &a->conf)
		config_free(cd->conf);
	if (cd->rt != &a->rt)
		config_free(cd->rt);
	groups_free(&cd->gs);
	free(cd->reserves);
}

/* Check cd against the devices: 0, or -1 (reported; cd dropped). */
static int
candidate_check(struct arbiter *a, struct candidate *cd,
    struct report_to *r)
{
	struct ledger *l = &a->ledger;

	cd->gs.sections = NULL;
	cd->reserves = calloc(l->ndevices ? l->ndevices : 1,
	    sizeof(*cd->reserves));
	if (cd->reserves == NULL || groups_build(&cd->gs, cd->conf, cd->rt,
	    1) < 0) {
		report_log("out of memory applying the configuration", r);
		candidate_drop(a, cd);
		return -1;
	}
	if (arbiter_check(l, &cd->gs, cd->reserves, report_log, r) > 0) {
		candidate_drop(a, cd);
		return -1;
	}
	return 0;
}

/* Put a checked cd in force: 0, or -1 (ENOMEM; reported, cd dropped). */
static int
candidate_commit(struct arbiter *a, struct candidate *cd,
    struct report_to *r)
{
	struct ledger *l = &a->ledger;
	size_t i;

	/* Each process as it is now, matched again (gpufrac.conf(5)). */
	(void)identity_refresh_all(a);
	if (groups_apply(l, &cd->gs) < 0) {
		report_log("out of memory applying the configuration", r);
		candidate_drop(a, cd);
		return -1;
	}
	l->lend = cd->conf->lend_guarantees;
	for (i = 0; i < l->ndevices; i++)
		ledger_set_reserve(l, i, cd->reserves[i]);
	free(cd->reserves);
	log_setlevel(cd->conf->log_level);
	if (cd->conf != &a->conf) {
		config_free(&a->conf);
		a->conf = *cd->conf;
	}
	if (cd->rt != &a->rt) {
		config_free(&a->rt);
		a->rt = *cd->rt;
	}
	/* Its sections point into the groups arrays, which moved intact. */
	groups_free(&a->groups);
	a->groups = cd->gs;
	a->groups.conf = &a->conf;
	swap_host_reconf(a);	/* swap_keep may be shorter now */
	return 0;
}

/* conf and rt (either may be a's own) in force, or all as it was. */
static int
arbiter_apply(struct arbiter *a, struct config *conf, struct config *rt,
    struct report_to *r)
{
	struct candidate cd = { .conf = conf, .rt = rt };

	if (candidate_check(a, &cd, r) < 0)
		return -1;
	return candidate_commit(a, &cd, r);
}

/*
 * The connections' limits in force: for those to come (a uid over a lower
 * max_connections_per_uid keeps what it has) and for the next output.
 */
static void
arbiter_conn_limits(struct arbiter *a)
{
	struct conncaps caps;
	struct rlimit rl;
	uint64_t nofile = UINT64_MAX;

	/* Sized on the descriptors (issue 38 G): said when they change. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		nofile = rl.rlim_cur;
	conncaps_size(nofile, a->conf.max_conns_per_uid, &caps);
	if (caps.per_uid != a->control.max_per_uid ||
	    caps.total != a->control.max_total)
		log_info("connections: %u for %" PRIu64 " descriptors: %u of "
		    "one uid, %u of all but root and admin_group, %u kept "
		    "for these", caps.conns, nofile, caps.per_uid, caps.total,
		    caps.reserve);
	a->control.max_per_uid = caps.per_uid;
	a->control.max_total = caps.total;
	a->control.outq_limit = a->conf.outq_limit;
}

/* After the groups or limits changed: tell the clients, serve waiters. */
static void
arbiter_settle(struct arbiter *a, struct conn *self)
{
	/* Leases were sized for the old limits. */
	lease_reclaim_all(a);
	view_notify(a, self);
	/* Capacity or guarantees may have changed for the waiters. */
	resolve_serve(a);
}

/* The first problem reported, kept quiet: why a group is set aside. */
static void
report_first(const char *line, void *arg)
{
	char *why = arg;

	if (*why == '\0')
		snprintf(why, GF_ERRMSG_LEN, "%s", line);
}

/* Do conf and rt fit the machine: 1, 0 (why, GF_ERRMSG_LEN, says why), -1. */
static int
rt_fits(struct arbiter *a, const struct config *conf,
    const struct config *rt, char *why)
{
	uint64_t *reserves = calloc(a->ledger.ndevices ? a->ledger.ndevices :
	    1, sizeof(*reserves));
	struct groups gs;
	int errors;

	why[0] = '\0';
	if (reserves == NULL || groups_build(&gs, conf, rt, 0) < 0) {
		free(reserves);
		return -1;
	}
	errors = arbiter_check(&a->ledger, &gs, reserves, report_first, why);
	groups_free(&gs);
	free(reserves);
	return errors == 0;
}

/* Move group i of from to the end of to: 0, or -1 (ENOMEM, unmoved). */
static int
group_move(struct config *from, size_t i, struct config *to)
{
	struct config_group *g;

	g = realloc(to->groups, (to->ngroups + 1) * sizeof(*g));
	if (g == NULL)
		return -1;
	to->groups = g;
	to->groups[to->ngroups++] = from->groups[i];
	memmove(&from->groups[i], &from->groups[i + 1],
	    (from->ngroups - i - 1) * sizeof(*g));
	from->ngroups--;
	return 0;
}

/*
 * The saved run-time groups that fit with conf, taken in the order saved;
 * each that does not (its guarantee, or a rule conf now rejects) is set
 * aside, logged, and kept in the state file for the next start: a group
 * saved by a container never keeps the daemon from starting (issue 27).
 * 0, or -1 (ENOMEM).
 */
static int
rt_set_aside(struct arbiter *a, const struct config *conf)
{
	char why[GF_ERRMSG_LEN];
	struct config saved = a->rt;
	int r;

	if (saved.ngroups == 0)
		return 0;
	if ((r = rt_fits(a, conf, &a->rt, why)) != 0)
		return r < 0 ? -1 : 0;
	config_init(&a->rt);
	while (saved.ngroups > 0) {
		if (group_move(&saved, 0, &a->rt) < 0 ||
		    (r = rt_fits(a, conf, &a->rt, why)) < 0)
			goto out_nomem;
		if (r == 1)
			continue;
		if (group_move(&a->rt, a->rt.ngroups - 1, &a->aside) < 0)
			goto out_nomem;
		log_warnx("run-time group '%s' set aside: it does not fit "
		    "with the configuration: %s", a->aside.groups[
		    a->aside.ngroups - 1].pol.name, why);
	}
	config_free(&saved);
	return 0;

out_nomem:
	config_free(&saved);
	return -1;
}

/* The run-time groups' state file: where, and what it holds. */
static int
arbiter_rt_load(struct arbiter *a, const struct config *conf)
{
	config_init(&a->rt);
	config_init(&a->aside);
	if (rtgroups_path(conf, a->state_path, sizeof(a->state_path)) < 0) {
		log_errx("the state directory's path is too long for '%s'",
		    RTGROUPS_FILE);
		return -1;
	}
	if (path_dir_make(a->state_path) < 0)
		log_warn("cannot create the directory of '%s'", a->state_path);
	rtgroups_load(&a->rt, a->state_path);
	return 0;
}

int
arbiter_start(struct arbiter *a, struct config *conf, const char *lib)
{
	struct report_to rt = { NULL, 0, 0 };
	struct device_desc *devs;
	int i, n;

	config_init(&a->conf);
	if (arbiter_rt_load(a, conf) < 0) {
		config_free(conf);
		return -1;
	}
	TAILQ_INIT(&a->departs);
	if (arbiter_wire(a) < 0) {
		config_free(conf);
		return -1;
	}
	a->start_ms = event_now_ms();
	if (resolve_init(a) < 0 || ledger_init(&a->ledger) < 0 ||
	    (n = devices_discover(lib, &devs)) < 0) {
		log_errx("out of memory listing the devices");
		config_free(conf);
		return -1;
	}
	for (i = 0; i < n; i++)
		if (ledger_device_add(&a->ledger, devs[i].uuid, devs[i].index,
		    devs[i].name, devs[i].total) < 0) {
			log_errx("out of memory adding device %d", i);
			free(devs);
			config_free(conf);
			return -1;
		}
	free(devs);
	swap_init(a);
	overhead_init(a);
	if (driver_init(a) < 0)
		return -1;
	if (rt_set_aside(a, conf) < 0) {
		log_errx("out of memory checking the run-time groups");
		config_free(conf);
		return -1;
	}
	if (arbiter_apply(a, conf, &a->rt, &rt) < 0) {
		log_errx("the configuration does not fit this machine");
		return -1;
	}
	memlimits_apply(a);
	/* What the earlier daemon granted, before anyone may say. */
	if (grantrec_start(a) < 0)
		return -1;
	reap_arm(a);
	arbiter_conn_limits(a);
	driver_period_set(a);
	/* Processes without the shim, now that their groups are known. */
	driver_look_soon(a);
	if (control_listen(&a->control, a->conf.socket,
	    a->conf.socket_mode) < 0)
		return -1;
	return metrics_start(a);
}

int
arbiter_reload(struct arbiter *a, struct conn *self, char *err,
    size_t errlen)
{
	struct report_to rt = { err, errlen, 0 };
	unsigned old_mode = a->conf.socket_mode;
	struct config c;

	config_init(&c);
	/* Refused until applied: metrics_reload says otherwise. */
	a->metrics.counts.reload_failed = 1;
	if (arbiter_read_config(&c, a->conf_path, a->conf_optional,
	    a->socket_arg, report_log, &rt) > 0) {
		config_free(&c);
		log_errx("keeping the configuration in force");
		a->metrics.counts.reload_failures++;
		return -1;
	}
	if (arbiter_apply(a, &c, &a->rt, &rt) < 0) {
		log_errx("keeping the configuration in force");
		a->metrics.counts.reload_failures++;
		return -1;
	}
	/* The socket stays where it is until a restart. */
	if (a->control.fd >= 0 &&
	    strcmp(a->conf.socket, a->control.path) != 0) {
		log_warnx("'socket' changed to '%s': still listening on '%s' "
		    "until a restart", a->conf.socket, a->control.path);
		proto_strlcpy(a->conf.socket, a->control.path,
		    sizeof(a->conf.socket));
	}
	if (a->conf.socket_mode != old_mode)
		control_chmod(&a->control, a->conf.socket_mode);
	arbiter_conn_limits(a);
	driver_period_set(a);
	metrics_reload(a);
	memlimits_apply(a);
	log_info("configuration reloaded from '%s': %zu group%s besides "
	    "'default'", a->conf_path, a->groups.n,
	    a->groups.n == 1 ? "" : "s");
	arbiter_settle(a, self);
	return 0;
}

/* A run-time group change rt (new, taken over) checked, saved, in force. */
static int
arbiter_rt_change(struct arbiter *a, struct conn *self, struct config *rt,
    char *err, size_t errlen)
{
	struct report_to r = { err, errlen, 0 };
	struct candidate cd = { .conf = &a->conf, .rt = rt };

	if (candidate_check(a, &cd, &r) < 0)
		return -1;
	if (rtgroups_save(rt, &a->aside, a->state_path, err, errlen) < 0) {
		log_errx("%s", err);
		candidate_drop(a, &cd);
		return -1;
	}
	if (candidate_commit(a, &cd, &r) < 0)
		return -1;
	memlimits_apply(a);
	arbiter_settle(a, self);
	reap_arm(a);
	return 0;
}

/* A group the files define cannot be changed at run time. */
static int
in_files(const struct arbiter *a, const char *name, char *err,
    size_t errlen)
{
	const struct config_group *g = groups_in_files(&a->conf, name);

	if (g == NULL)
		return 0;
	snprintf(err, errlen, "group '%s' is defined at %s: change it there",
	    name, g->where);
	return 1;
}

/*
 * A container's or step's request (GF_GROUP_JOB) held to [jobs] and to
 * the [group] its processes would match without it (jobbound.h), into
 * *s: 0, or -1 with err naming the cap it is over. What was capped is
 * logged.
 */
static int
job_caps(const struct arbiter *a, struct gf_group_set *s,
    const struct gf_group_rule *rules, size_t nrules, char *err,
    size_t errlen)
{
	const struct ledger *l = &a->ledger;
	struct caps_bound b;
	uint64_t *cap;
	size_t i;
	int rc;

	if (jobbound_find(&a->conf, s, rules, nrules, &b, err, errlen) < 0)
		return -1;
	if ((cap = calloc(l->ndevices ? l->ndevices : 1,
	    sizeof(*cap))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (i = 0; i < l->ndevices; i++)
		cap[i] = l->devices[i].capacity;
	rc = caps_hold(&a->conf, &b, cap, l->ndevices, s, err, errlen);
	free(cap);
	if (rc == CAPS_CAPPED)
		log_warnx("group '%s': %s", s->name, err);
	return rc < 0 ? -1 : 0;
}

/* The set-aside group called name, or -1. */
static ssize_t
aside_find(const struct arbiter *a, const char *name)
{
	size_t i;

	for (i = 0; i < a->aside.ngroups; i++)
		if (strcmp(a->aside.groups[i].pol.name, name) == 0)
			return (ssize_t)i;
	return -1;
}

/*
 * Take group i out of the set-aside ones into *g, or (put) put *g back
 * where it was: the array keeps its room, so putting back cannot fail.
 */
static void
aside_take(struct arbiter *a, size_t i, struct config_group *g, int put)
{
	struct config_group *v = a->aside.groups;

	if (!put) {
		*g = v[i];
		memmove(&v[i], &v[i + 1], (a->aside.ngroups - i - 1) *
		    sizeof(*v));
		a->aside.ngroups--;
		return;
	}
	memmove(&v[i + 1], &v[i], (a->aside.ngroups - i) * sizeof(*v));
	v[i] = *g;
	a->aside.ngroups++;
}

/*
 * The group name, set in rt, is for the cgroup at its path now; a group
 * made for an earlier cgroup at that path goes (issue 39: a new cgroup
 * at an old path is a new job).
 */
static void
cgroup_note(struct config *rt, const char *name)
{
	size_t i;

	for (i = 0; i < rt->ngroups; i++)
		if (strcmp(rt->groups[i].pol.name, name) == 0) {
			reap_identify(&rt->groups[i], 1);
			reap_replaced_drop(rt, &rt->groups[i]);
			return;
		}
}

/*
 * A set-aside group set again is set anew (its old settings are not
 * kept): the change saves the state file without the old one.
 */
int
arbiter_group_set(struct arbiter *a, struct conn *self,
    const struct gf_group_set *asked, const struct gf_group_rule *rules,
    size_t nrules, char *err, size_t errlen)
{
	struct gf_group_set s = *asked;
	struct config_group old;
	struct config rt;
	ssize_t i;
	int rc;

	config_init(&rt);
	if (in_files(a, s.name, err, errlen) || ((s.flags & GF_GROUP_JOB) &&
	    job_caps(a, &s, rules, nrules, err, errlen) < 0) ||
	    rtgroups_set(&a->rt, &s, rules, nrules, &rt, err, errlen) < 0)
		return -1;
	cgroup_note(&rt, s.name);
	if ((i = aside_find(a, s.name)) >= 0)
		aside_take(a, (size_t)i, &old, 0);
	rc = arbiter_rt_change(a, self, &rt, err, errlen);
	if (i >= 0 && rc < 0)
		aside_take(a, (size_t)i, &old, 1);
	else if (i >= 0)
		config_group_free(&old);
	return rc;
}

/* Remove the set-aside group i: 0, or -1 (err set; it stays). */
static int
aside_rm(struct arbiter *a, size_t i, char *err, size_t errlen)
{
	struct config_group old;

	aside_take(a, i, &old, 0);
	if (rtgroups_save(&a->rt, &a->aside, a->state_path, err,
	    errlen) < 0) {
		log_errx("%s", err);
		aside_take(a, i, &old, 1);
		return -1;
	}
	config_group_free(&old);
	return 0;
}

int
arbiter_group_rm(struct arbiter *a, struct conn *self, const char *name,
    char *err, size_t errlen)
{
	struct config rt;
	int rc;

	/* A run-time group shadowed by a file group may still go. */
	config_init(&rt);
	if ((rc = rtgroups_rm(&a->rt, name, &rt, err, errlen)) < 0) {
		ssize_t i = aside_find(a, name);

		if (rc == RTGROUPS_NONE && i >= 0)
			return aside_rm(a, (size_t)i, err, errlen);
		(void)in_files(a, name, err, errlen);
		return rc;
	}
	return arbiter_rt_change(a, self, &rt, err, errlen);
}

void
arbiter_stop(struct arbiter *a)
{
	a->stopping = 1;
	metrics_stop(a);
	reap_free(a);
	swap_free(a);
	unshimmed_free(a);
	granted_free(a);
	driver_free(a);
	memlimits_free(a);	/* before NVML closes */
	overhead_free(a);
	lease_free(a);
	view_free(a);
	activity_stop(a);
	control_shutdown(&a->control);
	depart_free(a);
	resolve_free(a);
	ledger_free(&a->ledger);
	grantrec_free(a);
	groups_free(&a->groups);
	config_free(&a->conf);
	config_free(&a->rt);
	config_free(&a->aside);
}
