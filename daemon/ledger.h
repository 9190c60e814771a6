/*
 * The ledger: each device's shareable capacity, the groups of clients and
 * their limits, and each client's charge on each device, with the
 * allocation records behind every charge. Pure arithmetic: no I/O besides
 * log lines about broken invariants, no clock (callers pass the time), no
 * sockets, no policy beyond limits (a collision is reported, not
 * resolved; which group a client belongs to is the caller's to say).
 *
 * Lending (lend set): memory guaranteed to a group and not used by it may
 * be charged to the groups that can give it back, borrowers, whose
 * on_preempt is kill or swap; the others never touch it. What is lent on
 * a device is the part of the unused guarantees that the device's charges
 * leave no room for:
 *   lent = max(0, used + sum over groups h of max(0, guarantee_h - used_h)
 *              - capacity)
 * It is held by the borrowers' memory above their own guarantees, and
 * ledger_borrowed says by whom.
 *
 * Invariants, per client and device:
 *   usage.used + usage.host == usage.pending + usage.lease + sum of the
 *                  client's allocation sizes (host: swapped out, 0
 *                  otherwise)
 *   device.used  == sum over clients of usage.used, device.host of .host
 *   group.share[dev].used (.host) == sum over its clients of usage.used
 *                  (.host)
 *   group.share[dev].nested == sum over the groups h it bounds of
 *                  share[dev].used + share[dev].host of h
 * A swapped-out client (on_host) holds nothing on the device: its charges
 * are counted as host bytes, and its limits still count them.
 * Nothing ever wraps below zero: a subtraction that would (a broken
 * invariant, or a client returning more than it holds) is clamped at zero
 * and logged.
 */
#ifndef GF_DAEMON_LEDGER_H
#define GF_DAEMON_LEDGER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include "gpufrac/activity.h"
#include "gpufrac/proto.h"
#include "policy.h"
#include "ptrmap.h"

