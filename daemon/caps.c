/*
 * The [jobs] caps applied to one group request: each setting compared with
 * its cap, and either refused or lowered to it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "caps.h"
#include "names.h"
#include "units.h"

/* An amount as gpufrac.conf writes it: "8.0GiB" or "50%". */
static const char *
amount_format(uint32_t kind, uint64_t value, char *buf, size_t size)
{
	if (kind != GF_LIMIT_PERCENT)
		return size_format(value, buf, size);
	if (value % 100 == 0)
		snprintf(buf, size, "%" PRIu64 "%%", value / 100);
	else
		snprintf(buf, size, "%" PRIu64 ".%02" PRIu64 "%%",
		    value / 100, value % 100);
	return buf;
}

/* Is (kind, value) more than the cap on any of the devices? */
static int
amount_over(uint32_t kind, uint64_t value, uint32_t ckind, uint64_t cvalue,
    const uint64_t *capacity, size_t n)
{
	size_t i;

	if (ckind == GF_LIMIT_NONE)		/* no cap */
		return 0;
	if (kind == ckind)
		return value > cvalue;
	for (i = 0; i < n; i++)
		if (limit_resolve(kind, value, capacity[i]) >
		    limit_resolve(ckind, cvalue, capacity[i]))
			return 1;
	return 0;
}

/* The resolvers a set allows, "fail wait", into buf. */
static const char *
resolvers_format(uint32_t set, char *buf, size_t size)
{
	size_t n = 0;
	uint32_t r;

	buf[0] = '\0';
	for (r = 0; r <= GF_RESOLVER_SWAP && n < size; r++)
		if (set & 1u << r)
			n += (size_t)snprintf(buf + n, size - n, "%s%s",
			    n > 0 ? " " : "", name_resolver(r));
	return buf;
}

/*
 * One setting over its cap, which label names ("[jobs] max_limit",
 * "[group users] limit"): refused (-1, err says why), or capped (1, what
 * was capped added to err, after "; " if it holds a note already).
 */
static int
over(const struct config_jobs *j, char *err, size_t errlen,
    const char *what, const char *asked, const char *label, const char *cap)
{
	size_t n = j->cap ? strlen(err) : 0;
	const char *sep = n > 0 ? "; " : "";
	int resolvers = strcmp(what, "resolver") == 0;

	if (!resolvers && !j->cap)
		snprintf(err, errlen, "%s %s is above %s %s", what, asked,
		    label, cap);
	else if (!j->cap)
		snprintf(err, errlen, "resolver '%s' is not in %s (%s)",
		    asked, label, cap);
	else if (!resolvers)
		snprintf(err + n, errlen - n, "%s%s %s capped to %s (%s)", sep,
		    what, asked, cap, label);
	else
		snprintf(err + n, errlen - n, "%sresolver '%s' not in %s: "
		    "[daemon]'s default_resolver instead", sep, asked, label);
	return j->cap ? CAPS_CAPPED : -1;
}

/*
 * s's priority, guarantee and limit held to at most these, each named
 * by its label's prefix ("[jobs] max_", "[group users] "): 0, CAPS_CAPPED
 * or -1, as caps_hold. NULL for a bound that does not hold here.
 */
struct ceiling {
	const char	*prefix;	/* of the labels */
	const int32_t	*priority;
	uint32_t	 guarantee_kind;	/* GF_LIMIT_NONE: none */
	uint64_t	 guarantee_value;
	uint32_t	 limit_kind;		/* GF_LIMIT_NONE: none */
	uint64_t	 limit_value;
};

