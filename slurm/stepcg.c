/*
 * Job step cgroups: a step's cgroup made in the cgroup2 file system,
 * tasks moved in, and at the end of the step whatever is left killed and
 * the cgroup removed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "stepcg.h"

/* dir is mnt or lies below it, by whole path components. */
static int
path_under(const char *dir, const char *mnt)
{
	size_t n = strlen(mnt);

	if (strcmp(mnt, "/") == 0)
		return 1;
	return strncmp(dir, mnt, n) == 0 && (dir[n] == '\0' || dir[n] == '/');
}

/* Print into buf; -1 with errno ENAMETOOLONG when it does not fit. */
static int __attribute__((format(printf, 3, 4)))
path_fmt(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

int
stepcg_slurm(struct stepcg *cg, const char *self, uint32_t job,
    const char *step)
{
	char needle[64];
	const char *p;
	size_t n;

	snprintf(needle, sizeof(needle), "/job_%u/step_%s", job, step);
	n = strlen(needle);
	for (p = self; (p = strstr(p, needle)) != NULL; p++) {
		if (p[n] != '\0' && p[n] != '/')
			continue;
		if ((size_t)(p - self) + n >= sizeof(cg->path))
			return 0;
		memset(cg, 0, sizeof(*cg));
		memcpy(cg->path, self, (size_t)(p - self) + n);
		return 1;
	}
	return 0;
}

int
stepcg_create(struct stepcg *cg, const char *parent, const char *name,
    char *err, size_t errlen)
{
	char mnt[PATH_MAX], root[PATH_MAX], top[PATH_MAX], real[PATH_MAX];
	const char *rest;

	memset(cg, 0, sizeof(*cg));
	/* the mount gpufracd reads cgroups in (common/cgroup.h) */
	if (cgroup2_mount(mnt, sizeof(mnt), root, sizeof(root)) < 0) {
		snprintf(err, errlen, "no cgroup2 file system in "
		    "/proc/self/mountinfo: %s", errno == ENOENT ?
		    "mount one" : strerror(errno));
		return -1;
	}
	if (*parent == '\0') {
		if (path_fmt(top, sizeof(top), "%s/gpufrac",
		    strcmp(mnt, "/") == 0 ? "" : mnt) < 0)
			goto too_long;
		parent = top;
	}
	if (!path_under(parent, mnt))
		goto outside;
	if (mkdir(parent, 0755) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot make cgroup '%s': %s", parent,
		    strerror(errno));
		return -1;
	}
	if (realpath(parent, real) == NULL) {
		snprintf(err, errlen, "cannot resolve '%s': %s", parent,
		    strerror(errno));
		return -1;
	}
	if (!path_under(real, mnt))
		goto outside;
	/* as the kernel names it: the mount's top cgroup, then the rest */
	rest = strcmp(mnt, "/") == 0 ? real : real + strlen(mnt);
	if (path_fmt(cg->dir, sizeof(cg->dir), "%s/%s", real, name) < 0 ||
	    path_fmt(cg->path, sizeof(cg->path), "%s%s/%s",
	    strcmp(root, "/") == 0 ? "" : root, rest, name) < 0)
		goto too_long;
	if (mkdir(cg->dir, 0755) < 0 && errno != EEXIST) {
		snprintf(err, errlen, "cannot make cgroup '%s': %s", cg->dir,
		    strerror(errno));
		return -1;
	}
	cg->owned = 1;
	return 0;

outside:
	snprintf(err, errlen, "cgroup directory '%s' is not in the cgroup2 "
	    "file system at '%s'", parent, mnt);
	return -1;
too_long:
	snprintf(err, errlen, "cgroup path too long for step '%s'", name);
	return -1;
}

/* Write text into the cgroup's file. Returns 0 or -1 with errno. */
static int
cg_write(const struct stepcg *cg, const char *file, const char *text)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd, saved;

	if (path_fmt(path, sizeof(path), "%s/%s", cg->dir, file) < 0)
		return -1;
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
		return -1;
	n = write(fd, text, strlen(text));
	saved = errno;
	close(fd);
	errno = saved;
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

int
stepcg_enter(const struct stepcg *cg, pid_t pid, char *err, size_t errlen)
{
	char text[32];

	snprintf(text, sizeof(text), "%ld\n", (long)pid);
	if (cg_write(cg, "cgroup.procs", text) < 0) {
		snprintf(err, errlen, "cannot move task %ld into cgroup '%s': "
		    "%s", (long)pid, cg->dir, strerror(errno));
		return -1;
	}
	return 0;
}

/* SIGKILL every process listed in cgroup.procs (kernels before 5.14). */
static void
kill_each(const struct stepcg *cg)
{
	char path[PATH_MAX], *line = NULL, *end;
	unsigned long long pid;
	size_t cap = 0;
	FILE *fp;

	if (path_fmt(path, sizeof(path), "%s/cgroup.procs", cg->dir) < 0 ||
	    (fp = fopen(path, "re")) == NULL)
		return;
	while (getline(&line, &cap, fp) > 0) {
		errno = 0;
		pid = strtoull(line, &end, 10);
		if (errno == 0 && end != line && *end == '\n' && pid > 1 &&
		    pid <= INT_MAX)
			kill((pid_t)pid, SIGKILL);
	}
	free(line);
	fclose(fp);
}

/* cgroup.events' "populated": 1, 0, or -1 with errno. */
static int
populated(int fd)
{
	char buf[256], *p;
	ssize_t n;

	if ((n = pread(fd, buf, sizeof(buf) - 1, 0)) < 0)
		return -1;
	buf[n] = '\0';
	for (p = buf; p != NULL; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (strncmp(p, "populated ", 10) == 0)
			return p[10] == '1';
	}
	errno = EPROTO;
	return -1;
}

static long long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Kill what is in the cgroup and wait until it is empty. */
static int
drain(const struct stepcg *cg, char *err, size_t errlen)
{
	long long deadline = now_ms() + STEPCG_DRAIN_MS, left;
	char path[PATH_MAX];
	struct pollfd pfd;
	int killed, r;

	/* cgroup.kill kills every process in it at once (Linux 5.14) */
	killed = cg_write(cg, "cgroup.kill", "1") == 0;
	if (path_fmt(path, sizeof(path), "%s/cgroup.events", cg->dir) < 0 ||
	    (pfd.fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errlen, "cannot open '%s/cgroup.events': %s",
		    cg->dir, strerror(errno));
		return -1;
	}
	pfd.events = POLLPRI;
	while ((r = populated(pfd.fd)) == 1) {
		if (!killed)
			kill_each(cg);
		if ((left = deadline - now_ms()) <= 0)
			break;
		/* a change of cgroup.events wakes poll (cgroup-v2.rst) */
		poll(&pfd, 1, (int)(killed || left < 20 ? left : 20));
	}
	if (r < 0)
		snprintf(err, errlen, "cannot read '%s': %s", path,
		    strerror(errno));
	else if (r == 1)
		snprintf(err, errlen, "processes are still in cgroup '%s' "
		    "%d seconds after they were killed", cg->dir,
		    STEPCG_DRAIN_MS / 1000);
	close(pfd.fd);
	return r == 0 ? 0 : -1;
}

int
stepcg_remove(struct stepcg *cg, char *err, size_t errlen)
{
	if (!cg->owned)
		return 0;
	if (drain(cg, err, errlen) < 0)
		return -1;
	if (rmdir(cg->dir) < 0 && errno != ENOENT) {
		snprintf(err, errlen, "cannot remove cgroup '%s': %s",
		    cg->dir, strerror(errno));
		return -1;
	}
	cg->owned = 0;
	return 0;
}
