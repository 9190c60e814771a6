/*
 * Who a counted process is now (issue 39): uid, gid and cgroup are the
 * process's to change (setresuid, a write to cgroup.procs), so the daemon
 * reads them again from /proc, with the process's pidfd held, at each of
 * the driver's looks, at each reload and before a process is taken as a
 * victim. One whose identity changed goes, with its memory, to the group
 * its new identity matches (event `regrouped`, naming both groups).
 */
#ifndef GF_DAEMON_IDENTITY_H
#define GF_DAEMON_IDENTITY_H

#include <stdint.h>

struct arbiter;
struct ledger_client;

/*
 * A pid is not a process (issue 39 B): the record of the process that
 * holds pid now, one whose process lives (its pidfd says so; without
 * one, whose connection is open and whose start time is pid's), never a
 * departed one's, whose pid may have gone to another. NULL: none.
 */
struct ledger_client *identity_holder(struct arbiter *a, uint32_t pid);

/*
 * Whether lc's process, which has exited, has left its pid to another
 * (a live process holds it and started at another time): what NVML
 * lists under that pid then says nothing of lc.
 */
int	identity_pid_reused(const struct ledger_client *lc);

/*
 * Read lc's identity again and put it in the group it now matches.
 * Nothing is read of a process that has exited or of one without a
 * pidfd (its figures stay as they were). Returns 1 when it moved to
 * another group, else 0.
 */
int	identity_refresh(struct arbiter *a, struct ledger_client *lc);

/*
 * identity_refresh for every client whose process lives. Returns how
 * many moved (their limits are to be told again).
 */
int	identity_refresh_all(struct arbiter *a);

#endif
