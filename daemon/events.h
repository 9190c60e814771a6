/*
 * The decision log: the daemon's last grants, denials, waits, wake-ups,
 * timeouts and preemptions, in a fixed-size ring that gpufracctl events
 * reads, with a log line per decision and followers told of each new one.
 *
 * Contract:
 *  - Records are struct gf_event (the wire record), owned by the ring. A
 *    pointer from events_next stays valid until the next events_add.
 *  - The ring keeps the last `capacity` events; older ones are overwritten.
 *    Events are numbered from 0 in the order added; iteration is oldest
 *    first by that number.
 *  - events_add records the event, logs it at info level, then calls every
 *    follower, in the order they were added, with a copy of the record
 *    (valid during the call). Each follower sees events in the order added.
 *  - A follower callback may add or remove followers (itself included) and
 *    add events. A follower removed during a notification is not called
 *    again, not even for the event being delivered; one added is first
 *    called for the next event. An event added by a follower is delivered
 *    to everyone after the current one, by the outermost events_add.
 *    Removed entries are freed when that outermost call returns.
 *  - Single-threaded, like the event loop.
 */
#ifndef GF_DAEMON_EVENTS_H
#define GF_DAEMON_EVENTS_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "gpufrac/proto.h"

#define EVENTS_CAPACITY	1024	/* the daemon's ring */

typedef void	events_follow_fn(void *arg, const struct gf_event *e);

struct events_follower {
	events_follow_fn *fn;
	void		*arg;
	int		 dead;		/* removed during a notification */
};

struct events {
	struct gf_event	*ring;
	size_t		 capacity;
	uint64_t	 total;		/* events ever added */
	uint64_t	 delivered;	/* events followers have been told of */
	struct events_follower *followers;
	size_t		 nfollowers;
	size_t		 followcap;
	int		 notifying;	/* a delivery is under way */
};

/* An empty log of capacity (> 0) events. Returns 0, or -1 (ENOMEM, EINVAL). */
int	events_init(struct events *ev, size_t capacity);
/* Frees the ring and the follower list; calls nobody. */
void	events_free(struct events *ev);

/*
 * Record a decision at time_ms (wall clock, ms since the epoch: see
 * events_wall_ms). group may be NULL or "" for none, uuid NULL for no
 * device; both are copied, group truncated to GF_GROUP_LEN - 1 bytes. The
 * reason is printf-formatted (fmt NULL: none), truncated to GF_REASON_LEN - 1
 * bytes and made one line (control characters become spaces).
 */
void	events_add(struct events *ev, uint64_t time_ms,
	    uint32_t kind, uint32_t pid, const char *group,
	    const uint8_t *uuid, uint64_t bytes, const char *fmt, ...)
	    __attribute__((format(printf, 8, 9)));

/* The same, with the duration of what it records (a swap), from a va_list. */
void	events_vadd(struct events *ev, uint64_t time_ms, uint32_t kind,
	    uint32_t pid, const char *group, const uint8_t *uuid,
	    uint64_t bytes, uint32_t duration_ms, const char *fmt, va_list ap)
	    __attribute__((format(printf, 9, 0)));

/*
 * Iterate oldest first: start with *cursor = 0; each call returns the next
 * retained event and advances *cursor, or NULL at the end. Events dropped
 * from the ring since the last call are skipped, never repeated.
 */
const struct gf_event *events_next(const struct events *ev, uint64_t *cursor);

/* How many events the ring holds now. */
size_t	events_count(const struct events *ev);

/* Call fn(arg, e) for each event added from now on. 0, or -1 (ENOMEM). */
int	events_follow(struct events *ev, events_follow_fn *fn, void *arg);
/* Remove every follower registered as (fn, arg); returns how many. */
size_t	events_unfollow(struct events *ev, events_follow_fn *fn, void *arg);


/* The wall clock in ms since the epoch, for time_ms. */
uint64_t events_wall_ms(void);

#endif
