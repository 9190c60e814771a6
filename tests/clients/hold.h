/*
 * The test clients' "hold": say "holding" and wait for SIGUSR1, which the
 * client keeps blocked from its start so that none is lost before.
 */
#ifndef GF_TEST_HOLD_H
#define GF_TEST_HOLD_H

#include <signal.h>
#include <stdio.h>

static inline void
hold(void)
{
	sigset_t usr1;
	int sig;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	printf("holding\n");
	fflush(stdout);
	sigwait(&usr1, &sig);
}

#endif
