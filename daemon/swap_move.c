/*
 * Host swap by the copy engine: the process's shim moves its own memory
 * (shim/vback.h). MOVE is sent to it with a deadline; its MOVED ends the
 * swap, or the deadline gives up on it (a move out its shim has committed
 * to is taken as out); a MOVED for GF_SWAP_DROP gives kept host memory
 * back (swap_host.c). What moved out goes to host, what stayed stays
 * charged on the device. The swap's start and end around it are swap.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arbiter.h"
#include "control.h"
#include "decision.h"
#include "event.h"
#include "grantrec.h"
#include "ledger.h"
#include "log.h"
#include "proto.h"
#include "swap.h"
#include "swap_op.h"
#include "units.h"

#define MOVED_SAY_MS	1000	/* unasked MOVEDs logged at most this often */

/*
 * How long the copy engine's shim has to answer MOVE: swap_move_timeout,
 * for what the program has queued (the move waits for it) and the
 * scheduler, plus the bytes at a floor rate far below any bus.
 */
static uint64_t
move_deadline_ms(const struct arbiter *a, const struct swap_op *op)
{
	return a->conf.swap_move_timeout_ms +
	    swap_footprint(a, op->lc) / SWAP_MOVE_FLOOR_BPMS;
}

/*
 * No MOVED in time: give up on the move (its failure, the usual way), so
 * that the next swap may start. A move out is called off by taking the
 * page's mark back (activity.h), unless the shim has committed to it:
 * then its memory has left, and it is taken as out. A late MOVED names
 * an id no swap waits for: ignored.
 */
static void
move_late(struct event_loop *loop, void *arg)
{
	struct swap_op *op = arg;
	struct ledger_client *lc = op->lc;
	uint32_t want = op->id;

	(void)loop;
	op->deadline = 0;
	op->late_ms = event_now_ms() - op->job.duration_us / 1000;
	op->job.stage = "MOVE";
	op->job.result = CUDA_ERROR_TIMEOUT;
	if (op->dir == GF_SWAP_OUT && lc != NULL && lc->act != NULL &&
	    !__atomic_compare_exchange_n(&lc->act->swapped, &want, 0, 0,
	    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST) &&
	    want == (op->id | GF_SWAPPED_COMMITTED)) {
		op->job.result = CUDA_SUCCESS;
		op->moved = swap_footprint(op->a, lc);
	}
	/* In: out, no move asked; unless the shim has committed to it. */
	want = op->id | GF_SWAPPED_COMMITTED;
	if (op->dir == GF_SWAP_IN && lc != NULL && lc->act != NULL &&
	    !__atomic_compare_exchange_n(&lc->act->swapped, &want,
	    GF_SWAPPED_COMMITTED, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST) &&
	    (want == 0 || want == (op->id | GF_SWAPPED_COMMITTED |
	    GF_SWAPPED_IN))) {
		op->job.result = CUDA_SUCCESS;
		op->moved = swap_footprint(op->a, lc);
		lc->taken_in = 1;
	}
	if (lc != NULL)
		lc->move_late_id = op->id;	/* its MOVED may still come */
	log_warnx("pid %u: no MOVED within %llu ms: %s", op->job.pid,
	    (unsigned long long)op->late_ms, op->job.result != CUDA_SUCCESS ?
	    "the move is given up" : op->dir == GF_SWAP_OUT ?
	    "its memory has left: taken as out" : "its memory is coming "
	    "back: taken as in");
	op->job.duration_us = op->late_ms * 1000;
	swap_done(op->a, &op->job);
}

/* The shim could not be asked: the move ends now, failed (a timer's). */
static void
move_unsent(struct event_loop *loop, void *arg)
{
	struct swap_op *op = arg;

	(void)loop;
	op->deadline = 0;
	swap_done(op->a, &op->job);
}

struct conn *
swap_conn_of(struct arbiter *a, const struct ledger_client *lc)
{
	struct conn *c;

	TAILQ_FOREACH(c, &a->control.conns, entry)
		if (c->client == lc && !c->gone)
			return c;
	return NULL;
}

