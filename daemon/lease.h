/*
 * Leases (issue 6): memory charged to a client ahead of its allocations,
 * which its shim then allocates and frees without asking (the slot in its
 * activity page, include/gpufrac/activity.h). The daemon sizes each lease
 * when it grants a RESERVE that asks for one, takes a lease's unused part
 * back at once when another request needs it, and takes back leases no
 * one has drawn from for a while.
 *
 * Sizing: a first lease is LEASE_MIN; one granted within LEASE_QUICK_MS of
 * the last is twice as big, up to LEASE_MAX (the faster a process
 * allocates, the fewer requests reach the daemon); one taken back for
 * idleness halves the next. Never beyond what ledger_headroom allows, so
 * limits hold whatever is leased, and none while a request waits on the
 * device.
 */
#ifndef GF_DAEMON_LEASE_H
#define GF_DAEMON_LEASE_H

#include <stddef.h>
#include <stdint.h>

#define LEASE_MIN	(4ull << 20)
#define LEASE_MAX	(1ull << 30)
#define LEASE_QUICK_MS	1000	/* leases asked for this often grow */

struct arbiter;
struct ledger;
struct ledger_client;

/* lc opened dev as its ordinal: the slot of its lease there. */
void	lease_open(struct arbiter *a, struct ledger_client *lc, size_t dev,
	    uint32_t ordinal);

/* Of lc's lease on dev, the bytes not allocated (what its page says). */
uint64_t lease_unused(const struct ledger_client *lc, size_t dev);
/* The same summed over group's clients (SIZE_MAX: every client). */
uint64_t leases_unused(const struct ledger *l, size_t group, size_t dev);

/* Take lc's unused lease on dev back, closing it; the bytes taken. */
uint64_t lease_take(struct arbiter *a, struct ledger_client *lc, size_t dev);
/* The same on every device (lc is about to be swapped out). */
void	lease_take_all(struct arbiter *a, struct ledger_client *lc);

/*
 * lc's request on dev was refused for reason (LEDGER_LIMIT,
 * LEDGER_GROUP_LIMIT, LEDGER_COLLISION): take back the unused leases
 * that stand in its way (its own; its group's; everybody's on dev).
 * Returns the bytes taken: if any, the request is worth admitting again.
 */
uint64_t lease_reclaim(struct arbiter *a, struct ledger_client *lc,
	    size_t dev, int reason);

/* Every lease on every device (limits changed). */
void	lease_reclaim_all(struct arbiter *a);

/*
 * lc's RESERVE on dev, asking for a lease, was granted: lease it more,
 * as much as it is due and the limits allow. Returns its lease now.
 */
uint64_t lease_grant(struct arbiter *a, struct ledger_client *lc, size_t dev);

/*
 * LEASE_RESTORE: lc holds size from a lease of an earlier connection;
 * charged whatever the limits. -1 when lc holds a lease there already
 * (a client that says it twice is not to be believed).
 */
int	lease_restore(struct arbiter *a, struct ledger_client *lc, size_t dev,
	    uint64_t size);

void	lease_free(struct arbiter *a);

#endif
