/*
 * Host swap, the decisions: one swap at a time, what moves next --
 * explicit swaps (admin, preemption) first, then processes asking to come
 * back (and room made for them), then room for the swap resolver's
 * waiters, then, with nobody waiting for the device, the process longest
 * out whose memory fits again.
 */
#include <stdio.h>
#include <stdlib.h>

#include "activity.h"
#include "arbiter.h"
#include "control.h"
#include "event.h"
#include "ledger.h"
#include "log.h"
#include "resolve.h"
#include "swap.h"
#include "swap_op.h"
#include "victims.h"
#include "waitq.h"

/*
 * Whether lc has been idle long enough to be swapped out for room: a
 * process that used the GPU a moment ago would be asked back at once, and
 * two busy ones would swap each other out and in for ever. When it has
 * not, note when it will have (the idle timer looks again then).
 */
static int
idle_enough(struct arbiter *a, const struct ledger_client *lc)
{
	uint64_t idle = activity_idle_ms(lc), need = a->conf.swap_min_idle_ms;
	uint64_t in;

	if (idle >= need)
		return 1;
	in = need - idle;
	if (a->swap.idle_in_ms == 0 || in < a->swap.idle_in_ms)
		a->swap.idle_in_ms = in;
	return 0;
}

static void
idle_fire(struct event_loop *loop, void *arg)
{
	struct arbiter *a = arg;

	(void)loop;
	a->swap.idle_timer = 0;
	swap_pump(a);
}

/*
 * The next process on dev to swap out for requester rq (NULL: none) of
 * priority, or NULL.
 */
static struct ledger_client *
victim(struct arbiter *a, size_t dev, const struct ledger_client *rq,
    int32_t priority)
{
	struct ledger *l = &a->ledger;
	struct ledger_client *lc, **who, *v = NULL;
	struct swap_cand *cand;
	size_t n = 0;
	long k;

	cand = calloc(l->nclients ? l->nclients : 1, sizeof(*cand));
	who = calloc(l->nclients ? l->nclients : 1, sizeof(*who));
	if (cand == NULL || who == NULL) {
		log_warnx("no memory to choose a process to swap out");
		goto out;
	}
	TAILQ_FOREACH(lc, &l->clients, entry) {
		const struct ledger_group *g = &l->groups[lc->group];

		if (lc->usage[dev].used == 0)
			continue;
		cand[n].id = lc->pid;
		cand[n].eligible = lc != rq && lc->swap == SWAP_NONE &&
		    !lc->swap_skip && !lc->departing && !lc->preempting &&
		    idle_enough(a, lc);
		cand[n].priority = g->pol.priority;
		cand[n].idle_ms = activity_idle_ms(lc);
		cand[n].charge = lc->usage[dev].used;
		cand[n].group_used = g->share[dev].used;
		cand[n].group_guarantee = g->share[dev].guarantee;
		who[n++] = lc;
	}
	if ((k = victims_swap_pick(priority, cand, n)) >= 0)
		v = who[k];
out:
	free(cand);
	free(who);
	return v;
}

/* Room for lc on every device it has host bytes on: a swap-out, or -1. */
static int
room_for(struct arbiter *a, struct ledger_client *lc, int *started)
{
	int32_t prio = a->ledger.groups[lc->group].pol.priority;
	struct ledger_client *v;
	size_t i;

	for (i = 0; i < a->ledger.ndevices; i++) {
		if (lc->usage[i].host <= ledger_available(&a->ledger,
		    lc->group, i))
			continue;
		if ((v = victim(a, i, lc, prio)) == NULL)
			continue;
		*started = swap_start(a, v, GF_SWAP_OUT, "to bring back",
		    lc->pid) == 0;
		return 0;
	}
	return -1;
}

/* Explicit swaps (admin, preemption), first come first served. */
static int
pump_todo(struct arbiter *a, int *started)
{
	uint64_t now = event_now_ms();
	struct ledger_client *lc;
	char msg[GF_ERRMSG_LEN];
	struct swap_op *op;

	/* The first that is due: a busy victim waits for its retry. */
	TAILQ_FOREACH(op, &a->swap.todo, entry)
		if (op->not_before_ms <= now)
			break;
	if (op == NULL)
		return -1;
	TAILQ_REMOVE(&a->swap.todo, op, entry);
	if ((lc = op->lc) == NULL) {
		swap_op_free(a, op);
		return 0;
	}
	if (op->dir == GF_SWAP_OUT) {
		if (lc->swap != SWAP_NONE) {
			swap_asks_settle(a, lc, GF_SWAP_OUT, lc->swap ==
			    SWAP_OUT, "it is coming back in");
			swap_op_free(a, op);
			return 0;
		}
		*started = swap_start_out(a, op) == 0;
		return 0;
	}
	/* Others' unused leases give way, as they do to a RESERVE. */
	if (lc->swap != SWAP_OUT || !swap_fits_back(a, lc)) {
		snprintf(msg, sizeof(msg), "its %llu bytes do not fit the "
		    "device now", (unsigned long long)swap_footprint(a, lc));
		swap_asks_settle(a, lc, GF_SWAP_IN, lc->swap == SWAP_NONE, msg);
		swap_op_free(a, op);
		return 0;
	}
	swap_start_in(a, op);
	*started = 1;
	return 0;
}

