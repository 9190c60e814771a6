/*
 * gpufrac.conf: the [daemon], [jobs], [device X] and [group NAME] sections,
 * read
 * with inih from the main file and then every *.conf in its ".d" directory,
 * into a fresh struct config. Checks only what the files themselves say;
 * what depends on the machine (does device 3 exist, does a reserve fit it,
 * do the guarantees fit a device) is the caller's.
 */
#ifndef GF_DAEMON_CONFIG_H
#define GF_DAEMON_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/un.h>

#include "gpufrac/proto.h"
#include "match.h"
#include "metrics_addr.h"
#include "policy.h"

#ifndef GPUFRAC_SYSCONFDIR
#define GPUFRAC_SYSCONFDIR	"/etc"		/* the Makefile's SYSCONFDIR */
#endif
#define CONFIG_PATH_DEFAULT	GPUFRAC_SYSCONFDIR "/gpufrac/gpufrac.conf"
#define CONFIG_SOCKET_LEN	sizeof(((struct sockaddr_un *)0)->sun_path)
#define CONFIG_GROUP_LEN	64
#define RTGROUPS_FILE		"runtime-groups.conf"	/* in state_dir */
#define WALLS_FILE		"driver-walls"	/* in state_dir; shorter */

/* One [device X] section (merged over all files). */
struct config_device {
	int		by_uuid;	/* [device GPU-...], else [device N] */
	uint8_t		uuid[GF_UUID_LEN];
	uint32_t	ordinal;
	int		reserve_set;
	uint64_t	reserve;
	char		*where;		/* "FILE:LINE" of the section header */
	char		*reserve_where;	/* "FILE:LINE" of reserve, if set */
};

/* One [group NAME] section (merged over all files, like [device]). */
struct config_group {
	struct group_policy pol;	/* defaults filled in after loading */
	struct match_rule *rules;	/* any of them puts a process in */
	size_t		nrules;
	char		*where;		/* "FILE:LINE" of the section header */
	char		*guarantee_where; /* "FILE:LINE" of guarantee, if set */
	int		limit_set;	/* else [daemon] default_limit */
	int		resolver_set;	/* else [daemon] default_resolver */
	int		wait_timeout_set; /* else [daemon] wait_timeout */
	int		swap_engine_set; /* else [daemon] swap_engine */
	int		unshimmed_set;	/* else [daemon] unshimmed */
	int		transient;	/* a run-time group that goes with its
					   cgroups (GF_GROUP_TRANSIENT) */
	int		owner_set;	/* a job's group: its user's [group]
					   bounds it (GF_GROUP_OWNER) */
	uint32_t	owner_uid;
	uint32_t	owner_gid;
	uint64_t	gone_since_ms;	/* reap.c's: its cgroups missing since */
	uint64_t	cgroup_ino;	/* reap.c's: its cgroup's identity when
					   first seen (cgroup_identity); 0: not yet */
};

#define LEASE_IDLE_MIN_MS	100	/* lease_idle's least */
#define LOOK_INTERVAL_MIN_MS	100	/* look_interval's least */
#define LOOK_INTERVAL_DEFAULT_MS 1000

/*
 * [jobs]: how far a container's annotations or a Slurm step's options
 * (GROUP_SET with GF_GROUP_JOB) may go; caps.h holds a request to them.
 */
struct config_jobs {
	int32_t		max_priority;		/* default 0 */
	uint32_t	max_guarantee_kind;	/* GF_LIMIT_*; default 0 bytes */
	uint64_t	max_guarantee_value;
	uint32_t	max_limit_kind;		/* GF_LIMIT_NONE (default): any */
	uint64_t	max_limit_value;
	uint32_t	resolvers;		/* 1 << GF_RESOLVER_* allowed;
						   default fail and wait */
	int		cap;			/* over a cap: 1 capped, 0
						   refused (the default) */
	uint32_t	unshimmed;		/* POLICY_UNSHIMMED_*: at least
						   this for every job's group */
};
#define CONFIG_CONNS_PER_UID	256		/* max_connections_per_uid */
#define CONFIG_CONNS_MAX	1000000
#define CONFIG_OUTQ_LIMIT	(256ull << 20)	/* output_queue_limit */
#define CONFIG_OUTQ_MIN		(1ull << 20)

