/*
 * The resolvers: fail, wait (the wait queue, its deadline timer, serving
 * it when memory comes back) and preempt (victims chosen by victims.c,
 * SIGTERM, SIGKILL after kill_grace, the requester queued meanwhile).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "arbiter.h"
#include "control.h"
#include "decision.h"
#include "event.h"
#include "events.h"
#include "identity.h"
#include "ledger.h"
#include "log.h"
#include "pidfd.h"
#include "resolve.h"
#include "swap.h"
#include "units.h"
#include "victims.h"
#include "waitq.h"

#define CUDA_ERROR_OUT_OF_MEMORY	2	/* cuda.h's CUresult */

/* A victim sent SIGTERM, to be sent SIGKILL if it still holds memory. */
struct preempt {
	TAILQ_ENTRY(preempt) entry;
	struct arbiter	*a;
	struct ledger_client *lc;
	size_t		 dev;
	uint64_t	 grace_ms;
	int64_t		 timer;
};

/* A client with a request queued shows as waiting. */
static void
waiting_add(struct ledger_client *lc, int delta)
{
	lc->nwaiting = (uint32_t)((int64_t)lc->nwaiting + delta);
	lc->state = lc->nwaiting ? GF_STATE_WAITING : GF_STATE_RUNNING;
}

/* DENY for lc's request on dev, for reason GF_DENY_*. */
static void
deny_fill(const struct ledger_client *lc, size_t dev, uint32_t reason,
    struct gf_deny *d)
{
	memset(d, 0, sizeof(*d));
	d->cuda_error = CUDA_ERROR_OUT_OF_MEMORY;
	d->reason = reason;
	d->used = lc->usage[dev].used;
	d->limit = lc->usage[dev].limit;
}

/*
 * Deny c's request now, in its own handler, the device full or (group) a
 * group's limit: -1 (why) if the send failed.
 */
static int
deny_reason(struct arbiter *a, struct conn *c, uint32_t seq, size_t dev,
    uint64_t size, uint32_t reason, const char *text, char *why,
    size_t whylen)
{
	struct gf_deny d;

	decision_event(a, GF_EV_DENY, c->client, (int)dev, size, "%s", text);
	deny_fill(c->client, dev, reason, &d);
	return conn_reply(c, GF_MSG_DENY, seq, &d, why, whylen);
}

static int
deny_now(struct arbiter *a, struct conn *c, uint32_t seq, size_t dev,
    uint64_t size, const char *text, char *why, size_t whylen)
{
	return deny_reason(a, c, seq, dev, size, GF_DENY_DEVICE_FULL, text,
	    why, whylen);
}

int
resolve_waiter_state(const struct arbiter *a, const struct waitq_waiter *w)
{
	const struct conn *c = w->owner;

	switch (ledger_admit(&a->ledger, c->client, w->dev, w->bytes)) {
	case LEDGER_GRANT:
		return WAITQ_FITS;
	case LEDGER_LIMIT:
	case LEDGER_GROUP_LIMIT:
		return WAITQ_HELD;
	default:
		return WAITQ_WAITS;
	}
}

/* The wait queue's callbacks: arg is the arbiter, w->owner a conn. */
static int
on_fits(void *arg, const struct waitq_waiter *w)
{
	return resolve_waiter_state(arg, w);
}

int
resolve_device_waiters(const struct arbiter *a)
{
	const struct waitq_waiter *w;
	size_t d;

	for (d = 0; d < a->ledger.ndevices; d++)
		for (w = waitq_next(&a->waitq, d, NULL); w != NULL;
		    w = waitq_next(&a->waitq, d, w))
			if (resolve_waiter_state(a, w) != WAITQ_HELD)
				return 1;
	return 0;
}

