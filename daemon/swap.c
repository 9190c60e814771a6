/*
 * Host swap, the mechanism: a swap started through the checkpoint engine
 * (ckpt.c) or the copy engine (the process's shim moves its own memory:
 * MOVE and MOVED, swap_move.c), as its group's swap_engine says, the
 * ledger's device charge moved to host and back around it, the events
 * that say what happened, and the requests that come in. The answers
 * owed to processes asking to come back and admins asking for a swap are
 * swap_ask.c's; what to move and when is swap_pick.c's.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "activity.h"
#include "admin.h"
#include "arbiter.h"
#include "control.h"
#include "devices.h"
#include "driver.h"
#include "event.h"
#include "ledger.h"
#include "lease.h"
#include "log.h"
#include "nvml.h"
#include "proto.h"
#include "resolve.h"
#include "swap.h"
#include "swap_op.h"
#include "units.h"
#include "victims.h"
#include "waitq.h"

/*
 * Marked out, the process's shim wakes (a futex on the shared page) to
 * watch for threads that wait in the driver where no hook sees them.
 */
void
swap_mark(struct ledger_client *lc, uint32_t v)
{
	if (lc->act == NULL)
		return;
	__atomic_store_n(&lc->act->swapped, v, __ATOMIC_SEQ_CST);
	if (v != 0)
		(void)syscall(SYS_futex, &lc->act->swapped, FUTEX_WAKE,
		    INT_MAX, NULL, NULL, 0);
}

/* All lc holds, on the device or out. */
uint64_t
swap_footprint(const struct arbiter *a, const struct ledger_client *lc)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < a->ledger.ndevices; i++)
		n += lc->usage[i].used + lc->usage[i].host;
	return n;
}

void
swap_set_state(struct ledger_client *lc)
{
	if (lc->swap == SWAP_OUT || lc->swap == SWAP_GOING_OUT)
		lc->state = GF_STATE_SWAPPED;
	else
		lc->state = lc->nwaiting ? GF_STATE_WAITING : GF_STATE_RUNNING;
}

/* ---- starting a swap ---------------------------------------------------- */

static uint32_t engine_of(const struct arbiter *a,
	    const struct ledger_client *lc);

/*
 * The copy engine leaves on the device what it cannot move: what another
 * process maps (its shim keeps exported memory, and imported memory is
 * the exporter's) and managed memory, which the driver migrates on its
 * own; the checkpoint API cannot move a process with either at all.
 */
const char *
swap_unmovable(const struct arbiter *a, const struct ledger_client *lc)
{
	if (lc->act == NULL)
		return "it shares no activity page with gpufracd";
	if (engine_of(a, lc) == GF_ENGINE_COPY)
		return NULL;
	if (__atomic_load_n(&lc->act->flags, __ATOMIC_RELAXED) & GF_ACT_IPC)
		return "it holds IPC memory, which cannot be swapped";
	if (lc->nmanaged > 0)
		return "it holds managed memory, which cannot be swapped";
	return NULL;
}

static int
pending_any(const struct arbiter *a, const struct ledger_client *lc)
{
	size_t i;

	for (i = 0; i < a->ledger.ndevices; i++)
		if (lc->usage[i].pending)
			return 1;
	return 0;
}

void
swap_op_free(struct arbiter *a, struct swap_op *op)
{
	if (op->deadline > 0 && a->loop != NULL)
		event_timer_cancel(a->loop, op->deadline);
	if (op->preempt && op->lc != NULL)
		op->lc->preempting = 0;
	if (a->swap.running == op)
		a->swap.running = NULL;
	free(op);
}

static const char *
engine_name(uint32_t engine)
{
	return engine == GF_ENGINE_COPY ? "copy" : "checkpoint";
}

/* The engine of lc's group. */
static uint32_t
engine_of(const struct arbiter *a, const struct ledger_client *lc)
{
	return a->ledger.groups[lc->group].pol.swap_engine;
}

/* "2.31 GB/s" for bytes in us, into buf. */
const char *
swap_rate_format(uint64_t bytes, uint64_t us, char *buf, size_t len)
{
	if (us == 0)
		us = 1;
	snprintf(buf, len, "%.2f GB/s", (double)bytes / (double)us / 1000.0);
	return buf;
}

