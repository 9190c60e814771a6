/*
 * The wait resolver's queue: requests that collided with a full device and
 * wait for memory to be freed there, or for their deadline. It owns the
 * waiters and their order; it knows nothing of the ledger or connections.
 *
 * Order. Each device has its own queue, ranked by priority (higher first),
 * then by arrival (earlier first). Arrival numbers are taken by waitq_add
 * from one counter, so equal priorities are served first come, first served.
 *
 * Serving (waitq_serve), called after memory was freed on a device: walk
 * that device's waiters in rank order and grant each one the caller says
 * now fits. The first waiter that waits for the device sets a barrier at
 * its priority: later waiters of the same priority may still be granted if
 * they fit (a free wakes whichever request it satisfies, and one large
 * request does not hold back smaller ones of its rank; it still has its
 * deadline), but no waiter of a strictly lower priority is granted in that
 * walk, so a lower-priority tenant never takes memory a higher-priority one
 * is waiting for. A waiter held by something else than the device (its
 * group's shared limit, which only its group-mates' frees can lift) sets no
 * barrier: it waits for no memory the others could take. A request that
 * could never fit (larger than the device) must be denied at once, not
 * queued: it would hold the barrier until its deadline.
 *
 * Timeouts: deadlines are milliseconds on the caller's monotonic clock
 * (event_now_ms()), 0 for none. The queue keeps them in a heap; the caller
 * arms one timer for waitq_next_deadline() and calls waitq_expire() when it
 * fires. The optional rearm hook given to waitq_init tells the caller each
 * time the earliest deadline changes, so it never polls.
 *
 * Memory. A waiter is allocated by waitq_add and owned by the queue; the
 * pointer stays valid until the waiter is granted, expired, cancelled or
 * removed, and in a callback until that callback returns. Fields are
 * read-only for callers. Allocation failure in waitq_add leaves the queue
 * exactly as it was (the caller denies the request).
 *
 * Re-entry. Callbacks may call waitq_add, waitq_cancel and
 * waitq_remove_owner (a grant whose reply fails may drop its connection):
 * removed waiters are not offered again and are freed when the outermost
 * call returns. Waiters added during a walk may or may not be visited by it.
 * Single-threaded, like the event loop.
 *
 * Costs: n waiters in all, m on the device, p distinct priorities on it.
 * add O(log p + log n) (plus O(p) when a new priority appears), cancel
 * O(log p + log n), serve O(m) callbacks at most, expire O(k log n) for k
 * expired, remove_owner O(n), next_deadline O(1).
 */
#ifndef GF_DAEMON_WAITQ_H
#define GF_DAEMON_WAITQ_H

#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

struct waitq_waiter {
	/* the request, as given to waitq_add */
	void		*owner;		/* the caller's: a connection */
	uint32_t	 seq;		/* the RESERVE's seq */
	size_t		 dev;		/* device index */
	uint64_t	 bytes;
	int32_t		 priority;
	uint64_t	 deadline_ms;	/* monotonic; 0: none */
	uint64_t	 arrival;	/* assigned by waitq_add, increasing */

	/* the queue's */
	TAILQ_ENTRY(waitq_waiter) entry;	/* in its device's rank order */
	struct waitq_waiter *next_dead;		/* freed after the walk */
	size_t		 heap_idx;		/* in the deadline heap */
	int		 dead;			/* granted, expired or removed */
};

/* Called with the earliest deadline after it changed (0: none left). */
typedef void	waitq_rearm_fn(void *arg, uint64_t deadline_ms);
/* Whether w's request fits now: WAITQ_* */
enum {
	WAITQ_WAITS = 0,	/* not yet: it waits for the device */
	WAITQ_FITS,
	WAITQ_HELD,		/* not yet, held by something else: no barrier */
};
typedef int	waitq_fits_fn(void *arg, const struct waitq_waiter *w);
/*
 * w has left the queue: charge and answer it (grant), or deny it (expire).
 * A grant must charge the memory before it returns, so that the next
 * fits call sees it taken.
 */
typedef void	waitq_done_fn(void *arg, const struct waitq_waiter *w);

struct waitq_dev;

struct waitq {
	struct waitq_dev **devs;	/* indexed by device, NULL until used */
	size_t		 ndevs;
	struct waitq_waiter **heap;	/* min-heap by deadline, then arrival */
	size_t		 nheap;
	size_t		 heapcap;
	size_t		 count;		/* live waiters */
	uint64_t	 next_arrival;
	struct waitq_waiter *dead;	/* left the queue, not yet freed */
	int		 busy;		/* depth of walks in progress */
	uint64_t	 armed;		/* the deadline last told to rearm */
	waitq_rearm_fn	*rearm;
	void		*rearm_arg;
};

/* An empty queue; rearm may be NULL. */
void	waitq_init(struct waitq *q, waitq_rearm_fn *rearm, void *rearm_arg);
/* Free every waiter without callbacks (rearm is not called). */
void	waitq_free(struct waitq *q);

/*
 * Queue a request. Returns the waiter, or NULL with errno ENOMEM (or
 * EINVAL for a device index beyond WAITQ_DEV_MAX) and the queue unchanged.
 */
#define WAITQ_DEV_MAX	4096
struct waitq_waiter *waitq_add(struct waitq *q, void *owner, uint32_t seq,
	    size_t dev, uint64_t bytes, int32_t priority,
	    uint64_t deadline_ms);

/* Take w out of the queue without a callback; a no-op if it already left. */
void	waitq_cancel(struct waitq *q, struct waitq_waiter *w);

/* Take out all of owner's waiters without callbacks; returns how many. */
size_t	waitq_remove_owner(struct waitq *q, const void *owner);

/*
 * Memory was freed on dev: grant, in rank order and under the barrier rule
 * above, each waiter for which fits(arg, w) is WAITQ_FITS, calling
 * grant(arg, w) after taking it out of the queue. Returns how many were
 * granted.
 */
size_t	waitq_serve(struct waitq *q, size_t dev, waitq_fits_fn *fits,
	    waitq_done_fn *grant, void *arg);

/*
 * Take out every waiter whose deadline is <= now_ms, earliest deadline
 * first, calling expire(arg, w) for each. Returns how many. Afterwards the
 * rearm hook is always called with the next deadline (0: none), since the
 * caller's timer has just fired.
 */
size_t	waitq_expire(struct waitq *q, uint64_t now_ms, waitq_done_fn *expire,
	    void *arg);

/* The earliest deadline of a queued waiter, or 0 when none has one. */
uint64_t waitq_next_deadline(const struct waitq *q);

/* Live waiters in all, and on dev. */
size_t	waitq_count(const struct waitq *q);
size_t	waitq_count_dev(const struct waitq *q, size_t dev);

/*
 * dev's waiters in rank order: the first with after == NULL, then the one
 * following after; NULL at the end. For status output and tests.
 */
const struct waitq_waiter *waitq_next(const struct waitq *q, size_t dev,
	    const struct waitq_waiter *after);

#endif
