/*
 * [group NAME] sections: their names, their keys, and the checks that only
 * all files together allow (a group's rules may come from one file and its
 * limit from another), made once every file has been read.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "config_parse.h"
#include "names.h"
#include "proto.h"
#include "units.h"

#define RULE_ERR_LEN	128

static struct config_group *
current(struct parse *p)
{
	return &p->conf->groups[p->group];
}

/* Letters, digits, '.', '_' and '-': a name that prints and quotes well. */
int
config_group_name_ok(const char *name)
{
	const char *s;

	if (*name == '\0' || strlen(name) >= GF_GROUP_LEN)
		return 0;
	for (s = name; *s != '\0'; s++)
		if (!isalnum((unsigned char)*s) && *s != '.' && *s != '_' &&
		    *s != '-')
			return 0;
	return 1;
}

struct config_group *
config_group_new(struct config *c, const char *name, char *where)
{
	struct config_group *g;

	if (where == NULL ||
	    (g = realloc(c->groups, (c->ngroups + 1) * sizeof(*g))) == NULL) {
		free(where);
		return NULL;
	}
	c->groups = g;
	g = &c->groups[c->ngroups++];
	memset(g, 0, sizeof(*g));
	proto_strlcpy(g->pol.name, name, sizeof(g->pol.name));
	config_group_reset(g);
	g->where = where;
	return g;
}

void
config_group_reset(struct config_group *g)
{
	char name[sizeof(g->pol.name)];

	memcpy(name, g->pol.name, sizeof(name));
	memset(&g->pol, 0, sizeof(g->pol));
	memcpy(g->pol.name, name, sizeof(name));
	g->pol.guarantee_kind = GF_LIMIT_BYTES;
	g->pol.on_preempt = GF_PREEMPT_KILL;
	g->pol.kill_grace_ms = POLICY_KILL_GRACE_MS;
	g->limit_set = g->resolver_set = g->wait_timeout_set = 0;
	g->swap_engine_set = 0;
	g->unshimmed_set = 0;
	g->transient = 0;
	g->owner_set = 0;
	g->owner_uid = g->owner_gid = 0;
}

/* The group named name, added (with defaults) if new; -1 on ENOMEM. */
static int
group_entry(struct parse *p, const char *name)
{
	struct config *c = p->conf;
	size_t i;

	for (i = 0; i < c->ngroups; i++)
		if (strcmp(c->groups[i].pol.name, name) == 0) {
			p->group = i;
			return 0;
		}
	if (config_group_new(c, name, parse_where(p)) == NULL)
		return -1;
	p->group = c->ngroups - 1;
	return 0;
}

int
section_group(struct parse *p, const char *arg)
{
	if (*arg == '\0') {
		parse_error(p, "missing name in section '[%s]' (expected "
		    "[group NAME])", p->section_text);
		return -1;
	}
	if (!config_group_name_ok(arg)) {
		parse_error(p, "bad group name '%s' in section '[%s]' "
		    "(letters, digits, '.', '_' and '-', at most %d)", arg,
		    p->section_text, GF_GROUP_LEN - 1);
		return -1;
	}
	if (strcasecmp(arg, POLICY_DEFAULT_GROUP) == 0) {
		parse_error(p, "group name '%s' is reserved for the processes "
		    "no group matches (set their defaults in [daemon])", arg);
		return -1;
	}
	snprintf(p->section_id, sizeof(p->section_id), "group %s", arg);
	if (group_entry(p, arg) < 0) {
		parse_error(p, "out of memory");
		return -1;
	}
	return SEC_GROUP;
}

void
config_group_free(struct config_group *g)
{
	size_t i;

	for (i = 0; i < g->nrules; i++)
		match_rule_free(&g->rules[i]);
	free(g->rules);
	g->rules = NULL;
	g->nrules = 0;
	free(g->where);
	free(g->guarantee_where);
	g->where = g->guarantee_where = NULL;
}

int
config_group_copy(struct config_group *dst, const struct config_group *src)
{
	size_t i;

	*dst = *src;
	dst->rules = NULL;
	dst->nrules = 0;
	dst->where = dst->guarantee_where = NULL;
	if ((src->where != NULL && (dst->where = strdup(src->where)) ==
	    NULL) || (src->guarantee_where != NULL &&
	    (dst->guarantee_where = strdup(src->guarantee_where)) == NULL) ||
	    (src->nrules > 0 && (dst->rules = calloc(src->nrules,
	    sizeof(*dst->rules))) == NULL))
		goto out_free;
	for (i = 0; i < src->nrules; i++) {
		dst->rules[i] = src->rules[i];
		if (src->rules[i].arg != NULL &&
		    (dst->rules[i].arg = strdup(src->rules[i].arg)) == NULL)
			goto out_free;
		dst->nrules++;
	}
	return 0;

out_free:
	config_group_free(dst);
	return -1;
}

