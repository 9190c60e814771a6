/*
 * The hooks' way in: the shim's state, started by the first hooked call
 * (init.c sets the shim up, once, whichever thread comes first), and the
 * per-thread guard that sends a re-entered hook straight to the driver.
 * This is the one call that runs up the layers: the program enters at the
 * hooks, and the first time that starts the shim.
 */
#include <pthread.h>

#include "hooks_enter.h"
#include "init.h"

static pthread_once_t hook_once = PTHREAD_ONCE_INIT;
int hook_state;
__thread int hook_depth SHIM_TLS;

static void
hook_init(void)
{
	__atomic_store_n(&hook_state, init_shim() ? HOOK_ACTIVE : HOOK_PASS,
	    __ATOMIC_RELEASE);
}

int
hook_start(void)
{
	hook_depth = 1;
	pthread_once(&hook_once, hook_init);
	hook_depth = 0;
	return __atomic_load_n(&hook_state, __ATOMIC_ACQUIRE);
}