static struct swap_op *
op_new(struct arbiter *a, struct ledger_client *lc, int dir,
    const char *cause)
{
	struct swap_op *op = calloc(1, sizeof(*op));

	if (op == NULL) {
		log_warnx("no memory to swap pid %u", lc->pid);
		return NULL;
	}
	op->a = a;
	op->lc = lc;
	op->dir = dir;
	snprintf(op->cause, sizeof(op->cause), "%s", cause);
	op->job.op = dir == GF_SWAP_OUT ? CKPT_OUT : CKPT_IN;
	op->job.pid = (pid_t)lc->pid;
	op->job.lock_timeout_ms = SWAP_LOCK_TIMEOUT_MS;
	op->job.arg = op;
	op->engine = engine_of(a, lc);
	/* Nonzero, below the commit bit: the page's mark and MOVE's id. */
	if (++a->swap.last_id > GF_SWAPPED_ID)
		a->swap.last_id = 1;
	op->id = a->swap.last_id;
	return op;
}

static void
op_submit(struct arbiter *a, struct swap_op *op)
{
	a->swap.running = op;
	if (op->engine == GF_ENGINE_COPY)
		swap_move_send(a, op);
	else
		ckpt_submit(&a->swap.engine, &op->job);
}

static void
retry_fire(struct event_loop *loop, void *arg)
{
	struct arbiter *a = arg;
	struct ledger_client *lc;

	(void)loop;
	a->swap.retry_timer = 0;
	TAILQ_FOREACH(lc, &a->ledger.clients, entry)
		if (lc->swap == SWAP_OUT)
			lc->swap_skip = 0;
	swap_pump(a);
}

/* Look again in ms: a restore that failed, a busy victim of preemption. */
static void
retry_arm(struct arbiter *a, uint64_t ms)
{
	if (a->swap.retry_timer != 0 || a->loop == NULL)
		return;
	a->swap.retry_timer = event_timer_add(a->loop, ms, retry_fire, a);
	if (a->swap.retry_timer < 0)
		a->swap.retry_timer = 0;
}

/*
 * Swap lc out now, unless it must be skipped: then an event says why, it
 * is not tried again this round, and -1. op is taken over either way.
 */
int
swap_start_out(struct arbiter *a, struct swap_op *op)
{
	struct ledger_client *lc = op->lc;
	const char *no = swap_unmovable(a, lc);
	uint64_t limit = a->conf.swap_host_limit, after, back;
	char hbuf[GF_ERRMSG_LEN], b1[32], b2[32], b3[32], b4[32];

	if (no == NULL && op->engine == GF_ENGINE_COPY &&
	    !(__atomic_load_n(&lc->act->flags, __ATOMIC_RELAXED) &
	    GF_ACT_COPY))
		no = "its shim cannot move its own memory (copy engine)";
	if (no == NULL && op->engine == GF_ENGINE_CHECKPOINT &&
	    !a->swap.ckpt_ok)
		no = "the checkpoint engine is unavailable";
	if (no == NULL && limit != 0 &&
	    (after = swap_host_after(a, lc)) > limit) {
		back = swap_host_reclaim(a, lc, after - limit);
		snprintf(hbuf, sizeof(hbuf), "%s on host and %s more would "
		    "pass swap_host_limit %s%s%s%s", size_format(
		    swap_host_used(a), b1, sizeof(b1)), size_format(after -
		    swap_host_used(a), b2, sizeof(b2)), size_format(limit, b3,
		    sizeof(b3)), back ? "; " : "", back ? size_format(back, b4,
		    sizeof(b4)) : "", back ? " of kept pinned memory asked "
		    "back" : "");
		no = hbuf;
	}
	if (no == NULL && pending_any(a, lc))
		no = "busy: an allocation is under way";
	if (no == NULL) {
		/* The handshake of activity.h: a thread in the driver wins. */
		swap_mark(lc, op->id);
		if (__atomic_load_n(&lc->act->inflight, __ATOMIC_SEQ_CST)) {
			swap_mark(lc, 0);
			no = "busy: in a driver call";
		}
	}
	if (no != NULL) {
		arbiter_event(a, GF_EV_SWAP_SKIP, lc, -1, swap_footprint(a, lc),
		    "not swapped out (%s): %s%s", op->cause, no,
		    op->preempt && op->tries + 1 < SWAP_BUSY_TRIES ?
		    "; trying again" : "");
		/* A preemption is owed: a busy victim is tried again soon. */
		if (op->preempt && ++op->tries < SWAP_BUSY_TRIES) {
			op->not_before_ms = event_now_ms() + SWAP_BUSY_RETRY_MS;
			TAILQ_INSERT_TAIL(&a->swap.todo, op, entry);
			retry_arm(a, SWAP_BUSY_RETRY_MS);
			return -1;
		}
		lc->swap_skip = 1;
		swap_asks_settle(a, lc, GF_SWAP_OUT, 0, no);
		swap_op_free(a, op);
		return -1;
	}
	lc->swap = SWAP_GOING_OUT;
	a->swap.nout++;
	swap_set_state(lc);
	op_submit(a, op);
	return 0;
}

