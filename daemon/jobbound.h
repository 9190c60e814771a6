/*
 * The [group] that bounds a job (issue 39: a job's door narrows, never
 * widens): the first [group] of the files that the job's processes would
 * match without the job's own group, tested as groups_match tests a
 * process, against the job's cgroup (its first "cgroup:" rule's path) and
 * its owner's uid and gid (GF_GROUP_OWNER, which the door reads from what
 * the job cannot write). Pure: no I/O.
 */
#ifndef GF_DAEMON_JOBBOUND_H
#define GF_DAEMON_JOBBOUND_H

#include <stddef.h>

#include "caps.h"
#include "config.h"
#include "gpufrac/proto.h"

/*
 * Into *b: the policy of that [group] (named 1), else [daemon]'s default
 * (named 0). rules are s's n GROUP_RULEs. Returns 0, or -1 with one line
 * in err when s gives no owner (a door of an earlier release).
 */
int	jobbound_find(const struct config *conf, const struct gf_group_set *s,
	    const struct gf_group_rule *rules, size_t n, struct caps_bound *b,
	    char *err, size_t errlen);

#endif