static void
on_grant(void *arg, const struct waitq_waiter *w)
{
	struct arbiter *a = arg;
	struct conn *c = w->owner;
	struct ledger_client *lc = c->client;
	uint64_t lent = a->ledger.lend ? ledger_lent(&a->ledger, w->dev) : 0;
	struct gf_grant g;
	struct gf_deny d;
	int rc;

	waiting_add(lc, -1);
	if (ledger_reserve(&a->ledger, lc, w->dev, w->bytes) != LEDGER_GRANT) {
		/* on_fits said it fits: a broken invariant, not a crash. */
		log_errx("pid %u: a waiter that fits cannot be charged; "
		    "denying it", lc->pid);
		decision_event(a, GF_EV_DENY, lc, (int)w->dev, w->bytes,
		    "device full");
		deny_fill(lc, w->dev, GF_DENY_DEVICE_FULL, &d);
		rc = conn_send(c, GF_MSG_DENY, w->seq, &d);
	} else {
		decision_event(a, GF_EV_WAKE, lc, (int)w->dev, w->bytes,
		    "memory came back: granted");
		resolve_lent(a, lc, w->dev, lent);
		memset(&g, 0, sizeof(g));
		g.used = lc->usage[w->dev].used;
		g.limit = lc->usage[w->dev].limit;
		rc = conn_send(c, GF_MSG_GRANT, w->seq, &g);
	}
	if (rc < 0)
		control_close_later(c, c->err);
}

static void
on_expire(void *arg, const struct waitq_waiter *w)
{
	struct arbiter *a = arg;
	struct conn *c = w->owner;
	int held = resolve_waiter_state(a, w) == WAITQ_HELD;
	struct gf_deny d;

	waiting_add(c->client, -1);
	decision_event(a, GF_EV_TIMEOUT, c->client, (int)w->dev, w->bytes,
	    held ? "timeout: its group's limit stayed full" :
	    "timeout: the device stayed full");
	deny_fill(c->client, w->dev, held ? GF_DENY_LIMIT :
	    GF_DENY_DEVICE_FULL, &d);
	if (conn_send(c, GF_MSG_DENY, w->seq, &d) < 0)
		control_close_later(c, c->err);
}

void
resolve_lent(struct arbiter *a, const struct ledger_client *lc, size_t dev,
    uint64_t before)
{
	uint64_t now;
	char buf[32];

	if (!a->ledger.lend)
		return;
	now = ledger_lent(&a->ledger, dev);
	if (now > before)
		decision_event(a, GF_EV_LEND, lc, (int)dev, now - before,
		    "borrowed from unused guarantees (%s lent on the device)",
		    size_format(now, buf, sizeof(buf)));
}

static void
wait_timer_fire(struct event_loop *loop, void *arg)
{
	struct arbiter *a = arg;

	(void)loop;
	a->wait_timer = 0;
	(void)waitq_expire(&a->waitq, event_now_ms(), on_expire, a);
}

/* The queue's earliest deadline changed: one timer, never a poll. */
static void
wait_rearm(void *arg, uint64_t deadline_ms)
{
	struct arbiter *a = arg;
	uint64_t now;

	if (a->wait_timer > 0)
		event_timer_cancel(a->loop, a->wait_timer);
	a->wait_timer = 0;
	if (deadline_ms == 0 || a->loop == NULL)
		return;
	now = event_now_ms();
	a->wait_timer = event_timer_add(a->loop, deadline_ms > now ?
	    deadline_ms - now : 0, wait_timer_fire, a);
	if (a->wait_timer < 0) {
		log_warnx("cannot arm the wait timer: waiters may outlive "
		    "their deadline");
		a->wait_timer = 0;
	}
}

int
resolve_init(struct arbiter *a)
{
	a->wait_timer = 0;
	a->serving = a->serve_again = a->stopping = 0;
	TAILQ_INIT(&a->preempts);
	waitq_init(&a->waitq, wait_rearm, a);
	return events_init(&a->events, EVENTS_CAPACITY);
}

static void
preempt_drop(struct arbiter *a, struct preempt *p)
{
	if (p->timer > 0)
		event_timer_cancel(a->loop, p->timer);
	TAILQ_REMOVE(&a->preempts, p, entry);
	free(p);
}

