/*
 * Who may administer the daemon (reload, and later limit and swap): root,
 * and the members of admin_group, by primary or supplementary group. The
 * groups come from the kernel: SO_PEERGROUPS on the peer's socket, or where
 * the kernel lacks it (before Linux 4.13) the "Groups:" line of
 * /proc/PID/status.
 */
#ifndef GF_DAEMON_ADMIN_H
#define GF_DAEMON_ADMIN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"

/*
 * Whether the peer connected on fd, whose SO_PEERCRED said pid, uid and
 * gid, may administer under conf. Never allows on a doubt.
 */
int	admin_allowed(const struct config *conf, int fd, uint32_t pid,
	    uint32_t uid, uint32_t gid);

/*
 * Whether gid is on the "Groups:" line of status, the text of a
 * /proc/PID/status file. 0 when it is not, or there is no such line.
 */
int	admin_status_has_gid(const char *status, gid_t gid);

/* The reason a refused peer is given: "CMD: permission denied (...)". */
void	admin_denied_msg(const struct config *conf, const char *cmd,
	    char *msg, size_t msglen);

#endif
