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
#include "decision.h"
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
 * Whether lc's memory can be moved. Why not is said once, when it is
 * first passed over for rq, until it can be again: it is no candidate,
 * not a candidate tried and skipped at every look.
 */
static int
movable(struct arbiter *a, struct ledger_client *lc,
    const struct ledger_client *rq)
{
	const char *no = swap_unmovable(a, lc);

	if (no == NULL) {
		lc->unmovable_said = 0;
		return 1;
	}
	if (!lc->unmovable_said && rq != NULL) {
		lc->unmovable_said = 1;
		decision_event(a, GF_EV_SWAP_SKIP, lc, -1, swap_footprint(a, lc),
		    "not swapped out (for pid %u): %s", rq->pid, no);
	}
	return 0;
}

/* The processes on one device that swapping out could move, for one asker. */
struct cands {
	struct swap_cand	*cand;
	struct ledger_client	**who;
	size_t			 n;
};

static void
cands_free(struct cands *cs)
{
	free(cs->cand);
	free(cs->who);
}

/* Everybody holding memory on dev, as candidates for requester rq. */
static int
cands_fill(struct arbiter *a, size_t dev, const struct ledger_client *rq,
    struct cands *cs)
{
	struct ledger *l = &a->ledger;
	struct ledger_client *lc;
	struct swap_cand *c;

	cs->n = 0;
	cs->cand = calloc(l->nclients ? l->nclients : 1, sizeof(*cs->cand));
	cs->who = calloc(l->nclients ? l->nclients : 1, sizeof(*cs->who));
	if (cs->cand == NULL || cs->who == NULL) {
		log_warnx("no memory to choose a process to swap out");
		cands_free(cs);
		return -1;
	}
	TAILQ_FOREACH(lc, &l->clients, entry) {
		const struct ledger_group *g = &l->groups[lc->group];

		if (lc->usage[dev].used == 0)
			continue;
		c = &cs->cand[cs->n];
		c->id = lc->pid;
		c->eligible = lc != rq && lc->swap == SWAP_NONE &&
		    !lc->swap_skip && !lc->departing && !lc->preempting &&
		    movable(a, lc, rq) && idle_enough(a, lc);
		c->priority = g->pol.priority;
		c->idle_ms = activity_idle_ms(lc);
		c->charge = lc->usage[dev].used;
		c->group_used = g->share[dev].used;
		c->group_guarantee = g->share[dev].guarantee;
		c->group = lc->group;
		cs->who[cs->n++] = lc;
	}
	return 0;
}

/*
 * The next process on dev to swap out for requester rq (NULL: none) of
 * priority, or NULL. With need, only if swapping out could free that much.
 */
static struct ledger_client *
victim(struct arbiter *a, size_t dev, const struct ledger_client *rq,
    int32_t priority, uint64_t need)
{
	struct ledger_client *v = NULL;
	struct cands cs;
	long k;

	if (cands_fill(a, dev, rq, &cs) < 0)
		return NULL;
	if ((k = victims_swap_pick(priority, cs.cand, cs.n)) >= 0)
		v = cs.who[k];
	if (v != NULL && need > 0 &&
	    !victims_swap_covers(priority, cs.cand, cs.n, need))
		v = NULL;
	cands_free(&cs);
	return v;
}

/*
 * Room for lc, which asks to come back, on every device it has host bytes
 * on: a swap-out, 0. -1 when swapping out what may be swapped out now
 * would not make room on one of them: nobody is swapped out in vain.
 */
static int
room_for(struct arbiter *a, struct ledger_client *lc, int *started)
{
	int32_t prio = a->ledger.groups[lc->group].pol.priority;
	struct ledger_client *v, *first = NULL;
	uint64_t avail;
	size_t i;

	for (i = 0; i < a->ledger.ndevices; i++) {
		avail = ledger_available(&a->ledger, lc->group, i);
		if (lc->usage[i].host <= avail)
			continue;
		if ((v = victim(a, i, lc, prio, lc->usage[i].host - avail)) ==
		    NULL)
			return -1;
		if (first == NULL)
			first = v;
	}
	if (first == NULL)
		return -1;
	*started = swap_start(a, first, GF_SWAP_OUT, "to bring back",
	    lc->pid) == 0;
	return 0;
}

