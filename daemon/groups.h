/*
 * The groups in force, as the ledger numbers them: 0 is the implicit group
 * "default" (settings from [daemon]), then each [group] section in the
 * order the files gave them. Which group a process belongs to.
 */
#ifndef GF_DAEMON_GROUPS_H
#define GF_DAEMON_GROUPS_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "policy.h"

/* How many groups conf makes: its sections and "default". */
size_t	groups_count(const struct config *conf);

/* Their policies, default first, into out (groups_count entries). */
void	groups_policies(const struct config *conf, struct group_policy *out);

/*
 * The group of a process with this cgroup path ("" if unknown), uid and
 * primary gid: the first section with a rule that matches, else 0.
 */
size_t	groups_match(const struct config *conf, const char *cgroup,
	    uint32_t uid, uint32_t gid);

#endif
