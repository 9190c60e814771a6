/*
 * The sharing benchmark's clock and child processes: the daemon and the
 * tenants. Every child dies with its parent (PDEATHSIG) and is listed
 * here, so that an early exit leaves nothing running.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "share.h"

static pid_t procs[SHARE_TENANTS_MAX + 4];
static size_t nprocs;

uint64_t
share_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void
share_sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void
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
share_fork(void)
{
	pid_t parent = getpid(), pid;

	if (nprocs == sizeof(procs) / sizeof(procs[0])) {
		log_warnx("too many children");
		return -1;
	}
	fflush(stdout);
	fflush(stderr);
	if ((pid = fork()) < 0) {
		log_warn("cannot fork");
		return -1;
	}
	if (pid > 0) {
		procs[nprocs++] = pid;
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

/*
 * LD_PRELOAD for a tenant: the shim, after the sanitizer runtime if this
 * program has one (the tenant, built alike, needs it loaded first), as
 * tools/bench_proc.c does.
 */
static int
preload_set(const char *shim)
{
	const char *rt = NULL;
	char both[2 * PATH_MAX];

	dl_iterate_phdr(sanitizer_find, &rt);
	if (rt == NULL)
		return setenv("LD_PRELOAD", shim, 1);
	if ((size_t)snprintf(both, sizeof(both), "%s %s", rt, shim) >=
	    sizeof(both))
		return -1;
	return setenv("LD_PRELOAD", both, 1);
}

/* The child side of share_tenant_start(); never returns. */
static void __attribute__((noreturn))
tenant_exec(const struct share_run *r, unsigned index, gid_t gid,
    const char *limit, int in, int out)
{
	char prog[PATH_MAX], shim[PATH_MAX], errpath[PATH_MAX], name[32];
	int err;

	if (dup2(in, STDIN_FILENO) < 0 || dup2(out, STDOUT_FILENO) < 0)
		_exit(127);
	snprintf(name, sizeof(name), "tenant-%u.err", index);
	if (share_path(errpath, sizeof(errpath), r->dir, name) < 0 ||
	    share_path(prog, sizeof(prog), r->top, "tools/share_tenant") < 0 ||
	    share_path(shim, sizeof(shim), r->top, "shim/libgpufrac.so") < 0)
		_exit(127);
	if ((err = open(errpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) < 0 || dup2(err, STDERR_FILENO) < 0)
		_exit(127);
	/* The daemon matches groups on the primary gid of its peer. */
	if (gid != (gid_t)-1 && (setgroups(0, NULL) < 0 || setgid(gid) < 0)) {
		fprintf(stderr, "share: cannot set gid %u: %s\n",
		    (unsigned)gid, strerror(errno));
		_exit(127);
	}
	if ((limit != NULL && setenv("GPUFRAC_MEMORY_LIMIT", limit, 1) < 0) ||
	    preload_set(shim) < 0)
		_exit(127);
	execl(prog, "share_tenant", (char *)NULL);
	fprintf(stderr, "share: cannot run '%s': %s\n", prog, strerror(errno));
	_exit(127);
}

pid_t
share_tenant_start(const struct share_run *r, unsigned index, gid_t gid,
    const char *limit, int *to, int *from)
{
	int in[2], out[2];
	pid_t pid;

	if (pipe2(in, O_CLOEXEC) < 0)
		goto out_fail;
	if (pipe2(out, O_CLOEXEC) < 0)
		goto out_in;
	if ((pid = share_fork()) < 0)
		goto out_out;
	if (pid == 0)
		tenant_exec(r, index, gid, limit, in[0], out[1]);
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
	log_warn("cannot start tenant %u", index);
	return -1;
}

int
share_reap(pid_t pid, int ms)
{
	int status = 0, waited = 0;
	pid_t w;

	while ((w = waitpid(pid, &status, WNOHANG)) == 0 && waited < ms) {
		share_sleep_ms(1);
		waited++;
	}
	if (w == 0) {
		kill(pid, SIGKILL);
		w = waitpid(pid, &status, 0);
	}
	proc_forget(pid);
	return w == pid ? status : -1;
}

void
share_kill_all(void)
{
	size_t i;

	for (i = 0; i < nprocs; i++)
		kill(procs[i], SIGKILL);
	for (i = 0; i < nprocs; i++)
		waitpid(procs[i], NULL, 0);
	nprocs = 0;
}
