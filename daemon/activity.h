/*
 * The processes' activity pages (include/gpufrac/activity.h) as the daemon
 * sees them: mapped from the descriptor a HELLO passes, and read for how
 * long each process has left the driver alone. The shim only counts its
 * hooked calls (no clock on its hot path); the daemon looks at the counts
 * every ACTIVITY_LOOK_MS while any page is mapped and notes the time it
 * saw one move, so an idle time is short by at most that period.
 */
#ifndef GF_DAEMON_ACTIVITY_H
#define GF_DAEMON_ACTIVITY_H

#include <stddef.h>
#include <stdint.h>

#define ACTIVITY_LOOK_MS	100

struct arbiter;
struct gf_lease_slot;
struct ledger_client;

/*
 * lc's page from the descriptor fd (taken over: closed either way), and
 * the looks begun. NULL (logged) unless it is a sealed page of this format.
 */
struct gf_activity *activity_map(struct arbiter *a, struct ledger_client *lc,
	    int fd);
/* lc leaves: its page goes. */
void	activity_unmap(struct ledger_client *lc);

/*
 * Milliseconds since lc last called the driver as far as the looks tell:
 * UINT64_MAX if it never has (or has no page), 0 if its count moved since
 * the last look.
 */
uint64_t activity_idle_ms(const struct ledger_client *lc);

/* lc's page's slot for dev, or NULL: no page, or dev not opened. */
struct gf_lease_slot *activity_slot(const struct ledger_client *lc,
	    size_t dev);

/* Shutdown: no more looks. */
void	activity_stop(struct arbiter *a);

#endif
