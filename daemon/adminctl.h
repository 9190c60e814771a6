/*
 * The administrators' commands (root and admin_group): RELOAD_REQ,
 * SWAP_REQ, run-time groups (GROUP_RULE, GROUP_SET, GROUP_RM) and one
 * process's limit (LIMIT_REQ). Handlers for dispatch's table, with its
 * contract (dispatch.h): 0, or -1 with why when the connection must go.
 */
#ifndef GF_DAEMON_ADMINCTL_H
#define GF_DAEMON_ADMINCTL_H

#include <stddef.h>

#include "gpufrac/proto.h"

struct arbiter;
struct conn;

int	adminctl_reload(struct arbiter *a, struct conn *c,
	    const struct gf_msg *m, char *why, size_t whylen);
int	adminctl_swap(struct arbiter *a, struct conn *c,
	    const struct gf_msg *m, char *why, size_t whylen);
/* A GROUP_RULE is kept on c for the GROUP_SET that follows. */
int	adminctl_group_rule(struct arbiter *a, struct conn *c,
	    const struct gf_msg *m, char *why, size_t whylen);
int	adminctl_group_set(struct arbiter *a, struct conn *c,
	    const struct gf_msg *m, char *why, size_t whylen);
int	adminctl_group_rm(struct arbiter *a, struct conn *c,
	    const struct gf_msg *m, char *why, size_t whylen);
int	adminctl_limit(struct arbiter *a, struct conn *c,
	    const struct gf_msg *m, char *why, size_t whylen);

#endif
