/*
 * A container's or Slurm step's group request (GROUP_SET with
 * GF_GROUP_JOB) held to the [jobs] caps of gpufrac.conf. The caps are the
 * daemon's, not the hook's or the plugin's: the daemon alone sees every
 * such request, on the configuration in force, with the devices that give
 * a share its size. Pure: no I/O.
 */
#ifndef GF_DAEMON_CAPS_H
#define GF_DAEMON_CAPS_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "gpufrac/proto.h"

/*
 * What bounds a job besides [jobs] (issue 39: a job's door narrows, never
 * widens): the policy of the [group] its processes would match without
 * their job's group (jobbound.h), named 1; or [daemon]'s default, named
 * 0, of which only the limit and unshimmed bound it.
 */
struct caps_bound {
	struct group_policy	pol;
	int			named;
};

/*
 * Hold s to conf's [jobs] and to b on devices of these shareable
 * capacities (n of them; a share and a size are compared on each). An
 * unset limit is b's, an unset priority 0: they are held too; b's
 * unshimmed = kill is s's whatever s asked. Returns 0: s within every
 * cap; CAPS_CAPPED: s lowered to the caps (over_cap = cap), with one line
 * in err saying what was; or -1: s over a cap (over_cap = refuse), err
 * one line naming the cap.
 */
#define CAPS_CAPPED	1
int	caps_hold(const struct config *conf, const struct caps_bound *b,
	    const uint64_t *capacity, size_t n, struct gf_group_set *s,
	    char *err, size_t errlen);

#endif
