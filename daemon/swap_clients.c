/*
 * Host swap as clients come and go and the daemon starts and stops: the
 * state a previous daemon left a process in taken over at HELLO (and
 * kept until what it re-registers is charged), the answers and moves
 * owed to a process that has left dropped, and at exit every process
 * swapped out given back (or left for the next daemon).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "activity.h"
#include "arbiter.h"
#include "devices.h"
#include "event.h"
#include "ledger.h"
#include "log.h"
#include "overhead.h"
#include "swap.h"
#include "swap_op.h"

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
 * Coming back in by copy, as the page says (its mark committed in): the
 * move goes on without a daemon, and should it fail the shim turns the
 * mark back to out. Taken as in, as a move in taken as done past its
 * deadline is (swap_page.c); its MOVED, if it comes, ends that. What it
 * re-registers is charged on the device while its bytes still come: an
 * over-count that refuses no honest request, as the daemon before
 * charged the device so from the move's start (ledger_swap_in). What it
 * must not do is lose the page's word: a failed move then left the
 * process charged in and its mark cleared at its next SWAP_IN, its
 * calls reaching memory still on host.
 */
static void
adopt_copy_coming(struct ledger_client *lc)
{
	uint32_t m = __atomic_load_n(&lc->act->swapped, __ATOMIC_SEQ_CST);

	if ((m & (GF_SWAPPED_COMMITTED | GF_SWAPPED_IN)) !=
	    (GF_SWAPPED_COMMITTED | GF_SWAPPED_IN))
		return;
	lc->taken_in = 1;
	lc->swap_engine = GF_ENGINE_COPY;	/* should it come back anew */
	lc->move_late_id = m & GF_SWAPPED_ID;
	log_info("pid %u was left coming back in by copy: taken as in, "
	    "unless its move fails", lc->pid);
}

/*
 * A previous daemon may have left lc swapped out (by checkpoint, or by
 * copy: its page says so, believed where its record says so too,
 * lc->page_out), or locked, or coming back in by copy.
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
	lc->swap_engine = GF_ENGINE_CHECKPOINT;
	if (st == CU_PROCESS_STATE_CHECKPOINTED)
		swap_mark(lc, 1);
	else if (lc->page_out && adopt_copy_out(lc)) {
		by = "copy";
		lc->swap_engine = GF_ENGINE_COPY;
	} else {
		/* In, or coming in: the shim clears that mark. */
		if (lc->page_out)
			adopt_copy_coming(lc);
		lc->page_out = 0;	/* in: its page is not believed again */
		return;
	}
	log_info("pid %u was left swapped out by %s: it comes back when it "
	    "fits", lc->pid, by);
	lc->swap_rereg = UINT64_MAX;	/* until it opens (swap_device_open) */
	ledger_swap_out(&a->ledger, lc);	/* its charges go to host */
	lc->swap = SWAP_OUT;
	lc->swapped_ms = event_now_ms();
	a->swap.nout++;
	swap_set_state(lc);
}

/*
 * A process a previous daemon left out is about to re-register what it
 * holds: as much as its page says (activity.h's held, on every device,
 * written before it opens the first). Until that is charged its footprint
 * is not known, and this daemon does not bring it back of its own
 * accord: a restore of more than the driver has room for fails, and
 * costs a retry. A page that says too much only keeps its own process
 * out until it asks.
 */
void
swap_device_open(struct ledger_client *lc)
{
	uint64_t n = 0, h;
	size_t i;

	if (lc->swap_rereg == 0 || lc->act == NULL)
		return;
	for (i = 0; i < GF_ACTIVITY_DEVICES; i++) {
		h = __atomic_load_n(&lc->act->lease[i].held, __ATOMIC_RELAXED);
		n = n + h >= n ? n + h : UINT64_MAX;
	}
	lc->swap_rereg = n;
}

int
swap_registered(const struct arbiter *a, struct ledger_client *lc)
{
	uint64_t charged = 0, n, o;
	size_t d;

	if (lc->swap_rereg == 0)
		return 1;
	for (d = 0; d < a->ledger.ndevices; d++) {
		/* Its context's record is not what it re-registers. */
		n = add_saturated(lc->usage[d].host, lc->usage[d].used);
		o = overhead_of(lc, d);
		charged = add_saturated(charged, n > o ? n - o : 0);
	}
	if (charged < lc->swap_rereg)
		return 0;
	lc->swap_rereg = 0;
	return 1;
}

void
swap_hello(struct arbiter *a, struct ledger_client *lc, int actfd)
{
	if (actfd >= 0)
		(void)activity_map(a, lc, actfd);
	if (lc->act != NULL)
		__atomic_store_n(&lc->act->engine, swap_engine_of(a, lc),
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
			swap_retry_arm(a, 0);
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
		    lc->swap_engine == GF_ENGINE_COPY) {
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
