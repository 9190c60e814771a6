/*
 * cuCtxDestroy held inside the driver, for a test (private_table.h):
 * while armed, it waits past its gate, before it acts, so that a test can
 * act in the window between what a caller (the shim) did before the call
 * and what it does after. One driver call only: the shim's own calls
 * around a primary context's release (a retain and a release) would be
 * held as well as the program's.
 */
#include <pthread.h>

#include "sim.h"

static pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hold_cond = PTHREAD_COND_INITIALIZER;
static int hold_armed;		/* ends wait while it is set */
static int hold_waiting;	/* ends waiting now */

void
hold_ctx_end(int on)
{
	pthread_mutex_lock(&hold_lock);
	hold_armed = on;
	pthread_cond_broadcast(&hold_cond);
	pthread_mutex_unlock(&hold_lock);
}

int
hold_ctx_end_held(void)
{
	int n;

	pthread_mutex_lock(&hold_lock);
	n = hold_waiting;
	pthread_mutex_unlock(&hold_lock);
	return n;
}

void
hold_ctx_end_wait(void)
{
	pthread_mutex_lock(&hold_lock);
	hold_waiting++;
	while (hold_armed)
		pthread_cond_wait(&hold_cond, &hold_lock);
	hold_waiting--;
	pthread_mutex_unlock(&hold_lock);
}