/* Bring lc back now: its memory fits (the caller checked). */
void
swap_start_in(struct arbiter *a, struct swap_op *op)
{
	struct ledger_client *lc = op->lc;

	ledger_swap_in(&a->ledger, lc);	/* its room is taken from now on */
	lc->swap = SWAP_COMING_IN;
	op_submit(a, op);
}

/* Swap lc in or out now; "why" names the pid it is done for. */
int
swap_start(struct arbiter *a, struct ledger_client *lc, int dir,
    const char *why, uint32_t pid)
{
	char cause[sizeof(((struct swap_op *)0)->cause)];
	struct swap_op *op;

	snprintf(cause, sizeof(cause), "%s pid %u", why, pid);
	if ((op = op_new(a, lc, dir, cause)) == NULL)
		return -1;
	if (dir == GF_SWAP_OUT)
		return swap_start_out(a, op);
	swap_start_in(a, op);
	return 0;
}

/* ---- a swap has ended ------------------------------------------------- */

/*
 * Whether the driver has room for what lc brings back, as NVML shows it.
 * Memory the ledger does not know of yet must not make a restore fail:
 * a process that re-registers with a restarted daemon holds its memory
 * between its HELLO (no longer foreign) and its allocations (charged),
 * and a program without the shim may start between two of the driver's
 * looks. Without NVML the ledger's word stands.
 */
int
swap_driver_room(const struct arbiter *a, const struct ledger_client *lc)
{
	uint64_t used;
	size_t d;

	if (!driver_follows())
		return 1;
	for (d = 0; d < a->ledger.ndevices; d++)
		if (lc->usage[d].host > 0 && nvml_used(d, &used) == 0 &&
		    used + lc->usage[d].host > a->ledger.devices[d].total)
			return 0;
	return 1;
}

/*
 * Whether lc, which asks to come back, fits the device, once the unused
 * leases that stand in its way are taken back.
 */
int
swap_fits_back(struct arbiter *a, struct ledger_client *lc)
{
	size_t d;

	if (!swap_driver_room(a, lc))
		return 0;
	if (ledger_swap_in_fits(&a->ledger, lc))
		return 1;
	for (d = 0; d < a->ledger.ndevices; d++)
		if (lc->usage[d].host > 0)
			(void)lease_reclaim(a, lc, d, LEDGER_COLLISION);
	return ledger_swap_in_fits(&a->ledger, lc);
}

/* Why op failed, into msg. */
static void
fail_msg(const struct swap_op *op, char *msg, size_t len)
{
	const struct ckpt_job *j = &op->job;

	if (op->late_ms != 0)
		snprintf(msg, len, "no MOVED within %llu ms",
		    (unsigned long long)op->late_ms);
	else
		snprintf(msg, len, "%s failed: %s%s", j->stage,
		    devices_error_name(j->result), !strcmp(j->stage, "lock") ?
		    " (busy in the driver)" : "");
}

