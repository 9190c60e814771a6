/*
 * The start of every hook (hooks_enter.c): the shim started on the first
 * call, and a thread already inside a hook sent straight to the driver.
 */
#ifndef GF_SHIM_HOOKS_ENTER_H
#define GF_SHIM_HOOKS_ENTER_H

#include "shim.h"

/*
 * Start of every hook. The first call anywhere starts the shim (init.c,
 * pthread_once). Returns 1 when the hook should do its
 * work, then hook_leave() must follow; 0 when it must pass the call
 * straight to the driver: the thread is already inside a hook (the driver
 * or the shim called back), GPUFRAC_DISABLE=1, or there is no driver.
 */
#define HOOK_UNKNOWN	0	/* not resolved yet */
#define HOOK_PASS	1	/* every call goes straight to the driver */
#define HOOK_ACTIVE	2	/* hooks do their work */

extern int hook_state;			/* HOOK_*, set once */
extern __thread int hook_depth SHIM_TLS;	/* inside a hook */

int	hook_start(void);

/* On every hook: a thread-local load and a load of a line never written. */
static inline int
hook_enter(void)
{
	int st;

	if (hook_depth)
		return 0;
	st = __atomic_load_n(&hook_state, __ATOMIC_ACQUIRE);
	if (__builtin_expect(st == HOOK_UNKNOWN, 0))
		st = hook_start();
	if (st != HOOK_ACTIVE)
		return 0;
	hook_depth = 1;
	return 1;
}

static inline void
hook_leave(void)
{
	hook_depth = 0;
}

/*
 * For a hook that takes device memory, after hook_enter() said 0: 1 when
 * the call must be refused (CUDA_ERROR_OUT_OF_MEMORY) rather than passed
 * through unseen. That is when the thread is already inside a hook, or
 * starting the shim: a signal handler (or a host function the driver runs
 * on the caller's thread) interrupted it there. Counting the allocation
 * is not safe then: the interrupted hook may hold the client's locks or
 * be half-way through the allocation table's per-thread record. The
 * shim's own calls to the driver go through real_cu, never through a
 * hook, so they do not come here.
 */
static inline int
hook_refused(void)
{
	return hook_depth != 0 &&
	    __atomic_load_n(&hook_state, __ATOMIC_ACQUIRE) != HOOK_PASS;
}

#endif