/* Ask lc's shim to move its memory (the copy engine). */
void
swap_move_send(struct arbiter *a, struct swap_op *op)
{
	struct gf_move mv;
	struct conn *c;

	op->job.duration_us = event_now_ms() * 1000;	/* when it began */
	/* Back in only while marked so (activity.h): no wake, it is out. */
	if (op->dir == GF_SWAP_IN && op->lc->act != NULL)
		__atomic_store_n(&op->lc->act->swapped, op->id |
		    GF_SWAPPED_COMMITTED, __ATOMIC_SEQ_CST);
	memset(&mv, 0, sizeof(mv));
	mv.direction = (uint32_t)op->dir;
	mv.id = op->id;
	op->lc->move_bound = swap_footprint(a, op->lc);
	if ((c = swap_conn_of(a, op->lc)) != NULL && conn_send(c, GF_MSG_MOVE, 0, &mv) == 0) {
		op->deadline = event_timer_add(a->loop, move_deadline_ms(a, op),
		    move_late, op);
		if (op->deadline > 0)
			return;
		op->deadline = 0;
		log_warnx("cannot arm a deadline for the move of pid %u",
		    op->lc->pid);
	}
	op->job.result = CUDA_ERROR_UNKNOWN;
	op->job.stage = "MOVE";
	op->job.duration_us = 0;
	/*
	 * Its timer, as the deadline's: the op may be freed before it fires
	 * (its process is dropped in the same round, swap_client_gone), and
	 * swap_op_free cancels it then.
	 */
	if ((op->deadline = event_timer_add(a->loop, 0, move_unsent,
	    op)) < 0) {
		op->deadline = 0;
		log_warnx("cannot end a swap of pid %u", op->lc->pid);
	}
}

/*
 * The copy engine moved lc out: what it moved goes to host, what stayed
 * (op->stayed, by lc's device ordinals) stays charged on the device.
 */
void
swap_ended_out_copy(struct arbiter *a, struct swap_op *op)
{
	struct ledger_client *lc = op->lc;
	uint64_t *keep, stayed = 0;
	char sbuf[32], tbuf[32], rbuf[32], left[GF_MOVED_WHAT_LEN + 80];
	size_t d;

	/* Out of memory: all goes to host, as the checkpoint engine's. */
	if ((keep = calloc(a->ledger.ndevices + 1, sizeof(*keep))) == NULL)
		op->nstayed = 0;
	for (d = 0; keep != NULL && d < a->ledger.ndevices; d++) {
		if (!lc->usage[d].opened)
			continue;
		/*
		 * MOVED tells of ordinals below GF_MOVED_DEVICES only: on
		 * another, what stayed is not known, so all of it is taken
		 * as still there, never less than the driver holds.
		 */
		keep[d] = lc->usage[d].ordinal < GF_MOVED_DEVICES ?
		    op->stayed[lc->usage[d].ordinal] : lc->usage[d].used;
		stayed += keep[d];
	}
	if (keep != NULL)
		ledger_swap_out_keep(&a->ledger, lc, keep);
	else
		ledger_swap_out(&a->ledger, lc);
	free(keep);
	lc->swap = SWAP_OUT;
	lc->swap_skip = 0;
	lc->swap_parked = op->by_hand;
	lc->swapped_ms = event_now_ms();
	swap_set_state(lc);
	if (op->late_ms != 0) {
		/* No MOVED to say what moved, nor how fast (move_late). */
		decision_event_timed(a, GF_EV_SWAP_OUT, lc, op->moved,
		    (uint32_t)op->late_ms, "swapped out (%s): no MOVED within "
		    "%llu ms, its %s had left", op->cause,
		    (unsigned long long)op->late_ms, size_format(op->moved,
		    sbuf, sizeof(sbuf)));
		swap_asks_settle(a, lc, GF_SWAP_OUT, 1, NULL);
		return;
	}
	/* Not in the event, whose reason has no room: the log says it. */
	if (op->pinned > 0)
		log_info("pid %u: %s of host memory pinned for its move out, "
		    "kept for the next", lc->pid, size_format(op->pinned, tbuf,
		    sizeof(tbuf)));
	left[0] = '\0';
	if (op->nstayed > 0)
		snprintf(left, sizeof(left), "; %u stayed: %s (%s)",
		    op->nstayed, size_format(stayed, tbuf, sizeof(tbuf)),
		    op->what);
	/* A reason is cut at PROTO_REASON_MAX - 1: what stayed comes last. */
	decision_event_timed(a, GF_EV_SWAP_OUT, lc, op->moved,
	    (uint32_t)(op->job.duration_us / 1000), "swapped out (%s): %s by "
	    "copy in %llu ms, %s%s", op->cause, size_format(op->moved, sbuf,
	    sizeof(sbuf)), (unsigned long long)op->job.duration_us / 1000,
	    swap_rate_format(op->moved, op->job.duration_us, rbuf, sizeof(rbuf)),
	    left);
	swap_asks_settle(a, lc, GF_SWAP_OUT, 1, NULL);
}

