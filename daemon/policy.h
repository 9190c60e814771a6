/*
 * A group's policy: what the configuration says about a group of
 * processes, as config.c reads it (a [group] section, or [daemon] for the
 * implicit group "default") and the ledger applies it.
 */
#ifndef GF_DAEMON_POLICY_H
#define GF_DAEMON_POLICY_H

#include <stdint.h>

#include "gpufrac/proto.h"

#define POLICY_DEFAULT_GROUP	GF_GROUP_DEFAULT
#define POLICY_KILL_GRACE_MS	10000

/* What a group does with its processes that hold memory without the shim
   (unshimmed.h): count them in its use, or also kill those past limits. */
enum {
	POLICY_UNSHIMMED_COUNT = 0,
	POLICY_UNSHIMMED_KILL,
};

struct group_policy {
	char		name[GF_GROUP_LEN];
	/*
	 * 0: the limit is the group's, shared by all its processes on a
	 * device. 1 ("default"): it is each process's own.
	 */
	int		per_process;
	uint32_t	limit_kind;	/* GF_LIMIT_BYTES or _PERCENT */
	uint64_t	limit_value;
	uint32_t	guarantee_kind;	/* GF_LIMIT_BYTES (0: none) or _PERCENT */
	uint64_t	guarantee_value;
	int32_t		priority;
	uint32_t	resolver;	/* GF_RESOLVER_* */
	uint32_t	on_preempt;	/* GF_PREEMPT_* */
	uint64_t	wait_timeout_ms;
	uint64_t	kill_grace_ms;
	uint32_t	swap_engine;	/* GF_ENGINE_*: how host swap moves it */
	/* A process's own GPUFRAC_MEMORY_LIMIT is its limit, even above
	 * the group's, and the group's limit does not hold it back. */
	int		client_may_raise;
	int		runtime;	/* a run-time group (rtgroups.h) */
	uint32_t	unshimmed;	/* POLICY_UNSHIMMED_* */
};

#endif