/* A limit or guarantee as the configuration reads it: "8589934592", "50%". */
static void
amount_write(FILE *fp, const char *key, uint32_t kind, uint64_t value)
{
	if (kind == GF_LIMIT_PERCENT)
		fprintf(fp, "%s = %llu.%02llu%%\n", key,
		    (unsigned long long)value / 100,
		    (unsigned long long)value % 100);
	else
		fprintf(fp, "%s = %llu\n", key, (unsigned long long)value);
}

void
config_group_write(FILE *fp, const struct config_group *g)
{
	const struct group_policy *pol = &g->pol;
	char rule[MATCH_RULE_TEXT_LEN];
	size_t i;

	fprintf(fp, "[group %s]\nmatch =", pol->name);
	for (i = 0; i < g->nrules; i++)
		fprintf(fp, " %s", match_rule_format(&g->rules[i], rule,
		    sizeof(rule)));
	fputc('\n', fp);
	if (g->limit_set)
		amount_write(fp, "limit", pol->limit_kind, pol->limit_value);
	if (pol->guarantee_value > 0)
		amount_write(fp, "guarantee", pol->guarantee_kind,
		    pol->guarantee_value);
	fprintf(fp, "priority = %d\n", pol->priority);
	if (g->resolver_set)
		fprintf(fp, "resolver = %s\n", name_resolver(pol->resolver));
	if (g->wait_timeout_set)
		fprintf(fp, "wait_timeout = %llums\n",
		    (unsigned long long)pol->wait_timeout_ms);
	if (g->swap_engine_set)
		fprintf(fp, "swap_engine = %s\n",
		    pol->swap_engine == GF_ENGINE_COPY ? "copy" : "checkpoint");
	if (g->unshimmed_set)
		fprintf(fp, "unshimmed = %s\n", pol->unshimmed ==
		    POLICY_UNSHIMMED_KILL ? "kill" : "count");
	if (g->transient)
		fputs("transient = yes\n", fp);
	if (g->owner_set)
		fprintf(fp, "owner = %u:%u\n", g->owner_uid, g->owner_gid);
	fprintf(fp, "on_preempt = %s\nkill_grace = %llums\n\n",
	    name_on_preempt(pol->on_preempt),
	    (unsigned long long)pol->kill_grace_ms);
}

/* Parse every word of v; all or nothing. Returns the rules or NULL. */
static struct match_rule *
rules_parse(struct parse *p, const char *key, const char *v, size_t *n)
{
	char *copy = strdup(v), *word, *save = NULL, err[RULE_ERR_LEN];
	struct match_rule *rules = NULL, *r;
	size_t i;

	*n = 0;
	if (copy == NULL)
		goto out_nomem;
	for (word = strtok_r(copy, " \t", &save); word != NULL;
	    word = strtok_r(NULL, " \t", &save)) {
		if ((r = realloc(rules, (*n + 1) * sizeof(*r))) == NULL)
			goto out_nomem;
		rules = r;
		if (match_rule_parse(word, &rules[*n], err, sizeof(err)) < 0) {
			parse_error(p, "bad rule '%s' for '%s': %s", word, key,
			    err);
			goto out_free;
		}
		(*n)++;
	}
	free(copy);
	return rules;

out_nomem:
	parse_error(p, "out of memory");
out_free:
	for (i = 0; i < *n; i++)
		match_rule_free(&rules[i]);
	free(rules);
	free(copy);
	*n = 0;
	return NULL;
}

void
key_match(struct parse *p, const char *key, const char *v)
{
	struct config_group *g = current(p);
	struct match_rule *rules;
	size_t n, i;

	if (strspn(v, " \t") == strlen(v)) {
		parse_error(p, "bad rules for '%s': '%s' (expected "
		    "cgroup:GLOB, container:ID-PREFIX, pod:UID, uid:N or gid:N)",
		    key, v);
		return;
	}
	if ((rules = rules_parse(p, key, v, &n)) == NULL)
		return;
	/* A later file's rules replace an earlier file's. */
	for (i = 0; i < g->nrules; i++)
		match_rule_free(&g->rules[i]);
	free(g->rules);
	g->rules = rules;
	g->nrules = n;
}