static void
ended_out(struct arbiter *a, struct swap_op *op)
{
	struct ledger_client *lc = op->lc;
	const struct ckpt_job *j = &op->job;
	uint64_t bytes = swap_footprint(a, lc);
	char msg[GF_ERRMSG_LEN], sbuf[32], rbuf[32];

	if (j->result == CUDA_SUCCESS) {
		/* Leased, not allocated: no need to go to host memory. */
		lease_take_all(a, lc);
		if (op->engine == GF_ENGINE_COPY) {
			swap_ended_out_copy(a, op);
			return;
		}
		ledger_swap_out(&a->ledger, lc);
		lc->swap = SWAP_OUT;
		/*
		 * Passed over before (swap_start_out) and out by an explicit
		 * swap all the same: no reason to keep it out once it asks.
		 */
		lc->swap_skip = 0;
		lc->swap_parked = op->by_hand;
		lc->swapped_ms = event_now_ms();
		swap_set_state(lc);
		arbiter_event_timed(a, GF_EV_SWAP_OUT, lc, bytes,
		    (uint32_t)(j->duration_us / 1000), "swapped out (%s): %s "
		    "by checkpoint in %llu ms, %s", op->cause, size_format(bytes,
		    sbuf, sizeof(sbuf)), (unsigned long long)j->duration_us /
		    1000, swap_rate_format(bytes, j->duration_us, rbuf,
		    sizeof(rbuf)));
		swap_asks_settle(a, lc, GF_SWAP_OUT, 1, NULL);
		return;
	}
	swap_mark(lc, 0);
	lc->swap = SWAP_NONE;
	lc->swap_skip = 1;
	a->swap.nout--;
	swap_set_state(lc);
	fail_msg(op, msg, sizeof(msg));
	arbiter_event_timed(a, GF_EV_SWAP_SKIP, lc, bytes,
	    (uint32_t)(j->duration_us / 1000), "not swapped out by %s (%s): "
	    "%s", engine_name(op->engine), op->cause, msg);
	swap_asks_settle(a, lc, GF_SWAP_OUT, 0, msg);
	swap_asks_settle(a, lc, GF_SWAP_IN, 1, NULL);	/* it never left */
}


static void
ended_in(struct arbiter *a, struct swap_op *op)
{
	struct ledger_client *lc = op->lc;
	const struct ckpt_job *j = &op->job;
	uint64_t bytes = swap_footprint(a, lc), moved;
	char msg[GF_ERRMSG_LEN], sbuf[32], rbuf[32];

	if (j->result == CUDA_SUCCESS) {
		swap_mark(lc, 0);
		lc->swap = SWAP_NONE;
		lc->swap_parked = 0;
		a->swap.nout--;
		swap_set_state(lc);
		/* The event's bytes and time give its rate (check_swap.py). */
		moved = op->engine == GF_ENGINE_COPY ? op->moved : bytes;
		if (op->engine == GF_ENGINE_COPY)
			swap_host_came_in(a, lc);
		arbiter_event_timed(a, GF_EV_SWAP_IN, lc, moved,
		    (uint32_t)(j->duration_us / 1000), "swapped in (%s): %s by "
		    "%s in %llu ms, %s", op->cause, size_format(moved, sbuf,
		    sizeof(sbuf)), engine_name(op->engine),
		    (unsigned long long)j->duration_us / 1000,
		    swap_rate_format(moved, j->duration_us, rbuf, sizeof(rbuf)));
		swap_asks_settle(a, lc, GF_SWAP_IN, 1, NULL);
		return;
	}
	/* Still out: give the room back, try again in a while. */
	ledger_swap_out(&a->ledger, lc);
	lc->swap = SWAP_OUT;
	lc->swap_skip = 1;
	fail_msg(op, msg, sizeof(msg));
	arbiter_event_timed(a, GF_EV_SWAP_SKIP, lc, bytes,
	    (uint32_t)(j->duration_us / 1000), "not swapped in (%s): %s; "
	    "retrying in %d ms", op->cause, msg, SWAP_RETRY_MS);
	swap_asks_settle(a, lc, GF_SWAP_IN, 0, msg);
	retry_arm(a, SWAP_RETRY_MS);
}

void
swap_done(void *arg, struct ckpt_job *j)
{
	struct arbiter *a = arg;
	struct swap_op *op = j->arg;

	if (op->lc != NULL) {
		if (op->dir == GF_SWAP_OUT)
			ended_out(a, op);
		else
			ended_in(a, op);
	}
	swap_op_free(a, op);
	/* Memory moved: waiters may fit now, and the next swap may start. */
	resolve_serve(a);
	swap_pump(a);
}

/* ---- requests ----------------------------------------------------------- */