struct config {
	char		socket[CONFIG_SOCKET_LEN];
	char		state_dir[CONFIG_SOCKET_LEN];	/* "": the socket's
							   directory */
	unsigned	socket_mode;
	char		admin_group[CONFIG_GROUP_LEN];	/* "" = root only */
	int		admin_gid_valid;	/* admin_group exists */
	gid_t		admin_gid;
	int		log_level;		/* LOG_LVL_* */
	uint32_t	default_limit_kind;	/* GF_LIMIT_BYTES or _PERCENT */
	uint64_t	default_limit_value;
	uint32_t	default_resolver;	/* GF_RESOLVER_* */
	uint64_t	wait_timeout_ms;
	int		client_may_raise;	/* of the group "default" */
	int		lend_guarantees;	/* unused guarantees are lent */
	uint64_t	swap_min_idle_ms;	/* the swap resolver's victims have
						   been idle this long */
	uint32_t	swap_engine;		/* GF_ENGINE_*, of groups that
						   do not say */
	uint32_t	unshimmed;		/* POLICY_UNSHIMMED_*, of groups
						   that do not say */
	uint64_t	swap_host_limit;	/* host memory swapped-out
						   processes may hold; 0: any */
	uint64_t	swap_move_timeout_ms;	/* the copy engine's shim answers
						   MOVE within this, plus its
						   bytes at 1 GB/s (swap.h) */
	uint64_t	swap_keep_ms;		/* the pinned host memory a
						   process keeps once back in
						   is given back after this */
	uint64_t	lease_idle_ms;		/* a lease not drawn from this long
						   is taken back */
	uint64_t	release_timeout_ms;	/* the longest a departed process's
						   charge waits for the driver */
	uint64_t	look_interval_ms;	/* between the driver's looks at
						   NVML (driver.c), on average */
	char		metrics_listen[METRICS_LISTEN_LEN]; /* "": no metrics */
	struct config_jobs jobs;
	uint32_t	max_conns_per_uid;	/* open connections of one
						   non-root uid; 0: no cap */
	uint64_t	outq_limit;		/* all output queues together */
	struct config_device *devices;
	size_t		ndevices;
	struct config_group *groups;	/* in order of first appearance */
	size_t		ngroups;
};

/*
 * Receives each problem as one line "FILE:LINE: message" (or, for a file
 * or directory that cannot be read, "cannot open 'FILE': reason").
 */
typedef void	config_report_fn(const char *line, void *arg);

/* The built-in defaults (what an absent file means). */
void	config_init(struct config *c);
/* Frees what config_load allocated; c may be loaded again after init. */
void	config_free(struct config *c);

/*
 * Read path, then path.d/ *.conf in lexical order, into c (fresh from
 * config_init). A later file overrides what an earlier one set; within one
 * file a key set twice is an error. With optional, a path that does not
 * exist means built-in defaults (its drop-ins are still read). Every
 * problem goes to report; warnings (an admin_group that does not exist) go
 * to the log. When the files are free of errors, what only all of them
 * together say is checked last: every group has a rule, its guarantee is
 * within its limit where both are of one kind, percentage guarantees add
 * up to at most 100%; a group's unset keys take [daemon]'s values.
 * Returns the number of errors: 0 means c is complete. On errors c holds a
 * partial result that the caller frees and discards.
 */
int	config_load(struct config *c, const char *path, int optional,
	    config_report_fn *report, void *arg);

/*
 * Read the [group] sections of one file, path, into c (fresh from
 * config_init): the run-time groups' state file (rtgroups.h). Any other
 * section is an error; a missing file has no groups. The groups' unset
 * keys stay unset (config_group_policy fills them in from the [daemon] in
 * force). Returns the number of errors, as config_load.
 */
int	config_load_groups(struct config *c, const char *path,
	    config_report_fn *report, void *arg);

/*
 * g's policy with its unset keys (limit, resolver, wait_timeout,
 * swap_engine) taken
 * from c's [daemon], into out.
 */
void	config_group_policy(const struct config *c,
	    const struct config_group *g, struct group_policy *out);

/* Whether name may name a group: letters, digits, '.', '_', '-'. */
int	config_group_name_ok(const char *name);

/*
 * Append a group called name to c, with the defaults of a [group] section;
 * where ("FILE:LINE", malloc'd) is taken over. Returns the group, or NULL
 * on ENOMEM (where freed).
 */
struct config_group *config_group_new(struct config *c, const char *name,
	    char *where);

/*
 * g's settings back to a new [group] section's defaults; its name, rules
 * and where are kept.
 */
void	config_group_reset(struct config_group *g);

/* A deep copy of src into dst: 0, or -1 (ENOMEM, dst left empty). */
int	config_group_copy(struct config_group *dst,
	    const struct config_group *src);

/* Write g as a [group] section that config_load_groups reads back. */
void	config_group_write(FILE *fp, const struct config_group *g);

/* Free one group's allocations. */
void	config_group_free(struct config_group *g);

/* The policy of the implicit group "default", from [daemon]. */
void	config_default_policy(const struct config *c, struct group_policy *p);

#endif
