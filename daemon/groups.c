/*
 * From the configuration's [group] sections to the ledger's group numbers:
 * the table of policies, and the first section whose rules match a process.
 */
#include "groups.h"
#include "match.h"

size_t
groups_count(const struct config *conf)
{
	return conf->ngroups + 1;
}

void
groups_policies(const struct config *conf, struct group_policy *out)
{
	size_t i;

	config_default_policy(conf, &out[0]);
	for (i = 0; i < conf->ngroups; i++)
		out[i + 1] = conf->groups[i].pol;
}

size_t
groups_match(const struct config *conf, const char *cgroup, uint32_t uid,
    uint32_t gid)
{
	struct match_subject s = { cgroup ? cgroup : "", uid, gid };
	size_t i, j;

	for (i = 0; i < conf->ngroups; i++)
		for (j = 0; j < conf->groups[i].nrules; j++)
			if (match_rule_test(&conf->groups[i].rules[j], &s))
				return i + 1;
	return 0;
}
