/*
 * The host memory host swap holds, against swap_host_limit: the charges
 * of processes swapped out (the ledger's host), and the pinned memory the
 * copy engine's shims keep while in, for their next move out (MOVED's
 * kept; shim/vback_host.c says why: pinning is ~25 times slower than the
 * bus). When a swap would pass the limit, the processes that keep some
 * are asked for it back (MOVE GF_SWAP_DROP), and the swap is tried again
 * once they have given it. A process back in for swap_keep gives it back
 * too: processes that take turns keep theirs, and one that stays in does
 * not hold the host's memory for ever.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "arbiter.h"
#include "control.h"
#include "event.h"
#include "ledger.h"
#include "log.h"
#include "swap.h"
#include "swap_op.h"
#include "units.h"

/* Tallies of what clients say saturate (issue 32). */
static uint64_t
sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* lc's charges on host: its memory swapped out. */
static uint64_t
charged(const struct arbiter *a, const struct ledger_client *lc)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < a->ledger.ndevices; i++)
		n += lc->usage[i].host;
	return n;
}

/*
 * Asked for its kept memory longer than swap_move_timeout ago, with no
 * answer: no longer believed to keep any (issue 32), so that a shim that
 * never answers does not hold up every swap for good.
 */
static int
drop_overdue(const struct arbiter *a, const struct ledger_client *lc)
{
	return lc->host_dropping && event_now_ms() - lc->host_drop_ms >=
	    a->conf.swap_move_timeout_ms;
}

/* What lc's shim keeps beyond its charges on host. */
static uint64_t
kept_beyond(const struct arbiter *a, const struct ledger_client *lc)
{
	uint64_t c = charged(a, lc);

	if (drop_overdue(a, lc))
		return 0;

	return lc->host_kept > c ? lc->host_kept - c : 0;
}

uint64_t
swap_host_kept(const struct arbiter *a)
{
	const struct ledger_client *lc;
	uint64_t n = 0;

	TAILQ_FOREACH(lc, &a->ledger.clients, entry)
		n = sat_add(n, kept_beyond(a, lc));
	return n;
}

uint64_t
swap_host_used(const struct arbiter *a)
{
	uint64_t n = swap_host_kept(a);
	size_t i;

	for (i = 0; i < a->ledger.ndevices; i++)
		n = sat_add(n, a->ledger.devices[i].host);
	return n;
}

uint64_t
swap_host_after(const struct arbiter *a, const struct ledger_client *lc)
{
	uint64_t out = swap_footprint(a, lc);

	/* Its kept memory takes its contents: counted once. */
	if (lc->host_kept > out)
		out = lc->host_kept;
	return sat_add(swap_host_used(a) - kept_beyond(a, lc), out);
}

/* The largest keeper not yet asked, but lc, or NULL. */
static struct ledger_client *
keeper_next(struct arbiter *a, const struct ledger_client *lc)
{
	struct ledger_client *k, *best = NULL;

	TAILQ_FOREACH(k, &a->ledger.clients, entry)
		if (k != lc && k->swap == SWAP_NONE && !k->host_dropping &&
		    !k->departing && k->host_kept > 0 &&
		    (best == NULL || k->host_kept > best->host_kept))
			best = k;
	return best;
}

/* Ask k for the host memory it keeps (MOVE GF_SWAP_DROP); -1: not sent. */
static int
host_ask_back(struct arbiter *a, struct ledger_client *k)
{
	struct gf_move mv;
	struct conn *c;

	memset(&mv, 0, sizeof(mv));
	mv.direction = GF_SWAP_DROP;
	k->host_dropping = 1;	/* asked once, sent or not */
	k->host_drop_ms = event_now_ms();
	if ((c = swap_conn_of(a, k)) == NULL ||
	    conn_send(c, GF_MSG_MOVE, 0, &mv) < 0)
		return -1;
	return 0;
}

