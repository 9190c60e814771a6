/*
 * Which [group] bounds a job: the job's cgroup and owner matched against
 * the files' groups, in their order.
 */
#include <stdio.h>
#include <string.h>

#include "groups.h"
#include "jobbound.h"
#include "match.h"

/* The literal path of the first "cgroup:" rule, into buf; "" if none. */
static void
job_cgroup(const struct gf_group_rule *rules, size_t n, char *buf,
    size_t size)
{
	struct match_rule r;
	char why[128];
	size_t i;
	int found;

	buf[0] = '\0';
	for (i = 0; i < n; i++) {
		if (match_rule_parse(rules[i].rule, &r, why, sizeof(why)) < 0)
			continue;
		found = match_rule_path(&r, buf, size) == 0;
		match_rule_free(&r);
		if (found)
			return;
		buf[0] = '\0';
	}
}

int
jobbound_find(const struct config *conf, const struct gf_group_set *s,
    const struct gf_group_rule *rules, size_t n, struct caps_bound *b,
    char *err, size_t errlen)
{
	char cgroup[GF_RULE_LEN];
	struct config none;
	struct groups files;
	size_t g;

	if (!(s->flags & GF_GROUP_OWNER)) {
		snprintf(err, errlen, "job group '%s' gives no owner (uid, "
		    "gid) to bound it by: its launcher is older than the "
		    "daemon", s->name);
		return -1;
	}
	config_init(&none);	/* the files' groups alone */
	if (groups_build(&files, conf, &none, 0) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	job_cgroup(rules, n, cgroup, sizeof(cgroup));
	g = groups_match(&files, cgroup, s->owner_uid, s->owner_gid);
	if (g > 0)
		config_group_policy(conf, files.sections[g - 1], &b->pol);
	else
		config_default_policy(conf, &b->pol);
	b->named = g > 0;
	groups_free(&files);
	config_free(&none);
	return 0;
}