/* Explicit swaps (admin, preemption), first come first served. */
static int
pump_todo(struct arbiter *a, int *started)
{
	uint64_t now = event_now_ms();
	struct ledger_client *lc;
	char msg[GF_ERRMSG_LEN], why[GF_ERRMSG_LEN / 2];
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
		    "device now%s", (unsigned long long)swap_footprint(a, lc),
		    lc->swap == SWAP_OUT ? swap_short_say(a, lc, why,
		    sizeof(why)) : "");
		if (lc->swap == SWAP_OUT)
			decision_event(a, GF_EV_SWAP_SKIP, lc, -1,
			    swap_footprint(a, lc), "not swapped in (%s): %s",
			    op->cause, msg);
		swap_asks_settle(a, lc, GF_SWAP_IN, lc->swap == SWAP_NONE, msg);
		swap_op_free(a, op);
		return 0;
	}
	swap_start_in(a, op);
	*started = 1;
	return 0;
}

/* A process out, as the askers are ranked. */
struct asker {
	int32_t			 priority;	/* its group's */
	uint64_t		 swapped_ms;
	struct ledger_client	*lc;
};

/* The higher priority first, then the one out longest. */
static int
asker_cmp(const void *pa, const void *pb)
{
	const struct asker *x = pa, *y = pb;

	if (x->priority != y->priority)
		return x->priority > y->priority ? -1 : 1;
	if (x->swapped_ms != y->swapped_ms)
		return x->swapped_ms < y->swapped_ms ? -1 : 1;
	return x->lc->pid < y->lc->pid ? -1 : x->lc->pid > y->lc->pid;
}

static int
may_come_back(const struct ledger_client *lc)
{
	return lc->swap == SWAP_OUT && !lc->swap_skip && !lc->departing;
}

/*
 * The processes out that ask to come back, in the order they are served:
 * *v (the caller frees it) and their count, or -1.
 */
static long
askers(struct arbiter *a, struct asker **v)
{
	struct ledger_client *lc;
	size_t n = 0;

	*v = calloc(a->ledger.nclients ? a->ledger.nclients : 1, sizeof(**v));
	if (*v == NULL) {
		log_warnx("no memory to choose a process to swap in");
		return -1;
	}
	TAILQ_FOREACH(lc, &a->ledger.clients, entry)
		if (may_come_back(lc) && lc->swapin_asks > 0) {
			(*v)[n].priority =
			    a->ledger.groups[lc->group].pol.priority;
			(*v)[n].swapped_ms = lc->swapped_ms;
			(*v)[n++].lc = lc;
		}
	if (n > 1)
		qsort(*v, n, sizeof(**v), asker_cmp);
	return (long)n;
}

/*
 * The askers in turn: the first that fits comes back, or room is made for
 * the first that it can be made for. Those it cannot be made for do not
 * hold back those after them. As pump_once.
 */
static int
pump_askers(struct arbiter *a, int *started)
{
	struct asker *v;
	long i, n;
	int r = -1;

	if ((n = askers(a, &v)) < 0)
		return -1;
	for (i = 0; i < n && r < 0; i++) {
		if (swap_fits_back(a, v[i].lc)) {
			*started = swap_start(a, v[i].lc, GF_SWAP_IN,
			    v[i].lc->swapin_unseen > 0 ? "a thread waits in "
			    "the driver unseen in" : "asked by",
			    v[i].lc->pid) == 0;
			r = 0;
		} else
			r = room_for(a, v[i].lc, started);
	}
	free(v);
	return r;
}

/*
 * The process out longest that did not ask, and was not parked by hand.
 * One still re-registering is looked at again later: no message says
 * when it is done.
 */
static struct ledger_client *
longest_out(struct arbiter *a)
{
	struct ledger_client *lc, *b = NULL;

	TAILQ_FOREACH(lc, &a->ledger.clients, entry) {
		if (!may_come_back(lc) || lc->swap_parked)
			continue;
		if (!swap_registered(a, lc)) {
			swap_retry_arm(a, SWAP_RETRY_MS);
			continue;
		}
		if (b == NULL || lc->swapped_ms < b->swapped_ms)
			b = lc;
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
	uint64_t avail;
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
			avail = ledger_available(&a->ledger, rq->group, d);
			if ((v = victim(a, d, rq, pol->priority, w->bytes >
			    avail ? w->bytes - avail : 0)) == NULL)
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
	if (pump_askers(a, &started) == 0)
		return started;
	if (pump_waiters(a, &started) == 0)
		return started;
	if (!resolve_device_waiters(a) && (lc = longest_out(a)) != NULL &&
	    ledger_swap_in_fits(&a->ledger, lc) && swap_driver_room(a, lc))
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
