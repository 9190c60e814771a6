/*
 * The sharing benchmark's gpufracd, one per way: the way's configuration
 * in a private temporary directory with the socket and the daemon's log,
 * on a private simulated device (or, with -r, the real one less a
 * reserve); all removed at the end.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctl_query.h"
#include "harness.h"
#include "log.h"
#include "share.h"

#define DAEMON_START_MS	10000
/* Longer than any way runs: a timeout would be a failure, counted. */
#define WAIT_TIMEOUT	"20s"

int
daemon_dir_make(struct share_run *r)
{
	const char *tmp = getenv("TMPDIR");

	if (tmp == NULL || *tmp == '\0')
		tmp = "/tmp";
	if (harness_path(r->dir, sizeof(r->dir), tmp, "gpufrac-share.XXXXXX") <
	    0)
		return -1;
	if (mkdtemp(r->dir) == NULL) {
		log_warn("cannot create a directory in '%s'", tmp);
		r->dir[0] = '\0';
		return -1;
	}
	return harness_path(r->sock, sizeof(r->sock), r->dir, "gpufrac.sock");
}

/*
 * The preempt way: each tenant a group of its own, matched by its gid.
 * One in three (0, 3, ...) has priority 10 and preempts; the others,
 * priority 0, wait when the device is full and are swapped out, not
 * killed, when preempted, so that no work is lost.
 */
static void
conf_groups(FILE *f, const struct share_run *r)
{
	unsigned i;

	for (i = 0; i < r->p.tenants; i++) {
		fprintf(f, "\n[group t%u]\nmatch = gid:%u\n", i, SHARE_GID + i);
		if (i % 3 == 0)
			fputs("priority = 10\nresolver = preempt\n"
			    "on_preempt = none\n", f);
		else
			fputs("priority = 0\nresolver = wait\n"
			    "on_preempt = swap\n", f);
	}
}

/* The way's name, or "probe" for WAY_PROBE. */
static const char *
way_name(int way)
{
	return way == WAY_PROBE ? "probe" : share_way_name(way);
}

/* DIR/gpufrac-WAY.conf (WAY_PROBE: the log level alone); 0 or -1. */
static int
conf_write(const struct share_run *r, int way, const char *path)
{
	static const char *const resolver[WAY_COUNT] = {
		[WAY_STATIC] = "fail", [WAY_WAIT] = "wait",
		[WAY_SWAP] = "swap", [WAY_PREEMPT] = "wait",
	};
	FILE *f;

	if ((f = fopen(path, "we")) == NULL) {
		log_warn("cannot create '%s'", path);
		return -1;
	}
	if (way == WAY_PROBE)
		fputs("; written by bench/share: a look at the device\n"
		    "[daemon]\nlog_level = warn\n", f);
	else
		fprintf(f, "; written by bench/share: the %s way\n[daemon]\n"
		    "log_level = warn\ndefault_resolver = %s\n"
		    "wait_timeout = %s\n", share_way_name(way), resolver[way],
		    WAIT_TIMEOUT);
	/* Named by UUID: nvidia-smi's numbers need not be the driver's. */
	if (way != WAY_PROBE && r->dev.reserve > 0)
		fprintf(f, "\n[device %s]\nreserve = %" PRIu64 "\n",
		    r->dev.uuid, r->dev.reserve);
	if (way == WAY_PREEMPT)
		conf_groups(f, r);
	if (fclose(f) != 0) {
		log_warn("cannot write '%s'", path);
		return -1;
	}
	return 0;
}

/* The child: stderr to the log, then gpufracd; never returns. */
/* The daemon answers a status query: it serves. */
static int
daemon_serves(const struct share_run *r)
{
	struct ctl_status st;
	int rc, level = log_getlevel();

	memset(&st, 0, sizeof(st));
	log_setlevel(-1);	/* not yet listening is expected */
	rc = ctl_query_status(r->sock, &st);
	log_setlevel(level);
	ctl_status_free(&st);
	return rc == 0;
}

static void
log_name(char *buf, size_t size, int way)
{
	snprintf(buf, size, "gpufracd-%s.log", way_name(way));
}

/* harness_daemon_wait's question. */
static int
serves(void *arg)
{
	return daemon_serves(arg);
}

int
daemon_start(struct share_run *r, int way)
{
	char conf[PATH_MAX], logpath[PATH_MAX], name[48];

	snprintf(name, sizeof(name), "gpufrac-%s.conf", way_name(way));
	if (harness_path(conf, sizeof(conf), r->dir, name) < 0)
		return -1;
	log_name(name, sizeof(name), way);
	if (harness_path(logpath, sizeof(logpath), r->dir, name) < 0 ||
	    conf_write(r, way, conf) < 0)
		return -1;
	if ((r->daemon = harness_fork()) < 0) {
		r->daemon = 0;
		return -1;
	}
	if (r->daemon == 0)
		harness_daemon_exec(r->top, r->sock, conf, logpath);
	return harness_daemon_wait(&r->daemon, serves, r, DAEMON_START_MS);
}

int
daemon_stop(struct share_run *r)
{
	int status;

	if (r->daemon <= 0)
		return -1;
	kill(r->daemon, SIGTERM);
	status = harness_reap(r->daemon, 5000);
	r->daemon = 0;
	unlink(r->sock);
	return status;
}

void
daemon_log_tail(const struct share_run *r)
{
	char path[PATH_MAX], line[512], ring[20][512];
	struct dirent *de;
	int n = 0, i;
	DIR *d;
	FILE *f;

	if ((d = opendir(r->dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, "gpufracd-", 9) != 0 ||
		    harness_path(path, sizeof(path), r->dir, de->d_name) < 0 ||
		    (f = fopen(path, "re")) == NULL)
			continue;
		n = 0;
		while (fgets(line, sizeof(line), f) != NULL)
			snprintf(ring[n++ % 20], sizeof(ring[0]), "%s", line);
		fclose(f);
		for (i = n > 20 ? n - 20 : 0; i < n; i++)
			fprintf(stderr, "  %s: %s", de->d_name, ring[i % 20]);
	}
	closedir(d);
}

void
daemon_state_remove(const struct share_run *r)
{
	char path[PATH_MAX];

	/* Where the simulator keeps a named state (tests/simcuda/README.md). */
	if (r->state[0] != '\0' && snprintf(path, sizeof(path),
	    "/dev/shm/simcuda-%s", r->state) < (int)sizeof(path))
		(void)unlink(path);
}

void
daemon_teardown(const struct share_run *r)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;

	daemon_state_remove(r);
	if (r->dir[0] == '\0' || (d = opendir(r->dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0 &&
		    harness_path(path, sizeof(path), r->dir, de->d_name) == 0)
			(void)unlink(path);
	closedir(d);
	if (rmdir(r->dir) < 0)
		log_warn("cannot remove '%s'", r->dir);
}