void
resolve_free(struct arbiter *a)
{
	struct preempt *p;

	while ((p = TAILQ_FIRST(&a->preempts)) != NULL)
		preempt_drop(a, p);
	if (a->wait_timer > 0)
		event_timer_cancel(a->loop, a->wait_timer);
	a->wait_timer = 0;
	waitq_free(&a->waitq);
	events_free(&a->events);
}

int
resolve_queued_above(const struct arbiter *a, size_t dev, int32_t priority)
{
	const struct waitq_waiter *w = NULL;

	/* Rank order: the waiters of higher priority come first. */
	while ((w = waitq_next(&a->waitq, dev, w)) != NULL &&
	    w->priority > priority)
		if (resolve_waiter_state(a, w) != WAITQ_HELD)
			return 1;
	return 0;
}

static void
serve_waiters(struct arbiter *a)
{
	size_t d;

	if (a->stopping || waitq_count(&a->waitq) == 0)
		return;
	if (a->serving) {
		a->serve_again = 1;
		return;
	}
	a->serving = 1;
	do {
		a->serve_again = 0;
		for (d = 0; d < a->ledger.ndevices; d++)
			if (waitq_count_dev(&a->waitq, d) > 0)
				(void)waitq_serve(&a->waitq, d, on_fits,
				    on_grant, a);
	} while (a->serve_again);
	a->serving = 0;
}

void
resolve_serve(struct arbiter *a)
{
	serve_waiters(a);
	/* What is left may bring a swapped-out process back, or need room. */
	swap_pump(a);
}

void
resolve_conn_gone(struct arbiter *a, struct conn *c)
{
	(void)waitq_remove_owner(&a->waitq, c);
	swap_conn_gone(a, c);
	if (c->client != NULL)
		waiting_add(c->client, -(int)c->client->nwaiting);
}

void
resolve_client_gone(struct arbiter *a, struct ledger_client *lc)
{
	struct preempt *p, *next;

	for (p = TAILQ_FIRST(&a->preempts); p != NULL; p = next) {
		next = TAILQ_NEXT(p, entry);
		if (p->lc == lc)
			preempt_drop(a, p);
	}
}

/*
 * Queue c's request at priority for up to timeout_ms (0: no deadline),
 * waiting for what (the event says it), and send WAIT.
 */
static int
queue_request(struct arbiter *a, struct conn *c, uint32_t seq, size_t dev,
    uint64_t size, uint64_t timeout_ms, int32_t priority, const char *what,
    char *why, size_t whylen)
{
	struct ledger_client *lc = c->client;
	uint64_t deadline = timeout_ms ? event_now_ms() + timeout_ms : 0;
	struct gf_wait wt;

	if (waitq_add(&a->waitq, c, seq, dev, size, priority,
	    deadline) == NULL) {
		log_warn("cannot queue the request of pid %u", lc->pid);
		return deny_now(a, c, seq, dev, size, "no memory to queue the "
		    "request", why, whylen);
	}
	waiting_add(lc, +1);
	if (timeout_ms)
		decision_event(a, GF_EV_WAIT, lc, (int)dev, size, "%s: queued "
		    "for up to %llu ms", what, (unsigned long long)timeout_ms);
	else
		decision_event(a, GF_EV_WAIT, lc, (int)dev, size, "%s: queued "
		    "without a deadline", what);
	memset(&wt, 0, sizeof(wt));
	wt.timeout_ms = timeout_ms == 0 || timeout_ms > GF_WAIT_FOREVER ?
	    GF_WAIT_FOREVER : (uint32_t)timeout_ms;
	return conn_reply(c, GF_MSG_WAIT, seq, &wt, why, whylen);
}

