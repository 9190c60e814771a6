/*
 * The process's side of the activity page (include/gpufrac/activity.h):
 * every hook counts its driver call and checks, before calling the
 * driver, whether the daemon has swapped the process out. Costs a plain
 * increment and two atomic operations on a line the process owns; the
 * daemon, not the process, reads the clock (when it sees the count move).
 *
 * Before the process first talks to the daemon the page is a private one;
 * activity_fd() makes the shared one the first time the daemon is
 * contacted, and the pointer moves to it. A thread keeps the page it
 * entered with until it leaves, so the counts stay balanced.
 */
#ifndef GF_SHIM_ACTIVITY_H
#define GF_SHIM_ACTIVITY_H

#include <stdint.h>

#include "gpufrac/activity.h"

extern struct gf_activity *activity_page;

/* The slow path of activity_enter: the process is swapped out. */
struct gf_activity *activity_swapped(struct gf_activity *p);

/*
 * First in a hook, before any driver call: note the call and come back
 * once the process is on the device. Returns the page to pass to
 * activity_leave after the driver call.
 */
static inline struct gf_activity *
activity_enter(void)
{
	struct gf_activity *p = __atomic_load_n(&activity_page,
	    __ATOMIC_ACQUIRE);

	/* No clock here: the daemon keeps the time of the last change. */
	__atomic_store_n(&p->calls, __atomic_load_n(&p->calls,
	    __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&p->inflight, 1, __ATOMIC_SEQ_CST);
	if (__builtin_expect(__atomic_load_n(&p->swapped, __ATOMIC_SEQ_CST) !=
	    0, 0))
		return activity_swapped(p);
	return p;
}

/* After the driver call. */
static inline void
activity_leave(struct gf_activity *p)
{
	__atomic_sub_fetch(&p->inflight, 1, __ATOMIC_SEQ_CST);
}

/*
 * The copy engine turns the page's mark from `from` to `to` (a compare
 * and swap: a daemon's newer mark stays), and wakes the calls that wait
 * at the gate for a move in to end. 1 if it turned.
 */
int	activity_mark_turn(uint32_t from, uint32_t to);

/* Note memory the checkpoint API cannot move (GF_ACT_*). */
void	activity_flag(uint32_t flag);

/*
 * The shared page's descriptor, made on first use (memfd, sealed); -1 if
 * it cannot be made (said once): the daemon then never swaps the process.
 */
int	activity_fd(void);

/* Whether the page is the shared one (it does not move again). */
int	activity_shared(void);

/* In a fork child: back to a private page; the child makes its own. */
void	activity_fork_child(void);

#endif
