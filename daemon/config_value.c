/*
 * One value of gpufrac.conf checked, for config.c and the sections'
 * readers (config_daemon.c, config_group.c, config_jobs.c): a resolver,
 * an action, a duration, a limit, yes or no, an engine, what to do with
 * unshimmed processes; and the "FILE:LINE: message" a bad one reports.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "config_parse.h"
#include "names.h"
#include "proto.h"
#include "units.h"

void
parse_error(struct parse *p, const char *fmt, ...)
{
	char msg[512], line[PATH_MAX + sizeof(msg) + 32];
	va_list ap;

	p->nerrors++;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(line, sizeof(line), "%s:%u: %s", p->file, p->line, msg);
	p->report(line, p->arg);
}

char *
parse_where(const struct parse *p)
{
	char *s;

	if (asprintf(&s, "%s:%u", p->file, p->line) < 0)
		return NULL;
	return s;
}

int
parse_resolver(struct parse *p, const char *key, const char *v,
    uint32_t *out)
{
	int r = name_resolver_parse(v);

	if (r < 0) {
		parse_error(p, "unknown resolver '%s' for '%s' (expected "
		    "fail, wait, preempt or swap)", v, key);
		return -1;
	}
	*out = (uint32_t)r;
	return 0;
}

int
parse_preempt(struct parse *p, const char *key, const char *v, uint32_t *out)
{
	int a = name_on_preempt_parse(v);

	if (a < 0) {
		parse_error(p, "unknown action '%s' for '%s' (expected kill, "
		    "none or swap)", v, key);
		return -1;
	}
	*out = (uint32_t)a;
	return 0;
}

int
parse_duration(struct parse *p, const char *key, const char *v,
    uint64_t *out)
{
	uint64_t ms;

	if (duration_parse(v, &ms) < 0) {
		parse_error(p, "bad duration for '%s': '%s' (expected e.g. "
		    "30s, 500ms or 2m)", key, v);
		return -1;
	}
	if (ms > UINT32_MAX) {
		parse_error(p, "bad duration for '%s': '%s' (at most %llums)",
		    key, v, (unsigned long long)UINT32_MAX);
		return -1;
	}
	*out = ms;
	return 0;
}

int
parse_limit(struct parse *p, const char *key, const char *v, uint32_t *kind,
    uint64_t *value)
{
	int r = limit_parse(v, kind, value);

	if (r == LIMIT_ZERO)
		parse_error(p, "bad limit for '%s': '%s' (a limit must be "
		    "positive)", key, v);
	else if (r < 0)
		parse_error(p, "bad limit for '%s': '%s' (expected a size "
		    "such as 8Gi or a share such as 50%%)", key, v);
	return r < 0 ? -1 : 0;
}

int
parse_yesno(struct parse *p, const char *key, const char *v, int *out)
{
	if (strcmp(v, "yes") == 0)
		*out = 1;
	else if (strcmp(v, "no") == 0)
		*out = 0;
	else {
		parse_error(p, "bad value for '%s': '%s' (expected yes or no)",
		    key, v);
		return -1;
	}
	return 0;
}

int
parse_swap_engine(struct parse *p, const char *key, const char *v,
    uint32_t *out)
{
	if (strcmp(v, "checkpoint") == 0)
		*out = GF_ENGINE_CHECKPOINT;
	else if (strcmp(v, "copy") == 0)
		*out = GF_ENGINE_COPY;
	else {
		parse_error(p, "unknown engine '%s' for '%s' (expected copy "
		    "or checkpoint)", v, key);
		return -1;
	}
	return 0;
}

int
parse_unshimmed(struct parse *p, const char *key, const char *v,
    uint32_t *out)
{
	if (strcmp(v, "count") == 0)
		*out = POLICY_UNSHIMMED_COUNT;
	else if (strcmp(v, "kill") == 0)
		*out = POLICY_UNSHIMMED_KILL;
	else {
		parse_error(p, "bad value for '%s': '%s' (expected count or "
		    "kill)", key, v);
		return -1;
	}
	return 0;
}
