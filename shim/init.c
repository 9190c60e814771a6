/*
 * The shim wired, in one room: on the first hooked call the environment,
 * the driver and each layer set up, lowest first; the fork handlers of
 * every layer, in the lock order; and the callbacks through which a lower
 * layer tells a higher one something (the client's MOVE, carried up to the
 * copy engine). shim/README lists the layers.
 */
#include <pthread.h>
#include <string.h>

#include "activity.h"
#include "alloc_table.h"
#include "client.h"
#include "ctx_retain.h"
#include "ctx_table.h"
#include "env.h"
#include "init.h"
#include "log.h"
#include "pool_table.h"
#include "real.h"
#include "vback.h"
#include "vmm_table.h"
#include "vmm_virt.h"

/*
 * fork(2). The prepares take the locks in their order (shim/README): the
 * client's, the copy engine's (a move reports through the client), the
 * allocation table's (a move walks the table); the parent lets them go in
 * reverse. The child is a new client that owns none of its parent's
 * device memory: each layer forgets its parent's state, lowest first.
 */
static void
init_fork_prepare(void)
{
	client_fork_prepare();
	vback_fork_prepare();
	alloc_table_fork_prepare();
}

static void
init_fork_parent(void)
{
	alloc_table_fork_parent();
	vback_fork_parent();
	client_fork_parent();
}

static void
init_fork_child(void)
{
	alloc_table_fork_child();
	vmm_fork_child();
	pool_fork_child();
	ctx_array_fork_child();
	ctx_retain_fork_child();
	activity_fork_child();
	client_fork_child();
	vback_fork_child();
	vmm_virt_fork_child();
}

int
init_shim(void)
{
	/* The client carries the daemon's MOVE up to the copy engine. */
	static const struct client_mover mover = { vback_request,
	    vback_restore };
	int e;

	env_load();
	if (real_load() < 0)
		return 0;
	if (shim_env.disabled) {
		log_info("GPUFRAC_DISABLE=1: passing every CUDA call through");
		return 0;
	}
	if ((e = pthread_atfork(init_fork_prepare, init_fork_parent,
	    init_fork_child)) != 0)
		log_errx("cannot install fork handlers: %s", strerror(e));
	client_init();
	client_mover_set(&mover);
	return 1;
}
