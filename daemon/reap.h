/*
 * Transient run-time groups (GF_GROUP_TRANSIENT, made for one container
 * or job step by its cgroup) go when their cgroups do: a container whose
 * runtime never ran its poststop hook, a job step whose slurmstepd died,
 * would otherwise keep its group, and its guarantee, for ever. While any
 * exists, every REAP_EVERY_MS each is looked at; one whose cgroups (the
 * rules that name one literally) have all been gone for REAP_GRACE_MS,
 * and that holds no process, is removed as `gpufracctl group rm` would.
 */
#ifndef GF_DAEMON_REAP_H
#define GF_DAEMON_REAP_H

#define REAP_EVERY_MS	1000
#define REAP_GRACE_MS	2000	/* a cgroup made just after its group */

struct arbiter;

/* The run-time groups changed (or the daemon started): look again. */
void	reap_arm(struct arbiter *a);
void	reap_free(struct arbiter *a);

#endif
