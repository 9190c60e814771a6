/*
 * Collisions and their resolvers (DESIGN.md §4): a request within its
 * limits that does not fit the device is denied (fail), queued until
 * memory comes back or its deadline passes (wait), or queued while
 * lower-priority processes are made to give memory back (preempt). Owns
 * the daemon's wait queue, its one deadline timer, and the preemptions
 * under way (SIGTERM sent, SIGKILL after kill_grace).
 */
#ifndef GF_DAEMON_RESOLVE_H
#define GF_DAEMON_RESOLVE_H

#include <stddef.h>
#include <stdint.h>

struct arbiter;
struct conn;
struct ledger_client;
struct waitq_waiter;

#define RESOLVE_PREEMPT_SLACK_MS 5000	/* a preempting request waits at
					   least kill_grace + this */

/* Before anything else of a: the decision log, the queue. 0 or -1. */
int	resolve_init(struct arbiter *a);
/* Drop the waiters (unanswered), the timers and the log. */
void	resolve_free(struct arbiter *a);

/*
 * c's RESERVE (seq) of size on dev collided: answer it by its group's
 * resolver, a DENY now or a WAIT now and a GRANT or DENY later. Returns 0,
 * or -1 with why when a reply to c could not be sent.
 */
int	resolve_collision(struct arbiter *a, struct conn *c, uint32_t seq,
	    size_t dev, uint64_t size, char *why, size_t whylen);

/*
 * c's RESERVE fits its own limit but not its group's shared limit, for
 * what its group-mates hold. fail denies it; wait, preempt and swap queue
 * it like a collision (a group neither preempts nor swaps itself), woken
 * by a group-mate's free. (One that the group's limit could never hold
 * besides what c holds is beyond c's own limit, refused before.) As
 * resolve_collision.
 */
int	resolve_group_limit(struct arbiter *a, struct conn *c, uint32_t seq,
	    size_t dev, uint64_t size, char *why, size_t whylen);

/*
 * Queue c's request for up to timeout_ms (0: no deadline) and say so with
 * WAIT (GRANT or DENY follow). -1 (why) if the WAIT could not be sent.
 */
int	resolve_queue(struct arbiter *a, struct conn *c, uint32_t seq,
	    size_t dev, uint64_t size, uint64_t timeout_ms, char *why,
	    size_t whylen);

/*
 * Where waiter w stands: WAITQ_FITS; WAITQ_HELD by its own or its group's
 * limit (only its group's frees can lift it: it waits for no device
 * memory); or WAITQ_WAITS for the device.
 */
int	resolve_waiter_state(const struct arbiter *a,
	    const struct waitq_waiter *w);

/* Whether any request waits for device memory (not only for a limit). */
int	resolve_device_waiters(const struct arbiter *a);

/*
 * lc was just granted memory on dev, where before bytes were lent (0 when
 * not lending): if it borrowed from unused guarantees, say so (a lend
 * event).
 */
void	resolve_lent(struct arbiter *a, const struct ledger_client *lc,
	    size_t dev, uint64_t before);

/*
 * Whether a new request of priority on dev must queue behind a waiter of
 * higher priority (which the memory it would take is owed to).
 */
int	resolve_queued_above(const struct arbiter *a, size_t dev,
	    int32_t priority);

/*
 * Memory came back (a free, a rollback, a smaller commit, a departure, a
 * reload, a swap): grant the waiters that fit now, then let host swap
 * decide what to move (swap_pump). Safe to call from anywhere, its own
 * callbacks included (the walk is then repeated).
 */
void	resolve_serve(struct arbiter *a);

/*
 * c is closing: its waiters go unanswered and its client (if any) shows
 * as running. A preemption of the client goes on until
 * resolve_client_gone: a process may exit after its connection closes.
 */
void	resolve_conn_gone(struct arbiter *a, struct conn *c);

/* lc leaves the ledger: its preemption (the kill_grace timer) ends. */
void	resolve_client_gone(struct arbiter *a, struct ledger_client *lc);

#endif
