/*
 * Run-time groups: their state file, and changes made on copies.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "log.h"
#include "match.h"
#include "proto.h"
#include "rtgroups.h"
#include "statefile.h"
#include "units.h"

int
rtgroups_path(const struct config *conf, char *buf, size_t size)
{
	return statefile_path(conf, RTGROUPS_FILE, buf, size);
}

static void
report_log(const char *line, void *arg)
{
	(void)arg;
	log_errx("%s", line);
}

void
rtgroups_load(struct config *rt, const char *path)
{
	char bad[PATH_MAX];

	if (config_load_groups(rt, path, report_log, NULL) == 0) {
		if (rt->ngroups > 0)
			log_info("%zu run-time group%s from '%s'",
			    rt->ngroups, rt->ngroups == 1 ? "" : "s", path);
		return;
	}
	config_free(rt);
	config_init(rt);
	snprintf(bad, sizeof(bad), "%s.bad", path);
	if (rename(path, bad) < 0)
		log_warn("cannot move '%s' aside to '%s'", path, bad);
	else
		log_warnx("starting without run-time groups: '%s' moved "
		    "aside to '%s'", path, bad);
}

int
rtgroups_save(const struct config *rt, const struct config *aside,
    const char *path, char *err, size_t errlen)
{
	struct statefile sf;
	size_t i;

	if (statefile_begin(&sf, path, err, errlen) < 0)
		return -1;
	fprintf(sf.fp, "; gpufrac run-time groups (gpufracctl group set/rm), "
	    "written by gpufracd.\n; Change them with gpufracctl, not "
	    "here: this file is rewritten whole.\n\n");
	for (i = 0; i < rt->ngroups; i++)
		config_group_write(sf.fp, &rt->groups[i]);
	for (i = 0; aside != NULL && i < aside->ngroups; i++)
		config_group_write(sf.fp, &aside->groups[i]);
	return statefile_commit(&sf, err, errlen);
}

/* out's groups: copies of rt's. 0, or -1 (ENOMEM, out empty). */
static int
copy_groups(const struct config *rt, struct config *out)
{
	size_t i;

	if (rt->ngroups == 0)
		return 0;
	if ((out->groups = calloc(rt->ngroups, sizeof(*out->groups))) == NULL)
		return -1;
	for (i = 0; i < rt->ngroups; i++) {
		if (config_group_copy(&out->groups[i], &rt->groups[i]) < 0) {
			config_free(out);
			return -1;
		}
		out->ngroups++;
	}
	return 0;
}

static struct config_group *
find(struct config *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->ngroups; i++)
		if (strcmp(c->groups[i].pol.name, name) == 0)
			return &c->groups[i];
	return NULL;
}

/* A new group in out, with the defaults of a [group] section. */
static struct config_group *
group_new(struct config *out, const char *name)
{
	char *where;

	if (asprintf(&where, "run-time group '%s'", name) < 0)
		return NULL;
	return config_group_new(out, name, where);
}

/* A guarantee as sent: kind NONE, a size (0: none), or 0.01% to 100%. */
static int
amount_ok(uint32_t kind, uint64_t value)
{
	return kind == GF_LIMIT_NONE || kind == GF_LIMIT_BYTES ||
	    (kind == GF_LIMIT_PERCENT && value > 0 && value <= 10000);
}

/* The values of s that need no context: -1 with err naming the bad one. */
static int
values_check(const struct gf_group_set *s, char *err, size_t errlen)
{
	const char *bad = NULL;

	if (!config_group_name_ok(s->name))
		snprintf(err, errlen, "bad group name '%s' (letters, digits, "
		    "'.', '_' and '-', at most %d)", s->name,
		    GF_GROUP_LEN - 1);
	else if (strcasecmp(s->name, POLICY_DEFAULT_GROUP) == 0)
		snprintf(err, errlen, "group name '%s' is reserved for the "
		    "processes no group matches", s->name);
	else if (s->limit_kind != GF_LIMIT_NONE &&
	    !limit_valid(s->limit_kind, s->limit_value))
		bad = "limit";	/* zero too: the files refuse it alike */
	else if (!amount_ok(s->guarantee_kind, s->guarantee_value))
		bad = "guarantee";
	else if (s->resolver != GF_UNSET && s->resolver > GF_RESOLVER_SWAP)
		bad = "resolver";
	else if (s->on_preempt != GF_UNSET && s->on_preempt > GF_PREEMPT_NONE)
		bad = "on_preempt";
	else if (s->priority_set > 1)
		bad = "priority_set";
	else if (s->flags & ~(GF_GROUP_TRANSIENT | GF_GROUP_JOB |
	    GF_GROUP_UNSHIMMED_KILL | GF_GROUP_OWNER))
		bad = "flags";
	else
		return 0;
	if (bad != NULL)
		snprintf(err, errlen, "bad %s for group '%s'", bad, s->name);
	return -1;
}

/* The rules of GROUP_RULEs, all or nothing. */
static int
rules_parse(const struct gf_group_rule *rules, size_t n,
    struct match_rule **out, char *err, size_t errlen)
{
	char why[128];
	size_t i;

