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

/*
 * Where the cgroup v2 hierarchy is mounted (the first cgroup2 mount of
 * /proc/self/mountinfo: /sys/fs/cgroup, or /sys/fs/cgroup/unified on a
 * hybrid host), and which cgroup that mount shows (its root, "/" unless
 * a sub-tree is mounted). Returns 0, or -1 with errno (ENOENT: none).
 */
int	cgroup2_mount(char *mnt, size_t mntlen, char *root, size_t rootlen);

/*
 * The directory of the cgroup at path (as cgroup_of_pid gives it) where
 * this process sees the cgroup v2 hierarchy mounted, into dir (size
 * bytes), and how long the mount point's own part of it is in *mntlen
 * (may be NULL). Returns 0, or -1 when it cannot be told (no cgroup2
 * mount, one that does not show path, too long).
 */
int	cgroup_dir(const char *path, char *dir, size_t size, size_t *mntlen);

/*
 * Whether the cgroup at path (as cgroup_of_pid gives it) exists: 1 or 0;
 * -1 when that cannot be told (no cgroup2 mount, or one that does not
 * show path).
 */
int	cgroup_exists(const char *path);

/*
 * The identity of the cgroup at path now: its directory's inode, which
 * is the cgroup's id (kernfs, Linux >= 5.5, never given again in a boot):
 * a cgroup removed and made again at the same path has a new one. 0 when
 * there is none, or it cannot be told.
 */
uint64_t cgroup_identity(const char *path);

#endif