int
resolve_queue(struct arbiter *a, struct conn *c, uint32_t seq, size_t dev,
    uint64_t size, uint64_t timeout_ms, char *why, size_t whylen)
{
	const struct group_policy *pol = &a->ledger.groups[c->client->group].pol;

	return queue_request(a, c, seq, dev, size, timeout_ms, pol->priority,
	    "device full", why, whylen);
}

int
resolve_group_limit(struct arbiter *a, struct conn *c, uint32_t seq,
    size_t dev, uint64_t size, char *why, size_t whylen)
{
	const struct ledger_group *g = &a->ledger.groups[c->client->group];

	/*
	 * What the group's limit could never hold besides what c holds was
	 * refused by c's own limit, which is never above its group's.
	 */
	if (g->pol.resolver == GF_RESOLVER_FAIL)
		return deny_reason(a, c, seq, dev, size, GF_DENY_LIMIT,
		    "group limit", why, whylen);
	return queue_request(a, c, seq, dev, size, g->pol.wait_timeout_ms,
	    g->pol.priority, "group limit", why, whylen);
}

static void
preempt_fire(struct event_loop *loop, void *arg)
{
	struct preempt *p = arg;
	struct arbiter *a = p->a;
	struct ledger_client *lc = p->lc;
	uint64_t used = lc->usage[p->dev].used;

	(void)loop;
	p->timer = 0;
	/* Gone already, its memory on the way back: its pid is not its own. */
	if (used > 0 && lc->state != GF_STATE_RELEASING) {
		if (pidfd_signal(lc->pidfd, lc->pid, SIGKILL) < 0)
			log_warn("cannot send SIGKILL to pid %u", lc->pid);
		else
			decision_event(a, GF_EV_KILL, lc, (int)p->dev, used,
			    "SIGKILL: still holding memory after kill_grace "
			    "%llu ms", (unsigned long long)p->grace_ms);
	}
	preempt_drop(a, p);
}

/* SIGTERM to victim lc for requester rq, SIGKILL later; its grace in ms. */
static uint64_t
preempt_victim(struct arbiter *a, struct ledger_client *lc, size_t dev,
    const struct ledger_client *rq)
{
	const struct group_policy *pol = &a->ledger.groups[lc->group].pol;
	struct preempt *p;

	if (pidfd_signal(lc->pidfd, lc->pid, SIGTERM) < 0) {
		log_warn("cannot send SIGTERM to pid %u to preempt it",
		    lc->pid);
		return 0;
	}
	lc->preempting = 1;
	decision_event(a, GF_EV_PREEMPT, lc, (int)dev, lc->usage[dev].used,
	    "SIGTERM, for pid %u of group '%s'", rq->pid,
	    a->ledger.groups[rq->group].pol.name);
	if ((p = calloc(1, sizeof(*p))) == NULL) {
		log_warnx("no memory to follow the preemption of pid %u: "
		    "it gets no SIGKILL", lc->pid);
		return 0;
	}
	p->a = a;
	p->lc = lc;
	p->dev = dev;
	p->grace_ms = pol->kill_grace_ms;
	p->timer = event_timer_add(a->loop, pol->kill_grace_ms, preempt_fire,
	    p);
	if (p->timer < 0) {
		log_warnx("cannot arm the kill_grace timer of pid %u: it gets "
		    "no SIGKILL", lc->pid);
		free(p);
		return 0;
	}
	TAILQ_INSERT_TAIL(&a->preempts, p, entry);
	return pol->kill_grace_ms;
}

/*
 * The processes on dev that may be preempted, copied for victims.c, with
 * who[i] the ledger client of cand[i], those of group spare aside
 * (SIZE_MAX: none). Returns how many.
 */
