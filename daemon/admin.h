/*
 * Who may administer the daemon (reload, swap, groups, limits): root, and
 * the members of admin_group, by primary or supplementary group, in the
 * daemon's own pid namespace. The groups come from the kernel:
 * SO_PEERGROUPS on the peer's socket, or where the kernel lacks it (before
 * Linux 4.13) the "Groups:" line of /proc/PID/status. A container has a pid
 * namespace of its own, and its root is not the machine's: a process in a
 * container that was given the socket (CDI) may not lift its own quota.
 */
#ifndef GF_DAEMON_ADMIN_H
#define GF_DAEMON_ADMIN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"

/* admin_allowed's verdicts. */
enum {
	ADMIN_DENIED = 0,	/* neither root nor in admin_group */
	ADMIN_ALLOWED,
	ADMIN_FOREIGN,		/* one of them, in another pid namespace */
};

/*
 * Whether the peer connected on fd, whose SO_PEERCRED said pid, uid and
 * gid, may administer under conf: ADMIN_*. Never allows on a doubt.
 */
int	admin_allowed(const struct config *conf, int fd, uint32_t pid,
	    uint32_t uid, uint32_t gid);

/*
 * Whether gid is on the "Groups:" line of status, the text of a
 * /proc/PID/status file. 0 when it is not, or there is no such line.
 */
int	admin_status_has_gid(const char *status, gid_t gid);

/*
 * The reason a peer refused with verdict is given: "CMD: permission
 * denied (...)".
 */
void	admin_denied_msg(const struct config *conf, const char *cmd,
	    int verdict, char *msg, size_t msglen);

#endif
