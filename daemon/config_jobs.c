/*
 * The [jobs] section of gpufrac.conf: the caps on what a container's
 * annotations or a Slurm step's options may ask of its group.
 */
#include <stdio.h>
#include <string.h>

#include "config_parse.h"
#include "names.h"
#include "units.h"

/* What a job may ask by default: nothing above a configured group. */
void
config_jobs_init(struct config_jobs *j)
{
	memset(j, 0, sizeof(*j));
	j->max_priority = 0;
	j->max_guarantee_kind = GF_LIMIT_BYTES;
	j->max_guarantee_value = 0;
	j->max_limit_kind = GF_LIMIT_NONE;	/* any: a limit is a ceiling */
	j->resolvers = 1u << GF_RESOLVER_FAIL | 1u << GF_RESOLVER_WAIT;
	j->cap = 0;
}

void
key_max_priority(struct parse *p, const char *key, const char *v)
{
	if (int32_parse(v, &p->conf->jobs.max_priority) < 0)
		parse_error(p, "bad priority for '%s': '%s' (expected an "
		    "integer)", key, v);
}

/* A zero however written is no guarantee at all: none may be asked. */
void
key_max_guarantee(struct parse *p, const char *key, const char *v)
{
	struct config_jobs *j = &p->conf->jobs;

	if (guarantee_parse(v, &j->max_guarantee_kind,
	    &j->max_guarantee_value) < 0)
		parse_error(p, "bad size for '%s': '%s' (expected a size such "
		    "as 8Gi or a share such as 50%%)", key, v);
}

/* A cap of zero would refuse every limit: refused as every zero limit. */
void
key_max_limit(struct parse *p, const char *key, const char *v)
{
	struct config_jobs *j = &p->conf->jobs;

	(void)parse_limit(p, key, v, &j->max_limit_kind, &j->max_limit_value);
}

/* Resolver names separated by white space or commas; at least one. */
void
key_resolvers(struct parse *p, const char *key, const char *v)
{
	char word[16];
	uint32_t set = 0;
	size_t n;
	int r;

	for (v += strspn(v, " \t,"); *v != '\0'; v += strspn(v, " \t,")) {
		n = strcspn(v, " \t,");
		snprintf(word, sizeof(word), "%.*s", (int)n, v);
		if (n >= sizeof(word) || (r = name_resolver_parse(word)) < 0) {
			parse_error(p, "unknown resolver '%.*s' for '%s' "
			    "(expected fail, wait, preempt or swap)", (int)n,
			    v, key);
			return;
		}
		set |= 1u << r;
		v += n;
	}
	if (set == 0) {
		parse_error(p, "no resolver for '%s' (name at least one of "
		    "fail, wait, preempt, swap)", key);
		return;
	}
	p->conf->jobs.resolvers = set;
}

/* A site's word over every job's: kill, whatever the job asked. */
void
key_jobs_unshimmed(struct parse *p, const char *key, const char *v)
{
	(void)parse_unshimmed(p, key, v, &p->conf->jobs.unshimmed);
}

void
key_over_cap(struct parse *p, const char *key, const char *v)
{
	if (strcmp(v, "refuse") == 0)
		p->conf->jobs.cap = 0;
	else if (strcmp(v, "cap") == 0)
		p->conf->jobs.cap = 1;
	else
		parse_error(p, "bad value for '%s': '%s' (expected refuse or "
		    "cap)", key, v);
}
