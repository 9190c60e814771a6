/*
 * The daemon client across fork(): the handlers that keep its locks
 * consistent in both processes and make the child a new client, and
 * client_init, which installs them (after the allocation table's and the
 * copy engine's, real.c: its locks come first in their order).
 */
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "activity.h"
#include "client.h"
#include "client_int.h"
#include "ctx_table.h"
#include "log.h"
#include "pool_table.h"
#include "vmm_table.h"
#include "vmm_virt.h"

static void
client_fork_prepare(void)
{
	pthread_mutex_lock(&client_free_lock);
	pthread_mutex_lock(&client_lock);
}

static void
client_fork_parent(void)
{
	pthread_mutex_unlock(&client_lock);
	pthread_mutex_unlock(&client_free_lock);
}

/*
 * The child is a new client: it closes (never shuts down, which would cut
 * the parent off) its copy of the parent's connection, owns no device
 * memory, and connects lazily as its own client on its first CUDA use.
 * The parent's other threads, their calls and whatever reader token one
 * of them held, do not exist here.
 */
static void
client_fork_child(void)
{
	activity_fork_child();
	vmm_fork_child();
	vmm_virt_fork_child();
	pool_fork_child();
	ctx_array_fork_child();
	if (client_fd >= 0)
		close(client_fd);
	client_fd = -1;
	client_up = 0;
	client_tried = 0;
	client_monitor_running = 0;
	client_stall_running = 0;
	client_stall_spare(0);
	client_said_unreachable = 0;
	client_calls = NULL;
	client_reading = 0;
	client_watcher_waits = 0;
	pthread_cond_init(&client_token_cv, NULL);
	/* Not taken for fork: a restore under way is the parent's. */
	pthread_mutex_init(&client_rejoin_lock, NULL);
	memset(client_devs, 0, sizeof(client_devs));
	pthread_mutex_unlock(&client_lock);
	pthread_mutex_unlock(&client_free_lock);
}

void
client_init(void)
{
	int e;

	pthread_condattr_init(&client_condattr);
	pthread_condattr_setclock(&client_condattr, CLOCK_MONOTONIC);
	if ((e = pthread_atfork(client_fork_prepare, client_fork_parent,
	    client_fork_child)) != 0)
		log_errx("cannot install fork handlers: %s", strerror(e));
}
