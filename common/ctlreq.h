/*
 * Administrative requests that change the daemon's groups and limits, for
 * every program that makes them: gpufracctl, gpufrac-oci-hook and the
 * Slurm SPANK plugin. A group's settings are built from the words users
 * write (the same words as gpufrac.conf's [group] keys); a request is one
 * connection, its messages, and the daemon's OK or ERROR. Nothing is
 * printed: every failure comes back as one line in err (SOCK_ERR_LEN bytes
 * are enough), for the caller to say where its users look.
 */
#ifndef GF_COMMON_CTLREQ_H
#define GF_COMMON_CTLREQ_H

#include <stddef.h>
#include <stdint.h>

#include "gpufrac/proto.h"

/*
 * How long a request may take, connect and reply together, unless
 * ctlreq_timeout_set says otherwise: a daemon that cannot take the
 * connection (its backlog full) or does not answer fails the request.
 */
#define CTLREQ_TIMEOUT_MS	5000

/* The deadline of every later request, in ms (> 0). */
void	ctlreq_timeout_set(int ms);

/* A GROUP_SET being built, and the rules sent before it. */
struct ctlreq_group {
	struct gf_group_set	 set;
	struct gf_group_rule	 rules[GF_GROUP_RULES_MAX];
	size_t			 nrules;
};

/*
 * Start a group called name with nothing set. Returns 0, or -1 with err
 * set when the name is empty or too long (the daemon checks the rest).
 */
int	ctlreq_group_init(struct ctlreq_group *g, const char *name, char *err,
	    size_t errlen);

/*
 * Set one of the group's keys from its text: "match" (one rule word,
 * added to the others), "cgroup" (a cgroup path, as ctlreq_group_cgroup),
 * "limit", "guarantee" (a size or N%), "priority" (an integer),
 * "resolver", "on_preempt", "wait_timeout" (a duration), "unshimmed"
 * (count or kill: GF_GROUP_UNSHIMMED_KILL).
 * Returns 0, or -1 with err naming the key and the value.
 */
int	ctlreq_group_option(struct ctlreq_group *g, const char *key,
	    const char *value, char *err, size_t errlen);

/*
 * Add the rules that match the cgroup at path and every cgroup below it
 * ("cgroup:PATH" and "cgroup:PATH/ *", glob characters escaped): how a
 * container or a job step is told by the kernel alone. The group becomes
 * transient (GF_GROUP_TRANSIENT): it goes when its cgroup does. The root
 * cgroup, which holds every process, is refused. Returns 0 or -1 with err
 * set.
 */
int	ctlreq_group_cgroup(struct ctlreq_group *g, const char *path,
	    char *err, size_t errlen);

/*
 * Send a request to the daemon on the socket at path and wait for its
 * answer. Each returns 0 when the daemon said OK; CTLREQ_UNREACHABLE with
 * err saying why it could not be asked, or CTLREQ_REFUSED with the
 * daemon's own one line in err.
 */
enum {
	CTLREQ_UNREACHABLE = -1,
	CTLREQ_REFUSED = -2,
	CTLREQ_NO_GROUP = -3,	/* GROUP_RM: the daemon holds no such group */
};

int	ctlreq_group_set(const char *path, const struct ctlreq_group *g,
	    char *err, size_t errlen);
int	ctlreq_group_rm(const char *path, const char *name, char *err,
	    size_t errlen);
int	ctlreq_limit(const char *path, const struct gf_limit_req *r, char *err,
	    size_t errlen);
int	ctlreq_disconnect(const char *path, uint32_t pid, char *err,
	    size_t errlen);

/* The daemon's devices: how many, and the least and most shareable. */
struct ctlreq_devices {
	size_t		n;
	uint64_t	capacity_min;	/* bytes: total - reserve */
	uint64_t	capacity_max;
};

/* Ask the daemon on the socket at path for its devices: 0 or -1. */
int	ctlreq_devices(const char *path, struct ctlreq_devices *d, char *err,
	    size_t errlen);

#endif
