/*
 * The gate every driver call of a process passes (sim.h, SIM_GATE): the
 * calls in flight counted in the process's slot of the segment, and the
 * wait while another process holds it locked (ckstate.c).
 */
#include <limits.h>

#include "segment.h"

static __thread int gate_depth;		/* driver calls on this thread */

/* A call of this process leaves; the last one out wakes a waiting Lock. */
static void
gate_out(struct state_proc *sp)
{
	if (__atomic_sub_fetch(&sp->inflight, 1, __ATOMIC_SEQ_CST) == 0 &&
	    __atomic_load_n(&sp->locked, __ATOMIC_SEQ_CST))
		futex(&sp->inflight, FUTEX_WAKE, INT_MAX, NULL);
}

/*
 * The increment of inflight and the load of locked pair with Lock's store
 * of locked and load of inflight (all sequentially consistent): either
 * Lock sees the call in flight and waits for it, or the call sees the
 * lock and waits for Unlock.
 */
void *
gate_enter(void)
{
	struct state_proc *sp;
	uint32_t v;

	if (gate_depth++ > 0)	/* made by a driver call: part of it */
		return NULL;
	if ((sp = __atomic_load_n(&state_self_proc, __ATOMIC_ACQUIRE)) == NULL)
		return NULL;
	for (;;) {
		__atomic_add_fetch(&sp->inflight, 1, __ATOMIC_SEQ_CST);
		if (!__atomic_load_n(&sp->locked, __ATOMIC_SEQ_CST))
			return sp;
		gate_out(sp);
		while ((v = __atomic_load_n(&sp->locked, __ATOMIC_SEQ_CST)))
			futex(&sp->locked, FUTEX_WAIT, v, NULL);
	}
}

void
gate_leave(void **entered)
{
	gate_depth--;
	/* After fork the child's slot is another one, or none. */
	if (*entered != NULL &&
	    *entered == __atomic_load_n(&state_self_proc, __ATOMIC_ACQUIRE))
		gate_out(*entered);
}
