/*
 * The driver's own thread (SIMCUDA_HELPER_THREAD=1): as the real driver's
 * helper threads do, it waits inside the driver for as long as the
 * process lives, in no driver call and never gated, and is named as they
 * are ("cuda-EvtHandlr"). As they do on an H200 (tests/gpu/stall_probe),
 * it notices the checkpoint lock and waits elsewhere while it lasts: a
 * thread of the driver's changes where it waits when the process is
 * locked.
 */
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "segment.h"

static pid_t helper_pid;		/* the process it was started in */

/* While the process is locked: a deeper frame, another place to wait. */
static void __attribute__((noinline))
helper_paused(struct state_proc *sp)
{
	volatile char frame[256];
	uint32_t v;

	frame[0] = 0;
	while ((v = __atomic_load_n(&sp->locked, __ATOMIC_SEQ_CST)) != 0)
		futex(&sp->locked, FUTEX_WAIT, v, NULL);
	(void)frame[0];
}

static void *
helper_main(void *arg)
{
	/* The lock wakes nobody: look at it every 50 ms. */
	const struct timespec tick = { 0, 50 * 1000 * 1000 };
	struct state_proc *sp;

	(void)arg;
	for (;;) {
		sp = __atomic_load_n(&state_self_proc, __ATOMIC_ACQUIRE);
		if (sp != NULL && __atomic_load_n(&sp->locked, __ATOMIC_SEQ_CST))
			helper_paused(sp);
		else if (sp != NULL)
			futex(&sp->locked, FUTEX_WAIT, 0, &tick);
		else
			nanosleep(&tick, NULL);
	}
	return NULL;
}

/* Once per process (a forked child starts its own), if asked for. */
void
helper_start(void)
{
	const char *s = getenv("SIMCUDA_HELPER_THREAD");
	sigset_t all, old;
	pthread_t t;

	if (s == NULL || strcmp(s, "1") != 0 || helper_pid == getpid())
		return;
	helper_pid = getpid();
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_create(&t, NULL, helper_main, NULL) == 0) {
		pthread_detach(t);
		pthread_setname_np(t, "cuda-EvtHandlr");
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}
