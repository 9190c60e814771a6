/*
 * The daemon's resident memory: idle, then with RSS_CLIENTS processes each
 * connected as the shim connects (HELLO, DEVICE_OPEN), read from
 * /proc/PID/status. One process per client: the daemon knows clients by
 * their pid.
 */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench.h"
#include "harness.h"
#include "log.h"

#define RSS_CLIENTS	1000
#define RSS_SETTLE_MS	20000		/* for all of them to be connected */

/* A client process: connected, then holding until hold reads EOF. */
static void __attribute__((noreturn))
rss_client(const struct bench *b, int ready, int hold)
{
	int fd = wire_client(b->sock, b->uuid);
	char c;

	if (proc_write(ready, fd < 0 ? "x" : "k", 1) < 0 || fd < 0)
		_exit(1);
	while (read(hold, &c, 1) > 0)
		;
	_exit(0);
}

/* Why the daemon may not be able to take them all, or NULL. */
static const char *
rss_fd_limit(char *buf, size_t size)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max != RLIM_INFINITY &&
	    rl.rlim_max < RSS_CLIENTS + 64) {
		snprintf(buf, size, "the hard limit on open files (%llu) is "
		    "below %d clients", (unsigned long long)rl.rlim_max,
		    RSS_CLIENTS);
		return buf;
	}
	return NULL;
}

/* Start the clients; the number that connected. */
static int
rss_connect(const struct bench *b, pid_t *pids, int hold[2])
{
	int ready[2], i, up = 0;
	char c;

	if (pipe2(ready, O_CLOEXEC) < 0)
		return 0;
	for (i = 0; i < RSS_CLIENTS; i++)
		if ((pids[i] = harness_fork()) == 0) {
			close(ready[0]);
			close(hold[1]);
			rss_client(b, ready[1], hold[0]);
		}
	close(ready[1]);
	for (i = 0; i < RSS_CLIENTS; i++) {
		if (pids[i] < 0)
			continue;
		if (proc_read(ready[0], &c, 1, RSS_SETTLE_MS) < 0)
			break;
		up += c == 'k';
	}
	close(ready[0]);
	return up;
}

void
rss_measure(const struct bench *b, struct results *r)
{
	char why[BENCH_NOTE_LEN];
	uint32_t nclients = 0;
	uint8_t uuid[GF_UUID_LEN];
	pid_t *pids;
	int hold[2], up, i;
	long kib;

	if ((kib = proc_rss_kib(b->daemon)) >= 0)
		r->rss_kib_0 = (double)kib;
	if (rss_fd_limit(why, sizeof(why)) != NULL)
		snprintf(r->rss_note, sizeof(r->rss_note), "%s", why);
	if ((pids = calloc(RSS_CLIENTS, sizeof(*pids))) == NULL ||
	    pipe2(hold, O_CLOEXEC) < 0) {
		snprintf(r->rss_note, sizeof(r->rss_note), "out of memory");
		free(pids);
		return;
	}
	up = rss_connect(b, pids, hold);
	if (wire_status(b->sock, uuid, &nclients) < 0)
		nclients = 0;
	r->rss_clients = (int)nclients;
	if (up == RSS_CLIENTS && (kib = proc_rss_kib(b->daemon)) >= 0)
		r->rss_kib_1000 = (double)kib;
	else
		snprintf(r->rss_note, sizeof(r->rss_note), "only %d of %d "
		    "clients connected (the daemon counts %u)", up,
		    RSS_CLIENTS, nclients);
	close(hold[1]);		/* EOF: the clients exit */
	close(hold[0]);
	for (i = 0; i < RSS_CLIENTS; i++)
		if (pids[i] > 0)
			harness_reap(pids[i], 5000);
	free(pids);
}