static size_t
victims_collect(struct ledger *l, const struct ledger_client *rq, size_t dev,
    size_t spare, struct victim_cand *cand, struct ledger_client **who,
    uint64_t *releasing)
{
	struct ledger_client *vc;
	size_t n = 0;

	/* A departing process gives its memory back as it exits. */
	TAILQ_FOREACH(vc, &l->clients, entry)
		if (vc->preempting || vc->departing)
			releasing[vc->group] += vc->usage[dev].used;
	TAILQ_FOREACH(vc, &l->clients, entry) {
		const struct ledger_group *g = &l->groups[vc->group];

		if (vc == rq || vc->group == spare || vc->usage[dev].used == 0)
			continue;
		memset(&cand[n], 0, sizeof(cand[n]));
		cand[n].id = vc->pid;
		cand[n].group = vc->group;
		cand[n].priority = g->pol.priority;
		cand[n].on_preempt = g->pol.on_preempt;
		cand[n].preempting = vc->preempting || vc->departing;
		cand[n].charge = vc->usage[dev].used;
		cand[n].group_used = g->share[dev].used;
		cand[n].group_guarantee = g->share[dev].guarantee;
		cand[n].group_releasing = releasing[vc->group];
		who[n++] = vc;
	}
	return n;
}

/*
 * Choose victims for need bytes that may all be signalled; one we may not
 * signal (EPERM, or gone) is left out and the choice made again. Returns
 * how many, in chosen.
 */
static size_t
victims_choose(int32_t priority, uint64_t need, struct victim_cand *cand,
    struct ledger_client **who, size_t n, const struct victim_cand **chosen)
{
	struct victims_result res;
	size_t k, i, idx;

	for (;;) {
		if ((k = victims_select(priority, need, cand, n, chosen,
		    &res)) == 0)
			return 0;
		for (i = 0; i < k; i++) {
			idx = (size_t)(chosen[i] - cand);
			if (pidfd_signal(who[idx]->pidfd, who[idx]->pid,
			    0) < 0) {
				log_warn("cannot signal pid %u to preempt it; "
				    "leaving it alone", who[idx]->pid);
				cand[idx].preempting = 1;
				break;
			}
		}
		if (i == k)
			return k;
	}
}

/*
 * Make processes give back need bytes on dev for rq: those victims_select
 * chooses among groups of lower priority than priority, group spare
 * aside, each swapped out or sent SIGTERM as its group's on_preempt says.
 * Returns how many were chosen (0: need cannot be covered); *grace is the
 * longest kill_grace among those signalled.
 */
static size_t
take_back(struct arbiter *a, struct ledger_client *rq, size_t dev,
    uint64_t need, int32_t priority, size_t spare, uint64_t *grace)
{
	struct ledger *l = &a->ledger;
	size_t slots = l->nclients ? l->nclients : 1, n, k = 0, i;
	struct victim_cand *cand = calloc(slots, sizeof(*cand));
	const struct victim_cand **chosen = calloc(slots, sizeof(*chosen));
	struct ledger_client **who = calloc(slots, sizeof(*who));
	uint64_t *releasing = calloc(l->ngroups, sizeof(*releasing)), g;

	*grace = 0;
	if (cand == NULL || chosen == NULL || who == NULL ||
	    releasing == NULL) {
		log_warnx("no memory to choose victims for pid %u", rq->pid);
		goto out_free;
	}
	/* A victim is taken as who it is now, in the group that says so. */
	(void)identity_refresh_all(a);
	n = victims_collect(l, rq, dev, spare, cand, who, releasing);
	k = victims_choose(priority, need, cand, who, n, chosen);
	for (i = 0; i < k; i++) {
		struct ledger_client *vc = who[chosen[i] - cand];

		if (l->groups[vc->group].pol.on_preempt == GF_PREEMPT_SWAP &&
		    swap_preempt(a, vc, dev, rq) == 0)
			continue;
		g = preempt_victim(a, vc, dev, rq);
		*grace = g > *grace ? g : *grace;
	}
out_free:
	free(cand);
	free(chosen);
	free(who);
	free(releasing);
	return k;
}

/* How long a request waits for victims: at least their SIGKILL's time. */
static uint64_t
victims_timeout(const struct group_policy *pol, uint64_t grace)
{
	uint64_t timeout = pol->wait_timeout_ms;

	if (timeout != 0 && timeout < grace + RESOLVE_PREEMPT_SLACK_MS)
		timeout = grace + RESOLVE_PREEMPT_SLACK_MS;
	return timeout;
}