static int
ceiling_hold(const struct config_jobs *j, const struct ceiling *c,
    const uint64_t *capacity, size_t n, struct gf_group_set *s, char *err,
    size_t errlen)
{
	char a[32], v[48], label[GF_GROUP_LEN + 32];
	int rc = 0, r;

	if (c->priority != NULL && s->priority > *c->priority) {
		snprintf(a, sizeof(a), "%" PRId32, s->priority);
		snprintf(v, sizeof(v), "%" PRId32, *c->priority);
		snprintf(label, sizeof(label), "%spriority", c->prefix);
		if ((rc = over(j, err, errlen, "priority", a, label, v)) < 0)
			return -1;
		s->priority = *c->priority;
	}
	if (s->guarantee_kind != GF_LIMIT_NONE && amount_over(
	    s->guarantee_kind, s->guarantee_value, c->guarantee_kind,
	    c->guarantee_value, capacity, n)) {
		snprintf(label, sizeof(label), "%sguarantee", c->prefix);
		if ((r = over(j, err, errlen, "guarantee", amount_format(
		    s->guarantee_kind, s->guarantee_value, a, sizeof(a)),
		    label, amount_format(c->guarantee_kind,
		    c->guarantee_value, v, sizeof(v)))) < 0)
			return -1;
		rc = r;
		s->guarantee_kind = c->guarantee_kind;
		s->guarantee_value = c->guarantee_value;
	}
	if (amount_over(s->limit_kind, s->limit_value, c->limit_kind,
	    c->limit_value, capacity, n)) {
		snprintf(label, sizeof(label), "%slimit", c->prefix);
		if ((r = over(j, err, errlen, "limit", amount_format(
		    s->limit_kind, s->limit_value, a, sizeof(a)), label,
		    amount_format(c->limit_kind, c->limit_value, v,
		    sizeof(v)))) < 0)
			return -1;
		rc = r;
		s->limit_kind = c->limit_kind;
		s->limit_value = c->limit_value;
	}
	return rc;
}

/* The ceiling of [jobs], and that of the bound, into jc and bc. */
static void
ceilings(const struct config_jobs *j, const struct caps_bound *b,
    struct ceiling *jc, struct ceiling *bc, char *prefix, size_t size)
{
	jc->prefix = "[jobs] max_";
	jc->priority = &j->max_priority;
	jc->guarantee_kind = j->max_guarantee_kind;
	jc->guarantee_value = j->max_guarantee_value;
	jc->limit_kind = j->max_limit_kind;
	jc->limit_value = j->max_limit_value;
	/* "default" has no guarantee or priority to give: [jobs]'s hold */
	snprintf(prefix, size, b->named ? "[group %s] " : "[daemon] default_",
	    b->pol.name);
	bc->prefix = prefix;
	bc->priority = b->named ? &b->pol.priority : NULL;
	bc->guarantee_kind = b->named ? b->pol.guarantee_kind : GF_LIMIT_NONE;
	bc->guarantee_value = b->pol.guarantee_value;
	/* a limit of the whole device bounds nothing: past it is all of it */
	bc->limit_kind = b->pol.limit_kind == GF_LIMIT_PERCENT &&
	    b->pol.limit_value >= 10000 ? GF_LIMIT_NONE : b->pol.limit_kind;
	bc->limit_value = b->pol.limit_value;
}

int
caps_hold(const struct config *conf, const struct caps_bound *b,
    const uint64_t *capacity, size_t n, struct gf_group_set *s, char *err,
    size_t errlen)
{
	const struct config_jobs *j = &conf->jobs;
	struct ceiling jc, bc;
	char c[48], prefix[GF_GROUP_LEN + 16];
	int rc, r;

	if (errlen > 0)
		err[0] = '\0';
	if (s->limit_kind == GF_LIMIT_NONE) {
		s->limit_kind = b->pol.limit_kind;
		s->limit_value = b->pol.limit_value;
	}
	if (!s->priority_set) {
		s->priority_set = 1;
		s->priority = 0;
	}
	/* Not a cap to refuse over: the site's word, which nobody's lowers. */
	if (j->unshimmed == POLICY_UNSHIMMED_KILL ||
	    b->pol.unshimmed == POLICY_UNSHIMMED_KILL)
		s->flags |= GF_GROUP_UNSHIMMED_KILL;
	ceilings(j, b, &jc, &bc, prefix, sizeof(prefix));
	if ((rc = ceiling_hold(j, &jc, capacity, n, s, err, errlen)) < 0 ||
	    (r = ceiling_hold(j, &bc, capacity, n, s, err, errlen)) < 0)
		return -1;
	rc = rc ? rc : r;
	if (s->resolver != GF_UNSET && s->resolver <= GF_RESOLVER_SWAP &&
	    !(j->resolvers & 1u << s->resolver)) {
		if ((r = over(j, err, errlen, "resolver", name_resolver(
		    s->resolver), "[jobs] resolvers", resolvers_format(
		    j->resolvers, c, sizeof(c)))) < 0)
			return -1;
		rc = r;
		s->resolver = GF_UNSET;		/* [daemon]'s default */
	}
	return rc;
}
