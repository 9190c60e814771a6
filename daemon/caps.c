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
 * One setting over its cap: refused (-1, err says why), or capped (1,
 * what was capped added to err, after "; " if it holds a note already).
 */
static int
over(const struct config_jobs *j, char *err, size_t errlen,
    const char *what, const char *asked, const char *key, const char *cap)
{
	size_t n = j->cap ? strlen(err) : 0;
	const char *sep = n > 0 ? "; " : "";

	if (strcmp(key, "resolvers") != 0 && !j->cap)
		snprintf(err, errlen, "%s %s is above [jobs] %s %s", what,
		    asked, key, cap);
	else if (!j->cap)
		snprintf(err, errlen, "resolver '%s' is not in [jobs] %s "
		    "(%s)", asked, key, cap);
	else if (strcmp(key, "resolvers") != 0)
		snprintf(err + n, errlen - n, "%s%s %s capped to %s ([jobs] "
		    "%s)", sep, what, asked, cap, key);
	else
		snprintf(err + n, errlen - n, "%sresolver '%s' not in [jobs] "
		    "%s: [daemon]'s default_resolver instead", sep, asked, key);
	return j->cap ? CAPS_CAPPED : -1;
}

int
caps_hold(const struct config *conf, const uint64_t *capacity, size_t n,
    struct gf_group_set *s, char *err, size_t errlen)
{
	const struct config_jobs *j = &conf->jobs;
	char a[32], c[48];
	int rc = 0;

	if (errlen > 0)
		err[0] = '\0';
	if (s->limit_kind == GF_LIMIT_NONE) {
		s->limit_kind = conf->default_limit_kind;
		s->limit_value = conf->default_limit_value;
	}
	if (!s->priority_set) {
		s->priority_set = 1;
		s->priority = 0;
	}
	/* Not a cap to refuse over: the site's word, which nobody's lowers. */
	if (j->unshimmed == POLICY_UNSHIMMED_KILL)
		s->flags |= GF_GROUP_UNSHIMMED_KILL;
	if (s->priority > j->max_priority) {
		snprintf(a, sizeof(a), "%" PRId32, s->priority);
		snprintf(c, sizeof(c), "%" PRId32, j->max_priority);
		if ((rc = over(j, err, errlen, "priority", a, "max_priority",
		    c)) < 0)
			return -1;
		s->priority = j->max_priority;
	}
	if (s->guarantee_kind != GF_LIMIT_NONE && amount_over(
	    s->guarantee_kind, s->guarantee_value, j->max_guarantee_kind,
	    j->max_guarantee_value, capacity, n)) {
		if ((rc = over(j, err, errlen, "guarantee", amount_format(
		    s->guarantee_kind, s->guarantee_value, a, sizeof(a)),
		    "max_guarantee", amount_format(j->max_guarantee_kind,
		    j->max_guarantee_value, c, sizeof(c)))) < 0)
			return -1;
		s->guarantee_kind = j->max_guarantee_kind;
		s->guarantee_value = j->max_guarantee_value;
	}
	if (amount_over(s->limit_kind, s->limit_value, j->max_limit_kind,
	    j->max_limit_value, capacity, n)) {
		if ((rc = over(j, err, errlen, "limit", amount_format(
		    s->limit_kind, s->limit_value, a, sizeof(a)), "max_limit",
		    amount_format(j->max_limit_kind, j->max_limit_value, c,
		    sizeof(c)))) < 0)
			return -1;
		s->limit_kind = j->max_limit_kind;
		s->limit_value = j->max_limit_value;
	}
	if (s->resolver != GF_UNSET && s->resolver <= GF_RESOLVER_SWAP &&
	    !(j->resolvers & 1u << s->resolver)) {
		if ((rc = over(j, err, errlen, "resolver", name_resolver(
		    s->resolver), "resolvers", resolvers_format(
		    j->resolvers, c, sizeof(c)))) < 0)
			return -1;
		s->resolver = GF_UNSET;		/* [daemon]'s default */
	}
	return rc;
}
