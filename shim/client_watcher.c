/*
 * The watcher thread of the daemon client: it reads what gpufracd says
 * unasked while nobody else reads, reconnects when the connection is
 * lost, and starts the stall thread (client_stall.c) once connected.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "client_int.h"
#include "gpufrac/proto.h"
#include "log.h"

int client_monitor_running;

/*
 * Take the token and read what is there without blocking. Returns how many
 * packets it read (a failure counts as one: the socket said something).
 * Lock held, released while reading.
 */
static int
client_drain(int fd)
{
	char why[CLIENT_WHY_LEN];
	struct gf_msg m;
	int n = 0, r;

	client_reading = 1;
	for (;;) {
		pthread_mutex_unlock(&client_lock);
		r = client_recv(fd, &m, why, sizeof(why));
		pthread_mutex_lock(&client_lock);
		if (r == 0)
			break;
		n++;
		if (r < 0) {
			client_lost(why);
			break;
		}
		client_dispatch(&m);
	}
	client_reading = 0;
	client_token_free();
	return n;
}

/*
 * Watch the live connection fd until it is lost, reading whatever arrives
 * while nobody else reads, then close it. It never sleeps holding the
 * reader token: a caller must not wait for the watcher to hand it over.
 *
 * While callers read the socket themselves, each reply would wake the
 * watcher too, for nothing, adding to every request's latency. So once it
 * finds a caller reading, the watcher stops watching for input (HUP still
 * wakes it) for CLIENT_QUIET_MS: what arrives unasked meanwhile is read by
 * the next caller, or when it looks again; an idle process's watcher
 * sleeps until something arrives.
 */
static void
client_watch(int fd)
{
	struct pollfd p = { .fd = fd };
	int quiet = 0, n;

	pthread_mutex_lock(&client_lock);
	while (client_up) {
		pthread_mutex_unlock(&client_lock);
		p.events = quiet ? 0 : POLLIN;
		n = poll(&p, 1, quiet ? CLIENT_QUIET_MS : -1);
		if (n < 0 && errno != EINTR)
			poll(NULL, 0, CLIENT_RETRY_MIN_MS);
		pthread_mutex_lock(&client_lock);
		if (n == 0)
			quiet = 0;
		else if (n > 0 && client_up)
			quiet = client_reading || client_drain(fd) == 0;
	}
	while (client_reading) {
		client_watcher_waits = 1;
		pthread_cond_wait(&client_token_cv, &client_lock);
	}
	client_watcher_waits = 0;
	close(fd);
	client_fd = -1;
	pthread_mutex_unlock(&client_lock);
}

static void *
client_monitor(void *arg)
{
	int backoff = CLIENT_RETRY_MIN_MS;
	int fd;

	(void)arg;
	__atomic_store_n(&client_watcher_tid, (pid_t)syscall(SYS_gettid),
	    __ATOMIC_RELAXED);
	for (;;) {
		pthread_mutex_lock(&client_lock);
		fd = client_fd;
		if (fd >= 0)
			client_stall_start();
		pthread_mutex_unlock(&client_lock);
		if (fd >= 0) {
			client_watch(fd);
			backoff = CLIENT_RETRY_MIN_MS;
			continue;
		}
		poll(NULL, 0, backoff);
		if (client_reconnect() == 0)
			backoff = CLIENT_RETRY_MIN_MS;
		else if ((backoff *= 2) > CLIENT_RETRY_MAX_MS)
			backoff = CLIENT_RETRY_MAX_MS;
	}
	return NULL;
}

/* The watcher thread, with every signal blocked: they are the program's. */
void
client_monitor_start(void)
{
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t t;
	int e;

	if (client_monitor_running)
		return;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	e = pthread_create(&t, &attr, client_monitor, NULL);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e != 0) {
		log_errx("cannot start a thread to watch gpufracd: %s; it will "
		    "not be rejoined", strerror(e));
		return;
	}
	pthread_setname_np(t, "gpufrac-monitor");
	client_monitor_running = 1;
}
