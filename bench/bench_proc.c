/*
 * The benchmark's child processes: load generators, echo server, workers
 * and the daemon's clients. Every one dies with the bench (PDEATHSIG) and
 * is listed here, so that an early exit leaves nothing running.
 */
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "harness.h"
#include "log.h"

/* The child side of proc_worker(); never returns. */
static void
worker_exec(const struct bench *b, int preload, const char *name,
    char *const wrap[], char *const args[], int in, int out)
{
	char shim[PATH_MAX], self[PATH_MAX], errpath[PATH_MAX];
	char *argv[32];
	int err, i, n = 0;

	if (dup2(in, STDIN_FILENO) < 0 || dup2(out, STDOUT_FILENO) < 0)
		_exit(127);
	if (harness_path(errpath, sizeof(errpath), b->dir, name) < 0 ||
	    strlen(errpath) + 5 > sizeof(errpath))
		_exit(127);
	strcat(errpath, ".err");
	if ((err = open(errpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) < 0 || dup2(err, STDERR_FILENO) < 0)
		_exit(127);
	if (harness_path(self, sizeof(self), b->top, "bench/bench") < 0 ||
	    harness_path(shim, sizeof(shim), b->top, "shim/libgpufrac.so") < 0)
		_exit(127);
	if (preload && harness_preload_set(shim) < 0)
		_exit(127);
	for (i = 0; wrap != NULL && wrap[i] != NULL && n < 14; i++)
		argv[n++] = wrap[i];
	argv[n++] = self;
	argv[n++] = (char *)"-W";
	for (i = 0; args[i] != NULL && i < 14; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	if (wrap != NULL)
		execvp(argv[0], argv);
	else
		execv(self, argv);
	fprintf(stderr, "bench: cannot run '%s': %s\n", argv[0],
	    strerror(errno));
	_exit(127);
}

pid_t
proc_worker(const struct bench *b, int preload, const char *name,
    char *const args[], int *to, int *from)
{
	return proc_worker_wrapped(b, preload, name, NULL, args, to, from);
}

/* What a worker child is to run: worker_exec's arguments. */
struct worker {
	const struct bench *b;
	int		 preload;
	const char	*name;
	char *const	*wrap;
	char *const	*args;
};

static void
worker_child(void *arg, int in, int out)
{
	const struct worker *w = arg;

	worker_exec(w->b, w->preload, w->name, w->wrap, w->args, in, out);
}

pid_t
proc_worker_wrapped(const struct bench *b, int preload, const char *name,
    char *const wrap[], char *const args[], int *to, int *from)
{
	struct worker w = { b, preload, name, wrap, args };
	pid_t pid = harness_spawn(worker_child, &w, to, from);

	if (pid < 0)
		log_warnx("cannot start the %s worker", name);
	return pid;
}

int
proc_read(int fd, void *buf, size_t n, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	uint64_t deadline = harness_now_ns() + (uint64_t)ms * 1000000u;
	size_t got = 0;
	ssize_t r;

	while (got < n) {
		uint64_t now = harness_now_ns();
		int left = now >= deadline ? 0 :
		    (int)((deadline - now + 999999) / 1000000);

		if ((r = poll(&pfd, 1, left)) < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;	/* timed out */
		if ((r = read(fd, (char *)buf + got, n - got)) < 0 &&
		    errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

int
proc_write(int fd, const void *buf, size_t n)
{
	size_t done = 0;
	ssize_t r;

	while (done < n) {
		if ((r = write(fd, (const char *)buf + done, n - done)) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		done += (size_t)r;
	}
	return 0;
}

long
proc_rss_kib(pid_t pid)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "VmRSS:", 6) == 0) {
			char *end;

			errno = 0;
			kib = strtol(line + 6, &end, 10);
			if (errno != 0 || end == line + 6)
				kib = -1;
			break;
		}
	fclose(f);
	return kib;
}