/* The process out that has waited longest: asked (asked) or not. */
static struct ledger_client *
longest_out(struct arbiter *a, int asked)
{
	struct ledger_client *lc, *b = NULL;
	int32_t p, bp = 0;

	TAILQ_FOREACH(lc, &a->ledger.clients, entry) {
		if (lc->swap != SWAP_OUT || lc->swap_skip || lc->departing ||
		    (asked && lc->swapin_asks == 0) ||
		    (!asked && lc->swap_parked))
			continue;
		p = a->ledger.groups[lc->group].pol.priority;
		if (b == NULL || (asked && p > bp) || ((!asked || p == bp) &&
		    lc->swapped_ms < b->swapped_ms)) {
			b = lc;
			bp = p;
		}
	}
	return b;
}

/* The first waiter of the swap resolver that does not fit, per device. */
static int
pump_waiters(struct arbiter *a, int *started)
{
	const struct waitq_waiter *w;
	struct ledger_client *rq, *v;
	const struct group_policy *pol;
	size_t d;

	for (d = 0; d < a->ledger.ndevices; d++)
		for (w = waitq_next(&a->waitq, d, NULL); w != NULL;
		    w = waitq_next(&a->waitq, d, w)) {
			rq = ((struct conn *)w->owner)->client;
			/* Held by a limit: room on the device is no help. */
			if (rq == NULL ||
			    resolve_waiter_state(a, w) != WAITQ_WAITS)
				continue;
			pol = &a->ledger.groups[rq->group].pol;
			if (pol->resolver != GF_RESOLVER_SWAP)
				break;	/* it holds back those below it */
			if ((v = victim(a, d, rq, pol->priority)) == NULL)
				break;
			*started = swap_start(a, v, GF_SWAP_OUT, "for",
			    rq->pid) == 0;
			return 0;
		}
	return -1;
}

static int
waiters_of_swap(const struct arbiter *a)
{
	const struct waitq_waiter *w;
	const struct ledger_client *rq;
	size_t d;

	for (d = 0; d < a->ledger.ndevices; d++)
		for (w = waitq_next(&a->waitq, d, NULL); w != NULL;
		    w = waitq_next(&a->waitq, d, w)) {
			rq = ((const struct conn *)w->owner)->client;
			if (rq != NULL && a->ledger.groups[rq->group].pol.
			    resolver == GF_RESOLVER_SWAP)
				return 1;
		}
	return 0;
}

/*
 * One decision: 1 when a swap was started, 0 when something was tried
 * (and skipped: decide again), -1 when there is nothing to do.
 */
static int
pump_once(struct arbiter *a)
{
	struct ledger_client *lc;
	int started = 0;

	if (pump_todo(a, &started) == 0)
		return started;
	if ((lc = longest_out(a, 1)) != NULL) {
		if (swap_fits_back(a, lc))
			return swap_start(a, lc, GF_SWAP_IN, "asked by",
			    lc->pid) == 0;
		if (room_for(a, lc, &started) == 0)
			return started;
	}
	if (pump_waiters(a, &started) == 0)
		return started;
	if (!resolve_device_waiters(a) && (lc = longest_out(a, 0)) != NULL &&
	    ledger_swap_in_fits(&a->ledger, lc))
		return swap_start(a, lc, GF_SWAP_IN, "fits again,",
		    lc->pid) == 0;
	/* The collision that skipped them is over: they may be tried again. */
	if (!waiters_of_swap(a))
		TAILQ_FOREACH(lc, &a->ledger.clients, entry)
			if (lc->swap == SWAP_NONE)
				lc->swap_skip = 0;
	return -1;
}

void
swap_pump(struct arbiter *a)
{
	struct swap *s = &a->swap;

	if (!s->available || a->stopping || s->running != NULL || s->pumping)
		return;
	if (s->nout == 0 && TAILQ_EMPTY(&s->todo) && !waiters_of_swap(a))
		return;
	s->pumping = 1;
	s->idle_in_ms = 0;
	while (s->running == NULL && pump_once(a) == 0)
		;
	s->pumping = 0;
	/* Nothing was idle enough: look again when something will be. */
	if (s->running == NULL && s->idle_in_ms > 0 && s->idle_timer == 0 &&
	    a->loop != NULL) {
		s->idle_timer = event_timer_add(a->loop, s->idle_in_ms,
		    idle_fire, a);
		if (s->idle_timer < 0)
			s->idle_timer = 0;
	}
}