void
key_limit(struct parse *p, const char *key, const char *v)
{
	struct config_group *g = current(p);

	if (parse_limit(p, key, v, &g->pol.limit_kind,
	    &g->pol.limit_value) == 0)
		g->limit_set = 1;
}

void
key_guarantee(struct parse *p, const char *key, const char *v)
{
	struct config_group *g = current(p);
	uint32_t kind;
	uint64_t value;
	char *where;

	if (guarantee_parse(v, &kind, &value) < 0) {
		parse_error(p, "bad guarantee for '%s': '%s' (expected a size "
		    "such as 8Gi or a share such as 50%%)", key, v);
		return;
	}
	if ((where = parse_where(p)) == NULL) {
		parse_error(p, "out of memory");
		return;
	}
	free(g->guarantee_where);
	g->guarantee_where = where;
	g->pol.guarantee_kind = kind;
	g->pol.guarantee_value = value;
}

void
key_priority(struct parse *p, const char *key, const char *v)
{
	if (int32_parse(v, &current(p)->pol.priority) < 0)
		parse_error(p, "bad priority for '%s': '%s' (expected an "
		    "integer from %d to %d)", key, v, INT32_MIN, INT32_MAX);
}

void
key_resolver(struct parse *p, const char *key, const char *v)
{
	struct config_group *g = current(p);

	if (parse_resolver(p, key, v, &g->pol.resolver) == 0)
		g->resolver_set = 1;
}

void
key_group_wait_timeout(struct parse *p, const char *key, const char *v)
{
	struct config_group *g = current(p);

	if (parse_duration(p, key, v, &g->pol.wait_timeout_ms) == 0)
		g->wait_timeout_set = 1;
}

void
key_on_preempt(struct parse *p, const char *key, const char *v)
{
	(void)parse_preempt(p, key, v, &current(p)->pol.on_preempt);
}

void
key_group_swap_engine(struct parse *p, const char *key, const char *v)
{
	struct config_group *g = current(p);

	if (parse_swap_engine(p, key, v, &g->pol.swap_engine) == 0)
		g->swap_engine_set = 1;
}

void
key_group_unshimmed(struct parse *p, const char *key, const char *v)
{
	struct config_group *g = current(p);

	if (parse_unshimmed(p, key, v, &g->pol.unshimmed) == 0)
		g->unshimmed_set = 1;
}

void
key_kill_grace(struct parse *p, const char *key, const char *v)
{
	(void)parse_duration(p, key, v, &current(p)->pol.kill_grace_ms);
}

void
key_group_may_raise(struct parse *p, const char *key, const char *v)
{
	(void)parse_yesno(p, key, v, &current(p)->pol.client_may_raise);
}

/* The state file's own key: a configuration file's groups are its. */
void
key_transient(struct parse *p, const char *key, const char *v)
{
	if (!p->groups_only)
		parse_error(p, "'%s' = '%s': for run-time groups only "
		    "(gpufracctl group set --cgroup)", key, v);
	else
		(void)parse_yesno(p, key, v, &current(p)->transient);
}

/*
 * The state file's own key too: the user and group a job's door read
 * from the kernel, whose [group] bounds the job's (jobbound.h).
 */
void
key_owner(struct parse *p, const char *key, const char *v)
{
	struct config_group *g = current(p);
	unsigned long long uid, gid = 0;
	char *end;

	if (!p->groups_only) {
		parse_error(p, "'%s' = '%s': for run-time groups only (a job's "
		    "door sets it)", key, v);
		return;
	}
	errno = 0;
	uid = strtoull(v, &end, 10);
	if (errno == 0 && end != v && isdigit((unsigned char)v[0]) &&
	    *end == ':' && isdigit((unsigned char)end[1]))
		gid = strtoull(end + 1, &end, 10);
	if (errno != 0 || *end != '\0' || end == v || uid > UINT32_MAX ||
	    gid > UINT32_MAX || strchr(v, ':') == NULL) {
		parse_error(p, "bad %s '%s' (expected UID:GID)", key, v);
		return;
	}
	g->owner_set = 1;
	g->owner_uid = (uint32_t)uid;
	g->owner_gid = (uint32_t)gid;
}