uint64_t
swap_host_reclaim(struct arbiter *a, const struct ledger_client *lc,
    uint64_t need)
{
	struct ledger_client *k;
	uint64_t coming = 0, could = 0;
	char sbuf[32];

	TAILQ_FOREACH(k, &a->ledger.clients, entry)
		if (k != lc && k->swap == SWAP_NONE && !k->departing &&
		    !drop_overdue(a, k))
			could = sat_add(could, k->host_kept);
	if (could < need)
		return 0;
	TAILQ_FOREACH(k, &a->ledger.clients, entry)
		if (k != lc && k->host_dropping && !drop_overdue(a, k))
			coming = sat_add(coming, k->host_kept);
	while (coming < need && (k = keeper_next(a, lc)) != NULL) {
		if (host_ask_back(a, k) < 0)
			continue;
		log_info("pid %u: asked for the %s of pinned host memory it "
		    "keeps, for a swap of pid %u", k->pid, size_format(
		    k->host_kept, sbuf, sizeof(sbuf)), lc->pid);
		coming = sat_add(coming, k->host_kept);
	}
	return coming;
}

static void keep_arm(struct arbiter *a);

/* Those back in for swap_keep give what they keep back. */
static void
keep_fire(struct event_loop *loop, void *arg)
{
	struct arbiter *a = arg;
	struct ledger_client *k;
	uint64_t now = event_now_ms();
	char sbuf[32];

	(void)loop;
	a->swap.keep_timer = 0;
	TAILQ_FOREACH(k, &a->ledger.clients, entry)
		if (k->swap == SWAP_NONE && k->host_kept > 0 &&
		    !k->host_dropping && !k->departing &&
		    now - k->host_in_ms >= a->conf.swap_keep_ms &&
		    host_ask_back(a, k) == 0)
			log_info("pid %u: asked for the %s of pinned host memory "
			    "it keeps, back in for swap_keep", k->pid,
			    size_format(k->host_kept, sbuf, sizeof(sbuf)));
	keep_arm(a);
}

/*
 * The timer for the next keeper due, if any, unless one fires sooner
 * (swap_keep may have been made shorter by a reload).
 */
static void
keep_arm(struct arbiter *a)
{
	struct ledger_client *k;
	uint64_t due = UINT64_MAX, now = event_now_ms(), at;

	if (a->loop == NULL)
		return;
	TAILQ_FOREACH(k, &a->ledger.clients, entry)
		if (k->swap == SWAP_NONE && k->host_kept > 0 &&
		    !k->host_dropping && !k->departing &&
		    (at = k->host_in_ms + a->conf.swap_keep_ms) < due)
			due = at;
	if (due == UINT64_MAX || (a->swap.keep_timer != 0 &&
	    a->swap.keep_due_ms <= due))
		return;
	if (a->swap.keep_timer != 0)
		event_timer_cancel(a->loop, a->swap.keep_timer);
	a->swap.keep_due_ms = due;
	a->swap.keep_timer = event_timer_add(a->loop, due > now ? due - now :
	    0, keep_fire, a);
	if (a->swap.keep_timer < 0)
		a->swap.keep_timer = 0;
}

void
swap_host_reconf(struct arbiter *a)
{
	keep_arm(a);
}

void
swap_host_came_in(struct arbiter *a, struct ledger_client *lc)
{
	lc->host_in_ms = event_now_ms();
	if (lc->host_kept > 0)
		keep_arm(a);
}

void
swap_host_dropped(struct arbiter *a, struct ledger_client *lc,
    const struct gf_moved *m)
{
	struct ledger_client *k;
	char sbuf[32];

	/*
	 * Asked to give back while in, a shim gives back all it keeps: what
	 * else it says is not believed (issue 32).
	 */
	if (m->kept > 0 && lc->swap == SWAP_NONE)
		log_info("pid %u says it still keeps %s of pinned host memory "
		    "once asked for all of it: not believed", lc->pid,
		    size_format(m->kept, sbuf, sizeof(sbuf)));
	if (lc->swap == SWAP_NONE)
		lc->host_kept = 0;
	else if (m->kept < lc->host_kept)
		lc->host_kept = m->kept;
	log_info("pid %u gave back pinned host memory: %s kept now", lc->pid,
	    size_format(lc->host_kept, sbuf, sizeof(sbuf)));
	lc->host_dropping = 0;
	/* Those passed over for want of room may fit now. */
	TAILQ_FOREACH(k, &a->ledger.clients, entry)
		if (k->swap == SWAP_NONE)
			k->swap_skip = 0;
	swap_pump(a);
}
