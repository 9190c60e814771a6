/*
 * Host swap, the answers owed: a process that asked to come back
 * (SWAP_IN) is answered OK once it is back, an admin who asked for a swap
 * (SWAP_REQ) OK or an ERROR once it is over; a closing connection's
 * questions are forgotten.
 */
#include <stdlib.h>

#include "arbiter.h"
#include "control.h"
#include "ledger.h"
#include "proto.h"
#include "swap.h"
#include "swap_op.h"

void
swap_ask_drop(struct arbiter *a, struct swap_ask *q)
{
	if (!q->admin && q->lc != NULL && q->lc->swapin_asks > 0)
		q->lc->swapin_asks--;
	if (q->unseen && q->lc != NULL && q->lc->swapin_unseen > 0)
		q->lc->swapin_unseen--;
	TAILQ_REMOVE(&a->swap.asks, q, entry);
	free(q);
}

void
swap_ask_reply(struct swap_ask *q, int ok, const char *msg)
{
	char why[96];
	int r;

	if (ok)
		r = conn_reply(q->c, GF_MSG_OK, q->seq, NULL, why, sizeof(why));
	else
		r = conn_reply_error(q->c, q->seq, GF_ERR_SWAP, msg, why,
		    sizeof(why));
	if (r < 0)
		control_close_later(q->c, why);
}

/*
 * lc is now where dir says (ok), or could not get there: answer who
 * asked for that. A process asking to come back is told only of success;
 * it keeps waiting otherwise.
 */
void
swap_asks_settle(struct arbiter *a, struct ledger_client *lc, int dir, int ok,
    const char *msg)
{
	struct swap_ask *q, *next;

	for (q = TAILQ_FIRST(&a->swap.asks); q != NULL; q = next) {
		next = TAILQ_NEXT(q, entry);
		if (q->lc != lc || q->dir != dir || (!ok && !q->admin))
			continue;
		swap_ask_reply(q, ok, msg);
		swap_ask_drop(a, q);
	}
}

struct swap_ask *
swap_ask_add(struct arbiter *a, struct conn *c, uint32_t seq,
    struct ledger_client *lc, int dir, int admin)
{
	struct swap_ask *q = calloc(1, sizeof(*q));

	if (q == NULL)
		return NULL;
	q->c = c;
	q->seq = seq;
	q->lc = lc;
	q->dir = dir;
	q->admin = admin;
	if (!admin)
		lc->swapin_asks++;
	TAILQ_INSERT_TAIL(&a->swap.asks, q, entry);
	return q;
}

void
swap_conn_gone(struct arbiter *a, struct conn *c)
{
	struct swap_ask *q, *next;

	for (q = TAILQ_FIRST(&a->swap.asks); q != NULL; q = next) {
		next = TAILQ_NEXT(q, entry);
		if (q->c == c)
			swap_ask_drop(a, q);
	}
}
