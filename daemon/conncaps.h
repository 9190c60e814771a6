/*
 * How many connections the daemon takes, sized on its descriptors (issue
 * 38 G): so that no one uid, nor all the others together, can take the
 * last of them, and root and admin_group always find some. Pure.
 */
#ifndef GF_DAEMON_CONNCAPS_H
#define GF_DAEMON_CONNCAPS_H

#include <stdint.h>

#define CONNCAPS_OWN_FDS	64	/* the daemon's own: listener, epoll,
					   timers, NVML, metrics, files, the
					   spare kept for refusing */
#define CONNCAPS_FDS_PER_CONN	2	/* the socket and its peer's pidfd */
#define CONNCAPS_RESERVE_MIN	4	/* connections kept for root and
					   admin_group, at the least */

struct conncaps {
	uint32_t	conns;		/* connections the descriptors allow */
	uint32_t	reserve;	/* of them, only root's and admin_group's */
	uint32_t	total;		/* of them, everyone else's together */
	uint32_t	per_uid;	/* of them, one uid's (not root's) */
};

/*
 * The caps under a descriptor limit of nofile, with max_connections_per_
 * uid configured (0: none): total = conns - reserve, per_uid at most half
 * of total, so that one uid leaves room for another and for root, and no
 * more than configured.
 */
void	conncaps_size(uint64_t nofile, uint32_t configured,
	    struct conncaps *caps);

#endif
