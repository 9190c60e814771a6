/*
 * gpufracctl's side of the query conversations: connect to the daemon, send
 * one request, collect the streamed records up to the END that counts them.
 */
#ifndef GF_CTL_QUERY_H
#define GF_CTL_QUERY_H

#include <stddef.h>
#include <stdint.h>

#include "gpufrac/proto.h"

/* How long the daemon may stay silent before gpufracctl gives up. */
#define CTL_TIMEOUT_MS	5000

/* A STATUS_REQ's reply. */
struct ctl_status {
	struct gf_status	 daemon;
	struct gf_device_status	*devices;	/* by index */
	size_t			 ndevices;
	struct gf_group_status	*groups;	/* by name, then device */
	size_t			 ngroups;
	struct gf_wall		*walls;		/* the driver's, as the daemon
						   read them back; asked for
						   only where driver limits
						   are on */
	size_t			 nwalls;
};

/*
 * Each query connects to the socket at path, asks, and fills its result.
 * Returns 0, or -1 after printing one line on stderr saying why: the daemon
 * is not reachable, it answered ERROR, stayed silent for CTL_TIMEOUT_MS, or
 * its reply was malformed or not what was asked for. The arrays are
 * malloc'd and the caller's to free (NULL when empty); a ctl_status is
 * freed with ctl_status_free, also after a failed query.
 */
int	ctl_query_status(const char *path, struct ctl_status *st);
void	ctl_status_free(struct ctl_status *st);
int	ctl_query_ps(const char *path, struct gf_client **clients, size_t *n);
int	ctl_query_allocs(const char *path, uint32_t pid,
	    struct gf_alloc **allocs, size_t *n);
/* The events the daemon still holds, oldest first, as it sent them. */
int	ctl_query_events(const char *path, struct gf_event **events,
	    size_t *n);
/* RELOAD_REQ: 0 when the daemon answered OK. */
int	ctl_query_reload(const char *path);
/* SWAP_REQ: 0 once the daemon has swapped pid out (out) or in. */
int	ctl_query_swap(const char *path, uint32_t pid, int out);

/* What ctl_query_events_follow does with the records as they come. */
struct ctl_events_cb {
	/* At EVENT_END: the events the daemon held, as ctl_query_events. */
	int	(*backlog)(const struct gf_event *events, size_t n, void *arg);
	/* Each new EVENT after that, as it comes. */
	int	(*event)(const struct gf_event *ev, void *arg);
	void	*arg;
};

/*
 * EVENTS_REQ with follow set: the events the daemon holds, then each new
 * one as it happens, for as long as the daemon keeps the connection. The
 * reply timeout applies up to EVENT_END, none after. SIGINT and SIGTERM
 * are blocked meanwhile and end the query quietly.
 * Returns 0 after SIGINT or SIGTERM; -1 after one line on stderr when the
 * daemon fails as above or hangs up; -1 and nothing said when a callback
 * returned -1 (the callback's to report).
 */
int	ctl_query_events_follow(const char *path,
	    const struct ctl_events_cb *cb);

#endif
