/*
 * Leases: granting them into a client's activity page, taking their
 * unused part back from it, and the timer that takes back idle ones.
 */
#include <stdint.h>

#include "activity.h"
#include "arbiter.h"
#include "event.h"
#include "gpufrac/activity.h"
#include "lease.h"
#include "ledger.h"
#include "log.h"
#include "resolve.h"
#include "waitq.h"

static void	lease_arm(struct arbiter *a);

void
lease_open(struct arbiter *a, struct ledger_client *lc, size_t dev,
    uint32_t ordinal)
{
	struct ledger_usage *u = &lc->usage[dev];

	if (u->ordinal == ordinal)
		return;
	/* Not a slot the client will draw from any more. */
	(void)lease_take(a, lc, dev);
	u->ordinal = ordinal;
}

uint64_t
lease_unused(const struct ledger_client *lc, size_t dev)
{
	const struct gf_lease_slot *s = activity_slot(lc, dev);
	uint64_t n;

	/* Swapped out, a process holds nothing on the device to lend. */
	if (s == NULL || lc->on_host)
		return 0;
	n = __atomic_load_n(&s->avail, __ATOMIC_RELAXED) & ~GF_LEASE_CLOSED;
	/* The page is the client's to write: believe no more than we lent. */
	return n < lc->usage[dev].lease ? n : lc->usage[dev].lease;
}

uint64_t
leases_unused(const struct ledger *l, size_t group, size_t dev)
{
	const struct ledger_client *lc;
	uint64_t n = 0;

	TAILQ_FOREACH(lc, &l->clients, entry)
		if (group == SIZE_MAX || lc->group == group)
			n += lease_unused(lc, dev);
	return n;
}

uint64_t
lease_take(struct arbiter *a, struct ledger_client *lc, size_t dev)
{
	struct gf_lease_slot *s = activity_slot(lc, dev);
	uint64_t held;

	if (s == NULL || lc->usage[dev].lease == 0)
		return 0;
	held = __atomic_exchange_n(&s->avail, GF_LEASE_CLOSED,
	    __ATOMIC_SEQ_CST) & ~GF_LEASE_CLOSED;
	held = ledger_lease_shrink(&a->ledger, lc, dev, held);
	__atomic_sub_fetch(&s->total, held, __ATOMIC_SEQ_CST);
	if (held > 0)
		log_debug("pid %u: %llu bytes of its lease on device %zu "
		    "taken back", lc->pid, (unsigned long long)held, dev);
	return held;
}

uint64_t
lease_reclaim(struct arbiter *a, struct ledger_client *lc, size_t dev,
    int reason)
{
	struct ledger_client *o;
	uint64_t n = lease_take(a, lc, dev);

	if (reason == LEDGER_LIMIT)
		return n;
	TAILQ_FOREACH(o, &a->ledger.clients, entry)
		if (o != lc && (reason == LEDGER_COLLISION ||
		    o->group == lc->group))
			n += lease_take(a, o, dev);
	return n;
}

void
lease_take_all(struct arbiter *a, struct ledger_client *lc)
{
	size_t d;

	for (d = 0; d < a->ledger.ndevices; d++)
		(void)lease_take(a, lc, d);
}

void
lease_reclaim_all(struct arbiter *a)
{
	struct ledger_client *lc;

	TAILQ_FOREACH(lc, &a->ledger.clients, entry)
		lease_take_all(a, lc);
	/* No lease to watch; the next one is watched at the new pace. */
	lease_free(a);
}

/* The size of lc's next lease on dev, as its pace of asking says. */
static uint64_t
lease_size(struct ledger_usage *u, uint64_t now)
{
	if (u->lease_target < LEASE_MIN)
		u->lease_target = LEASE_MIN;
	else if (now - u->lease_grant_ms < LEASE_QUICK_MS &&
	    u->lease_target < LEASE_MAX)
		u->lease_target *= 2;
	u->lease_grant_ms = now;
	return u->lease_target;
}

