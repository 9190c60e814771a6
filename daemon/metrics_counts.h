/*
 * The metrics' counters: what the decision log tells a follower (every
 * grant, denial, wait, wake-up, timeout, preemption, kill and swap), per
 * group, with how long each wait lasted; and the few counts that are no
 * events (reloads, which arbiter.c counts; connections and protocol
 * errors, which control.c does). Pure: no I/O, no clock (the caller passes the time).
 *
 * Contract:
 *  - Counters only grow, from the daemon's start; nothing is reset on a
 *    reload.
 *  - Rows are per group name, in order of first event. At most
 *    METRICS_GROUPS_MAX: when full, rows of groups the alive callback
 *    says are gone make room first (asked again only after
 *    METRICS_PRUNE_EVERY more groups found no row); past that, events
 *    count under the row METRICS_GROUP_OTHER, a name no group may have.
 *  - A wait is timed from its "wait" event to the "wake" or "timeout"
 *    of the same process, device and size (the oldest such wait first).
 *    A waiter that ends otherwise (its process left) is never observed;
 *    at most METRICS_WAITS_MAX waits are followed, the oldest dropped.
 *  - Single-threaded, like the event loop.
 */
#ifndef GF_DAEMON_METRICS_COUNTS_H
#define GF_DAEMON_METRICS_COUNTS_H

#include <stddef.h>
#include <stdint.h>

#include "gpufrac/proto.h"

#define METRICS_EV_KINDS	(GF_EV_UNRECORDED + 1)	/* by GF_EV_* */
#define METRICS_WAIT_BUCKETS	12
#define METRICS_GROUPS_MAX	256
#define METRICS_GROUP_OTHER	"(other)"
#define METRICS_PRUNE_EVERY	256
#define METRICS_WAITS_MAX	4096

/* The wait histogram's upper bounds, in ms (Prometheus "le", seconds). */
extern const uint64_t metrics_wait_bounds_ms[METRICS_WAIT_BUCKETS];

/* One group's counts. */
struct metrics_group_counts {
	char		name[GF_GROUP_LEN];
	uint64_t	events[METRICS_EV_KINDS];	/* by GF_EV_* */
	uint64_t	bytes[METRICS_EV_KINDS];	/* their bytes */
	uint64_t	duration_ms[METRICS_EV_KINDS];	/* swaps' */
	uint64_t	wait_le[METRICS_WAIT_BUCKETS];	/* waits within each
							   bound (cumulative) */
	uint64_t	wait_count;			/* waits observed */
	uint64_t	wait_sum_ms;
};

/* A wait being timed. */
struct metrics_wait {
	uint32_t	pid;
	uint8_t		uuid[GF_UUID_LEN];
	uint64_t	bytes;
	uint64_t	start_ms;
};

/* Whether the group called name still exists. */
typedef int	metrics_alive_fn(const char *name, void *arg);

struct metrics_counts {
	/* control.c's own counts, copied in as a page is rendered */
	uint64_t	connections;		/* accepted */
	uint64_t	protocol_errors;	/* connections closed for one */
	uint64_t	conns_refused;		/* max_connections_per_uid */
	uint64_t	conns_dropped;		/* output_queue_limit */
	uint64_t	outq_bytes;		/* output queued now */
	uint64_t	moved_ignored;		/* swap.c's, unasked MOVEDs */
	/* incremented by their owners */
	uint64_t	reloads;		/* applied (arbiter.c) */
	uint64_t	reload_failures;	/* refused, old one kept */
	int		reload_failed;		/* the last one was refused */
	/* from the decision log */
	uint64_t	events;			/* every event seen */
	struct metrics_group_counts *groups;
	size_t		ngroups;
	size_t		groupcap;
	uint64_t	full_misses;		/* groups found no row, full */
	size_t		hint;			/* the last event's row */
	struct metrics_wait *waits;		/* oldest first */
	size_t		nwaits;
	size_t		waitcap;
	metrics_alive_fn *alive;
	void		*alive_arg;
};

/* Empty counts; alive (may be NULL: never prune) is asked when full. */
void	metrics_counts_init(struct metrics_counts *mc, metrics_alive_fn *alive,
	    void *arg);
void	metrics_counts_free(struct metrics_counts *mc);

/*
 * Count event e, seen at now_ms (monotonic). Never fails: without memory
 * for a new row, the event counts under METRICS_GROUP_OTHER if that row
 * exists, else only in mc->events; a wait without memory is not timed.
 */
void	metrics_counts_event(struct metrics_counts *mc, const struct gf_event *e,
	    uint64_t now_ms);

/* The row of group name, or NULL if it has none. */
const struct metrics_group_counts *metrics_counts_group(
	    const struct metrics_counts *mc, const char *name);

#endif
