/*
 * The groups in force, as the ledger numbers them: 0 is the implicit group
 * "default" (settings from [daemon]), then the run-time groups (rtgroups.h)
 * that no file group of the same name shadows, then each [group] section
 * of the files in their order. Run-time groups are matched first: each
 * names one container's or job step's cgroup, the most specific rule
 * there is. Which group a process belongs to.
 */
#ifndef GF_DAEMON_GROUPS_H
#define GF_DAEMON_GROUPS_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "policy.h"

struct groups {
	const struct config *conf;	/* the files: [daemon] and [group] */
	const struct config_group **sections;	/* groups 1..n, in order */
	size_t		n;
	size_t		nruntime;	/* the first nruntime are run-time */
};

/*
 * The groups of conf and of rt (the run-time groups, in a config of
 * groups only) into gs, which points into both until groups_free: they
 * must outlive it and not change meanwhile. A shadowed run-time group is
 * logged with log_shadowed. Returns 0, or -1 (ENOMEM).
 */
int	groups_build(struct groups *gs, const struct config *conf,
	    const struct config *rt, int log_shadowed);
void	groups_free(struct groups *gs);

/* How many groups there are, "default" included. */
size_t	groups_count(const struct groups *gs);

/* Their policies, default first, into out (groups_count entries). */
void	groups_policies(const struct groups *gs, struct group_policy *out);

/*
 * The group of a process with this cgroup path ("" if unknown), uid and
 * primary gid: the first group with a rule that matches, else 0.
 */
size_t	groups_match(const struct groups *gs, const char *cgroup,
	    uint32_t uid, uint32_t gid);

/*
 * The group that bounds group (an index as above) with its limit and
 * guarantee, or 0 for none: for a job's group (a run-time group with an
 * owner), the first [group] of the files that its processes would match
 * without it, tested with its first "cgroup:" rule's path and its owner's
 * uid and gid, as jobbound.h finds it at the job's door.
 */
size_t	groups_bound(const struct groups *gs, size_t group);

/* The file group named name, or NULL. */
const struct config_group *groups_in_files(const struct config *conf,
	    const char *name);

#endif
