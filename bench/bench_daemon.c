/*
 * The bench's own gpufracd: a private temporary directory with the socket,
 * a configuration (the wait resolver, for bench_wake.c) and the daemon's
 * log, on a private simulated device; all removed at the end.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "harness.h"
#include "log.h"

#define DAEMON_START_MS	10000

static const char daemon_conf[] =
    "; written by bench/bench\n"
    "[daemon]\n"
    "default_resolver = wait\n"
    "wait_timeout = 10s\n";

int
daemon_setup(struct bench *b)
{
	char conf[PATH_MAX];
	const char *tmp = getenv("TMPDIR");
	FILE *f;

	if (tmp == NULL || *tmp == '\0')
		tmp = "/tmp";
	if (harness_path(b->dir, sizeof(b->dir), tmp, "gpufrac-bench.XXXXXX") < 0)
		return -1;
	if (mkdtemp(b->dir) == NULL) {
		log_warn("cannot create a directory in '%s'", tmp);
		b->dir[0] = '\0';
		return -1;
	}
	if (harness_path(b->sock, sizeof(b->sock), b->dir, "gpufrac.sock") < 0 ||
	    harness_path(conf, sizeof(conf), b->dir, "gpufrac.conf") < 0)
		return -1;
	if ((f = fopen(conf, "we")) == NULL) {
		log_warn("cannot create '%s'", conf);
		return -1;
	}
	fputs(daemon_conf, f);
	if (fclose(f) != 0) {
		log_warn("cannot write '%s'", conf);
		return -1;
	}
	return 0;
}

/* The child: stderr to the log, then gpufracd; never returns. */
/* In the child: the daemon, on the bench's socket and configuration. */
static void __attribute__((noreturn))
daemon_exec(const struct bench *b)
{
	char conf[PATH_MAX], logpath[PATH_MAX];

	if (harness_path(conf, sizeof(conf), b->dir, "gpufrac.conf") < 0 ||
	    harness_path(logpath, sizeof(logpath), b->dir, "gpufracd.log") < 0)
		_exit(127);
	harness_daemon_exec(b->top, b->sock, conf, logpath);
}

/* harness_daemon_wait's question: the daemon answers a status. */
static int
serves(void *arg)
{
	struct bench *b = arg;
	uint32_t nclients;

	return wire_status(b->sock, b->uuid, &nclients) == 0;
}

int
daemon_start(struct bench *b)
{
	if ((b->daemon = harness_fork()) < 0) {
		b->daemon = 0;
		return -1;
	}
	if (b->daemon == 0)
		daemon_exec(b);
	return harness_daemon_wait(&b->daemon, serves, b, DAEMON_START_MS);
}

int
daemon_stop(struct bench *b)
{
	int status;

	if (b->daemon <= 0)
		return -1;
	kill(b->daemon, SIGTERM);
	status = harness_reap(b->daemon, 5000);
	b->daemon = 0;
	return status;
}

void
daemon_log_tail(const struct bench *b)
{
	char path[PATH_MAX], line[512], ring[20][512];
	int n = 0, i;
	FILE *f;

	if (harness_path(path, sizeof(path), b->dir, "gpufracd.log") < 0 ||
	    (f = fopen(path, "re")) == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL)
		snprintf(ring[n++ % 20], sizeof(ring[0]), "%s", line);
	fclose(f);
	for (i = n > 20 ? n - 20 : 0; i < n; i++)
		fprintf(stderr, "  gpufracd: %s", ring[i % 20]);
}

void
daemon_teardown(const struct bench *b)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;

	/* Where the simulator keeps a named state (tests/simcuda/README.md). */
	if (b->state[0] != '\0' && snprintf(path, sizeof(path),
	    "/dev/shm/simcuda-%s", b->state) < (int)sizeof(path))
		(void)unlink(path);
	if (b->dir[0] == '\0' || (d = opendir(b->dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0 &&
		    harness_path(path, sizeof(path), b->dir, de->d_name) == 0)
			(void)unlink(path);
	closedir(d);
	if (rmdir(b->dir) < 0)
		log_warn("cannot remove '%s'", b->dir);
}
