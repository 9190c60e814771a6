/*
 * Host swap's requests: a collision its resolver sends to swap, a victim
 * of preemption, a process asking to come back (SWAP_IN), an admin asking
 * for a swap (SWAP_REQ). Each becomes a swap_op queued for swap_pump.
 */
#include <stdio.h>
#include <string.h>

#include "arbiter.h"
#include "control.h"
#include "decision.h"
#include "ledger.h"
#include "log.h"
#include "proto.h"
#include "resolve.h"
#include "swap.h"
#include "swap_op.h"

int
swap_collision(struct arbiter *a, struct conn *c, uint32_t seq, size_t dev,
    uint64_t size, char *why, size_t whylen)
{
	const struct group_policy *pol = &a->ledger.groups[c->client->group].pol;
	int r;

	if (!a->swap.available)
		decision_event(a, GF_EV_FALLBACK, c->client, (int)dev, size,
		    "swap unavailable: waiting instead");
	r = resolve_queue(a, c, seq, dev, size, pol->wait_timeout_ms, why,
	    whylen);
	swap_pump(a);
	return r;
}

int
swap_preempt(struct arbiter *a, struct ledger_client *lc, size_t dev,
    const struct ledger_client *rq)
{
	const char *no = swap_unmovable(a, lc);
	char cause[48];
	struct swap_op *op;

	if (!a->swap.available) {
		decision_event(a, GF_EV_FALLBACK, lc, (int)dev,
		    lc->usage[dev].used, "swap unavailable: killing instead");
		return -1;
	}
	if (no != NULL) {
		decision_event(a, GF_EV_FALLBACK, lc, (int)dev,
		    lc->usage[dev].used, "cannot be swapped (%s): killing "
		    "instead", no);
		return -1;
	}
	snprintf(cause, sizeof(cause), "preempted for pid %u", rq->pid);
	if ((op = swap_op_new(a, lc, GF_SWAP_OUT, cause)) == NULL)
		return -1;
	op->preempt = 1;
	lc->preempting = 1;
	decision_event(a, GF_EV_PREEMPT, lc, (int)dev, lc->usage[dev].used,
	    "swap out, for pid %u of group '%s'", rq->pid,
	    a->ledger.groups[rq->group].pol.name);
	TAILQ_INSERT_TAIL(&a->swap.todo, op, entry);
	swap_pump(a);
	return 0;
}

int
swap_on_swap_in(struct arbiter *a, struct conn *c, uint32_t seq,
    uint32_t reason, char *why, size_t whylen)
{
	struct ledger_client *lc = c->client;
	struct swap_ask *q;
	struct gf_wait wt;

	/* Its move in failed after it was taken as in: out, its mark stays. */
	(void)swap_page_recheck(a, lc);
	if (lc->swap == SWAP_NONE) {
		swap_mark(lc, 0);		/* a mark left from a skipped swap */
		return conn_reply(c, GF_MSG_OK, seq, NULL, why, whylen);
	}
	if ((q = swap_ask_add(a, c, seq, lc, GF_SWAP_IN, 0)) == NULL) {
		snprintf(why, whylen, "out of memory for a swap-in request");
		return -1;
	}
	/* Any other value is a reason this daemon does not know: a call. */
	if (reason == GF_SWAPIN_UNSEEN) {
		q->unseen = 1;
		if (lc->swapin_unseen++ == 0)
			log_info("pid %u: a thread waits in the driver unseen; "
			    "it asks to come back", lc->pid);
	}
	memset(&wt, 0, sizeof(wt));
	wt.timeout_ms = GF_WAIT_FOREVER;
	if (conn_reply(c, GF_MSG_WAIT, seq, &wt, why, whylen) < 0)
		return -1;
	swap_pump(a);
	return 0;
}

int
swap_on_request(struct arbiter *a, struct conn *c, uint32_t seq,
    const struct gf_swap_req *r, char *why, size_t whylen)
{
	struct ledger_client *lc = NULL;
	char msg[GF_ERRMSG_LEN];
	struct swap_op *op = NULL;

	if (r->direction != GF_SWAP_OUT && r->direction != GF_SWAP_IN) {
		snprintf(why, whylen, "bad direction %u in SWAP_REQ",
		    r->direction);
		return -1;
	}
	while ((lc = ledger_client_find(&a->ledger, r->pid, lc)) != NULL &&
	    lc->departing)
		;
	if (lc == NULL) {
		snprintf(msg, sizeof(msg), "no client with pid %u", r->pid);
		return conn_reply_error(c, seq, GF_ERR_NO_SUCH_PID, msg, why, whylen);
	}
	if (!a->swap.available) {
		snprintf(msg, sizeof(msg), "swap unavailable: %s",
		    a->swap.reason);
		return conn_reply_error(c, seq, GF_ERR_SWAP, msg, why, whylen);
	}
	if (r->direction == GF_SWAP_OUT && lc->swap != SWAP_NONE)
		return conn_reply_error(c, seq, GF_ERR_SWAP, "already swapped out", why,
		    whylen);
	if (r->direction == GF_SWAP_IN && lc->swap == SWAP_NONE)
		return conn_reply_error(c, seq, GF_ERR_SWAP, "not swapped out", why,
		    whylen);
	log_info("pid %u (uid %u) asks to swap %s pid %u", c->pid, c->uid,
	    r->direction == GF_SWAP_OUT ? "out" : "in", r->pid);
	snprintf(msg, sizeof(msg), "by hand, pid %u", c->pid);
	if (swap_ask_add(a, c, seq, lc, (int)r->direction, 1) == NULL ||
	    (lc->swap != SWAP_COMING_IN &&
	    (op = swap_op_new(a, lc, (int)r->direction, msg)) == NULL)) {
		snprintf(why, whylen, "out of memory for a swap request");
		return -1;
	}
	if (lc->swap != SWAP_COMING_IN) {
		op->by_hand = 1;
		TAILQ_INSERT_TAIL(&a->swap.todo, op, entry);
	}
	swap_pump(a);
	return 0;
}
