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

/* One of the run's daemons: whose build, on which socket. */
struct bench_daemon {
	struct bench	*b;
	const char	*top;
	const char	*sock;
	const char	*log;		/* its log's name in b->dir */
	pid_t		*pid;
};

/* In the child: the daemon, on its socket and the bench's configuration. */
static void __attribute__((noreturn))
daemon_exec(const struct bench_daemon *d)
{
	char conf[PATH_MAX], logpath[PATH_MAX];

	if (harness_path(conf, sizeof(conf), d->b->dir, "gpufrac.conf") < 0 ||
	    harness_path(logpath, sizeof(logpath), d->b->dir, d->log) < 0)
		_exit(127);
	harness_daemon_exec(d->top, d->sock, conf, logpath);
}

/* harness_daemon_wait's question: the daemon answers a status. */
static int
serves(void *arg)
{
	struct bench_daemon *d = arg;
	uint32_t nclients;

	return wire_status(d->sock, d->b->uuid, &nclients) == 0;
}

static int
daemon_run(struct bench_daemon *d)
{
	if ((*d->pid = harness_fork()) < 0) {
		*d->pid = 0;
		return -1;
	}
	if (*d->pid == 0)
		daemon_exec(d);
	return harness_daemon_wait(d->pid, serves, d, DAEMON_START_MS);
}

static int
daemon_end(pid_t *pid)
{
	int status;

	if (*pid <= 0)
		return -1;
	kill(*pid, SIGTERM);
	status = harness_reap(*pid, 5000);
	*pid = 0;
	return status;
}

int
daemon_start(struct bench *b)
{
	struct bench_daemon d = { b, b->top, b->sock, "gpufracd.log",
	    &b->daemon };
	struct bench_daemon base = { b, b->base_top, b->base_sock,
	    "baseline.log", &b->base_daemon };

	if (daemon_run(&d) < 0)
		return -1;
	if (b->base_top[0] != '\0' && (harness_path(b->base_sock,
	    sizeof(b->base_sock), b->dir, "baseline.sock") < 0 ||
	    daemon_run(&base) < 0)) {
		log_warnx("the baseline's gpufracd (BENCH_BASELINE '%s') did "
		    "not start: see %s/baseline.log", b->base_top, b->dir);
		b->base_top[0] = '\0';
	}
	return 0;
}

int
daemon_stop(struct bench *b)
{
	(void)daemon_end(&b->base_daemon);
	return daemon_end(&b->daemon);
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