/* a + b, or UINT64_MAX past it: tallies of client figures saturate. */
static inline uint64_t
add_saturated(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

#define LEDGER_GROUP_DEFAULT	POLICY_DEFAULT_GROUP

struct ledger_device {
	uint8_t		uuid[GF_UUID_LEN];
	char		name[GF_NAME_LEN];
	uint32_t	index;		/* driver ordinal, all devices visible */
	uint64_t	total;		/* as the driver reports */
	uint64_t	reserve;	/* kept back by configuration */
	uint64_t	capacity;	/* total - reserve */
	uint64_t	used;		/* charged to clients */
	uint64_t	host;		/* theirs, swapped out to host memory */
	uint64_t	foreign;	/* held on it by no client: other
					   programs, the driver (driver.c) */
	uint32_t	nclients;	/* clients that opened it */
};

/* One live allocation, as the client committed it. */
struct ledger_alloc {
	uint64_t	ptr;
	uint64_t	size;
	uint64_t	time_ms;	/* when it was committed */
	uint32_t	kind;		/* GF_KIND_* */
	uint32_t	device;		/* index into ledger.devices */
};

/* A client's standing on one device. */
struct ledger_usage {
	int		opened;		/* DEVICE_OPEN accepted */
	uint32_t	req_kind;	/* the limit it asked for: GF_LIMIT_* */
	uint64_t	req_value;
	uint64_t	limit;		/* effective limit, bytes */
	uint64_t	limit_sent;	/* what the client was last told: */
	uint64_t	capacity_sent;	/* DEVICE_INFO's limit and capacity */
	uint64_t	overhead_sent;	/* and its "context" charge, and */
	uint64_t	taken_sent;	/* what others hold of it (view.c) */
	uint64_t	used;		/* pending + lease + committed allocations */
	uint64_t	pending;	/* reserved, not yet committed */
	uint64_t	lease;		/* charged ahead of allocations the
					   client makes without asking */
	uint64_t	host;		/* swapped out: what used was */
	/* lease.c's, not the ledger's */
	uint32_t	ordinal;	/* the client's ordinal for the device,
					   its lease slot (once opened) */
	uint64_t	lease_target;	/* the size its next lease is given */
	uint64_t	lease_grant_ms;	/* when it was last given one */
	uint64_t	lease_draws;	/* the slot's draws at the last look */
	/* trust.c's, not the ledger's */
	uint64_t	nvml_bytes;	/* NVML's figure for the process, */
	uint64_t	nvml_ms;	/* taken then (monotonic), or 0 */
	int		past_said;	/* an event said its word was believed
					   past its limits */
	uint64_t	granted;	/* what an earlier connection of its
					   process was granted here, not yet
					   charged again (granted.h) */
	uint64_t	context_known;	/* and its context here, as that one
					   recorded it | GRANT_CONTEXT_KNOWN,
					   until the device is opened; 0 */
	/* overhead.c's */
	uint64_t	rereg_held;	/* what its page said its allocations
					   held as it first opened the device
					   (once: 0 until then), */
	uint64_t	rereg_until;	/* not measured against NVML until they
					   are charged, or then (monotonic);
					   0: measured */
};

/* A group's standing on one device. */
struct ledger_share {
	uint64_t	limit;		/* the group's (per_process: each's) */
	uint64_t	guarantee;
	uint64_t	used;		/* by all its clients */
	uint64_t	host;		/* theirs, swapped out */
	uint32_t	nclients;	/* its clients that opened the device */
	uint64_t	nested;		/* held by the groups it bounds, on
					   the device and out to host */
};

struct ledger_group {
	struct group_policy pol;
	struct ledger_share *share;	/* one per device */
	uint32_t	nmembers;	/* its clients */
	size_t		bound;		/* the group whose limit also holds
					   this one's memory, and whose
					   guarantee holds its guarantee;
					   0: none (ledger_groups_bound) */
};

struct ledger_client {
	TAILQ_ENTRY(ledger_client) entry;
	uint32_t	pid;
	uint32_t	uid;
	uint32_t	gid;
	uint32_t	state;		/* GF_STATE_* */
	int		pidfd;		/* its process (pidfd.h), the only way
					   to signal it; borrowed from its
					   connection, then its departure;
					   -1: none (it has exited) */
	char		*cgroup;	/* "/user.slice/...", or "" if unknown */
	uint64_t	start_ms;	/* its process's start (pidfd.h): with
					   pid, who it is; 0 if unknown */
	char		version[GF_VERSION_LEN];	/* its shim's (HELLO) */
	size_t		group;		/* index into ledger.groups */
	struct ledger_usage *usage;	/* one per device */
	struct ptrmap	allocs;		/* ptr -> struct ledger_alloc */
	uint32_t	nwaiting;	/* its requests in the wait queue */
	int		preempting;	/* sent SIGTERM, its charge not yet
					   returned */
	int		departing;	/* connection closed, the process not
					   yet exited: its charge stays */
	int		on_host;	/* swapped out: charges are host bytes */
	uint32_t	nmanaged;	/* managed allocations, which the
					   checkpoint API cannot move */
	/* activity.c's, not the ledger's */
	struct gf_activity *act;	/* its activity page, or NULL */
	uint64_t	act_calls;	/* its count of calls at the last look */
	uint64_t	act_ms;		/* when the look saw it move, or 0 */
	/* swap.c's */
	int		swap;		/* SWAP_* (swap.h) */
	uint32_t	swap_engine;	/* GF_ENGINE_* that took it out (or
					   is taking it): the way back, its
					   group's engine reloaded or not */
	uint64_t	swapped_ms;	/* when it went out (monotonic) */
	int		swap_skip;	/* not to be swapped again this round */
	int		swap_parked;	/* out by an admin's hand: it comes
					   back when it asks, not on its own */
	uint32_t	swapin_asks;	/* SWAP_IN requests waiting */
	uint32_t	swapin_unseen;	/* of them, GF_SWAPIN_UNSEEN's */
	int		unmovable_said;	/* an event said it cannot be moved */
	uint64_t	host_kept;	/* pinned host memory its shim holds
					   for moves (MOVED's kept) */
	int		host_dropping;	/* asked to give it back */
	uint64_t	host_drop_ms;	/* when (monotonic) */
	uint64_t	host_in_ms;	/* back in with it since (monotonic) */
	uint32_t	move_late_id;	/* a move given up on, whose MOVED
					   may still come; 0: none */
	int		taken_in;	/* a move in was taken as in past its
					   deadline: its page may say it
					   failed after (swap_page.c) */
	uint64_t	move_bound;	/* its footprint when last asked to
					   move: what it may say it keeps */
	uint64_t	swap_rereg;	/* taken as out at HELLO: what it says
					   it re-registers (UINT64_MAX until
					   it opens a device); 0: charged */
	/* conversation.c's */
	int		reserved_once;	/* a RESERVE came: its registration
					   (LEASE_RESTORE) is over */
	/* granted.c's */
	int		regrant_only;	/* its word past usage.granted is
					   never believed (granted.h) */
	int		page_out;	/* its page's word that the copy
					   engine left it out is believed,
					   until it is known to be in */
	int		refused;	/* its word was refused: nothing of
					   its is kept (trust_refuse) */
	/* grantrec.c's */
	uint32_t	grant_slot;	/* its record in the grants' file,
					   + 1; 0: none */
	/* unshimmed.c's: NULL but for a process without the shim (state
	   GF_STATE_UNSHIMMED, no connection) */
	struct unshim	*unshim;
};

TAILQ_HEAD(ledger_clients, ledger_client);

/*
 * Told after each change to a client's charges, lease or place (device
 * or host), and before it is dropped (gone set): the record of what it
 * was granted (grantrec.h) follows the ledger.
 */
typedef void	ledger_watch_fn(void *arg, struct ledger_client *c, int gone);

struct ledger {
	struct ledger_device *devices;
	size_t		ndevices;
	struct ledger_group *groups;	/* [0]: where new clients start */
	size_t		ngroups;
	struct ledger_clients clients;	/* in order of arrival */
	size_t		nclients;
	int		lend;		/* unused guarantees are lent to the
					   groups that can give them back */
	ledger_watch_fn	*watch;		/* NULL: nobody watches */
	void		*watch_arg;
};

/* What ledger_reserve decided. */
enum {
	LEDGER_GRANT = 0,
	LEDGER_LIMIT,		/* beyond the client's own limit */
	LEDGER_GROUP_LIMIT,	/* beyond its group's shared limit */
	LEDGER_COLLISION,	/* within the limits, the device is full */
	LEDGER_NOT_OPEN,	/* the client has not opened the device */
};

/* Which group a client belongs to, for ledger_groups_set. */
typedef size_t	ledger_group_fn(const struct ledger_client *c, void *arg);

/*
 * An empty ledger with one group, "default": 100% of each device per
 * process, no guarantee, priority 0, fail. Returns 0, or -1 (ENOMEM).
 */
int	ledger_init(struct ledger *l);
/* Drops every client, then the groups and the devices. */
void	ledger_free(struct ledger *l);

/*
 * Add a device (before any client exists); reserve 0, capacity = total.
 * name is truncated to fit. Returns its index, or -1 (ENOMEM, or clients
 * exist: EBUSY).
 */
int	ledger_device_add(struct ledger *l, const uint8_t uuid[GF_UUID_LEN],
	    uint32_t index, const char *name, uint64_t total);
/* The device's index in l->devices, or -1. */
int	ledger_device_find(const struct ledger *l,
	    const uint8_t uuid[GF_UUID_LEN]);

/*
 * Configuration. Each recomputes the limits it affects; a client already
 * above its new limit keeps what it holds and gets no more. A reserve
 * above the device's total is clamped to it (callers validate).
 */
void	ledger_set_reserve(struct ledger *l, size_t dev, uint64_t reserve);
/* The limit of group 0 ("default"). */
void	ledger_set_default_limit(struct ledger *l, uint32_t kind,
	    uint64_t value);

/*
 * Replace the groups with n new ones (pols[0] first: where new clients
 * start), put every client in group group_of(client, arg) (an index into
 * pols; out of range means 0), and recompute every share and limit.
 * Returns 0, or -1 (ENOMEM) with nothing changed.
 */
int	ledger_groups_set(struct ledger *l, const struct group_policy *pols,
	    size_t n, ledger_group_fn *group_of, void *arg);

/*
 * Bounds (a job's group within its user's [group]: groups.h): bound[g]
 * is the group whose shared limit holds g's memory as well as its own
 * clients' (so that the jobs of one user together stay within it), or 0
 * for none; entries that cannot bound (g itself, out of range, "default"
 * or a per-process limit, a group bounded in turn) count as 0. The
 * bound's guarantee is shared out: each group it bounds, in their order,
 * keeps of its own guarantee no more than what the bound has left, and
 * the bound keeps the rest for its own clients. Call after
 * ledger_groups_set; NULL: none.
 */
void	ledger_groups_bound(struct ledger *l, const size_t *bound);

/*
 * The effective limit on dev of a client of group asking for (kind,
 * value), resolved against the device's capacity: the group's limit if it
 * asks for nothing (GF_LIMIT_NONE), else what it asks for, no more than
 * the group's limit, or with the group's client_may_raise no more than
 * the capacity.
 */
uint64_t ledger_limit(const struct ledger *l, size_t group, size_t dev,
	    uint32_t kind, uint64_t value);

/*
 * Whether the guarantees of the groups pols[0..n) fit capacity, the
 * shareable bytes of device d (its total less a reserve that may not be
 * in force yet). Returns 0, or -1 with one line in msg naming the device
 * and each group's guarantee.
 */
int	ledger_guarantees_fit(const struct ledger_device *d,
	    uint64_t capacity, const struct group_policy *pols, size_t n,
	    char *msg, size_t msglen);

/*
 * A new client in group 0, state running. cgroup is copied (NULL =
 * unknown). Returns NULL on ENOMEM.
 */
struct ledger_client *ledger_client_new(struct ledger *l, uint32_t pid,
	    uint32_t uid, uint32_t gid, const char *cgroup);
/* Move c to group (an index into l->groups), charges and limits too. */
void	ledger_client_group(struct ledger *l, struct ledger_client *c,
	    size_t group);
/* Return the client's whole charge on every device and free it. */
void	ledger_client_drop(struct ledger *l, struct ledger_client *c);
/* The first client with pid after `after` (NULL: from the start), or NULL. */
struct ledger_client *ledger_client_find(const struct ledger *l,
	    uint32_t pid, const struct ledger_client *after);
/* What the client holds on all devices together. */
uint64_t ledger_client_used(const struct ledger *l,
	    const struct ledger_client *c);

/*
 * An administrator's limit for c on dev, which replaces what c asked for:
 * (kind, value) resolved against the device. Returns 0, or -1 when c has
 * not opened dev or its group allows it less (nothing changed); *allowed
 * gets the most its group allows on dev either way.
 */
int	ledger_client_limit(struct ledger *l, struct ledger_client *c,
	    size_t dev, uint32_t kind, uint64_t value, uint64_t *allowed);

/* Open dev for c (again: the new request replaces the old). */
void	ledger_open(struct ledger *l, struct ledger_client *c, size_t dev,
	    uint32_t kind, uint64_t value);

/*
 * What a group's clients may still take on dev: the shareable capacity,
 * less what everybody holds (foreign memory included), less what the
 * other groups are guaranteed and do not use (a guarantee is capacity
 * reserved for its group):
 *   capacity - used - foreign
 *            - sum over other groups h of max(0, guarantee_h - used_h)
 * 0 when that is negative. A borrower while lending: capacity - used -
 * foreign.
 */
uint64_t ledger_available(const struct ledger *l, size_t group, size_t dev);

/*
 * The most a group's clients could ever take on dev, should everybody
 * else free all they hold: capacity less the other groups' guarantees
 * (a borrower while lending: the capacity).
 */
uint64_t ledger_available_ever(const struct ledger *l, size_t group,
	    size_t dev);

/* Whether group borrows unused guarantees (lend set, on_preempt not none). */
int	ledger_borrows(const struct ledger *l, size_t group);

/*
 * Whether size more on dev keeps c's group within its guarantee there: a
 * request the group is owed, taken back from borrowers if need be.
 */
int	ledger_within_guarantee(const struct ledger *l,
	    const struct ledger_client *c, size_t dev, uint64_t size);

/* What is lent on dev (the formula above). */
uint64_t ledger_lent(const struct ledger *l, size_t dev);

/*
 * Who holds what is lent on dev: borrowed[g] for each group g (ngroups
 * entries), the borrowers' memory above their guarantees counted in the
 * order it would be taken back (lowest priority first, then the most
 * above its guarantee, then the group's index) until the lent bytes are
 * accounted for; 0 for the others. The entries add up to ledger_lent
 * (less, only when a reload left groups that do not borrow holding more
 * than the memory nobody is guaranteed).
 */
void	ledger_borrowed(const struct ledger *l, size_t dev, uint64_t *borrowed);

/*
 * Whether size on dev may be charged to c now: within c's limit, then its
 * group's shared limit (unless the group's limit is per process, or c
 * asked for its own limit in a group whose clients may raise it) with the
 * memory of the groups it bounds, then its bound's shared limit with all
 * that bound holds (LEDGER_GROUP_LIMIT both), then within
 * ledger_available for its group. Returns LEDGER_GRANT or why not;
 * charges nothing.
 */
int	ledger_admit(const struct ledger *l, const struct ledger_client *c,
	    size_t dev, uint64_t size);

/*
 * Charge size on dev to c if ledger_admit allows it; returns LEDGER_GRANT
 * (charged, as pending) or why not (nothing charged).
 */
int	ledger_reserve(struct ledger *l, struct ledger_client *c, size_t dev,
	    uint64_t size);

/*
 * Turn a reserve into an allocation of size at ptr: the pending `reserved`
 * becomes `size` (reserved 0: an allocation that already exists, charged
 * whatever the limit). A ptr already recorded is replaced. Returns 0, -1
 * with errno EINVAL when dev is not open, or ENOMEM (the charge stands, the
 * record is lost).
 */
int	ledger_commit(struct ledger *l, struct ledger_client *c, size_t dev,
	    uint64_t ptr, uint64_t reserved, uint64_t size, uint32_t kind,
	    uint64_t now_ms);

/*
 * The most ledger_admit would grant c on dev now (0 if dev is not open):
 * its limit, its group's, and the device, less what each holds; never
 * memory lent from unused guarantees, which a lease (its one user) is no
 * reason to borrow.
 */
uint64_t ledger_headroom(const struct ledger *l, const struct ledger_client *c,
	    size_t dev);

/* Of the charges on a device, the unused parts of leases (lease.c's). */
struct ledger_spare {
	uint64_t	own;		/* the client's own lease */
	uint64_t	group;		/* its group's clients', its own too */
	uint64_t	device;		/* every client's */
};

/*
 * The most c could hold on dev, the others holding what they hold now
 * (0 if dev is not open): its limit; its group's shared limit, where
 * ledger_admit holds it to that, less what the group's others hold; what
 * the device leaves its group (ledger_available) plus what c holds on it.
 * The spare bytes of sp count as free: a request they stand in the way
 * of takes them back (lease_reclaim). What c holds itself does not
 * change it.
 */
uint64_t ledger_reach(const struct ledger *l, const struct ledger_client *c,
	    size_t dev, const struct ledger_spare *sp);

/*
 * Whether n more bytes charged on dev can be counted: what the device
 * holds (on it and out to host) stays below 2^64, and so does every
 * group's and client's part of it. A charge made whatever the limits (a
 * COMMIT or LEASE_RESTORE re-registering what a process holds) must ask
 * first: no real device holds that much, and a total that saturated
 * would no longer be the sum of its parts.
 */
int	ledger_countable(const struct ledger *l, size_t dev, uint64_t n);

/*
 * Whether c could hold n bytes more on dev at all: what it holds there
 * and n together within the device's total. A re-registration (COMMIT,
 * LEASE_RESTORE) trusted as sent must ask this first: more than the
 * device holds is no process's, and would lock the others out (issue 22).
 */
int	ledger_holdable(const struct ledger *l, const struct ledger_client *c,
	    size_t dev, uint64_t n);

/*
 * Charge n more to c's lease on dev, whatever the limits (the caller has
 * checked ledger_headroom, or the lease is held already); or return up to
 * n of it, and how much that was.
 */
void	ledger_lease_grow(struct ledger *l, struct ledger_client *c,
	    size_t dev, uint64_t n);
uint64_t ledger_lease_shrink(struct ledger *l, struct ledger_client *c,
	    size_t dev, uint64_t n);

/* Return a pending reserve of size. -1 (EINVAL) when dev is not open. */
int	ledger_rollback(struct ledger *l, struct ledger_client *c, size_t dev,
	    uint64_t size);

/*
 * Return the allocation at ptr and drop its record. Returns 0, or -1 when
 * the client has no allocation there.
 */
int	ledger_release(struct ledger *l, struct ledger_client *c, uint64_t ptr);

/* Move all of c's charges to the host tallies (swapped out), or back. */
void	ledger_swap_out(struct ledger *l, struct ledger_client *c);
/*
 * The same, but keep[d] bytes (at most what it holds) stay charged on
 * device d: what the copy engine could not move.
 */
void	ledger_swap_out_keep(struct ledger *l, struct ledger_client *c,
	    const uint64_t *keep);
void	ledger_swap_in(struct ledger *l, struct ledger_client *c);

/* Whether c's host bytes fit ledger_available on every device again. */
int	ledger_swap_in_fits(const struct ledger *l,
	    const struct ledger_client *c);

#endif
