/*
 * The driver's own thread (SIMCUDA_HELPER_THREAD=1): as the real driver's
 * helper threads do, it waits inside the driver for as long as the
 * process lives, in no driver call and never gated; the checkpoint lock
 * leaves it alone.
 */
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "segment.h"

static uint32_t helper_word;		/* never changes: it waits for ever */
static pid_t helper_pid;		/* the process it was started in */

static void *
helper_main(void *arg)
{
	(void)arg;
	for (;;)
		futex(&helper_word, FUTEX_WAIT, 0, NULL);
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
		pthread_setname_np(t, "simcuda-helper");
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}
