/*
 * The driver's walls: its own memory limits per cgroup (r615), set for
 * each group that names a cgroup (cgroup:PATH, as OCI containers' and
 * Slurm steps' run-time groups do) to the group's limit (hard) and
 * guarantee (soft) on each device, so that they hold for every process in
 * the cgroup, shim or not. A group matched otherwise (uid, gid, patterns)
 * gets none, and a cgroup whose processes a group before its own may
 * hold (by uid, gid or a pattern) gets none either: its wall would be
 * the wrong group's. Where walled cgroups nest, the outer wall is its
 * group's limit plus the inner groups': the driver counts the subtree.
 * Policy over nvml_limits.h.
 */
#ifndef GF_DAEMON_MEMLIMITS_H
#define GF_DAEMON_MEMLIMITS_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "gpufrac/proto.h"

struct arbiter;
struct memlimit_wall;

struct memlimits {
	int		*usable;	/* per device: limits can be set */
	char		(*why)[GF_DLIM_REASON_LEN];	/* per device: why not */
	struct memlimit_wall *walls;	/* in force, or that may be */
	size_t		 nwalls;
	int		 journal_read;	/* the journal taken in (at start) */
	char		 journal[PATH_MAX];	/* its path; "": none */
};

/*
 * After a start, reload or run-time group change: look for the driver's
 * functions again, and make its walls what the groups in force want:
 * cleared where a group went or no longer names a cgroup, set where one
 * is new or its limit or guarantee changed. A wall that cannot be set or
 * cleared is a driver-limit event, nothing more.
 */
void	memlimits_apply(struct arbiter *a);

/*
 * At each look of the driver: every wall in force read back from the
 * driver, and set again where it is missing or differs (a cgroup made
 * again at the same path has none: the driver keys walls by directory).
 */
void	memlimits_check(struct arbiter *a);

/* DEVICE_STATUS's driver_limits, driver_groups and driver_reason. */
void	memlimits_status(const struct arbiter *a, size_t dev,
	    struct gf_device_status *ds);

/*
 * Wall i of those in force (or that may be), in order, read back from the
 * driver into *w: 1, or 0 past the last.
 */
int	memlimits_wall(const struct arbiter *a, size_t i, struct gf_wall *w);

/* At stop: clear every wall the daemon set, and free the state. */
void	memlimits_free(struct arbiter *a);

#endif