/*
 * A MOVED nobody asked for (a confused shim, or a liar: issue 32): its
 * figures change nothing; counted, and said a few times a second at most.
 */
static void
moved_ignored(struct arbiter *a, const struct conn *c,
    const struct gf_moved *m)
{
	struct swap *s = &a->swap;
	uint64_t now = event_now_ms();

	s->moved_ignored++;
	if (s->moved_said_ms != 0 && now - s->moved_said_ms < MOVED_SAY_MS) {
		s->moved_unsaid++;
		return;
	}
	log_info("pid %u: a MOVED no move waits for (direction %u, id %u): "
	    "ignored%s", c->pid, m->direction, m->id, s->moved_unsaid ?
	    ", as were others since" : "");
	s->moved_said_ms = now;
	s->moved_unsaid = 0;
}

/*
 * The MOVED of a move given up on (move_late), which was asked: what it
 * keeps is true, bounded by what it had to move; kept from now on, it
 * goes back after swap_keep as if back in (issue 33).
 */
static void
moved_late(struct arbiter *a, struct ledger_client *lc,
    const struct gf_moved *m)
{
	char sbuf[32];

	lc->move_late_id = 0;
	lc->host_kept = m->kept < lc->move_bound ? m->kept : lc->move_bound;
	log_info("pid %u: the MOVED of a move given up on (id %u) came: "
	    "%s of pinned host memory kept", lc->pid, m->id, size_format(
	    lc->host_kept, sbuf, sizeof(sbuf)));
	/* A move in taken as in that failed: the page says out (not m). */
	if (swap_page_recheck(a, lc))
		swap_pump(a);
	else if (lc->swap == SWAP_NONE)
		swap_host_came_in(a, lc);
	lc->taken_in = 0;	/* its last word on that move has come */
	grantrec_put(a, lc);	/* its record says where it is now */
}

int
swap_on_moved(struct arbiter *a, struct conn *c, const struct gf_moved *m,
    char *why, size_t whylen)
{
	struct swap_op *op = a->swap.running;
	struct ledger_client *lc = c->client;

	(void)why;
	(void)whylen;
	if (m->direction == GF_SWAP_DROP) {
		if (!lc->host_dropping)
			moved_ignored(a, c, m);
		else
			swap_host_dropped(a, lc, m);
		return 0;
	}
	if (op == NULL || op->lc != lc || op->engine != GF_ENGINE_COPY ||
	    (uint32_t)op->dir != m->direction || op->id != m->id ||
	    op->job.stage != NULL) {
		if (m->id != 0 && m->id == lc->move_late_id)
			moved_late(a, lc, m);
		else
			moved_ignored(a, c, m);
		return 0;
	}
	/* Asked: what it keeps, within what it had to move. */
	lc->host_kept = m->kept < lc->move_bound ? m->kept : lc->move_bound;
	op->job.duration_us = m->duration_us;
	op->job.result = (CUresult)m->result;
	op->job.stage = "MOVE";
	if (m->result != CUDA_SUCCESS)
		snprintf(op->what, sizeof(op->what), "%s", m->what);
	else
		memcpy(op->what, m->what, sizeof(op->what));
	op->what[sizeof(op->what) - 1] = '\0';
	if (m->result != CUDA_SUCCESS)
		op->job.stage = op->what;
	op->moved = m->moved;
	op->pinned = m->pinned;
	memcpy(op->stayed, m->stayed, sizeof(op->stayed));
	op->nstayed = m->nstayed;
	swap_done(a, &op->job);
	/* A move out that failed may have pinned: back after swap_keep. */
	if (lc->swap == SWAP_NONE && lc->host_kept > 0)
		swap_host_came_in(a, lc);
	return 0;
}
