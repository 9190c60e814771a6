/*
 * From the configuration's [group] sections and the run-time groups to the
 * ledger's group numbers: the table of policies, and the first group whose
 * rules match a process.
 */
#include <stdlib.h>
#include <string.h>

#include "groups.h"
#include "log.h"
#include "match.h"

const struct config_group *
groups_in_files(const struct config *conf, const char *name)
{
	size_t i;

	for (i = 0; i < conf->ngroups; i++)
		if (strcmp(conf->groups[i].pol.name, name) == 0)
			return &conf->groups[i];
	return NULL;
}

int
groups_build(struct groups *gs, const struct config *conf,
    const struct config *rt, int log_shadowed)
{
	const struct config_group *file;
	size_t i;

	gs->conf = conf;
	gs->n = gs->nruntime = 0;
	gs->sections = calloc(rt->ngroups + conf->ngroups + 1,
	    sizeof(*gs->sections));
	if (gs->sections == NULL)
		return -1;
	for (i = 0; i < rt->ngroups; i++) {
		file = groups_in_files(conf, rt->groups[i].pol.name);
		if (file == NULL)
			gs->sections[gs->n++] = &rt->groups[i];
		else if (log_shadowed)
			log_warnx("run-time group '%s' is shadowed by the group "
			    "of the same name at %s: the file's is in force",
			    file->pol.name, file->where);
	}
	gs->nruntime = gs->n;
	for (i = 0; i < conf->ngroups; i++)
		gs->sections[gs->n++] = &conf->groups[i];
	return 0;
}

void
groups_free(struct groups *gs)
{
	free(gs->sections);
	gs->sections = NULL;
	gs->n = gs->nruntime = 0;
}

size_t
groups_count(const struct groups *gs)
{
	return gs->n + 1;
}

void
groups_policies(const struct groups *gs, struct group_policy *out)
{
	size_t i;

	config_default_policy(gs->conf, &out[0]);
	for (i = 0; i < gs->n; i++) {
		config_group_policy(gs->conf, gs->sections[i], &out[i + 1]);
		out[i + 1].runtime = i < gs->nruntime;
	}
}

/* The first group from sections[first] on that matches s, else 0. */
static size_t
match_from(const struct groups *gs, size_t first,
    const struct match_subject *s)
{
	size_t i, j;

	for (i = first; i < gs->n; i++)
		for (j = 0; j < gs->sections[i]->nrules; j++)
			if (match_rule_test(&gs->sections[i]->rules[j], s))
				return i + 1;
	return 0;
}

size_t
groups_match(const struct groups *gs, const char *cgroup, uint32_t uid,
    uint32_t gid)
{
	struct match_subject s = { cgroup ? cgroup : "", uid, gid };

	return match_from(gs, 0, &s);
}

size_t
groups_bound(const struct groups *gs, size_t group)
{
	const struct config_group *g;
	char cgroup[GF_RULE_LEN] = "";
	struct match_subject s = { cgroup, 0, 0 };
	size_t i;

	if (group == 0 || group > gs->nruntime)
		return 0;
	g = gs->sections[group - 1];
	if (!g->owner_set)
		return 0;
	for (i = 0; i < g->nrules; i++)
		if (match_rule_path(&g->rules[i], cgroup, sizeof(cgroup)) == 0)
			break;
	if (i == g->nrules)
		cgroup[0] = '\0';
	s.uid = g->owner_uid;
	s.gid = g->owner_gid;
	return match_from(gs, gs->nruntime, &s);
}