static int
preempt(struct arbiter *a, struct conn *c, uint32_t seq, size_t dev,
    uint64_t size, uint64_t need, char *why, size_t whylen)
{
	const struct group_policy *pol =
	    &a->ledger.groups[c->client->group].pol;
	uint64_t grace;

	if (take_back(a, c->client, dev, need, pol->priority, SIZE_MAX,
	    &grace) == 0)
		return deny_now(a, c, seq, dev, size, "device full: nothing "
		    "preemptible", why, whylen);
	return resolve_queue(a, c, seq, dev, size, victims_timeout(pol, grace),
	    why, whylen);
}

/* Whether a process of a group other than spare is releasing memory on dev. */
static int
releasing_on(const struct ledger *l, size_t dev, size_t spare)
{
	const struct ledger_client *vc;

	TAILQ_FOREACH(vc, &l->clients, entry)
		if (vc->group != spare && (vc->preempting || vc->departing) &&
		    vc->usage[dev].used > 0)
			return 1;
	return 0;
}

/*
 * c's group asks within its guarantee for what borrowers hold: take it
 * back from them whatever the priorities (their on_preempt says how) and
 * queue the request ahead of every other. Returns 1 when nothing is there
 * to take back (the request's own resolver decides), else as a handler.
 */
static int
reclaim(struct arbiter *a, struct conn *c, uint32_t seq, size_t dev,
    uint64_t size, char *why, size_t whylen)
{
	struct ledger_client *rq = c->client;
	const struct group_policy *pol = &a->ledger.groups[rq->group].pol;
	uint64_t avail = ledger_available(&a->ledger, rq->group, dev), grace;
	uint64_t need = size > avail ? size - avail : 0;
	size_t k;

	k = take_back(a, rq, dev, need, INT32_MAX, rq->group, &grace);
	if (k == 0 && !releasing_on(&a->ledger, dev, rq->group))
		return 1;
	decision_event(a, GF_EV_RECLAIM, rq, (int)dev, need, "taking back "
	    "its guarantee from %zu process%s", k, k == 1 ? "" : "es");
	return queue_request(a, c, seq, dev, size, victims_timeout(pol,
	    grace), INT32_MAX, "guarantee lent", why, whylen);
}

int
resolve_collision(struct arbiter *a, struct conn *c, uint32_t seq,
    size_t dev, uint64_t size, char *why, size_t whylen)
{
	struct ledger *l = &a->ledger;
	const struct group_policy *pol = &l->groups[c->client->group].pol;
	uint64_t avail;
	int rc;

	/*
	 * What is owed to it comes back whatever its resolver (lent before
	 * a reload turned lending off too).
	 */
	if (ledger_within_guarantee(l, c->client, dev, size) &&
	    (rc = reclaim(a, c, seq, dev, size, why, whylen)) != 1)
		return rc;
	if (pol->resolver == GF_RESOLVER_FAIL)
		return deny_now(a, c, seq, dev, size, "device full", why,
		    whylen);
	/* Such a request would hold the queue's barrier until its deadline. */
	if (size > ledger_available_ever(l, c->client->group, dev))
		return deny_now(a, c, seq, dev, size, "device full: could "
		    "never fit", why, whylen);
	if (pol->resolver == GF_RESOLVER_SWAP)
		return swap_collision(a, c, seq, dev, size, why, whylen);
	avail = ledger_available(l, c->client->group, dev);
	if (pol->resolver == GF_RESOLVER_PREEMPT && size > avail)
		return preempt(a, c, seq, dev, size, size - avail, why,
		    whylen);
	/* wait, or memory there but owed to a waiter of higher priority */
	return resolve_queue(a, c, seq, dev, size, pol->wait_timeout_ms, why,
	    whylen);
}