int
swap_collision(struct arbiter *a, struct conn *c, uint32_t seq, size_t dev,
    uint64_t size, char *why, size_t whylen)
{
	const struct group_policy *pol = &a->ledger.groups[c->client->group].pol;
	int r;

	if (!a->swap.available)
		arbiter_event(a, GF_EV_FALLBACK, c->client, (int)dev, size,
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
		arbiter_event(a, GF_EV_FALLBACK, lc, (int)dev,
		    lc->usage[dev].used, "swap unavailable: killing instead");
		return -1;
	}
	if (no != NULL) {
		arbiter_event(a, GF_EV_FALLBACK, lc, (int)dev,
		    lc->usage[dev].used, "cannot be swapped (%s): killing "
		    "instead", no);
		return -1;
	}
	snprintf(cause, sizeof(cause), "preempted for pid %u", rq->pid);
	if ((op = op_new(a, lc, GF_SWAP_OUT, cause)) == NULL)
		return -1;
	op->preempt = 1;
	lc->preempting = 1;
	arbiter_event(a, GF_EV_PREEMPT, lc, (int)dev, lc->usage[dev].used,
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
	    (op = op_new(a, lc, (int)r->direction, msg)) == NULL)) {
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

/* ---- clients come and go ---------------------------------------------- */

/*
 * Where the copy engine's memory is, as the page says (activity.h): 1
 * out (or leaving), 0 in (or coming in, committed to it). A mark not
 * committed is taken back: the move it asked for then fails.
 */
static int
adopt_copy_out(struct ledger_client *lc)
{
	uint32_t m = __atomic_load_n(&lc->act->swapped, __ATOMIC_SEQ_CST);

	while (m != 0 && !(m & GF_SWAPPED_COMMITTED) &&
	    !__atomic_compare_exchange_n(&lc->act->swapped, &m, 0, 0,
	    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		;
	return (m & GF_SWAPPED_COMMITTED) && !(m & GF_SWAPPED_IN);
}

/*
 * A previous daemon may have left lc swapped out (by checkpoint, or by
 * copy: its page says so), or locked.
 */
static void
adopt_state(struct arbiter *a, struct ledger_client *lc)
{
	struct ckpt_api *api = &a->swap.engine.api;
	CUprocessState st = CU_PROCESS_STATE_RUNNING;
	const char *by = "checkpoint";

	if (!a->swap.ckpt_ok || api->get_state == NULL ||
	    api->get_state((int)lc->pid, &st) != CUDA_SUCCESS)
		st = CU_PROCESS_STATE_RUNNING;
	if (st == CU_PROCESS_STATE_LOCKED) {
		log_info("pid %u was left locked: unlocking it", lc->pid);
		(void)api->unlock((int)lc->pid, NULL);
		st = CU_PROCESS_STATE_RUNNING;
	}
	if (st == CU_PROCESS_STATE_CHECKPOINTED)
		swap_mark(lc, 1);
	else if (adopt_copy_out(lc))
		by = "copy";
	else {
		/* In, or coming in: the shim clears a mark it committed. */
		if (!(__atomic_load_n(&lc->act->swapped, __ATOMIC_SEQ_CST) &
		    GF_SWAPPED_IN))
			swap_mark(lc, 0);
		return;
	}
	log_info("pid %u was left swapped out by %s: it comes back when it "
	    "fits", lc->pid, by);
	ledger_swap_out(&a->ledger, lc);	/* its charges go to host */
	lc->swap = SWAP_OUT;
	lc->swapped_ms = event_now_ms();
	a->swap.nout++;
	swap_set_state(lc);
}

void
swap_hello(struct arbiter *a, struct ledger_client *lc, int actfd)
{
	if (actfd >= 0)
		(void)activity_map(a, lc, actfd);
	if (lc->act != NULL)
		__atomic_store_n(&lc->act->engine, engine_of(a, lc),
		    __ATOMIC_RELAXED);
	if (lc->act != NULL)
		adopt_state(a, lc);
}

void
swap_client_gone(struct arbiter *a, struct ledger_client *lc)
{
	struct swap_ask *q, *nq;
	struct swap_op *op;
	char msg[64];

	snprintf(msg, sizeof(msg), "pid %u has left", lc->pid);
	for (q = TAILQ_FIRST(&a->swap.asks); q != NULL; q = nq) {
		nq = TAILQ_NEXT(q, entry);
		if (q->lc != lc)
			continue;
		if (q->admin)
			swap_ask_reply(q, 0, msg);
		q->lc = NULL;
		swap_ask_drop(a, q);
	}
	TAILQ_FOREACH(op, &a->swap.todo, entry)
		if (op->lc == lc)
			op->lc = NULL;
	if (a->swap.running != NULL && a->swap.running->lc == lc) {
		a->swap.running->lc = NULL;
		/* Its shim will not answer: the move ends here. */
		if (a->swap.running->engine == GF_ENGINE_COPY) {
			swap_op_free(a, a->swap.running);
			retry_arm(a, 0);
		}
	}
	if (lc->swap != SWAP_NONE && a->swap.nout > 0)
		a->swap.nout--;
	lc->swap = SWAP_NONE;
	activity_unmap(lc);
}

/* ---- start and stop ----------------------------------------------------- */

/* Whether any group (or [daemon], for groups to come) swaps by copy. */
static int
engine_any_copy(const struct arbiter *a)
{
	size_t g;

	if (a->conf.swap_engine == GF_ENGINE_COPY)
		return 1;
	for (g = 0; g < a->ledger.ngroups; g++)
		if (a->ledger.groups[g].pol.swap_engine == GF_ENGINE_COPY)
			return 1;
	return 0;
}

void
swap_init(struct arbiter *a)
{
	struct swap *s = &a->swap;
	struct ckpt_api api;

	memset(s, 0, sizeof(*s));
	TAILQ_INIT(&s->todo);
	TAILQ_INIT(&s->asks);
	devices_checkpoint_api(&api);
	if (a->ledger.ndevices == 0)
		snprintf(s->reason, sizeof(s->reason), "no CUDA devices");
	else if (api.lock == NULL)
		snprintf(s->reason, sizeof(s->reason), "the driver has no "
		    "checkpoint API (needs driver 570 or later)");
	else if (ckpt_init(&s->engine, a->loop, &api, swap_done, a) < 0)
		snprintf(s->reason, sizeof(s->reason), "cannot start the swap "
		    "thread");
	else
		s->available = s->ckpt_ok = 1;
	/* The copy engine needs no more of the driver than its VMM. */
	if (!s->available && a->ledger.ndevices > 0 && engine_any_copy(a)) {
		s->available = 1;
		log_info("host swap: the checkpoint engine is unavailable (%s); "
		    "the copy engine serves", s->reason);
	}
	if (s->available)
		log_info("host swap available");
	else
		log_info("host swap unavailable: %s", s->reason);
}

void
swap_free(struct arbiter *a)
{
	struct swap *s = &a->swap;
	struct ledger_client *lc;
	struct swap_op *op;
	struct ckpt_job j;
	CUprocessState st;

	ckpt_free(&s->engine);
	while ((op = TAILQ_FIRST(&s->todo)) != NULL) {
		TAILQ_REMOVE(&s->todo, op, entry);
		swap_op_free(a, op);
	}
	if (s->running != NULL)
		swap_op_free(a, s->running);
	while (!TAILQ_EMPTY(&s->asks))
		swap_ask_drop(a, TAILQ_FIRST(&s->asks));
	if (s->retry_timer > 0)
		event_timer_cancel(a->loop, s->retry_timer);
	s->retry_timer = 0;
	if (s->idle_timer > 0)
		event_timer_cancel(a->loop, s->idle_timer);
	s->idle_timer = 0;
	if (s->keep_timer > 0)
		event_timer_cancel(a->loop, s->keep_timer);
	s->keep_timer = 0;
	/* Nobody would bring them back: the driver decides if they fit. */
	TAILQ_FOREACH(lc, &a->ledger.clients, entry) {
		/*
		 * By copy, the page says where the memory is (activity.h): a
		 * mark not committed is taken back, one committed stays, and
		 * the shim brings it back when a thread needs it, or the next
		 * daemon does.
		 */
		if (lc->swap != SWAP_NONE && lc->act != NULL &&
		    engine_of(a, lc) == GF_ENGINE_COPY) {
			if (adopt_copy_out(lc))
				log_info("pid %u stays swapped out by copy; its "
				    "shim or the next gpufracd brings it back",
				    lc->pid);
			lc->swap = SWAP_NONE;
			continue;
		}
		if (lc->swap == SWAP_NONE || !s->ckpt_ok ||
		    s->engine.api.get_state((int)lc->pid, &st) != CUDA_SUCCESS)
			continue;
		lc->swap = SWAP_NONE;
		if (st != CU_PROCESS_STATE_CHECKPOINTED) {
			if (st == CU_PROCESS_STATE_LOCKED)
				(void)s->engine.api.unlock((int)lc->pid, NULL);
			swap_mark(lc, 0);
			continue;
		}
		memset(&j, 0, sizeof(j));
		j.op = CKPT_IN;
		j.pid = (pid_t)lc->pid;
		ckpt_run(&s->engine, &j);
		if (j.result == CUDA_SUCCESS) {
			log_info("pid %u swapped back in before exit", lc->pid);
			swap_mark(lc, 0);
		} else
			log_warnx("pid %u stays swapped out (%s failed: %s); "
			    "the next gpufracd brings it back", lc->pid,
			    j.stage, devices_error_name(j.result));
	}
	s->available = 0;
	s->nout = 0;
}
