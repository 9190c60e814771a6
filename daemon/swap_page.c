/*
 * Where the copy engine's memory is, as the process's page says
 * (activity.h), against where this daemon took it: a move in taken as in
 * past its deadline (swap_move.c) may fail after, and its shim then turns
 * the mark back to committed out, which only the shim may do. The page is
 * the truth then, and only then: the process is out again, and is
 * brought in anew. A page that says so unasked, no move in taken as in,
 * changes nothing (its memory would count nowhere: not on the device,
 * where NVML's figure is not weighed for a process out).
 */
#include "activity.h"
#include "arbiter.h"
#include "decision.h"
#include "event.h"
#include "grantrec.h"
#include "lease.h"
#include "ledger.h"
#include "swap.h"
#include "swap_op.h"

int
swap_page_recheck(struct arbiter *a, struct ledger_client *lc)
{
	uint32_t m;

	if (lc->swap != SWAP_NONE || lc->act == NULL || !lc->taken_in)
		return 0;
	m = __atomic_load_n(&lc->act->swapped, __ATOMIC_SEQ_CST);
	if ((m & (GF_SWAPPED_COMMITTED | GF_SWAPPED_IN)) !=
	    GF_SWAPPED_COMMITTED)
		return 0;
	/* As a move in that failed in time (swap.c's ended_in). */
	lc->taken_in = 0;
	lease_take_all(a, lc);
	ledger_swap_out(&a->ledger, lc);
	lc->swap = SWAP_OUT;
	lc->swap_engine = GF_ENGINE_COPY;	/* the way back */
	lc->swap_skip = 0;	/* it asks, or will: it comes back at once */
	lc->swapped_ms = event_now_ms();
	a->swap.nout++;
	swap_set_state(lc);
	grantrec_put(a, lc);	/* out by copy, its record says again */
	decision_event(a, GF_EV_SWAP_SKIP, lc, -1, swap_footprint(a, lc),
	    "not swapped in: its move in failed after it was taken as in; "
	    "out, it comes back anew");
	return 1;
}
