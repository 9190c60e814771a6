/*
 * A process's cgroup as the kernel reports it in /proc/PID/cgroup. Shared
 * by the daemon (who a peer is), the OCI hook and the Slurm plugin (the
 * cgroup a run-time group matches).
 */
#ifndef GF_COMMON_CGROUP_H
#define GF_COMMON_CGROUP_H

#include <stdint.h>

/*
 * The cgroup of pid: the cgroup v2 line ("0::/path") of /proc/PID/cgroup,
 * else the v1 memory controller's, else the first. malloc'd, the caller's
 * to free; "" when the process is gone or unreadable, NULL only on ENOMEM.
 */
char	*cgroup_of_pid(uint32_t pid);

#endif
