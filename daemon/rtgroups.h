/*
 * Run-time groups: the groups that `gpufracctl group set`, the OCI hook
 * and the Slurm plugin create while the daemon runs. They are kept in a
 * config of [group] sections only, and in state_dir/runtime-groups.conf
 * (gpufrac.conf's syntax, written whole and renamed into place) so that
 * they outlive a restart. Every change is made on a copy: the caller
 * checks it, saves it, and only then puts it in force.
 */
#ifndef GF_DAEMON_RTGROUPS_H
#define GF_DAEMON_RTGROUPS_H

#include <stddef.h>

#include "config.h"
#include "gpufrac/proto.h"

/*
 * The state file of conf: state_dir's, else in the directory of conf's
 * socket; into buf. Returns 0, or -1 when it does not fit.
 */
int	rtgroups_path(const struct config *conf, char *buf, size_t size);

/*
 * The run-time groups saved at path into rt (fresh from config_init). A
 * file with errors is logged, moved aside to PATH.bad, and gives none.
 */
void	rtgroups_load(struct config *rt, const char *path);

/*
 * Write rt's groups, then aside's (may be NULL: the groups set aside at
 * start, kept for the next), to path: 0, or -1 with one line in err and
 * path unchanged.
 */
int	rtgroups_save(const struct config *rt, const struct config *aside,
	    const char *path, char *err, size_t errlen);

/*
 * Into out (fresh from config_init): rt with the group s names created or
 * changed as s says; rules (n of them) replace its rules when n > 0. With
 * GF_GROUP_JOB an existing group is replaced whole, and only by the same
 * rules. Returns 0, or -1 with one line in err (a bad name, rule or value;
 * a new group without rules; a job's group over another's) and out empty.
 */
int	rtgroups_set(const struct config *rt, const struct gf_group_set *s,
	    const struct gf_group_rule *rules, size_t n, struct config *out,
	    char *err, size_t errlen);

/*
 * Into out (fresh from config_init): rt without the group name. Returns
 * 0, -1 with err set (ENOMEM), or RTGROUPS_NONE (no such run-time group).
 */
#define RTGROUPS_NONE	(-2)
int	rtgroups_rm(const struct config *rt, const char *name,
	    struct config *out, char *err, size_t errlen);

/* Remove group i of rt (a copy being changed) in place. */
void	rtgroups_drop(struct config *rt, size_t i);

#endif