/* A limit or guarantee for humans: "8.0GiB" or "50%", "12.5%". */
static char *
amount_format(uint32_t kind, uint64_t value, char *buf, size_t size)
{
	if (kind != GF_LIMIT_PERCENT)
		return size_format(value, buf, size);
	if (value % 100 == 0)
		snprintf(buf, size, "%llu%%", (unsigned long long)value / 100);
	else if (value % 10 == 0)
		snprintf(buf, size, "%llu.%llu%%", (unsigned long long)value /
		    100, (unsigned long long)value % 100 / 10);
	else
		snprintf(buf, size, "%llu.%02llu%%", (unsigned long long)value /
		    100, (unsigned long long)value % 100);
	return buf;
}

static int __attribute__((format(printf, 4, 5)))
finish_error(config_report_fn *report, void *arg, const char *where,
    const char *fmt, ...)
{
	char msg[768], line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(line, sizeof(line), "%s: %s", where, msg);
	report(line, arg);
	return 1;
}

void
config_group_policy(const struct config *c, const struct config_group *g,
    struct group_policy *out)
{
	*out = g->pol;
	if (!g->limit_set) {
		out->limit_kind = c->default_limit_kind;
		out->limit_value = c->default_limit_value;
	}
	if (!g->resolver_set)
		out->resolver = c->default_resolver;
	if (!g->wait_timeout_set)
		out->wait_timeout_ms = c->wait_timeout_ms;
	if (!g->swap_engine_set)
		out->swap_engine = c->swap_engine;
	if (!g->unshimmed_set)
		out->unshimmed = c->unshimmed;
}

/*
 * A guarantee above the group's own limit, where both are of one kind;
 * a size against a share depends on the device (arbiter_check).
 */
static int
guarantee_check(const struct config_group *g, config_report_fn *report,
    void *arg)
{
	const struct group_policy *pol = &g->pol;
	char gbuf[32], lbuf[32];

	if (pol->guarantee_kind != pol->limit_kind ||
	    pol->guarantee_value <= pol->limit_value)
		return 0;
	return finish_error(report, arg, g->guarantee_where, "guarantee %s "
	    "of group '%s' is more than its limit %s%s",
	    amount_format(pol->guarantee_kind, pol->guarantee_value, gbuf,
	    sizeof(gbuf)), pol->name, amount_format(pol->limit_kind,
	    pol->limit_value, lbuf, sizeof(lbuf)), g->limit_set ? "" :
	    " (the default_limit)");
}

/*
 * Shares of every device cannot add up to more than all of it, whatever
 * the device: reported here, so that gpufracd -n says so too.
 */
static int
shares_check(const struct config *c, config_report_fn *report, void *arg)
{
	char list[512], buf[32];
	const char *where = NULL;
	uint64_t sum = 0;
	size_t i, len;

	list[0] = '\0';
	for (i = 0; i < c->ngroups; i++) {
		const struct group_policy *pol = &c->groups[i].pol;

		if (pol->guarantee_kind != GF_LIMIT_PERCENT)
			continue;
		sum += pol->guarantee_value;
		where = c->groups[i].guarantee_where;
		len = strlen(list);
		snprintf(list + len, sizeof(list) - len, "%s%s %s",
		    len ? ", " : "", pol->name, amount_format(GF_LIMIT_PERCENT,
		    pol->guarantee_value, buf, sizeof(buf)));
	}
	if (sum <= 10000)
		return 0;
	return finish_error(report, arg, where, "guarantees add up to %s of "
	    "every device's shareable capacity, more than all of it: %s",
	    amount_format(GF_LIMIT_PERCENT, sum, buf, sizeof(buf)), list);
}

static int
rules_check(const struct config_group *g, config_report_fn *report,
    void *arg)
{
	if (g->nrules > 0)
		return 0;
	return finish_error(report, arg, g->where, "group '%s' has no "
	    "'match' rule: no process could be in it", g->pol.name);
}

int
config_groups_check(const struct config *c, config_report_fn *report,
    void *arg)
{
	int errors = 0;
	size_t i;

	for (i = 0; i < c->ngroups; i++)
		errors += rules_check(&c->groups[i], report, arg);
	return errors;
}

int
config_groups_finish(struct config *c, config_report_fn *report, void *arg)
{
	int errors = 0;
	size_t i;

	for (i = 0; i < c->ngroups; i++) {
		struct config_group *g = &c->groups[i];

		config_group_policy(c, g, &g->pol);
		errors += rules_check(g, report, arg);
		errors += guarantee_check(g, report, arg);
	}
	return errors + shares_check(c, report, arg);
}
