/*
 * Transient run-time groups (GF_GROUP_TRANSIENT, made for one container
 * or job step by its cgroup) go when their cgroups do: a container whose
 * runtime never ran its poststop hook, a job step whose slurmstepd died,
 * would otherwise keep its group, and its guarantee, for ever. While any
 * exists, every REAP_EVERY_MS each is looked at; one whose cgroups (the
 * rules that name one literally) have all been gone for REAP_GRACE_MS,
 * and that holds no process, is removed as `gpufracctl group rm` would.
 *
 * A group is its cgroup's, not its path's (issue 39): the cgroup's
 * identity (cgroup_identity) is noted when the group is set, or when its
 * cgroup is first seen. A new cgroup at the old path is a new job: the old
 * group goes at the next look, whatever it holds (the processes there
 * are the new cgroup's), and at once when the new job's group is set.
 */
#ifndef GF_DAEMON_REAP_H
#define GF_DAEMON_REAP_H

#define REAP_EVERY_MS	1000
#define REAP_GRACE_MS	2000	/* a cgroup made just after its group */

struct arbiter;
struct config;
struct config_group;

/*
 * Note the identity of the cgroup g (transient) was made for, if not yet
 * and its cgroup is there: again=1 for a group set anew, whose cgroup is
 * the one at its path now.
 */
void	reap_identify(struct config_group *g, int again);

/*
 * Drop from rt (a copy being changed) the transient groups whose cgroup
 * path is g's but whose cgroup is not g's (gone, a new one made there):
 * logged by name.
 */
void	reap_replaced_drop(struct config *rt, const struct config_group *g);

/* The run-time groups changed (or the daemon started): look again. */
void	reap_arm(struct arbiter *a);
void	reap_free(struct arbiter *a);

#endif
