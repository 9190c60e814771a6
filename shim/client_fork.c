/*
 * The daemon client across fork(): the handlers that keep its locks
 * consistent in both processes and make the child a new client (init.c
 * runs them, in the order of every layer's locks).
 */
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "client_int.h"

void
client_fork_prepare(void)
{
	pthread_mutex_lock(&client_free_lock);
	pthread_mutex_lock(&client_lock);
}

void
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
void
client_fork_child(void)
{
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
	/* It has no daemon of its own yet: today's rules until it has. */
	client_rejoin_init();
	/* Not taken for fork: a restore under way is the parent's. */
	pthread_mutex_init(&client_rejoin_lock, NULL);
	memset(client_devs, 0, sizeof(client_devs));
	pthread_mutex_unlock(&client_lock);
	pthread_mutex_unlock(&client_free_lock);
}