	if ((*out = calloc(n, sizeof(**out))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (i = 0; i < n; i++) {
		const char *r = rules[i].rule;

		if (r[strcspn(r, " \t\n\r")] != '\0')
			snprintf(why, sizeof(why), "white space in a rule");
		else if (match_rule_parse(r, &(*out)[i], why,
		    sizeof(why)) == 0)
			continue;
		snprintf(err, errlen, "bad rule '%.80s': %s", r, why);
		while (i-- > 0)
			match_rule_free(&(*out)[i]);
		free(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

/* What s sets, onto g. */
static void
group_apply(struct config_group *g, const struct gf_group_set *s)
{
	struct group_policy *pol = &g->pol;

	if (s->limit_kind != GF_LIMIT_NONE) {
		pol->limit_kind = s->limit_kind;
		pol->limit_value = s->limit_value;
		g->limit_set = 1;
	}
	if (s->guarantee_kind != GF_LIMIT_NONE) {
		pol->guarantee_kind = s->guarantee_kind;
		pol->guarantee_value = s->guarantee_value;
	}
	if (s->priority_set)
		pol->priority = s->priority;
	if (s->resolver != GF_UNSET) {
		pol->resolver = s->resolver;
		g->resolver_set = 1;
	}
	if (s->on_preempt != GF_UNSET)
		pol->on_preempt = s->on_preempt;
	if (s->wait_timeout_ms != GF_UNSET) {
		pol->wait_timeout_ms = s->wait_timeout_ms;
		g->wait_timeout_set = 1;
	}
	if (s->flags & GF_GROUP_TRANSIENT)
		g->transient = 1;
	if (s->flags & GF_GROUP_UNSHIMMED_KILL) {
		pol->unshimmed = POLICY_UNSHIMMED_KILL;
		g->unshimmed_set = 1;
	}
	/* A job's: its user's [group] bounds it while it lives (groups.h). */
	if ((s->flags & (GF_GROUP_JOB | GF_GROUP_OWNER)) ==
	    (GF_GROUP_JOB | GF_GROUP_OWNER)) {
		g->owner_set = 1;
		g->owner_uid = s->owner_uid;
		g->owner_gid = s->owner_gid;
	}
}

/* Are the n rules of new those of g, in order? */
static int
rules_same(const struct config_group *g, const struct match_rule *new,
    size_t n)
{
	char a[GF_RULE_LEN + 16], b[GF_RULE_LEN + 16];
	size_t i;

	if (g->nrules != n)
		return 0;
	for (i = 0; i < n; i++)
		if (strcmp(match_rule_format(&g->rules[i], a, sizeof(a)),
		    match_rule_format(&new[i], b, sizeof(b))) != 0)
			return 0;
	return 1;
}

/*
 * A job's group (GF_GROUP_JOB) that exists already: its own again (the
 * same rules, as when a container is made again under its id), whose
 * settings go back to the defaults before s's are applied; or another
 * job's, refused (issue 27: a name chosen to take another's group).
 */
static int
job_replace(struct config_group *g, const struct match_rule *rules,
    size_t n, char *err, size_t errlen)
{
	char text[GF_RULE_LEN + 16];

	if (n == 0 || !rules_same(g, rules, n)) {
		snprintf(err, errlen, "group '%s' exists for other processes "
		    "(%s%s): refusing to replace it", g->pol.name,
		    g->nrules > 0 ? match_rule_format(&g->rules[0], text,
		    sizeof(text)) : "no rule", g->nrules > 1 ? ", ..." : "");
		return -1;
	}
	config_group_reset(g);
	return 0;
}

int
rtgroups_set(const struct config *rt, const struct gf_group_set *s,
    const struct gf_group_rule *rules, size_t n, struct config *out,
    char *err, size_t errlen)
{
	struct match_rule *parsed = NULL;
	struct config_group *g;
	size_t i;

	if (values_check(s, err, errlen) < 0 ||
	    (n > 0 && rules_parse(rules, n, &parsed, err, errlen) < 0))
		return -1;
	if (copy_groups(rt, out) < 0)
		goto out_nomem;
	if ((g = find(out, s->name)) == NULL) {
		if (n == 0) {
			snprintf(err, errlen, "group '%s' is new: it needs a "
			    "match rule", s->name);
			goto out_free;
		}
		if ((g = group_new(out, s->name)) == NULL)
			goto out_nomem;
	} else if ((s->flags & GF_GROUP_JOB) &&
	    job_replace(g, parsed, n, err, errlen) < 0)
		goto out_free;
	if (n > 0) {
		for (i = 0; i < g->nrules; i++)
			match_rule_free(&g->rules[i]);
		free(g->rules);
		g->rules = parsed;
		g->nrules = n;
		parsed = NULL;
	}
	group_apply(g, s);
	free(g->guarantee_where);
	g->guarantee_where = strdup(g->where);
	if (g->guarantee_where == NULL)
		goto out_nomem;
	return 0;

out_nomem:
	snprintf(err, errlen, "out of memory");
out_free:
	for (i = 0; parsed != NULL && i < n; i++)
		match_rule_free(&parsed[i]);
	free(parsed);
	config_free(out);
	return -1;
}

int
rtgroups_rm(const struct config *rt, const char *name, struct config *out,
    char *err, size_t errlen)
{
	struct config_group *g;

	if (copy_groups(rt, out) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if ((g = find(out, name)) == NULL) {
		snprintf(err, errlen, "no run-time group '%s'", name);
		config_free(out);
		return RTGROUPS_NONE;
	}
	rtgroups_drop(out, (size_t)(g - out->groups));
	return 0;
}

void
rtgroups_drop(struct config *rt, size_t i)
{
	struct config_group *g = &rt->groups[i];

	config_group_free(g);
	memmove(g, g + 1, (rt->ngroups - i - 1) * sizeof(*g));
	rt->ngroups--;
}
