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
#include "log.h"

static pid_t *procs;
static size_t nprocs, procs_cap;

static void
proc_remember(pid_t pid)
{
	pid_t *p;

	if (nprocs == procs_cap) {
		procs_cap = procs_cap ? 2 * procs_cap : 64;
		if ((p = realloc(procs, procs_cap * sizeof(*p))) == NULL)
			fatalx("out of memory");
		procs = p;
	}
	procs[nprocs++] = pid;
}

void
proc_forget(pid_t pid)
{
	size_t i;

	for (i = 0; i < nprocs; i++)
		if (procs[i] == pid) {
			procs[i] = procs[--nprocs];
			return;
		}
}

pid_t
proc_fork(void)
{
	pid_t parent = getpid(), pid;

	fflush(stdout);
	fflush(stderr);
	if ((pid = fork()) < 0) {
		log_warn("cannot fork");
		return -1;
	}
	if (pid > 0) {
		proc_remember(pid);
		return pid;
	}
	/* A child of a child must not kill its parent's other children. */
	nprocs = 0;
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(1);
	return 0;
}

/* A sanitizer runtime this program was linked with (SANITIZE=): its path. */
static int
sanitizer_find(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *base = strrchr(info->dlpi_name, '/');

	(void)size;
	base = base ? base + 1 : info->dlpi_name;
	if (strncmp(base, "libasan.so", 10) == 0 ||
	    strncmp(base, "libtsan.so", 10) == 0) {
		*(const char **)arg = info->dlpi_name;
		return 1;
	}
	return 0;
}

const char *
proc_sanitizer(void)
{
	const char *rt = NULL;

	dl_iterate_phdr(sanitizer_find, &rt);
	return rt;
}

/*
 * LD_PRELOAD for a worker: the shim, after the sanitizer runtime if this
 * program has one, which must be loaded first (as tests/integration/lib.sh
 * does for programs built without it).
 */
static int
preload_set(const char *shim)
{
	const char *rt = proc_sanitizer();
	char both[2 * PATH_MAX];

	if (rt == NULL)
		return setenv("LD_PRELOAD", shim, 1);
	if ((size_t)snprintf(both, sizeof(both), "%s %s", rt, shim) >=
	    sizeof(both))
		return -1;
	return setenv("LD_PRELOAD", both, 1);
}

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
	if (bench_path(errpath, sizeof(errpath), b->dir, name) < 0 ||
	    strlen(errpath) + 5 > sizeof(errpath))
		_exit(127);
	strcat(errpath, ".err");
	if ((err = open(errpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) < 0 || dup2(err, STDERR_FILENO) < 0)
		_exit(127);
	if (bench_path(self, sizeof(self), b->top, "tools/bench") < 0 ||
	    bench_path(shim, sizeof(shim), b->top, "shim/libgpufrac.so") < 0)
		_exit(127);
	if (preload && preload_set(shim) < 0)
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

pid_t
proc_worker_wrapped(const struct bench *b, int preload, const char *name,
    char *const wrap[], char *const args[], int *to, int *from)
{
	int in[2], out[2];
	pid_t pid;

	if (pipe2(in, O_CLOEXEC) < 0)
		goto out_fail;
	if (pipe2(out, O_CLOEXEC) < 0)
		goto out_in;
	if ((pid = proc_fork()) < 0)
		goto out_out;
	if (pid == 0)
		worker_exec(b, preload, name, wrap, args, in[0], out[1]);
	close(in[0]);
	close(out[1]);
	*to = in[1];
	*from = out[0];
	return pid;

out_out:
	close(out[0]);
	close(out[1]);
out_in:
	close(in[0]);
	close(in[1]);
out_fail:
	log_warn("cannot start the %s worker", name);
	return -1;
}

int
proc_reap(pid_t pid, int ms)
{
	int status = 0, waited = 0;
	pid_t r;

	while ((r = waitpid(pid, &status, WNOHANG)) == 0 && waited < ms) {
		sleep_us(1000);
		waited++;
	}
	if (r == 0) {
		kill(pid, SIGKILL);
		r = waitpid(pid, &status, 0);
	}
	proc_forget(pid);
	return r == pid ? status : -1;
}

void
proc_cleanup(void)
{
	size_t i;

	for (i = 0; i < nprocs; i++)
		kill(procs[i], SIGKILL);
	for (i = 0; i < nprocs; i++)
		waitpid(procs[i], NULL, 0);
	nprocs = 0;
}

int
proc_read(int fd, void *buf, size_t n, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	uint64_t deadline = now_ns() + (uint64_t)ms * 1000000u;
	size_t got = 0;
	ssize_t r;

	while (got < n) {
		uint64_t now = now_ns();
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
