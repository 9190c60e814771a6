/*
 * A lost daemon waited for (DESIGN.md section 4, "The daemon knows what
 * it granted"): once this process has registered with gpufracd, every
 * byte it takes is one the daemon granted, so that its re-registration
 * is exactly what the daemon kept for it. A request made while the
 * connection is down therefore waits for the watcher to reconnect
 * (woken by the registration itself, no polling), GPUFRAC_REJOIN_TIMEOUT
 * at most, and is then asked of the new connection; past the bound it
 * fails closed. Frees while away stay local: they only shrink what is
 * re-registered.
 */
#include <pthread.h>

#include "client_int.h"
#include "env.h"
#include "log.h"
#include "shim.h"

int client_seen;
static pthread_cond_t client_rejoin_cv;
static int said_late;

void
client_rejoin_init(void)
{
	client_seen = 0;
	said_late = 0;
	pthread_cond_init(&client_rejoin_cv, &client_condattr);
}

void
client_rejoined(void)
{
	client_seen = 1;
	__atomic_store_n(&said_late, 0, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&client_rejoin_cv);
}

void
client_rejoin_failed(void)
{
	pthread_mutex_lock(&client_lock);
	pthread_cond_broadcast(&client_rejoin_cv);
	pthread_mutex_unlock(&client_lock);
}

static int
client_rejoin_over(void)
{
	return client_up || __atomic_load_n(&client_shut_out, __ATOMIC_RELAXED);
}

int
client_rejoin_wait(int64_t *deadline)
{
	if (*deadline == 0)
		*deadline = client_now_ms() + shim_env.rejoin_timeout_ms;
	/* No watcher, no reconnection: nothing to wait for. */
	while (!client_rejoin_over() && client_monitor_running &&
	    client_now_ms() < *deadline)
		client_wait_until(&client_rejoin_cv, *deadline);
	if (client_rejoin_over())
		return 0;
	if (shim_once(&said_late))
		log_errx("gpufracd at '%s' did not come back within %u ms; "
		    "allocations fail until it does", shim_env.socket,
		    shim_env.rejoin_timeout_ms);
	else
		log_info("gpufracd at '%s' did not come back within %u ms: "
		    "allocation refused", shim_env.socket,
		    shim_env.rejoin_timeout_ms);
	return -1;
}
