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
	struct gf_device_status	*devices;
	size_t			 ndevices;
};

/*
 * Each query connects to the socket at path, asks, and fills its result.
 * Returns 0, or -1 after printing one line on stderr saying why: the daemon
 * is not reachable, it answered ERROR, stayed silent for CTL_TIMEOUT_MS, or
 * its reply was malformed or not what was asked for. The arrays are
 * malloc'd and the caller's to free (NULL when empty).
 */
int	ctl_query_status(const char *path, struct ctl_status *st);
int	ctl_query_ps(const char *path, struct gf_client **clients, size_t *n);
int	ctl_query_allocs(const char *path, uint32_t pid,
	    struct gf_alloc **allocs, size_t *n);

#endif