uint64_t
lease_grant(struct arbiter *a, struct ledger_client *lc, size_t dev)
{
	struct ledger_usage *u = &lc->usage[dev];
	struct gf_lease_slot *s = activity_slot(lc, dev);
	uint64_t g, room, old;

	/* A waiter is owed what comes back, and a swapped process nothing. */
	if (s == NULL || a->stopping || lc->on_host ||
	    waitq_count_dev(&a->waitq, dev) > 0)
		return u->lease;
	g = lease_size(u, event_now_ms());
	if ((room = ledger_headroom(&a->ledger, lc, dev)) < g)
		g = room;
	if (g == 0)
		return u->lease;
	ledger_lease_grow(&a->ledger, lc, dev, g);
	/* total first: a restarted daemon may be told more, never less. */
	__atomic_add_fetch(&s->total, g, __ATOMIC_SEQ_CST);
	old = __atomic_load_n(&s->avail, __ATOMIC_SEQ_CST);
	while (!__atomic_compare_exchange_n(&s->avail, &old,
	    (old & ~GF_LEASE_CLOSED) + g, 0, __ATOMIC_SEQ_CST,
	    __ATOMIC_SEQ_CST))
		;
	u->lease_draws = __atomic_load_n(&s->draws, __ATOMIC_RELAXED);
	lease_arm(a);
	return u->lease;
}

int
lease_restore(struct arbiter *a, struct ledger_client *lc, size_t dev,
    uint64_t size)
{
	if (lc->usage[dev].lease != 0)
		return -1;
	ledger_lease_grow(&a->ledger, lc, dev, size);
	lease_arm(a);
	return 0;
}

/*
 * Take back what has not been drawn from since the last look. Returns
 * the bytes taken; *open says whether an open lease is left to watch.
 */
static uint64_t
lease_idle(struct arbiter *a, struct ledger_client *lc, size_t dev, int *open)
{
	struct ledger_usage *u = &lc->usage[dev];
	struct gf_lease_slot *s = activity_slot(lc, dev);
	uint64_t draws;

	if (s == NULL || u->lease == 0 ||
	    (__atomic_load_n(&s->avail, __ATOMIC_RELAXED) & GF_LEASE_CLOSED))
		return 0;
	/* A lease gets a whole period to be drawn from. */
	if (event_now_ms() - u->lease_grant_ms < a->conf.lease_idle_ms) {
		*open = 1;
		return 0;
	}
	draws = __atomic_load_n(&s->draws, __ATOMIC_RELAXED);
	if (draws != u->lease_draws) {
		u->lease_draws = draws;
		*open = 1;
		return 0;
	}
	if (u->lease_target > LEASE_MIN)
		u->lease_target /= 2;
	return lease_take(a, lc, dev);
}

static void
lease_fire(struct event_loop *loop, void *arg)
{
	struct arbiter *a = arg;
	struct ledger_client *lc;
	uint64_t taken = 0;
	int open = 0;
	size_t d;

	(void)loop;
	a->lease_timer = 0;
	TAILQ_FOREACH(lc, &a->ledger.clients, entry)
		for (d = 0; d < a->ledger.ndevices; d++)
			taken += lease_idle(a, lc, d, &open);
	if (open)
		lease_arm(a);
	if (taken > 0)
		resolve_serve(a);
}

/* Look again in a while. */
static void
lease_arm(struct arbiter *a)
{
	if (a->lease_timer > 0 || a->stopping || a->loop == NULL)
		return;
	a->lease_timer = event_timer_add(a->loop, a->conf.lease_idle_ms,
	    lease_fire, a);
	if (a->lease_timer < 0) {
		log_warnx("cannot arm the lease timer: idle leases stay until "
		    "another request needs them");
		a->lease_timer = 0;
	}
}

void
lease_free(struct arbiter *a)
{
	if (a->lease_timer > 0)
		event_timer_cancel(a->loop, a->lease_timer);
	a->lease_timer = 0;
}
