/*
 * Host swap, the mechanism: a swap started through the checkpoint engine
 * (ckpt.c) or the copy engine (the process's shim moves its own memory:
 * MOVE and MOVED, swap_move.c), as its group's swap_engine says, the
 * ledger's device charge moved to host and back around it, and the events
 * that say what happened. The requests that come in are swap_request.c's;
 * the answers owed to processes asking to come back and admins asking for
 * a swap swap_ask.c's; what to move and when swap_pick.c's; clients
 * coming and going, and the daemon's start and stop, swap_clients.c's.
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
#include "decision.h"
#include "devices.h"
#include "driver.h"
#include "event.h"
#include "grantrec.h"
#include "ledger.h"
#include "lease.h"
#include "log.h"
#include "overhead.h"
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
 * Cleared, a mark the copy engine has committed in stays: its memory is
 * still coming back, and the shim clears the mark once all of it is
 * (activity.h); cleared sooner, the program's calls would reach memory
 * half back, as when a move in is taken as in past its deadline.
 */
void
swap_mark(struct ledger_client *lc, uint32_t v)
{
	uint32_t m;

	if (lc->act == NULL)
		return;
	if (v == 0) {
		m = __atomic_load_n(&lc->act->swapped, __ATOMIC_SEQ_CST);
		while (m != 0 && !(m & GF_SWAPPED_IN) &&
		    !__atomic_compare_exchange_n(&lc->act->swapped, &m, 0, 0,
		    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			;
		return;
	}
	__atomic_store_n(&lc->act->swapped, v, __ATOMIC_SEQ_CST);
	(void)syscall(SYS_futex, &lc->act->swapped, FUTEX_WAKE, INT_MAX, NULL,
	    NULL, 0);
}

/* All lc holds, on the device or out. */
uint64_t
swap_footprint(const struct arbiter *a, const struct ledger_client *lc)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < a->ledger.ndevices; i++)
		n = add_saturated(n, add_saturated(lc->usage[i].used,
		    lc->usage[i].host));
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

uint32_t
swap_engine_of(const struct arbiter *a, const struct ledger_client *lc)
{
	return a->ledger.groups[lc->group].pol.swap_engine;
}

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
	if (swap_engine_of(a, lc) == GF_ENGINE_COPY)
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

/* "2.31 GB/s" for bytes in us, into buf. */
const char *
swap_rate_format(uint64_t bytes, uint64_t us, char *buf, size_t len)
{
	if (us == 0)
		us = 1;
	snprintf(buf, len, "%.2f GB/s", (double)bytes / (double)us / 1000.0);
	return buf;
}

struct swap_op *
swap_op_new(struct arbiter *a, struct ledger_client *lc, int dir,
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
	/* Back the way it went out, whatever its group says since. */
	op->engine = dir == GF_SWAP_IN && lc->swap != SWAP_NONE ?
	    lc->swap_engine : swap_engine_of(a, lc);
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

void
swap_retry_arm(struct arbiter *a, uint64_t ms)
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
		decision_event(a, GF_EV_SWAP_SKIP, lc, -1, swap_footprint(a, lc),
		    "not swapped out (%s): %s%s", op->cause, no,
		    op->preempt && op->tries + 1 < SWAP_BUSY_TRIES ?
		    "; trying again" : "");
		/* A preemption is owed: a busy victim is tried again soon. */
		if (op->preempt && ++op->tries < SWAP_BUSY_TRIES) {
			op->not_before_ms = event_now_ms() + SWAP_BUSY_RETRY_MS;
			TAILQ_INSERT_TAIL(&a->swap.todo, op, entry);
			swap_retry_arm(a, SWAP_BUSY_RETRY_MS);
			return -1;
		}
		lc->swap_skip = 1;
		swap_asks_settle(a, lc, GF_SWAP_OUT, 0, no);
		swap_op_free(a, op);
		return -1;
	}
	/* By checkpoint, its contexts go too: measured now, held still. */
	if (op->engine != GF_ENGINE_COPY)
		overhead_fresh(a, lc);
	lc->swap = SWAP_GOING_OUT;
	lc->swap_engine = op->engine;
	grantrec_put(a, lc);	/* by copy, its page may say it is out */
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
	if ((op = swap_op_new(a, lc, dir, cause)) == NULL)
		return -1;
	if (dir == GF_SWAP_OUT)
		return swap_start_out(a, op);
	swap_start_in(a, op);
	return 0;
}

/* ---- a swap has ended ------------------------------------------------- */

/* Whether NVML shows room on device d for what lc brings back there. */
static int
driver_room_on(const struct arbiter *a, const struct ledger_client *lc,
    size_t d)
{
	uint64_t used;

	return lc->usage[d].host == 0 || nvml_used(d, &used) != 0 ||
	    used + lc->usage[d].host <= a->ledger.devices[d].total;
}

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
	size_t d;

	if (!driver_follows())
		return 1;
	for (d = 0; d < a->ledger.ndevices; d++)
		if (!driver_room_on(a, lc, d))
			return 0;
	return 1;
}

const char *
swap_short_say(const struct arbiter *a, const struct ledger_client *lc,
    char *buf, size_t len)
{
	uint64_t host, avail;
	char b1[16], b2[16];
	size_t d;

	buf[0] = '\0';
	for (d = 0; d < a->ledger.ndevices; d++) {
		if ((host = lc->usage[d].host) == 0)
			continue;
		if (driver_follows() && !driver_room_on(a, lc, d)) {
			snprintf(buf, len, " (device %zu: the driver has no "
			    "room: memory gpufrac does not know of)", d);
			break;
		}
		avail = ledger_available(&a->ledger, lc->group, d);
		if (host > avail) {
			snprintf(buf, len, " (device %zu: %s to come back, %s "
			    "free to its group)", d,
			    size_format(host, b1, sizeof(b1)),
			    size_format(avail, b2, sizeof(b2)));
			break;
		}
	}
	return buf;
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
		decision_event_timed(a, GF_EV_SWAP_OUT, lc, bytes,
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
	grantrec_put(a, lc);	/* it never left: its page is not believed */
	fail_msg(op, msg, sizeof(msg));
	decision_event_timed(a, GF_EV_SWAP_SKIP, lc, bytes,
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
		lc->swap_rereg = 0;	/* in: what it said is moot */
		lc->swap = SWAP_NONE;
		lc->swap_parked = 0;
		lc->page_out = 0;	/* in: its page is not believed again */
		a->swap.nout--;
		swap_set_state(lc);
		grantrec_put(a, lc);
		/* The event's bytes and time give its rate (check_swap.py). */
		moved = op->engine == GF_ENGINE_COPY ? op->moved : bytes;
		if (op->engine == GF_ENGINE_COPY)
			swap_host_came_in(a, lc);
		decision_event_timed(a, GF_EV_SWAP_IN, lc, moved,
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
	decision_event_timed(a, GF_EV_SWAP_SKIP, lc, bytes,
	    (uint32_t)(j->duration_us / 1000), "not swapped in (%s): %s; "
	    "retrying in %d ms", op->cause, msg, SWAP_RETRY_MS);
	swap_asks_settle(a, lc, GF_SWAP_IN, 0, msg);
	swap_retry_arm(a, SWAP_RETRY_MS);
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
